"""CPU-backend speed against NumPy on this machine (issues [foundation], [cpu-speed]).

The table of issue [cpu-speed]: 2^25 elements, one process per (row,
configuration), configurations alternating in order from round to round; the
time of a configuration is the best of its rounds (each round's time the best
of a few calls), the spread the worst round's best over the best.
Configurations: NumPy (single-threaded for elementwise rows and reductions, as
NumPy is; its threaded BLAS for products) and dgarray on 1, 2, ... virtual CPU
devices.  Rows:
  add_f64       a + b                              float64
  sin_f32       sin(a)                             float32
  exp_f64       exp(a)                             float64
  chain_f64     sqrt(a*a + b*b) + sin(a)*2 - b/3   float64
  sum_f64       a.sum()                            float64
  argmax_f64    a.argmax()                         float64
  jacobi_f64    0.25 * (four neighbours) of a (8192, 4096) grid, interior
  matmul_f64    m @ m, 4096 x 4096                 float64
  matmul_f32    m @ m, 4096 x 4096                 float32
  solve_f64     linalg.solve of a 4096 x 4096 system and a vector, float64
                (LAPACK through the dense slot; NumPy: numpy.linalg.solve)
and, once a round, the machine's memory bandwidth: NumPy's copyto of 2^25
float64 into a block written before, on 1 core and on every core of the
affinity mask (a slab each).
Ratio = NumPy's time / dgarray's time (above 1: dgarray is faster).  With
--host-cost, the host-cost rows of issue [foundation] (small arrays) too.

    python benchmarks/bench_cpu.py --devices 1,2 --rounds 3 --out benchmarks/results/NAME
writes NAME.json and NAME.md.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time

ROWS = ["add_f64", "sin_f32", "exp_f64", "chain_f64", "sum_f64", "argmax_f64", "jacobi_f64",
        "matmul_f64", "matmul_f32", "solve_f64"]
# bytes moved per element (read + written), for the bandwidth column
ROW_BYTES = {"add_f64": 24, "sum_f64": 8, "argmax_f64": 8, "jacobi_f64": 16,
             "exp_f64": 16, "sin_f32": 8, "chain_f64": 24}
MEMORY_BOUND = ("add_f64", "sum_f64", "argmax_f64", "jacobi_f64")

CHILD = r"""
import json, os, sys, time
import numpy as np
row, impl, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = 1 << 25
rng = np.random.default_rng(0)
if row.startswith("matmul"):
    dt = np.float32 if row.endswith("f32") else np.float64
    x = rng.standard_normal((4096, 4096)).astype(dt)
    y = None
elif row == "jacobi_f64":
    x = rng.standard_normal((8192, 4096))
    y = None
elif row == "solve_f64":
    # a well-conditioned 4096 x 4096 system and one right-hand side
    x = rng.standard_normal((4096, 4096)) + 64.0 * np.eye(4096)
    y = rng.standard_normal(4096)
else:
    x = rng.standard_normal(n).astype(np.float32 if row.endswith("f32") else np.float64)
    y = rng.standard_normal(n).astype(x.dtype)

if impl == "numpy":
    xp = np
    a, b = x, y
    sync = lambda r: None
else:
    import dgarray as xp
    a = xp.asarray(x)
    b = xp.asarray(y) if y is not None else None
    def sync(r):
        if r.mode != "replica":
            r = r.change_mode("replica")
        r._sync()

def work():
    if row == "add_f64":
        return a + b
    if row == "sin_f32":
        return xp.sin(a)
    if row == "exp_f64":
        return xp.exp(a)
    if row == "chain_f64":
        return xp.sqrt(a * a + b * b) + xp.sin(a) * 2 - b / 3
    if row == "sum_f64":
        return a.sum()
    if row == "argmax_f64":
        return a.argmax()
    if row == "jacobi_f64":
        return 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    if row.startswith("matmul"):
        return a @ a
    if row == "solve_f64":
        return xp.linalg.solve(a, b)
    raise SystemExit("unknown row " + row)

def call():
    r = work()
    if impl != "numpy":
        sync(r)
    return r

