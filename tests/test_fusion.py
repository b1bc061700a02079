"""Deferred fusion of elementwise chains (src/core/dg_fuse.c): fused chains
against the same chains unfused (dgarray.config.fusion off) and NumPy, on
random chains of ufuncs, scalars, broadcasting, views, out= and slice
assignments, including writes that overlap what the chain reads."""
import os
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

core = dg._core


@pytest.fixture
def fusion():
    """dgarray.config.fusion, restored after the test."""
    old = dg.config.fusion
    yield
    dg.config.fusion = old


def counts():
    """(steps pending, fused pieces run, steps they held)."""
    return core._fusion_counts()


def dist(x, ndev, layout=0):
    maps = maps_for(x.shape, ndev)
    return dg.distributed_array(x, maps[layout % len(maps)][1])


UNARY = ["sqrt", "sin", "negative", "absolute", "exp", "square", "floor", "isnan"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "hypot", "greater", "copysign"]


def run_chain(xp, seed, a, b, row, ndev_layouts):
    """A random chain on a, b (2-d, same shape) and row (a broadcast row),
    written once for NumPy and dgarray (xp): ufuncs, scalars, operators,
    views, out= and slice assignments.  Returns the arrays it left."""
    rng = np.random.default_rng(seed)
    vals = [a, b, row]
    with np.errstate(all="ignore"):
        for _ in range(int(rng.integers(3, 14))):
            kind = int(rng.integers(0, 7))
            x = vals[int(rng.integers(0, len(vals)))]
            y = vals[int(rng.integers(0, len(vals)))]
            if kind == 0:
                r = getattr(xp, UNARY[int(rng.integers(0, len(UNARY)))])(x)
            elif kind == 1:
                r = getattr(xp, BINARY[int(rng.integers(0, len(BINARY)))])(x, y)
            elif kind == 2:
                r = x * 0.5 + 2 if rng.integers(0, 2) else 3 - x / 4
            elif kind == 3:  # in place into a, through out=
                xp.add(a, x[..., :a.shape[-1]] if x.shape[-1] >= a.shape[-1] else x, out=a)
                continue
            elif kind == 4:  # slice assignment of an expression
                a[1:, :] = b[:-1, :] * 2 - a[1:, :]
                continue
            elif kind == 5:  # an overlapping write: a reads its neighbours
                a[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                        + a[1:-1, 2:])
                continue
            else:
                b += 1
                continue
            if r.dtype == np.bool_:
                r = r.astype(a.dtype)
            if r.shape == a.shape:
                vals.append(r)
    return vals


def near_numpy(got, want):
    """NumPy's bits on the CPU backend (NumPy's own loops); on GPUs, whose
    sin, sqrt and division round on their own, and on the CPU backend under
    DGARRAY_FPE=soft (the GPU's rule, element by element through dgarray's
    own loops, not NumPy's), within a few ulp of NumPy's (scaled by the
    largest value: chains subtract)."""
    if dg.backend() == "cpu" and os.environ.get("DGARRAY_FPE") != "soft":
        np.testing.assert_array_equal(got, want)
    else:
        eps = np.finfo(want.dtype).eps
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=16 * eps, atol=16 * eps * scale)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_chains(ndev, seed, dtype, fusion, no_leak):
    rng = np.random.default_rng(100 + seed)
    shape = (int(rng.integers(3, 12)), int(rng.integers(3, 12)))
    a = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape).astype(dtype)
    row = rng.standard_normal(shape[1:]).astype(dtype)
    want = run_chain(np, seed, a.copy(), b.copy(), row.copy(), None)
    results = {}
    for on in (True, False):
        dg.config.fusion = on
        da, db = dist(a, ndev, seed), dist(b, ndev, seed + 1)
        dr = dg.asarray(row)
        got = run_chain(dg, seed, da, db, dr, None)
        results[on] = [dg.asnumpy(g) for g in got]
    for w, f, u in zip(want, results[True], results[False]):
        np.testing.assert_array_equal(f, u)   # fusion changes no bit
        near_numpy(u, w)


