#!/usr/bin/env bash
# run.sh: the benchmark set of this machine: `tessera info --bench`, GEMM engines side by side,
# Linpack, burn. Writes one results-schema JSON per step into OUTDIR. Used by `make bench` and
# bench/device.sh. TESSERA_BENCH_STEPS=a,b,... runs only those steps (default: all that apply);
# TESSERA_BENCH_QUICK=1 runs the small CPU set (CPU-only machines, smoke runs).
set -uo pipefail
tessera=${1:?usage: bench/run.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/run.sh path/to/tessera OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
status=0
steps=${TESSERA_BENCH_STEPS:-all}
want() { [ "$steps" = all ] || [[ ",$steps," == *",$1,"* ]]; }
step() { # step NAME command...: runs a benchmark if selected, keeps going on failure, remembers it
  local name=$1; shift
  want "$name" || return 0
  echo "== $name: $*" >&2
  local t0=$SECONDS
  if ! "$@"; then echo "== $name FAILED (exit $?)" >&2; status=1; fi
  echo "== $name: $((SECONDS - t0)) s" >&2
}

gpu=0
if "$tessera" info 2>/dev/null | grep -q '^devices: .*(cuda)'; then gpu=1; fi

step info "$tessera" info --bench --json "$out/info.json"
if [ "$gpu" = 1 ] && [ "${TESSERA_BENCH_QUICK:-0}" != 1 ]; then
  engines=${TESSERA_BENCH_ENGINES:-cublas,tessera}
  step square "$tessera" gemm 2048 4096 8192 16384 --ops NN,NT,TN,TT --engine "$engines" \
       --reps 10 --json "$out/gemm-square.json"
  step rankk "$tessera" gemm 16384x16384x256 16384x16384x384 16384x16384x512 16384x16384x1024 \
       --engine "$engines" --reps 10 --json "$out/gemm-rankk.json"
  # Own FP32 SGEMM (TESSERA_SGEMM_TILE=large|small forces a variant)
  # and ZGEMM by 4M on the own DGEMM, each against cuBLAS in the same run.
  step sgemm "$tessera" gemm 8192 --prec s --ops NN,NT,TN,TT --engine "$engines" --reps 10 \
       --json "$out/gemm-sgemm.json"
  step zgemm "$tessera" gemm 8192 --prec z --engine "$engines" --reps 5 --json "$out/gemm-zgemm.json"
  # The own DGEMM's bars (issue: own GEMM kernels) with its default variants, side by side with
  # cuBLAS: squares in all four ops, and HPL's rank-k update.
  # The engines take turns rep by rep (--interleave): at the H200's power cap the clock drifts over
  # a group, and back-to-back runs gave whichever engine ran first the cooler GPU.
  step bars "$tessera" gemm 4096 8192 16384 --ops NN,NT,TN,TT --engine "$engines" --reps 7 --interleave \
       --json "$out/bars-square.json"
  step bars "$tessera" gemm 16384x16384x256 16384x16384x512 16384x16384x1024 --engine "$engines" --reps 7 \
       --interleave --json "$out/bars-rankk.json"
  # Own DGEMM variants against cuBLAS (bench/tc_variants.sh writes tc-<variant>.json).
  step tc "$here/tc_variants.sh" "$tessera" "$out"
  # Host-resident GEMM: tile runtime against cuBLASXt at two block sizes (cuBLASXt allocates its own
  # device memory, so the arena leaves half of it free).
  step host env TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm 16384 32768 --where host --engine tiles,cublasxt \
       --xt-block 4096,8192 --reps 3 --json "$out/gemm-host.json"
  # The other Level-3 routines, host-resident, tile runtime against cuBLASXt, each also against the
  # tile runtime's own DGEMM at the same n (--gemm-ref: vs_gemm). About 2.5e14 flops per engine and
  # run at 32768; 3 runs (checked + 2 timed) of 3 engines: about 2-3 minutes on an H200.
  step blas3 env TESSERA_ARENA_FRACTION=0.5 "$tessera" blas3 --routine all 16384 32768 --engine tiles,cublasxt \
       --xt-block ${TESSERA_BENCH_XT_BLOCKS:-4096,8192} --gemm-ref --reps 2 --json "$out/blas3.json" \
       --trace "$out/blas3-trace"
  # The tile runtime's level-3 knobs, one at a time against the defaults of the blas3 step (tiles only,
  # each with its own GEMM reference): 2 C tiles in flight (the GEMM's) instead of 4, no chain forwarding
  # (TRMM/TRSM), whole-tile GEMMs on the diagonal tiles of SYRK/SYR2K, GEMMs on the zero-filled diagonal
  # blocks of TRMM, and no saved copies of C tiles (TRSM/TRMM send outputs and saves over D2H: what the
  # saves cost them; bench/NOTES.md).
  for v in ${TESSERA_BENCH_BLAS3_VARS:-TESSERA_TILES_DEPTH=2 TESSERA_TILES_FORWARD=0 TESSERA_TILES_DIAG_RANK=0 TESSERA_TILES_DIAG_TRMM=0 TESSERA_TILES_SAVE_C=0}; do
    step blas3-var env TESSERA_ARENA_FRACTION=0.5 $v "$tessera" blas3 --routine all 16384 32768 --engine tiles \
         --gemm-ref --reps 2 --json "$out/blas3-$(echo "${v#TESSERA_TILES_}" | tr 'A-Z=_' 'a-z--').json"
  done
  # The same without the saved copies of C tiles (the fault re-run's insurance): what they cost.
  step host-nosave env TESSERA_ARENA_FRACTION=0.5 TESSERA_TILES_SAVE_C=0 "$tessera" gemm 16384 32768 --where host \
       --engine tiles --reps 3 --json "$out/gemm-host-nosave.json"
  step hpl timeout ${TESSERA_BENCH_HPL_TIMEOUT:-300} "$tessera" hpl --json "$out/hpl.json" --plot "$out/hpl.svg" ${TESSERA_BENCH_HPL_ARGS:-}
  # LU at N = 32768 against cuSOLVER dgetrf on the same matrix, in the same run.
  step hpl-lu timeout 200 "$tessera" hpl -N 32768 -NB 512 --baseline cusolver --json "$out/hpl-32768.json"
  # The same two Linpacks with U formed by DTRSM instead of the GEMM with inv(L11) (the default).
  step hpl-trsm env TESSERA_HPL_TRSM=trsm timeout 200 "$tessera" hpl -N 32768 -NB 512 --baseline cusolver \
       --json "$out/hpl-32768-trsm.json"
  step hpl-trsm env TESSERA_HPL_TRSM=trsm timeout ${TESSERA_BENCH_HPL_TIMEOUT:-300} "$tessera" hpl \
       --json "$out/hpl-trsm.json" ${TESSERA_BENCH_HPL_ARGS:-}
  # The same two Linpacks with one process row's row swaps split (pack, then two unpacks) instead of
  # one pass (the default).
  step hpl-swap env TESSERA_HPL_SWAP=split timeout 200 "$tessera" hpl -N 32768 -NB 512 --baseline cusolver \
       --json "$out/hpl-32768-split.json"
  step hpl-swap env TESSERA_HPL_SWAP=split timeout ${TESSERA_BENCH_HPL_TIMEOUT:-300} "$tessera" hpl \
       --json "$out/hpl-split.json" ${TESSERA_BENCH_HPL_ARGS:-}
  # HPL's trailing update alone at N = 32768's second iteration (m = 32256, n = 31232, k = NB = 512,
  # A and C with HPL's padded leading dimension), cuBLAS and the own DGEMM: the rate the LU's update
  # could reach without the panel beside it.
  step hpl-update "$tessera" gemm 32256x31232x512 --lda 32776 --ldc 32776 --engine "$engines" --reps 10 \
       --json "$out/gemm-hpl-update.json"
  # Out-of-core Linpack (matrix in host memory, the update GEMMs through the tile runtime) and the
  # device-resident run at the same N, side by side (TESSERA_BENCH_OOC_N, TESSERA_BENCH_OOC_NB: NB = 2048
  # halves the link traffic per flop of the update).
  ooc_n=${TESSERA_BENCH_OOC_N:-65536}
  step hpl-ooc timeout ${TESSERA_BENCH_OOC_TIMEOUT:-600} "$tessera" hpl -N "$ooc_n" -NB "${TESSERA_BENCH_OOC_NB:-1024}" --exec ooc --json "$out/hpl-ooc.json" \
       --plot "$out/hpl-ooc.svg"
  # The out-of-core update alone: the tile runtime on HPL's update shape at the first iteration
  # (C 65536 x 65536 in host memory, k = NB = 1024), with the timeline of the last run: do the copies
  # in and out overlap, and at what rate (out-of-core HPL's update ran at 25-27 GB/s each way)?
  step ooc-update env TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm "${ooc_n}x${ooc_n}x1024" --where host --engine tiles \
       --reps 3 --trace "$out/ooc-update-trace.json" --json "$out/gemm-ooc-update.json"
  step hpl-ooc-dev timeout 300 "$tessera" hpl -N "$ooc_n" -NB "${TESSERA_BENCH_OOC_NB:-1024}" --exec device --json "$out/hpl-ooc-dev.json"
  # HPL-MxP (FP16 GEMMs, FP64 refinement) at TESSERA_BENCH_MXP_N (default: sized to the device's memory,
  # N ~ 170000 on an H200), NB TESSERA_BENCH_MXP_NB (2048); TESSERA_BENCH_MXP_ARGS adds flags
  # (--prec bf16); the report gives the LU-only rate beside the credited one.
  step hpl-mxp timeout ${TESSERA_BENCH_MXP_TIMEOUT:-600} "$tessera" hpl-mxp ${TESSERA_BENCH_MXP_N:+-N $TESSERA_BENCH_MXP_N} \
       -NB ${TESSERA_BENCH_MXP_NB:-2048} --json "$out/hpl-mxp.json" ${TESSERA_BENCH_MXP_ARGS:-}
  # cuBLAS DGEMM held for about 10 s on HPL's update shape (k = 1024): the rate a long Linpack can
  # sustain once the card sits at its power cap, next to the short bursts of the square step.
  step sustained "$tessera" gemm 49152x49152x1024 --engine cublas --reps 100 --json "$out/gemm-sustained.json"
  # HPCG at 256^3 on the GPU (the report file lands in OUTDIR); official runs need --rt 1800.
  step hpcg bash -c 'cd "$1" && shift && exec "$@"' _ "$out" "$tessera" hpcg --engine cuda --nx 256 --ny 256 --nz 256 \
       --rt "${TESSERA_BENCH_HPCG_RT:-60}" --json "$out/hpcg.json" -q
  # The same beside NVIDIA's open HPCG on this GPU, one JSON with both results (bench/peer_hpcg.py);
  # the source travels in .peers/ (bench/nvidia_hpcg.sh).
  step hpcg-nvidia env MULTI_STEPS=hpcg-nvidia-1 MULTI_HPCG_RT="${TESSERA_BENCH_HPCG_RT:-60}" \
       "$here/multi.sh" "$tessera" "$out"
  step burn "$tessera" burn --time ${TESSERA_BENCH_BURN_TIME:-2m} --json "$out/burn.json" --plot "$out/burn.svg"
else
  step gemm-cpu "$tessera" gemm 1024 2048 --engine cpu --json "$out/gemm-cpu.json"
  step hpl "$tessera" hpl -N 4000 -NB 192 --json "$out/hpl.json"
  step hpl-mxp "$tessera" hpl-mxp -N 4000 -NB 256 --json "$out/hpl-mxp.json"
fi
exit $status
