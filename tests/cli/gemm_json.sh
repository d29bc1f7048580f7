# gemm_json.sh: `tessera gemm --json` writes the results schema (parsed by python3's json).
source "$(dirname "$0")/lib.sh"
need python3

run -- gemm 64 48x40x32 --engine cpu,ref --prec d,c --ops NN,TC --alpha 1.5,0.5 --json "$TMP/g.json"
expect_rc 0
python3 - "$TMP/g.json" <<'PY' || fail "JSON does not follow the results schema"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("tool", "version", "commit", "date", "host", "devices", "results"):
    assert k in d, k
assert d["tool"] == "tessera gemm"
assert set(("cpu", "cores", "mpi_ranks")) <= set(d["host"])
assert len(d["results"]) == 2 * 2 * 2 * 2, len(d["results"])
for r in d["results"]:
    for k in ("bench", "engine", "precision", "shape", "where", "reps", "seconds", "tflops",
              "verified", "error", "bound", "extra"):
        assert k in r, k
    assert r["bench"] == "gemm" and r["engine"] in ("cpu", "ref")
    assert set(r["shape"]) >= {"m", "n", "k", "transa", "transb", "layout"}
    assert set(r["seconds"]) == {"median", "min", "max"} and set(r["tflops"]) == {"median", "min", "max"}
    assert r["seconds"]["min"] <= r["seconds"]["median"] <= r["seconds"]["max"]
    assert r["verified"] is True and r["error"] <= r["bound"]
    assert {"alpha", "beta", "device"} <= set(r["extra"])
    if r["precision"] == "c":
        assert r["extra"]["alpha"] == [1.5, 0.5], r["extra"]["alpha"]
    else:
        assert r["extra"]["alpha"] == 1.5
shapes = {(r["shape"]["m"], r["shape"]["n"], r["shape"]["k"]) for r in d["results"]}
assert shapes == {(64, 64, 64), (48, 40, 32)}, shapes
print("schema ok")
PY

# Skipped verification is reported as such; '-' writes the document to stdout.
OUTJSON=$(env -u TESSERA_SIM_DEVICES "$TESSERA" gemm 32 --engine cpu --no-verify --json - 2>/dev/null)
python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
r = d["results"][0]
assert r["verified"] is False and "error" not in r, r
' <<<"$OUTJSON" || fail "--no-verify --json - did not give verified false on stdout"
finish
