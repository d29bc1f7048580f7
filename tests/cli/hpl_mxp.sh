# hpl_mxp.sh: `tessera hpl-mxp`: a valid run (CPU and simulated device), its report and JSON, the
# input file, a matrix the LU without pivoting cannot factor (exit 1, no PASSED), the plot, FP8
# (valid, not list-eligible), bad input (2), a failure while running (3).
source "$(dirname "$0")/lib.sh"
need python3
cd "$TMP" || exit 1

# CPU path: PASSED, the result line in HPL's columns, iterations counted, exit 0
run -- hpl-mxp -N 700 -NB 64 --exec cpu --json "$TMP/c.json"
expect_rc 0
expect_out "^WRMXFP16 +700 +64 +1 +1 "
expect_out "^\|\|Ax-b\|\|_oo/\(eps\*\(\|\|A\|\|_oo\*\|\|x\|\|_oo\+\|\|b\|\|_oo\)\*N\)= +[0-9.e+-]+ \.\.\.\.\.\. PASSED$"
expect_out "Refinement: .* [1-9][0-9]* iterations? after the first solve"
python3 - "$TMP/c.json" <<'PY' || fail "JSON of the CPU run"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "tessera hpl-mxp"
r = d["results"][0]
for k in ("bench", "engine", "shape", "where", "reps", "seconds", "tflops", "verified", "error", "bound", "extra"):
    assert k in r, k
assert r["bench"] == "hpl-mxp" and r["engine"] == "cpu" and r["where"] == "host", r
e = r["extra"]
assert e["passed"] is True and e["residual"] < 16 and r["verified"] is True and r["bound"] == 16, e
assert 1 <= e["iterations"] <= 50 and len(e["residual_history"]) == e["iterations"] + 1, e
assert e["residual_history"][-1] == e["residual"]
assert e["lu_seconds"] > 0 and e["refinement_seconds"] > 0
t = r["seconds"]["median"]
assert abs(t - (e["lu_seconds"] + e["refinement_seconds"])) <= 1e-9 * t + 1e-12, (t, e)
n = 700.0
flops = 2.0 / 3.0 * n ** 3 + 1.5 * n ** 2
assert abs(e["flops"] - flops) <= 1e-9 * flops, e["flops"]
assert abs(e["gflops"] - flops / t / 1e9) <= 1e-9 * e["gflops"], (e["gflops"], flops / t / 1e9)
assert abs(r["tflops"]["median"] - e["gflops"] / 1e3) <= 1e-9 * e["gflops"]
assert e["precision"] == "fp16" and e["list_eligible"] is True
print("json ok")
PY

# a simulated device, BF16: the same algorithm through the device layer
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_MEM=256M -- hpl-mxp -N 600 -NB 96 --prec bf16 --json "$TMP/s.json"
expect_rc 0
expect_out "^WRMXBF16 +600 +96 +1 +1 .*\( "
expect_out "PASSED"
python3 - "$TMP/s.json" <<'PY' || fail "JSON of the simulated run"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["engine"] == "sim" and r["where"] == "device" and r["extra"]["exec"] == "device:sim", r
assert r["extra"]["passed"] is True and r["precision"] == "bf16"
assert r["extra"]["list_eligible"] is True and "list_note" not in r["extra"]
PY

# the plot: written, well-formed SVG, a point per block column of the LU (ceil(N/NB)) and one per
# refinement step (the residual history), the bound marked
run -- hpl-mxp -N 700 -NB 64 --exec cpu --plot "$TMP/p.svg" --json "$TMP/pj.json"
expect_rc 0
python3 - "$TMP/p.svg" "$TMP/pj.json" 700 64 <<'PY' || fail "the plot"
import json, math, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
e = json.load(open(sys.argv[2]))["results"][0]["extra"]
N, NB = int(sys.argv[3]), int(sys.argv[4])
lines = {p.get("id"): p.get("points").split() for p in root.iter(ns + "polyline")}
assert len(lines["lu-rate"]) == math.ceil(N / NB), (len(lines["lu-rate"]), N, NB)
assert len(lines["lu-running"]) == math.ceil(N / NB)
assert len(lines["residual"]) == e["iterations"] + 1 == len(e["residual_history"]), (lines["residual"], e)
assert len([c for c in root.iter(ns + "circle")]) == e["iterations"] + 1
bound = [l for l in root.iter(ns + "line") if l.get("id") == "bound"]
assert len(bound) == 1
# every point inside the plot area; the residual's y on the log axis ordered as the values
pts = [tuple(map(float, p.split(","))) for p in lines["residual"]]
ys = [y for _, y in pts]
for a, b, ya, yb in zip(e["residual_history"], e["residual_history"][1:], ys, ys[1:]):
    assert (a > b) == (ya < yb), (a, b, ya, yb)
yb = float(bound[0].get("y1"))
assert (ys[-1] > yb) == (e["residual_history"][-1] < 16) and ys[0] < yb, (ys, yb)
for p in lines["lu-rate"] + lines["lu-running"]:
    x, y = map(float, p.split(","))
    assert 70 <= x <= 810 and 40 <= y <= 40 + 275, (x, y)
