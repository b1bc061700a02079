"""Indexing compared with NumPy on 1 and 4 devices and on every layout of
_maps: basic keys are views (nothing moves, writes reach the base, every op
works on them), assignment broadcasts and casts as NumPy's does, advanced
indexing (masks, integer arrays, take, put, where, nonzero, argwhere,
compress) gathers and scatters across devices; NumPy's errors; no leaks; the
Jacobi stencil over views of one grid, and the bytes its halo exchange moves.
"""
import re
import sys

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

BASIC_KEYS = [
    (), 0, -1, 3, slice(None), slice(2, 9), slice(None, None, 2), slice(None, None, -1),
    slice(9, 1, -3), slice(-2, None, -2), slice(5, 5), slice(8, 2), (Ellipsis, 1),
    (1, slice(None, None, -2)), (slice(1, None, 3), -2), (None, 2), (slice(None), None),
    (Ellipsis, None), (None, Ellipsis, None), (2, 3), (-1, -1), (slice(None, None, -1), 0),
    (slice(3, None), slice(None, 4, 2)), (slice(None), slice(-1, None, -2), None),
]
KEYS_3D = [(1, slice(None), -1), (Ellipsis, slice(None, None, -1)), (slice(None, None, 2), 0),
           (None, 1, None, slice(1, 3), 2), (slice(None), Ellipsis, slice(0, 2)),
           (-1, slice(None, None, -1), slice(None, None, -1))]


def sample(shape, dtype=np.int64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, shape)
    return x.astype(dtype)


def moved():
    """(between, within) bytes moved since the last call."""
    dg._core._sync_all()
    b, w, _, _ = dg._core._move_stats(True)
    return b, w


def layouts(shape, ndev):
    return maps_for(shape, ndev)


# ---- basic indexing: views -------------------------------------------------------------

@pytest.mark.parametrize("shape, keys", [((12, 6), BASIC_KEYS), ((5, 4, 3), KEYS_3D),
                                         ((17,), [0, -1, slice(None, None, -3), slice(3, 11, 2),
                                                  (None,), (Ellipsis,), slice(16, 0, -5)])],
                         ids=["2d", "3d", "1d"])
def test_basic_keys_are_views(shape, keys, ndev, no_leak):
    x = sample(shape)
    for name, m in layouts(shape, ndev):
        a = dg.distributed_array(x, m)
        for key in keys:
            want = x[key]
            moved()
            v = a[key]
            assert moved() == (0, 0), (name, key)
            assert v.shape == want.shape and v.dtype == want.dtype, (name, key)
            np.testing.assert_array_equal(v.get(), want, err_msg=f"{name} {key}")
            # a write through the view reaches the base, and only there
            y, b = x.copy(), dg.distributed_array(x, m)
            vb = b[key]
            vb[...] = -7
            y[key] = -7
            np.testing.assert_array_equal(b.get(), y, err_msg=f"{name} {key}")


def test_views_of_views_and_ops(ndev, no_leak):
    x = sample((12, 6)).astype(np.float64)
    for name, m in layouts(x.shape, ndev):
        a = dg.distributed_array(x, m)
        v = a[1:-1, ::-1][::2, 1:]
        w = x[1:-1, ::-1][::2, 1:]
        np.testing.assert_array_equal(v.get(), w, err_msg=name)
        np.testing.assert_allclose((np.sin(v) * 2 + v).get(), np.sin(w) * 2 + w)
        np.testing.assert_array_equal((v > 0).get(), w > 0)
        np.testing.assert_allclose(v.sum(axis=0).get(), w.sum(axis=0))
        np.testing.assert_allclose(float(v.sum()), w.sum())
        np.testing.assert_array_equal(v.argmax(axis=1).get(), w.argmax(axis=1))
        np.testing.assert_allclose(v.cumsum(axis=1).get(), w.cumsum(axis=1))
        np.testing.assert_allclose(v.cumsum().get(), w.cumsum())
        np.testing.assert_array_equal(v.astype(np.int32).get(), w.astype(np.int32))
        np.testing.assert_array_equal(v.copy().get(), w)
        np.testing.assert_array_equal(v.reshard({0: slice(None)}).get(), w)
        np.testing.assert_array_equal(v.T.get(), w.T)
        np.testing.assert_array_equal(v.change_mode("sum").get(), w)
        np.testing.assert_array_equal((v + a[:5, :5]).get(), w + x[:5, :5])
        # in-place ops through views write the base
        y = x.copy()
        a[::3, 1::2] *= 2
        y[::3, 1::2] *= 2
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
        np.testing.assert_array_equal(v.get(), y[1:-1, ::-1][::2, 1:], err_msg=name)


