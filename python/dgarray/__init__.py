"""dgarray: a NumPy-compatible array sharded over every GPU of a host.

``import dgarray as np`` and the arrays a program creates live in chunks on
all devices (GPUs, or virtual CPU devices where there is none); NumPy ufuncs
and operators run where the data lives.  Index maps follow CuPy's
``cupyx.distributed.array``: ``{device: key or [key, ...]}``.
"""
import builtins as _builtins
import collections as _collections
import math as _math
import operator as _operator
import sys as _sys

import numpy as _numpy

from . import _core
from ._core import DeviceError, DistributedArray, OutOfDeviceMemoryError, backend
from . import _impl
from . import _linalg
from . import _fallback
from ._fallback import FallbackWarning

__version__ = "0.1.0"

# ---- modes ---------------------------------------------------------------------------

REPLICA = "replica"
SUM = "sum"
PROD = "prod"
MAX = "max"
MIN = "min"
_MODES = (REPLICA, SUM, PROD, MAX, MIN)


def _mode_number(mode):
    if isinstance(mode, str) and mode.lower() in _MODES:
        return _MODES.index(mode.lower())
    raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(map(repr, _MODES))}")


# ---- configuration -----------------------------------------------------------------------

class _Config:
    """Process-wide settings.

    min_split_bytes: arrays smaller than this live on one device when no
    index map is given (default 1 MiB; DGARRAY_MIN_SPLIT_BYTES sets it at start).

    peer_read_bytes: an operand region of at most this many bytes held on
    another device that the computing device can address (NVLink peers; the
    CPU backend's virtual devices) is read there in place instead of being
    moved (default 256 KiB; DGARRAY_PEER_READ_BYTES sets it at start).  A
    reduction's partials up to this many bytes (or 1/16 of the bytes
    reduced) are stacked on one device and folded at once.

    allow_tf32: float32 matrix products may use TF32 tensor cores (default off).

    progress: copies between host arrays and the devices larger than a
    piece (512 MiB) run piece by piece, Ctrl-C stopping them between pieces;
    True (default): one that has run for a second shows how far it is on
    sys.stderr, a line rewritten in place; False: never; "always": a line
    after every piece.

    fallback: what a NumPy function dgarray does not implement does: "warn"
    (default: it runs through NumPy on the gathered data, with a
    dgarray.FallbackWarning naming it, and returns DistributedArrays),
    "silent" (the same without the warning) or "raise" (TypeError).
    """

    @property
    def min_split_bytes(self):
        return _core._get_min_split_bytes()

    @min_split_bytes.setter
    def min_split_bytes(self, value):
        _core._set_min_split_bytes(_operator.index(value))

    @property
    def peer_read_bytes(self):
        return _core._get_peer_read_bytes()

    @peer_read_bytes.setter
    def peer_read_bytes(self, value):
        _core._set_peer_read_bytes(_operator.index(value))

    @property
    def allow_tf32(self):
        """float32 matrix products may use TF32 tensor cores (faster, 10-bit
        mantissa products); off by default."""
        return _linalg.settings.allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        _linalg.settings.set_allow_tf32(value)

    @property
    def progress(self):
        return _core._get_progress()

    @progress.setter
    def progress(self, value):
        _core._set_progress(value)

    @property
    def fallback(self):
        return _fallback.mode()

    @fallback.setter
    def fallback(self, value):
        _fallback.set_mode(value)

    def __repr__(self):
        return (f"dgarray.config(min_split_bytes={self.min_split_bytes}, "
                f"peer_read_bytes={self.peer_read_bytes}, allow_tf32={self.allow_tf32}, "
                f"progress={self.progress!r}, fallback={self.fallback!r})")


config = _Config()

Device = _collections.namedtuple("Device", "id backend name total_memory free_memory")


def devices():
    """The devices arrays live on: a list of Device(id, backend, name, ...)."""
    return [Device(*t) for t in _core._devices_info()]


