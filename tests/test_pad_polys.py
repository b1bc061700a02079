"""numpy.pad (dgarray/_pad.py) and the polynomial functions
(dgarray/_polys.py) against NumPy: every pad mode and argument form, the
poly* functions, vander, polyfit, roots (linalg.eigvals of the companion
matrix on the devices); every dtype and layout, NumPy's errors, no host
fallback (a callable pad mode stays on it)."""
import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, same,  # noqa: F401
                          same_error, tol, values)

MODES = [("constant", {}), ("constant", {"constant_values": (7, -1)}),
         ("constant", {"constant_values": ((1, 2), (3, 4))}), ("edge", {}), ("wrap", {}),
         ("reflect", {}), ("reflect", {"reflect_type": "odd"}), ("symmetric", {}),
         ("symmetric", {"reflect_type": "odd"}), ("linear_ramp", {}),
         ("linear_ramp", {"end_values": (5, -3)}), ("maximum", {}), ("minimum", {"stat_length": 2}),
         ("mean", {}), ("mean", {"stat_length": ((1, 2), (3, 1))}), ("median", {}),
         ("empty", {})]
WIDTHS = [1, (2, 3), ((0, 4), (7, 1)), ((5, 0), (0, 9)), {1: (2, 1)}]


@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i8", "f2", "f4", "f8", "c16"])
def test_pad(dtype, ndev, no_leak):
    x = values(dtype, (4, 3))
    for name, d in layouts(x, ndev, ("default", "uneven", "strided", "cols")):
        for mode, kw in MODES:
            if dtype == "?" and mode in ("linear_ramp", "mean", "median", "reflect", "symmetric") \
                    and kw.get("reflect_type") == "odd":
                continue
            for w in WIDTHS:
                msg = f"{name} {mode} {kw} {w}"
                if mode == "empty":
                    got = np.pad(d, w, mode)
                    assert got.shape == np.pad(x, w, mode).shape and got.dtype == x.dtype
                    continue
                like_numpy(lambda: np.pad(d, w, mode, **kw), lambda: np.pad(x, w, mode, **kw),
                           msg, rtol=tol(dtype))


def test_pad_1d_0d_and_errors():
    v = values("f8", (5,))
    for mode, kw in MODES[:-1]:
        like_numpy(lambda: np.pad(dg.asarray(v), 12, mode, **kw), lambda: np.pad(v, 12, mode, **kw),
                   mode, rtol=1e-12)
        like_numpy(lambda: np.pad(dg.asarray(v[:1]), (3, 2), mode, **kw),
                   lambda: np.pad(v[:1], (3, 2), mode, **kw), mode, rtol=1e-12)
    like_numpy(lambda: np.pad(dg.asarray(np.array(3.0)), 2), lambda: np.pad(np.array(3.0), 2))
    like_numpy(lambda: np.pad(dg.zeros((0, 3)), 1), lambda: np.pad(np.zeros((0, 3)), 1))
    d, x = dg.asarray(v), v
    for args, kw in [((-1,), {}), ((1.5,), {}), ((1, "nope"), {}), ((1, "edge"), {"x": 1}),
                     ((1, "maximum"), {"stat_length": 0}), (((1, 2, 3),), {})]:
        same_error(lambda: np.pad(d, *args, **kw), lambda: np.pad(x, *args, **kw))
    same_error(lambda: np.pad(dg.zeros((0, 3)), 1, "edge"), lambda: np.pad(np.zeros((0, 3)), 1, "edge"))
    with pytest.raises(TypeError, match="numpy.pad"):
        np.pad(d, 1, lambda v, w, ax, kw: None)


