#!/usr/bin/env bash
# hpcg_gpu.sh: HPCG's GPU path on one GPU: build, the GPU test (device build bitwise equal to the
# host build, kernels within their bounds), a quick 32^3 run, then the benchmark grid; logs, the
# report files and JSON under $OUT (or bench/out). Usage: bench/hpcg_gpu.sh [N [SECONDS]]
# (default 256 and 60: `tessera hpcg --engine cuda --nx N --ny N --nz N --rt SECONDS`).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
N=${1:-256}
RT=${2:-60}
build=${TESSERA_DEVICE_BUILD:-build-device}
case $build in /*) bin=$build/bin/tessera ;; *) bin=$root/$build/bin/tessera ;; esac
log=$OUT/hpcg-gpu-log.txt
: >"$log"
say() { echo "$@" | tee -a "$log" >&2; }

say "== device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
t0=$SECONDS
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON &&
       cmake --build "$build" -j "$(nproc)" --target tessera test_gpu_hpcg; } >"$OUT/hpcg-build.txt" 2>&1; then
  say "== BUILD FAILED"; tail -40 "$OUT/hpcg-build.txt" >&2; exit 2
fi
say "== build: $((SECONDS - t0)) s"
obj=$(find "$build" -name 'ts_hpcg_opt_kernels.cu.o' | head -1)
if [ -n "$obj" ] && command -v cuobjdump >/dev/null; then
  cuobjdump -res-usage "$obj" 2>&1 | grep -A1 -E "k_sweep|k_restrict|k_dot" >"$OUT/hpcg-resources.txt"
  cuobjdump -sass -fun '_Z7k_sweepILi0EEv16ts_hpcg_xk_sweep' "$obj" >>"$OUT/hpcg-resources.txt" 2>&1
fi

fail=0
say "== GPU test"
"$build/tests/test_gpu_hpcg" 2>&1 | tee -a "$log" | grep -E "^#|OK|FAIL|PASSED|SKIPPED|differ" >&2 || true
[ "${PIPESTATUS[0]}" = 0 ] || { say "== GPU test FAILED"; fail=1; }

cd "$OUT" || exit 2
say "== quick check: 32^3, --rt 0"
"$bin" hpcg --engine cuda --nx 32 --ny 32 --nz 32 --rt 0 >>"$log" 2>&1 || fail=1
tail -4 "$log" >&2
say "== benchmark: ${N}^3, --rt $RT"
"$bin" hpcg --engine cuda --nx "$N" --ny "$N" --nz "$N" --rt "$RT" \
  --json "$OUT/hpcg-$N.json" >>"$log" 2>&1 || fail=1
grep -vE "^hpcg [0-9]+ CG sets" "$log" | tail -22 >&2
say "== done (fail=$fail)"
exit $fail
