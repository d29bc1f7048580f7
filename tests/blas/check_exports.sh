#!/usr/bin/env bash
# check_exports.sh: libtessera_blas.so exports exactly the listed BLAS/CBLAS symbols and never calls its own exports.
# usage: check_exports.sh LIB FORTRAN_LIST CBLAS_LIST [SONAME (default libtessera_blas.so.0)]
set -u
lib=$1 flist=$2 clist=$3 want_soname=${4:-libtessera_blas.so.0}
fail() { echo "FAILED: $*"; exit 1; }
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "$want_soname" ] || fail "SONAME '$soname', expected '$want_soname'"
readelf -d "$lib" | grep NEEDED | grep -q openblas && fail "links the build-time OpenBLAS (the CPU BLAS must be dlopen'ed)"
want=$( (grep -v '^#' "$flist"; grep -v '^#' "$clist"; echo RowMajorStrg; echo CBLAS_CallFromC) | sort -u)
have=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
extra=$(comm -13 <(echo "$want") <(echo "$have"))
missing=$(comm -23 <(echo "$want") <(echo "$have"))
[ -z "$extra" ] || fail "exports beyond the BLAS/CBLAS lists: $extra"
[ -z "$missing" ] || fail "missing exports: $missing"
# dynamic relocations against BLAS names = calls from inside the library to an interposable BLAS
# symbol; only the error handlers and the CBLAS globals may be reached that way
self=$(readelf -rW "$lib" | awk '{print $5}' | grep -x -F -f <(echo "$want") | grep -v -x -E 'xerbla_|cblas_xerbla|RowMajorStrg|CBLAS_CallFromC' | sort -u)
[ -z "$self" ] || fail "the library calls its own exports (would recurse): $self"
echo "PASSED: $(echo "$have" | wc -l) exported symbols, SONAME $soname, no self-calls"
