"""Scans against NumPy on shapes that reach every kernel of a backend.

tests/test_reductions.py checks every dtype and layout on small arrays; the
CUDA backend scans those with a thread per row only.  These shapes also reach
its warp-per-row and block-per-row kernels (rows of a few hundred to tens of
thousands of elements, partial tiles), the thread-per-row kernel on rows
that lie side by side in memory (a scan along axis 0 of many columns), and
the tiled scan of few long rows (at least 2^16 elements, fewer rows than
multiprocessors: split over many blocks), with carries from one device's
chunk to the next.  (tests/test_scan_long.py: long 1-d scans on GPUs.)
"""
import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

# (shape, axis): the kernel the CUDA backend picks on a GPU of ~132
# multiprocessors, for a single chunk
SHAPES = [
    ((3, 50001), 1),     # few long rows: a block per row, partial last tile
    ((2000, 301), 1),    # many rows of moderate length: a warp per row
    ((301, 2000), 0),    # side-by-side rows, too few for a thread each: a warp per row
    ((37, 40000), 0),    # side-by-side rows, many: a thread per row
    ((50000, 3), 1),     # short rows: a thread per row
    ((1 << 20,), 0),     # one long row: tiles over many blocks (three passes)
    ((3, 70001), 1),     # few rows of >= 2^16 elements: tiled, a partial last tile
    ((70001, 3), 0),     # the same side by side (strided rows): tiled
    ((2, 70001, 2), 1),  # tiled rows over two row dims that do not coalesce
]


def values(dtype, shape, ufunc):
    rng = np.random.default_rng(11)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < (0.999 if ufunc is np.logical_and else 0.001)
    if ufunc is np.multiply:  # products that stay in range
        x = rng.choice([-1.0, 1.0, 1.0, 1.0], shape)
        if dt.kind == "f":  # rare halvings and doublings: exact, never out of range
            x = x * rng.choice([0.5, 1.0, 2.0], shape, p=[0.005, 0.99, 0.005])
        return x.astype(dt)
    if dt.kind in "iu":
        return rng.integers(-5, 6, shape).astype(dt)
    return np.round(rng.standard_normal(shape) * 3, 1).astype(dt)


def assert_scan(got, ref, x, axis, exact):
    g = got.get()
    assert g.dtype == ref.dtype and g.shape == ref.shape
    if exact:
        np.testing.assert_array_equal(g, ref)
        return
    # float sums: within rounding of the running sum of magnitudes
    scale = np.cumsum(np.abs(x.astype(np.float64)), axis=axis) + 1
    err = np.abs(g.astype(np.float64) - ref.astype(np.float64))
    tol = 1e-5 if x.dtype == np.float32 else 1e-13
    assert np.all(err <= tol * scale), f"max error {np.max(err / scale)}"


CASES = [(np.add, "i8"), (np.add, "f8"), (np.add, "f4"), (np.multiply, "i4"),
         (np.multiply, "f8"), (np.maximum, "f2"), (np.minimum, "i2"),
         (np.logical_and, "?"), (np.logical_or, "?")]


@pytest.mark.parametrize("shape, axis", SHAPES, ids=str)
@pytest.mark.parametrize("ufunc, dtype", CASES, ids=lambda c: getattr(c, "__name__", c))
def test_scan_shapes(shape, axis, ufunc, dtype, ndev):
    x = values(dtype, shape, ufunc)
    ref = ufunc.accumulate(x, axis=axis)
    exact = x.dtype.kind in "biu" or ufunc in (np.maximum, np.minimum) or (
        ufunc is np.multiply)  # products of +-1 and powers of two are exact
    for name, m in maps_for(shape, ndev):
        if name not in ("default", "rows", "cols"):
            continue
        d = dg.distributed_array(x, m) if m is not None else dg.asarray(x)
        assert_scan(ufunc.accumulate(d, axis=axis), ref, x, axis, exact)
