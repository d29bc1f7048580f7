#!/usr/bin/env python3
"""sass_war.py: in a DGEMM kernel's main loop, the instructions that overwrite a register a DMMA read
as its A or B operand within the last N instructions (no GPU needed).

Usage: bench/sass_war.py SASS_FILE NAME_REGEX [N] [-v]
  SASS_FILE: `cuobjdump -sass` output; NAME_REGEX picks one function (first match); N: window in
  instructions (default 4); -v lists every such write.
Why: ncu's source counters on dmma16 (bench/notes/gemm-kernels.md, "The mbarrier and warp-group
variants") put its short-scoreboard stalls on exactly these writes: a DMMA reads its operands when the
tensor pipe takes it, so a load into a B or A fragment register right behind the DMMA that reads it
waits until the pipe accepts that DMMA. ptxas reuses a fragment register as soon as its last DMMA is
issued. The main loop is sass_loop.py's (the largest backward-branch range holding BAR.SYNC and a
DMMA); NOP and `@!PT` fillers are skipped; DMMA.16x8x16 reads 16 registers of A and 8 of B (DMMA.16x8x8: 8 and 4, DMMA.16x8x4: 4 and 2).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_loop import main_loop, read_function  # noqa: E402

args = [a for a in sys.argv[1:] if a != "-v"]
verbose = "-v" in sys.argv[1:]
if len(args) < 2:
    sys.exit(__doc__)
window = int(args[2]) if len(args) > 2 else 4
name, ins = read_function(args[0], args[1])
loop = main_loop(ins)
seg = [t for _, t in loop if not t.startswith("@!PT") and not t.startswith("NOP")]


def regs(op, width):
    m = re.match(r"R(\d+)", op)
    return set(range(int(m.group(1)), int(m.group(1)) + width)) if m else set()


reads, hits, by_gap = [], 0, {}
for i, t in enumerate(seg):
    parts = re.sub(r"^@!?U?P\w+\s+", "", t).split(None, 1)  # a predicated write counts as a write
    opc, ops = parts[0], [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    if opc.startswith("DMMA"):
        wa, wb = (16, 8) if "16x8x16" in opc else (4, 2) if "16x8x4" in opc else (8, 4)
        reads.append((i, regs(ops[1], wa) | regs(ops[2], wb)))
        continue
    if not ops:
        continue
    dst = regs(ops[0], 2 if (".64" in opc or "WIDE" in opc) else 1)
    for j, rd in reversed(reads):
        if i - j > window:
            break
        if dst & rd:
            hits += 1
            by_gap[i - j] = by_gap.get(i - j, 0) + 1
            if verbose:
                print(f"  {i - j:2d} after a DMMA: {t}")
            break
ndmma = sum(1 for t in seg if t.startswith("DMMA"))
print(f"{name[:120]}\n  loop: {len(seg)} instructions, {ndmma} DMMA; writes to a DMMA operand within "
      f"{window} instructions: {hits} (by distance {dict(sorted(by_gap.items()))})")
