"""Every elementwise ufunc on every dtype, compared with NumPy.

Each ufunc of DG_UFUNC_LIST (src/core/dg_ufunc.h) runs on inputs of every
numeric dtype that hold special values (0, -0.0, +-inf, nan, the extremes of
integer types, values near overflow, mixed signs), on 1 and 4 devices and on
several layouts.  Results must equal NumPy's: exactly (NaN equal to NaN, the
sign of zero checked) for arithmetic, comparisons, integer ops, rounding,
classification and casts; within 4 ulp, with NaN and inf at the same places,
for the transcendental functions.  Where NumPy raises for the dtypes, dgarray
must raise the same kind of exception.  Also: the two-output ufuncs, mixed
dtypes, Python and NumPy scalars on either side, 0-d arrays and operators.
"""
import os
import re
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

# ---- what is tested -----------------------------------------------------------------------

_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src",
                       "core", "dg_ufunc.h")


def _ufunc_list():
    """(name, nin, nout) of DG_UFUNC_LIST, the one list of dgarray's ufuncs."""
    with open(_HEADER) as f:
        text = f.read()
    body = text[text.index("#define DG_UFUNC_LIST"):text.index("typedef enum dg_ufunc")]
    return [(n, int(i), int(o)) for n, i, o in re.findall(r"X\((\w+), (\d), (\d)\)", body)
            if n != "cast"]


UFUNCS = _ufunc_list()
UFUNC_NAMES = [u[0] for u in UFUNCS]
NIN = {u[0]: u[1] for u in UFUNCS}

DTYPES = [np.dtype(c) for c in
          ("?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16")]

