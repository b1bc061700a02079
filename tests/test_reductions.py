"""Reductions against NumPy: every reduction x axis x dtype x layout.

Layouts: split on the reduced axis (rows, uneven, strided), split on another
(cols), replicated, overlapping blocks, and an input in SUM mode.  Results
must have NumPy's dtype and shape; integer, bool, max/min and arg results
exactly NumPy's values; float sums within a tolerance scaled by the sum of
magnitudes (the order of additions differs from NumPy's pairwise one).
"""
import gc
import sys
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

DTYPES = ["?", "i1", "u2", "i4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
AXES = [None, 0, 1, -1, (0, 1)]
LAYOUTS = ["rows", "uneven", "strided", "cols", "replicated", "overlap", "sum_mode"]
FUNCS = ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "ptp",
         "argmax", "argmin", "nansum", "nanprod", "nanmax", "nanmin", "nanmean"]
EXACT = {"max", "min", "any", "all", "argmax", "argmin", "nanmax", "nanmin", "ptp"}


def data(dtype, shape=(7, 6), nan=False):
    """Values of `dtype` with ties and negative numbers (nan=True: NaNs too,
    in every row but one whole row).  Infinities: test_infinities_match_numpy."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(7 + dt.num)
    if dt.kind == "b":
        x = rng.integers(0, 2, shape).astype(bool)
        x[0] = True
        return x
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -5
        return rng.integers(lo, 6, shape).astype(dt)
    x = np.round(rng.standard_normal(shape) * 3, 1)
    if dt.kind == "c":
        x = x + 1j * np.round(rng.standard_normal(shape) * 3, 1)
    x = x.astype(dt)
    if nan:
        x.flat[::5] = np.nan
        x[-1] = np.nan
    return x


def distribute(x, layout, ndev):
    if layout == "sum_mode":
        return dg.distributed_array(x, {d: slice(None) for d in range(ndev)}).change_mode("sum")
    return dg.distributed_array(x, dict(maps_for(x.shape, ndev))[layout])


def numpy_or_error(f, *args, **kw):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kw), None
        except Exception as e:  # noqa: BLE001 - NumPy's error is the expectation
            return None, type(e)


def tolerance(dtype, name, x):
    dt = np.dtype(dtype)
    if dt.kind in "biu" and name not in ("mean", "var", "std", "nanmean"):
        return 0
    base = {"e": 2e-3, "f": 2e-6, "d": 1e-13, "F": 2e-6, "D": 1e-13}.get(dt.char, 1e-13)
    if name in ("mean", "var", "std", "nanmean") and dt.kind in "biu":
        base = 1e-13
    return base


def error_scale(x, name, r, kw):
    """Per result element: the sum of |x| over the elements it reduces (over
    their count for a mean), plus |initial| and 1: what the rounding of any
    order of additions scales with.  Scans get the sums of their whole
    slices; results that match no slicing of x, the whole array's sum."""
    a = np.abs(x.astype(np.complex128))
    a = np.where(np.isnan(a), 0.0, a)
    axis, wh = kw.get("axis"), kw.get("where", True)
    extra = abs(complex(kw.get("initial", 0) or 0)) + 1
    try:
        keep = r.ndim == x.ndim and axis is not None
        s = np.sum(a, axis=axis, where=wh, keepdims=keep)
        if name in ("mean", "nanmean"):
            have = ~np.isnan(x) if name == "nanmean" else np.ones(x.shape, bool)
            s = s / np.maximum(np.sum(have, axis=axis, where=wh, keepdims=keep), 1)
        return np.broadcast_to(s, r.shape).astype(np.float64) + extra
    except ValueError:
        return np.sum(a, dtype=np.float64) + extra


