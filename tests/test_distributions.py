"""NumPy's random distributions and legacy module functions composed on
the devices (dgarray/_distributions.py): NumPy's API, shapes, dtypes,
scalar results and errors; the values are dgarray's streams, so they are
checked by their moments against a NumPy draw of the same distribution (a
seeded draw of 200,000: the means within 6 standard errors, the variances
within 5%), on 1 and 4 devices."""
import numpy as np
import pytest

import dgarray as dg
from _numpy_check import no_fallback, same_error  # noqa: F401

N = 200_000
CASES = [("exponential", (2.0,)), ("standard_exponential", ()), ("gumbel", (1.0, 2.0)),
         ("laplace", (0.5, 1.5)), ("logistic", (0.0, 1.0)), ("lognormal", (0.0, 0.5)),
         ("pareto", (5.0,)), ("power", (2.0,)), ("rayleigh", (2.0,)), ("weibull", (1.5,)),
         ("triangular", (0.0, 1.0, 3.0)), ("wald", (1.0, 2.0)), ("standard_cauchy", ()),
         ("gamma", (0.5, 2.0)), ("gamma", (3.2, 1.0)), ("standard_gamma", (2.5,)),
         ("chisquare", (4.0,)), ("beta", (2.0, 5.0)), ("f", (5.0, 20.0)), ("standard_t", (5.0,)),
         ("noncentral_chisquare", (3.0, 2.0)), ("noncentral_chisquare", (0.5, 1.0)),
         ("noncentral_f", (5.0, 20.0, 1.0)), ("poisson", (3.0,)), ("poisson", (50.0,)),
         ("geometric", (0.3,)), ("negative_binomial", (5, 0.4)), ("binomial", (20, 0.3)),
         ("binomial", (1000, 0.4)), ("binomial", (1000, 0.9)), ("vonmises", (0.5, 2.0)),
         ("vonmises", (0.0, 1e-9)), ("vonmises", (1.0, 4e6)), ("logseries", (0.6,)),
         ("hypergeometric", (30, 20, 15)),
         ("hypergeometric", (30, 20, 40))]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_moments_match_numpy(name, args, ndev):
    g = dg.random.default_rng(11)
    m = {k: slice(N * k // ndev, N * (k + 1) // ndev) for k in range(ndev)}
    x = getattr(g, name)(*args, size=N)
    assert isinstance(x, dg.DistributedArray) and x.shape == (N,)
    ref = getattr(np.random.default_rng(5), name)(*args, size=N)
    assert x.dtype == ref.dtype
    h = x.get()
    if name == "standard_cauchy":  # no moments: the quartiles
        np.testing.assert_allclose(np.percentile(h, [25, 50, 75]), [-1, 0, 1], atol=0.03)
        return
    se = np.sqrt(ref.var() / N)
    assert abs(h.mean() - ref.mean()) < 6 * se + 1e-12, (h.mean(), ref.mean())
    assert abs(h.var() - ref.var()) <= 0.05 * ref.var() + 1e-12, (h.var(), ref.var())
    del m


def test_zipf_and_multinomial(ndev):
    """zipf has no variance (a <= 3): the frequencies of 1, 2 and 3 against
    the exact ones; multinomial's rows sum to n, their means n pvals."""
    from math import fsum
    g = dg.random.default_rng(12)
    x = g.zipf(2.5, size=N).get()
    zeta = fsum(k ** -2.5 for k in range(1, 2_000_000)) + 2_000_000 ** -1.5 / 1.5
    for k in (1, 2, 3):
        p = k ** -2.5 / zeta
        assert abs((x == k).mean() - p) < 6 * np.sqrt(p * (1 - p) / N)
    m = g.multinomial(20, [0.2, 0.3, 0.5], size=50000)
    assert m.shape == (50000, 3) and m.dtype == np.int64
    h = m.get()
    assert (h.sum(axis=1) == 20).all()
    np.testing.assert_allclose(h.mean(axis=0), [4, 6, 10], rtol=0.02)
    assert g.multinomial(5, [0.5, 0.5]).shape == (2,) and type(g.zipf(2.0)) is int


def test_array_parameters_and_scalars(ndev):
    g = dg.random.default_rng(3)
    lam = dg.asarray(np.array([0.5, 5.0, 20.0, 80.0]))
    x = g.poisson(lam, size=(5000, 4))
    assert x.shape == (5000, 4) and x.dtype == np.int64
    np.testing.assert_allclose(x.get().mean(axis=0), lam.get(), rtol=0.05)
    s = g.gamma(np.array([[1.0], [4.0]]), 2.0)
    assert s.shape == (2, 1)
    assert type(g.exponential()) is float and type(g.poisson(2.0)) is int
    assert type(g.binomial(10, 0.5)) is int and type(g.beta(1, 2)) is float
    p = g.permutation(10)
    assert sorted(p.get().tolist()) == list(range(10))
    a = dg.arange(12).reshape(4, 3)
    q = g.permutation(a)
    assert sorted(map(tuple, q.get().tolist())) == sorted(map(tuple, a.get().tolist()))
    b = dg.arange(20)
    g.shuffle(b)
    assert sorted(b.get().tolist()) == list(range(20))
    mv = g.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], size=50000)
    np.testing.assert_allclose(np.cov(mv.get().T), [[1.0, 0.5], [0.5, 2.0]], atol=0.05)
    d = g.dirichlet([1.0, 2.0, 3.0], size=1000)
    np.testing.assert_allclose(d.get().sum(axis=1), 1.0)


