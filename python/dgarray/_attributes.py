"""DistributedArray attributes written in Python (src/py/array.c calls the
getters "get_<name>" and setters "set_<name>" of ATTRIBUTES): real, imag,
mT, flat, base, flags, strides.
"""
import builtins
import os
import pickle

import numpy

from . import _core
from ._compose import asdist, view
from ._arrayfuncs import choose
from ._creation import arange, empty_like, zeros
from ._elementwise import imag_of, real_of
from ._indexing import put, setitem
from ._shape import _shape_arg, ravel, reshape, swapaxes

_DA = _core.DistributedArray


def get_real(a):
    return real_of(a)


def get_imag(a):
    return imag_of(a)


def set_real(a, value):
    setitem(get_real(a), Ellipsis, value)


def set_imag(a, value):
    if a.dtype.kind != "c":
        raise TypeError("array does not have imaginary part to set")
    setitem(get_imag(a), Ellipsis, value)


def get_mT(a):
    if a.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return swapaxes(a, -1, -2)


def get_base(a):
    return None


class Flags:
    """An array's flags as NumPy names them.  WRITEABLE is whether the array
    may be written (views of broadcasts may not); clearing it makes the array
    read-only; setting it on a read-only array is NumPy's ValueError.  The
    others describe no single block of memory here and are NumPy's answers
    for a new C-ordered array (C_CONTIGUOUS, ALIGNED, OWNDATA)."""
    _NAMES = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
              "WRITEBACKIFCOPY")

    def __init__(self, a):
        self._a = a

    @property
    def writeable(self):
        return not _core._readonly(self._a)

    @writeable.setter
    def writeable(self, value):
        if value and _core._readonly(self._a):
            raise ValueError("cannot set WRITEABLE flag to True of this array")
        if not value:
            _core._set_readonly(self._a)

    c_contiguous = property(lambda self: True)
    f_contiguous = property(lambda self: self._a.ndim <= 1 or
                            sum(n > 1 for n in self._a.shape) <= 1)
    owndata = property(lambda self: True)
    aligned = property(lambda self: True)
    writebackifcopy = property(lambda self: False)
    contiguous = c_contiguous
    fortran = f_contiguous
    fnc = property(lambda self: False)   # F-contiguous and not C-contiguous
    forc = property(lambda self: True)
    behaved = property(lambda self: self.writeable)
    carray = property(lambda self: self.writeable)
    farray = property(lambda self: False)

    def __getitem__(self, key):
        short = {"C": "C_CONTIGUOUS", "F": "F_CONTIGUOUS", "O": "OWNDATA", "W": "WRITEABLE",
                 "A": "ALIGNED", "X": "WRITEBACKIFCOPY", "CONTIGUOUS": "C_CONTIGUOUS",
                 "FORTRAN": "F_CONTIGUOUS"}
        name = short.get(key, key)
        if name not in self._NAMES:
            raise KeyError("Unknown flag")
        return getattr(self, name.lower())

    def __setitem__(self, key, value):
        if self["W"] is not None and key in ("W", "WRITEABLE"):
            self.writeable = value
        else:
            raise KeyError("Unknown flag")

    def __repr__(self):
        return "\n".join(f"  {n} : {self[n]}" for n in self._NAMES) + "\n"


def get_flags(a):
    return Flags(a)


def get_strides(a):
    """The byte strides of a C-ordered array of a's shape and dtype: those of
    every chunk's memory where each is dense (AttributeError else)."""
    if not _core._dense_chunks(a):
        raise AttributeError("a DistributedArray whose chunks are views with different "
                             "strides has no single 'strides'")
    out, s = [], a.itemsize
    for n in reversed(a.shape):
        out.append(s)
        s *= max(n, 1)
    return tuple(reversed(out))


class FlatIter:
    """a.flat: the elements in C order, indexable and assignable as NumPy's
    flatiter (gathers and scatters on the devices), iterable one element at
    a time."""

    def __init__(self, a):
        self.base = a

    def _flat(self):
        return ravel(self.base)

    def __len__(self):
        return self.base.size

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value):
        flat_view = _core._reshape(self.base, (self.base.size,), True)
        if flat_view is not None and not isinstance(value, (_DA, numpy.ndarray, list, tuple)):
            flat_view[key] = value
            return
        idx = arange(self.base.size)[key]
        put(self.base, idx.reshape(-1) if isinstance(idx, _DA) else idx, value)

    def __iter__(self):
        f = self._flat()
        return (f[i] for i in range(f.shape[0]))

    def __array__(self, dtype=None, copy=None):
        return self._flat().get() if dtype is None else self._flat().get().astype(dtype)

    def copy(self):
        return self._flat().copy()

    @property
    def coords(self):
        raise NotImplementedError("dgarray's flat iterator keeps no position")

    @property
    def index(self):
        return 0


