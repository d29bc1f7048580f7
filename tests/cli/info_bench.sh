# info_bench.sh: `tessera info --bench` measures simulated devices and the CPU, with JSON.
source "$(dirname "$0")/lib.sh"
need python3

run TESSERA_SIM_DEVICES=2 -- info --bench --json "$TMP/i.json"
expect_rc 0
count_rows '^ +[01] +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +[a-z]+ +PASS$' 2
expect_out '^ +cpu +DGEMM [0-9.]+ TFLOP/s .* PASS$'
python3 - "$TMP/i.json" <<'PY' || fail "info JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "tessera info"
assert len(d["devices"]) == 2 and all(x["backend"] == "sim" for x in d["devices"])
got = sorted((r["bench"], r["extra"]["device"]) for r in d["results"] if r["extra"]["device"] is not None)
assert got == sorted([(b, i) for b in ("copy", "h2d", "d2h", "bidir", "gemm") for i in (0, 1)]), got
cpu = [r for r in d["results"] if r["extra"]["device"] is None]
assert len(cpu) == 1 and cpu[0]["engine"] == "cpu" and cpu[0]["tflops"]["median"] > 0
for r in d["results"]:
    assert r["verified"] is True and r["extra"]["passed"] is True, r
    assert r["seconds"]["median"] > 0
assert d["system"]["peer"] == [[False, True], [True, False]]
print("info json ok")
PY
finish
