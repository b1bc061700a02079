"""How ufuncs and operators take their operands: every operator with its
reflected and in-place form, scalars and host arrays in any position,
broadcasting, out=, where=, dtype=, casting=, operands of different layouts,
and NumPy's errors."""
import operator

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.lshift, operator.rshift, operator.and_,
          operator.or_, operator.xor, operator.lt, operator.le, operator.eq, operator.ne,
          operator.gt, operator.ge, divmod]
INPLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv,
           operator.ifloordiv, operator.imod, operator.ipow, operator.ilshift,
           operator.irshift, operator.iand, operator.ior, operator.ixor]


def same(got, want, transcendental=False):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, transcendental)
        return
    g = got.get() if isinstance(got, dg.DistributedArray) else np.asarray(got)
    assert g.dtype == np.asarray(want).dtype, (g.dtype, np.asarray(want).dtype)
    if g.dtype.kind in "fc" and transcendental:
        # pow of floats: the device's libm, within 4 ulp of NumPy's
        w = np.asarray(want)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        if g.dtype.kind == "c":
            g, w = g.view(g.real.dtype), w.view(w.real.dtype)
            ok = ~np.isnan(w)
        np.testing.assert_array_max_ulp(g[ok], w[ok], maxulp=4)
        return
    np.testing.assert_array_equal(g, want)


def outcome(f, *args):
    try:
        with np.errstate(all="ignore"):
            return f(*args), None
    except Exception as e:  # noqa: BLE001 - we compare NumPy's exception type
        return None, e


def check_like_numpy(f, np_args, dg_args):
    want, werr = outcome(f, *np_args)
    if werr is not None:
        with pytest.raises(type(werr)):
            with np.errstate(all="ignore"):
                f(*dg_args)
        return
    with np.errstate(all="ignore"):
        got = f(*dg_args)
    same(got, want, transcendental=f in (operator.pow, operator.ipow))


@pytest.mark.parametrize("op", BINOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dta, dtb", [("i8", "i8"), ("f8", "f4"), ("i1", "u2"),
                                      ("u1", "f2"), ("c8", "f8"), ("?", "?"), ("u8", "i8")])
def test_binary_operators(op, dta, dtb, ndev):
    rng = np.random.default_rng(1)
    x = (rng.integers(-9, 10, (6, 5))).astype(dta)
    y = (rng.integers(1, 5, (6, 5))).astype(dtb)
    for _, m in maps_for(x.shape, ndev)[:4]:
        a = dg.distributed_array(x, m)
        b = dg.distributed_array(y, m)
        check_like_numpy(op, (x, y), (a, b))
        check_like_numpy(op, (x, y), (a, y))         # NumPy array on the right
        check_like_numpy(op, (x, y), (x, b))         # NumPy array on the left
        check_like_numpy(op, (x, 3), (a, 3))         # Python scalars, both sides
        check_like_numpy(op, (2.5, y), (2.5, b))
        check_like_numpy(op, (x, np.float32(2)), (a, np.float32(2)))
        check_like_numpy(op, (np.int16(3), y), (np.int16(3), b))
        check_like_numpy(op, (x, np.array(2, np.int8)), (a, np.array(2, np.int8)))


@pytest.mark.parametrize("op", INPLACE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dta, other", [("i8", 3), ("f4", 2.5), ("i2", np.arange(5)),
                                        ("f8", "self"), ("u1", 1.5), ("c16", 1j),
                                        ("?", 2), ("c8", 0.5), ("f2", -1), ("i4", 2)])
def test_inplace_operators(op, dta, other, ndev):
    x = (np.arange(30).reshape(6, 5) % 7 + 1).astype(dta)
    m = maps_for(x.shape, ndev)[3][1]
    a = dg.distributed_array(x, m)
    y = x.copy()
    o_np = y if isinstance(other, str) else other
    o_dg = a if isinstance(other, str) else other
    want, werr = outcome(op, y, o_np)
    if werr is not None:
        with pytest.raises(type(werr)):
            with np.errstate(all="ignore"):
                op(a, o_dg)
        np.testing.assert_array_equal(a.get(), x)    # unchanged after the error
        return
    before = a
    with np.errstate(all="ignore"):
        a = op(a, o_dg)
    assert a is before
    same(a, want)
    assert a.index_map == dg.distributed_array(x, m).index_map


@pytest.mark.parametrize("op", [operator.neg, operator.pos, abs, operator.invert])
@pytest.mark.parametrize("dt", ["i4", "f8", "?", "u2", "c8", "f2"])
def test_unary_operators(op, dt):
    x = (np.arange(-5, 5)).astype(dt)
    check_like_numpy(op, (x,), (dg.asarray(x),))


