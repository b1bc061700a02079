"""NumPy's random distributions beyond the Generator's fills, composed on
the devices from its uniform and normal draws (each a fill where the data
lives): exponential, gumbel, laplace, logistic, lognormal, pareto, power,
rayleigh, weibull, standard_cauchy, triangular, wald, geometric, the gamma
family (standard_gamma, gamma, chisquare, beta, f, standard_t, dirichlet,
noncentral_chisquare, noncentral_f) by Marsaglia and Tsang's rejection,
poisson (multiplication of uniforms below 10, Hörmann's PTRS above),
negative_binomial, binomial (inversion for small means, Hörmann's BTRS
otherwise), permutation, shuffle, multivariate_normal; and numpy.random's
legacy module functions (rand, randn, randint, seed, ...) on a global
Generator.  Rejection methods run in rounds over the devices: every element
still pending draws again, the accepted ones are written in place, until
none is left.  NumPy's API, arguments and errors; not its streams (as the
Generator's own draws).
"""
import math
import operator
import warnings

import numpy

from . import _core
from ._creation import arange, asarray, empty, zeros
from ._elementwise import copyto
from ._indexing import setitem, take, where
from ._reductions import any as any_
from ._shape import argsort, stack
from .random import _broadcast_shape, _shape_of, default_rng

_DA = _core.DistributedArray


# ---- parameters ------------------------------------------------------------------------

def _is_scalar(x):
    return x.ndim == 0 if isinstance(x, _DA) else numpy.ndim(x) == 0


def _param(x):
    """A parameter as a float64 DistributedArray, or a Python float."""
    if _is_scalar(x) and not isinstance(x, _DA):
        return float(numpy.asarray(x, dtype=numpy.float64))
    return asarray(x, dtype=numpy.float64)


def _any(cond):
    """bool(any(cond)) for a DistributedArray or a host value."""
    if isinstance(cond, _DA):
        return bool(any_(cond))
    return bool(numpy.any(cond))


def _shape(size, *params):
    """The result's shape (None: scalars in, a scalar out), as NumPy
    broadcasts size and the parameters."""
    if size is None and all(_is_scalar(p) for p in params):
        return None
    arrays = [p if hasattr(p, "shape") else numpy.asarray(p) for p in params]
    if size is None:
        return _broadcast_shape(None, *arrays)
    return _broadcast_shape(size, *arrays) if any(not _is_scalar(p) for p in params) else \
        _shape_of(size)


def _result(x, shape, kind=float):
    """x (a 0-d array for shape None) as NumPy returns it: a Python scalar
    for scalar parameters and no size."""
    if shape is None:
        return kind(x.get()[()]) if isinstance(x, _DA) else kind(x)
    return x


def _uniform(gen, shape):
    return gen.random(shape if shape is not None else ())


def _open_uniform(gen, shape):
    """Uniform in (0, 1): a draw of 0 taken as half the smallest step."""
    u = _uniform(gen, shape)
    return where(numpy.equal(u, 0), 2.0 ** -54, u)


def _normal(gen, shape):
    return gen.standard_normal(shape if shape is not None else ())


def _std_exp(gen, shape):
    return numpy.negative(numpy.log1p(numpy.negative(_uniform(gen, shape))))


def _check(cond, message):
    if _any(cond):
        raise ValueError(message)


def _nonneg(x, name):
    _check(numpy.less(x, 0), f"{name} < 0")


def _positive(x, name):
    _check(numpy.less_equal(x, 0), f"{name} <= 0")


def _scale(gen, size, loc, scale, std):
    """loc + scale * (a standard draw of std)."""
    loc, scale = _param(loc), _param(scale)
    _nonneg(scale, "scale")
    shape = _shape(size, loc, scale)
    x = numpy.add(loc, numpy.multiply(scale, std(gen, shape)))
    return _result(x, shape)


# ---- continuous ------------------------------------------------------------------------

def standard_exponential(gen, size=None, dtype=numpy.float64, method="zig", out=None):
    shape = _shape(size)
    x = _std_exp(gen, shape)
    if numpy.dtype(dtype) != numpy.float64:
        x = x.astype(dtype)
    return _result(x, shape)


def exponential(gen, scale=1.0, size=None):
    scale = _param(scale)
    _nonneg(scale, "scale")
    shape = _shape(size, scale)
    return _result(numpy.multiply(scale, _std_exp(gen, shape)), shape)


def gumbel(gen, loc=0.0, scale=1.0, size=None):
    return _scale(gen, size, loc, scale, lambda g, s: numpy.negative(numpy.log(
        numpy.negative(numpy.log(_open_uniform(g, s))))))


def laplace(gen, loc=0.0, scale=1.0, size=None):

    def std(g, s):
        u = _open_uniform(g, s)
        return where(numpy.greater_equal(u, 0.5),
                     numpy.negative(numpy.log(numpy.subtract(2.0, numpy.add(u, u)))),
                     numpy.log(numpy.add(u, u)))
    return _scale(gen, size, loc, scale, std)


