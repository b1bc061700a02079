"""Stores past the cache on the CPU backend (src/backend/cpu/cpu_loops.h):
elementwise outputs above a threshold are computed a tile at a time into a
buffer and written out with non-temporal stores.  Only where the values land
changes, so every result must be bit for bit the one the plain loops give,
and NumPy's.  The threshold is set to 1 byte here (_core._cpu_stream_bytes),
so that arrays of any size take the path, and the count of streamed runs
shows that they did."""
import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for
from test_fusion import near_numpy, run_chain

core = dg._core

pytestmark = pytest.mark.skipif(dg.backend() != "cpu", reason="the CPU backend's loops")


@pytest.fixture
def streamed():
    """Every elementwise output of 2 or more elements along its inner axis
    streamed while the test runs; the runs that streamed, as a function."""
    old, runs0, oldp = core._cpu_stream_bytes(1)
    yield lambda: core._cpu_stream_bytes()[1] - runs0
    core._cpu_stream_bytes(old, oldp)


def plain(f):
    """f() with streaming off (the reference: the plain loops)."""
    old, _, oldp = core._cpu_stream_bytes(0)
    try:
        return f()
    finally:
        core._cpu_stream_bytes(old, oldp)


def dist(x, ndev, layout=0):
    maps = maps_for(x.shape, ndev)
    return dg.distributed_array(x, maps[layout % len(maps)][1])


def same_bits(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                          np.ascontiguousarray(ref).view(np.uint8))


DTYPES = ["f8", "f4", "i1", "u2", "i8", "c16", "c8", "?"]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [2, 3, 17, 1001, 4099])
def test_binary_and_cast(streamed, ndev, dt, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 50).astype(dt)
    y = (rng.standard_normal(n) * 50).astype(dt)
    a, b = dist(x, ndev), dist(y, ndev)
    with np.errstate(all="ignore"):
        same_bits((a + b).get(), x + y)
        same_bits((a * b).get(), x * y)
        same_bits(dg.maximum(a, b).get(), np.maximum(x, y))
        same_bits((a < b).get(), x < y)
        same_bits(a.astype("f8").get(), x.astype("f8"))
        if dt != "?":  # outputs at odd offsets (NumPy has no bool subtract)
            same_bits((a[1:] - b[:-1]).get(), x[1:] - y[:-1])
    # a few elements split over the devices leave chunks of one element, whose
    # single stores are not streamed
    assert streamed() > 0 or n < 8


@pytest.mark.parametrize("n", [5, 1000, 3001])
def test_views_in_place_and_overlaps(streamed, ndev, n):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, 7))
    y = rng.standard_normal((n, 7))
    a, b = dist(x, ndev), dist(y, ndev)
    a += b                          # in place: the output is the input's own view
    x += y
    same_bits(a.get(), x)
    a[1:] += a[:-1]                 # overlapping, shifted: NumPy reads a copy
    x[1:] += x[:-1]
    same_bits(a.get(), x)
    a[:, 1:] = a[:, :-1] * 2.0      # shifted along the inner axis
    x[:, 1:] = x[:, :-1] * 2.0
    same_bits(a.get(), x)
    out = dist(np.zeros((n, 14)), ndev)
    oz = np.zeros((n, 14))
    dg.add(a, b, out=out[:, ::2])   # a strided output (not streamed) beside dense ones
    np.add(x, y, out=oz[:, ::2])
    same_bits(out.get(), oz)
    m = x > 0
    dg.multiply(a, 3.0, out=a, where=dist(m, ndev))  # a masked output keeps the rest
    np.multiply(x, 3.0, out=x, where=m)
    same_bits(a.get(), x)
    assert streamed() > 0


@pytest.mark.parametrize("dt", ["f8", "f4"])
def test_jacobi_in_place(streamed, ndev, dt):
    """The fused step that reads the neighbours of what it writes."""
    g0 = np.random.default_rng(3).standard_normal((67, 45)).astype(dt)
    g = dist(g0, ndev)

    def step(z):
        z[1:-1, 1:-1] = 0.2 * (z[1:-1, 1:-1] + z[:-2, 1:-1] + z[2:, 1:-1]
                               + z[1:-1, :-2] + z[1:-1, 2:])
    for _ in range(3):
        step(g)
        step(g0)
    same_bits(g.get(), g0)
    fresh = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    same_bits(fresh.get(), 0.25 * (g0[:-2, 1:-1] + g0[2:, 1:-1] + g0[1:-1, :-2]
                                   + g0[1:-1, 2:]))
    assert streamed() > 0


