#!/usr/bin/env python3
"""headline.py: the figures README.md quotes, each beside its baseline, in one JSON file.

  headline.py collect DIR KIND COMMIT [--out FILE]
      reads the step outputs bench/headline.sh wrote into DIR (results-schema JSON, names below)
      and writes bench/results/KIND/headline-COMMIT.json (or FILE): every figure with its baseline
      measured in the same call, the ratio, the device, the commit and the date.
  headline.py assemble KIND [--out FILE]
      the same file assembled only from results already committed under bench/results/ (each
      figure names its source file): the figures README.md quoted before the first headline run.

The extraction is the same for both: a figure is read from a results-schema file by what it
measured (bench, engine, shape), never by position.
"""
import json
import os
import sys
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    with open(path) as f:
        return json.load(f)


def rel(path):
    return os.path.relpath(os.path.abspath(path), ROOT)


def pick(doc, **want):
    """The first result whose fields (and shape / extra entries: shape_m=..., extra_x=...) match."""
    for r in doc.get("results", []):
        ok = True
        for k, v in want.items():
            if k.startswith("shape_"):
                got = (r.get("shape") or {}).get(k[6:])
            elif k.startswith("extra_"):
                got = (r.get("extra") or {}).get(k[6:])
            else:
                got = r.get(k)
            if got != v:
                ok = False
                break
        if ok:
            return r
    raise KeyError(f"no result with {want}")


def med(r):
    return r["tflops"]["median"]


def meta(doc):
    dev = (doc.get("devices") or [{}])[0].get("name")
    if not dev:  # some tools list no devices; HPCG and gemm name it in extra
        for r in doc.get("results", []):
            dev = (r.get("extra") or {}).get("device")
            if isinstance(dev, str):
                break
            dev = None
    return {"commit": doc.get("commit"), "date": doc.get("date"), "device": dev}


def fig(fid, label, unit, value, base_label, base_value, better, src, src_doc, passed=True,
        base_src=None, base_doc=None, note=None):
    ratio = value / base_value if base_value else None
    e = {"id": fid, "label": label, "unit": unit, "value": round(value, 4),
         "baseline": base_label, "baseline_value": round(base_value, 4),
         "ratio": round(ratio, 4) if ratio is not None else None, "better": better,
         "passed": bool(passed), "source": rel(src)}
    e.update(meta(src_doc))
    if base_src and rel(base_src) != rel(src):
        e["baseline_source"] = rel(base_src)
        e["baseline_commit"] = meta(base_doc)["commit"]
    if note:
        e["note"] = note
    return e


# ------------------------------------------------------------------ figures by kind of file

def gemm_bars(path, shapes):
    """own DGEMM against cuBLAS, one figure per (m, n, k, ta, tb)."""
    d = load(path)
    out = []
    for m, n, k, ta, tb in shapes:
        sel = dict(bench="gemm", precision="d", shape_m=m, shape_n=n, shape_k=k, shape_transa=ta, shape_transb=tb)
        own, cub = pick(d, engine="tessera", **sel), pick(d, engine="cublas", **sel)
        shape = f"{m}" if m == n == k else f"{m}^2 x {k}"
        out.append(fig(f"dgemm-{m}x{n}x{k}-{ta}{tb}".lower(), f"own DGEMM {shape} {ta}{tb}", "TFLOP/s",
                       med(own), "cuBLAS DGEMM", med(cub), "higher", path, d,
                       passed=(own.get("extra") or {}).get("passed", own.get("verified", True))))
    return out


def hpl_full(path, sustained_path):
    """HPL against its DGEMM ceiling: the ceiling measured in the same process (`hpl --ceiling`,
    extra.ceiling_tflops), else a separate sustained cuBLAS run (sustained_path: a callable giving
    the step's file, called only then)."""
    d = load(path)
    r = pick(d, bench="hpl")
    x = r["extra"]
    label = f"tessera hpl N = {x['N']}, NB = {x['NB']}, {x['P']} x {x['Q']}"
    if "ceiling_tflops" in x:
        c = x["ceiling"]
        return [fig("hpl", label, "TFLOP/s", med(r),
                    f"DGEMM ceiling: {c['engine']} {c.get('op', 'NN')} held {c['seconds_per_engine']:g} s on {c['m']} x {c['n']} x {c['k']}, same run",
                    x["ceiling_tflops"], "higher", path, d, passed=x.get("passed"))]
    sp = sustained_path() if callable(sustained_path) else sustained_path
    s = load(sp)
    b = pick(s, bench="gemm", engine="cublas")
    return [fig("hpl", label, "TFLOP/s", med(r),
                f"cuBLAS DGEMM held on HPL's update shape ({b['shape']['m']} x {b['shape']['n']} x {b['shape']['k']})",
                med(b), "higher", path, d, passed=x.get("passed"), base_src=sp, base_doc=s)]


