#!/usr/bin/env bash
# gpu_check.sh: on a GPU machine: build, check the HPL engine's device path and both device panels on the GPU (small cases, memcheck), then time a few sizes.
# Usage: tests/hpl/gpu_check.sh [BUILD_DIR] [N[:NB]...]; logs and JSON under $OUT (default /tmp/hpl-gpu).
# SKIP_CHECKS=1 only builds and times. PANELS (default "cusolver device") lists the --panel engines
# timed per size; each size also runs the cuSOLVER baseline once (--baseline cusolver).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build-gpu}; shift || true
OUT=${OUT:-/tmp/hpl-gpu}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
t0=$(date +%s)
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON >"$OUT/cmake.txt" 2>&1 &&
  cmake --build "$B" -j "$(nproc)" --target tessera hpl_engine_check test_gpu_hpl_panel >"$OUT/build.txt" 2>&1 ||
  { echo BUILD FAILED; grep -E "error" "$OUT/build.txt" | head -20; exit 2; }
echo "build $(( $(date +%s) - t0 )) s"
CHK=$B/tests/hpl_engine_check
if [ "${SKIP_CHECKS:-0}" != 1 ]; then
  $CHK --exec device 1:4 7:4 64:16 257:32 500:64 1000:128:1:1:2:4:2:1:1:0:2 1000:128:1:1:0:8:2:2:4:1:1 \
       2000:256 2000:256:1:1:1:16:2:0:1:0:2 | tail -4
  $CHK --exec device --zero-col 300 --expect info=301 1000:128 | tail -1
  $CHK --exec device --perturb --expect fail 1000:128 | tail -1
  # our device panel: every PFACT/RFACT, several NBMIN/NDIV, leaves of one block and of many
  $CHK --exec device --panel tessera --want-panel tessera 1:4 7:4 64:16 257:32 500:64 \
       1000:128:1:1:2:4:2:1:1:0:2 1000:128:1:1:0:8:2:2:4:1:1 2000:256:1:1:1:16:2:0:1:0:2 \
       3000:512:1:1:2:32:2:1 3000:512:1:1:0:64:3:2 3000:512:1:1:1:32:4:0 5000:1024:1:1:2:32:2:1 \
       5000:1024:1:1:1:64:2:2 | tail -4
  $CHK --exec device --panel tessera --sweep 300:32 | tail -1
  $CHK --exec device --panel tessera --zero-col 300 --expect info=301 1000:128 1000:128:1:1:0:16:2:0 | tail -1
  $CHK --exec device --panel tessera --perturb --expect fail 1000:128 | tail -1
  (cd "$B" && ./tests/test_gpu_hpl_panel >"$OUT/test_gpu_hpl_panel.txt" 2>&1; echo "test_gpu_hpl_panel rc=$?";
   grep -E "PASSED|FAILED|ERROR|SKIPPED" "$OUT/test_gpu_hpl_panel.txt" | head -8)
  compute-sanitizer --tool memcheck --error-exitcode 9 $CHK --exec device 300:32 300:32:1:1:2:4:2:1:1:0:0 \
    >"$OUT/memcheck.txt" 2>&1 && echo "memcheck clean" || { echo "memcheck FAILED"; tail -20 "$OUT/memcheck.txt"; }
  compute-sanitizer --tool memcheck --error-exitcode 9 $CHK --exec device --panel tessera 300:32 \
    600:64:1:1:0:16:2:0 600:64:1:1:1:8:3:1 600:64:1:1:2:64:2:2 >"$OUT/memcheck-tpanel.txt" 2>&1 &&
    echo "memcheck (tessera panel) clean" || { echo "memcheck (tessera panel) FAILED"; tail -20 "$OUT/memcheck-tpanel.txt"; }
  compute-sanitizer --tool racecheck --error-exitcode 9 $CHK --exec device --panel tessera 300:32:1:1:2:16:2:1 \
    300:32:1:1:0:16:2:1 300:32:1:1:1:16:2:1 >"$OUT/racecheck-tpanel.txt" 2>&1 &&
    echo "racecheck (tessera panel) clean" || { echo "racecheck (tessera panel) FAILED"; tail -20 "$OUT/racecheck-tpanel.txt"; }
fi
for spec in "$@"; do
  N=${spec%%:*}; NB=${spec#*:}; [ "$NB" = "$spec" ] && NB=512
  first=1
  for panel in ${PANELS:-cusolver device}; do
    base=""; [ $first = 1 ] && base="--baseline cusolver"; first=0
    echo "-- N=$N NB=$NB --panel $panel $base"
    $B/bin/tessera hpl -N "$N" -NB "$NB" --exec device --panel "$panel" $base -q \
      --json "$OUT/hpl-$N-$NB-$panel.json" 2>&1 | grep -E "^W|PASSED|FAILED|rror|cuSOLVER" | head -4
  done
done
