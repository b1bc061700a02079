"""Users' kernels on the CPU backend ([fusion] item 3/4): what a first call
costs (compiling C with the host's compiler, cold; loading it from the disk
cache, warm) and a call's time against NumPy's for the same work.

Rows (2^N float64 elements, default N=24), each the best of --reps calls:
  squared_diff   ElementwiseKernel 'z = (x - y) * (x - y)'   NumPy: (x - y) ** 2
  chain          ElementwiseKernel 'z = sqrt(x*x + y*y) + 2*sin(x) - y/3'
                 NumPy: the same expression (five temporaries)
  l2norm         ReductionKernel over the whole array        NumPy: sqrt((x*x).sum())
Compile rows: a new kernel's first call in a fresh cache directory (cold), then
the same kernel in a new process with that cache (warm), in child processes.

    python3 benchmarks/bench_user_kernels.py [--log2 24] [--reps 5]
prints one table (Markdown)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))

_FIRST_CALL = """
import time, dgarray as dg
x = dg.arange(1000.0)
k = dg.ElementwiseKernel('T x', 'T y', 'y = x * 3 + %r', 'first')
t = time.perf_counter(); k(x).get(); print(time.perf_counter() - t)
"""


def first_call(cache):
    env = dict(os.environ, DGARRAY_CACHE_DIR=cache, DGARRAY_BACKEND="cpu",
               PYTHONPATH=os.path.join(HERE, os.pardir, "python"))
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL % 0.5], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip())


def best(f, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2", type=int, default=24)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    import dgarray as dg
    n = 1 << args.log2
    hx = numpy.random.default_rng(0).random(n)
    hy = numpy.random.default_rng(1).random(n)
    x, y = dg.asarray(hx), dg.asarray(hy)
    sq = dg.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "sq")
    ch = dg.ElementwiseKernel("T x, T y", "T z", "z = sqrt(x*x + y*y) + 2*sin(x) - y/3", "ch")
    l2 = dg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
    out = dg.empty_like(x)
    for k in (lambda: sq(x, y, out), lambda: ch(x, y, out), lambda: l2(x)):
        k()  # compile
    rows = [
        ("squared_diff", lambda: (sq(x, y, out), dg._core._sync_all()),
         lambda: (hx - hy) ** 2),
        ("chain", lambda: (ch(x, y, out), dg._core._sync_all()),
         lambda: numpy.sqrt(hx * hx + hy * hy) + 2 * numpy.sin(hx) - hy / 3),
        ("l2norm", lambda: l2(x).get(), lambda: numpy.sqrt((hx * hx).sum())),
    ]
    print(f"CPU backend, {dg._core._ndevices()} devices, 2^{args.log2} float64, "
          f"{os.cpu_count()} cores, best of {args.reps}\n")
    print("| row | dgarray ms | NumPy ms | NumPy / dgarray |")
    print("| --- | ---: | ---: | ---: |")
    for name, f, g in rows:
        td, tn = best(f, args.reps), best(g, args.reps)
        print(f"| {name} | {td * 1e3:.1f} | {tn * 1e3:.1f} | {tn / td:.2f} |")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_call(cache)
        warm = first_call(cache)
    print(f"| first call, cold (compile) | {cold * 1e3:.1f} | | |")
    print(f"| first call, warm (disk cache) | {warm * 1e3:.1f} | | |")


if __name__ == "__main__":
    main()
