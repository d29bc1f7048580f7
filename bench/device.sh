#!/usr/bin/env bash
# device.sh: one call on the GPU machine: build for Hopper, run the test suite against the real GPU,
# compute-sanitizer on a small GEMM, then the benchmarks; JSON and logs under $OUT (or bench/out),
# a short table printed last. Usage: bench/device.sh [quick]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
# Results gather in one folder and come back as one tarball (the device tool returns at most 8 files).
RES=${TESSERA_RESULTS_DIR:-/tmp/tessera-results}
mkdir -p "$RES"
log=$OUT/device-log.txt
: >"$log"
say() { echo "$@" | tee -a "$log" >&2; }
fail=0

say "== device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
# The GPU machine gets a copy of the tree without .git: the caller passes TESSERA_COMMIT.
export TESSERA_COMMIT=${TESSERA_COMMIT:-$(git rev-parse --short=7 HEAD 2>/dev/null)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)}
say "== commit: ${TESSERA_COMMIT:-unknown}"

# cmocka and Debian's BLAS testers are not in the GPU image: copies unpacked from the Debian
# packages travel in .deps/ (carry [".deps"]), made here with
#   cd /tmp && apt-get download libcmocka0 libcmocka-dev libblas-test libgfortran5 libquadmath0 &&
#   for d in libcmocka*.deb libblas-test*.deb libgfortran5*.deb libquadmath0*.deb; do dpkg -x $d <repo>/.deps; done
# (tests/blas finds the testers there; their libblas.so.3 is replaced by ours at run time).
# TESSERA_DEVICE_TARGETS="tessera ..." builds only those targets (benchmark-only calls that skip the tests).
build=${TESSERA_DEVICE_BUILD:-build-device}
t0=$(date +%s)
# TESSERA_DEVICE_PREBUILT=DIR (bench/prebuild.sh, carried): its binaries instead of a build, when the
# loader finds every library they need here; the tests are not in it, so they are skipped.
pre=${TESSERA_DEVICE_PREBUILT:-}
if [ -n "$pre" ]; then
  if [ ! -x "$pre/bin/tessera" ]; then
    say "== prebuilt: no $pre/bin/tessera; building"; pre=
  elif missing=$(ldd "$pre/bin/tessera" 2>&1 | grep "not found"); then
    say "== prebuilt: libraries not found here, building instead: $(echo "$missing" | awk '{print $1}' | tr '\n' ' ')"; pre=
  elif ! "$pre/bin/tessera" --version >>"$log" 2>&1; then
    say "== prebuilt: $pre/bin/tessera does not start here; building"; pre=
  fi
fi
if [ -n "$pre" ]; then
  build=$pre
  pre_commit=$(cat "$pre/COMMIT" 2>/dev/null || echo '?')
  [ "$pre_commit" = "${TESSERA_COMMIT%-dirty}" ] ||
    say "== WARNING: prebuilt binaries of $pre_commit, TESSERA_COMMIT=$TESSERA_COMMIT"
  export TESSERA_DEVICE_SKIP_TESTS=1
  say "== build: none (prebuilt $pre_commit, tests skipped)"
elif ! { cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON >>"$log" 2>&1 &&
       cmake --build $build -j "$(nproc)" ${TESSERA_DEVICE_TARGETS:+--target $TESSERA_DEVICE_TARGETS} >>"$log" 2>&1; }; then
  say "== BUILD FAILED"; tail -40 "$log" >&2; exit 2
else
  say "== build: $(( $(date +%s) - t0 )) s"
fi