def assert_same(got, ref, name, dtype, x, kw=None):
    g = got.get() if isinstance(got, dg.DistributedArray) else np.asarray(got)
    r = np.asarray(ref)
    assert g.dtype == r.dtype, f"{name}: dtype {g.dtype}, NumPy {r.dtype}"
    assert g.shape == r.shape, f"{name}: shape {g.shape}, NumPy {r.shape}"
    tol = 0 if name in EXACT else tolerance(r.dtype if r.dtype.kind in "fc" else dtype, name, x)
    if tol == 0:
        np.testing.assert_array_equal(g, r, err_msg=name)
        return
    np.testing.assert_array_equal(np.isnan(g), np.isnan(r), err_msg=f"{name}: NaN positions")
    with np.errstate(all="ignore"):
        scale = error_scale(x, name, r, kw or {})
        if name in ("prod", "nanprod"):
            scale = np.abs(r).astype(np.float64) + 1
        if name in ("var", "std"):
            scale = np.abs(r).astype(np.float64) * 8 + 1e-6
        # a non-finite result (an overflowed product, say) must be matched exactly
        scale = np.where(np.isfinite(r), scale, 0.0)
        ok = ~np.isnan(r)
        err = np.abs(g[ok].astype(np.complex128) - r[ok].astype(np.complex128))
        lim = tol * (scale[ok] if np.ndim(scale) else scale)
        assert np.all((err <= lim) | (g[ok] == r[ok])), \
            f"{name}: got {g[ok][err > lim][:5]}, NumPy {r[ok][err > lim][:5]}"


def call(name, arr, **kw):
    return getattr(np, name)(arr, **kw)


def check(name, x, d, **kw):
    ref, err = numpy_or_error(call, name, x, **kw)
    if err is not None:
        with pytest.raises(err), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            call(name, d, **kw)
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = call(name, d, **kw)
    assert isinstance(got, dg.DistributedArray), f"{name}: returned {type(got).__name__}"
    assert_same(got, ref, name, x.dtype, x, kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, axis", [(n, a) for n in FUNCS for a in AXES
                                        if not (n.startswith("arg") and isinstance(a, tuple))],
                         ids=str)
def test_reduction_matches_numpy(name, dtype, axis, ndev):
    """Every reduction of every dtype along every axis in every layout (the
    layouts looped here, not parametrized: 1,826 tests rather than 12,782,
    the same calls)."""
    x = data(dtype, nan=name.startswith("nan") or name in ("argmax", "max"))
    for layout in LAYOUTS:
        d = distribute(x, layout, ndev)
        try:
            check(name, x, d, axis=axis)
            np.testing.assert_array_equal(d.get(), x)  # the input is unchanged
        except AssertionError as e:
            raise AssertionError(f"layout {layout}: {e}") from None


@pytest.mark.parametrize("name, axis", [(n, a) for n in ("sum", "mean", "max", "argmin", "var",
                                                           "any", "nansum")
                                        for a in (None, 0, 2, (0, 2), (1, 2))
                                        if not (n == "argmin" and isinstance(a, tuple))],
                         ids=str)
def test_keepdims_3d(name, axis, ndev):
    x = data("f8", (5, 4, 3))
    for layout, m in maps_for(x.shape, ndev):
        d = dg.distributed_array(x, m)
        for kd in (False, True):
            check(name, x, d, axis=axis, keepdims=kd)


@pytest.mark.parametrize("dtype", [None, "f4", "f8", "i8", "c16", "u1"])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std"])
def test_dtype_argument(name, dtype, ndev):
    x = data("i2", (6, 5))
    d = distribute(x, "rows", ndev)
    check(name, x, d, axis=0, dtype=dtype)
    check(name, x, d, dtype=dtype)


@pytest.mark.parametrize("ddof", [0, 1, 5, 7])
def test_var_std_ddof(ddof, ndev):
    x = data("f8")
    d = distribute(x, "uneven", ndev)
    for name in ("var", "std"):
        check(name, x, d, axis=0, ddof=ddof)
        check(name, x, d, ddof=ddof)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "nansum", "any"])
def test_where(name, ndev):
    x = data("f8", nan=name == "nansum")
    mask = (np.arange(x.size).reshape(x.shape) % 3) != 0
    d = distribute(x, "strided", ndev)
    kw = {"initial": -100.0} if name in ("max", "min") else {}
    for where in (mask, dg.asarray(mask), mask[0]):
        wh = where.get() if isinstance(where, dg.DistributedArray) else where
        ref, err = numpy_or_error(call, name, x, axis=0, where=wh, **kw)
        got = call(name, d, axis=0, where=where, **kw)
        assert_same(got, ref, name, x.dtype, x, dict(kw, axis=0, where=wh))


