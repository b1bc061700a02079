"""DistributedArray.chunks(): every chunk lent in place (DLPack, NumPy's
array interface on the CPU backend, the CUDA array interface on GPUs), and
dgarray.asarray of other libraries' GPU arrays (DLPack, the CUDA array
interface) copied device to device.

The CPU backend's tests read the chunks with NumPy (its devices are host
memory).  The GPU tests need the CUDA backend and CuPy (torch and JAX where
they import); they compare addresses with the chunks' own and values with
NumPy's, and check that the copies into dgarray never pass through the
host (the host paths are made to fail)."""
import gc
import os
import sys

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

CPU = dg.backend() == "cpu"
cpu_only = pytest.mark.skipif(not CPU, reason="NumPy reads the chunks in place on the CPU "
                              "backend only (its devices are host memory)")
cuda_only = pytest.mark.skipif(dg.backend() != "cuda", reason="the CUDA backend's chunks "
                               "(GPU memory): needs GPUs and dgarray built with CUDA")

SHAPE = (7, 5)


def values(dtype, shape=SHAPE):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 11 - 4
    return x.astype(dtype)


def n_chunks(index_map):
    """How many chunks an index map names (a list of keys: one each)."""
    return sum(len(k) if isinstance(k, list) else 1 for k in index_map.values())


OVERLAPPING = ("replicated", "overlap")


# ---- the CPU backend: NumPy reads the chunks in place -------------------------------------

@cpu_only
@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i4", "i8", "f2", "f4", "f8", "c8", "c16"])
def test_every_chunk_is_a_view(dtype, ndev, no_leak):
    x = values(dtype)
    for name, m in maps_for(SHAPE, ndev):
        a = dg.asarray(x, index_map=m)
        got = a.chunks()
        phys = dg._core._chunk_layout(a)
        assert [(d, tuple((s.start, s.stop, s.step) for s in i)) for d, i, _ in got] == phys
        if m is not None:
            assert len(got) == n_chunks(m), name
        for dev, index, c in got:
            assert 0 <= dev < ndev or m is None, name
            assert all(isinstance(s, slice) for s in index) and len(index) == x.ndim
            v = np.from_dlpack(c)
            w = np.asarray(c)
            np.testing.assert_array_equal(v, x[index], err_msg=name)
            np.testing.assert_array_equal(w, x[index], err_msg=name)
            assert v.dtype == w.dtype == x.dtype == c.dtype
            assert v.shape == w.shape == c.shape == x[index].shape
            assert v.strides == w.strides == c.strides
            assert c.__dlpack_device__() == (1, 0) and c.device == dev
            assert v.flags.writeable and w.flags.writeable
            assert v.size == 0 or np.shares_memory(v, w)
            assert not hasattr(c, "__cuda_array_interface__")
            assert c.__array_interface__["version"] == 3
            u = c.__array__()
            assert u.size == 0 or np.shares_memory(u, v)
        del got, v, w, u, c, a


@cpu_only
def test_writes_meet_in_both_directions(ndev, no_leak):
    x = values("f8")
    for name, m in maps_for(SHAPE, ndev):
        a = dg.asarray(x, index_map=m)
        views = [(index, np.from_dlpack(c), np.asarray(c)) for _, index, c in a.chunks()]
        a[...] = -a                                    # dgarray writes in place
        dg._core._sync_all()
        for index, v, w in views:
            np.testing.assert_array_equal(v, -x[index], err_msg=name)
            np.testing.assert_array_equal(w, -x[index], err_msg=name)
        if name not in OVERLAPPING:                    # each element in one chunk
            for k, (index, v, _) in enumerate(views):
                v[...] = 100 + k                       # the chunk's own memory
            want = np.empty_like(x)
            for k, (index, _, _) in enumerate(views):
                want[index] = 100 + k
            np.testing.assert_array_equal(a.get(), want, err_msg=name)
        del views, v, w, a


