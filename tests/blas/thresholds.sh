#!/usr/bin/env bash
# thresholds.sh: the per-routine offload thresholds of libtessera_blas (docs/blas.md) and the
# crossover tool that measures them. usage: thresholds.sh LIB CLIENT CROSSOVER
# The client (blas_client.c) calls dgemm_ and cblas_dgemm at m*n*k = 300*280*260 = 21840000.
set -u
lib=$1 client=$2 crossover=$3
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
unset TESSERA_BLAS_THRESHOLD TESSERA_BLAS_CONF
# run NAME EXPECT(runtime|cpu-blas) [VAR=VALUE...]: the client's dgemm_ must run where EXPECT says
run() {
  local name=$1 expect=$2; shift 2
  rm -f "$work/trace"
  env "$@" TESSERA_BLAS_TRACE="$work/trace" LD_PRELOAD="${TSB_ASAN_RUNTIME:+$TSB_ASAN_RUNTIME:}$lib" "$client" >"$work/out" 2>&1 ||
    { cat "$work/out"; fail "$name: the client failed"; }
  grep -q "^tessera_blas: dgemm_ .*where=$expect" "$work/trace" ||
    { cat "$work/trace"; fail "$name: dgemm_ did not run on $expect"; }
  echo "ok: $name: dgemm_ where=$expect"
}
run "routine threshold at the call's size" runtime TESSERA_BLAS_THRESHOLD_DGEMM=21840000
run "routine threshold one above it" cpu-blas TESSERA_BLAS_THRESHOLD_DGEMM=21840001
run "routine 'none'" cpu-blas TESSERA_BLAS_THRESHOLD=0 TESSERA_BLAS_THRESHOLD_DGEMM=none
run "routine key over the global one" runtime TESSERA_BLAS_THRESHOLD=none TESSERA_BLAS_THRESHOLD_DGEMM=0
run "another routine's key does not apply" cpu-blas TESSERA_BLAS_THRESHOLD=none TESSERA_BLAS_THRESHOLD_ZGEMM=0
run "the default DGEMM threshold (384^3) is above the call" cpu-blas
printf 'TESSERA_BLAS_THRESHOLD_DGEMM = 0\n' >"$work/conf"
run "routine key from the file" runtime TESSERA_BLAS_CONF="$work/conf"
run "the environment over the file" cpu-blas TESSERA_BLAS_CONF="$work/conf" TESSERA_BLAS_THRESHOLD=none
# a malformed value stops the program with the key named
env TESSERA_BLAS_THRESHOLD_DTRSM=lots LD_PRELOAD="${TSB_ASAN_RUNTIME:+$TSB_ASAN_RUNTIME:}$lib" "$client" >"$work/out" 2>&1 &&
  fail "TESSERA_BLAS_THRESHOLD_DTRSM=lots was accepted"
grep -q "TESSERA_BLAS_THRESHOLD_DTRSM='lots' is not an integer" "$work/out" || { cat "$work/out"; fail "no message naming the key"; }
echo "ok: a malformed routine threshold is refused with its key"

# The crossover tool on the simulated devices: every result checked against the CPU BLAS, the
# JSON complete, and the configuration it writes accepted by the library.
routines=dgemm,zgemm,ssymm,chemm,dsyrk,zherk,csyr2k,zher2k,strmm,ztrsm
"$crossover" "$lib" --routines $routines --sizes 8,40,72 --min-time 0 --json "$work/x.json" --conf "$work/x.conf" >"$work/out" 2>&1 ||
  { cat "$work/out"; fail "blas_crossover exited $?"; }
python3 - "$work/x.json" "$routines" <<'PY' || fail "blas_crossover's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2].split(",")
assert d["bench"] == "blas-crossover" and d["check_ok"] is True, d.get("check_ok")
got = [r["routine"] for r in d["routines"]]
assert got == want, got
for r in d["routines"]:
    assert [p["n"] for p in r["points"]][:1] == [8], r
    for p in r["points"]:
        assert p["check_ok"] and 0 <= p["check"] <= 4, p
        assert p["cpu_s"] > 0 and p["tessera_s"] > 0 and p["calls_cpu"] >= 3, p
    assert r["crossover_n"] == -1 or r["threshold"] == r["crossover_n"] ** 3, r
print("ok: JSON of", len(got), "routines, every point checked")
PY
[ "$(grep -c '^TESSERA_BLAS_THRESHOLD_[A-Z0-9]* = ' "$work/x.conf")" = 10 ] || { cat "$work/x.conf"; fail "the conf file lacks routines"; }
run "the crossover tool's conf file is accepted" cpu-blas TESSERA_BLAS_CONF="$work/x.conf" TESSERA_BLAS_THRESHOLD_DGEMM=none
# a corrupted offload fails the tool's check (exit 1), not the timing
env TESSERA_SIM_DEVICES=1 TESSERA_BLAS_CPU_RATIO=0 TESSERA_SIM_FAULTS=dev=0,flip=1,bit=62 "$crossover" "$lib" --routines dgemm --sizes 32 --min-time 0 >"$work/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "CHECK FAILED" "$work/out" || { cat "$work/out"; fail "a flipped exponent bit passed the check (exit $rc)"; }
echo "ok: a corrupted offloaded result fails the check"
echo "PASSED"
