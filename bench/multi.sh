#!/usr/bin/env bash
# multi.sh: scaling runs on the GPUs of one node: Linpack on 1 x 1 and 1 x G (each rank one GPU,
# N from the same memory fraction), with the device-to-device panel broadcast and without it (the
# host path), a smaller 2 x G/2 run; host-resident DGEMM on 1, 2, ... G GPUs with the tile runtime
# and cuBLASXt side by side; HPCG on 1 and G ranks when the build has its GPU path. One JSON per run
# in OUTDIR, a table at the end. Usage: bench/multi.sh path/to/tessera OUTDIR
# MULTI_STEPS selects parts and their order (default hpl,gemm,blas3,hpcg; groups and single runs
# are listed below, where the steps run; mxp = HPL-MxP on 1 x 1 and 2 x 2); MULTI_DEADLINE_S bounds
# the whole script. MULTI_MXP_N sets N of the 2 x 2 HPL-MxP run (default: sized like the 1 x 1 run,
# the same share of each GPU's memory, so about twice its N). MULTI_HPL_N sets
# N for the 2 x G/2 run (default: sized like the others, the same memory fraction); MULTI_GEMM_N the
# host GEMM sizes (32768 49152); MULTI_HPCG_RT HPCG's run time (30 s). MULTI_STEPS=hpl,hpl-depth2 runs
# the Linpack grids at lookahead depth 1 (the default) and then depth 2 at the same N.
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
  if [ "${MULTI_DEADLINE_S:-0}" -gt 0 ] && [ $((MULTI_DEADLINE_S - SECONDS)) -lt "$tmo" ]; then
    tmo=$((MULTI_DEADLINE_S - SECONDS)); [ "$tmo" -ge 10 ] || tmo=10
  fi
  echo "== $name: $*" >&2
  local t0=$SECONDS
  timeout "$tmo" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  if [ "$rc" != 0 ]; then
    echo "== $name FAILED (exit $rc$([ "$rc" = 124 ] && echo ": timed out after $tmo s"))" >&2; status=1
  fi
  grep -E "^W[RC]|PASSED|FAILED|TFLOP|GFLOP/s rating|VALID|per call" "$out/$name.log" | tail -6 >&2
  grep -m2 -E "NCCL INFO Channel 00.* via " "$out/$name.log" >&2
  echo "== $name: $((SECONDS - t0)) s" >&2
}
counts="1"
for g in 2 4 8; do [ "$g" -le "$ngpu" ] && counts="$counts $g"; done
echo "== $ngpu GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); counts: $counts" >&2