def test_errors_are_numpys():
    g, h = dg.random.default_rng(0), np.random.default_rng(0)
    for name, args, kw in [("exponential", (-1,), {}), ("exponential", ([1, 2],), {"size": 3}),
                           ("gamma", (-1,), {}), ("poisson", (-1,), {}), ("poisson", (1e20,), {}),
                           ("binomial", (-1, 0.5), {}), ("binomial", (3, 1.5), {}),
                           ("triangular", (1, 0, 2), {}), ("triangular", (0, 3, 2), {}),
                           ("triangular", (1, 1, 1), {}), ("geometric", (0,), {}),
                           ("wald", (0, 1), {}), ("weibull", (-1,), {}), ("beta", (0, 1), {}),
                           ("standard_t", (0,), {}), ("chisquare", (0,), {}),
                           ("laplace", (0, -1), {}), ("power", (-1,), {}), ("pareto", (0,), {}),
                           ("zipf", (1,), {}), ("vonmises", (0, -1), {}), ("logseries", (1,), {}),
                           ("hypergeometric", (1, 1, 3), {}), ("hypergeometric", (1, 1, -1), {}),
                           ("multinomial", (-1, [0.5, 0.5]), {}),
                           ("multinomial", (5, [1.5, -0.5]), {})]:
        same_error(lambda: getattr(g, name)(*args, **kw), lambda: getattr(h, name)(*args, **kw))
    same_error(lambda: g.poisson(dg.asarray([1.0, -2.0])), lambda: h.poisson([1.0, -2.0]))
    same_error(lambda: g.binomial(3, dg.asarray([1.5])), lambda: h.binomial(3, [1.5]))
    same_error(lambda: g.negative_binomial(0, 0.5), lambda: h.negative_binomial(0, 0.5))


def test_legacy_module_functions():
    dg.random.seed(4)
    a = dg.random.rand(3, 4)
    dg.random.seed(4)
    assert np.array_equal(dg.random.rand(3, 4).get(), a.get())
    assert a.shape == (3, 4) and a.dtype == np.float64
    assert dg.random.randn(5).shape == (5,) and type(dg.random.rand()) is float
    r = dg.random.randint(2, 7, size=1000).get()
    assert r.min() >= 2 and r.max() < 7
    with pytest.warns(DeprecationWarning):
        r = dg.random.random_integers(1, 3, size=100).get()
    assert r.min() >= 1 and r.max() <= 3
    for name in ("random_sample", "ranf", "sample", "random"):
        x = getattr(dg.random, name)((2, 2))
        assert x.shape == (2, 2)
    assert dg.random.exponential(1.0, 10).shape == (10,)
    assert dg.random.poisson(2.0, (2, 3)).dtype == np.int64
    p = dg.random.permutation(5)
    assert sorted(p.get().tolist()) == [0, 1, 2, 3, 4]