def test_overlapping_inplace_ops_read_before_writing(ndev):
    x = np.arange(40.0)
    for name, m in layouts(x.shape, ndev):
        a, y = dg.distributed_array(x, m), x.copy()
        a[1:] += a[:-1]
        y[1:] += y[:-1]
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
        a[:-2] = a[2:] * 1
        y[:-2] = y[2:] * 1
        a[3:] = a[:-3]
        y[3:] = y[:-3]
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
        np.negative(a[::-1], out=a)
        np.negative(y[::-1], out=y)
        np.testing.assert_array_equal(a.get(), y, err_msg=name)


def test_views_of_op_modes_and_copy_on_write(ndev):
    x = sample((8, 4))
    m = {d: slice(None) for d in range(ndev)}
    s = dg.distributed_array(x, m, mode="sum")  # x on device 0, zeros on the others
    want = x.copy()
    np.testing.assert_array_equal(s[2:, ::-1].get(), want[2:, ::-1])
    s[0] = 1
    want[0] = 1
    np.testing.assert_array_equal(s.get(), want)
    # copy on write keeps arrays that share memory apart through views
    a = dg.distributed_array(x, None)
    c = a.copy()  # shares a's memory until one of them is written
    v = a[1:3]
    v[...] = 100
    y = x.copy()
    y[1:3] = 100
    np.testing.assert_array_equal(a.get(), y)
    np.testing.assert_array_equal(c.get(), x)
    np.testing.assert_array_equal(v.get(), y[1:3])


def test_iteration_gives_views(ndev):
    x = sample((5, 3))
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})
    rows = list(a)
    assert len(rows) == 5
    for r, want in zip(rows, x):
        np.testing.assert_array_equal(r.get(), want)
    rows[2][1] = 99
    assert int(a[2, 1]) == 99
    assert [int(v) for v in a[:, 0]] == list(x[:, 0])
    with pytest.raises(TypeError, match="0-d"):
        iter(a[0, 0])


def test_zero_d_and_empty_views(ndev):
    x = sample((6, 3))
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})
    e = a[3, 1]
    assert e.shape == () and int(e) == x[3, 1]
    a[3, 1] = 99
    assert int(a[3, 1]) == 99
    z = a[2:2]
    assert z.shape == (0, 3) and z.get().shape == (0, 3)
    assert float(z.sum()) == 0.0
    z[...] = 5  # nothing to write: a keeps its values
    want = x.copy()
    want[3, 1] = 99
    np.testing.assert_array_equal(a.get(), want)
    s = dg.asarray(np.float32(3.5))
    assert s[()].shape == () and float(s[...]) == 3.5
    assert s[None].shape == (1,)


# ---- assignment ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, np.complex64, np.uint8])
def test_assign_scalars_arrays_and_casts(dtype, ndev, no_leak):
    x = sample((10, 4)).astype(dtype)
    values = [3, 2.75, True, np.float64(-1.5), np.array([1, 0, 1, 1]), [[5], [6]],
              np.ones((1, 1, 4), np.int8)]
    keys = [(slice(2, 6),), (slice(None, None, -3), slice(1, None)), (Ellipsis, 2),
            (slice(8, 6, -1),)]
    for name, m in layouts(x.shape, ndev):
        for key in keys:
            for val in values:
                y = x.copy()
                try:
                    y[key] = val
                except (ValueError, TypeError, OverflowError) as e:
                    a = dg.distributed_array(x, m)
                    with pytest.raises(type(e)):
                        a[key] = val
                    continue
                a = dg.distributed_array(x, m)
                a[key] = val
                np.testing.assert_array_equal(a.get(), y, err_msg=f"{name} {key} {val!r}")


def test_assign_distributed_values_any_layout(ndev, no_leak):
    x = sample((12, 6))
    src = sample((6, 6), seed=1).astype(np.float32)
    row = sample((6,), seed=2)
    for dname, dm in layouts(x.shape, ndev):
        for sname, sm in layouts(src.shape, ndev):
            a, y = dg.distributed_array(x, dm), x.copy()
            s = dg.distributed_array(src, sm)
            a[::2] = s
            y[::2] = src
            a[1::2][::-1] = s[:, ::-1]
            y[1::2][::-1] = src[:, ::-1]
            np.testing.assert_array_equal(a.get(), y, err_msg=f"{dname} <- {sname}")
        a, y = dg.distributed_array(x, dm), x.copy()
        a[:, 2:4] = dg.asarray(row[:2])
        y[:, 2:4] = row[:2]
        a[3] = dg.asarray(row)
        y[3] = row
        np.testing.assert_array_equal(a.get(), y, err_msg=dname)