@pytest.mark.parametrize("layout", ["rows", "uneven", "strided", "overlap"])
@pytest.mark.parametrize("name, dtype, initial", [
    ("sum", "f8", 5.0), ("sum", "i2", 300), ("sum", "i8", 5.5), ("prod", "f8", -3.0),
    ("nansum", "f8", 2.5), ("max", "f8", 1e9), ("min", "i8", -1000)])
def test_initial_counted_once(name, dtype, initial, layout, ndev):
    """`initial` enters the result once, however many devices hold parts of
    the reduced axis (each part starts from the identity)."""
    x = data(dtype, nan=name == "nansum")
    if dtype.startswith("f") and name == "prod":
        x = np.where(np.isfinite(x), np.clip(x, -2.0, 2.0), 1.5)
    d = distribute(x, layout, ndev)
    mask = (np.arange(x.size).reshape(x.shape) % 3) != 0
    for kw in ({"axis": 0}, {"axis": None}, {"axis": 0, "where": mask}):
        ref, err = numpy_or_error(call, name, x, initial=initial, **kw)
        assert err is None
        got = call(name, d, initial=initial, **kw)
        assert_same(got, ref, name, x.dtype, x, dict(kw, initial=initial))


def test_ufunc_reduce_initial_counted_once(ndev):
    x = np.arange(40, dtype=np.int64).reshape(8, 5)
    for uf in (np.add, np.multiply, np.bitwise_xor, np.logical_xor):
        xx = x % 3 if uf is np.multiply else x
        dd = distribute(xx, "uneven", ndev)
        for axis in (0, None):
            ref = uf.reduce(xx, axis=axis, initial=7)
            got = uf.reduce(dd, axis=axis, initial=7)
            g = got.get() if isinstance(got, dg.DistributedArray) else np.asarray(got)
            assert g.dtype == ref.dtype and np.array_equal(g, ref), (uf, axis, g, ref)


