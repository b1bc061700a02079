"""Where a fused chain's call spends its time on the host: the chain row of
run.py (sqrt(a*a + b*b) + 2*sin(a) - b/3 of float32) and its ceiling (a + b),
each call split into recording the expression (Python and the core's
record), flushing it (the pieces enqueued: keys, argument words, launches)
and waiting for the result (c._sync()).

    python benchmarks/chain_parts.py [--log2n 28] [--calls 30]

Prints, per row, the best and median of each part over the calls and of
the whole call, in microseconds, and the load average.  On the CPU backend
the flush hands the work to the devices' threads, so its part is small and
the wait holds the work; on GPUs the flush's part is the host's launch cost
and the wait the kernels."""
import argparse
import os
import statistics
import time

import numpy as np

import dgarray as dg


def parts(expr, a, b, calls):
    rec, fl, wt, tot = [], [], [], []
    expr(a, b)._sync()
    for _ in range(calls):
        t0 = time.perf_counter()
        c = expr(a, b)
        t1 = time.perf_counter()
        dg._core._fusion_flush()
        t2 = time.perf_counter()
        c._sync()
        t3 = time.perf_counter()
        rec.append(t1 - t0)
        fl.append(t2 - t1)
        wt.append(t3 - t2)
        tot.append(t3 - t0)
        del c
    return rec, fl, wt, tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=28 if dg.backend() == "cuda" else 22)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    n = 1 << args.log2n
    rng = np.random.default_rng(7)
    a = dg.asarray(rng.standard_normal(n, dtype=np.float32))
    b = dg.asarray(rng.standard_normal(n, dtype=np.float32))
    rows = {"chain": lambda p, q: dg.sqrt(p * p + q * q) + 2 * dg.sin(p) - q / 3,
            "a + b": lambda p, q: p + q}
    print(f"# dgarray {dg.backend()}, {len(dg.devices())} device(s), 2^{args.log2n} float32, "
          f"{args.calls} calls, load {os.getloadavg()[0]:.2f}; us, best / median")
    print(f"{'row':8} {'record':>16} {'flush':>16} {'wait':>16} {'call':>16} {'GB/s (best)':>12}")
    for name, expr in rows.items():
        got = [sorted(x) for x in parts(expr, a, b, args.calls)]
        cells = [f"{1e6 * x[0]:7.1f} / {1e6 * statistics.median(x):6.1f}" for x in got]
        print(f"{name:8} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} {cells[3]:>16} "
              f"{12 * n / got[3][0] / 1e9:12.1f}", flush=True)


if __name__ == "__main__":
    main()