def test_broadcasting(ndev):
    x = np.arange(24.0).reshape(4, 6)
    row = np.arange(6.0)
    col = np.arange(4.0).reshape(4, 1)
    for _, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        same(a + row, x + row)
        same(row * a, row * x)
        same(a - col, x - col)
        same(dg.asarray(col) + dg.asarray(row), col + row)
        same(a + dg.asarray(row), x + row)
        same(dg.asarray(row) / a, row / x)
        r = dg.distributed_array(x, m) + 1
        assert r.index_map == a.index_map
    with pytest.raises(ValueError, match="could not be broadcast"):
        dg.asarray(x) + np.arange(5.0)
    with pytest.raises(ValueError, match="could not be broadcast"):
        np.add(dg.asarray(x), dg.asarray(np.ones((3, 6))))


def test_result_takes_first_distributed_layout(ndev):
    x = np.arange(40.0).reshape(8, 5)
    maps = maps_for(x.shape, ndev)
    for _, ma in maps:
        for _, mb in maps:
            a = dg.distributed_array(x, ma)
            b = dg.distributed_array(x * 3, mb)
            r = a * b
            assert r.index_map == a.index_map
            same(r, x * (x * 3))
            r2 = np.add(x, b)                    # the first distributed operand is b
            assert r2.index_map == b.index_map
            same(r2, x + x * 3)


def test_out_where_dtype_casting(ndev):
    x = np.arange(12.0).reshape(3, 4) - 5
    y = np.arange(12.0).reshape(3, 4)[::-1].copy()
    m = maps_for(x.shape, ndev)[2][1]
    a, b = dg.distributed_array(x, m), dg.distributed_array(y, m)
    o = dg.zeros((3, 4))
    r = np.add(a, b, out=o)
    assert r is o
    same(o, x + y)
    o2 = dg.zeros((3, 4), dtype=np.float32, index_map={0: slice(None)})
    np.multiply(a, b, out=(o2,))
    same(o2, (x * y).astype(np.float32))
    mask = x > 0
    o3 = dg.full((3, 4), -1.0)
    np.subtract(a, b, out=o3, where=dg.asarray(mask))
    want = np.full((3, 4), -1.0)
    np.subtract(x, y, out=want, where=mask)
    same(o3, want)
    o4 = dg.full((3, 4), 7.0)
    np.sqrt(a, out=o4, where=mask)
    want = np.full((3, 4), 7.0)
    np.sqrt(x, out=want, where=mask)
    same(o4, want)
    same(np.add(a, b, dtype=np.float32), np.add(x, y, dtype=np.float32))
    ia = dg.asarray(np.arange(5, dtype=np.int8))
    same(np.add(ia, ia, dtype=np.float64), np.add(np.arange(5, dtype=np.int8),
                                                  np.arange(5, dtype=np.int8), dtype=np.float64))
    # NumPy output on a DistributedArray computation
    host_out = np.zeros((3, 4))
    r = np.add(a, b, out=host_out)
    assert r is host_out
    np.testing.assert_array_equal(host_out, x + y)
    # casting
    io = dg.zeros((3, 4), dtype=np.int64)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        np.add(a, b, out=io)
    np.add(a, b, out=io, casting="unsafe")
    same(io, (x + y).astype(np.int64))
    with pytest.raises(TypeError):
        np.add(a, b, casting="no", dtype=np.float32)
    # divmod with two outs
    q, r = dg.zeros((3, 4)), dg.zeros((3, 4))
    res = np.divmod(a, 3.0, out=(q, r))
    assert res[0] is q and res[1] is r
    same(q, np.divmod(x, 3.0)[0])
    same(r, np.divmod(x, 3.0)[1])


