#!/usr/bin/env bash
# spills.sh: the resource report of our CUDA kernels on this machine (no GPU needed: nvcc only):
# every kernel that uses a stack frame or spills, per file. Run it before a kernel change goes to
# the GPU machine (a per-thread choice between two parameter structs once spilled 104 bytes and
# cost HPCG 15-23%, seen only on the GPU). Usage: bench/spills.sh [BUILD_DIR] [FILE.cu ...]
# Exit 1 when a kernel spills. Known today (bench/NOTES.md): a few DGEMM variants (12-44 bytes,
# bounds-free copies) and the SGEMM async variants (16-56 bytes); the HPCG kernels none.
set -uo pipefail
build=${1:-build}
shift || true
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(src/kernels/cuda/*.cu src/algorithms/*/cuda/*.cu)
command -v nvcc >/dev/null || { echo "spills.sh: no nvcc" >&2; exit 2; }
inc=$build/generated; [ -d "$inc" ] || inc=$build
bad=0
for cu in "${files[@]}"; do
  out=$(nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Isrc -I"$inc" -Xptxas=-v -cubin "$cu" \
        -o /tmp/spills_$$.cubin 2>&1) || { echo "$cu: nvcc failed"; echo "$out" | tail -5; bad=1; continue; }
  # pairs of lines: "Compiling entry function 'NAME'" ... "N bytes stack frame, S bytes spill stores, L bytes spill loads"
  echo "$out" | awk -v f="$cu" '
    /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); k = substr($0, RSTART + 1, RLENGTH - 2) }
    /bytes stack frame/ { if ($1 + 0 > 0 || $5 + 0 > 0 || $9 + 0 > 0) { print f ": " k ": " $0; n++ } }
    END { exit n > 0 }' || bad=1
done
rm -f /tmp/spills_$$.cubin
[ $bad = 0 ] && echo "spills.sh: no kernel spills or uses a stack frame (${#files[@]} files)"
exit $bad