class MemoryPool:
    """The device memory dgarray holds, summed over its devices: CuPy's
    ``MemoryPool`` calls for it.  Released memory stays in the pools for
    reuse (the CUDA backend keeps freed blocks, and recent large ones for
    allocations of the same size); ``free_all_blocks()`` hands it back to the
    devices, for another library or process."""

    def used_bytes(self):
        """Bytes allocated to live arrays and temporaries (after all work)."""
        return _builtins.sum(_core._bytes_in_use())

    def total_bytes(self):
        """Bytes the pools hold: allocated, or kept for reuse."""
        return _builtins.max(_builtins.sum(_core._bytes_held()), self.used_bytes())

    def free_bytes(self):
        """Bytes the pools hold that nothing uses."""
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self, stream=None):
        """Waits for all work, then hands every unused block back to its
        device.  Arrays keep their memory and values."""
        if stream is not None:
            raise ValueError("dgarray's pools are not per stream: call free_all_blocks() "
                             "without one")
        _core._trim()

    def __repr__(self):
        return (f"<dgarray.MemoryPool: {self.used_bytes()} bytes used, "
                f"{self.total_bytes()} held>")


_memory_pool = MemoryPool()


def get_default_memory_pool():
    """The pool of device memory over all devices (as CuPy's function of the
    same name, whose pool is one device's)."""
    return _memory_pool


# ---- creation ---------------------------------------------------------------------------

def _layout_for(shape, index_map):
    return None if index_map is None else _impl.normalize_index_map(shape, index_map)


def _shape_tuple(shape):
    """A shape argument as NumPy reads it (an int or a sequence of ints), with
    NumPy's TypeErrors."""
    if hasattr(shape, "__index__"):
        return (_operator.index(shape),)
    if shape is None:
        raise TypeError("Use () not None as shape arguments")
    try:
        items = tuple(shape)
    except TypeError:
        raise TypeError(f"expected a sequence of integers or a single integer, "
                        f"got '{shape!r}'") from None
    return tuple(_operator.index(n) for n in items)


def distributed_array(array, index_map=None, mode=REPLICA):
    """A DistributedArray holding ``array``'s values, laid out as ``index_map``
    says ({device: key or [key, ...]}); no map: the default layout (the first
    axis split in near-equal blocks over all devices).  In a mode other than
    REPLICA, the first chunk holding an element gets its value and the others
    the mode's identity (CuPy's rule), so the array holds ``array``'s values."""
    m = _mode_number(mode)
    if isinstance(array, DistributedArray):
        a = array
        if index_map is not None:
            a = a.reshard(index_map)
        if a.mode != _MODES[m]:
            a = a.change_mode(_MODES[m])
        return a
    host = _numpy.asarray(array)
    from . import _opmodes
    return _opmodes.from_host(host, _layout_for(host.shape, index_map), m)


def asarray(a, dtype=None, order=None, *, index_map=None, copy=None):
    """``a`` as a DistributedArray (no copy when it already is one of that dtype
    and layout)."""
    if isinstance(a, DistributedArray):
        if dtype is not None and _numpy.dtype(dtype) != a.dtype:
            a = a.astype(dtype)
        elif copy:
            a = a.copy()
        if index_map is not None:
            a = a.reshard(index_map)
        return a
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested: data "
                         "from the host is always copied to the devices (copy=False is "
                         "possible only for a DistributedArray)")
    host = _numpy.asarray(a, dtype=dtype)
    return _core._from_host(host, _layout_for(host.shape, index_map), 0, None)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, index_map=None):
    """A new DistributedArray from any array-like (always a copy unless copy=False)."""
    if isinstance(obj, DistributedArray):
        a = obj.astype(dtype if dtype is not None else obj.dtype, copy=bool(copy))
        if a.ndim < ndmin:
            a = a.reshape((1,) * (ndmin - a.ndim) + a.shape)
        return a.reshard(index_map) if index_map is not None else a
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested: data "
                         "from the host is always copied to the devices")
    host = _numpy.array(obj, dtype=dtype, ndmin=ndmin)
    return _core._from_host(host, _layout_for(host.shape, index_map), 0, None)


def empty(shape, dtype=float, order="C", *, index_map=None):
    """A new array of uninitialised values."""
    shape = _shape_tuple(shape)
    return _core._empty(shape, _numpy.dtype(dtype), _layout_for(shape, index_map), 0)


def full(shape, fill_value, dtype=None, order="C", *, index_map=None):
    """A new array with every element ``fill_value``."""
    shape = _shape_tuple(shape)
    if dtype is None:
        dtype = _numpy.array(fill_value).dtype
    fill = _numpy.asarray(fill_value)
    if fill.ndim:
        host = _numpy.full(shape, fill, dtype=dtype)
        return _core._from_host(host, _layout_for(shape, index_map), 0, None)
    a = _core._empty(shape, _numpy.dtype(dtype), _layout_for(shape, index_map), 0)
    _core._fill(a, 0, fill_value if isinstance(fill_value, (int, float, complex))
                else fill, None, 0, None)
    return a


