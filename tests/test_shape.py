"""Shape, joining and sorting functions compared with NumPy on 1 and 4
devices and on every layout of _maps: which of them are views (nothing
moves, writes reach the base), results and dtypes, NumPy's errors, and the
NumPy functions reaching them through __array_function__."""

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for


def sample(shape, dtype=np.int64, seed=0):
    x = np.random.default_rng(seed).integers(-9, 10, shape)
    return x.astype(dtype)


def moved():
    dg._core._sync_all()
    b, w, _, _ = dg._core._move_stats(True)
    return b + w


def eq(d, x, msg=""):
    assert isinstance(d, dg.DistributedArray), msg
    got = d.get()
    assert got.shape == x.shape and got.dtype == x.dtype, f"{msg}: {got.dtype} {x.dtype}"
    np.testing.assert_array_equal(got, x, err_msg=msg)


# ---- reshapes ------------------------------------------------------------------------------

RESHAPES = [((12, 6), [(72,), (6, 12), (3, 4, 6), (12, 2, 3), (-1, 9), (2, -1, 2), (1, 72, 1),
                       (72, 1)]),
            ((4, 3, 2), [(24,), (4, 6), (12, 2), (2, 2, 3, 2)]),
            ((10,), [(2, 5), (5, 2), (10, 1), (1, 1, 10)])]


@pytest.mark.parametrize("shape, targets", RESHAPES, ids=str)
def test_reshape_every_layout(shape, targets, ndev, no_leak):
    x = sample(shape)
    for name, m in maps_for(shape, ndev):
        a = dg.distributed_array(x, m)
        for t in targets:
            eq(a.reshape(t), x.reshape(t), f"{name} {t}")
            eq(dg.reshape(a, t, order="F"), np.reshape(x, t, order="F"), f"{name} F {t}")
        eq(a.ravel(), x.ravel(), name)
        eq(dg.ravel(a, order="F"), np.ravel(x, order="F"), name)
        eq(a.flatten(), x.flatten(), name)
        eq(a.reshape(*targets[0]), x.reshape(*targets[0]), name)
        eq(a[::-1].reshape(-1), x[::-1].reshape(-1), name)
        eq(a.T.reshape(-1), x.T.reshape(-1), name)


def test_reshape_views_where_the_layout_allows(ndev):
    x = sample((16, 6))
    a = dg.distributed_array(x, {d: slice(16 * d // ndev, 16 * (d + 1) // ndev)
                                 for d in range(ndev)})
    moved()
    r = a.reshape(8, 2, 6)
    f = a.ravel()
    back = f.reshape(16, 6)
    assert moved() == 0
    f[3] = 100
    r[7, 1, 5] = -100
    y = x.copy()
    y.reshape(-1)[3] = 100
    y[15, 5] = -100
    eq(a, y)
    eq(back, y)
    # a copy that cannot be a view, asked for one
    with pytest.raises(ValueError, match="avoid creating a copy"):
        dg.reshape(a.T, (-1,), copy=False)
    c = a.flatten()
    c[0] = 55
    assert int(a[0, 0]) == y[0, 0]


@pytest.mark.parametrize("shape, bad", [((2, 3), (4,)), ((2, 3), (-1, 4)), ((2, 3), (-1, -1)),
                                        ((6,), (4, -1)), ((0, 3), (-1, 0))])
def test_reshape_errors(shape, bad):
    x = np.zeros(shape)
    with pytest.raises(ValueError) as want:
        x.reshape(bad)
    with pytest.raises(ValueError) as got:
        dg.asarray(x).reshape(bad)
    assert str(got.value) == str(want.value)


# ---- axes --------------------------------------------------------------------------------------

def test_axes_functions_are_views(ndev, no_leak):
    x = sample((5, 4, 3))
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        moved()
        views = [(a.T, x.T), (dg.transpose(a, (1, 0, 2)), np.transpose(x, (1, 0, 2))),
                 (a.transpose(2, 0, 1), x.transpose(2, 0, 1)),
                 (np.swapaxes(a, 0, 2), np.swapaxes(x, 0, 2)),
                 (a.swapaxes(-1, 1), x.swapaxes(-1, 1)),
                 (dg.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1)),
                 (dg.moveaxis(a, [0, 1], [2, 0]), np.moveaxis(x, [0, 1], [2, 0])),
                 (dg.rollaxis(a, 2), np.rollaxis(x, 2)),
                 (dg.expand_dims(a, 1), np.expand_dims(x, 1)),
                 (dg.expand_dims(a, (0, -1)), np.expand_dims(x, (0, -1))),
                 (dg.squeeze(dg.expand_dims(a, (0, 2))), x),
                 (dg.expand_dims(a, 3).squeeze(axis=3), x),
                 (dg.flip(a), np.flip(x)), (dg.flip(a, 1), np.flip(x, 1)),
                 (dg.flip(a, (0, 2)), np.flip(x, (0, 2))), (dg.flipud(a), np.flipud(x)),
                 (dg.fliplr(a), np.fliplr(x)),
                 (dg.matrix_transpose(a), np.matrix_transpose(x)),
                 (dg.broadcast_to(a[:, :1], (5, 4, 3)), np.broadcast_to(x[:, :1], (5, 4, 3))),
                 (dg.broadcast_to(a[0], (2, 4, 3)), np.broadcast_to(x[0], (2, 4, 3)))]
        assert moved() == 0, name
        for i, (d, want) in enumerate(views):
            eq(d, want, f"{name} {i}")
        # the transposes are views: writes reach the base
        y, b = x.copy(), dg.distributed_array(x, m)
        t = b.T
        t[1, 2, 3] = 77
        y.T[1, 2, 3] = 77
        dg.flip(b, 0)[0] = -1
        np.flip(y, 0)[0] = -1
        eq(b, y, name)


