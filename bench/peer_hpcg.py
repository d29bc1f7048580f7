#!/usr/bin/env python3
"""peer_hpcg.py: NVIDIA's HPCG beside Tessera's in one results-schema JSON file.

Reads the HPCG 3.1 key=value report NVIDIA's xhpcg wrote (HPCG-Benchmark_3.1_*.txt) and the JSON
`tessera hpcg --json` wrote in the same call, and writes one file whose results are Tessera's entry
and NVIDIA's as {"bench": "hpcg", "engine": "nvidia-hpcg", ...} with the same extra fields as ours
(rating_gflops, valid, nx/ny/nz, npx/npy/npz, opt_iters, cg_sets, phases' GFLOP/s), and prints the
ratio Tessera / NVIDIA.

Usage: peer_hpcg.py OUT.json TESSERA.json NVIDIA-REPORT.txt [--note TEXT]
"""
import json
import sys


def read_report(path):
    """key=value lines of an HPCG 3.1 report; a repeated key keeps its first value."""
    kv = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" not in line:
                continue
            k, v = line.split("=", 1)
            kv.setdefault(k.strip(), v.strip())
    return kv


def num(kv, key, cast=float):
    v = kv.get(key)
    if v is None:
        return None
    try:
        return cast(float(v))
    except ValueError:
        return None


def nvidia_result(kv, report_name):
    final = next((k for k in kv if k.startswith("Final Summary::HPCG result is VALID")), None)
    rating = num(kv, final) if final else None
    valid = final is not None
    if rating is None:  # an invalid run: the rating line is absent
        rating = num(kv, "Final Summary::HPCG 2.4 rating for historical reasons is") or 0.0
    total = num(kv, "Benchmark Time Summary::Total")
    extra = {
        "nx": num(kv, "Local Domain Dimensions::nx", int),
        "ny": num(kv, "Local Domain Dimensions::ny", int),
        "nz": num(kv, "Local Domain Dimensions::nz", int),
        "npx": num(kv, "Processor Dimensions::npx", int),
        "npy": num(kv, "Processor Dimensions::npy", int),
        "npz": num(kv, "Processor Dimensions::npz", int),
        "rating_gflops": rating,
        "valid": valid,
        "opt_iters": num(kv, "Iteration Count Information::Optimized CG iterations per set", int),
        "cg_sets": None,
        "raw_gflops": num(kv, "GFLOP/s Summary::Raw Total"),
        "phases": {},
        "report": report_name,
    }
    gnz = num(kv, "Global Problem Dimensions::Global nz", int)
    if extra["nz"] is None and gnz and extra["npz"]:  # NVIDIA's report lists no local nz
        extra["nz"] = gnz // extra["npz"]
    ref = num(kv, "Iteration Count Information::Reference CG iterations per set", int)
    tot_opt = num(kv, "Iteration Count Information::Total number of optimized iterations", int)
    if tot_opt and extra["opt_iters"]:
        extra["cg_sets"] = tot_opt // extra["opt_iters"]
    for ph, key in (("ddot", "DDOT"), ("waxpby", "WAXPBY"), ("spmv", "SpMV"), ("mg", "MG"), ("total", "Total")):
        g = num(kv, "GFLOP/s Summary::Raw " + key)
        if g is not None:
            extra["phases"][ph] = {"gflops": g}
    procs = num(kv, "Machine Summary::Distributed Processes", int)
    res = {
        "bench": "hpcg",
        "engine": "nvidia-hpcg",
        "precision": "d",
        "where": "device",
        "reps": extra["cg_sets"],
        "seconds": {"median": total, "min": total, "max": total},
        "tflops": {"median": rating / 1e3, "min": rating / 1e3, "max": rating / 1e3},
        "verified": valid,
        "extra": extra,
    }
    if ref and extra["opt_iters"]:
        extra["ref_iters"] = ref
    res["shape"] = {"nx": extra["nx"], "ny": extra["ny"], "nz": extra["nz"]}
    return res, procs


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    out, tjson, report = argv[1], argv[2], argv[3]
    note = argv[argv.index("--note") + 1] if "--note" in argv else None
    with open(tjson) as f:
        doc = json.load(f)
    kv = read_report(report)
    peer, procs = nvidia_result(kv, report.rsplit("/", 1)[-1])
    if procs is not None:
        peer["extra"]["ranks"] = procs
    ours = doc["results"][0]
    ratio = ours["extra"]["rating_gflops"] / peer["extra"]["rating_gflops"] if peer["extra"]["rating_gflops"] else None
    ours.setdefault("extra", {})["vs_nvidia_hpcg"] = ratio
    doc["results"] = [ours, peer]
    if note:
        doc["note"] = note
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    t, n = ours["extra"], peer["extra"]
    print("hpcg side by side: tessera %.1f GFLOP/s (%s), nvidia-hpcg %.1f GFLOP/s (%s), ratio %s" % (
        t["rating_gflops"], "VALID" if t.get("valid") else "INVALID", n["rating_gflops"],
        "VALID" if n["valid"] else "INVALID", "%.3f" % ratio if ratio else "n/a"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
