#!/usr/bin/env python3
"""Summarize an own-DGEMM block timeline (a build configured with -DTESSERA_TC_TRACE=ON,
run with TESSERA_TC_TRACE_OUT=FILE; src/kernels/cuda/ts_dgemm_tc.cu, tc_trace_write).

    python3 bench/tc_trace.py FILE [FILE ...] [--json OUT]
    python3 bench/tc_trace.py --self-test     (a synthetic trace with known phases; CTest bench_tc_trace)

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
    out["loop_cycles_per_kstep"] = round(statistics.median(phases["loop"]) / max(1, ksteps), 1)  # (all ksteps: the loop starts after the fill)
    out["ideal_cycles_per_kstep"] = round(ideal, 1)
    if offsets:
        hist = [0] * 5
        for d in offsets:
            hist[min(4, int(min(d, 1 - d) * 10))] += 1
        out["start_offset_hist"] = {f"{i / 10:.1f}-{(i + 1) / 10:.1f}": h for i, h in enumerate(hist)}
        out["start_offset_median"] = round(statistics.median(min(d, 1 - d) for d in offsets), 3)
    return out


def self_test():
    """Two blocks per SM half a tile apart, 2 GHz, 256 k: fill 1000, loop 30000, cwait 100, combine 4000,
    stores 2000 cycles; the summary must give back those phases, 2 resident, the loop share, offset 0.5."""
    import os
    import tempfile
    ghz, sms, waves = 2.0, 4, 6
    fill, loop, cwait, comb, st = 1000, 30000, 100, 4000, 2000
    tile = fill + loop + cwait + comb + st
    blocks = []
    for w in range(waves):
        for sm in range(sms):
            for slot in range(2):
                c0 = 10000 + w * tile + slot * tile // 2 + sm * 7
                c = [c0, c0 + fill, c0 + fill + loop, c0 + fill + loop + cwait]
                c8 = c[3] + comb
                c6 = c8 + st
                blocks.append([sm, int(c0 / ghz), c[0], c[1], c[2], c[3], c6, int(c6 / ghz), c8])
    raw = struct.pack("<8q", 0x54435452, len(blocks), 128, 64, 128, 16384, 16384, 256) + b"selftest".ljust(32, b"\0")
    raw += b"".join(struct.pack(f"<{WORDS}Q", *b) for b in blocks)
    fd, path = tempfile.mkstemp(suffix=".trace")
    with os.fdopen(fd, "wb") as f:
        f.write(raw)
    try:
        s = summarize(load(path))
    finally:
        os.unlink(path)
    us = lambda cyc: cyc / ghz / 1000.0
    ph = s["phase_us"]
    checks = [("sm_clock_ghz", s["sm_clock_ghz"], ghz, 0.01)]
    for name, cyc in (("fill", fill), ("loop", loop), ("cwait", cwait), ("combine", comb), ("stores", st),
                      ("epi", comb + st), ("block", tile)):
        checks.append((name, ph[name]["median"], us(cyc), 0.01))
    # the SM holds 2 blocks except while the first and the last half-tile run alone
    span = (waves * tile + tile // 2)
    checks.append(("blocks_resident_mean", s["blocks_resident_mean"], 2 * waves * tile / span, 0.01))
    checks.append(("blocks_in_loop_mean", s["blocks_in_loop_mean"], 2 * waves * loop / span, 0.01))
    checks.append(("start_offset_median", s["start_offset_median"], 0.5, 0.01))
    checks.append(("loop_cycles_per_kstep", s["loop_cycles_per_kstep"], loop / 16, 0.01))
    checks.append(("ideal_cycles_per_kstep", s["ideal_cycles_per_kstep"], 2048.0, 0.01))
    bad = [(n, got, want) for n, got, want, tol in checks if abs(got - want) > tol * max(1.0, abs(want))]
    for n, got, want in bad:
        print(f"tc_trace self-test: {n} = {got}, expected {want}")
    print(f"tc_trace self-test: {len(checks) - len(bad)} of {len(checks)} checks passed")
    return 1 if bad else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
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
