"""The cost of numpy.errstate on device work ([surface] item 3): each row
timed under NumPy's default errstate (divide, over, invalid warn: the
kernels check their results, docs/architecture.md "Floating-point errors")
and under errstate(all='ignore') (nothing checked), alternating in one
process, best of --reps per round; GB/s counting the bytes each row must
move, and the ratio default / ignore.

    python benchmarks/errstate_ab.py [--rounds 3] [--reps 10] [--log2n 28]

Rows: add_f32 (a + b), sin_f32, sum_f32 (a reduction), chain_f32 (the
fused chain of run.py's chain row), jacobi_f32 (the fused expression of
run.py's Jacobi step, 0.2 * (c + n + e + w + s) over the shifted slices of
one grid of 2^log2n float32, its result a new array: the streaming kernel;
GB/s of 8 bytes per interior element, as fused_rows.py counts its "fused
alone"), overflow_f32 (a * a where every element overflows: the kernels'
rare branch taken everywhere, each kind published once per generation),
cumsum_f32 (a scan of 2^log2n: each device's piece split into tiles over
many blocks, session 18, then the carries between devices),
cumsum_rows_f32 / cumsum_cols_f32 (the grid's scans along axis 1, a block
per row, and along axis 0, a thread per column: the scan kernels' checked
folds, session 17), sum0_f32 (the grid's sum over axis 0,
its partials of every device combined: under the default errstate by the
core's checked fold, under 'ignore' by NCCL's all-reduce where the GPUs
have it), all='raise' for add_f32 (the call waits)."""
import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_of, done  # noqa: E402
from run import jacobi_views  # noqa: E402

import dgarray as dg  # noqa: E402


def rows(n):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a, b = dg.asarray(x), dg.asarray(y)
    big = dg.asarray(np.full(n, 1e30, np.float32))
    side = 1 << (n.bit_length() // 2)  # 16384 for 2^28
    g = dg.asarray(rng.standard_normal((side, side), dtype=np.float32))
    c, no, so, we, ea = jacobi_views(g)
    return {
        "add_f32": (lambda: done(a + b), 12 * n),
        "sin_f32": (lambda: done(dg.sin(a)), 8 * n),
        "sum_f32": (lambda: float(a.sum()), 4 * n),
        "chain_f32": (lambda: done(dg.sqrt(a * a + b * b) + 2 * dg.sin(a) - b / 3), 12 * n),
        "jacobi_f32": (lambda: done(0.2 * (c + no + ea + we + so)), 8 * (side - 2) ** 2),
        "overflow_f32": (lambda: done(big * big), 8 * n),
        "cumsum_f32": (lambda: done(dg.cumsum(a)), 8 * n),
        "cumsum_rows_f32": (lambda: done(dg.cumsum(g, axis=1)), 8 * side * side),
        "cumsum_cols_f32": (lambda: done(dg.cumsum(g, axis=0)), 8 * side * side),
        "sum0_f32": (lambda: done(g.sum(axis=0)), 4 * side * side),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--log2n", type=int, default=28 if dg.backend() == "cuda" else 22)
    args = ap.parse_args()
    n = 1 << args.log2n
    print(f"# dgarray {dg.backend()}, {dg._core._ndevices()} device(s), n = 2^{args.log2n} "
          f"float32; GB/s (best of {args.reps}) per round", flush=True)
    states = {"default": {}, "ignore": {"all": "ignore"}, "raise": {"all": "raise"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow_f32's warnings, once per call
        for name, (f, nbytes) in rows(n).items():
            modes = ["default", "ignore"] + (["raise"] if name == "add_f32" else [])
            best = {m: 0.0 for m in modes}
            for rnd in range(args.rounds):
                for m in (modes if rnd % 2 == 0 else modes[::-1]):
                    if m == "raise" and name == "overflow_f32":
                        continue
                    with np.errstate(**states[m]) if states[m] else np.errstate():
                        t = best_of(f, args.reps)
                    best[m] = max(best[m], nbytes / t / 1e9)
            line = "  ".join(f"{m} {best[m]:8.1f}" for m in modes)
            print(f"{name:14s} {line}  default/ignore {best['default'] / best['ignore']:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
