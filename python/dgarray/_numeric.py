"""NumPy's numeric functions composed of dgarray's elementwise work, views
and reductions: isclose, allclose, array_equal, array_equiv, count_nonzero,
cross, kron, meshgrid, indices, gradient, convolve, correlate.

Everything runs where the data lives: slices are views, so a stencil
(gradient, a convolution's shifted terms) moves only the halo its shifted
operands need across chunk boundaries.  NumPy's dtype rules come from the
ufuncs (NEP 50 scalars passed through as NumPy passes them); NumPy's errors
from its own checks, run on zero-memory stand-ins where they only read
shapes.
"""
import builtins
import operator
import warnings

import numpy

from . import _core
from ._compose import (asdist, host_or_dist, normalize_axis_index, normalize_axis_tuple,
                       standin, view)
from ._creation import arange, empty, empty_like, zeros
from ._indexing import assign
from ._reductions import all as all_, sum as sum_
from ._shape import broadcast_arrays, diff, moveaxis, reshape

_DA = _core.DistributedArray


def _operand(x):
    """x for a ufunc: a DistributedArray as it is, a Python scalar as it is
    (weak, NEP 50), anything else as a DistributedArray."""
    if isinstance(x, (_DA, int, float, complex)) and not isinstance(x, bool):
        return x
    return asdist(x)


# ---- comparisons ------------------------------------------------------------------------

def isclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False):
    """|a - b| <= atol + rtol * |b| where b is finite, or a == b (NaN equal
    NaN with equal_nan), elementwise; b is compared in an inexact dtype."""
    x, y = _operand(a), _operand(b)
    tols = [t if isinstance(t, (int, float, complex)) else host_or_dist(t)
            for t in (atol, rtol)]
    atol, rtol = tols
    if isinstance(y, _DA):
        dt = numpy.result_type(y.dtype, 1.0)
        if y.dtype != dt:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    finite = [bool(numpy.all(numpy.isfinite(t))) if not isinstance(t, _DA)
              else bool(numpy.isfinite(t).all()) for t in tols]
    if not all(finite):
        text = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
        how = numpy.geterr()["invalid"]
        if how == "warn":
            warnings.warn(text, RuntimeWarning, stacklevel=2)
        elif how == "raise":
            raise FloatingPointError(text)
        elif how == "print":
            print(text)
    if not isinstance(x, _DA) and not isinstance(y, _DA):
        x = asdist(numpy.asarray(x))
    close = numpy.less_equal(numpy.abs(numpy.subtract(x, y)),
                             numpy.add(atol, numpy.multiply(rtol, numpy.abs(y))))
    res = numpy.logical_or(numpy.logical_and(close, numpy.isfinite(y)), numpy.equal(x, y))
    if equal_nan:
        res = numpy.logical_or(res, numpy.logical_and(numpy.isnan(x), numpy.isnan(y)))
    return res


def allclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False):
    """True if every element of a is close to b's (isclose): a Python bool,
    as NumPy returns (one host read)."""
    return builtins.bool(all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def _cannot_hold_nan(dt):
    return dt.kind in "biu"


def array_equal(a1, a2, equal_nan=False):
    """True if a1 and a2 have one shape and equal elements (NaNs equal with
    equal_nan): a Python bool."""
    try:
        a1, a2 = asdist(a1), asdist(a2)
    except Exception:  # noqa: BLE001 - NumPy's answer for what is no array
        return False
    if a1.shape != a2.shape:
        return False
    if equal_nan and a1 is a2:
        return True
    if not equal_nan or (_cannot_hold_nan(a1.dtype) and _cannot_hold_nan(a2.dtype)):
        return builtins.bool(all_(numpy.equal(a1, a2)))
    n1, n2 = numpy.isnan(a1), numpy.isnan(a2)
    same_nan = all_(numpy.equal(n1, n2))
    eq = all_(numpy.logical_or(numpy.equal(a1, a2), n1))
    return builtins.bool(same_nan) and builtins.bool(eq)


def array_equiv(a1, a2):
    """True if a1 and a2 broadcast together and are equal elementwise."""
    try:
        a1, a2 = asdist(a1), asdist(a2)
    except Exception:  # noqa: BLE001
        return False
    try:
        numpy.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return builtins.bool(all_(numpy.equal(a1, a2)))


def count_nonzero(a, axis=None, *, keepdims=False):
    """The number of non-zero elements (along axes), as intp counts (0-d for
    the whole array, where NumPy gives an intp scalar)."""
    a = asdist(a)
    b = a if a.dtype == numpy.bool_ else numpy.not_equal(a, 0)
    if a.ndim == 0 and not isinstance(axis, tuple) and axis is not None and \
            operator.index(axis) in (0, -1):
        axis = None  # NumPy's ufunc.reduce takes axis 0 of a 0-d array
    return sum_(b, axis=axis, dtype=numpy.intp, keepdims=keepdims)


# ---- products of vectors and blocks ---------------------------------------------------------

def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-element vectors along axisa / axisb,
    the vectors broadcast together; the result's vector axis is axisc."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asdist(a), asdist(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na != 3 or nb != 3:
        # NumPy's own verdict on vectors of other lengths, from its cross of
        # two stand-ins: its error (its words, which differ between versions)
        # or, for 2-vectors up to NumPy 2.4, its DeprecationWarning, repeated
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            numpy.cross(numpy.zeros(na), numpy.zeros(nb))
        for w in said:
            warnings.warn(w.message, w.category, stacklevel=2)
    shape = numpy.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    three = na == 3 or nb == 3
    if three:
        shape += (3,)
        axisc = normalize_axis_index(axisc, len(shape), msg_prefix="axisc")
    dt = numpy.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    ai = [view(a, (Ellipsis, k)) for k in range(na)]
    bi = [view(b, (Ellipsis, k)) for k in range(nb)]
    cp = empty(shape, dt)

    def term(p, q, r, s):
        """p*q - r*s; None stands for a zero component."""
        first = None if p is None or q is None else numpy.multiply(p, q)
        second = None if r is None or s is None else numpy.multiply(r, s)
        if second is None:
            return first
        return numpy.negative(second) if first is None else numpy.subtract(first, second)
    a2 = ai[2] if na == 3 else None
    b2 = bi[2] if nb == 3 else None
    z = term(ai[0], bi[1], ai[1], bi[0])
    if not three:
        assign(cp, z)
        return cp
    for k, c in enumerate((term(ai[1], b2, a2, bi[1]), term(a2, bi[0], ai[0], b2), z)):
        assign(view(cp, (Ellipsis, k)), c)
    return moveaxis(cp, -1, axisc)


def kron(a, b):
    """The Kronecker product: a's blocks scaled by b, one broadcast
    multiply of interleaved axes, then merged."""
    b = asdist(b)
    a = asdist(a)
    if a.ndim < b.ndim:
        a = reshape(a, (1,) * (b.ndim - a.ndim) + a.shape)
    if a.ndim == 0 or b.ndim == 0:
        return numpy.multiply(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    av = reshape(a, sa) if sa != a.shape else a
    bv = reshape(b, sb) if sb != b.shape else b
    ka = tuple(k for _ in range(nd) for k in (slice(None), None))
    kb = tuple(k for _ in range(nd) for k in (None, slice(None)))
    prod = numpy.multiply(view(av, ka), view(bv, kb))
    return reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


# ---- grids -------------------------------------------------------------------------------

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors (views broadcast, then
    copied unless copy=False)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    ones = (1,) * nd
    out = [reshape(asdist(x), ones[:i] + (-1,) + ones[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0] = reshape(out[0], (1, -1) + ones[2:])
        out[1] = reshape(out[1], (-1, 1) + ones[2:])
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [x.copy() for x in out]
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """The index grid of a shape: one array per axis (sparse: aranges shaped
    to broadcast), else stacked into one (len(dimensions),) + shape array."""
    dims = tuple(dimensions)
    n = len(dims)
    parts = [reshape(arange(d, dtype=dtype), (1,) * i + (d,) + (1,) * (n - i - 1))
             for i, d in enumerate(dims)]
    if sparse:
        return tuple(parts)
    res = empty((n,) + dims, dtype)
    for i, p in enumerate(parts):
        assign(view(res, (i,)), p)
    return res


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """function applied to the index grid of shape (arrays of dtype)."""
    return function(*indices(shape, dtype=dtype), **kwargs)


# ---- stencils -----------------------------------------------------------------------------

def _spacing(d, n):
    """One gradient spacing argument: a scalar as NumPy passes it on, or
    the differences of 1-d coordinates (their first one where all are
    equal)."""
    h = host_or_dist(d)
    if h.ndim == 0:
        return d
    if h.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if h.shape[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if h.dtype.kind in "iu":
        h = h.astype(numpy.float64)
    dx = diff(h) if isinstance(h, _DA) else numpy.diff(h)
    uniform = dx.size and bool(numpy.equal(dx, dx[0]).all())
    if uniform:
        return dx[0] if not isinstance(dx, _DA) else dx[0].get()[()]
    return dx


def _along(axis, nd, key):
    return (slice(None),) * axis + (key,) + (slice(None),) * (nd - axis - 1)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient by central differences inside and one-sided (first or
    second order) differences at the edges, along each axis asked: views
    of f combined by ufuncs into a new array of f's layout."""
    f = asdist(f)
    nd = f.ndim
    axes = tuple(range(nd)) if axis is None else normalize_axis_tuple(axis, nd)
    if len(varargs) == 0:
        dxs = [1.0] * len(axes)
    elif len(varargs) == 1 and numpy.ndim(varargs[0]) == 0:
        dxs = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        dxs = [_spacing(d, f.shape[ax]) for d, ax in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = f.astype(numpy.float64)
        otype = numpy.dtype(numpy.float64)
    out_all = []
    for ax, dx in zip(axes, dxs):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        out = empty_like(f, dtype=otype)

        def sl(key, ax=ax):
            return view(f, _along(ax, nd, key))
        uniform = numpy.ndim(dx) == 0

        def coef(x, ax=ax):
            """An array of coefficients along ax, shaped to broadcast."""
            x = host_or_dist(x)
            shape = [1] * nd
            shape[ax] = -1
            return reshape(x, tuple(shape)) if isinstance(x, _DA) else x.reshape(shape)

        def combo(cs, parts):
            """sum of c * part, in NumPy's order ((c0 p0 + c1 p1) + c2 p2)."""
            acc = None
            for c, p in zip(cs, parts):
                t = numpy.multiply(c, p)
                acc = t if acc is None else numpy.add(acc, t)
            return acc
        inner = view(out, _along(ax, nd, slice(1, -1)))
        if uniform:
            val = numpy.true_divide(numpy.subtract(sl(slice(2, None)), sl(slice(None, -2))),
                                    2. * dx)
        else:
            d1, d2 = dx[0:-1], dx[1:]
            ca = numpy.true_divide(numpy.negative(d2), numpy.multiply(d1, numpy.add(d1, d2)))
            cb = numpy.true_divide(numpy.subtract(d2, d1), numpy.multiply(d1, d2))
            cc = numpy.true_divide(d1, numpy.multiply(d2, numpy.add(d1, d2)))
            val = combo([coef(ca), coef(cb), coef(cc)],
                        [sl(slice(None, -2)), sl(slice(1, -1)), sl(slice(2, None))])
        assign(inner, val)
        first, last = view(out, _along(ax, nd, 0)), view(out, _along(ax, nd, -1))
        if edge_order == 1:
            d0 = dx if uniform else dx[0]
            dn = dx if uniform else dx[-1]
            assign(first, numpy.true_divide(numpy.subtract(sl(1), sl(0)), d0))
            assign(last, numpy.true_divide(numpy.subtract(sl(-1), sl(-2)), dn))
        else:
            if uniform:
                c0 = (-1.5 / dx, 2. / dx, -0.5 / dx)
                c1 = (0.5 / dx, -2. / dx, 1.5 / dx)
            else:
                p, q = dx[0], dx[1]
                c0 = (-(2. * p + q) / (p * (p + q)), (p + q) / (p * q), -p / (q * (p + q)))
                p, q = dx[-2], dx[-1]
                c1 = (q / (p * (p + q)), -(q + p) / (p * q), (2. * q + p) / (q * (p + q)))
            assign(first, combo(c0, [sl(0), sl(1), sl(2)]))
            assign(last, combo(c1, [sl(-3), sl(-2), sl(-1)]))
        out_all.append(out)
    return out_all[0] if len(axes) == 1 else tuple(out_all)


def _correlate_full(a, v, conj):
    """The full correlation c[k] = sum_j a[k - (m-1) + j] * conj(v[j]) (conj
    only where asked) of 1-d a (n) and v (m), in their common dtype (float16
    summed in float32, as NumPy's half dot): one multiply-add of a shifted
    view per element of the shorter operand."""
    rdt = numpy.result_type(a.dtype, v.dtype)
    dt = numpy.dtype(numpy.float32) if rdt == numpy.float16 else rdt
    a, v = a.astype(dt, copy=False), v.astype(dt, copy=False)
    if conj and dt.kind == "c":
        v = numpy.conjugate(v)
    n, m = a.shape[0], v.shape[0]
    out = zeros((n + m - 1,), dt)
    if m <= n:  # out[m-1-j : m-1-j+n] += a * v[j]
        for j in range(m):
            dst = view(out, (slice(m - 1 - j, m - 1 - j + n),))
            numpy.add(dst, numpy.multiply(a, view(v, (j,))), out=dst)
    else:  # out[i : i+m] += a[i] * v[::-1]
        vr = view(v, (slice(None, None, -1),))
        for i in range(n):
            dst = view(out, (slice(i, i + m),))
            numpy.add(dst, numpy.multiply(view(a, (i,)), vr), out=dst)
    return out if dt == rdt else out.astype(rdt)


def _correlation(a, v, mode, conj, np_func):
    a, v = asdist(a), asdist(v)
    small = [numpy.zeros((min(x.shape[0], 1),) if x.ndim == 1 else
                         tuple(min(s, 1) for s in x.shape), x.dtype) for x in (a, v)]
    np_func(small[0], small[1], mode)  # NumPy's errors: dimensions, empty, mode
    n, m = a.shape[0], v.shape[0]
    full = _correlate_full(a, v, conj)
    mode = {0: "valid", 1: "same", 2: "full"}[mode] if not isinstance(mode, str) else \
        {"v": "valid", "s": "same", "f": "full"}[mode.lower()[0]]
    if mode == "full":
        return full
    if mode == "valid":
        start, length = min(n, m) - 1, max(n, m) - min(n, m) + 1
    else:
        start, length = ((m - 1) // 2 if n >= m else n // 2), max(n, m)
    return view(full, (slice(start, start + length),)).copy()


def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-d sequences (v conjugated), as NumPy's
    correlate: each term a shifted view of the longer one, scaled by an
    element of the shorter one (only halos move between chunks)."""
    return _correlation(a, v, mode, True, numpy.correlate)


def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-d sequences."""
    a, v = asdist(a), asdist(v)
    a = reshape(a, (1,)) if a.ndim == 0 else a
    v = reshape(v, (1,)) if v.ndim == 0 else v
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        a, v = v, a
    if a.ndim == 1 and a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.ndim == 1 and v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.ndim == 1:
        v = view(v, (slice(None, None, -1),))
    return _correlation(a, v, mode, False, numpy.convolve)


FUNCTIONS = {
    "isclose": isclose, "allclose": allclose, "array_equal": array_equal,
    "array_equiv": array_equiv, "count_nonzero": count_nonzero, "cross": cross,
    "kron": kron, "meshgrid": meshgrid, "indices": indices, "fromfunction": fromfunction,
    "gradient": gradient, "correlate": correlate, "convolve": convolve,
}