@pytest.mark.parametrize("seed", range(12))
def test_random_chains_as_plain(streamed, ndev, seed):
    """Random chains (test_fusion's) streamed against the same chains with
    streaming off (the same bits) and against NumPy."""
    rng = np.random.default_rng(100 + seed)
    a0 = rng.standard_normal((33, 20))
    b0 = rng.standard_normal((33, 20))
    r0 = rng.standard_normal(20)

    def run():
        got = run_chain(dg, seed, dist(a0, ndev, seed), dist(b0, ndev, seed + 1),
                        dg.asarray(r0), None)
        return [dg.asnumpy(v) for v in got]
    want = run_chain(np, seed, a0.copy(), b0.copy(), r0.copy(), None)
    for g, p, w in zip(run(), plain(run), want):
        same_bits(g, p)
        near_numpy(g, w)
    assert streamed() > 0


def test_threshold_reads_back():
    old, _, oldp = core._cpu_stream_bytes(12345)
    try:
        assert core._cpu_stream_bytes()[0::2] == (12345, 12345)
        core._cpu_stream_bytes(0)
        assert core._cpu_stream_bytes()[0::2] == (0, 0)
        core._cpu_stream_bytes(777, 0)
        assert core._cpu_stream_bytes()[0::2] == (777, 0)
    finally:
        core._cpu_stream_bytes(old, oldp)


def test_every_loop_streamed_in_a_process():
    """DGARRAY_CPU_STREAM_LOOPS=all (every loop streams, NumPy's own SIMD
    loops included, their outputs into the tile): NumPy's bits."""
    import subprocess
    import sys
    code = """
import numpy as np, dgarray as dg
assert dg._core._cpu_stream_bytes()[0::2] == (1, 1)
rng = np.random.default_rng(5)
x = rng.standard_normal(4099); y = rng.standard_normal(4099)
a, b = dg.asarray(x), dg.asarray(y)
with np.errstate(all="ignore"):
    for f in (np.exp, np.sin, np.sqrt, np.log, np.tanh):
        for v, w in ((a, x), (a.astype("f4"), x.astype("f4"))):
            got, want = np.asarray(f(v).get()), f(w)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), f
    for f in (np.divide, np.power, np.arctan2, np.hypot):
        got, want = np.asarray(f(a, b).get()), f(x, y)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), f
print(dg._core._cpu_stream_bytes()[1])
"""
    env = dict(__import__("os").environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_STREAM_BYTES="1",
               DGARRAY_CPU_STREAM_LOOPS="all")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert int(r.stdout.split()[-1]) > 0


def test_default_policy_fused_only_below_eight_devices():
    """With the default threshold (the last-level cache over the devices),
    a fused chain whose output passes it streams; a single loop's output and
    a copy stream only from 8 devices on (cpu_loops.c,
    DG_STREAM_PLAIN_DEVICES): with fewer, a + b of the same size does not."""
    import os
    if os.environ.get("DGARRAY_CPU_STREAM_BYTES") or os.environ.get("DGARRAY_CPU_STREAM_LOOPS"):
        pytest.skip("the environment sets the thresholds: not the default policy")
    threshold, _, plain = core._cpu_stream_bytes()
    ndev = core._ndevices()
    assert plain == (threshold if ndev >= 8 else 0)
    if threshold == 0 or threshold * ndev > 512 << 20:
        pytest.skip(f"a threshold of {threshold} bytes needs arrays too large for a test")
    n = 2 * threshold // 8 * ndev + 1000  # each device's part past the threshold
    x = np.random.default_rng(2).standard_normal(n)
    a = dg.asarray(x)
    a._sync()

    def runs(f):
        r0 = core._cpu_stream_bytes()[1]
        r = f()
        r._sync()
        return core._cpu_stream_bytes()[1] - r0, r
    k, r = runs(lambda: a + a)
    same_bits(r.get(), x + x)
    assert (k > 0) == (ndev >= 8), (k, ndev)
    k, r = runs(lambda: (a + 1.0) * a - 2.0)  # fused: streams on any count
    same_bits(r.get(), (x + 1.0) * x - 2.0)
    assert k > 0