def get_flat(a):
    return FlatIter(a)


def set_flat(a, value):
    if a.size:
        put(a, arange(a.size), value)


_UNSET = object()


def view(a, dtype=_UNSET, type=None):
    """a.view([dtype][, type]): a new view of the same memory, its elements
    read as dtype (another size changes the last axis, as NumPy's view)."""
    if isinstance(dtype, builtins.type) and issubclass(dtype, _DA):
        type, dtype = dtype, _UNSET
    if type is not None and not (isinstance(type, builtins.type) and issubclass(type, _DA)):
        raise TypeError("dgarray views are DistributedArrays: type= must be "
                        "DistributedArray")
    dt = a.dtype if dtype is _UNSET else numpy.dtype(dtype)
    if a.mode != "replica":
        _core._resolve(a)
    return _core._view_dtype(a, dt, 0)


def _swapped(x):
    """The elements of the real or integer array x with their bytes
    reversed: shifts and masks of an unsigned view, on the devices."""
    n = x.itemsize
    if n == 1:
        return x.copy()
    u = numpy.dtype(f"u{n}")
    src = _core._view_dtype(x if x.mode == "replica" else x.change_mode("replica"), u, 0)
    out = None
    for k in range(n):
        shift = 8 * (n - 1 - 2 * k)
        byte = numpy.bitwise_and(src, numpy.asarray(0xFF << (8 * k), u))
        if shift > 0:
            byte = numpy.left_shift(byte, numpy.asarray(shift, u))
        elif shift < 0:
            byte = numpy.right_shift(byte, numpy.asarray(-shift, u))
        out = byte if out is None else numpy.bitwise_or(out, byte)
    return _core._view_dtype(out, x.dtype, 0)


def byteswap(a, inplace=False):
    """The bytes of every element (of each part of complex ones) reversed,
    the dtype kept."""
    if a.dtype.kind == "c":
        res = empty_like(a)
        setitem(real_of(res), Ellipsis, _swapped(real_of(a)))
        setitem(imag_of(res), Ellipsis, _swapped(imag_of(a)))
    else:
        res = _swapped(a)
    if inplace:
        setitem(a, Ellipsis, res)
        return a
    return res


def tobytes(a, order="C"):
    """The raw bytes of the elements (read to the host, as bytes are)."""
    return a.get().tobytes(order)


def tofile(a, fid, sep="", format="%s"):
    """The elements written to a file (read to the host, as files are)."""
    a.get().tofile(fid, sep, format)


def dumps(a):
    """A pickle of the array (protocol 2, as NumPy's)."""
    return pickle.dumps(a, protocol=2)


def dump(a, file):
    """The array pickled into a file (a path or an open file)."""
    if isinstance(file, (str, bytes, os.PathLike)):
        with open(file, "wb") as f:
            pickle.dump(a, f, protocol=2)
    else:
        pickle.dump(a, file, protocol=2)


def resize_method(a, *new_shape, refcheck=True):
    """a.resize(new_shape): a takes the new shape in place, its elements in
    C order kept and the new ones zero (refcheck is not applied: dgarray
    cannot see who references the array)."""
    if len(new_shape) == 1 and not isinstance(new_shape[0], (int, numpy.integer)):
        new_shape = new_shape[0]
    shape = _shape_arg(new_shape) if new_shape != () and new_shape is not None else ()
    if any(n < 0 for n in shape):
        raise ValueError("negative dimensions not allowed")
    size = 1
    for n in shape:
        size *= n
    new = zeros(shape, a.dtype)
    k = min(size, a.size)
    if k:
        flat_new = reshape(new, (size,))
        flat_new[:k] = ravel(a)[:k]
        new = reshape(flat_new, shape)
    _core._replace(a, new)


def choose_method(a, choices, out=None, mode="raise"):
    return choose(a, choices, out=out, mode=mode)


METHODS = {"view": view, "byteswap": byteswap, "tobytes": tobytes, "tofile": tofile,
           "dumps": dumps, "dump": dump, "resize": resize_method, "choose": choose_method}

ATTRIBUTES = {f"{k}_{n}": v for k, n, v in (
    ("get", "real", get_real), ("set", "real", set_real), ("get", "imag", get_imag),
    ("set", "imag", set_imag), ("get", "mT", get_mT), ("get", "base", get_base),
    ("get", "flags", get_flags), ("get", "strides", get_strides), ("get", "flat", get_flat),
    ("set", "flat", set_flat))}
