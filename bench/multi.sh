#!/usr/bin/env bash
# multi.sh: scaling runs on the GPUs of one node: Linpack on 1 x 1 and 1 x G (each rank one GPU,
# N from the same memory fraction), with the device-to-device panel broadcast and without it (the
# host path), a smaller 2 x G/2 run; host-resident DGEMM on 1, 2, ... G GPUs with the tile runtime
# and cuBLASXt side by side; HPCG on 1 and G ranks when the build has its GPU path. One JSON per run
# in OUTDIR, a table at the end. Usage: bench/multi.sh path/to/tessera OUTDIR
# MULTI_STEPS=hpl,gemm,blas3,hpcg selects parts (default all but hpl-host); hpl-host adds the 1 x G
# run with the panel broadcast through host memory. MULTI_HPL_N sets N for the 2 x G/2 run (default:
# sized like the others, the same memory fraction); MULTI_GEMM_N the host GEMM sizes (32768 49152).
# NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 unless the caller sets it.
set -uo pipefail
tessera=${1:?usage: bench/multi.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/multi.sh path/to/tessera OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
steps=${MULTI_STEPS:-hpl,gemm,blas3,hpcg}
want() { [[ ",$steps," == *",$1,"* ]]; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$ngpu" -ge 1 ] || { echo "multi.sh: no GPU" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
# one share of the cores per rank for the host BLAS (host panels of P > 1 grids)
cores=$(nproc)
mpi=(mpiexec --allow-run-as-root --oversubscribe --bind-to none -n)
status=0
run() { # run NAME SECONDS command...
  local name=$1 tmo=$2; shift 2
  echo "== $name: $*" >&2
  local t0=$SECONDS
  if ! timeout "$tmo" "$@" >"$out/$name.log" 2>&1; then echo "== $name FAILED (exit $?)" >&2; status=1; fi
  grep -E "^W[RC]|PASSED|FAILED|TFLOP|GFLOP/s rating|VALID" "$out/$name.log" | tail -6 >&2
  echo "== $name: $((SECONDS - t0)) s" >&2
}
counts="1"
for g in 2 4 8; do [ "$g" -le "$ngpu" ] && counts="$counts $g"; done
echo "== $ngpu GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); counts: $counts" >&2

if want hpl; then
  run hpl-1x1 300 env CUDA_VISIBLE_DEVICES=0 "$tessera" hpl -P 1 -Q 1 --json "$out/hpl-1x1.json"
  for g in $counts; do
    [ "$g" = 1 ] && continue
    run "hpl-1x$g" 400 "${mpi[@]}" "$g" env OPENBLAS_NUM_THREADS=$((cores / g)) "$tessera" hpl -P 1 -Q "$g" \
        --json "$out/hpl-1x$g.json"
  done
  g=${counts##* }
  if [ "$g" != 1 ]; then
    # two process rows: panels factored across ranks (pivot search over MPI)
    run "hpl-2x$((g / 2))" 400 "${mpi[@]}" "$g" env OPENBLAS_NUM_THREADS=$((cores / g)) "$tessera" hpl \
        ${MULTI_HPL_N:+-N $MULTI_HPL_N} -P 2 -Q $((g / 2)) --json "$out/hpl-2x$((g / 2)).json"
  fi
fi
# the host path of the panel broadcast and of the row swaps (MPI through host memory), at the largest count
if want hpl-host && [ "${counts##* }" != 1 ]; then
  g=${counts##* }
  run "hpl-1x$g-host" 400 "${mpi[@]}" "$g" env TESSERA_HPL_NCCL=0 OPENBLAS_NUM_THREADS=$((cores / g)) \
      "$tessera" hpl -P 1 -Q "$g" --json "$out/hpl-1x$g-host.json"
  run "hpl-2x$((g / 2))-host" 400 "${mpi[@]}" "$g" env TESSERA_HPL_NCCL=0 OPENBLAS_NUM_THREADS=$((cores / g)) \
      "$tessera" hpl ${MULTI_HPL_N:+-N $MULTI_HPL_N} -P 2 -Q $((g / 2)) --json "$out/hpl-2x$((g / 2))-host.json"
fi

if want gemm; then
  # the tile runtime on 1..G GPUs; cuBLASXt on the most GPUs, where its bar is (block 8192: 4096
  # measured 0.48x of it on two H200s; MULTI_XT_BLOCKS=4096,8192 for both)
  for g in $counts; do
    vis=$(seq -s, 0 $((g - 1)))
    eng=tiles; [ "$g" = "${counts##* }" ] && eng=tiles,cublasxt
    run "gemm-host-${g}gpu" 500 env CUDA_VISIBLE_DEVICES="$vis" TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm \
        ${MULTI_GEMM_N:-32768 49152} --where host --engine $eng --xt-block ${MULTI_XT_BLOCKS:-8192} --warmup 1 --reps 3 \
        --json "$out/gemm-host-${g}gpu.json"
  done
fi

if want blas3; then
  # the level-3 routines at n = 32768 on 1..G GPUs (tile runtime, its own GEMM as reference), and
  # cuBLASXt's routines on the most GPUs
  for g in $counts; do
    vis=$(seq -s, 0 $((g - 1)))
    eng=tiles; [ "$g" = "${counts##* }" ] && eng=tiles,cublasxt
    run "blas3-${g}gpu" 500 env CUDA_VISIBLE_DEVICES="$vis" TESSERA_ARENA_FRACTION=0.5 "$tessera" blas3 --routine all \
        ${MULTI_BLAS3_N:-32768} --engine $eng --xt-block 8192 --gemm-ref --reps 2 --json "$out/blas3-${g}gpu.json"
  done
fi

if want hpcg && "$tessera" hpcg --help 2>&1 | grep -q -- "--engine"; then
  for g in $counts; do
    [ "$g" = 1 ] && { run hpcg-1 300 env CUDA_VISIBLE_DEVICES=0 "$tessera" hpcg --engine cuda --nx 256 --ny 256 --nz 256 \
                        --rt 30 --json "$out/hpcg-1.json"; continue; }
    run "hpcg-$g" 300 "${mpi[@]}" "$g" "$tessera" hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt 30 --json "$out/hpcg-$g.json"
    # the halo device to device by NCCL instead of through host staging
    run "hpcg-$g-nccl" 300 "${mpi[@]}" "$g" env TESSERA_HPCG_NCCL=1 "$tessera" hpcg --engine cuda --nx 256 --ny 256 \
        --nz 256 --rt 30 --json "$out/hpcg-$g-nccl.json"
  done
fi

python3 "$here/summarize.py" "$out"/*.json 2>/dev/null || true
exit $status
