#!/usr/bin/env bash
# multi.sh: scaling runs on the GPUs of one node: Linpack on 1 x 1 and 1 x G (each rank one GPU,
# N from the same memory fraction), with the device-to-device panel broadcast and without it (the
# host path), a smaller 2 x G/2 run; host-resident DGEMM on 1, 2, ... G GPUs with the tile runtime
# and cuBLASXt side by side; HPCG on 1 and G ranks when the build has its GPU path. One JSON per run
# in OUTDIR, a table at the end. Usage: bench/multi.sh path/to/tessera OUTDIR
# MULTI_STEPS=hpl,gemm,hpcg selects parts; MULTI_HPL_N sets N for the 2 x G/2 run (default 65536).
set -uo pipefail
tessera=${1:?usage: bench/multi.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/multi.sh path/to/tessera OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
steps=${MULTI_STEPS:-hpl,gemm,hpcg}
want() { [[ ",$steps," == *",$1,"* ]]; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$ngpu" -ge 1 ] || { echo "multi.sh: no GPU" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
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
    run "hpl-1x$g" 400 "${mpi[@]}" "$g" "$tessera" hpl -P 1 -Q "$g" --json "$out/hpl-1x$g.json"
  done
  # the host path of the panel broadcast (MPI through host memory), at the largest count
  g=${counts##* }
  if [ "$g" != 1 ]; then
    run "hpl-1x$g-host" 400 "${mpi[@]}" "$g" env TESSERA_HPL_NCCL=0 "$tessera" hpl -P 1 -Q "$g" \
        --json "$out/hpl-1x$g-host.json"
    run "hpl-2x$((g / 2))" 300 "${mpi[@]}" "$g" "$tessera" hpl -N "${MULTI_HPL_N:-65536}" -P 2 -Q $((g / 2)) \
        --json "$out/hpl-2x$((g / 2)).json"
  fi
fi

if want gemm; then
  n=${MULTI_GEMM_N:-49152}
  for g in $counts; do
    vis=$(seq -s, 0 $((g - 1)))
    run "gemm-host-${g}gpu" 400 env CUDA_VISIBLE_DEVICES="$vis" TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm "$n" \
        --where host --engine tiles,cublasxt --xt-block 8192 --warmup 1 --reps 2 --json "$out/gemm-host-${g}gpu.json"
  done
fi

if want hpcg && "$tessera" hpcg --help 2>&1 | grep -q -- "--engine"; then
  for g in $counts; do
    [ "$g" = 1 ] && { run hpcg-1 300 env CUDA_VISIBLE_DEVICES=0 "$tessera" hpcg --engine cuda --nx 256 --ny 256 --nz 256 \
                        --rt 30 --json "$out/hpcg-1.json"; continue; }
    run "hpcg-$g" 300 "${mpi[@]}" "$g" "$tessera" hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt 30 --json "$out/hpcg-$g.json"
  done
fi

python3 "$here/summarize.py" "$out"/*.json 2>/dev/null || true
exit $status
