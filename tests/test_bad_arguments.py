"""Bad arguments get NumPy's exception (found by an audit that compared 368
bad inputs with NumPy's): the same call on NumPy arrays and on
DistributedArrays, the exception types compared, or the results where
both accept the call."""
import numpy as np
import pytest

import dgarray as dg
from _maps import on_devices


def cases():
    a, b, m = np.arange(3.0), np.arange(4.0), np.arange(6.0).reshape(2, 3)
    return [
        ("outer out of another shape", lambda x: x.outer(a, b, out=x.zeros((2, 2)))),
        ("outer out of another ndim", lambda x: x.outer(a, b, out=x.zeros(12))),
        ("outer out transposed", lambda x: x.outer(a, b, out=x.zeros((4, 3)))),
        ("outer out int", lambda x: x.outer(a, b, out=x.zeros((3, 4), int))),
        ("outer out float32", lambda x: x.outer(a, b, out=x.zeros((3, 4), np.float32))),
        ("argmax out float", lambda x: x.argmax(x.asarray(m), axis=0, out=x.zeros(3))),
        ("argmin out uint64", lambda x: x.argmin(x.asarray(m), axis=1,
                                                 out=x.zeros(2, np.uint64))),
        ("argmax out int32", lambda x: x.argmax(x.asarray(m), axis=0,
                                                out=x.zeros(3, np.int32))),
        ("argmax method out float", lambda x: x.asarray(m).argmax(axis=1, out=x.zeros(2))),
        ("sort kind bogus", lambda x: x.sort(x.asarray(a), kind="bogus")),
        ("argsort kind bogus", lambda x: x.argsort(x.asarray(a), kind="bogus")),
        ("sort kind q", lambda x: x.sort(x.asarray(a[::-1]), kind="q")),
        ("flatten order Q", lambda x: x.asarray(m).flatten(order="Q")),
        ("ravel order Q", lambda x: x.ravel(x.asarray(m), order="Q")),
        ("ravel order f", lambda x: x.ravel(x.asarray(m), order="f")),
        ("zeros order Z", lambda x: x.zeros(3, order="Z")),
        ("ones order K", lambda x: x.ones(3, order="K")),
        ("sum keepdims str", lambda x: x.sum(x.asarray(m), keepdims="yes")),
        ("sum keepdims 1", lambda x: x.sum(x.asarray(m), keepdims=1)),
        ("max keepdims numpy bool", lambda x: x.max(x.asarray(m), axis=0, keepdims=np.True_)),
        ("asarray of a list copy=False", lambda x: x.asarray([1, 2], copy=False)),
        ("array of a list copy=False", lambda x: x.array([1, 2], copy=False)),
        ("array of an array ndmin=3", lambda x: x.array(x.asarray(a), ndmin=3)),
        ("arange too long", lambda x: x.arange(0, 1e30, 1e-30)),
        ("unique axis out of range", lambda x: x.unique(x.asarray(a), axis=1)),
        ("accumulate axis (0,)", lambda x: x.add.accumulate(x.asarray(m), axis=(0,))),
        ("accumulate axes (0, 1)", lambda x: x.add.accumulate(x.asarray(m), axis=(0, 1))),
        ("clip uint8 to -1", lambda x: x.clip(x.asarray(np.arange(3, dtype=np.uint8)), 0, -1)),
        ("clip uint8 below 0 and above 255", lambda x: x.clip(
            x.asarray(np.arange(3, dtype=np.uint8)), -5, 300)),
        ("clip uint64 by a float and -1", lambda x: x.clip(
            x.asarray(np.arange(3, dtype=np.uint64)), 1.5, -1)),
        ("clip int8 above its range", lambda x: x.clip(
            x.asarray(np.arange(3, dtype=np.int8)), 1000, 2000)),
        ("sum uint8 initial -2", lambda x: x.sum(x.asarray(np.arange(3, dtype=np.uint8)),
                                                 initial=-2)),
        ("max uint8 initial 300", lambda x: x.max(x.asarray(np.arange(3, dtype=np.uint8)),
                                                  initial=300)),
        ("sum int8 initial 1000", lambda x: x.sum(x.asarray(np.arange(3, dtype=np.int8)),
                                                  initial=1000)),
        ("sum of empty where", lambda x: x.sum(x.asarray(np.zeros(0)), where=np.array(True))),
        ("max of empty where initial", lambda x: x.max(
            x.asarray(np.zeros((0, 2))), axis=0, initial=1, where=np.array([True, False]))),
        ("empty int8 ** -1", lambda x: x.asarray(np.zeros((2, 0), np.int8)) ** np.int8(-1)),
        ("nanmean inexact with int dtype", lambda x: x.nanmean(x.asarray(np.array([1.5, 2.5])),
                                                               dtype=np.int64)),
        ("repeat [] along an empty axis", lambda x: x.asarray(np.zeros((2, 0))).repeat(
            [], axis=1)),
        ("repeat [] along a full axis", lambda x: x.asarray(np.zeros((2, 3))).repeat(
            [], axis=1)),
        ("clip of bool without bounds", lambda x: x.clip(x.asarray(np.array([True, False])),
                                                         None, None)),
        ("clip of bool by True", lambda x: x.clip(x.asarray(np.array([True, False])),
                                                  None, True)),
        ("zeros of a float shape", lambda x: x.zeros(2.5)),
        ("zeros of None", lambda x: x.empty(None)),
        ("ones of (2, 2.5)", lambda x: x.ones((2, 2.5))),
    ]


