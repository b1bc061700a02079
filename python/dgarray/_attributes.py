"""DistributedArray attributes written in Python (src/py/array.c calls the
getters "get_<name>" and setters "set_<name>" of ATTRIBUTES): real, imag,
mT, flat, base, flags, strides.
"""
import numpy

from . import _core
from ._compose import asdist, view

_DA = _core.DistributedArray


def get_real(a):
    from ._elementwise import real_of
    return real_of(a)


def get_imag(a):
    from ._elementwise import imag_of
    return imag_of(a)


def set_real(a, value):
    from ._indexing import setitem
    setitem(get_real(a), Ellipsis, value)


def set_imag(a, value):
    from ._indexing import setitem
    if a.dtype.kind != "c":
        raise TypeError("array does not have imaginary part to set")
    setitem(get_imag(a), Ellipsis, value)


def get_mT(a):
    if a.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    from ._shape import swapaxes
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
        from ._shape import ravel
        return ravel(self.base)

    def __len__(self):
        return self.base.size

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value):
        from ._indexing import put
        from . import arange
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
    from ._indexing import put
    from . import arange
    if a.size:
        put(a, arange(a.size), value)


ATTRIBUTES = {f"{k}_{n}": v for k, n, v in (
    ("get", "real", get_real), ("set", "real", set_real), ("get", "imag", get_imag),
    ("set", "imag", set_imag), ("get", "mT", get_mT), ("get", "base", get_base),
    ("get", "flags", get_flags), ("get", "strides", get_strides), ("get", "flat", get_flat),
    ("set", "flat", set_flat))}
