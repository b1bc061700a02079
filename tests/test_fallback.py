"""NumPy's fallback, NumPy's names in dgarray's namespace, and the array API
entry point: NumPy functions dgarray does not implement run through NumPy on
the gathered data, warn naming themselves (dgarray.config.fallback), and
return DistributedArrays; arguments NumPy writes into are written back."""
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for, on_devices


@pytest.fixture
def fallback_mode():
    """Sets dgarray.config.fallback for one test."""
    old = dg.config.fallback

    def set_mode(m):
        dg.config.fallback = m
    yield set_mode
    dg.config.fallback = old


def same(got, want):
    """got (DistributedArrays where want has NumPy arrays) equals want."""
    if isinstance(want, tuple):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert isinstance(got, dg.DistributedArray), type(got)
        g = got.get()
        assert g.dtype == want.dtype and g.shape == np.shape(want)
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)
        return
    assert got == want


X = np.random.default_rng(0).standard_normal((6, 5))
V = np.random.default_rng(1).standard_normal(11)
S = X[:5] + 5 * np.eye(5)

# (numpy function, positional arguments with arrays as "X" / "V"): functions
# that stay on the host (printing, numpy.emath's complex-valued functions,
# strided window views); the others run on the devices (tests of their own
# modules)
CASES = [
    (np.array2string, ("V",), {}),
    (np.emath.sqrt, ("V",), {}),
    (np.lib.stride_tricks.sliding_window_view, ("X", 3), {"axis": 0}),
]


def _sub(obj, arrays):
    if isinstance(obj, str) and obj in arrays:
        return arrays[obj]
    if isinstance(obj, (list, tuple)):
        return type(obj)(_sub(o, arrays) for o in obj)
    if isinstance(obj, dict):
        return {k: _sub(v, arrays) for k, v in obj.items()}
    return obj


