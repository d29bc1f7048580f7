#!/usr/bin/env bash
# nvidia_hpcg.sh: NVIDIA's open HPCG (the peer Tessera's HPCG is measured against) on RANKS GPUs of
# this machine, one rank per GPU, at NX^3 per rank (256) for RT seconds, in benchmark mode (--b=1);
# its report HPCG-Benchmark_3.1_*.txt and log land in OUTDIR, the report's path is printed last.
#   bench/nvidia_hpcg.sh prebuild        (here) builds xhpcg into .peers/prebuilt/ (no GPU needed)
#   bench/nvidia_hpcg.sh OUTDIR RANKS RT [NX]
# The source travels in .peers/, a copy of ../shared/peers (Apache-2.0, unmodified) in an ignored
# folder that the device call carries: mkdir -p .peers && cp -r ../shared/peers/. .peers/ (listed in
# .git/info/exclude). A prebuilt binary runs when the loader finds its libraries; else it is built
# there (~70 s on 16 cores).
set -uo pipefail
cd "$(dirname "$0")/.."
peers=.peers
build() { # build DEST_DIR [extra make args]: NVIDIA's own build, as ../shared/peers/nvidia-hpcg.sh does it
  local dest=$1; shift
  local work; work=$(mktemp -d /tmp/nvidia-hpcg.XXXXXX)
  cp -r "$peers/nvidia-hpcg" "$work/" && chmod -R u+w "$work" && mkdir -p "$work/nvidia-hpcg/build" || return 2
  local mpi=/usr/lib/x86_64-linux-gnu/openmpi stubs=
  [ -d /usr/local/cuda/lib64/stubs ] && stubs=-L/usr/local/cuda/lib64/stubs
  (cd "$work/nvidia-hpcg/build" && ../configure CUDA_X86 >/dev/null &&
   make -j"$(nproc)" HPCG_LIBS="-L$mpi/lib -lmpi -lmpi_cxx -L/usr/local/cuda/lib64 $stubs -lcuda -lcusparse -lcublas -lcublasLt -lnccl" \
     USE_CUDA=1 USE_GRACE=0 USE_NCCL=1 NCCLdir=/usr MPdir=$mpi MPlib=$mpi/lib Mathdir=/usr/local/cuda \
     CUDA_HOME=/usr/local/cuda "$@") >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; return 2; }
  mkdir -p "$dest" && cp "$work/nvidia-hpcg/build/bin/xhpcg" "$dest/" && rm -rf "$work"
}
[ -d "$peers/nvidia-hpcg" ] || { echo "nvidia_hpcg.sh: no $peers/nvidia-hpcg (copy ../shared/peers into $peers/ and carry it)" >&2; exit 2; }
if [ "${1:-}" = prebuild ]; then
  # -mtune only (the make file's CPU_ARCH): the machine code stays baseline x86-64 for the GPU machine
  build "$peers/prebuilt" CPU_ARCH=generic || exit 2
  echo "nvidia_hpcg.sh: $peers/prebuilt/xhpcg built"; exit 0
fi
out=${1:?usage: bench/nvidia_hpcg.sh OUTDIR RANKS RT [NX]}; ranks=${2:-1}; rt=${3:-30}; nx=${4:-256}
mkdir -p "$out"; out=$(cd "$out" && pwd)
bin=$peers/prebuilt/xhpcg
if [ ! -x "$bin" ] || ldd "$bin" 2>&1 | grep -q "not found"; then
  echo "nvidia_hpcg.sh: building xhpcg here" >&2
  build /tmp/nvidia-hpcg-bin CPU_ARCH=native || exit 2
  bin=/tmp/nvidia-hpcg-bin/xhpcg
fi
bin=$(cd "$(dirname "$bin")" && pwd)/xhpcg
run=$(mktemp -d /tmp/nvidia-hpcg-run.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
(cd "$run" && mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" "$bin" --nx="$nx" --ny="$nx" \
   --nz="$nx" --rt="$rt" --b=1) >"$out/nvidia-hpcg-$ranks.log" 2>&1
rc=$?
# The report file, or (benchmark mode writes none) the same key=value lines from its output
rep=$(ls -t "$run"/HPCG-Benchmark_3.1_*.txt 2>/dev/null | head -1)
if [ -n "$rep" ]; then
  cp "$rep" "$out/nvidia-hpcg-$ranks-report.txt"
elif grep -q "^Final Summary::" "$out/nvidia-hpcg-$ranks.log"; then
  grep -E "^[A-Za-z#].*=" "$out/nvidia-hpcg-$ranks.log" >"$out/nvidia-hpcg-$ranks-report.txt"
else
  echo "nvidia_hpcg.sh: no report (exit $rc); log $out/nvidia-hpcg-$ranks.log" >&2; tail -20 "$out/nvidia-hpcg-$ranks.log" >&2; exit 3
fi
grep -h "GFLOP/s rating" "$out/nvidia-hpcg-$ranks-report.txt" >&2
echo "$out/nvidia-hpcg-$ranks-report.txt"
