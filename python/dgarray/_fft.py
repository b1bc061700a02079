"""dgarray.fft on the devices: fft, ifft, rfft, irfft, hfft, ihfft, fft2,
ifft2, rfft2, irfft2, fftn, ifftn, rfftn, irfftn, fftfreq, rfftfreq,
fftshift, ifftshift, with NumPy 2's signatures (n / s, axis / axes, norm,
out), results and dtypes (float32 in, complex64 out).

Each transform is one call of the core (src/core/dg_fft_run.c), which runs
the backend's ``fft`` slot (NumPy's own pocketfft loops on the CPU backend,
so float64 and complex128 results are NumPy's bits; cuFFT on GPUs, plans
cached) on every
chunk that holds the transformed axes whole, and reshards the array by the
planner where an axis is split (a slab decomposition for fft2 / fftn: the
axes held whole are transformed first, then one reshard makes the others
whole).  The result keeps the layout of the last step; nothing moves back.
A split 1-d transform (the only axis of the array, split over devices) is
resharded onto one device and transformed there: the four-step method is
not built yet.

Here are NumPy's rules: the length n along each axis (input cut or
zero-padded to it first), the norm factor (computed in the input's real
precision as NumPy does and folded into the last step, so results agree
with NumPy's to rounding where several axes are transformed), the output
dtype and shape, and errors.  Float32 and complex64 inputs are transformed
in single precision (as cuFFT and CuPy do); NumPy's loop selection runs them
in double and rounds the result, so those agree with NumPy's to float32
rounding (about 1 ulp of the largest output), not bit for bit.
"""
import functools
import operator

import numpy

from . import _core
from ._arrayapi import to_device
from ._creation import arange, asarray, zeros
from ._lapack import operand
from ._linalg import _put
from ._shape import concatenate, roll

_DA = _core.DistributedArray
C2C, R2C, C2R = 0, 1, 2
_MAXRANK = 3


def available():
    """True where the backend runs FFTs."""
    return _core._has_slot("fft")


if _core.backend() == "cpu":
    try:
        _core._set_cpu_fft(True)
    except (ImportError, AttributeError, TypeError, RuntimeError):
        pass  # no pocketfft loops: dgarray.fft stays NumPy's fallback


def _operand(a):
    return operand(a, "fft")


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swap_direction(norm):
    try:
        return _SWAP[norm]
    except KeyError:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".') from None


def _factor(n, norm, is_forward, rdt):
    """NumPy's normalisation factor of one axis of n points, in the real
    dtype rdt."""
    if not is_forward:
        norm = _swap_direction(norm)
    if norm is None or norm == "backward":
        return 1.0
    if norm == "ortho":
        return float(numpy.reciprocal(numpy.sqrt(n, dtype=rdt)))
    if norm == "forward":
        return float(numpy.reciprocal(n, dtype=rdt))
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                     '"forward".')


def _fit(a, axis, m):
    """a with `axis` cut to its first m points (a view) or zero-padded to m."""
    cur = a.shape[axis]
    if cur == m:
        return a
    key = (slice(None),) * axis
    if cur > m:
        return a[key + (slice(0, m),)]
    shape = a.shape[:axis] + (m,) + a.shape[axis + 1:]
    z = zeros(shape, dtype=a.dtype)
    z[key + (slice(0, cur),)] = a
    return z


def _dtypes(a, kind):
    """(input dtype the transform reads, output dtype) for a of a's dtype."""
    return _dtypes_of(numpy.dtype(a.dtype), kind)[:2]


@functools.lru_cache(maxsize=64)
def _dtypes_of(dt, kind):
    """(input dtype, output dtype, the output's real dtype) of a transform
    `kind` of dtype dt, computed once per pair (NumPy's result_type takes
    microseconds, a fair part of a small transform's call)."""
    rdt = numpy.result_type(dt.type(0).real.dtype, 1.0)
    cdt = numpy.result_type(dt, 1j)
    if kind == C2C:
        idt, odt = cdt, cdt
    elif kind == R2C:
        if dt.kind == "c":
            raise TypeError(f"ufunc 'rfft_n_even' did not contain a loop with signature "
                            f"matching types ({dt!r}, dtype('float64')) -> None")
        idt, odt = rdt, cdt
    else:
        idt, odt = cdt, rdt
    return idt, odt, numpy.dtype(odt).type(0).real.dtype


