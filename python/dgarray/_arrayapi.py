"""The Python array API standard's device model for dgarray (2024.12):
``x.device``, ``x.to_device()``, ``device=`` on the creation functions and
``__array_namespace_info__``.

A dgarray array lives on a set of devices, so its device is a
:class:`DeviceSet` (the devices holding its chunks); ``dgarray.DeviceSet(0)``
is one device, and the default device is the set of all of them (the
default layout splits arrays over every device).  Creating an array with
``device=`` lays it out over that set (its first axis split among them,
every device of the set holding some of it); ``to_device`` copies an array
to a set, one chunk per device.
"""
import functools
import inspect

import numpy

from . import _core
from ._creation import DL_CPU, REPLICA, device_gpu, device_kind, empty_like

_DA = _core.DistributedArray


class DeviceSet(tuple):
    """A set of device numbers, the array API's device of dgarray arrays
    (equal when they name the same devices)."""

    def __new__(cls, *ids):
        if len(ids) == 1 and not isinstance(ids[0], int) and hasattr(ids[0], "__iter__"):
            ids = tuple(ids[0])
        ndev = _core._ndevices()
        out = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, (int, numpy.integer)):
                raise ValueError(f"a device is a device number, not {i!r}")
            i = int(i)
            if not 0 <= i < ndev:
                raise ValueError(f"device {i} does not exist: the {_core.backend()} backend "
                                 f"has devices 0 to {ndev - 1}")
            out.append(i)
        if not out:
            raise ValueError("a DeviceSet names at least one device")
        return super().__new__(cls, sorted(set(out)))

    def __repr__(self):
        return f"DeviceSet({', '.join(map(str, self))})"


def all_devices():
    return DeviceSet(range(_core._ndevices()))


def as_device_set(device):
    """device= as a DeviceSet (None: all devices)."""
    if device is None:
        return None
    if isinstance(device, DeviceSet):
        return device
    if isinstance(device, str) and device == "all":
        return all_devices()
    if isinstance(device, (int, numpy.integer)) and not isinstance(device, bool):
        return DeviceSet(int(device))
    if isinstance(device, (tuple, list, range, set, frozenset)):
        return DeviceSet(device)
    raise ValueError(f"unsupported device {device!r}: use a DeviceSet, a device number or a "
                     "sequence of them")


