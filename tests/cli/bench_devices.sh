# bench_devices.sh: --devices 1,2,3: gemm and blas3 run the set-wide engine over 1, 2 and 3 simulated
# devices in one process on the same host data; every row verified, named by its count in the table
# and in the JSON (extra.devices, tiles_per_device of that length); bad lists are usage errors.
source "$(dirname "$0")/lib.sh"
need python3

# GEMM, beta 0 (the last timed run's result is checked) and beta 1 (the checked run).
for beta in 0 1; do
  run TESSERA_SIM_DEVICES=3 TESSERA_TILE=64 TESSERA_TILES_CPU=0 -- gemm 320x256x192 --where host --engine tiles --devices 1,2,3 --beta $beta --reps 2 --warmup 1 --json "$TMP/g$beta.json"
  expect_rc 0
  count_rows '^tiles/[123] +d +320 +256 +192 NN +host .* PASS$' 3
  python3 - "$TMP/g$beta.json" <<'PY' || fail "gemm --devices JSON (beta $beta)"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert [r["extra"]["devices"] for r in rows] == [1, 2, 3], rows
for r in rows:
    x = r["extra"]
    assert r["engine"] == "tiles" and x["passed"] is True, r
    assert len(x["tiles_per_device"]) == x["devices"] and sum(x["tiles_per_device"]) == x["tiles"], x
    # C went out once (20 tiles of 64 x 64 doubles); which devices ran tiles is timing: on a busy
    # machine a device that starts late may find its tiles taken (seen: [0, 9, 11] with a steal)
    assert max(x["tiles_per_device"]) > 0 and x["bytes_d2h"] == 320 * 256 * 8, x
assert rows[0]["extra"]["bytes_p2p"] == 0, rows  # one device: nothing to fetch from a peer
assert "ratio" in rows[1]["extra"], rows[1]  # against the first row (one device)
PY
done

# Above the full recomputation's size (m*n*k > 2^27), beta 0: C0 is not made, Freivalds alone.
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=128 TESSERA_TILES_CPU=0 -- gemm 640 --where host --engine tiles --devices 2,1 --beta 0 --reps 1 --warmup 0
expect_rc 0
count_rows '^tiles/[12] +d +640 +640 +640 NN +host .* PASS$' 2
# ... and without the check (C0 is made then: the timed runs start from it)
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=128 TESSERA_TILES_CPU=0 -- gemm 640 --where host --engine tiles --devices 1,2 --beta 0 --reps 1 --warmup 0 --no-verify
expect_rc 0
count_rows '^tiles/[12] +d +640 +640 +640 NN +host .* SKIPPED$' 2

# --trace: one timeline per count
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=64 TESSERA_TILES_CPU=0 -- gemm 256 --where host --engine tiles --devices 1,2 --beta 0 --reps 1 --warmup 0 --trace "$TMP/tr.json"
expect_rc 0
python3 - "$TMP" <<'PY' || fail "one trace per device count"
import json, os, sys
for n in (1, 2):
    ev = json.load(open(os.path.join(sys.argv[1], "tr-%ddev.json" % n)))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    tids = {e.get("tid") for e in ev if e.get("ph") == "X"}
    assert len(tids) >= n, (n, tids)
PY

# A wrong result on any pass is caught (the corrupted element is added after each row's run).
run TESSERA_SIM_DEVICES=2 TESSERA_TILE=64 TESSERA_TEST_CORRUPT_GEMM=1 -- gemm 256 --where host --engine tiles --devices 1,2 --beta 0 --reps 1 --warmup 0
expect_rc 1
count_rows '^tiles/[12] .* FAIL$' 2

# Level-3 routines and the GEMM reference per count (vs_gemm against the GEMM of the same count).
run TESSERA_SIM_DEVICES=3 TESSERA_TILE=64 TESSERA_TILES_CPU=0 -- blas3 256 --routine symm,trsm --engine tiles --devices 1,3 --gemm-ref --reps 1 --json "$TMP/b.json"
expect_rc 0
count_rows '^(symm|trsm) +d +256x256 .* tiles/[13] .* PASS$' 4
count_rows '^gemm +d +256x256x256 .* tiles/[13] .* PASS$' 2
python3 - "$TMP/b.json" <<'PY' || fail "blas3 --devices JSON"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
got = [(r["extra"]["routine"], r["extra"]["devices"]) for r in rows]
assert got == [("gemm", 1), ("gemm", 3), ("symm", 1), ("symm", 3), ("trsm", 1), ("trsm", 3)], got
for r in rows:
    x = r["extra"]
    assert x["passed"] is True and len(x["tiles_per_device"]) == x["devices"], r
    if x["routine"] != "gemm": assert x["vs_gemm"] > 0, r
PY

# Bad lists and engines.
run TESSERA_SIM_DEVICES=2 -- gemm 128 --where host --engine tiles --devices 1,3
expect_rc 2
expect_out "--devices: 3 devices asked, 2 open"
run TESSERA_SIM_DEVICES=2 -- gemm 128 --engine tiles,cpu --devices 1,2
expect_rc 2
expect_out "engine cpu runs on one device or the host"
run TESSERA_SIM_DEVICES=2 -- blas3 128 --devices 2,2
expect_rc 2
expect_out "--devices: 2 given twice"
run TESSERA_SIM_DEVICES=2 -- gemm 128 --engine tiles --devices 0
expect_rc 2
expect_out "--devices: 0 out of range"
finish
