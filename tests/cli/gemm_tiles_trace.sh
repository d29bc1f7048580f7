# gemm_tiles_trace.sh: engine tiles --trace (Chrome trace JSON with events for every worker), the adaptive CPU share, and engine cublasxt's refusal without GPUs.
source "$(dirname "$0")/lib.sh"
need python3

# Trace: valid JSON, copy in / gemm / copy out events on every device and GEMMs on the CPU worker
# (a fixed CPU share of 25 % lets the CPU take tiles). Every worker takes pending tiles only, so
# each must be scheduled before the others have taken them all: paced at 0.05 GFLOP/s (2.1 MFLOP
# tiles, 42 ms) a call lasts ~0.5 s (unpaced a few ms, which a loaded machine can keep a worker
# thread waiting).
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_GFLOPS=0.05 TESSERA_TILE=64 TESSERA_TILES_CPU=0.25 -- gemm 384x320x256 --engine tiles --reps 1 --warmup 0 --trace "$TMP/trace.json"
expect_rc 0
count_rows '^tiles .* PASS$' 1
python3 - "$TMP/trace.json" <<'PY' || fail "trace file"
import json, sys
t = json.load(open(sys.argv[1]))
ev = [e for e in t["traceEvents"] if e["ph"] == "X"]
names = {e["tid"]: e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = {names[e["tid"]] for e in ev}
for d in (0, 1):
    for stage in ("copy in", "gemm", "copy out"):
        assert "device %d %s" % (d, stage) in lanes, (d, stage, lanes)
assert "cpu gemm" in lanes, lanes
assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev)
# every C tile (6 x 5) has a gemm event on exactly one worker
tasks = [e["args"]["task"] for e in ev if e["name"] == "gemm"]
assert sorted(tasks) == list(range(30)), sorted(tasks)
PY

# Adaptive: the first call measures, the later ones use the database's share (reported in the JSON).
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_GFLOPS=2 TESSERA_TILE=128 TESSERA_TILES_CPU=adaptive TESSERA_PERFDB="$TMP/perfdb.txt" -- gemm 640x640x256 --engine tiles --reps 2 --warmup 1 --json "$TMP/a.json"
expect_rc 0
count_rows '^tiles .* PASS$' 1
expect_out "tiles: cpu adaptive, planned share [0-9.]+%"
python3 - "$TMP/a.json" "$TMP/perfdb.txt" <<'PY' || fail "adaptive JSON / database"
import json, sys
x = json.load(open(sys.argv[1]))["results"][0]["extra"]
# the planned share follows the measured rates: 0 is right when a loaded CPU could not finish one
# tile before the devices (so no bound that load can break), never the whole call
assert x["cpu_mode"] == "adaptive" and 0 <= x["cpu_share_planned"] < 1, x
lines = [l for l in open(sys.argv[2]) if not l.startswith("#")]
assert len(lines) == 1 and lines[0].split()[:2] == ["d", "NN"], lines
# prec ops lm ln lk ndev ratio dev_gflops cpu_gflops calls: both rates measured, every call counted
f = lines[0].split()
assert int(f[5]) == 2 and 0 <= float(f[6]) <= 1 and float(f[7]) > 0 and float(f[8]) > 0 and int(f[9]) >= 2, f
PY
# A corrupt database is ignored with a warning, and rewritten.
echo "not a database" > "$TMP/perfdb.txt"
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=128 TESSERA_TILES_CPU=adaptive TESSERA_PERFDB="$TMP/perfdb.txt" -- gemm 256 --engine tiles --reps 1 --warmup 0
expect_rc 0
expect_out "malformed at line 1; ignoring it"
grep -q "^d NN 8 8 8 2 " "$TMP/perfdb.txt" || fail "database not rewritten"

# cuBLASXt needs GPUs: refused on simulated devices and without devices (exit 2); bad block sizes.
run TESSERA_SIM_DEVICES=1 -- gemm 256 --engine cublasxt
expect_rc 2
expect_out "cublasxt: not available: (the devices are simulated|this build has no CUDA backend)"
run -- gemm 256 --engine cpu,cublasxt --xt-block 2048,4096
expect_rc 2
expect_out "cublasxt: not available"
run -- gemm 256 --engine cublasxt --xt-block 12
expect_rc 2
expect_out "--xt-block: 12 out of range"
finish
