#!/usr/bin/env bash
# headline.sh: every figure README.md quotes, each beside its baseline, in one call on one GPU
# (H200 or H100), written as bench/results/<kind>/headline-<commit>.json (bench/headline.py collect;
# README's table: bench/readme_figures.py write <kind>). Usage:
#   bench/headline.sh [--dry-run] [OUTDIR]      (OUTDIR default $OUT or bench/out)
# The tessera binary: $HEADLINE_TESSERA, else build-prebuilt/bin/tessera (bench/prebuild.sh, carried)
# when it starts here, else a Release build into build-headline/ (~80 s more).
# NVIDIA's HPCG (bench/nvidia_hpcg.sh, through bench/multi.sh's step hpcg-nvidia-1) needs .peers/
# carried; .peers/prebuilt/xhpcg (bench/nvidia_hpcg.sh prebuild) saves its ~70 s build.
# Environment: HEADLINE_KIND (default from the GPU's name: h200 or h100), HEADLINE_STEPS (a,b,...;
# default all), HEADLINE_DEADLINE_S (510: a step that would start later is skipped, each step's
# timeout is cut to what is left), HEADLINE_BURN_TIME (45s), HEADLINE_HPCG_RT (15),
# HEADLINE_HPCG_REF_DROP (8.219993e-04, the reference drop of 256^3 on one rank: the host's
# reference CG, ~30 s, is skipped; such a run is a development run, never official; empty: run it).
# Expected on one H200 with prebuilt binaries: about 7.5 minutes in all (per step below).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
dry=0
[ "${1:-}" = --dry-run ] && { dry=1; shift; }
out=${1:-${OUT:-bench/out}}
mkdir -p "$out"
res=$out/headline
mkdir -p "$res"
status=0
deadline=${HEADLINE_DEADLINE_S:-510}
steps=${HEADLINE_STEPS:-all}
want() { [ "$steps" = all ] || [[ ",$steps," == *",$1,"* ]]; }

TESSERA_COMMIT_GIVEN=${TESSERA_COMMIT:-}
commit=${TESSERA_COMMIT:-$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)}
export TESSERA_COMMIT=$commit
kind=${HEADLINE_KIND:-}
if [ -z "$kind" ]; then
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  case $name in *H200*) kind=h200 ;; *H100*) kind=h100 ;; *) kind=unknown ;; esac
fi

# step NAME SECONDS command...: a timed run; skipped once the deadline is near
step() {
  local name=$1 tmo=$2; shift 2
  want "$name" || return 0
  local left=$((deadline - SECONDS))
  if [ "$dry" = 1 ]; then echo "[$name, <= ${tmo} s] $*"; return 0; fi
  if [ "$left" -lt 20 ]; then echo "== $name: skipped (HEADLINE_DEADLINE_S=$deadline reached)" >&2; status=1; return 0; fi
  [ "$left" -lt "$tmo" ] && tmo=$left
  echo "== $name: $*" >&2
  local t0=$SECONDS
  timeout "$tmo" "$@" >"$res/$name.log" 2>&1 || { echo "== $name FAILED (exit $?)" >&2; tail -5 "$res/$name.log" >&2; status=1; }
  echo "== $name: $((SECONDS - t0)) s" >&2
}

tessera=${HEADLINE_TESSERA:-}
if [ -z "$tessera" ] && [ -x build-prebuilt/bin/tessera ] && build-prebuilt/bin/tessera --version >/dev/null 2>&1; then
  tessera=build-prebuilt/bin/tessera
fi
if [ -z "$tessera" ]; then
  tessera=build-headline/bin/tessera
  if [ "$dry" = 1 ]; then
    echo "[build, ~80 s] cmake -S . -B build-headline -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON -DTESSERA_TESTS=OFF && cmake --build build-headline --target tessera"
  else
    t0=$SECONDS
    { cmake -S . -B build-headline -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON -DTESSERA_TESTS=OFF &&
      cmake --build build-headline -j "$(nproc)" --target tessera; } >"$out/headline-build.log" 2>&1 ||
      { echo "headline.sh: build failed (log $out/headline-build.log)" >&2; tail -20 "$out/headline-build.log" >&2; exit 2; }
    echo "== build: $((SECONDS - t0)) s" >&2
  fi
