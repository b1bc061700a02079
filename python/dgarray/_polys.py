"""NumPy's polynomial functions (numpy.poly*, the coefficient-array API) on
the devices: polyval (Horner's rule, elementwise where x lives), polyadd,
polysub, polymul (a convolution), polyder, polyint, polydiv, poly (from
roots: a chain of convolutions), vander (a running product along the
columns), polyfit (least squares on the column-scaled Vandermonde matrix,
linalg.lstsq on the devices), roots (the eigenvalues of the companion
matrix, linalg.eigvals on the devices) and poly of a square matrix (its
eigenvalues' polynomial).  NumPy's dtypes follow from the same operations
in the same order.  Without the backend's dense slot, roots and poly of a
matrix take NumPy's fallback.
"""
import operator

import numpy

from . import _core
from ._compose import asdist, view
from . import _fallback
from ._creation import arange, asarray, empty, ones, zeros, zeros_like
from ._elementwise import real_of
from ._indexing import flatnonzero
from ._numeric import allclose, convolve
from ._shape import atleast_1d, concatenate, sort

_DA = _core.DistributedArray


def _poly1d(x):
    return isinstance(x, numpy.poly1d)


def polyval(p, x):
    """p evaluated at x by Horner's rule: one multiply-add per coefficient
    over all of x, where x lives."""
    if _poly1d(p) or _poly1d(x):
        return _fallback.call(numpy.polyval, (p, x), {}, "numpy.polyval")
    p = asdist(p)
    x = asdist(x)
    y = zeros_like(x)
    for i in range(p.shape[0] if p.ndim else 0):
        y = numpy.add(numpy.multiply(y, x), view(p, (i,)))
    if p.ndim == 0:  # NumPy iterates a 0-d array: its TypeError
        iter(numpy.zeros(()))
    return y


def _atleast_1d(a):
    return atleast_1d(asdist(a))


def _padded_op(a1, a2, ufunc):
    a1, a2 = _atleast_1d(a1), _atleast_1d(a2)
    diff = a2.shape[0] - a1.shape[0]
    if diff == 0:
        return ufunc(a1, a2)
    if diff > 0:
        return ufunc(concatenate((zeros(diff, a1.dtype), a1)), a2)
    return ufunc(a1, concatenate((zeros(-diff, a2.dtype), a2)))


def polyadd(a1, a2):
    """The sum of two polynomials (coefficient arrays aligned at the end)."""
    return _padded_op(a1, a2, numpy.add)


def polysub(a1, a2):
    """The difference of two polynomials."""
    return _padded_op(a1, a2, numpy.subtract)


def _leading_zeros_trimmed(c):
    """The coefficients as numpy.poly1d keeps them: 1-d, leading zeros
    dropped ([0] for none left)."""
    c = _atleast_1d(c)
    if c.ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    nz = flatnonzero(c)
    if nz.shape[0] == 0:
        return zeros(1, c.dtype)
    first = int(view(nz, (0,)))
    return view(c, (slice(first, None),)) if first else c


def polymul(a1, a2):
    """The product of two polynomials: a convolution of their coefficients
    (leading zeros dropped first, as numpy.poly1d drops them)."""
    return convolve(_leading_zeros_trimmed(a1), _leading_zeros_trimmed(a2))


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = asdist(p)
    if m == 0:
        return p
    n = p.shape[0] - 1
    y = numpy.multiply(view(p, (slice(None, -1),)), arange(n, 0, -1))
    return polyder(y, m - 1)


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial (integration constants k)."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        k = numpy.zeros(m, float)
    k = numpy.atleast_1d(k.get() if isinstance(k, _DA) else k)
    if len(k) == 1 and m > 1:
        k = k[0] * numpy.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = asdist(p)
    if m == 0:
        return p
    y = concatenate((numpy.true_divide(p, arange(p.shape[0], 0, -1)), asarray(k[:1])))
    return polyint(y, m - 1, k=k[1:])


