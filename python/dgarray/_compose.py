"""Small pieces the compositions of NumPy's functions share (_matrix.py,
_stats.py, _numeric.py, ...): operands as DistributedArrays, basic views,
NumPy's argument checks run on zero-memory stand-ins, read-only results.
"""
import operator

import numpy

from . import _core
from . import _indexing
from ._creation import asarray, zeros
from ._reductions import _write_out

_DA = _core.DistributedArray
NOVALUE = numpy._NoValue

try:
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy < 2
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

__all__ = ["normalize_axis_index", "normalize_axis_tuple"]


def asdist(x, dtype=None):
    """x as a DistributedArray (host data to the default layout; cast to
    dtype where given)."""
    return asarray(x, dtype=dtype)


def is_dist(x):
    return isinstance(x, _DA)


def host_or_dist(x):
    """x as it is if a DistributedArray, else a NumPy array."""
    return x if isinstance(x, _DA) else numpy.asarray(x)


def standin(shape, dtype):
    """A NumPy array of `shape` and `dtype` taking no memory (one zero,
    broadcast): what NumPy's own argument checks and result shapes are asked
    of."""
    return numpy.broadcast_to(numpy.zeros((), dtype), shape)


def standin_of(a):
    return standin(a.shape, a.dtype)


def view(a, key):
    """a[key] for a basic key (ints, slices, None, ...): a view."""
    return _indexing.basic_view(a, key)


def along(axis, key, ndim=None):
    """A basic key applying `key` to `axis` (the axes before it whole)."""
    return (slice(None),) * axis + (key,)


def readonly(a):
    """a marked read-only (NumPy gives a read-only view); returns a."""
    return _core._set_readonly(a)


def replica(a):
    return a if a.mode == "replica" else a.change_mode("replica")


def index(x):
    return operator.index(x)


def zeros_on(shape, dtype):
    return zeros(shape, dtype)


def put_out(res, out, name="out"):
    """res written into out= (a DistributedArray or ndarray) as NumPy's
    functions with out= do (cast unsafe, shape must match); returns out."""
    return _write_out(res, out)