@pytest.mark.parametrize("dtype", ["?", "i2", "u1", "i8", "f2", "f4", "f8", "c8", "c16"])
def test_polyval_and_arithmetic(dtype, ndev):
    p = values(dtype, (4,), 1)
    q = values(dtype, (2,), 2)
    x = values(dtype, (7, 3), 3)
    for name, d in layouts(x, ndev):
        like_numpy(lambda: np.polyval(dg.asarray(p), d), lambda: np.polyval(p, x), name,
                   rtol=tol(dtype) * 10)
        like_numpy(lambda: np.polyval(p, d), lambda: np.polyval(p, x), name, rtol=tol(dtype) * 10)
    like_numpy(lambda: dg.polyval(dg.asarray(p), 2), lambda: np.polyval(p, 2), rtol=tol(dtype))
    dp, dq = dg.asarray(p), dg.asarray(q)
    if dtype != "?":
        for f in (np.polyadd, np.polysub, np.polymul):
            like_numpy(lambda: f(dp, dq), lambda: f(p, q), f.__name__, rtol=tol(dtype))
            like_numpy(lambda: f(dq, dp), lambda: f(q, p), f.__name__, rtol=tol(dtype))
        for m in (0, 1, 2, 5):
            like_numpy(lambda: np.polyder(dp, m), lambda: np.polyder(p, m), str(m), rtol=tol(dtype))
            like_numpy(lambda: np.polyint(dp, m), lambda: np.polyint(p, m), str(m), rtol=tol(dtype))
        like_numpy(lambda: np.polyint(dp, 2, k=[1, 2]), lambda: np.polyint(p, 2, k=[1, 2]),
                   rtol=tol(dtype))
        like_numpy(lambda: np.polyint(dp, 3, k=4), lambda: np.polyint(p, 3, k=4), rtol=tol(dtype))
    same_error(lambda: np.polyder(dp, -1), lambda: np.polyder(p, -1))
    same_error(lambda: np.polyint(dp, -1), lambda: np.polyint(p, -1))
    same_error(lambda: np.polyint(dp, 3, k=[1, 2]), lambda: np.polyint(p, 3, k=[1, 2]))


def test_polydiv_poly_vander(ndev):
    u = np.array([3.0, 5.0, -2.0, 7.0, 1.0])
    for v in ([2.0, 1.0], [1.0, -1.0, 2.0], [4.0], np.array([1 + 1j, 2.0])):
        like_numpy(lambda: np.polydiv(dg.asarray(u), dg.asarray(v)), lambda: np.polydiv(u, v),
                   rtol=1e-12)
    for roots in ([1, 2, 3], np.array([0.5, -2.0], np.float32), [1j, -1j], [1 + 1j, 2],
                  np.array([1, 2], np.int8), []):
        like_numpy(lambda: dg.poly(roots), lambda: np.poly(roots), str(roots), rtol=1e-6)
    same_error(lambda: dg.poly(dg.ones((2, 3))), lambda: np.poly(np.ones((2, 3))))
    for dtype in ("i4", "f8", "c16", "?", "u1"):
        x = values(dtype, (6,), 4)
        for name, d in layouts(x, ndev):
            for kw in ({}, {"N": 3}, {"N": 0}, {"increasing": True}, {"N": 8, "increasing": True}):
                like_numpy(lambda: np.vander(d, **kw), lambda: np.vander(x, **kw), f"{name} {kw}",
                           rtol=1e-12)
    same_error(lambda: np.vander(dg.ones((2, 2))), lambda: np.vander(np.ones((2, 2))))


def _matched(got, want):
    """got's values in the order of want's (nearest first): roots come in
    the eigensolver's order."""
    left, out = list(got), []
    for w in want:
        out.append(left.pop(int(np.argmin([abs(g - w) for g in left]))))
    return np.array(out, got.dtype)


@pytest.mark.parametrize("p", [[1, -3, 2], [0, 0, 1, 2, 0, 0], [0, 0], [0.0], [3], [1, 0],
                               [2, 0, 0], [1, 2, 3, 4, 5, 6, 7, 8], [1, 0, 1], [True, False],
                               np.array([1, -3, 2], np.float32), np.array([2, -3], np.float32),
                               np.array([1, 2, 3], np.float32), np.array([1j, 2, 3]),
                               np.array([1, -3, 2], np.complex64), np.array([1, 2], np.int8),
                               np.array([0, 4, 0, -1, 0], np.int64), []],
                         ids=lambda p: repr(np.asarray(p))[:40])
@pytest.mark.parametrize("eig_real", [True, False], ids=["eig<=2.4", "eig>2.4"])
def test_roots(p, ndev, eig_real, monkeypatch):
    """NumPy's roots (leading zeros dropped, trailing zeros roots 0, the
    companion matrix's eigenvalues): dtype, shape and values (matched: the
    eigensolver's order is its own) for p laid out every way; real roots as
    real results under either of NumPy's eig rules (NumPy 2.5's eig is
    complex always, its roots casts back as 2.4's eig did)."""
    from dgarray import _dense
    monkeypatch.setattr(_dense, "_EIG_REAL", [eig_real])
    x = np.asarray(p)
    want = np.roots(x)
    rtol = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10
    for name, d in layouts(x, ndev):
        # (NumPy's roots dispatches on the elements of p: none when it is empty)
        for r in (dg.roots(d), np.roots(d)) if x.size else (dg.roots(d),):
            assert isinstance(r, dg.DistributedArray), name
            assert r.dtype == want.dtype and r.shape == want.shape, (name, r.dtype, r.shape)
            np.testing.assert_allclose(_matched(r.get(), want), want, rtol=rtol, atol=rtol,
                                       err_msg=name)
    assert dg.roots(list(x)).shape == want.shape  # host sequences too


