"""Where the time of a workload goes on the GPUs: a timeline of one run.

For each workload, prints the best wall time of several runs, then the CUDA
runtime calls (host side) and the kernels and copies (device side) of one
run, traced by CUPTI through torch.profiler, with times relative to the
run's first event.  CUPTI adds about a microsecond to each runtime call, so
the timeline shows the structure and the kernels' own durations; the wall
times without tracing are the figures.

Also measures the ceilings the reduction and reshard goals are set against:
a plain float4 read-and-sum kernel on every GPU at once, NCCL's send between
two GPUs and its all-to-all (grouped send/recv, as nccl-tests does), through
CuPy's NCCL binding.

    python benchmarks/profile_gpu.py [--only sum,argmax,...] [--trace DIR]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import dgarray as dg  # noqa: E402
from _nccl_peer import all_to_all_seconds  # noqa: E402
from _timing import done, times  # noqa: E402


def median_counts_first(a, plan=False):
    """float(dg.median(a)) with the host reading the first counts before it
    enqueues the gathering (dgarray._quantiles._GATHER_FIRST off; since
    session 16 on by default for an array on one device): the other plan,
    for an A/B in one run."""
    from dgarray import _quantiles
    old = _quantiles._GATHER_FIRST
    _quantiles._GATHER_FIRST = plan
    try:
        return float(dg.median(a))
    finally:
        _quantiles._GATHER_FIRST = old


def best_of(f, reps=10, warm=3):
    """The fastest and the median of `reps` timed calls of f."""
    ts = times(f, reps, warm)
    return min(ts), float(np.median(ts))


def timeline(f, tracedir, name):
    """One traced run of f: rows (kind, device, stream, name, start us, dur us)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    f()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()  # the first event: the time the run starts
        f()
    path = os.path.join(tracedir, f"trace-{name}.json")
    prof.export_chrome_trace(path)
    with open(path) as fh:
        tr = json.load(fh)
    rows = []
    for e in tr.get("traceEvents", []):
        cat = e.get("cat", "")
        if cat not in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver"):
            continue
        a = e.get("args", {})
        rows.append((cat, a.get("device", "-"), a.get("stream", "-"), e.get("name", "?"),
                     float(e["ts"]), float(e.get("dur", 0))))
    if not rows:
        return []
    t0 = min(r[4] for r in rows)
    rows = sorted(((c, d, s, n, ts - t0, du) for c, d, s, n, ts, du in rows),
                  key=lambda r: r[4])
    return rows


def print_timeline(rows, limit=110):
    for c, d, s, n, ts, du in rows[:limit]:
        side = "GPU" if c in ("kernel", "gpu_memcpy", "gpu_memset") else "host"
        print(f"    {ts:9.1f} {du:8.1f}  {side:4} d{d} s{s}  {n[:90]}")
    if len(rows) > limit:
        print(f"    ... {len(rows) - limit} more")
    gpu = [r for r in rows if r[0] in ("kernel", "gpu_memcpy", "gpu_memset")]
    if gpu:
        end = max(r[4] + r[5] for r in gpu)
        print(f"    last GPU work ends at {end:.1f} us; kernels by device: " + ", ".join(
            f"d{d} {sum(r[5] for r in gpu if r[1] == d):.1f} us"
            for d in sorted({r[1] for r in gpu}, key=str)))


