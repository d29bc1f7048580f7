#!/usr/bin/env python3
"""sass_epilogue.py: the order of global loads and stores after the main loop of each own GEMM kernel.

Usage: cuobjdump -sass OBJ | bench/sass_epilogue.py
Prints, per kernel: DMMA count, and after its last DMMA the global memory instructions in order
(L = load, S = store) with the longest run of loads issued before the first store. An epilogue whose
loads are batched reads like LLLL...SSSS; one that waits a round trip per element reads LSLSLS.
"""
import re
import sys

name, body = None, []


def report():
    if name is None:
        return
    dmma = [i for i, l in enumerate(body) if "DMMA" in l]
    if not dmma:
        return
    seq = ""
    for l in body[dmma[-1] + 1:]:
        if re.search(r"\bLDG\.", l):
            seq += "L"
        elif re.search(r"\bSTG\.", l):
            seq += "S"
    first_s = seq.find("S")
    batched = seq[:first_s].count("L") if first_s >= 0 else seq.count("L")
    short = re.sub(r"^_ZN\w*?dgemm_tc_kernelI", "", name)[:70]
    print(f"{short:70s} DMMA {len(dmma):3d}  loads before first store {batched:3d}  {seq[:48]}")


for line in sys.stdin:
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        report()
        name, body = m.group(1), []
    elif name is not None:
        body.append(line)
report()
