#!/bin/bash
# hpcg_report_keys.sh: the report of small `tessera hpcg` runs (cpu and ref engines, --rt 0 and a short --rt, VALID and INVALID) has HPCG 3.1's keys (hpcg31_report_keys.txt) and no others but Tessera's own section.
. "$(dirname "$0")/../cli/lib.sh"
KEYS=$(cd "$(dirname "$0")" && pwd)/hpcg31_report_keys.txt
CHECK=$(cd "$(dirname "$0")" && pwd)/check_report_keys.py
cd "$TMP" || exit 1
N=(--nx 16 --ny 16 --nz 16)
# rk EXIT WHEN -- [VAR=value...] -- ARGS...: runs tessera hpcg in a fresh folder, expects EXIT, checks
# the one report it wrote against the keys whose condition is in WHEN.
rk() {
    local want=$1 when=() envs=()
    shift
    while [ "$1" != "--" ]; do when+=("$1"); shift; done
    shift
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    REP=/dev/null
    cd "$TMP" && rm -rf run && mkdir run && cd run || exit 1
    OUT=$(env "${envs[@]}" "$TESSERA" hpcg "$@" 2>&1); RC=$?
    echo "\$ ${envs[*]} tessera hpcg $*  -> exit $RC"
    expect_rc "$want"
    local reps=(HPCG-Benchmark_3.1_*.txt)
    if [ "${#reps[@]}" -ne 1 ] || [ ! -f "${reps[0]}" ]; then
        fail "expected one report, found: ${reps[*]}"
    else
        REP=$PWD/${reps[0]}
        python3 "$CHECK" "$KEYS" "$REP" "${when[@]}" || fail "report keys (${when[*]}): $*"
    fi
    cd "$TMP" || exit 1
}
# val KEY: the report's value of KEY (first occurrence).
val() { grep -m1 -F "$1=" "$REP" | cut -d= -f2-; }

# The key list itself: as many keys as HPCG 3.1 writes, starting with its name and ending with INVALID's.
[ "$(grep -vc '^#' "$KEYS")" -eq 118 ] || fail "hpcg31_report_keys.txt: $(grep -vc '^#' "$KEYS") keys, expected 118"
[ "$(grep -v '^#' "$KEYS" | head -1)" = "$(printf 'always\tHPCG-Benchmark')" ] || fail "hpcg31_report_keys.txt: first key"

# The optimized CPU engine, the quick path: QuickPath's two lines, no demand for 1800 s, no
# reference-kernel lines.
rk 0 valid short quick -- OMP_NUM_THREADS=2 -- "${N[@]}" --rt 0 --engine cpu
[ "$(val 'Final Summary::You have selected the QuickPath option')" = \
  "Results are official for legacy installed systems with confirmation from the HPCG Benchmark leaders." ] ||
    fail "QuickPath value: $(val 'Final Summary::You have selected the QuickPath option')"
[ "$(val 'Tessera::Implementation')" = "tessera hpcg (engine cpu)" ] || fail "Tessera::Implementation: $(val 'Tessera::Implementation')"
[ "$(val 'Tessera::Run time asked (sec)')" = "0" ] || fail "Tessera::Run time asked"
tail -1 "$REP" | grep -qE '^Tessera::Result=VALID with a GFLOP/s rating of [0-9.e+-]+$' || fail "last line: $(tail -1 "$REP")"
# The rating in Final Summary is the one of GFLOP/s Summary, and the one of the summary line.
R=$(val 'Final Summary::HPCG result is VALID with a GFLOP/s rating of')
[ -n "$R" ] && [ "$R" = "$(val 'GFLOP/s Summary::Total with convergence and optimization phase overhead')" ] || fail "rating $R"
expect_out "HPCG result is VALID with a GFLOP/s rating of=$R\$"
# 16^3 on one rank: 4096 equations; memory per equation from the total
[ "$(val 'Linear System Information::Number of Equations')" = 4096 ] || fail "equations"

# A short timed run: the 1800 s line instead of QuickPath's.
rk 0 valid short timed -- OMP_NUM_THREADS=2 -- "${N[@]}" --rt 1 --engine cpu
[ "$(val 'Final Summary::Official results execution time (sec) must be at least')" = 1800 ] || fail "1800 s line"

# The reference kernels: the four lines of HPCG 3.1 for unoptimized DDOT, SpMV, MG and WAXPBY, the
# MG one as the thread count has it.
rk 0 valid short quick ref refN -- OMP_NUM_THREADS=2 -- "${N[@]}" --rt 0 --engine ref
[ "$(val 'Machine Summary::Threads per processes')" = 2 ] || fail "threads"
[ "$(val 'Final Summary::Reference version of ComputeMG used and number of threads greater than 1')" = \
  "Performance results are severely suboptimal" ] || fail "ComputeMG with threads: value"
[ "$(val 'Final Summary::Reference version of ComputeWAXPBY used')" = \
  "Performance results are most likely suboptimal" ] || fail "ComputeWAXPBY: value"
[ "$(val 'Memory Use Information::Memory used for OptimizeProblem data (Gbytes)')" = 0 ] || fail "ref: OptimizeProblem memory"
rk 0 valid short timed ref ref1 -- OMP_NUM_THREADS=1 -- "${N[@]}" --rt 1 --engine ref

# INVALID (a reference drop no CG reaches): HPCG 3.1's two INVALID lines, the reason in Tessera's section.
rk 1 invalid -- OMP_NUM_THREADS=2 TESSERA_HPCG_REF_DROP=1e-300 -- "${N[@]}" --rt 0 --engine cpu
expect_out "HPCG result is INVALID: "
[ "$(val 'Final Summary::HPCG result is')" = "INVALID." ] || fail "INVALID line"
grep -q '^Tessera::Reference CG=not run' "$REP" || fail "TESSERA_HPCG_REF_DROP: Tessera::Reference CG line"
tail -1 "$REP" | grep -qE '^Tessera::Result=INVALID: .+' || fail "last line: $(tail -1 "$REP")"

# The check fails on what reports had before: a key of Tessera's among HPCG 3.1's, the verdict moved
# to the end of Final Summary, QuickPath's line in a timed run, a memory key left out.
sed -e '3a Implementation=tessera hpcg (engine cpu)' "$REP" > extra.txt
sed -e '/^Final Summary::HPCG result is=/{h;d}' -e '/^Final Summary::Please review/G' "$REP" > moved.txt
sed -e '/^Final Summary::HPCG result is=/i Final Summary::You have selected the QuickPath option=no' "$REP" > quick.txt
grep -v '^Memory Use Information::Memory used for linear system and CG' "$REP" > nomem.txt
for f in extra moved quick nomem; do
    O=$(python3 "$CHECK" "$KEYS" $f.txt invalid); R=$?
    echo "check of $f.txt: exit $R: $O"
    [ $R -eq 1 ] || fail "the check passed $f.txt"
done
grep -q "key not in HPCG 3.1's report: 'Implementation'" <<<"$(python3 "$CHECK" "$KEYS" extra.txt invalid)" || fail "extra key not named"
finish
