#!/usr/bin/env bash
# per_rank.sh: `tessera hpl --json` on a 2 x 2 grid of simulated devices (the panels gathered, [A|b]
# transposed, the swaps exchanged along the columns) reports every rank's phase sums from its own
# stamps: four entries in grid order with their row and column, rank 0's update sums equal to its
# per-iteration updates, fact on every rank (each takes part in its column's gathered panels), and
# no negative time.
set -u
tessera=$1 mpiexec=$2
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
export TESSERA_PROGRESS=0 OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TESSERA_SIM_DEVICES=4 TESSERA_TEST_HPL_COL_EMUL=1 "$mpiexec" --oversubscribe --allow-run-as-root -n 4 \
  "$tessera" hpl -N 600 -NB 32 -P 2 -Q 2 --exec device --panel device --json "$work/r.json" >"$work/out" 2>&1 ||
  { cat "$work/out"; fail "exit $?"; }
grep -q PASSED "$work/out" || { cat "$work/out"; fail "not PASSED"; }
python3 - "$work/r.json" <<'PY' || fail "JSON"
import json, sys
e = json.load(open(sys.argv[1]))["results"][0]["extra"]
assert e["layout"] == "row" and e["swap"] == "devexch-emul", (e["layout"], e["swap"])
pr = e["per_rank"]
assert [(p["rank"], p["row"], p["col"]) for p in pr] == [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)], pr
keys = ["fact", "swap0", "swap1", "update0", "update1", "trsm", "idle0", "total"]
for p in pr:
    assert all(p[k] >= 0 for k in keys), p
    assert p["fact"] > 0 and p["update0"] > 0 and p["swap0"] > 0 and p["total"] > 0, p
    assert p["trsm"] <= p["update0"] + p["update1"], p
it = sum(i["update"] for i in e["per_iteration"])
u0 = pr[0]["update0"] + pr[0]["update1"]
assert abs(it - u0) <= 1e-9 * max(it, 1e-30) + 1e-12, (it, u0)
print("ok:", [(p["rank"], round(p["update0"], 4), round(p["swap0"], 4)) for p in pr])
PY
echo PASSED