# Compared within MAXULP (their results come from a math library, which differs
# between NumPy's SIMD code, glibc and CUDA); everything else bit for bit.
TRANSCENDENTAL = {
    "power", "float_power", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "logaddexp", "logaddexp2", "sin", "cos", "tan", "arcsin", "arccos",
    "arctan", "arctan2", "hypot", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh"}
# ... and, for complex inputs, these too (built on hypot / the C library).
TRANSCENDENTAL_COMPLEX = {"sqrt", "sign"}
MAXULP = 4
# NumPy's own sign of a zero result of these depends on its code path.
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin"}

LAYOUTS = ("default", "uneven", "strided", "replicated")


# ---- inputs ---------------------------------------------------------------------------------

def specials(dtype):
    """Special values of `dtype` followed by a few ordinary ones (1-d)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(dt.num)
    if dt.kind == "b":
        return np.array([False, True, True, False])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        bits = 8 * dt.itemsize
        vals = [0, 1, 2, 3, 7, 100, bits - 1, bits, info.max, info.max - 1]
        if dt.kind == "i":
            vals += [-1, -2, -7, -100, info.min, info.min + 1]
        vals += [int(v) for v in rng.integers(-20 if dt.kind == "i" else 0, 50, 4)]
        return np.array([v for v in dict.fromkeys(vals) if info.min <= v <= info.max], dt)
    if dt.kind == "f":
        fi = np.finfo(dt)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 3.0, -7.25, 10.0, np.pi, 1e-3,
                np.inf, -np.inf, np.nan, float(fi.max), -float(fi.max), float(fi.tiny),
                -float(fi.smallest_subnormal), float(fi.eps)]
        vals += list(rng.standard_normal(4) * 3)
        with np.errstate(all="ignore"):
            return np.array(vals).astype(dt)
    p = [0.0, -0.0, 1.0, -1.5, 0.5, np.inf, -np.inf, np.nan]
    re_, im_ = np.meshgrid(p, p, indexing="ij")
    out = np.empty(re_.size + 8, dt)
    out.real[:re_.size] = re_.ravel()
    out.imag[:re_.size] = im_.ravel()
    out.real[re_.size:] = rng.standard_normal(8) * 2
    out.imag[re_.size:] = rng.standard_normal(8) * 2
    return out


def grid(a, b):
    """Every pair (a[i], b[j]) as two C-contiguous 2-d arrays of shape (len(a), len(b))."""
    return (np.ascontiguousarray(np.repeat(a[:, None], len(b), axis=1)),
            np.ascontiguousarray(np.repeat(b[None, :], len(a), axis=0)))


def unary_input(dtype):
    """The specials as a 2-d array (rows of 4), padded with zeros."""
    x = specials(dtype)
    pad = (-len(x)) % 4
    return np.concatenate([x, np.zeros(pad, x.dtype)]).reshape(-1, 4)


def inputs_for(name, dtype):
    """Inputs of `name` with every input of `dtype` (2-d NumPy arrays)."""
    if NIN[name] == 1:
        return [unary_input(dtype)]
    a = specials(dtype)
    b = a
    if name == "power" and np.dtype(dtype).kind == "i":
        b = b[b >= 0]  # NumPy raises for negative integer exponents: see the test below
    return list(grid(a, b))


def index_map(layout, shape, ndev):
    """The index map of `layout` (a name of _maps.maps_for) for `shape`."""
    return dict(maps_for(shape, ndev))[layout]


def distribute(x, layout, ndev):
    return dg.distributed_array(x, index_map(layout, x.shape, ndev))


# ---- comparison -----------------------------------------------------------------------------

def _as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def _host(r):
    return r.get() if isinstance(r, dg.DistributedArray) else np.asarray(r)


def _check_part(got, ref, approx, zero_sign, what):
    """Real arrays of the same dtype: NaN where NumPy has NaN, then exact or ulp."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=f"{what}: NaN positions")
    ok = ~np.isnan(ref)
    g, r = got[ok], ref[ok]
    if approx:
        np.testing.assert_array_equal(np.isinf(g), np.isinf(r), err_msg=f"{what}: inf positions")
        inf = np.isinf(r)
        np.testing.assert_array_equal(g[inf], r[inf], err_msg=f"{what}: infinities")
        if (~inf).any():
            np.testing.assert_array_max_ulp(g[~inf], r[~inf], maxulp=MAXULP)
        return
    np.testing.assert_array_equal(g, r, err_msg=what)
    if zero_sign:
        z = r == 0
        np.testing.assert_array_equal(np.signbit(g[z]), np.signbit(r[z]),
                                      err_msg=f"{what}: sign of zero")


def _power_condition(args, shape):
    """1 + |b log a| for power(a, b): how much exp(b log a) magnifies the rounding
    errors of its steps (NumPy's complex power is no more accurate than that)."""
    a, b = (np.asarray(x, dtype=np.complex128) for x in args)
    with np.errstate(all="ignore"):
        w = np.abs(b * np.log(a))
    return np.broadcast_to(1.0 + np.where(np.isfinite(w), w, 0.0), shape)


def _check_complex_power(got, ref, args, what):
    """Complex power: NaN and inf where NumPy has them, component by component;
    the finite results within MAXULP * (1 + |b log a|) ulp of |ref|.  Per
    component ulp mean nothing where a component cancels: there NumPy's own
    result is off by hundreds of its ulp (mpmath says so), and the GPU's, with
    another libm, by as many the other way."""
    eps = np.finfo(ref.dtype).eps
    cond_all = _power_condition(args, ref.shape)
    for part in ("real", "imag"):
        g, r = getattr(got, part), getattr(ref, part)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(r), err_msg=f"{what}: NaN ({part})")
        np.testing.assert_array_equal(np.isinf(g), np.isinf(r), err_msg=f"{what}: inf ({part})")
        # the sign of an overflow is cos or sin of b log a: known where that is
        sure = np.isinf(r) & (cond_all * eps < 1e-3)
        np.testing.assert_array_equal(g[sure], r[sure], err_msg=f"{what}: infinities ({part})")
    fin = np.isfinite(ref.real) & np.isfinite(ref.imag)
    cond = cond_all[fin]
    err = np.abs(got[fin].astype(np.complex128) - ref[fin])
    tol = MAXULP * eps * cond * np.abs(ref[fin]) + np.finfo(ref.dtype).smallest_subnormal
    bad = err > tol
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} beyond {MAXULP} ulp x (1 + |b log a|)"
                           f" of |ref|: got {got[fin][bad][:4]}, NumPy {ref[fin][bad][:4]}")


def assert_matches(got, ref, name="", approx=None, args=None):
    """`got` (DistributedArray(s) or scalars) equals NumPy's `ref` in dtype, shape and
    values (exact or within MAXULP as `approx` or the ufunc's kind says; `args`, the
    NumPy inputs, give complex power its condition number)."""
    got, ref = _as_tuple(got), _as_tuple(ref)
    assert len(got) == len(ref), f"{name}: {len(got)} outputs, NumPy has {len(ref)}"
    for k, (g, r) in enumerate(zip(got, ref)):
        g, r = _host(g), np.asarray(r)
        what = f"{name} output {k}"
        assert g.dtype == r.dtype, f"{what}: dtype {g.dtype}, NumPy {r.dtype}"
        assert g.shape == r.shape, f"{what}: shape {g.shape}, NumPy {r.shape}"
        if r.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, r, err_msg=what)
            continue
        ap = approx
        if ap is None:
            ap = name in TRANSCENDENTAL or (r.dtype.kind == "c" and name in TRANSCENDENTAL_COMPLEX)
        zs = name not in ZERO_SIGN_FREE
        if r.dtype.kind == "c" and name in ("power", "float_power") and args is not None:
            _check_complex_power(g, r, args, what)
        elif r.dtype.kind == "c":
            _check_part(g.real, r.real, ap, zs, what + " (real)")
            _check_part(g.imag, r.imag, ap, zs, what + " (imag)")
        else:
            _check_part(g, r, ap, zs, what)


