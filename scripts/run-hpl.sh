#!/usr/bin/env bash
# run-hpl.sh: `make run`: a Linpack sized for this machine: one MPI rank per GPU when GPUs are
# present, else one rank on the CPU with the CPU BLAS using every core. Extra args go to tessera hpl.
set -euo pipefail
tessera=${1:?usage: run-hpl.sh path/to/tessera [tessera hpl options]}
shift
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  IFS=, read -ra vis <<<"$CUDA_VISIBLE_DEVICES"; gpus=${#vis[@]}
fi
if [ "$gpus" -gt 1 ] && command -v mpiexec >/dev/null 2>&1; then
  echo "tessera: $gpus GPUs: running one MPI rank per GPU" >&2
  exec mpiexec --allow-run-as-root --bind-to none -n "$gpus" "$tessera" hpl "$@"
fi
if [ "$gpus" -eq 0 ]; then
  export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$(nproc)}
  echo "tessera: no GPU found: Linpack on the CPU ($OPENBLAS_NUM_THREADS threads)" >&2
fi
exec "$tessera" hpl "$@"
