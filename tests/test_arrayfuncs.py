"""The rest of NumPy's main namespace composed on the devices
(dgarray/_arrayfuncs.py, _mathfuncs.py, _setops.py) against NumPy: every
dtype and layout, empty and 0-d arrays, NumPy's errors, no host fallback."""
import warnings

import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, NUMERIC, layouts, like_numpy, no_fallback, same,  # noqa: F401
                          same_error, tol, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_choose_select_piecewise(dtype, ndev, no_leak):
    x = values(dtype, (6, 4))
    idx = np.random.default_rng(1).integers(0, 3, (6, 4))
    choices = [values(dtype, (6, 4), s) for s in range(3)]
    for name, d in layouts(x, ndev, ("default", "strided", "cols")):
        di = dg.asarray(idx)
        dc = [dg.asarray(c) for c in choices[:2]] + [d]
        hc = choices[:2] + [x]
        like_numpy(lambda: np.choose(di, dc), lambda: np.choose(idx, hc), name)
        like_numpy(lambda: di.choose(dc), lambda: idx.choose(hc), name)
        for mode in ("wrap", "clip"):
            like_numpy(lambda: np.choose(di + 1, dc, mode=mode),
                       lambda: np.choose(idx + 1, hc, mode=mode), name)
        like_numpy(lambda: np.choose(di[0], dg.asarray(np.stack(hc))[:, 0]),
                   lambda: np.choose(idx[0], np.stack(hc)[:, 0]), name)
        conds = [idx == 0, dg.asarray(idx == 1)]
        hconds = [idx == 0, idx == 1]
        like_numpy(lambda: np.select(conds, dc[:2], default=3),
                   lambda: np.select(hconds, hc[:2], default=3), name)
        like_numpy(lambda: np.select([dg.asarray(idx > 0)], [d]), lambda: np.select([idx > 0], [x]),
                   name)
    same_error(lambda: np.choose(dg.asarray(idx + 5), [dg.asarray(c) for c in choices]),
               lambda: np.choose(idx + 5, choices))
    same_error(lambda: dg.select([], []), lambda: np.select([], []))
    same_error(lambda: dg.select([dg.ones(3)], [dg.ones(3)]), lambda: np.select([np.ones(3)],
                                                                                [np.ones(3)]))
    if dtype in ("f8", "i8"):
        v = values(dtype, (9,))
        dv = dg.asarray(v)
        for conds, funcs in [([v < 0, v > 0], [-1, 1]), ([v < 0], [lambda t: t * 2, lambda t: t]),
                             ([v > 2, v < -2], [lambda t: t + 1, 0, 5])]:
            dconds = [dg.asarray(c) for c in conds]
            like_numpy(lambda: np.piecewise(dv, dconds, funcs), lambda: np.piecewise(v, conds, funcs))


@pytest.mark.parametrize("dtype", ["i4", "f8", "c8", "?"])
def test_place_putmask_extract_copyto_resize(dtype, ndev):
    x = values(dtype, (5, 4))
    mask = values("?", (5, 4), 2)
    for name, d in layouts(x, ndev):
        a, w = d.copy(), x.copy()
        vals = values(dtype, (3,), 3)
        np.place(a, dg.asarray(mask), vals)
        np.place(w, mask, vals)
        same(a, w, name)
        a, w = d.copy(), x.copy()
        np.putmask(a, mask, dg.asarray(values(dtype, (7,), 4)))
        np.putmask(w, mask, values(dtype, (7,), 4))
        same(a, w, name)
        like_numpy(lambda: np.extract(dg.asarray(mask), d), lambda: np.extract(mask, x), name)
        for shape in ((3,), (7, 3), (0,), (2, 2, 5)):
            like_numpy(lambda: np.resize(d, shape), lambda: np.resize(x, shape), name)
        c, w = d.copy(), x.copy()
        c.resize((3, 9))
        w.resize((3, 9), refcheck=False)
        same(c, w, name)
        c.resize(4)
        w.resize(4, refcheck=False)
        same(c, w, name)
    same_error(lambda: np.place(dg.ones(3), [True, False, True], []),
               lambda: np.place(np.ones(3), [True, False, True], []))


