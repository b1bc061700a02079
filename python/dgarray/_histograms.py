"""Counts into bins with NumPy's semantics: bincount, histogram,
histogram_bin_edges, histogram2d, histogramdd.

Every element's bin is computed where the element lives (elementwise work:
NumPy's formula for equal bins, a binary search of the edges otherwise),
then each device counts its elements into its own set of bins
(``_core._count``), and the sets of the devices are the partials of a
SUM-mode result: the one combine moves only the bins.  The edges come from
the data's minimum and maximum (two reductions, one read) and NumPy's
linspace on the host, so they are NumPy's own.
"""
import operator
import warnings

import numpy

from . import _core
from ._compose import asdist, host_or_dist, view
from ._creation import asarray, distributed_array, zeros
from ._elementwise import imag_of, real_of
from ._indexing import take, where
from ._reductions import max as max_, min as min_
from ._shape import atleast_2d, ravel, reshape, stack, transpose
from ._sortsearch import searchsorted

_DA = _core.DistributedArray


_BINS, _RADIX, _EDGES = 0, 1, 2  # the count modes (DG_COUNT_* of dg_backend.h)


def _counts(x, weights, nbins, edges=None):
    """Counts (int64) or weight sums (float64) on the devices: of the int64
    bin numbers in x (out of [0, nbins): not counted), or, with edges (a
    float host array of nbins + 1, x's dtype), of x's values in the bins
    the edges make (NumPy's histogram bins; outside and NaN: not counted)."""
    if nbins == 0:
        return zeros(0, numpy.float64 if weights is not None else numpy.intp)
    b = x if x.mode == "replica" else x.change_mode("replica")
    w = None
    if weights is not None:
        w = weights if weights.dtype == numpy.float64 else weights.astype(numpy.float64)
        w = w if w.mode == "replica" else w.change_mode("replica")
    if edges is None:
        return _core._count(b, w, nbins, _BINS, 0, 64, 0)
    # the edges uploaded to each device that counts, each from the host: a
    # copy of one upload between two H200s took 125 us of a 470 us histogram
    e = distributed_array(numpy.ascontiguousarray(edges),
                          {d: slice(None) for d in sorted(set(b.devices))})
    return _core._count(b, w, nbins, _EDGES, 0, 64, 0, e)


def bincount(x, weights=None, minlength=0):
    """How many times each non-negative integer occurs in x (or the sum of
    the weights of its occurrences), counted where x lives."""
    if not isinstance(x, (_DA, numpy.ndarray)):
        h = numpy.asarray(x)
        if h.dtype.kind == "f":  # NumPy converts sequences of floats, warning
            warnings.warn("Non-integer input passed to bincount. In a future version of "
                          "NumPy, this will be an error. (Deprecated NumPy 2.1)",
                          DeprecationWarning, stacklevel=2)
            h = h.astype(numpy.intp)
        x = h
    x = asdist(x)
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    w = None if weights is None else host_or_dist(weights)
    probe_w = None if w is None else numpy.zeros(min(x.size, 1), w.dtype) if w.ndim else \
        numpy.zeros((), w.dtype)
    numpy.bincount(numpy.zeros(min(x.size, 1) if x.ndim == 1 else (1,) * x.ndim, x.dtype),
                   probe_w if w is None or x.ndim != 1 else probe_w[:min(x.size, 1)])
    if w is not None and (w.ndim != 1 or w.shape[0] != x.shape[0]):
        raise ValueError("The weights and list don't have the same length.")
    if x.dtype.kind != "i" or x.dtype != numpy.int64:
        xi = x.astype(numpy.int64)
    else:
        xi = x
    if x.size == 0:
        return zeros(minlength, numpy.intp if w is None else numpy.float64)
    lo, hi = min_(xi), max_(xi)
    lo, hi = int(lo), int(hi)
    if lo < 0:
        raise ValueError("'list' argument must have no negative elements")
    return _counts(xi, asdist(w) if w is not None else None, max(hi + 1, minlength))


# ---- edges -----------------------------------------------------------------------------