def test_assign_errors():
    a = dg.asarray(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="could not broadcast input array from shape"):
        a[:] = np.ones(4)
    with pytest.raises(ValueError, match="could not broadcast input array from shape"):
        a[1:3] = dg.asarray(np.ones((3, 3)))
    u = dg.asarray(np.zeros(3, np.uint8))
    with pytest.raises(OverflowError):
        u[0] = 300
    with pytest.raises(TypeError):
        a[0, 0] = 1j
    b = dg.broadcast_to(dg.asarray(np.arange(3.0)), (4, 3))
    with pytest.raises(ValueError, match="read-only"):
        b[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        b[1:][0, 0] = 1
    with pytest.raises(ValueError, match="read-only"):
        np.add(b, 1, out=b)
    with pytest.raises(ValueError):
        del a[0]


# ---- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", [5, -5, (0, 3), (1, 2, 3), 1.0, "a", (Ellipsis, Ellipsis),
                                 [[0, 1], [1, 2, 3]], np.array([1.5]), [5], (slice(None), [-4]),
                                 np.zeros(5, bool), (slice(None), np.zeros(2, bool)),
                                 slice(None, None, 0), (None, 9)])
def test_index_errors_match_numpy(key):
    x = np.zeros((4, 3))
    a = dg.asarray(x)
    with pytest.raises(Exception) as want:
        x[key]
    with pytest.raises(type(want.value)) as got:
        a[key]
    assert str(got.value) == str(want.value)


# ---- advanced indexing ------------------------------------------------------------------------

def test_boolean_masks(ndev, no_leak):
    x = sample((12, 5)).astype(np.float32)
    for name, m in layouts(x.shape, ndev):
        a = dg.distributed_array(x, m)
        np.testing.assert_array_equal(a[a > 0].get(), x[x > 0], err_msg=name)
        np.testing.assert_array_equal(a[x < 0].get(), x[x < 0], err_msg=name)
        np.testing.assert_array_equal(a[a > 100].get(), x[x > 100], err_msg=name)
        rows = x[:, 0] > 0
        np.testing.assert_array_equal(a[rows].get(), x[rows], err_msg=name)
        np.testing.assert_array_equal(a[dg.asarray(rows)].get(), x[rows], err_msg=name)
        np.testing.assert_array_equal(a[:, x[0] > 0].get(), x[:, x[0] > 0], err_msg=name)
        np.testing.assert_array_equal(a[1:, ::-1][a[1:, ::-1] > 3].get(),
                                      x[1:, ::-1][x[1:, ::-1] > 3], err_msg=name)
        y = x.copy()
        a[a < 0] = 0
        y[y < 0] = 0
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
        a[rows] = -1.5
        y[rows] = -1.5
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
        k = int((y > 10).sum())
        vals = np.arange(k, dtype=np.float32)
        a[a > 10] = vals
        y[y > 10] = vals
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
        a[dg.asarray(y == 0)] = dg.asarray(np.full(int((y == 0).sum()), 7, np.float32))
        y[y == 0] = 7
        np.testing.assert_array_equal(a.get(), y, err_msg=name)
    z = dg.asarray(np.arange(3.0))
    assert z[True].shape == (1, 3) and z[False].shape == (0, 3)
    np.testing.assert_array_equal(dg.asarray(np.float64(2))[np.True_].get(), [2.0])


INT_KEYS = [[0, 3, 3, -1], np.array([[1, 0], [2, 5]]), ([1, 2], [0, -1]),
            (slice(None), [4, 0, 4]), (slice(None, None, -2), [1, 3]), ([2], slice(1, 4)),
            ([0, 1], slice(None), None), (Ellipsis, [1, 1]), (1, [0, 2]),
            ([[1], [3]], [0, 2, 4]), ([3, 4], 2), ([], slice(None)), (slice(1, None), [[0], [2]]),
            ([1, 3], Ellipsis, [0, 1]), (None, [5, 0], 2)]


