"""Reductions with NumPy's semantics: ufunc.reduce, sum ... nanmean, argmax, scans.

NumPy decides every result dtype (asked on a one-element array of the same
dtype), and the devices do the work through ``_core._reduce``: a per-chunk
fold where the data lives, then the step across devices (see
src/core/dg_reduce.c).  A full reduction returns a 0-d DistributedArray;
reading it (``float(x)``, ``x.get()``) is the only synchronisation.
"""
import functools
import operator
import warnings

import numpy

from . import _core
from ._creation import asarray

_NOVALUE = numpy._NoValue
_DA = _core.DistributedArray
# ufuncs whose reduction the devices run: loops with three equal dtypes
_REDUCIBLE = {numpy.add, numpy.multiply, numpy.maximum, numpy.minimum, numpy.fmax,
              numpy.fmin, numpy.logical_and, numpy.logical_or, numpy.logical_xor,
              numpy.bitwise_and, numpy.bitwise_or, numpy.bitwise_xor}
# each device folds `initial` into its part of these (not idempotent): the
# reduction starts from the identity and `initial` is folded in once after
_INITIAL_ONCE = {numpy.add, numpy.multiply, numpy.logical_xor, numpy.bitwise_xor}
# partial results of these may stay in an op mode until read (CuPy's lazy modes)
_LAZY_MODE = {numpy.add: "sum", numpy.multiply: "prod", numpy.maximum: "max",
              numpy.minimum: "min"}


def _asdist(a):
    if isinstance(a, _DA):
        return a
    return asarray(a)


def normalize_axes(axis, ndim, allow_none=True):
    """axis (None, int or tuple) as a sorted tuple of non-negative axes, with
    NumPy's errors (AxisError, duplicate axes)."""
    if axis is None:
        if not allow_none:
            raise TypeError("axis must be an integer")
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise numpy.exceptions.AxisError(ax, ndim)
        ax %= ndim if ndim else 1
        if ax in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(ax)
    return tuple(sorted(out))


@functools.lru_cache(maxsize=1024)
def _result_dtype(ufunc, dt, dtype):
    """The dtype NumPy's ufunc.reduce gives for input dtype dt (and dtype=)."""
    probe = numpy.ones(1, dt)
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ufunc.reduce(probe, dtype=dtype).dtype


def _where_array(where, a):
    """where= as a bool DistributedArray of a's shape, or None for True."""
    if where is True:
        return None
    if isinstance(where, _DA):
        if where.shape == a.shape and where.dtype == numpy.bool_:
            return where
        where = where.get()
    w = numpy.broadcast_to(numpy.asarray(where, dtype=bool), a.shape)
    # a's own layout (an index map cannot describe an empty array's chunks)
    return _core._from_host(numpy.ascontiguousarray(w), a._layout(), 0, None)


def _keepdims(keepdims):
    """keepdims as NumPy reads it: a bool, or an integer (TypeError else, a
    numpy.bool_ too)."""
    return keepdims if isinstance(keepdims, bool) else bool(operator.index(keepdims))