@pytest.mark.parametrize("dtype", ["i2", "f4", "c16", "?"])
def test_append_insert_delete(dtype, ndev, no_leak):
    x = values(dtype, (5, 4))
    for name, d in layouts(x, ndev):
        for args in [(values(dtype, (3,)),), (values(dtype, (2, 4)), 0), (values(dtype, (5, 1)), 1)]:
            like_numpy(lambda: np.append(d, *args), lambda: np.append(x, *args), name)
        for obj, vals, axis in [(1, 9, None), (2, [7, 8], 1), ([0, 2, 2], 5, 0), (slice(1, 3), 0, 1),
                                (-1, [1, 2, 3, 4], 0), (np.array([1]), [[6], [6], [6], [6], [6]], 1),
                                ([], 3, 0), (np.array([True, False, True, False]), 7, 1)]:
            like_numpy(lambda: np.insert(d, obj, vals, axis), lambda: np.insert(x, obj, vals, axis),
                       f"{name} {obj} {axis}")
        for obj, axis in [(1, None), (-2, 0), ([0, 3], 1), (slice(0, 4, 2), 0), (slice(None, None, -2), 1),
                          (np.array([True, False, False, True]), 1), ([], 0)]:
            like_numpy(lambda: np.delete(d, obj, axis), lambda: np.delete(x, obj, axis),
                       f"{name} {obj} {axis}")
    same_error(lambda: np.delete(dg.ones(3), 5), lambda: np.delete(np.ones(3), 5))
    same_error(lambda: np.insert(dg.ones(3), 5, 1), lambda: np.insert(np.ones(3), 5, 1))
    same_error(lambda: np.insert(dg.ones(3), [[1]], 1), lambda: np.insert(np.ones(3), [[1]], 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_shapes_and_stacks(dtype, ndev):
    x = values(dtype, (4, 3, 6))
    z = values(dtype, (7,))
    z[:2] = 0
    z[-1] = 0
    for name, d in layouts(x, ndev):
        for k in range(-1, 5):
            like_numpy(lambda: np.rot90(d, k), lambda: np.rot90(x, k), f"{name} {k}")
            like_numpy(lambda: np.rot90(d, k, axes=(2, 0)), lambda: np.rot90(x, k, axes=(2, 0)),
                       f"{name} {k}")
        like_numpy(lambda: np.unstack(d, axis=1), lambda: np.unstack(x, axis=1), name)
        like_numpy(lambda: np.dsplit(d, 3), lambda: np.dsplit(x, 3), name)
        like_numpy(lambda: np.dsplit(d, [1, 4]), lambda: np.dsplit(x, [1, 4]), name)
    for trim in ("fb", "f", "b"):
        like_numpy(lambda: np.trim_zeros(dg.asarray(z), trim), lambda: np.trim_zeros(z, trim))
    y = values(dtype, (5, 5))
    y[0] = 0
    y[:, -2:] = 0
    like_numpy(lambda: np.trim_zeros(dg.asarray(y), axis=0), lambda: np.trim_zeros(y, axis=0))
    like_numpy(lambda: np.trim_zeros(dg.asarray(y)), lambda: np.trim_zeros(y))
    a, b = values(dtype, (2, 2), 1), values(dtype, (2, 3), 2)
    like_numpy(lambda: np.block([[dg.asarray(a), dg.asarray(b)], [dg.asarray(b[:, :2]),
                                                                    dg.asarray(b)]]),
               lambda: np.block([[a, b], [b[:, :2], b]]))
    like_numpy(lambda: np.block([dg.asarray(z), dg.asarray(z)]), lambda: np.block([z, z]))
    if hasattr(np, "row_stack"):           # NumPy 2.0-2.4: a deprecated alias
        with pytest.warns(DeprecationWarning):
            r = dg.row_stack([dg.asarray(z), dg.asarray(z)])
        same(r, np.vstack([z, z]))
    else:                                  # removed from NumPy since: not in dgarray either
        with pytest.raises(AttributeError):
            dg.row_stack
    same_error(lambda: np.rot90(dg.asarray(x), axes=(0, 0)), lambda: np.rot90(x, axes=(0, 0)))
    same_error(lambda: np.dsplit(dg.asarray(a), 2), lambda: np.dsplit(a, 2))
    same_error(lambda: dg.trim_zeros(dg.asarray(z), "x"), lambda: np.trim_zeros(z, "x"))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_ediff1d_sort_complex(dtype, ndev):
    x = values(dtype, (3, 4))
    for name, d in layouts(x, ndev):
        like_numpy(lambda: np.ediff1d(d), lambda: np.ediff1d(x), name)
        like_numpy(lambda: np.ediff1d(d, to_end=[1, 2], to_begin=0),
                   lambda: np.ediff1d(x, to_end=[1, 2], to_begin=0), name)
        like_numpy(lambda: np.sort_complex(d[0]), lambda: np.sort_complex(x[0]), name)


def test_index_arithmetic(ndev):
    dims = (4, 5, 3)
    rng = np.random.default_rng(3)
    coords = tuple(rng.integers(0, n, 10) for n in dims)
    for order in ("C", "F"):
        like_numpy(lambda: np.ravel_multi_index(tuple(dg.asarray(c) for c in coords), dims,
                                                order=order),
                   lambda: np.ravel_multi_index(coords, dims, order=order))
        flat = np.ravel_multi_index(coords, dims)
        like_numpy(lambda: np.unravel_index(dg.asarray(flat), dims, order=order),
                   lambda: np.unravel_index(flat, dims, order=order))
    big = tuple(c + 2 for c in coords)
    for mode in ("wrap", "clip", ("clip", "wrap", "clip")):
        like_numpy(lambda: np.ravel_multi_index(tuple(dg.asarray(c) for c in big), dims, mode=mode),
                   lambda: np.ravel_multi_index(big, dims, mode=mode))
    same_error(lambda: np.ravel_multi_index(tuple(dg.asarray(c) for c in big), dims),
               lambda: np.ravel_multi_index(big, dims))
    same_error(lambda: np.unravel_index(dg.asarray([60]), dims), lambda: np.unravel_index([60], dims))
    like_numpy(lambda: np.ix_(dg.asarray([0, 2]), dg.asarray([True, False, True])),
               lambda: np.ix_([0, 2], [True, False, True]))


@pytest.mark.parametrize("dtype", ["?", "u1", "i4"])
def test_packbits(dtype, ndev):
    x = values(dtype, (5, 11), low=0, high=2)
    for name, d in layouts(x, ndev):
        for kw in ({}, {"axis": 0}, {"axis": 1, "bitorder": "little"}, {"axis": -1}):
            like_numpy(lambda: np.packbits(d, **kw), lambda: np.packbits(x, **kw), f"{name} {kw}")
    p = np.packbits(x, axis=1)
    for kw in ({}, {"axis": 1}, {"axis": 0, "count": 5}, {"axis": 1, "count": -3},
               {"bitorder": "little", "axis": 1, "count": 20}):
        like_numpy(lambda: np.unpackbits(dg.asarray(p), **kw), lambda: np.unpackbits(p, **kw),
                   str(kw))
    same_error(lambda: np.unpackbits(dg.ones(3)), lambda: np.unpackbits(np.ones(3)))


def test_conversions_and_memory():
    x = values("f8", (3, 4))
    d = dg.asarray(x)
    for f in (np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite):
        # NumPy's conversions take no __array_function__: dgarray's own names
        like_numpy(lambda: getattr(dg, f.__name__)(d), lambda: f(x), f.__name__)
    like_numpy(lambda: dg.ascontiguousarray(dg.asarray(np.array(2.0))),
               lambda: np.ascontiguousarray(np.array(2.0)))
    like_numpy(lambda: dg.require(d, np.float32, ["C", "W"]),
               lambda: np.require(x, np.float32, ["C", "W"]))
    same_error(lambda: dg.asarray_chkfinite(dg.asarray([1.0, np.nan])),
               lambda: np.asarray_chkfinite([1.0, np.nan]))
    assert np.isfortran(d) == np.isfortran(x)
    assert np.may_share_memory(d, d[1:]) and np.shares_memory(d, d[1:])
    assert not np.may_share_memory(d, d.copy())
    assert not np.shares_memory(d[:1], d[2:])
    assert np.may_share_memory(d.real, d)


def test_apply_functions(ndev):
    x = values("f8", (4, 5, 3))
    d = dg.asarray(x)
    for axis in (0, 1, 2):
        like_numpy(lambda: np.apply_along_axis(np.sum, axis, d),
                   lambda: np.apply_along_axis(np.sum, axis, x), rtol=1e-12)
        like_numpy(lambda: np.apply_along_axis(lambda v: v[::-1] * 2, axis, d),
                   lambda: np.apply_along_axis(lambda v: v[::-1] * 2, axis, x))
    like_numpy(lambda: np.apply_over_axes(np.sum, d, [0, 2]),
               lambda: np.apply_over_axes(np.sum, x, [0, 2]), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["i4", "f4", "f8", "c16"])
def test_trapezoid_unwrap(dtype, ndev):
    y = values(dtype, (6, 5))
    for name, d in layouts(y, ndev):
        like_numpy(lambda: np.trapezoid(d), lambda: np.trapezoid(y), name, rtol=tol(dtype))
        like_numpy(lambda: np.trapezoid(d, dx=0.5, axis=0), lambda: np.trapezoid(y, dx=0.5, axis=0),
                   name, rtol=tol(dtype))
        xs = np.cumsum(np.arange(1, 6) * 0.3)
        like_numpy(lambda: np.trapezoid(d, x=xs), lambda: np.trapezoid(y, x=xs), name,
                   rtol=tol(dtype) * 10)
        if dtype != "c16":
            for kw in ({}, {"axis": 0}, {"discont": 4.0}, {"period": 6}):
                like_numpy(lambda: np.unwrap(d, **kw), lambda: np.unwrap(y, **kw), name,
                           rtol=tol(dtype))


def test_windows_and_spaces():
    for M in (0, 1, 2, 7, 12.0):
        for f in (np.bartlett, np.blackman, np.hamming, np.hanning):
            like_numpy(lambda: getattr(dg, f.__name__)(M), lambda: f(M), f"{f.__name__} {M}",
                       rtol=1e-12, atol=1e-15)
        like_numpy(lambda: dg.kaiser(M, 5.0), lambda: np.kaiser(M, 5.0), str(M), rtol=1e-12)
    x = values("f8", (20,)) * 5
    like_numpy(lambda: np.i0(dg.asarray(x)), lambda: np.i0(x), rtol=1e-12)
    same_error(lambda: np.i0(dg.ones(2, complex)), lambda: np.i0(np.ones(2, complex)))
    for args, kw in [((0, 3), {}), ((1, 2), {"num": 7, "base": 2.0}), ((0, 1), {"endpoint": False}),
                     ((0, 2), {"dtype": np.float32})]:
        like_numpy(lambda: dg.logspace(*args, **kw), lambda: np.logspace(*args, **kw), rtol=1e-12)
    for args, kw in [((1, 1000), {"num": 4}), ((-1, -1000), {"num": 5}), ((2, 7), {"endpoint": False}),
                     ((1, 2), {"dtype": int})]:
        like_numpy(lambda: dg.geomspace(*args, **kw), lambda: np.geomspace(*args, **kw), rtol=1e-12)
    same_error(lambda: dg.geomspace(0, 3), lambda: np.geomspace(0, 3))


@pytest.mark.parametrize("dtype", ["i2", "u1", "f4", "f8", "c8", "?"])
def test_cumulative_and_nan_functions(dtype, ndev, no_leak):
    x = values(dtype, (5, 6), nan=True)
    if np.dtype(dtype).kind == "f":
        x[2] = np.nan
    for name, d in layouts(x, ndev):
        for f in (np.cumulative_sum, np.cumulative_prod):
            for kw in ({"axis": 0}, {"axis": 1, "include_initial": True}, {"axis": -1, "dtype": np.float64}):
                like_numpy(lambda: f(d, **kw), lambda: f(x, **kw), f"{name} {kw}", rtol=tol(dtype))
        for f in (np.nancumsum, np.nancumprod):
            for axis in (None, 0, 1):
                like_numpy(lambda: f(d, axis=axis), lambda: f(x, axis=axis), name, rtol=tol(dtype))
        for f in (np.nanargmax, np.nanargmin):
            for axis in (None, 1, 0):
                like_numpy(lambda: f(d, axis=axis), lambda: f(x, axis=axis), f"{name} {axis}")
        if dtype != "?":
            for f in (np.nanvar, np.nanstd):
                for kw in ({}, {"axis": 0}, {"axis": 1, "ddof": 1}, {"keepdims": True, "axis": 1},
                           {"axis": 1, "ddof": 6}):
                    like_numpy(lambda: f(d, **kw), lambda: f(x, **kw), f"{name} {kw}",
                               rtol=tol(dtype) * 100)
    like_numpy(lambda: np.cumulative_sum(dg.asarray(x[0])), lambda: np.cumulative_sum(x[0]),
               rtol=tol(dtype))
    same_error(lambda: np.cumulative_sum(dg.asarray(x)), lambda: np.cumulative_sum(x))


@pytest.mark.parametrize("dtype", ["i4", "u1", "f8", "f2", "c16", "?"])
def test_set_functions(dtype, ndev):
    a = values(dtype, (15,), 1)
    b = values(dtype, (9,), 2)
    if np.dtype(dtype).kind in "fc":
        a[3] = np.nan
        b[1] = np.nan
    for name, d in layouts(a, ndev):
        e = dg.asarray(b)
        for inv in (False, True):
            like_numpy(lambda: np.isin(d, e, invert=inv), lambda: np.isin(a, b, invert=inv), name)
            like_numpy(lambda: np.isin(d.reshape(3, 5), b, invert=inv),
                       lambda: np.isin(a.reshape(3, 5), b, invert=inv), name)
        like_numpy(lambda: np.intersect1d(d, e), lambda: np.intersect1d(a, b), name)
        like_numpy(lambda: np.intersect1d(d, e, return_indices=True),
                   lambda: np.intersect1d(a, b, return_indices=True), name)
        like_numpy(lambda: np.union1d(d, e), lambda: np.union1d(a, b), name)
        like_numpy(lambda: np.setdiff1d(d, e), lambda: np.setdiff1d(a, b), name)
        like_numpy(lambda: np.setxor1d(d, e), lambda: np.setxor1d(a, b), name)
        like_numpy(lambda: np.unique_counts(d), lambda: np.unique_counts(a), name)
        like_numpy(lambda: np.unique_inverse(d), lambda: np.unique_inverse(a), name)
        like_numpy(lambda: np.unique_all(d), lambda: np.unique_all(a), name)
    same_error(lambda: np.isin(dg.asarray(a), b, kind="x"), lambda: np.isin(a, b, kind="x"))