def _transform(a, kind, forward, axes, ns, norm, out=None):
    """The transform over `axes` (NumPy's order) of lengths ns, the norm
    factors of every axis folded into one scale: one core call per group of
    at most three distinct axes."""
    a = _operand(a)
    axes = [operator.index(ax) for ax in axes]
    nd = a.ndim
    axes = [ax + nd if -nd <= ax < 0 else ax for ax in axes]
    for ax in axes:
        if not 0 <= ax < nd:
            raise numpy.exceptions.AxisError(ax - nd if ax < 0 else ax, nd)
    for n in ns:
        if n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    idt, odt, rdt = _dtypes_of(numpy.dtype(a.dtype), kind)
    is_forward = forward if kind == C2C else kind == R2C
    if a.size == 0 or any(a.shape[ax] == 0 for ax in axes):
        return _on_host_empty(a, kind, forward, axes, ns, norm, out)
    groups = _groups(list(zip(axes, ns)), kind)
    x = a if a.dtype == idt else a.astype(idt)
    for gi, group in enumerate(groups):
        first, last = gi == 0, gi == len(groups) - 1
        gkind = C2C
        if (kind == R2C and first) or (kind == C2R and last):
            gkind = kind
        # cut or pad every axis of the group to what the transform reads
        for j, (ax, n) in enumerate(group):
            x = _fit(x, ax, n // 2 + 1 if (gkind == C2R and j == len(group) - 1) else n)
        scale = 1.0
        for _, n in group:
            scale *= _factor(n, norm, is_forward, rdt)
        fwd = int(bool(forward)) if gkind == C2C else int(gkind == R2C)
        x = _core._fft(x, gkind, fwd, scale, tuple(ax for ax, _ in group),
                       tuple(int(n) for _, n in group))
    if x.dtype != odt:
        x = x.astype(odt)
    if out is not None:
        return _into(x, out)
    return x


def _groups(pairs, kind):
    """The (axis, n) pairs in core calls of at most three distinct axes, each
    listed in NumPy's order: fftn and rfftn transform the last listed first
    (so the groups are cut from the end; rfftn's half axis leads the first
    call), irfftn in the listed order (its half axis ends the last call)."""
    seq = pairs if kind == C2R else pairs[::-1]
    groups, cur = [], []
    for p in seq:
        if p[0] in [q[0] for q in cur] or len(cur) == _MAXRANK:
            groups.append(cur)
            cur = []
        cur.append(p)
    groups.append(cur)
    return groups if kind == C2R else [g[::-1] for g in groups]


def _on_host_empty(a, kind, forward, axes, ns, norm, out):
    """The result for arrays with no element: NumPy on an empty host array of
    a's shape (no data to move)."""
    h = numpy.empty(a.shape, a.dtype)
    for ax, n in zip(axes, ns):
        if kind == C2C:
            h = (numpy.fft.fft if forward else numpy.fft.ifft)(h, n, ax, norm)
        elif kind == R2C:
            h = numpy.fft.rfft(h, n, ax, norm)
            kind = C2C
            forward = True
        else:
            h = numpy.fft.irfft(h, n, ax, norm) if ax == axes[-1] else numpy.fft.ifft(
                h, n, ax, norm)
    res = asarray(h)
    return _into(res, out) if out is not None else res


def _into(res, out):
    """res written into out (NumPy's shape check first)."""
    if getattr(out, "shape", None) is not None and tuple(out.shape) != res.shape:
        raise ValueError("output array has wrong shape.")
    return _put(res, out, "fft")


def _axis_n(a, n, axis, default):
    a = _operand(a)
    ax = operator.index(axis)
    if not -a.ndim <= ax < a.ndim:
        raise numpy.exceptions.AxisError(ax, a.ndim)
    if n is None:
        n = default(a.shape[ax])
    return a, ax, operator.index(n)


# ---- 1-d ----------------------------------------------------------------------------------------

def fft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-d discrete Fourier transform along `axis` (NumPy's numpy.fft.fft),
    on the devices; see dgarray._fft."""
    a, ax, n = _axis_n(a, n, axis, lambda m: m)
    return _transform(a, C2C, True, [ax], [n], norm, out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of fft (NumPy's numpy.fft.ifft), on the devices."""
    a, ax, n = _axis_n(a, n, axis, lambda m: m)
    return _transform(a, C2C, False, [ax], [n], norm, out)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of real input, n // 2 + 1 points (numpy.fft.rfft), on
    the devices."""
    a, ax, n = _axis_n(a, n, axis, lambda m: m)
    return _transform(a, R2C, True, [ax], [n], norm, out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of rfft: n real points (default 2 (m - 1)), numpy.fft.irfft,
    on the devices."""
    a, ax, n = _axis_n(a, n, axis, lambda m: (m - 1) * 2)
    return _transform(a, C2R, False, [ax], [n], norm, out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of a Hermitian-symmetric signal (numpy.fft.hfft: irfft of
    the conjugate with the norm's direction swapped; like NumPy, it does not
    write into `out`)."""
    a, ax, n = _axis_n(a, n, axis, lambda m: (m - 1) * 2)
    return _transform(numpy.conjugate(a), C2R, False, [ax], [n], _swap_direction(norm))


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft (numpy.fft.ihfft: the conjugate of rfft with the
    norm's direction swapped)."""
    a, ax, n = _axis_n(a, n, axis, lambda m: m)
    res = numpy.conjugate(_transform(a, R2C, True, [ax], [n], _swap_direction(norm)))
    return _into(res, out) if out is not None else res


# ---- n-d ----------------------------------------------------------------------------------------

def _cook(a, s, axes, invreal=False):
    """NumPy's _cook_nd_args: the lengths and axes of an n-d transform."""
    shapeless = s is None
    if s is None:
        s = list(a.shape) if axes is None else [a.shape[operator.index(ax)] for ax in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            import warnings
            warnings.warn("`axes` should not be `None` if `s` is not `None`. This will "
                          "raise an error in a future version of NumPy, which will then "
                          "use the whole input array along the axes in `s`.",
                          DeprecationWarning, stacklevel=4)
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    s = [a.shape[ax] if n == -1 else operator.index(n) for n, ax in zip(s, axes)]
    return s, axes


def _nd(a, s, axes, kind, forward, norm, out):
    a = _operand(a)
    s, axes = _cook(a, s, axes, invreal=kind == C2R)
    if not axes:
        return a.astype(_dtypes(a, kind)[1]) if out is None else _into(a, out)
    return _transform(a, kind, forward, axes, s, norm, out)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-d discrete Fourier transform (numpy.fft.fftn), on the devices:
    axes held whole where they are, a reshard (slab decomposition) for the
    others."""
    return _nd(a, s, axes, C2C, True, norm, out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of fftn (numpy.fft.ifftn), on the devices."""
    return _nd(a, s, axes, C2C, False, norm, out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-d transform of real input (numpy.fft.rfftn), on the devices."""
    return _nd(a, s, axes, R2C, True, norm, out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of rfftn (numpy.fft.irfftn), on the devices."""
    return _nd(a, s, axes, C2R, False, norm, out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """fftn over two axes (numpy.fft.fft2)."""
    return _nd(a, s, axes, C2C, True, norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """ifftn over two axes (numpy.fft.ifft2)."""
    return _nd(a, s, axes, C2C, False, norm, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """rfftn over two axes (numpy.fft.rfft2)."""
    return _nd(a, s, axes, R2C, True, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """irfftn over two axes (numpy.fft.irfft2)."""
    return _nd(a, s, axes, C2R, False, norm, out)


# ---- frequencies and shifts ---------------------------------------------------------------------

def _freqs(res, dtype, device):
    """Sample frequencies (float64) in `dtype` (the array API's keyword; a
    real floating dtype) on the devices of `device` (None: the default
    layout)."""
    if dtype is not None:
        dt = numpy.dtype(dtype)
        if dt.kind != "f":
            raise ValueError(f"dtype must be a real floating-point data type, not {dt}")
        res = res.astype(dt, copy=False)
    return res if device is None else to_device(res, device)


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of an n-point transform with spacing d
    (numpy.fft.fftfreq), made on the devices."""
    if not isinstance(n, (int, numpy.integer)):
        raise ValueError("n should be an integer")
    val = 1.0 / (n * d)
    nn = (n - 1) // 2 + 1
    res = concatenate([arange(0, nn, dtype=int), arange(-(n // 2), 0, dtype=int)])
    return _freqs(res * val, dtype, device)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of rfft (numpy.fft.rfftfreq), on the devices."""
    if not isinstance(n, (int, numpy.integer)):
        raise ValueError("n should be an integer")
    val = 1.0 / (n * d)
    return _freqs(arange(0, n // 2 + 1, dtype=int) * val, dtype, device)


def _shift(x, axes, sign):
    x = _operand(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, (int, numpy.integer)):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


def fftshift(x, axes=None):
    """The zero frequency moved to the centre (numpy.fft.fftshift: a roll on
    the devices)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift (numpy.fft.ifftshift)."""
    return _shift(x, axes, -1)


FUNCTIONS = {"fft": fft, "ifft": ifft, "rfft": rfft, "irfft": irfft, "hfft": hfft,
             "ihfft": ihfft, "fft2": fft2, "ifft2": ifft2, "rfft2": rfft2, "irfft2": irfft2,
             "fftn": fftn, "ifftn": ifftn, "rfftn": rfftn, "irfftn": irfftn,
             "fftfreq": fftfreq, "rfftfreq": rfftfreq, "fftshift": fftshift,
             "ifftshift": ifftshift}


def numpy_functions():
    """numpy.fft's functions -> these, for __array_function__."""
    return {getattr(numpy.fft, name): f for name, f in FUNCTIONS.items()
            if hasattr(numpy.fft, name)}


def install(ns):
    """Puts these functions in the dgarray.fft namespace (where the backend
    has FFTs; else NumPy's fallback stays)."""
    if not available():
        return
    for name, f in FUNCTIONS.items():
        setattr(ns, name, f)