def logistic(gen, loc=0.0, scale=1.0, size=None):
    def std(g, s):
        u = _open_uniform(g, s)
        return numpy.log(numpy.true_divide(u, numpy.subtract(1.0, u)))
    return _scale(gen, size, loc, scale, std)


def lognormal(gen, mean=0.0, sigma=1.0, size=None):
    mean, sigma = _param(mean), _param(sigma)
    _nonneg(sigma, "sigma")
    shape = _shape(size, mean, sigma)
    return _result(numpy.exp(numpy.add(mean, numpy.multiply(sigma, _normal(gen, shape)))),
                   shape)


def pareto(gen, a, size=None):
    a = _param(a)
    _positive(a, "a")
    shape = _shape(size, a)
    return _result(numpy.expm1(numpy.true_divide(_std_exp(gen, shape), a)), shape)


def power(gen, a, size=None):
    a = _param(a)
    _positive(a, "a")
    shape = _shape(size, a)
    e = _std_exp(gen, shape)
    return _result(numpy.power(numpy.negative(numpy.expm1(numpy.negative(e))),
                               numpy.true_divide(1.0, a)), shape)


def rayleigh(gen, scale=1.0, size=None):
    scale = _param(scale)
    _nonneg(scale, "scale")
    shape = _shape(size, scale)
    return _result(numpy.multiply(scale, numpy.sqrt(numpy.multiply(2.0, _std_exp(gen, shape)))),
                   shape)


def weibull(gen, a, size=None):
    a = _param(a)
    _nonneg(a, "a")
    shape = _shape(size, a)
    e = _std_exp(gen, shape)
    x = numpy.power(e, numpy.true_divide(1.0, where(numpy.equal(a, 0), 1.0, a)) if
                    isinstance(a, _DA) else (1.0 / a if a else 1.0))
    x = where(numpy.equal(a, 0), 0.0, x) if isinstance(a, _DA) else (x * 0.0 if a == 0 else x)
    return _result(x, shape)


def standard_cauchy(gen, size=None):
    shape = _shape(size)
    return _result(numpy.true_divide(_normal(gen, shape), _normal(gen, shape)), shape)


def triangular(gen, left, mode, right, size=None):
    left, mode, right = _param(left), _param(mode), _param(right)
    _check(numpy.greater(left, mode), "left > mode")
    _check(numpy.greater(mode, right), "mode > right")
    _check(numpy.equal(left, right), "left == right")
    shape = _shape(size, left, mode, right)
    u = _uniform(gen, shape)
    base = numpy.subtract(right, left)
    lbase = numpy.subtract(mode, left)
    rbase = numpy.subtract(right, mode)
    ratio = numpy.true_divide(lbase, base)
    low = numpy.add(left, numpy.sqrt(numpy.multiply(numpy.multiply(u, base), lbase)))
    high = numpy.subtract(right, numpy.sqrt(numpy.multiply(numpy.multiply(
        numpy.subtract(1.0, u), base), rbase)))
    return _result(where(numpy.less_equal(u, ratio), low, high), shape)


def wald(gen, mean, scale, size=None):
    mean, scale = _param(mean), _param(scale)
    _positive(mean, "mean")
    _positive(scale, "scale")
    shape = _shape(size, mean, scale)
    y = numpy.square(_normal(gen, shape))
    my = numpy.multiply(mean, y)
    x = numpy.add(mean, numpy.multiply(numpy.true_divide(mean, numpy.multiply(2.0, scale)),
                                       numpy.subtract(my, numpy.sqrt(numpy.add(
                                           numpy.multiply(4.0, numpy.multiply(scale, my)),
                                           numpy.square(my))))))
    u = _uniform(gen, shape)
    alt = numpy.true_divide(numpy.square(mean), x)
    return _result(where(numpy.less_equal(u, numpy.true_divide(mean, numpy.add(mean, x))), x,
                         alt), shape)


# ---- the gamma family ------------------------------------------------------------------

def _rounds(gen, shape, propose):
    """Rejection in rounds: propose(gen, shape) -> (value, accepted) over
    the whole shape; accepted elements are kept, the others drawn again
    until none is left."""
    res = empty(shape if shape is not None else (), numpy.float64)
    pending = None
    for _ in range(10000):
        val, ok = propose(gen, shape)
        take = ok if pending is None else numpy.logical_and(ok, pending)
        copyto(res, val, where=take)
        pending = numpy.logical_not(ok) if pending is None else \
            numpy.logical_and(pending, numpy.logical_not(ok))
        if not bool(any_(pending)):
            return res
    raise RuntimeError("rejection sampling did not finish")


def _marsaglia_tsang(gen, shape, a):
    """Standard gamma draws of shape a >= 1 (scalar or array)."""
    d = numpy.subtract(a, 1.0 / 3.0)
    c = numpy.true_divide(1.0, numpy.sqrt(numpy.multiply(9.0, d)))

    def propose(g, s):
        z = _normal(g, s)
        v = numpy.power(numpy.add(1.0, numpy.multiply(c, z)), 3)
        u = _open_uniform(g, s)
        lhs = numpy.log(u)
        with numpy.errstate(all="ignore"):
            rhs = numpy.add(numpy.add(numpy.multiply(0.5, numpy.square(z)), d), numpy.multiply(
                d, numpy.subtract(numpy.log(numpy.maximum(v, 1e-300)), v)))
        ok = numpy.logical_and(numpy.greater(v, 0), numpy.less(lhs, rhs))
        return numpy.multiply(d, v), ok
    return _rounds(gen, shape, propose)