def sq_map_k(k, ndev):
    return {d: slice(k * d // ndev, k * (d + 1) // ndev) for d in range(ndev)}


def workloads(n=1 << 28, sq=16384):
    ndev = len(dg.devices())
    rows_map = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    a = dg.distributed_array(x, rows_map)
    y = np.random.default_rng(2).standard_normal((sq, sq), dtype=np.float32)
    sq_map = {d: slice(sq * d // ndev, sq * (d + 1) // ndev) for d in range(ndev)}
    b = dg.distributed_array(y, sq_map)
    c = dg.distributed_array(x, rows_map)
    # 1/8 of c on the other device: every block moved forward by n / (8 ndev)
    s = n // (8 * ndev)
    cmap = {d: slice(n * d // ndev + s, n * (d + 1) // ndev + s) for d in range(ndev - 1)}
    cmap[ndev - 1] = [slice(n * (ndev - 1) // ndev + s, n), slice(0, s)]
    cs = dg.distributed_array(x, cmap) if ndev > 1 else c
    one = dg.distributed_array(x[: 1 << 25], {0: slice(None)})
    to1 = {1 if ndev > 1 else 0: slice(None)}
    mm = {}
    if hasattr(dg, "matmul"):
        k = 8192
        # random operands, as benchmarks/run.py's: GEMMs of constant data
        # draw less power and ran 7-10% faster on the H200s
        mx = np.random.default_rng(3).standard_normal((k, k))
        ma = dg.distributed_array(mx.astype(np.float32), sq_map_k(k, ndev))
        mb = dg.distributed_array(mx.T.astype(np.float32), sq_map_k(k, ndev))

        def tf32():
            dg.config.allow_tf32 = True
            try:
                done(ma @ mb)
            finally:
                dg.config.allow_tf32 = False
        big = dg.ones((1 << 15, 1 << 15), np.float64, index_map=sq_map_k(1 << 15, ndev))
        vec = dg.ones(1 << 15, np.float64)
        fa = dg.distributed_array(mx, sq_map_k(k, ndev))
        fb = dg.distributed_array(np.ascontiguousarray(mx.T), sq_map_k(k, ndev))
        del mx
        st = {"x": dg.zeros(1 << 15), "r": dg.ones(1 << 15) * 1e-3}
        st["p"] = st["r"]
        st["rs"] = st["r"].dot(st["r"])

        def cg_step():
            """One iteration of tests/_cg.py's loop (big: all ones, so the
            values mean nothing; the steps and their waits are the same)."""
            p, r = st["p"], st["r"]
            Ap = big.dot(p)
            alpha = st["rs"] / p.dot(Ap)
            st["x"] = st["x"] + alpha * p
            r = r - alpha * Ap
            rsnew = r.dot(r)
            bool(dg.sqrt(rsnew) < 0.0)
            st["p"] = r + (rsnew / st["rs"]) * p
            st["r"], st["rs"] = r, rsnew
        mm = {"matmul_tf32": (tf32, 2 * k ** 3),
              "cg_step": (cg_step, 8 << 30),
              "matmul_f64": (lambda: done(fa @ fb), 2 * k ** 3),
              "matvec_f64_32768": (lambda: done(big.dot(vec)), 8 << 30)}
    # [surface] and [gpu-speed] rows: the selection's passes one by one (the
    # top digit of every key; a 12-bit digit under a prefix that few keys
    # share; the gathering of the keys under that prefix, a median's second
    # and last reading of x), the median and the histogram of run.py's
    # w_surface, and take of w_take
    from dgarray import _core
    key0 = int(np.array(0.01, np.float32).view(np.uint32)) ^ 0x80000000
    under0 = max(1, int(_core._count(a, None, 4096, 1, 8, 20, key0 >> 20).get().sum()))
    ti = dg.asarray(np.random.default_rng(8).integers(0, 1 << 26, 1 << 26))
    tx = dg.asarray(x[: 1 << 26])
    surface = {
        "count_top": (lambda: _core._count(a, None, 4096, 1, 20, 32, 0).get(), 4 * n),
        "count_prefix": (lambda: _core._count(a, None, 4096, 1, 8, 20, key0 >> 20).get(), 4 * n),
        "keep_prefix": (lambda: _core._keep_keys(a, 20, key0 >> 20, key0 >> 20, under0,
                                                 np.float32(np.nan))._sync(), 4 * n),
        "median": (lambda: float(dg.median(a)), 4 * n),
        "median_after": (lambda: median_counts_first(a), 4 * n),
        "median_first": (lambda: median_counts_first(a, True), 4 * n),  # always gather first
        "histogram": (lambda: dg.histogram(a, bins=256, range=(-4, 4))[0].get(), 4 * n),
        # run.py's norm row reads float64; float32 here (the same calls)
        "norm": (lambda: float(dg.linalg.norm(a)), 4 * n),
        "take": (lambda: dg.take(tx, ti)._sync(), 16 << 26),
    }
    # [fusion] rows: one Jacobi step (run.py's code and byte count) and the
    # chain; [linalg-fft]: fft2 of complex64 split by rows, and its columns'
    # pass alone (axis 0 of an array split by columns)
    from run import chain_expr, jacobi_step, jacobi_views
    jv = jacobi_views(b)
    jbytes = 16 * (sq - 2) * (sq - 2) * 4 + 2 * (ndev - 1) * (sq - 2) * 4
    fn = 8192
    fz = (np.random.default_rng(12).standard_normal((fn, fn), dtype=np.float32)
          .astype(np.complex64))
    fr = dg.distributed_array(fz, sq_map_k(fn, ndev))
    fc = fr.reshard({d: (slice(None), m) for d, m in sq_map_k(fn, ndev).items()})
    fflops = 5.0 * fn * fn * np.log2(fn * fn)
    fusion = {
        "jacobi": (lambda: (jacobi_step(*jv), b._sync()), jbytes),
        "chain": (lambda: chain_expr(dg, a, c)._sync(), 3 * 4 * n),
        "fft2": (lambda: dg.fft.fft2(fr)._sync(), fflops),
        "fft_cols": (lambda: dg.fft.fft(fc, axis=0)._sync(), fflops / 2),
    }
    return {
        **mm,
        **surface,
        **fusion,
        "add_reshard": (lambda: (a + cs.reshard(a.index_map))._sync(), 3 * 4 * n),
        "reshard_128MiB": (lambda: one.reshard(to1)._sync(), 4 << 25),
        "add": (lambda: (a + c)._sync(), 3 * 4 * n),
        "sum": (lambda: done(a.sum()), 4 * n),
        "sum_nocombine": (lambda: a.sum()._sync(), 4 * n),
        "argmax": (lambda: done(a.argmax()), 4 * n),
        "sum_axis0": (lambda: done(b.sum(axis=0)), 4 * sq * sq),
        "sum_axis1": (lambda: done(b.sum(axis=1)), 4 * sq * sq),
        # errstate_ab.py's scans: a 1-d cumsum (tiled) and the grid's along
        # each axis (axis 0: the columns' scans, carried across devices)
        "cumsum": (lambda: dg.cumsum(a)._sync(), 8 * n),
        "cumsum_rows": (lambda: dg.cumsum(b, axis=1)._sync(), 8 * sq * sq),
        "cumsum_cols": (lambda: dg.cumsum(b, axis=0)._sync(), 8 * sq * sq),
    }


READ4 = r"""
extern "C" __global__ void read4(const float4* a, float* out, long long n) {
    float s = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float4 v = a[i]; s += v.x + v.y + v.z + v.w; }
    if (s == 12345.f) out[0] = s;
}
"""


def ceilings(n=1 << 28):
    """Plain read kernel on all GPUs; NCCL send and all-to-all; peer copy."""
    try:
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        print(f"  no cupy: {e}")
        return
    ngpu = cp.cuda.runtime.getDeviceCount()
    per = n // ngpu
    bufs, kern = [], []
    for d in range(ngpu):
        with cp.cuda.Device(d):
            bufs.append((cp.ones(per, cp.float32), cp.zeros(1, cp.float32)))
            kern.append(cp.RawModule(code=READ4).get_function("read4"))
            nsm = cp.cuda.Device(d).attributes["MultiProcessorCount"]

    def sync():
        for d in range(ngpu):
            cp.cuda.Device(d).synchronize()

    for blocks_per_sm in (2, 4, 8, 16):
        def run():
            for d in range(ngpu):
                with cp.cuda.Device(d):
                    a, o = bufs[d]
                    kern[d]((nsm * blocks_per_sm,), (256,), (a, o, np.int64(per // 4)))
            sync()
        t, _ = best_of(run, 10)
        print(f"  read4 kernel, {blocks_per_sm} blocks/SM, {ngpu} GPUs: "
              f"{4 * n / t / 1e9:,.0f} GB/s ({t * 1e6:.1f} us)")
    del bufs
    if ngpu < 2:
        return
    try:
        from cupy.cuda import nccl
        comms = nccl.NcclCommunicator.initAll(list(range(ngpu)))
    except Exception as e:  # noqa: BLE001
        print(f"  NCCL through CuPy unavailable: {e}")
        return
    streams = []
    for d in range(ngpu):
        with cp.cuda.Device(d):
            streams.append(cp.cuda.Stream(non_blocking=True))
    for nbytes in (128 << 20, 1 << 30):
        bufs = []
        for d in range(2):
            with cp.cuda.Device(d):
                bufs.append(cp.ones(nbytes // 4, cp.float32))

        def send():
            nccl.groupStart()
            comms[0].send(bufs[0].data.ptr, nbytes // 4, nccl.NCCL_FLOAT32, 1, streams[0].ptr)
            comms[1].recv(bufs[1].data.ptr, nbytes // 4, nccl.NCCL_FLOAT32, 0, streams[1].ptr)
            nccl.groupEnd()
            for s in streams[:2]:
                s.synchronize()
        t, _ = best_of(send, 10)
        print(f"  NCCL send 0->1, {nbytes >> 20} MiB: {nbytes / t / 1e9:,.1f} GB/s")

        def peer():
            with cp.cuda.Device(1):
                cp.cuda.runtime.memcpyPeerAsync(bufs[1].data.ptr, 1, bufs[0].data.ptr, 0,
                                                nbytes, streams[1].ptr)
                streams[1].synchronize()
        t, _ = best_of(peer, 10)
        print(f"  cudaMemcpyPeerAsync 0->1, {nbytes >> 20} MiB: {nbytes / t / 1e9:,.1f} GB/s")
        del bufs
    # all-to-all of an 8 GiB array over the GPUs, as grouped send/recv
    t = all_to_all_seconds(8 << 30)
    algbw = (8 << 30) // ngpu / t / 1e9
    print(f"  NCCL all-to-all of 8 GiB over {ngpu} GPUs: {t * 1e3:.2f} ms, algbw "
          f"{algbw:,.1f} GB/s, busbw {algbw * (ngpu - 1) / ngpu:,.1f} GB/s")


def host_costs():
    """Host time of the steps of a + c.reshard(a.index_map), each enqueued
    without waiting for the devices (the queues are drained between reps)."""
    n = 1 << 28
    ndev = len(dg.devices())
    rows_map = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    s = n // (8 * ndev)
    cmap = {d: slice(n * d // ndev + s, n * (d + 1) // ndev + s) for d in range(ndev - 1)}
    cmap[ndev - 1] = [slice(n * (ndev - 1) // ndev + s, n), slice(0, s)]
    x = np.zeros(n, np.float32)
    a, c = dg.distributed_array(x, rows_map), dg.distributed_array(x, cmap)
    m = a.index_map
    r = c.reshard(m)  # noqa: F841 - used below

    for name, f in [("a.index_map", lambda: a.index_map),
                    ("c.reshard(m)", lambda: c.reshard(m)),
                    ("a + r", lambda: a + r),
                    ("a + c", lambda: a + c),
                    ("a.sum()", lambda: a.sum()),
                    ("(a + a) same layout", lambda: a + a)]:
        f()
        ts = []
        for _ in range(5):
            dg._core._sync_all()
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        dg._core._sync_all()
        print(f"  host {name}: {min(ts) * 1e6:.1f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only")
    ap.add_argument("--trace", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--no-ceilings", action="store_true")
    ap.add_argument("--rows", type=int, default=110, help="timeline rows printed per workload")
    ap.add_argument("--calls", type=int, default=1,
                    help="consecutive calls traced in one timeline (a cost paid on every "
                         "call shows as often)")
    args = ap.parse_args()
    print(f"dgarray on {dg.backend()}, {len(dg.devices())} device(s)")
    wl = workloads()
    names = args.only.split(",") if args.only else list(wl)
    for name in names:
        f, nbytes = wl[name]
        tmin, tmed = best_of(f)
        print(f"\n== {name}: best {tmin * 1e6:.1f} us ({nbytes / tmin / 1e9:,.0f} GB/s), "
              f"median {tmed * 1e6:.1f} us")
        try:
            print_timeline(timeline(lambda: [f() for _ in range(args.calls)], args.trace,
                                    name), args.rows)
        except Exception as e:  # noqa: BLE001
            print(f"    no trace: {e}")
        sys.stdout.flush()
    print("\n== host costs (enqueue only)")
    host_costs()
    if not args.no_ceilings:
        print("\n== ceilings")
        ceilings()


if __name__ == "__main__":
    main()
