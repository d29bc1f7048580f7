#!/usr/bin/env bash
# depth.sh: `tessera hpl` runs the lookahead depth HPL.dat lists (depths 1 and 2 side by side, on the
# CPU and on a simulated device): the T/V code and the DEPTH line name it, JSON extra.depth carries
# it, both pass (every rank's phase sums reported); a DEPTH beyond the engine's is refused with its file and line.
set -u
tessera=$1
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
export TESSERA_PROGRESS=0 OPENBLAS_NUM_THREADS=1
dat() { # $1: the DEPTHs count line, $2: the DEPTHs line, $3: N
  cat <<DAT
HPLinpack benchmark input file
Tessera depth test
HPL.out      output file name (if any)
6            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$3           Ns
1            # of NBs
32           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
1            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
$1           # of lookahead depth
$2           DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
DAT
}
check_json() { # $1: file, $2: expected depths (comma list), $3: N
  python3 - "$1" "$2" "$3" <<'PY' || fail "JSON $1"
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"] if isinstance(d, dict) else d
want = [int(v) for v in sys.argv[2].split(",")]
n, nb = int(sys.argv[3]), 32
assert len(rs) == len(want), (len(rs), want)
for r, dp in zip(rs, want):
    e = r["extra"]
    assert e["depth"] == dp and e["tv"][2] == str(dp), (e["depth"], e["tv"], dp)
    assert e["passed"] and e["residual"] < 1.0, e
    assert len(e["per_iteration"]) == (n + nb - 1) // nb, len(e["per_iteration"])
    pr = e["per_rank"]  # one rank: its own sums, the per-iteration updates summed
    assert len(pr) == 1 and (pr[0]["row"], pr[0]["col"]) == (0, 0), pr
    u, it = pr[0]["update0"] + pr[0]["update1"], sum(i["update"] for i in e["per_iteration"])
    assert u > 0 and abs(u - it) <= 1e-9 * it, (u, it)
print("ok:", [(r["extra"]["tv"], r["extra"]["depth"], r["extra"]["residual"]) for r in rs])
PY
}
# CPU: depths 1 and 2 side by side, N not a multiple of NB
dat 2 "1 2" 200 >"$work/d12.dat"
"$tessera" hpl --dat "$work/d12.dat" --exec cpu --json "$work/cpu.json" >"$work/out" 2>"$work/err" ||
  { cat "$work/out" "$work/err"; fail "cpu: exit $?"; }
grep -Eq '^DEPTH  : +1 +2 *$' "$work/out" || { cat "$work/out"; fail "no DEPTH line with 1 and 2"; }
grep -Eq '^WR11C2R4 +200 +32 +1 +1 ' "$work/out" || fail "no depth-1 result line"
grep -Eq '^WR21C2R4 +200 +32 +1 +1 ' "$work/out" || fail "no depth-2 result line"
[ "$(grep -c 'PASSED' "$work/out")" -eq 2 ] || { cat "$work/out"; fail "not both PASSED"; }
check_json "$work/cpu.json" 1,2 200
# a simulated device, the flags' test with --depth 2 (three panels: prologue and drain)
TESSERA_SIM_DEVICES=1 "$tessera" hpl -N 90 -NB 32 --depth 2 --exec device --json "$work/dev.json" \
  --plot "$work/dev.svg" >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err"; fail "device: exit $?"; }
grep -Eq '^WR21C2R4 +90 +32 +1 +1 .*' "$work/out" || { cat "$work/out"; fail "no depth-2 result line (device)"; }
grep -q 'PASSED' "$work/out" || fail "device run did not pass"
[ -s "$work/dev.svg" ] || fail "no plot"
check_json "$work/dev.json" 2 90
# a depth the engine does not run: refused with the file and line, nothing run
dat 1 5 200 >"$work/d5.dat"
"$tessera" hpl --dat "$work/d5.dat" --exec cpu >"$work/out" 2>&1; rc=$?
[ $rc -eq 2 ] || { cat "$work/out"; fail "DEPTH 5: exit $rc"; }
grep -q "d5.dat:25: DEPTHs value 5 is out of range: look-ahead depth 0 to 4" "$work/out" ||
  { cat "$work/out"; fail "DEPTH 5: no file:line message"; }
grep -q "PASSED\|WR51" "$work/out" && fail "DEPTH 5 ran"
echo PASSED