def _std_gamma(gen, shape, k):
    """Standard gamma draws of shape k >= 0 (0 gives 0)."""
    if isinstance(k, _DA):
        small = numpy.less(k, 1.0)
        base = _marsaglia_tsang(gen, shape, where(small, numpy.add(k, 1.0), k))
        boost = numpy.power(_open_uniform(gen, shape), numpy.true_divide(
            1.0, where(numpy.equal(k, 0), 1.0, k)))
        x = where(small, numpy.multiply(base, boost), base)
        return where(numpy.equal(k, 0), 0.0, x)
    if k == 0:
        return zeros(shape if shape is not None else ())
    if k < 1:
        base = _marsaglia_tsang(gen, shape, k + 1.0)
        return numpy.multiply(base, numpy.power(_open_uniform(gen, shape), 1.0 / k))
    return _marsaglia_tsang(gen, shape, k)


def standard_gamma(gen, shape, size=None, dtype=numpy.float64, out=None):
    k = _param(shape)
    _nonneg(k, "shape")
    sh = _shape(size, k)
    x = _std_gamma(gen, sh, k)
    if numpy.dtype(dtype) != numpy.float64:
        x = x.astype(dtype)
    return _result(x, sh)


def gamma(gen, shape, scale=1.0, size=None):
    k, scale = _param(shape), _param(scale)
    _nonneg(k, "shape")
    _nonneg(scale, "scale")
    sh = _shape(size, k, scale)
    return _result(numpy.multiply(scale, _std_gamma(gen, sh, k)), sh)


def chisquare(gen, df, size=None):
    df = _param(df)
    _positive(df, "df")
    sh = _shape(size, df)
    return _result(numpy.multiply(2.0, _std_gamma(gen, sh, numpy.multiply(0.5, df)
                                                  if isinstance(df, _DA) else df / 2)), sh)


def beta(gen, a, b, size=None):
    a, b = _param(a), _param(b)
    _positive(a, "a")
    _positive(b, "b")
    sh = _shape(size, a, b)
    x, y = _std_gamma(gen, sh, a), _std_gamma(gen, sh, b)
    return _result(numpy.true_divide(x, numpy.add(x, y)), sh)


def f(gen, dfnum, dfden, size=None):
    dfnum, dfden = _param(dfnum), _param(dfden)
    _positive(dfnum, "dfnum")
    _positive(dfden, "dfden")
    sh = _shape(size, dfnum, dfden)
    num = numpy.true_divide(_chi2(gen, sh, dfnum), dfnum)
    den = numpy.true_divide(_chi2(gen, sh, dfden), dfden)
    return _result(numpy.true_divide(num, den), sh)


def _chi2(gen, shape, df):
    return numpy.multiply(2.0, _std_gamma(gen, shape, numpy.multiply(0.5, df)
                                          if isinstance(df, _DA) else df / 2))


def standard_t(gen, df, size=None):
    df = _param(df)
    _positive(df, "df")
    sh = _shape(size, df)
    z = _normal(gen, sh)
    return _result(numpy.true_divide(z, numpy.sqrt(numpy.true_divide(_chi2(gen, sh, df), df))),
                   sh)


def noncentral_chisquare(gen, df, nonc, size=None):
    df, nonc = _param(df), _param(nonc)
    _positive(df, "df")
    _nonneg(nonc, "nonc")
    sh = _shape(size, df, nonc)
    big = numpy.greater(df, 1)
    c = _chi2(gen, sh, numpy.maximum(numpy.subtract(df, 1.0), 1e-300))
    n = numpy.add(_normal(gen, sh), numpy.sqrt(nonc))
    x1 = numpy.add(c, numpy.square(n))
    k = _poisson(gen, sh, numpy.multiply(0.5, nonc))
    x2 = _chi2(gen, sh, numpy.add(df, numpy.multiply(2.0, k)))
    return _result(where(big, x1, x2), sh)


def noncentral_f(gen, dfnum, dfden, nonc, size=None):
    dfnum, dfden, nonc = _param(dfnum), _param(dfden), _param(nonc)
    _positive(dfnum, "dfnum")
    _positive(dfden, "dfden")
    _nonneg(nonc, "nonc")
    sh = _shape(size, dfnum, dfden, nonc)
    t = numpy.multiply(noncentral_chisquare(gen, dfnum, nonc, sh if sh else ()), dfden)
    return _result(numpy.true_divide(t, numpy.multiply(_chi2(gen, sh, dfden), dfnum)), sh)