def test_axes_errors():
    a = dg.asarray(np.zeros((2, 3)))
    for f, args in [(np.transpose, ((0, 0),)), (np.transpose, ((0,),)), (np.swapaxes, (0, 2)),
                    (np.moveaxis, (0, 5)), (np.expand_dims, (3,)), (np.squeeze, (0,)),
                    (np.broadcast_to, ((3, 3),)), (np.broadcast_to, ((2, -3),))]:
        with pytest.raises(Exception) as want:
            f(np.zeros((2, 3)), *args)
        with pytest.raises(type(want.value)):
            f(a, *args)


def test_atleast_and_astype(ndev):
    x = sample((3, 2)).astype(np.float32)
    a = dg.asarray(x)
    eq(dg.atleast_1d(dg.asarray(np.float64(2))), np.atleast_1d(np.float64(2)))
    eq(dg.atleast_2d(a[0]), np.atleast_2d(x[0]))
    eq(dg.atleast_3d(a), np.atleast_3d(x))
    eq(dg.astype(a, np.int16), x.astype(np.int16))
    eq(a.astype(np.complex64), x.astype(np.complex64))
    assert np.ndim(a) == 2 and np.shape(a) == (3, 2) and np.size(a) == 6


# ---- joining and splitting ----------------------------------------------------------------

def test_concatenate_and_stack(ndev, no_leak):
    x = sample((6, 4))
    y = sample((3, 4), np.float32, seed=1)
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        b = dg.distributed_array(y, {ndev - 1: slice(None)})
        eq(dg.concatenate([a, b]), np.concatenate([x, y]), name)
        eq(dg.concatenate([a, y, a[::-1]], axis=0), np.concatenate([x, y, x[::-1]]), name)
        eq(dg.concatenate([a, a[:, :1]], axis=1), np.concatenate([x, x[:, :1]], axis=1), name)
        eq(dg.concatenate([a, b], axis=None), np.concatenate([x, y], axis=None), name)
        eq(np.concatenate([a, x], dtype=np.float32), np.concatenate([x, x], dtype=np.float32))
        eq(dg.stack([a, a * 2]), np.stack([x, x * 2]), name)
        eq(dg.stack([a, x], axis=-1), np.stack([x, x], axis=-1), name)
        eq(np.hstack([a, a]), np.hstack([x, x]), name)
        eq(dg.vstack([a, b]), np.vstack([x, y]), name)
        eq(dg.vstack([a[0], x[1]]), np.vstack([x[0], x[1]]), name)
        eq(dg.hstack([a[0], a[1]]), np.hstack([x[0], x[1]]), name)
        eq(dg.dstack([a, a]), np.dstack([x, x]), name)
        eq(dg.column_stack([a[:, 0], a]), np.column_stack([x[:, 0], x]), name)
        out = dg.zeros((12, 4), np.int64)
        r = dg.concatenate([a, a], out=out)
        assert r is out
        eq(out, np.concatenate([x, x]))


