#!/usr/bin/env python3
"""Summarize an own-DGEMM block timeline (a build configured with -DTESSERA_TC_TRACE=ON,
run with TESSERA_TC_TRACE_OUT=FILE; src/kernels/cuda/ts_dgemm_tc.cu, tc_trace_write).

    python3 bench/tc_trace.py FILE [FILE ...] [--json OUT]

For each trace: the SM clock (from the global timer), the median / p10 / p90 of each phase of a
block (fill: entry to the prologue's first stage; loop: the k loop; cwait: the wait for the staged
C tile after the loop; epi: the epilogue, split into combine, C read and alpha acc + beta C, and
stores, until the last store is issued), cycles per k-step
against the tensor pipe's bound (128 FMA a clock an SM on sm_90, shared by the resident blocks),
how many blocks an SM held on average and how many of them were in their k loop, and how far apart
co-resident blocks started (0: together, 0.5: half a tile apart).
"""
import json
import statistics
import struct
import sys

WORDS = 9  # SM, timer at entry, clock at entry / fill / loop end / C wait / stores issued, timer at exit, clock after C's pass
FMA_PER_CLK_SM = 128  # sm_90 FP64 tensor pipe: 67 TFLOP/s at 1.98 GHz on 132 SMs


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    hdr = struct.unpack_from("<8q", raw, 0)
    if hdr[0] != 0x54435452:
        raise SystemExit(f"{path}: not a tc trace (magic {hdr[0]:#x})")
    nb, bm, bn, threads, m, n, k = hdr[1:]
    name = raw[64:96].split(b"\0", 1)[0].decode()
    words = struct.unpack_from(f"<{nb * WORDS}Q", raw, 96)
    blocks = [words[i * WORDS:(i + 1) * WORDS] for i in range(nb)]
    return dict(variant=name, blocks=blocks, bm=bm, bn=bn, threads=threads, m=m, n=n, k=k)


def summarize(t):
    bl = [b for b in t["blocks"] if b[7] > b[1] and b[6] >= b[8] >= b[5] >= b[2]]
    if not bl:
        raise SystemExit(f"{t['variant']}: no complete block records")
    ghz = statistics.median((b[6] - b[2]) / (b[7] - b[1]) for b in bl if b[7] - b[1] > 2000)
    us = lambda c: c / ghz / 1000.0
    phases = {
        "fill": [b[3] - b[2] for b in bl],
        "loop": [b[4] - b[3] for b in bl],
        "cwait": [b[5] - b[4] for b in bl],
        "epi": [b[6] - b[5] for b in bl],
        "combine": [b[8] - b[5] for b in bl],
        "stores": [b[6] - b[8] for b in bl],
        "block": [b[6] - b[2] for b in bl],
    }
    out = {
        "variant": t["variant"], "m": t["m"], "n": t["n"], "k": t["k"], "tile": f"{t['bm']}x{t['bn']}",
        "blocks_traced": len(bl), "sm_clock_ghz": round(ghz, 3),
        "kernel_us": round((max(b[7] for b in bl) - min(b[1] for b in bl)) / 1000.0, 1),
        "phase_us": {p: {"median": round(us(statistics.median(v)), 3), "p10": round(us(pct(v, 0.1)), 3),
                         "p90": round(us(pct(v, 0.9)), 3)} for p, v in phases.items()},
    }
    ksteps = t["k"] // 16
    # per SM: the blocks' intervals on the SM's own clock
    sms = {}
    for b in bl:
        sms.setdefault(b[0], []).append(b)
    resident, inloop, offsets = [], [], []
    for s, v in sms.items():
        v.sort(key=lambda b: b[2])
        span = max(b[6] for b in v) - v[0][2]
        if span <= 0:
            continue
        resident.append(sum(b[6] - b[2] for b in v) / span)
        inloop.append(sum(b[4] - b[3] for b in v) / span)
        for i in range(1, len(v)):
            # the block resident when v[i] started that started last before it
            prev = [b for b in v[:i] if b[6] > v[i][2]]
            if prev:
                p = max(prev, key=lambda b: b[2])
                d = (v[i][2] - p[2]) / max(1, p[6] - p[2])
                offsets.append(min(d, 1.0))
    conc = statistics.median(resident) if resident else 0.0
    out["blocks_resident_mean"] = round(conc, 3)
    out["blocks_in_loop_mean"] = round(statistics.median(inloop), 3) if inloop else 0.0
    c = max(1, round(conc))
    ideal = t["bm"] * t["bn"] * 16 * c / FMA_PER_CLK_SM  # cycles a k-step with c blocks sharing the pipe
    out["loop_cycles_per_kstep"] = round(statistics.median(phases["loop"]) / max(1, ksteps - 1), 1)
    out["ideal_cycles_per_kstep"] = round(ideal, 1)
    if offsets:
        hist = [0] * 5
        for d in offsets:
            hist[min(4, int(min(d, 1 - d) * 10))] += 1
        out["start_offset_hist"] = {f"{i / 10:.1f}-{(i + 1) / 10:.1f}": h for i, h in enumerate(hist)}
        out["start_offset_median"] = round(statistics.median(min(d, 1 - d) for d in offsets), 3)
    return out


def main(argv):
    js = None
    if "--json" in argv:
        i = argv.index("--json")
        js = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if not argv:
        print(__doc__)
        return 2
    res = []
    for path in argv:
        s = summarize(load(path))
        s["file"] = path
        res.append(s)
        ph = s["phase_us"]
        print(f"{path}: {s['variant']} {s['m']}x{s['n']}x{s['k']} tile {s['tile']}, {s['blocks_traced']} blocks, "
              f"{s['sm_clock_ghz']} GHz, kernel {s['kernel_us']} us")
        print("  phase us (median p10 p90): " + ", ".join(
            f"{p} {v['median']} {v['p10']} {v['p90']}" for p, v in ph.items()))
        print(f"  resident {s['blocks_resident_mean']}, in loop {s['blocks_in_loop_mean']}, "
              f"loop {s['loop_cycles_per_kstep']} cycles/k-step (pipe bound {s['ideal_cycles_per_kstep']}), "
              f"start offset median {s.get('start_offset_median')} hist {s.get('start_offset_hist')}")
    if js:
        with open(js, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
