#!/usr/bin/env bash
# install-deps.sh: installs the Debian/Ubuntu packages Tessera needs, when missing.
# Usage: install-deps.sh [build|test]: `build` (make run) needs the compiler, CMake and OpenBLAS,
# with MPI optional; `test` (make test) adds cmocka, python3 and the reference BLAS testers (LP64
# and ILP64, with the ILP64 OpenBLAS the ILP64 library forwards to).
# As root it runs apt-get itself; otherwise it prints the exact command to run. Only a missing
# required package is fatal: a machine without a package mirror still builds what it can.
set -euo pipefail
mode=${1:-test}

# package -> a file that shows it is installed
declare -A probe=(
  [cmake]=/usr/bin/cmake
  [make]=/usr/bin/make
  [gcc]=/usr/bin/gcc
  [pkg-config]=/usr/bin/pkg-config
  [libopenblas-dev]=/usr/lib/x86_64-linux-gnu/pkgconfig/openblas.pc
  [libopenmpi-dev]=/usr/lib/x86_64-linux-gnu/pkgconfig/ompi-c.pc
  [openmpi-bin]=/usr/bin/mpiexec
  [libcmocka-dev]=/usr/lib/x86_64-linux-gnu/pkgconfig/cmocka.pc
  [python3]=/usr/bin/python3
  [libblas-test]=/usr/lib/x86_64-linux-gnu/blas/xblat3d
  [libblas64-test]=/usr/lib/x86_64-linux-gnu/blas64/xblat3d
  [libopenblas64-0-pthread]=/usr/lib/x86_64-linux-gnu/libopenblas64.so.0
)
required=(cmake make gcc pkg-config libopenblas-dev)
optional=(libopenmpi-dev openmpi-bin)
if [ "$mode" = test ]; then
  required+=(libcmocka-dev python3)
  optional+=(libblas-test libblas64-test libopenblas64-0-pthread)
fi

installed() { # a tool may live elsewhere on PATH (e.g. a newer cmake in /usr/local/bin)
  local f=${probe[$1]}
  [ -e "$f" ] || { [[ $f == /usr/bin/* ]] && command -v "$(basename "$f")" >/dev/null 2>&1; }
}
missing=() missing_required=()
for pkg in "${required[@]}" "${optional[@]}"; do
  installed "$pkg" && continue
  missing+=("$pkg")
  [[ " ${required[*]} " == *" $pkg "* ]] && missing_required+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "tessera: missing packages: ${missing[*]}" >&2
  echo "tessera: run as root:  apt-get update && $cmd" >&2
  [ ${#missing_required[@]} -eq 0 ] && exit 0
  exit 1
fi
echo "tessera: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  exit 0
fi
# Installing all at once failed (no mirror, or a package unknown here): try one by one.
for pkg in "${missing[@]}"; do
  apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 ||
    echo "tessera: could not install $pkg" >&2
done
for pkg in "${missing_required[@]}"; do
  installed "$pkg" || { echo "tessera: required package $pkg is missing: $cmd" >&2; exit 1; }
done
exit 0