def polydiv(u, v):
    """The quotient and remainder of polynomial division (NumPy's loop, one
    row update per quotient coefficient, on the devices)."""
    u = numpy.add(_atleast_1d(u), 0.0)
    v = numpy.add(_atleast_1d(v), 0.0)
    w = numpy.add(view(u, (0,)), view(v, (0,)))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = numpy.true_divide(1.0, view(v, (0,)))
    q = zeros((max(m - n + 1, 1),), w.dtype)
    r = u.astype(w.dtype)
    for k in range(m - n + 1):
        d = numpy.multiply(scale, view(r, (k,)))
        q[k] = d
        seg = view(r, (slice(k, k + n + 1),))
        numpy.subtract(seg, numpy.multiply(d, v), out=seg)
    while allclose(view(r, (0,)), 0, rtol=1e-14) and r.shape[-1] > 1:
        r = view(r, (slice(1, None),))
    return q, r


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (1-d
    roots: a chain of convolutions on the devices), or of a square matrix's
    characteristic polynomial (the polynomial of its eigenvalues,
    linalg.eigvals on the devices)."""
    from ._dense import available, eigvals
    z = _atleast_1d(seq_of_zeros)
    sh = z.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        if not available():
            return _fallback.call(numpy.poly, (z,), {}, "numpy.poly")
        z = eigvals(z)
    elif len(sh) == 1:
        z = z.astype(numpy.mintypecode(z.dtype.char))
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return 1.0
    dt = z.dtype
    a = ones((1,), dtype=dt)
    for k in range(z.shape[0]):
        pair = empty((2,), dt)
        pair[0] = 1
        pair[1] = numpy.negative(view(z, (k,)))
        a = convolve(a, pair, mode="full")
    if a.dtype.kind == "c":
        roots = z.astype(complex)
        if bool(numpy.all(numpy.equal(sort(roots), sort(numpy.conjugate(roots))))):
            a = real_of(a).copy()
    return a


def roots(p):
    """The roots of the polynomial whose coefficients (highest power first)
    are p, NumPy's algorithm: leading zeros dropped, each trailing zero a
    root 0, the others the eigenvalues of the companion matrix (ones below
    the diagonal, -p[1:] / p[0] in the first row), linalg.eigvals on the
    devices.  The positions of the first and last nonzero coefficients are
    the one host read."""
    from ._dense import _eig, available
    from ._matrix import diag
    if numpy.ndim(p) == 0:  # NumPy's dispatcher iterates over p: a scalar is an error
        raise TypeError("dispatcher for __array_function__ did not return an iterable")
    if not available():
        return _fallback.call(numpy.roots, (p,), {}, "numpy.roots")
    p = _atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    nz = flatnonzero(p)
    if nz.shape[0] == 0:
        return asarray(numpy.array([]))
    first, last = (int(i) for i in nz[numpy.array([0, -1])].get())
    trailing = p.shape[0] - last - 1
    p = view(p, (slice(first, last + 1),))
    if p.dtype.kind not in "fc":
        p = p.astype(float)
    n = p.shape[0]
    if n > 1:
        a = diag(ones((n - 2,), p.dtype), -1)
        a[0, :] = numpy.negative(view(p, (slice(1, None),))) / view(p, (0,))
        # real roots where every root is real, whichever NumPy: its eigvals
        # did so up to 2.4, its roots does so itself since
        r = _eig(a, False, real_if_zero=True)
    else:
        r = asarray(numpy.array([]))
    return concatenate((r, zeros(trailing, r.dtype)))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of x: columns of powers, made by a running
    product along each row."""
    x = asdist(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = x.shape[0]
    N = operator.index(N)
    v = empty((x.shape[0], N), dtype=numpy.promote_types(x.dtype, int))
    tmp = v if increasing else view(v, (slice(None), slice(None, None, -1)))
    if N > 0:
        tmp[:, 0] = 1
    if N > 1:
        rest = view(tmp, (slice(None), slice(1, None)))
        rest[...] = view(x, (slice(None), None))
        numpy.multiply.accumulate(rest, out=rest, axis=1)
    return v


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through the points (x, y)
    (y 1-d, or 2-d: one fit per column), as NumPy: the Vandermonde matrix's
    columns (weighted by w) scaled to unit 2-norm, solved by linalg.lstsq on
    the devices, the coefficients scaled back; full gives (c, residuals,
    rank, singular values, rcond), cov the covariance matrix (scaled by the
    residuals over the degrees of freedom, or cov="unscaled")."""
    from ._dense import inv, lstsq
    from ._linalg import dot, outer

    order = int(deg) + 1
    xs = asdist(x) + 0.0
    ys = asdist(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xs.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xs.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ys.ndim < 1 or ys.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xs.shape[0] != ys.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = xs.shape[0] * numpy.finfo(xs.dtype).eps
    lhs = vander(xs, order)
    rhs = ys
    if w is not None:
        ws = asdist(w) + 0.0
        if ws.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if ws.shape[0] != ys.shape[0]:
            raise TypeError("expected w and y to have the same length")
        # in place, as NumPy: lhs and rhs keep their dtypes
        lhs *= view(ws, (slice(None), None))
        rhs *= view(ws, (slice(None), None)) if rhs.ndim == 2 else ws
    scale = numpy.sqrt((lhs * lhs).sum(axis=0))
    lhs /= scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        import warnings
        warnings.warn("Polyfit may be poorly conditioned", numpy.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    vbase = inv(dot(lhs.T, lhs))
    vbase /= outer(scale, scale)
    if cov == "unscaled":
        fac = 1
    else:
        if xs.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (xs.shape[0] - order)
    return c, (vbase * fac if ys.ndim == 1 else view(vbase, (Ellipsis, None)) * fac)


FUNCTIONS = {
    "polyval": polyval, "polyadd": polyadd, "polysub": polysub, "polymul": polymul,
    "polyder": polyder, "polyint": polyint, "polydiv": polydiv, "poly": poly,
    "vander": vander, "polyfit": polyfit, "roots": roots,
}
