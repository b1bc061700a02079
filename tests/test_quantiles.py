"""Order statistics (dgarray/_quantiles.py: selection by radix counts over
the whole array, sorts along axes) against NumPy: median, quantile,
percentile and the nan* forms; every method, dtype, layout, axis argument,
keepdims, out=, weights, NaNs, empty and 0-d arrays, NumPy's errors; no host
fallback."""
import warnings

import numpy as np
import pytest

import dgarray as dg
from dgarray import _quantiles
from _numpy_check import (DTYPES, layouts, like_numpy, no_fallback, same,  # noqa: F401
                          same_error, tol, values)

REAL = [d for d in DTYPES if d not in ("c8", "c16")]
METHODS = list(_quantiles._METHODS)


@pytest.fixture(params=[True, False], ids=["select", "sort"])
def selection(request, monkeypatch):
    """Both ways to the ranks of a whole array: radix selection (from 1
    element on) and the sort."""
    monkeypatch.setattr(_quantiles, "_SELECT_MIN", 1 if request.param else 1 << 62)
    return request.param


def data(dtype, shape, seed=0, nan=False):
    x = values(dtype, shape, seed, nan=nan)
    if np.dtype(dtype).kind == "f" and x.size > 3:
        x.flat[1] = np.inf
        x.flat[2] = -np.inf
        x.flat[3] = -0.0
    return x


@pytest.mark.parametrize("dtype", DTYPES)
def test_median(dtype, ndev, selection, no_leak):
    for shape in [(7, 6), (8,), (9,), (1,), (3, 4, 5)]:
        for nan in (False, True):
            x = data(dtype, shape, nan=nan)
            for name, d in layouts(x, ndev):
                for axis in (None, 0, -1, (0, -1)):
                    if axis is not None and (x.ndim == 1 and axis == (0, -1)):
                        continue
                    for kd in (False, True):
                        like_numpy(lambda: np.median(d, axis=axis, keepdims=kd),
                                   lambda: np.median(x, axis=axis, keepdims=kd),
                                   f"{shape} {nan} {name} {axis} {kd}", rtol=tol(dtype))


@pytest.mark.parametrize("dtype", REAL)
def test_nanmedian(dtype, ndev, selection, no_leak):
    x = data(dtype, (6, 7), nan=True)
    if x.dtype.kind == "f":
        x[2] = np.nan
    for name, d in layouts(x, ndev):
        for axis in (None, 0, 1, (0, 1)):
            like_numpy(lambda: np.nanmedian(d, axis=axis), lambda: np.nanmedian(x, axis=axis),
                       f"{name} {axis}", rtol=tol(dtype))
        like_numpy(lambda: np.nanmedian(d, axis=1, keepdims=True),
                   lambda: np.nanmedian(x, axis=1, keepdims=True), name, rtol=tol(dtype))
    if x.dtype.kind == "f":
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            np.nanmedian(dg.asarray(x), axis=1)
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            np.nanmedian(dg.asarray(x[2]))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["i1", "u2", "i8", "f2", "f4", "f8", "?"])
def test_quantile_methods(method, dtype, ndev, selection):
    x = data(dtype, (9, 10), 3)
    xn = data(dtype, (9, 10), 4, nan=True)
    for q in (0.5, [0.0, 0.13, 0.77, 1.0], np.array([0.25, 0.75], np.float32),
              [[0.1, 0.2], [0.3, 0.9]]):
        for name, d in layouts(x, ndev, ("default", "strided")):
            for axis in (None, 0, 1):
                msg = f"{name} {axis} {q}"
                like_numpy(lambda: np.quantile(d, q, axis=axis, method=method),
                           lambda: np.quantile(x, q, axis=axis, method=method), msg,
                           rtol=tol(dtype))
                if np.ndim(q) == 0:
                    like_numpy(lambda: np.percentile(d, q * 100, axis=axis, method=method),
                               lambda: np.percentile(x, q * 100, axis=axis, method=method),
                               msg, rtol=tol(dtype))
        dn = dg.asarray(xn)
        for axis in (None, 1):
            like_numpy(lambda: np.nanquantile(dn, q, axis=axis, method=method),
                       lambda: np.nanquantile(xn, q, axis=axis, method=method), f"{axis} {q}",
                       rtol=tol(dtype))
            like_numpy(lambda: np.quantile(dn, q, axis=axis, method=method),
                       lambda: np.quantile(xn, q, axis=axis, method=method), f"{axis} {q}",
                       rtol=tol(dtype))
    like_numpy(lambda: np.nanpercentile(dg.asarray(xn), [10, 90], axis=0, method=method,
                                        keepdims=True),
               lambda: np.nanpercentile(xn, [10, 90], axis=0, method=method, keepdims=True),
               rtol=tol(dtype))


def narrow_as(narrow, monkeypatch):
    """How a selection narrows its keys: the elements under the prefixes
    gathered and the ranks found on the host (host), gathered and counted on
    the devices (device), never gathered (never), or gathered behind the
    first count (first)."""
    if narrow == "device":
        monkeypatch.setattr(_quantiles, "_HOST_FINISH", 0)
    elif narrow == "never":
        monkeypatch.setattr(_quantiles, "_KEEP_PART", 1 << 40)
        monkeypatch.setattr(_quantiles, "_GATHER_FIRST", False)
    elif narrow == "first":
        monkeypatch.setattr(_quantiles, "_GATHER_FIRST", True)


