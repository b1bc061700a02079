"""Checks the tests of NumPy's wider surface share: every dtype NumPy and
dgarray hold, values for each, the arrays of every layout of _maps, results
compared with NumPy's (dtype, shape, values), NumPy's errors, and no host
fallback (config.fallback is "raise" in these tests)."""
import contextlib
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

DTYPES = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]
NUMERIC = [d for d in DTYPES if d != "?"]
FLOATS = ["f2", "f4", "f8"]
INEXACT = ["f2", "f4", "f8", "c8", "c16"]


@pytest.fixture(autouse=True)
def no_fallback():
    """config.fallback = "raise" and FallbackWarning an error for the test."""
    old = dg.config.fallback
    dg.config.fallback = "raise"
    with warnings.catch_warnings():
        warnings.simplefilter("error", dg.FallbackWarning)
        yield
    dg.config.fallback = old


def values(dtype, shape, seed=0, nan=False, low=-6, high=7):
    """Values of dtype with ties and negatives (unsigned: small positives);
    nan=True puts NaNs in floats."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed + dt.num)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else low, high, shape).astype(dt)
    x = np.round(rng.standard_normal(shape) * 3, 1)
    if dt.kind == "c":
        x = x + 1j * np.round(rng.standard_normal(shape) * 3, 1)
    x = x.astype(dt)
    if nan and x.size:
        x.flat[::4] = np.nan
    return x


def layouts(x, ndev, names=None):
    """(name, DistributedArray of x) for every layout of _maps (or those named)."""
    for name, m in maps_for(x.shape, ndev):
        if names is None or name in names:
            yield name, dg.distributed_array(x, m)


def same(got, want, msg="", rtol=None, atol=0.0, exact_type=True):
    """got (DistributedArrays, tuples, scalars) equals NumPy's want: dtypes,
    shapes, values (NaNs where NumPy has them); rtol for inexact results."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), msg
        for g, w in zip(got, want):
            same(g, w, msg, rtol, atol, exact_type)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert isinstance(got, dg.DistributedArray), f"{msg}: {type(got)}"
        g = got.get()
        w = np.asarray(want)
        assert g.shape == w.shape, f"{msg}: shape {g.shape} != {w.shape}"
        if exact_type:
            assert g.dtype == w.dtype, f"{msg}: dtype {g.dtype} != {w.dtype}"
        if rtol is None or w.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w, err_msg=msg)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=msg,
                                       equal_nan=True)
        return
    if isinstance(got, dg.DistributedArray):
        got = got.get()[()]
    if isinstance(want, float) and want != want:
        assert got != got, msg
    elif rtol is not None and isinstance(want, (float, complex)):
        assert abs(got - want) <= rtol * abs(want) + atol, msg
    else:
        assert got == want, f"{msg}: {got!r} != {want!r}"


def tol(dtype):
    """A relative tolerance for results summed in another order than NumPy's."""
    return {"e": 2e-3, "f": 2e-5, "F": 2e-5}.get(np.dtype(dtype).char, 1e-12)


def numpy_result(f, *args, **kwargs):
    """(result, None) or (None, exception) of NumPy's call, warnings silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001 - NumPy's error is the expectation
            return None, e


def same_error(dg_call, np_call, match_message=True):
    """dg_call raises NumPy's exception type for np_call (and its message)."""
    _, e = numpy_result(np_call)
    assert e is not None, "NumPy does not raise here"
    with pytest.raises(type(e)) as info:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            dg_call()
    if match_message:
        assert str(info.value) == str(e), f"{info.value!s} != {e!s}"


def like_numpy(dg_call, np_call, msg="", rtol=None, atol=0.0):
    """dg_call gives NumPy's result of np_call, or raises its error."""
    want, e = numpy_result(np_call)
    if e is not None:
        same_error(dg_call, np_call)
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = dg_call()
    same(got, want, msg, rtol, atol)


@contextlib.contextmanager
def no_moves():
    """Nothing moves between or within devices in the block."""
    dg._core._sync_all()
    dg._core._move_stats(True)
    yield
    dg._core._sync_all()
    b, w, _, _ = dg._core._move_stats(True)
    assert b + w == 0, f"{b + w} moves"
