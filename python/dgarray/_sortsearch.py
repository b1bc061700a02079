"""Searching and ordering with NumPy's semantics: searchsorted, digitize,
interp, lexsort, partition, argpartition, take_along_axis, put_along_axis.

searchsorted runs the backend's binary searches where the data lives
(``_core._search``): the smaller of the sequence and the values is copied to
every device of the other; a copied sequence gives each chunk of values its
positions at once, copied values get from each device the positions within
its chunks of the sequence, added up across devices (a SUM-mode result, as a
reduction's).  interp and digitize are searches plus elementwise work;
partition is a sort (a valid partition), lexsort a chain of stable sorts.
"""
import math

import numpy

from . import _core
from ._compose import asdist, host_or_dist, normalize_axis_index, view
from ._creation import empty, zeros
from ._indexing import take, where
from ._reductions import all as all_
from ._shape import argsort, concatenate, ravel, reshape, sort

_DA = _core.DistributedArray


def _replica(a):
    return a if a.mode == "replica" else a.change_mode("replica")


def _progressions_meet(r1, r2):
    """True if two ranges (start, stop, step) share an element."""
    (s1, e1, t1), (s2, e2, t2) = r1, r2
    if s1 >= e1 or s2 >= e2:
        return False
    lo = max(s1, s2)
    hi = min(s1 + (e1 - 1 - s1) // t1 * t1, s2 + (e2 - 1 - s2) // t2 * t2)
    if lo > hi:
        return False
    g = math.gcd(t1, t2)
    if (s2 - s1) % g:
        return False
    # x = s1 + t1 * i with x = s2 (mod t2): i = (s2 - s1) / g * inv(t1 / g) (mod t2 / g)
    m = t2 // g
    i = ((s2 - s1) // g) * pow(t1 // g, -1, m) % m if m > 1 else 0
    period = t1 * m
    x = s1 + t1 * i
    if x < lo:
        x += -(-(lo - x) // period) * period
    return x <= hi


def _boxes_meet(b1, b2):
    """True if two boxes ((start, stop, step) per axis) share an element."""
    return all(_progressions_meet(r1, r2) for r1, r2 in zip(b1, b2))


def disjoint(a):
    """a with pairwise disjoint chunks: as it is when they are, else resharded
    to the first axis split evenly over a's devices."""
    layout = [box for _, box in a._layout() if all(s < e for s, e, _ in box)]
    if all(not _boxes_meet(layout[i], layout[j]) for i in range(len(layout))
           for j in range(i + 1, len(layout))):
        return a
    devs = a.devices
    n = a.shape[0]
    k = max(1, min(len(devs), n))
    rest = tuple((0, m, 1) for m in a.shape[1:])
    return a._reshard_layout([(devs[i], ((n * i // k, n * (i + 1) // k, 1),) + rest)
                              for i in range(k)])


def whole_on(a, devices):
    """a held whole on each of the devices (a REPLICA layout)."""
    box = tuple((0, n, 1) for n in a.shape)
    layout = [(d, box) for d in sorted(set(devices))]
    if sorted(a._layout()) == layout:
        return a
    return a._reshard_layout(layout)


def _common_dtype(a, v):
    vd = v.dtype if isinstance(v, (_DA, numpy.ndarray)) else numpy.asarray(v).dtype
    return numpy.result_type(a.dtype, vd)


def searchsorted(a, v, side="left", sorter=None):
    """Where v's elements go in the sorted 1-d a to keep it sorted (NumPy's
    order: NaN last), found by binary searches on the devices."""
    a = asdist(a)
    vv = host_or_dist(v)
    numpy.searchsorted(numpy.zeros(min(a.shape[0], 1) if a.ndim == 1 else
                                   (1,) * max(a.ndim, 1), a.dtype),
                       numpy.zeros((), vv.dtype), side=side)  # NumPy's errors
    if sorter is not None:
        s = host_or_dist(sorter)
        if s.ndim != 1 or s.shape[0] != a.shape[0]:
            raise ValueError("sorter.size must equal a.size")
        if s.dtype.kind not in "iu":
            raise TypeError("sorter must only contain integers")
        if s.size:
            lo, hi = (int(s.min()), int(s.max()))
            if lo < 0 or hi >= a.shape[0]:
                raise ValueError("Sorter index out of range.")
        a = take(a, s)
    dt = _common_dtype(a, vv)
    a = _replica(a if a.dtype == dt else a.astype(dt))
    v = asdist(vv, dt)
    v = _replica(v)
    right = str(side)[:1].lower() == "r"
    if v.size == 0 or a.size == 0:
        return zeros(v.shape, numpy.intp)
    if a.nbytes <= v.nbytes:
        return _core._search(whole_on(a, v.devices), v, right, 0)
    a = disjoint(a)
    return _core._search(a, whole_on(v, a.devices), right, 1 if len(a.devices) > 1 else 0)


def digitize(x, bins, right=False):
    """The index of the bin each element of x falls in (bins increasing or
    decreasing): a search of the bins."""
    x, b = asdist(x), asdist(bins)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if b.ndim != 1:
        numpy.digitize(numpy.zeros(1), numpy.zeros((1,) * b.ndim))  # NumPy's error
    if b.shape[0] > 1:
        lo, hi = view(b, (slice(None, -1),)), view(b, (slice(1, None),))
        inc = all_(numpy.less_equal(lo, hi))
        dec = all_(numpy.greater_equal(lo, hi))
        inc, dec = bool(inc), bool(dec)
        if not inc and not dec:
            raise ValueError("bins must be monotonically increasing or decreasing")
        mono = 1 if inc else -1
    else:
        mono = 1
    side = "left" if right else "right"
    if mono == -1:
        return numpy.subtract(b.shape[0], searchsorted(view(b, (slice(None, None, -1),)), x,
                                                       side=side))
    return searchsorted(b, x, side=side)


def _interp_real(x, j, xp, fp, lval, rval, n):
    """NumPy's interpolation of real values at x (float64), j the index of
    the sample at or below each (-1 below xp[0])."""
    jj = numpy.minimum(numpy.maximum(j, 0), max(n - 2, 0))
    x0, x1 = take(xp, jj), take(xp, numpy.add(jj, 1) if n > 1 else jj)
    y0, y1 = take(fp, jj), take(fp, numpy.add(jj, 1) if n > 1 else jj)
    slope = numpy.true_divide(numpy.subtract(y1, y0), numpy.subtract(x1, x0))
    res = numpy.add(numpy.multiply(slope, numpy.subtract(x, x0)), y0)
    other = numpy.add(numpy.multiply(slope, numpy.subtract(x, x1)), y1)
    res = where(numpy.isnan(res), other, res)
    res = where(numpy.logical_and(numpy.isnan(res), numpy.equal(y0, y1)), y0, res)
    return res, x0, y0


def _interp_cplx_part(x, x0, x1, y0, y1):
    """One part (real or imaginary) of NumPy's complex interpolation: the
    slope is the difference times the inverse of the spacing."""
    inv = numpy.true_divide(1.0, numpy.subtract(x1, x0))
    slope = numpy.multiply(numpy.subtract(y1, y0), inv)
    res = numpy.add(numpy.multiply(slope, numpy.subtract(x, x0)), y0)
    other = numpy.add(numpy.multiply(slope, numpy.subtract(x, x1)), y1)
    res = where(numpy.isnan(res), other, res)
    return where(numpy.logical_and(numpy.isnan(res), numpy.equal(y0, y1)), y0, res)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation, as NumPy's: the
    interval of each x found by a search of xp, the formula (and its NaN
    fallbacks) NumPy's, elementwise on the devices."""
    fph = host_or_dist(fp)
    xp_in, fp_in = xp, fp
    cplx = fph.dtype.kind == "c"
    fdt = numpy.dtype(numpy.complex128 if cplx else numpy.float64)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
    x = asdist(x, numpy.float64)
    xp = asdist(xp, numpy.float64)
    fp = asdist(fph, fdt)
    if period is not None:
        if xp.ndim != 1 or fp.ndim != 1:
            raise ValueError("Data points must be 1-D sequences")
        if xp.shape[0] != fp.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        x = numpy.remainder(x, period)
        xp = numpy.remainder(xp, period)
        order = argsort_(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([numpy.subtract(view(xp, (slice(-1, None),)), period), xp,
                          numpy.add(view(xp, (slice(0, 1),)), period)])
        fp = concatenate([view(fp, (slice(-1, None),)), fp, view(fp, (slice(0, 1),))])
    if xp.ndim != 1 or fp.ndim != 1:  # NumPy's error, from what was passed
        numpy.interp(numpy.zeros(1),
                     numpy.zeros((1,) * max(xp.ndim, 1)) if isinstance(xp_in, _DA) else xp_in,
                     numpy.zeros((1,) * max(fp.ndim, 1)) if isinstance(fp_in, _DA) else fp_in)
    n = xp.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    lval = view(fp, (0,)) if left is None else numpy.asarray(left, fdt)[()]
    rval = view(fp, (-1,)) if right is None else numpy.asarray(right, fdt)[()]
    if x.size == 0:
        return empty(x.shape, fdt)
    xp = whole_on(_replica(xp), x.devices)
    fp = whole_on(_replica(fp), x.devices)
    if n == 1:
        at = view(fp, (0,))
        res = where(numpy.less(x, view(xp, (0,))), lval,
                    where(numpy.greater(x, view(xp, (0,))), rval, at))
        return res if res.dtype == fdt else res.astype(fdt)
    j = numpy.subtract(searchsorted(xp, x, side="right"), 1)
    if cplx:
        jj = numpy.minimum(numpy.maximum(j, 0), n - 2)
        x0, x1 = take(xp, jj), take(xp, numpy.add(jj, 1))
        y0, y1 = take(fp, jj), take(fp, numpy.add(jj, 1))
        re = _interp_cplx_part(x, x0, x1, numpy.real(y0), numpy.real(y1))
        im = _interp_cplx_part(x, x0, x1, numpy.imag(y0), numpy.imag(y1))
        res = numpy.add(re.astype(fdt), numpy.multiply(im.astype(fdt), 1j))
    else:
        res, x0, y0 = _interp_real(x, j, xp, fp, lval, rval, n)
    res = where(numpy.equal(x0, x), y0, res)
    res = where(numpy.equal(j, n - 1), view(fp, (n - 1,)), res)
    res = where(numpy.greater(x, view(xp, (n - 1,))), rval, res)
    res = where(numpy.equal(j, -1), lval, res)
    res = where(numpy.isnan(x), x.astype(fdt) if cplx else x, res)
    return res if res.dtype == fdt else res.astype(fdt)


def argsort_(a, axis=-1):
    return argsort(a, axis=axis)


# ---- ordering --------------------------------------------------------------------------

def _check_kth(kth, n):
    """NumPy's errors for partition indices into an axis of n elements."""
    k = numpy.asarray(kth)
    if k.dtype == numpy.bool_:
        raise ValueError("Booleans unacceptable as partition index")
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if k.ndim > 1:
        numpy.partition(numpy.zeros(1), [[0]])  # NumPy's error
    for x in k.reshape(-1):
        x = int(x)
        if not -n <= x < n:
            raise ValueError(f"kth(={x if x >= 0 else x + n}) out of bounds ({n})")


def _partition_args(a, kth, axis, kind, order):
    if not isinstance(kind, str):
        raise TypeError(f"select kind must be str, not {type(kind).__name__}")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    a = asdist(a)
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:
        raise numpy.exceptions.AxisError(axis, 0)
    axis = normalize_axis_index(axis, a.ndim)
    _check_kth(kth, a.shape[axis])
    return a, axis


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of a in which each kth element is where a sort puts it, the
    smaller ones before it and the others after: here a sort (stable), which
    is such a partition."""
    a, axis = _partition_args(a, kth, axis, kind, order)
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """The indices that partition a (those of a stable sort)."""
    a = asdist(a)
    if a.ndim == 0:  # NumPy partitions a 0-d array as one element along a new axis
        a = reshape(a, (1,))
    a, axis = _partition_args(a, kth, axis, kind, order)
    return argsort(a, axis=axis)


def lexsort(keys, axis=-1):
    """The indices that sort by several keys, the last one primary: stable
    sorts from the first key to the last, each of the keys gathered in the
    order found so far."""
    if isinstance(keys, _DA):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        ks = [view(keys, (i,)) for i in range(keys.shape[0])]
    elif isinstance(keys, numpy.ndarray) and keys.ndim >= 1:
        ks = [asdist(k) for k in keys]
    else:
        if isinstance(keys, numpy.ndarray) or not isinstance(keys, (tuple, list)):
            keys = numpy.asarray(keys)
            if keys.ndim == 0:
                raise TypeError("need sequence of keys with len > 0 in lexsort")
        ks = [asdist(k) for k in keys]
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if any(k.shape != ks[0].shape for k in ks):
        raise ValueError("all keys need to be the same shape")
    k0 = ks[0]
    if k0.ndim == 0:
        if axis not in (-1, 0):
            raise numpy.exceptions.AxisError(axis, 0)
        return zeros((), numpy.intp)
    axis = normalize_axis_index(axis, k0.ndim)
    idx = argsort(k0, axis=axis)
    for k in ks[1:]:
        idx = take_along_axis(idx, argsort(take_along_axis(k, idx, axis), axis=axis), axis)
    return idx


def _along_index(shape, indices, axis):
    """The advanced-indexing key of take_along_axis: aranges broadcast on
    the other axes, indices on `axis`."""
    nd = len(shape)
    key = []
    for d in range(nd):
        if d == axis:
            key.append(indices)
        else:
            s = [1] * nd
            s[d] = shape[d]
            key.append(numpy.arange(shape[d]).reshape(s))
    return tuple(key)


def _along_args(arr, indices, axis):
    arr = asdist(arr)
    idx = host_or_dist(indices)
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return ravel(arr), idx, 0
    if arr.ndim != idx.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return arr, idx, normalize_axis_index(axis, arr.ndim)


def take_along_axis(arr, indices, axis=-1):
    """arr's elements at the indices along axis (the others broadcast):
    gathered on the devices."""
    a, idx, axis = _along_args(arr, indices, axis)
    return a[_along_index(a.shape, idx, axis)]


def put_along_axis(arr, indices, values, axis):
    """arr's elements at the indices along axis set to values, in place."""
    if not isinstance(arr, _DA):
        raise TypeError(f"put_along_axis: arr must be a DistributedArray, not "
                        f"{type(arr).__name__}")
    if axis is None:
        idx = host_or_dist(indices)
        if idx.dtype.kind not in "iu":
            raise IndexError("`indices` must be an integer array")
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = _core._reshape(arr, (arr.size,), True)
        target = flat if flat is not None else reshape(arr, (arr.size,)).copy()
        target[_along_index(target.shape, idx, 0)] = values
        if flat is None:
            arr[...] = reshape(target, arr.shape)
        return
    a, idx, axis = _along_args(arr, indices, axis)
    a[_along_index(a.shape, idx, axis)] = values


FUNCTIONS = {
    "searchsorted": searchsorted, "digitize": digitize, "interp": interp,
    "partition": partition, "argpartition": argpartition, "lexsort": lexsort,
    "take_along_axis": take_along_axis, "put_along_axis": put_along_axis,
}


def _method_searchsorted(a, v, side="left", sorter=None):
    return searchsorted(a, v, side, sorter)


def _method_partition(a, kth, axis=-1, kind="introselect", order=None):
    """ndarray.partition: a partitioned in place."""
    if _core._readonly(a):
        raise ValueError("assignment destination is read-only")
    r = partition(a, kth, axis, kind, order)
    a[...] = r


def _method_argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return argpartition(a, kth, axis, kind, order)


METHODS = {"searchsorted": _method_searchsorted, "partition": _method_partition,
           "argpartition": _method_argpartition}