# NumPy before numpy/numpy#31475 (2.5) returned x from float16 nextafter(x, y)
# when x == y, so nextafter(+0, -0) was +0; dgarray follows C99 and the fix (y).
_OLD_HALF_NEXTAFTER = not np.signbit(np.nextafter(np.float16(0), np.float16(-0.0)))


def _fixed_nextafter(x, y, **kw):
    r = np.nextafter(x, y, **kw)
    xs, ys = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    if r.dtype == np.float16 and _OLD_HALF_NEXTAFTER and np.ndim(r):
        eq = (xs == ys) & (r == 0)
        r[eq] = ys[eq]
    return r


def numpy_or_error(f, *args, **kw):
    """(result, None) or (None, the builtin exception class NumPy raised)."""
    if f is np.nextafter:
        f = _fixed_nextafter
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kw), None
        except Exception as e:  # noqa: BLE001 - any NumPy error is the expectation
            return None, next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def run_dg(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kw)


def check_call(f, np_args, dg_args, name, label=None, **kw):
    """f on dgarray arguments behaves as f on NumPy arguments (`name`: the ufunc,
    which decides exact or ulp comparison; `label`: what a failure reports)."""
    ref, err = numpy_or_error(f, *np_args, **kw)
    if err is not None:
        with pytest.raises(err):
            run_dg(f, *dg_args, **kw)
        return
    got = run_dg(f, *dg_args, **kw)
    try:
        assert_matches(got, ref, name, args=np_args)
    except AssertionError as e:
        raise AssertionError(f"{label or name}: {e}") from None


# ---- fixtures -------------------------------------------------------------------------------

@pytest.fixture(params=LAYOUTS)
def layout(request, ndev):
    """A layout: a callable shape -> index map on `ndev` devices (name in .name)."""
    def make(shape):
        return index_map(request.param, shape, ndev)
    make.name = request.param
    return make


@pytest.fixture(autouse=True)
def _no_fallback():
    """Every ufunc here must run on the devices, not through NumPy's fallback."""
    cfg = getattr(dg, "config", None)
    if cfg is None or not hasattr(cfg, "fallback"):
        yield
        return
    old = cfg.fallback
    cfg.fallback = "raise"
    try:
        yield
    finally:
        cfg.fallback = old


# ---- every ufunc x every dtype --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_ufunc_matches_numpy(name, dtype, ndev):
    """Every ufunc of every dtype in every layout (the layouts looped here,
    not parametrized: 2,380 tests rather than 9,520, the same calls)."""
    xs = inputs_for(name, dtype)
    for lay in LAYOUTS:
        ds = [dg.distributed_array(x, index_map(lay, x.shape, ndev)) for x in xs]
        try:
            check_call(getattr(np, name), xs, ds, name)
        except AssertionError as e:
            raise AssertionError(f"layout {lay}: {e}") from None


@pytest.mark.parametrize("name", ["add", "divmod", "arctan2", "less", "bitwise_xor",
                                  "ldexp", "copysign"])
def test_operands_of_different_layouts(name, layout, ndev):
    if name == "ldexp":
        a, b = grid(specials("f8"), specials("i4"))
    else:
        a, b = inputs_for(name, np.int16 if name == "bitwise_xor" else np.float64)
    other = "rows" if layout.name == "strided" else "strided"
    da = dg.distributed_array(a, layout(a.shape))
    db = distribute(b, other, ndev)
    check_call(getattr(np, name), [a, b], [da, db], name)
    check_call(getattr(np, name), [b, a], [db, da], name)


# ---- multi-output, mixed dtypes, scalars, 0-d -----------------------------------------------

@pytest.mark.parametrize("dtype", ["i1", "u4", "i8", "f2", "f4", "f8"])
def test_divmod_tuple(dtype, ndev):
    a, b = grid(specials(dtype), specials(dtype))
    da, db = distribute(a, "rows", ndev), distribute(b, "rows", ndev)
    q, r = run_dg(np.divmod, da, db)
    ref = numpy_or_error(np.divmod, a, b)[0]
    assert isinstance(q, dg.DistributedArray) and isinstance(r, dg.DistributedArray)
    assert_matches((q, r), ref, "divmod")
    assert_matches(run_dg(divmod, da, db), ref, "divmod")


