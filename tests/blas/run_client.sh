#!/usr/bin/env bash
# run_client.sh: runs a program linked against -lblas through libtessera_blas with LD_PRELOAD and checks its trace.
# usage: run_client.sh LIB PROGRAM ROUTINE...   (PROGRAM *.f90 is first compiled with gfortran -lblas)
# Pass: the program exits 0 (its own numeric checks passed) and every ROUTINE has a where=runtime line.
set -u
lib=$1 prog=$2; shift 2
if [ "${TESSERA_TEST_BACKEND:-}" = cuda ]; then unset TESSERA_SIM_DEVICES; export TESSERA_BACKEND=cuda; fi
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
if [[ $prog == *.f90 ]]; then
  command -v gfortran >/dev/null || { echo "SKIP: gfortran not installed"; exit 77; }
  gfortran -O1 "$prog" -lblas -o "$work/client" || { echo "FAILED: gfortran $prog"; exit 1; }
  prog=$work/client
fi
export TESSERA_BLAS_TRACE="$work/trace.log"
LD_PRELOAD="${TSB_ASAN_RUNTIME:+$TSB_ASAN_RUNTIME:}$lib" "$prog"
rc=$?
cat "$work/trace.log"
[ $rc -eq 0 ] || { echo "FAILED: $prog exited with $rc"; exit 1; }
for r in "$@"; do
  grep -q "^tessera_blas: $r .*where=runtime" "$work/trace.log" || { echo "FAILED: no $r call ran on the tile runtime"; exit 1; }
done
echo "PASSED: results within the bound, $* ran on the tile runtime"
