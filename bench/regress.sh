#!/usr/bin/env bash
# regress.sh: a performance change measured against the commit it starts from, in one GPU call.
#   here:              bench/regress.sh BASE [STEPS]
#     puts BASE's source (git archive) and the plan (commits, steps) into .regress/, ignored and
#     carried; REGRESS_PREBUILD=1 also builds both binaries here (saves the GPU machine's ~80 s).
#     Prints the device call: carry [".regress"], command `bench/regress.sh run`.
#   GPU machine:       bench/regress.sh run
#     builds BASE (.regress/base) and HEAD (this tree, uncommitted changes included) side by side
#     unless prebuilt, then runs the steps interleaved, BASE, HEAD, BASE, HEAD (REGRESS_REPS pairs,
#     default 2), and prints every figure's ratio HEAD/BASE (median of the pairs' ratios, with
#     their spread). All runs and the ratios go to $OUT/regress-BASE-HEAD.json (results schema:
#     one result per run, "variant": base|head; "ratios" at the top) for bench/results/<kind>/.
# Steps (comma-separated; default hpcg-1):
#   hpcg-1    tessera hpcg, one GPU, 256^3, --rt REGRESS_HPCG_RT (15): rating, SpMV/MG/DDOT/WAXPBY GFLOP/s
#   hpcg-G    the same on every GPU of the machine (one rank each, the default halo and graph)
#   gemm      tessera gemm 8192 16384 16384x16384x512, own kernel and cuBLAS, --interleave: TFLOP/s
#   hpl-1     tessera hpl -P 1 -Q 1 at N = REGRESS_HPL_N (65536), NB 1024: TFLOP/s
#   blas3-1   tessera blas3, the five double level-3 routines and the tile DGEMM (--gemm-ref) on the
#             tile runtime, host operands, one GPU, n = REGRESS_BLAS3_N (32768): TFLOP/s per routine
#   blas3-G   the same on every GPU of the machine (--devices G), n = REGRESS_BLAS3_NG (49152)
# REGRESS_BASE_ENV / REGRESS_HEAD_ENV: extra environment (VAR=value ...) for each side, e.g. a knob
# measured against its default with BASE = HEAD.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=.regress
usage() { sed -n '2,22p' "$0"; exit 2; }

prebuild() { # prebuild SRC DEST: the tessera binary of SRC, Release, Hopper code
  local src=$1 dest=$2 b; b=$(mktemp -d /tmp/tessera-regress.XXXXXX)
  cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON -DTESSERA_TESTS=OFF >"$b.log" 2>&1 &&
    TESSERA_COMMIT=$3 cmake --build "$b" -j "$(nproc)" --target tessera >>"$b.log" 2>&1 ||
    { echo "regress.sh: the build of $src failed (log $b.log)" >&2; tail -20 "$b.log" >&2; return 2; }
  mkdir -p "$dest" && cp "$b/bin/tessera" "$dest/" && rm -rf "$b"
}

mode=${1:-}
[ -n "$mode" ] || usage
if [ "$mode" != run ]; then
  base=$(git rev-parse --short=7 "$mode") || usage
  head=$(git rev-parse --short=7 HEAD)$(git status --porcelain --untracked-files=no | grep -q . && echo -dirty)
  steps=${2:-hpcg-1}
  grep -qx "/$dir/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/$dir/" >>.git/info/exclude; }
  rm -rf "$dir"; mkdir -p "$dir/base"
  git archive "$base" | tar -x -C "$dir/base"
  printf 'BASE=%s\nHEAD=%s\nSTEPS=%s\n' "$base" "$head" "$steps" >"$dir/plan"
  if [ "${REGRESS_PREBUILD:-0}" = 1 ]; then
    prebuild "$dir/base" "$dir/bin-base" "$base" && prebuild . "$dir/bin-head" "$head" || exit 2
  fi
  du -sh "$dir"
  echo "regress.sh: BASE $base, HEAD $head, steps $steps; device call: carry [\"$dir\"], command bench/regress.sh run"
  exit 0
fi

