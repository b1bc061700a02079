"""Searching and ordering (dgarray/_sortsearch.py and the backend's search
slot) against NumPy: searchsorted (both placements of the work), digitize,
interp, partition, argpartition, lexsort, take_along_axis, put_along_axis;
every dtype and layout, NaNs, empty and 0-d arrays, NumPy's errors, no
host fallback."""
import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, same,  # noqa: F401
                          same_error, values)


def sorted_values(dtype, n, seed=0):
    x = values(dtype, (n,), seed, nan=np.dtype(dtype).kind in "fc")
    return np.sort(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_searchsorted(dtype, ndev, no_leak):
    for n, m in [(40, 7), (5, 60), (1, 4), (0, 3), (9, 0)]:
        a = sorted_values(dtype, n, 1)
        v = values(dtype, (m,), 2, nan=np.dtype(dtype).kind in "fc")
        if n and m:
            v[: min(m, n)] = a[: min(m, n)]  # ties with the sequence
        for name, d in layouts(a, ndev):
            for vname, e in layouts(v, ndev, ("default", "strided", "replicated")):
                for side in ("left", "right"):
                    like_numpy(lambda: np.searchsorted(d, e, side=side),
                               lambda: np.searchsorted(a, v, side=side),
                               f"{n} {m} {name} {vname} {side}")
        like_numpy(lambda: dg.asarray(a).searchsorted(v.reshape(-1, 1)[:2]),
                   lambda: a.searchsorted(v.reshape(-1, 1)[:2]))


def test_searchsorted_scalars_sorter_and_errors(ndev):
    a = np.array([3.0, 1.0, 2.0, np.nan, -1.0])
    s = np.argsort(a)
    d = dg.asarray(a)
    for v in (2.0, np.nan, -5, [[0.5, 3.0]]):
        like_numpy(lambda: np.searchsorted(d, v, sorter=s), lambda: np.searchsorted(a, v, sorter=s))
        like_numpy(lambda: d.searchsorted(v, "right", dg.asarray(s)),
                   lambda: a.searchsorted(v, "right", s))
    u = np.array([1, 2, 200], np.uint8)
    for v in (300, -1, 1.5, np.array([1.5, -3.0])):
        like_numpy(lambda: np.searchsorted(dg.asarray(u), v), lambda: np.searchsorted(u, v))
    same_error(lambda: np.searchsorted(dg.ones((2, 2)), 1), lambda: np.searchsorted(np.ones((2, 2)), 1))
    same_error(lambda: np.searchsorted(d, 1, side="x"), lambda: np.searchsorted(a, 1, side="x"))
    same_error(lambda: np.searchsorted(d, 1, sorter=[0, 1]), lambda: np.searchsorted(a, 1, sorter=[0, 1]))
    same_error(lambda: np.searchsorted(d, 1, sorter=[0, 1.0, 2, 3, 4]),
               lambda: np.searchsorted(a, 1, sorter=[0, 1.0, 2, 3, 4]))
    with pytest.raises(ValueError, match="Sorter index out of range"):
        np.searchsorted(d, 1, sorter=[0, 1, 2, 3, 9])


def test_searchsorted_complex_order():
    a = np.array([1 + 1j, 1 + 2j, 2 + 0j, 1 + np.nan * 1j, np.nan + 1j, np.nan + np.nan * 1j])
    a = np.sort(a)
    v = np.array([1 + 1.5j, 2 + 0j, 0 + np.nan * 1j, 5 + np.nan * 1j, np.nan + 0j, np.nan + 3j,
                  complex(np.nan, np.nan)])
    for side in ("left", "right"):
        like_numpy(lambda: np.searchsorted(dg.asarray(a), dg.asarray(v), side),
                   lambda: np.searchsorted(a, v, side))


@pytest.mark.parametrize("dtype", ["i2", "u1", "f4", "f8", "u8"])
def test_digitize(dtype, ndev):
    x = values(dtype, (30,), 3)
    for bins in (np.array([-2, 0, 1, 3]), np.array([5, 2, 0, -1]), np.array([1]), np.array([]),
                 np.array([0, 0, 2, 2])):
        bins = bins.astype(np.float64)
        for name, d in layouts(x, ndev, ("default", "uneven", "strided")):
            for right in (False, True):
                like_numpy(lambda: np.digitize(d, bins, right),
                           lambda: np.digitize(x, bins, right), name)
    same_error(lambda: dg.digitize(dg.ones(3), [3, 1, 2]), lambda: np.digitize(np.ones(3), [3, 1, 2]))
    same_error(lambda: dg.digitize(dg.ones(3, complex), [1, 2]),
               lambda: np.digitize(np.ones(3, complex), [1, 2]))


@pytest.mark.parametrize("fdtype", ["f8", "f4", "i4", "c16", "c8"])
def test_interp(fdtype, ndev, no_leak):
    xp = np.array([-2.0, -1.0, 0.5, 0.5, 2.0, 3.0, 7.0])
    fp = values(fdtype, (7,), 4)
    x = np.concatenate([np.linspace(-4, 9, 40), xp, [np.nan, np.inf, -np.inf]])
    for name, d in layouts(x, ndev, ("default", "uneven", "strided", "replicated")):
        for kw in ({}, {"left": -10, "right": 10.5}, {"period": 5}, {"period": -3.0}):
            # no two sample points equal modulo the period (NumPy's order of
            # equal ones is its unstable sort's)
            p = xp if "period" not in kw else np.array([-2.2, -1.1, 0.5, 1.3, 2.0, 3.7, 6.6])
            like_numpy(lambda: np.interp(d, p, fp, **kw), lambda: np.interp(x, p, fp, **kw),
                       f"{name} {kw}")
            like_numpy(lambda: np.interp(d, dg.asarray(p), dg.asarray(fp), **kw),
                       lambda: np.interp(x, p, fp, **kw), f"{name} {kw}")
    like_numpy(lambda: dg.interp(2.5, xp, fp), lambda: np.interp(2.5, xp, fp))
    like_numpy(lambda: dg.interp(dg.asarray(x), [1.0], [3.0]), lambda: np.interp(x, [1.0], [3.0]))
    like_numpy(lambda: dg.interp(dg.ones(0), xp, fp), lambda: np.interp(np.ones(0), xp, fp))
    inf_fp = np.array([0.0, np.inf, 1.0, np.inf])
    like_numpy(lambda: dg.interp(dg.asarray([0.5, 1.5, 2.5]), [0, 1, 2, 3.0], inf_fp),
               lambda: np.interp([0.5, 1.5, 2.5], [0, 1, 2, 3.0], inf_fp))


def test_interp_errors():
    for args, kw in [(([1.0], [], []), {}), (([1.0], [1, 2], [1]), {}),
                     (([1.0], [1, 2], [1, 2]), {"period": 0}),
                     (([1.0], [[1, 2]], [1, 2]), {}), (([1.0], [1, 2], [1]), {"period": 1})]:
        same_error(lambda: dg.interp(*args, **kw), lambda: np.interp(*args, **kw))


@pytest.mark.parametrize("dtype", DTYPES)
def test_partition(dtype, ndev):
    x = values(dtype, (9, 6), 5, nan=np.dtype(dtype).kind in "fc")
    for name, d in layouts(x, ndev):
        for axis, kth in [(-1, 2), (0, [1, 5]), (None, -3), (1, (0, 5))]:
            p = np.partition(d, kth, axis=axis).get()
            ap = np.argpartition(d, kth, axis=axis).get()
            want = np.partition(x, kth, axis=axis)
            ks = np.atleast_1d(kth)
            ax = -1 if axis is None else axis
            sel = [slice(None)] * want.ndim
            for k in ks:
                sel[ax] = k
                np.testing.assert_array_equal(p[tuple(sel)], want[tuple(sel)])
            flat = x.reshape(-1) if axis is None else x
            np.testing.assert_array_equal(np.take_along_axis(flat, ap, ax), p)
            assert ap.dtype == np.intp
        c = d.copy()
        assert c.partition(3, axis=0) is None
        np.testing.assert_array_equal(c.get()[3], np.partition(x, 3, axis=0)[3])
    like_numpy(lambda: dg.argpartition(dg.asarray(np.array(2.0)), 0),
               lambda: np.argpartition(np.array(2.0), 0))
    for kth, kw in [(6, {}), (-7, {}), (1.5, {}), (True, {}), (1, {"kind": "quick"}),
                    (1, {"kind": 3}), (1, {"axis": 2})]:
        same_error(lambda: np.partition(dg.ones(6), kth, **kw),
                   lambda: np.partition(np.ones(6), kth, **kw))
    same_error(lambda: np.partition(dg.ones(()), 0), lambda: np.partition(np.ones(()), 0))


@pytest.mark.parametrize("dtype", ["?", "i4", "u1", "f8", "f2", "c16"])
def test_lexsort(dtype, ndev):
    k1 = values(dtype, (12, 5), 1, nan=np.dtype(dtype).kind in "fc")
    k2 = values(dtype, (12, 5), 2, low=-1, high=2)
    for name, d in layouts(k1, ndev):
        e = dg.asarray(k2)
        for axis in (-1, 0):
            like_numpy(lambda: np.lexsort((d, e), axis=axis), lambda: np.lexsort((k1, k2), axis=axis),
                       name)
            like_numpy(lambda: dg.lexsort([e, d, e], axis=axis),  # a list: no NEP 18
                       lambda: np.lexsort([k2, k1, k2], axis=axis), name)
    two = np.stack([k1[:, 0], k2[:, 0]])
    like_numpy(lambda: dg.lexsort(dg.asarray(two)), lambda: np.lexsort(two))
    like_numpy(lambda: dg.lexsort(two), lambda: np.lexsort(two))
    for bad in [(), (np.ones(3), np.ones(4)), np.array(1)]:
        same_error(lambda: dg.lexsort(bad if not isinstance(bad, tuple) else
                                      tuple(dg.asarray(b) for b in bad)),
                   lambda: np.lexsort(bad))
    same_error(lambda: dg.lexsort((dg.ones(3),), axis=1), lambda: np.lexsort((np.ones(3),), axis=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_put_along_axis(dtype, ndev, no_leak):
    x = values(dtype, (6, 5), 7)
    idx0 = np.argsort(values("f8", (6, 5), 8), axis=0)[:4]
    idx1 = np.random.default_rng(1).integers(-5, 5, (6, 3))
    for name, d in layouts(x, ndev):
        for idx, axis in ((idx0, 0), (idx1, 1), (idx1, -1), (np.array([3, -1, 0]), None)):
            like_numpy(lambda: np.take_along_axis(d, idx, axis),
                       lambda: np.take_along_axis(x, idx, axis), f"{name} {axis}")
            like_numpy(lambda: np.take_along_axis(d, dg.asarray(idx), axis),
                       lambda: np.take_along_axis(x, idx, axis), f"{name} {axis}")
        for idx, axis, vals in ((idx0[:1], 0, 7), (np.array([[0], [4], [2], [1], [3], [0]]), 1,
                                                 values(dtype, (6, 1), 9)),
                                (np.array([2, 29]), None, values(dtype, (2,), 3))):
            c, want = d.copy(), x.copy()
            np.put_along_axis(want, idx, vals, axis)
            assert np.put_along_axis(c, dg.asarray(idx), vals, axis) is None
            same(c, want, f"{name} {axis}")
    for args in [(np.ones((2, 2)), 0), (np.ones(2, int), 0), (np.ones((2, 2), int), None)]:
        same_error(lambda: dg.take_along_axis(dg.ones((2, 2)), *args),
                   lambda: np.take_along_axis(np.ones((2, 2)), *args))
    same_error(lambda: dg.put_along_axis(dg.ones((2, 2)), np.ones((2, 2), int), 1, None),
               lambda: np.put_along_axis(np.ones((2, 2)), np.ones((2, 2), int), 1, None))


def test_search_results_stay_where_the_data_is(ndev):
    """A long sequence: each device searches its chunks, partial positions
    combined by the SUM mode; a short one goes to the values' devices."""
    a = np.sort(values("f8", (4000,), 1))
    v = values("f8", (30,), 2)
    m = maps_for(a.shape, ndev)[1][1]
    d = dg.distributed_array(a, m)
    r = np.searchsorted(d, dg.asarray(v))
    assert r.mode == ("sum" if ndev > 1 else "replica")
    same(r, np.searchsorted(a, v))
    s = np.sort(v[:5])
    r2 = np.searchsorted(dg.asarray(s), d)
    assert r2.mode == "replica" and r2.index_map == d.index_map
    same(r2, np.searchsorted(s, a))
