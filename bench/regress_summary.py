#!/usr/bin/env python3
"""regress_summary.py: the figures of bench/regress.sh's runs, HEAD against BASE.

Usage: regress_summary.py OUT.json BASE HEAD RUN.json...   (RUN files named STEP-VARIANT-REP.json)

Every figure of a run (HPCG: rating and the phases' GFLOP/s; GEMM: TFLOP/s per engine, shape and
ops; HPL: TFLOP/s; blas3: TFLOP/s per routine and size) is paired with the same figure of the other variant in the same repetition;
the ratio HEAD/BASE is printed as the median of those pairs with their min and max (the spread),
and all runs plus the ratios are written to OUT.json (results schema, "variant" on each result).
"""
import json
import os
import re
import statistics
import sys


def figures(res):
    """name -> value for one result entry."""
    b, e, x = res.get("bench"), res.get("engine", ""), res.get("extra", {})
    out = {}
    if b == "hpcg":
        out["hpcg rating GFLOP/s"] = x.get("rating_gflops")
        for ph in ("spmv", "mg", "ddot", "waxpby"):
            g = x.get("phases", {}).get(ph, {}).get("gflops")
            if g is not None:
                out["hpcg %s GFLOP/s" % ph] = g
    elif b == "blas3":
        sh = res.get("shape", {})
        letters = "".join(str(sh.get(k, "")) for k in ("side", "uplo", "trans", "diag"))
        out["blas3 %s %s %s %s%s TFLOP/s" % (e, sh.get("routine"), res.get("precision", ""), sh.get("m"),
                                             " " + letters if letters else "")] = res.get("tflops", {}).get("median")
    elif b in ("gemm", "hpl"):
        sh = res.get("shape", {})
        tag = "x".join(str(sh[k]) for k in ("m", "n", "k") if k in sh)
        if sh.get("transa"):
            tag += " " + sh.get("transa", "") + sh.get("transb", "")
        out["%s %s %s TFLOP/s" % (b, e, tag)] = res.get("tflops", {}).get("median")
    return {k: v for k, v in out.items() if isinstance(v, (int, float))}


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    out, base, head, files = argv[1], argv[2], argv[3], argv[4:]
    runs = {}  # (step, rep) -> variant -> figures
    doc = None
    allres = []
    valid = {}
    for f in sorted(files):
        m = re.match(r"(.+)-(base|head)-(\d+)\.json$", os.path.basename(f))
        if not m:
            continue
        step, var, rep = m.group(1), m.group(2), int(m.group(3))
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            continue
        if doc is None:
            doc = {k: v for k, v in d.items() if k != "results"}
        figs = {}
        for r in d.get("results", []):
            r = dict(r)
            r["variant"], r["step"], r["rep"], r["commit"] = var, step, rep, d.get("commit")
            allres.append(r)
            figs.update(figures(r))
            if r.get("bench") == "hpcg":
                valid.setdefault(var, []).append(bool(r.get("extra", {}).get("valid")))
        runs.setdefault((step, rep), {})[var] = figs
    ratios = {}
    for (step, rep), vs in sorted(runs.items()):
        if "base" not in vs or "head" not in vs:
            continue
        for k, hv in vs["head"].items():
            bv = vs["base"].get(k)
            if bv:
                ratios.setdefault((step, k), []).append((bv, hv, hv / bv))
    rows = []
    print("%-8s %-44s %12s %12s %8s  %s" % ("step", "figure", "BASE", "HEAD", "ratio", "spread (pairs)"))
    for (step, k), prs in sorted(ratios.items()):
        rs = [p[2] for p in prs]
        row = {"step": step, "figure": k, "base": [p[0] for p in prs], "head": [p[1] for p in prs],
               "ratio_median": statistics.median(rs), "ratio_min": min(rs), "ratio_max": max(rs)}
        rows.append(row)
        print("%-8s %-44s %12.2f %12.2f %8.3f  %.3f-%.3f (%d)" % (
            step, k, statistics.median(row["base"]), statistics.median(row["head"]), row["ratio_median"],
            row["ratio_min"], row["ratio_max"], len(rs)))
    for v, ok in sorted(valid.items()):
        if not all(ok):
            print("warning: %s had %d INVALID HPCG run(s)" % (v, ok.count(False)))
    if doc is None:
        print("regress_summary.py: no run produced a JSON file", file=sys.stderr)
        return 3
    doc["tool"] = "bench/regress.sh"
    doc["base"], doc["head"] = base, head
    doc["commit"] = head
    doc["ratios"] = rows
    doc["results"] = allres
    with open(out, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print("regress: %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
