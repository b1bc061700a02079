"""An assignment that writes memory the pending chain reads at other offsets
(a stencil written in place: `u[1:-1, 1:-1] = f(u's shifted views)`) joins
the chain by giving the grid new memory (src/core/dg_fuse.c, renew_outputs):
the edges are copied over, the fused kernel writes the interior directly.
Against NumPy and against the same work with renewing off, on 1 and several
devices, with views made before, a chunk lent to NumPy, earlier writes in
the chain, shared memory, transposed and 3-d grids, and boxes too small to
be worth it."""
import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for
from test_fusion import near_numpy

core = dg._core


@pytest.fixture
def renew():
    """Fusion on, renewing set by the test (on by default), both restored
    after it; yields a function giving the memories renewed so far."""
    old_fusion = dg.config.fusion
    dg.config.fusion = True
    was, _ = core._fusion_renew()
    core._fusion_renew(1)
    yield lambda: core._fusion_renew()[1]
    core._fusion_flush()
    core._fusion_renew(int(was))
    dg.config.fusion = old_fusion


def rows(x, nd):
    n = x.shape[0]
    return dg.distributed_array(x, {d: slice(n * d // nd, n * (d + 1) // nd) for d in range(nd)})


def dist(x, ndev, layout):
    maps = maps_for(x.shape, ndev)
    return dg.distributed_array(x, maps[layout % len(maps)][1])


def jacobi(xp, u, iters):
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                               + u[1:-1, 2:])


def ndevices(nd):
    if core._ndevices() < nd:
        pytest.skip(f"needs {nd} devices, {core._ndevices()} present")


@pytest.mark.parametrize("nd", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_jacobi_renewed(nd, dtype, renew, no_leak):
    """Each iteration renews each device's memory once, and the grid, its
    edges included, is NumPy's."""
    ndevices(nd)
    x = (np.random.default_rng(nd).standard_normal((37, 29)) * 100).astype(dtype)
    u = rows(x, nd)
    before = renew()
    jacobi(dg, u, 4)
    core._fusion_flush()
    if np.issubdtype(dtype, np.inexact):
        # (an integer grid's assignment is a cast from float64: it runs on
        # its own, after the chain)
        assert renew() - before == 4 * nd
    jacobi(np, x, 4)
    if np.issubdtype(dtype, np.inexact):
        near_numpy(dg.asnumpy(u), x)
    else:
        np.testing.assert_array_equal(dg.asnumpy(u), x)


@pytest.mark.parametrize("layout", range(4))
def test_jacobi_layouts_against_off(ndev, layout, renew, no_leak):
    """Every layout of the test maps (uneven, columns, blocks, replicated):
    renewed where it can be, the same bits as with renewing off."""
    x = np.random.default_rng(layout).random((34, 27))
    a, b = dist(x, ndev, layout), dist(x, ndev, layout)
    jacobi(dg, a, 3)
    core._fusion_flush()
    core._fusion_renew(0)
    jacobi(dg, b, 3)
    core._fusion_flush()
    np.testing.assert_array_equal(dg.asnumpy(a), dg.asnumpy(b))
    jacobi(np, x, 3)
    near_numpy(dg.asnumpy(a), x)


@pytest.mark.parametrize("nd", [1, 2, 4])
def test_views_made_before_see_the_new_memory(nd, renew, no_leak):
    """Views of the grid made before the loop (benchmarks/run.py keeps the
    five slices) read and write the renewed memory."""
    ndevices(nd)
    x = np.random.default_rng(3).standard_normal((40, 31))
    u = rows(x, nd)
    c, n, s, w, e = u[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1], u[1:-1, :-2], u[1:-1, 2:]
    box = u[5:20, 3:9]
    col = u[:, 0]
    before = renew()
    for _ in range(3):
        c[:] = 0.2 * (c + n + s + w + e)
    box += 1.0
    col[:] = -1.0
    jacobi(np, x, 3)
    x[5:20, 3:9] += 1.0
    x[:, 0] = -1.0
    assert renew() > before
    near_numpy(dg.asnumpy(u), x)
    near_numpy(dg.asnumpy(box), x[5:20, 3:9])


@pytest.mark.skipif(dg.backend() != "cpu", reason="NumPy views of chunks: the CPU backend")
def test_lent_chunk_is_never_renewed(renew, no_leak):
    """A chunk lent to NumPy keeps seeing the grid: its memory is not
    replaced (the assignment runs after the chain, as before)."""
    x = np.random.default_rng(4).standard_normal((30, 20))
    u = rows(x, 1)
    (_, _, ch), = u.chunks()
    view = np.asarray(ch)
    before = renew()
    jacobi(dg, u, 2)
    jacobi(np, x, 2)
    got = dg.asnumpy(u)
    assert renew() == before
    np.testing.assert_array_equal(view, got)
    near_numpy(got, x)
    del view, ch


@pytest.mark.parametrize("nd", [1, 2])
def test_earlier_writes_in_the_chain(nd, renew, no_leak):
    """The grid written before the assignment, in place and through a
    view (the chain runs before the shifted reads), and an assignment of an
    expression over other arrays into a view read unshifted: NumPy's
    values."""
    ndevices(nd)
    x = np.random.default_rng(5).standard_normal((26, 22))
    y = np.random.default_rng(15).standard_normal((24, 20))
    u, v = rows(x, nd), rows(y, nd)
    u *= 2.0
    u[1:-1, 1:-1] += v
    jacobi(dg, u, 1)
    u[1:-1, 1:-1] = u[1:-1, 1:-1] * v - 1.0
    x *= 2.0
    x[1:-1, 1:-1] += y
    jacobi(np, x, 1)
    x[1:-1, 1:-1] = x[1:-1, 1:-1] * y - 1.0
    near_numpy(dg.asnumpy(u), x)


@pytest.mark.parametrize("nd", [1, 2])
def test_out_and_cast_assignments(nd, renew, no_leak):
    """Assignments that are not copies: a ufunc's out= into the interior of
    the arrays it reads shifted (not renewed: its inputs are that memory),
    and a cast into an integer grid."""
    ndevices(nd)
    x = np.random.default_rng(16).standard_normal((30, 26))
    u = rows(x, nd)
    np.add(u[:-2, 1:-1], u[2:, 1:-1], out=u[1:-1, 1:-1])
    np.add(x[:-2, 1:-1], x[2:, 1:-1], out=x[1:-1, 1:-1])
    near_numpy(dg.asnumpy(u), x)
    xi = (x * 100).astype(np.int64)
    ui = rows(xi, nd)
    ui[1:-1, 1:-1] = (ui[:-2, 1:-1] + ui[2:, 1:-1]) * 0.5
    xi[1:-1, 1:-1] = (xi[:-2, 1:-1] + xi[2:, 1:-1]) * 0.5
    np.testing.assert_array_equal(dg.asnumpy(ui), xi)


def test_small_box_is_not_renewed(renew, no_leak):
    """A box of less than half the memory: copying the rest would cost more
    than the copy it saves."""
    x = np.random.default_rng(6).standard_normal((30, 30))
    u = rows(x, 1)
    before = renew()
    u[1:10, 1:10] = u[:9, 1:10] + u[2:11, 1:10]
    x[1:10, 1:10] = x[:9, 1:10] + x[2:11, 1:10]
    near_numpy(dg.asnumpy(u), x)
    core._fusion_flush()
    assert renew() == before


def test_transposed_and_3d(renew, no_leak):
    """A transposed grid (the strides in the other order) and a 3-d
    seven-point stencil, on one device: each iteration one fused run that
    renews.  (Over devices split along another axis than the stencil's
    first, these chains break at the shifted reads before the assignment.)"""
    x = np.random.default_rng(7).standard_normal((24, 28))
    u = rows(x, 1)
    t, xt = u.T, x.T
    before = renew()
    jacobi(dg, t, 2)
    jacobi(np, xt, 2)
    near_numpy(dg.asnumpy(u), x)
    assert renew() - before == 2
    y = np.random.default_rng(8).standard_normal((12, 10, 14))
    v = rows(y, 1)
    for xp, g in ((dg, v), (np, y)):
        for _ in range(2):
            g[1:-1, 1:-1, 1:-1] = (g[:-2, 1:-1, 1:-1] + g[2:, 1:-1, 1:-1] + g[1:-1, :-2, 1:-1]
                                   + g[1:-1, 2:, 1:-1] + g[1:-1, 1:-1, :-2]
                                   + g[1:-1, 1:-1, 2:]) / 6.0
    near_numpy(dg.asnumpy(v), y)
    core._fusion_flush()
    assert renew() - before == 4


def test_shared_memory_keeps_the_other_copy(renew, no_leak):
    """A second array holding the same memory (a reshard that left device
    0's chunk in place) keeps the values from before the assignment."""
    ndevices(3)
    x = np.random.default_rng(9).standard_normal((20, 18))
    u = rows(x, 2)
    other = u.reshard({0: slice(0, 10), 2: slice(10, 20)})
    jacobi(dg, u, 2)
    np.testing.assert_array_equal(dg.asnumpy(other), x)
    jacobi(np, x, 2)
    near_numpy(dg.asnumpy(u), x)


@pytest.mark.parametrize("nd", [1, 2])
def test_copy_reading_the_grid_itself(nd, renew, no_leak):
    """An assignment whose own input is the grid (`u[1:] = u[:-1]` while a
    chain reading u is pending) is not renewed, and is NumPy's."""
    ndevices(nd)
    x = np.random.default_rng(10).standard_normal((22, 16))
    u = rows(x, nd)
    t = u * 3.0
    before = renew()
    u[1:] = u[:-1]
    y = x * 3.0
    x[1:] = x[:-1].copy()
    near_numpy(dg.asnumpy(t), y)
    near_numpy(dg.asnumpy(u), x)
    core._fusion_flush()
    assert renew() == before
