"""Arrays made in an op mode (SUM, PROD, MAX, MIN) from one value per
element, by CuPy's rule: the first chunk holding an element gets its value,
every other chunk holding it the mode's identity, so that the array holds
the values given (overlapping chunks are not counted twice or squared)."""
import numpy

from . import _core

_MODE_NAMES = ("replica", "sum", "prod", "max", "min")


def identity(mode, dtype):
    """The identity of an op mode in dtype (a 0-d NumPy array)."""
    dt = numpy.dtype(dtype)
    name = _MODE_NAMES[mode]
    if name == "sum":
        return numpy.zeros((), dt)
    if name == "prod":
        return numpy.ones((), dt)
    high = name == "min"
    if dt.kind == "b":
        return numpy.array(high, dt)
    if dt.kind in "iu":
        info = numpy.iinfo(dt)
        return numpy.array(info.max if high else info.min, dt)
    return numpy.array(numpy.inf if high else -numpy.inf, dt)


def from_host(host, layout, mode):
    """A DistributedArray of the host array's values in `mode` (a number of
    _MODE_NAMES), laid out as `layout` (None: the default layout)."""
    a = _core._from_host(host, layout, mode, None)
    if mode and a.size:
        _core._keep_first(a, identity(mode, a.dtype))
    return a
