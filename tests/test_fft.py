"""dgarray.fft on the devices (dgarray._fft, src/core/dg_fft_run.c, the
backend's fft slot) against NumPy on the same inputs: every function, n / s,
axis / axes, norm and out, every dtype, arrays split along and across the
transformed axes (the slab path), 2-d blocks, 1 and 4 devices, empty
arrays and NumPy's errors, with no host fallback."""
import numpy as np
import pytest

import dgarray as dg
from dgarray import _fft
from _maps import maps_for

pytestmark = pytest.mark.skipif(not _fft.available(), reason="the backend has no FFT")

NORMS = [None, "backward", "ortho", "forward"]


@pytest.fixture(autouse=True)
def strict():
    old = dg.config.fallback
    dg.config.fallback = "raise"
    yield
    dg.config.fallback = old


def data(shape, dt, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dt).kind in "iub":
        x = (x * 10).astype(np.int64)
    return x.astype(dt)


def tol(dt):
    """float64 / complex128: NumPy's own loops (rounding only where several
    axes are scaled once); single precision: computed in float32 (NumPy
    rounds a double computation)."""
    return 2e-6 if np.dtype(dt) in (np.float32, np.complex64, np.float16) else 1e-13


def check(got, want, dt):
    assert isinstance(got, dg.DistributedArray)
    g = got.get()
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, want.dtype, g.shape,
                                                            want.shape)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(g, want, rtol=0, atol=tol(dt) * scale)


def layouts2(shape, ndev):
    out = maps_for(shape, ndev)
    m, n = shape[:2]
    if ndev > 1 and m >= 2 and n >= 2:
        out.append(("blocks", dg.make_2d_index_map(
            [0, m // 2, m], [0, n // 2, n], [[{0}, {1 % ndev}], [{2 % ndev}, {3 % ndev}]])))
    return out


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128, np.int32])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_c2c_1d(ndev, dt, name):
    a = data((6, 9), dt)
    for lname, m in layouts2(a.shape, ndev):
        d = dg.distributed_array(a, m)
        for axis in (0, 1, -1):
            for n in (None, 4, 9, 13):
                for norm in NORMS:
                    want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
                    check(getattr(dg.fft, name)(d, n=n, axis=axis, norm=norm), want, dt)
        np.testing.assert_array_equal(d.get(), a)


@pytest.mark.skipif(dg.backend() != "cpu", reason="the CPU backend runs NumPy's own loops")
def test_double_precision_is_numpys_bits(ndev):
    """One axis in float64 / complex128: NumPy's own pocketfft loops, the same
    bits."""
    a = data((5, 12), np.complex128, 1)
    r = data((5, 12), np.float64, 2)
    for axis in (0, 1):
        np.testing.assert_array_equal(dg.fft.fft(dg.asarray(a), axis=axis).get(),
                                      np.fft.fft(a, axis=axis))
        np.testing.assert_array_equal(dg.fft.rfft(dg.asarray(r), axis=axis).get(),
                                      np.fft.rfft(r, axis=axis))
        c = np.fft.rfft(r, axis=axis)
        np.testing.assert_array_equal(dg.fft.irfft(dg.asarray(c), 12, axis=axis).get(),
                                      np.fft.irfft(c, 12, axis=axis))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64])
def test_rfft_irfft_1d(ndev, dt):
    a = data((7, 10), dt, 3)
    for lname, m in layouts2(a.shape, ndev):
        d = dg.distributed_array(a, m)
        for axis in (0, -1):
            for n in (None, 5, 10, 15):
                for norm in NORMS:
                    check(dg.fft.rfft(d, n=n, axis=axis, norm=norm),
                          np.fft.rfft(a, n=n, axis=axis, norm=norm), dt)
                    check(dg.fft.ihfft(d, n=n, axis=axis, norm=norm),
                          np.fft.ihfft(a, n=n, axis=axis, norm=norm), dt)
    cdt = np.complex64 if dt == np.float32 else np.complex128
    c = data((6, 8), cdt, 4)
    for lname, m in layouts2(c.shape, ndev):
        d = dg.distributed_array(c, m)
        for axis in (0, 1):
            for n in (None, 5, 14, 20):
                for norm in NORMS:
                    check(dg.fft.irfft(d, n=n, axis=axis, norm=norm),
                          np.fft.irfft(c, n=n, axis=axis, norm=norm), cdt)
                    check(dg.fft.hfft(d, n=n, axis=axis, norm=norm),
                          np.fft.hfft(c, n=n, axis=axis, norm=norm), cdt)