def dirichlet(gen, alpha, size=None):
    a = numpy.asarray(alpha.get() if isinstance(alpha, _DA) else alpha, dtype=numpy.float64)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array" if a.ndim > 1 else
                         "object of too small depth for desired array")
    if numpy.any(numpy.less(a, 0)) or numpy.any(numpy.isnan(a)):
        raise ValueError("alpha < 0")
    shape = () if size is None else _shape_of(size)
    k = a.shape[0]
    gs = [_std_gamma(gen, shape, float(ai)) for ai in a]
    g = stack(gs, axis=-1) if gs else None
    if g is None:
        return empty(shape + (0,))
    total = numpy.sum(g, axis=-1, keepdims=True)
    return numpy.true_divide(g, total) if k else g


# ---- discrete --------------------------------------------------------------------------

def _lgamma(x):
    """log Gamma(x) for x > 0, by Lanczos' approximation (g = 7, 9 terms):
    elementwise on the devices, about 1e-15 relative."""
    coefs = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
             -176.61503916999185, 12.507343278686905, -0.13857109526572012,
             9.9843695780195716e-6, 1.5056327351493116e-7)
    z = numpy.subtract(x, 1.0)
    s = coefs[0]
    for i, cf in enumerate(coefs[1:], 1):
        s = numpy.add(s, numpy.true_divide(cf, numpy.add(z, float(i))))
    t = numpy.add(z, 7.5)
    return numpy.add(numpy.add(0.5 * math.log(2 * math.pi), numpy.multiply(
        numpy.add(z, 0.5), numpy.log(t))), numpy.subtract(numpy.log(s), t))


def _poisson(gen, shape, lam):
    """Poisson draws (float64 values) of mean lam >= 0."""
    res = zeros(shape if shape is not None else (), numpy.float64)
    small = numpy.less(lam, 10.0)
    lam_s = where(small, lam, 0.0) if isinstance(lam, _DA) else (lam if lam < 10 else 0.0)
    # below 10: count uniforms multiplied until the product drops below e^-lam
    limit = numpy.exp(numpy.negative(lam_s))
    prod = _uniform(gen, shape)
    k = zeros(shape if shape is not None else (), numpy.float64)
    pending = numpy.greater(prod, limit)
    while bool(any_(pending)):
        k = numpy.add(k, pending.astype(numpy.float64))
        prod = where(pending, numpy.multiply(prod, _uniform(gen, shape)), prod)
        pending = numpy.logical_and(pending, numpy.greater(prod, limit))
    copyto(res, k, where=small)
    if not _any(numpy.logical_not(small)):
        return res
    # 10 and above: Hörmann's transformed rejection with squeeze (PTRS)
    lb = where(small, 10.0, lam) if isinstance(lam, _DA) else max(lam, 10.0)
    slam = numpy.sqrt(lb)
    loglam = numpy.log(lb)
    b = numpy.add(0.931, numpy.multiply(2.53, slam))
    a = numpy.add(-0.059, numpy.multiply(0.02483, b))
    invalpha = numpy.add(1.1239, numpy.true_divide(1.1328, numpy.subtract(b, 3.4)))
    vr = numpy.subtract(0.9277, numpy.true_divide(3.6224, numpy.subtract(b, 2)))

    def propose(g, s):
        u = numpy.subtract(_uniform(g, s), 0.5)
        v = _open_uniform(g, s)
        us = numpy.subtract(0.5, numpy.abs(u))
        kk = numpy.floor(numpy.add(numpy.multiply(numpy.add(numpy.true_divide(
            numpy.multiply(2, a), us), b), u), numpy.add(lb, 0.43)))
        quick = numpy.logical_and(numpy.greater_equal(us, 0.07), numpy.less_equal(v, vr))
        with numpy.errstate(all="ignore"):
            lhs = numpy.add(numpy.log(v), numpy.subtract(numpy.log(invalpha), numpy.log(
                numpy.add(numpy.true_divide(a, numpy.square(us)), b))))
            rhs = numpy.subtract(numpy.subtract(numpy.multiply(kk, loglam), lb),
                                 _lgamma(numpy.add(numpy.maximum(kk, 0), 1)))
        slow = numpy.logical_and(numpy.logical_and(numpy.greater_equal(kk, 0), numpy.logical_not(
            numpy.logical_and(numpy.less(us, 0.013), numpy.greater(v, us)))),
            numpy.less_equal(lhs, rhs))
        return kk, numpy.logical_or(numpy.logical_and(quick, numpy.greater_equal(kk, 0)), slow)
    big = _rounds(gen, shape, propose)
    copyto(res, big, where=numpy.logical_not(small))
    return res


def poisson(gen, lam=1.0, size=None):
    lam = _param(lam)
    _check(numpy.logical_or(numpy.less(lam, 0), numpy.isnan(lam)),
           "lam < 0 or lam " + ("contains NaNs" if isinstance(lam, _DA) else "is NaN"))
    _check(numpy.greater(lam, 9.223372006484771e18), "lam value too large")
    sh = _shape(size, lam)
    return _result(_poisson(gen, sh, lam).astype(numpy.int64), sh, int)