def test_integer_arrays(ndev, no_leak):
    x = sample((6, 5))
    for name, m in layouts(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for key in INT_KEYS:
            want = x[key]
            got = a[key]
            assert got.shape == want.shape, (name, key)
            np.testing.assert_array_equal(got.get(), want, err_msg=f"{name} {key}")
        # index arrays on the devices, any layout
        idx = np.array([5, 0, 2, 2, -3, 1, 4, 3, 0])
        for iname, im in layouts(idx.shape, ndev):
            di = dg.distributed_array(idx, im)
            np.testing.assert_array_equal(a[di].get(), x[idx], err_msg=f"{name} {iname}")
            np.testing.assert_array_equal(a[:, di % 5].get(), x[:, idx % 5])


def test_integer_array_assignment(ndev, no_leak):
    x = sample((6, 5))
    keys = [([0, 3, -1],), ([1, 2], [0, -1]), (slice(None), [4, 0]), ([[1], [3]], [0, 2, 4]),
            (slice(None, None, -1), [3, 1]), ([2, 4], slice(1, 3)), (1, [0, 3])]
    for name, m in layouts(x.shape, ndev):
        for key in keys:
            for val in (9, np.arange(100, 100 + np.zeros(x.shape)[key].size).reshape(
                    np.zeros(x.shape)[key].shape)):
                a, y = dg.distributed_array(x, m), x.copy()
                a[key] = val
                y[key] = val
                np.testing.assert_array_equal(a.get(), y, err_msg=f"{name} {key}")
                a[key] = dg.asarray(np.asarray(val) * -1)
                y[key] = np.asarray(val) * -1
                np.testing.assert_array_equal(a.get(), y, err_msg=f"{name} {key}")
    a = dg.asarray(np.zeros(4))
    with pytest.raises(ValueError, match="shape mismatch: value array of shape"):
        a[[0, 1]] = [1, 2, 3]
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        a[dg.asarray(np.array([0, 4]))] = 1
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        a[dg.asarray(np.array([-5]))]


@pytest.mark.parametrize("idx", [[3, 0, 6], [-1, -7, 2], [4, 7], [-8, 1], [2 ** 62, 0],
                                 [-2 ** 63, 0], [2 ** 63 - 1]], ids=str)
def test_take_checks_device_indices_as_numpy(idx, ndev, no_leak):
    """Indices on the devices: in range, negative, past either end, the
    int64 extremes (an unsigned reading of them must not pass the check)."""
    x = sample((7,)).astype(np.float64)
    i = np.array(idx, dtype=np.int64)
    for name, m in layouts(i.shape, ndev):
        di = dg.distributed_array(i, m)
        try:
            want = np.take(x, i)
        except IndexError as e:
            with pytest.raises(IndexError, match=re.escape(str(e))):
                dg.take(dg.asarray(x), di)
            continue
        np.testing.assert_array_equal(dg.take(dg.asarray(x), di).get(), want, err_msg=name)


def test_take_put_where_nonzero(ndev, no_leak):
    x = sample((7, 4)).astype(np.float64)
    idx = np.array([[3, -1], [0, 20]])
    for name, m in layouts(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for axis in (None, 0, 1, -1):
            for mode in ("wrap", "clip"):
                np.testing.assert_array_equal(dg.take(a, idx, axis=axis, mode=mode).get(),
                                              np.take(x, idx, axis=axis, mode=mode))
            np.testing.assert_array_equal(np.take(a, 2, axis=axis).get() if axis is not None
                                          else np.take(a, 2).get(),
                                          np.take(x, 2, axis=axis))
            np.testing.assert_array_equal(a.take([1, 0, 1], axis=axis).get(),
                                          x.take([1, 0, 1], axis=axis))
        with pytest.raises(IndexError, match="index 20 is out of bounds"):
            dg.take(a, idx, axis=0)
        b, y = dg.distributed_array(x, m), x.copy()
        np.put(b, [0, -1, 13], [7, 8, 9])
        np.put(y, [0, -1, 13], [7, 8, 9])
        np.testing.assert_array_equal(b.get(), y, err_msg=name)
        b.put(dg.asarray(np.array([2, 5, 11, 12])), np.array([1.5, 2.5]))
        y.put([2, 5, 11, 12], [1.5, 2.5])
        np.testing.assert_array_equal(b.get(), y, err_msg=name)
        for nz, want in zip(np.nonzero(a > 10), np.nonzero(x > 10)):
            np.testing.assert_array_equal(nz.get(), want)
        np.testing.assert_array_equal(dg.argwhere(a > 10).get(), np.argwhere(x > 10))
        np.testing.assert_array_equal(dg.flatnonzero(a).get(), np.flatnonzero(x))
        np.testing.assert_array_equal(np.where(a > 0, a, -a).get(), np.where(x > 0, x, -x))
        np.testing.assert_array_equal(dg.where(a > 0, 1, 2.5).get(), np.where(x > 0, 1, 2.5))
        np.testing.assert_array_equal(dg.where(x[0] > 0, a, 0).get(), np.where(x[0] > 0, x, 0))
        w = dg.where(a.astype(np.float32) > 0, a.astype(np.float32), 0)
        assert w.dtype == np.float32
        np.testing.assert_array_equal(dg.where(a > 0)[1].get(), np.where(x > 0)[1])
        c = [True, False, True, True]
        np.testing.assert_array_equal(dg.compress(c, a, axis=1).get(),
                                      np.compress(c, x, axis=1))
        np.testing.assert_array_equal(a.compress(c).get(), x.compress(c))
        np.testing.assert_array_equal(dg.compress(dg.asarray(np.array(c[:3])), a, axis=0).get(),
                                      np.compress(c[:3], x, axis=0))
    with pytest.raises(ValueError, match="0d arrays"):
        dg.nonzero(dg.asarray(np.float64(1)))
    with pytest.raises(ValueError, match="either both or neither"):
        dg.where(dg.asarray(np.ones(2)), 1)
    np.testing.assert_array_equal(dg.argwhere(dg.asarray(np.float64(1))).get(),
                                  np.argwhere(np.float64(1)))


def test_take_moves_only_the_rows_asked_for():
    if dg._core._ndevices() < 2:
        pytest.skip("needs 2 devices")
    old = dg.config.peer_read_bytes
    dg.config.peer_read_bytes = 0
    try:
        n = 1000
        x = np.arange(n, dtype=np.float32)
        a = dg.distributed_array(x, {0: slice(0, 500), 1: slice(500, None)})
        idx = np.array([10, 600, 20, 999, 30])
        i = dg.distributed_array(idx, {0: slice(None)})
        moved()
        r = a[i]
        between, _ = moved()
        np.testing.assert_array_equal(r.get(), x[idx])
        # two rows asked of device 1: 8 bytes of row numbers there, 4 of values back
        assert between == 2 * 8 + 2 * 4
    finally:
        dg.config.peer_read_bytes = old


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.complex128, np.bool_])
def test_gathers_of_every_dtype(dtype, ndev):
    x = sample((9, 3), dtype)
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})
    np.testing.assert_array_equal(a[[8, 0, 4]].get(), x[[8, 0, 4]])
    np.testing.assert_array_equal(a[a != a[0, 0]].get(), x[x != x[0, 0]])
    a[[1, 2], [0, 0]] = x[0, :2]
    y = x.copy()
    y[[1, 2], [0, 0]] = x[0, :2]
    np.testing.assert_array_equal(a.get(), y)


