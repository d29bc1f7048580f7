#!/usr/bin/env bash
# tiles4.sh: the tile runtime against cuBLASXt on 1, 2 and G GPUs of one node, cheaply: one process per
# command, the host operands generated (in parallel) and pinned once and reused by every engine and
# device count (`--devices`). Host DGEMM at TILES4_N (default 49152) with tiles and cuBLASXt (block
# 8192) on 1, 2, G GPUs, beta 0 (each row's last timed run is the one checked, by Freivalds); then the
# five double level-3 routines at TILES4_BLAS3_N (default 49152) on G GPUs with the tile runtime's own
# DGEMM at that n (--gemm-ref) and cuBLASXt's routines. Prints the ratios of issue #29's bars.
# Usage: bench/tiles4.sh path/to/tessera OUTDIR. Estimate on 4 H100/H200 (512 GiB host): ~1.5 min
# the GEMM step (pinning 2 x 19 GB, 6 rows of 3 runs: ~60 s of GEMMs, 2-4 s of checks per row),
# ~1.5-2 min the level-3 step (4 x 19 GB pinned, 11 rows of 3 runs); ~3-4 min in all.
# TILES4_COUNTS overrides the GEMM's device counts (default 1,2,G); TILES4_STEPS=gemm,blas3 selects;
# TILES4_TRACE=1 writes the tile runtime's timeline of each count's last GEMM (OUTDIR/trace-gemm-Ndev.json)
# and of each level-3 routine's last run (OUTDIR/trace-blas3-ROUTINE-d-NxN.json;
# the stamps are stream callbacks: not for the rates of record).
set -uo pipefail
tessera=${1:?usage: bench/tiles4.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/tiles4.sh path/to/tessera OUTDIR}
mkdir -p "$out"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$ngpu" -ge 1 ] || { echo "tiles4.sh: no GPU" >&2; exit 2; }
G=$ngpu; [ "$G" -gt 4 ] && G=4
counts=${TILES4_COUNTS:-$( { echo 1; [ "$G" -ge 2 ] && echo 2; [ "$G" -gt 2 ] && echo "$G"; } | paste -sd, )}
steps=${TILES4_STEPS:-gemm,blas3}
n=${TILES4_N:-49152} nb=${TILES4_BLAS3_N:-49152}
export TESSERA_ARENA_FRACTION=${TESSERA_ARENA_FRACTION:-0.5} # cuBLASXt allocates beside the arena
status=0
step() { # step NAME command...
  local name=$1; shift
  echo "== $name: $*" >&2
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1 || { echo "== $name FAILED (exit $?)" >&2; status=1; }
  grep -E "^(tiles|cublasxt|symm|syrk|syr2k|trmm|trsm|gemm) " "$out/$name.log" >&2
  echo "== $name: $((SECONDS - t0)) s" >&2
}
if [[ ",$steps," == *",gemm,"* ]]; then
  step "gemm-tiles4" "$tessera" gemm "$n" --where host --engine tiles,cublasxt --xt-block 8192 \
      --devices "$counts" --beta 0 --warmup 1 --reps 2 --json "$out/gemm-tiles4.json" \
      ${TILES4_TRACE:+--trace "$out/trace-gemm.json"}
fi
if [[ ",$steps," == *",blas3,"* ]]; then
  step "blas3-tiles4" "$tessera" blas3 --routine all "$nb" --engine tiles,cublasxt --xt-block 8192 \
      --devices "$G" --gemm-ref --reps 2 --json "$out/blas3-tiles4.json" \
      ${TILES4_TRACE:+--trace "$out/trace-blas3"}
fi
python3 "$(dirname "$0")/tiles4_table.py" "$out" >&2 || status=1
exit $status
