"""[multihost] Host reads, barriers and small reductions of a job beside MPI's
own calls on the same bytes (mpi4py), and beside one process.

    DGARRAY_CPU_DEVICES=1 mpirun -n 2 python benchmarks/mh_host.py [--mib 256 1024]
    DGARRAY_CPU_DEVICES=2 python benchmarks/mh_host.py      (one process: latencies)

Rows (process 0 prints them; wall time, and the CPU time (user+sys) of
process 0 over the row's repetitions):
- get_<n>MiB: a.get() of a float32 array of n MiB split over the job's
  devices (every process gets all of it), best of 3, GB/s of the array's
  bytes; beside it mpi4py's Allgather of the same bytes (each process's share
  to every process) and one Bcast of all of them.
- asarray_<n>MiB: dgarray.asarray(x) with the same x on every process.
- barrier: median microseconds of dgarray.distributed.barrier() beside
  MPI's Barrier (mpi4py), over --reps calls.
- sum_small, argmax_small: median microseconds of float(a.sum()) and
  int(argmax(a)) on 1,000 float32 over every device; beside them the best
  time of the backend's own exchange of 8 bytes from the first device to
  the last (NCCL between processes on GPUs): the floor of a small all-reduce
  device to device."""
import argparse
import os
import statistics
import time

import numpy as np

import dgarray as dg
from dgarray import distributed as dist

JOB = dist.process_count() > 1
if JOB:
    from mpi4py import MPI
    COMM = MPI.COMM_WORLD


def cpu():
    t = os.times()
    return t.user + t.system


def best(f, reps=3):
    """(best wall seconds, CPU seconds per call) of f over reps calls after one."""
    f()
    ts, c0 = [], cpu()
    for _ in range(reps):
        if JOB:
            COMM.Barrier()
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts), (cpu() - c0) / reps


def median_us(f, reps):
    for _ in range(min(reps, 50)):
        f()
    ts, c0 = [], cpu()
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6, (cpu() - c0) / reps * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, nargs="*", default=[256, 1024])
    ap.add_argument("--reps", type=int, default=2000)
    args = ap.parse_args()
    dg.config.progress = False
    rows = []
    np_ = dist.process_count()
    for mib in args.mib:
        n = mib << 18
        x = np.arange(n, dtype=np.float32)
        a = dg.asarray(x)
        got = a.get()
        assert np.array_equal(got, x)
        del got
        t, c = best(lambda: a.get())
        rows.append((f"get_{mib}MiB", "GB/s", x.nbytes / t / 1e9, c))
        if JOB:
            share = x.nbytes // np_
            mine = x[COMM.Get_rank() * (n // np_):(COMM.Get_rank() + 1) * (n // np_)].copy()
            out = np.empty_like(x)
            for fresh in (False, True):
                # into a new array each time (as get() does), or into one made before
                into = (lambda: np.empty_like(x)) if fresh else (lambda: out)
                how = "new array" if fresh else "same array"
                t, c = best(lambda: COMM.Allgather(mine, into()))
                rows.append((f"  mpi4py Allgather {mib} MiB, {how}", "GB/s",
                             np_ * share / t / 1e9, c))
                t, c = best(lambda: COMM.Bcast(into(), root=0))
                rows.append((f"  mpi4py Bcast {mib} MiB, {how}", "GB/s", x.nbytes / t / 1e9, c))
        t, c = best(lambda: dg.asarray(x)._sync())
        rows.append((f"asarray_{mib}MiB", "GB/s", x.nbytes / t / 1e9, c))
        del a
    t, c = median_us(dist.barrier, args.reps)
    rows.append(("barrier", "us", t, c))
    if JOB:
        t, c = median_us(COMM.Barrier, args.reps)
        rows.append(("  mpi4py Barrier", "us", t, c))
    small = np.random.default_rng(0).standard_normal(1000, dtype=np.float32)
    nd = len(dg.devices())
    s = dg.distributed_array(small, {d: slice(d * 1000 // nd, (d + 1) * 1000 // nd)
                                     for d in range(nd)})
    assert abs(float(s.sum()) - float(small.sum())) < 1e-3
    assert int(np.argmax(s)) == int(np.argmax(small))
    t, c = median_us(lambda: float(s.sum()), args.reps)
    rows.append(("sum_small float(a.sum())", "us", t, c))
    t, c = median_us(lambda: int(np.argmax(s)), args.reps)
    rows.append(("argmax_small int(argmax(a))", "us", t, c))
    if nd > 1:
        # the floor of a small all-reduce across the job's devices: the
        # backend's own exchange of 8 bytes from the first device to the
        # last (NCCL's send and receive between the processes on GPUs)
        t = dg._core._bench_exchange([(0, nd - 1)], 8, min(args.reps, 500))
        rows.append(("  exchange of 8 bytes, first device to last (best)", "us", t * 1e6, 0.0))
    if dist.process_index() == 0:
        print(f"# {dg.backend()}, {np_} process(es), {len(dg.devices())} device(s); "
              f"load {os.getloadavg()[0]:.2f}")
        print("| row | unit | value | CPU s (or us) per call, process 0 |")
        for name, unit, v, c in rows:
            print(f"| {name} | {unit} | {v:,.2f} | {c:,.4f} |" if unit != "us"
                  else f"| {name} | {unit} | {v:,.1f} | {c:,.1f} |")


if __name__ == "__main__":
    main()
