"""Cases every process of an MPI job runs ([multihost]): tests/test_multihost.py
starts this file under ``mpiexec -n 2`` (and ``-n 4`` with ``--quick``), each
process with its own virtual CPU devices, and reads every rank's verdict.

Every case compares with NumPy on the same inputs, which every process makes
alike (seeded generators), so every process runs the same dgarray calls in
the same order (SPMD); a case that fails fails on every process alike.  A
rank's last line is ``RANK r: k passed, m failed``."""
import os
import sys
import traceback

import numpy as np

import dgarray as dg
from dgarray import distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _maps import maps_for  # noqa: E402
from test_random_chains import random_map  # noqa: E402

CASES = []
QUICK = []


def case(quick=False):
    def add(fn):
        CASES.append(fn)
        if quick:
            QUICK.append(fn)
        return fn
    return add


def ndev():
    return len(dg.devices())


def same_on_every_process(value, what):
    """value (a Python object) is the same on every process."""
    every = dist.allgather(value)
    assert all(v == every[0] for v in every), f"{what} differs between processes: {every}"


def eq(a, ref, what=""):
    got = np.asarray(a)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (what, got.dtype, got.shape)
    np.testing.assert_array_equal(got, ref, err_msg=what)


@case(quick=True)
def devices_are_the_jobs():
    per = len(dg.local_devices())
    assert ndev() == per * dist.process_count()
    assert [d.id for d in dg.local_devices()] == \
        list(range(per * dist.process_index(), per * (dist.process_index() + 1)))
    assert [d.id for d in dg.devices()] == list(range(ndev()))
    same_on_every_process([(d.id, d.name) for d in dg.devices()], "devices()")
    assert dg.process_count() == dist.process_count() and dist.is_initialized()
    # each process holds only its own devices' chunks
    x = np.arange(64 * 1024, dtype=np.float64)
    a = dg.distributed_array(x, {d: slice(d * x.size // ndev(), (d + 1) * x.size // ndev())
                                 for d in range(ndev())})
    dist.barrier()
    used = dg._core._bytes_in_use()
    mine = set(dist.local_device_range())
    assert all((used[d] >= x.nbytes // ndev()) == (d in mine) for d in range(ndev())), used
    eq(a, x)


@case(quick=True)
def asarray_and_get():
    rng = np.random.default_rng(1)
    for shape in [(0,), (5,), (17, 3), (4, 5, 6), (3, 1, 9)]:
        for dt in (np.float64, np.float32, np.int32, np.bool_, np.complex128, np.uint8):
            x = (rng.standard_normal(shape) * 10).astype(dt)
            a = dg.asarray(x)
            eq(a, x, f"asarray {shape} {dt}")
            eq(a.get(), x)
            eq(dg.asnumpy(a), x)


@case(quick=True)
def index_maps_over_every_process():
    x = np.arange(11 * 6, dtype=np.int64).reshape(11, 6)
    for name, m in maps_for(x.shape, ndev()):
        a = dg.distributed_array(x, m)
        eq(a, x, name)
        eq(a[2:9:3, ::-2], x[2:9:3, ::-2], f"{name} view")


@case(quick=True)
def elementwise_between_layouts():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((13, 7))
    y = rng.standard_normal((13, 7))
    maps = maps_for(x.shape, ndev())
    for (na, ma), (nb, mb) in zip(maps, maps[::-1]):
        a = dg.distributed_array(x, ma)
        b = dg.distributed_array(y, mb)
        eq(a + b, x + y, f"{na} + {nb}")
        eq(np.maximum(a, b) * 2 - a / 3, np.maximum(x, y) * 2 - x / 3, f"{na}, {nb}")
        eq(a + y[0], x + y[0], "broadcast")


@case(quick=True)
def reductions_and_host_values():
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, (21, 5)).astype(np.float64)
    for name, m in maps_for(x.shape, ndev()):
        a = dg.distributed_array(x, m)
        total = float(a.sum())
        assert total == x.sum(), (name, total)
        same_on_every_process(total, "float(a.sum())")
        for ax in (0, 1):
            eq(a.sum(axis=ax), x.sum(axis=ax), f"{name} sum {ax}")
            eq(a.max(axis=ax), x.max(axis=ax), f"{name} max {ax}")
            eq(np.argmax(a, axis=ax), np.argmax(x, axis=ax), f"{name} argmax {ax}")
        assert int(np.argmin(a)) == int(np.argmin(x))
        assert a[4, 3].item() == x[4, 3].item()
        same_on_every_process(a[7, 1].item(), "item")
        assert bool(a.sum() > 0) == bool(x.sum() > 0)
        np.testing.assert_allclose(float(a.mean()), x.mean())
        np.testing.assert_allclose(float(a.std()), x.std())


@case(quick=True)
def reshard_between_processes():
    rng = np.random.default_rng(4)
    x = rng.integers(-9, 10, (9, 7)).astype(np.int64)
    a = dg.asarray(x)
    for _ in range(12):
        m = random_map(rng, x.shape, ndev())
        a = a.reshard(m)
        eq(a, x, f"reshard {m}")
    same_on_every_process(repr(a), "repr")
    same_on_every_process(str(a), "str")


@case()
def modes():
    x = np.arange(40, dtype=np.int64).reshape(8, 5) - 17
    a = dg.asarray(x)
    for mode, ref in (("sum", x), ("max", x), ("min", x), ("prod", x)):
        b = a.change_mode(mode)
        eq(b, ref, mode)
        eq(b + 1, ref + 1, f"{mode} + 1")


@case()
def matrix_products():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((24, 16))
    B = rng.standard_normal((16, 10))
    n = ndev()
    rows = {d: slice(24 * d // n, 24 * (d + 1) // n) for d in range(n)}
    cols = {d: (slice(None), slice(16 * d // n, 16 * (d + 1) // n)) for d in range(n)}
    for ma in (None, rows, cols):
        a = dg.distributed_array(A, ma)
        b = dg.asarray(B)
        np.testing.assert_allclose(np.asarray(a @ b), A @ B, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(float(a[0].dot(a[1])), A[0].dot(A[1]))
    half = n // 2
    grid = [[[0], [half]], [[n - 1], [max(0, half - 1)]]]
    m = dg.make_2d_index_map([0, 12, 24], [0, 8, 16], grid)
    a = dg.distributed_array(A, m)
    np.testing.assert_allclose(np.asarray(a @ dg.asarray(B)), A @ B, rtol=1e-12, atol=1e-12)


@case()
def indexing_sorting_scans():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((15, 4))
    a = dg.asarray(x)
    eq(a[a > 0], x[x > 0], "mask")
    eq(np.sort(a, axis=0), np.sort(x, axis=0), "sort 0")
    eq(np.sort(a, axis=1), np.sort(x, axis=1), "sort 1")
    eq(np.argsort(a[:, 0]), np.argsort(x[:, 0], kind="stable"), "argsort")
    np.testing.assert_allclose(np.asarray(np.cumsum(a, axis=0)), np.cumsum(x, axis=0))
    eq(dg.take(a, [3, 0, 14], axis=0), np.take(x, [3, 0, 14], axis=0), "take")
    b = a.copy()
    b[2:5] = -1.0
    y = x.copy()
    y[2:5] = -1.0
    eq(b, y, "assign")
    eq(dg.concatenate([a, a[::2]]), np.concatenate([x, x[::2]]), "concatenate")


@case(quick=True)
def process_local_data():
    r = dist.process_index()
    local = np.arange((r + 1) * 6, dtype=np.float32).reshape(r + 1, 6) + 100 * r
    a = dist.make_array_from_process_local_data(local)
    whole = np.concatenate([np.arange((p + 1) * 6, dtype=np.float32).reshape(p + 1, 6) + 100 * p
                            for p in range(dist.process_count())])
    eq(a, whole, "local data")
    eq(a * 2 + 1, whole * 2 + 1)
    assert float(a.sum()) == float(whole.sum())
    # each process's rows (rows starts[p]..starts[p + 1] of the whole) stay on
    # its own devices (its local_device_range())
    ranges = dist.allgather(list(dist.local_device_range()))
    starts = np.cumsum([0] + [p + 1 for p in range(dist.process_count())])
    for dev, box in dg._core._chunk_layout(a):
        owner = next(p for p, devs in enumerate(ranges) if dev in devs)
        assert starts[owner] <= box[0][0] and box[0][1] <= starts[owner + 1], (dev, box)


@case(quick=True)
def errors_are_the_same_everywhere():
    x = np.arange(12.0).reshape(4, 3)
    msgs = []
    for bad in ({ndev() + 3: slice(None)}, {0: slice(0, 2)}):
        try:
            dg.distributed_array(x, bad)
        except ValueError as e:
            msgs.append(str(e))
        else:
            raise AssertionError(f"no ValueError for {bad}")
    try:
        dg.asarray(x) + dg.asarray(np.ones(5))
    except ValueError as e:
        msgs.append(str(e))
    else:
        raise AssertionError("no ValueError for shapes (4,3) and (5,)")
    try:
        dg.asarray(np.array(["a"]))
    except (TypeError, ValueError) as e:
        msgs.append(type(e).__name__)
    same_on_every_process(msgs, "error messages")
    eq(dg.asarray(x) * 2, x * 2, "the job goes on after errors")


@case()
def random_chains():
    ndv = ndev()
    for seed in range(12):
        rng = np.random.default_rng(seed)
        ref = rng.integers(-9, 10, (9, 7)).astype(np.int64)
        d = dg.distributed_array(ref, random_map(rng, ref.shape, ndv))
        for step in range(25):
            op = rng.integers(0, 6)
            if op == 0:
                d = d.reshard(random_map(rng, ref.shape, ndv))
            elif op == 1:
                d = d.change_mode(["replica", "sum", "prod", "max", "min"][rng.integers(0, 5)])
            elif op in (2, 3, 4):
                f = (np.add, np.multiply, np.maximum)[op - 2]
                o = rng.integers(-3, 4, ref.shape).astype(np.int64)
                d, ref = f(d, dg.distributed_array(o, random_map(rng, ref.shape, ndv))), f(ref, o)
            else:
                ax = int(rng.integers(0, 2))
                red = (np.sum, np.max, np.min)[rng.integers(0, 3)]
                r = red(d, axis=ax, keepdims=True)
                eq(r, red(ref, axis=ax, keepdims=True), f"seed {seed} step {step}")
                d, ref = d - r, ref - red(ref, axis=ax, keepdims=True)
            eq(d, ref, f"seed {seed} step {step}")


def hexes(v):
    """The bits of a host value (float, int, bool, complex) as text."""
    v = complex(v)
    return (v.real.hex(), v.imag.hex())


@case(quick=True)
def full_reductions_combine_everywhere():
    """A full reduction's partials are combined by one exchange (the job's
    all-reduce): every process gets the same bits, the same on a repeat,
    NumPy's value (exact on integers), and the fold in chunk order of the
    chunks' own partials (the fixed order of one process's fold)."""
    rng = np.random.default_rng(11)
    xi = rng.integers(-40, 40, (203, 3)).astype(np.float64)
    xf = rng.standard_normal((203, 3))
    for name, m in maps_for(xi.shape, ndev()):
        a, f = dg.distributed_array(xi, m), dg.distributed_array(xf, m)
        for what, got, ref in [
                ("sum", a.sum(), xi.sum()), ("prod", (a / 40 + 1).prod(), (xi / 40 + 1).prod()),
                ("max", a.max(), xi.max()), ("min", a.min(), xi.min()),
                ("any", (a > 38).any(), (xi > 38).any()), ("all", (a > -41).all(), True),
                ("argmax", np.argmax(a), np.argmax(xi)), ("argmin", np.argmin(a), np.argmin(xi)),
                ("mean", a.mean(), xi.mean()), ("int sum", a.astype(np.int32).sum(),
                                                 xi.astype(np.int32).sum())]:
            value = got.item()
            same_on_every_process(hexes(value), f"{name} {what}")
            if what == "prod":
                np.testing.assert_allclose(value, ref, rtol=1e-12, err_msg=f"{name} {what}")
            else:
                assert value == ref, (name, what, value, ref)
        total = float(f.sum())
        same_on_every_process(total.hex(), f"{name} float sum")
        assert float(f.sum()).hex() == total.hex(), name  # the same bits on a repeat
        np.testing.assert_allclose(total, xf.sum(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(float(np.abs(f).max()), np.abs(xf).max())
    # the fixed order: chunk 0's partial + chunk 1's + ... (each one chunk's
    # sum on one device), as one process folds them
    x = rng.standard_normal(100_003)
    a = dg.asarray(x)
    acc = None
    for dev, box in dg._core._chunk_layout(a):
        (lo, hi, step), = box
        part = float(dg.distributed_array(x[lo:hi:step], {0: slice(None)}).sum())
        acc = part if acc is None else acc + part
    assert float(a.sum()).hex() == acc.hex(), (float(a.sum()), acc)


def fpe_outcome(fn, mode):
    """What fn did under errstate(all=mode): (the FloatingPointError's
    message or None, the kinds warned, as 'overflow', 'invalid value')."""
    import warnings
    raised = None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(all=mode):
            try:
                np.asarray(fn())
            except FloatingPointError as e:
                raised = str(e)
    return raised, sorted({str(m.message).split(" encountered")[0] for m in w
                           if issubclass(m.category, RuntimeWarning)})


@case(quick=True)
def overflows_of_combines_everywhere():
    """Partials that are finite on every device (two rows each) but whose
    combine overflows: the job's all-reduce of a sum's partials, and a
    cumsum's carries from device to device and process to process.  NumPy's
    single sum / cumsum raises "overflow"; every process raises alike under
    errstate "raise" (no process goes on alone, though only one process's
    devices may have overflowed: the processes share what they noted), the
    processes whose devices overflowed warn under "warn" (at the call, or at
    the read of a sum left in an op mode), none says anything under
    "ignore"."""
    n = ndev()
    x = np.zeros((2 * n, 3), np.float32)
    x[:, 1] = np.float32(0.3) * np.finfo(np.float32).max
    a = dg.distributed_array(x, {d: slice(2 * d, 2 * d + 2) for d in range(n)})
    for what, fn in [("sum", lambda xp, v: xp.sum(v)), ("sum0", lambda xp, v: xp.sum(v, axis=0)),
                     ("mean0", lambda xp, v: xp.mean(v, axis=0)),
                     ("cumsum0", lambda xp, v: xp.cumsum(v, axis=0)),
                     ("cumsum", lambda xp, v: xp.cumsum(v))]:
        for mode in ("raise", "warn", "ignore"):
            got = fpe_outcome(lambda: fn(dg, a), mode)
            if mode == "warn":  # the kinds any process warned of
                got = (got[0], sorted({k for _, kinds in dist.allgather(got) for k in kinds}))
            same_on_every_process(got, f"{what} under {mode}")
            exp = fpe_outcome(lambda: fn(np, x), mode)
            assert (got[0] is None) == (exp[0] is None) and got[1] == exp[1], \
                (what, mode, got, exp)
            if got[0] is not None:
                assert got[0].split(" encountered")[0] == exp[0].split(" encountered")[0], \
                    (what, mode, got, exp)
        assert exp[0] is None and fpe_outcome(lambda: fn(np, x), "raise")[0], what


@case(quick=True)
def checkpoints_each_process_writes_its_chunks():
    """dgarray.save / load in a job: one file (header once, renamed once),
    each process writing and reading only its own chunks (its bytes written
    counted by the kernel: /proc/self/io), the same values as numpy.save /
    numpy.load; a failure on one process raises on every process and leaves
    no file."""
    import tempfile
    import dgarray._checkpoint as ckpt
    d = dist.allgather(tempfile.mkdtemp(prefix="dg_mpi_") if dist.process_index() == 0
                       else None)[0]
    rng = np.random.default_rng(12)
    for dt in (np.float64, np.int16, np.complex64, np.bool_):
        x = (rng.standard_normal((37, 5)) * 9).astype(dt)
        for name, m in maps_for(x.shape, ndev()):
            path = os.path.join(d, f"{name}.npy")
            a = dg.distributed_array(x, m)
            dg.save(path, a)
            dist.barrier()
            ref = np.load(path)
            assert ref.dtype == x.dtype and np.array_equal(ref, x), (name, dt)
            eq(dg.load(path), x, f"load {name} {dt}")
            eq(dg.load(path, index_map=m), x, f"load with the map {name} {dt}")
            if dist.process_index() == 0:
                np.save(os.path.join(d, "np.npy"), x)
            dist.barrier()
            eq(dg.load(os.path.join(d, "np.npy"), index_map=m), x, f"numpy's file {name}")
    assert sorted(f for f in os.listdir(d) if f.startswith(".")) == []  # no temporary left
    # the bytes each process writes: its own chunks (half of them on 2 processes)
    x = np.arange(1 << 19, dtype=np.float64)
    a = dg.asarray(x)
    path = os.path.join(d, "big.npy")
    dist.barrier()

    def wchar():
        with open("/proc/self/io") as f:
            return int(next(line for line in f if line.startswith("wchar")).split()[1])
    before = wchar()
    dg.save(path, a)
    written = wchar() - before
    mine = sum(len(range(*box[0])) * 8 for dev, box in dg._core._chunk_layout(a)
               if dev in dist.local_device_range())
    assert mine <= written < mine + 64 * 1024, (written, mine, x.nbytes)
    eq(np.load(path), x)
    # a failure on one process: every process raises, nothing under the name
    bad = os.path.join(d, "bad.npy")
    real = ckpt._core

    class Failing:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def _npy_write(*args):
            raise OSError(28, "No space left on device (made to fail)")
    if dist.process_index() == dist.process_count() - 1:
        ckpt._core = Failing()
    try:
        dg.save(bad, a)
        raised = None
    except OSError as e:
        raised = str(e)
    finally:
        ckpt._core = real
    assert raised is not None, "no error"
    dist.barrier()
    assert not os.path.exists(bad) and not [f for f in os.listdir(d) if f.startswith(".")]
    # a directory that does not exist, a truncated file: every process raises
    for fn, exc in [(lambda: dg.save(os.path.join(d, "no", "x.npy"), a), OSError),
                    (lambda: dg.load(os.path.join(d, "cut.npy")), ValueError)]:
        if dist.process_index() == 0:
            with open(path, "rb") as f:
                head = f.read(4096)
            with open(os.path.join(d, "cut.npy"), "wb") as f:
                f.write(head)
        dist.barrier()
        try:
            fn()
            raised = None
        except exc as e:
            raised = e
        assert raised is not None, fn
        same_on_every_process(True, "raised")


@case()
def zarr_each_process_writes_its_chunks():
    """to_zarr / from_zarr in a job (if zarr is installed): Zarr chunks of
    one process's elements written by it; Zarr chunks that two processes'
    chunks share read by all and written by process 0; the same values as
    NumPy's."""
    try:
        import zarr
    except ImportError:
        return
    import tempfile
    d = dist.allgather(tempfile.mkdtemp(prefix="dg_mpi_z") if dist.process_index() == 0
                       else None)[0]
    rng = np.random.default_rng(13)
    x = rng.standard_normal((41, 6)).astype(np.float32)
    for name, m in maps_for(x.shape, ndev()):
        a = dg.distributed_array(x, m)
        for chunks in (None, (7, 4)):
            store = os.path.join(d, f"{name}-{chunks}")
            dg.to_zarr(a, store, chunks=chunks)
            dist.barrier()
            got = zarr.open_array(store, mode="r")[...]
            assert np.array_equal(got, x), (name, chunks)
            eq(dg.from_zarr(store, index_map=m), x, f"from_zarr {name} {chunks}")
            eq(dg.from_zarr(store), x, f"from_zarr default {name}")


def counts():
    """(broadcasts, exchanges) of the job's host communication so far."""
    return dg._core._dist_counts()


# a job's all-reduces go through the host (one exchange each: the CPU
# backend's way, and that of jobs of many processes) or device to device (a
# transport of each process's partials, no host communication: GPUs' way);
# DGARRAY_JOB_ALLREDUCE=host or =device chooses
HOST_ALLREDUCE = (os.environ.get("DGARRAY_JOB_ALLREDUCE") or
                  ("host" if dg.backend() == "cpu" else "device")) == "host"


def allreduce_counts():
    """(broadcasts, exchanges, all-reduces) so far."""
    return counts() + (dg._core._dist_allreduces()[0],)


def after_allreduces(before, n):
    """What allreduce_counts() must be after n all-reduces and nothing else
    since `before`: no broadcast, an exchange each through the host alone."""
    return (before[0], before[1] + (n if HOST_ALLREDUCE else 0), before[2] + n)


@case(quick=True)
def host_reads_in_pieces():
    """A host read of another process's chunk goes in pieces, each broadcast
    once the owner has copied it (dg_dist.c, host_read): with pieces of 16
    bytes (a row of 17 elements each), reads of whole arrays (into the
    result directly), of column blocks, strided and reversed views and
    single rows (through a temporary), over every layout, dtype size and an
    axis of extent 1, give NumPy's values on every process."""
    old = dg._core._dist_read_piece(16)
    try:
        rng = np.random.default_rng(21)
        for dt in (np.uint8, np.int16, np.float32, np.float64, np.complex128):
            x = (rng.standard_normal((23, 1, 17)) * 50).astype(dt)
            for name, m in maps_for(x.shape, ndev()) + [
                    ("last axis", {d: (slice(None), 0, slice(17 * d // ndev(),
                                                             17 * (d + 1) // ndev()))
                                   for d in range(ndev())})]:
                a = dg.distributed_array(x, m)
                before = counts()
                eq(a, x, f"{name} {dt}")
                if name in ("rows", "cols"):  # many pieces of other processes' chunks
                    assert counts()[0] - before[0] > ndev(), (name, before, counts())
                eq(a.get(), x, f"get {name} {dt}")
                eq(a[::3, :, ::-2], x[::3, :, ::-2], f"view {name} {dt}")
                eq(a[7], x[7], f"row {name} {dt}")
                eq(a[:, 0, 5], x[:, 0, 5], f"column {name} {dt}")
                same_on_every_process(hexes(a[22, 0, 16].item()), "item")
    finally:
        dg._core._dist_read_piece(old)


@case(quick=True)
def reads_of_what_every_process_holds_stay_home():
    """A read of a region that every process holds on its own devices (a
    full reduction's value; an array replicated on each process) copies each
    process's own chunks: no broadcast; a region some process lacks is
    broadcast; NumPy's values on every process either way.  A barrier is one
    exchange."""
    per, procs = len(dg.local_devices()), dist.process_count()
    x = np.arange(60.0).reshape(12, 5)
    # even processes hold all rows on their devices, odd ones rows 0..5
    m = {}
    for p in range(procs):
        for k in range(per):
            m[p * per + k] = (slice(12 * k // per, 12 * (k + 1) // per) if p % 2 == 0
                              else slice(6 * k // per, 6 * (k + 1) // per))
    a = dg.distributed_array(x, m)
    dist.barrier()
    before = counts()
    eq(a[:6], x[:6], "rows every process holds")
    eq(a[1:5, ::-2], x[1:5, ::-2], "a view of them")
    assert a[5, 4].item() == x[5, 4]
    assert counts() == before, (before, counts())
    eq(a[4:10], x[4:10], "rows the odd processes lack")
    eq(a, x, "all of it")
    assert counts()[0] > before[0], (before, counts())
    # split over every device of the job (a small array would otherwise sit on
    # one device of process 0, whose value the others would need broadcast)
    h = np.arange(1000.0) - 300
    v = dg.distributed_array(h, {d: slice(d * h.size // ndev(), (d + 1) * h.size // ndev())
                                 for d in range(ndev())})
    for name, ref in [("sum", 499500.0 - 300000), ("max", 699.0), ("mean", 199.5)]:
        before = allreduce_counts()
        value = float(getattr(v, name)())  # one all-reduce, no broadcast
        assert allreduce_counts() == after_allreduces(before, 1), (name, before,
                                                                   allreduce_counts())
        assert value == ref, (name, value, ref)
    before = counts()
    dist.barrier()
    assert counts() == (before[0], before[1] + 1), (before, counts())


@case(quick=True)
def arg_reductions_take_one_exchange():
    """argmax / argmin whose (value, index) partials span processes: the
    pairs of every device gathered to every process by one exchange (the
    job's all-reduce of pairs), each process then holding the result on its
    own devices, so that reading it broadcasts nothing; NumPy's answer, with
    NaNs (the first wins) and ties (the lowest index wins) wherever they lie.
    nanargmax / nanargmin take one more exchange: their all-NaN check."""
    n = ndev()
    size = 24 * n
    rng = np.random.default_rng(12)

    def split(x):  # along the first axis over every device of the job
        m = x.shape[0]
        return dg.distributed_array(x, {d: slice(d * m // n, (d + 1) * m // n) for d in range(n)})

    def counted(f, nallreduce, what):
        dist.barrier()
        before = allreduce_counts()
        got = f()
        assert allreduce_counts() == after_allreduces(before, nallreduce), (
            what, before, allreduce_counts())
        return got

    ties = rng.integers(0, 3, size).astype(np.float64)  # the max and min in every chunk
    nans = rng.standard_normal(size)
    nans[[size // 2 + 1, size - 5, size - 4]] = np.nan  # the first NaN past the middle
    last = np.abs(rng.standard_normal(size))
    last[[size - 1, size - 2]] = np.nan                 # NaNs on the last device alone
    last[3] = last[size // 2] = 9.0                     # a tie of the largest numbers
    inputs = [("ties", ties, (np.float64, np.float32, np.float16, np.int8, np.uint64, np.bool_,
                              np.complex128)),
              ("nans", nans, (np.float64, np.float32, np.float16, np.complex64)),
              ("last", last, (np.float64, np.float32))]
    for what, x0, dtypes in inputs:
        for dt in dtypes:
            x = x0.astype(dt)
            if dt == np.complex128:
                x = x + 1j * np.where(np.arange(size) % 5 == 0, np.nan, ties[::-1])
            x2 = x.reshape(size // 4, 4)
            a, a2 = split(x), split(x2)
            nan_x = 2 if x.dtype.kind in "fc" else 1
            for f in (np.argmax, np.argmin, np.nanargmax, np.nanargmin):
                name = f"{what} {x.dtype} {f.__name__}"
                nan_f = f in (np.nanargmax, np.nanargmin)
                ex = nan_x if nan_f else 1
                got = counted(lambda: int(f(a)), ex, name)
                assert got == int(f(x)), (name, got, int(f(x)))
                got = counted(lambda: np.asarray(f(a, keepdims=True)), ex, f"{name} keepdims")
                eq(got, f(x, keepdims=True), f"{name} keepdims")
                got = counted(lambda: int(f(a2)), ex, f"{name} 2-d")
                assert got == int(f(x2)), (name, "2-d", got, int(f(x2)))
                got = counted(lambda: np.asarray(f(a2, axis=None, keepdims=True)), ex,
                              f"{name} 2-d keepdims")
                eq(got, f(x2, axis=None, keepdims=True), f"{name} 2-d keepdims")
                if not nan_f:  # along the split axis: one all-reduce of 4 pairs
                    got = counted(lambda: np.asarray(f(a2, axis=0)), 1, f"{name} axis 0")
                    eq(got, f(x2, axis=0), f"{name} axis 0")
                eq(f(a2, axis=0), f(x2, axis=0), f"{name} axis 0")
                eq(f(a2, axis=1), f(x2, axis=1), f"{name} axis 1")
                same_on_every_process(int(f(a)), name)


@case(quick=True)
def chunks_are_this_processs():
    """a.chunks() lists this process's chunks only (the job's device
    numbers), each read in place by NumPy; writes through them are what the
    job reads; another process's chunk is a BufferError."""
    mine = {d.id for d in dg.local_devices()}
    x = np.arange(37 * 5, dtype=np.float64).reshape(37, 5)
    for name, m in maps_for(x.shape, ndev()):
        a = dg.distributed_array(x, m)
        layout = dg._core._chunk_layout(a)
        got = a.chunks()
        assert [(d, tuple((s.start, s.stop, s.step) for s in i)) for d, i, _ in got] == \
            [(d, b) for d, b in layout if d in mine], name
        if dg.backend() != "cpu":  # NumPy reads host memory only: the listing alone
            del got, a
            continue
        for _, index, c in got:
            eq(np.from_dlpack(c), x[index], name)
            eq(np.asarray(c), x[index], name)
        for i, (d, _) in enumerate(layout):
            if d not in mine:
                try:
                    dg._core._dlpack(a, False, 1, 0, False, i)
                    raise AssertionError(f"{name}: chunk {i} of another process's device {d} lent")
                except BufferError as e:
                    assert "another process" in str(e), e
                break
        if name not in ("replicated", "overlap"):      # each element in one chunk
            for dev, index, c in got:
                np.from_dlpack(c)[...] = 100 + dev
            want = np.empty_like(x)
            for dev, box in layout:
                want[tuple(slice(*r) for r in box)] = 100 + dev
            eq(a, want, f"{name}: writes through the chunks")
        del got


@case()
def no_memory_left_behind():
    before = dg._core._bytes_in_use()
    a = dg.asarray(np.arange(1000.0))
    b = (a * 3).reshard({d: slice(d * 1000 // ndev(), None) for d in range(ndev())})
    float(b.sum())
    del a, b
    assert dg._core._bytes_in_use() == before


@case()
def median_selection_over_every_process():
    """A median and a quantile of a whole array by selection (the counts
    read apart, each device's gathering reading every device's bins, the
    few kept gathered on the first device: some on other processes), both
    plans (_quantiles._GATHER_FIRST), data around 0 and far from it."""
    from dgarray import _quantiles
    n = (1 << 15) + 1
    rng = np.random.default_rng(9)
    for what, x in (("normal", rng.standard_normal(n).astype(np.float32)),
                    ("uniform", rng.random(n).astype(np.float32))):
        old = _quantiles._GATHER_FIRST
        for first in (True, False):
            _quantiles._GATHER_FIRST = first
            try:
                for m in ({d: slice(n * d // ndev(), n * (d + 1) // ndev()) for d in range(ndev())},
                          None):
                    a = dg.distributed_array(x, m) if m else dg.asarray(x)
                    eq(dg.median(a), np.median(x)[()], f"{what} {first} median")
                    eq(dg.median(a[1:]), np.median(x[1:])[()], f"{what} {first} even")
                    eq(dg.quantile(a, 0.3), np.quantile(x, 0.3)[()], f"{what} {first} quantile")
            finally:
                _quantiles._GATHER_FIRST = old


def main():
    cases = QUICK if "--quick" in sys.argv else CASES
    rank = dist.process_index()
    passed, failed = 0, []
    for fn in cases:
        try:
            fn()
            passed += 1
        except Exception:  # noqa: BLE001 (each case's failure is reported, the next runs)
            failed.append(fn.__name__)
            print(f"RANK {rank}: {fn.__name__} FAILED\n{traceback.format_exc()}", flush=True)
    print(f"RANK {rank}: {passed} passed, {len(failed)} failed {failed}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