@cpu_only
def test_views_of_views(ndev, no_leak):
    """A strided, reversed view's chunks (boxes of the view, strides of the
    base's memory) and a transposed one's."""
    x = values("i4", (9, 6))
    for name, m in maps_for((9, 6), ndev):
        a = dg.asarray(x, index_map=m)
        for b, ref in ((a[1::2, ::-2], x[1::2, ::-2]), (a.T, x.T)):
            for _, index, c in b.chunks():
                v = np.from_dlpack(c)
                np.testing.assert_array_equal(v, ref[index], err_msg=name)
                assert v.strides == c.strides
            del b, c, v


def _addresses(a):
    """The chunks' addresses, lent without a copy on write."""
    return {addr for _, _, addr, _ in dg._core._chunk_lend(a, False)}


@cpu_only
@pytest.mark.parametrize("view", [np.from_dlpack, np.asarray])
def test_pending_work_and_copy_on_write(view, ndev, no_leak):
    x = values("f8", (8, 3))
    m = {d: slice(d * 8 // ndev, (d + 1) * 8 // ndev) for d in range(ndev)}
    c = dg.asarray(x, index_map=m)
    c2 = c * 2                                         # queued on the devices
    for _, index, ch in c2.chunks():
        np.testing.assert_array_equal(view(ch), 2 * x[index])
    for first in ("shared", "source"):
        c = dg.asarray(x, index_map={0: slice(None)})
        d = c.reshard({0: [slice(0, 4), slice(4, 8)]})  # views of c's memory
        assert _addresses(c) & _addresses(d)
        a, b = (d, c) if first == "shared" else (c, d)
        for _, index, ch in a.chunks():
            view(ch)[...] = -1                         # reaches a only
        np.testing.assert_array_equal(a.get(), -np.ones_like(x))
        np.testing.assert_array_equal(b.get(), x)
        assert not _addresses(c) & _addresses(d)
    del ch


@cpu_only
def test_op_modes_lend_partials(ndev, no_leak):
    x = values("i8")
    m = {d: slice(None) for d in range(ndev)}
    s = dg.asarray(x, index_map=m).change_mode("sum")
    acc = np.zeros_like(x)
    for _, index, c in s.chunks():
        acc[index] += np.from_dlpack(c)
    np.testing.assert_array_equal(acc, x)
    assert len(s.chunks()) == ndev


@cpu_only
def test_refcounts_and_lifetime(ndev, no_leak):
    a = dg.asarray(values("f4"), index_map={d: slice(d, None, ndev) for d in range(ndev)})
    n = sys.getrefcount(a)
    got = a.chunks()
    assert sys.getrefcount(a) == n + len(got)          # each chunk holds the array
    c = got[-1][2]
    del got
    assert sys.getrefcount(a) == n + 1
    cap = c.__dlpack__()
    assert "dltensor" in repr(cap) and "versioned" not in repr(cap)
    assert sys.getrefcount(a) == n + 2
    del cap                                            # never consumed: released
    cap = c.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    del cap
    assert sys.getrefcount(a) == n + 1
    v = np.from_dlpack(c)
    w = np.asarray(c)
    assert sys.getrefcount(a) == n + 2                 # v's capsule; w holds c
    want = a.get()[c.index]
    del c, a                                           # the views keep the memory
    np.testing.assert_array_equal(v, want)
    np.testing.assert_array_equal(w, want)
    del v, w


@cpu_only
def test_read_only_chunks(no_leak):
    x = values("f4", (5, 5))
    d = dg.asarray(x, index_map={0: slice(0, 2), 1 % dg._core._ndevices(): slice(2, 5)})
    diag = d.diagonal()                                # read-only, as NumPy's
    want = np.diagonal(x)
    for _, index, c in diag.chunks():
        with pytest.raises(BufferError, match="readonly"):
            c.__dlpack__()
        v = np.from_dlpack(c)
        w = np.asarray(c)
        assert not v.flags.writeable and not w.flags.writeable
        np.testing.assert_array_equal(v, want[index])
        np.testing.assert_array_equal(w, want[index])
        assert c.__array_interface__["data"][1] is True
    del c, v, w


@cpu_only
def test_protocol_arguments(no_leak):
    x = values("i2")
    a = dg.asarray(x, index_map={0: [slice(0, 3), slice(3, 7)]})
    (_, i0, c0), (_, i1, c1) = a.chunks()
    with pytest.raises(BufferError, match="stream"):
        c0.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="not on"):
        c0.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="without a copy"):
        c0.__dlpack__(dl_device=(2, 0), copy=False)
    same = np.from_dlpack(c1, device="cpu")            # dl_device=(1, 0): ours
    assert np.shares_memory(same, np.asarray(c1))
    cp = np.from_dlpack(c1, copy=True)                 # a copy of the chunk alone
    np.testing.assert_array_equal(cp, x[i1])
    assert cp.flags.writeable and not np.shares_memory(cp, np.asarray(c1))
    cp[...] = 0
    np.testing.assert_array_equal(a.get(), x)
    # not the chunk any more: an in-place resize changed the array's chunks
    b = dg.asarray(x, index_map={0: [slice(0, 3), slice(3, 7)]})
    stale = b.chunks()[1][2]
    b.resize((3, 5))
    with pytest.raises(BufferError, match="changed"):
        np.from_dlpack(stale)
    del same, cp, c0, c1, stale