def test_roots_errors_and_poly_of_a_matrix(ndev):
    same_error(lambda: dg.roots(dg.ones((2, 3))), lambda: np.roots(np.ones((2, 3))))
    for scalar in (2.0, np.float32(3), np.array(4.0)):  # NumPy's dispatcher rejects a 0-d p
        same_error(lambda: dg.roots(scalar), lambda: np.roots(scalar))
    same_error(lambda: dg.roots(dg.asarray(4.0)), lambda: np.roots(np.array(4.0)))
    same_error(lambda: dg.roots(dg.asarray(np.array([1, 2, 3], np.float16))),
               lambda: np.roots(np.array([1, 2, 3], np.float16)))
    # poly of a square matrix: the characteristic polynomial (eigvals on the devices)
    for a in (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0, -1], [1, 0]]),
              np.array([[2.0, 1j], [0.0, 3.0]]), values("f4", (4, 4), 8), values("f8", (5, 5), 9)):
        want = np.poly(a)
        for name, d in layouts(a, ndev, ("default", "rows", "cols")):
            got = dg.poly(d)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            np.testing.assert_allclose(got.get(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max(),
                                       err_msg=name)


def _fit(*args, **kwargs):
    """polyfit's result, full=True's rank and rcond as Python numbers
    (NumPy's lstsq gives NumPy scalars, dgarray's Python numbers)."""
    r = np.polyfit(*args, **kwargs)
    return r[:2] + (int(r[2]), r[3], float(r[4])) if kwargs.get("full") else r


@pytest.mark.parametrize("dtype", ["i4", "f4", "f8", "c16"])
def test_polyfit(dtype, ndev, no_leak):
    x = values(dtype, (23,), 5) + np.arange(23).astype(dtype)  # distinct points
    y = values(dtype, (23,), 6)
    w = np.abs(values("f8", (23,), 7)) + 0.5
    y2 = values("f8", (23, 3), 8)
    rtol = 2e-3 if dtype == "f4" else 1e-8
    for name, d in layouts(x, ndev, ("default", "uneven", "strided", "replicated")):
        dy = dg.asarray(y)
        for deg in (0, 1, 3):
            for kw in ({}, {"full": True}, {"cov": True}, {"cov": "unscaled"}, {"w": w},
                       {"w": dg.asarray(w), "cov": True}, {"rcond": 1e-3, "full": True}):
                npkw = {k: (w if k == "w" else v) for k, v in kw.items()}
                like_numpy(lambda: _fit(d, dy, deg, **kw), lambda: _fit(x, y, deg, **npkw),
                           f"{name} {deg} {kw}", rtol=rtol, atol=rtol)
        if dtype != "c16":
            like_numpy(lambda: np.polyfit(d, dg.asarray(y2), 2, cov=True),
                       lambda: np.polyfit(x, y2, 2, cov=True), f"{name} 2-d y", rtol=rtol,
                       atol=rtol)


def test_polyfit_rank_warning_and_errors():
    x = dg.asarray(np.ones(5))
    with pytest.warns(np.exceptions.RankWarning, match="poorly conditioned"):
        np.polyfit(x, dg.arange(5.0), 3)
    # full=True reports the rank instead of warning
    _, _, rank, _, _ = np.polyfit(x, dg.arange(5.0), 3, full=True)
    assert rank == 1
    v = np.arange(4.0)
    for args, kw in [((np.ones((2, 2)), np.ones(2), 1), {}), ((np.ones(0), np.ones(0), 1), {}),
                     ((v, np.ones(3), 1), {}), ((v, v, -1), {}), ((v, np.ones((4, 1, 1)), 1), {}),
                     ((v, v, 1), {"w": np.ones((4, 1))}), ((v, v, 1), {"w": np.ones(3)}),
                     ((v, v, 3), {"cov": True})]:
        dargs = [dg.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        dkw = {k: dg.asarray(a) for k, a in kw.items()}
        same_error(lambda: np.polyfit(*dargs, **dkw), lambda: np.polyfit(*args, **kw))
