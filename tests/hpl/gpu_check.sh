#!/usr/bin/env bash
# gpu_check.sh: on a GPU machine: build, check the HPL engine's device path on the GPU (small cases, memcheck), then time a few sizes.
# Usage: tests/hpl/gpu_check.sh [BUILD_DIR] [N...]; logs and JSON under $OUT (default /tmp/hpl-gpu).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build-gpu}; shift || true
OUT=${OUT:-/tmp/hpl-gpu}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
t0=$(date +%s)
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON >"$OUT/cmake.txt" 2>&1 &&
  cmake --build "$B" -j "$(nproc)" --target tessera hpl_engine_check >"$OUT/build.txt" 2>&1 ||
  { echo BUILD FAILED; grep -E "error" "$OUT/build.txt" | head -20; exit 2; }
echo "build $(( $(date +%s) - t0 )) s"
CHK=$B/tests/hpl_engine_check
$CHK --exec device 1:4 7:4 64:16 257:32 500:64 1000:128:1:1:2:4:2:1:1:0:2 1000:128:1:1:0:8:2:2:4:1:1 \
     2000:256 2000:256:1:1:1:16:2:0:1:0:2 | tail -4
$CHK --exec device --zero-col 300 --expect info=301 1000:128 | tail -1
$CHK --exec device --perturb --expect fail 1000:128 | tail -1
compute-sanitizer --tool memcheck --error-exitcode 9 $CHK --exec device 300:32 300:32:1:1:2:4:2:1:1:0:0 \
  >"$OUT/memcheck.txt" 2>&1 && echo "memcheck clean" || { echo "memcheck FAILED"; tail -20 "$OUT/memcheck.txt"; }
for spec in "$@"; do
  N=${spec%%:*}; NB=${spec#*:}; [ "$NB" = "$spec" ] && NB=512
  $B/bin/tessera hpl -N "$N" -NB "$NB" --exec device -q --json "$OUT/hpl-$N-$NB.json" 2>&1 |
    grep -E "^W|PASSED|FAILED|rror" | head -3
done
