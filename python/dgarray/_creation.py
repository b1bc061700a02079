"""Creation functions: DistributedArrays from host data, of one value, of
ranges and of identity matrices, in the layout an index map names (the
default layout without one); and the modes.  Near the bottom of the
package (only the binding and _index_map are below): the modules above
create arrays through these."""
import math as _math
import os as _os
import operator as _operator
import sys as _sys

import numpy as _numpy

from . import _core
from ._core import DistributedArray
from ._index_map import layout_for

# ---- modes ---------------------------------------------------------------------------

REPLICA = "replica"
SUM = "sum"
PROD = "prod"
MAX = "max"
MIN = "min"
_MODES = (REPLICA, SUM, PROD, MAX, MIN)


def mode_number(mode):
    """The number of a mode name (any case), as the binding numbers modes."""
    if isinstance(mode, str) and mode.lower() in _MODES:
        return _MODES.index(mode.lower())
    raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(map(repr, _MODES))}")


def mode_identity(mode, dtype):
    """The identity of op mode number `mode` (SUM, PROD, MAX, MIN) in dtype,
    a 0-d NumPy array: what every chunk but the first holding an element
    gets (CuPy's rule)."""
    dt = _numpy.dtype(dtype)
    name = _MODES[mode]
    if name == SUM:
        return _numpy.zeros((), dt)
    if name == PROD:
        return _numpy.ones((), dt)
    high = name == MIN
    if dt.kind == "b":
        return _numpy.array(high, dt)
    if dt.kind in "iu":
        info = _numpy.iinfo(dt)
        return _numpy.array(info.max if high else info.min, dt)
    return _numpy.array(_numpy.inf if high else -_numpy.inf, dt)


# ---- creation ---------------------------------------------------------------------------

def shape_tuple(shape):
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
    m = mode_number(mode)
    if isinstance(array, DistributedArray):
        a = array
        if index_map is not None:
            a = a.reshard(index_map)
        if a.mode != _MODES[m]:
            a = a.change_mode(_MODES[m])
        return a
    host = _numpy.asarray(array)
    a = _core._from_host(host, layout_for(host.shape, index_map), m, None)
    if m and a.size:
        _core._keep_first(a, mode_identity(m, a.dtype))
    return a


def asarray(a, dtype=None, order=None, *, index_map=None, copy=None):
    """``a`` as a DistributedArray (no copy when it already is one of that dtype
    and layout).  Another library's array that only DLPack or the CUDA array
    interface reads (CuPy, PyTorch, JAX, Numba, ...) is copied by
    from_dlpack, device to device."""
    if _foreign(a):
        a = from_dlpack(a, copy=False if copy is False else None)
        copy = None
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
    return _core._from_host(host, layout_for(host.shape, index_map), 0, None)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, index_map=None):
    """A new DistributedArray from any array-like (always a copy unless copy=False)."""
    if _foreign(obj):
        obj = from_dlpack(obj, copy=False if copy is False else None)
        copy = False  # from_dlpack copied it
    if isinstance(obj, DistributedArray):
        a = obj.astype(dtype if dtype is not None else obj.dtype, copy=bool(copy))
        if a.ndim < ndmin:
            a = a.reshape((1,) * (ndmin - a.ndim) + a.shape)
        return a.reshard(index_map) if index_map is not None else a
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested: data "
                         "from the host is always copied to the devices")
    host = _numpy.array(obj, dtype=dtype, ndmin=ndmin)
    return _core._from_host(host, layout_for(host.shape, index_map), 0, None)


def empty(shape, dtype=float, order="C", *, index_map=None):
    """A new array of uninitialised values."""
    shape = shape_tuple(shape)
    return _core._empty(shape, _numpy.dtype(dtype), layout_for(shape, index_map), 0)


def full(shape, fill_value, dtype=None, order="C", *, index_map=None):
    """A new array with every element ``fill_value``."""
    shape = shape_tuple(shape)
    if dtype is None:
        dtype = _numpy.array(fill_value).dtype
    fill = _numpy.asarray(fill_value)
    if fill.ndim:
        host = _numpy.full(shape, fill, dtype=dtype)
        return _core._from_host(host, layout_for(shape, index_map), 0, None)
    a = _core._empty(shape, _numpy.dtype(dtype), layout_for(shape, index_map), 0)
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
    if shape is None or shape_tuple(shape) == a.shape:
        return a.shape, a._layout()
    return shape_tuple(shape), None


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, index_map=None):
    """An uninitialised array with the prototype's shape, dtype and layout."""
    if not isinstance(prototype, DistributedArray):
        prototype = _numpy.asarray(prototype)
        return empty(shape if shape is not None else prototype.shape,
                     dtype or prototype.dtype, index_map=index_map)
    shp, layout = _like_layout(prototype, shape)
    if index_map is not None:
        layout = layout_for(shp, index_map)
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
        return _core._from_host(host, layout_for(host.shape, index_map), 0, None)
    a = _core._empty((n,), dt, layout_for((n,), index_map), 0)
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
        return _core._from_host(host, layout_for(host.shape, index_map), 0, None)
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
    a = _core._empty((N, M), _numpy.dtype(dtype), layout_for((N, M), index_map), 0)
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


# ---- DLPack ---------------------------------------------------------------------------

DL_CPU, DL_CUDA, DL_CUDA_HOST = 1, 2, 3  # DLPack's device types


def device_kind():
    """The DLPack device type of the backend's devices' memory."""
    return DL_CPU if _core.backend() == "cpu" else DL_CUDA