def geometric(gen, p, size=None):
    p = _param(p)
    _check(numpy.logical_or(numpy.logical_or(numpy.less_equal(p, 0), numpy.greater(p, 1)),
                            numpy.isnan(p)), "p <= 0, p > 1 or p contains NaNs")
    sh = _shape(size, p)
    u = _open_uniform(gen, sh)
    with numpy.errstate(all="ignore"):
        k = numpy.ceil(numpy.true_divide(numpy.log(u), numpy.log1p(numpy.negative(p))))
    k = where(numpy.equal(p, 1.0), 1.0, numpy.maximum(k, 1.0))
    return _result(k.astype(numpy.int64), sh, int)


def negative_binomial(gen, n, p, size=None):
    n, p = _param(n), _param(p)
    _positive(n, "n")
    _check(numpy.logical_or(numpy.logical_or(numpy.less_equal(p, 0), numpy.greater(p, 1)),
                            numpy.isnan(p)), "p <= 0, p > 1 or p contains NaNs")
    sh = _shape(size, n, p)
    y = numpy.multiply(_std_gamma(gen, sh, n), numpy.true_divide(numpy.subtract(1.0, p), p))
    return _result(_poisson(gen, sh, y).astype(numpy.int64), sh, int)


def binomial(gen, n, p, size=None):
    """Binomial draws: inversion by rounds where n min(p, 1-p) < 30, else
    Hörmann's BTRS rejection; the symmetry p > 1/2 flips."""
    n, p = _param(n), _param(p)
    _nonneg(n, "n")
    _check(numpy.logical_or(numpy.logical_or(numpy.less(p, 0), numpy.greater(p, 1)),
                            numpy.isnan(p)),
           "p < 0, p > 1 or p " + ("contains NaNs" if isinstance(p, _DA) else "is NaN"))
    n = numpy.floor(n)  # NumPy reads n as an integer
    sh = _shape(size, n, p)
    flip = numpy.greater(p, 0.5)
    q = where(flip, numpy.subtract(1.0, p), p) if isinstance(flip, _DA) else \
        (1.0 - p if flip else p)
    mean = numpy.multiply(n, q)
    res = zeros(sh if sh is not None else (), numpy.float64)
    small = numpy.less(mean, 30.0)
    # inversion: walk the cumulative probabilities
    with numpy.errstate(all="ignore"):
        qn = numpy.power(numpy.subtract(1.0, q), n)
        r = numpy.true_divide(q, numpy.subtract(1.0, q))
    u = _uniform(gen, sh)
    k = zeros(sh if sh is not None else (), numpy.float64)
    pk = qn
    cdf = pk
    pending = numpy.logical_and(small, numpy.greater(u, cdf))
    while bool(any_(pending)):
        k = numpy.add(k, pending.astype(numpy.float64))
        pk = numpy.multiply(pk, numpy.multiply(r, numpy.true_divide(numpy.add(numpy.subtract(
            n, k), 1.0), k)))
        cdf = numpy.add(cdf, where(pending, pk, 0.0))
        pending = numpy.logical_and(numpy.logical_and(pending, numpy.greater(u, cdf)),
                                    numpy.less(k, n))
    copyto(res, k, where=small)
    if _any(numpy.logical_not(small)):
        nb = where(small, 100.0, n) if isinstance(n, _DA) or isinstance(small, _DA) else n
        qb = where(small, 0.5, q) if isinstance(q, _DA) or isinstance(small, _DA) else q
        spq = numpy.sqrt(numpy.multiply(numpy.multiply(nb, qb), numpy.subtract(1.0, qb)))
        b = numpy.add(1.15, numpy.multiply(2.53, spq))
        a = numpy.add(numpy.add(-0.0873, numpy.multiply(0.0248, b)), numpy.multiply(0.01, qb))
        c = numpy.add(numpy.multiply(nb, qb), 0.5)
        alpha = numpy.multiply(numpy.add(2.83, numpy.true_divide(5.1, b)), spq)
        vr = numpy.subtract(0.92, numpy.true_divide(4.2, b))
        m = numpy.floor(numpy.multiply(numpy.add(nb, 1.0), qb))
        lpq = numpy.log(numpy.true_divide(qb, numpy.subtract(1.0, qb)))
        h = numpy.add(_lgamma(numpy.add(m, 1.0)), _lgamma(numpy.add(numpy.subtract(nb, m), 1.0)))

        def propose(g, s):
            u2 = numpy.subtract(_uniform(g, s), 0.5)
            v = _open_uniform(g, s)
            us = numpy.subtract(0.5, numpy.abs(u2))
            kk = numpy.floor(numpy.add(numpy.multiply(numpy.add(numpy.true_divide(
                numpy.multiply(2, a), us), b), u2), c))
            inside = numpy.logical_and(numpy.greater_equal(kk, 0), numpy.less_equal(kk, nb))
            quick = numpy.logical_and(numpy.greater_equal(us, 0.07), numpy.less_equal(v, vr))
            kc = numpy.minimum(numpy.maximum(kk, 0), nb)
            with numpy.errstate(all="ignore"):
                lhs = numpy.log(numpy.true_divide(numpy.multiply(v, alpha), numpy.add(
                    numpy.true_divide(a, numpy.square(us)), b)))
                rhs = numpy.add(numpy.subtract(numpy.subtract(h, _lgamma(numpy.add(kc, 1.0))),
                                               _lgamma(numpy.add(numpy.subtract(nb, kc), 1.0))),
                                numpy.multiply(numpy.subtract(kc, m), lpq))
            ok = numpy.logical_and(inside, numpy.logical_or(quick, numpy.less_equal(lhs, rhs)))
            return kk, ok
        big = _rounds(gen, sh, propose)
        copyto(res, big, where=numpy.logical_not(small))
    res = where(flip, numpy.subtract(n, res), res) if isinstance(flip, _DA) else \
        (numpy.subtract(n, res) if flip else res)
    return _result(asdist_int(res), sh, int)