# Steps run in the order MULTI_STEPS lists them. Groups: hpl = hpl-1x1,hpl-1xG,hpl-2xG; hpl-depth2 =
# hpl-1x1-d2,hpl-1xG-d2,hpl-2xG-d2 (--depth 2); mxp = mxp-1x1,mxp-2x2 (HPL-MxP, FP16; the 2 x 2 grid
# needs 4 GPUs); hpl-host =
# hpl-1xG-host,hpl-2xG-host; hpcg = hpcg-1,hpcg-G,hpcg-G-nccl; single runs also hpcg-1-graph and
# hpcg-G-nccl-graph (TESSERA_HPCG_GRAPH=1), tiles4 (bench/tiles4.sh), hpcg-nvidia-1 and hpcg-nvidia-G (NVIDIA's HPCG beside ours), hpcg-G-nccl-graph-nohb, hpcg-G-nccl-graph-noov, hpcg-G-nccl-graph-midx, hpcg-G-nccl-graph-z, hpcg-1-pair, hpcg-orders-G, hpcg-orders-G-full, hpcg-orders-G-budget; gemm and blas3 as they are.
# MULTI_DEADLINE_S (seconds from the start): a step is skipped once it has passed, and a run's
# timeout is cut to what is left, so a short device lease still returns every finished run.
deadline=${MULTI_DEADLINE_S:-0}
G=${counts##* }
hpl_grid() { # hpl_grid NAME P Q [env...]; HPL_N (N) and HPL_ARGS (more flags, e.g. --depth 2) when set
  local name=$1 p=$2 q=$3; shift 3
  local n=$((p * q)) nopt=()
  [ "$p" -gt 1 ] && [ -n "${MULTI_HPL_N:-}" ] && nopt=(-N "$MULTI_HPL_N")
  [ -n "${HPL_N:-}" ] && nopt=(-N "$HPL_N")
  if [ "$n" = 1 ]; then
    run "$name" 300 env CUDA_VISIBLE_DEVICES=0 "$@" "$tessera" hpl "${nopt[@]}" ${HPL_ARGS:-} -P 1 -Q 1 \
        --json "$out/$name.json"
  else
    run "$name" 400 "${mpi[@]}" "$n" env OPENBLAS_NUM_THREADS=$((cores / n > 0 ? cores / n : 1)) "$@" "$tessera" hpl "${nopt[@]}" \
        ${HPL_ARGS:-} -P "$p" -Q "$q" --json "$out/$name.json"
  fi
}
hpl_n_of() { # the N of an earlier run's JSON, or nothing
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); r = d["results"] if isinstance(d, dict) else d
print(r[0]["extra"]["N"])' "$1" 2>/dev/null
}
mxp_grid() { # mxp_grid NAME P Q [env...]: HPL-MxP, one rank a GPU, N sized from each GPU's memory
  local name=$1 p=$2 q=$3; shift 3
  local n=$((p * q)) nopt=()
  [ "$n" -gt 1 ] && [ -n "${MULTI_MXP_N:-}" ] && nopt=(-N "$MULTI_MXP_N")
  if [ "$n" -gt "$ngpu" ]; then echo "== $name: skipped (needs $n GPUs, $ngpu here)" >&2; return; fi
  if [ "$n" = 1 ]; then
    run "$name" 300 env CUDA_VISIBLE_DEVICES=0 "$@" "$tessera" hpl-mxp -P 1 -Q 1 --json "$out/$name.json"
  else
    run "$name" 500 "${mpi[@]}" "$n" env OPENBLAS_NUM_THREADS=$((cores / n > 0 ? cores / n : 1)) "$@" "$tessera" hpl-mxp \
        "${nopt[@]}" -P "$p" -Q "$q" --json "$out/$name.json"
  fi
}
hpcg_run() { # hpcg_run NAME RANKS [env...]; HPCG_GRID="--npx a --npy b --npz c" sets the process grid
  # MULTI_HPCG_REF_DROP1 / MULTI_HPCG_REF_DROPG: the reference CG's drop at 256^3 per rank on one rank /
  # on G ranks in HPCG's default grid (extra.ref_drop of an earlier run): given, the host's reference CG
  # (~30 s / ~50 s of a run) is skipped; such runs are never official (development calls only).
  local name=$1 n=$2; shift 2
  local drop=${MULTI_HPCG_REF_DROPG:-}
  [ "$n" = 1 ] && drop=${MULTI_HPCG_REF_DROP1:-}
  [ -n "${HPCG_GRID:-}" ] && [ "$n" != 1 ] && drop= # another grid, another reference
  [ -n "$drop" ] && set -- "$@" TESSERA_HPCG_REF_DROP="$drop"
  "$tessera" hpcg --help 2>&1 | grep -q -- "--engine" || { echo "== $name: no GPU engine in this build" >&2; return; }
  local a=(hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt "${MULTI_HPCG_RT:-30}" ${HPCG_GRID:-} --json "$out/$name.json")
  if [ "$n" = 1 ]; then run "$name" 300 env CUDA_VISIBLE_DEVICES=0 "$@" "$tessera" "${a[@]}"
  else run "$name" 300 "${mpi[@]}" "$n" env "$@" "$tessera" "${a[@]}"; fi
}
expand() {
  local s
  for s in ${steps//,/ }; do
    case $s in
      hpl) echo hpl-1x1 hpl-1xG hpl-2xG ;;
      hpl-depth2) echo hpl-1x1-d2 hpl-1xG-d2 hpl-2xG-d2 ;;
      hpl-host) echo hpl-1xG-host hpl-2xG-host ;;
      mxp) echo mxp-1x1 mxp-2x2 ;;
      hpcg) echo hpcg-1 hpcg-G hpcg-G-nccl ;;
      *) echo "$s" ;;
    esac
  done
}
for s in $(expand); do
  if [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
    echo "== $s: skipped (MULTI_DEADLINE_S=$deadline passed at ${SECONDS} s)" >&2; continue
  fi
  if [ "$G" = 1 ] && [[ $s == *G* ]]; then echo "== $s: skipped (one GPU)" >&2; continue; fi
  case $s in
    hpl-1x1) hpl_grid hpl-1x1 1 1 ;;
    hpl-1xG) hpl_grid "hpl-1x$G" 1 "$G" ;;
    # two process rows: panels gathered on the diagonal block's device, row swaps along the column
    hpl-2xG) hpl_grid "hpl-2x$((G / 2))" 2 $((G / 2)) ;;
    # the host path of the panel broadcast and of the row swaps (MPI through host memory)
    hpl-1xG-host) hpl_grid "hpl-1x$G-host" 1 "$G" TESSERA_HPL_NCCL=0 ;;
    hpl-2xG-host) hpl_grid "hpl-2x$((G / 2))-host" 2 $((G / 2)) TESSERA_HPL_NCCL=0 ;;
    # lookahead depth 2 at the N of the depth-1 run of the same grid when it ran (else sized for depth 2)
    hpl-1x1-d2) HPL_N=$(hpl_n_of "$out/hpl-1x1.json") HPL_ARGS="--depth 2" hpl_grid hpl-1x1-d2 1 1 ;;
    hpl-1xG-d2) HPL_N=$(hpl_n_of "$out/hpl-1x$G.json") HPL_ARGS="--depth 2" hpl_grid "hpl-1x$G-d2" 1 "$G" ;;
    hpl-2xG-d2)
      HPL_N=$(hpl_n_of "$out/hpl-2x$((G / 2)).json") HPL_ARGS="--depth 2" hpl_grid "hpl-2x$((G / 2))-d2" 2 $((G / 2)) ;;
    # HPL-MxP: one GPU, then a 2 x 2 grid of four (panels broadcast in FP16 by NCCL along the
    # process rows and columns; mxp-2x2-host: through host memory and MPI)
    mxp-1x1) mxp_grid mxp-1x1 1 1 ;;
    mxp-2x2) mxp_grid mxp-2x2 2 2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT ;;
    mxp-2x2-host) mxp_grid mxp-2x2-host 2 2 TESSERA_HPL_NCCL=0 ;;
    hpcg-1) hpcg_run hpcg-1 1 ;;
    # the halo through host staging and MPI (the default on GPUs is NCCL)
    hpcg-G) hpcg_run "hpcg-$G" "$G" TESSERA_HPCG_NCCL=0 ;;
    # the halo device to device by NCCL instead of through host staging
    # (NCCL's transport between the ranks goes into the log and the table: P2P or through host memory)
    hpcg-G-nccl) hpcg_run "hpcg-$G-nccl" "$G" TESSERA_HPCG_NCCL=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT ;;
    # the V-cycle replayed as a captured graph (one rank; several with the NCCL halo)
    hpcg-1-graph) hpcg_run hpcg-1-graph 1 TESSERA_HPCG_GRAPH=1 ;;
    # the V-cycle kernel by kernel (the default on GPUs is the graph)
    hpcg-1-nograph) hpcg_run hpcg-1-nograph 1 TESSERA_HPCG_GRAPH=0 ;;
    hpcg-G-nccl-graph) hpcg_run "hpcg-$G-nccl-graph" "$G" TESSERA_HPCG_NCCL=1 TESSERA_HPCG_GRAPH=1 ;;
    # the halo exchange before the kernels that need it, not overlapped (the default overlaps it)
    hpcg-G-nccl-graph-noov)
      hpcg_run "hpcg-$G-nccl-graph-noov" "$G" TESSERA_HPCG_NCCL=1 TESSERA_HPCG_GRAPH=1 TESSERA_HPCG_OVERLAP=0 ;;
    # the halo exchanged between the smoother's sweeps too (a study, never official: the iterations
    # two ranks need when the backward sweep sees the neighbours' forward-swept values)
    hpcg-G-nccl-graph-midx)
      hpcg_run "hpcg-$G-nccl-graph-midx" "$G" TESSERA_HPCG_NCCL=1 TESSERA_HPCG_GRAPH=1 TESSERA_HPCG_MIDX=1 ;;
    # split in z (1 x 1 x G) instead of HPCG's default shape (G x 1 x 1 for two ranks)
    hpcg-G-nccl-graph-z)
      HPCG_GRID="--npx 1 --npy 1 --npz $G" hpcg_run "hpcg-$G-nccl-graph-z" "$G" TESSERA_HPCG_NCCL=1 TESSERA_HPCG_GRAPH=1 ;;
    # the same without the halo rows' own blocks (they pad their colour's ELL instead)
    hpcg-G-nccl-graph-nohb)
      hpcg_run "hpcg-$G-nccl-graph-nohb" "$G" TESSERA_HPCG_NCCL=1 TESSERA_HPCG_GRAPH=1 TESSERA_HPCG_HALO_BLOCKS=0 ;;
    # one-rank runs on GPU 0 and GPU 1 at the same time, not coupled: is a GPU slower when its
    # neighbour is busy (the two-rank V-cycle is ~9% slower per rank than one GPU's alone)?
    hpcg-1-pair)
      "$tessera" hpcg --help 2>&1 | grep -q -- "--engine" || continue
      a="hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt ${MULTI_HPCG_RT:-30}"
      t=$(cd "$(dirname "$tessera")" && pwd)/$(basename "$tessera") o=$(cd "$out" && pwd)
      run hpcg-1-pair 300 bash -c "d0=\$(mktemp -d) d1=\$(mktemp -d); \
        (cd \$d0 && CUDA_VISIBLE_DEVICES=0 '$t' $a --json '$o/hpcg-1-pair0.json' >'$o/hpcg-1-pair0.log' 2>&1) & \
        (cd \$d1 && CUDA_VISIBLE_DEVICES=1 '$t' $a --json '$o/hpcg-1-pair1.json' >'$o/hpcg-1-pair1.log' 2>&1) & \
        wait; grep -h -E 'per call|parts per|sweep per|rating' '$o/hpcg-1-pair0.log' '$o/hpcg-1-pair1.log'" ;;
    # the full search on G ranks: every order class at 128^3, the best 24 at 256^3 with their
    # iterations (~5 min on two GPUs)
    hpcg-orders-G-full)
      ob=$(dirname "$tessera")/../bench/hpcg_orders
      [ -x "$ob" ] || { echo "== hpcg-orders-$G-full: no $ob (TESSERA_DEVICE_TARGETS needs hpcg_orders)" >&2; continue; }
      run "hpcg-orders-$G-full" 590 "${mpi[@]}" "$G" "$ob" 128 256 24
      grep -E "iterations" "$out/hpcg-orders-$G-full.log" | sort -t' ' -k11 -n | head -5 >&2 ;;
    # the same within a budget: a random sample of the orders at MULTI_ORDERS_N1^3 (default 64) for
    # MULTI_ORDERS_BUDGET_S seconds (150), the best MULTI_ORDERS_TOP (12) at 256^3 (~5 min in all)
    hpcg-orders-G-budget)
      ob=$(dirname "$tessera")/../bench/hpcg_orders
      [ -x "$ob" ] || { echo "== hpcg-orders-$G-budget: no $ob (TESSERA_DEVICE_TARGETS needs hpcg_orders)" >&2; continue; }
      run "hpcg-orders-$G-budget" 400 "${mpi[@]}" "$G" env HPCG_ORDERS_BUDGET_S="${MULTI_ORDERS_BUDGET_S:-150}" \
          "$ob" "${MULTI_ORDERS_N1:-64}" 256 "${MULTI_ORDERS_TOP:-12}"
      grep -E "iterations|budget" "$out/hpcg-orders-$G-budget.log" >&2 ;;
    # the smoother's colour orders searched on G ranks at 256^3 (coordinate descent over the
    # candidates of the one-rank search; MULTI_ORDERS_REF: the reference drop of that grid, from a
    # run's log; bench/hpcg_orders.c)
    hpcg-orders-G)
      ob=$(dirname "$tessera")/../bench/hpcg_orders
      [ -x "$ob" ] || { echo "== hpcg-orders-$G: no $ob (TESSERA_DEVICE_TARGETS needs hpcg_orders)" >&2; continue; }
      run "hpcg-orders-$G" 300 "${mpi[@]}" "$G" "$ob" descent 256 "${MULTI_ORDERS_REF:?MULTI_ORDERS_REF}" \
          "$here/results/h100/hpcg-orders-128-256-2026-11-25-763b333.txt" "${MULTI_ORDERS_K:-20}" 2
      grep -E "^(start|final)" "$out/hpcg-orders-$G.log" >&2 ;;
    # NVIDIA's open HPCG beside ours, same ranks, same call: `tessera hpcg` (the defaults: NCCL halo,
    # V-cycle graph) then xhpcg (bench/nvidia_hpcg.sh; the source carried in .peers/), both results in
    # one file hpcg-vs-nvidia-N.json (bench/peer_hpcg.py), the ratio in the log
    hpcg-nvidia-1|hpcg-nvidia-G)
      n=1; [ "$s" = hpcg-nvidia-G ] && n=$G
      hpcg_run "hpcg-vs-nvidia-$n-tessera" "$n"
      j=$out/hpcg-vs-nvidia-$n-tessera.json
      rep=$("$here/nvidia_hpcg.sh" "$out" "$n" "${MULTI_HPCG_RT:-30}" 2>>"$out/hpcg-vs-nvidia-$n.log" | tail -1)
      if [ -f "$j" ] && [ -f "$rep" ]; then
        python3 "$here/peer_hpcg.py" "$out/hpcg-vs-nvidia-$n.json" "$j" "$rep" >&2 && rm -f "$j"
      else
        echo "== hpcg-nvidia-$n FAILED: no result from $([ -f "$j" ] && echo nvidia-hpcg || echo tessera)" >&2; status=1
      fi ;;
    gemm)
      # the tile runtime on 1..G GPUs; cuBLASXt on the most GPUs, where its bar is (block 8192: 4096
      # measured 0.48x of it on two H200s; MULTI_XT_BLOCKS=4096,8192 for both)
      for g in $counts; do
        vis=$(seq -s, 0 $((g - 1)))
        eng=tiles; [ "$g" = "$G" ] && eng=tiles,cublasxt
        run "gemm-host-${g}gpu" 500 env CUDA_VISIBLE_DEVICES="$vis" TESSERA_ARENA_FRACTION=0.5 "$tessera" gemm \
            ${MULTI_GEMM_N:-32768 49152} --where host --engine $eng --xt-block ${MULTI_XT_BLOCKS:-8192} --warmup 1 \
            --reps 3 --json "$out/gemm-host-${g}gpu.json"
      done ;;
    blas3)
      # the level-3 routines at n = 32768 on 1..G GPUs (tile runtime, its own GEMM as reference), and
      # cuBLASXt's routines on the most GPUs
      for g in $counts; do
        vis=$(seq -s, 0 $((g - 1)))
        eng=tiles; [ "$g" = "$G" ] && eng=tiles,cublasxt
        run "blas3-${g}gpu" 500 env CUDA_VISIBLE_DEVICES="$vis" TESSERA_ARENA_FRACTION=0.5 "$tessera" blas3 \
            --routine all ${MULTI_BLAS3_N:-32768} --engine $eng --xt-block 8192 --gemm-ref --reps 2 \
            --json "$out/blas3-${g}gpu.json"
      done ;;
    tiles4)
      # the tile runtime and cuBLASXt on 1, 2, G GPUs in one process per command (host data made and
      # pinned once; bench/tiles4.sh: DGEMM 49152, the five double level-3 routines at 49152 on G,
      # the bars' ratios printed; ~3-4 min on 4 H200s)
      run tiles4 420 "$here/tiles4.sh" "$tessera" "$out" ;;
    *) echo "multi.sh: unknown step '$s'" >&2; status=2 ;;
  esac
done

python3 "$here/summarize.py" "$out"/*.json 2>/dev/null || true
exit $status
