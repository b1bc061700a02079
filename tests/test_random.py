"""dgarray.random against NumPy's Generator API: shapes, dtypes, scalar
types, ranges, errors; values that do not depend on the layout, the number
of devices or the order chunks are computed in; reproducibility; simple
statistics (the C tests, tests/c/test_random.c, check the bits: Philox's
known answers and the integers' rejection against a reference)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for, on_devices

HERE = os.path.dirname(os.path.abspath(__file__))
NDEV = dg._core._ndevices()

# (method, args, kwargs) drawn with a size, for the layout tests
DRAWS = [
    ("random", (), {}),
    ("random", (), {"dtype": np.float32}),
    ("standard_normal", (), {}),
    ("standard_normal", (), {"dtype": np.float32}),
    ("normal", (3.0, 2.0), {}),
    ("uniform", (-2.0, 5.0), {}),
    ("integers", (-7, 1000), {}),
    ("integers", (0, 256), {"dtype": np.uint8}),
    ("integers", (-(2 ** 63), 2 ** 63), {}),
    ("integers", (0, 2 ** 64), {"dtype": np.uint64}),
    ("integers", (0, 2 ** 31 + 1), {"dtype": np.uint32}),   # rejects about half
    ("integers", (0, 2), {"dtype": bool}),
    ("integers", (-5, 5), {"dtype": np.int16, "endpoint": True}),
]
IDS = [f"{m}-{'-'.join(map(str, a))}-{'-'.join(str(v) for v in k.values())}"
       for m, a, k in DRAWS]


def draw(seed, method, args, kwargs, size, **extra):
    return getattr(dg.random.default_rng(seed), method)(*args, size=size, **kwargs, **extra)


@pytest.mark.parametrize("method,args,kwargs", DRAWS, ids=IDS)
def test_dtype_and_shape_follow_numpy(method, args, kwargs):
    want = getattr(np.random.default_rng(0), method)(*args, size=(5, 3), **kwargs)
    got = draw(1, method, args, kwargs, (5, 3))
    assert isinstance(got, dg.DistributedArray)
    assert got.dtype == want.dtype and got.shape == want.shape


@pytest.mark.parametrize("method,args,kwargs", DRAWS, ids=IDS)
@pytest.mark.parametrize("shape", [(1,), (7,), (37, 5), (6, 4, 3)], ids=str)
def test_values_do_not_depend_on_the_layout(method, args, kwargs, shape, ndev):
    ref = draw(123, method, args, kwargs, shape).get()
    for name, m in maps_for(shape, ndev):
        got = draw(123, method, args, kwargs, shape, index_map=m)
        np.testing.assert_array_equal(got.get(), ref, err_msg=name)
        assert got.index_map == dg.zeros(shape, index_map=m).index_map


DRAW_CODE = """
import numpy as np, dgarray as dg


def draws():
    r = dg.random.default_rng(7)
    xs = dict(u=r.random((33, 5)), n=r.standard_normal(100, dtype=np.float32),
              i=r.integers(-9, 2 ** 40, size=77), b=r.integers(0, 3, size=50, dtype=np.uint8),
              m=r.normal(1.0, [[1.0], [2.0]], size=(2, 9)), f=r.uniform(-1, 1, 1000),
              k=r.integers(0, 2 ** 31 + 1, size=300, dtype=np.uint32))
    return {k: v.get() for k, v in xs.items()}