def test_chain_is_fused(ndev, fusion):
    dg.config.fusion = True
    a = np.linspace(0, 1, 40 * 30, dtype=np.float32).reshape(40, 30)
    b = a[::-1].copy()
    A, B = dist(a, ndev, 1), dist(b, ndev, 1)
    core._fusion_flush()
    _, runs0, steps0 = counts()
    r = dg.sqrt(A * A + B * B) + 2 * dg.sin(A) - B / 3
    assert counts()[0] > 0, "the chain runs only when a result is needed"
    got = dg.asnumpy(r)
    pending, runs, steps = counts()
    assert pending == 0
    nchunks = len(r.index_map) if hasattr(r, "index_map") else ndev
    assert steps - steps0 == 9 * (runs - runs0), "one fused piece per chunk with every step"
    assert runs - runs0 <= max(nchunks, ndev)
    near_numpy(got, np.sqrt(a * a + b * b) + 2 * np.sin(a) - b / 3)


@pytest.mark.parametrize("into", ["whole", "view"])
def test_assignment_joins_the_chain(ndev, into, fusion, no_leak):
    """`x[...] = expr` and `g[:, 1:-1] = expr` (expr reading other memory,
    laid out as the target): the copy into place joins the chain that
    computes expr (it runs
    under no errstate, the chain under NumPy's default), so the chain writes
    x itself: one fused piece per chunk with every step, NumPy's values; a
    divide by zero in expr still warns as NumPy's does, and under
    errstate(all='ignore') does not."""
    dg.config.fusion = True
    a = np.linspace(1, 2, 40 * 30, dtype=np.float32).reshape(40, 30)
    A = dist(a, ndev, 1)
    x = np.zeros((40, 32), np.float32) if into == "view" else np.zeros((40, 30), np.float32)
    X = dist(x, ndev, 1)
    tx, TX = (x[:, 1:-1], X[:, 1:-1]) if into == "view" else (x, X)
    core._fusion_flush()
    _, runs0, steps0 = counts()
    TX[...] = (A * 2 + 1) / 3
    tx[...] = (a * 2 + 1) / 3
    got = dg.asnumpy(X)
    _, runs, steps = counts()
    assert steps - steps0 == 4 * (runs - runs0), "the copy is a step of the chain's pieces"
    near_numpy(got, x)
    if dg.process_count() > 1:
        return  # in a job only the processes that hold the zeros' quotients note the status
    if dg.backend() == "cuda" and os.environ.get("DGARRAY_GPU_ERRSTATE") == "0":
        return  # GPUs note no floating-point errors where told not to (cuda_fpe.c)
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        TX[...] = A / 0
        dg.asnumpy(X)
    with np.errstate(all="ignore"):
        tx[...] = a / 0
        TX[...] = A / 0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = dg.asnumpy(X)
    np.testing.assert_array_equal(got, x)


def test_fusion_off_runs_at_once(fusion):
    a = dg.arange(10.0)
    dg.config.fusion = False
    assert dg.config.fusion is False
    b = a + 1
    assert counts()[0] == 0
    np.testing.assert_array_equal(dg.asnumpy(b), np.arange(10.0) + 1)
    dg.config.fusion = True
    c = a * 2
    assert counts()[0] > 0
    dg.config.fusion = False  # runs the pending chain
    assert counts()[0] == 0
    np.testing.assert_array_equal(dg.asnumpy(c), np.arange(10.0) * 2)


@pytest.mark.parametrize("layout", range(4))
def test_jacobi(ndev, layout, fusion, no_leak):
    dg.config.fusion = True
    x = np.random.default_rng(layout).random((34, 27))
    X = dist(x, ndev, layout)
    for _ in range(5):
        c, n, s = X[1:-1, 1:-1], X[:-2, 1:-1], X[2:, 1:-1]
        e, w = X[1:-1, 2:], X[1:-1, :-2]
        X[1:-1, 1:-1] = 0.2 * (c + n + e + w + s)
        c, n, s = x[1:-1, 1:-1], x[:-2, 1:-1], x[2:, 1:-1]
        e, w = x[1:-1, 2:], x[1:-1, :-2]
        x[1:-1, 1:-1] = 0.2 * (c + n + e + w + s)
    np.testing.assert_array_equal(dg.asnumpy(X), x)


