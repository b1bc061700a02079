"""Forked children and worker processes (DESIGN: the CPU backend's worker
threads do not survive a fork; the CUDA backend cannot run in a forked
child).  On the CPU backend a child forked after dgarray has run (os.fork,
multiprocessing's 'fork') reads and uses the parent's arrays and makes its
own, as a NumPy child does; 'forkserver' and 'spawn' workers get arrays by
pickling; the parent goes on unaffected.  On the CUDA backend a forked
child's first call raises dgarray.DeviceError naming the cause and the fix.
Every result is compared with NumPy's, on 1 and 4 devices."""
import multiprocessing
import os
import pickle
import threading
import warnings

import numpy as np
import pytest

import dgarray as dg
import _fork_workers as workers
from _maps import maps_for

CPU_ONLY = pytest.mark.skipif(
    dg.backend() != "cpu",
    reason="CUDA cannot run in a forked child; test_cuda_fork_error checks the error there")

# Large enough that the work runs on the devices' worker threads, not inline.
N = 300_000


def run_child(fn):
    """Runs fn() in a child made by os.fork(); returns what it returned
    (pickled through a pipe), or raises what it raised."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns of any fork of a process with threads; the
        # devices' worker threads are what the fork handlers take care of
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            try:
                out = ("ok", fn())
            except BaseException as e:  # noqa: BLE001 - sent to the parent
                out = ("raised", e)
            data = pickle.dumps(out)
            with os.fdopen(w, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child crashed"
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value


def layouts(ndev):
    x = np.arange(N, dtype=np.float64).reshape(-1, 100)
    return x, [(name, dg.distributed_array(x, m)) for name, m in maps_for(x.shape, ndev)]


@CPU_ONLY
def test_os_fork_child_uses_parent_arrays(ndev, no_leak):
    """After work on the worker threads, a forked child reads the parent's
    arrays, computes with them (on its own fresh worker threads) and makes
    arrays of its own; the parent goes on as before."""
    x, arrays = layouts(ndev)
    pending = [a * 3 - 1 for _, a in arrays]  # queued on the workers at the fork

    def child():
        out = []
        for (name, a), p in zip(arrays, pending):
            out.append((name, a.get(), p.get(), (a + p).get(), float((a * a).sum()),
                        dg.arange(N, dtype=np.int64).reshape(-1, 100).get()))
        return out

    for _ in range(2):  # a child of a parent that forked before
        for name, a_val, p_val, s_val, sq, fresh in run_child(child):
            np.testing.assert_array_equal(a_val, x, err_msg=name)
            np.testing.assert_array_equal(p_val, x * 3 - 1, err_msg=name)
            np.testing.assert_array_equal(s_val, x + (x * 3 - 1), err_msg=name)
            np.testing.assert_allclose(sq, (x * x).sum(), rtol=1e-12)
            np.testing.assert_array_equal(fresh, np.arange(N).reshape(-1, 100))
    for (name, a), p in zip(arrays, pending):
        np.testing.assert_array_equal((a + p).get(), x + (x * 3 - 1), err_msg=name)


@CPU_ONLY
def test_fork_while_another_thread_computes(ndev):
    """A fork while another thread keeps queueing work: the fork waits for
    the queues to drain, the child starts with them empty, and both the
    thread's results and the child's are right."""
    x = np.arange(N, dtype=np.float64)
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})
    stop = threading.Event()
    errors = []

    def busy():
        try:
            while not stop.is_set():
                b = (a + 1) * 2
                if not np.array_equal(b.get(), (x + 1) * 2):
                    errors.append("wrong values in the parent's thread")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    t = threading.Thread(target=busy)
    t.start()
    try:
        for _ in range(3):
            got = run_child(lambda: (a * a - a).get())
            np.testing.assert_array_equal(got, x * x - x)
    finally:
        stop.set()
        t.join()
    assert not errors


@CPU_ONLY
def test_child_device_memory_is_its_own(ndev):
    """Writes in the child do not reach the parent (the memory of a virtual
    device is copied on write by the fork, as a NumPy array's is)."""
    x = np.arange(N, dtype=np.float64)
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})

    def child():
        b = a  # the parent's array, written in place
        b[::7] = -1
        b += 1
        return b.get()

    y = x.copy()
    y[::7] = -1
    np.testing.assert_array_equal(run_child(child), y + 1)
    np.testing.assert_array_equal(a.get(), x)


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_workers(method, ndev):
    """A pool of 2 workers of each start method gets DistributedArrays
    (pickled), computes with them and sends DistributedArrays back."""
    if method == "fork" and dg.backend() != "cpu":
        pytest.skip("CUDA cannot run in a forked child; test_cuda_fork_error checks the "
                    "error there")
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method!r} start method on this platform")
    x = np.arange(4000, dtype=np.float64).reshape(200, 20)
    y = np.linspace(-1, 1, 4000).reshape(200, 20)
    maps = maps_for(x.shape, ndev)
    pairs = [(dg.distributed_array(x, m), dg.distributed_array(y, m)) for _, m in maps]
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        results = pool.map(workers.combine, pairs)
        seen = pool.map(workers.describe, [a for a, _ in pairs])
        made = pool.map(workers.fresh, [10, 1000])
    for (name, _), (c, total, same_map), (a, _), (shape, dtype, mode, imap, vals) in \
            zip(maps, results, pairs, seen):
        assert isinstance(c, dg.DistributedArray)
        np.testing.assert_array_equal(c.get(), x * 2 + y, err_msg=name)
        np.testing.assert_allclose(total, (x * 2 + y).sum(), rtol=1e-12)
        assert same_map, name
        assert (shape, dtype, mode, imap) == (a.shape, str(a.dtype), a.mode, a.index_map)
        np.testing.assert_array_equal(vals, x)
    for n, m in zip([10, 1000], made):
        np.testing.assert_array_equal(m.get(), np.arange(n, dtype=np.float64) ** 2)
    # the parent is unaffected
    a, b = pairs[0]
    np.testing.assert_array_equal((a * 2 + b).get(), x * 2 + y)


@pytest.mark.skipif(dg.backend() != "cuda",
                    reason="the CUDA fork error needs the CUDA backend (a GPU); the CPU "
                    "backend's forked children are tested above")
def test_cuda_fork_error():
    """On GPUs a forked child's first dgarray call raises DeviceError naming
    the cause (a fork after CUDA was initialised) and the fix (the 'spawn'
    or 'forkserver' start method); reading metadata still works there, and
    the parent is unaffected."""
    x = np.arange(N, dtype=np.float32)
    a = dg.asarray(x)
    b = a + 1

    def child():
        assert a.shape == x.shape and a.dtype == x.dtype
        msgs = []
        for op in (lambda: a.get(), lambda: a + 1, lambda: dg.zeros(10), lambda: float(b.sum())):
            try:
                op()
                msgs.append(None)
            except dg.DeviceError as e:
                msgs.append(str(e))
        return msgs

    msgs = run_child(child)
    for m in msgs:
        assert m is not None, "a CUDA call in a forked child did not raise DeviceError"
        assert "forked" in m and "'spawn'" in m and "'forkserver'" in m, m
    np.testing.assert_array_equal((a + b).get(), x + x + 1)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        c, total, _ = pool.map(workers.combine, [(a, b)])[0]
    np.testing.assert_array_equal(c.get(), x * 2 + x + 1)
