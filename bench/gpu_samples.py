#!/usr/bin/env python3
"""gpu_samples.py: summarizes the per-second nvidia-smi samples bench/device.sh takes during a call
(CSV with header: index, utilization.gpu, clocks.sm, clocks.max.sm, clocks.mem, power.draw,
power.limit, temperature.gpu, clocks_event_reasons.active): per GPU, over the samples where it
was at least 50% busy, the median and lowest SM clock against its maximum, the memory clock, the
median and highest power against the limit, the highest temperature, and the clock-event reasons
seen (bit mask, e.g. 0x4 software power cap, 0x20 software thermal slowdown)."""
import csv
import statistics
import sys


KEYS = ["index", "utilization.gpu", "clocks.sm", "clocks.max.sm", "clocks.mem", "power.draw", "power.limit",
        "temperature.gpu", "clocks_event_reasons.active"]


def num(v):
    try:
        return float(v.strip().split()[0])
    except (ValueError, IndexError):
        return None


def main(path):
    try:
        rows = list(csv.reader(open(path)))
    except OSError as e:
        print(f"== gpu samples: none ({e})")
        return 0
    if len(rows) < 2:
        print("== gpu samples: none")
        return 0
    # by position, in the order of the query (nvidia-smi's header names differ from the query's)
    head = KEYS
    col = {h: i for i, h in enumerate(head)}
    by = {}
    for r in rows[1:]:
        if len(r) != len(head) or num(r[0]) is None:  # a repeated header, a cut line
            continue
        by.setdefault(r[col["index"]].strip(), []).append(r)
    for gpu, rs in sorted(by.items()):
        busy = [r for r in rs if (num(r[col["utilization.gpu"]]) or 0) >= 50]
        if not busy:
            print(f"== gpu {gpu}: {len(rs)} samples, never >= 50% busy")
            continue
        g = lambda k: [x for x in (num(r[col[k]]) for r in busy) if x is not None]
        sm, mem, pw = g("clocks.sm"), g("clocks.mem"), g("power.draw")
        smax, plim, temp = g("clocks.max.sm"), g("power.limit"), g("temperature.gpu")
        reasons = sorted({r[col["clocks_event_reasons.active"]].strip() for r in busy})
        med = lambda v: statistics.median(v) if v else float("nan")
        print(f"== gpu {gpu}: {len(busy)} busy samples of {len(rs)}: SM clock median {med(sm):.0f} MHz "
              f"(lowest {min(sm, default=float('nan')):.0f}, max {max(smax, default=float('nan')):.0f}), memory "
              f"{med(mem):.0f} MHz, power median {med(pw):.0f} W (highest {max(pw, default=float('nan')):.0f}, "
              f"limit {max(plim, default=float('nan')):.0f}), temperature up to {max(temp, default=float('nan')):.0f} C, "
              f"clock events {' '.join(reasons)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "gpu-samples.csv"))
