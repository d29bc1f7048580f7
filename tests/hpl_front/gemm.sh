#!/usr/bin/env bash
# gemm.sh: `tessera hpl --gemm` and TESSERA_HPL_GEMM on simulated devices: the refusals (a bad name, an
# engine the simulated device cannot run, --exec cpu: exit 2 before any run), the default engine
# recorded in the text and JSON (auto's choice by size), and with --ceiling the measured choice (the
# ceiling's one engine on simulated devices) with the energy fields null (no NVML there).
# usage: gemm.sh TESSERA                 (one process)
#        gemm.sh TESSERA MPIEXEC ARGS...  (2 ranks: the ceiling's choice and a refusal agreed by both)
set -u
tessera=$1
shift
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
export TESSERA_SIM_DEVICES=1 TESSERA_PROGRESS=0 OPENBLAS_NUM_THREADS=2
unset TESSERA_HPL_GEMM TESSERA_SIM_GEMM_REF_FLOPS

if [ $# -gt 0 ]; then
  # two ranks, one simulated device each: both measure, both take the same engine, the report is
  # rank 0's; a forced engine neither can run is refused by both (exit 2, one message)
  "$@" -np 2 "$tessera" hpl -N 512 -NB 64 -P 1 -Q 2 --ceiling 1 --json "$work/m.json" >"$work/out" 2>"$work/err"; rc=$?
  [ $rc -eq 0 ] || { cat "$work/out" "$work/err"; fail "2 ranks: exit $rc"; }
  grep -Eq "^DGEMM engine WR11C2R4 N=512: (ref|cpu) \(measured\)$" "$work/out" || { cat "$work/out"; fail "2 ranks: no engine line"; }
  python3 - "$work/m.json" <<'PY' || fail "2 ranks: JSON"
import json, sys
d = json.load(open(sys.argv[1])); d = d["results"] if isinstance(d, dict) else d
e = d[0]["extra"]
assert (e["P"], e["Q"], e["gemm_choice"]) == (1, 2, "measured"), e
assert e["gemm_engine"] == e["ceiling"]["engine"], e
PY
  "$@" -np 2 env TESSERA_HPL_GEMM=tessera "$tessera" hpl -N 512 -NB 64 -P 1 -Q 2 >"$work/out" 2>&1; rc=$?
  [ $rc -eq 2 ] || { cat "$work/out"; fail "2 ranks, tessera forced: exit $rc"; }
  [ "$(grep -c "TESSERA_HPL_GEMM engine tessera cannot run here" "$work/out")" = 1 ] || { cat "$work/out"; fail "2 ranks: not one refusal"; }
  echo PASSED
  exit 0
fi

# refused: exit 2, the message, nothing run (no HPL banner)
refused() { # $1: what, $2: the message (grep -F), then the command's arguments
  local what=$1 msg=$2; shift 2
  "$@" >"$work/out" 2>&1; local rc=$?
  [ $rc -eq 2 ] || { cat "$work/out"; fail "$what: exit $rc, not 2"; }
  grep -qF -- "$msg" "$work/out" || { cat "$work/out"; fail "$what: no message '$msg'"; }
  ! grep -q "HPLinpack" "$work/out" || { cat "$work/out"; fail "$what: the run started"; }
}
refused "--gemm bogus" "--gemm: 'bogus' is not one of auto, cublas, tessera" "$tessera" hpl -N 256 -NB 64 --gemm bogus
refused "--gemm tessera --exec cpu" "--gemm tessera chooses the devices' DGEMM: it cannot go with --exec cpu" \
  "$tessera" hpl -N 256 -NB 64 --gemm tessera --exec cpu
refused "--gemm tessera on sim" "--gemm engine tessera cannot run here: ts_dev_gemm: engine 'tessera' (own GPU kernels) runs on CUDA devices only" \
  "$tessera" hpl -N 256 -NB 64 --gemm tessera
refused "--gemm cublas on sim" "--gemm engine cublas cannot run here: ts_dev_gemm: engine 'cublas' does not run on simulated devices" \
  "$tessera" hpl -N 256 -NB 64 --gemm cublas
refused "TESSERA_HPL_GEMM=fast" "TESSERA_HPL_GEMM=fast: expected auto, cublas or tessera" \
  env TESSERA_HPL_GEMM=fast "$tessera" hpl -N 256 -NB 64
refused "TESSERA_HPL_GEMM=tessera on sim" "TESSERA_HPL_GEMM engine tessera cannot run here" \
  env TESSERA_HPL_GEMM=tessera "$tessera" hpl -N 256 -NB 64
refused "TESSERA_HPL_GEMM=cublas with --gemm auto on sim" "TESSERA_HPL_GEMM engine cublas cannot run here" \
  env TESSERA_HPL_GEMM=cublas "$tessera" hpl -N 256 -NB 64 --gemm auto
# (a forced engine also needs a device: none here with TESSERA_SIM_DEVICES=0 and no GPU)
if ! nvidia-smi -L >/dev/null 2>&1; then
  refused "--gemm tessera without a device" "--gemm engine tessera cannot run here: rank 0 has no device" \
    env TESSERA_SIM_DEVICES=0 "$tessera" hpl -N 256 -NB 64 --gemm tessera
fi

# run ARGS...: one passing run; its JSON's first entry's extra in $work/extra.json
run() {
  "$@" --json "$work/r.json" >"$work/out" 2>"$work/err"; local rc=$?
  [ $rc -eq 0 ] || { cat "$work/out" "$work/err"; fail "exit $rc: $*"; }
  grep -q PASSED "$work/out" || { cat "$work/out"; fail "not PASSED: $*"; }
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d["results"] if isinstance(d, dict) else d; print(json.dumps(d[0]["extra"]))' "$work/r.json" >"$work/extra.json"
}
# check_extra ENGINE CHOICE: JSON extra.gemm_engine / gemm_choice and the text line
check_extra() {
  python3 - "$work/extra.json" "$1" "$2" <<'PY' || fail "JSON: expected $1 ($2)"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["exec"] == "device:sim", e["exec"]
assert (e["gemm_engine"], e["gemm_choice"]) == (sys.argv[2], sys.argv[3]), (e["gemm_engine"], e["gemm_choice"])
PY
  grep -Eq "^DGEMM engine WR11C2R4 N=[0-9]+: $1 \($2\)$" "$work/out" || { cat "$work/out"; fail "no engine line '$1 ($2)'"; }
}

# default: auto on a simulated device is the reference GEMM up to 2*256^3 flops, the CPU BLAS above
# (the first update 256 x 256 x 64 is below; with the limit at 0, above)
run "$tessera" hpl -N 256 -NB 64
check_extra ref default
TESSERA_SIM_GEMM_REF_FLOPS=0 run "$tessera" hpl -N 256 -NB 64 --gemm auto
check_extra cpu default
# the CPU path reports no device engine
run "$tessera" hpl -N 256 -NB 64 --exec cpu
python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); assert "gemm_engine" not in e and "gemm_choice" not in e, e' "$work/extra.json" || fail "gemm fields on the CPU path"
! grep -q "^DGEMM engine" "$work/out" || fail "engine line on the CPU path"