@pytest.mark.parametrize("narrow", ["host", "device", "never", "first"])
def test_selection_is_exact_on_large_arrays(ndev, narrow, monkeypatch):
    """Arrays past the sort threshold go through the radix passes: every
    rank asked of every key width is the sorted array's, whether the
    elements under the prefixes are gathered and the ranks found on the host
    (host), gathered and counted on the devices (device), or never gathered
    (every pass reading x), or gathered behind the first count (first)."""
    narrow_as(narrow, monkeypatch)
    rng = np.random.default_rng(5)
    for dtype in ("i1", "u2", "i4", "u8", "f2", "f4", "f8"):
        x = values(dtype, (20001,), 9, nan=True)
        if np.dtype(dtype).kind == "f":
            x[::97] = x[5]  # many ties
        d = dg.distributed_array(x, {k: slice(20001 * k // ndev, 20001 * (k + 1) // ndev)
                                     for k in range(ndev)})
        ranks = rng.integers(0, x.size, 6)
        got = _quantiles.select_ranks(d, ranks)
        want = np.sort(x, kind="stable")[ranks]
        np.testing.assert_array_equal(got, want)
        like_numpy(lambda: np.median(d), lambda: np.median(x))
        like_numpy(lambda: np.nanmedian(d), lambda: np.nanmedian(x))
        like_numpy(lambda: np.nanpercentile(d, [1, 50, 99.5]),
                   lambda: np.nanpercentile(x, [1, 50, 99.5]))


def _keys(x):
    """NumPy's order keys of x (kernels/dg_order.h), written here apart from
    _quantiles._keys_of: NaN all ones, -0.0 as 0.0, negatives flipped."""
    w = x.dtype.itemsize * 8
    u = x.view(f"u{x.dtype.itemsize}").astype(object)
    out = []
    for v, b in zip(x.tolist(), u.tolist()):
        if x.dtype.kind == "i":
            out.append(b ^ (1 << (w - 1)))
        elif x.dtype.kind == "u":
            out.append(b)
        elif v != v:
            out.append((1 << w) - 1)
        else:
            b = 0 if v == 0 else b
            out.append(((1 << w) - 1) ^ b if b >> (w - 1) else b | 1 << (w - 1))
    return np.array(out, dtype=object)


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i2", "u4", "i8"])
def test_keep_keys(dtype, ndev):
    """_core._keep_keys gathers exactly the elements whose keys are under
    the prefixes (each once, on every layout: replicated and overlapping
    ones too), then the padding: min(piece, cap) places a piece."""
    x = values(dtype, (3001,), 4, nan=True, low=-300, high=300)
    x[5:40] = x[4]  # ties
    if x.dtype.kind == "f":
        x[7] = -0.0
    k = _keys(x)
    w = x.dtype.itemsize * 8
    for pshift in (w - 12, w - 8, 3):
        mid = int(np.sort(k)[x.size // 2]) >> pshift
        for lo, hi in ((mid, mid), (mid - 1, mid + 2), (0, mid), (mid, (1 << (w - pshift)) - 1)):
            lo = max(lo, 0)
            under = np.array([lo <= int(v) >> pshift <= hi for v in k])
            cap = int(under.sum())
            pad = _quantiles._pad_for(x.dtype, pshift, lo, hi)
            if cap == 0 or pad is None:
                continue
            for name, d in layouts(x, ndev, ("default", "strided", "replicated", "overlap")):
                got = dg.asarray(_quantiles._core._keep_keys(d, pshift, lo, hi, cap, pad)).get()
                gk = _keys(got)
                kept = np.array([lo <= int(v) >> pshift <= hi for v in gk], dtype=bool)
                np.testing.assert_array_equal(np.sort(gk[kept]), np.sort(k[under]),
                                              f"{name} {pshift} {lo} {hi}")
                assert got.size <= cap * max(1, len(d.devices)) * 2, (name, got.size)
                assert got.size >= cap, (name, got.size)


def _bin_of(cum, r):
    """The bin of cumulative counts cum that holds rank r (the last one
    past them all), as the devices find it."""
    return min(int(np.searchsorted(cum, r, side="right")), len(cum) - 1)


def _gather_layouts(x, ndev):
    """(name, DistributedArray of 1-d x) over ndev devices for the
    gatherings: even, uneven (chunks of 1 and 3 elements), replicated,
    overlapping chunks, and a view of a longer array that misses some
    devices' chunks (an index map may not name an empty chunk; a view drops
    those it misses)."""
    n = x.size
    yield "even", dg.distributed_array(x, {k: slice(n * k // ndev, n * (k + 1) // ndev)
                                           for k in range(ndev)})
    if ndev == 1:
        return
    cut = [0] + [1, n // 5, n - 3][:ndev - 1] + [n]
    yield "uneven", dg.distributed_array(x, {k: slice(cut[k], cut[k + 1])
                                             for k in range(ndev)})
    yield "replicated", dg.distributed_array(x, {k: slice(0, n) for k in range(ndev)})
    yield "overlap", dg.distributed_array(x, {k: slice(max(0, n * k // ndev - 17),
                                                       n * (k + 1) // ndev)
                                              for k in range(ndev)})
    big = np.concatenate([x[n // 2:], x, x[:n // 2]] + [x] * (ndev - 1))
    m = big.size
    view = dg.distributed_array(big, {k: slice(m * k // ndev, m * (k + 1) // ndev)
                                      for k in range(ndev)})[n - n // 2:2 * n - n // 2]
    yield "view", view  # devices whose chunks miss the slice hold none of it


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i1", "i2", "u4", "i8"])
def test_keep_keys_by_bins(dtype, ndev):
    """_core._keep_keys with bins: the elements under the bins (found on the
    devices from a count not read by the host) that hold two ranks are
    gathered each exactly once, in every layout, equal keys, NaNs, ranks at
    a bin's first and last element; the counts count every one, and at
    most min(piece, cap) of them are written (cap below the count too)."""
    n = 3001
    x = values(dtype, (n,), 6, nan=True, low=-300, high=300)
    x[5:900] = x[4]  # many equal keys
    x[1000:1010] = x[2000]
    k = np.array([int(v) for v in _keys(x)], dtype=np.uint64)
    w = x.dtype.itemsize * 8
    d12 = min(12, w)
    pshift = w - d12
    q = k >> np.uint64(pshift)
    cnt = np.bincount(q.astype(np.int64), minlength=1 << d12)
    cum = np.cumsum(cnt)
    edges = [int(c) for c in cum[cnt > 0]][:6]
    ranks = [(0, 0), (n // 2, n // 2 + 1), (n - 1, n - 1), (10, 2000)]
    ranks += [(e - 1, e) for e in edges if 0 < e < n] + [(e, e) for e in edges if e < n]
    for name, d in _gather_layouts(x, ndev):
        c = _quantiles._core._count(d, None, 1 << d12, _quantiles._RADIX, pshift, w, 0)
        for r0, r1 in ranks:
            lo, hi = _bin_of(cum, r0), _bin_of(cum, r1)
            want = np.sort(k[(q >= lo) & (q <= hi)])
            for cap in (n, 3):
                kept, got = _quantiles._core._keep_keys(d, pshift, 0, 0, cap, None, c,
                                                        (r0, r1))
                got = got.get()
                pieces = sorted(b[0][:2] for _, b in kept._layout())
                assert len(pieces) == got.size, (name, pieces, got)
                assert int(got.sum()) == want.size, (name, r0, r1, cap, got, want.size)
                vals = kept.get()
                assert vals.size == sum(min(b - a, cap) for a, b in pieces), (name, cap)
                part = [vals[a:a + min(int(g), b - a)] for g, (a, b) in zip(got, pieces)]
                gk = np.array([int(v) for v in _keys(np.concatenate(part))], dtype=np.uint64)
                gq = gk >> np.uint64(pshift)
                assert ((gq >= lo) & (gq <= hi)).all(), (name, r0, r1, cap)
                if name in ("even", "uneven"):  # a piece a chunk: its own count
                    own = [int(((q[a:b] >= lo) & (q[a:b] <= hi)).sum())
                           for _, ((a, b, _),) in sorted(d._layout(), key=lambda t: t[1])]
                    assert got.tolist() == own, (name, r0, r1, got, own)
                if cap == n:
                    np.testing.assert_array_equal(np.sort(gk), want, f"{name} {r0} {r1}")


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i2", "u4", "i8"])
def test_keep_keys_apart_whole(dtype, ndev):
    """_core._keep_keys with each device's bins apart (_count apart: sets
    of nbins, summed on each device from every device's, no combine across
    devices) finds the bins the combined counts give; `whole` keeps all the
    keys under them where they are at most cap (each piece its own, every
    one once), else none: nothing written, every piece's count the total
    (cap at the total and one below it)."""
    n = 3001
    x = values(dtype, (n,), 6, nan=True, low=-300, high=300)
    x[5:900] = x[4]  # many equal keys
    k = np.array([int(v) for v in _keys(x)], dtype=np.uint64)
    w = x.dtype.itemsize * 8
    d12 = min(12, w)
    pshift, nb = w - d12, 1 << d12
    q = k >> np.uint64(pshift)
    cum = np.cumsum(np.bincount(q.astype(np.int64), minlength=nb))
    ranks = [(0, 0), (n // 2, n // 2 + 1), (n - 1, n - 1), (10, 2000), (1499, 1500)]
    core = _quantiles._core
    for name, d in _gather_layouts(x, ndev):
        c = core._count(d, None, nb, _quantiles._RADIX, pshift, w, 0, None, True)
        sets = c.size // nb
        assert c.size % nb == 0 and sets >= 1, (name, c.size)
        m = c.size
        cuts = [0] + [min(m, m * k // ndev + 3) for k in range(1, ndev)] + [m]
        # each set read in place where a chunk holds it; sets cut across
        # chunks (3 past each set's end): gathered onto each device
        for how, cb in (("apart", c), ("cut", dg.distributed_array(
                c.get(), {k: slice(cuts[k], cuts[k + 1]) for k in range(ndev)}))):
            _check_apart_whole(core, d, cb, nb, pshift, k, q, cum, ranks, f"{name} {how}")


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i2"])
def test_keep_keys_about_q(dtype, ndev):
    """_core._keep_keys with ranks a float q: the bins of the ranks about
    quantile q of the keys outside the last bin (floor((m - 1) q), 0 where
    below, and the next, at most m - 1: a nanmedian's middle pair where the
    last bin holds the NaNs), found on the devices from each device's counts
    apart; every key under them gathered once (whole: all or none); NaNs
    many, none, all, all but one; q out of [0, 1] a ValueError."""
    n = 3001
    core = _quantiles._core
    base = values(dtype, (n,), 6, nan=False, low=-300, high=300)
    dt = base.dtype
    w = dt.itemsize * 8
    d12 = min(12, w)
    pshift, nb = w - d12, 1 << d12
    top = np.iinfo(dt).max if dt.kind == "i" else np.nan  # in the last bin
    cases = {"some": base.copy(), "none": base}
    cases["some"][::3] = top
    cases["all"] = np.full(n, top, dt)
    cases["one"] = cases["all"].copy()
    cases["one"][n // 3] = base[7]
    cases["two"] = cases["one"].copy()
    cases["two"][n - 1] = base[8]
    for case, x in cases.items():
        k = np.array([int(v) for v in _keys(x)], dtype=np.uint64)
        q = k >> np.uint64(pshift)
        cnt = np.bincount(q.astype(np.int64), minlength=nb)
        cum = np.cumsum(cnt)
        m = n - int(cnt[-1])
        for name, d in _gather_layouts(x, ndev):
            c = core._count(d, None, nb, _quantiles._RADIX, pshift, w, 0, None, True)
            for qq in (0.0, 0.25, 0.5, 0.999, 1.0):
                r0 = max(0, int(np.floor((m - 1) * qq)))
                r1 = r0 + 1 if r0 + 1 < m else max(m - 1, 0)
                lo, hi = _bin_of(cum, r0), _bin_of(cum, r1)
                want = np.sort(k[(q >= lo) & (q <= hi)])
                for cap in (n, max(1, want.size - 1)):
                    kept, got = core._keep_keys(d, pshift, 0, 0, cap, None, c, qq, nb, True)
                    got, vals = got.get(), kept.get()
                    msg = f"{case} {name} {qq} {cap}"
                    if cap < want.size:  # none kept: each count the total
                        assert (got == want.size).all(), (msg, got, want.size)
                        continue
                    pieces = sorted(b[0][:2] for _, b in kept._layout())
                    part = [vals[a:a + int(g)] for g, (a, b) in zip(got, pieces)]
                    gk = np.array([int(v) for v in _keys(np.concatenate(part))],
                                  dtype=np.uint64)
                    np.testing.assert_array_equal(np.sort(gk), want, msg)
    d = dg.asarray(base)
    c = core._count(d, None, nb, _quantiles._RADIX, pshift, w, 0, None, True)
    for bad in (-0.5, 1.5, float("nan")):
        with pytest.raises(ValueError):
            core._keep_keys(d, pshift, 0, 0, n, None, c, bad, nb, True)


def _check_apart_whole(core, d, c, nb, pshift, k, q, cum, ranks, name):
    """test_keep_keys_apart_whole's checks of one array and one count."""
    for r0, r1 in ranks:
        lo, hi = _bin_of(cum, r0), _bin_of(cum, r1)
        want = np.sort(k[(q >= lo) & (q <= hi)])
        for cap in sorted({want.size, max(1, want.size - 1)}):
            kept, got = core._keep_keys(d, pshift, 0, 0, cap, None, c, (r0, r1), nb, True)
            got, vals = got.get(), kept.get()
            pieces = sorted(b[0][:2] for _, b in kept._layout())
            assert len(pieces) == got.size, (name, pieces, got)
            if cap < want.size:  # none kept
                assert (got == want.size).all(), (name, r0, r1, cap, got, want.size)
                continue
            assert int(got.sum()) == want.size and (got <= cap).all(), \
                (name, r0, r1, cap, got, want.size)
            part = [vals[a:a + int(g)] for g, (a, b) in zip(got, pieces)]
            gk = np.array([int(v) for v in _keys(np.concatenate(part))], dtype=np.uint64)
            np.testing.assert_array_equal(np.sort(gk), want, f"{name} {r0} {r1} {cap}")


def test_get_many(ndev):
    """_core._get_many reads several arrays (layouts over the devices, an
    op mode, 0-d, empty, several dtypes) after one host wait, each what its
    get() reads; anything else is a TypeError."""
    core = _quantiles._core
    x = np.arange(1001, dtype=np.float32)
    a = dg.distributed_array(x, {k: slice(1001 * k // ndev, 1001 * (k + 1) // ndev)
                                 for k in range(ndev)})
    b = dg.distributed_array(np.ones((3, 4), np.int64), {k: (slice(None), slice(None))
                                                         for k in range(ndev)}, mode="sum")
    arrays = [a * 2, b, dg.full((), np.float16(-0.0), dtype=np.float16), a[5:5],
              dg.asarray(np.array([True, False]))]
    want = [a.get() * 2, np.ones((3, 4), np.int64), np.float16(-0.0),
            np.zeros(0, np.float32), np.array([True, False])]
    w0 = core._host_waits()
    got = core._get_many(arrays)
    assert core._host_waits() - w0 == 1
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, wt in zip(got, want):
        assert isinstance(g, np.ndarray) and g.dtype == np.asarray(wt).dtype, (g, wt)
        np.testing.assert_array_equal(g, wt)
        assert np.signbit(g).tolist() == np.signbit(wt).tolist() if g.dtype.kind == "f" else True
    assert core._get_many(()) == ()
    with pytest.raises(TypeError):
        core._get_many((a, 1))
    with pytest.raises(TypeError):
        core._get_many(5)


def test_dense_on(ndev):
    """_core._dense_on(x, devs): x's values (any layout, a view, an op
    mode) in one chunk on each device named, read as x; a device that is
    not there is a ValueError."""
    core = _quantiles._core
    x = np.arange(3001, dtype=np.float64).reshape(3001) * 0.5 - 7
    for name, d in list(_gather_layouts(x, ndev)) + [
            ("strided", dg.asarray(x)[::3]),
            ("sum", dg.distributed_array(x, {k: slice(None) for k in range(ndev)}, mode="sum"))]:
        want = x[::3] if name == "strided" else x
        for devs in ([0], list(range(ndev)), [ndev - 1, 0]):
            r = core._dense_on(d, devs)
            assert [dev for dev, _ in r._layout()] == devs, (name, devs, r._layout())
            assert all(b == ((0, want.size, 1),) for _, b in r._layout()), (name, r._layout())
            np.testing.assert_array_equal(r.get(), want, f"{name} {devs}")
            core._work_stats(True)
            r.get()
            assert core._work_stats(True)["host_copies"] == 1, (name, devs)
    with pytest.raises(ValueError):
        core._dense_on(dg.asarray(x), [core._ndevices()])


@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_median_work(dist, ndev, monkeypatch):
    """The work of a median of float32 (_core._work_stats): N(0, 1), the
    middle pair's bins hold a few keys: one count and one gathering a
    device (two readings of its elements), one host wait and three copies
    to the host, nothing combined across devices (no all-reduce), each
    device reading the others' bins in place;
    uniform on [0, 1): the gathering behind the first count keeps none and
    the passes go on from its counts (more host waits); NumPy's median.
    (The plan with the gathering behind the first count, whatever the
    devices: by default only an array on one device takes it.)"""
    monkeypatch.setattr(_quantiles, "_GATHER_FIRST", True)
    core = _quantiles._core
    n = 1 << 17  # uniform: the middle pair's bin holds 1/16 of x, past _FIRST_CAP
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n) if dist == "normal" else rng.random(n)).astype(np.float32)
    d = dg.distributed_array(x, {k: slice(n * k // ndev, n * (k + 1) // ndev)
                                 for k in range(ndev)})
    d._sync()
    core._work_stats(True)
    w0 = core._host_waits()
    got = np.median(d)
    waits = core._host_waits() - w0
    st = core._work_stats(True)
    same(got, np.median(x))
    own = [n * (k + 1) // ndev - n * k // ndev for k in range(ndev)]
    assert st["allreduces"] == 0, st
    if dist == "normal":
        assert st["works"]["count"][:ndev] == [1] * ndev, st
        assert waits == 1, waits
        assert st["read"][:ndev] == [2 * m for m in own], (st["read"], own)
        assert st["works"]["select"][:ndev] == [1] * ndev, st
        # the bins, the pieces' counts and the kept: one copy to the host
        # each, gathered on the first device (the others' bins read in place
        # by each device's gathering: no copy of them but those)
        assert st["host_copies"] == 3, st
        assert st["works"].get("copy", [0] * ndev)[1:ndev] == [0] * (ndev - 1), st
        assert (ndev - 1) * 4096 * 8 <= st["between"] <= (ndev - 1) * (4096 * 12 + 64), st
    else:
        assert waits > 1 and st["works"]["select"][0] >= 2, (waits, st)


def _work_of(core, func, d):
    """(result, host waits, _core._work_stats) of func(d)."""
    d._sync()
    core._work_stats(True)
    w0 = core._host_waits()
    got = func(d)
    waits = core._host_waits() - w0
    return got, waits, core._work_stats(True)


@pytest.mark.parametrize("nan", ["third", "one device", "none"])
@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_nanmedian_work(dtype, nan, ndev, monkeypatch):
    """The work of a nanmedian of a whole float array (_core._work_stats),
    N(0, 1) with NaNs at random places (a third), on the first device only,
    or none: a median's of its numbers alone, whatever the NaNs: one count
    and one gathering a device (two readings of its elements), one host
    wait, three copies to the host, no all-reduce, no elementwise call: the
    middle of the numbers gathered behind the first count, the NaNs counted
    from the same counts (float64 with NaNs: count_nan's work more, its top
    bin holding +inf too); NumPy's result.  On the default plan as many
    host waits as that median, on one device and on several."""
    core = _quantiles._core
    n = 1 << 17
    rng = np.random.default_rng(8)
    x = rng.standard_normal(n).astype(dtype)
    if nan == "third":
        x[rng.random(n) < 1 / 3] = np.nan
    elif nan == "one device":
        x[:n // ndev // 3] = np.nan
    nums = x[~np.isnan(x)]

    def even(a):
        return dg.distributed_array(a, {k: slice(a.size * k // ndev, a.size * (k + 1) // ndev)
                                        for k in range(ndev)})
    d, dn = even(x), even(nums)
    nw, nst = 0, {"host_copies": 0, "works": {}}
    if dtype == "f8" and nan != "none":  # the NaNs counted apart
        _, nw, nst = _work_of(core, _quantiles.count_nan, d)
    for plan in (True, "one"):
        monkeypatch.setattr(_quantiles, "_GATHER_FIRST", plan)
        got, waits, st = _work_of(core, np.nanmedian, d)
        same(got, np.nanmedian(x), f"{plan}")
        _, mwaits, mst = _work_of(core, np.median, dn)
        assert waits == mwaits + nw, (plan, waits, mwaits, nw)
        if plan is not True:
            continue
        own = [n * (k + 1) // ndev - n * k // ndev for k in range(ndev)]
        assert waits == 1 + nw, waits
        assert st["allreduces"] == 0 and mst["allreduces"] == 0, st
        assert {k: v for k, v in st["works"].items() if k not in ("copy", "fill")} == {
            "count": [1] * ndev + [0] * (len(st["read"]) - ndev),
            "select": [1] * ndev + [0] * (len(st["read"]) - ndev),
            **{k: v for k, v in nst["works"].items() if k not in ("copy", "fill")}}, st
        assert st["read"][:ndev] == [2 * m for m in own], (st["read"], own)
        assert st["host_copies"] == mst["host_copies"] + nst["host_copies"], (st, mst, nst)


def test_median_default_plan(ndev):
    """By default (_GATHER_FIRST "one") the gathering goes behind the first
    count for an array on one device only: one host wait there, more where
    the array spans devices (the plan that measured faster on two GPUs)."""
    assert _quantiles._GATHER_FIRST == "one"
    core = _quantiles._core
    n = 1 << 17
    x = np.random.default_rng(6).standard_normal(n).astype(np.float32)
    for m in ({0: slice(None)}, {k: slice(n * k // ndev, n * (k + 1) // ndev)
                                 for k in range(ndev)}):
        d = dg.distributed_array(x, m)
        d._sync()
        w0 = core._host_waits()
        got = np.median(d)
        waits = core._host_waits() - w0
        same(got, np.median(x))
        assert waits == 1 if len(m) == 1 else waits > 1, (len(m), waits)


def _nan_cases(dtype, n, seed):
    """{name: float array of n} for the nan* statistics of a whole array:
    NaNs at random places (a few, a third, all but 10, all but one, all),
    with +inf and -inf beside them, on the first quarter only (one device's
    chunk), none; the numbers N(0, 1) with ties."""
    rng = np.random.default_rng(seed)
    base = np.round(rng.standard_normal(n) * 100) / 100
    out = {}
    for name, where in (("few", rng.permutation(n)[:5]), ("third", rng.random(n) < 1 / 3),
                        ("most", rng.permutation(n)[10:]), ("one", rng.permutation(n)[1:]),
                        ("all", slice(None)), ("first quarter", slice(0, n // 4)),
                        ("none", slice(0, 0))):
        x = base.astype(dtype)
        x[where] = np.nan
        out[name] = x
    inf = out["third"].copy()
    inf[rng.permutation(n)[:40]] = np.inf
    inf[rng.permutation(n)[:25]] = -np.inf
    out["infinities"] = inf
    return out


@pytest.mark.parametrize("plan", [True, "one", False], ids=["first", "default", "after"])
@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_nan_statistics_of_all(dtype, plan, ndev, monkeypatch, no_leak):
    """nanmedian, nanquantile and nanpercentile of a whole float array past
    the sort threshold (the selection, the middle of the numbers gathered
    behind the first count where the plan has it) against NumPy, bit for
    bit: NaNs at random places, all NaN (NumPy's warning), a single number,
    NaNs on one device only, infinities; odd and even counts of numbers;
    even, uneven, replicated, overlapping layouts and a view; methods whose
    ranks are and are not the two about q."""
    monkeypatch.setattr(_quantiles, "_GATHER_FIRST", plan)
    for n in (5001, 5002):
        for case, x in _nan_cases(dtype, n, n).items():
            for name, d in _gather_layouts(x, ndev):
                msg = f"{n} {case} {name}"
                like_numpy(lambda: np.nanmedian(d), lambda: np.nanmedian(x), msg)
                like_numpy(lambda: np.nanquantile(d, 0.3), lambda: np.nanquantile(x, 0.3), msg)
                if name != "even":
                    continue
                for method in ("lower", "higher", "nearest", "midpoint", "hazen",
                               "inverted_cdf", "closest_observation"):
                    like_numpy(lambda: np.nanpercentile(d, [71.5], method=method),
                               lambda: np.nanpercentile(x, [71.5], method=method),
                               f"{msg} {method}")
                like_numpy(lambda: np.nanpercentile(d, 100), lambda: np.nanpercentile(x, 100),
                           msg)
                like_numpy(lambda: np.nanquantile(d, [0.5, 0.9]),
                           lambda: np.nanquantile(x, [0.5, 0.9]), msg)
                like_numpy(lambda: np.median(d), lambda: np.median(x), msg)
            if case == "all":
                for f in (np.nanmedian, lambda a: np.nanquantile(a, 0.5)):
                    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
                        r = f(dg.asarray(x))
                    assert np.isnan(r.get()) and r.dtype == x.dtype


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i1", "u2", "i4", "u8"])
@pytest.mark.parametrize("finish", ["gathered", "overflow"])
def test_median_gathered_first(dtype, finish, ndev, monkeypatch):
    """A median (two neighbouring ranks) gathers the elements under its
    ranks' bins behind the first count (one count, one gathering, one
    reading each), NumPy's result in every layout: many equal keys, the
    middle pair at a bin's edge, NaNs (fewer and more than half), uneven
    chunks, a view missing devices; where more than _HOST_FINISH are under the bins
    (overflow) the passes go on from the first counts, still exact."""
    monkeypatch.setattr(_quantiles, "_GATHER_FIRST", True)
    monkeypatch.setattr(_quantiles, "_FIRST_CAP", 5 if finish == "overflow" else 1 << 14)
    n = 5000
    skipped = 0
    dt = np.dtype(dtype)
    rng = np.random.default_rng(7)
    cases = {"random": values(dtype, (n,), 8, nan=False),
             "equal": np.full(n, values(dtype, (1,), 2)[0], dt),
             "half equal": np.where(np.arange(n) % 2 == 0, values(dtype, (1,), 3)[0],
                                    values(dtype, (n,), 4))}
    # the middle in the top bin, where the padding (the largest key) is
    top = np.iinfo(dt).max if dt.kind in "iu" else (np.inf if dt.itemsize == 8 else None)
    if top is not None:
        t = np.full(n, top, dt)
        t[::3] = values(dtype, (n,), 9)[::3]
        if dt.kind in "iu":
            t[1::5] -= np.arange(t[1::5].size).astype(dt) % 7
        cases["top"] = t
    if dt.kind == "f":  # the middle pair either side of a bin's edge (1.0 and below)
        below = np.nextafter(dt.type(1), dt.type(0))
        cases["edge"] = rng.permutation(np.concatenate([np.full(n // 2, below, dt),
                                                        np.full(n - n // 2, 1, dt)]))
        nan = values(dtype, (n,), 5)
        nan[::3] = np.nan
        cases["nans"] = nan
        most = np.full(n, np.nan, dt)
        most[:7] = values(dtype, (7,), 6)
        cases["mostly nan"] = most
    for case, x in cases.items():
        x = np.asarray(x, dt)
        xx = np.concatenate([x, x[:1]]) if case == "random" else x  # odd and even n
        for name, d in _gather_layouts(xx, ndev):
            for func in (np.median, np.nanmedian):
                core = _Counting(_quantiles._core, xx.size)
                monkeypatch.setattr(_quantiles, "_core", core)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = func(d)
                    want = func(xx)
                monkeypatch.setattr(_quantiles, "_core", core.core)
                msg = (case, name, func.__name__)
                same(got, want, str(msg))
                skipped += core.skips
                if dt.itemsize == 1:  # 8-bit keys: one count says it all
                    continue
                if case == "top" and func is np.nanmedian and dt == np.float64:
                    # its top bin mostly +inf, not NaN: the numbers' middle
                    # is not where the devices gathered, the passes go on
                    continue
                # gathered: one count and one gathering, each one reading
                # (a nanmedian's about the middle of the numbers, before
                # the NaNs' count is read)
                assert core.calls == 1 or finish == "overflow", (msg, core.calls)
                assert core.skips == 0 or finish == "overflow", msg
                # overflow: the passes as without it (the gathering kept
                # none and read nothing), or the count and the gathering
                levels = -(-dt.itemsize * 8 // 12)
                assert core.keeps + core.skips >= 1 and core.reads <= (
                    2 if finish == "gathered" else levels), \
                    (msg, core.keeps, core.skips, core.reads)
    assert dt.itemsize == 1 or (skipped > 0) == (finish == "overflow"), skipped


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i2", "u4", "i8"])
def test_radix_count_modes(dtype, ndev):
    """_core._count's radix counts (GPU: the flat kernel's modes, dense
    chunks; the general kernel, strided ones) against the keys' digits
    counted here: every key, a prefix as long as the keys (0: every key,
    else none; pshift 64: no prefix), one prefix, two (apart or equal);
    each device's bins apart (summed here) the same."""
    x = values(dtype, (3001,), 6, nan=True, low=-300, high=300)
    if x.dtype.kind == "f":
        x[3], x[4], x[9] = -0.0, np.inf, -np.inf
    k = np.array([int(v) for v in _keys(x)], dtype=object)
    w = x.dtype.itemsize * 8
    top = sorted(set(int(v) >> (w - 12) for v in k), key=lambda p: -sum(
        int(v) >> (w - 12) == p for v in k))
    p1, p2 = top[0], top[1 % len(top)]

    def want(nbins, shift, pshift, prefixes):
        c = np.zeros(nbins, np.int64)
        half = nbins // len(prefixes)
        for v in k:
            for i, p in enumerate(prefixes):  # pshift 64: no prefix
                if pshift >= 64 or v >> pshift == p:
                    c[i * half + ((v >> shift) & (half - 1))] += 1
                    break
        return c

    cases = [(4096, w - 12, w, 0), (4096, w - 12, 64, 0), (256, w - 8, w, 1),
             (4096, max(w - 24, 0), w - 12, p1), (8192, max(w - 24, 0), w - 12, (p1, p2)),
             (8192, max(w - 24, 0), w - 12, (p1, p1)), (64, 2, w - 12, p2)]
    for name, d in layouts(x, ndev, ("default", "uneven", "strided", "overlap")):
        for nbins, shift, pshift, pre in cases:
            got = _quantiles._core._count(d, None, nbins, _quantiles._RADIX, shift, pshift,
                                          pre).get()
            np.testing.assert_array_equal(
                got, want(nbins, shift, pshift, pre if isinstance(pre, tuple) else (pre,)),
                f"{name} {nbins} {shift} {pshift} {pre}")
            # apart: a device's bins after another's, each read as it is
            apart = _quantiles._core._count(d, None, nbins, _quantiles._RADIX, shift,
                                            pshift, pre, None, True)
            assert apart.mode == "replica" and apart.size == nbins * len(apart.devices), name
            np.testing.assert_array_equal(apart.get().reshape(-1, nbins).sum(axis=0), got,
                                          f"{name} apart")


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_nans_counted_by_the_first_pass(dtype, ndev, monkeypatch):
    """NaNs of every bit pattern (negative, signalling, the largest), with
    the infinities beside them: NumPy's nanmedian, median and nanpercentile;
    float16 and float32 count them in the first pass's top bin, without a
    reading of x of their own (float64's top bin holds +inf too)."""
    u = f"u{np.dtype(dtype).itemsize}"
    top = np.iinfo(u).max
    x = values(dtype, (9001,), 7, nan=True)
    x[1], x[2] = np.inf, -np.inf
    x[3:6] = np.array([top, top >> 1, (top >> 1) - 1], u).view(dtype)  # NaNs
    assert np.isnan(x[3:6]).all()
    if np.dtype(dtype).itemsize <= 4:
        monkeypatch.setattr(_quantiles, "count_nan", lambda a: pytest.fail("read x again"))
    for name, d in layouts(x, ndev, ("default", "overlap")):
        like_numpy(lambda: np.nanmedian(d), lambda: np.nanmedian(x), name)
        like_numpy(lambda: np.median(d), lambda: np.median(x), name)
        like_numpy(lambda: np.nanpercentile(d, [0, 37, 100]),
                   lambda: np.nanpercentile(x, [0, 37, 100]), name)


@pytest.mark.parametrize("narrow", ["host", "device", "never"])
@pytest.mark.parametrize("dtype", ["f4", "f8", "i4", "u8", "f2"])
def test_gathered_selection(dtype, narrow, ndev, monkeypatch):
    """The elements under the prefixes of a median or close quantiles
    gathered (then their ranks found on the host, or counted on the
    devices), or not: NumPy's results every way, on layouts that split,
    replicate and overlap x; gathered where asked."""
    narrow_as(narrow, monkeypatch)
    rng = np.random.default_rng(11)
    n = 1 << 15
    x = (rng.standard_normal(n) * (1e6 if np.dtype(dtype).kind in "iu" else 1))
    x = np.abs(x) if dtype[0] == "u" else x
    x = x.astype(dtype)
    for name, d in layouts(x, ndev, ("default", "strided", "replicated", "overlap")):
        core = _Counting(_quantiles._core, n)
        monkeypatch.setattr(_quantiles, "_core", core)
        like_numpy(lambda: np.median(d), lambda: np.median(x), name)
        like_numpy(lambda: np.median(d[1:]), lambda: np.median(x[1:]), name)
        for method in ("linear", "lower", "midpoint", "hazen"):
            like_numpy(lambda: np.percentile(d, [49.99, 50.0, 50.01], method=method),
                       lambda: np.percentile(x, [49.99, 50.0, 50.01], method=method), name)
        monkeypatch.setattr(_quantiles, "_core", core.core)
        assert (core.keeps > 0) == (narrow != "never"), (name, core.keeps)
    if x.dtype.kind == "f":
        x[::5] = np.nan
        d = dg.asarray(x)
        like_numpy(lambda: np.nanmedian(d), lambda: np.nanmedian(x))
        like_numpy(lambda: np.median(d), lambda: np.median(x))
        like_numpy(lambda: np.nanquantile(d, 0.5, method="nearest"),
                   lambda: np.nanquantile(x, 0.5, method="nearest"))
        x[: 3 * n // 5] = np.nan  # the middle ranks among the NaNs (the top prefix)
        d = dg.asarray(x)
        m = n - int(np.isnan(x).sum())
        got = _quantiles.select_ranks(d, [m - 1, m, n // 2])  # the largest number, NaNs
        assert got[0] == np.sort(x)[m - 1] and np.isnan(got[1:]).all(), got
        like_numpy(lambda: np.median(d), lambda: np.median(x))


class _Counting:
    """dgarray._core with its _count and _keep_keys calls counted: calls,
    and the readings of arrays of `n` elements (of x itself); a gathering
    of all or none (whole) that kept none read nothing: a skip (its counts
    read here to tell)."""

    def __init__(self, core, n=-1):
        self.core, self.calls, self.reads, self.keeps, self.n = core, 0, 0, 0, n
        self.skips = 0

    def __getattr__(self, name):
        return getattr(self.core, name)

    def _count(self, *args):
        self.calls += 1
        self.reads += args[0].size == self.n
        return self.core._count(*args)

    def _keep_keys(self, *args):
        res = self.core._keep_keys(*args)
        if len(args) > 9 and args[9] and int(res[1].get().max()) > args[4]:
            self.skips += 1
            return res
        self.keeps += 1
        self.reads += args[0].size == self.n
        return res


@pytest.mark.parametrize("first", [True, False], ids=["first", "after"])
def test_host_waits_between_passes(first, ndev, monkeypatch):
    """With the gathering behind the first count (_GATHER_FIRST), a median
    enqueues its count and its gathering with no host wait between, and
    waits once for both (then reads what was gathered); without, the host
    waits for the counts before it enqueues the gathering."""
    monkeypatch.setattr(_quantiles, "_GATHER_FIRST", first)
    n = 20001
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    d = dg.distributed_array(x, {k: slice(n * k // ndev, n * (k + 1) // ndev)
                                 for k in range(ndev)})
    d._sync()
    core, at = _quantiles._core, []

    class Waits(_Counting):
        def _count(self, *args):
            at.append(("count", core._host_waits()))
            return core._count(*args)

        def _keep_keys(self, *args):
            at.append(("keep", core._host_waits()))
            return core._keep_keys(*args)
    monkeypatch.setattr(_quantiles, "_core", Waits(core, n))
    w0 = core._host_waits()
    got = np.median(d)
    w1 = core._host_waits()
    monkeypatch.setattr(_quantiles, "_core", core)
    same(got, np.median(x))
    assert [k for k, _ in at] == ["count", "keep"], at
    waits_between = at[1][1] - at[0][1]
    assert waits_between == (0 if first else 1), (at, w0, w1)
    assert w1 - at[1][1] >= 1, (at, w1)  # the read of what was gathered
    # gathered first: the counts and the gathered read after one wait, the
    # result made on the devices (no wait)
    assert not first or w1 - w0 == 1, (at, w0, w1)


@pytest.mark.parametrize("dtype", ["f4", "i4", "f8"])
def test_two_middle_ranks_share_every_reading(dtype, ndev, monkeypatch):
    """The two middle elements of an even count are found together: at most
    one reading of x a digit (3 for 4-byte keys, 6 for 8-byte ones), fewer
    where the elements under their prefixes are gathered, whether their
    prefixes part at the first digit (opposite signs), at a later one, or
    never (equal values); the median is NumPy's."""
    n = 8192
    w = np.dtype(dtype).itemsize * 8
    base = np.arange(n // 2, dtype=np.float64) + 1.0
    cases = {
        "signs": np.concatenate([-base, base]),                  # middle pair -1, 1
        "last digit": np.concatenate([base, base + n]),          # n/2, n/2 + n
        "equal": np.concatenate([base, base[::-1]]),             # n/2, n/2 again
        "close": np.concatenate([base * 4, base * 4 + 1]),       # values 1 apart
    }
    for name, h in cases.items():
        x = np.random.default_rng(3).permutation(h).astype(dtype)
        d = dg.distributed_array(x, {k: slice(n * k // ndev, n * (k + 1) // ndev)
                                     for k in range(ndev)})
        core = _Counting(_quantiles._core, n)
        monkeypatch.setattr(_quantiles, "_core", core)
        got = np.median(d)
        monkeypatch.setattr(_quantiles, "_core", core.core)
        same(got, np.median(x), name)
        levels = w // 12 + (w % 12 > 0)
        # never more readings of x than digits, nor more passes (counts and
        # gatherings); 8-byte keys: the gathering cut their 6 readings
        assert core.reads <= levels and core.calls + core.keeps <= levels, \
            (name, core.calls, core.reads, core.keeps)
        assert w < 64 or core.reads <= 3, (name, core.reads)


def test_quantile_weights(ndev):
    x = data("f8", (6, 8), 1)
    w = np.abs(values("f8", (6, 8), 2)) + (np.arange(48).reshape(6, 8) % 3 == 0)
    for name, d in layouts(x, ndev, ("default", "strided", "cols")):
        for axis, wt in [(None, w), (1, w), (0, w[:, 0]), (1, w[0])]:
            for q in (0.3, [0.0, 0.5, 1.0]):
                like_numpy(lambda: np.quantile(d, q, axis=axis, weights=wt,
                                               method="inverted_cdf"),
                           lambda: np.quantile(x, q, axis=axis, weights=wt,
                                               method="inverted_cdf"), f"{name} {axis}")
    for kw in ({"weights": w, "method": "linear"}, {"weights": w[0], "axis": None},
               {"weights": -w, "method": "inverted_cdf"}, {"weights": w[:, :2], "axis": 1,
                                                           "method": "inverted_cdf"}):
        same_error(lambda: np.quantile(dg.asarray(x), 0.5, **kw),
                   lambda: np.quantile(x, 0.5, **kw))


def test_quantile_out_and_errors():
    x = data("f4", (5, 6))
    d = dg.asarray(x)
    o = dg.zeros(6, np.float32)
    assert np.median(d, axis=0, out=o) is o
    same(o, np.median(x, axis=0), rtol=1e-6)
    o = dg.zeros((2, 5))
    assert np.quantile(d, [0.2, 0.8], axis=1, out=o) is o
    same(o, np.quantile(x, [0.2, 0.8], axis=1))
    for args, kw in [((1.5,), {}), ((-0.1,), {}), (([0.5, 2],), {}), ((0.5,), {"method": "x"}),
                     ((0.5,), {"axis": 2}), ((np.zeros((1, 1, 1)),), {})]:
        same_error(lambda: np.quantile(d, *args, **kw), lambda: np.quantile(x, *args, **kw))
    same_error(lambda: np.percentile(d, 101), lambda: np.percentile(x, 101))
    same_error(lambda: np.quantile(dg.ones(3, complex), 0.5),
               lambda: np.quantile(np.ones(3, complex), 0.5))
    same_error(lambda: np.quantile(d, 0.3, interpolation="lower"),
               lambda: np.quantile(x, 0.3, interpolation="lower"))


def test_empty_and_0d():
    for f, args in [(np.median, ()), (np.nanmedian, ()), (np.quantile, (0.5,)),
                    (np.percentile, ([10, 20],)), (np.nanquantile, (0.5,))]:
        for shape, kw in [((0,), {}), ((0, 3), {"axis": 0}), ((3, 0), {"axis": 1}), ((), {}),
                          ((0, 3), {})]:
            x = np.zeros(shape)
            like_numpy(lambda: f(dg.asarray(x), *args, **kw), lambda: f(x, *args, **kw),
                       f"{f.__name__} {shape} {kw}")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        np.median(dg.zeros(0))
    assert any("Mean of empty slice" in str(x.message) for x in w)


# ---- signed zeros (the selection's keys make -0.0 and 0.0 one key) -------------------------

def same_signs(got, want, msg):
    """got is NumPy's want: the values (to tol of the dtype: interpolated
    along an axis in another order), and the sign of every zero."""
    g, w = np.asarray(got.get()), np.asarray(want)
    assert g.dtype == w.dtype, msg
    np.testing.assert_allclose(g, w, rtol=tol(w.dtype), equal_nan=True, err_msg=msg)
    zero = w == 0
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]), msg)


# arrays whose zeros have one sign: NumPy's result does not depend on its
# partition's order of equal values
ONE_SIGN = [[-0.0], [-0.0, -0.0], [-0.0, -0.0, 1.0], [1.0, -0.0, -0.0, 2.0],
            [-1.0, -0.0, -0.0, 1.0], [-0.0, -2.0, -0.0, 3.0, -0.0, -0.0, 5.0],
            [-0.0, np.nan, -0.0, 1.0, np.nan], [0.0, 0.0, -1.0], [-3.0, -0.0, 2.0, -1.0]]
QS = [0.0, 0.2, 0.3, 0.5, 0.75, 1.0]


def order_stats(d, x, method):
    """(name, dgarray's result, NumPy's) of every order statistic of d
    (x on the host) over axis None."""
    out = [("median", np.median(d), np.median(x)),
           ("nanmedian", np.nanmedian(d), np.nanmedian(x))]
    for q in (0.5, 0.25, QS):  # Python floats: NumPy's weak q
        out.append((f"quantile {q}", np.quantile(d, q, method=method),
                    np.quantile(x, q, method=method)))
        out.append((f"nanquantile {q}", np.nanquantile(d, q, method=method),
                    np.nanquantile(x, q, method=method)))
    out.append(("percentile", np.percentile(d, np.array([30.0, 50.0], np.float32), method=method),
                np.percentile(x, np.array([30.0, 50.0], np.float32), method=method)))
    out.append(("nanpercentile", np.nanpercentile(d, 75, method=method),
                np.nanpercentile(x, 75, method=method)))
    return out


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_signed_zeros_of_all(dtype, method, ndev, selection):
    """Where every zero of the array has one sign, a whole array's median,
    quantiles and percentiles (their nan* forms too) give NumPy's values
    and NumPy's sign of each zero: the element itself (discrete methods),
    NumPy's mean of the middle pair (median), its interpolation (lerp,
    whose sign of a zero depends on the weight's side), on every layout,
    by selection and by sort."""
    for vals in ONE_SIGN:
        x = np.array(vals, dtype)
        for name, d in layouts(x, ndev, ("default", "strided", "replicated", "overlap")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for what, got, want in order_stats(d, x, method):
                    same_signs(got, want, f"{vals} {name} {what}")


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_signed_zeros_along_axes(dtype, ndev):
    """Along an axis (rows sorted where they are): NumPy's values and sign
    of each zero, where every zero of a row has one sign."""
    x = np.array([[-0.0, -0.0, 1.0, -0.0], [2.0, -0.0, -1.0, -0.0], [-0.0] * 4,
                  [0.0, 1.0, 0.0, 0.0]], dtype)
    for name, d in layouts(x, ndev, ("default", "cols", "strided")):
        for axis in (0, 1):
            same_signs(np.median(d, axis=axis), np.median(x, axis=axis), f"{name} {axis}")
            same_signs(np.nanmedian(d, axis=axis), np.nanmedian(x, axis=axis), name)
            for method in METHODS:
                for q in (0.3, 0.5, [0.1, 0.9]):
                    same_signs(np.quantile(d, q, axis=axis, method=method),
                               np.quantile(x, q, axis=axis, method=method),
                               f"{name} {axis} {method} {q}")
                    same_signs(np.nanquantile(d, q, axis=axis, method=method),
                               np.nanquantile(x, q, axis=axis, method=method),
                               f"{name} {axis} {method} {q}")


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_mixed_signed_zeros_of_all(dtype, ndev, selection):
    """Zeros of both signs at a rank: NumPy gives whichever its partition
    puts there; dgarray's rule (_quantiles._signed_zeros) gives +0.0, by
    selection and by sort, on every layout; the value is NumPy's."""
    for vals in ([-0.0, 0.0], [0.0, -0.0, -0.0], [-0.0, -0.0, 0.0, -0.0, 1.0],
                 [-1.0, 0.0, -0.0, 2.0]):
        x = np.array(vals, dtype)
        for name, d in layouts(x, ndev, ("default", "strided", "replicated")):
            for method in ("lower", "higher", "nearest", "linear"):
                for q in (0.0, 0.3, 0.5, 0.6, 1.0):
                    got = np.quantile(d, q, method=method).get()
                    want = np.quantile(x, q, method=method)
                    assert got == want, (vals, name, method, q)
                    if got == 0:
                        assert not np.signbit(got), (vals, name, method, q)


@pytest.mark.parametrize("narrow", ["host", "device", "never", "first"])
def test_signed_zeros_of_large_arrays(narrow, ndev, monkeypatch):
    """Past the sort threshold, every way the selection narrows its keys:
    a -0.0 at the ranks asked comes back -0.0 where the array holds no
    +0.0, +0.0 where it holds one (NumPy's, where its zeros have one sign)."""
    narrow_as(narrow, monkeypatch)
    for dtype in ("f2", "f4", "f8"):
        x = values(dtype, (20001,), 3)
        x[x == 0] = 1.0
        x[5000:15000] = -0.0
        d = dg.distributed_array(x, {k: slice(20001 * k // ndev, 20001 * (k + 1) // ndev)
                                     for k in range(ndev)})
        for method in ("lower", "linear", "nearest"):
            for q in (0.5, [0.3, 0.5, 0.65]):
                same_signs(np.quantile(d, q, method=method), np.quantile(x, q, method=method),
                           f"{dtype} {method} {q}")
        same_signs(np.median(d), np.median(x), dtype)
        x[17] = 0.0
        d = dg.asarray(x)
        got = np.quantile(d, 0.5, method="lower").get()
        assert got == 0 and not np.signbit(got), dtype


def test_signed_zeros_cost_only_at_zeros(ndev, monkeypatch):
    """The sign of a zero costs one reduction of the array, and only where
    a value found is a zero (the common path reads nothing more)."""
    calls = []
    real = _quantiles.min_
    monkeypatch.setattr(_quantiles, "min_", lambda a: calls.append(a.size) or real(a))
    x = values("f4", (20001,), 7)
    d = dg.asarray(x)
    same(np.median(d), np.median(x))
    same(np.quantile(d, [0.1, 0.9]), np.quantile(x, [0.1, 0.9]))
    assert calls == []
    x[x != 0] = -0.0
    same_signs(np.quantile(dg.asarray(x), [0.1, 0.9]), np.quantile(x, [0.1, 0.9]), "zeros")
    assert calls == [x.size]
