"""CPU-backend speed against NumPy on this machine (issue [foundation]).

Each configuration runs in its own process (the number of virtual devices is
fixed when dgarray loads):
  add_f64_1e7      a + b on 10^7 float64, 1 and 2 virtual devices, vs NumPy
  add_f64_1000_us  one a + b on 1,000 float64, 1 virtual device, vs NumPy
  sum_f64_1000, argmax_f64_1000  one a.sum() / a.argmax() on 1,000 float64
                   split over 2 virtual devices (host cost), vs NumPy
  solve_f64_4096   dgarray.linalg.solve of a 4096 x 4096 float64 system and a
                   vector, 1 and 2 virtual devices, vs numpy.linalg.solve (both
                   through the same LAPACK, on the same cores)
Prints a table; --json PATH also writes the rows.

    python benchmarks/bench_cpu.py
"""
import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import os, sys, time, json
import numpy as np
import dgarray as dg

def best(f, reps, inner=1):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        ts.append((time.perf_counter() - t0) / inner)
    return min(ts)

out = {}
n = 10_000_000
x = np.random.default_rng(0).standard_normal(n)
y = np.random.default_rng(1).standard_normal(n)
a, b = dg.asarray(x), dg.asarray(y)
def dg_add():
    c = a + b
    c._sync()
for _ in range(3):
    dg_add(); x + y
out["add_f64_1e7_dgarray_s"] = best(dg_add, 15)
out["add_f64_1e7_numpy_s"] = best(lambda: x + y, 15)
xs, ys = x[:1000].copy(), y[:1000].copy()
sa, sb = dg.asarray(xs), dg.asarray(ys)
def small():
    c = sa + sb
for _ in range(1000):
    small(); xs + ys
out["add_f64_1000_dgarray_us"] = 1e6 * best(small, 7, 20000)
out["add_f64_1000_numpy_us"] = 1e6 * best(lambda: xs + ys, 7, 20000)
sa._sync()
# a.sum() and a.argmax() on 1,000 elements split over every device: the
# method call, the plan and the fold (host cost, the work being tiny)
ndev = len(dg.devices())
sd = dg.distributed_array(xs, {d: slice(1000 * d // ndev, 1000 * (d + 1) // ndev)
                               for d in range(ndev)})
for name, f, g in (("sum", lambda: sd.sum(), lambda: xs.sum()),
                   ("argmax", lambda: sd.argmax(), lambda: xs.argmax())):
    for _ in range(1000):
        f()
    out[name + "_f64_1000_dgarray_us"] = 1e6 * best(f, 7, 5000)
    out[name + "_f64_1000_numpy_us"] = 1e6 * best(g, 7, 5000)
sd._sync()
# solve of a float64 4096 x 4096 system (LAPACK's getrf + getrs through the
# dense slot, the matrix split by rows over the devices: one device is
# LAPACK on the whole, two the blocked LU) against numpy.linalg.solve (gesv)
n = 4096
rng = np.random.default_rng(2)
A = rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)
bv = rng.standard_normal(n)
dA, db = dg.asarray(A), dg.asarray(bv)
def dg_solve():
    dg.linalg.solve(dA, db)._sync()
dg_solve(); np.linalg.solve(A, bv)
out["solve_f64_4096_dgarray_s"] = best(dg_solve, 5)
out["solve_f64_4096_numpy_s"] = best(lambda: np.linalg.solve(A, bv), 5)
x = dg.linalg.solve(dA, db).get()
out["solve_f64_4096_backward_error"] = float(np.linalg.norm(A @ x - bv) /
                                             (np.linalg.norm(A) * np.linalg.norm(x)))
print(json.dumps(out))
"""


def run(ndev):
    env = dict(os.environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_DEVICES=str(ndev),
               DGARRAY_MIN_SPLIT_BYTES="0")
    print(f"  running with {ndev} virtual device(s) ...", file=sys.stderr, flush=True)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    one, two = run(1), run(2)
    rows = [
        ("add_f64_1e7 (1 device)", "ms", 1e3 * one["add_f64_1e7_dgarray_s"],
         1e3 * one["add_f64_1e7_numpy_s"], "<= 1.3x NumPy"),
        ("add_f64_1e7 (2 devices)", "ms", 1e3 * two["add_f64_1e7_dgarray_s"],
         1e3 * two["add_f64_1e7_numpy_s"], "< NumPy"),
        ("add_f64_1000 (1 device)", "us", one["add_f64_1000_dgarray_us"],
         one["add_f64_1000_numpy_us"], "<= NumPy + 3 us"),
    ] + [(f"{r}_f64_1000 (2 devices)", "us", two[f"{r}_f64_1000_dgarray_us"],
          two[f"{r}_f64_1000_numpy_us"], "-") for r in ("sum", "argmax")] + [
        (f"solve_f64_4096 ({k} device{'s' if k > 1 else ''})", "ms",
         1e3 * r["solve_f64_4096_dgarray_s"], 1e3 * r["solve_f64_4096_numpy_s"],
         "<= 1.2x NumPy") for k, r in ((1, one), (2, two))]
    print(f"{'workload':28} {'unit':4} {'dgarray':>10} {'NumPy':>10} {'ratio':>7}  goal")
    for name, unit, d, n, goal in rows:
        print(f"{name:28} {unit:4} {d:10.3f} {n:10.3f} {d / n:7.2f}  {goal}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"workload": r[0], "unit": r[1], "dgarray": r[2],
                        "peers": {"numpy": r[3]}, "goal": r[4]} for r in rows], f, indent=1)


if __name__ == "__main__":
    main()
