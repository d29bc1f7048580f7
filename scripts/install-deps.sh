#!/usr/bin/env bash
# install-deps.sh: installs the Debian/Ubuntu packages Tessera's build and tests need, when missing.
# As root it runs apt-get itself; otherwise it prints the exact command to run and fails.
set -euo pipefail

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
)
missing=()
for pkg in "${!probe[@]}"; do
  f=${probe[$pkg]}
  # a tool may live elsewhere on PATH (e.g. a newer cmake in /usr/local/bin)
  if [ -e "$f" ] || { [[ $f == /usr/bin/* ]] && command -v "$(basename "$f")" >/dev/null 2>&1; }; then
    continue
  fi
  missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
IFS=$'\n' missing=($(sort <<<"${missing[*]}")); unset IFS
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "tessera: missing packages: ${missing[*]}" >&2
  echo "tessera: run as root:  apt-get update && $cmd" >&2
  exit 1
fi
echo "tessera: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
