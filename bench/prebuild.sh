#!/usr/bin/env bash
# prebuild.sh: builds the benchmark binaries of HEAD here (nvcc for Hopper, as on the GPU machine) into
# build-prebuilt/, a small tree the device tool can carry (carry ["build-prebuilt"], ~15 MB), so that a
# benchmark-only call skips its ~50-80 s build: bench/device.sh with TESSERA_DEVICE_PREBUILT=build-prebuilt
# runs these binaries when every library they need is found there (ldd), and builds as usual otherwise.
# Usage: bench/prebuild.sh [TARGETS] (default "tessera hpcg_orders"; "tessera_blas blas_crossover" adds the
# drop-in library in build-prebuilt/lib and the crossover tool). A clean clone of HEAD is built,
# so uncommitted changes are not in it; build-prebuilt/COMMIT names the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${1:-tessera hpcg_orders}
commit=$(git rev-parse --short=7 HEAD)
src=$(mktemp -d /tmp/tessera-prebuild.XXXXXX)
trap 'rm -rf "$src"' EXIT
git clone -q . "$src/tree"
cmake -S "$src/tree" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON >/dev/null
# shellcheck disable=SC2086
TESSERA_COMMIT=$commit cmake --build "$src/build" -j "$(nproc)" --target $targets >/dev/null
rm -rf build-prebuilt
mkdir -p build-prebuilt/bin build-prebuilt/bench
cp "$src/build/bin/tessera" build-prebuilt/bin/
[ -x "$src/build/bench/hpcg_orders" ] && cp "$src/build/bench/hpcg_orders" build-prebuilt/bench/
[ -x "$src/build/bench/blas_crossover" ] && cp "$src/build/bench/blas_crossover" build-prebuilt/bench/
if ls "$src/build/lib/"libtessera_blas.so* >/dev/null 2>&1; then # the drop-in library (bench/blas_crossover)
  mkdir -p build-prebuilt/lib && cp -P "$src/build/lib/"libtessera_blas.so* build-prebuilt/lib/
fi
echo "$commit" >build-prebuilt/COMMIT
du -sh build-prebuilt
echo "prebuild.sh: build-prebuilt/ holds $commit; device call: carry [\"build-prebuilt\"], TESSERA_COMMIT=$commit TESSERA_DEVICE_PREBUILT=build-prebuilt"
