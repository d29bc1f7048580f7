#!/usr/bin/env bash
# run.sh: the benchmark set of this machine: `tessera info --bench`, GEMM engines side by side,
# and Linpack. Writes one results-schema JSON per tool into OUTDIR. Used by `make bench` and
# bench/device.sh. TESSERA_BENCH_QUICK=1 runs small sizes (CPU-only machines, smoke runs).
set -uo pipefail
tessera=${1:?usage: bench/run.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/run.sh path/to/tessera OUTDIR}
mkdir -p "$out"
status=0
step() { # step NAME command...: runs a benchmark, keeps going on failure, remembers it
  local name=$1; shift
  echo "== $name: $*" >&2
  if ! "$@"; then echo "== $name FAILED (exit $?)" >&2; status=1; fi
}

gpu=0
if "$tessera" info 2>/dev/null | grep -q '^devices: .*(cuda)'; then gpu=1; fi

step info "$tessera" info --bench --json "$out/info.json"
if [ "$gpu" = 1 ] && [ "${TESSERA_BENCH_QUICK:-0}" != 1 ]; then
  engines=${TESSERA_BENCH_ENGINES:-cublas,tessera}
  step gemm-square "$tessera" gemm 2048 4096 8192 16384 --ops NN,NT,TN,TT --engine "$engines" \
       --reps 10 --json "$out/gemm-square.json"
  step gemm-rankk "$tessera" gemm 16384x16384x256 16384x16384x384 16384x16384x512 16384x16384x1024 \
       --engine "$engines" --reps 10 --json "$out/gemm-rankk.json"
  step gemm-sgemm "$tessera" gemm 8192 --prec s --engine cublas --reps 10 --json "$out/gemm-sgemm.json"
  # Host-resident GEMM: tile runtime against cuBLASXt at two block sizes (cuBLASXt allocates its own
  # device memory, so the arena leaves half of it free).
  step gemm-host env TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm 16384 32768 --where host --engine tiles,cublasxt \
       --xt-block 4096,8192 --reps 3 --json "$out/gemm-host.json"
  step hpl timeout ${TESSERA_BENCH_HPL_TIMEOUT:-300} "$tessera" hpl --json "$out/hpl.json" ${TESSERA_BENCH_HPL_ARGS:-}
else
  step gemm-cpu "$tessera" gemm 1024 2048 --engine cpu --json "$out/gemm-cpu.json"
  step hpl "$tessera" hpl -N 4000 -NB 192 --json "$out/hpl.json"
fi
exit $status