def _write_out(res, out):
    """Writes res into out (NumPy's rules: shape must match; cast unsafe as
    reductions do); returns out."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("out must be a single array for a reduction")
        out = out[0]
    if out.shape != res.shape:
        raise ValueError(f"output parameter for reduction operation has the wrong shape "
                         f"{out.shape}; expected {res.shape}")
    if isinstance(out, _DA):
        if res.dtype != out.dtype:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
                res = res.astype(out.dtype)
        _core._assign(out, res)
        return out
    numpy.copyto(out, res.get(), casting="unsafe")
    return out


def ufunc_reduce(ufunc, a, axis=0, dtype=None, out=None, keepdims=False,
                 initial=_NOVALUE, where=True):
    """ufunc.reduce on the devices, as NumPy computes it."""
    if ufunc.nin != 2 or ufunc.nout != 1:
        raise ValueError(f"reduce only supported for binary functions ({ufunc.__name__})")
    if ufunc not in _REDUCIBLE:
        raise TypeError(f"dgarray does not reduce with numpy.{ufunc.__name__} yet; "
                        "reduce with add, multiply, maximum, minimum, fmax, fmin or a "
                        "logical or bitwise ufunc")
    a = _asdist(a)
    axes = normalize_axes(axis, a.ndim)
    if out is not None and dtype is None:
        o = out[0] if isinstance(out, tuple) else out
        dtype = o.dtype
    rdt = _result_dtype(ufunc, a.dtype, dtype)
    work = rdt
    if ufunc in (numpy.add, numpy.multiply) and rdt == numpy.float16:
        work = numpy.dtype(numpy.float32)  # NumPy's half loops reduce in float32
    x = a
    if a.dtype != work:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
            x = a.astype(work)
    wh = _where_array(where, a)
    n_reduced = 1
    for ax in axes:
        n_reduced *= a.shape[ax]
    if type(initial) is int and rdt.kind in "iu":
        info = numpy.iinfo(rdt)
        if not int(info.min) <= initial <= int(info.max):
            raise OverflowError(f"Python integer {initial} out of bounds for {rdt}")
    init = None if initial is _NOVALUE else initial
    if init is None and wh is not None:
        if ufunc.identity is None:
            raise ValueError(f"reduction operation '{ufunc.__name__}' does not have an "
                             "identity, so to use a where mask one has to specify 'initial'")
        init = ufunc.identity
    elif init is None and n_reduced == 0:
        if ufunc.identity is None:
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} "
                             "which has no identity")
        init = ufunc.identity
    post = None
    if initial is not _NOVALUE and ufunc in _INITIAL_ONCE:
        post, init = numpy.asarray(initial).astype(work)[()], ufunc.identity
    res = _core._reduce(x, 0, ufunc, axes, _keepdims(keepdims), init, wh,
                        _LAZY_MODE.get(ufunc))
    if post is not None:
        res = ufunc(res, post)
    if res.dtype != rdt:  # a float16 sum's overflow there is NumPy's "reduce"
        res = _core._cast_reduced(res, rdt)
    if out is not None:
        return _write_out(res, out)
    return res


def _arg(kind, a, axis=None, out=None, keepdims=False):
    a = _asdist(a)
    name = "argmax" if kind == 1 else "argmin"
    if axis is None:
        axes = tuple(range(a.ndim))
        if a.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
    else:
        axes = normalize_axes(operator.index(axis), a.ndim)
        if a.shape[axes[0]] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
    _, idx = _core._reduce(a, kind, None, axes, _keepdims(keepdims), None, None, None)
    if out is not None:
        o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not numpy.can_cast(o.dtype, numpy.intp, "safe"):
            raise TypeError(f"Cannot cast array data from dtype('{o.dtype}') to "
                            f"dtype('{numpy.dtype(numpy.intp)}') according to the rule 'safe' "
                            f"(the out= array of {name} holds indices)")
        return _write_out(idx, out)
    return idx


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Indices of the largest values along `axis` (numpy.argmax; the first
    one where several are equal, NaN first as in NumPy); each chunk finds its
    own and only (value, index) pairs cross devices."""
    return _arg(1, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Indices of the smallest values along `axis` (numpy.argmin), found as
    argmax finds its own."""
    return _arg(2, a, axis, out, keepdims)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The sum over `axis` (numpy.sum: NumPy's dtypes, `initial`, `where`).
    Each chunk is folded where it lives and
    the partial results are combined across devices, so a float sum split
    over devices may differ from NumPy's in the last bits (NumPy's pairwise
    order within a chunk, device order across chunks)."""
    return ufunc_reduce(numpy.add, a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The product over `axis` (numpy.prod), folded per chunk and then
    across devices as sum is."""
    return ufunc_reduce(numpy.multiply, a, axis, dtype, out, keepdims, initial, where)


def max(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The largest value over `axis` (numpy.max; NaN propagates; an empty
    reduction without `initial` raises NumPy's ValueError).  amax is this
    function."""
    return ufunc_reduce(numpy.maximum, a, axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The smallest value over `axis` (numpy.min), as max.  amin is this
    function."""
    return ufunc_reduce(numpy.minimum, a, axis, None, out, keepdims, initial, where)


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    """Whether any element over `axis` is true (numpy.any: a bool result;
    non-bool arrays are compared with 0 on the devices first)."""
    a = _asdist(a)
    b = a if a.dtype == numpy.bool_ else numpy.not_equal(a, 0)
    return ufunc_reduce(numpy.logical_or, b, axis, None, out, keepdims, _NOVALUE, where)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    """Whether every element over `axis` is true (numpy.all), as any."""
    a = _asdist(a)
    b = a if a.dtype == numpy.bool_ else numpy.not_equal(a, 0)
    return ufunc_reduce(numpy.logical_and, b, axis, None, out, keepdims, _NOVALUE, where)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min over `axis` (numpy.ptp): two reductions and a subtraction
    on the devices."""
    a = _asdist(a)
    res = numpy.subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))
    return _write_out(res, out) if out is not None else res


def _count(a, axes, keepdims, where):
    """Elements taking part per output element: an int, or an array with where."""
    if where is True:
        n = 1
        for ax in axes:
            n *= a.shape[ax]
        return n
    w = _where_array(where, a)
    return ufunc_reduce(numpy.add, w, axes, numpy.intp, None, keepdims)


def _mean_dtypes(a, dtype):
    """(dtype to sum in, dtype of the result) as NumPy's _mean picks them."""
    if dtype is not None:
        return numpy.dtype(dtype), numpy.dtype(dtype)
    if a.dtype.kind in "biu":
        return numpy.dtype(numpy.float64), numpy.dtype(numpy.float64)
    if a.dtype == numpy.float16:
        return numpy.dtype(numpy.float32), numpy.dtype(numpy.float16)
    return a.dtype, a.dtype


def _empty_warning(cnt, what="Mean of empty slice."):
    if (cnt == 0 if isinstance(cnt, int) else bool((cnt == 0).any())):
        warnings.warn(what, RuntimeWarning, stacklevel=3)


def _divide(s, n, dtype):
    """s / n in dtype (NumPy divides into the sum's own array, casting unsafe)."""
    with numpy.errstate(all="ignore"):
        res = numpy.true_divide(s, n)
    return res if res.dtype == dtype else res.astype(dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """The mean over `axis` (numpy.mean: float64 for integer input, NumPy's
    RuntimeWarning for an empty slice): a sum on the devices divided by the
    count."""
    a = _asdist(a)
    axes = normalize_axes(axis, a.ndim)
    sdt, rdt = _mean_dtypes(a, dtype)
    cnt = _count(a, axes, keepdims, where)
    _empty_warning(cnt)
    s = ufunc_reduce(numpy.add, a, axes, sdt, None, keepdims, _NOVALUE, where)
    res = _divide(s, cnt, rdt)
    return _write_out(res, out) if out is not None else res


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NOVALUE, correction=_NOVALUE):
    """NumPy's _var: the mean with keepdims, the squared deviations, their sum
    over max(count - ddof, 0)."""
    a = _asdist(a)
    if correction is not _NOVALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    axes = normalize_axes(axis, a.ndim)
    vdt = dtype if dtype is not None else (numpy.float64 if a.dtype.kind in "biu" else None)
    cnt = _count(a, axes, keepdims, where)
    if (cnt - ddof <= 0 if isinstance(cnt, int) else bool((cnt - ddof <= 0).any())):
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
        if mean is _NOVALUE:
            m = ufunc_reduce(numpy.add, a, axes, vdt, None, True, _NOVALUE, where)
            c1 = cnt if isinstance(cnt, int) else _count(a, axes, True, where)
            m = _divide(m, c1, m.dtype)
        else:
            m = _asdist(mean)
        x = numpy.subtract(a, m)
        if x.dtype.kind == "c":
            x = numpy.multiply(x, numpy.conjugate(x)).astype(numpy.dtype(x.dtype.char.lower()))
        else:
            x = numpy.multiply(x, x)
        s = ufunc_reduce(numpy.add, x, axes, vdt if x.dtype.kind != "c" else None, None,
                         keepdims, _NOVALUE, where)
        d = cnt - ddof
        d = numpy.maximum(d, 0) if not isinstance(d, int) else (d if d > 0 else 0)
        res = _divide(s, d, s.dtype)
    return _write_out(res, out) if out is not None else res


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NOVALUE, correction=_NOVALUE):
    """The standard deviation over `axis` (numpy.std: `ddof`, `correction`,
    `mean`, `where`): the square root of var."""
    v = var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean, correction=correction)
    with numpy.errstate(all="ignore"):
        if v.ndim:
            res = numpy.sqrt(v, out=v)  # as NumPy: an integer dtype= fails here
        else:  # NumPy's scalar result is cast back to its dtype
            res = numpy.sqrt(v)
            if res.dtype != v.dtype:
                res = res.astype(v.dtype)
    return _write_out(res, out) if out is not None else res