def test_concatenate_errors():
    a = dg.asarray(np.zeros((2, 3)))
    cases = [([a, np.zeros((2, 2))], {}), ([a, np.zeros(3)], {}), ([], {}),
             ([dg.asarray(np.float64(1))], {}), ([a, a], {"axis": 2}),
             ([a, np.zeros((2, 3))], {"dtype": np.int64, "casting": "safe"})]
    for arrays, kw in cases:
        with pytest.raises(Exception) as want:
            np.concatenate([np.asarray(v.get() if isinstance(v, dg.DistributedArray) else v)
                            for v in arrays], **kw)
        with pytest.raises(type(want.value)) as got:
            dg.concatenate(arrays, **kw)
        if isinstance(want.value, ValueError):
            assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="same shape"):
        dg.stack([a, a[:1]])


def test_split(ndev):
    x = sample((9, 6))
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for args in [(3,), ([2, 5],), ([4, 4, 20],), (2, 1), ([1, 5], 1)]:
            for f, nf in [(dg.array_split, np.array_split)] + (
                    [(dg.split, np.split)] if args[0] != 2 else []):
                got, want = f(a, *args), nf(x, *args)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    eq(g, w, f"{name} {args}")
        for g, w in zip(dg.hsplit(a, 3), np.hsplit(x, 3)):
            eq(g, w)
        for g, w in zip(dg.vsplit(a, [1]), np.vsplit(x, [1])):
            eq(g, w)
        moved()
        parts = dg.split(a, 3)
        assert moved() == 0
        parts[1][0, 0] = 500
        assert int(a[3, 0]) == 500
    with pytest.raises(ValueError, match="equal division"):
        dg.split(dg.asarray(x), 4)


# ---- elementwise compositions ----------------------------------------------------------------

def test_clip_roll_diff(ndev, no_leak):
    x = sample((8, 5)).astype(np.float64)
    x[2, 3] = np.nan
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        eq(dg.clip(a, -3, 4), np.clip(x, -3, 4), name)
        eq(a.clip(max=2), x.clip(max=2), name)
        eq(np.clip(a, None, 1.5), np.clip(x, None, 1.5), name)
        xi = np.nan_to_num(x).astype(np.int8)
        eq(dg.clip(dg.asarray(xi), 0, 3), np.clip(xi, 0, 3), name)
        eq(dg.clip(a, a[0], 3), np.clip(x, x[0], 3), name)
        for shift, axis in [(2, None), (-3, None), (1, 0), (7, 1), ((1, 2), (0, 1)), (3, (0, 0))]:
            eq(dg.roll(a, shift, axis), np.roll(x, shift, axis), f"{name} roll {shift} {axis}")
        for n, axis in [(1, -1), (2, 0), (1, 0), (0, 1)]:
            eq(dg.diff(a, n, axis), np.diff(x, n, axis), f"{name} diff {n} {axis}")
        eq(dg.diff(a, prepend=0, append=a[:, :1]), np.diff(x, prepend=0, append=x[:, :1]))
        eq(dg.diff(a > 0), np.diff(x > 0))


def test_tile_repeat(ndev, no_leak):
    x = sample((3, 4))
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for reps in [2, (2, 1), (1, 3), (2, 2, 2), (1,)]:
            eq(dg.tile(a, reps), np.tile(x, reps), f"{name} {reps}")
        eq(dg.tile(a[0], 3), np.tile(x[0], 3))
        for r, axis in [(2, None), (3, 0), (2, 1), ([1, 0, 2], 0), ([0, 1, 2, 3], 1)]:
            eq(dg.repeat(a, r, axis), np.repeat(x, r, axis), f"{name} {r} {axis}")
        eq(a.repeat(2), x.repeat(2))
    with pytest.raises(ValueError, match="negative"):
        dg.repeat(dg.asarray(x), -1)


# ---- sorting -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.int8, np.float32, np.float16,
                                   np.float64, np.bool_, np.complex64])