"""


def test_values_do_not_depend_on_the_number_of_devices_or_the_backend(tmp_path):
    """The same draws on 1, 3 and 4 virtual CPU devices, and on this
    process's backend: bit for bit, but for float64 normals drawn on GPUs
    (their libm), within a few ulp."""
    got = {}
    for n in (1, 3, 4):
        env = dict(os.environ, DGARRAY_CPU_DEVICES=str(n), DGARRAY_BACKEND="cpu",
                   DGARRAY_MIN_SPLIT_BYTES="0",
                   # the dgarray this process imported (a source tree or an install)
                   PYTHONPATH=os.path.dirname(os.path.dirname(dg.__file__)) + os.pathsep
                   + os.environ.get("PYTHONPATH", ""))
        path = str(tmp_path / f"cpu{n}.npz")
        code = DRAW_CODE + "\nimport sys\nnp.savez(sys.argv[1], **draws())\n"
        r = subprocess.run([sys.executable, "-c", code, path], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        got[n] = dict(np.load(path))
    ns = {}
    exec(DRAW_CODE, ns)
    here = ns["draws"]()
    for k, ref in got[1].items():
        for n in (3, 4):
            np.testing.assert_array_equal(got[n][k], ref, err_msg=f"{k} on {n} devices")
        if k == "m" and dg.backend() != "cpu":
            np.testing.assert_array_max_ulp(here[k], ref, maxulp=4)
        else:
            np.testing.assert_array_equal(here[k], ref, err_msg=f"{k} on {dg.backend()}")


def test_reproducible_and_streams_differ():
    a = dg.random.default_rng(5)
    b = dg.random.default_rng(5)
    x1, x2 = a.random(50).get(), a.random(50).get()
    np.testing.assert_array_equal(x1, b.random(50).get())
    np.testing.assert_array_equal(x2, b.random(50).get())
    assert not np.any(x1 == x2)
    assert not np.any(x1 == dg.random.default_rng(6).random(50).get())
    # seeds as NumPy takes them
    np.testing.assert_array_equal(dg.random.default_rng([1, 2]).random(4).get(),
                                  dg.random.default_rng(np.random.SeedSequence([1, 2]))
                                  .random(4).get())
    assert dg.random.default_rng(a) is a
    c1, c2 = a.spawn(2)
    assert not np.any(c1.random(20).get() == c2.random(20).get())


def test_float32_normals_are_not_float64_normals_rounded():
    """float32 normals have their own definition (tests/test_random_normals.py):
    four from a Philox block, in single precision."""
    d = dg.random.default_rng(3).standard_normal(1000).get()
    f = dg.random.default_rng(3).standard_normal(1000, dtype=np.float32).get()
    assert (f != d.astype(np.float32)).mean() > 0.9


@pytest.mark.parametrize("call", [
    lambda r: r.random(), lambda r: r.random(dtype=np.float32), lambda r: r.random(()),
    lambda r: r.standard_normal(), lambda r: r.standard_normal(size=()),
    lambda r: r.normal(), lambda r: r.normal(np.array(1.0), 2.0), lambda r: r.normal([1, 2]),
    lambda r: r.uniform(), lambda r: r.uniform(size=()),
    lambda r: r.integers(5), lambda r: r.integers(5, size=()),
    lambda r: r.integers(0, 2, dtype=bool), lambda r: r.integers(0, 5, dtype=int),
    lambda r: r.integers(0, 5, dtype=np.uint8), lambda r: r.integers(np.array([5]), 7),
    lambda r: r.integers(np.array([5]), 7, size=2),
    lambda r: r.choice(5), lambda r: r.choice([1.5, 2.5]), lambda r: r.choice(5, size=()),
    lambda r: r.choice(np.array([1, 2]), size=()), lambda r: r.choice([[1, 2], [3, 4]]),
    lambda r: r.choice(5, size=(), replace=False), lambda r: r.choice(5, 0),
    lambda r: r.choice([], 0), lambda r: r.choice(np.array(5)),
])
def test_results_have_numpys_types(call):
    want = call(np.random.default_rng(0))
    got = call(dg.random.default_rng(0))
    if isinstance(want, np.ndarray):
        assert isinstance(got, dg.DistributedArray)
        assert got.shape == want.shape and got.dtype == want.dtype
    else:
        assert type(got) is type(want)


BAD_CALLS = [
    lambda r: r.random(dtype=np.int32),
    lambda r: r.random(dtype=np.float16),
    lambda r: r.random(-1),
    lambda r: r.random(2.5),
    lambda r: r.random("a"),
    lambda r: r.standard_normal(dtype="c16"),
    lambda r: r.normal(0, -1),
    lambda r: r.normal(0, [1, -1]),
    lambda r: r.normal([0, 1], 1, size=(3,)),
    lambda r: r.uniform(0, np.inf),
    lambda r: r.uniform(0, np.nan),
    lambda r: r.uniform(1, 0),
    lambda r: r.uniform(-1e308, 1e308),
    lambda r: r.uniform([0, 1], [1, 0]),
    lambda r: r.uniform([0, 0], [1, np.inf]),
    lambda r: r.integers(0),
    lambda r: r.integers(5, 5),
    lambda r: r.integers(5, 4, endpoint=True),
    lambda r: r.integers(0, -1, endpoint=True),
    lambda r: r.integers(-1, 5, dtype=np.uint8),
    lambda r: r.integers(0, 257, dtype=np.uint8),
    lambda r: r.integers(0, 256, dtype=np.uint8, endpoint=True),
    lambda r: r.integers(0, 5, dtype=np.float64),
    lambda r: r.integers(0, 2 ** 64),
    lambda r: r.integers(-2 ** 64, 0),
    lambda r: r.integers(0, 2 ** 64, dtype=np.uint64, endpoint=True),
    lambda r: r.integers(0, 3, dtype=bool),
    lambda r: r.integers(np.nan, 2),
    lambda r: r.integers(0, np.inf),
    lambda r: r.integers([0, 0], [0, 5]),
    lambda r: r.integers([1, 0], [0, 5]),
    lambda r: r.integers([0, 0], [-1, 5], endpoint=True),
    lambda r: r.integers([-1, 0], [3, 5], dtype=np.uint8),
    lambda r: r.integers([0, 0], [3, 257], dtype=np.uint8),
    lambda r: r.integers([0, 0], [3, 5], size=(3,)),
    lambda r: r.choice(0),
    lambda r: r.choice(-1),
    lambda r: r.choice([]),
    lambda r: r.choice(2.5),
    lambda r: r.choice(np.array(5.0)),
    lambda r: r.choice(5, 6, replace=False),
    lambda r: r.choice(5, -1),
    lambda r: r.choice(5, -1, replace=False),
    lambda r: r.choice(5, p=[0.5, 0.5]),
    lambda r: r.choice(2, p=[0.5, 0.6]),
    lambda r: r.choice(2, p=[1.5, -0.5]),
    lambda r: r.choice(3, p=[[0.5, 0.5, 0]]),
    lambda r: r.choice(5, p=[0.2, 0.2, 0.2, 0.2, np.nan]),
    lambda r: r.choice(3, 3, replace=False, p=[0.5, 0.5, 0]),
    lambda r: r.choice([[1, 2], [3, 4]], axis=2),
    lambda r: r.random(3, out=np.empty(4)),
    lambda r: r.random(out=np.empty(4, np.float32)),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=range(len(BAD_CALLS)))
def test_errors_follow_numpy(call):
    with pytest.raises(Exception) as want:
        call(np.random.default_rng(0))
    with pytest.raises(want.type) as got:
        call(dg.random.default_rng(0))
    assert str(got.value) == str(want.value)


def test_seed_errors_follow_numpy():
    for seed in (-1, 1.5, "x"):
        with pytest.raises(Exception) as want:
            np.random.default_rng(seed)
        with pytest.raises(want.type) as got:
            dg.random.default_rng(seed)
        assert str(got.value) == str(want.value)


def test_ranges_and_statistics():
    r = dg.random.default_rng(11)
    n = 200_000
    u = r.random(n).get()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    f = r.random(n, dtype=np.float32).get()
    assert f.min() >= 0 and f.max() < 1 and abs(f.mean() - 0.5) < 0.005
    z = r.normal(2.0, 3.0, n).get()
    assert abs(z.mean() - 2.0) < 0.05 and abs(z.std() - 3.0) < 0.05
    v = r.uniform(-4, 6, n).get()
    assert v.min() >= -4 and v.max() < 6 and abs(v.mean() - 1) < 0.05
    for lo, hi, dt in [(-3, 4, np.int64), (0, 7, np.uint8), (-128, 128, np.int8),
                       (0, 2, bool), (10, 15, np.uint64)]:
        k = r.integers(lo, hi, n, dtype=dt).get().astype(np.int64)
        assert k.min() == lo and k.max() == hi - 1
        counts = np.bincount(k - lo, minlength=hi - lo)
        expect = n / (hi - lo)
        chi = ((counts - expect) ** 2 / expect).sum()
        dof = hi - lo - 1
        assert abs(chi - dof) < 6 * np.sqrt(2 * dof), (lo, hi, dt, chi)
    e = r.integers(-5, 5, n, endpoint=True).get()
    assert e.min() == -5 and e.max() == 5


def test_full_ranges():
    r = dg.random.default_rng(2)
    for dt in (np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64):
        info = np.iinfo(dt)
        x = r.integers(info.min, info.max, 5000, dtype=dt, endpoint=True).get()
        assert x.dtype == dt
        # both halves of the range are drawn
        assert (x < info.min // 2 + info.max // 2).any() and (x > info.max // 2).any()


@pytest.mark.parametrize("lo,hi,dt", [(0, 10, np.int64), (-5, 2 ** 40, np.int64),
                                       (0, 2 ** 31 + 1, np.uint32), (3, 9, np.int8),
                                       (-(2 ** 63), 2 ** 63 - 12345, np.int64),
                                       (0, 2 ** 63 + 12345, np.uint64), (0, 2, bool)])
def test_array_bounds_draw_what_scalar_bounds_draw(lo, hi, dt):
    """Array bounds take the same words and rejections as scalar ones (the
    ranges above reject often), on the devices."""
    want = dg.random.default_rng(9).integers(lo, hi, size=(40, 3), dtype=dt).get()
    for low, high in [(np.full(3, lo, dtype=object), hi),
                      (dg.asarray(np.full((40, 1), lo, dtype=np.int64 if lo < 0 else
                                          np.uint64)), np.full(3, hi, dtype=object))]:
        got = dg.random.default_rng(9).integers(low, high, size=(40, 3), dtype=dt)
        np.testing.assert_array_equal(got.get(), want)


def test_array_bounds_broadcast():
    r = dg.random.default_rng(4)
    low = np.array([[0], [100], [-50]])
    high = np.array([10, 20, 30, 40]) + low
    x = r.integers(low, high)
    assert x.shape == (3, 4) and x.dtype == np.int64
    h = x.get()
    assert (h >= low).all() and (h < high).all()
    y = r.integers(dg.asarray(low), dg.asarray(high), endpoint=True, size=(2, 3, 4)).get()
    assert (y >= low).all() and (y <= high).all()


def test_array_parameters_draw_what_scalar_parameters_draw():
    want = dg.random.default_rng(1).normal(2.0, 3.0, size=(6, 4)).get()
    got = dg.random.default_rng(1).normal(dg.full((6, 4), 2.0), np.full(4, 3.0))
    np.testing.assert_array_equal(got.get(), want)
    want = dg.random.default_rng(1).uniform(-1.0, 4.0, size=(6, 4)).get()
    got = dg.random.default_rng(1).uniform(np.full(4, -1.0), dg.full((6, 1), 4.0))
    np.testing.assert_array_equal(got.get(), want)
    x = dg.random.default_rng(1).normal([0.0, 100.0], [1.0, 0.0], size=(1000, 2)).get()
    assert (x[:, 1] == 100.0).all() and abs(x[:, 0].mean()) < 0.2


def test_out():
    r = dg.random.default_rng(8)
    out = dg.empty((20, 3), index_map=on_devices([(0, slice(0, 7)), (1, slice(7, None))], NDEV))
    res = r.random(out=out)
    assert res is out
    np.testing.assert_array_equal(out.get(), dg.random.default_rng(8).random((20, 3)).get())
    f = dg.empty(10, dtype=np.float32)
    assert r.standard_normal(10, dtype=np.float32, out=f) is f
    r2 = dg.random.default_rng(8)
    r2.random((20, 3))
    np.testing.assert_array_equal(f.get(), r2.standard_normal(10, dtype=np.float32).get())
    h = np.empty(6)
    assert r.random(out=h) is h and (h >= 0).all() and (h < 1).all()
    with pytest.raises(ValueError, match="size must match"):
        r.random(5, out=out)
    with pytest.raises(TypeError, match="wrong type"):
        r.random(out=f)


def test_choice():
    r = dg.random.default_rng(21)
    x = r.choice(10, 1000)
    assert isinstance(x, dg.DistributedArray) and x.dtype == np.int64
    h = x.get()
    assert h.min() >= 0 and h.max() <= 9 and len(np.unique(h)) == 10
    pop = np.array([1.5, 2.5, 3.5, 4.5])
    y = r.choice(pop, (5, 6)).get()
    assert y.shape == (5, 6) and np.isin(y, pop).all()
    z = r.choice(dg.asarray(pop), 20).get()
    assert np.isin(z, pop).all()
    w = r.choice(50, 50, replace=False).get()
    np.testing.assert_array_equal(np.sort(w), np.arange(50))
    s = r.choice(1000, 10, replace=False).get()
    assert len(np.unique(s)) == 10
    p = np.array([0.1, 0.0, 0.6, 0.3])
    c = r.choice(4, 40_000, p=p).get()
    assert (c != 1).all()
    np.testing.assert_allclose(np.bincount(c, minlength=4) / 40_000, p, atol=0.01)
    q = r.choice(4, 3, replace=False, p=p).get()
    assert len(set(q)) == 3 and 1 not in q
    m = np.arange(12).reshape(3, 4)
    rows = r.choice(m, 2).get()
    assert rows.shape == (2, 4) and all((row == m).all(axis=1).any() for row in rows)
    cols = r.choice(m, 5, axis=1).get()
    assert cols.shape == (3, 5) and all((col[:, None] == m).all(axis=0).any()
                                        for col in cols.T)
    # the same draws for a seed, on any layout of the population
    m = on_devices([(0, slice(0, 2)), (1, slice(2, 4))], NDEV)
    a1 = dg.random.default_rng(3).choice(dg.asarray(pop, index_map=m), 9)
    a2 = dg.random.default_rng(3).choice(pop, 9)
    np.testing.assert_array_equal(a1.get(), a2.get())


def test_generator_methods_without_device_code_run_through_numpy():
    r = dg.random.default_rng(0)
    with pytest.warns(dg.FallbackWarning, match="multivariate_hypergeometric"):
        e = r.multivariate_hypergeometric([3, 4, 5], 6, size=5)
    assert isinstance(e, dg.DistributedArray) and e.shape == (5, 3)
    assert (e.get().sum(axis=1) == 6).all()
    d = dg.arange(10)
    with pytest.warns(dg.FallbackWarning, match="permuted"):
        assert r.permuted(d, out=d) is d
    np.testing.assert_array_equal(np.sort(d.get()), np.arange(10))    # written back
    # reproducible: the NumPy generator is seeded from the key and a stream
    with pytest.warns(dg.FallbackWarning):
        a = dg.random.default_rng(1).multivariate_hypergeometric([9, 9], 5, size=4).get()
        b = dg.random.default_rng(1).multivariate_hypergeometric([9, 9], 5, size=4).get()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(AttributeError):
        r.no_such_method
    with pytest.raises(AttributeError):
        r.bit_generator                       # a property of NumPy's, not a method
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # on the devices now (dgarray/_distributions.py)
        x = dg.random.rand(3, 2)
        e = r.exponential(2.0, size=5)
    assert isinstance(x, dg.DistributedArray) and x.shape == (3, 2)
    assert isinstance(e, dg.DistributedArray) and (e.get() > 0).all()
    assert dg.random.SeedSequence is np.random.SeedSequence


def test_large_draw_on_many_chunks():
    """A draw big enough to run on the device workers (not inline), on
    uneven chunks: the same values as one chunk."""
    n = 300_001
    ref = dg.random.default_rng(77).random(n, index_map={0: slice(None)}).get()
    got = dg.random.default_rng(77).random(
        n, index_map=on_devices([(k, slice(k, None, 3)) for k in range(3)], NDEV))
    np.testing.assert_array_equal(got.get(), ref)
