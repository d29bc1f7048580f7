#!/usr/bin/env bash
# tc_variants.sh: the own DGEMM's tile variants (TESSERA_TC_TILE) side by side with cuBLAS in one run; one line per variant and shape.
# Usage: bench/tc_variants.sh path/to/tessera OUTDIR
#   writes OUTDIR/tc-<variant>.json (results schema, all shapes of the variant in one file).
#   TC_VARIANTS="large large32 ..." picks variants; TC_ALL_SHAPES=1 runs every shape for every variant.
# Shapes (alpha = beta = 1, HPL's update; every run verified by Freivalds):
#   default (TESSERA_TC_TILE unset: the automatic choice per shape) and dmma16 (mma.m16n8k16):
#   8192 and 16384 in NN, NT, TN, TT and the rank-k shapes in NN and NT; rankkldb (two fragment
#   sets, full tiles): 8192 in the four ops and the rank-k shapes; smalldb (64 x 64 on rankkldb's
#   kernel), rankkldbe (rankkldb with C bulk-copied into the stages after the main loop, the choice
#   from k = 256 (NN from 288) and for NN at k >= 1024, NT and TN up to 2048) and smalldbc (smalldb,
#   three blocks per SM, with C copied into the freed stages, the choice below): the rank-k shapes in
#   NN, NT and TN; small, rankklpf (the bounded kernel's shapes, taken for partial
#   tiles): 8192 NN, NT and the rank-k shapes; large32, large32pf, rankk: the rank-k shapes
#   (TC_ALL_SHAPES=1 for the rest). (The variants that lost, large, largepf, rankkc, large32c,
#   rankkl, dmma16h, dmma16p, widedb, widec, smallc, rankkldbl, rankkldbc and smalldbe, were removed;
#   git has them.)
# The dmma16 comparison (each line against cuBLAS in the same process, ~80 s on an H200):
#   TC_VARIANTS="default dmma16" bench/tc_variants.sh build-device/bin/tessera "$OUT"
# Each call runs the engines interleaved (--interleave), so every ratio is to cuBLAS in the same process.
# Estimated time on an H200 (host data generation and verification dominate): 8192 in four ops
# ~6 s, 16384^3 in four ops ~20 s, the three rank-k shapes in two ops ~20 s, ~1 s start per call:
# default 46 + rankkldb 26 + rankkldbe 25 + smalldbc 25 + smalldb 20 + dmma16 46 + small 24 +
# rankklpf 24 ~ 240 s.
# TC_ALL_SHAPES=1 runs every shape for every variant.
set -uo pipefail
tessera=${1:?usage: bench/tc_variants.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/tc_variants.sh path/to/tessera OUTDIR}
mkdir -p "$out"
variants=${TC_VARIANTS:-default rankkldb rankkldbe smalldbc smalldb dmma16 small rankklpf}
rankk_shapes="16384x16384x256 16384x16384x512 16384x16384x1024"
status=0
t0=$(date +%s)

for v in $variants; do
  parts=()
  # gemm NAME SIZES... --ops OPS: one tessera gemm call with the variant forced
  gemm() {
    local part=$out/.tc-$v-$1.json; shift
    echo "== tc $v: tessera gemm $* --engine cublas,tessera --interleave --reps 5" >&2
    local tile=$v; [ "$v" = default ] && tile= # empty: the automatic choice
    if ! TESSERA_TC_TILE=$tile "$tessera" gemm "$@" --engine cublas,tessera --interleave --reps 5 --json "$part" -q >&2; then
      echo "== tc $v FAILED: $*" >&2; status=1
    fi
    [ -s "$part" ] && parts+=("$part")
  }
  sq8192=0 sq16384=0 rk=0
  case $v in
    default|dmma16) sq8192=1 sq16384=1 rk=1 ;;
    rankkldb|small|rankklpf) sq8192=1 rk=1 ;;
    *) rk=1 ;;
  esac
  [ "${TC_ALL_SHAPES:-0}" = 1 ] && sq8192=1 sq16384=1 rk=1
  sqops=NN,NT sq16ops=NN,NT rkops=NN
  case $v in default|dmma16|rankkldb) sqops=NN,NT,TN,TT sq16ops=NN,NT,TN,TT ;; esac
  case $v in default|dmma16|rankkldb|smalldb) rkops=NN,NT ;; rankkldbe|smalldbc) rkops=NN,NT,TN ;; esac
  [ "$sq8192" = 1 ] && gemm sq8192 8192 --ops $sqops
  [ "$sq16384" = 1 ] && gemm sq16384 16384 --ops $sq16ops
  [ "$rk" = 1 ] && gemm rankk $rankk_shapes --ops $rkops
  [ ${#parts[@]} -gt 0 ] || continue
  # One file per variant: the first part's header, every part's results.
  python3 - "$out/tc-$v.json" "$v" "${parts[@]}" <<'EOF'
import json, sys
dst, variant, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
docs = [json.load(open(p)) for p in parts]
doc = docs[0]
doc["results"] = [r for d in docs for r in d.get("results", [])]
for r in doc["results"]:
    if r.get("engine") == "tessera":
        r.setdefault("extra", {})["tc_tile"] = variant
json.dump(doc, open(dst, "w"), indent=1)
for r in doc["results"]:
    if r.get("engine") != "tessera":
        continue
    s, x = r["shape"], r.get("extra", {})
    print(f"tc {variant:9s} {s['m']:>6}x{s['n']:>6}x{s['k']:>6} {s['transa']}{s['transb']}  "
          f"{r['tflops']['median']:6.2f} TFLOP/s  {x.get('ratio', float('nan')):.3f}x cublas  "
          f"{'PASS' if r.get('verified') else 'FAIL'}")
EOF
  rm -f "${parts[@]}"
done
echo "== tc_variants: $(( $(date +%s) - t0 )) s" >&2
exit $status