def _check_order(order):
    """NumPy's error for an order a new array cannot have."""
    if order is not None and order not in ("C", "c"):
        _numpy.zeros(0, order=order)


def zeros(shape, dtype=float, order="C", *, index_map=None):
    """A new array of zeros."""
    _check_order(order)
    return full(shape, 0, dtype, index_map=index_map)


def ones(shape, dtype=float, order="C", *, index_map=None):
    """A new array of ones."""
    _check_order(order)
    return full(shape, 1, dtype, index_map=index_map)


def _like_layout(a, shape):
    if shape is None or _shape_tuple(shape) == a.shape:
        return a.shape, a._layout()
    return _shape_tuple(shape), None


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, index_map=None):
    """An uninitialised array with the prototype's shape, dtype and layout."""
    if not isinstance(prototype, DistributedArray):
        prototype = _numpy.asarray(prototype)
        return empty(shape if shape is not None else prototype.shape,
                     dtype or prototype.dtype, index_map=index_map)
    shp, layout = _like_layout(prototype, shape)
    if index_map is not None:
        layout = _impl.normalize_index_map(shp, index_map)
    dt = _numpy.dtype(dtype) if dtype is not None else prototype.dtype
    return _core._empty(shp, dt, layout, 0)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
              index_map=None):
    """An array like ``a`` with every element ``fill_value``."""
    out = empty_like(a, dtype=dtype, shape=shape, index_map=index_map)
    fill = _numpy.asarray(fill_value)
    if fill.ndim:
        host = _numpy.broadcast_to(fill, out.shape).astype(out.dtype)
        return _core._from_host(host, out._layout(), 0, None)
    _core._fill(out, 0, fill_value if isinstance(fill_value, (int, float, complex))
                else fill, None, 0, None)
    return out


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, index_map=None):
    """An array of zeros like ``a``."""
    return full_like(a, 0, dtype=dtype, shape=shape, index_map=index_map)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, index_map=None):
    """An array of ones like ``a``."""
    return full_like(a, 1, dtype=dtype, shape=shape, index_map=index_map)


def arange(start, stop=None, step=None, dtype=None, *, index_map=None):
    """Evenly spaced values in [start, stop), computed on the devices as
    NumPy's arange computes them."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError("division by zero")
    # NumPy's own result dtype, from a one-element range whose bounds have the
    # types of start, stop and step
    dt = _numpy.arange(start, (stop - stop) + start + step, step, dtype=dtype).dtype
    n = _math.ceil((stop - start) / step)
    n = int(n) if int(n) > 0 else 0
    if n * dt.itemsize > _sys.maxsize:
        raise ValueError("Maximum allowed size exceeded")
    if dt.kind in "c?" or dt == _numpy.float16:
        host = _numpy.arange(start, stop, step, dtype=dt)
        return _core._from_host(host, _layout_for(host.shape, index_map), 0, None)
    a = _core._empty((n,), dt, _layout_for((n,), index_map), 0)
    if n:
        first_two = _numpy.array([start, start + step], dtype=object).astype(dt)
        delta = first_two[1] - first_two[0]
        _core._fill(a, 1, first_two[0], delta, 0, None)
    return a


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             index_map=None):
    """``num`` evenly spaced samples over [start, stop], as NumPy computes them."""
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if _numpy.ndim(start) or _numpy.ndim(stop) or axis != 0:
        host = _numpy.linspace(start, stop, num, endpoint, retstep, dtype, axis)
        if retstep:
            return _core._from_host(host[0], None, 0, None), host[1]
        return _core._from_host(host, _layout_for(host.shape, index_map), 0, None)
    div = (num - 1) if endpoint else num
    dt = _numpy.result_type(start, stop, float(num))
    if dtype is None:
        dtype = dt
    delta = stop - start
    y = arange(0, num, dtype=dt, index_map=index_map)
    if div > 0:
        step = delta / div
        if step == 0:
            y = (y / div) * delta
        else:
            y = y * step
    else:
        step = _numpy.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        _core._fill(y, 0, _numpy.asarray(stop, dtype=y.dtype), None, 0,
                    ((num - 1, num, 1),))
    if _numpy.dtype(dtype).kind in "iu":
        y = _numpy.floor(y)
    if _numpy.dtype(dtype) != y.dtype:
        y = y.astype(dtype)
    if retstep:
        return y, step
    return y


def eye(N, M=None, k=0, dtype=float, order="C", *, index_map=None):
    """A 2-d array with ones on the k-th diagonal and zeros elsewhere."""
    N = _operator.index(N)
    M = N if M is None else _operator.index(M)
    a = _core._empty((N, M), _numpy.dtype(dtype), _layout_for((N, M), index_map), 0)
    _core._fill(a, 2, 1, None, _operator.index(k), None)
    return a


def identity(n, dtype=float, *, index_map=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype, index_map=index_map)


def copy(a, order="K", subok=False):
    """A copy of ``a`` with the same layout."""
    if isinstance(a, DistributedArray):
        return a.copy()
    return asarray(_numpy.array(a))


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    """``a``'s values as a NumPy array on the host."""
    if isinstance(a, DistributedArray):
        return a.get(out=out)
    return _numpy.asarray(a)


