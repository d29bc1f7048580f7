#!/usr/bin/env bash
# ceiling.sh: `tessera hpl --ceiling` on a simulated device: the ceiling line, the ratio line, the
# JSON fields (extra.ceiling_tflops, extra.hpl_over_ceiling = rate / ceiling; both forms of the
# update held, NN and NT, the ceiling the better) and the refusals.
set -u
tessera=$1
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
export TESSERA_SIM_DEVICES=1 TESSERA_PROGRESS=0
"$tessera" hpl -N 512 -NB 64 --ceiling 1 --json "$work/c.json" >"$work/out" 2>"$work/err"
rc=$?
cat "$work/err"
[ $rc -eq 0 ] || fail "exit $rc"
grep -Eq '^hpl: DGEMM ceiling [0-9.]+ [GT]FLOP/s per GPU \((ref|cpu) N[NT]\); sustained: (ref|cpu) NN [0-9.]+, (ref|cpu) NT [0-9.]+$' "$work/err" || fail "no ceiling line"
grep -Eq '^DGEMM ceiling WR11C2R4 N=512: [0-9.]+x \((ref|cpu) N[NT], [0-9.]+ [GT]FLOP/s per GPU x 1\)$' "$work/out" || fail "no ratio line"
grep -q "PASSED" "$work/out" || fail "the run did not pass"
python3 - "$work/c.json" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"] if isinstance(d, dict) else d
e = rs[0]["extra"]
c = e["ceiling"]
assert e["ceiling_tflops"] > 0 and c["tflops_per_gpu"] == e["ceiling_tflops"], e
assert abs(e["hpl_over_ceiling"] - e["gflops"] / 1e3 / e["ceiling_tflops"]) <= 1e-9 * e["hpl_over_ceiling"], e
assert (c["m"], c["n"], c["k"]) == (512, 512, 64) and c["seconds_per_engine"] == 1, c
assert c[c["engine"] + ("_nt" if c["op"] == "NT" else "") + "_tflops_per_gpu"] == c["tflops_per_gpu"], c
print("ok: ceiling %.3g TFLOP/s, hpl/ceiling %.3f" % (e["ceiling_tflops"], e["hpl_over_ceiling"]))
PY
# refusals: input errors, exit 2, nothing run
"$tessera" hpl -N 512 --ceiling 0 >"$work/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--ceiling: '0' is not a positive duration" "$work/out" || { cat "$work/out"; fail "--ceiling 0: exit $rc"; }
"$tessera" hpl -N 512 --ceiling 5 --exec cpu >"$work/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--ceiling measures the devices' DGEMM" "$work/out" || { cat "$work/out"; fail "--ceiling with --exec cpu: exit $rc"; }
echo PASSED
