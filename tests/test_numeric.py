"""NumPy's numeric compositions (dgarray/_numeric.py) against NumPy: isclose,
allclose, array_equal, array_equiv, count_nonzero, cross, kron, meshgrid,
indices, fromfunction, gradient, convolve, correlate; every dtype and
layout, empty and 0-d arrays, NumPy's errors, no host fallback."""
import warnings

import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, INEXACT, NUMERIC, layouts, like_numpy,  # noqa: F401
                          no_fallback, same, same_error, tol, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_isclose_allclose(dtype, ndev, no_leak):
    for shape in [(6, 5), (0,), ()]:
        x = values(dtype, shape, nan=True)
        y = (x + np.asarray(1e-6, x.dtype)) if x.dtype.kind in "fc" else x.copy()
        if x.size > 1:
            y.flat[1] = np.asarray(3, x.dtype)
        for name, d in layouts(x, ndev):
            e = dg.asarray(y)
            for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.5},
                       {"rtol": 1e-3, "atol": 0}):
                msg = f"{name} {kw}"
                like_numpy(lambda: np.isclose(d, e, **kw), lambda: np.isclose(x, y, **kw), msg)
                like_numpy(lambda: dg.isclose(d, 2, **kw), lambda: np.isclose(x, 2, **kw), msg)
                like_numpy(lambda: np.isclose(1.5, d, **kw), lambda: np.isclose(1.5, x, **kw),
                           msg)
                got = np.allclose(d, e, **kw)
                assert type(got) is bool and got == np.allclose(x, y, **kw), msg
                assert np.allclose(d, d, **kw) == np.allclose(x, x, **kw)


