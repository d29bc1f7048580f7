# grid_phases.sh MPIEXEC TESSERA: a 1 x 2 grid on two ranks (CPU path) reports its refinement's phases:
# extra.refinement_phases in the JSON (every phase, none negative, together no more than the
# refinement's seconds and all but a little of them: they tile it) and the phases line of -v's log.
mpiexec=$1 tessera=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$mpiexec" --oversubscribe --allow-run-as-root -n 2 "$tessera" hpl-mxp -N 400 -NB 64 -P 1 -Q 2 --exec cpu -v \
    --json "$tmp/g.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then cat "$tmp/out"; echo "grid_phases: tessera exited $rc"; exit 1; fi
grep -q "refinement phases on rank 0 (s): first_forward" "$tmp/out" || { cat "$tmp/out"; echo "grid_phases: no phases line"; exit 1; }
python3 - "$tmp/g.json" <<'PY' || exit 1
import json, sys
e = json.load(open(sys.argv[1]))["results"][0]["extra"]
assert e["P"] == 1 and e["Q"] == 2 and e["passed"] is True, e
ph = e["refinement_phases"]
names = ["first_forward", "first_back", "residual_regeneration", "residual_reduction",
         "correction_forward", "correction_back", "solution_update", "breakdown_check"]
assert sorted(ph) == sorted(names), ph
assert all(v >= 0 for v in ph.values()), ph
assert ph["first_forward"] > 0 and ph["first_back"] > 0 and ph["residual_regeneration"] > 0, ph
assert e["iterations"] == 0 or (ph["correction_forward"] > 0 and ph["correction_back"] > 0), ph
t, s = e["refinement_seconds"], sum(ph.values())
assert s <= t * (1 + 1e-9) + 1e-9, (s, t)
# the phases tile the refinement up to its last residual: only the return from there is outside
assert s >= 0.9 * t or t - s <= 0.05, (s, t)
print("grid phases ok: %.4f of %.4f s" % (s, t))
PY