def asdist_int(x):
    return x.astype(numpy.int64)


def zipf(gen, a, size=None):
    """Zipf draws by Devroye's rejection (a > 1)."""
    a = _param(a)
    _check(numpy.logical_or(numpy.less_equal(a, 1), numpy.isnan(a)),
           "a <= 1 or a " + ("contains NaNs" if isinstance(a, _DA) else "is NaN"))
    sh = _shape(size, a)
    am1 = numpy.subtract(a, 1.0)
    b = numpy.power(2.0, am1)
    top = float(numpy.iinfo(numpy.int64).max)

    def propose(g, s):
        u = numpy.subtract(1.0, _uniform(g, s))
        v = _uniform(g, s)
        x = numpy.floor(numpy.power(u, numpy.true_divide(-1.0, am1)))
        t = numpy.power(numpy.add(1.0, numpy.true_divide(1.0, numpy.maximum(x, 1.0))), am1)
        ok = numpy.logical_and(numpy.logical_and(numpy.greater_equal(x, 1), numpy.less(x, top)),
                               numpy.less_equal(numpy.true_divide(numpy.multiply(
                                   numpy.multiply(v, x), numpy.subtract(t, 1.0)),
                                   numpy.subtract(b, 1.0)), numpy.true_divide(t, b)))
        return where(ok, x, 1.0), ok
    return _result(_rounds(gen, sh, propose).astype(numpy.int64), sh, int)


def vonmises(gen, mu, kappa, size=None):
    """von Mises draws by Best and Fisher's rejection (uniform for a tiny
    kappa, a wrapped normal for a huge one, as NumPy)."""
    mu, kappa = _param(mu), _param(kappa)
    _nonneg(kappa, "kappa")
    sh = _shape(size, mu, kappa)
    tiny = numpy.less(kappa, 1e-8)
    k = where(tiny, 1.0, kappa) if isinstance(tiny, _DA) else (1.0 if tiny else kappa)
    r = numpy.add(1.0, numpy.sqrt(numpy.add(1.0, numpy.multiply(4.0, numpy.square(k)))))
    rho = numpy.true_divide(numpy.subtract(r, numpy.sqrt(numpy.multiply(2.0, r))),
                            numpy.multiply(2.0, k))
    sv = numpy.true_divide(numpy.add(1.0, numpy.square(rho)), numpy.multiply(2.0, rho))

    def propose(g, s):
        z = numpy.cos(numpy.multiply(numpy.pi, _uniform(g, s)))
        w = numpy.true_divide(numpy.add(1.0, numpy.multiply(sv, z)), numpy.add(sv, z))
        y = numpy.multiply(k, numpy.subtract(sv, w))
        v = _open_uniform(g, s)
        with numpy.errstate(all="ignore"):
            ok = numpy.logical_or(
                numpy.greater_equal(numpy.subtract(numpy.multiply(y, numpy.subtract(2.0, y)), v), 0),
                numpy.greater_equal(numpy.add(numpy.subtract(numpy.log(numpy.true_divide(y, v)),
                                                             y), 1.0), 0))
        return numpy.arccos(numpy.clip(w, -1.0, 1.0)), ok
    ang = _rounds(gen, sh, propose)
    ang = where(numpy.less(_uniform(gen, sh), 0.5), numpy.negative(ang), ang)
    res = numpy.add(ang, mu)
    m = numpy.subtract(numpy.fmod(numpy.add(numpy.abs(res), numpy.pi), 2 * numpy.pi), numpy.pi)
    res = where(numpy.less(res, 0), numpy.negative(m), m)
    flat = numpy.add(mu, numpy.multiply(numpy.pi, numpy.subtract(numpy.multiply(
        2.0, _uniform(gen, sh)), 1.0)))
    # NumPy: a wrapped normal above kappa = 1e6, where rho loses its digits
    big = numpy.greater(kappa, 1e6)
    if _any(big):
        wn = numpy.add(mu, numpy.multiply(numpy.sqrt(numpy.true_divide(1.0, k)), _normal(gen, sh)))
        wn = numpy.subtract(numpy.mod(numpy.add(wn, numpy.pi), 2 * numpy.pi), numpy.pi)
        res = where(big, wn, res)
    return _result(where(tiny, flat, res), sh)