@pytest.mark.parametrize("name", ["modf", "frexp"])
@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_two_outputs(name, dtype, ndev):
    x = unary_input(dtype)
    res = run_dg(getattr(np, name), distribute(x, "uneven", ndev))
    assert isinstance(res, tuple) and len(res) == 2
    assert all(isinstance(r, dg.DistributedArray) for r in res)
    assert_matches(res, numpy_or_error(getattr(np, name), x)[0], name)


@pytest.mark.parametrize("edt", ["i4", "i8", "i2", "u1"])
@pytest.mark.parametrize("fdt", ["f2", "f4", "f8"])
def test_ldexp_integer_exponents(fdt, edt, ndev):
    m = specials(fdt)
    info = np.iinfo(edt)
    e = np.array([v for v in (0, 1, -1, 3, -30, 127, -149, 1100, -1100, 2**40, -2**40,
                              info.max, info.min) if info.min <= v <= info.max], edt)
    a, b = grid(m, e)
    check_call(np.ldexp, [a, b], [distribute(a, "rows", ndev), distribute(b, "strided", ndev)],
               "ldexp")


MIXED = [("i1", "f4"), ("u1", "i1"), ("i2", "u4"), ("u8", "i8"), ("i8", "f2"),
         ("f2", "i4"), ("?", "i1"), ("c8", "f8"), ("f4", "c8"), ("u8", "f4"),
         ("i4", "f8"), ("?", "f2"), ("u2", "c16")]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "floor_divide",
                                  "remainder", "power", "maximum", "fmin", "less_equal",
                                  "equal", "arctan2", "logaddexp", "bitwise_or",
                                  "left_shift", "heaviside", "copysign", "gcd"])
@pytest.mark.parametrize("dts", MIXED, ids="-".join)
def test_mixed_dtypes(name, dts, ndev):
    """The result dtype (and values) of NumPy's type promotion."""
    a0, b0 = specials(dts[0]), specials(dts[1])
    if name == "power":  # either may be the exponent: see test_negative_integer_power
        a0, b0 = a0[a0.real >= 0], b0[b0.real >= 0]
    a, b = grid(a0, b0)
    f = getattr(np, name)
    da, db = distribute(a, "uneven", ndev), distribute(b, "default", ndev)
    check_call(f, [a, b], [da, db], name)
    check_call(f, [b, a], [db, da], name)


SCALARS = [0, 1, -3, 7, 300, 2**40, 2.5, -0.0, float("inf"), float("nan"), 1.5 - 2j, True,
           np.int8(-5), np.uint8(200), np.int64(-2**40), np.uint64(2**63), np.float16(0.5),
           np.float32(-1.25), np.float64(1e300), np.complex64(1j), np.bool_(False)]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "floor_divide",
                                  "remainder", "power", "maximum", "greater", "arctan2",
                                  "bitwise_and", "right_shift", "fmod", "hypot"])
@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i8", "u8", "f2", "f4", "c8"])
def test_scalars_either_side(name, dtype, ndev):
    """Python and NumPy scalars on either side follow NumPy's (NEP 50) promotion."""
    x = unary_input(dtype)
    d = distribute(x, "strided", ndev)
    f = getattr(np, name)
    for s in SCALARS:
        if name == "power" and np.dtype(dtype).kind in "biu" and np.real(s) < 0:
            continue
        check_call(f, [x, s], [d, s], name, f"{name}(x, {s!r})")
        if name == "power" and np.dtype(dtype).kind in "iu" and (x < 0).any():
            continue
        check_call(f, [s, x], [s, d], name, f"{name}({s!r}, x)")


@pytest.mark.parametrize("dtype", ["i4", "f8", "c16", "f2"])
def test_zero_dim(dtype, ndev):
    x = unary_input(dtype)
    d = distribute(x, "rows", ndev)
    for v in specials(dtype)[:6]:
        z = np.asarray(v)
        dz = dg.asarray(z)
        assert dz.shape == ()
        for name in ["add", "subtract", "multiply", "maximum", "less", "arctan2"]:
            f = getattr(np, name)
            check_call(f, [z, z], [dz, dz], name, f"{name}({z!r}, {z!r})")
            check_call(f, [z, x], [dz, d], name, f"{name}({z!r}, x)")
            check_call(f, [x, z], [d, dz], name, f"{name}(x, {z!r})")
        for name in ["negative", "sqrt", "isnan", "exp"]:
            check_call(getattr(np, name), [z], [dz], name, f"{name}({z!r})")