# ---- NaN-ignoring ---------------------------------------------------------------------

def _notnan(a, where=True):
    """Where a is not NaN (and where= holds)."""
    w = numpy.logical_not(numpy.isnan(a))
    return w if where is True else numpy.logical_and(w, _where_array(where, a))


def _nan_fold(ufunc, a, axis, dtype, out, keepdims, initial, where):
    """ufunc.reduce over the non-NaN elements (NaN counts as the identity)."""
    a = _asdist(a)
    if a.dtype.kind in "fc":
        where = _notnan(a, where)
        if initial is _NOVALUE:
            initial = ufunc.identity
    return ufunc_reduce(ufunc, a, axis, dtype, out, keepdims, initial, where)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The sum over `axis` with NaN counted as zero (numpy.nansum): NaNs
    masked out by `where` on the devices."""
    return _nan_fold(numpy.add, a, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The product over `axis` with NaN counted as one (numpy.nanprod)."""
    return _nan_fold(numpy.multiply, a, axis, dtype, out, keepdims, initial, where)


def _nan_extreme(uf, name, a, axis, out, keepdims, initial, where):
    a = _asdist(a)
    if a.dtype.kind not in "fc":
        return ufunc_reduce(numpy.maximum if name == "nanmax" else numpy.minimum, a, axis,
                            None, out, keepdims, initial, where)
    res = ufunc_reduce(uf, a, axis, None, None, keepdims, initial, where)
    if bool(numpy.isnan(res).any() if res.ndim else numpy.isnan(res)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return _write_out(res, out) if out is not None else res


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The largest value over `axis` ignoring NaN (numpy.nanmax: NaN and a
    RuntimeWarning for an all-NaN slice)."""
    return _nan_extreme(numpy.fmax, "nanmax", a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    """The smallest value over `axis` ignoring NaN (numpy.nanmin), as nanmax."""
    return _nan_extreme(numpy.fmin, "nanmin", a, axis, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """The mean over `axis` ignoring NaN (numpy.nanmean)."""
    a = _asdist(a)
    if a.dtype.kind not in "fc":
        return mean(a, axis, dtype, out, keepdims, where=where)
    if dtype is not None and numpy.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    return mean(a, axis, dtype, out, keepdims, where=_notnan(a, where))


# ---- scans ----------------------------------------------------------------------------

def _scan(ufunc, a, axis, dtype, out):
    """ufunc.accumulate along one axis (None: the flattened array) on the devices."""
    a = _asdist(a)
    if axis is None:
        if a.ndim != 1:
            a = _flatten(a)
        axis = 0
    if a.ndim == 0:
        raise ValueError("cannot accumulate on a scalar")
    ax = normalize_axes(operator.index(axis), a.ndim)[0]
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rdt = ufunc.accumulate(numpy.ones(1, a.dtype), dtype=dtype).dtype
    x = a if a.dtype == rdt else a.astype(rdt)
    if x.size == 0:
        res = x.copy()
    else:
        res = _core._scan(x, ufunc, ax)
    return _write_out(res, out) if out is not None else res


def _flatten(a):
    """a as 1-d in C order, on the devices (a view when its chunks hold whole rows)."""
    return _core._flatten(a)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sums along `axis` (numpy.cumsum; the array flattened where
    `axis` is None).  Chunks that hold the whole axis scan alone; blocks that
    tile it scan alone and then add the totals of the blocks before them;
    other layouts are resharded to hold the axis whole, and back."""
    return _scan(numpy.add, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Running products along `axis` (numpy.cumprod), as cumsum."""
    return _scan(numpy.multiply, a, axis, dtype, out)


def ufunc_accumulate(ufunc, a, axis=0, dtype=None, out=None):
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = axis[0]
    return _scan(ufunc, a, axis, dtype, out)


FUNCTIONS = {
    "sum": sum, "prod": prod, "max": max, "min": min, "amax": max, "amin": min,
    "mean": mean, "var": var, "std": std, "any": any, "all": all, "ptp": ptp,
    "argmax": argmax, "argmin": argmin, "nansum": nansum, "nanprod": nanprod,
    "nanmax": nanmax, "nanmin": nanmin, "nanmean": nanmean, "cumsum": cumsum,
    "cumprod": cumprod,
}
