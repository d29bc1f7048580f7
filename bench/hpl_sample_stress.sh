#!/usr/bin/env bash
# hpl_sample_stress.sh: HPL 2.3's sample HPL.dat (864 runs, 4 ranks) run again and again beside busy
# processes, several streams at once, each stream on its own 2 cores (as a loaded 2-core CI machine):
# every run's merged stdout+stderr is checked line by line (tests/hpl/sample_output.sh), failing logs kept.
# Usage: bench/hpl_sample_stress.sh TESSERA SECONDS [STREAMS] [HOG]   (OUT=dir for logs; default bench/out)
# STREAMS defaults to nproc/2, HOG (busy processes per stream, on its 2 cores) to 6.
set -u
cd "$(dirname "$0")/.."
tessera=$(realpath "$1") seconds=$2 streams=${3:-$(( $(nproc) / 2 ))} hog=${4:-6}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
pin() { if command -v taskset >/dev/null; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }
pids=()
for ((s = 0; s < streams; s++)); do
  cores="$((2 * s)),$((2 * s + 1))"
  TS_SAMPLE_RUNS=100000 TS_SAMPLE_SECONDS=$seconds TS_SAMPLE_HOG=$hog TS_SAMPLE_KEEP="$OUT/stream$s-failed" \
    pin "$cores" tests/hpl/sample_output.sh "$tessera" tests/hpl_front/data/HPL.dat \
      mpirun --oversubscribe --allow-run-as-root --bind-to none -np 4 >"$OUT/stream$s.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
total=$(cat "$OUT"/stream*.log | grep -c "^run [0-9]*: ok")
failed=$(cat "$OUT"/stream*.log | grep -c "^run [0-9]*: FAILED")
echo "hpl_sample_stress: $streams streams x (4 ranks + $hog busy) on 2 cores each, ${seconds} s: $total runs ok, $failed failed"
grep -h -A12 "FAILED" "$OUT"/stream*.log | head -60
exit $rc