res = {}
if row == "bandwidth":
    # the machine's bandwidth: a copy into a block written before, on every
    # core of the affinity mask, a slab each (NumPy's copyto drops the GIL)
    import threading
    dst = np.empty_like(a)
    dst[...] = 0
    k = len(os.sched_getaffinity(0))
    cuts = [n * i // k for i in range(k + 1)]
    def par():
        ts = [threading.Thread(target=np.copyto, args=(dst[cuts[i]:cuts[i + 1]],
                                                        a[cuts[i]:cuts[i + 1]]))
              for i in range(k)]
        for t in ts: t.start()
        for t in ts: t.join()
    best = 1e9
    for _ in range(reps + 2):
        t0 = time.perf_counter(); par(); best = min(best, time.perf_counter() - t0)
    res["copy_all_cores_s"] = best
    best = 1e9
    for _ in range(reps + 2):
        t0 = time.perf_counter(); np.copyto(dst, a); best = min(best, time.perf_counter() - t0)
    res["copy_1_core_prealloc_s"] = best
    res["s"] = best
    print(json.dumps(res))
    raise SystemExit(0)
call(); call()
best = cpu = 1e9
for _ in range(reps):
    c0, t0 = time.process_time(), time.perf_counter()
    r = call()
    best = min(best, time.perf_counter() - t0)
    cpu = min(cpu, time.process_time() - c0)
    del r
res["s"] = best
res["cpu_s"] = cpu
print(json.dumps(res))
"""


def parse_spec(spec, pythonpath):
    """A dgarray configuration "N[:VAR=VALUE...][@PYTHONPATH]": N virtual
    devices, environment settings and another build; (ndev, env, path)."""
    path = pythonpath
    if "@" in spec:
        spec, path = spec.split("@", 1)
    parts = spec.split(":")
    env = dict(p.split("=", 1) for p in parts[1:])
    return int(parts[0]), env, path


def run_one(row, impl, spec, reps, pythonpath, timeout):
    """Times of one (row, configuration) in a fresh process: a dict with the
    best wall seconds "s", the best process CPU seconds "cpu_s" and extras."""
    env = dict(os.environ, DGARRAY_BACKEND="cpu")
    path = pythonpath
    if impl == "dgarray":
        ndev, extra, path = parse_spec(spec, pythonpath)
        env["DGARRAY_CPU_DEVICES"] = str(ndev)
        env.update(extra)
    if path:
        env["PYTHONPATH"] = path
    r = subprocess.run([sys.executable, "-c", CHILD, row, impl, str(reps)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{row} {impl} {spec}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def table(args):
    devs = args.devices.split(",")
    configs = [("numpy", "")] + [("dgarray", d) for d in devs]
    rows = args.rows.split(",") if args.rows else ROWS
    times = {(r, c): [] for r in rows for c in configs}
    cpus = {(r, c): [] for r in rows for c in configs}
    extra = {}
    loads = []
    for rnd in range(args.rounds):
        loads.append(os.getloadavg()[0])
        bw = run_one("bandwidth", "numpy", "", args.reps, args.pythonpath, args.timeout)
        for k, v in bw.items():
            extra.setdefault(k, []).append(v)
        for row in rows:
            order = configs if rnd % 2 == 0 else configs[::-1]
            for impl, spec in order:
                reps = 2 if row.startswith(("matmul", "solve")) else args.reps
                res = run_one(row, impl, spec, reps, args.pythonpath, args.timeout)
                times[(row, (impl, spec))].append(res["s"])
                cpus[(row, (impl, spec))].append(res["cpu_s"])
                print(f"round {rnd + 1} {row:11s} {impl:7s} {spec:>10s} "
                      f"{1e3 * res['s']:9.2f} ms (CPU {1e3 * res['cpu_s']:9.2f})"
                      f"  load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    loads.append(os.getloadavg()[0])
    return summarize(args, devs, rows, times, cpus, extra, loads)


LOG_LINE = re.compile(r"round (\d+) (\S+)\s+(numpy|dgarray)\s+(\S*)\s+([\d.]+) ms "
                      r"\(CPU\s+([\d.]+)\)\s+load ([\d.]+)")


def from_log(args):
    """The table of a run's log (its stderr), for a run cut short: the rounds
    it completed for each configuration."""
    times, cpus, loads, devs, rows = {}, {}, [], [], []
    with open(args.from_log) as f:
        for line in f:
            m = LOG_LINE.match(line.strip())
            if not m:
                continue
            _, row, impl, spec, wall, cpu, load = m.groups()
            if impl == "dgarray" and spec not in devs:
                devs.append(spec)
            if row not in rows:
                rows.append(row)
            times.setdefault((row, (impl, spec)), []).append(float(wall) / 1e3)
            cpus.setdefault((row, (impl, spec)), []).append(float(cpu) / 1e3)
            loads.append(float(load))
    rows = [r for r in rows if all((r, c) in times for c in [("numpy", "")] +
                                   [("dgarray", d) for d in devs])]
    args.rounds = max(len(v) for v in times.values())
    return summarize(args, devs, rows, times, cpus, {}, [min(loads), max(loads)])


def summarize(args, devs, rows, times, cpus, extra, loads):
    """The results of a run as a dict (what --out writes as JSON)."""
    n = 1 << 25
    out = {"date": datetime.date.today().isoformat(), "machine": platform.node(),
           "cpu": _cpu_name(), "cores": len(os.sched_getaffinity(0)),
           "numpy": _numpy_version(), "pythonpath": args.pythonpath or "",
           "label": args.label, "rounds": args.rounds, "load_1min": loads, "rows": []}
    if "copy_all_cores_s" in extra:
        out["bandwidth_all_cores_GBs"] = 2 * 8 * n / min(extra["copy_all_cores_s"]) / 1e9
        out["bandwidth_1_core_GBs"] = 2 * 8 * n / min(extra["copy_1_core_prealloc_s"]) / 1e9
    for row in rows:
        npy, npc = times[(row, ("numpy", ""))], cpus[(row, ("numpy", ""))]
        ent = {"row": row, "numpy_s": min(npy), "numpy_spread": max(npy) / min(npy),
               "numpy_cpu_s": min(npc), "dgarray": {}}
        for d in devs:
            t, c = times[(row, ("dgarray", d))], cpus[(row, ("dgarray", d))]
            e = {"s": min(t), "spread": max(t) / min(t), "ratio": min(npy) / min(t),
                 "cpu_s": min(c), "cpu_ratio": min(npc) / min(c), "all_s": t, "all_cpu_s": c}
            if row in ROW_BYTES:
                e["GBs"] = ROW_BYTES[row] * n / min(t) / 1e9
            ent["dgarray"][d] = e
        ent["numpy_all_s"] = npy
        ent["numpy_all_cpu_s"] = npc
        out["rows"].append(ent)
    return out


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _numpy_version():
    import numpy
    return numpy.__version__


def _spec_label(spec):
    """"2 dev", "2 dev DGARRAY_CPU_PIN=1", "1 dev @dg_base" (the build's folder)."""
    spec, _, path = spec.partition("@")
    n, _, rest = spec.partition(":")
    label = f"{n} dev" + (f" {rest.replace(':', ' ')}" if rest else "")
    if path:
        label += f" @{os.path.basename(os.path.dirname(os.path.abspath(path)))}"
    return label


def markdown(out):
    devs = list(out["rows"][0]["dgarray"]) if out["rows"] else []
    lines = [f"CPU backend against NumPy {out['numpy']}, {out['date']}, {out['cpu']} "
             f"({out['cores']} cores), {out['label']}; {out['rounds']} alternating rounds, "
             f"best of each; 1-min load {', '.join(f'{x:.2f}' for x in out['load_1min'])}.",
             ""]
    if "bandwidth_all_cores_GBs" in out:
        lines += [f"Memory bandwidth (NumPy copyto of 256 MiB into a written block): "
                  f"{out['bandwidth_1_core_GBs']:.1f} GB/s on 1 core, "
                  f"{out['bandwidth_all_cores_GBs']:.1f} GB/s on {out['cores']} cores "
                  f"(read + write bytes).", ""]
    head = ("| row | NumPy ms | " +
            " | ".join(f"{_spec_label(d)} ms | ratio | spread | CPU ratio" for d in devs) + " |")
    lines += [head, "|" + "---|" * (2 + 4 * len(devs))]
    for r in out["rows"]:
        cells = [r["row"], f"{1e3 * r['numpy_s']:.1f} (x{r['numpy_spread']:.2f})"]
        for d in devs:
            e = r["dgarray"][d]
            gb = f", {e['GBs']:.1f} GB/s" if "GBs" in e and r["row"] in MEMORY_BOUND else ""
            cells += [f"{1e3 * e['s']:.1f}{gb}", f"{e['ratio']:.2f}", f"x{e['spread']:.2f}",
                      f"{e['cpu_ratio']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "ratio = NumPy's wall time / dgarray's (best of the rounds); spread = the "
              "slowest round's best / the fastest round's best (NumPy's in brackets); CPU ratio "
              "= NumPy's process CPU time / dgarray's (all threads): on a loaded machine the "
              "per-core speed, which wall times hide."]
    return "\n".join(lines) + "\n"


HOST_COST = r"""
import json, time
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
x = np.random.default_rng(0).standard_normal(1000)
y = np.random.default_rng(1).standard_normal(1000)
sa, sb = dg.asarray(x), dg.asarray(y)
def small():
    c = sa + sb
for _ in range(1000):
    small(); x + y
out["add_f64_1000_dgarray_us"] = 1e6 * best(small, 7, 20000)
out["add_f64_1000_numpy_us"] = 1e6 * best(lambda: x + y, 7, 20000)
sa._sync()
# a.sum() and a.argmax() on 1,000 elements split over every device: the
# method call, the plan and the fold (host cost, the work being tiny)
ndev = len(dg.devices())
sd = dg.distributed_array(x, {d: slice(1000 * d // ndev, 1000 * (d + 1) // ndev)
                              for d in range(ndev)})
for name, f, g in (("sum", lambda: sd.sum(), lambda: x.sum()),
                   ("argmax", lambda: sd.argmax(), lambda: x.argmax())):
    for _ in range(1000):
        f()
    out[name + "_f64_1000_dgarray_us"] = 1e6 * best(f, 7, 5000)
    out[name + "_f64_1000_numpy_us"] = 1e6 * best(g, 7, 5000)
sd._sync()
print(json.dumps(out))
"""


def host_cost(pythonpath):
    """The host-cost rows of issue [foundation]: one small op, 1 and 2 devices."""
    res = {}
    for ndev in (1, 2):
        env = dict(os.environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_DEVICES=str(ndev),
                   DGARRAY_MIN_SPLIT_BYTES="0")
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        r = subprocess.run([sys.executable, "-c", HOST_COST], env=env, capture_output=True,
                           text=True, check=True)
        res[ndev] = json.loads(r.stdout.strip().splitlines()[-1])
    one, two = res[1], res[2]
    rows = [("add_f64_1000 (1 device)", "us", one["add_f64_1000_dgarray_us"],
             one["add_f64_1000_numpy_us"], "<= NumPy + 3 us")]
    rows += [(f"{r}_f64_1000 (2 devices)", "us", two[f"{r}_f64_1000_dgarray_us"],
              two[f"{r}_f64_1000_numpy_us"], "-") for r in ("sum", "argmax")]
    print(f"{'workload':28} {'unit':4} {'dgarray':>10} {'NumPy':>10} {'ratio':>7}  goal")
    for name, unit, d, n, goal in rows:
        print(f"{name:28} {unit:4} {d:10.3f} {n:10.3f} {d / n:7.2f}  {goal}")
    return [{"workload": r[0], "unit": r[1], "dgarray": r[2], "peers": {"numpy": r[3]},
             "goal": r[4]} for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="1,2",
                    help="dgarray configurations, comma-separated: N virtual devices, "
                         "optionally :VAR=VALUE settings and @PYTHONPATH of another build "
                         "(e.g. 2:DGARRAY_CPU_PIN=1 or 1@/tmp/base/python)")
    ap.add_argument("--rows", default="", help="rows to run (default: all), comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5, help="timed calls per process")
    ap.add_argument("--pythonpath",
                    default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         "python"),
                    help="PYTHONPATH of the processes (default: this checkout's python/; "
                         "another build of dgarray to compare)")
    ap.add_argument("--label", default="", help="what this build is, for the table")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per process")
    ap.add_argument("--out", help="write OUT.json and OUT.md")
    ap.add_argument("--host-cost", action="store_true",
                    help="also the host-cost rows of issue [foundation]")
    ap.add_argument("--from-log", help="only render the table of a run's log (stderr)")
    args = ap.parse_args()
    out = from_log(args) if args.from_log else table(args)
    md = markdown(out)
    print(md)
    if args.host_cost:
        out["host_cost"] = host_cost(args.pythonpath)
    if args.out:
        with open(args.out + ".json", "w") as f:
            json.dump(out, f, indent=1)
        with open(args.out + ".md", "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
