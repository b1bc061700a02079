"""Diagonals and triangles with NumPy's semantics: diagonal, trace, diag,
diagflat, tri, tril, triu, fill_diagonal and the index functions of them.

A diagonal is a read-only view where the chunks hold whole rows of the two
axes (the flattened pair sliced with step m + 1), else the elements gathered
on the devices (advanced indexing); triangles are one `where` over a mask
made by comparing two broadcast ranges.  NumPy's own argument checks run on
zero-memory stand-ins, so its errors and result shapes are NumPy's.
"""
import operator

import numpy

from . import _core
from ._compose import (asdist, normalize_axis_index, readonly, standin, standin_of, view)
from . import _reductions
from ._creation import arange, asarray, empty, ones, zeros
from ._indexing import nonzero, put, where
from ._shape import ravel

_DA = _core.DistributedArray


def _arange(n, start=0):
    return arange(start, start + n, dtype=numpy.int64)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the axes axis1 and axis2 (moved last): a read-only
    view where the layout allows it, else gathered on the devices."""
    a = asdist(a)
    probe = numpy.diagonal(standin_of(a), offset, axis1, axis2)  # NumPy's errors, shape
    offset = operator.index(offset)
    ax1, ax2 = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    rest = [ax for ax in range(a.ndim) if ax not in (ax1, ax2)]
    t = _core._transpose(a, rest + [ax1, ax2])
    if a.mode != "replica":
        _core._resolve(a)
    n, m = a.shape[ax1], a.shape[ax2]
    size = probe.shape[-1]
    lead = t.shape[:-2]
    if size == 0:
        return readonly(empty(probe.shape, a.dtype))
    r0, c0 = max(-offset, 0), max(offset, 0)
    flat = _core._reshape(t, lead + (n * m,), True)
    if flat is not None:
        start = r0 * m + c0
        d = view(flat, (Ellipsis, slice(start, start + (size - 1) * (m + 1) + 1, m + 1)))
    else:
        d = t[(Ellipsis, numpy.arange(r0, r0 + size), numpy.arange(c0, c0 + size))]
    return readonly(d)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along a diagonal (NumPy's sum dtypes)."""
    d = diagonal(a, offset, axis1, axis2)
    return _reductions.sum(d, axis=-1, dtype=dtype, out=out)


def _tri_mask(n, m, k):
    """A (n, m) bool array: True where j <= i + k (NumPy's tri), from two
    broadcast ranges compared on the devices."""
    i = view(_arange(n), (slice(None), None))
    j = view(_arange(m, -k), (None, slice(None)))
    return numpy.greater_equal(i, j)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """Ones at and below the k-th diagonal, zeros elsewhere."""
    dt = numpy.dtype(dtype)
    if not all(isinstance(x, (int, numpy.integer)) for x in (N, k) + ((M,) if M is not None
                                                                        else ())):
        return asarray(numpy.tri(N, M, k, dt))
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    mask = _tri_mask(N, M, operator.index(k))
    return mask if dt == numpy.bool_ else mask.astype(dt)


def _trilu(m, k, upper):
    m = asdist(m)
    if m.ndim == 0:
        numpy.tril(numpy.zeros(()))  # NumPy's error for a 0-d array
    k = operator.index(k)
    shape = m.shape[-2:]
    rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (shape[0], shape[0])
    mask = _tri_mask(rows, cols, k - 1 if upper else k)
    zero = numpy.zeros(1, m.dtype)
    return where(mask, zero, m) if upper else where(mask, m, zero)


def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed (a new array)."""
    return _trilu(m, k, False)


def triu(m, k=0):
    """m with the elements below the k-th diagonal zeroed (a new array)."""
    return _trilu(m, k, True)


def _diag_from_vector(v, k):
    """A 2-d array with the 1-d v on its k-th diagonal, zeros elsewhere."""
    k = operator.index(k)
    n = v.shape[0] + abs(k)
    res = zeros((n, n), v.dtype)
    if v.shape[0]:
        i = numpy.arange(v.shape[0])
        rows, cols = (i, i + k) if k >= 0 else (i - k, i)
        res[rows, cols] = v
    return res


def diag(v, k=0):
    """The k-th diagonal of a 2-d array (a copy), or a 2-d array with the 1-d
    v on its k-th diagonal."""
    v = asdist(v)
    if v.ndim == 1:
        return _diag_from_vector(v, k)
    if v.ndim == 2:
        return diagonal(v, k).copy()
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v, k=0):
    """A 2-d array with the flattened v on its k-th diagonal."""
    return _diag_from_vector(ravel(asdist(v)), k)


def fill_diagonal(a, val, wrap=False):
    """a's main diagonal (all axes' indices equal) set to val, in place;
    values repeat as NumPy's flat assignment repeats them."""
    if not isinstance(a, _DA):
        raise TypeError(f"fill_diagonal: the array must be a DistributedArray, not "
                        f"{type(a).__name__}")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        step = 1 + int(numpy.cumprod(a.shape[:-1]).sum())
        end = a.size
    idx = numpy.arange(0, min(end, a.size), step, dtype=numpy.int64)
    if idx.size:
        put(a, idx, val)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an n x ... x n array: ndim times
    the same arange(n)."""
    idx = _arange(operator.index(n))
    return (idx,) * ndim


def diag_indices_from(arr):
    a = asdist(arr)
    numpy.diag_indices_from(standin_of(a))  # NumPy's errors
    return diag_indices(a.shape[0], a.ndim)


def _tri_indices(n, k, m, upper):
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    mask = _tri_mask(n, m, operator.index(k) - (1 if upper else 0))
    return nonzero(numpy.logical_not(mask) if upper else mask)


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle of an (n, m) array."""
    return _tri_indices(n, k, m, False)


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle of an (n, m) array."""
    return _tri_indices(n, k, m, True)


def tril_indices_from(arr, k=0):
    a = asdist(arr)
    numpy.tril_indices_from(standin(a.shape if a.ndim != 2 else (0, 0), a.dtype))
    return tril_indices(a.shape[-2], k=k, m=a.shape[-1])


def triu_indices_from(arr, k=0):
    a = asdist(arr)
    numpy.triu_indices_from(standin(a.shape if a.ndim != 2 else (0, 0), a.dtype))
    return triu_indices(a.shape[-2], k=k, m=a.shape[-1])


def mask_indices(n, mask_func, k=0):
    """The indices where mask_func(ones((n, n)), k) is non-zero."""
    a = mask_func(ones((n, n), int), k)
    return nonzero(numpy.not_equal(asdist(a), 0))


FUNCTIONS = {
    "diagonal": diagonal, "trace": trace, "tri": tri, "tril": tril, "triu": triu,
    "diag": diag, "diagflat": diagflat, "fill_diagonal": fill_diagonal,
    "diag_indices": diag_indices, "diag_indices_from": diag_indices_from,
    "tril_indices": tril_indices, "triu_indices": triu_indices,
    "tril_indices_from": tril_indices_from, "triu_indices_from": triu_indices_from,
    "mask_indices": mask_indices,
}


def _method_diagonal(a, offset=0, axis1=0, axis2=1):
    return diagonal(a, offset, axis1, axis2)


def _method_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return trace(a, offset, axis1, axis2, dtype, out)


METHODS = {"diagonal": _method_diagonal, "trace": _method_trace}
