"""Counts into bins (dgarray/_histograms.py and the backend's count slot)
against NumPy: bincount, histogram (equal and given bins, ranges, weights,
density, the bin estimators), histogram_bin_edges, histogram2d, histogramdd;
every dtype and layout, empty arrays, NumPy's errors; no host fallback."""
import numpy as np
import pytest

import dgarray as dg
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, same,  # noqa: F401
                          same_error, values)

REAL = [d for d in DTYPES if d not in ("c8", "c16")]


@pytest.mark.parametrize("dtype", ["?", "i1", "u1", "i4", "i8", "u8", "u2"])
def test_bincount(dtype, ndev, no_leak):
    x = values(dtype, (40,), low=0, high=9)
    w = values("f8", (40,), 3)
    for name, d in layouts(x, ndev):
        for kw in ({}, {"minlength": 3}, {"minlength": 20}):
            like_numpy(lambda: np.bincount(d, **kw), lambda: np.bincount(x, **kw), name)
            like_numpy(lambda: np.bincount(d, weights=w, **kw),
                       lambda: np.bincount(x, weights=w, **kw), name, rtol=1e-12)
            like_numpy(lambda: np.bincount(d, weights=dg.asarray(w.astype(np.float32)), **kw),
                       lambda: np.bincount(x, weights=w.astype(np.float32), **kw), name,
                       rtol=1e-12)


