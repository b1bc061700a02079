"""DLPack: DistributedArray.__dlpack__ / __dlpack_device__ lend a chunk holding
the whole array without a copy; dgarray.from_dlpack and asarray copy another
library's array from a device of dgarray's backend to that device (NumPy's
arrays are such a producer on the CPU backend, whose devices are host
memory); tensors elsewhere are refused with BufferError."""
import sys

import numpy as np
import pytest

import dgarray as dg

DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
CPU = dg.backend() == "cpu"
pytestmark = pytest.mark.skipif(not CPU, reason="NumPy is a producer on the host: CPU backend")


def values(dtype, shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 7 - 3
    return x.astype(dtype)


class Producer:
    """Another library's array that only DLPack reads: NumPy's tensor behind
    __dlpack__, on the device __dlpack_device__ says."""

    def __init__(self, x, device=None):
        self.x = x
        self.device = device

    def __dlpack__(self, **kwargs):
        return self.x.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device or self.x.__dlpack_device__()


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_reads_a_chunk_in_place(dtype, ndev, no_leak):
    x = values(dtype, (5, 6))
    d = dg.asarray(x, index_map={ndev - 1: slice(None)})
    assert d.__dlpack_device__() == (1, 0)
    h = np.from_dlpack(d)
    np.testing.assert_array_equal(h, x)
    assert h.dtype == x.dtype and h.flags.writeable
    h[1, 2] = x[0, 0]                                  # the same memory
    want = x.copy()
    want[1, 2] = x[0, 0]
    np.testing.assert_array_equal(d.get(), want)
    v = np.from_dlpack(d[1::2, ::-3])                 # a strided view's chunk
    np.testing.assert_array_equal(v, want[1::2, ::-3])
    del h, v, d


def test_copy_on_write_and_pending_work(ndev, no_leak):
    x = values("f8", (8, 3))
    c = dg.asarray(x, index_map={0: slice(None)})
    d = c.reshard({0: [slice(None), slice(0, 4)]})     # may view c's memory
    c2 = c * 2                                         # queued work on the device
    h = np.from_dlpack(c2)
    np.testing.assert_array_equal(h, x * 2)
    g = np.from_dlpack(c)
    g[:] = -1                                          # reaches c only
    np.testing.assert_array_equal(c.get(), -np.ones_like(x))
    np.testing.assert_array_equal(d.get(), x)
    del g, h


def test_capsules_and_refcounts(no_leak):
    d = dg.asarray(values("i4", (4,)), index_map={0: slice(None)})
    n = sys.getrefcount(d)
    cap = d.__dlpack__()
    assert "dltensor" in repr(cap) and "versioned" not in repr(cap)
    assert sys.getrefcount(d) == n + 1
    del cap                                            # never consumed: released
    assert sys.getrefcount(d) == n
    cap = d.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    del cap
    assert sys.getrefcount(d) == n
    h = np.from_dlpack(d)
    assert sys.getrefcount(d) == n + 1
    del h
    assert sys.getrefcount(d) == n
    assert dg.from_dlpack(d) is d
    e = dg.from_dlpack(d, copy=True)
    assert e is not d and not np.shares_memory(np.from_dlpack(e), np.from_dlpack(d))


def test_read_only_needs_dlpack_1(no_leak):
    d = dg.asarray(values("f4", (4, 4)), index_map={0: slice(None)})
    diag = d.diagonal()                                # read-only, as NumPy's
    with pytest.raises(BufferError, match="readonly"):
        diag.__dlpack__()
    h = np.from_dlpack(diag)
    assert not h.flags.writeable
    np.testing.assert_array_equal(h, np.diagonal(values("f4", (4, 4))))
    del h


def test_what_is_refused(no_leak):
    d = dg.asarray(values("f8", (8,)), index_map={0: [slice(0, 4), slice(4, 8)]})
    with pytest.raises(BufferError, match="one chunk"):
        np.from_dlpack(d)
    one = dg.asarray(values("f8", (3,)), index_map={0: slice(None)})
    with pytest.raises(BufferError, match="stream"):
        one.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        one.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="without a copy"):
        one.__dlpack__(dl_device=(2, 0), copy=False)
    with pytest.raises(BufferError, match="device type 2 id 0"):
        dg.from_dlpack(Producer(np.ones(3), device=(2, 0)))
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        dg.from_dlpack(np.ones(3), copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        dg.from_dlpack([1.0, 2.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_dlpack_copies_to_a_device(dtype, no_leak):
    x = values(dtype, (6, 5))
    for src in (x, x[::2, ::-1], x.T, x[1], np.asarray(x[0, 0])):
        d = dg.from_dlpack(src)
        assert isinstance(d, dg.DistributedArray)
        np.testing.assert_array_equal(d.get(), src)
        assert d.dtype == src.dtype and d.shape == src.shape
        h = np.from_dlpack(d)
        assert not np.shares_memory(h, x)              # a copy, in dgarray's memory
        del h, d


def test_asarray_of_other_libraries(ndev, no_leak):
    x = values("f4", (6, 4))
    p = Producer(x)
    d = dg.asarray(p)
    np.testing.assert_array_equal(d.get(), x)
    m = {k: slice(k * 6 // ndev, (k + 1) * 6 // ndev) for k in range(ndev)}
    e = dg.asarray(p, dtype="f8", index_map=m)
    assert e.dtype == np.float64 and e.index_map == dg.asarray(x, index_map=m).index_map
    np.testing.assert_array_equal(e.get(), x)
    f = dg.array(p)
    np.testing.assert_array_equal(f.get(), x)
    g = dg.from_dlpack(p, device=dg.DeviceSet(ndev - 1))
    assert g.device == dg.DeviceSet(ndev - 1)
    np.testing.assert_array_equal(g.get(), x)
    with pytest.raises(BufferError):
        dg.asarray(Producer(x, device=(2, 1)))