def test_errors_at_the_call(ndev, fusion):
    dg.config.fusion = True
    a = dist(np.arange(12.0).reshape(3, 4), ndev)
    t = a * 3  # pending
    with pytest.raises(ValueError, match="broadcast"):
        a + dg.arange(5.0)
    with pytest.raises(TypeError):
        np.add(a, 1.5, out=dg.zeros((3, 4), dtype=np.int64))
    np.testing.assert_array_equal(dg.asnumpy(t), np.arange(12.0).reshape(3, 4) * 3)


def test_reads_of_pending_results(ndev, fusion):
    """Work of every kind sees the chain's results: reductions, views read
    shifted, scalar assignment, reshard, casts, a second chain reading the
    first one's results through other views."""
    dg.config.fusion = True
    x = np.arange(60.0).reshape(6, 10)
    a = dist(x, ndev, 1)
    t = a + 1
    assert float(t.sum()) == (x + 1).sum()
    u = a * 2
    v = u[1:] + u[:-1]  # reads u shifted
    np.testing.assert_array_equal(dg.asnumpy(v), (x * 2)[1:] + (x * 2)[:-1])
    w = a - 1
    w[0, 0] = 100.0
    ww = x - 1
    ww[0, 0] = 100.0
    np.testing.assert_array_equal(dg.asnumpy(w), ww)
    y = (a + 0.5).astype(np.int32)
    np.testing.assert_array_equal(dg.asnumpy(y), (x + 0.5).astype(np.int32))
    z = dg.sqrt(a)
    zr = z.reshard({0: slice(None)})
    np.testing.assert_array_equal(dg.asnumpy(zr), np.sqrt(x))


def test_in_place_overlaps(ndev, fusion):
    dg.config.fusion = True
    x = np.arange(40.0).reshape(4, 10)
    for shift in (1, 2):
        a = dist(x, ndev, shift)
        a[:, shift:] += a[:, :-shift]
        a[:, :-shift] = a[:, shift:] * 2
        y = x.copy()
        y[:, shift:] += y[:, :-shift]
        y[:, :-shift] = y[:, shift:] * 2
        np.testing.assert_array_equal(dg.asnumpy(a), y)


def test_long_chain(ndev, fusion, no_leak):
    dg.config.fusion = True
    x = np.linspace(-1, 1, 50)
    a = dist(x, ndev)
    r, y = a, x
    for i in range(100):
        r = r * 0.5 + i
        y = y * 0.5 + i
    np.testing.assert_array_equal(dg.asnumpy(r), y)