def test_sort_argsort(dtype, ndev, no_leak):
    rng = np.random.default_rng(2)
    x = rng.integers(-5, 6, (7, 9)).astype(dtype)
    if np.dtype(dtype).kind in "fc":
        x = rng.integers(-5, 6, (7, 9)).astype(dtype) * dtype(1.5)
        x[1, 2] = np.nan
        x[3, 0] = -0.0
        x[4, 4] = np.inf
        x[5, 5] = -np.inf
        if np.dtype(dtype).kind == "c":
            x[2, 2] = complex(1, np.nan)
            x[2, 3] = complex(np.nan, 1)
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for axis in (-1, 0, None):
            eq(dg.sort(a, axis=axis), np.sort(x, axis=axis, kind="stable"), f"{name} {axis}")
            eq(np.argsort(a, axis=axis), np.argsort(x, axis=axis, kind="stable"),
               f"{name} {axis}")
        b, y = dg.distributed_array(x, m), x.copy()
        b.sort(axis=0)
        y.sort(axis=0, kind="stable")
        eq(b, y, name)
        v = dg.distributed_array(x, m)[::-1, 1:]
        eq(dg.sort(v), np.sort(x[::-1, 1:], kind="stable"), name)
    with pytest.raises(np.exceptions.AxisError):
        dg.sort(dg.asarray(x), axis=2)


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.bool_])
def test_unique(dtype, ndev, no_leak):
    rng = np.random.default_rng(4)
    x = rng.integers(-4, 5, (6, 5)).astype(dtype)
    if dtype == np.float64:
        x[0, 0] = x[2, 2] = np.nan
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        eq(dg.unique(a), np.unique(x), name)
        got = dg.unique(a, return_index=True, return_inverse=True, return_counts=True)
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            eq(g, w, name)
        eq(np.unique(a[0]), np.unique(x[0]))
    e = dg.unique(dg.asarray(np.zeros(0)), return_counts=True)
    assert e[0].shape == (0,) and e[1].shape == (0,)


def test_functions_reach_dgarray_through_numpy(ndev):
    x = sample((4, 6))
    a = dg.asarray(x)
    for f, args in [(np.reshape, ((6, 4),)), (np.ravel, ()), (np.transpose, ()),
                    (np.squeeze, ()), (np.flip, (0,)), (np.roll, (1,)), (np.diff, ()),
                    (np.tile, (2,)), (np.repeat, (2,)), (np.sort, ()), (np.argsort, ()),
                    (np.unique, ()), (np.clip, (0, 3)), (np.take, ([1, 2],)),
                    (np.nonzero, ()), (np.argwhere, ()), (np.flatnonzero, ())]:
        got, want = f(a, *args), f(x, *args)
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                eq(g, w, f.__name__)
        else:
            eq(got, want, f.__name__)
    eq(np.concatenate([a, a]), np.concatenate([x, x]))
    eq(np.where(a > 0, a, 0), np.where(x > 0, x, 0))
    eq(np.compress([1, 0, 1, 1], a, axis=0), np.compress([1, 0, 1, 1], x, axis=0))


def test_clip_bounds_like_numpy():
    for x in (np.array([1, 2, 3, -4], np.int8), np.array([1, 2, 3, 250], np.uint8),
              np.array([0.5, np.nan, -3.0])):
        a = dg.asarray(x)
        for lo, hi in [(0, 300), (-1000, 2), (0, 2.5), (0, 2 ** 70), (np.int64(0), 300),
                       (None, 1), (-1, None)]:
            eq(dg.clip(a, lo, hi), np.clip(x, lo, hi), f"{x.dtype} {lo} {hi}")
    o = dg.zeros(4)
    r = dg.clip(dg.asarray(np.array([1, 2, 3, -4], np.int8)), 0, 2, out=o)
    assert r is o
    eq(o, np.clip(np.array([1, 2, 3, -4], np.int8), 0, 2).astype(np.float64))


def test_random_reshapes_are_views_exactly_when_they_say(ndev):
    """Random shapes and layouts (reversed views too): the values are NumPy's,
    and a reshape that says it is a view writes through to its base."""
    rng = np.random.default_rng(11)

    def factor(size):
        out = []
        while len(out) < 3 and size > 1:
            d = int(rng.integers(1, size + 1))
            if size % d == 0:
                out.append(d)
                size //= d
        return tuple(out) + (size,)
    views = 0
    for _ in range(80):
        size = int(rng.choice([12, 24, 36, 60]))
        shape = factor(size)
        x = np.arange(size).reshape(shape)
        maps = maps_for(shape, ndev)
        name, m = maps[rng.integers(0, len(maps))]
        a = dg.distributed_array(x, m)
        rev = bool(rng.integers(0, 2))
        src = a[::-1] if rev else a
        t = factor(size)
        r, is_view = dg._core._reshape(src, t)
        eq(r, (x[::-1] if rev else x).reshape(t), f"{shape} {name} {t}")
        if is_view:
            views += 1
            r[...] = -1 - np.arange(size).reshape(t)
            y = x.copy()
            (y[::-1] if rev else y)[...] = (-1 - np.arange(size)).reshape(shape)
            eq(a, y, f"write through {shape} {name} {t}")
    assert views > 10