def device_layout(shape, devices):
    """[(device, box)]: the first axis of shape split over the devices, each
    device holding at least one element (rows repeat on the devices beyond
    the number of rows; a 0-d or empty array whole on every device), so that
    the array's device is `devices`."""
    devs = list(devices)
    whole = tuple((0, s, 1) for s in shape)
    if not shape or 0 in shape or len(devs) == 1:
        return [(d, whole) for d in devs]
    n, k = shape[0], len(devs)
    rows = ([(n * i // k, n * (i + 1) // k) for i in range(k)] if n >= k else
            [(i % n, i % n + 1) for i in range(k)])
    return [(d, ((r0, r1, 1),) + whole[1:]) for d, (r0, r1) in zip(devs, rows)]


def get_device(a):
    """x.device: the devices holding the array's chunks."""
    return DeviceSet(a.devices)


def to_device(a, device, /, *, stream=None):
    """A copy of the array on the devices of `device`, one chunk per device
    (the array itself when it is there already).  An array in an op mode
    (SUM, ...) is resharded, its mode kept."""
    if stream is not None:
        raise ValueError("dgarray has no streams to name: stream must be None")
    dev = as_device_set(device)
    if dev == get_device(a):
        return a
    layout = device_layout(a.shape, dev)
    if a.mode != REPLICA:
        return a._reshard_layout(layout)
    out = _core._empty(a.shape, a.dtype, layout, 0)
    _core._copyto(out, a)
    return out


def with_device(func):
    """func taking device= too: the result laid out over those devices."""
    @functools.wraps(func)
    def run(*args, device=None, **kwargs):
        dev = as_device_set(device)
        if dev is None:
            return func(*args, **kwargs)
        res = func(*args, **kwargs)
        if isinstance(res, tuple):
            return tuple(r if not isinstance(r, _DA) else to_device(r, dev) for r in res)
        return to_device(res, dev) if isinstance(res, _DA) else res
    run.__signature__ = _signature_with_device(func)
    return run


def _signature_with_device(func):
    """func's signature with a keyword-only device=None (before **kwargs),
    what inspect.signature shows of the with_device wrapper; None where func
    has no signature to read."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if "device" in sig.parameters:
        return sig
    at = len(params) - (bool(params) and params[-1].kind == inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
    return sig.replace(parameters=params)


_CREATION = ("asarray", "array", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
             "ones_like", "full_like", "arange", "linspace", "eye", "identity", "from_dlpack")


def add_device_keyword(module):
    """The module's creation functions wrapped to take device= (once)."""
    for name in _CREATION:
        f = getattr(module, name, None)
        if f is not None and not getattr(f, "_takes_device", False):
            w = with_device(f)
            w._takes_device = True
            setattr(module, name, w)


class Info:
    """__array_namespace_info__(): dgarray's capabilities, devices and dtypes."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 32}

    def default_device(self):
        return all_devices()

    def devices(self):
        n = _core._ndevices()
        return [all_devices()] + ([DeviceSet(i) for i in range(n)] if n > 1 else [])

    def default_dtypes(self, *, device=None):
        as_device_set(device)
        return {"real floating": numpy.dtype(numpy.float64),
                "complex floating": numpy.dtype(numpy.complex128),
                "integral": numpy.dtype(numpy.int64), "indexing": numpy.dtype(numpy.int64)}

    def dtypes(self, *, device=None, kind=None):
        as_device_set(device)
        # NumPy's table of kinds, minus the dtypes dgarray does not hold
        info = numpy.__array_namespace_info__()
        return dict(info.dtypes(kind=kind))


def __array_namespace_info__():
    return Info()


def get_to_device_method(a, device, /, *, stream=None):
    return to_device(a, device, stream=stream)


# ---- DLPack -----------------------------------------------------------------------------

def dlpack_device(a):
    """x.__dlpack_device__(): (DLPack device type, device id) of the memory
    __dlpack__ lends: the host (CPU backend), or the GPU of the device
    holding the array's first chunk."""
    return device_dlpack(a._layout()[0][0])


def device_dlpack(dev):
    """(DLPack device type, device id) of device dev's memory: the host
    (CPU backend), or dev's GPU."""
    kind = device_kind()
    return (DL_CPU, 0) if kind == DL_CPU else (kind, device_gpu(dev))


def dlpack(a, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """x.__dlpack__(): a DLPack capsule lending the array's memory without a
    copy, where one chunk holds all of it (else BufferError: reshard it to
    one device first, or take its chunks one by one, a.chunks()).  The
    array's pending work is complete when it returns, so any consumer stream
    may read it.  copy=True lends a copy; dl_device=(1, 0) (the host) of an
    array on GPUs hands a host copy (refused with copy=False).  An array that
    one device holds in pieces (after a reshard) is lent as a copy in one
    chunk (BufferError with copy=False).  A read-only array needs
    max_version >= (1, 0) (DLPack 1.0 marks it read-only), as NumPy's."""
    return export(a, None, stream, max_version, dl_device, copy)


def export(a, i, stream, max_version, dl_device, copy):
    """The DLPack capsule of a (i None) or of a's chunk i (a's chunks()):
    the protocol's rules, shared by DistributedArray.__dlpack__ and its
    chunks' (dgarray/_chunks.py)."""
    here = dlpack_device(a) if i is None else device_dlpack(_core._chunk_layout(a)[i][0])
    if stream is not None and device_kind() == DL_CPU:
        raise BufferError("the CPU backend's devices have no streams: stream must be None")
    if dl_device is not None and tuple(dl_device) != here:
        if copy is False or tuple(dl_device)[0] != DL_CPU:
            raise BufferError(f"dgarray cannot hand this array over on DLPack device "
                              f"{tuple(dl_device)} without a copy"
                              if copy is False else
                              f"dgarray hands arrays over on its own devices "
                              f"{here} or the host (1, 0), not on {tuple(dl_device)}")
        host = a.get() if i is None else _core._chunk_get(a, i, None, True)
        return (host.__dlpack__(max_version=max_version) if max_version is not None
                else host.__dlpack__())
    if copy:
        a, i = (a.copy(), None) if i is None else (_core._chunk_copy(a, i), None)
        here = dlpack_device(a)
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    readonly = _core._readonly(a)
    if readonly and not versioned:
        raise BufferError("Cannot export readonly array since signalling readonly is "
                          "unsupported by DLPack (supported by DLPack 1.0)")
    kind, dev_id = here
    if i is not None:
        return _core._dlpack(a, versioned, kind, dev_id, readonly, i)
    try:
        return _core._dlpack(a, versioned, kind, dev_id, readonly)
    except BufferError:
        # one device holding the array in pieces (what a reshard such as
        # to_device leaves): lent as a copy in one chunk, unless copy=False
        if copy is False or a.mode != "replica" or len(get_device(a)) != 1:
            raise
    return _core._dlpack(_one_chunk(a), versioned, kind, dev_id, readonly)


def _one_chunk(a):
    """A copy of a in one chunk on a's one device."""
    out = empty_like(a)
    _core._copyto(out, a)
    return out


ATTRIBUTES = {"get_device": get_device}
METHODS = {"to_device": get_to_device_method, "__dlpack__": dlpack,
           "__dlpack_device__": dlpack_device}
