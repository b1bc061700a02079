"""Copies whose rows are dense on both sides at any alignment: the interior of
a grid assigned from a dense array (Jacobi's step), column windows, and
reshards of 2-d boxes.  On GPUs these run the row copy kernel
(kernels/copy.cu): 16-byte stores at the destination's alignment, a head and a
tail of words, and the source loaded whole or shifted by 1-3 words, where the
last lane of a warp and the last vector of a row load their words alone.  The
widths below put the row ends on every word of a vector and make rows of one
tile and of several; every case is compared with NumPy."""
import numpy as np
import pytest

import dgarray as dg

# row lengths in bytes from 256 (the kernel's least) past a 16 KiB tile
WIDTHS = (64, 65, 66, 67, 127, 301, 1029, 4099, 4100, 5003)
DTYPES = (np.float32, np.float64, np.complex128, np.int16, np.uint8)

def rows_map(n, ndev):
    return {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_window_assigned_from_dense(dtype, ndev, no_leak):
    rng = np.random.default_rng(3)
    for w in WIDTHS:
        for c0 in range(5):
            rows = 6
            host = (rng.integers(0, 100, (rows, w + 8)) + 0.5).astype(dtype)
            src = (rng.integers(0, 100, (rows - 2, w)) - 0.25).astype(dtype)
            g = dg.distributed_array(host, rows_map(rows, ndev))
            s = dg.distributed_array(src, rows_map(rows - 2, ndev))
            g[1:-1, c0:c0 + w] = s
            want = host.copy()
            want[1:-1, c0:c0 + w] = src
            np.testing.assert_array_equal(g.get(), want, err_msg=f"width {w}, column {c0}")

@pytest.mark.parametrize("dtype", (np.float32, np.float64), ids=lambda t: np.dtype(t).name)
def test_window_to_window(dtype, ndev, no_leak):
    """Both sides strided: the source shifted against the destination by each
    number of words."""
    rng = np.random.default_rng(4)
    for w in (64, 67, 1029, 4099):
        for c0 in range(4):
            for c1 in range(4):
                host = rng.standard_normal((5, w + 6)).astype(dtype)
                other = rng.standard_normal((5, w + 6)).astype(dtype)
                g = dg.distributed_array(host, rows_map(5, ndev))
                o = dg.distributed_array(other, rows_map(5, ndev))
                g[:, c0:c0 + w] = o[:, c1:c1 + w]
                want = host.copy()
                want[:, c0:c0 + w] = other[:, c1:c1 + w]
                np.testing.assert_array_equal(g.get(), want, err_msg=f"{w} {c0} {c1}")

def test_jacobi_interior(ndev, no_leak):
    """The Jacobi step of benchmarks/run.py: the result of a chain that reads
    the neighbours of what it writes, copied into the grid's interior."""
    x = np.random.default_rng(5).standard_normal((40, 1031)).astype(np.float32)
    g = dg.distributed_array(x, rows_map(40, ndev))
    y = x.copy()
    for _ in range(3):
        c, n, s, w, e = g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]
        c[:] = 0.2 * (c + n + e + w + s)
        yc = y[1:-1, 1:-1]
        yc[:] = 0.2 * (yc + y[:-2, 1:-1] + y[1:-1, 2:] + y[1:-1, :-2] + y[2:, 1:-1])
    np.testing.assert_allclose(g.get(), y, rtol=1e-5, atol=1e-6)

@pytest.mark.parametrize("w", (67, 1029, 4099))
def test_reshard_of_column_blocks(w, ndev, no_leak):
    """Boxes of a column split moved to a row split and back: copies of 2-d
    boxes whose rows are dense, at shifted columns."""
    x = np.random.default_rng(6).standard_normal((9, w)).astype(np.float32)
    cols = {d: (slice(None), slice(w * d // ndev, w * (d + 1) // ndev)) for d in range(ndev)}
    a = dg.distributed_array(x, cols)
    b = a.reshard(rows_map(9, ndev))
    np.testing.assert_array_equal(b.get(), x)
    np.testing.assert_array_equal(b.reshard(cols).get(), x)
    three = np.random.default_rng(7).standard_normal((8, 4, w)).astype(np.float64)
    t = dg.distributed_array(three, {d: (slice(None), slice(None),
                                         slice(w * d // ndev, w * (d + 1) // ndev))
                                     for d in range(ndev)})
    np.testing.assert_array_equal(t.reshard({d: slice(8 * d // ndev, 8 * (d + 1) // ndev)
                                             for d in range(ndev)}).get(), three)
