"""Where the time of m @ m goes on many virtual CPU devices (issue [cpu-speed]).

bench_cpu.py's matmul rows time `a @ a` (4096 x 4096) with a split by rows
over N virtual devices against NumPy's threaded BLAS.  This probe times, each
in a fresh process, the same product laid out differently, so that the cost
of the one-BLAS-call product (dg_matmul.c, contract_wide) can be taken apart:

  numpy     NumPy's m @ m
  rows      a @ a, a split by rows over the devices (bench_cpu.py's row)
  one       a @ a, a one chunk on device 0: the call reads it in place and
            writes the result's one chunk (no copies at all)
  ab        a @ b, two arrays split by rows (both operands assembled)

    python benchmarks/cpu_matmul_probe.py --devices 1,8,16 [--dtype float64]
        [--env DGARRAY_CPU_PIN=1] [--reps 3]

Prints one line per (layout, devices): best wall ms, process CPU ms, and the
ratio NumPy / this.
"""
import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
layout, dtype, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = np.random.default_rng(0).standard_normal((4096, 4096)).astype(dtype)
m2 = np.random.default_rng(1).standard_normal((4096, 4096)).astype(dtype)
if layout == "numpy":
    f = lambda: m @ m
    sync = lambda r: None
else:
    import dgarray as dg
    if layout == "one":
        a = dg.distributed_array(m, {0: (slice(None), slice(None))})
        b = a
    else:
        a = dg.asarray(m)
        b = dg.asarray(m2) if layout == "ab" else a
    f = lambda: a @ b
    sync = lambda r: r._sync()
for _ in range(2):
    sync(f())
best = cpu = 1e9
for _ in range(reps):
    c0, t0 = time.process_time(), time.perf_counter()
    r = f()
    sync(r)
    best = min(best, time.perf_counter() - t0)
    cpu = min(cpu, time.process_time() - c0)
    del r
print(json.dumps({"s": best, "cpu_s": cpu}))
"""


def one(layout, ndev, dtype, reps, extra):
    env = dict(os.environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_DEVICES=str(ndev), **extra)
    r = subprocess.run([sys.executable, "-c", CHILD, layout, dtype, str(reps)], env=env,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"{layout} {ndev}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="1,8,16")
    ap.add_argument("--layouts", default="rows,one,ab")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--env", action="append", default=[], help="VAR=VALUE for dgarray's processes")
    args = ap.parse_args()
    extra = dict(e.split("=", 1) for e in args.env)
    print(f"cores in the affinity mask: {len(os.sched_getaffinity(0))}; "
          f"dtype {args.dtype}; env {extra or '-'}", flush=True)
    ref = one("numpy", 1, args.dtype, args.reps, {})
    print(f"numpy            {1e3 * ref['s']:8.1f} ms (CPU {1e3 * ref['cpu_s']:8.1f})", flush=True)
    for nd in args.devices.split(","):
        for layout in args.layouts.split(","):
            r = one(layout, int(nd), args.dtype, args.reps, extra)
            print(f"{layout:5s} {nd:>3s} devices {1e3 * r['s']:8.1f} ms (CPU {1e3 * r['cpu_s']:8.1f})"
                  f"  ratio {ref['s'] / r['s']:.2f}", flush=True)


if __name__ == "__main__":
    main()
