"""NumPy's set functions on the devices: isin (a sort of the test elements
and a search of every element in it), intersect1d, union1d, setdiff1d,
setxor1d (sorts, comparisons of neighbours and compactions), and the array
API's unique_all, unique_counts, unique_inverse.
"""
import collections

import numpy

from . import _core
from ._compose import asdist, view
from ._creation import asarray, zeros
from ._indexing import compress, getitem, take
from ._shape import argsort, concatenate, ravel, sort, unique
from ._sortsearch import searchsorted

_DA = _core.DistributedArray

UniqueAllResult = collections.namedtuple("UniqueAllResult",
                                         ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])


def _isin_flat(x, test, invert):
    """Membership of every element of x in test (both any shape): True
    where an equal element is found."""
    t = sort(ravel(asdist(test)))
    n = t.shape[0]
    if n == 0:
        res = zeros(x.shape, bool)
    else:
        dt = numpy.result_type(x.dtype, t.dtype)
        xx = x if x.dtype == dt else x.astype(dt)
        tt = t if t.dtype == dt else t.astype(dt)
        pos = searchsorted(tt, xx, side="left")
        found = take(tt, numpy.minimum(pos, n - 1))
        res = numpy.logical_and(numpy.less(pos, n), numpy.equal(found, xx))
    return numpy.logical_not(res) if invert else res


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """True where an element of `element` is in test_elements."""
    x = asdist(element)
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    t = asdist(test_elements)
    if kind == "table" and not (x.dtype.kind in "iub" and t.dtype.kind in "iub"):
        raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                         "Please select 'sort' or None for kind.")
    return _isin_flat(x, t, invert)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values in both arrays (and where they first are)."""
    a1, a2 = asdist(ar1), asdist(ar2)
    if not assume_unique:
        if return_indices:
            a1, i1 = unique(a1, return_index=True)
            a2, i2 = unique(a2, return_index=True)
        else:
            a1, a2 = unique(a1), unique(a2)
    else:
        a1, a2 = ravel(a1), ravel(a2)
    aux = concatenate((a1, a2))
    if return_indices:
        order = argsort(aux)
        aux = take(aux, order)
    else:
        aux = sort(aux)
    if aux.shape[0] == 0:
        mask = asdist(numpy.zeros(0, bool))
    else:
        mask = numpy.equal(view(aux, (slice(1, None),)), view(aux, (slice(None, -1),)))
    common = compress(mask, view(aux, (slice(None, -1),)))
    if not return_indices:
        return common
    j1 = compress(mask, view(order, (slice(None, -1),)))
    j2 = numpy.subtract(compress(mask, view(order, (slice(1, None),))), a1.size)
    if not assume_unique:
        j1, j2 = take(i1, j1), take(i2, j2)
    return common, j1, j2


def union1d(ar1, ar2):
    """The sorted values in either array."""
    return unique(concatenate((asdist(ar1), asdist(ar2)), axis=None))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted unique values of ar1 that are not in ar2."""
    if assume_unique:
        a1, a2 = ravel(asdist(ar1)), asdist(ar2)
    else:
        a1, a2 = unique(asdist(ar1)), unique(asdist(ar2))
    return getitem(a1, _isin_flat(a1, a2, True))


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values in exactly one of the arrays."""
    a1, a2 = asdist(ar1), asdist(ar2)
    if not assume_unique:
        a1, a2 = unique(a1), unique(a2)
    aux = concatenate((a1, a2), axis=None)
    if aux.size == 0:
        return aux
    aux = sort(aux)
    edge = asarray(numpy.ones(1, bool))
    flag = concatenate((edge, numpy.not_equal(view(aux, (slice(1, None),)),
                                              view(aux, (slice(None, -1),))), edge))
    keep = numpy.logical_and(view(flag, (slice(1, None),)), view(flag, (slice(None, -1),)))
    return getitem(aux, keep)


def unique_all(x):
    """The unique values, where each first is, the inverse and the counts
    (NaNs distinct)."""
    return UniqueAllResult(*unique(asdist(x), return_index=True, return_inverse=True,
                                   return_counts=True, equal_nan=False))


def unique_counts(x):
    return UniqueCountsResult(*unique(asdist(x), return_counts=True, equal_nan=False))


def unique_inverse(x):
    return UniqueInverseResult(*unique(asdist(x), return_inverse=True, equal_nan=False))


FUNCTIONS = {
    "isin": isin, "intersect1d": intersect1d, "union1d": union1d, "setdiff1d": setdiff1d,
    "setxor1d": setxor1d, "unique_all": unique_all, "unique_counts": unique_counts,
    "unique_inverse": unique_inverse,
}