text = "".join(t.text or "" for t in root.iter(ns + "text"))
assert "WRMXFP16 N=700 NB=64" in text and "PASSED" in text, text
print("plot ok")
PY
# a plot path that cannot be written: exit 2 before the run
run -- hpl-mxp -N 200 -NB 32 --exec cpu --plot "$TMP/no/such/dir/p.svg"
expect_rc 2
expect_out "--plot: cannot write"
expect_no_out "WRMX"

# FP8 (an extra): E4M3 update with per-panel scales; valid at this size, marked not list-eligible
run -- hpl-mxp -N 700 -NB 64 --exec cpu --prec fp8 --json "$TMP/f8.json" --plot "$TMP/f8.svg"
expect_rc 0
expect_out "^WRMXFP8 +700 +64 +1 +1 "
expect_out "PASSED$"
expect_out "^FP8 is not eligible for the HPL-MxP list \(16-bit lowest since June 2025\)$"
expect_out "^NOTE   : FP8 is not eligible"
python3 - "$TMP/f8.json" "$TMP/f8.svg" <<'PY' || fail "JSON of the FP8 run"
import json, sys
import xml.etree.ElementTree as ET
r = json.load(open(sys.argv[1]))["results"][0]
e = r["extra"]
assert r["precision"] == "fp8" and e["precision"] == "fp8" and e["tv"] == "WRMXFP8", e
assert e["list_eligible"] is False and "16-bit lowest since June 2025" in e["list_note"], e
assert e["passed"] is True and e["residual"] < 16 and 1 <= e["iterations"] <= 50, e
ET.parse(sys.argv[2])
assert "not eligible" in open(sys.argv[2]).read()
PY
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_MEM=256M -- hpl-mxp -N 333 -NB 48 --prec fp8
expect_rc 0
expect_out "^WRMXFP8 +333 +48 +1 +1 .*\( "
expect_out "PASSED$"
# FP8 factors of a matrix without pivoting's stability: the clear error, no PASSED, exit 1
run -- hpl-mxp -N 400 -NB 64 --exec cpu --prec fp8 --test-matrix plain
expect_rc 1
expect_no_out "PASSED"
expect_out "broke down|did not reach|diverged"

# the input file: two sizes x two precisions, in order
cat > HPL-MxP.dat <<'DAT'
HPL-MxP benchmark input file
tessera
HPL-MxP.out  output file name (if any)
6            device out (6=stdout,7=stderr,file)
2            # of problems sizes (N)
300 410      Ns
1            # of NBs
64           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
1            Qs
16.0         threshold
2            # of precisions
fp16 bf16    precisions
DAT
run -- hpl-mxp --exec cpu
expect_rc 0
count_rows "^WRMX(FP|BF)16 +(300|410) +64 " 4
count_rows "PASSED$" 4
expect_out "4 tests completed and passed residual checks"
# several tests: FILE-k.svg each
run -- hpl-mxp --exec cpu --plot "$TMP/d.svg" -q
expect_rc 0
for k in 1 2 3 4; do [ -s "$TMP/d-$k.svg" ] || fail "no plot d-$k.svg"; done
[ -e "$TMP/d.svg" ] && fail "d.svg written beside d-k.svg"
sed -i 's/^fp16 bf16 .*/fp16 fp4    precisions/' HPL-MxP.dat
run -- hpl-mxp --dat HPL-MxP.dat
expect_rc 2
expect_out "HPL-MxP.dat:15: precision 'fp4' is not one of fp16, bf16, fp8"
head -13 HPL-MxP.dat > short.dat
run -- hpl-mxp --dat short.dat
expect_rc 2
expect_out "short.dat:14: unexpected end of file.*HPL-MxP.dat has 15 lines"

# not diagonally dominant (test-only generator): a clear error, no PASSED, exit 1
run -- hpl-mxp -N 400 -NB 64 --exec cpu --test-matrix plain --json "$TMP/p.json"
expect_rc 1
expect_no_out "PASSED"
expect_out "broke down|did not reach|diverged"
expect_out "1 tests completed and failed residual checks"
python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["results"][0]["extra"]
assert e["passed"] is False and e["stop"] in ("breakdown", "diverged", "iteration-cap"), e
assert e["list_eligible"] is False
' "$TMP/p.json" || fail "JSON of the unstable matrix"

# bad input: exit 2 with the option named
run -- hpl-mxp -N 100 --prec fp32
expect_rc 2
expect_out "--prec: 'fp32' is not one of fp16, bf16, fp8"
run -- hpl-mxp -N 100 -P 2 -Q 1
expect_rc 2
expect_no_out "PASSED"
expect_out "Need at least 2 processes"
run -- hpl-mxp --dat HPL-MxP.dat -N 100
expect_rc 2
# a failure while running: a kernel of the simulated device fails
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS=dev=0,kernel=5 -- hpl-mxp -N 200 -NB 32
expect_rc 3
expect_no_out "PASSED"
finish
