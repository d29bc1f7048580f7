#!/usr/bin/env python3
"""check_report_keys.py: a report of `tessera hpcg` against HPCG 3.1's keys (hpcg31_report_keys.txt).

usage: check_report_keys.py KEYS REPORT WHEN...   (WHEN: the conditions of the run, e.g. valid short quick)

Every key of the report is one of the reference's or in Tessera's own section (after all of the
reference's); the reference's keys whose condition holds are all there, the others are not; they
come in the reference's order; the memory keys add up. Prints each failure, exits 1 on any.
"""
import sys

OWN_BANNER = "########## Tessera (not in HPCG 3.1's report)  ##########"


def own(key):
    return key in (OWN_BANNER, "Tessera") or key.startswith("Tessera::")


def main():
    keys_path, report_path, when = sys.argv[1], sys.argv[2], set(sys.argv[3:]) | {"always"}
    ref = []  # (when, key) in the reference's order
    for line in open(keys_path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        w, k = line.rstrip("\n").split("\t", 1)
        ref.append((w, k))
    order = {k: i for i, (_, k) in enumerate(ref)}
    cond = {k: w for w, k in ref}
    lines = open(report_path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    errors = []
    if not lines or lines[0] != "HPCG-Benchmark":
        errors.append("first line is not 'HPCG-Benchmark'")
    pairs = [("HPCG-Benchmark", None)]
    for n, line in enumerate(lines[1:], 2):
        if "=" not in line:
            errors.append(f"line {n} is not key=value: {line!r}")
            continue
        k, v = line.split("=", 1)
        pairs.append((k, v))
    seen, last_ref, first_own = [], -1, None
    for n, (k, _) in enumerate(pairs):
        if k in order:
            if first_own is not None:
                errors.append(f"reference key after Tessera's section: {k!r}")
            last_ref = n
            if k not in seen:
                seen.append(k)
        elif own(k):
            if first_own is None:
                first_own = n
        else:
            errors.append(f"key not in HPCG 3.1's report: {k!r}")
    present = set(seen)
    for k in seen:
        if cond[k] not in when and cond[k] != "mpi":
            errors.append(f"key written only when '{cond[k]}': {k!r}")
    for w, k in ref:
        if w in when and k not in present:
            errors.append(f"missing key ({w}): {k!r}")
    mpi = [k for w, k in ref if w == "mpi"]
    if any(k in present for k in mpi) and not all(k in present for k in mpi):
        errors.append("DDOT Timing Variations keys incomplete")
    for a, b in zip(seen, seen[1:]):
        if order[b] < order[a]:
            errors.append(f"not in the reference's order: {b!r} after {a!r}")
            break
    if first_own is None:
        errors.append("no Tessera section")
    # The memory keys: the total is the linear system with CG, the coarse grids and the optimized
    # problem (values written with 6 digits).
    vals = {}
    for k, v in pairs:
        vals.setdefault(k, []).append(v)
    mem = "Memory Use Information::"
    try:
        total = float(vals[mem + "Total memory used for data (Gbytes)"][0])
        parts = [float(vals[mem + "Memory used for linear system and CG (Gbytes)"][0]),
                 float(vals[mem + "Memory used for OptimizeProblem data (Gbytes)"][0])]
        coarse = [float(x) for x in vals[mem + "Coarse Grids::Memory used"]]
        levels = [int(x) for x in vals[mem + "Coarse Grids::Grid Level"]]
        if levels != [1, 2, 3]:
            errors.append(f"memory: coarse grid levels {levels}")
        # the reference engine has no optimized problem: 0 there
        if not (total > 0 and parts[0] > 0 and parts[1] >= 0 and all(x > 0 for x in coarse)):
            errors.append(f"memory: a figure out of range: {total} {parts} {coarse}")
        s = sum(parts) + sum(coarse)
        if abs(s - total) > 1e-4 * total:
            errors.append(f"memory: parts add up to {s:g} GB, total {total:g} GB")
    except (KeyError, ValueError) as e:
        errors.append(f"memory keys: {e}")
    for e in errors:
        print(f"{report_path}: {e}")
    if not errors:
        print(f"{report_path}: {len(pairs)} lines, {len(present)} of HPCG 3.1's keys ({' '.join(sorted(when))}), "
              f"{len(pairs) - 1 - last_ref} of Tessera's after them")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
