"""NumPy's numerical functions composed of dgarray's elementwise work,
reductions and scans: trapezoid, unwrap, i0, the windows (bartlett,
blackman, hamming, hanning, kaiser), logspace, geomspace, cumulative_sum,
cumulative_prod, nancumsum, nancumprod, nanargmax, nanargmin, nanvar,
nanstd.  Each follows NumPy's sequence of operations, so dtypes and values
are NumPy's (to the rounding of reductions).
"""
import warnings

import numpy

from . import _core
from ._compose import asdist, host_or_dist, normalize_axis_index, view
from . import _fallback
from ._arrayfuncs import piecewise
from ._creation import arange, asarray, full, linspace, ones
from ._elementwise import copyto, real_of
from ._indexing import where, where as where_
from ._reductions import _write_out, all as all_, any as any_, argmax, argmin, sum as sum_, var
from ._shape import atleast_1d, concatenate, diff, reshape, squeeze

_DA = _core.DistributedArray
_NOVALUE = numpy._NoValue


def _along(axis, nd, sl):
    return (slice(None),) * (axis % nd) + (sl,)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y by the trapezoidal rule along an axis."""
    y = asdist(y)
    if x is None:
        d = dx
    else:
        x = asdist(x)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = reshape(d, tuple(shape))
        else:
            d = diff(x, axis=axis)
    nd = y.ndim
    s = numpy.add(view(y, _along(axis, nd, slice(1, None))),
                  view(y, _along(axis, nd, slice(None, -1))))
    return numpy.true_divide(numpy.multiply(d, s), 2.0).sum(axis)


def unwrap(p, discont=None, axis=-1, *, period=2 * numpy.pi):
    """p with the jumps between neighbours larger than discont replaced by
    their period complement (NumPy's steps: diff, mod, copyto, cumsum)."""
    p = asdist(p)
    nd = p.ndim
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    sl = _along(axis, nd, slice(1, None))
    dt = numpy.result_type(dd.dtype, period)
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high = period / 2
        ambiguous = True
    low = -high
    ddmod = numpy.add(numpy.remainder(numpy.subtract(dd, low), period), low)
    if ambiguous:
        copyto(ddmod, high, where=numpy.logical_and(numpy.equal(ddmod, low),
                                                     numpy.greater(dd, 0)))
    corr = numpy.subtract(ddmod, dd)
    copyto(corr, 0, where=numpy.less(numpy.abs(dd), discont))
    up = p.astype(dt)
    up[sl] = numpy.add(view(p, sl), numpy.cumsum(corr, axis))
    return up


def _chbevl(x, vals):
    """Clenshaw's sum of the Chebyshev series vals at x (NumPy's order)."""
    b0 = vals[0]
    b1 = 0.0
    b2 = 0.0
    for v in vals[1:]:
        b2 = b1
        b1 = b0
        b0 = numpy.add(numpy.subtract(numpy.multiply(x, b1), b2), v)
    return numpy.multiply(0.5, numpy.subtract(b0, b2))


def _i0_coefficients():
    """The two Chebyshev coefficient lists of NumPy's i0 (read from NumPy)."""
    from numpy.lib import _function_base_impl as fb
    return fb._i0A, fb._i0B


def i0(x):
    """The modified Bessel function of the first kind, order 0, by NumPy's
    two Chebyshev expansions (|x| <= 8 and above)."""
    x = asdist(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = x.astype(float)
    x = numpy.abs(x)
    ca, cb = _i0_coefficients()

    def small(v):
        return numpy.multiply(numpy.exp(v), _chbevl(numpy.subtract(numpy.true_divide(v, 2.0), 2),
                                                    ca))

    def large(v):
        return numpy.true_divide(numpy.multiply(numpy.exp(v), _chbevl(
            numpy.subtract(numpy.true_divide(32.0, v), 2.0), cb)), numpy.sqrt(v))
    return piecewise(x, [numpy.less_equal(x, 8.0)], [small, large])


def _window_size(M):
    values = numpy.array([0.0, M])
    return values[1], values.dtype


def _window_n(M):
    return arange(1 - M, M, 2)


def _window(M, formula):
    M, dt = _window_size(M)
    if M < 1:
        return asarray(numpy.array([], dtype=dt))
    if M == 1:
        return ones(1, dtype=dt)
    return formula(_window_n(M), M)


def bartlett(M):
    """The Bartlett (triangular) window."""
    return _window(M, lambda n, M: where(numpy.less_equal(n, 0),
                                         numpy.add(1, numpy.true_divide(n, M - 1)),
                                         numpy.subtract(1, numpy.true_divide(n, M - 1))))


def blackman(M):
    """The Blackman window."""
    return _window(M, lambda n, M: numpy.add(numpy.add(0.42, numpy.multiply(
        0.5, numpy.cos(numpy.true_divide(numpy.multiply(numpy.pi, n), M - 1)))), numpy.multiply(
        0.08, numpy.cos(numpy.true_divide(numpy.multiply(2.0 * numpy.pi, n), M - 1)))))


def hamming(M):
    """The Hamming window."""
    return _window(M, lambda n, M: numpy.add(0.54, numpy.multiply(0.46, numpy.cos(
        numpy.true_divide(numpy.multiply(numpy.pi, n), M - 1)))))


def hanning(M):
    """The Hann window."""
    return _window(M, lambda n, M: numpy.add(0.5, numpy.multiply(0.5, numpy.cos(
        numpy.true_divide(numpy.multiply(numpy.pi, n), M - 1)))))


def kaiser(M, beta):
    """The Kaiser window (NumPy's i0)."""
    values = numpy.array([0.0, M, beta])
    M, beta = values[1], values[2]
    if M == 1:
        return ones(1, dtype=values.dtype)
    n = arange(0, M)
    alpha = (M - 1) / 2.0
    r = numpy.power(numpy.true_divide(numpy.subtract(n, alpha), alpha), 2.0)
    return numpy.true_divide(i0(numpy.multiply(beta, numpy.sqrt(numpy.subtract(1, r)))),
                             i0(asdist(beta)))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base raised to the points of linspace(start, stop)."""
    if not isinstance(base, (float, int)) and numpy.ndim(base):
        return _fallback.call(numpy.logspace, (start, stop, num, endpoint, base, dtype, axis),
                              {}, "numpy.logspace")
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    r = numpy.power(base, y)
    return r if dtype is None else r.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale (NumPy's signs and endpoints)."""
    if numpy.ndim(start) or numpy.ndim(stop) or axis != 0:
        return _fallback.call(numpy.geomspace, (start, stop, num, endpoint, dtype, axis), {},
                              "numpy.geomspace")
    s, e = numpy.asanyarray(start), numpy.asanyarray(stop)
    if s == 0 or e == 0:
        raise ValueError("Geometric sequence cannot include zero")
    dt = numpy.result_type(s, e, float(num), numpy.zeros((), dtype))
    dtype = dt if dtype is None else numpy.dtype(dtype)
    s, e = s.astype(dt), e.astype(dt)
    sign = numpy.sign(s)
    s = s / sign
    e = e / sign
    y = linspace(numpy.log10(s), numpy.log10(e), num=num, endpoint=endpoint)
    r = numpy.power(10.0, y)
    if dt != r.dtype:
        r = r.astype(dt)
    if num > 0:
        r[0] = s
        if num > 1 and endpoint:
            r[-1] = e
    r = numpy.multiply(r, sign)
    return r if r.dtype == dtype else r.astype(dtype)


def _cumulative(x, ufunc, axis, dtype, out, include_initial):
    x = atleast_1d(asdist(x))
    if axis is None:
        if x.ndim >= 2:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    axis = normalize_axis_index(axis, x.ndim)
    if out is not None and include_initial:
        ufunc.accumulate(x, axis=axis, dtype=dtype, out=out[_along(axis, x.ndim,
                                                                    slice(1, None))])
        out[_along(axis, x.ndim, 0)] = ufunc.identity
        return out
    res = ufunc.accumulate(x, axis=axis, dtype=dtype, out=out)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        res = concatenate([full(tuple(shape), ufunc.identity, res.dtype), res], axis=axis)
    return res


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The running sums along an axis (the identity first, if asked)."""
    return _cumulative(x, numpy.add, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The running products along an axis."""
    return _cumulative(x, numpy.multiply, axis, dtype, out, include_initial)


def _replace_nan(a, val):
    """(a with NaNs replaced by val (a copy), the NaN mask or None)."""
    a = asdist(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = numpy.isnan(a)
    a = a.copy()
    copyto(a, val, where=mask)
    return a, mask


def nancumsum(a, axis=None, dtype=None, out=None):
    """The running sums, NaNs counted as zero."""
    return numpy.cumsum(_replace_nan(a, 0)[0], axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """The running products, NaNs counted as one."""
    return numpy.cumprod(_replace_nan(a, 1)[0], axis=axis, dtype=dtype, out=out)


def _nanarg(a, axis, out, keepdims, fill, func):
    a, mask = _replace_nan(a, fill)
    if mask is not None and mask.size:
        m = all_(mask, axis=axis)
        # axis None: m is read as it is (in a job every process holds its
        # value; any_ of it would be one device's, broadcast to the others)
        if bool(m if m.ndim == 0 else any_(m)):
            raise ValueError("All-NaN slice encountered")
    kw = {} if keepdims is _NOVALUE else {"keepdims": keepdims}
    return func(a, axis=axis, out=out, **kw)


def nanargmax(a, axis=None, out=None, *, keepdims=_NOVALUE):
    """The index of the largest non-NaN element."""
    return _nanarg(a, axis, out, keepdims, -numpy.inf, argmax)


def nanargmin(a, axis=None, out=None, *, keepdims=_NOVALUE):
    """The index of the smallest non-NaN element."""
    return _nanarg(a, axis, out, keepdims, numpy.inf, argmin)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NOVALUE, *, where=_NOVALUE,
           mean=_NOVALUE, correction=_NOVALUE):
    """The variance of the non-NaN elements, as NumPy computes it."""
    arr, mask = _replace_nan(a, 0)
    kd = False if keepdims is _NOVALUE else keepdims
    wh = True if where is _NOVALUE else where
    if mask is None:
        kw = {}
        if mean is not _NOVALUE:
            kw["mean"] = mean
        if correction is not _NOVALUE:
            kw["correction"] = correction
        return var(arr, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=kd, where=wh, **kw)
    if dtype is not None:
        dtype = numpy.dtype(dtype)
        if dtype.kind not in "fc":
            raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and out.dtype.kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")
    if correction is not _NOVALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    cnt = sum_(numpy.logical_not(mask), axis=axis, dtype=numpy.intp, keepdims=True, where=wh)
    if mean is not _NOVALUE:
        avg = asdist(mean)
    else:
        avg = sum_(arr, axis=axis, dtype=dtype, keepdims=True, where=wh)
        with numpy.errstate(all="ignore"):
            avg = numpy.true_divide(avg, cnt).astype(avg.dtype) if avg.dtype.kind in "fc" \
                else numpy.true_divide(avg, cnt)
    arr = numpy.subtract(arr, avg).astype(arr.dtype)
    copyto(arr, 0, where=mask)
    if arr.dtype.kind == "c":
        sqr = real_of(numpy.multiply(arr, numpy.conjugate(arr)))
    else:
        sqr = numpy.multiply(arr, arr)
    v = sum_(sqr, axis=axis, dtype=dtype, keepdims=kd, where=wh)
    if v.ndim < cnt.ndim:
        cnt = squeeze(cnt, axis) if axis is not None else squeeze(cnt)
    dof = numpy.subtract(cnt, ddof)
    with numpy.errstate(all="ignore"):
        v = numpy.true_divide(v, dof).astype(v.dtype)
    bad = numpy.less_equal(dof, 0)
    if bool(any_(bad)):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=2)
        v = where_(bad, numpy.array(numpy.nan, v.dtype), v)
    return _write_out(v, out) if out is not None else v


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NOVALUE, *, where=_NOVALUE,
           mean=_NOVALUE, correction=_NOVALUE):
    """The standard deviation of the non-NaN elements."""
    v = nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where,
               mean=mean, correction=correction)
    return numpy.sqrt(v, out=v) if v.ndim else numpy.sqrt(v).astype(v.dtype)


FUNCTIONS = {
    "trapezoid": trapezoid, "unwrap": unwrap, "i0": i0, "bartlett": bartlett,
    "blackman": blackman, "hamming": hamming, "hanning": hanning, "kaiser": kaiser,
    "logspace": logspace, "geomspace": geomspace, "cumulative_sum": cumulative_sum,
    "cumulative_prod": cumulative_prod, "nancumsum": nancumsum, "nancumprod": nancumprod,
    "nanargmax": nanargmax, "nanargmin": nanargmin, "nanvar": nanvar, "nanstd": nanstd,
}