def test_large_random_gather_and_mask(ndev):
    """Sizes past the GPU kernels' tiles (4096 elements): dense chunks (one
    pass) and strided views (count, scan, write) compacted, keys routed."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1 << 16).astype(np.float32)
    idx = rng.integers(0, x.size, 1 << 15)
    a = dg.asarray(x)
    np.testing.assert_array_equal(dg.take(a, dg.asarray(idx)).get(), x[idx])
    np.testing.assert_array_equal(a[a > 0].get(), x[x > 0])
    x2 = x.reshape(256, 256)
    v, w = dg.asarray(x2)[::-1, 1::3], x2[::-1, 1::3]
    np.testing.assert_array_equal(v[v > 0.5].get(), w[w > 0.5])
    for got, want in zip(dg.nonzero(v > 1), np.nonzero(w > 1)):
        np.testing.assert_array_equal(got.get(), want)
    b, y = dg.asarray(x), x.copy()
    u = np.unique(idx)
    b[dg.asarray(u)] = dg.asarray(-x[u])
    y[u] = -x[u]
    np.testing.assert_array_equal(b.get(), y)


def test_no_references_leak():
    x = dg.asarray(np.arange(12.0).reshape(3, 4))
    before = sys.getrefcount(x)
    for _ in range(5):
        x[1:, ::-1]
        x[[0, 2]]
        x[x > 3]
        x[0] = 1
        x[[0, 1], [1, 2]] = 5
    assert sys.getrefcount(x) == before


# ---- the Jacobi stencil --------------------------------------------------------------------

def jacobi(grid, iters):
    center = grid[1:-1, 1:-1]
    north, south = grid[:-2, 1:-1], grid[2:, 1:-1]
    west, east = grid[1:-1, :-2], grid[1:-1, 2:]
    for _ in range(iters):
        center[:] = 0.2 * (center + north + east + west + south)
    return grid


@pytest.mark.parametrize("peer", [0, 1 << 20], ids=["moved", "peer_read"])
def test_jacobi_stencil_halo_moves_only_boundary_rows(peer, ndev):
    old = dg.config.peer_read_bytes
    dg.config.peer_read_bytes = peer
    try:
        n = 40
        x = np.random.default_rng(3).standard_normal((n, n)).astype(np.float32)
        rows = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
        g = dg.distributed_array(x, rows)
        jacobi(g, 1)  # warm up
        y = jacobi(x.copy(), 1)
        moved()
        dg._core._move_stats(True)
        jacobi(g, 3)
        dg._core._sync_all()
        between, within, peer_read, _ = dg._core._move_stats(True)
        jacobi(y, 3)
        np.testing.assert_allclose(g.get(), y, rtol=1e-6)
        halo = 3 * 2 * (ndev - 1) * (n - 2) * 4  # per iteration: a row down, a row up
        if peer:
            assert (between, peer_read) == (0, halo)
        else:
            assert (between, peer_read) == (halo, 0)
    finally:
        dg.config.peer_read_bytes = old


# ---- random keys -----------------------------------------------------------------------------

def random_key(rng, shape):
    """A random key for an array of `shape`: ints, slices of any step, None,
    an ellipsis, integer arrays (some on the devices) and boolean masks."""
    key, ax, ell = [], 0, False
    while ax < len(shape):
        n = shape[ax]
        kind = rng.integers(0, 8)
        if kind == 0 and n:
            key.append(int(rng.integers(-n, n)))
        elif kind == 1:
            step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
            lo, hi = sorted(rng.integers(-n - 1, n + 2, 2))
            key.append(slice(int(lo), int(hi), step) if step > 0 else slice(int(hi), int(lo),
                                                                              step))
        elif kind == 2:
            key.append(None)
            continue
        elif kind == 3 and not ell:
            key.append(Ellipsis)
            ell = True
            ax = len(shape) - int(rng.integers(0, len(shape) - ax + 1))
            continue
        elif kind == 4 and n:
            idx = rng.integers(-n, n, int(rng.integers(0, 4)))
            key.append(dg.asarray(idx) if rng.integers(0, 2) else idx)
        elif kind == 5:
            m = rng.integers(0, 2, n).astype(bool)
            key.append(dg.asarray(m) if rng.integers(0, 2) else m)
        else:
            key.append(slice(None))
        ax += 1
    return tuple(key)


def host_key(key):
    return tuple(k.get() if isinstance(k, dg.DistributedArray) else k for k in key)


@pytest.mark.parametrize("seed", range(4))
def test_random_keys_get_and_set_like_numpy(seed, ndev):
    rng = np.random.default_rng(seed)
    checked = 0
    for trial in range(60):
        shape = tuple(int(n) for n in rng.integers(1, 6, rng.integers(1, 4)))
        x = sample(shape)
        maps = layouts(shape, ndev)
        name, m = maps[rng.integers(0, len(maps))]
        key = random_key(rng, shape)
        hk = host_key(key)
        try:
            want = x[hk]
        except IndexError:
            with pytest.raises(IndexError):
                dg.distributed_array(x, m)[key]
            continue
        a = dg.distributed_array(x, m)
        got = a[key]
        assert got.shape == want.shape, (name, key)
        np.testing.assert_array_equal(got.get(), want, err_msg=f"{name} {hk}")
        # assignment of distinct values (repeated indices in a key set one of them)
        val = np.arange(1000, 1000 + want.size).reshape(want.shape)
        y = x.copy()
        y[hk] = val
        probe = np.zeros(x.shape, bool)
        probe[hk] = True
        if probe.sum() != want.size:
            continue  # an element named twice: NumPy keeps the last value
        a[key] = dg.asarray(val) if trial % 2 else val
        np.testing.assert_array_equal(a.get(), y, err_msg=f"{name} {hk}")
        checked += 1
    assert checked > 20
