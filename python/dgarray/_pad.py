"""numpy.pad on the devices: every mode NumPy has (constant, edge,
linear_ramp, maximum, mean, median, minimum, reflect, symmetric, wrap,
empty; a callable through NumPy's fallback), built as NumPy builds it: a
new array with the original in its middle, then each axis's pads written
from views of what is already there (reflections and wraps repeated until
the pads are full), so the values and the order of the work are NumPy's
and only the pad regions move between chunks.
"""
import operator

import numpy

from . import _core
from ._compose import asdist, view
from . import _fallback
from ._creation import arange, empty
from ._indexing import setitem
from ._quantiles import median
from ._reductions import max as amax, mean, min as amin
from ._shape import moveaxis, reshape, squeeze

_DA = _core.DistributedArray
_ALLOWED = {"empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
            "linear_ramp": ["end_values"], "maximum": ["stat_length"],
            "mean": ["stat_length"], "median": ["stat_length"], "minimum": ["stat_length"],
            "reflect": ["reflect_type"], "symmetric": ["reflect_type"]}


def _at(sl, axis):
    return (slice(None),) * axis + (sl, Ellipsis)


def _pairs(x, ndim, as_index=False):
    """A pad argument as one (before, after) pair per axis (NumPy's reading:
    a scalar, a pair, or one pair per axis)."""
    if x is None:
        return ((None, None),) * ndim
    x = numpy.array(x.get() if isinstance(x, _DA) else x)
    if as_index:
        x = numpy.round(x).astype(numpy.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x < 0:
                raise ValueError("index can't contain negative values")
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ValueError("index can't contain negative values")
            return ((x[0], x[1]),) * ndim
    if as_index and x.min() < 0:
        raise ValueError("index can't contain negative values")
    return numpy.broadcast_to(x, (ndim, 2)).tolist()


def _set(dst, value):
    setitem(dst, Ellipsis, value)


def _set_pads(padded, axis, widths, values):
    """The before and after pads of axis set to the two values."""
    _set(view(padded, _at(slice(None, widths[0]), axis)), values[0])
    _set(view(padded, _at(slice(padded.shape[axis] - widths[1], None), axis)), values[1])


def _edges(padded, axis, widths):
    lo = widths[0]
    hi = padded.shape[axis] - widths[1]
    return (view(padded, _at(slice(lo, lo + 1), axis)),
            view(padded, _at(slice(hi - 1, hi), axis)))


def _linspace(start, stop, num, dtype, axis):
    """NumPy's linspace(start, stop, num, endpoint=False, dtype, axis) for
    array bounds, on the devices."""
    dt = numpy.result_type(start.dtype if isinstance(start, (_DA, numpy.ndarray)) else start,
                           stop.dtype if isinstance(stop, (_DA, numpy.ndarray)) else stop, 1.0)
    delta = numpy.subtract(stop, start, dtype=dt)
    nd = numpy.ndim(delta) if not isinstance(delta, _DA) else delta.ndim
    y = reshape(arange(0, num, dtype=dt), (-1,) + (1,) * nd)
    if num > 0:
        step = numpy.true_divide(delta, num)
        if bool(numpy.any(numpy.equal(step, 0))):
            y = numpy.multiply(numpy.true_divide(y, num), delta)
        else:
            y = numpy.multiply(y, step)
    y = numpy.add(y, start)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if numpy.dtype(dtype).kind in "iu":
        y = numpy.floor(y)
    return y.astype(dtype) if y.dtype != dtype else y


def _ramps(padded, axis, widths, ends):
    out = []
    for end, edge, w in zip(ends, _edges(padded, axis, widths), widths):
        out.append(_linspace(end, squeeze(edge, axis), w, padded.dtype, axis))
    out[1] = view(out[1], _at(slice(None, None, -1), axis))
    return out


def _stats(padded, axis, widths, lengths, func, name):
    lo = widths[0]
    hi = padded.shape[axis] - widths[1]
    most = hi - lo
    left, right = lengths
    if left is None or most < left:
        left = most
    if right is None or most < right:
        right = most
    if (left == 0 or right == 0) and name in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")

    def stat(chunk):
        s = func(chunk, axis=axis, keepdims=True)
        if padded.dtype.kind in "iu":
            s = numpy.round(s)
        return s
    ls = stat(view(padded, _at(slice(lo, lo + left), axis)))
    if left == right == most:
        return ls, ls
    return ls, stat(view(padded, _at(slice(hi - right, hi), axis)))


def _reflect_step(padded, axis, widths, method, period, include_edge):
    left, right = widths
    old = padded.shape[axis] - right - left
    if include_edge:
        old = old // period * period
        off = 1
    else:
        old = (old - 1) // (period - 1) * (period - 1) + 1 - 1
        off = 0
    if left > 0:
        n = min(old, left)
        stop = left - off
        chunk = view(padded, _at(slice(stop + n, stop if stop >= 0 else None, -1), axis))
        if method == "odd":
            chunk = numpy.subtract(numpy.multiply(2, view(padded, _at(slice(left, left + 1),
                                                                      axis))), chunk)
        _set(view(padded, _at(slice(left - n, left), axis)), chunk)
        left -= n
    if right > 0:
        n = min(old, right)
        size = padded.shape[axis]
        start = size - right + off - 2
        stop = start - n
        chunk = view(padded, _at(slice(start, stop if stop >= 0 else None, -1), axis))
        if method == "odd":
            e = size - right - 1
            chunk = numpy.subtract(numpy.multiply(2, view(padded, _at(slice(e, e + 1), axis))),
                                   chunk)
        s = size - right
        _set(view(padded, _at(slice(s, s + n), axis)), chunk)
        right -= n
    return left, right


def _wrap_step(padded, axis, widths, period0):
    left, right = widths
    size = padded.shape[axis]
    period = (size - right - left) // period0 * period0
    nl = nr = 0
    if left > 0:
        end = left + period
        chunk = view(padded, _at(slice(end - min(period, left), end), axis))
        if left > period:
            area = slice(left - period, left)
            nl = left - period
        else:
            area = slice(None, left)
        _set(view(padded, _at(area, axis)), chunk)
    if right > 0:
        start = size - right - period
        chunk = view(padded, _at(slice(start, start + min(period, right)), axis))
        if right > period:
            area = slice(size - right, size - right + period)
            nr = right - period
        else:
            area = slice(size - right, None)
        _set(view(padded, _at(area, axis)), chunk)
    return nl, nr


def pad(array, pad_width, mode="constant", **kwargs):
    """array padded with NumPy's modes, on the devices."""
    a = asdist(array)
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * a.ndim
        for ax, w in pad_width.items():
            seq[ax] = (w, w) if isinstance(w, int) else tuple(w)
        pad_width = seq
    pw = numpy.asarray(pad_width.get() if isinstance(pad_width, _DA) else pad_width)
    if pw.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    widths = _pairs(pw, a.ndim, as_index=True)
    if callable(mode):
        return _fallback.call(numpy.pad, (a, pad_width, mode), kwargs, "numpy.pad")
    if mode not in _ALLOWED:
        raise ValueError(f"mode '{mode}' is not supported")
    bad = set(kwargs) - set(_ALLOWED[mode])
    if bad:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {bad}")
    shape = tuple(int(lo) + n + int(hi) for n, (lo, hi) in zip(a.shape, widths))
    padded = empty(shape, a.dtype)
    middle = tuple(slice(int(lo), int(lo) + n) for n, (lo, _) in zip(a.shape, widths))
    if a.size:
        _set(view(padded, middle), a)
    axes = range(a.ndim)

    def roi(axis):
        return view(padded, (slice(None),) * (axis + 1) + middle[axis + 1:])
    if mode == "constant":
        vals = _pairs(kwargs.get("constant_values", 0), a.ndim)
        for ax, w, v in zip(axes, widths, vals):
            _set_pads(roi(ax), ax, w, v)
    elif mode == "empty":
        pass
    elif a.size == 0:
        for ax, w in zip(axes, widths):
            if a.shape[ax] == 0 and any(w):
                raise ValueError(f"can't extend empty axis {ax} using modes other than "
                                 "'constant' or 'empty'")
    elif mode == "edge":
        for ax, w in zip(axes, widths):
            r = roi(ax)
            _set_pads(r, ax, w, _edges(r, ax, w))
    elif mode == "linear_ramp":
        ends = _pairs(kwargs.get("end_values", 0), a.ndim)
        for ax, w, e in zip(axes, widths, ends):
            r = roi(ax)
            _set_pads(r, ax, w, _ramps(r, ax, w, e))
    elif mode in ("maximum", "minimum", "mean", "median"):
        func = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}[mode]
        lengths = _pairs(kwargs.get("stat_length"), a.ndim, as_index=True)
        for ax, w, ln in zip(axes, widths, lengths):
            r = roi(ax)
            _set_pads(r, ax, w, _stats(r, ax, w, ln, func, mode))
    elif mode in ("reflect", "symmetric"):
        method = kwargs.get("reflect_type", "even")
        for ax, (lo, hi) in zip(axes, widths):
            lo, hi = int(lo), int(hi)
            if a.shape[ax] == 1 and (lo > 0 or hi > 0):
                _set_pads(padded, ax, (lo, hi), _edges(padded, ax, (lo, hi)))
                continue
            r = roi(ax)
            while lo > 0 or hi > 0:
                lo, hi = _reflect_step(r, ax, (lo, hi), method, a.shape[ax],
                                       mode == "symmetric")
    else:  # wrap
        for ax, (lo, hi) in zip(axes, widths):
            lo, hi = int(lo), int(hi)
            r = roi(ax)
            while lo > 0 or hi > 0:
                lo, hi = _wrap_step(r, ax, (lo, hi), a.shape[ax])
    return padded


FUNCTIONS = {"pad": pad}
