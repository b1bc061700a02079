"""The work of one dg.median (or dg.nanmedian, --func) of float32 (--dtype) N(0, 1) (or uniform
on [0, 1)), a fraction of it NaN at random places (--nan), over the whole array, per call, on the CPU backend's virtual devices (or the GPUs): host waits, slot
calls (works) per device by slot, copies to or from the host (each a round
trip on GPUs), full passes over the data per device (the
elements the count and select slots read over the elements a device holds),
waits of a device for another's work, bytes between devices, to and from the
host, all-reduces, and the best time of a call (`dg.median(a)._sync()`,
the time run.py's row takes), and the mean CPU time (user + sys, every thread) of those calls.  One line per device count; each count in a
process of its own (DGARRAY_CPU_DEVICES; with --cuda, the DGARRAY_CUDA_DEVICES
values named instead, ';' between them).

    python3 benchmarks/median_passes.py --log2 24 --devices 1,2,4
    python3 benchmarks/median_passes.py --log2 28 --cuda "0;0,1;0,0,0,0" [--plan after]
    python3 benchmarks/median_passes.py --func nanmedian --nan 0.3 --plan default
"""
import argparse
import json
import os
import subprocess
import sys
import time


def one(log2, reps, dist, plan, func, nan, dtype):
    import numpy as np
    import dgarray as dg
    from dgarray import _core, _quantiles
    if plan != "default":
        _quantiles._GATHER_FIRST = plan == "first"
    n = 1 << log2
    ndev = _core._ndevices()
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(n) if dist == "normal" else rng.random(n)).astype(dtype)
    if nan:
        x[rng.random(n) < nan] = np.nan
    a = dg.distributed_array(x, {d: slice(n * d // ndev, n * (d + 1) // ndev)
                                 for d in range(ndev)})
    a._sync()
    f, npf = getattr(dg, func), getattr(np, func)
    want = npf(x)
    got = f(a)
    got._sync()
    assert np.array_equal(got.get(), want, equal_nan=True), (got.get(), want)
    _core._work_stats(True)
    _core._move_stats(True)
    w0 = _core._host_waits()
    for _ in range(reps):
        r = f(a)
        r._sync()
    waits = (_core._host_waits() - w0) / reps
    st = _core._work_stats(True)
    best = float("inf")
    c0 = time.process_time()
    for _ in range(max(reps, 5)):
        t = time.perf_counter()
        f(a)._sync()
        best = min(best, time.perf_counter() - t)
    cpu = (time.process_time() - c0) / max(reps, 5)
    per = n / ndev
    works = {k: [v / reps for v in vs] for k, vs in st["works"].items()}
    return {"ndev": ndev, "log2": log2, "host_waits": waits, "best_us": best * 1e6,
            "cpu_us": cpu * 1e6,
            "gbs": x.itemsize * n / best / 1e9,
            "syncs": st["syncs"] / reps,
            "works": works,
            "works_per_device": [sum(vs[d] for vs in works.values()) for d in range(ndev)],
            "passes": [r / reps / per for r in st["read"]],
            "waits_across": [v / reps for v in st["waits_across"]],
            "between": st["between"] / reps, "to_host": st["to_host"] / reps,
            "host_copies": st["host_copies"] / reps,
            "from_host": st["from_host"] / reps, "allreduces": st["allreduces"] / reps,
            "allreduce_bytes": st["allreduce_bytes"] / reps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2", type=int, default=24)
    ap.add_argument("--devices", default="1,2,4")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dist", default="normal", choices=["normal", "uniform"],
                    help="N(0, 1) or uniform on [0, 1)")
    ap.add_argument("--plan", default="first", choices=["first", "after", "default"],
                    help="the gathering behind the first count (the default), or after "
                    "the host read the counts (_quantiles._GATHER_FIRST off: the plan before), "
                    "or as _quantiles._GATHER_FIRST is (default: on one device only)")
    ap.add_argument("--func", default="median", choices=["median", "nanmedian"])
    ap.add_argument("--nan", type=float, default=0.0, help="the fraction of NaNs")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--cuda", help="DGARRAY_CUDA_DEVICES values, ';' between them "
                    "(instead of --devices)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.log2, args.reps, args.dist, args.plan, args.func, args.nan,
                             args.dtype)))
        return
    print("| devices | best call | CPU a call | host waits | host copies | syncs | passes per device | works "
          "per device (by slot) | waits across | between B | to host B | from host B | "
          "all-reduces (B) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    specs = args.cuda.split(";") if args.cuda else args.devices.split(",")
    for k in specs:
        env = dict(os.environ, **({"DGARRAY_CUDA_DEVICES": k} if args.cuda else
                                  {"DGARRAY_CPU_DEVICES": k}))
        out = subprocess.run([sys.executable, __file__, "--one", "--log2", str(args.log2),
                              "--reps", str(args.reps), "--dist", args.dist, "--plan", args.plan,
                              "--func", args.func, "--nan", str(args.nan), "--dtype", args.dtype],
                             env=env, check=True,
                             capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        slots = ", ".join(f"{s} {'/'.join(f'{v:g}' for v in vs)}"
                          for s, vs in sorted(r["works"].items()))
        print(f"| {r['ndev']} | {r['best_us']:.1f} us ({r['gbs']:,.1f} GB/s) | "
              f"{r['cpu_us']:.1f} us | "
              f"{r['host_waits']:g} | {r['host_copies']:g} | {r['syncs']:g} | "
              f"{' / '.join(f'{p:.3g}' for p in r['passes'])} | "
              f"{' / '.join(f'{w:g}' for w in r['works_per_device'])} ({slots}) | "
              f"{' / '.join(f'{w:g}' for w in r['waits_across'])} | {r['between']:g} | "
              f"{r['to_host']:g} | {r['from_host']:g} | {r['allreduces']:g} "
              f"({r['allreduce_bytes']:g}) |")


if __name__ == "__main__":
    main()
