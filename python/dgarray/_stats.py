"""Weighted means and covariances with NumPy's semantics: average, cov,
corrcoef; composed of dgarray's reductions, elementwise work and matrix
product (X X^H on the devices), step for step as NumPy computes them, so
that dtypes, warnings and errors are NumPy's.
"""
import warnings

import numpy

from . import _core
from ._compose import asdist, host_or_dist, normalize_axis_tuple, view
from ._creation import empty
from ._elementwise import imag_of, real_of
from ._linalg import dot
from ._matrix import diag
from ._reductions import mean, sum as sum_
from ._shape import broadcast_to, concatenate, reshape, squeeze, transpose

_DA = _core.DistributedArray
_NOVALUE = numpy._NoValue


def weights_valid(weights, a, axis):
    """The weights of average / quantile: a's shape, or a's along axis (then
    shaped to broadcast against a)."""
    w = asdist(weights)
    if a.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.shape != tuple(a.shape[ax] for ax in axis):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        order = list(numpy.argsort(axis))
        if order != list(range(w.ndim)):
            w = transpose(w, order)
        w = reshape(w, tuple(s if ax in axis else 1 for ax, s in enumerate(a.shape)))
    return w


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NOVALUE):
    """The (weighted) average along axes, as NumPy's: its dtypes, its
    ZeroDivisionError for weights summing to zero."""
    a = asdist(a)
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    kd = {} if keepdims is _NOVALUE else {"keepdims": keepdims}
    if weights is None:
        avg = mean(a, axis, **kd)
        scl = avg.dtype.type(a.size / max(avg.size, 1)) if avg.size else \
            avg.dtype.type(a.size / avg.size if avg.size else numpy.nan)
    else:
        w = weights_valid(weights, a, axis)
        if a.dtype.kind in "biu":
            rdt = numpy.result_type(a.dtype, w.dtype, "f8")
        else:
            rdt = numpy.result_type(a.dtype, w.dtype)
        scl = sum_(w, axis=axis, dtype=rdt, **kd)
        if bool(numpy.any(numpy.equal(scl, 0.0))):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = numpy.true_divide(sum_(numpy.multiply(a, w, dtype=rdt), axis, **kd), scl)
    if returned:
        if not isinstance(scl, _DA):
            scl = asdist(numpy.asarray(scl))
        if scl.shape != avg.shape:
            scl = broadcast_to(scl, avg.shape).copy()
        return avg, scl
    return avg


def _as_2d(m, dtype):
    """m as NumPy's array(m, ndmin=2, dtype=dtype) on the devices."""
    x = asdist(m)
    if x.dtype != dtype:
        x = x.astype(dtype)
    if x.ndim < 2:
        x = reshape(x, (1,) * (2 - x.ndim) + x.shape)
    return x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """The covariance matrix of the variables (rows, or columns with
    rowvar=False), as NumPy computes it: the (weighted) means removed, then
    X X^H over the degrees of freedom, on the devices."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    mm = host_or_dist(m)
    if mm.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    yy = None
    if y is not None:
        yy = host_or_dist(y)
        if yy.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = numpy.result_type(mm.dtype, numpy.float64) if yy is None else \
            numpy.result_type(mm.dtype, yy.dtype, numpy.float64)
    dtype = numpy.dtype(dtype)
    X = _as_2d(mm, dtype)
    if not rowvar and mm.ndim != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return empty((0, 0))
    if yy is not None:
        Y = _as_2d(yy, dtype)
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        X = concatenate((X, Y), axis=0)
    else:
        X = X.copy()
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        fw = numpy.asarray(fweights.get() if isinstance(fweights, _DA) else fweights,
                           dtype=float)
        if not numpy.all(fw == numpy.around(fw)):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if any(fw < 0):
            raise ValueError("fweights cannot be negative")
        w = fw
    aw = None
    if aweights is not None:
        aw = numpy.asarray(aweights.get() if isinstance(aweights, _DA) else aweights,
                           dtype=float)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if any(aw < 0):
            raise ValueError("aweights cannot be negative")
        w = aw if w is None else w * aw
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = view(w_sum, (0,)).get()[()]
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aw is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * sum(w * aw) / w_sum
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    numpy.subtract(X, view(avg, (slice(None), None)), out=X)
    if w is None:
        XT = transpose(X)
    else:
        XT = transpose(numpy.multiply(X, asdist(w)))
    c = dot(X, numpy.conjugate(XT))
    if c.mode != "replica":
        c = c.change_mode("replica")
    with numpy.errstate(divide="ignore", invalid="ignore"):
        numpy.multiply(c, numpy.true_divide(1, fact), out=c)  # in place: c's dtype
    return squeeze(c)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson's correlation coefficients: the covariances over the products
    of the standard deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    try:
        d = diag(c)
    except ValueError:
        return numpy.true_divide(c, c)
    sd = numpy.sqrt(real_of(d))
    c = numpy.true_divide(c, view(sd, (slice(None), None)))
    c = numpy.true_divide(c, view(sd, (None, slice(None))))
    numpy.clip(real_of(c), -1, 1, out=real_of(c))
    if c.dtype.kind == "c":
        numpy.clip(imag_of(c), -1, 1, out=imag_of(c))
    return c


FUNCTIONS = {"average": average, "cov": cov, "corrcoef": corrcoef}
