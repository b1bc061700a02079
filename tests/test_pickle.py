"""Pickling, copy.copy and copy.deepcopy of DistributedArrays, as NumPy's
arrays do them: every protocol from 2 to 5 (5 with out-of-band buffers),
every dtype, every layout of _maps and every mode, 0-d and empty arrays, and
unpickling in a process with fewer devices (a default layout there)."""
import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for, on_devices
from _values import sample

DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
MODES = ["replica", "sum", "prod", "max", "min"]


def same(a, b, name=""):
    """b is a's twin: shape, dtype, mode, index map and values."""
    assert type(b) is dg.DistributedArray, name
    assert (b.shape, b.dtype, b.mode) == (a.shape, a.dtype, a.mode), name
    assert b.index_map == a.index_map, name
    np.testing.assert_array_equal(b.get(), a.get(), err_msg=name)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_protocol_dtype_and_layout(protocol, dtype, ndev, no_leak):
    x = sample((9, 4), dtype)
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        b = pickle.loads(pickle.dumps(a, protocol=protocol))
        same(a, b, name)
        np.testing.assert_array_equal(b.get(), x, err_msg=name)
        del a, b


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (0, 5, 2), (1,), (5, 1, 3)], ids=str)
@pytest.mark.parametrize("protocol", [2, 5])
def test_zero_d_and_empty(shape, protocol, ndev, no_leak):
    x = sample(shape, "f4")
    for name, m in maps_for(shape, ndev):
        a = dg.distributed_array(x, m)
        b = pickle.loads(pickle.dumps(a, protocol=protocol))
        same(a, b, name)
        assert b.shape == x.shape
        del a, b


@pytest.mark.parametrize("mode", MODES)
def test_modes_are_kept(mode, ndev, no_leak):
    """Each chunk keeps its own values (partials of an op mode differ from
    chunk to chunk), so the values of the mode come back the same."""
    x = sample((6, 5), "f8")
    replicated = {d: slice(None) for d in range(ndev)}
    overlap = {0: slice(0, 4), ndev - 1: [slice(2, None)]} if ndev > 1 else \
        {0: [slice(0, 4), slice(2, None)]}
    for m in (replicated, overlap):
        a = dg.distributed_array(x, m, mode=mode)
        for protocol in (2, 5):
            b = pickle.loads(pickle.dumps(a, protocol=protocol))
            same(a, b, mode)
            # the values each mode combines to, against NumPy's
            np.testing.assert_array_equal(b.change_mode("replica").get(),
                                          a.change_mode("replica").get())
        del a, b


def test_reduction_partials(ndev, no_leak):
    """A sum left in SUM mode (partials on several devices) pickles as such."""
    x = sample((8, 6), "f8")
    a = dg.distributed_array(x, {d: slice(None, None) if ndev == 1 else
                                 (slice(None), slice(d, None, ndev)) for d in range(ndev)})
    s = a.sum(axis=1)
    b = pickle.loads(pickle.dumps(s, protocol=5))
    same(s, b)
    np.testing.assert_allclose(b.get(), x.sum(axis=1))


def test_out_of_band_buffers(ndev, no_leak):
    """Protocol 5 with a buffer_callback: one buffer per chunk, holding that
    chunk's values (a replicated chunk once), and none of the values in the
    pickle's own bytes."""
    x = sample((64, 32), "f8")
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        bufs = []
        s = pickle.dumps(a, protocol=5, buffer_callback=bufs.append)
        assert len(s) < 2000 + 300 * len(a.index_map), name
        views = [b.raw() for b in bufs]
        # each buffer is the host array its chunk was copied into, not a copy
        # of it (the one copy: device to host)
        assert all(v.contiguous and isinstance(v.obj, np.ndarray) and v.obj.flags.owndata
                   for v in views)
        boxes = {box for _, box in dg._core._chunk_layout(a)}
        assert len(bufs) == len(boxes), name
        nbytes = sum(v.nbytes for v in views)
        sizes = sorted(int(np.prod([len(range(*r)) for r in box])) * 8 for box in boxes)
        assert sorted(v.nbytes for v in views) == sizes, name
        assert nbytes >= x.nbytes
        b = pickle.loads(s, buffers=bufs)
        same(a, b, name)
        # the array does not keep the buffers: changing them changes nothing
        for v in views:
            np.frombuffer(v, dtype=np.uint8)[...] = 0
        np.testing.assert_array_equal(b.get(), x, err_msg=name)
        del a, b


