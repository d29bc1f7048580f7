#!/bin/bash
# hpcg_cli.sh: `tessera hpcg` end to end: VALID run, report keys, JSON, hpcg.dat, bad inputs (exit 2). $2: mpiexec + ranks (optional).
. "$(dirname "$0")/../cli/lib.sh"
shift
LAUNCH=("$@")
cd "$TMP" || exit 1
hp() { OUT=$("${LAUNCH[@]}" "$TESSERA" hpcg "$@" 2>&1); RC=$?; echo "\$ ${LAUNCH[*]} tessera hpcg $*  -> exit $RC"; }

hp --nx 16 --ny 16 --nz 16 --rt 1 --json r.json
expect_rc 0
expect_out "HPCG result is VALID with a GFLOP/s rating of=[0-9.e+-]+"
expect_out "^SpMV .*[0-9]"
expect_out "^MG .*[0-9]"
REP=$(ls HPCG-Benchmark_3.1_*.txt 2>/dev/null | head -1)
[ -n "$REP" ] || fail "no HPCG-Benchmark_3.1_<date>.txt"
if [ -n "$REP" ]; then
    tail -1 "$REP" | grep -qE "^Final Summary::HPCG result is VALID with a GFLOP/s rating of=[0-9.e+-]+$" || fail "last line of $REP"
    for k in "version=3.1" "Machine Summary::Distributed Processes=" "Global Problem Dimensions::Global nx=" \
             "Linear System Information::Number of Equations=" "Multigrid Information::Number of coarse grid levels=3" \
             "Spectral Convergence Tests::Result=PASSED" "Departure from Symmetry.*::Result=PASSED" \
             "Iteration Count Information::Optimized CG iterations per set=" "Reproducibility Information::Result=PASSED" \
             "Benchmark Time Summary::Total=" "Floating Point Operations Summary::Raw MG=" "GB/s Summary::Raw Total B/W=" \
             "GFLOP/s Summary::Total with convergence and optimization phase overhead=" \
             "Final Summary::Official results execution time \(sec\) must be at least=1800"; do
        grep -qE "^$k" "$REP" || fail "report lacks $k"
    done
    # 16^3 per rank: equations = 4096 * ranks
    EQ=$(grep "^Linear System Information::Number of Equations=" "$REP" | cut -d= -f2)
    NP=$(grep "^Machine Summary::Distributed Processes=" "$REP" | cut -d= -f2)
    [ "$EQ" = "$((4096 * NP))" ] || fail "equations $EQ for $NP ranks"
fi
python3 - r.json <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
assert r["bench"] == "hpcg" and r["engine"] == "cpu", r
e = r["extra"]
assert e["valid"] is True and e["rating_gflops"] > 0, e
assert e["nx"] == 16 and e["npx"] * e["npy"] * e["npz"] >= 1
for p in ("spmv", "mg", "ddot", "waxpby"):
    assert e["phases"][p]["gflops"] > 0, p
PY
if [ ${#LAUNCH[@]} -eq 0 ]; then
    # hpcg.dat: line 3 dims, line 4 time
    printf 'HPCG benchmark input file\nline 2\n16 16 16\n0\n' > hpcg.dat
    hp -q
    expect_rc 0
    expect_out "16 x 16 x 16 per rank"
    expect_out "QuickPath|timed CG ran"
    rm -f hpcg.dat
    hp --nx 20 --ny 16 --nz 16 --rt 0
    expect_rc 2; expect_out "nx=20 must be a positive multiple of 8"
    hp --nx 16 --ny 16 --nz 256 --rt 0
    expect_rc 2; expect_out "aspect ratio.*0.0625.*0.125"
    hp --nx 1024 --ny 1024 --nz 1024 --rt 0
    expect_rc 2; expect_out "needs about .* GiB.*more than the limit"
    hp --nx 16 --npx 3 --npy 1 --npz 1 --rt 0
    expect_rc 2; expect_out "does not match the 1 ranks"
    hp --rt -1
    expect_rc 2
    hp --bogus
    expect_rc 2
else
    hp --nx 20 --ny 16 --nz 16 --rt 0
    expect_rc 2; expect_out "nx=20 must be a positive multiple of 8"
fi
finish
