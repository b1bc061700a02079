"""Weighted means and covariances (dgarray/_stats.py) against NumPy:
average, cov, corrcoef; every dtype and layout, weights, rowvar, ddof,
bias, fweights, aweights, NumPy's warnings and errors; no host fallback."""
import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, same,  # noqa: F401
                          same_error, tol, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_average(dtype, ndev, no_leak):
    x = values(dtype, (6, 5))
    w2 = np.abs(values("f4", (6, 5), 3)) + 0.5
    for name, d in layouts(x, ndev):
        for kw in ({}, {"axis": 0}, {"axis": (0, 1)}, {"axis": 1, "keepdims": True},
                   {"weights": w2}, {"axis": 1, "weights": w2[0]},
                   {"axis": 0, "weights": np.arange(1, 7)}, {"returned": True},
                   {"axis": 1, "weights": w2[0], "returned": True},
                   {"axis": 0, "returned": True, "keepdims": True}):
            like_numpy(lambda: np.average(d, **kw), lambda: np.average(x, **kw),
                       f"{name} {kw}", rtol=tol(dtype) * 10)
        like_numpy(lambda: np.average(d, axis=1, weights=dg.asarray(w2[0])),
                   lambda: np.average(x, axis=1, weights=w2[0]), name, rtol=tol(dtype) * 10)
    for kw in ({"weights": np.ones(3)}, {"axis": 0, "weights": np.ones(3)},
               {"weights": np.zeros((6, 5))}):
        same_error(lambda: np.average(dg.asarray(x), **kw), lambda: np.average(x, **kw))


@pytest.mark.parametrize("dtype", ["i4", "u1", "f2", "f4", "f8", "c8", "c16", "?"])
def test_cov_corrcoef(dtype, ndev, no_leak):
    x = values(dtype, (4, 9), 1)
    y = values(dtype, (2, 9), 2)
    fw = np.arange(1, 10) % 3 + 1
    aw = np.linspace(0.5, 2, 9)
    for name, d in layouts(x, ndev):
        e = dg.asarray(y)
        for kw in ({}, {"bias": True}, {"ddof": 0}, {"ddof": 3}, {"fweights": fw},
                   {"aweights": aw}, {"fweights": fw, "aweights": aw, "ddof": 2},
                   {"dtype": np.float32}):
            like_numpy(lambda: np.cov(d, **kw), lambda: np.cov(x, **kw), f"{name} {kw}",
                       rtol=1e-4, atol=1e-5)
        like_numpy(lambda: np.cov(d, e), lambda: np.cov(x, y), name, rtol=1e-4, atol=1e-5)
        like_numpy(lambda: np.cov(d.T, rowvar=False), lambda: np.cov(x.T, rowvar=False), name,
                   rtol=1e-4, atol=1e-5)
        like_numpy(lambda: np.corrcoef(d), lambda: np.corrcoef(x), name, rtol=1e-4, atol=1e-5)
        like_numpy(lambda: np.corrcoef(d, e, rowvar=True), lambda: np.corrcoef(x, y), name,
                   rtol=1e-4, atol=1e-5)
    v = values(dtype, (9,), 3)
    like_numpy(lambda: np.cov(dg.asarray(v)), lambda: np.cov(v), rtol=1e-4, atol=1e-5)
    like_numpy(lambda: np.corrcoef(dg.asarray(v)), lambda: np.corrcoef(v), rtol=1e-4)


def test_cov_errors_and_warnings():
    x = values("f8", (3, 4))
    d = dg.asarray(x)
    for kw in ({"ddof": 1.5}, {"fweights": [1.5] * 4}, {"fweights": [1] * 3},
               {"aweights": [-1.0] * 4}, {"fweights": [[1] * 4]}, {"aweights": [1.0] * 5}):
        same_error(lambda: np.cov(d, **kw), lambda: np.cov(x, **kw))
    same_error(lambda: np.cov(dg.ones((2, 2, 2))), lambda: np.cov(np.ones((2, 2, 2))))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        r = np.cov(d, ddof=4)
    assert r.shape == (3, 3)
    like_numpy(lambda: np.cov(dg.zeros((0, 3))), lambda: np.cov(np.zeros((0, 3))))
