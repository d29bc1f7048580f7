# burn_plot.sh: the SVG plot of a 2-device run with one faulty device: time axis as long as the run, rate windows of whole products (no partial first or last interval), failed intervals marked, legend lines that do not overlap.
source "$(dirname "$0")/../cli/lib.sh"
need python3

t0=$(date +%s.%N)
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_FAULTS=dev=1,flip=2,bit=62 -- burn --time 3.4 --json "$TMP/b.json" --plot "$TMP/b.svg"
wall=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
expect_rc 1
python3 - "$TMP/b.json" "$TMP/b.svg" "$wall" <<'PY' || fail "plot"
import json, re, sys
import xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
svg = ET.parse(sys.argv[2]).getroot()
ns = "{http://www.w3.org/2000/svg}"
texts = lambda cls: [t for t in svg.iter(ns + "text") if t.get("class") == cls]
x = [r["extra"] for r in d["results"]]
run_s = max(e["seconds"] for e in x)
assert 3.4 <= run_s <= float(sys.argv[3]), (run_s, sys.argv[3])

# The rate windows: the first starts with the checked phase, each next one where the one before
# ended, each ends at a completion (so no window holds part of a product: its flops are a whole
# number of products, and together they are every product of the run, the last window ending at
# the last completion), a window taken at a 1 s tick ends by that tick; the tail of the run after
# the last tick is joined to the window before it when shorter than half an interval, else it is a
# window of its own, then at least that long. Nothing here depends on how many products a loaded
# machine completes in an interval (a window may be long, short or empty).
P = 2 * 94 * 94 * 96 # flops of one checked product (--size 96 by default on simulated devices)
for e in x:
    s = e["samples"]
    assert len(s) >= 2, len(s)
    assert s[0]["t_from"] == 0, s[0]
    for a, b in zip(s, s[1:]):
        assert b["t_from"] == a["t_to"], (a, b)
    products = 0
    for w in s:
        n = w["tflops"] * 1e12 * (w["t_to"] - w["t_from"]) / P
        assert (w["t_to"] == w["t_from"] and w["tflops"] == 0) or (w["t_to"] > w["t_from"] and n > 0.5), w
        assert abs(n - round(n)) < 1e-6 * max(1, n), (n, w)
        products += round(n)
    assert products == e["iterations"], (products, e["iterations"])
    for w in s[:-1]:
        assert w["t_to"] <= w["t"] + 1e-9, w
    w = s[-1]
    assert w["t_to"] <= e["seconds"] + 1e-9, (w, e["seconds"])
    if abs(w["t"] - e["seconds"]) < 1e-6: # a window of its own, taken at the end of the run
        assert w["t_to"] - w["t_from"] >= 0.5 or len(s) == 1, w

# The time axis ends at the run's length: its last label is within one step of it, never beyond.
xt = [float(t.text) for t in texts("xtick")]
step = xt[1] - xt[0]
assert xt[0] == 0 and xt[-1] <= run_s + 1e-9 and run_s - xt[-1] < step, (xt, run_s)
rect = svg.find(ns + "rect[@stroke='#444']")
x0, pw = float(rect.get("x")), float(rect.get("width"))
y0, ph = float(rect.get("y")), float(rect.get("height"))
for pl in svg.iter(ns + "polyline"):
    for pt in pl.get("points").split():
        px, py = map(float, pt.split(","))
        assert x0 <= px <= x0 + pw + 1e-6 and y0 <= py <= y0 + ph + 1e-6, (px, py)

# Intervals with failed checks are marked: one cross per such sample of device 1, none for device 0.
marks = [p for p in svg.iter(ns + "path") if p.get("class") == "err"]
want = sum(1 for w in x[1]["samples"] if w["errors"] > 0)
assert want >= 2 and len(marks) == want, (len(marks), want)
assert all(p.find(ns + "title").text.startswith("GPU 1:") for p in marks)
assert sum(w["errors"] for w in x[1]["samples"]) == x[1]["errors"], "errors per interval add up"

# Legend: a line per device with its verdict, then the key; lines apart, inside the picture.
leg = texts("legend")
assert len(leg) == 3, len(leg)
assert leg[0].text.startswith("GPU 0: OK,") and leg[1].text.startswith("GPU 1: FAULTY ("), [t.text for t in leg]
ys = [float(t.get("y")) for t in leg]
assert all(b - a >= 14 for a, b in zip(ys, ys[1:])), ys
W, H = float(svg.get("width")), float(svg.get("height"))
for t in leg:
    n = len("".join(t.itertext()))
    assert float(t.get("x")) + 7.0 * n <= W and float(t.get("y")) <= H, (t.get("x"), n)
PY
finish
