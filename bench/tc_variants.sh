#!/usr/bin/env bash
# tc_variants.sh: the own DGEMM's tile variants (TESSERA_TC_TILE) side by side with cuBLAS in one run; one line per variant and shape.
# Usage: bench/tc_variants.sh path/to/tessera OUTDIR
#   writes OUTDIR/tc-<variant>.json (results schema, all shapes of the variant in one file).
#   TC_VARIANTS="large large32 ..." picks variants; TC_ALL_SHAPES=1 runs every shape for every variant.
# Shapes (alpha = beta = 1, HPL's update; every run verified by Freivalds):
#   large32 (BK 32): 8192 NN,NT, 16384 NN, 16384^2 x {256,512,1024} NN; large32pf: 8192 NN,NT and
#   16384 NN; small: 8192 NN,NT; rankk (8-byte copies' shape): the rank-k shapes; rankklpf (the
#   default's main shape): 8192 and 16384 in NN, NT, TT, and the rank-k shapes; dmma16
#   (mma.m16n8k16) and `default` (TESSERA_TC_TILE unset: the automatic choice per shape, i.e.
#   small for the rank-k shapes): 8192 in NN, NT, TN, TT and the rank-k shapes. (The variants that
#   lost, large, largepf, rankkc, large32c and rankkl, were removed; 06827ee has them. dmma16h,
#   dmma16 on 128 x 64 tiles, was removed later.)
# The dmma16 comparison (each line against cuBLAS in the same process, ~80 s on an H200):
#   TC_VARIANTS="default dmma16" bench/tc_variants.sh build-device/bin/tessera "$OUT"
# Estimated time on an H200 (host data generation and verification dominate): 8192 NN+NT ~3 s,
# 16384^3 NN ~9.5 s with reps 5, each 16384^2 rank-k shape ~5.5 s, ~1 s start per call:
# large32 31 + large32pf 14 + small 4 + rankk 17.5 + rankklpf ~45 ~ 110 s.
# TC_ALL_SHAPES=1 runs every shape for every variant (~150 s).
set -uo pipefail
tessera=${1:?usage: bench/tc_variants.sh path/to/tessera OUTDIR}
out=${2:?usage: bench/tc_variants.sh path/to/tessera OUTDIR}
mkdir -p "$out"
variants=${TC_VARIANTS:-large32 large32pf small rankk rankklpf}
rankk_shapes="16384x16384x256 16384x16384x512 16384x16384x1024"
status=0
t0=$(date +%s)

for v in $variants; do
  parts=()
  # gemm NAME SIZES... --ops OPS: one tessera gemm call with the variant forced
  gemm() {
    local part=$out/.tc-$v-$1.json; shift
    echo "== tc $v: tessera gemm $* --engine cublas,tessera --reps 5" >&2
    local tile=$v; [ "$v" = default ] && tile= # empty: the automatic choice
    if ! TESSERA_TC_TILE=$tile "$tessera" gemm "$@" --engine cublas,tessera --reps 5 --json "$part" -q >&2; then
      echo "== tc $v FAILED: $*" >&2; status=1
    fi
    [ -s "$part" ] && parts+=("$part")
  }
  sq8192=0 sq16384=0 rk=0
  case $v in
    large32) sq8192=1 sq16384=1 rk=1 ;;
    large32pf) sq8192=1 sq16384=1 ;;
    small) sq8192=1 ;;
    rankklpf) sq8192=1 sq16384=1 rk=1 ;; # the default's main shape
    dmma16|default) sq8192=1 rk=1 ;;
    *) rk=1 ;;
  esac
  [ "${TC_ALL_SHAPES:-0}" = 1 ] && sq8192=1 sq16384=1 rk=1
  sqops=NN,NT sq16ops=NN
  [ "$v" = rankklpf ] && sqops=NN,NT,TT sq16ops=NN,NT,TT # (the prefetch needs an MN-major A; TT runs as NN)
  case $v in dmma16|default) sqops=NN,NT,TN,TT sq16ops=NN,NT,TN,TT ;; esac
  [ "$sq8192" = 1 ] && gemm sq8192 8192 --ops $sqops
  [ "$sq16384" = 1 ] && gemm sq16384 16384 --ops $sq16ops
  [ "$rk" = 1 ] && gemm rankk $rankk_shapes --ops NN
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