fi
# the commit the binary reports (a prebuilt binary carried to a machine whose checkout may name
# another HEAD: call 58 labelled 10ed814's figures 3e7d617), unless TESSERA_COMMIT was given
if [ -z "${TESSERA_COMMIT_GIVEN:-}" ] && [ "$dry" = 0 ]; then
  bc=$("$tessera" --version 2>/dev/null | sed -n 's/.*(commit \([0-9a-f]\{7,\}\)).*/\1/p' | head -1)
  [ -n "$bc" ] && commit=$bc && export TESSERA_COMMIT=$commit
fi
echo "== headline: kind $kind, commit $commit, tessera $tessera, steps $steps, deadline $deadline s" >&2

# own DGEMM against cuBLAS, squares in the four ops, engines taking turns: ~45 s on an H200
# (host data and verification of the 16384^2 operands dominate)
step bars-square 120 "$tessera" gemm 4096 8192 16384 --ops NN,NT,TN,TT --engine cublas,tessera --reps 7 \
     --interleave --json "$res/bars-square.json"
# HPL's rank-k update shapes: ~15 s
step bars-rankk 60 "$tessera" gemm 16384x16384x256 16384x16384x512 16384x16384x1024 --engine cublas,tessera \
     --reps 7 --interleave --json "$res/bars-rankk.json"
# the Linpack sized for the machine (N = 116736 on an H200, 87040 on an H100) against its DGEMM
# ceiling measured first in the same process (cuBLAS NN, cuBLAS NT and the own kernel held 20 s
# each on the update shape, at the power cap): ~120 s
step hpl 270 bench/guard.sh 260 "$tessera" hpl --ceiling 20 --json "$res/hpl.json"
# LU at N = 32768 against cuSOLVER dgetrf on the same matrix: ~20 s. NB 1024: 0.844-0.853x dgetrf's
# time against 0.889x with NB 512 (bench/notes/hpl.md, hpl-lu-sweep-2026-11-26-feea201.json)
step hpl-32768 90 bench/guard.sh 85 "$tessera" hpl -N 32768 -NB 1024 --baseline cusolver --json "$res/hpl-32768.json"
# burn: every product checked, against its plain phase in the same run: HEADLINE_BURN_TIME + ~15 s
step burn 120 "$tessera" burn --time "${HEADLINE_BURN_TIME:-45s}" --json "$res/burn.json"
# host-resident DGEMM, tile runtime against cuBLASXt (8192 blocks; the arena leaves it half the GPU): ~60 s
step gemm-host 150 env TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm 16384 32768 --where host --engine tiles,cublasxt \
     --xt-block 8192 --reps 3 --json "$res/gemm-host.json"
# the level-3 routines at 32768 on the tile runtime against cuBLASXt: ~60 s (checked run + 1 timed)
step blas3 150 env TESSERA_ARENA_FRACTION=0.5 "$tessera" blas3 --routine all 32768 --engine tiles,cublasxt \
     --xt-block 8192 --reps 1 --json "$res/blas3.json"
# HPCG 256^3 beside NVIDIA's HPCG 0.6.2, one rank each, one JSON with both (bench/multi.sh):
# ~90 s with the reference drop given and xhpcg prebuilt (+70 s to build xhpcg)
step hpcg-nvidia-1 240 env MULTI_STEPS=hpcg-nvidia-1 MULTI_HPCG_RT="${HEADLINE_HPCG_RT:-15}" \
     MULTI_HPCG_REF_DROP1="${HEADLINE_HPCG_REF_DROP-8.219993e-04}" bench/multi.sh "$tessera" "$res"

[ "$dry" = 1 ] && { echo "[collect] python3 bench/headline.py collect $res $kind $commit --out $out/headline-$commit.json"; exit 0; }
# one JSON with every figure; copy it to bench/results/<kind>/ here, then bench/readme_figures.py write <kind>
if python3 bench/headline.py collect "$res" "$kind" "$commit" --out "$out/headline-$commit.json"; then
  python3 - "$out/headline-$commit.json" <<'EOF' >&2
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["figures"]:
    print(f"{e['label'][:58]:58s} {e['value']:9.3f} {e['unit']:8s} vs {e['baseline_value']:9.3f}  {e['ratio']:.3f}x  {'ok' if e['passed'] else 'FAILED'}")
EOF
else
  echo "headline.sh: collecting failed (a step's JSON is missing: see $res/*.log)" >&2; status=1
fi
tar -czf "$out/headline-results.tgz" -C "$res" . 2>/dev/null
echo "== headline: $SECONDS s in all, status $status" >&2
exit $status
