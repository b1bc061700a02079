"""dgarray's benchmark suite, side by side with the peers present.

Runs each workload for dgarray and, in the same process, for NumPy, CuPy (one
GPU), cupyx.distributed.array and JAX (all GPUs) where they are installed,
plus the hardware ceiling where one applies (a plain vectorised CUDA kernel
run on every GPU at once).  Writes benchmarks/results/<date>-<machine>.json
(rows {"workload", "unit", "dgarray", "peers": {name: value}, "ceiling"}) and
the same table as Markdown, and prints it.

    python benchmarks/run.py [--only add_f32_2p28,sin_f32_2p28] [--machine NAME]

As a job of several processes ([multihost], docs/multihost.md), e.g. two of
one GPU each, ``mpirun -n 2 -x DGARRAY_CUDA_DEVICES ... python
benchmarks/run.py --only reshard_128MiB,add_f32_2p28,sum_argmax_f32_2p28,
matmul_f64_8192``: the rows time dgarray over every process's devices (the
peers, which see one process's GPUs, are left out; the reshard row's ceiling
is NCCL's send of the same bytes between the two processes), and process 0
writes the results, named ``...-jobN``.
"""
import argparse
import datetime
import gc
import json
import os
import socket
import sys
import time

import numpy as np

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import dgarray as dg  # noqa: E402
from _nccl_peer import all_to_all_seconds  # noqa: E402
from _timing import best_of, done  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
N28 = 1 << 28


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- peers, each optional ---------------------------------------------------------------

def try_import(name):
    try:
        return __import__(name)
    except Exception:  # noqa: BLE001 - a peer that does not load is just absent
        return None


cp = try_import("cupy")
jax = try_import("jax")
if cp is not None:
    try:
        NGPU = cp.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        cp, NGPU = None, 0
else:
    NGPU = 0
try:
    import cupyx.distributed.array as cda  # noqa: E402
except Exception:  # noqa: BLE001
    cda = None


# [multihost] in a job of several processes every process runs the rows
# (SPMD); the peers would each see one process's GPUs: left out.
# DGARRAY_BENCH_PEERS=none leaves them out in one process too (the
# one-process side of a job's rows, timed in the same device session)
JOB = dg.process_count() > 1
if JOB or os.environ.get("DGARRAY_BENCH_PEERS") == "none":
    cp = jax = cda = None
    NGPU = len(dg.devices())
if JOB:
    _best_of = best_of

    def best_of(f, *args, **kwargs):
        """A step of the job ends when every process has finished its part."""
        return _best_of(lambda: (f(), dg.distributed.barrier()), *args, **kwargs)


def cp_sync_all():
    for d in range(NGPU):
        with cp.cuda.Device(d):
            cp.cuda.Device(d).synchronize()


def cda_rows_map(n, ndev):
    return {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}


_ADD4 = r"""
extern "C" __global__ void add4(const float4* a, const float4* b, float4* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) { float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}
extern "C" __global__ void sin4(const float4* a, float4* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) { float4 x = a[i];
        c[i] = make_float4(sinf(x.x), sinf(x.y), sinf(x.z), sinf(x.w)); }
}
"""