def test_negative_integer_power(ndev):
    """NumPy raises ValueError for a negative integer exponent.  The loops cannot
    raise (they return the squaring loop's value), so the check is the caller's."""
    x = np.array([2, 3, -4], np.int32)
    e = np.array([1, -1, 2], np.int32)
    ref, err = numpy_or_error(np.power, x, e)
    assert err is ValueError
    dx, de = distribute(x, "default", ndev), distribute(e, "uneven", ndev)
    for args in ((dx, de), (dx, e), (dx, -2), (x, de), (dx, np.int8(-1))):
        with pytest.raises(ValueError, match="negative integer powers"):
            run_dg(np.power, *args)
        with pytest.raises(ValueError, match="negative integer powers"):
            args[0] ** args[1]
    np.testing.assert_array_equal((dx ** np.abs(de)).get(), x ** np.abs(e))
    np.testing.assert_array_equal((dx ** 2.0 ** -1).get(), x ** 0.5)  # float exponent: fine


# ---- operators ------------------------------------------------------------------------------

BINOPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b,
    "**": lambda a, b: a ** b, "divmod": divmod, "&": lambda a, b: a & b,
    "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}
UNOPS = {"-": lambda a: -a, "+": lambda a: +a, "abs": abs, "~": lambda a: ~a}
OP_UFUNC = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide",
            "//": "floor_divide", "%": "remainder", "**": "power", "divmod": "divmod"}


@pytest.mark.parametrize("op", list(BINOPS))
@pytest.mark.parametrize("dtype", ["?", "i1", "u4", "i8", "f2", "f8", "c8"])
def test_binary_operators(op, dtype, ndev):
    a0 = specials(dtype)
    b0 = a0[a0 >= 0] if op == "**" and np.dtype(dtype).kind == "i" else a0
    a, b = grid(a0, b0)
    da, db = distribute(a, "uneven", ndev), distribute(b, "replicated", ndev)
    f = BINOPS[op]
    check_call(f, [a, b], [da, db], OP_UFUNC.get(op, op), f"a {op} b")
    for s in (2, 0.5, -1, 2.0, -1.0, np.float64(0.5), 3):
        if op == "**" and np.dtype(dtype).kind in "biu" and isinstance(s, int) and s < 0:
            continue  # NumPy raises: see test_negative_integer_power
        check_call(f, [a, s], [da, s], OP_UFUNC.get(op, op), f"a {op} {s!r}")


@pytest.mark.parametrize("op", list(UNOPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_unary_operators(op, dtype, ndev):
    x = unary_input(dtype)
    check_call(UNOPS[op], [x], [distribute(x, "strided", ndev)], op)


# ---- casts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("to", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("src", DTYPES, ids=lambda d: d.name)
def test_astype(src, to, ndev):
    """Casts of values the target can hold exactly or round (in range: C leaves
    float -> int of NaN, inf and out-of-range values undefined)."""
    x = unary_input(src)
    if src.kind in "fc" and to.kind in "iu":
        v = x.real if src.kind == "c" else x
        info = np.iinfo(to)
        with np.errstate(all="ignore"):
            ok = np.isfinite(v) & (v > float(info.min) - 1) & (v < float(info.max) + 1)
        x = np.where(ok, x, 0).astype(src)
    d = distribute(x, "uneven", ndev)
    ref, _ = numpy_or_error(lambda a: a.astype(to), x)
    assert_matches(run_dg(lambda a: a.astype(to), d), ref, "cast", approx=False)


@pytest.mark.parametrize("dtype_class", [np.dtypes.Float64DType, np.dtypes.Float32DType,
                                         np.dtypes.Float16DType])
def test_dtype_given_as_a_dtype_class(dtype_class):
    """dtype= may name a DType class (NEP 42), as NumPy's histogram passes
    type(dt) since NumPy 2.5: the result is NumPy's, values and dtype."""
    x, y = np.arange(6.0), np.arange(6.0)[::-1].copy()
    want = np.subtract(x, y, dtype=dtype_class)
    got = np.subtract(dg.asarray(x), dg.asarray(y), dtype=dtype_class)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    got = np.add(dg.asarray(x), 1, signature=(None, None, dtype_class))
    np.testing.assert_array_equal(got.get(), np.add(x, 1, signature=(None, None, dtype_class)))
