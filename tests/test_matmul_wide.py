"""Products large enough to run as one BLAS call over every core on the CPU
backend (src/core/dg_matmul.c: use_wide, contract_wide: the operands read in
place or assembled, the result copied into its chunks), against NumPy, on
every layout of the operands: rows,
uneven rows, interleaved rows, columns, replicated, overlapping chunks, and
the same array on both sides.  The other tests' matrices are mostly below
the size that takes this path (2^21 multiply-adds)."""
import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

pytestmark = pytest.mark.skipif(dg.backend() != "cpu",
                                reason="the one-call product is the CPU backend's")


def data(dt, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def close(got, want, k):
    tol = 64 * k * np.finfo(want.dtype).eps
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


LAYOUTS = ["default", "rows", "uneven", "strided", "replicated", "overlap", "cols"]


def layout(shape, ndev, name):
    return dict(maps_for(shape, ndev)).get(name)


@pytest.mark.parametrize("dt", ["f8", "f4", "c16"])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", ["default", "rows", "cols", "replicated"])
def test_a_at_b(ndev, dt, la, lb):
    m, k, n = 150, 130, 140  # 2.7e6 multiply-adds: the one-call path
    x, y = data(dt, (m, k), 1), data(dt, (k, n), 2)
    a = dg.distributed_array(x, layout(x.shape, ndev, la))
    b = dg.distributed_array(y, layout(y.shape, ndev, lb))
    close((a @ b).get(), x @ y, k)
    close(dg.matmul(a, b).get(), np.matmul(x, y), k)


@pytest.mark.parametrize("la", LAYOUTS)
def test_a_at_a(ndev, la):
    x = data("f8", (160, 160), 3)
    a = dg.distributed_array(x, layout(x.shape, ndev, la))
    close((a @ a).get(), x @ x, 160)
    close((a @ a.T).get(), x @ x.T, 160)
    close((a[::2] @ a[:, 1::2]).get(), x[::2] @ x[:, 1::2], 160)


@pytest.mark.parametrize("la", ["default", "rows", "cols"])
def test_into_out_and_batched(ndev, la):
    x = data("f8", (200, 120), 4)
    y = data("f8", (120, 110), 5)
    a = dg.distributed_array(x, layout(x.shape, ndev, la))
    b = dg.asarray(y)
    out = dg.distributed_array(np.zeros((200, 110)), layout((200, 110), ndev, la))
    dg.matmul(a, b, out=out)
    close(out.get(), x @ y, 120)
    xs = data("f8", (3, 130, 120), 6)
    s = dg.asarray(xs)
    close((s @ b).get(), xs @ y, 120)
