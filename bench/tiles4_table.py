#!/usr/bin/env python3
"""tiles4_table.py OUTDIR: the ratios of issue #29's bars from bench/tiles4.sh's gemm-tiles4.json and blas3-tiles4.json."""
import json, os, sys
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    return json.load(open(p))["results"] if os.path.exists(p) else []
def tf(r): return r["tflops"]["median"] if isinstance(r.get("tflops"), dict) else r.get("tflops_median", r.get("tflops"))
g = rows("gemm-tiles4.json")
if g:
    t = {r["extra"]["devices"]: tf(r) for r in g if r["engine"] == "tiles"}
    x = {r["extra"]["devices"]: tf(r) for r in g if r["engine"] == "cublasxt"}
    G = max(t)
    print("DGEMM n=%d (host operands): TFLOP/s by GPUs" % g[0]["shape"]["n"])
    for d in sorted(t): print("  %d GPU: tiles %7.2f  cublasxt %7.2f  tiles/xt %.2fx  tiles vs 1 GPU %.2fx" % (d, t[d], x.get(d, float("nan")), t[d] / x[d] if d in x else float("nan"), t[d] / t[min(t)]))
    ok1 = t[G] / t[min(t)] >= 3.85 if G == 4 else None
    print("  bar: tiles %d GPUs / 1 GPU = %.2fx (>= 3.85 on 4: %s); tiles / cublasxt on %d = %.2fx (>= 1.4: %s)" % (G, t[G] / t[min(t)], ok1, G, t[G] / x.get(G, float("nan")), t[G] / x.get(G, float("nan")) >= 1.4))
    print("  all rows verified: %s" % all(r["extra"].get("passed") for r in g))
b = rows("blas3-tiles4.json")
if b:
    ref = [tf(r) for r in b if r["extra"]["routine"] == "gemm"]
    print("Level-3, n=%s on %d GPUs: tile DGEMM %.2f TFLOP/s" % (b[0]["shape"].get("n", b[0]["shape"].get("m")), b[0]["extra"]["devices"], ref[0] if ref else float("nan")))
    for rt in ("symm", "syrk", "syr2k", "trmm", "trsm"):
        ti = [r for r in b if r["extra"]["routine"] == rt and r["engine"] == "tiles"]
        xt = [r for r in b if r["extra"]["routine"] == rt and r["engine"] == "cublasxt"]
        if not ti: continue
        a = tf(ti[0]); c = tf(xt[0]) if xt else float("nan")
        print("  %-5s tiles %7.2f  cublasxt %7.2f  vs DGEMM %.2fx (>= 0.90: %s)  vs cublasxt %.2fx (>= 1.2: %s)  %s" % (rt, a, c, ti[0]["extra"].get("vs_gemm", float("nan")), ti[0]["extra"].get("vs_gemm", 0) >= 0.90, a / c, a / c >= 1.2, "PASS" if ti[0]["extra"].get("passed") else "CHECK FAILED"))
