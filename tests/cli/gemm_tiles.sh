# gemm_tiles.sh: engine tiles: host-resident GEMM over every simulated device (+ CPU), verified, with its stats.
source "$(dirname "$0")/lib.sh"
need python3

# Sizes not multiples of the tile, every precision, two ops, side by side with the CPU BLAS.
run TESSERA_SIM_DEVICES=3 TESSERA_TILE=128 -- gemm 300x200x250 --engine tiles,cpu --prec s,d,c,z --ops NN,TC --reps 1 --warmup 0
expect_rc 0
expect_out "^tiles: 3 sim devices \+ CPU worker, tile 128"
count_rows '^tiles +[sdcz] +300 +200 +250 (NN|TC) +host .* PASS$' 8
count_rows '^  tiles: T=128, 6 tiles: devices [0-9]+,[0-9]+,[0-9]+, cpu [0-9]+' 8

# Larger than the devices' memory together (2 x 4 MiB, operands 3 x 11 MiB), no CPU worker; JSON extra.
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_MEM=4M TESSERA_TILE=128 TESSERA_TILES_CPU=0 -- gemm 1200x1200x1200 --engine tiles --reps 1 --warmup 0 --json "$TMP/t.json"
expect_rc 0
count_rows '^tiles +d +1200 +1200 +1200 NN +host .* PASS$' 1
count_rows '^  tiles: T=128, 100 tiles: devices [0-9]+,[0-9]+, cpu 0 ' 1
python3 - "$TMP/t.json" <<'PY' || fail "JSON extra of engine tiles"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
x = r["extra"]
assert r["engine"] == "tiles" and r["where"] == "host", r
for key in ("bytes_h2d", "bytes_d2h", "bytes_p2p", "cache_hits", "cpu_share"):
    assert key in x, key
assert x["cpu_share"] == 0 and x["bytes_d2h"] == 1200 * 1200 * 8, x
assert sum(x["tiles_per_device"]) == 100 and x["cache_hits"] > 0, x
assert x["bytes_h2d"] < x["bytes_h2d_noreuse"], x
PY

# A device fault: the failed device's tiles are re-run on the other one, the result verifies and
# the stats say so; with one device and no CPU worker nobody is left: a runtime error (exit 3).
# Paced at 0.05 GFLOP/s (2.1 MFLOP tiles, 42 ms; ~0.7 s for device 0 alone): device 1 makes its 4
# copies only once its worker has a task, and unpaced device 0 could finish both calls (16 tiles
# each) before a loaded machine scheduled it.
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_GFLOPS=0.05 TESSERA_SIM_FAULTS="dev=1,copy=4" TESSERA_TILE=64 TESSERA_TILES_CPU=0 -- gemm 256 --engine tiles --reps 1 --warmup 0
expect_rc 0
count_rows '^tiles .* PASS$' 1
# (the 4th copy of device 1 falls in the checked run or in the timed one, as the schedule goes: the
# warning says so either way; the statistics line is the timed run's)
expect_out "device 1 failed during the call \\(sim device 1: injected failure of copy 4\\); [0-9]+ of its C tiles are run again elsewhere"
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS="dev=0,copy=4" TESSERA_TILE=64 TESSERA_TILES_CPU=0 -- gemm 256 --engine tiles --reps 1 --warmup 0
expect_rc 3
expect_out "no worker left"
expect_out "injected failure of copy 4"
# A flipped bit in a tile copied during the checked run (the timed run makes 64 copies) is caught
# by the check (exit 1). (Without the saved copies of C tiles, which are copies too.)
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS="dev=0,flip=66,bit=62" TESSERA_TILE=64 TESSERA_TILES_CPU=0 TESSERA_TILES_SAVE_C=0 -- gemm 256 --engine tiles --reps 1 --warmup 0
expect_rc 1
count_rows '^tiles .* FAIL$' 1
finish
