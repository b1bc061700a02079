"""A/B of two source trees of dgarray on the CPU backend: bench_cpu.py's rows,
a few calls that go from C into the package's Python, and `import dgarray`.

Each tree must have its extension built in place (python/dgarray/_core*.so).
Every round runs, for each tree in turn (the order alternating from round to
round), one process of bench_cpu.py's measurements per device count, one of
the extra calls on 2 virtual devices, and `--imports` fresh interpreters
timing `import dgarray` (-X importtime's cumulative microseconds for the
package).  Prints the best of each row over the rounds, per tree:

    python benchmarks/tree_ab.py --a /tmp/base --b . --rounds 3

--clock cpu times by the process's CPU time (time.process_time, all its
threads) instead of the wall clock, imports included: on a machine shared
with other work, where the wall clock measures the waits for a core, it
compares the work the two trees do.

--backend cuda runs the rows of one GPU instead (the trees built with CUDA):
the latency of small elementwise operations and reductions (GPU.md's latency
row: `c = a + b` on 1,000 float32 in a loop, then one synchronisation) on one
device and on 2 logical devices of GPU 0 (DGARRAY_CUDA_DEVICES=0,0), and the
calls into Python on 2 logical devices.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import bench_cpu

# calls whose C side reaches a Python function (a[i], a[k] = v, index_map,
# reshard to the same map, astype with casting=), on 2 virtual devices
CALLS = r"""
import json, time, timeit
import numpy as np
import dgarray as dg

TIMER = time.perf_counter

def best(f, inner=5000):
    return 1e6 * min(timeit.repeat(f, number=inner, repeat=7, timer=TIMER)) / inner

x = np.arange(1000.0)
a = dg.distributed_array(x, {0: slice(0, 500), 1: slice(500, None)})
m = {0: slice(0, 500), 1: slice(500, None)}
def setitem():
    a[3] = 1.0
out = {
    "getitem_int_us": best(lambda: a[3]),
    "setitem_int_us": best(setitem),
    "index_map_us": best(lambda: a.index_map),
    "reshard_same_us": best(lambda: a.reshard(m)),
    "astype_casting_us": best(lambda: a.astype(np.float32, casting="same_kind"), inner=1000),
    "distributed_array_map_us": best(lambda: dg.distributed_array(x, m), inner=1000),
}
a._sync()
print(json.dumps(out))
"""


# per-operation latency on the CUDA backend: small operations queued in a loop,
# one synchronisation at the end (what the core adds per call: planning,
# waits, the launch), best of 7
LATENCY = r"""
import json, time
import numpy as np
import dgarray as dg

def per_op(f, iters=20000):
    f(100)
    best = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        f(iters)
        best = min(best, time.perf_counter() - t)
    return 1e6 * best / iters

x = np.arange(1000, dtype=np.float32)
a, b = dg.asarray(x), dg.asarray(x)

def add(k):
    for _ in range(k):
        c = a + b
    c._sync()

def add_inplace(k):
    for _ in range(k):
        a.__iadd__(b)
    a._sync()

def total(k):
    for _ in range(k):
        s = a.sum()
    s._sync()

def chain(k):
    for _ in range(k):
        c = a * 2.0 + b
    c._sync()

out = {"add_f32_1000_us": per_op(add), "iadd_f32_1000_us": per_op(add_inplace),
       "axpy_f32_1000_us": per_op(chain), "sum_f32_1000_us": per_op(total, 5000)}