@pytest.mark.parametrize("dt", [np.float64, np.complex64])
def test_nd(ndev, dt):
    a = data((6, 8, 5), dt, 5)
    cases = [(None, None), (None, (0, 2)), ((4, 7), (0, 1)), ((5, 6, 3), (2, 0, 1)),
             (None, (1, 1)), (None, (-1,)), ((3,), (0,))]
    maps = [(n, m) for n, m in maps_for(a.shape, ndev)]
    if ndev > 1:
        maps.append(("axis2", {d: (slice(None), slice(None), slice(5 * d // ndev,
                                                                   5 * (d + 1) // ndev))
                               for d in range(ndev)}))
    for lname, m in maps:
        d = dg.distributed_array(a, m)
        for s, axes in cases:
            for norm in (None, "ortho"):
                for name in ("fftn", "ifftn"):
                    check(getattr(dg.fft, name)(d, s=s, axes=axes, norm=norm),
                          getattr(np.fft, name)(a, s=s, axes=axes, norm=norm), dt)
                if np.dtype(dt).kind == "f":
                    check(dg.fft.rfftn(d, s=s, axes=axes, norm=norm),
                          np.fft.rfftn(a, s=s, axes=axes, norm=norm), dt)
                c = np.fft.rfftn(a.real, s=s, axes=axes)
                check(dg.fft.irfftn(dg.asarray(c), s=s, axes=axes, norm=norm),
                      np.fft.irfftn(c, s=s, axes=axes, norm=norm), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_real_sides_starting_at_any_element(ndev, dt):
    """rfft / irfft (and their n-d forms) whose real side starts at an odd
    element: views offset by one, and batches walked one real at a time
    (the transformed axis in the middle, as rfftn over axes (1, 1) makes
    it).  cuFFT takes only data aligned to its complex type; such sides are
    moved to aligned scratch first (src/backend/cuda/cuda_fft.c)."""
    a = data((5, 8, 7), dt, 7)
    cdt = np.result_type(dt, np.complex64)
    for lname, m in [("default", None)] + maps_for(a.shape, ndev)[:2]:
        d = dg.distributed_array(a, m)
        for key in ((slice(1, None),), (slice(None), slice(1, None)), (Ellipsis, slice(1, None)),
                    (slice(1, None), slice(None, None, 2), slice(1, None))):
            v, hv = d[key], a[key]
            for axis in range(3):
                check(dg.fft.rfft(v, axis=axis), np.fft.rfft(hv, axis=axis), dt)
                c = np.fft.rfft(hv, axis=axis).astype(cdt)
                for n in (None, 2 * c.shape[axis] - 1):
                    check(dg.fft.irfft(dg.asarray(c), n=n, axis=axis),
                          np.fft.irfft(c, n=n, axis=axis), dt)
            for axes in ((1, 1), (0, 2), (2, 1), (1,)):
                check(dg.fft.rfftn(v, axes=axes), np.fft.rfftn(hv, axes=axes), dt)
                c = np.fft.rfftn(hv, axes=axes).astype(cdt)
                check(dg.fft.irfftn(dg.asarray(c), axes=axes), np.fft.irfftn(c, axes=axes), dt)


@pytest.mark.parametrize("dt", [np.float32, np.complex64, np.complex128])
def test_strided_axes_in_tiles(ndev, dt):
    """Transforms along axes that are not contiguous, with more neighbouring
    transforms than one tile holds (the CPU backend gathers up to 256 bytes of
    them per point into a dense block, src/backend/cpu/cpu_fft.c): whole tiles
    and a last partial one, another batch axis walked around them, views whose
    neighbours are not adjacent (a step of 2), every kind (c2c, r2c, c2r and
    the inner axes of n-d transforms); float64 along one axis keeps NumPy's
    bits."""
    a = data((9, 3, 150), dt, 11)
    cdt = np.result_type(dt, np.complex64)
    for lname, m in maps_for(a.shape, ndev)[:3]:
        d = dg.distributed_array(a, m)
        for key in ((Ellipsis,), (Ellipsis, slice(1, None, 2))):
            v, hv = d[key], a[key]
            for axis in (0, 1):
                for name in ("fft", "ifft"):
                    check(getattr(dg.fft, name)(v, axis=axis, norm="ortho"),
                          getattr(np.fft, name)(hv, axis=axis, norm="ortho"), dt)
                if np.dtype(dt).kind == "f":
                    check(dg.fft.rfft(v, axis=axis), np.fft.rfft(hv, axis=axis), dt)
                c = np.fft.rfft(hv.real, axis=axis).astype(cdt)
                check(dg.fft.irfft(dg.asarray(c), n=9, axis=axis),
                      np.fft.irfft(c, n=9, axis=axis), dt)
            for axes in ((0, 1), (1, 0, 2)):
                check(dg.fft.fftn(v, axes=axes), np.fft.fftn(hv, axes=axes), dt)
                c = np.fft.rfftn(hv.real, axes=axes).astype(cdt)
                check(dg.fft.irfftn(dg.asarray(c), axes=axes), np.fft.irfftn(c, axes=axes), dt)
    if dg.backend() == "cpu" and dt == np.complex128:
        for axis in (0, 1):
            np.testing.assert_array_equal(dg.fft.fft(dg.asarray(a), axis=axis).get(),
                                          np.fft.fft(a, axis=axis))
            np.testing.assert_array_equal(dg.fft.rfft(dg.asarray(a.real), axis=axis).get(),
                                          np.fft.rfft(a.real, axis=axis))


def test_more_than_three_axes(ndev):
    a = data((3, 4, 2, 5, 3), np.complex128, 6)
    check(dg.fft.fftn(dg.asarray(a)), np.fft.fftn(a), np.complex128)
    check(dg.fft.rfftn(dg.asarray(a.real)), np.fft.rfftn(a.real), np.float64)
    c = np.fft.rfftn(a.real)
    axes = tuple(range(a.ndim))
    check(dg.fft.irfftn(dg.asarray(c), s=a.shape, axes=axes),
          np.fft.irfftn(c, s=a.shape, axes=axes), np.float64)


@pytest.mark.parametrize("dt", [np.float32, np.complex128])
def test_2d_split_slab(ndev, dt):
    """fft2 of a matrix split by rows, columns and 2-d blocks: the slab path
    (the axis held whole first, one reshard for the other)."""
    a = data((16, 12), dt, 7)
    for lname, m in layouts2(a.shape, ndev):
        d = dg.distributed_array(a, m)
        for f in ("fft2", "ifft2"):
            for s in (None, (10, 16)):
                check(getattr(dg.fft, f)(d, s=s), getattr(np.fft, f)(a, s=s), dt)
        if np.dtype(dt).kind == "f":
            check(dg.fft.rfft2(d), np.fft.rfft2(a), dt)
            c = np.fft.rfft2(a)
            check(dg.fft.irfft2(dg.distributed_array(c, None), s=a.shape),
                  np.fft.irfft2(c, s=a.shape), dt)


def test_out(ndev):
    a = data((4, 6), np.complex128, 8)
    out = dg.empty((4, 6), dtype=np.complex128)
    r = dg.fft.fft(dg.asarray(a), out=out)
    assert r is out
    check(out, np.fft.fft(a), np.complex128)
    host = np.empty((4, 6), np.complex128)
    assert dg.fft.fft2(dg.asarray(a), out=host) is host
    np.testing.assert_allclose(host, np.fft.fft2(a), atol=1e-13)
    ro = dg.empty((4, 4), dtype=np.complex128)
    check(dg.fft.rfft(dg.asarray(a.real), out=ro), np.fft.rfft(a.real), np.float64)
    with pytest.raises(ValueError, match="wrong shape"):
        dg.fft.fft(dg.asarray(a), out=dg.empty((4, 5), dtype=np.complex128))
    # hfft takes out= and, like NumPy, does not write it
    o = dg.zeros((4, 10))
    check(dg.fft.hfft(dg.asarray(a), out=o), np.fft.hfft(a), np.complex128)
    assert float(abs(o).max()) == 0


def test_errors_and_empty(ndev):
    h = data((4, 6), np.complex128)
    a = dg.asarray(h)
    for f in (dg.fft.fft, dg.fft.ifft, dg.fft.rfft, dg.fft.irfft):
        x = dg.asarray(h.real) if f is dg.fft.rfft else a
        with pytest.raises(ValueError, match="Invalid number of FFT data points"):
            f(x, n=0)
        with pytest.raises(ValueError, match="Invalid norm value"):
            f(x, norm="sideways")
        with pytest.raises(np.exceptions.AxisError):
            f(x, axis=2)
    with pytest.raises(TypeError):
        dg.fft.rfft(a)
    with pytest.raises(ValueError, match="Shape and axes"):
        dg.fft.fftn(a, s=(2, 3), axes=(0,))
    for shape in ((0, 5), (3, 0)):
        e = np.zeros(shape, np.complex128)
        for f in ("fft", "ifft"):
            want = getattr(np.fft, f)(e, n=4)
            check(getattr(dg.fft, f)(dg.asarray(e), n=4), want, np.complex128)
        check(dg.fft.fft2(dg.asarray(e), s=(2, 3)), np.fft.fft2(e, s=(2, 3)), np.complex128)


def test_freqs_and_shifts(ndev):
    for n in (1, 2, 7, 8):
        for d in (1.0, 0.25):
            check(dg.fft.fftfreq(n, d), np.fft.fftfreq(n, d), np.float64)
            check(dg.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), np.float64)
    with pytest.raises(ValueError, match="integer"):
        dg.fft.fftfreq(2.5)
    x = data((5, 6, 3), np.float64, 9)
    for axes in (None, 0, (1,), (0, 2), (-1, 0)):
        for f in ("fftshift", "ifftshift"):
            np.testing.assert_array_equal(getattr(dg.fft, f)(dg.asarray(x), axes=axes).get(),
                                          getattr(np.fft, f)(x, axes=axes))


def test_numpy_dispatch_and_namespace():
    h = data((4, 6), np.complex128)
    r = np.fft.fft(dg.asarray(h))
    assert isinstance(r, dg.DistributedArray)
    assert dg.fft.fft is _fft.fft
    assert isinstance(np.fft.rfft2(dg.asarray(h.real)), dg.DistributedArray)


def test_no_leaks(no_leak):
    h = data((16, 12), np.complex128)
    a = dg.asarray(h)
    r = dg.asarray(h.real)
    for _ in range(3):
        dg.fft.fft2(a)
        dg.fft.irfftn(dg.fft.rfftn(r))
        dg.fft.fft(a, n=20, axis=0)