class _NumPy:
    """numpy with asarray returning its argument: the reference side."""

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.mark.parametrize("name, call", cases(), ids=[c[0] for c in cases()])
def test_bad_arguments_match_numpy(name, call):
    try:
        want = call(_NumPy())
        want_exc = None
    except Exception as e:  # noqa: BLE001 - NumPy's exception is the expectation
        want_exc = type(e)
    if want_exc is not None:
        with pytest.raises(want_exc):
            call(dg)
        return
    got = call(dg)
    got = got.get() if isinstance(got, dg.DistributedArray) else got
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape and got.dtype == want.dtype


def test_index_map_entries_and_2d_devices_are_checked():
    with pytest.raises(ValueError, match="an index map takes ints and slices"):
        dg.distributed_array(np.arange(10.0), {0: np.arange(5), 1: slice(5, None)})
    d = dg.distributed_array(np.arange(10.0), {0: [slice(0, 9), np.int64(9)]})
    np.testing.assert_array_equal(d.get(), np.arange(10.0))
    with pytest.raises(TypeError, match=r"devices\[0\]\[0\] must be an iterable"):
        dg.make_2d_index_map([0, 5, 10], [0, 10], [[0], [1]])


def test_where_false_leaves_out_alone():
    """where=False (the Python bool, and numpy's): nothing is computed, an
    out= array (DistributedArray or NumPy's) keeps its values, as NumPy's."""
    x = np.arange(5.0)
    d = dg.asarray(x)
    for where in (False, np.False_):
        want = np.full(5, 7.0)
        np.add(x, x, out=want, where=where)  # NumPy's own: out untouched
        host = np.full(5, 7.0)
        assert np.add(d, d, out=host, where=where) is host
        np.testing.assert_array_equal(host, np.full(5, 7.0))
        np.testing.assert_array_equal(host, want)
        o = dg.full(5, 7.0)
        np.sqrt(d, out=o, where=where)
        np.testing.assert_array_equal(o.get(), np.full(5, 7.0))
        assert np.add(d, 1.0, where=where).shape == (5,)  # values unspecified, as NumPy's
        np.divmod(d, 2.0, where=where)


def test_broadcast_error_keeps_references():
    import sys
    d, e = dg.asarray(np.arange(10.0)), dg.asarray(np.zeros((3, 4)))
    sep = " "
    before = sys.getrefcount(sep)
    for _ in range(200):
        with pytest.raises(ValueError, match=r"shapes \(10,\) \(3,4\)"):
            d + e
    assert sys.getrefcount(sep) - before < 10


@pytest.mark.parametrize("make", [lambda x: x.empty(2 ** 61), lambda x: x.zeros(2 ** 61),
                                  lambda x: x.ones((2 ** 40, 2 ** 30), np.int8)],
                         ids=["empty", "zeros", "2-d int8"])
def test_arrays_too_big_to_address(make):
    """More bytes than an int64 holds: NumPy's ValueError, not a wrapped size
    (which handed out a block of 0 bytes)."""
    with pytest.raises(ValueError, match="array is too big"):
        make(np)
    with pytest.raises(ValueError, match="array is too big"):
        make(dg)


def test_astype_copy_whose_truth_fails():
    class Bad:
        def __bool__(self):
            raise ZeroDivisionError("no truth")
    with pytest.raises(ZeroDivisionError):
        np.arange(3.0).astype(float, copy=Bad())
    with pytest.raises(ZeroDivisionError):
        dg.arange(3.0).astype(float, copy=Bad())


@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i8", "f2", "f4", "f8", "c8"])
def test_round_and_conj_match_numpy(dtype, ndev):
    """round (method, dgarray.round, numpy.round through dispatch) for every
    decimals sign, and conj / conjugate, against NumPy (errors included)."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(1000) * 1000).astype(dtype)
    d = dg.distributed_array(x, on_devices([(0, slice(0, 500)), (1, slice(500, None))], ndev))
    with np.errstate(all="ignore"):
        for dec in (0, 1, 2, -1, -2, 5):
            try:
                want, exc = x.round(dec), None
            except Exception as e:  # noqa: BLE001 - NumPy's error is the expectation
                want, exc = None, type(e)
            for call in (lambda: d.round(dec), lambda: dg.round(d, dec),
                         lambda: np.round(d, dec), lambda: dg.around(d, dec)):
                if exc is not None:
                    with pytest.raises(exc):
                        call()
                    continue
                got = call().get()
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(d.conj().get(), x.conj())
    np.testing.assert_array_equal(d.conjugate().get(), np.conjugate(x))
