#!/usr/bin/env bash
# run_tester.sh: runs one of Debian's reference BLAS testers (libblas-test) unchanged against libtessera_blas.
# usage: run_tester.sh LIBDIR TESTER [INPUT] ; env TSB_EXPECT_RUNTIME=1 requires GEMM calls on the runtime,
# TSB_EXPECT_ROUTINES (names as in the trace) calls of each of these routines.
# Pass: exit 0, no FAIL / '****' line, one "PASS" per subprogram (level 1) or, for levels 2-3, every
# routine switched on in INPUT passed its computational tests (per layout for CBLAS) and its error exits.
set -u
libdir=$1 tester=$2 input=${3:-}
if [ ! -x "$tester" ]; then
  echo "SKIP: $tester not installed (apt-get install libblas-test libblas64-test; scripts/install-deps.sh)"; exit 77
fi
# TSB_REQUIRE_LIB: the CPU BLAS the library forwards to must exist (ILP64: libopenblas64.so.0)
if [ -n "${TSB_REQUIRE_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -qE "^[[:space:]]*$TSB_REQUIRE_LIB[[:space:]]"; then
  echo "SKIP: $TSB_REQUIRE_LIB not installed (apt-get install libopenblas64-0-pthread; scripts/install-deps.sh)"; exit 77
fi
# On the GPU machine (bench/device.sh: TESSERA_TEST_BACKEND=cuda) the calls go to the GPU, not to
# the simulated devices the test's environment asks for.
if [ "${TESSERA_TEST_BACKEND:-}" = cuda ]; then unset TESSERA_SIM_DEVICES; export TESSERA_BACKEND=cuda; fi
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# testers unpacked into .deps/: their Fortran runtime may have come along, used only when the system
# has none (an older copy would shadow the one the CPU BLAS was built with)
case $tester in
  */.deps/*) ldconfig -p 2>/dev/null | grep -q 'libgfortran.so.5 ' ||
               export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$(dirname "$tester")")" ;;
esac
if [ -n "${TSB_ASAN_RUNTIME:-}" ]; then
  # an ASan-built library inside a tester built without ASan: the ASan runtime must be loaded first
  export LD_PRELOAD="$TSB_ASAN_RUNTIME"
fi
export TESSERA_BLAS_TRACE="$work/trace.log"
if [ -n "$input" ]; then "$tester" < "$input" > out.txt 2>&1; else "$tester" > out.txt 2>&1; fi
rc=$?
cat ./*.out out.txt > all.txt 2>/dev/null
cat all.txt
fail() { echo "FAILED: $*"; exit 1; }
[ $rc -eq 0 ] || fail "$(basename "$tester") exited with $rc"
if grep -E 'FAIL|\*\*\*\*' all.txt >/dev/null; then fail "the tester reported failures (lines above)"; fi
if [ -z "$input" ]; then
  n=$(grep -c -- '----- PASS -----' all.txt)
  [ "$n" -ge 10 ] || fail "only $n subprograms passed"
else
  routines=$(grep -c -E '^[A-Za-z_0-9]+ +T ' "$input")
  layouts=1
  if grep -q 'TO TEST COLUMN-MAJOR' "$input"; then
    flag=$(grep 'TO TEST COLUMN-MAJOR' "$input" | awk '{print $1}')
    [ "$flag" = 2 ] && layouts=2
  fi
  comp=$(grep -c 'PASSED THE .*COMPUTATIONAL TESTS' all.txt)
  errs=$(grep -c 'PASSED THE TESTS OF ERROR-EXITS' all.txt)
  [ "$comp" -ge $((routines * layouts)) ] || fail "$comp computational passes, expected $((routines * layouts))"
  [ "$errs" -ge "$routines" ] || fail "$errs error-exit passes, expected $routines"
  echo "tester: $comp computational and $errs error-exit passes for $routines routines"
fi
if [ "${TSB_EXPECT_RUNTIME:-0}" = 1 ]; then
  n=$(grep -c 'where=runtime' trace.log 2>/dev/null || true)
  [ "${n:-0}" -gt 0 ] || fail "no GEMM call ran on the tile runtime (trace.log)"
  echo "trace: $n GEMM calls ran on the tile runtime"
fi
# TSB_EXPECT_ROUTINES="dsymm_ dsyrk_ ...": each of these must have run on the tile runtime too
for r in ${TSB_EXPECT_ROUTINES:-}; do
  n=$(grep -c " $r .*where=runtime" trace.log 2>/dev/null || true)
  [ "${n:-0}" -gt 0 ] || fail "no $r call ran on the tile runtime (trace.log)"
  echo "trace: $n $r calls ran on the tile runtime"
done
exit 0
