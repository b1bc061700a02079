"""NumPy's fallback: NumPy functions dgarray does not implement run through
NumPy on the gathered data.

``numpy.median(d)``, ``dgarray.median(d)``, ``dgarray.linalg.norm(d)`` and
ufunc methods dgarray has no loop for all come here: the DistributedArray
arguments (also inside lists, tuples and dicts) are gathered to NumPy arrays,
the NumPy function runs, a :class:`FallbackWarning` names it, and NumPy
arrays in the result (also inside tuples, lists and named tuples) go back to
the devices as DistributedArrays (default layout).  Arguments NumPy writes
into (``out=``, ``numpy.copyto(d, ...)``, ``ufunc.at``, ...) are written back
to the DistributedArray passed, which is then what the call returns.

``dgarray.config.fallback`` chooses: "warn" (default), "raise" (TypeError
naming the function, nothing gathered) or "silent".
"""
import os
import sys
import warnings

import numpy

from . import _core
from ._creation import asarray, distributed_array

_DA = _core.DistributedArray
_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_MODES = ("warn", "raise", "silent")
_mode = "warn"


class FallbackWarning(UserWarning):
    """A NumPy function that dgarray does not implement ran through NumPy on
    data gathered from the devices (dgarray.config.fallback)."""


def mode():
    return _mode


def set_mode(value):
    global _mode
    if not isinstance(value, str) or value.lower() not in _MODES:
        raise ValueError(f"config.fallback must be one of {', '.join(map(repr, _MODES))}, "
                         f"not {value!r}")
    _mode = value.lower()


# NumPy functions that write into one of their arguments (its position):
# what they write into a gathered copy is written back to the devices.
_WRITES = {numpy.copyto: (0,), numpy.put: (0,), numpy.put_along_axis: (0,),
           numpy.place: (0,), numpy.putmask: (0,), numpy.fill_diagonal: (0,)}


def qualified_name(func):
    """numpy.median, numpy.linalg.norm, numpy.add.outer, ..."""
    if isinstance(func, numpy.ufunc):
        return f"numpy.{func.__name__}"
    mod = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{mod}.{name}"


def _stacklevel():
    """The stacklevel of the first frame outside dgarray, for warnings.warn
    called by the caller of this function."""
    f = sys._getframe(2)
    level = 2
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
        level += 1
    return level


def _nbytes_text(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


class _Gathered:
    """The host copies of the DistributedArrays of one call: id -> (array,
    ndarray), so that each is gathered once and written back where needed."""

    def __init__(self):
        self.copies = {}
        self.nbytes = 0
        self.passed = set()  # ids of NumPy arrays given as out=: returned as they are

    def host(self, obj):
        """obj with every DistributedArray in it replaced by its values."""
        if isinstance(obj, _DA):
            key = id(obj)
            if key not in self.copies:
                h = obj.get()
                self.copies[key] = (obj, h)
                self.nbytes += h.nbytes
            return self.copies[key][1]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*(self.host(x) for x in obj))
        if isinstance(obj, (tuple, list)):
            return type(obj)(self.host(x) for x in obj)
        if isinstance(obj, dict):
            return {k: self.host(v) for k, v in obj.items()}
        return obj

    def write_back(self, obj):
        """Writes the host copy of every DistributedArray in obj back."""
        if isinstance(obj, _DA):
            da, h = self.copies[id(obj)]
            _core._assign(da, distributed_array(h, da.index_map))
        elif isinstance(obj, (tuple, list)):
            for x in obj:
                self.write_back(x)

    def device(self, obj):
        """obj with NumPy arrays replaced by DistributedArrays: the host copy of
        an argument by that argument, others by new arrays."""
        for da, h in self.copies.values():
            if obj is h:
                return da
        if id(obj) in self.passed:
            return obj
        return to_device(obj, self)


def to_device(obj, gathered=None):
    """NumPy arrays and scalars in obj (also inside tuples, lists and named
    tuples) as DistributedArrays; dtypes dgarray cannot hold stay NumPy's."""
    if isinstance(obj, (numpy.ndarray, numpy.generic)) and not isinstance(obj, _DA):
        try:
            return asarray(obj)
        except TypeError:
            return obj
    rec = gathered.device if gathered is not None else to_device
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(rec(x) for x in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(rec(x) for x in obj)
    return obj


def call(func, args, kwargs, name=None, writes=None):
    """func(*args, **kwargs) through NumPy on gathered data (the module's
    docstring says how); `writes`: positions of arguments func writes into
    (default: _WRITES, and out= always)."""
    name = name or qualified_name(func)
    if _mode == "raise":
        raise TypeError(f"dgarray does not implement {name} for DistributedArray "
                        "(dgarray.config.fallback is 'raise')")
    g = _Gathered()
    out = kwargs.get("out")
    for o in out if isinstance(out, tuple) else (out,):
        if isinstance(o, numpy.ndarray):
            g.passed.add(id(o))
    hargs = g.host(tuple(args))
    hkwargs = g.host(dict(kwargs))
    if _mode == "warn":
        warnings.warn(f"{name} is not implemented by dgarray: it ran through NumPy on "
                      f"the host ({_nbytes_text(g.nbytes)} gathered from the devices) and "
                      "its result was sent back", FallbackWarning, stacklevel=_stacklevel())
    res = func(*hargs, **hkwargs)
    if writes is None:
        writes = _WRITES.get(func, ())
    for i in writes:
        if i < len(args):
            g.write_back(args[i])
    if kwargs.get("out") is not None:
        g.write_back(kwargs["out"])
    return g.device(res)


def ufunc_call(ufunc, method, inputs, kwargs):
    """ufunc.<method>(*inputs, **kwargs) through NumPy, for ufuncs and
    methods dgarray has no loop for (NotImplemented for operands of foreign
    types, which may handle the call themselves)."""
    if not all(isinstance(x, (_DA, numpy.ndarray, numpy.generic, int, float, complex, bool))
               or not hasattr(x, "__array_ufunc__") for x in inputs):
        return NotImplemented
    func = ufunc if method == "__call__" else getattr(ufunc, method)
    name = qualified_name(ufunc) + ("" if method == "__call__" else f".{method}")
    return call(func, inputs, kwargs, name, writes=(0,) if method == "at" else ())


# ---- NumPy functions on metadata alone (never gather) ------------------------------------

def _dtype_of(x):
    return x.dtype if isinstance(x, _DA) else x


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


_METADATA = {
    numpy.shape: lambda a: tuple(a.shape),
    numpy.ndim: lambda a: a.ndim,
    numpy.size: _size,
    numpy.result_type: lambda *xs: numpy.result_type(*(_dtype_of(x) for x in xs)),
    numpy.can_cast: lambda f, to, casting="safe": numpy.can_cast(_dtype_of(f), to, casting),
    numpy.iscomplexobj: lambda x: numpy.iscomplexobj(numpy.empty(0, _dtype_of(x))),
    numpy.isrealobj: lambda x: numpy.isrealobj(numpy.empty(0, _dtype_of(x))),
}


def dispatch(func, args, kwargs, name=None):
    """A NumPy function dgarray does not run on the devices: on metadata where
    that is all it reads, else through NumPy (call)."""
    meta = _METADATA.get(func)
    if meta is not None:
        return meta(*args, **kwargs)
    return call(func, args, kwargs, name)


def array_function(func, types, args, kwargs):
    """__array_function__ for NumPy functions dgarray does not implement."""
    if not all(issubclass(t, (_DA, numpy.ndarray)) for t in types):
        return NotImplemented
    return dispatch(func, args, kwargs)