print(json.dumps(out))
"""

CLOCKS = {"wall": "time.perf_counter", "cpu": "time.process_time"}

# `import dgarray` timed by the process's CPU time, in milliseconds
IMPORT_CPU = ("import time; t = time.process_time(); import dgarray; "
              "print(1e3 * (time.process_time() - t))")


def child(tree, code, ndev, clock, backend="cpu"):
    code = code.replace("time.perf_counter", CLOCKS[clock])
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(tree), "python"),
               DGARRAY_BACKEND=backend, DGARRAY_CPU_DEVICES=str(ndev),
               DGARRAY_MIN_SPLIT_BYTES="0")
    if backend == "cuda":  # ndev logical devices over GPU 0
        env["DGARRAY_CUDA_DEVICES"] = ",".join(["0"] * ndev)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tree {tree}, {ndev} device(s), {backend}: exit {r.returncode}\n"
                           + r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def import_ms(tree, clock):
    """Milliseconds of `import dgarray`: -X importtime's cumulative time for
    the package (wall clock), or the process's CPU time around the import."""
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(tree), "python"),
               DGARRAY_BACKEND="cpu")
    if clock == "cpu":
        r = subprocess.run([sys.executable, "-c", IMPORT_CPU], env=env, capture_output=True,
                           text=True, check=True)
        return float(r.stdout.strip())
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import dgarray"],
                       env=env, capture_output=True, text=True, check=True)
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s?dgarray$", line)
        if m:
            return int(m.group(1)) / 1e3
    raise RuntimeError("no import time line for dgarray")


def one_round_cuda(tree, clock):
    rows = {}
    for ndev in (1, 2):
        rows.update({f"{k[:-3]} {ndev}dev us": v
                     for k, v in child(tree, LATENCY, ndev, clock, "cuda").items()})
    rows.update({f"{k[:-3]} 2dev us": v for k, v in child(tree, CALLS, 2, clock, "cuda").items()})
    return rows


def one_round(tree, imports, clock):
    one, two = child(tree, bench_cpu.CHILD, 1, clock), child(tree, bench_cpu.CHILD, 2, clock)
    rows = {
        "add_f64_1e7 1dev ms": 1e3 * one["add_f64_1e7_dgarray_s"],
        "add_f64_1e7 2dev ms": 1e3 * two["add_f64_1e7_dgarray_s"],
        "add_f64_1000 1dev us": one["add_f64_1000_dgarray_us"],
        "sum_f64_1000 2dev us": two["sum_f64_1000_dgarray_us"],
        "argmax_f64_1000 2dev us": two["argmax_f64_1000_dgarray_us"],
    }
    for k, r in ((1, one), (2, two)):  # bench_cpu.py's rows since linalg
        if "solve_f64_4096_dgarray_s" in r:
            rows[f"solve_f64_4096 {k}dev ms"] = 1e3 * r["solve_f64_4096_dgarray_s"]
    rows.update({f"{k[:-3]} 2dev us": v for k, v in child(tree, CALLS, 2, clock).items()})
    rows["import dgarray ms"] = min(import_ms(tree, clock) for _ in range(imports))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="tree A (its root)")
    ap.add_argument("--b", required=True, help="tree B (its root)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--imports", type=int, default=10,
                    help="fresh interpreters timing the import, per round and tree")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="time by the wall clock or by the process's CPU time")
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu",
                    help="bench_cpu.py's rows on the CPU backend, or latency rows on GPU 0")
    args = ap.parse_args()
    best = {"A": {}, "B": {}}
    for rnd in range(args.rounds):
        for name in ("AB" if rnd % 2 == 0 else "BA"):
            tree = args.a if name == "A" else args.b
            rows = (one_round_cuda(tree, args.clock) if args.backend == "cuda"
                    else one_round(tree, args.imports, args.clock))
            print(f"round {rnd + 1} {name}: " +
                  ", ".join(f"{k} {v:.3f}" for k, v in rows.items()), flush=True)
            for k, v in rows.items():
                best[name][k] = min(v, best[name].get(k, v))
    print(f"\n{'row (best of ' + str(args.rounds) + ' rounds)':34} {'A':>10} {'B':>10} {'B/A':>6}")
    for k in best["A"]:
        a, b = best["A"][k], best["B"][k]
        print(f"{k:34} {a:10.3f} {b:10.3f} {b / a:6.2f}")


if __name__ == "__main__":
    main()