def test_resolution_kept_per_casting(ndev):
    """The same operand dtypes under each casting= (and the default), asked
    in turn and again: each call gets NumPy's answer for its own casting
    (the resolved loops are kept per dtypes and casting), and casting= that
    is not one of NumPy's names gets NumPy's error every time."""
    x = np.arange(12.0).reshape(3, 4)
    a = dg.asarray(x)
    want_err = {}
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        try:
            np.add(x, x, out=np.zeros((3, 4), np.int64), casting=casting)
            want_err[casting] = None
        except TypeError as e:
            want_err[casting] = type(e)
    assert want_err["unsafe"] is None and want_err["same_kind"] is not None
    for _ in range(2):
        for casting in ("unsafe", None, "no", "same_kind", "equiv", "safe", "unsafe"):
            io = dg.zeros((3, 4), dtype=np.int64)
            kw = {} if casting is None else {"casting": casting}
            err = want_err["same_kind" if casting is None else casting]
            if err is None:
                np.add(a, a, out=io, **kw)
                same(io, (x + x).astype(np.int64))
            else:
                with pytest.raises(err):
                    np.add(a, a, out=io, **kw)
        for bad in ("Unsafe", "unsafe ", 3):
            with pytest.raises((ValueError, TypeError)) as want:
                np.add(x, x, casting=bad)
            with pytest.raises(want.type):
                np.add(a, a, casting=bad)
    # a weak Python scalar and a float32 array, then a float64 one: two answers
    f4 = dg.asarray(x.astype(np.float32))
    for _ in range(2):
        same(f4 + 2.5, x.astype(np.float32) + 2.5)
        same(a + 2.5, x + 2.5)
        same(np.multiply(f4, 3, dtype=np.float64), np.multiply(x.astype(np.float32), 3,
                                                              dtype=np.float64))


def test_bad_out(ndev):
    a = dg.arange(6.0)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        np.add(a, a, out=dg.zeros(5))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        np.add(a, a, out=dg.zeros(3))
    with pytest.raises(TypeError):
        np.add(a, a, out=[1, 2])
    with pytest.raises(TypeError, match="bogus"):
        np.add(a, a, bogus=1)
    with pytest.raises(TypeError, match="bool"):
        np.add(a, a, where=dg.arange(6))


def test_numpy_errors():
    b = dg.asarray(np.array([True, False]))
    with pytest.raises(TypeError, match="boolean negative"):
        -b
    f = dg.asarray(np.ones(3))
    with pytest.raises(TypeError, match="bitwise_and"):
        f & f
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        dg.asarray(np.ones(3, np.int8)) + 300
    with pytest.raises(OverflowError):
        dg.asarray(np.ones(3, np.uint8)) - (-1)
    with pytest.raises(TypeError):
        dg.asarray(np.ones(3)) + "abc"
    with pytest.raises(TypeError):
        dg.asarray(np.ones(3)) + np.array(["a", "b", "c"])
    with pytest.raises(TypeError):
        dg.asarray(np.ones(3)) + object()


def test_weak_scalars_follow_nep50():
    for dt in ["i1", "u1", "f2", "f4", "i8", "c8"]:
        x = np.ones(3, dtype=dt)
        for s in [1, 2.0, 1j, True, np.float64(2), np.int64(3)]:
            check_like_numpy(operator.add, (x, s), (dg.asarray(x), s))
            check_like_numpy(operator.mul, (s, x), (s, dg.asarray(x)))


def test_zero_dim_and_empty():
    s = dg.asarray(np.array(3.0))
    same(s + 1, np.array(3.0) + 1)
    same(np.sin(s), np.sin(np.array(3.0)))
    e = dg.asarray(np.zeros((0, 3)))
    same(e + 1, np.zeros((0, 3)) + 1)
    same(dg.asarray(np.zeros((2, 0))) * np.zeros((2, 0)), np.zeros((2, 0)))


def test_op_mode_operands_are_combined_first(ndev):
    x = np.arange(8.0)
    m = {0: slice(0, 6), ndev - 1: slice(3, None)} if ndev > 1 else \
        {0: [slice(0, 6), slice(3, None)]}
    s = dg.distributed_array(x, m, mode="sum")  # overlaps: x in the first chunk, 0 in the next
    want = x.copy()
    same(s + 0, want)
    same(np.multiply(s, 2), want * 2)
    out = dg.distributed_array(x, m).change_mode("max")
    np.add(out, 1.0, out=out)
    assert out.mode == "replica"
    same(out, x + 1)


def test_ufunc_methods_without_loops_run_through_numpy():
    a = dg.arange(4.0)
    with pytest.warns(dg.FallbackWarning, match="numpy.add.outer"):
        o = np.add.outer(a, a)
    assert isinstance(o, dg.DistributedArray)
    same(o, np.add.outer(np.arange(4.0), np.arange(4.0)))
    with pytest.warns(dg.FallbackWarning, match="numpy.add.at"):
        np.add.at(a, [0, 0, 2], 1)                     # written back into a
    want = np.arange(4.0)
    np.add.at(want, [0, 0, 2], 1)
    same(a, want)
    old = dg.config.fallback
    dg.config.fallback = "raise"
    try:
        with pytest.raises(TypeError, match="numpy.add.outer"):
            np.add.outer(a, a)
    finally:
        dg.config.fallback = old
