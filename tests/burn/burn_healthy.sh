# burn_healthy.sh: a healthy 2-device simulated burn of 2 s: 0 errors, exit 0, a results document and a plot.
# Nothing here depends on how many products fit in the 2 s (a loaded machine may fit few): the checked
# phase lasts at least the time asked for and no longer than the command ran, and the rate is the
# products' flops over that time.
source "$(dirname "$0")/../cli/lib.sh"
need python3

t0=$(date +%s.%N)
run TESSERA_SIM_DEVICES=2 -- burn --time 2 --json "$TMP/b.json" --plot "$TMP/b.svg"
wall=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
expect_rc 0
count_rows '^device [01] .* TFLOP/s sustained' 2
count_rows '^  errors 0, max checksum error' 2
expect_out '^burn: PASS'
count_rows '^GPU [01]: OK$' 2
expect_no_out 'ERROR|LOST'
python3 - "$TMP/b.json" "$wall" <<'PY' || fail "results document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "tessera burn", d["tool"]
assert len(d["results"]) == 2
for r in d["results"]:
    assert r["bench"] == "burn" and r["engine"] == "ref" and r["verified"] is True
    # The normalized checksum error of correct products: rounding is there (> 0) but far below the bound.
    assert 0 < r["error"] < 0.1 and r["bound"] == 1.0, r["error"]
    x = r["extra"]
    assert x["errors"] == 0 and x["status"] == "ok" and x["verdict"] == "OK" and x["passed"] is True
    assert 2 <= x["seconds"] <= float(sys.argv[2]), (x["seconds"], sys.argv[2])
    assert x["plain_tflops"] > 0 and x["iterations"] >= 1
    # each iteration is one checked 94 x 94 x 96 product (--size 96 by default on simulated devices)
    f = x["iterations"] * 2 * 94 * 94 * 96
    assert abs(x["sustained_tflops"] * 1e12 * x["seconds"] - f) <= 1e-9 * f, (x["sustained_tflops"], x["iterations"])
    assert len(x["samples"]) >= 1 and all(s["tflops"] >= 0 for s in x["samples"])
    t = r["tflops"]
    assert 0 < t["min"] <= t["median"] <= t["max"], t
assert d["burn"] == {"verdict": "PASS", "passed": True, "exit_code": 0, "devices": 2, "devices_ok": 2}, d["burn"]
PY
grep -q '<polyline' "$TMP/b.svg" || fail "plot has no curve"

# The full recomputation with the second engine (cpu) agrees with every checked product.
run TESSERA_SIM_DEVICES=1 -- burn --time 1 --recompute-every 20 --size 64
expect_rc 0
expect_out 'recomputations \(cpu\)'
expect_out '^burn: PASS'
finish