@cpu_only
def test_zero_size_and_0d_arrays(no_leak):
    a = dg.empty((0, 3), dtype="f8")
    for _, index, c in a.chunks():
        assert np.from_dlpack(c).shape == np.asarray(c).shape == (0, 3)
    b = dg.asarray(np.float32(2.5))
    (_, index, c), = b.chunks()
    assert index == () and c.shape == ()
    assert np.from_dlpack(c)[()] == np.asarray(c)[()] == np.float32(2.5)
    del c


@cpu_only
def test_a_whole_array_dlpack_names_chunks(no_leak):
    a = dg.asarray(values("f8"), index_map={0: [slice(0, 3), slice(3, 7)]})
    with pytest.raises(BufferError, match=r"chunks\(\)"):
        np.from_dlpack(a)


class CudaArrayInterface:
    """Another library's GPU array that only the CUDA array interface reads
    (Numba's device arrays): a view of `owner`'s memory."""

    def __init__(self, owner, interface=None):
        self.owner = owner
        self.__cuda_array_interface__ = interface or owner.__cuda_array_interface__


@cpu_only
def test_cuda_array_interface_refused_on_the_cpu_backend():
    fake = CudaArrayInterface(None, {"shape": (3,), "typestr": "<f4", "data": (4096, False),
                                     "version": 3, "strides": None})
    for f in (dg.asarray, dg.array, dg.from_dlpack):
        with pytest.raises(BufferError, match="__cuda_array_interface__"):
            f(fake)


class _FakeCuda:
    """dgarray._cuda's calls where host memory stands for GPU 0's."""

    @staticmethod
    def pointer_device(address):
        return 0

    @staticmethod
    def device_synchronize(gpu):
        assert gpu == 0


@cpu_only
def test_cuda_array_interface_import_read_on_the_cpu_backend(monkeypatch, no_leak):
    """The CUDA array interface's import (strides given, None, negative;
    C order) run with the CPU backend's host memory standing for a GPU's:
    what the CUDA backend runs but dgarray._cuda's two calls."""
    import dgarray._creation as creation
    monkeypatch.setattr(creation, "device_kind", lambda: creation.DL_CUDA)
    monkeypatch.setitem(sys.modules, "dgarray._cuda", _FakeCuda)
    x = values("f8", (6, 5))
    for src in (x, x[::2, ::-1], x.T, x[1], x[:0], np.ascontiguousarray(x[1:])):
        cai = dict(src.__array_interface__, version=3, stream=None)  # strides None: C order
        for f in (dg.asarray, dg.from_dlpack):
            d = f(CudaArrayInterface(src, cai))
            assert d.dtype == src.dtype and d.shape == src.shape
            np.testing.assert_array_equal(d.get(), src)
            assert src.size == 0 or not np.shares_memory(np.from_dlpack(d), x)