@pytest.mark.parametrize("layout", ["rows", "uneven", "strided", "replicated", "overlap"])
@pytest.mark.parametrize("dtype", ["f4", "f8", "i8", "c8"])
def test_long_reductions(dtype, layout, ndev):
    """Reductions long enough for a GPU to cut each output's elements into
    chunks (partials folded by a last pass, on each device or stacked from
    all devices on one), against NumPy; the largest value three times, in
    different parts, so argmax must return the first."""
    rng = np.random.default_rng(11)
    n = (1 << 20) + 37
    dt = np.dtype(dtype)
    if dt.kind == "i":
        x = rng.integers(-1000, 1000, n).astype(dt)
    else:
        x = rng.standard_normal(n).astype(dt)
        if dt.kind == "c":
            x = x + 1j * rng.standard_normal(n).astype(dt)
    x[[5, n // 2 + 3, n - 2]] = x.real.max() + 1
    d = distribute(x, layout, ndev)
    for name in ("sum", "max", "argmax", "argmin", "mean"):
        check(name, x, d)
    y = x[: n - n % 1024].reshape(-1, 1024)
    e = distribute(y, layout, ndev)
    for name in ("sum", "argmax", "min"):
        for axis in (0, 1, None):
            check(name, y, e, axis=axis)


def long_arg_data(dtype, case, n):
    """n values of dtype for test_long_arg_reductions."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(3 + dt.num)
    if case == "ties":  # seven values: each best one thousands of times
        lo = 0 if dt.kind in "bu" else -3
        x = rng.integers(lo, 2 if dt.kind == "b" else 4, n)
    elif case == "nan":  # NaNs in neighbouring places and at the end, the first wins
        x = rng.standard_normal(n)
        x[[n // 3 + 5, n // 3 + 6, n - 3]] = np.nan
    elif case == "sorted":  # each batch better than the last (argmax), or none (argmin)
        x = np.sort(rng.integers(0, 2, n) if dt.kind == "b" else rng.standard_normal(n) * 50)
    else:  # signed zeros: all equal
        x = np.where(rng.integers(0, 2, n) == 1, -0.0, 0.0)
    x = x.astype(dt) if dt.kind in "bfc" else np.round(x).astype(dt)
    if dt.kind == "c" and case == "ties":
        x = x + 1j * rng.integers(-1, 2, n).astype(dt)
    return x


@pytest.mark.parametrize("dtype, case", [
    (t, c) for t in ["?", "i1", "u2", "i4", "i8", "f2", "f4", "f8", "c8", "c16"]
    for c in ["ties", "nan", "sorted", "zeros"] if c in ("ties", "sorted") or t[0] in "fc"])
def test_long_arg_reductions(dtype, case, ndev):
    """argmax and argmin long enough that a GPU thread looks at its elements
    in batches (the best value of a batch found first, then the first
    element as good as it): ties within a batch and across batches and
    devices, NaNs side by side, sorted data (every batch improves on the
    last, or none does), signed zeros; in order and reversed, against NumPy."""
    n = (1 << 20) + 37
    x = long_arg_data(dtype, case, n)
    for y in (x, np.ascontiguousarray(x[::-1])):
        for layout in ("rows", "replicated"):
            d = distribute(y, layout, ndev)
            for name in ("argmax", "argmin"):
                check(name, y, d)


@pytest.mark.parametrize("layout", ["rows", "strided", "cols"])
@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_infinities_match_numpy(dtype, layout, ndev):
    """+-inf in some rows and columns (one column holds both, so its sum is
    NaN in any order): every reduction gives NumPy's infinities and NaNs."""
    x = data(dtype)
    x[1, 2], x[4, 2], x[3, 0], x[5, 5] = np.inf, -np.inf, np.inf, -np.inf
    d = distribute(x, layout, ndev)
    for name in ("sum", "prod", "max", "min", "mean", "var", "std", "ptp", "argmax", "argmin",
                 "nansum", "nanmax", "nanmin", "nanmean"):
        for axis in (None, 0, 1):
            check(name, x, d, axis=axis)


def test_where_without_identity_needs_initial(ndev):
    x = data("f4")
    d = distribute(x, "rows", ndev)
    with pytest.raises(ValueError, match="initial"):
        np.max(d, where=x > 0)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "argmax", "any", "all",
                                  "var", "nanmax", "nansum"])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1),
                                         ((3, 0), 0), ((0, 3), None)])
def test_empty(name, shape, axis, ndev):
    """NumPy's results, warnings and errors for empty reductions."""
    x = np.zeros(shape, np.float64)
    d = dg.asarray(x)
    ref, err = numpy_or_error(call, name, x, axis=axis)
    if err is not None:
        with pytest.raises(err):
            call(name, d, axis=axis)
        return
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with np.errstate(all="ignore"):
            got = call(name, d, axis=axis)
    with warnings.catch_warnings(record=True) as rec_np:
        warnings.simplefilter("always")
        with np.errstate(all="ignore"):
            call(name, x, axis=axis)
    assert_same(got, ref, name, x.dtype, x)
    assert bool(rec) == bool([w for w in rec_np if w.category is RuntimeWarning]), \
        f"{name}: warnings {[str(w.message) for w in rec]}"


def test_all_nan_slices_warn_like_numpy(ndev):
    x = np.full((4, 3), np.nan)
    x[0, 0] = 1.0
    d = distribute(x, "rows", ndev)
    for name in ("nanmax", "nanmin", "nanmean"):
        with pytest.warns(RuntimeWarning):
            got = call(name, d, axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = call(name, x, axis=0)
        assert_same(got, ref, name, x.dtype, x)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum, np.fmax,
                                   np.logical_or, np.logical_and, np.bitwise_xor, np.bitwise_or])
@pytest.mark.parametrize("dtype", ["?", "i4", "u8", "f4", "c16"])
def test_ufunc_reduce(ufunc, dtype, ndev):
    x = data(dtype)
    d = distribute(x, "uneven", ndev)
    for axis in (0, 1, None, (0, 1)):
        check_method(ufunc, "reduce", x, d, axis)


