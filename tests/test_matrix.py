"""Diagonals and triangles (dgarray/_matrix.py) against NumPy: diagonal,
trace, diag, diagflat, tri, tril, triu, fill_diagonal and the index
functions, on every layout, dtype, empty and 0-d arrays, with NumPy's
errors and no host fallback."""
import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, no_moves, same,  # noqa: F401
                          same_error, tol, values)

SHAPES = [(5, 4), (4, 6), (3, 3), (1, 5), (0, 3), (2, 3, 4)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal_and_trace(dtype, ndev, no_leak):
    for shape in SHAPES:
        x = values(dtype, shape)
        for name, d in layouts(x, ndev):
            for off in (-6, -2, -1, 0, 1, 3, 7):
                msg = f"{shape} {name} {off}"
                like_numpy(lambda: np.diagonal(d, off), lambda: np.diagonal(x, off), msg)
                like_numpy(lambda: d.trace(off), lambda: x.trace(off), msg, rtol=tol(dtype))
                if x.ndim == 3:
                    like_numpy(lambda: d.diagonal(off, 2, 0), lambda: x.diagonal(off, 2, 0),
                               msg)
                    like_numpy(lambda: np.trace(d, off, -1, 1, dtype=np.float64),
                               lambda: np.trace(x, off, -1, 1, dtype=np.float64), msg,
                               rtol=1e-12)


def test_diagonal_is_a_read_only_view_where_the_rows_are_whole(ndev):
    x = np.arange(30.0).reshape(5, 6)
    d = dg.distributed_array(x, {k: slice(5 * k // ndev, 5 * (k + 1) // ndev)
                                 for k in range(ndev)})
    with no_moves():
        v = d.diagonal(1)
    same(v, x.diagonal(1))
    with pytest.raises(ValueError, match="read-only"):
        v[0] = 1
    c = dg.distributed_array(x, {k: (slice(None), slice(6 * k // ndev, 6 * (k + 1) // ndev))
                                 for k in range(ndev)})
    with pytest.raises(ValueError, match="read-only"):
        c.diagonal()[...] = 0
    same(dg.diag(c), np.diag(x))
    r = dg.diag(c)
    r[0] = -1  # diag's result is a copy, written freely
    assert x[0, 0] == 0 and c.get()[0, 0] == 0


def test_diagonal_errors():
    d = dg.asarray(np.ones((3, 3)))
    for args in ((0, 0, 0), (0, 0, 5), (0, 1.5, 0), (1.5,)):
        same_error(lambda: np.diagonal(d, *args), lambda: np.diagonal(np.ones((3, 3)), *args))
    same_error(lambda: np.diagonal(dg.ones(3)), lambda: np.diagonal(np.ones(3)))
    same_error(lambda: np.trace(dg.ones(3)), lambda: np.trace(np.ones(3)))
    same_error(lambda: dg.diag(dg.ones((2, 2, 2))), lambda: np.diag(np.ones((2, 2, 2))))
    same_error(lambda: dg.diag(dg.ones(())), lambda: np.diag(np.ones(())))


def test_trace_out(ndev):
    x = values("i4", (4, 3, 2))
    for name, d in layouts(x, ndev):
        o = dg.zeros(2, np.int64)
        r = np.trace(d, 1, out=o)
        assert r is o
        same(o, np.trace(x, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu(dtype, ndev, no_leak):
    for shape in [(5, 4), (4, 6), (0, 3), (3, 0), (2, 3, 4), (5,), (0,)]:
        x = values(dtype, shape)
        for name, d in layouts(x, ndev):
            for k in (-7, -1, 0, 2, 9):
                like_numpy(lambda: dg.tril(d, k), lambda: np.tril(x, k), f"{name} {k}")
                like_numpy(lambda: np.triu(d, k), lambda: np.triu(x, k), f"{name} {k}")
    same_error(lambda: dg.tril(dg.ones(())), lambda: np.tril(np.ones(())))
    same(dg.tril([[1, 2], [3, 4]]), np.tril([[1, 2], [3, 4]]))


def test_tri():
    for args in [(3,), (3, 5), (4, 2, 1), (4, 2, -3), (0,), (3, 0), (-1,), (2.5,)]:
        for dtype in (float, int, bool, np.complex64):
            like_numpy(lambda: dg.tri(*args, dtype=dtype), lambda: np.tri(*args, dtype=dtype))
    same_error(lambda: dg.tri(None), lambda: np.tri(None), match_message=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_diag_diagflat(dtype, ndev, no_leak):
    for shape in [(4,), (1,), (0,), (4, 5), (2, 2)]:
        x = values(dtype, shape)
        for name, d in layouts(x, ndev):
            for k in (-3, 0, 1, 6):
                like_numpy(lambda: dg.diag(d, k), lambda: np.diag(x, k), f"{name} {k}")
                like_numpy(lambda: np.diagflat(d, k), lambda: np.diagflat(x, k),
                           f"{name} {k}")
    same(dg.diag([1.0, 2.0]), np.diag([1.0, 2.0]))


def test_fill_diagonal(ndev, no_leak):
    for shape, val, wrap in [((5, 5), 7, False), ((7, 3), [1, 2], True), ((7, 3), 9, False),
                             ((3, 7), -1, False), ((3, 3, 3), 4, False), ((0, 0), 1, False)]:
        x = values("f8", shape)
        for name, d in layouts(x, ndev):
            want = x.copy()
            np.fill_diagonal(want, val, wrap)
            assert np.fill_diagonal(d, val, wrap) is None
            same(d, want, name)
    for bad in [(3,), (2, 3, 4)]:
        same_error(lambda: np.fill_diagonal(dg.zeros(bad), 1),
                   lambda: np.fill_diagonal(np.zeros(bad), 1))


def test_index_functions(ndev):
    for n, k, m in [(4, 0, None), (4, 1, 6), (5, -2, 3), (0, 0, None), (3, 5, None)]:
        like_numpy(lambda: dg.tril_indices(n, k, m), lambda: np.tril_indices(n, k, m))
        like_numpy(lambda: dg.triu_indices(n, k, m), lambda: np.triu_indices(n, k, m))
    like_numpy(lambda: dg.diag_indices(4, 3), lambda: np.diag_indices(4, 3))
    x = values("f4", (4, 5))
    for name, d in layouts(x, ndev):
        like_numpy(lambda: np.tril_indices_from(d, 1), lambda: np.tril_indices_from(x, 1))
        like_numpy(lambda: np.triu_indices_from(d, -1), lambda: np.triu_indices_from(x, -1))
        same_error(lambda: np.diag_indices_from(d), lambda: np.diag_indices_from(x))
    like_numpy(lambda: dg.diag_indices_from(dg.ones((3, 3, 3))),
               lambda: np.diag_indices_from(np.ones((3, 3, 3))))
    same_error(lambda: dg.tril_indices_from(dg.ones(3)), lambda: np.tril_indices_from(np.ones(3)))
    same_error(lambda: dg.triu_indices_from(dg.ones((2, 2, 2))),
               lambda: np.triu_indices_from(np.ones((2, 2, 2))))
    like_numpy(lambda: dg.mask_indices(3, dg.triu, 1), lambda: np.mask_indices(3, np.triu, 1))
