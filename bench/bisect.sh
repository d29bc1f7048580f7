#!/usr/bin/env bash
# bisect.sh: finds the commit where a GPU figure moved, in one device call. Two halves:
#   here (git, nvcc):  bench/bisect.sh prepare GOOD BAD [PATH...]
#     builds `tessera` for GOOD and for every commit of GOOD..BAD that touches PATH (default: src
#     CMakeLists.txt cmake), incrementally in one build tree (a candidate costs only the files it
#     changed), into .bisect/ (xz-compressed, ~2.3 MB each: the device tool carries 64 MiB), with
#     .bisect/order listing them oldest first. Carry [".bisect"] in the call.
#   GPU machine:       bench/bisect.sh run
#     runs GOOD and BAD, then binary search: a candidate is good when its figure is nearer GOOD's
#     than BAD's. Prints every run and the first bad commit; $OUT/bisect.json (or bench/out) keeps
#     every figure. BISECT_CMD is the run, with {bin} and {json} filled in (default: tessera hpcg
#     at 256^3, --rt ${BISECT_RT:-10}, one GPU); BISECT_FIGURE a key path into the JSON's first
#     result (default extra.rating_gflops).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=.bisect
mode=${1:-}
case $mode in
prepare)
  good=${2:?usage: bench/bisect.sh prepare GOOD BAD [PATH...]}
  bad=${3:?usage: bench/bisect.sh prepare GOOD BAD [PATH...]}
  shift 3
  paths=("$@"); [ ${#paths[@]} -gt 0 ] || paths=(src CMakeLists.txt cmake)
  grep -qx "/$dir/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/$dir/" >>.git/info/exclude; }
  rm -rf "$dir"; mkdir -p "$dir"
  commits=("$(git rev-parse --short=7 "$good")")
  while read -r c; do commits+=("$c"); done < <(git rev-list --reverse --abbrev-commit --abbrev=7 "$good..$bad" -- "${paths[@]}")
  tree=$(mktemp -d /tmp/tessera-bisect.XXXXXX)
  git worktree add -f --detach "$tree/src" "${commits[0]}" >/dev/null || exit 2
  trap 'git worktree remove --force "$tree/src"; rm -rf "$tree"' EXIT
  cmake -S "$tree/src" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DTESSERA_CUDA=ON -DTESSERA_TESTS=OFF \
        "-DTESSERA_CUDA_GENCODE=-gencode=arch=compute_90a,code=sm_90a" >"$tree/cmake.log" 2>&1 ||
    { tail -20 "$tree/cmake.log"; exit 2; }
  for c in "${commits[@]}"; do
    git -C "$tree/src" checkout -q "$c" || exit 2
    TESSERA_COMMIT=$c cmake --build "$tree/build" -j "$(nproc)" --target tessera >"$tree/build.log" 2>&1 ||
      { echo "bisect.sh: $c does not build"; tail -20 "$tree/build.log"; exit 2; }
    xz -T0 -6 -c "$tree/build/bin/tessera" >"$dir/tessera-$c.xz"
    echo "$c" >>"$dir/order"
    echo "bisect.sh: built $c ($(git log -1 --format=%s "$c" | cut -c1-70))"
  done
  du -sh "$dir"
  echo "bisect.sh: device call: carry [\"$dir\"], command bench/bisect.sh run" ;;
run)
  OUT=${OUT:-bench/out}; mkdir -p "$OUT"
  [ -s "$dir/order" ] || { echo "bisect.sh: no $dir/order (bench/bisect.sh prepare first)" >&2; exit 2; }
  mapfile -t order <"$dir/order"
  work=$(mktemp -d /tmp/tessera-bisect.XXXXXX)
  for c in "${order[@]}"; do xz -dc "$dir/tessera-$c.xz" >"$work/tessera-$c" && chmod +x "$work/tessera-$c"; done
  cmd='env CUDA_VISIBLE_DEVICES=0 {bin} hpcg --engine cuda --nx 256 --ny 256 --nz 256 --rt '"${BISECT_RT:-10}"' --json {json}'
  [ -n "${BISECT_CMD:-}" ] && cmd=$BISECT_CMD
  key=${BISECT_FIGURE:-extra.rating_gflops}
  declare -A fig
  measure() { # measure INDEX: the figure of order[INDEX], cached
    local c=${order[$1]}
    if [ -z "${fig[$c]:-}" ]; then
      local j="$work/$c.json" line=${cmd//\{bin\}/$work/tessera-$c}
      line=${line//\{json\}/$j}
      (cd "$work" && eval "$line") >"$OUT/bisect-$c.log" 2>&1
      cp "$j" "$OUT/bisect-$c.json" 2>/dev/null
      fig[$c]=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]
for k in sys.argv[2].split('.'): r=r[k]
print(r)" "$j" "$key" 2>/dev/null || echo nan)
      echo "bisect.sh: $c $key = ${fig[$c]}" >&2
    fi
  }
  lo=0 hi=$((${#order[@]} - 1))
  measure $lo; measure $hi
  g=${fig[${order[$lo]}]} b=${fig[${order[$hi]}]}
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    measure $mid
    if python3 -c "import sys; g,b,m=map(float,sys.argv[1:]); sys.exit(0 if abs(m-g) < abs(m-b) else 1)" \
         "$g" "$b" "${fig[${order[$mid]}]}"; then lo=$mid; else hi=$mid; fi
  done
  echo "bisect.sh: last good ${order[$lo]} (${fig[${order[$lo]}]}), first bad ${order[$hi]} (${fig[${order[$hi]}]}); $key"
  for c in "${order[@]}"; do echo "$c ${fig[$c]:-}"; done | python3 -c "import json,sys
f={}
for line in sys.stdin:
    c,*v=line.split()
    if v: f[c]=float(v[0])
json.dump({'key': sys.argv[1], 'last_good': sys.argv[2], 'first_bad': sys.argv[3], 'figures': f}, sys.stdout, indent=1)" \
    "$key" "${order[$lo]}" "${order[$hi]}" >"$OUT/bisect.json" ;;
*) sed -n '2,14p' "$0"; exit 2 ;;
esac
