#!/usr/bin/env python3
"""summarize.py: prints a short table of every results-schema JSON given (the last lines of a device run)."""
import json
import sys


def rows(path):
    try:
        doc = json.load(open(path))
    except Exception as e:  # a failed step leaves no or a partial file
        yield (path, "unreadable: %s" % e)
        return
    for r in doc.get("results", []):
        s = r.get("shape", {})
        shape = "x".join(str(s[k]) for k in ("m", "n", "k") if k in s) or \
            " ".join("%s=%s" % (k, v) for k, v in r.get("extra", {}).items() if k in ("N", "NB", "P", "Q"))
        ops = (s.get("transa", "") + s.get("transb", "")) if "transa" in s else ""
        if "routine" in s:  # tessera blas3: the routine and its side/uplo/trans/diag letters
            ops = s["routine"] + ":" + "".join(s.get(k, "-") for k in ("side", "uplo", "trans", "diag"))
        x = r.get("extra", {})
        vs = "".join(" %s %.2fx" % (k, x[k]) for k in ("ratio", "vs_gemm") if isinstance(x.get(k), (int, float)))
        if "xt_block" in x:
            ops += " xt%d" % x["xt_block"]
        tf = r.get("tflops", {}).get("median")
        sec = r.get("seconds", {}).get("median")
        ver = "ok" if r.get("verified") else "SKIP"
        if r.get("verified") and r.get("error") is not None and r.get("bound") is not None:
            ver = "ok" if r["error"] <= r["bound"] else "FAIL"
        if "passed" in r.get("extra", {}):
            ver = "PASSED" if r["extra"]["passed"] else "FAILED"
            if r.get("bench") == "hpl" and "P" in x:  # the process grid and the rate per GPU
                ver += " (%sx%s%s)" % (x["P"], x["Q"], ", %.2f TF a GPU" % (x["gflops_per_gpu"] / 1e3)
                                       if isinstance(x.get("gflops_per_gpu"), (int, float)) else "")
        if r.get("bench") == "hpcg":  # grid per rank, and HPCG's verdict with the rating
            shape = "%sx%sx%s" % (x.get("nx"), x.get("ny"), x.get("nz"))
            ver = ("VALID" if x.get("valid") else "INVALID") + " %.1f GF" % x.get("rating_gflops", 0)
            ver += " (%sx%sx%s ranks, %s it%s%s)" % (x.get("npx"), x.get("npy"), x.get("npz"), x.get("opt_iters"),
                                                   ", " + x["halo"] if x.get("halo") not in (None, "none") else "",
                                                   ", graph" if x.get("mg_graph") else "")
        yield ("%-6s %-8s %-2s %-22s %-3s %10s %9s %s" % (
            r.get("bench", "?"), r.get("engine", "?"), r.get("precision", ""), shape, ops,
            "%.4f s" % sec if sec is not None else "-",
            "%.2f TF" % tf if tf is not None else "-", ver) + vs,)


print("%-6s %-8s %-2s %-22s %-3s %10s %9s %s" % ("bench", "engine", "p", "shape", "op", "median", "rate", "check"))
for p in sys.argv[1:]:
    for row in rows(p):
        print(*row)