def test_out_of_band_needs_buffers():
    """As with NumPy: a pickle made with out-of-band buffers needs them."""
    a = dg.arange(12.0)
    bufs = []
    s = pickle.dumps(a, protocol=5, buffer_callback=bufs.append)
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(s)
    np.testing.assert_array_equal(pickle.loads(s, buffers=bufs).get(), np.arange(12.0))


def test_views_and_pieces(ndev, no_leak):
    """Views (strided, reversed, transposed, broadcast) and arrays made of
    pieces by a reshard pickle as their values and index map."""
    x = sample((12, 10), "i4")
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)}
                             if ndev > 1 else None)
    for v, want in ((a[1::2, ::-3], x[1::2, ::-3]), (a.T, x.T),
                    (dg.broadcast_to(a[0], (4, 10)), np.broadcast_to(x[0], (4, 10)))):
        b = pickle.loads(pickle.dumps(v, protocol=5))
        np.testing.assert_array_equal(b.get(), want)
        assert b.index_map == v.index_map
        b += 1  # a writable array of its own, as NumPy's unpickled broadcast
        np.testing.assert_array_equal(v.get(), want)
    r = a.reshard(on_devices([(d, slice(2 * d, 2 * d + 2)) for d in range(6)], ndev))
    b = pickle.loads(pickle.dumps(r, protocol=5))
    same(r, b)


def test_copy_and_deepcopy(ndev, no_leak):
    """copy.copy and copy.deepcopy copy the values, as for an ndarray; the
    copy keeps layout and mode; deepcopy's memo keeps shared references."""
    x = sample((10, 3), "f4")
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for c in (copy.copy(a), copy.deepcopy(a)):
            same(a, c, name)
            assert c is not a
            c += 1
            np.testing.assert_array_equal(a.get(), x, err_msg=name)
            np.testing.assert_array_equal(c.get(), x + np.float32(1), err_msg=name)
        pair = copy.deepcopy([a, a])
        assert pair[0] is pair[1] and pair[0] is not a
        # NumPy's behaviour for the same calls
        n = x.copy()
        nc = copy.copy(n)
        nc += 1
        np.testing.assert_array_equal(n, x)
        del a, pair
    s = dg.distributed_array(x, {d: slice(None) for d in range(ndev)}, mode="max")
    same(s, copy.deepcopy(s))


_CHILD = r"""
import pickle, sys
import numpy as np
import dgarray as dg
arrays = pickle.load(open(sys.argv[1], "rb"))
out = []
for a in arrays:
    out.append((a.shape, str(a.dtype), a.mode, a.index_map == dg.asarray(a.get()).index_map,
                sorted(a.devices), (a.change_mode("replica").get()).tolist()))
pickle.dump(out, open(sys.argv[2], "wb"))
"""


@pytest.mark.parametrize("child_devices", [1, 2])
def test_fewer_devices(child_devices, tmp_path):
    """Pickled on 4 devices, unpickled in a process with fewer: the values
    and the mode come back, laid out as a new array there."""
    if dg._core._ndevices() < 4:
        pytest.skip("needs 4 devices in this process to pickle from")
    x = sample((8, 6), "f8")
    arrays = [dg.distributed_array(x, {0: slice(0, 3), 3: slice(3, None)}),
              dg.distributed_array(x, {d: (slice(None), slice(d, None, 4)) for d in range(4)}),
              dg.distributed_array(x, {d: slice(None) for d in range(4)}, mode="max"),
              dg.distributed_array(x, {d: slice(2 * d, 2 * d + 3) for d in range(3)} |
                                   {3: slice(6, None)}, mode="sum"),
              dg.asarray(np.float32(2.5)), dg.zeros((0, 4))]
    src, dst = tmp_path / "in.pkl", tmp_path / "out.pkl"
    with open(src, "wb") as f:
        pickle.dump(arrays, f, protocol=5)
    env = dict(os.environ, DGARRAY_CPU_DEVICES=str(child_devices))
    subprocess.run([sys.executable, "-c", _CHILD, str(src), str(dst)], env=env, check=True,
                   timeout=120)
    with open(dst, "rb") as f:
        got = pickle.load(f)
    for a, (shape, dtype, mode, default_layout, devices, values) in zip(arrays, got):
        assert (shape, dtype, mode) == (a.shape, str(a.dtype), a.mode)
        assert default_layout, "laid out as a new array of its shape"
        assert max(devices, default=0) < child_devices
        np.testing.assert_array_equal(np.array(values, dtype=a.dtype).reshape(a.shape),
                                      a.change_mode("replica").get())