@pytest.mark.parametrize("func,args,kwargs", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_numpy_functions_run_through_numpy(func, args, kwargs, ndev):
    for name, m in maps_for(X.shape, ndev)[:4]:
        dx = dg.distributed_array(X, m)
        dv = dg.asarray(V)
        ds = dg.asarray(S)
        want = func(*_sub(args, {"X": X, "V": V, "S": S}),
                    **_sub(kwargs, {"X": X, "V": V, "S": S}))
        with pytest.warns(dg.FallbackWarning, match=func.__name__):
            got = func(*_sub(args, {"X": dx, "V": dv, "S": ds}),
                       **_sub(kwargs, {"X": dx, "V": dv, "S": ds}))
        same(got, want)
        np.testing.assert_array_equal(dx.get(), X)   # the arguments are unchanged


def test_named_tuples_and_scalars_come_back():
    d = dg.asarray(X)
    # (eig runs on the devices now: the fallback itself)
    with pytest.warns(dg.FallbackWarning):
        r = dg._fallback.call(np.linalg.eig, (d[:5],), {})
    assert type(r).__name__ == "EigResult" and isinstance(r.eigenvalues, dg.DistributedArray)
    # a 0-d result (median, then det, run on the devices now: the fallback itself)
    with pytest.warns(dg.FallbackWarning):
        m = dg._fallback.call(np.linalg.det, (d[:5],), {})
    assert isinstance(m, dg.DistributedArray) and m.shape == () and \
        float(m) == np.linalg.det(X[:5])


def test_lists_of_arrays_are_gathered():
    d = dg.asarray(X)
    with pytest.warns(dg.FallbackWarning, match="multi_dot"):
        r = dg._fallback.call(np.linalg.multi_dot, ([d, np.ones((5, 2)), d[:2, :3]],), {})
    same(r, np.linalg.multi_dot([X, np.ones((5, 2)), X[:2, :3]]))


def test_the_warning_points_at_the_caller():
    d = dg.asarray(V)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        np.emath.sqrt(d)
        dg.emath.sqrt(d)
        np.lib.stride_tricks.sliding_window_view(d, 3)
    assert [x.category for x in w] == [dg.FallbackWarning] * 3
    assert all(x.filename == __file__ for x in w), [x.filename for x in w]
    assert "numpy.lib.scimath.sqrt" in str(w[0].message) and "88 bytes" in str(w[0].message)
    assert "numpy.lib.scimath.sqrt" in str(w[1].message)
    assert "sliding_window_view" in str(w[2].message)


def test_config_fallback(fallback_mode):
    d = dg.asarray(V)
    assert dg.config.fallback == "warn"
    fallback_mode("raise")
    with pytest.raises(TypeError, match="numpy.lib.scimath.sqrt"):
        np.emath.sqrt(d)
    with pytest.raises(TypeError, match="numpy.lib.scimath.log"):
        dg.emath.log(d)
    fallback_mode("silent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(np.emath.sqrt(d), np.emath.sqrt(V))
    with pytest.raises(ValueError, match="fallback"):
        dg.config.fallback = "loud"
    assert dg.config.fallback == "silent"
    assert "fallback='silent'" in repr(dg.config)


def test_arguments_numpy_writes_into_are_written_back():
    """Through the fallback itself (the NumPy functions of _WRITES that dgarray
    implements on the devices no longer reach it)."""
    x = np.arange(12.0).reshape(3, 4)
    for m in (None, on_devices([(0, slice(0, 1)), (1, slice(1, 3))],
                               dg._core._ndevices())):
        d = dg.distributed_array(x, m)
        with pytest.warns(dg.FallbackWarning):
            dg._fallback.call(np.copyto, (d, x * 2), {})
        np.testing.assert_array_equal(d.get(), x * 2)
        with pytest.warns(dg.FallbackWarning):
            dg._fallback.call(np.fill_diagonal, (d, -1), {})
        want = x * 2
        np.fill_diagonal(want, -1)
        np.testing.assert_array_equal(d.get(), want)
        np.put(d, [0, 5], [7, 8])  # on the devices (dgarray's put)
        np.put(want, [0, 5], [7, 8])
        np.testing.assert_array_equal(d.get(), want)
        np.fill_diagonal(d, -3)  # on the devices (dgarray's fill_diagonal)
        np.fill_diagonal(want, -3)
        np.testing.assert_array_equal(d.get(), want)
        assert d.index_map == dg.distributed_array(x, m).index_map


def test_out_is_written_back_and_returned():
    d = dg.asarray(X)
    # median's and fft's out= (both on the devices now) through the fallback itself
    o = dg.zeros((6, 5), complex)
    with pytest.warns(dg.FallbackWarning):
        r = dg._fallback.call(np.fft.fft, (d,), {"axis": 0, "out": o})
    assert r is o
    np.testing.assert_allclose(o.get(), np.fft.fft(X, axis=0))
    h = np.zeros((6, 5), complex)
    with pytest.warns(dg.FallbackWarning):
        r = dg._fallback.call(np.fft.fft, (d,), {"axis": 0, "out": h})
    assert r is h
    np.testing.assert_allclose(h, np.fft.fft(X, axis=0))


def test_ufuncs_without_loops():
    a, b = dg.asarray(V), dg.asarray(V[::-1].copy())
    with warnings.catch_warnings():  # vecdot runs on the devices (dgarray's matmul)
        warnings.simplefilter("error", dg.FallbackWarning)
        same(np.vecdot(a, b), np.vecdot(V, V[::-1]))
    with pytest.warns(dg.FallbackWarning, match="numpy.add.reduceat"):
        same(np.add.reduceat(a, [0, 3, 7]), np.add.reduceat(V, [0, 3, 7]))
    o = dg.zeros((11, 11))
    with pytest.warns(dg.FallbackWarning, match="numpy.multiply.outer"):
        r = np.multiply.outer(a, b, out=o)
    assert r is o
    np.testing.assert_allclose(o.get(), np.multiply.outer(V, V[::-1]))


def test_module_names():
    # NumPy's constants, dtypes and classes are NumPy's
    for name in ("pi", "e", "inf", "nan", "newaxis", "euler_gamma", "float32", "int64",
                 "complex128", "bool_", "dtype", "finfo", "iinfo", "errstate", "isdtype",
                 "set_printoptions", "uint16", "intp", "float16"):
        got, want = getattr(dg, name), getattr(np, name)
        assert got is want or (got != got and want != want), name
    assert dg.ndarray is dg.DistributedArray
    assert dg.random is not np.random and hasattr(dg.random, "default_rng")
    with pytest.raises(AttributeError):
        dg.no_such_function
    with pytest.raises(AttributeError):
        dg._no_such_private
    assert "median" in dir(dg) and "linalg" in dir(dg)


def test_module_functions_take_and_return_distributed_arrays():
    with pytest.warns(dg.FallbackWarning, match="numpy.lib.scimath.sqrt"):
        r = dg.emath.sqrt(dg.asarray([4.0, -1.0]))
    same(r, np.emath.sqrt([4.0, -1.0]))
    assert dg.linalg.LinAlgError is np.linalg.LinAlgError
    # linalg's and fft's functions, and roots, on the devices: no fallback
    # (tests/test_dense.py, tests/test_fft.py, tests/test_pad_polys.py)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(dg.fft.rfft(dg.asarray(V)), np.fft.rfft(V))
        with pytest.raises(np.linalg.LinAlgError):
            dg.linalg.inv(dg.zeros((2, 2)))
        with pytest.raises(np.linalg.LinAlgError, match="Array must not contain infs or NaNs"):
            dg.linalg.eigvals(dg.full((2, 2), np.nan))
        r = dg.roots(dg.asarray([1.0, -3.0, 2.0]))
        assert isinstance(r, dg.DistributedArray) and r.dtype == np.float64
        np.testing.assert_allclose(np.sort(r.get()), [1.0, 2.0], rtol=1e-14)
        ev = dg.linalg.eigvals(dg.asarray(S))
        assert isinstance(ev, dg.DistributedArray) and ev.dtype == np.linalg.eigvals(S).dtype
        np.testing.assert_allclose(np.sort_complex(ev.get()),
                                   np.sort_complex(np.linalg.eigvals(S)), rtol=1e-12)
    import dgarray.linalg
    assert dgarray.linalg is dg.linalg and "norm" in dir(dg.linalg)
    # dgarray's own functions are not wrapped
    assert dg.sum is dg._reductions.sum


def test_metadata_functions_gather_nothing():
    d = dg.asarray(X.astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.shape(d) == (6, 5) and np.ndim(d) == 2 and np.size(d) == 30
        assert np.size(d, 1) == 5
        assert np.result_type(d, 1.0) == np.float32
        assert np.result_type(d, np.float64) == np.float64
        assert np.can_cast(d, np.float64) and not np.can_cast(d, np.int8)
        assert not np.iscomplexobj(d) and np.isrealobj(d)
        assert dg.shape(d) == (6, 5)


def test_results_of_types_dgarray_cannot_hold_stay_numpys():
    d = dg.asarray(np.array([3, 1, 2]))
    with pytest.warns(dg.FallbackWarning):
        s = np.array2string(d)
    assert s == np.array2string(np.array([3, 1, 2]))
    with pytest.warns(dg.FallbackWarning):
        t = dg.datetime_as_string(np.array(["2024-01-01"], dtype="datetime64[D]"))
    assert isinstance(t, np.ndarray) and t.dtype.kind == "U"


def test_foreign_types_get_notimplemented():
    class Other:
        def __array_function__(self, func, types, args, kwargs):
            return "other"

    assert np.concatenate([dg.asarray(V), Other()]) == "other"


def test_array_namespace():
    d = dg.asarray(X)
    xp = d.__array_namespace__()
    assert xp is dg and xp.__array_api_version__ == "2024.12"  # what dgarray implements
    assert d.__array_namespace__(api_version="2023.12") is dg
    with pytest.raises(ValueError):
        d.__array_namespace__(api_version="1999.01")
    # array API code written against xp
    y = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(xp.sum(y, axis=0), dg.DistributedArray)
    t = xp.permute_dims(y, (1, 0))  # a view on the devices
    same(t, np.permute_dims(np.asarray([[1.0, 2.0], [3.0, 4.0]]), (1, 0))
         if hasattr(np, "permute_dims") else np.asarray([[1.0, 2.0], [3.0, 4.0]]).T)
    with warnings.catch_warnings():  # linalg on the devices
        warnings.simplefilter("error", dg.FallbackWarning)
        u = xp.linalg.eigvals(y)
    want = np.linalg.eigvals(np.asarray([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(u, dg.DistributedArray) and u.dtype == want.dtype
    np.testing.assert_allclose(np.sort(u.get()), np.sort(want), rtol=1e-14)