def ceiling_kernel(kind, n):
    """Seconds for a plain float4 kernel over n float32 split over all GPUs."""
    if cp is None or NGPU == 0:
        return None
    per = n // NGPU
    bufs, kern = [], []
    for d in range(NGPU):
        with cp.cuda.Device(d):
            mod = cp.RawModule(code=_ADD4)
            a = cp.ones(per, cp.float32)
            b = cp.ones(per, cp.float32)
            c = cp.empty(per, cp.float32)
            bufs.append((a, b, c))
            kern.append(mod.get_function("add4" if kind == "add" else "sin4"))
    n4 = per // 4
    grid = ((n4 + 255) // 256,)

    def run():
        for d in range(NGPU):
            with cp.cuda.Device(d):
                a, b, c = bufs[d]
                if kind == "add":
                    kern[d](grid, (256,), (a, b, c, np.int64(n4)))
                else:
                    kern[d](grid, (256,), (a, c, np.int64(n4)))
        cp_sync_all()
    t = best_of(run, 10)
    del bufs
    return t


# ---- workloads ------------------------------------------------------------------------------

def w_add(n=N28):
    nbytes = 3 * 4 * n
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a, b = dg.asarray(x), dg.asarray(y)

    def f():
        c = a + b
        c._sync()
    res = {"workload": "add_f32_2p28", "unit": "GB/s", "peers": {}}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    c = (a + b).get()
    assert np.array_equal(c, x + y), "dgarray add differs from NumPy"
    del a, b
    res["peers"]["numpy"] = nbytes / best_of(lambda: x + y, 3, 1) / 1e9
    if cp is not None:
        ga, gb = cp.asarray(x), cp.asarray(y)
        res["peers"]["cupy"] = nbytes / best_of(lambda: (ga + gb, cp_sync_all()), 10) / 1e9
        del ga, gb
    if cda is not None and NGPU > 1:
        m = cda_rows_map(n, NGPU)
        da, db = cda.distributed_array(x, m), cda.distributed_array(y, m)
        res["peers"]["cupyx.distributed"] = nbytes / best_of(
            lambda: (da + db, cp_sync_all()), 10) / 1e9
        del da, db
    if jax is not None:
        res["peers"]["jax"] = jax_binary(x, y, nbytes)
    t = ceiling_kernel("add", n)
    res["ceiling"] = nbytes / t / 1e9 if t else None
    return res


def jax_binary(x, y, nbytes, fn=None):
    try:
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        devs = jax.devices()
        mesh = Mesh(np.array(devs), ("d",))
        sh = NamedSharding(mesh, P("d"))
        ja = jax.device_put(x, sh)
        jb = jax.device_put(y, sh) if y is not None else None
        if fn is None:
            f = jax.jit(lambda p, q: p + q)
            run = lambda: f(ja, jb).block_until_ready()  # noqa: E731
        else:
            f = jax.jit(fn)
            run = lambda: f(ja).block_until_ready()  # noqa: E731
        return nbytes / best_of(run, 10) / 1e9
    except Exception as e:  # noqa: BLE001
        log(f"  jax failed: {e}")
        return None


def w_sin(n=N28):
    nbytes = 2 * 4 * n
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    a = dg.asarray(x)

    def f():
        c = dg.sin(a)
        c._sync()
    res = {"workload": "sin_f32_2p28", "unit": "GB/s", "peers": {}}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    got = dg.sin(a).get()
    np.testing.assert_array_max_ulp(got, np.sin(x), maxulp=4)
    del a
    if cp is not None:
        ga = cp.asarray(x)
        res["peers"]["cupy"] = nbytes / best_of(lambda: (cp.sin(ga), cp_sync_all()), 10) / 1e9
        del ga
    if cda is not None and NGPU > 1:
        da = cda.distributed_array(x, cda_rows_map(n, NGPU))
        res["peers"]["cupyx.distributed"] = nbytes / best_of(
            lambda: (cp.sin(da), cp_sync_all()), 10) / 1e9
        del da
    if jax is not None:
        import jax.numpy as jnp
        res["peers"]["jax"] = jax_binary(x, None, nbytes, fn=jnp.sin)
    t = ceiling_kernel("sin", n)
    res["ceiling"] = nbytes / t / 1e9 if t else None
    return res


def chain_expr(xp, a, b):
    """The chain row's expression, written once for every library."""
    return xp.sqrt(a * a + b * b) + 2 * xp.sin(a) - b / 3


def w_chain(n=N28):
    """sqrt(a*a + b*b) + 2*sin(a) - b/3 on 2^28 float32: GB/s counting the
    12 bytes per element a fused kernel must move (read a and b, write the
    result), whatever each library moves; its first call (a compile where
    the chain's kernel is not cached yet) is reported apart; the ceiling is
    dgarray's a + b on the same arrays, the same bytes moved."""
    nbytes = 3 * 4 * n
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a, b = dg.asarray(x), dg.asarray(y)

    def f():
        c = chain_expr(dg, a, b)
        c._sync()
    res = {"workload": "chain_f32_2p28", "unit": "GB/s", "peers": {}, "ceiling": None}
    t0 = time.perf_counter()
    f()
    res["first_call_s"] = time.perf_counter() - t0
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    got = chain_expr(dg, a, b).get()
    np.testing.assert_allclose(got, chain_expr(np, x, y), rtol=1e-5, atol=1e-5)
    # the ceiling: a + b moves the same 12 bytes per element (two reads, a write)
    res["ceiling"] = nbytes / best_of(lambda: (a + b)._sync(), 10) / 1e9
    del a, b
    if cp is not None:
        ga, gb = cp.asarray(x), cp.asarray(y)
        res["peers"]["cupy"] = nbytes / best_of(
            lambda: (chain_expr(cp, ga, gb), cp_sync_all()), 10) / 1e9
        def chain_cp(p, q):  # a named function: cupy.fuse names the kernel after it
            return chain_expr(cp, p, q)
        fused = cp.fuse(chain_cp)
        res["peers"]["cupy.fuse"] = nbytes / best_of(
            lambda: (fused(ga, gb), cp_sync_all()), 10) / 1e9
        del ga, gb
    if jax is not None:
        try:
            import jax.numpy as jnp
            jf = jax.jit(lambda p, q: chain_expr(jnp, p, q))
            ja, jb = jax.device_put(x), jax.device_put(y)
            res["peers"]["jax"] = nbytes / best_of(
                lambda: jf(ja, jb).block_until_ready(), 10) / 1e9
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_latency(n=1000, iters=20000):
    x = np.arange(n, dtype=np.float32)
    a, b = dg.asarray(x), dg.asarray(x)

    def f():
        for _ in range(iters):
            c = a + b
        c._sync()
    res = {"workload": "add_f32_1000_latency", "unit": "us", "peers": {}, "ceiling": None}
    res["dgarray"] = 1e6 * best_of(f, 5, 1) / iters
    res["peers"]["numpy"] = 1e6 * best_of(lambda: [x + x for _ in range(iters)], 5, 1) / iters
    if cp is not None:
        g = cp.asarray(x)

        def fc():
            for _ in range(iters):
                c = g + g
            cp_sync_all()
        res["peers"]["cupy"] = 1e6 * best_of(fc, 5, 1) / iters
    if cda is not None and NGPU > 1:
        da = cda.distributed_array(x, cda_rows_map(n, NGPU))

        def fd():
            for _ in range(iters // 10):
                c = da + da
            cp_sync_all()
        res["peers"]["cupyx.distributed"] = 1e6 * best_of(fd, 3, 1) / (iters // 10)
    return res


def w_h2d_d2h(nbytes=1 << 30):
    x = np.random.default_rng(0).standard_normal(nbytes // 4, dtype=np.float32)
    rows = []
    t_h2d = best_of(lambda: dg.asarray(x)._sync(), 5)
    a = dg.asarray(x)
    t_d2h = best_of(lambda: a.get(), 5)
    assert np.array_equal(a.get(), x)
    h2d = {"workload": "h2d_1GiB", "unit": "s", "dgarray": t_h2d, "peers": {}, "ceiling": None}
    d2h = {"workload": "d2h_1GiB", "unit": "s", "dgarray": t_d2h, "peers": {}, "ceiling": None}
    if cp is not None:
        h2d["peers"]["cupy"] = best_of(lambda: (cp.asarray(x), cp_sync_all()), 5)
        g = cp.asarray(x)
        d2h["peers"]["cupy"] = best_of(lambda: g.get(), 5)
        del g
    if cda is not None and NGPU > 1:
        m = cda_rows_map(x.size, NGPU)
        h2d["peers"]["cupyx.distributed"] = best_of(
            lambda: (cda.distributed_array(x, m), cp_sync_all()), 3)
        da = cda.distributed_array(x, m)
        d2h["peers"]["cupyx.distributed"] = best_of(lambda: da.get(), 3)
        del da
    if jax is not None:
        try:
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            sh = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), P("d"))
            h2d["peers"]["jax"] = best_of(
                lambda: jax.device_put(x, sh).block_until_ready(), 3)
            j = jax.device_put(x, sh)
            d2h["peers"]["jax"] = best_of(lambda: np.asarray(j), 3)
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    rows += [h2d, d2h]
    return rows


def peer_times(name, x, dg_fn, np_fn, cp_fn, cda_fn, jax_fn, nbytes, cda_map):
    """Rows of GB/s for one reduction: dgarray, then each peer present."""
    res = {"workload": name, "unit": "GB/s", "peers": {}, "ceiling": None}
    a = dg.distributed_array(x, cda_map)
    res["dgarray"] = nbytes / best_of(lambda: done(dg_fn(a)), 10) / 1e9
    got, want = dg_fn(a), np_fn(x)
    got = got.get() if hasattr(got, "get") else got
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
    del a
    if cp is not None:
        g = cp.asarray(x)
        res["peers"]["cupy"] = nbytes / best_of(lambda: (cp_fn(g), cp_sync_all()), 10) / 1e9
        del g
    if cda is not None and NGPU > 1 and cda_fn is not None:
        try:
            da = cda.distributed_array(x, cda_map)
            res["peers"]["cupyx.distributed"] = nbytes / best_of(
                lambda: (cda_fn(da), cp_sync_all()), 5) / 1e9
            del da
        except Exception as e:  # noqa: BLE001
            log(f"  cupyx.distributed failed: {e}")
    if jax is not None and jax_fn is not None:
        res["peers"]["jax"] = jax_binary(x, None, nbytes, fn=jax_fn)
    return res


def w_sum_argmax(n=N28):
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    m = cda_rows_map(n, max(NGPU, 1)) if NGPU > 1 else None
    jnp = __import__("jax.numpy").numpy if jax is not None else None
    rows = [peer_times("sum_f32_2p28", x, lambda a: a.sum(), lambda h: h.sum(dtype=np.float64),
                       lambda g: g.sum(), lambda d: d.sum(),
                       (lambda v: jnp.sum(v)) if jnp else None, 4 * n, m),
            peer_times("argmax_f32_2p28", x, lambda a: a.argmax(), lambda h: h.argmax(),
                       lambda g: g.argmax(), None,
                       (lambda v: jnp.argmax(v)) if jnp else None, 4 * n, m)]
    return rows


def w_sum_axes(n=16384):
    x = np.random.default_rng(2).standard_normal((n, n), dtype=np.float32)
    m = {d: slice(n * d // NGPU, n * (d + 1) // NGPU) for d in range(NGPU)} if NGPU > 1 else None
    jnp = __import__("jax.numpy").numpy if jax is not None else None
    rows = []
    for ax in (0, 1):
        rows.append(peer_times(
            f"sum_axis{ax}_f32_16384sq", x, lambda a: a.sum(axis=ax),
            lambda h: h.sum(axis=ax, dtype=np.float64), lambda g: g.sum(axis=ax),
            lambda d: d.sum(axis=ax), (lambda v: jnp.sum(v, axis=ax)) if jnp else None,
            4 * n * n, m))
    return rows


def w_reshard(nbytes=128 << 20):
    """128 MiB from GPU 0 to GPU 1 by reshard, beside NCCL's own send of the
    same bytes (the backend's exchange on raw buffers) in the same run."""
    n = nbytes // 4
    x = np.random.default_rng(3).standard_normal(n, dtype=np.float32)
    a = dg.distributed_array(x, {0: slice(None)})
    to = {1 if NGPU > 1 else 0: slice(None)}

    def f():
        a.reshard(to)._sync()
    res = {"workload": "reshard_128MiB", "unit": "GB/s", "peers": {}}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    assert np.array_equal(a.reshard(to).get(), x), "reshard differs"
    del a
    res["ceiling"] = (nbytes / dg._core._bench_exchange([(0, 1)], nbytes, 10) / 1e9
                      if NGPU > 1 else None)
    if cda is not None and NGPU > 1:
        try:
            da = cda.distributed_array(x, {0: slice(None)})
            res["peers"]["cupyx.distributed"] = nbytes / best_of(
                lambda: (da.reshard({1: slice(None)}), cp_sync_all()), 5) / 1e9
            del da
        except Exception as e:  # noqa: BLE001
            log(f"  cupyx.distributed failed: {e}")
    return res


def shifted_map(n, ndev, frac=8):
    """a's row blocks with 1/frac of the elements on another device: every
    block moved forward by n / (frac * ndev), the last wrapping around."""
    s = n // (frac * ndev)
    m = {d: slice(n * d // ndev + s, n * (d + 1) // ndev + s) for d in range(ndev - 1)}
    m[ndev - 1] = [slice(n * (ndev - 1) // ndev + s, n), slice(0, s)]
    return m


def w_add_reshard(n=N28):
    """a + c.reshard(a.index_map), 1/8 of c on the other GPU: GB/s counting a
    and c read and the sum written."""
    nbytes = 3 * 4 * n
    rng = np.random.default_rng(4)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    ndev = max(NGPU, 1)
    rows = cda_rows_map(n, ndev)
    cmap = shifted_map(n, ndev) if ndev > 1 else rows
    a, c = dg.distributed_array(x, rows), dg.distributed_array(y, cmap)

    def f():
        (a + c.reshard(a.index_map))._sync()
    res = {"workload": "add_reshard_f32_2p28", "unit": "GB/s", "peers": {}, "ceiling": None}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    assert np.array_equal((a + c.reshard(a.index_map)).get(), x + y), "add_reshard differs"
    del a, c
    if cda is not None and NGPU > 1:
        try:
            da = cda.distributed_array(x, rows)
            dc = cda.distributed_array(y, cmap)
            res["peers"]["cupyx.distributed"] = nbytes / best_of(
                lambda: (da + dc.reshard(da.index_map), cp_sync_all()), 5) / 1e9
            del da, dc
        except Exception as e:  # noqa: BLE001
            log(f"  cupyx.distributed failed: {e}")
    return res


def w_rows_to_cols(rows_n=1 << 15, cols_n=1 << 16):
    """An 8 GiB float32 matrix split by rows resharded to columns: the bytes
    each GPU receives over the time (a bus bandwidth, as nccl-tests counts
    all-to-all), beside NCCL's all-to-all of the same bytes in the same run."""
    ndev = max(NGPU, 1)
    total = rows_n * cols_n * 4
    per_dev_in = total // ndev * (ndev - 1) // ndev
    rmap = {d: slice(rows_n * d // ndev, rows_n * (d + 1) // ndev) for d in range(ndev)}
    cmap = {d: (slice(None), slice(cols_n * d // ndev, cols_n * (d + 1) // ndev))
            for d in range(ndev)}
    a = dg.full((rows_n, cols_n), 1.5, np.float32, index_map=rmap)
    a._sync()

    def f():
        a.reshard(cmap)._sync()
    res = {"workload": "reshard_rows_to_cols_8GiB", "unit": "GB/s", "peers": {}}
    t = best_of(f, 5, 1)
    res["dgarray"] = per_dev_in / t / 1e9 if ndev > 1 else total / t / 1e9
    r = a.reshard(cmap)
    assert r.index_map == dg.zeros((rows_n, cols_n), np.float32, index_map=cmap).index_map
    assert float(r.sum(dtype=np.float64)) == 1.5 * rows_n * cols_n, "rows_to_cols differs"
    del r
    res["ceiling"] = None
    if ndev > 1:
        del a
        release_pools()
        # NCCL's all-to-all bus bandwidth (CuPy's binding); without CuPy,
        # the backend's own exchange (peer copies unless DGARRAY_TRANSFER=nccl)
        tn = all_to_all_seconds(total)
        if tn is None:
            blk = total // ndev // ndev
            pairs = [(i, j) for i in range(ndev) for j in range(ndev) if i != j]
            tn = dg._core._bench_exchange(pairs, blk, 5)
        res["ceiling"] = per_dev_in / tn / 1e9
        return res
    del a
    return res

# ---- matrix products -------------------------------------------------------------------------

def check_rows(c, x, y, rows=64):
    """Compares the first and the last `rows` rows of c (a dgarray product
    of x and y) with NumPy's, so that the check costs little host time."""
    n = x.shape[0]
    for lo in (0, n - rows):
        got = c._gather_region(((lo, lo + rows, 1), (0, y.shape[1], 1)))
        want = x[lo:lo + rows] @ y
        tol = 1e-2 if got.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def jax_matmul(x, y, precision):
    """TFLOP/s seconds of a JAX matmul, rows of x sharded, y replicated."""
    try:
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        if x.dtype == np.float64:
            jax.config.update("jax_enable_x64", True)
        mesh = Mesh(np.array(jax.devices()), ("d",))
        jx = jax.device_put(x, NamedSharding(mesh, P("d", None)))
        jy = jax.device_put(y, NamedSharding(mesh, P()))
        f = jax.jit(lambda p, q: jnp.matmul(p, q, precision=precision))
        return best_of(lambda: f(jx, jy).block_until_ready(), 5)
    except Exception as e:  # noqa: BLE001
        log(f"  jax failed: {e}")
        return None


def w_matmul(name, dtype, tf32, n=8192):
    """C = A @ B of two n x n matrices in dgarray's default layouts (rows
    split over the devices), timed until C is readable; tf32: with
    dgarray.config.allow_tf32 (JAX at its default precision)."""
    flops = 2.0 * n ** 3
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, n)).astype(dtype)
    y = rng.standard_normal((n, n)).astype(dtype)
    res = {"workload": name, "unit": "TFLOP/s", "peers": {}, "ceiling": None}
    dg.config.allow_tf32 = tf32
    try:
        a, b = dg.asarray(x), dg.asarray(y)
        res["dgarray"] = flops / best_of(lambda: done(a @ b), 5) / 1e12
        check_rows(a @ b, x, y)
        del a, b
    finally:
        dg.config.allow_tf32 = False
    if not tf32:
        m = 2048
        res["peers"]["numpy"] = 2.0 * m ** 3 / best_of(lambda: x[:m, :m] @ y[:m, :m], 2, 1) / 1e12
    if cp is not None and not tf32:
        ga, gb = cp.asarray(x), cp.asarray(y)
        res["peers"]["cupy"] = flops / best_of(lambda: (ga @ gb, cp_sync_all()), 5) / 1e12
        del ga, gb
    if cda is not None and NGPU > 1 and not tf32:
        try:
            ma = cda.make_2d_index_map([0] + [n * (d + 1) // NGPU for d in range(NGPU)],
                                       [0, n], [[{d}] for d in range(NGPU)])
            mb = cda.make_2d_index_map([0, n], [0, n], [[set(range(NGPU))]])
            da, db = cda.distributed_array(x, ma), cda.distributed_array(y, mb)
            res["peers"]["cupyx.distributed"] = flops / best_of(
                lambda: (cda.matmul(da, db), cp_sync_all()), 5) / 1e12
            del da, db
        except Exception as e:  # noqa: BLE001
            log(f"  cupyx.distributed failed: {e}")
    if jax is not None:
        from jax import lax
        prec = lax.Precision.DEFAULT if tf32 else lax.Precision.HIGHEST
        t = jax_matmul(x, y, prec)
        res["peers"]["jax"] = flops / t / 1e12 if t else None
    return res


def spd_matrix(xp, n, rank=64):
    """A dense n x n SPD matrix made on the devices: n I + M M^T."""
    m = np.random.default_rng(5).standard_normal((n, rank)) / np.sqrt(rank)
    M = xp.asarray(m)
    return xp.tensordot(M, M, axes=([1], [1])) + xp.eye(n) * n


def release_pools():
    """Hands the blocks that dgarray's and CuPy's pools keep back to the
    driver, so that a peer that runs next has the GPUs' memory (CuPy's CG ran
    out of memory beside dgarray's kept blocks)."""
    gc.collect()
    dg.get_default_memory_pool().free_all_blocks()
    if cp is not None:
        cp_sync_all()
        cp.get_default_memory_pool().free_all_blocks()


def w_cg(n=32768, iters=(5, 45)):
    """Iterations of the cuNumeric talk's CG solver (tests/_cg.py, run with
    its `np` bound to dgarray, then to CuPy and JAX) on a dense n x n float64 SPD
    matrix, in ms per iteration; ceiling: reading the matrix once from HBM,
    half on each GPU at once."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import _cg
    res = {"workload": "cg_f64_32768", "unit": "ms/iter", "peers": {}, "ceiling": None}

    def per_iter(A, b):
        t = [best_of(lambda: float(_cg.cg_solve(A, b, 0.0, k).sum()), 3, 1) for k in iters]
        return 1e3 * (t[1] - t[0]) / (iters[1] - iters[0])
    A = spd_matrix(dg, n)
    if NGPU > 1:
        A = A.reshard({d: slice(n * d // NGPU, n * (d + 1) // NGPU) for d in range(NGPU)})
    b = dg.asarray(np.random.default_rng(6).standard_normal(n))
    _cg.np = dg
    res["dgarray"] = per_iter(A, b)
    x = _cg.cg_solve(A, b, 1e-10)
    resid = float(dg.sqrt(((b - A.dot(x)) ** 2).sum()) / dg.sqrt((b ** 2).sum()))
    assert resid < 1e-8, f"CG residual {resid}"
    del A, x
    release_pools()
    if cp is not None:
        _cg.np = cp
        try:
            A = spd_matrix(cp, n)
            res["peers"]["cupy"] = per_iter(A, cp.asarray(b.get()))
            del A
        except Exception as e:  # noqa: BLE001
            log(f"  cupy failed: {e}")
    if jax is not None:
        try:
            import jax.numpy as jnp
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            jax.config.update("jax_enable_x64", True)
            mesh = Mesh(np.array(jax.devices()), ("d",))
            m = np.random.default_rng(5).standard_normal((n, 64)) / 8.0
            A = jax.jit(lambda q: jnp.tensordot(q, q, axes=([1], [1])) + n * jnp.eye(n),
                        out_shardings=NamedSharding(mesh, P("d", None)))(jnp.asarray(m))
            _cg.np = jnp
            res["peers"]["jax"] = per_iter(A, jnp.asarray(b.get()))
            del A
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    if cp is not None:
        halves = []
        for d in range(NGPU):
            with cp.cuda.Device(d):
                halves.append(cp.ones(n * n // NGPU, cp.float64))

        def read():
            for d in range(NGPU):
                with cp.cuda.Device(d):
                    halves[d].sum()
            cp_sync_all()
        res["ceiling"] = 1e3 * best_of(read, 10)
        log(f"  dgarray / ceiling: {res['dgarray'] / res['ceiling']:.3f}")
        del halves
    _cg.np = dg
    return res


def w_random(kind, n=N28):
    """Random draws of n float32 on the devices (dgarray.random): the bytes
    written per second, beside NumPy's and CuPy's Generators."""
    nbytes = 4 * n
    draw = {"uniform": lambda r: r.random(n, dtype=np.float32),
            "normal": lambda r: r.standard_normal(n, dtype=np.float32)}[kind]
    rng = dg.random.default_rng(0)

    def f():
        draw(rng)._sync()
    res = {"workload": f"random_{kind}_f32_2p28", "unit": "GB/s", "peers": {},
           "ceiling": None}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    x = draw(dg.random.default_rng(1))
    m, s = float(x.mean(dtype=np.float64)), float(x.std(dtype=np.float64))
    want = (0.5, np.sqrt(1 / 12)) if kind == "uniform" else (0.0, 1.0)
    assert abs(m - want[0]) < 1e-3 and abs(s - want[1]) < 1e-3, f"random_{kind} moments"
    del x
    nrng = np.random.default_rng(0)
    res["peers"]["numpy"] = nbytes / best_of(lambda: draw(nrng), 3, 1) / 1e9
    if cp is not None:
        crng = cp.random.default_rng(0)
        res["peers"]["cupy"] = nbytes / best_of(lambda: (draw(crng), cp_sync_all()), 10) / 1e9
    return res


def jacobi_step(center, north, south, west, east):
    center[:] = 0.2 * (center + north + east + west + south)


def jacobi_views(g):
    return g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]


def jacobi_loop(views, iters, sync):
    """iters steps over the views of one grid, then sync()."""
    def f():
        for _ in range(iters):
            jacobi_step(*views)
        sync()
    return f


def w_jacobi(n=16384, iters=10):
    """The 2-D Jacobi stencil written with slices of one grid split by rows:
    GB/s counting the bytes each array operation of an iteration reads and
    writes (four adds, a multiply, the assignment into the interior) plus
    the halo rows that cross between devices."""
    ndev = max(NGPU, 1)
    interior = (n - 2) * (n - 2) * 4
    nbytes = (4 * 3 + 2 + 2) * interior + 2 * (ndev - 1) * (n - 2) * 4
    x = np.random.default_rng(6).standard_normal((n, n), dtype=np.float32)
    rows = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    g = dg.distributed_array(x, rows)
    res = {"workload": "jacobi_f32_16384sq", "unit": "GB/s", "peers": {}, "ceiling": None}
    res["dgarray"] = nbytes * iters / best_of(
        jacobi_loop(jacobi_views(g), iters, g._sync), 5, 1) / 1e9
    # two iterations from the same grid, against NumPy's
    g2 = dg.distributed_array(x, rows)
    for _ in range(2):
        jacobi_step(*jacobi_views(g2))
    y = x.copy()
    for _ in range(2):
        jacobi_step(*jacobi_views(y))
    np.testing.assert_allclose(g2.get(), y, rtol=1e-5, atol=1e-6)
    del g, g2
    if cp is not None:
        gc_ = cp.asarray(x)
        res["peers"]["cupy"] = nbytes * iters / best_of(
            jacobi_loop(jacobi_views(gc_), iters, cp_sync_all), 5, 1) / 1e9
        del gc_
    if cda is not None and NGPU > 1:
        try:
            dgc = cda.distributed_array(x, rows)
            res["peers"]["cupyx.distributed"] = nbytes * iters / best_of(
                jacobi_loop(jacobi_views(dgc), iters, cp_sync_all), 3, 1) / 1e9
            del dgc
        except Exception as e:  # noqa: BLE001
            log(f"  cupyx.distributed failed: {e}")
    if jax is not None:
        try:
            import jax.numpy as jnp
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            sh = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), P("d", None))
            jg = jax.device_put(x, sh)

            @jax.jit
            def step(a):
                c = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]
                           + a[2:, 1:-1])
                return a.at[1:-1, 1:-1].set(c)

            def fj():
                a = jg
                for _ in range(iters):
                    a = step(a)
                a.block_until_ready()
            res["peers"]["jax"] = nbytes * iters / best_of(fj, 5, 1) / 1e9
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_mask_select(n=N28):
    """a[a > 0] of 2^28 float32 (half of them positive): GB/s counting the
    comparison (a read, the mask written) and the selection (a and the mask
    read, the selected elements written)."""
    x = np.random.default_rng(7).standard_normal(n, dtype=np.float32)
    k = int((x > 0).sum())
    nbytes = 4 * n + n + 4 * n + n + 4 * k
    a = dg.asarray(x)

    def f():
        a[a > 0]._sync()
    res = {"workload": "mask_select_f32_2p28", "unit": "GB/s", "peers": {}, "ceiling": None}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    assert np.array_equal(a[a > 0].get(), x[x > 0]), "dgarray a[a > 0] differs from NumPy"
    del a
    if cp is not None:
        ga = cp.asarray(x)
        res["peers"]["cupy"] = nbytes / best_of(lambda: (ga[ga > 0], cp_sync_all()), 10) / 1e9
        del ga
    if jax is not None:
        try:
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            sh = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), P("d"))
            ja = jax.device_put(x, sh)
            res["peers"]["jax"] = nbytes / best_of(
                lambda: ja[ja > 0].block_until_ready(), 5) / 1e9
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_take(n=1 << 26):
    """take(a, idx) of 2^26 random indices into 2^26 float32, both split over
    the GPUs (half of the rows asked of the other GPU): GB/s counting the
    indices read, the rows read and the result written."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal(n, dtype=np.float32)
    idx = rng.integers(0, n, n)
    nbytes = 8 * n + 4 * n + 4 * n
    a, i = dg.asarray(x), dg.asarray(idx)

    def f():
        dg.take(a, i)._sync()
    res = {"workload": "take_f32_2p26", "unit": "GB/s", "peers": {}, "ceiling": None}
    res["dgarray"] = nbytes / best_of(f, 10) / 1e9
    assert np.array_equal(dg.take(a, i).get(), x[idx]), "dgarray take differs from NumPy"
    del a, i
    if cp is not None:
        ga, gi = cp.asarray(x), cp.asarray(idx)
        res["peers"]["cupy"] = nbytes / best_of(lambda: (cp.take(ga, gi), cp_sync_all()),
                                                10) / 1e9
        del ga, gi
    if jax is not None:
        try:
            import jax.numpy as jnp
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            sh = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), P("d"))
            ja, ji = jax.device_put(x, sh), jax.device_put(idx, sh)
            tk = jax.jit(lambda p, q: jnp.take(p, q))
            res["peers"]["jax"] = nbytes / best_of(lambda: tk(ja, ji).block_until_ready(),
                                                   10) / 1e9
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_surface(n=N28):
    """NumPy's wider surface on the devices against CuPy (one GPU) and JAX:
    the 2-norm of float64, the median and a 256-bin histogram of float32
    (GB/s counting the input once)."""
    rng = np.random.default_rng(4)
    x64 = rng.standard_normal(n)
    x32 = x64.astype(np.float32)
    m = cda_rows_map(n, max(NGPU, 1)) if NGPU > 1 else None
    jnp = __import__("jax.numpy").numpy if jax is not None else None
    rows = [peer_times("norm_f64_2p28", x64, lambda a: dg.linalg.norm(a),
                       lambda h: np.linalg.norm(h), lambda g: cp.linalg.norm(g), None,
                       (lambda v: jnp.linalg.norm(v)) if jnp else None, 8 * n, m)]
    del x64
    rows.append(peer_times("median_f32_2p28", x32, lambda a: dg.median(a),
                           lambda h: np.median(h), lambda g: cp.median(g), None,
                           (lambda v: jnp.median(v)) if jnp else None, 4 * n, m))
    rows.append(peer_times("histogram_f32_2p28", x32,
                           lambda a: dg.histogram(a, bins=256, range=(-4, 4))[0],
                           lambda h: np.histogram(h, bins=256, range=(-4, 4))[0],
                           lambda g: cp.histogram(g, bins=256, range=(-4, 4))[0], None,
                           (lambda v: jnp.histogram(v, bins=256, range=(-4, 4))[0])
                           if jnp else None, 4 * n, m))
    return rows


def w_einsum(b=64, n=1024):
    """einsum('bij,bjk->bik') of float32 (64 x 1024^3), TFLOP/s."""
    flops = 2.0 * b * n ** 3
    rng = np.random.default_rng(6)
    x = rng.standard_normal((b, n, n), dtype=np.float32)
    y = rng.standard_normal((b, n, n), dtype=np.float32)
    res = {"workload": "einsum_bij_bjk_f32", "unit": "TFLOP/s", "peers": {}, "ceiling": None}
    a, c = dg.asarray(x), dg.asarray(y)
    res["dgarray"] = flops / best_of(lambda: done(dg.einsum("bij,bjk->bik", a, c)), 5) / 1e12
    got = dg.einsum("bij,bjk->bik", a[:2], c[:2]).get()
    np.testing.assert_allclose(got, np.einsum("bij,bjk->bik", x[:2], y[:2]), rtol=1e-3,
                               atol=1e-2)
    del a, c
    if cp is not None:
        ga, gb = cp.asarray(x), cp.asarray(y)
        res["peers"]["cupy"] = flops / best_of(
            lambda: (cp.einsum("bij,bjk->bik", ga, gb), cp_sync_all()), 5) / 1e12
        del ga, gb
    if jax is not None:
        try:
            import jax.numpy as jnp
            from jax import lax
            f = jax.jit(lambda p, q: jnp.einsum("bij,bjk->bik", p, q,
                                                precision=lax.Precision.HIGHEST))
            jx, jy = jnp.asarray(x), jnp.asarray(y)
            res["peers"]["jax"] = flops / best_of(lambda: f(jx, jy).block_until_ready(),
                                                  5) / 1e12
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def rows_map(n):
    """Rows split in near-equal blocks over the GPUs (None on one GPU: the
    default layout keeps a large matrix split by rows there too)."""
    return {d: slice(n * d // NGPU, n * (d + 1) // NGPU) for d in range(NGPU)}


def jax_rows(x):
    """x on the GPUs for JAX, its rows split over them."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    if x.dtype in (np.float64, np.complex128):
        jax.config.update("jax_enable_x64", True)
    sh = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), P("d", None))
    return jax.device_put(x, sh)


def w_cholesky(n=32768):
    """dgarray.linalg.cholesky of a float64 SPD n x n matrix split by rows
    over the GPUs (one GPU: cuSOLVER's potrf on the whole matrix; several:
    the blocked right-looking algorithm, panels in cuSOLVER, updates through
    dgarray's products), timed until L is readable: TFLOP/s counting n^3 / 3."""
    flops = n ** 3 / 3.0
    res = {"workload": f"cholesky_f64_{n}", "unit": "TFLOP/s", "peers": {}, "ceiling": None}
    A = spd_matrix(dg, n).reshard(rows_map(n))
    res["dgarray"] = flops / best_of(lambda: done(dg.linalg.cholesky(A)), 3, 1) / 1e12
    L = dg.linalg.cholesky(A)
    k = 64
    err = float(abs((L[:k] @ L.T) - A[:k]).max()) / n
    assert err < 1e-12, f"dgarray cholesky: rows of L L^T off by {err} (relative)"
    del A, L
    release_pools()
    if cp is not None:
        try:
            A = spd_matrix(cp, n)
            res["peers"]["cupy"] = flops / best_of(
                lambda: (cp.linalg.cholesky(A), cp_sync_all()), 3, 1) / 1e12
            del A
        except Exception as e:  # noqa: BLE001
            log(f"  cupy failed: {e}")
    if jax is not None:
        try:
            import jax.numpy as jnp
            m = np.random.default_rng(5).standard_normal((n, 64)) / 8.0
            A = jax_rows(m @ m.T + n * np.eye(n))
            f = jax.jit(jnp.linalg.cholesky)
            res["peers"]["jax"] = flops / best_of(lambda: f(A).block_until_ready(), 3, 1) / 1e12
            del A
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_solve(n=32768):
    """dgarray.linalg.solve(A, b) of a float64 n x n matrix split by rows over
    the GPUs and a vector (one GPU: cuSOLVER's getrf + getrs; several: the
    blocked LU with partial pivoting): TFLOP/s counting 2 n^3 / 3; the
    backward error ||A x - b|| / (||A|| ||x||) is checked."""
    flops = 2.0 * n ** 3 / 3.0
    res = {"workload": f"solve_f64_{n}", "unit": "TFLOP/s", "peers": {}, "ceiling": None}
    A = spd_matrix(dg, n).reshard(rows_map(n))
    A = A + dg.asarray(np.random.default_rng(9).standard_normal(n))  # not symmetric
    bh = np.random.default_rng(10).standard_normal(n)
    b = dg.asarray(bh)
    res["dgarray"] = flops / best_of(lambda: done(dg.linalg.solve(A, b)), 3, 1) / 1e12
    x = dg.linalg.solve(A, b)
    r = float(dg.sqrt(((A @ x - b) ** 2).sum()))
    be = r / (float(dg.sqrt((A ** 2).sum())) * float(dg.sqrt((x ** 2).sum())))
    log(f"  dgarray solve: backward error {be:.2e}")
    assert be < 1e-14, f"dgarray solve: backward error {be}"
    del A, x
    release_pools()
    if cp is not None:
        try:
            A = spd_matrix(cp, n) + cp.asarray(np.random.default_rng(9).standard_normal(n))
            gb = cp.asarray(bh)
            res["peers"]["cupy"] = flops / best_of(
                lambda: (cp.linalg.solve(A, gb), cp_sync_all()), 3, 1) / 1e12
            del A
        except Exception as e:  # noqa: BLE001
            log(f"  cupy failed: {e}")
    if jax is not None:
        try:
            import jax.numpy as jnp
            m = np.random.default_rng(5).standard_normal((n, 64)) / 8.0
            A = jax_rows(m @ m.T + n * np.eye(n) + np.random.default_rng(9).standard_normal(n))
            f = jax.jit(jnp.linalg.solve)
            jb = jnp.asarray(bh)
            res["peers"]["jax"] = flops / best_of(lambda: f(A, jb).block_until_ready(), 3,
                                                  1) / 1e12
            del A
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_qr(m=1 << 22, n=256):
    """dgarray.linalg.qr (reduced) of a float64 m x n matrix split by rows
    over the GPUs (one GPU: cuSOLVER's geqrf + orgqr; several: tall-skinny
    QR, Q's rows where A's are): TFLOP/s counting 4 m n^2 - 4 n^3 / 3."""
    flops = 4.0 * m * n * n - 4.0 * n ** 3 / 3.0
    res = {"workload": "qr_f64_2p22x256", "unit": "TFLOP/s", "peers": {}, "ceiling": None}
    x = np.random.default_rng(11).standard_normal((m, n))
    a = dg.asarray(x).reshard(rows_map(m))
    res["dgarray"] = flops / best_of(lambda: done(dg.linalg.qr(a)), 3, 1) / 1e12
    q, r = dg.linalg.qr(a)
    err = float(abs(q[:256] @ r - a[:256]).max())
    assert err < 1e-10, f"dgarray qr: Q R off by {err}"
    del a, q, r
    release_pools()
    if cp is not None:
        try:
            ga = cp.asarray(x)
            res["peers"]["cupy"] = flops / best_of(lambda: (cp.linalg.qr(ga), cp_sync_all()), 3,
                                                   1) / 1e12
            del ga
        except Exception as e:  # noqa: BLE001
            log(f"  cupy failed: {e}")
    if jax is not None:
        try:
            import jax.numpy as jnp
            ja = jax_rows(x)
            f = jax.jit(jnp.linalg.qr)
            res["peers"]["jax"] = flops / best_of(
                lambda: jax.block_until_ready(f(ja)), 3, 1) / 1e12
            del ja
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


def w_fft2(n=16384):
    """dgarray.fft.fft2 of a complex64 n x n array split by rows over the GPUs
    (one GPU: one 2-d cuFFT plan; several: the rows' FFTs where they are, one
    reshard to columns, the columns' FFTs): GFLOP/s counting 5 N log2 N
    (N = n^2).  Beside it, in the same run, each of its three steps alone:
    the rows' FFTs (axis 1 of the row-split array), the columns' FFTs (axis 0
    of an array made split by columns, dense chunks: the layout the second
    step reads) and the reshard rows -> columns; the split fft2 should take
    at most 1.2 times their sum.  (Until session 13 the sum left out the
    columns' FFTs, so the ratio printed, 2.47, compared two passes with
    one.)"""
    import math
    N = n * n
    flops = 5.0 * N * math.log2(N)
    res = {"workload": f"fft2_c64_{n}sq", "unit": "GFLOP/s", "peers": {}, "ceiling": None}
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((n, n), dtype=np.float32)
         + 1j * rng.standard_normal((n, n), dtype=np.float32)).astype(np.complex64)
    a = dg.asarray(x).reshard(rows_map(n))
    t = best_of(lambda: done(dg.fft.fft2(a)), 5)
    res["dgarray"] = flops / t / 1e9
    small = x[:1024, :1024]
    got = dg.fft.fft2(dg.asarray(small).reshard(rows_map(1024))).get()
    want = np.fft.fft2(small.astype(np.complex128))
    err = float(np.abs(got - want).max() / np.abs(want).max())
    assert err < 1e-5, f"dgarray fft2 differs from NumPy by {err} (relative)"
    if NGPU > 1:
        cols = {d: (slice(None), slice(n * d // NGPU, n * (d + 1) // NGPU)) for d in range(NGPU)}
        t_rows = best_of(lambda: done(dg.fft.fft(a, axis=-1)), 5)
        t_move = best_of(lambda: done(a.reshard(cols)), 5)
        # made from the host so that its chunks are dense columns (a.reshard(cols)
        # keeps each device's own quarter as a view, which the columns' FFTs
        # would reshard again)
        ac = dg.asarray(x, index_map=cols)
        t_cols = best_of(lambda: done(dg.fft.fft(ac, axis=0)), 5)
        del ac
        # a diagnostic: fft along axis 0 of the row-split array is the reshard
        # as fft2 makes it (dense column chunks: each device's own block copied
        # too, on the device, beside the transfer) and the columns' FFTs
        t_ax0 = best_of(lambda: done(dg.fft.fft(a, axis=0)), 5)
        ref = t_rows + t_cols + t_move
        res["detail"] = {"fft2_ms": 1e3 * t, "rows_fft_ms": 1e3 * t_rows,
                         "cols_fft_ms": 1e3 * t_cols, "reshard_ms": 1e3 * t_move,
                         "axis0_fft_of_rows_ms": 1e3 * t_ax0,
                         "ratio_to_local_plus_reshard": t / ref}
        log(f"  fft2 {1e3 * t:.2f} ms; rows' FFTs {1e3 * t_rows:.2f} ms + columns' FFTs "
            f"{1e3 * t_cols:.2f} ms + reshard {1e3 * t_move:.2f} ms: ratio {t / ref:.2f} "
            f"(goal <= 1.2); fft along axis 0 of the rows (fft2's reshard + the columns' "
            f"FFTs) {1e3 * t_ax0:.2f} ms")
    del a
    release_pools()
    if cp is not None:
        try:
            ga = cp.asarray(x)
            res["peers"]["cupy"] = flops / best_of(lambda: (cp.fft.fft2(ga), cp_sync_all()),
                                                   5) / 1e9
            del ga
        except Exception as e:  # noqa: BLE001
            log(f"  cupy failed: {e}")
    if jax is not None:
        try:
            import jax.numpy as jnp
            ja = jax_rows(x)
            f = jax.jit(jnp.fft.fft2)
            res["peers"]["jax"] = flops / best_of(lambda: f(ja).block_until_ready(), 5) / 1e9
            del ja
        except Exception as e:  # noqa: BLE001
            log(f"  jax failed: {e}")
    return res


WORKLOADS = {
    "add_f32_2p28": w_add,
    "sin_f32_2p28": w_sin,
    "chain_f32_2p28": w_chain,
    "add_f32_1000_latency": w_latency,
    "h2d_d2h_1GiB": w_h2d_d2h,
    "sum_argmax_f32_2p28": w_sum_argmax,
    "sum_axes_f32_16384sq": w_sum_axes,
    "reshard_128MiB": w_reshard,
    "add_reshard_f32_2p28": w_add_reshard,
    "reshard_rows_to_cols_8GiB": w_rows_to_cols,
    "matmul_f64_8192": lambda: w_matmul("matmul_f64_8192", np.float64, False),
    "matmul_f32_8192": lambda: w_matmul("matmul_f32_8192", np.float32, False),
    "matmul_tf32_8192": lambda: w_matmul("matmul_tf32_8192", np.float32, True),
    "cg_f64_32768": w_cg,
    "random_uniform_f32_2p28": lambda: w_random("uniform"),
    "random_normal_f32_2p28": lambda: w_random("normal"),
    "jacobi_f32_16384sq": w_jacobi,
    "mask_select_f32_2p28": w_mask_select,
    "take_f32_2p26": w_take,
    "surface_f_2p28": w_surface,
    "einsum_bij_bjk_f32": w_einsum,
    "cholesky_f64_32768": w_cholesky,
    "solve_f64_32768": w_solve,
    "qr_f64_2p22x256": w_qr,
    "fft2_c64_16384sq": w_fft2,
}


def fmt(v):
    if v is None:
        return "-"
    return f"{v:,.1f}" if v >= 10 else f"{v:.3g}"


def table(rows):
    rows = [r for r in rows if r]
    peers = sorted({p for r in rows for p in r["peers"]})
    head = ["workload", "unit", "dgarray"] + peers + ["ceiling"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        vals = [r["workload"], r["unit"], fmt(r["dgarray"])]
        vals += [fmt(r["peers"].get(p)) for p in peers] + [fmt(r.get("ceiling"))]
        lines.append("| " + " | ".join(vals) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated workloads (default: all)")
    ap.add_argument("--machine", default=os.environ.get("DGARRAY_MACHINE", socket.gethostname()))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(WORKLOADS)
    log(f"dgarray on {dg.backend()} with {len(dg.devices())} device(s); peers: "
        f"numpy{', cupy' if cp else ''}{', cupyx.distributed' if cda else ''}"
        f"{', jax' if jax else ''}")
    rows = []
    for i, name in enumerate(names, 1):
        log(f"[{i}/{len(names)}] {name} ...")
        t0 = time.perf_counter()
        r = WORKLOADS[name]()
        rows += r if isinstance(r, list) else [r]
        release_pools()
        log(f"    done in {time.perf_counter() - t0:.1f} s")
    if JOB and dg.process_index() != 0:
        return
    if JOB:
        args.machine += f"-job{dg.process_count()}"
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"{datetime.date.today().isoformat()}-{args.machine}")
    if os.path.exists(stem + ".json"):  # keep the rows of workloads not run now
        with open(stem + ".json") as f:
            old = [r for r in json.load(f) if r["workload"] not in {x["workload"] for x in rows}]
        rows = old + rows
    with open(stem + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    md = table(rows)
    with open(stem + ".md", "w") as f:
        f.write(f"# dgarray benchmarks, {args.machine}, {datetime.date.today()}\n\n"
                f"backend {dg.backend()}, {len(dg.devices())} device(s)\n\n{md}\n")
    print(md)


if __name__ == "__main__":
    main()