def hpl_lu(path):
    d = load(path)
    r, lu = pick(d, bench="hpl"), pick(d, bench="lu")
    x = lu["extra"]
    return [fig("hpl-lu-32768", f"LU time at N = {r['extra']['N']}, NB = {r['extra']['NB']} (no solve)", "s",
                x["tessera_lu_seconds"], "cuSOLVER dgetrf on the same matrix", lu["seconds"]["median"], "lower",
                path, d, passed=r["extra"].get("passed") and x.get("passed"))]


def burn(path):
    d = load(path)
    r = pick(d, bench="burn")
    x = r["extra"]
    return [fig("burn", f"tessera burn, every product checked, {x['seconds']:.0f} s, {x['errors']} errors",
                "TFLOP/s", x["sustained_tflops"], "plain DGEMM, same engine, same run", x["plain_tflops"],
                "higher", path, d, passed=x.get("errors") == 0 and x.get("status") == "ok")]


def host_gemm(path, sizes, xt_block=8192):
    d = load(path)
    out = []
    for n in sizes:
        t = pick(d, bench="gemm", engine="tiles", shape_m=n)
        x = pick(d, bench="gemm", engine="cublasxt", shape_m=n, extra_xt_block=xt_block)
        out.append(fig(f"tiles-gemm-{n}", f"host-resident DGEMM n = {n}, tile runtime", "TFLOP/s", med(t),
                       f"cuBLASXt, block {xt_block}", med(x), "higher", path, d,
                       passed=(t.get("extra") or {}).get("passed", t.get("verified", True))))
    return out


def blas3(path, n, routines=("symm", "syrk", "syr2k", "trmm", "trsm"), xt_block=8192):
    d = load(path)
    out = []
    for rt in routines:
        sel = dict(bench="blas3", extra_routine=rt)
        t = next(r for r in d["results"] if r.get("bench") == "blas3" and r["engine"] == "tiles"
                 and r["extra"]["routine"] == rt and (r["shape"].get("m") or r["shape"].get("n")) == n)
        x = next(r for r in d["results"] if r.get("bench") == "blas3" and r["engine"] == "cublasxt"
                 and r["extra"]["routine"] == rt and (r["shape"].get("m") or r["shape"].get("n")) == n
                 and r["extra"].get("xt_block") == xt_block)
        del sel
        out.append(fig(f"blas3-d{rt}-{n}", f"D{rt.upper()} n = {n}, tile runtime", "TFLOP/s", med(t),
                       f"cuBLASXt, block {xt_block}", med(x), "higher", path, d,
                       passed=x["extra"].get("passed", True) and t.get("verified", True)))
    return out


def hpcg_pair(ours_path, ours_rating, nvidia_path, commit, note=None):
    d, n = load(ours_path), load(nvidia_path)
    nv = pick(n, bench="hpcg", engine="nvidia-hpcg")["extra"]
    ours = ours_rating(d)
    e = fig("hpcg-256", "tessera hpcg 256^3, 1 rank, VALID", "GFLOP/s", ours, "NVIDIA HPCG 0.6.2, same call",
                nv["rating_gflops"], "higher", ours_path, d, passed=nv.get("valid"),
                base_src=nvidia_path, base_doc=n, note=note)
    e["commit"] = commit  # the side of the file that was ours
    return [e]


def hpcg_vs_nvidia(path):
    d = load(path)
    ours = pick(d, bench="hpcg", engine="cuda")["extra"]
    nv = pick(d, bench="hpcg", engine="nvidia-hpcg")["extra"]
    return [fig("hpcg-256", "tessera hpcg 256^3, 1 rank, VALID", "GFLOP/s", ours["rating_gflops"],
                "NVIDIA HPCG 0.6.2, same call", nv["rating_gflops"], "higher", path, d,
                passed=ours.get("valid") and nv.get("valid"))]


