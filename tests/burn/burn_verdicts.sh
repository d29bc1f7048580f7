# burn_verdicts.sh: per-device verdicts in text and JSON (one device faulty, one lost), the overall verdict, and the final progress line only for a run that went its whole time.
source "$(dirname "$0")/../cli/lib.sh"
need python3

# Device 1 of 2 faulty (bit 62 of its copy of B): GPU 0 OK, GPU 1 FAULTY, in text and JSON.
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_FAULTS=dev=1,flip=2,bit=62 -- burn --time 1 --json "$TMP/f.json"
expect_rc 1
expect_out '^GPU 0: OK$'
expect_out '^GPU 1: FAULTY \([1-9][0-9]* errors\)$'
expect_out '^burn: FAIL: 1 of 2 device\(s\) OK, GPU 1 FAULTY \([1-9][0-9]* errors\); [1-9][0-9]* error\(s\)$'
errors=$(sed -n 's/^GPU 1: FAULTY (\([0-9]*\) errors)$/\1/p' <<<"$OUT")
python3 - "$TMP/f.json" "$errors" <<'PY' || fail "faulty run: results document"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["burn"]
assert b == {"verdict": "FAIL", "passed": False, "exit_code": 1, "devices": 2, "devices_ok": 1}, b
r0, r1 = (r["extra"] for r in d["results"])
assert (r0["device"], r0["verdict"], r0["status"], r0["passed"], r0["errors"]) == (0, "OK", "ok", True, 0), r0
assert (r1["device"], r1["verdict"], r1["status"], r1["passed"]) == (1, "FAULTY", "faulty", False), r1
assert r1["errors"] == int(sys.argv[2]) and r1["errors"] >= 1, (r1["errors"], sys.argv[2])
e = r1["error_list"][0]
assert e["iteration"] == 1 and e["col"] == 0 and e["bad_rows"] == 94 and e["ratio"] > 1, e
assert r1["max_deviation"] is None and d["results"][1]["error"] > 1
# Device 0's largest deviation is located and within rounding; its element threshold is the bound's.
m = r0["max_deviation"]
assert 0 < m["ratio"] < 0.01 and m["iteration"] >= 1, m
assert 1e-9 < r0["element_threshold_min"] <= r0["element_threshold"] < 1e-7, r0["element_threshold"]
PY

# Device 1 of 2 lost: GPU 1 LOST, exit 3, the overall verdict ERROR; no 100% progress line.
run TESSERA_SIM_DEVICES=2 TESSERA_SIM_FAULTS=dev=1,lose=300 TESSERA_PROGRESS=1 -- burn --time 1 --size 64 --json "$TMP/l.json"
expect_rc 3
expect_out '^GPU 0: OK$'
expect_out '^GPU 1: LOST$'
expect_out '^burn: ERROR: 1 of 2 device\(s\) OK, GPU 1 LOST; 0 error\(s\)$'
expect_no_out '100\.0%'
python3 - "$TMP/l.json" <<'PY' || fail "lost run: results document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["burn"]["verdict"] == "ERROR" and d["burn"]["exit_code"] == 3 and d["burn"]["devices_ok"] == 1, d["burn"]
x = [r["extra"] for r in d["results"]]
assert [e["verdict"] for e in x] == ["OK", "LOST"] and [e["status"] for e in x] == ["ok", "lost"], x
PY

# A failing kernel: FAILED, exit 3, no 100% line before the error.
run TESSERA_SIM_DEVICES=1 TESSERA_SIM_FAULTS=kernel=20 TESSERA_PROGRESS=1 -- burn --time 1 --size 64
expect_rc 3
expect_out '^GPU 0: FAILED$'
expect_no_out '100\.0%'

# No device: the error alone, no progress line.
run TESSERA_PROGRESS=1 -- burn --time 1
expect_rc 3
expect_out 'no device to burn'
expect_no_out '^burn: '

# A healthy run that goes its whole time ends its progress at 100%.
run TESSERA_SIM_DEVICES=1 TESSERA_PROGRESS=1 -- burn --time 1 --size 64
expect_rc 0
expect_out '^burn: 100\.0%'
expect_out '^GPU 0: OK$'
expect_out '^burn: PASS: 1 of 1 device\(s\) OK; 0 error\(s\)$'
finish
