"""Elementwise helpers and attributes (dgarray/_elementwise.py,
_attributes.py) against NumPy: real and imag (views of complex parts,
writable through), angle, iscomplex, isreal, isposinf, isneginf,
nan_to_num, real_if_close, copyto, fix, sinc; the attributes mT, flat,
flags, strides, base; every dtype and layout, no host fallback."""
import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, no_moves, same,  # noqa: F401
                          same_error, tol, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_real_imag(dtype, ndev, no_leak):
    x = values(dtype, (5, 4), nan=True)
    for name, d in layouts(x, ndev):
        like_numpy(lambda: d.real, lambda: x.real, name)
        like_numpy(lambda: d.imag, lambda: x.imag, name)
        like_numpy(lambda: np.real(d), lambda: np.real(x), name)
        like_numpy(lambda: np.imag(d[1:, ::2]), lambda: np.imag(x[1:, ::2]), name)
        if x.dtype.kind == "c":
            with no_moves():
                r = d.real
            c, w = d.copy(), x.copy()
            c.imag[1] = 7
            w.imag[1] = 7
            c.real = -1
            w.real = -1
            same(c, w, name)
            assert d.imag.flags.writeable
        else:
            assert d.real is d
            assert not d.imag.flags.writeable
            with pytest.raises(TypeError):
                d.copy().imag = 1
    assert dg.real(3 + 1j) == 3.0 and dg.imag([1 + 2j]).get()[0] == 2.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_angle_and_predicates(dtype, ndev):
    x = values(dtype, (6, 3), nan=True)
    if x.dtype.kind == "f":
        x[0, :3] = [np.inf, -np.inf, 0]
    for name, d in layouts(x, ndev):
        like_numpy(lambda: np.angle(d), lambda: np.angle(x), name, rtol=tol(dtype))
        like_numpy(lambda: np.angle(d, deg=True), lambda: np.angle(x, deg=True), name,
                   rtol=tol(dtype))
        like_numpy(lambda: np.iscomplex(d), lambda: np.iscomplex(x), name)
        like_numpy(lambda: np.isreal(d), lambda: np.isreal(x), name)
        like_numpy(lambda: np.isposinf(d), lambda: np.isposinf(x), name)
        like_numpy(lambda: np.isneginf(d), lambda: np.isneginf(x), name)
        like_numpy(lambda: np.fix(d), lambda: np.fix(x), name)
        like_numpy(lambda: np.sinc(d), lambda: np.sinc(x), name, rtol=tol(dtype))


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "c8", "c16", "i4", "?"])
def test_nan_to_num_real_if_close(dtype, ndev):
    x = values(dtype, (7,), nan=True)
    if x.dtype.kind in "fc":
        x[1] = np.inf
        x[2] = -np.inf
    for name, d in layouts(x, ndev):
        for kw in ({}, {"nan": -1.0, "posinf": 9.0}, {"neginf": 0}):
            like_numpy(lambda: np.nan_to_num(d, **kw), lambda: np.nan_to_num(x, **kw), name)
        c = d.copy()
        r = np.nan_to_num(c, copy=False)
        if x.dtype.kind in "fc":
            assert r is c
        same(c, np.nan_to_num(x), name)
        like_numpy(lambda: np.real_if_close(d), lambda: np.real_if_close(x), name)
    small = np.array([1 + 1e-15j, 2 - 1e-16j])
    like_numpy(lambda: np.real_if_close(dg.asarray(small)), lambda: np.real_if_close(small))
    like_numpy(lambda: np.real_if_close(dg.asarray(small), tol=1e-20),
               lambda: np.real_if_close(small, tol=1e-20))


def test_copyto(ndev):
    x = values("f8", (5, 4))
    for name, d in layouts(x, ndev):
        for src, kw in [(3, {}), (np.arange(4.0), {}), (dg.arange(4), {}),
                        (2.5, {"where": x > 0}), (values("f4", (5, 4)), {"where": dg.asarray(x < 0)}),
                        (np.arange(4), {"casting": "safe"})]:
            c, w = d.copy(), x.copy()
            hsrc = src.get() if isinstance(src, dg.DistributedArray) else src
            hkw = {k: (v.get() if isinstance(v, dg.DistributedArray) else v) for k, v in kw.items()}
            np.copyto(w, hsrc, **hkw)
            assert np.copyto(c, src, **kw) is None
            same(c, w, f"{name} {kw}")
    i = dg.zeros(3, np.int32)
    same_error(lambda: np.copyto(i, 1.5), lambda: np.copyto(np.zeros(3, np.int32), 1.5))
    same_error(lambda: np.copyto(i, dg.ones(3)), lambda: np.copyto(np.zeros(3, np.int32),
                                                                   np.ones(3)))
    same_error(lambda: np.copyto(i, dg.ones(4, np.int32)),
               lambda: np.copyto(np.zeros(3, np.int32), np.ones(4, np.int32)),
               match_message=False)


def test_attributes(ndev):
    x = values("f8", (4, 3, 2))
    for name, d in layouts(x, ndev):
        same(d.mT, x.mT, name)
        with no_moves():
            d.mT
        assert d.base is None
        assert d.flags.writeable and d.flags["W"] and d.flags.c_contiguous
        assert d.strides == x.strides
        same(dg.broadcast_to(d, (2,) + d.shape).flags.writeable, False)
    with pytest.raises(ValueError, match="ndim < 2"):
        dg.ones(3).mT
    b = dg.broadcast_to(dg.ones(3), (2, 3))
    assert not b.flags.writeable
    with pytest.raises(ValueError):
        b.flags.writeable = True
    c = dg.ones(3)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        c[0] = 2
    with pytest.raises(AttributeError):
        dg.ones((4, 4))[:, ::2].strides


def test_flat(ndev):
    x = values("i8", (4, 5))
    for name, d in layouts(x, ndev):
        f, w = d.flat, x.flat
        assert len(f) == len(w)
        same(f[3], w[3], name)
        same(f[2:17:3], w[2:17:3], name)
        same(f[[1, 7, -1]], w[[1, 7, -1]], name)
        assert [int(v) for v in f][:6] == list(x.reshape(-1)[:6])
        c, cw = d.copy(), x.copy()
        c.flat[1:19:4] = [-1, -2]
        cw.flat[1:19:4] = [-1, -2]
        c.flat[0] = 99
        cw.flat[0] = 99
        same(c, cw, name)
        c.flat = [5, 6, 7]
        cw.flat = [5, 6, 7]
        same(c, cw, name)
        np.testing.assert_array_equal(np.asarray(d.flat), np.asarray(x.flat))