SQUARES = [(n, n, n, a, b) for n in (4096, 8192, 16384) for a, b in (("N", "N"), ("N", "T"), ("T", "N"), ("T", "T"))]
RANKK = [(16384, 16384, k, "N", "N") for k in (256, 512, 1024)]


def figures_from(step, missing=None):
    """step(name) -> path of that step's JSON; the figure list in README order. With a list in
    `missing`, a step whose file or figure is absent is named there instead of failing."""
    groups = [lambda: gemm_bars(step("bars-square"), SQUARES),
              lambda: gemm_bars(step("bars-rankk"), RANKK),
              lambda: hpl_full(step("hpl"), lambda: step("gemm-sustained")),
              lambda: hpl_lu(step("hpl-32768")),
              lambda: burn(step("burn")),
              lambda: host_gemm(step("gemm-host"), (16384, 32768)),
              lambda: blas3(step("blas3"), 32768)]
    f = []
    for g in groups:
        try:
            f += g()
        except (OSError, KeyError, StopIteration, ValueError) as e:
            if missing is None:
                raise
            missing.append(f"{type(e).__name__}: {e}")
    return f


def document(kind, commit, figures, assembled):
    devs = sorted({e.get("device") for e in figures if e.get("device")})
    return {"tool": "bench/headline.sh", "kind": kind, "commit": commit,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "devices": devs, "assembled_from_results": assembled, "figures": figures}


def main(argv):
    if len(argv) < 3 or argv[1] not in ("collect", "assemble"):
        sys.exit(__doc__)
    out = None
    if "--out" in argv:
        i = argv.index("--out")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if argv[1] == "collect":
        d, kind, commit = argv[2], argv[3], argv[4]
        missing = []
        figs = figures_from(lambda name: os.path.join(d, name + ".json"), missing)
        try:
            figs += hpcg_vs_nvidia(os.path.join(d, "hpcg-vs-nvidia-1.json"))
        except (OSError, KeyError, ValueError) as e:
            missing.append(f"{type(e).__name__}: {e}")
        for e in figs:  # the step files travel in headline-results.tgz, not in the tree
            for k in ("source", "baseline_source"):
                if k in e:
                    e[k] = "headline step " + os.path.basename(e[k])
        doc = document(kind, commit, figs, False)
        if missing:
            doc["missing"] = missing
            for m in missing:
                print(f"headline.py: missing {m}", file=sys.stderr)
    else:
        kind = argv[2]
        if kind != "h200":
            sys.exit("headline.py assemble: only h200 has a complete committed set")
        r = os.path.join(ROOT, "bench", "results", "h200")
        src = {"bars-square": "bars-square-2026-11-25-c551f05.json", "bars-rankk": "bars-rankk-2026-11-25-c551f05.json",
               "hpl": "hpl-nopipe-2026-11-25-bd0e6e5.json", "gemm-sustained": "gemm-sustained-2026-11-23-4584bc0.json",
               "hpl-32768": "hpl-32768-nopipe-2026-11-25-bd0e6e5.json", "burn": "burn-2026-11-22-98995fd.json",
               "gemm-host": "gemm-host-2026-11-25-da49fbf.json", "blas3": "blas3-2026-11-25-da49fbf.json"}
        figs = figures_from(lambda name: os.path.join(r, src[name]))

        def base_median(doc):  # bench/regress.sh's BASE runs (727d639): the median of their ratings
            v = sorted(x["extra"]["rating_gflops"] for x in doc["results"] if x.get("variant") == "base")
            return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2

        figs += hpcg_pair(os.path.join(r, "regress-2026-11-26-727d639-6cdb31c.json"), base_median,
                          os.path.join(r, "hpcg-vs-nvidia-1-2026-11-26-6cdb31c.json"), "727d639",
                          note="ours: the median of the two BASE (727d639) runs of bench/regress.sh, reference "
                               "drop given (a development run); NVIDIA's from the same call")
        doc = document(kind, "06827ee", figs, True)
        commit = "06827ee"
    out = out or os.path.join(ROOT, "bench", "results", kind, f"headline-{commit}.json")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"headline.py: {len(doc['figures'])} figures -> {rel(out)}", file=sys.stderr)
    return 1 if doc.get("missing") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