def _outer_edges(a, range_):
    """NumPy's outer edges: range's, else the data's minimum and maximum
    (as numpy scalars of a's dtype), widened by 0.5 each way when equal."""
    if range_ is not None:
        first, last = range_
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (numpy.isfinite(first) and numpy.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        lo, hi = min_(a), max_(a)  # both enqueued, then read
        first, last = lo.get()[()], hi.get()[()]
        if not (numpy.isfinite(first) and numpy.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first = first - 0.5
        last = last + 0.5
    return first, last


def _unsigned_subtract(a, b):
    """a - b as NumPy's histogram takes it: in the unsigned type of a signed
    integer result (so that the full range fits)."""
    unsigned = {numpy.dtype(t): numpy.dtype(t.upper()) for t in "bhilq"}
    dt = numpy.result_type(a, b)
    if dt in unsigned:
        if isinstance(a, _DA):
            a = a.astype(dt)
        else:
            a = numpy.asarray(a, dt)
        b = b.astype(dt) if isinstance(b, _DA) else numpy.asarray(b, dt)
        return numpy.subtract(a, b, casting="unsafe", dtype=unsigned[dt])
    return numpy.subtract(a, b, dtype=dt)


def _bin_edges(a, bins, range_, weights):
    """(edges as a host array, (first, last, n) for equal bins or None)."""
    n = None
    if isinstance(bins, str):
        sel = getattr(__import__("numpy.lib._histograms_impl", fromlist=["x"]),
                      "_hist_bin_selectors", {})
        if bins not in sel:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported for "
                            "weighted data")
        first, last = _outer_edges(a, range_)
        if range_ is not None:
            keep = numpy.logical_and(numpy.greater_equal(a, first), numpy.less_equal(a, last))
            a = a[keep]
        if a.size == 0:
            n = 1
        else:
            width = sel[bins](a, (first, last))  # NumPy's estimators, on the devices
            if width:
                if a.dtype.kind in "iu" and width < 1:
                    width = 1
                n = int(numpy.ceil(_unsigned_subtract(last, first) / width))
            else:
                n = 1
    elif numpy.ndim(bins) == 0:
        try:
            n = operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, range_)
    elif numpy.ndim(bins) == 1:
        edges = numpy.asarray(bins.get() if isinstance(bins, _DA) else bins)
        if numpy.any(edges[:-1] > edges[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        return edges, None
    else:
        raise ValueError("`bins` must be 1d, when an array")
    bin_type = numpy.result_type(first, last, numpy.empty(0, a.dtype))
    if bin_type.kind in "iu":
        bin_type = numpy.result_type(bin_type, float)
    edges = numpy.linspace(first, last, n + 1, endpoint=True, dtype=bin_type)
    if numpy.any(edges[:-1] >= edges[1:]):
        raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized bins.")
    return edges, (first, last, n)


def _ravel_weights(a, weights):
    a = asdist(a)
    if a.dtype == numpy.bool_:
        warnings.warn(f"Converting input from {a.dtype} to {numpy.uint8} for compatibility.",
                      RuntimeWarning, stacklevel=4)
        a = a.astype(numpy.uint8)
    if weights is not None:
        w = asdist(weights)
        if w.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
        weights = ravel(w)
    return ravel(a), weights


def _equal_bin_numbers(a, edges, first, last, n):
    """Each element's bin among n equal bins by NumPy's formula (and its two
    corrections against the edges), -1 outside [first, last] or NaN."""
    keep = numpy.logical_and(numpy.greater_equal(a, first), numpy.less_equal(a, last))
    t = a.astype(edges.dtype) if a.dtype != edges.dtype else a
    f = numpy.multiply(numpy.true_divide(_unsigned_subtract(t, first),
                                         _unsigned_subtract(last, first)), n)
    f = where(keep, f, numpy.zeros((), f.dtype))
    idx = f.astype(numpy.intp)
    idx = numpy.subtract(idx, numpy.equal(idx, n).astype(numpy.intp))
    e = asdist(edges)
    e = e._reshard_layout([(d, ((0, e.shape[0], 1),)) for d in sorted(set(idx.devices))])
    idx = numpy.subtract(idx, numpy.less(t, take(e, idx)).astype(numpy.intp))
    up = numpy.logical_and(numpy.greater_equal(t, take(e, numpy.add(idx, 1))),
                           numpy.not_equal(idx, n - 1))
    idx = numpy.add(idx, up.astype(numpy.intp))
    return where(keep, idx, numpy.asarray(-1, numpy.intp))


def _edge_bin_numbers(a, edges):
    """Each element's bin among the bins of arbitrary edges (the last bin
    closed): a search of the edges; outside: not a bin."""
    e = asdist(edges)
    idx = numpy.subtract(searchsorted(e, a, side="right"), 1)
    last = numpy.logical_and(numpy.equal(a, edges[-1]), numpy.equal(idx, edges.shape[0] - 1))
    return where(last, numpy.subtract(idx, 1), idx)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """The histogram of a: counts (or weight sums) per bin on the devices,
    and NumPy's bin edges."""
    a, weights = _ravel_weights(a, weights)
    edges, equal = _bin_edges(a, bins, range, weights)
    ntype = numpy.dtype(numpy.intp) if weights is None else weights.dtype
    nb = edges.shape[0] - 1
    direct = a.size and edges.dtype.kind == "f" and a.dtype.kind in "biuf"
    if direct:  # each element's bin found by the count itself: one pass
        x, e = (a if a.dtype == edges.dtype else a.astype(edges.dtype)), edges
    elif equal is not None and a.size:
        first, last, n = equal
        x, e = _equal_bin_numbers(a, edges, first, last, n), None
    elif a.size:
        x, e = _edge_bin_numbers(a, edges), None
    else:
        x = None
    if x is None:
        counts = zeros(nb, ntype)
    elif weights is not None and ntype.kind == "c":
        counts = zeros(nb, ntype)
        counts.real = _counts(x, real_of(weights), nb, e)
        counts.imag = _counts(x, imag_of(weights), nb, e)
    else:
        counts = _counts(x, weights, nb, e)
        if counts.dtype != ntype:
            counts = counts.astype(ntype)
    if density:
        db = numpy.array(numpy.diff(edges), float)
        counts = numpy.true_divide(numpy.true_divide(counts, asarray(db)), numpy.sum(counts))
    return counts, asarray(edges)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """NumPy's bin edges for histogram(a, bins, range, weights)."""
    a, weights = _ravel_weights(a, weights)
    return asarray(_bin_edges(a, bins, range, weights)[0])


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """The multidimensional histogram of N points in D dimensions: each
    point's cell found on the devices, counted as one bincount."""
    if isinstance(sample, (list, tuple)):
        s = transpose(stack([asdist(x) for x in sample], axis=0))
    else:
        s = asdist(sample)
        if s.ndim != 2:
            s = transpose(atleast_2d(s))
    N, D = s.shape
    if weights is not None:
        weights = asdist(weights)
    try:
        if len(bins) != D:
            raise ValueError("The dimension of bins must be equal to the dimension of the "
                             "sample x.")
    except TypeError:
        bins = D * [bins]
    if range is None:
        range = (None,) * D
    elif len(range) != D:
        raise ValueError("range argument must have one entry per dimension")
    edges, dedges, nbin = [], [], []
    for i in builtin_range(D):
        col = view(s, (slice(None), i))
        if numpy.ndim(bins[i]) == 0:
            if bins[i] < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            smin, smax = _outer_edges(col, range[i])
            try:
                n = operator.index(bins[i])
            except TypeError as e:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
            e = numpy.linspace(smin, smax, n + 1)
        elif numpy.ndim(bins[i]) == 1:
            b = bins[i]
            e = numpy.asarray(b.get() if isinstance(b, _DA) else b)
            if numpy.any(e[:-1] > e[1:]):
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an "
                                 "array")
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
        edges.append(e)
        dedges.append(numpy.diff(e))
        nbin.append(len(e) + 1)
    cell = None
    stride = 1
    for i in reversed(builtin_range(D)):
        col = view(s, (slice(None), i))
        c = searchsorted(asdist(edges[i]), col, side="right")
        c = where(numpy.equal(col, edges[i][-1]), numpy.subtract(c, 1), c)
        term = numpy.multiply(c, stride) if stride != 1 else c
        cell = term if cell is None else numpy.add(cell, term)
        stride *= nbin[i]
    total = int(numpy.prod(nbin))
    if N == 0:
        hist = zeros(total, numpy.float64)
    else:
        hist = _counts(cell, weights, total)
    hist = reshape(hist.astype(numpy.float64) if hist.dtype != numpy.float64 else hist,
                   tuple(nbin))
    hist = view(hist, (slice(1, -1),) * D).copy()
    if density:
        tot = numpy.sum(hist)
        for i in builtin_range(D):
            shape = [1] * D
            shape[i] = nbin[i] - 2
            hist = numpy.true_divide(hist, asarray(dedges[i].reshape(shape)))
        hist = numpy.true_divide(hist, tot)
    return hist, [asarray(e) for e in edges]


builtin_range = range


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The two-dimensional histogram of the points (x, y)."""
    x, y = asdist(x), asdist(y)
    if x.shape[0] != y.shape[0] if x.ndim and y.ndim else False:
        numpy.histogram2d(numpy.zeros(x.shape[0]), numpy.zeros(y.shape[0]))  # NumPy's error
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        xedges = yedges = asdist(bins).get() if isinstance(bins, _DA) else numpy.asarray(bins)
        bins = [xedges, yedges]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


FUNCTIONS = {
    "bincount": bincount, "histogram": histogram, "histogram_bin_edges": histogram_bin_edges,
    "histogramdd": histogramdd, "histogram2d": histogram2d,
}