def check_method(ufunc, method, x, d, axis):
    """ufunc.<method>(d, axis=axis) against NumPy's on x."""
    ref, err = numpy_or_error(getattr(ufunc, method), x, axis=axis)
    if err is not None:
        with pytest.raises(err):
            getattr(ufunc, method)(d, axis=axis)
        return
    got = getattr(ufunc, method)(d, axis=axis)
    exact = ufunc not in (np.add, np.multiply) or x.dtype.kind in "biu"
    name = "max" if exact else ("sum" if ufunc is np.add else "prod")
    assert_same(got, ref, name, x.dtype, x)


def test_lazy_mode_and_zero_dim_results(ndev):
    x = data("f8")
    d = distribute(x, "rows", ndev)
    # partials that are small beside the data reduced are folded at once on
    # one device; large ones are left as partial sums, as CuPy does
    s = d.sum(axis=0)
    assert s.mode == "replica" and len(s.index_map) == 1
    np.testing.assert_allclose(s.get(), x.sum(axis=0), rtol=1e-13)
    old = dg.config.peer_read_bytes
    dg.config.peer_read_bytes = 0
    try:
        s = d.sum(axis=0)
    finally:
        dg.config.peer_read_bytes = old
    if ndev > 1:
        assert s.mode == "sum"
    np.testing.assert_allclose(s.get(), x.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose((s * 2).get(), x.sum(axis=0) * 2, rtol=1e-13)
    t = d.sum()
    assert isinstance(t, dg.DistributedArray) and t.shape == ()
    assert abs(float(t) - x.sum()) <= 1e-12 * np.abs(x).sum()
    assert bool(t > x.sum() - 1) and not bool(t > x.sum() + 1) and bool(d.max() == x.max())
    u = t + d  # a 0-d result feeds more device work
    np.testing.assert_allclose(u.get(), x.sum() + x, rtol=1e-12)


@pytest.mark.parametrize("nchunks, per, peer", [(40000, 1, None), (3000, 2, 16)],
                         ids=["40000x1", "3000x2-peer16"])
def test_full_reductions_of_many_chunks(nchunks, per, peer, ndev):
    """Full reductions of thousands of tiny chunks dealt round robin (issue
    [robust]: layouts of 10^5 chunks): the one-value partials go to one stack
    however many there are (40,000 of float64 pass the default peer-read
    limit; peer=16 puts 3,000 past it) and are folded there as a tree, so
    2^53 followed by ones sums as NumPy's pairwise sum does (folded one after
    the other, every 1 would be rounded away); ties go to the first index."""
    n = nchunks * per
    imap = {d: [slice(per * i, per * (i + 1)) for i in range(d, nchunks, ndev)]
            for d in range(ndev)}
    f = np.ones(n)
    f[0] = 2.0 ** 53
    i = np.random.default_rng(5).integers(-3, 4, n)
    old = dg.config.peer_read_bytes
    if peer is not None:
        dg.config.peer_read_bytes = peer
    try:
        for x, names in ((f, ("sum", "mean")), (i, ("sum", "prod", "max", "min", "argmax",
                                                    "argmin"))):
            d = dg.distributed_array(x, imap)
            assert len(d.index_map[ndev - 1]) == nchunks // ndev
            for name in names:
                check(name, x, d)
    finally:
        dg.config.peer_read_bytes = old


def test_out_argument(ndev):
    x = data("f4")
    d = distribute(x, "rows", ndev)
    out = dg.zeros(6, dtype=np.float32)
    r = np.sum(d, axis=0, out=out)
    assert r is out
    np.testing.assert_allclose(out.get(), x.sum(axis=0), rtol=1e-5)
    host = np.zeros(7, np.float64)
    r = d.mean(axis=1, out=host)
    assert r is host
    np.testing.assert_allclose(host, x.mean(axis=1), rtol=1e-5)
    with pytest.raises(ValueError):
        np.sum(d, axis=0, out=dg.zeros(5, dtype=np.float32))


def test_axis_errors(ndev):
    d = distribute(data("f8"), "rows", ndev)
    with pytest.raises(np.exceptions.AxisError):
        d.sum(axis=2)
    with pytest.raises(np.exceptions.AxisError):
        np.argmax(d, axis=-3)
    with pytest.raises(ValueError):
        d.sum(axis=(0, 0))


def test_methods_and_module_functions_agree(ndev):
    x = data("i4")
    d = distribute(x, "cols", ndev)
    for name in ("sum", "prod", "max", "min", "mean", "argmax", "any", "ptp"):
        a = getattr(d, name)(axis=1)
        b = getattr(dg, name)(d, axis=1)
        c = getattr(np, name)(d, axis=1)
        np.testing.assert_array_equal(a.get(), b.get())
        np.testing.assert_array_equal(a.get(), c.get())


def test_unimplemented_numpy_function_runs_through_numpy():
    """(median, the determinant and the roots of a polynomial run on the
    devices now: numpy.emath's complex square root, which stays on the host,
    shows the fallback)"""
    x = np.array([1.0, -3.0, 2.0])
    d = dg.asarray(x)
    with pytest.warns(dg.FallbackWarning, match="numpy.lib.scimath.sqrt"):
        m = np.emath.sqrt(d)
    assert isinstance(m, dg.DistributedArray)
    np.testing.assert_array_equal(m.get(), np.emath.sqrt(x))
    old = dg.config.fallback
    dg.config.fallback = "raise"
    try:
        with pytest.raises(TypeError, match="sqrt"):
            np.emath.sqrt(d)
    finally:
        dg.config.fallback = old


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["i1", "i8", "f4", "f8", "c8", "?"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
def test_scans(name, dtype, axis, ndev):
    x = data(dtype, (9, 5))
    if name == "cumprod" and np.dtype(dtype).kind in "fc":
        x = (x / 4).astype(dtype)
    for layout in ("rows", "uneven", "strided", "overlap", "cols", "replicated", "sum_mode"):
        d = distribute(x, layout, ndev)
        check(name, x, d, axis=axis)
    v = x[:, 0].copy()
    for layout, m in maps_for(v.shape, ndev):  # 1-d: blocks pass their totals on
        check(name, v, dg.distributed_array(v, m), axis=None if axis is None else 0)


def test_reductions_leak_nothing():
    x = data("f8", (64, 8))
    d = distribute(x, "overlap", 2 if dg._core._ndevices() > 1 else 1)
    gc.collect()
    base = dg._core._bytes_in_use()
    refs = sys.getrefcount(d)
    for _ in range(200):
        r = [d.sum(axis=0), d.max(), d.argmax(axis=0), d.var(), np.nanmean(d, axis=1)]
        float(r[1])
        del r
    gc.collect()
    assert dg._core._bytes_in_use() == base
    assert sys.getrefcount(d) == refs


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum, np.logical_or])
@pytest.mark.parametrize("dtype", ["?", "i2", "f8"])
def test_ufunc_accumulate(ufunc, dtype, ndev):
    x = data(dtype, (8, 5))
    for layout in ("rows", "strided", "cols"):
        d = distribute(x, layout, ndev)
        for axis in (0, 1, -1):
            check_method(ufunc, "accumulate", x, d, axis)


@pytest.mark.parametrize("name", FUNCS + ["cumsum", "cumprod"])
def test_zero_dim_input(name):
    """Reductions of a 0-d array give NumPy's 0-d (or, for scans, 1-element) result."""
    x = np.array(-3.5)
    check(name, x, dg.asarray(x))


@pytest.mark.parametrize("name", ["var", "std", "mean"])
def test_where_in_moments(name, ndev):
    x = data("f8", (6, 8))
    d = distribute(x, "cols", ndev)
    check(name, x, d, axis=1, where=x > 0)
    if name != "mean":
        check(name, x, d, axis=0, where=x > 0, ddof=1)


def test_empty_axis_tuple_is_identity(ndev):
    x = data("i4")
    d = distribute(x, "rows", ndev)
    check("sum", x, d, axis=())
    check("max", x, d, axis=())