# ---- on the GPU machine ----
[ -f "$dir/plan" ] || { echo "regress.sh: no $dir/plan (run bench/regress.sh BASE here first)" >&2; exit 2; }
# shellcheck disable=SC1090
. "$dir/plan"
OUT=${OUT:-bench/out}; mkdir -p "$OUT"
work=$(mktemp -d /tmp/tessera-regress.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
t0=$SECONDS
declare -A bin=([base]=$PWD/$dir/bin-base/tessera [head]=$PWD/$dir/bin-head/tessera)
pids=()
for v in base head; do
  if [ -x "${bin[$v]}" ] && ! ldd "${bin[$v]}" 2>&1 | grep -q "not found"; then continue; fi
  src=$PWD/$dir/base; [ $v = head ] && src=$PWD
  c=$BASE; [ $v = head ] && c=$HEAD
  ( b=$work/build-$v
    cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON -DTESSERA_TESTS=OFF >"$b.log" 2>&1 &&
    TESSERA_COMMIT=$c cmake --build "$b" -j $(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 )) --target tessera >>"$b.log" 2>&1 ||
    { echo "regress.sh: the $v build failed" >&2; tail -20 "$b.log" >&2; exit 2; } ) &
  pids+=($!)
  bin[$v]=$work/build-$v/bin/tessera
done
for p in "${pids[@]}"; do wait "$p" || exit 2; done
echo "== regress: BASE $BASE, HEAD $HEAD, steps $STEPS ($((SECONDS - t0)) s to build)" >&2
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "== device: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1), $ngpu GPU(s)" >&2
mpi=(mpiexec --allow-run-as-root --oversubscribe --bind-to none -n)
rt=${REGRESS_HPCG_RT:-15}
runstep() { # runstep STEP VARIANT REP: one run, its JSON at $work/STEP-VARIANT-REP.json
  local s=$1 v=$2 r=$3 j="$work/$1-$2-$3.json" t=${bin[$2]}
  local envs; [ "$v" = base ] && envs=${REGRESS_BASE_ENV:-} || envs=${REGRESS_HEAD_ENV:-}
  local log="$OUT/regress-$s-$v-$r.log"
  case $s in
    hpcg-1) (cd "$work" && env CUDA_VISIBLE_DEVICES=0 $envs "$t" hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt "$rt" -q --json "$j") ;;
    hpcg-G) (cd "$work" && "${mpi[@]}" "$ngpu" env $envs "$t" hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt "$rt" -q --json "$j") ;;
    gemm) env CUDA_VISIBLE_DEVICES=0 $envs "$t" gemm 8192 16384 16384x16384x512 --engine tessera,cublas --reps 5 --interleave --json "$j" ;;
    hpl-1) env CUDA_VISIBLE_DEVICES=0 $envs "$t" hpl -P 1 -Q 1 -N "${REGRESS_HPL_N:-65536}" -NB 1024 --json "$j" ;;
    blas3-1) env CUDA_VISIBLE_DEVICES=0 TESSERA_ARENA_FRACTION=0.5 $envs "$t" blas3 --routine all "${REGRESS_BLAS3_N:-32768}" \
               --engine tiles --gemm-ref --reps 2 --json "$j" ;;
    blas3-G) env TESSERA_ARENA_FRACTION=0.5 $envs "$t" blas3 --routine all "${REGRESS_BLAS3_NG:-49152}" \
               --engine tiles --devices "$ngpu" --gemm-ref --reps 2 --json "$j" ;;
    *) echo "regress.sh: unknown step $s" >&2; return 2 ;;
  esac >"$log" 2>&1
  local rc=$?
  echo "== $s $v #$r: exit $rc, $(grep -h -E 'rating of=|PASSED|FAILED|PASS$|FAIL$' "$log" | tail -1)" >&2
}
for s in ${STEPS//,/ }; do
  for r in $(seq 1 "${REGRESS_REPS:-2}"); do
    runstep "$s" base "$r"; runstep "$s" head "$r"
  done
done
python3 bench/regress_summary.py "$OUT/regress-$BASE-$HEAD.json" "$BASE" "$HEAD" "$work"/*.json