# Resource report and SASS check of our CUDA kernels (registers, spills, shared memory, DMMA).
# (in parallel, one log per file, gathered into ptxas.txt; TESSERA_DEVICE_PTXAS=0 skips it)
pids=()
[ "${TESSERA_DEVICE_PTXAS:-1}" = 1 ] && for cu in src/kernels/cuda/*.cu src/algorithms/*/cuda/*.cu; do
  [ -e "$cu" ] || continue
  b=$(basename "$cu" .cu)
  nvcc -gencode=arch=compute_90a,code=sm_90a -Isrc -I$build/generated -Xptxas=-v -c "$cu" \
       -o "/tmp/ts_res_$b.o" >"/tmp/ts_res_$b.txt" 2>&1 &
  pids+=($!)
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}" # not a bare wait: the sampler below runs in the background
[ "${TESSERA_DEVICE_PTXAS:-1}" = 1 ] && cat /tmp/ts_res_*.txt >"$OUT/ptxas.txt" 2>/dev/null

# Clocks, power and temperature of every GPU sampled once a second while the call runs (the same
# configuration has measured 20% apart on two machines of one kind: the samples tell a slow GPU from
# a slow build). Summarized per GPU at the end, over the samples where the GPU was busy.
gq=index,utilization.gpu,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active
samples=$RES/gpu-samples.csv
sampler=
command -v nvidia-smi >/dev/null && ! nvidia-smi --query-gpu=$gq --format=csv,noheader >/dev/null 2>&1 &&
  gq=${gq/clocks_event_reasons/clocks_throttle_reasons} # drivers before the rename
if command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=$gq --format=csv,noheader >/dev/null 2>&1; then
  : >"$samples"
  nvidia-smi --query-gpu=$gq --format=csv,nounits -l 1 >"$samples" 2>/dev/null &
  sampler=$!
fi

if [ "${TESSERA_DEVICE_SKIP_TESTS:-0}" != 1 ]; then
say "== tests (TESSERA_TEST_BACKEND=cuda)"
# Tests run 8 at a time on one GPU: each process gets a 12 GiB arena instead of 90% of the memory.
(cd $build && TESSERA_TEST_BACKEND=cuda TESSERA_ARENA_BYTES=12G \
   ctest --output-on-failure -j 8 ${TESSERA_CTEST_ARGS:-}) >>"$log" 2>&1 || fail=1
grep -E "tests passed|tests failed|Failed|\*\*\*" "$log" | tail -15 >&2

# compute-sanitizer on small GEMMs of every device engine (memcheck), and the own kernel's
# shared-memory pipeline (racecheck, synccheck).
sanitize() { # sanitize TOOL ENGINES SIZES...
  local tool=$1 engines=$2; shift 2
  if compute-sanitizer --tool "$tool" --error-exitcode 9 $build/bin/tessera gemm "$@" \
       --engine "$engines" --ops NN,NT,TN,TT --reps 1 --warmup 1 >>"$log" 2>&1; then
    say "   $tool $engines: clean"
  else
    say "   $tool $engines: FAILED"; fail=1
  fi
}
if [ "${TESSERA_DEVICE_SANITIZE:-1}" = 1 ]; then
say "== compute-sanitizer"
TESSERA_ARENA_BYTES=2G sanitize memcheck cublas,tessera 256x192x160 300x257x129
TESSERA_ARENA_BYTES=2G sanitize racecheck tessera 256x192x160
TESSERA_ARENA_BYTES=2G sanitize synccheck tessera 256x192x160
fi
fi

if [ "${1:-}" != quick ]; then
  say "== benchmarks (${TESSERA_BENCH_STEPS:-all})"
  [ "${TESSERA_BENCH_STEPS:-all}" = none ] || bench/run.sh $build/bin/tessera "$RES" >>"$log" 2>&1 || fail=1
  grep -E "^== .*: [0-9]+ s$|FAILED" "$log" | tail -20 >&2
fi

# Scaling runs on every GPU of the node (bench/multi.sh) when TESSERA_DEVICE_MULTI names its parts
# (hpl,gemm,blas3,hpcg,hpl-host); JSON and logs under $RES/multi.
if [ -n "${TESSERA_DEVICE_MULTI:-}" ]; then
  say "== multi-GPU (${TESSERA_DEVICE_MULTI})"
  MULTI_STEPS=$TESSERA_DEVICE_MULTI bench/multi.sh $build/bin/tessera "$RES/multi" 2>>"$log" | tee -a "$log" || fail=1
  grep -E "^== .*: [0-9]+ s$|FAILED" "$log" | tail -12 >&2
fi

if [ -n "$sampler" ]; then
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  python3 bench/gpu_samples.py "$samples" 2>&1 | tee -a "$log" >&2
fi
tar -czf "$OUT/results.tgz" -C "$RES" . 2>/dev/null
# The device tool brings back at most 8 files from $OUT: everything a run writes goes into
# results.tgz, and nothing else may be added there beside the log and ptxas.txt.
n_out=$(find "$OUT" -maxdepth 2 -type f | wc -l)
[ "$n_out" -le 8 ] || say "== WARNING: $n_out files under $OUT; the device tool returns 8: results.tgz may not come back"
say "== summary (fail=$fail)"
shopt -s nullglob
jsons=("$RES"/*.json "$RES"/multi/*.json)
[ ${#jsons[@]} -gt 0 ] && python3 bench/summarize.py "${jsons[@]}" | tee -a "$log"
exit $fail
