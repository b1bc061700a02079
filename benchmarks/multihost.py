"""[multihost] The rows of docs/multihost.md's cost model, in one process or
as a job of several (SPMD: the same command under mpirun), timed the same
way: each step ends with dgarray.distributed.barrier() (every process's
part done), best of 5 after 2 warm-ups; process 0 prints the table.

    DGARRAY_CPU_DEVICES=2 python benchmarks/multihost.py [--scale 24]
    DGARRAY_CPU_DEVICES=1 mpirun -n 2 python benchmarks/multihost.py [--scale 24]

--scale s: vectors of 2^s float32 (add, sum, reshard), matrices of
2^(s/2 - 2) float64 rows (matmul).  Compare rows of runs over the same
number of devices in all."""
import argparse
import os
import sys

import numpy as np

import dgarray as dg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_of  # noqa: E402


def step(f):
    return best_of(lambda: (f(), dg.distributed.barrier()), 5, 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=24)
    args = ap.parse_args()
    n = 1 << args.scale
    ndev = len(dg.devices())
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    y = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    a, b = dg.asarray(x), dg.asarray(y)
    rows = []
    t = step(lambda: (a + b)._sync())
    rows.append(("add_f32", "GB/s", 12 * n / t / 1e9))
    assert np.array_equal(np.asarray(a + b), x + y)
    t = step(lambda: float(a.sum()))
    rows.append(("sum_f32", "GB/s", 4 * n / t / 1e9))
    side = 1 << (args.scale // 2)
    m = dg.asarray(x[:side * side].reshape(side, side))
    cols = {d: (slice(None), slice(side * d // ndev, side * (d + 1) // ndev)) for d in range(ndev)}
    t = step(lambda: m.reshard(cols)._sync())
    rows.append(("reshard_rows_to_cols", "GB/s", 4 * side * side / t / 1e9))
    one = dg.distributed_array(x, {0: slice(None)})
    t = step(lambda: one.reshard({ndev - 1: slice(None)})._sync())
    rows.append(("reshard_dev0_to_last", "GB/s", 4 * n / t / 1e9))
    k = 1 << (args.scale // 2 - 2)
    p = np.random.default_rng(2).standard_normal((k, k))
    pa, pb = dg.asarray(p), dg.asarray(p.T.copy())
    t = step(lambda: (pa @ pb).change_mode("replica")._sync())
    rows.append((f"matmul_f64_{k}", "GFLOP/s", 2.0 * k ** 3 / t / 1e9))
    np.testing.assert_allclose(np.asarray(pa @ pb), p @ p.T, rtol=1e-10, atol=1e-9)
    if dg.process_index() == 0:
        print(f"# {dg.backend()}, {dg.process_count()} process(es), {ndev} device(s), "
              f"scale {args.scale}")
        for name, unit, v in rows:
            print(f"| {name} | {unit} | {v:,.2f} |")


if __name__ == "__main__":
    main()
