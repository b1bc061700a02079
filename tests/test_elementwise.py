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


@pytest.mark.parametrize("dtype", DTYPES)
def test_view_byteswap_bytes(dtype, ndev, tmp_path):
    x = values(dtype, (4, 6))
    for name, d in layouts(x, ndev, ("default", "uneven", "strided", "replicated")):
        v = d.view()
        same(v, x.view(), name)
        for to in ("u1", "i2", "u4", "i8", "f8", "c16", "f2"):
            t = np.dtype(to)
            ok = (x.shape[-1] * x.itemsize) % t.itemsize == 0
            if not ok:
                continue
            like_numpy(lambda: d.view(t), lambda: x.view(t), f"{name} {to}")
        like_numpy(lambda: d.byteswap(), lambda: x.byteswap(), name)
        c, w = d.copy(), x.copy()
        assert c.byteswap(inplace=True) is c
        w.byteswap(inplace=True)
        same(c, w, name)
        assert d.tobytes() == x.tobytes()
        assert d.tobytes("F") == x.tobytes("F")
    d = dg.asarray(x)
    w = d.view()
    w[0, 0] = x[1, 1]
    assert d.get()[0, 0] == x[1, 1]  # a view writes through
    f = tmp_path / "x.bin"
    d.tofile(str(f))
    np.testing.assert_array_equal(np.fromfile(str(f), dtype=x.dtype), d.get().reshape(-1))
    same_error(lambda: dg.asarray(np.array(1.0, dtype)).view(np.int8)
               if np.dtype(dtype).itemsize != 1 else dg.ones(()).view(np.int8),
               lambda: np.array(1.0, dtype).view(np.int8) if np.dtype(dtype).itemsize != 1
               else np.ones(()).view(np.int8))
    if x.itemsize > 1:
        same_error(lambda: d[:, ::2].view(np.uint8), lambda: x[:, ::2].view(np.uint8))


def test_pickle_methods(tmp_path):
    import pickle
    d = dg.asarray(values("f8", (3, 4)))
    same(pickle.loads(pickle.dumps(d)), d.get())
    same(pickle.loads(d.dumps()), d.get())
    assert isinstance(pickle.loads(d.dumps()), dg.DistributedArray)
    d.dump(str(tmp_path / "d.pkl"))
    with open(tmp_path / "d.pkl", "rb") as f:
        same(pickle.load(f), d.get())


def test_argsort_of_0d():
    for kw in ({}, {"axis": None}, {"axis": 0}, {"kind": "stable"}):
        like_numpy(lambda: dg.asarray(np.array(3.0)).argsort(**kw),
                   lambda: np.array(3.0).argsort(**kw), str(kw))
        like_numpy(lambda: np.argsort(dg.asarray(np.array(3.0)), **kw),
                   lambda: np.argsort(np.array(3.0), **kw), str(kw))
    same_error(lambda: np.argsort(dg.asarray(np.array(3.0)), axis=5),
               lambda: np.argsort(np.array(3.0), axis=5))
