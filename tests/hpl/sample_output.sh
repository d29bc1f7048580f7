#!/usr/bin/env bash
# sample_output.sh: HPL 2.3's sample HPL.dat (864 runs) on 4 ranks, stdout and stderr merged into one
# file as users run it (`mpirun ... tessera hpl --dat HPL.dat > out.log 2>&1`), checked line by line:
# exit 0, every result line whole and followed by its residual line, 864 of each, the summary.
# usage: sample_output.sh TESSERA HPL.DAT MPIEXEC [MPIEXEC ARGS...]      (one run; the CTest test)
#        TS_SAMPLE_RUNS=50 TS_SAMPLE_HOG=6 TS_SAMPLE_KEEP=DIR sample_output.sh ...   (a stress run:
#        N runs beside HOG busy processes, every failing log kept in DIR; TS_SAMPLE_SECONDS=S starts
#        no run after S seconds). bench/hpl_sample_stress.sh runs several such streams at once.
set -u
tessera=$(realpath "$1") dat=$2; shift 2
runs=${TS_SAMPLE_RUNS:-1} hog=${TS_SAMPLE_HOG:-0} keep=${TS_SAMPLE_KEEP:-} seconds=${TS_SAMPLE_SECONDS:-0}
work=$(mktemp -d)
hogs=()
cleanup() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
for ((i = 0; i < hog; i++)); do (while :; do :; done) & hogs+=($!); done
cp "$dat" "$work/HPL.dat"
# check LOG RC: prints what is wrong with one run's merged output, nothing when it is right
check() {
  local log=$1 rc=$2
  [ "$rc" -eq 0 ] || echo "exit status $rc"
  python3 - "$log" <<'PY'
import re, sys
lines = open(sys.argv[1], errors="replace").read().split("\n")
result = re.compile(r"^W[RC]\d\d[LCR]\d[LCR]\d\s+\d+\s+\d+\s+\d+\s+\d+\s+\S+\s+\S+$")
resid = re.compile(r"^\|\|Ax-b\|\|_oo/\(eps\*\(\|\|A\|\|_oo\*\|\|x\|\|_oo\+\|\|b\|\|_oo\)\*N\)=\s+\S+ \.\.\.\.\.\. (PASSED|FAILED)$")
own = re.compile(r"^(HPL_pdgesv\(\) (start|end) time +\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}|-{80}|)$")
bad, nres, npass = [], 0, 0
for i, l in enumerate(lines):
    if l.startswith("W") and not l.startswith("Written"):
        if not result.match(l):
            bad.append(f"line {i+1}: broken result line: {l[:120]!r}")
            continue
        nres += 1
        # HPL's layout: the result line, the start and end times, a dash rule, the residual line;
        # nothing else may come between them
        j = i + 1
        while j < len(lines) and own.match(lines[j]): j += 1
        if j >= len(lines) or not resid.match(lines[j]):
            bad.append(f"line {i+1}: result line not followed by its residual line: {lines[j][:120] if j < len(lines) else 'EOF'!r}")
    elif l.startswith("||Ax-b||"):
        if not resid.match(l):
            bad.append(f"line {i+1}: broken residual line: {l[:120]!r}")
        elif l.endswith("PASSED"):
            npass += 1
if nres != 864: bad.append(f"{nres} result lines, not 864")
if npass != 864: bad.append(f"{npass} PASSED lines, not 864")
if not any("864 tests completed and passed residual checks" in l for l in lines): bad.append("no summary of 864 passed")
for b in bad[:20]: print(b)
PY
}
fails=0 t0=$SECONDS done_runs=0
for ((r = 1; r <= runs; r++)); do
  [ "$seconds" -gt 0 ] && [ $((SECONDS - t0)) -ge "$seconds" ] && break
  done_runs=$r
  (cd "$work" && "$@" "$tessera" hpl --dat HPL.dat >out.log 2>&1)
  rc=$?
  problems=$(check "$work/out.log" "$rc")
  if [ -n "$problems" ]; then
    fails=$((fails + 1))
    echo "run $r: FAILED"; echo "$problems" | sed 's/^/  /'
    if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work/out.log" "$keep/sample-run$r.log"; fi
  elif [ "$runs" -gt 1 ]; then
    echo "run $r: ok ($(uptime | sed 's/.*load average: //'))"
  fi
done
[ $fails -eq 0 ] && { echo "PASSED: $done_runs run(s), 864 results each, every line whole"; exit 0; }
echo "FAILED: $fails of $done_runs run(s)"; exit 1