# measured: the ceiling holds the simulated device's one engine (auto's choice on the ceiling's
# shape, 512 x 512 x 64: ref at the default limit, cpu with the limit at 0) and the update takes it
for limit in default 0; do
  want=ref; [ $limit = 0 ] && want=cpu
  if [ $limit = 0 ]; then export TESSERA_SIM_GEMM_REF_FLOPS=0; else unset TESSERA_SIM_GEMM_REF_FLOPS; fi
  run "$tessera" hpl -N 512 -NB 64 --ceiling 1
  grep -Eq "^hpl: DGEMM ceiling [0-9.]+ [GT]FLOP/s per GPU \($want N[NT]\); sustained: $want NN [0-9.]+, $want NT [0-9.]+$" "$work/err" ||
    { cat "$work/err"; fail "ceiling line ($want, no energy)"; }
  check_extra $want measured
  python3 - "$work/extra.json" "$want" <<'PY' || fail "ceiling engines JSON"
import json, sys
c = json.load(open(sys.argv[1]))["ceiling"]
assert c["engine"] == sys.argv[2], c
es = c["engines"]
# its one engine in both forms of the update (B as it is, B transposed); the ceiling the better
assert [(x["engine"], x["op"]) for x in es] == [(sys.argv[2], "NN"), (sys.argv[2], "NT")], es
assert c["tflops_per_gpu"] == max(x["tflops_per_gpu"] for x in es) and min(x["tflops_per_gpu"] for x in es) > 0, es
assert c["op"] == [x["op"] for x in es if x["tflops_per_gpu"] == c["tflops_per_gpu"]][0], c
assert c[sys.argv[2] + "_tflops_per_gpu"] == es[0]["tflops_per_gpu"] and c[sys.argv[2] + "_nt_tflops_per_gpu"] == es[1]["tflops_per_gpu"], c
# no NVML on simulated devices: the energy fields are there and null
assert all(x[k] is None for x in es for k in ("joules", "watts", "j_per_tflop")), es
PY
done
unset TESSERA_SIM_GEMM_REF_FLOPS
# TESSERA_HPL_GEMM=auto forces nothing: with --ceiling the choice stays the measured one
TESSERA_HPL_GEMM=auto run "$tessera" hpl -N 512 -NB 64 --ceiling 1
check_extra ref measured
echo PASSED
