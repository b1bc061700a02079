"""The machine code of fused kernels, checked against unchecked, without a GPU.

Generates the CUDA source of a fused chain (dgarray._core._fused_source_of),
unchecked (errstate all='ignore') and checked (NumPy's default errstate:
check 1; 2 where underflow is watched), compiles it with NVRTC for sm_90
(dgarray._core._rtc_compile) and reads the cubin with cuobjdump (and
nvdisasm, which cuobjdump -sass runs): registers, stack, and the main loop's
instructions on its common path, a static count: the loop (a backward
branch) less the code a forward branch skips where that code calls out,
holds a loop or does double arithmetic (the rule's classification, division
and sin's slow paths) and touches no global memory.  A count, not a time:
the GPU measures the cost (benchmarks/errstate_ab.py).

    python benchmarks/sass_fused.py [--cuobjdump PATH] [--keep DIR]

Kernels: chain (sqrt(a*a + b*b) + 2*sin(a) - b/3, float32, dense: the
contiguous kernel, 4 elements a loop) and jacobi (0.2 * (c + n + e + w + s)
of one float32 grid's shifted slices: the streaming kernel, 8 elements a
loop)."""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import dgarray as dg

core = dg._core
IN, SCALAR, TEMP, OUT = 0, 1, 2, 3
F4 = 10  # dg_dtype of float32


def chain(check):
    n = 1 << 12
    a, b, o = (np.zeros(n, np.float32) for _ in range(3))
    t = (TEMP, F4, 0, (0,), b"")
    vals = [(IN, F4, a.ctypes.data, (4,), b""), (IN, F4, b.ctypes.data, (4,), b""),
            (SCALAR, F4, 0, (0,), np.float32(2).tobytes()),
            (SCALAR, F4, 0, (0,), np.float32(3).tobytes())] + [t] * 8 + [
                (OUT, F4, o.ctypes.data, (4,), b"")]
    steps = [("multiply", (0, 0, 4)), ("multiply", (1, 1, 5)), ("add", (4, 5, 6)),
             ("sqrt", (6, 7)), ("sin", (0, 8)), ("multiply", (2, 8, 9)), ("add", (7, 9, 10)),
             ("divide", (1, 3, 11)), ("subtract", (10, 11, 12))]
    return core._fused_source_of((n,), vals, steps, check)[0]


def jacobi(check):
    n = 1024
    g = np.zeros((n, n), np.float32)
    t = np.zeros((n - 2, n - 2), np.float32)
    views = [g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]]
    tmp = (TEMP, F4, 0, (0, 0), b"")
    vals = [(IN, F4, v.ctypes.data, v.strides, b"") for v in views] + [tmp] * 4 + [
        (SCALAR, F4, 0, (0, 0), np.float32(0.2).tobytes()),
        (OUT, F4, t.ctypes.data, t.strides, b"")]
    steps = [("add", (0, 1, 5)), ("add", (5, 3, 6)), ("add", (6, 4, 7)), ("add", (7, 2, 8)),
             ("multiply", (9, 8, 10))]
    return core._fused_source_of(t.shape, vals, steps, check)[0]


def instructions(sass):
    """(address, text) of each instruction of a cuobjdump -sass listing."""
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2)))
    return out


def main_loop(ins):
    """The instructions of the longest loop on its common path (see above)."""
    idx = {a: i for i, (a, _) in enumerate(ins)}
    back = []
    for a, t in ins:
        m = re.match(r"(?:@!?U?P\d\s+)?BRA(?:\.\w+)?\s+(?:!?U?P\d,\s*)?0x([0-9a-f]+)", t)
        if m and int(m.group(1), 16) <= a:
            back.append((int(m.group(1), 16), a))
    lo, hi = max(back, key=lambda r: r[1] - r[0])
    cold = [False] * len(ins)
    skips = []
    for i in range(idx[lo], idx[hi] + 1):
        a, t = ins[i]
        m = re.match(r"@!?P\d\s+BRA\s+(?:!?P\d,\s*)?0x([0-9a-f]+)", t)
        if m and a < int(m.group(1), 16) <= hi and int(m.group(1), 16) in idx:
            skips.append((idx[int(m.group(1), 16)] - i, i, idx[int(m.group(1), 16)]))
    for _, i, j in sorted(skips):
        body = [ins[k][1] for k in range(i + 1, j)]
        if any(b.startswith(("LDG", "STG")) and "CONSTANT" not in b for b in body):
            continue
        if any(x in b for b in body for x in ("CALL", "F2F.F64", "DSETP")) or any(
                ins[i][0] < l2 and h2 < ins[j][0] for l2, h2 in back):
            for k in range(i + 1, j):
                cold[k] = True
    return [ins[k][1] for k in range(idx[lo], idx[hi] + 1) if not cold[k]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    ap.add_argument("--keep", help="a folder to keep the sources, cubins and listings in")
    args = ap.parse_args()
    keep = args.keep or tempfile.mkdtemp()
    os.makedirs(keep, exist_ok=True)
    print("| kernel | checks | registers | stack bytes | main loop, common path: instructions "
          "| local loads/stores there | global accesses there |")
    print("|---|---|---|---|---|---|---|")
    for name, f in (("chain", chain), ("jacobi", jacobi)):
        for check, what in ((0, "none"), (1, "default errstate"), (2, "underflow watched")):
            src = f(check)
            code, _ = core._rtc_compile(src, 90)
            base = os.path.join(keep, f"{name}_{check}")
            with open(base + ".cu", "w") as fh:
                fh.write(src)
            with open(base + ".cubin", "wb") as fh:
                fh.write(code)
            res = subprocess.run([args.cuobjdump, "-res-usage", base + ".cubin"], check=True,
                                 capture_output=True, text=True).stdout
            sass = subprocess.run([args.cuobjdump, "-sass", base + ".cubin"], check=True,
                                  capture_output=True, text=True).stdout
            with open(base + ".sass", "w") as fh:
                fh.write(sass)
            reg = re.search(r"REG:(\d+)", res).group(1)
            stack = re.search(r"STACK:(\d+)", res).group(1)
            hot = main_loop(instructions(sass))
            ops = collections.Counter(t.split()[1] if t.startswith("@") else t.split()[0]
                                      for t in hot)
            local = sum(v for k, v in ops.items() if k.startswith(("LDL", "STL")))
            glob = " ".join(f"{k} {v}" for k, v in sorted(ops.items())
                            if k.startswith(("LDG", "STG")))
            print(f"| {name} | {what} | {reg} | {stack} | {len(hot)} | {local} | {glob} |",
                  flush=True)
    if not args.keep:
        shutil.rmtree(keep)


if __name__ == "__main__":
    sys.exit(main())