def test_isclose_tolerances():
    d, x = dg.asarray([1.0, 2.0, np.inf]), np.array([1.0, 2.0, np.inf])
    like_numpy(lambda: dg.isclose(d, d, atol=np.array([0.1, 0, 1])),
               lambda: np.isclose(x, x, atol=np.array([0.1, 0, 1])))
    with pytest.warns(RuntimeWarning, match="One of rtol or atol is not valid"):
        dg.isclose(d, d, atol=np.nan)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        dg.isclose(d, d, rtol=np.inf)
    same_error(lambda: dg.isclose(dg.ones(3), dg.ones(4)), lambda: np.isclose(np.ones(3),
                                                                                np.ones(4)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_equal_equiv(dtype, ndev):
    x = values(dtype, (5, 3), nan=True)
    for name, d in layouts(x, ndev):
        for other in (x, x[:4], x[:1], x[0], np.zeros_like(x)):
            o = dg.asarray(other)
            for en in (False, True):
                got = np.array_equal(d, o, equal_nan=en)
                assert type(got) is bool and got == np.array_equal(x, other, equal_nan=en)
                assert dg.array_equal(d, d, equal_nan=en) == np.array_equal(x, x, equal_nan=en)
            got = np.array_equiv(d, o)
            assert type(got) is bool and got == np.array_equiv(x, other), name


@pytest.mark.parametrize("dtype", DTYPES)
def test_count_nonzero(dtype, ndev):
    for shape in [(6, 5), (0, 3), ()]:
        x = values(dtype, shape)
        for name, d in layouts(x, ndev):
            like_numpy(lambda: np.count_nonzero(d), lambda: np.count_nonzero(x), name)
            for axis in (0, -1, (0, 1), None):
                for kd in (False, True):
                    like_numpy(lambda: np.count_nonzero(d, axis=axis, keepdims=kd),
                               lambda: np.count_nonzero(x, axis=axis, keepdims=kd),
                               f"{name} {axis}")


@pytest.mark.parametrize("dtype", NUMERIC)
def test_cross(dtype, ndev, no_leak):
    cases = [((4, 3), (4, 3), {}), ((3, 5), (3, 5), {"axisa": 0, "axisb": 0}),
             ((4, 3), (3,), {}), ((2, 4, 3), (4, 3), {"axisc": 0}), ((0, 3), (0, 3), {}),
             ((3,), (3,), {}), ((5, 3), (5, 3), {"axis": 1})]
    for sa, sb, kw in cases:
        x, y = values(dtype, sa, 1), values(dtype, sb, 2)
        for name, d in layouts(x, ndev):
            e = dg.asarray(y)
            like_numpy(lambda: np.cross(d, e, **kw), lambda: np.cross(x, y, **kw),
                       f"{sa} {sb} {kw} {name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for sa, sb in [((4, 2), (4, 2)), ((4, 2), (4, 3)), ((4, 3), (4, 2))]:
            x, y = values(dtype, sa, 1), values(dtype, sb, 2)
            like_numpy(lambda: np.cross(dg.asarray(x), dg.asarray(y)),
                       lambda: np.cross(x, y), f"{sa} {sb}")
    # 2-vectors: NumPy's DeprecationWarning (2.0 to 2.4) or its error (since)
    with warnings.catch_warnings(record=True) as np_said:
        warnings.simplefilter("always")
        try:
            np.cross(np.ones((2, 2)), np.ones((2, 2)))
            np_error = None
        except ValueError as e:
            np_error = e
    if np_error is None:
        assert any(issubclass(w.category, DeprecationWarning) for w in np_said)
        with pytest.warns(DeprecationWarning):
            dg.cross(dg.ones((2, 2)), dg.ones((2, 2)))
    else:
        with pytest.raises(ValueError) as info:
            dg.cross(dg.ones((2, 2)), dg.ones((2, 2)))
        assert str(info.value) == str(np_error)


def test_cross_errors():
    for sa, sb, kw in [((4,), (4,), {}), ((), (3,), {}), ((3,), (3,), {"axisa": 2}),
                       ((3,), (3,), {"axisc": 1}), ((2, 3), (4, 3), {})]:
        same_error(lambda: np.cross(dg.ones(sa), dg.ones(sb), **kw),
                   lambda: np.cross(np.ones(sa), np.ones(sb), **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        same_error(lambda: np.cross(dg.ones((2, 2), bool), dg.ones((2, 2), bool)),
                   lambda: np.cross(np.ones((2, 2), bool), np.ones((2, 2), bool)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_kron(dtype, ndev, no_leak):
    for sa, sb in [((3, 2), (2, 4)), ((3,), (2, 2)), ((2, 2, 2), (3,)), ((), (3,)),
                   ((0, 2), (2, 3)), ((4,), ())]:
        x, y = values(dtype, sa, 1), values(dtype, sb, 2)
        for name, d in layouts(x, ndev):
            like_numpy(lambda: np.kron(d, dg.asarray(y)), lambda: np.kron(x, y), f"{name}")
        like_numpy(lambda: dg.kron(x, dg.asarray(y)), lambda: np.kron(x, y))


def test_meshgrid_indices_fromfunction(ndev):
    xs = [values("f4", (3,)), values("i8", (4,)), values("u1", (2,))]
    ds = [dg.asarray(x) for x in xs]
    for kw in ({}, {"indexing": "ij"}, {"sparse": True}, {"copy": False},
               {"sparse": True, "indexing": "ij"}):
        for k in (1, 2, 3):
            like_numpy(lambda: dg.meshgrid(*ds[:k], **kw), lambda: np.meshgrid(*xs[:k], **kw))
        like_numpy(lambda: np.meshgrid(ds[0], dg.asarray(values("f8", (2, 3))), **kw),
                   lambda: np.meshgrid(xs[0], values("f8", (2, 3)), **kw))
    g = dg.meshgrid(ds[0], ds[1])
    g[0][0, 0] = 99  # copies: writable
    same_error(lambda: dg.meshgrid(ds[0], indexing="yx"),
               lambda: np.meshgrid(xs[0], indexing="yx"))
    for dims in [(3, 2), (4,), (), (2, 0, 3)]:
        for kw in ({}, {"sparse": True}, {"dtype": np.int16}, {"dtype": float}):
            like_numpy(lambda: dg.indices(dims, **kw), lambda: np.indices(dims, **kw))
    like_numpy(lambda: dg.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int),
               lambda: np.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int))


@pytest.mark.parametrize("dtype", ["i2", "u1", "f2", "f4", "f8", "c8", "c16"])
def test_gradient(dtype, ndev, no_leak):
    x = values(dtype, (7, 5))
    coords = np.cumsum(np.arange(1, 8) ** 2) * 0.5
    for name, d in layouts(x, ndev):
        for args, kw in [((), {}), ((), {"edge_order": 2}), ((0.5,), {}),
                         ((np.float32(2),), {"axis": 1}), ((), {"axis": -1}),
                         ((coords,), {"axis": 0}), ((coords,), {"axis": 0, "edge_order": 2}),
                         ((np.arange(7), 2.0), {}), ((2, np.arange(5.0)), {"edge_order": 2})]:
            like_numpy(lambda: np.gradient(d, *args, **kw), lambda: np.gradient(x, *args, **kw),
                       f"{name} {args} {kw}", rtol=tol(dtype))
        like_numpy(lambda: np.gradient(d, dg.asarray(coords), axis=0),
                   lambda: np.gradient(x, coords, axis=0), name, rtol=tol(dtype))
    v = values(dtype, (9,))
    like_numpy(lambda: np.gradient(dg.asarray(v)), lambda: np.gradient(v), rtol=tol(dtype))


def test_gradient_errors():
    for args, kw, shape in [((), {"edge_order": 3}, (5,)), ((), {"edge_order": 2}, (2,)),
                            ((1, 2), {}, (5,)), ((np.ones((2, 2)),), {}, (5,)),
                            ((np.ones(4),), {}, (5,)), ((), {"axis": 2}, (5, 3))]:
        same_error(lambda: np.gradient(dg.ones(shape), *args, **kw),
                   lambda: np.gradient(np.ones(shape), *args, **kw))
    like_numpy(lambda: dg.gradient(dg.ones(())), lambda: np.gradient(np.ones(())))


@pytest.mark.parametrize("dtype", DTYPES)
def test_convolve_correlate(dtype, ndev, no_leak):
    for n, m in [(9, 3), (3, 9), (5, 5), (1, 4), (7, 1), (12, 6)]:
        x, y = values(dtype, (n,), 1), values(dtype, (m,), 2)
        for name, d in layouts(x, ndev):
            e = dg.asarray(y)
            for mode in ("full", "same", "valid"):
                for f in (np.convolve, np.correlate):
                    like_numpy(lambda: f(d, e, mode), lambda: f(x, y, mode),
                               f"{f.__name__} {n} {m} {mode} {name}", rtol=tol(dtype))
    like_numpy(lambda: np.correlate(dg.asarray([1 + 2j, 3]), dg.asarray([1j, 2 - 1j])),
               lambda: np.correlate([1 + 2j, 3], [1j, 2 - 1j]))
    like_numpy(lambda: dg.convolve(3, [1, 2]), lambda: np.convolve(3, [1, 2]))
    for mode in ("f", "SAME", "v", 0, 1, 2):
        like_numpy(lambda: dg.correlate(dg.arange(5), [1, 2], mode),
                   lambda: np.correlate(np.arange(5), [1, 2], mode))


def test_convolve_correlate_errors():
    for a, v, mode in [((0,), (3,), "full"), ((3,), (0,), "full"), ((2, 2), (2,), "full"),
                       ((3,), (2,), "middle"), ((3,), (2,), 5)]:
        for f in (np.convolve, np.correlate):
            same_error(lambda: f(dg.ones(a), dg.ones(v), mode),
                       lambda: f(np.ones(a), np.ones(v), mode), match_message=False)