# ---- reductions ---------------------------------------------------------------------------

from ._reductions import (all, amax, amin, any, argmax, argmin, cumprod, cumsum,  # noqa: E402
                          max, mean, min, nanmax, nanmean, nanmin, nanprod, nansum, prod,
                          ptp, std, sum, var)


# ---- matrix products -------------------------------------------------------------------------

from ._linalg import (dot, inner, make_2d_index_map, matmul, outer, tensordot,  # noqa: E402
                      vdot)

if hasattr(_numpy, "vecdot"):
    from ._linalg import matvec, vecdot, vecmat  # noqa: E402,F401

# ---- indexing, shapes, joining, sorting ------------------------------------------------------

from ._indexing import (argwhere, compress, flatnonzero, nonzero, put, take,  # noqa: E402
                        where)
from ._shape import (array_split, astype, atleast_1d, atleast_2d, atleast_3d,  # noqa: E402
                     broadcast_arrays, broadcast_to, clip, column_stack, concatenate, diff,
                     dstack, expand_dims, flip, fliplr, flipud, hsplit, hstack,
                     matrix_transpose, moveaxis, ravel, repeat, reshape, roll, rollaxis, sort,
                     argsort, split, squeeze, stack, swapaxes, tile, transpose, unique,
                     unique_values, vsplit, vstack)
from ._shape import round_ as round, round_ as around  # noqa: E402,A001


# ---- NumPy's names: ufuncs dispatch to DistributedArray.__array_ufunc__ -------------------

def _forward_numpy_names():
    g = globals()
    for name in dir(_numpy):
        obj = getattr(_numpy, name)
        if isinstance(obj, _numpy.ufunc) and name not in g:
            g[name] = obj
    for name in ("pi", "e", "inf", "nan", "newaxis", "euler_gamma", "dtype", "finfo",
                 "iinfo", "bool_", "bool", "int8", "int16", "int32", "int64", "uint8",
                 "uint16", "uint32", "uint64", "float16", "float32", "float64",
                 "complex64", "complex128", "intp", "uintp", "integer", "floating",
                 "complexfloating", "number", "generic", "result_type", "can_cast",
                 "promote_types", "errstate", "printoptions", "set_printoptions",
                 "get_printoptions"):
        if hasattr(_numpy, name) and name not in g:
            g[name] = getattr(_numpy, name)


_forward_numpy_names()


# ---- random numbers, Jupyter, NumPy's other names, the array API ---------------------------

from . import random  # noqa: E402
from ._display import show_layout  # noqa: E402
from . import _namespace  # noqa: E402

from . import _arrayapi  # noqa: E402
from ._arrayapi import DeviceSet, __array_namespace_info__  # noqa: E402,F401

ndarray = DistributedArray
linalg = _namespace.namespace("linalg")
fft = _namespace.namespace("fft")
emath = _namespace.namespace("emath")
__array_api_version__ = _numpy.__array_api_version__


def __getattr__(name):
    """NumPy's other names: constants, dtypes and classes as NumPy's; functions
    that take and return DistributedArrays, through NumPy's fallback
    (dgarray.config.fallback) where dgarray does not implement them."""
    import sys
    return _namespace.module_getattr(sys.modules[__name__], name)


def __dir__():
    import sys
    return _namespace.module_dir(sys.modules[__name__])


_arrayapi.add_device_keyword(_sys.modules[__name__])  # device= on the creation functions