def logseries(gen, p, size=None):
    """Logarithmic series draws by Kemp's algorithm, in rounds."""
    p = _param(p)
    _check(numpy.logical_or(numpy.logical_or(numpy.less(p, 0), numpy.greater_equal(p, 1)),
                            numpy.isnan(p)),
           "p < 0, p >= 1 or p " + ("contains NaNs" if isinstance(p, _DA) else "is NaN"))
    sh = _shape(size, p)
    r = numpy.log1p(numpy.negative(p))

    def propose(g, s):
        v = _uniform(g, s)
        u = _uniform(g, s)
        q = numpy.negative(numpy.expm1(numpy.multiply(r, u)))
        with numpy.errstate(all="ignore"):
            k = numpy.floor(numpy.add(1.0, numpy.true_divide(numpy.log(v), numpy.log(q))))
        low = numpy.less_equal(v, numpy.multiply(q, q))
        k_ok = numpy.logical_and(numpy.greater_equal(k, 1), numpy.greater(v, 0))
        val = where(numpy.greater_equal(v, p), 1.0,
                    where(low, k, where(numpy.greater_equal(v, q), 1.0, 2.0)))
        ok = numpy.logical_or(numpy.greater_equal(v, p), numpy.logical_or(
            numpy.logical_not(low), k_ok))
        return val, ok
    return _result(_rounds(gen, sh, propose).astype(numpy.int64), sh, int)


def hypergeometric(gen, ngood, nbad, nsample, size=None):
    """Hypergeometric draws: nsample (or its complement, the smaller) draws
    without replacement, one round per draw over all elements at once."""
    good, bad, n = _param(ngood), _param(nbad), _param(nsample)
    _check(numpy.less(numpy.add(good, bad), n), "ngood + nbad < nsample")
    _nonneg(n, "nsample")
    _nonneg(good, "ngood")
    _nonneg(bad, "nbad")
    sh = _shape(size, good, bad, n)
    total = numpy.add(good, bad)
    flip = numpy.greater(n, numpy.multiply(0.5, total))
    m = where(flip, numpy.subtract(total, n), n) if isinstance(flip, _DA) else         (total - n if flip else n)
    rounds = int(numpy.max(m.get()) if isinstance(m, _DA) else m)
    g = zeros(sh if sh is not None else (), numpy.float64)
    left_good = numpy.add(zeros(sh if sh is not None else (), numpy.float64), good)
    left = numpy.add(zeros(sh if sh is not None else (), numpy.float64), total)
    for i in range(rounds):
        active = numpy.less(float(i), m)
        pick = numpy.logical_and(active, numpy.less(numpy.multiply(_uniform(gen, sh), left),
                                                     left_good))
        g = numpy.add(g, pick.astype(numpy.float64))
        left_good = numpy.subtract(left_good, pick.astype(numpy.float64))
        left = numpy.subtract(left, active.astype(numpy.float64))
    res = where(flip, numpy.subtract(good, g), g) if isinstance(flip, _DA) else \
        (numpy.subtract(good, g) if flip else g)
    return _result(res.astype(numpy.int64), sh, int)


def multinomial(gen, n, pvals, size=None):
    """Multinomial draws: a binomial per category of what the earlier ones
    left (NumPy's conditional construction)."""
    pv = numpy.asarray(pvals.get() if isinstance(pvals, _DA) else pvals, dtype=numpy.float64)
    if pv.ndim != 1:
        raise ValueError("object too deep for desired array" if pv.ndim > 1 else
                         "object of too small depth for desired array")
    if numpy.any(pv < 0) or numpy.any(pv > 1) or numpy.any(numpy.isnan(pv)):
        raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
    nn = _param(n)
    _nonneg(nn, "n")
    shape = (() if size is None else _shape_of(size))
    if isinstance(nn, _DA):
        shape = numpy.broadcast_shapes(shape, nn.shape)
    left = numpy.add(numpy.zeros(shape), nn) if not isinstance(nn, _DA) else \
        numpy.add(nn, numpy.zeros(shape))
    left = asdist_float(left)
    rest = 1.0
    parts = []
    for i in range(pv.shape[0] - 1):
        q = min(max(pv[i] / rest, 0.0), 1.0) if rest > 0 else 0.0
        x = binomial(gen, left, q, size=shape)
        x = asdist_float(x)
        parts.append(x)
        left = numpy.subtract(left, x)
        rest -= pv[i]
    parts.append(left)
    return stack(parts, axis=-1).astype(numpy.int64)


def asdist_float(x):
    return asarray(x, dtype=numpy.float64)


# ---- permutations and vectors ----------------------------------------------------------

def permutation(gen, x, axis=0):
    """A permuted range (an int) or a shuffled copy of x along axis: sorted
    random keys on the devices."""
    if isinstance(x, (int, numpy.integer)):
        n = operator.index(x)
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
        keys = gen.random(n)
        return argsort(keys) if n else arange(0)
    a = asarray(x)
    if a.ndim < 1:
        raise numpy.exceptions.AxisError("x must be an integer or at least 1-dimensional")
    ax = operator.index(axis) % a.ndim
    order = argsort(gen.random(a.shape[ax])) if a.shape[ax] else arange(0)
    return take(a, order, axis=ax)