@cpu_only
def test_chunk_cuda_array_interface_read_on_the_cpu_backend(monkeypatch, ndev, no_leak):
    """A chunk's __cuda_array_interface__ (as the CUDA backend gives it),
    read as NumPy's array interface with the CPU backend's host memory
    standing for a GPU's."""
    import dgarray._chunks as chunks
    monkeypatch.setattr(chunks, "device_kind", lambda: chunks.DL_CPU + 1)
    x = values("i4")
    for name, m in maps_for(SHAPE, ndev):
        a = dg.asarray(x, index_map=m)
        for _, index, c in a.chunks():
            cai = c.__cuda_array_interface__
            assert cai["version"] == 3 and cai["stream"] is None
            assert not hasattr(c, "__array_interface__")
            host = type("Host", (), {"__array_interface__": {
                k: cai[k] for k in ("shape", "typestr", "data", "strides")}})()
            np.testing.assert_array_equal(np.asarray(host), x[index], err_msg=name)
        del c, a


# ---- the CUDA backend: CuPy, PyTorch and JAX read the chunks in place ----------------------

def _gpu_of(dev):
    from dgarray._creation import device_gpu
    return device_gpu(dev)


@cuda_only
def test_releases_keep_the_current_device():
    """Every call into the CUDA backend leaves the thread's current device as
    it found it, so that CuPy or PyTorch code in the same thread keeps its
    device: here arrays on the last GPU made and dropped with the first one
    current, more large blocks of distinct sizes than the backend keeps, so
    that releasing them gives older ones back to the pool (which sets the
    device they belong to)."""
    cupy = pytest.importorskip("cupy")
    last = len(dg.devices()) - 1
    first_gpu, last_gpu = _gpu_of(0), _gpu_of(last)
    if first_gpu == last_gpu:
        pytest.skip("needs two physical GPUs: logical devices of one GPU share its current device")
    was = cupy.cuda.runtime.getDevice()
    try:
        cupy.cuda.runtime.setDevice(first_gpu)
        for k in range(12):
            a = dg.asarray(np.zeros((3 << 18) + 512 * k), index_map={last: slice(None)})
            a._sync()
            del a
            gc.collect()
            assert cupy.cuda.runtime.getDevice() == first_gpu, k
            b = dg.ones(8) + 1  # small work between the releases
            assert float(b.sum()) == 16.0
            assert cupy.cuda.runtime.getDevice() == first_gpu, k
    finally:
        cupy.cuda.runtime.setDevice(was)


@cuda_only
def test_cupy_views_every_chunk(ndev, no_leak):
    cupy = pytest.importorskip("cupy")
    x = values("f4")
    for name, m in maps_for(SHAPE, ndev):
        a = dg.asarray(x, index_map=m)
        views = []
        for dev, index, c in a.chunks():
            cai = c.__cuda_array_interface__
            ptr = cai["data"][0]
            assert cai["version"] == 3 and cai["stream"] is None and not cai["data"][1]
            assert cai["shape"] == x[index].shape and cai["typestr"] == "<f4"
            assert c.__dlpack_device__() == (2, _gpu_of(dev))
            assert not hasattr(c, "__array_interface__")
            with pytest.raises(TypeError, match="not host memory"):
                np.asarray(c)
            # on the chunk's GPU: CuPy copies an array of another GPU than the
            # current one to the current one (cupy.asarray), which is what two
            # H200s showed in session 13 with GPU 0 current and the chunk on GPU 1
            with cupy.cuda.Device(_gpu_of(dev)):
                g = cupy.from_dlpack(c)
                h = cupy.asarray(c)                    # the CUDA array interface
            for v in (h, g):
                assert v.size == 0 or v.data.ptr == ptr, (name, index, v is g)
                assert v.device.id == _gpu_of(dev)
                assert all(n < 2 or s == t for n, s, t in zip(v.shape, v.strides, c.strides))
                np.testing.assert_array_equal(cupy.asnumpy(v), x[index], err_msg=name)
            views.append((index, h))  # writes through the CUDA array interface's view
        if name not in OVERLAPPING:
            for k, (index, g) in enumerate(views):
                with cupy.cuda.Device(g.device.id):
                    g[...] = 100 + k                   # CuPy writes the chunk's memory
                    cupy.cuda.get_current_stream().synchronize()
            want = np.empty_like(x)
            for k, (index, _) in enumerate(views):
                want[index] = 100 + k
            np.testing.assert_array_equal(a.get(), want, err_msg=name)
        del views, g, h, c, a