def device_gpus():
    """The GPU of each of this process's devices of the CUDA backend
    (DGARRAY_CUDA_DEVICES, a comma-separated list of GPU numbers, as the
    backend read it at start; else this process's device i is GPU i)."""
    env = _os.environ.get("DGARRAY_CUDA_DEVICES", "").strip()
    n = _core._dist_range()[1]
    return [int(x) for x in env.split(",")][:n] if env else list(range(n))


def device_gpu(dev):
    """The GPU of device dev of the CUDA backend (a device number of the job,
    one of this process's devices)."""
    return device_gpus()[dev - _core._dist_range()[0]]


def _dlpack_capsule(x):
    """x.__dlpack__() asking for DLPack 1.0's versioned tensor, or the older
    one from producers that do not take max_version."""
    try:
        return x.__dlpack__(max_version=(1, 0))
    except TypeError:
        return x.__dlpack__()


def from_dlpack(x, /, *, copy=None):
    """A DistributedArray of x, another library's array exposing __dlpack__
    (NumPy, CuPy, PyTorch, JAX): copied from a device of dgarray's backend
    to that device (one copy, never through the host): a GPU of the CUDA
    backend, or the host memory of the CPU backend's devices.  Host data
    (CUDA backend) goes to the devices as asarray's does; data on a device
    dgarray does not have is refused (BufferError).  copy=False is refused:
    dgarray always copies into memory of its own.  (dgarray.from_dlpack
    takes device= too: the result then moves there.)  An object with only
    the CUDA array interface (__cuda_array_interface__, as Numba's device
    arrays) is copied on its GPU the same way; DLPack is used where an
    object has both (CuPy, PyTorch)."""
    if isinstance(x, DistributedArray):
        return x.copy() if copy else x
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested: "
                         "dgarray copies DLPack tensors into memory of its own")
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        if hasattr(x, "__cuda_array_interface__"):
            return _from_cuda_array_interface(x)
        raise TypeError(f"from_dlpack takes an object with __dlpack__ and "
                        f"__dlpack_device__ (or __cuda_array_interface__), not "
                        f"{type(x).__name__}")
    kind, dev_id = (int(v) for v in x.__dlpack_device__())
    ours = device_kind()
    if ours == DL_CUDA and kind in (DL_CPU, DL_CUDA_HOST):
        return asarray(_numpy.from_dlpack(x))  # host data: a host-to-device copy
    dev = _device_of_gpu(kind, dev_id, f"device type {kind} id {dev_id}")
    if ours == DL_CUDA:
        # the producer's work on the GPU (any of its streams) before the copy
        _sys.modules["dgarray._cuda"].device_synchronize(dev_id)
    return _core._from_dlpack(_dlpack_capsule(x), ours, dev)


def _device_of_gpu(kind, gpu, where):
    """The device number (of the job) of this process's device on DLPack
    device (kind, gpu), where dgarray's backend can copy from memory there;
    else BufferError naming `where`, the memory's place."""
    ours = device_kind()
    gpus = device_gpus()
    if kind != ours or (ours == DL_CUDA and gpu not in gpus):
        have = "the host's memory" if ours == DL_CPU else f"GPUs {sorted(set(gpus))}"
        raise BufferError(f"the array is on {where}, which dgarray's {_core.backend()} "
                          f"backend cannot read (its devices are {have}): move it there, "
                          f"or to the host, first")
    return _core._dist_range()[0] + (0 if ours == DL_CPU else gpus.index(gpu))


def _from_cuda_array_interface(x):
    """A DistributedArray holding a copy of x, an object exposing only the
    CUDA array interface (Numba's device arrays, ...; version 0 to 3): copied
    on the GPU holding it (cudaPointerGetAttributes of its address), after
    every stream of that GPU (the interface's `stream` among them) is idle,
    never through the host.  BufferError on the CPU backend, for a mask, for
    memory not on a GPU of dgarray's, or for a dtype dgarray does not hold."""
    cai = x.__cuda_array_interface__
    if device_kind() != DL_CUDA:
        raise BufferError(f"{type(x).__name__} is GPU memory (__cuda_array_interface__), "
                          f"which dgarray's {_core.backend()} backend cannot read: copy it "
                          f"to the host first")
    if cai.get("mask") is not None:
        raise BufferError("dgarray cannot take a __cuda_array_interface__ with a mask")
    dtype = _numpy.dtype(cai["typestr"])
    shape = tuple(int(n) for n in cai["shape"])
    if dtype.byteorder == ">" or dtype.kind not in "biufc":
        raise BufferError(f"dgarray cannot take a __cuda_array_interface__ of typestr "
                          f"{cai['typestr']!r}: it takes NumPy's number dtypes, native "
                          f"byte order")
    strides = cai.get("strides")
    if strides is None:
        strides = _c_strides(shape, dtype.itemsize)
    address = int(cai["data"][0])
    dev = _core._dist_range()[0]  # no element: no memory to find, none read
    if _math.prod(shape):
        cuda = _sys.modules["dgarray._cuda"]
        gpu = cuda.pointer_device(address)
        dev = _device_of_gpu(DL_CUDA, gpu, f"GPU {gpu}" if gpu >= 0 else "the host")
        cuda.device_synchronize(gpu)
    return _core._from_address(address, dtype, shape, tuple(int(s) for s in strides), dev)


def _c_strides(shape, itemsize):
    """The byte strides of C order over shape."""
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def _foreign(a):
    """True for another library's array that only DLPack or the CUDA array
    interface can read (CuPy, PyTorch on a GPU, Numba, ...): not NumPy's, not
    ours, exposing __dlpack__, or __cuda_array_interface__."""
    return (not isinstance(a, (DistributedArray, _numpy.ndarray, _numpy.generic)) and
            ((hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__")) or
             hasattr(a, "__cuda_array_interface__")))