def test_bincount_sums_partials_across_devices(ndev):
    x = values("i8", (1000,), low=0, high=50)
    d = dg.distributed_array(x, {k: slice(1000 * k // ndev, 1000 * (k + 1) // ndev)
                                 for k in range(ndev)})
    r = np.bincount(d)
    assert r.mode == ("sum" if ndev > 1 else "replica")
    same(r, np.bincount(x))
    rep = dg.distributed_array(x, {k: slice(None) for k in range(ndev)})
    same(np.bincount(rep), np.bincount(x))  # a replicated input is counted once


def test_counts_take_each_element_once(ndev, no_leak):
    """Overlapping chunks with copies of one box among them (on several
    devices, and twice on one) are counted where they lie, each element
    once, whichever chunk comes first: counts, weighted sums, histograms,
    order statistics (radix selection) and 2-norms (sums of squares)."""
    from _maps import on_devices
    rows = [(0, slice(0, 20)), (1, slice(10, None)), (2, slice(0, 20)),
            (3, slice(5, 25, 2)), (1, slice(0, 20)), (3, slice(10, None))]
    boxes = [(0, (slice(0, 8), slice(1, 4))), (1, slice(4, None)), (2, (slice(0, 8), slice(1, 4))),
             (3, slice(None)), (0, (slice(0, 8), slice(1, 4)))]
    x = values("i8", (30,), low=0, high=9)
    w = values("f8", (30,), 3)
    f = values("f8", (12, 5), 2)
    for pairs in (rows, rows[::-1]):
        d = dg.distributed_array(x, on_devices(pairs, ndev))
        msg = str(pairs)
        same(np.bincount(d), np.bincount(x), msg)
        same(np.bincount(d, weights=w), np.bincount(x, weights=w), msg, rtol=1e-12)
        same(np.median(d), np.median(x), msg)
    for pairs in (boxes, boxes[::-1]):
        d = dg.distributed_array(f, on_devices(pairs, ndev))
        msg = str(pairs)
        same(np.histogram(d, bins=7)[0], np.histogram(f, bins=7)[0], msg)
        same(np.median(d), np.median(f), msg)
        same(np.percentile(d, 30), np.percentile(f, 30), msg, rtol=1e-12)
        same(np.linalg.norm(d), np.linalg.norm(f), msg, rtol=1e-12)


def test_bincount_errors():
    for x, kw in [(np.array([-1, 2]), {}), (np.array([1]), {"minlength": -1}),
                  (np.array([1]), {"minlength": None}), (np.ones((2, 2), int), {}),
                  (np.array(1), {}), (np.array([1, 2]), {"weights": [1.0]}),
                  (np.array([1, 2]), {"weights": np.array([1j, 2])})]:
        same_error(lambda: np.bincount(dg.asarray(x), **kw), lambda: np.bincount(x, **kw))
    like_numpy(lambda: np.bincount(dg.zeros(0, int), minlength=4),
               lambda: np.bincount(np.zeros(0, int), minlength=4))
    like_numpy(lambda: np.bincount(dg.zeros(0, int)), lambda: np.bincount(np.zeros(0, int)))
    with pytest.warns(DeprecationWarning):
        r = dg.bincount([1.5, 2.0])
    same(r, np.array([0, 1, 1]))
    same_error(lambda: np.bincount(dg.asarray([1.5])), lambda: np.bincount(np.array([1.5])))


@pytest.mark.parametrize("dtype", REAL)
def test_histogram(dtype, ndev, no_leak):
    x = values(dtype, (300,), 1, nan=False)
    for name, d in layouts(x, ndev, ("default", "uneven", "strided", "replicated")):
        for kw in ({}, {"bins": 7}, {"bins": 1}, {"bins": 5, "range": (-2, 2.5)},
                   {"bins": [-3, -1, 0, 0, 2.5, 4]}, {"bins": 4, "density": True},
                   {"bins": np.array([-2.0, 1.0, 3.0]), "density": True},
                   {"bins": 6, "range": (0, 1)}):
            like_numpy(lambda: np.histogram(d, **kw), lambda: np.histogram(x, **kw),
                       f"{name} {kw}", rtol=1e-12)
        for wd in ("f8", "f4", "i4", "c16"):
            w = values(wd, (300,), 5)
            for kw in ({"bins": 6}, {"bins": [-2, 0, 1, 5]}):
                like_numpy(lambda: np.histogram(d, weights=dg.asarray(w), **kw),
                           lambda: np.histogram(x, weights=w, **kw), f"{name} {wd} {kw}",
                           rtol=1e-5)


@pytest.mark.parametrize("dt", ["f4", "f8"])
@pytest.mark.parametrize("rng_, bins", [((-4, 4), 256), ((0, 1), 10), ((1e6, 1e6 + 10), 64),
                                        ((-3.3, 7.1), 4000), ((16777216.0, 16777856.0), 64)])
def test_histogram_on_and_beside_edges(ndev, dt, rng_, bins):
    """Elements exactly on every edge, one ulp either side, and random ones,
    over equal bins whose edges sit on the equal grid (a few ulp off it) or
    stray from it by much of a bin (float32 edges of [1e6, 1e6 + 10], 64
    bins: 2.5 ulp apart, rounded to whole ulp): the
    GPUs' count decides most elements from their position alone, without
    reading the edges (kernels/surface.cu, dg_flat_edges), and must put each
    element where NumPy's edges do."""
    dt = np.dtype(dt)
    edges = np.histogram_bin_edges(np.zeros(1, dt), bins=bins, range=rng_)
    on = edges.astype(dt)
    near = np.concatenate([on, np.nextafter(on, np.inf, dtype=dt),
                           np.nextafter(on, -np.inf, dtype=dt)])
    lo, hi = float(rng_[0]), float(rng_[1])
    r = np.random.default_rng(bins).uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), 20000)
    x = np.concatenate([near, r.astype(dt)])
    np.random.default_rng(1).shuffle(x)
    d = dg.distributed_array(x, layouts_map(x, ndev))
    got = np.histogram(d, bins=bins, range=rng_)
    want = np.histogram(x, bins=bins, range=rng_)
    np.testing.assert_array_equal(dg.asnumpy(got[0]), want[0])
    np.testing.assert_array_equal(dg.asnumpy(got[1]), want[1])