@cuda_only
def test_cupy_after_pending_work_and_copy_on_write(ndev, no_leak):
    cupy = pytest.importorskip("cupy")
    x = values("f8", (64, 33))
    m = {d: slice(d * 64 // ndev, (d + 1) * 64 // ndev) for d in range(ndev)}
    c = dg.asarray(x, index_map=m)
    c2 = (c * 2 + 1) ** 2                              # queued on the GPUs
    for _, index, ch in c2.chunks():
        np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(ch)),
                                      (2 * x[index] + 1) ** 2)
    d = c.reshard({0: [slice(0, 32), slice(32, 64)]})
    for _, index, ch in d.chunks():
        g = cupy.from_dlpack(ch)
        with cupy.cuda.Device(g.device.id):
            g[...] = -1
            cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(d.get(), -np.ones_like(x))
    np.testing.assert_array_equal(c.get(), x)
    del g, ch


@cuda_only
def test_torch_views_every_chunk(ndev, no_leak):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = values("f4")
    for name, m in maps_for(SHAPE, ndev):
        a = dg.asarray(x, index_map=m)
        for dev, index, c in a.chunks():
            t = torch.from_dlpack(c)
            assert t.device.type == "cuda" and t.device.index == _gpu_of(dev)
            assert t.numel() == 0 or t.data_ptr() == c.__cuda_array_interface__["data"][0]
            np.testing.assert_array_equal(t.cpu().numpy(), x[index], err_msg=name)
        del t, c, a


@cuda_only
def test_jax_reads_every_chunk(no_leak):
    # JAX takes 75% of a GPU's memory at its start unless told not to: the
    # rest of the suite needs it
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("jax without a GPU")
    x = values("f4")
    a = dg.asarray(x)
    for _, index, c in a.chunks():
        j = jax.numpy.from_dlpack(c)
        np.testing.assert_array_equal(np.asarray(j), x[index])
    del c, a, j


def _host_round_trip(*args, **kwargs):
    raise AssertionError("a host round trip")


@cuda_only
def test_asarray_of_cupy_without_the_host(no_leak):
    cupy = pytest.importorskip("cupy")
    x = values("f8", (6, 5))
    srcs = lambda g: (g, g[::2, ::-1], g.T, g[1], CudaArrayInterface(g),  # noqa: E731
                      CudaArrayInterface(g[::-2, 1:]))
    wants = (x, x[::2, ::-1], x.T, x[1], x, x[::-2, 1:])
    from dgarray._creation import device_gpus
    for gpu in sorted(set(device_gpus())):
        with cupy.cuda.Device(gpu):
            g = cupy.asarray(x)
            with pytest.MonkeyPatch.context() as mp:
                # the host paths of asarray / from_dlpack fail: what passes is
                # copied device to device
                mp.setattr(dg._core, "_from_host", _host_round_trip)
                mp.setattr(np, "from_dlpack", _host_round_trip)
                got = [(dg.asarray(src), dg.array(src), dg.from_dlpack(src))
                       for src in srcs(g)]
        for want, ds in zip(wants, got):
            for d in ds:
                assert isinstance(d, dg.DistributedArray)
                assert _gpu_of(d._layout()[0][0]) == gpu
                np.testing.assert_array_equal(d.get(), want)
        del g, got, ds, d


@cuda_only
def test_cuda_array_interface_refusals():
    cupy = pytest.importorskip("cupy")
    g = cupy.arange(4, dtype="f4")
    cai = dict(g.__cuda_array_interface__)
    with pytest.raises(BufferError, match="mask"):
        dg.asarray(CudaArrayInterface(g, {**cai, "mask": CudaArrayInterface(g)}))
    with pytest.raises(BufferError, match="typestr"):
        dg.asarray(CudaArrayInterface(g, {**cai, "typestr": ">f4"}))
    host = np.arange(4, dtype="f4")
    with pytest.raises(BufferError, match="host"):
        dg.asarray(CudaArrayInterface(host, {**cai, "data": (host.ctypes.data, False)}))
