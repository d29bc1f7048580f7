#!/usr/bin/env python3
"""sass_loop.py: instruction classes of a DGEMM kernel's main loop, per k16 step (no GPU needed).

Usage: bench/sass_loop.py SASS_FILE NAME_REGEX [STEPS_PER_ITERATION]
  SASS_FILE: `cuobjdump -sass` output; NAME_REGEX picks one function (first match).
The main loop is the largest backward branch range that holds BAR.SYNC and DMMA. Code that only
the bounded (zero-filling) copies run is left out: every basic block in the loop that holds a
LDGSTS ...ZFILL, or that only such a block reaches by falling through, is dropped, so the counts
are the path of an interior block at a k-step inside k. Counts are divided by the number of k16
steps per loop iteration (default: DMMA count / (DMMAs per k16 step, guessed from the shape).
"""
import re
import sys
from collections import Counter


def read_function(path, regex):
    """(name, [(address, instruction text)]) of the first function of a `cuobjdump -sass` file whose
    name matches regex; exits when none does."""
    pat = re.compile(regex)
    for f in re.split(r"\n\s*Function : ", open(path).read())[1:]:
        name, rest = f.split("\n", 1)
        if pat.search(name):
            ins = []
            for l in rest.split("\n"):
                m = re.search(r"/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;", l)
                if m:
                    ins.append((int(m.group(1), 16), m.group(2).strip()))
            return name.strip(), ins
    sys.exit("no function matches")


def main_loop(ins):
    """The largest backward-branch range of ins that holds BAR.SYNC and DMMA (exits when none)."""
    addr_idx = {a: i for i, (a, _) in enumerate(ins)}
    best = None
    for i, (a, t) in enumerate(ins):
        m = re.search(r"\bBRA\s+(?:!?U?P\w+,\s*)?0x([0-9a-f]+)", t)
        if m:
            tgt = int(m.group(1), 16)
            if tgt < a and tgt in addr_idx:
                j0 = addr_idx[tgt]
                seg = [x for _, x in ins[j0:i + 1]]
                if any("BAR.SYNC" in x for x in seg) and any("DMMA" in x for x in seg):
                    if best is None or i - j0 > best[1] - best[0]:
                        best = (j0, i)
    if best is None:
        sys.exit("no main loop found")
    return ins[best[0]:best[1] + 1]


def main():
    name, ins = read_function(sys.argv[1], sys.argv[2])
    print("function:", name)
    loop = main_loop(ins)
    # basic blocks: leaders at branch targets and after branches
    leaders = {loop[0][0]}
    for k, (a, t) in enumerate(loop):
        m = re.search(r"\bBRA\b.*0x([0-9a-f]+)", t)
        if m:
            leaders.add(int(m.group(1), 16))
            if k + 1 < len(loop):
                leaders.add(loop[k + 1][0])
    blocks, cur = [], []
    for a, t in loop:
        if a in leaders and cur:
            blocks.append(cur)
            cur = []
        cur.append((a, t))
    blocks.append(cur)
    drop = [any("LDGSTS" in t and "ZFILL" in t for _, t in b) for b in blocks]
    kept = [x for b, d in zip(blocks, drop) if not d for x in b]
    c = Counter()
    for a, t in kept:
        op = re.sub(r"^@!?U?P\w+\s+", "", t).split()[0]
        base = op.split(".")[0]
        if base == "NOP" or (t.startswith("@!PT") or t.startswith("@!UPT")):
            c["pad (NOP, @!PT)"] += 1
            continue
        c["all real"] += 1
        if base == "DMMA": c["DMMA"] += 1
        elif base == "LDS": c[op] += 1
        elif base == "LDGSTS": c["LDGSTS"] += 1
        elif base == "BAR": c["BAR"] += 1
        elif base in ("DEPBAR", "LDGDEPBAR"): c["DEPBAR/LDGDEPBAR"] += 1
        elif base == "MOV" or op.startswith("IMAD.MOV"): c["MOV (incl. IMAD.MOV)"] += 1
        elif base.startswith("U"): c["uniform-datapath"] += 1
        elif base in ("BRA", "BSYNC", "BSSY", "WARPSYNC"): c["branch"] += 1
        elif base in ("IADD3", "IMAD", "LEA", "LOP3", "SHF", "ISETP", "SEL", "VIADD", "IADD", "S2R", "CS2R",
                      "R2P", "P2R", "PLOP3", "IABS", "IMNMX", "VIMNMX", "SGXT", "PRMT"):
            c["integer/predicate/S2R"] += 1
        else: c["other: " + base] += 1
    dmma_shape = Counter(re.search(r"DMMA\.(\S+)", t).group(1) for _, t in kept if t.startswith("DMMA"))
    steps = float(sys.argv[3]) if len(sys.argv) > 3 else None
    if steps is None:
        steps = 1.0
    print(f"loop 0x{loop[0][0]:x}-0x{loop[-1][0]:x}: {len(loop)} instructions, {sum(drop)} of {len(blocks)} blocks dropped "
          f"(bounded copies); DMMA shapes {dict(dmma_shape)}; per k16 step (/{steps:g}):")
    for k in sorted(c):
        print(f"  {k:26s} {c[k] / steps:7.1f}")


if __name__ == "__main__":
    main()
