"""Long 1-d scans against NumPy: the CUDA backend's tiled scan
(src/backend/cuda/cuda_scan.c, scan_tiled; kernels/scan.cu, dg_scan_tile_k),
which splits each row of at least 2^16 elements, in a piece of fewer rows
than the GPU's multiprocessors, into tiles of a power-of-two length over
many blocks: the tiles' totals, their scan, then each tile from its prefix.

Sums and products of several dtypes (casts of small integers included) and
the nan forms on 1 and several devices and layouts; overflows inside a tile,
in a tile's total, at a tile boundary (an element whose index is a multiple
of a large power of two within its device's piece is the first of a tile,
whatever the GPU) and across tiles under errstate(over='raise'); no false
'invalid' from the lanes past a row's end.

GPU only: the CPU backend scans each piece sequentially (its scans are
covered by test_scan_shapes.py, test_reductions.py and test_errstate.py), so
these arrays of a million elements would only repeat those tests slowly."""
import warnings

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

pytestmark = pytest.mark.skipif(
    dg.backend() != "cuda",
    reason="needs the CUDA backend: the tiled scan of long rows runs on GPUs only")

M = 1 << 20         # the overflow cases: every device's piece starts at a multiple of M / 4
N_ODD = M + 37      # the value cases: a last tile cut short, lanes past the row's end
LAYOUTS = ("default", "rows", "uneven", "strided", "replicated")


def values(fn, dtype, n):
    rng = np.random.default_rng(5)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.3
    if "prod" in fn:  # products that stay in range: +-1, rare halvings and doublings
        x = rng.choice([-1.0, 1.0, 1.0, 1.0], n)
        if dt.kind in "fc":
            x = x * rng.choice([0.5, 1.0, 2.0], n, p=[0.0005, 0.999, 0.0005])
        x = x.astype(dt)
    elif dt.kind in "iu":
        x = rng.integers(0 if dt.kind == "u" else -5, 6, n).astype(dt)
    elif dt.kind == "c":
        x = (np.round(rng.standard_normal(n) * 3, 1) +
             1j * np.round(rng.standard_normal(n) * 3, 1)).astype(dt)
    else:
        x = np.round(rng.standard_normal(n) * 3, 1).astype(dt)
    if fn.startswith("nan"):
        x[rng.random(n) < 0.01] = np.nan
    return x


def check(got, ref, x, fn):
    g = np.asarray(got)
    assert g.dtype == ref.dtype and g.shape == ref.shape
    if ref.dtype.kind in "biu" or "prod" in fn:
        np.testing.assert_array_equal(g, ref)  # integers; products of +-1 and powers of 2
        return
    # float sums: within rounding of the running sum of magnitudes (the
    # parallel scan's order, as test_scan_shapes.py allows)
    mag = np.abs(np.nan_to_num(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)))
    scale = np.cumsum(mag) + 1
    err = np.abs(g.astype(ref.dtype) - ref)
    tol = 1e-5 if ref.dtype in (np.float32, np.complex64) else 1e-13
    assert np.all(err <= tol * scale), f"max error {np.max(err / scale)}"


# (function, dtype): cumsum of small integers and bool is NumPy's cast to the
# default integer; add.accumulate of int8 keeps int8 (wrapping, exact)
CASES = [("cumsum", "f4"), ("cumsum", "f8"), ("cumsum", "c8"), ("cumsum", "i1"),
         ("cumsum", "u2"), ("cumsum", "i4"), ("cumsum", "i8"), ("cumsum", "?"),
         ("add.accumulate", "i1"), ("cumprod", "f8"), ("cumprod", "f4"), ("cumprod", "i8"),
         ("nancumsum", "f4"), ("nancumsum", "f8"), ("nancumprod", "f8")]


def run(xp, fn, a):
    return np.add.accumulate(a) if fn == "add.accumulate" else getattr(xp, fn)(a)


@pytest.mark.parametrize("fn, dtype", CASES, ids=str)
def test_long_scans(fn, dtype, ndev):
    x = values(fn, dtype, N_ODD)
    ref = run(np, fn, x)
    for name, m in maps_for(x.shape, ndev):
        if name not in LAYOUTS:
            continue
        d = dg.distributed_array(x, m) if m is not None else dg.asarray(x)
        with np.errstate(all="raise"):  # nothing overflows: nothing raises
            got = run(dg, fn, d)
        check(got, ref, x, fn)
        # a strided view (every other element, reversed)
        v = x[::-2]
        check(run(dg, fn, d[::-2]), run(np, fn, v), v, fn)


# where the two large values go: (positions) in [0, M)
OVER = {
    "inside": (10, 11),                    # one thread's elements
    "tile_total": (M // 2, M // 2 + 1000),  # one tile's own total (threads, warps apart)
    "boundary": (M // 2 - 1, M // 2),      # the last of a tile, the first of the next
    "boundary_in_piece": (3 * M // 8 - 1, 3 * M // 8),  # a tile boundary inside a piece
    "across": (5, M - 5),                  # in different tiles (and devices): the totals' scan
}


def over_input(fn, dtype, case):
    mx = float(np.finfo(dtype).max)
    big = 0.6 * mx if "sum" in fn else 2.0 * mx ** 0.5
    x = np.full(M, 0 if "sum" in fn else 1, dtype)
    for p in OVER[case]:
        x[p] = big
    return x


@pytest.mark.parametrize("case", list(OVER))
@pytest.mark.parametrize("fn", ["cumsum", "cumprod", "nancumsum"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_long_scan_overflows(dtype, fn, case, ndev):
    if dtype.startswith("complex") and "prod" in fn:
        pytest.skip("complex products of infinities: NumPy's loop raises in intermediate "
                    "steps (test_errstate.py's test_scans skips them too)")
    x = over_input(fn, dtype, case)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        getattr(np, fn)(x)  # NumPy raises: the test can fail
    with np.errstate(all="ignore"):
        ref = getattr(np, fn)(x)
    for name, m in maps_for(x.shape, ndev):
        if name not in ("default", "rows", "replicated"):
            continue
        d = dg.distributed_array(x, m) if m is not None else dg.asarray(x)
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
            np.asarray(getattr(dg, fn)(d))
        with np.errstate(all="ignore"):
            got = np.asarray(getattr(dg, fn)(d))
        # the identity around the two values: every order of the folds gives
        # NumPy's bytes, infinities included
        np.testing.assert_array_equal(got, ref, err_msg=name)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            np.asarray(getattr(dg, fn)(d))
        assert any("overflow" in str(e.message) for e in w), (name, [str(e.message) for e in w])


@pytest.mark.parametrize("fn", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_long_scan_no_false_invalid(dtype, fn, ndev):
    """An infinite input early in a row whose length is no multiple of the
    tiles: NumPy raises nothing (inf + 0, inf * 1); neither may the lanes past
    the row's end, which fold the dtype's zeros (inf * 0 would be 'invalid')."""
    x = np.full(N_ODD, 0 if "sum" in fn else 1, dtype)
    x[7] = np.inf
    x[N_ODD // 3] = np.nan if fn.startswith("nan") else x[N_ODD // 3]
    with np.errstate(all="raise"):
        ref = getattr(np, fn)(x)
    for name, m in maps_for(x.shape, ndev):
        if name not in ("default", "uneven"):
            continue
        d = dg.distributed_array(x, m) if m is not None else dg.asarray(x)
        with np.errstate(all="raise"):
            got = np.asarray(getattr(dg, fn)(d))
        np.testing.assert_array_equal(got, ref, err_msg=name)