def test_dtypes_and_two_outputs(ndev, fusion):
    dg.config.fusion = True
    x = np.arange(-6, 18, dtype=np.int32).reshape(4, 6)
    a = dist(x, ndev, 2)
    q, r = dg.divmod(a * 3 + 1, 4)
    m = (q > r) & (a != 0)
    f = dg.modf(a / 7)
    np.testing.assert_array_equal(dg.asnumpy(q), (x * 3 + 1) // 4)
    np.testing.assert_array_equal(dg.asnumpy(r), (x * 3 + 1) % 4)
    np.testing.assert_array_equal(dg.asnumpy(m), ((x * 3 + 1) // 4 > (x * 3 + 1) % 4) & (x != 0))
    np.testing.assert_array_equal(dg.asnumpy(f[0]), np.modf(x / 7)[0])
    np.testing.assert_array_equal(dg.asnumpy(f[1]), np.modf(x / 7)[1])


def test_dropped_results_are_not_stored(fusion, no_leak):
    dg.config.fusion = True
    a = dg.arange(1000.0)
    r = ((a + 1) * 2 - 3) / 4
    np.testing.assert_array_equal(dg.asnumpy(r), ((np.arange(1000.0) + 1) * 2 - 3) / 4)
    (a + 5)  # dropped before anything reads it: never computed, no memory left
    core._fusion_flush()


def test_fuse_decorator(ndev, fusion):
    @dg.fuse()
    def squared_diff(x, y):
        return (x - y) * (x - y)

    @dg.fuse
    def axpy(a, x, y):
        return a * x + y

    @dg.fuse(kernel_name="squared_diff_named")
    def named(x, y):
        return dg.sqrt(x * x + y * y)

    x = np.arange(20.0).reshape(4, 5)
    y = np.ones((4, 5)) * 3
    X, Y = dist(x, ndev), dist(y, ndev)
    np.testing.assert_array_equal(dg.asnumpy(squared_diff(X, Y)), (x - y) * (x - y))
    np.testing.assert_array_equal(dg.asnumpy(squared_diff(X, 2.5)), (x - 2.5) ** 2)
    np.testing.assert_array_equal(dg.asnumpy(axpy(2.0, X, Y)), 2.0 * x + y)
    np.testing.assert_array_equal(dg.asnumpy(named(X, Y)), np.sqrt(x * x + y * y))
    assert named.name == "squared_diff_named" and "Fusion" in repr(named)
    # NumPy inputs: the function itself
    np.testing.assert_array_equal(squared_diff(x, y), (x - y) * (x - y))
    dg.config.fusion = False
    np.testing.assert_array_equal(dg.asnumpy(axpy(2.0, X, Y)), 2.0 * x + y)
    assert dg.config.fusion is False
    with pytest.raises(TypeError):
        dg.fuse(bogus=1)


def test_large_chains(ndev, fusion):
    """Pieces large enough that the CUDA backend runs them as kernels
    compiled at run time (DGARRAY_FUSED_KERNEL_MIN, 65,536 elements); on the
    CPU backend the same tiles as smaller ones.  Transcendental results
    within a few ulp (the GPU's sin is not glibc's), the rest exact."""
    dg.config.fusion = True
    rng = np.random.default_rng(5)
    x = rng.standard_normal((512, 520), dtype=np.float32)
    y = rng.standard_normal((512, 520), dtype=np.float32)
    a, b = dist(x, ndev, 1), dist(y, ndev, 1)
    r = dg.sqrt(a * a + b * b) + 2 * dg.sin(a) - b / 3
    np.testing.assert_allclose(dg.asnumpy(r), np.sqrt(x * x + y * y) + 2 * np.sin(x) - y / 3,
                               rtol=1e-5, atol=1e-5)
    s = (a * 3 - b) * (a + 1.5)
    np.testing.assert_array_equal(dg.asnumpy(s), (x * 3 - y) * (x + np.float32(1.5)))
    g = x.copy()
    for _ in range(2):
        a[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]
                               + a[2:, 1:-1])
        g[1:-1, 1:-1] = 0.2 * (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2]
                               + g[2:, 1:-1])
    np.testing.assert_array_equal(dg.asnumpy(a), g)


def jacobi_rows(x, nd):
    """x split by rows over devices 0 .. nd-1, as benchmarks/run.py's
    w_jacobi lays out its grid."""
    n = x.shape[0]
    return dg.distributed_array(x, {d: slice(n * d // nd, n * (d + 1) // nd)
                                    for d in range(nd)})


def device_counts(nd):
    return [tuple(c) for c in core._fusion_device_counts(nd)]


@pytest.mark.parametrize("renew", [1, 0], ids=["renew", "no_renew"])
@pytest.mark.parametrize("nd", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jacobi_fused_per_device(nd, dtype, renew, fusion, no_leak):
    """The in-place Jacobi step written with slices (benchmarks/run.py's
    jacobi_step) on a grid split by rows: on every device each iteration is
    one fused piece holding all five steps (four adds and the multiply), one
    more for each neighbour's halo row that the shifted slices read (those
    rows come from another device, so the space is cut there), and the
    assignment into the interior, which writes what the chain read: with
    the grid's memory renewed (tests/test_fusion_renew.py), a sixth step of
    every piece; without, a run of its own after the chain.  Before the
    chain's pieces were re-cut to the call's boundaries, any device holding
    a halo broke the chain at each shifted operand (12 runs of 14 steps an
    iteration on 2 devices)."""
    if core._ndevices() < nd:
        pytest.skip(f"{core._ndevices()} devices")
    dg.config.fusion = True
    was, _ = core._fusion_renew(renew)
    x = np.random.default_rng(nd).standard_normal((40, 33)).astype(dtype)
    X = jacobi_rows(x, nd)
    views = (X[1:-1, 1:-1], X[:-2, 1:-1], X[2:, 1:-1], X[1:-1, :-2], X[1:-1, 2:])
    y = x.copy()
    yviews = (y[1:-1, 1:-1], y[:-2, 1:-1], y[2:, 1:-1], y[1:-1, :-2], y[1:-1, 2:])

    def step(c, n, s, w, e):
        c[:] = dtype(0.2) * (c + n + e + w + s)

    step(*views)
    step(*yviews)
    core._fusion_flush()
    before = device_counts(nd)
    iters = 3
    for _ in range(iters):
        step(*views)
        step(*yviews)
    core._fusion_flush()
    after = device_counts(nd)
    core._fusion_renew(int(was))
    for d in range(nd):
        halos = (d > 0) + (d < nd - 1)
        runs, steps = (after[d][0] - before[d][0], after[d][1] - before[d][1])
        want = ((iters * (1 + halos), iters * 6 * (1 + halos)) if renew else
                (iters * (1 + halos + 1), iters * (5 * (1 + halos) + 1)))
        assert (runs, steps) == want, f"device {d}: {runs} runs of {steps} steps in {iters} " \
            "iterations"
    near_numpy(dg.asnumpy(X), y)


@pytest.mark.parametrize("nd", [1, 2, 4])
def test_shifted_sum_fused_per_device(nd, fusion, no_leak):
    """bench_cpu.py's jacobi row, 0.25 * (four shifted slices) into a new
    array: every fused piece holds the four steps, whatever the devices; the
    pieces are the interior of each device's chunk and the rows whose
    neighbours live on another device."""
    if core._ndevices() < nd:
        pytest.skip(f"{core._ndevices()} devices")
    dg.config.fusion = True
    x = np.random.default_rng(7).standard_normal((48, 20))
    a = jacobi_rows(x, nd)
    core._fusion_flush()
    before = device_counts(nd)
    r = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    core._fusion_flush()
    after = device_counts(nd)
    for d in range(nd):
        runs, steps = (after[d][0] - before[d][0], after[d][1] - before[d][1])
        assert steps == 4 * runs and runs <= 3, f"device {d}: {runs} runs of {steps} steps"
    near_numpy(dg.asnumpy(r), 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]))


def run_shifted_chain(xp, seed, a, b):
    """A random chain over views of a and b shifted by 0 to 2 along both
    axes, with writes into shifted views of both (written once for NumPy and
    dgarray): the chain's pieces re-cut where the shifts take halo rows from
    other devices, and writes that overlap what the chain reads."""
    rng = np.random.default_rng(seed)
    n0, n1 = a.shape[0] - 2, a.shape[1] - 2
    t, out = None, []
    for _ in range(int(rng.integers(3, 12))):
        kind = int(rng.integers(0, 8))
        s0, s1 = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        va = a[s0:s0 + n0, s1:s1 + n1]
        r0, r1 = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        vb = b[r0:r0 + n0, r1:r1 + n1]
        if kind == 0 or t is None:
            t = va + vb
        elif kind == 1:
            t = t * va - 0.5
        elif kind == 2:
            t = xp.maximum(t, vb)
        elif kind == 3:
            a[s0:s0 + n0, s1:s1 + n1] = t * 0.25
        elif kind == 4:
            b[s0:s0 + n0, s1:s1 + n1] += va
        elif kind == 5:
            out.append(t)
            t = t + vb
        elif kind == 6:
            a[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1]
                                   + a[1:-1, :-2] + a[1:-1, 2:])
        else:
            t = t / (1.0 + va * va)
    return out + [t, a, b]


@pytest.mark.parametrize("seed", range(16))
def test_random_shifted_chains(ndev, seed, fusion, no_leak):
    rng = np.random.default_rng(300 + seed)
    shape = (int(rng.integers(5, 30)), int(rng.integers(4, 12)))
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    want = run_shifted_chain(np, seed, x.copy(), y.copy())
    results = {}
    for on in (True, False):
        dg.config.fusion = on
        got = run_shifted_chain(dg, seed, dist(x, ndev, seed), dist(y, ndev, seed // 3))
        results[on] = [dg.asnumpy(g) for g in got]
    for w, f, u in zip(want, results[True], results[False]):
        np.testing.assert_array_equal(f, u)   # fusion changes no bit
        near_numpy(u, w)