def layouts_map(x, ndev):
    """x split in near-equal blocks over the devices."""
    n = x.shape[0]
    return {k: slice(n * k // ndev, n * (k + 1) // ndev) for k in range(ndev)}


def test_histogram_edges_estimators_and_nans(ndev):
    x = values("f8", (500,), 2)
    d = dg.asarray(x)
    for b in ("auto", "fd", "doane", "rice", "scott", "sqrt", "sturges", "stone"):
        like_numpy(lambda: np.histogram(d, bins=b), lambda: np.histogram(x, bins=b), b,
                   rtol=1e-9)
        like_numpy(lambda: np.histogram_bin_edges(d, bins=b),
                   lambda: np.histogram_bin_edges(x, bins=b), b, rtol=1e-9)
    xn = x.copy()
    xn[::7] = np.nan
    for kw in ({"range": (-1, 1)}, {"bins": [-1, 0, 1]}):
        like_numpy(lambda: np.histogram(dg.asarray(xn), **kw), lambda: np.histogram(xn, **kw))
    big = np.array([0, 1, 2, 2**62, -2**62], np.int64)
    like_numpy(lambda: np.histogram(dg.asarray(big), bins=3), lambda: np.histogram(big, bins=3))
    with pytest.warns(RuntimeWarning, match="Converting input from bool"):
        r = np.histogram(dg.asarray(x > 0), bins=2)
    same(r, np.histogram((x > 0).astype(np.uint8), bins=2))


def test_histogram_errors():
    x = np.arange(5.0)
    d = dg.asarray(x)
    for kw in ({"bins": 0}, {"bins": 1.5}, {"bins": [3, 1]}, {"bins": [[1, 2]]},
               {"bins": "nope"}, {"range": (2, 1)}, {"range": (0, np.inf)},
               {"weights": np.ones(4)}, {"bins": "auto", "weights": np.ones(5)},
               {"bins": 40, "range": (0, 1e-322)}):
        same_error(lambda: np.histogram(d, **kw), lambda: np.histogram(x, **kw))
    same_error(lambda: np.histogram(dg.asarray([1.0, np.inf])), lambda: np.histogram([1.0, np.inf]))
    like_numpy(lambda: np.histogram(dg.zeros(0)), lambda: np.histogram(np.zeros(0)))


@pytest.mark.parametrize("dtype", ["f8", "f4", "i4", "u1"])
def test_histogram2d_dd(dtype, ndev, no_leak):
    x, y, z = (values(dtype, (120,), s) for s in (1, 2, 3))
    w = values("f8", (120,), 4)
    for name, d in layouts(x, ndev, ("default", "uneven", "replicated")):
        e, f = dg.asarray(y), dg.asarray(z)
        for kw in ({}, {"bins": 4}, {"bins": [3, 5]}, {"bins": [-3, 0, 2, 5]},
                   {"range": [[-2, 2], [0, 3]], "density": True}, {"weights": w}):
            like_numpy(lambda: np.histogram2d(d, e, **kw), lambda: np.histogram2d(x, y, **kw),
                       f"{name} {kw}", rtol=1e-12)
        for kw in ({}, {"bins": (2, 3, 4)}, {"density": True}, {"weights": dg.asarray(w)}):
            hkw = {k: (v.get() if isinstance(v, dg.DistributedArray) else v)
                   for k, v in kw.items()}
            like_numpy(lambda: np.histogramdd(dg.stack([d, e, f], axis=1), **kw),
                       lambda: np.histogramdd(np.stack([x, y, z], axis=1), **hkw),
                       f"{name} {kw}", rtol=1e-12)
            like_numpy(lambda: dg.histogramdd([d, e, f], **kw),
                       lambda: np.histogramdd([x, y, z], **hkw), f"{name} {kw}", rtol=1e-12)
    same_error(lambda: np.histogramdd(dg.ones((4, 2)), bins=[2, 3, 4]),
               lambda: np.histogramdd(np.ones((4, 2)), bins=[2, 3, 4]))
    same_error(lambda: np.histogramdd(dg.ones((4, 2)), bins=[0, 3]),
               lambda: np.histogramdd(np.ones((4, 2)), bins=[0, 3]))
    same_error(lambda: np.histogramdd(dg.ones((4, 2)), range=[(0, 1)]),
               lambda: np.histogramdd(np.ones((4, 2)), range=[(0, 1)]))