def shuffle(gen, x, axis=0):
    """x permuted in place along axis."""
    if not isinstance(x, _DA):
        raise TypeError("shuffle: x must be a DistributedArray")
    setitem(x, Ellipsis, permutation(gen, x, axis))


def multivariate_normal(gen, mean, cov, size=None, check_valid="warn", tol=1e-8, *,
                        method="svd"):
    """mean + z A with A from the covariance (a parameter, factored by NumPy
    on the host), z standard normals drawn on the devices."""
    m = numpy.asarray(mean.get() if isinstance(mean, _DA) else mean, dtype=numpy.float64)
    c = numpy.asarray(cov.get() if isinstance(cov, _DA) else cov, dtype=numpy.float64)
    if m.ndim != 1:
        raise ValueError("mean must be 1 dimensional")
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ValueError("cov must be 2 dimensional and square")
    if m.shape[0] != c.shape[0]:
        raise ValueError("mean and cov must have same length")
    shape = () if size is None else _shape_of(size)
    if method == "cholesky":
        factor = numpy.linalg.cholesky(c).T
    else:
        if method == "eigh":
            s, u = numpy.linalg.eigh(c)
            s = numpy.maximum(s, 0)
            vt = u.T
        else:
            u, s, vt = numpy.linalg.svd(c)
        if check_valid != "ignore" and method == "svd":
            psd = numpy.allclose(numpy.dot(vt.T * s, vt), c, rtol=tol, atol=tol)
            if not psd:
                if check_valid == "warn":
                    warnings.warn("covariance is not symmetric positive-semidefinite.",
                                  RuntimeWarning, stacklevel=3)
                else:
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
        factor = numpy.sqrt(s)[:, None] * vt
    z = _normal(gen, shape + (m.shape[0],))
    return numpy.add(numpy.matmul(z, asarray(factor)), asarray(m))


GENERATOR_METHODS = {
    "standard_exponential": standard_exponential, "exponential": exponential,
    "gumbel": gumbel, "laplace": laplace, "logistic": logistic, "lognormal": lognormal,
    "pareto": pareto, "power": power, "rayleigh": rayleigh, "weibull": weibull,
    "standard_cauchy": standard_cauchy, "triangular": triangular, "wald": wald,
    "standard_gamma": standard_gamma, "gamma": gamma, "chisquare": chisquare, "beta": beta,
    "f": f, "standard_t": standard_t, "noncentral_chisquare": noncentral_chisquare,
    "noncentral_f": noncentral_f, "dirichlet": dirichlet, "poisson": poisson,
    "geometric": geometric, "negative_binomial": negative_binomial, "binomial": binomial,
    "permutation": permutation, "shuffle": shuffle, "multivariate_normal": multivariate_normal,
    "zipf": zipf, "vonmises": vonmises, "logseries": logseries, "hypergeometric": hypergeometric,
    "multinomial": multinomial,
}


# ---- numpy.random's module functions on a global Generator -----------------------------

_GLOBAL = []


def global_generator():
    if not _GLOBAL:
        _GLOBAL.append(default_rng())
    return _GLOBAL[0]


def seed(seed=None):
    """Reseeds the global Generator of the module functions."""
    _GLOBAL[:] = [default_rng(seed)]


def rand(*shape):
    return global_generator().random(shape if shape else None)


def randn(*shape):
    return global_generator().standard_normal(shape if shape else None)


def randint(low, high=None, size=None, dtype=int):
    return global_generator().integers(low, high, size, dtype=dtype)


def random_integers(low, high=None, size=None):
    if high is None:
        warnings.warn("This function is deprecated. Please call randint(1, {low} + 1) "
                      "instead".format(low=low), DeprecationWarning, stacklevel=2)
        high, low = low, 1
    else:
        warnings.warn("This function is deprecated. Please call randint({low}, {high} + 1) "
                      "instead".format(low=low, high=high), DeprecationWarning, stacklevel=2)
    return global_generator().integers(low, high, size, endpoint=True)


def random_sample(size=None):
    return global_generator().random(size)


def _module_function(name):
    def fn(*args, **kwargs):
        g = global_generator()
        return getattr(g, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


MODULE_FUNCTIONS = {
    "seed": seed, "rand": rand, "randn": randn, "randint": randint,
    "random_integers": random_integers, "random_sample": random_sample, "ranf": random_sample,
    "sample": random_sample, "random": random_sample,
}
for _name in list(GENERATOR_METHODS) + ["standard_normal", "normal", "uniform", "choice"]:
    MODULE_FUNCTIONS.setdefault(_name, _module_function(_name))


def install(module):
    """Makes these the methods of module.Generator and the functions of the
    module (dgarray.random) that it does not define itself, in place of
    NumPy's fallback (random.py sits below this module, which draws from its
    Generator)."""
    gen = module.Generator
    for name, fn in GENERATOR_METHODS.items():
        if name not in vars(gen):
            setattr(gen, name, fn)
    for name, fn in MODULE_FUNCTIONS.items():
        if name not in vars(module):
            setattr(module, name, fn)
