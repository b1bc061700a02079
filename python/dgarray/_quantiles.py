"""Order statistics with NumPy's semantics: median, quantile, percentile and
their nan* forms, every `method`, `weights` (inverted_cdf), `keepdims`,
`out`.

Where the statistic is over all of an array (one row), the elements of the
ranks asked are found by selection, not by a sort: radix passes over the
order keys of the elements (kernels/dg_order.h), each a count into 4,096
bins on every device (``_core._count``, partials combined by their SUM
mode), the bins read on the host narrowing the rank to one bin, then the
next 12 bits within it; 1 pass for 8-bit dtypes, 2 for 16-bit, 3 for
32-bit, 6 for 64-bit, each reading the data once where it lives.  The few values found
are then combined on the host exactly as NumPy combines them (its mean, its
interpolation).  Along an axis, every row is sorted where it is (the
device sort) and the ranks are gathered; the interpolation runs on the
devices with NumPy's formulas and dtypes (NEP 50 scalars passed as NumPy
passes them).
"""
import warnings

import numpy

from . import _core
from ._compose import asdist, normalize_axis_tuple, view
from ._creation import asarray, full
from ._elementwise import copyto
from ._indexing import take, where
from ._numeric import count_nonzero
from ._reductions import _write_out, any as any_, mean, min as min_, sum as sum_
from ._shape import argsort, broadcast_to, concatenate, moveaxis, ravel, reshape, sort, transpose
from ._sortsearch import take_along_axis
from ._stats import weights_valid

_DA = _core.DistributedArray
_NOVALUE = numpy._NoValue
_INT_METHODS = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
            "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
            "normal_unbiased", "lower", "higher", "midpoint", "nearest")
# (alpha, beta) of Hyndman and Fan's continuous estimators
_ALPHA_BETA = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_SELECT_MIN = 1 << 12   # fewer elements: sort and take instead of selecting
_DIGIT_BITS = 12        # 4,096 bins a pass: counted in shared memory on GPUs
_RADIX = 1              # DG_COUNT_RADIX
_SELECT_RANKS = 16      # more distinct ranks: sort and take instead of selecting
_KEEP_PART = 8          # gather the elements under the prefixes where at most
                        # 1/8 of x per device holding x are (_Selector)
_HOST_FINISH = 1 << 14  # at most so many gathered: the ranks found on the host
_GATHER_FIRST = "one"   # two neighbouring ranks: the gathering enqueued behind
                        # the first count, no host wait between (_Selector);
                        # "one": only for an array on one device (True: always,
                        # False: never).  Measured on H200s, median_f32_2p28:
                        # one GPU 1,075.8 GB/s with it against 989.2 without;
                        # two GPUs 1,061.2 with it against 1,320.4 and
                        # 1,624.8 without (different runs: the bins read
                        # across devices and the wait for every device's
                        # counts cost more than the host wait they save)
_FIRST_CAP = 1 << 12    # ... all of the keys under the ranks' bins where they
                        # are at most so many, else none (nothing read: data
                        # far from 0 against its spread, uniform on [0, 1),
                        # N(100, 15), costs the small kernels alone)


def _inexact(dt):
    return dt.kind in "fc"


# ---- the method table: virtual indexes, indexes and interpolation weights ------------

def _floor(x):
    return numpy.floor(x)


def _astype(x, dt):
    return x.astype(dt)


def _discrete(index, cond):
    """A discontinuous method's rank: the one below the virtual index where
    cond(gamma, index) holds, else the one above; never below 0."""
    prev = _floor(index)
    nxt = numpy.add(prev, 1)
    gamma = numpy.subtract(index, prev)
    res = where(cond(gamma, index), prev, nxt) if isinstance(index, _DA) else \
        numpy.where(cond(gamma, index), prev, nxt)
    res = _astype(res, numpy.intp)
    return numpy.maximum(res, 0)


def _minus_one(n):
    """n - 1, a Python int kept a Python int (NumPy's weak scalar)."""
    return n - 1 if isinstance(n, int) else numpy.subtract(n, 1)


def virtual_index(method, n, q):
    """The virtual index of each quantile q among n sorted values (n an int,
    or an array of counts broadcastable against q), as NumPy's method table
    defines it: integers for the discontinuous methods."""
    if method == "inverted_cdf":
        return _discrete(numpy.subtract(numpy.multiply(n, q), 1),
                         lambda g, _: numpy.equal(g, 0))
    if method == "closest_observation":
        return _discrete(numpy.subtract(numpy.subtract(numpy.multiply(n, q), 1), 0.5),
                         lambda g, i: numpy.logical_and(
                             numpy.equal(g, 0), numpy.equal(numpy.remainder(_floor(i), 2), 1)))
    if method in ("averaged_inverted_cdf",):
        return numpy.subtract(numpy.multiply(n, q), 1)
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        return numpy.subtract(numpy.add(numpy.multiply(n, q),
                                        numpy.add(alpha, numpy.multiply(q, 1 - alpha - beta))), 1)
    base = numpy.multiply(_minus_one(n), q)
    if method == "linear":
        return base
    if method == "lower":
        return _astype(numpy.floor(base), numpy.intp)
    if method == "higher":
        return _astype(numpy.ceil(base), numpy.intp)
    if method == "nearest":
        return _astype(numpy.round(base), numpy.intp)
    # midpoint
    return numpy.multiply(0.5, numpy.add(numpy.floor(base), numpy.ceil(base)))


def _is_int(x):
    return x.dtype.kind in "iu"


def indexes(v, n, inexact):
    """NumPy's neighbouring ranks (previous, next) of virtual indexes v among
    n values: above the last: -1 (the last), below 0: 0, NaN: -1."""
    w = where if isinstance(v, _DA) else numpy.where
    prev = numpy.floor(v)
    nxt = numpy.add(prev, 1)
    above = numpy.greater_equal(v, _minus_one(n))
    below = numpy.less(v, 0)
    prev, nxt = w(above, -1.0, prev), w(above, -1.0, nxt)
    prev, nxt = w(below, 0.0, prev), w(below, 0.0, nxt)
    if inexact:
        bad = numpy.isnan(v)
        prev, nxt = w(bad, -1.0, prev), w(bad, -1.0, nxt)
    return _astype(prev, numpy.intp), _astype(nxt, numpy.intp)


def gamma_of(method, v, prev):
    """The interpolation weight between the two ranks, fixed as the method
    asks, in v's dtype."""
    w = where if isinstance(v, _DA) or isinstance(prev, _DA) else numpy.where
    g = numpy.subtract(v, prev)
    if method == "averaged_inverted_cdf":
        g = w(numpy.equal(g, 0), 0.5, 1.0)
    elif method == "midpoint":
        g = w(numpy.equal(numpy.remainder(v, 1), 0), 0.0, 0.5)
    return _astype(g, v.dtype) if g.dtype != v.dtype else g


def lerp(a, b, t):
    """NumPy's interpolation a + (b - a) t, from b's side where t >= 0.5
    (t a Python float: 1 - t one too, weak as NumPy's)."""
    diff = numpy.subtract(b, a)
    res = numpy.add(a, numpy.multiply(diff, t))
    if not isinstance(res, (_DA, numpy.ndarray)):
        res = numpy.asarray(res)
    back = numpy.subtract(b, numpy.multiply(diff, 1 - t if isinstance(t, float) else
                                            numpy.subtract(1, t)))
    ge = numpy.greater_equal(t, 0.5)
    if isinstance(res, _DA):
        copyto(res, back, casting="unsafe", where=ge)
        return res
    res = numpy.array(res)
    numpy.copyto(res, back, casting="unsafe", where=ge)
    return res


# ---- selection ----------------------------------------------------------------------------

def _key_bits(dt):
    return {1: 8, 2: 16, 4: 32, 8: 64}[dt.itemsize] if dt.kind in "biuf" else 0


def _value_of_key(key, dt):
    """The value whose order key (kernels/dg_order.h) is `key`."""
    w = _key_bits(dt)
    mask = (1 << w) - 1
    sign = 1 << (w - 1)
    if dt.kind == "f":
        bits = key ^ sign if key & sign else ~key & mask
    elif dt.kind == "i":
        bits = key ^ sign
    else:
        bits = key
    return numpy.array(bits, dtype=f"u{dt.itemsize}").view(dt)[()] if dt.kind != "b" else \
        numpy.bool_(bits)


def _keys_of(v):
    """The order keys (kernels/dg_order.h) of host values v (a dtype with
    keys), as uint64: NumPy's order, every NaN all ones, -0.0 as 0.0."""
    dt = v.dtype
    w = _key_bits(dt)
    bits = v.view(f"u{dt.itemsize}").astype(numpy.uint64) if dt.kind != "b" else \
        v.astype(numpy.uint64)
    sign = numpy.uint64(1 << (w - 1))
    if dt.kind == "i":
        return bits ^ sign
    if dt.kind != "f":
        return bits
    mask = numpy.uint64((1 << w) - 1)
    bits = numpy.where(bits == sign, numpy.uint64(0), bits)  # -0.0 as 0.0
    keys = numpy.where(bits & sign, ~bits & mask, bits | sign)
    return numpy.where(numpy.isnan(v), mask, keys)


def _pad_for(dt, pshift, lo, hi):
    """A value of dt whose key is not under the prefixes lo .. hi at pshift
    (the padding of a keyed gathering), or None where every key is."""
    w = _key_bits(dt)
    if ((1 << w) - 1) >> pshift > hi:
        return _value_of_key((1 << w) - 1, dt)  # NaN, the largest integer
    low = numpy.array(-numpy.inf, dt) if dt.kind == "f" else _value_of_key(0, dt)
    if int(_keys_of(numpy.asarray(low).reshape(1))[0]) >> pshift < lo:
        return low
    return None


def _counts_read(x, nbins, shift, pshift, prefix):
    """The radix counts of x (_core._count) on the host: each device's bins
    read apart and summed here, so that no combine across devices stands
    between the count and the read."""
    c = _core._count(x, None, nbins, _RADIX, shift, pshift, prefix, None, True).get()
    return c.reshape(-1, nbins).sum(axis=0) if c.size > nbins else c


class _Selector:
    """The elements of given ranks of x in NumPy's order (NaN last), found by
    radix passes of counts on the devices, all ranks at once: a pass counts
    the next digit under each rank's prefix so far, two prefixes to one
    reading of x (the two middle ranks of an even median share every pass,
    whether their prefixes part or not); the counts of a pass are kept.

    Once the elements under the prefixes are few (at most a 1/_KEEP_PART
    of x per device holding it), they are gathered where they live
    (_core._keep_keys: one reading of x, no wait for the host), and the
    later passes read only them; at most _HOST_FINISH of them come to the
    host instead, where the ranks are found among them (one transfer for
    the remaining passes).  So a float32 median reads x twice, not 3 times;
    a float64 one twice, not 6 times.  For neighbouring ranks (a median) the
    first gathering is enqueued behind the first count, its bins found on
    the devices (_gather_first): then one host wait a median where the
    ranks' bins hold at most _FIRST_CAP keys."""

    def __init__(self, x):
        x = x if x.mode == "replica" else x.change_mode("replica")
        self.x = x  # overlapping chunks: the count takes each element once
        self.dt = x.dtype
        self.w = _key_bits(self.dt)
        self.d = min(_DIGIT_BITS, self.w)
        self.cache = {}
        self.first = None  # gathered behind the first count (gather_first)

    def counts(self, shift, pshift, prefixes, bits, x=None):
        """The counts of the digit at `shift` under each prefix (of the key
        bits above pshift) of the elements of x (self.x, or what a keyed
        gathering kept of it: the same counts under its prefixes):
        {prefix: host counts}; two prefixes a reading."""
        x = self.x if x is None else x
        todo = [p for p in prefixes if (shift, pshift, p) not in self.cache]
        n = 1 << bits
        for i in range(0, len(todo), 2):
            pair = todo[i:i + 2]
            if len(pair) == 2 and pshift < 64:
                c = _counts_read(x, 2 * n, shift, pshift, tuple(pair))
                self.cache[shift, pshift, pair[0]], self.cache[shift, pshift, pair[1]] = \
                    c[:n], c[n:]
            else:
                for p in pair:
                    self.cache[shift, pshift, p] = _counts_read(x, n, shift, min(pshift, 64), p)
        return {p: self.cache[shift, pshift, p] for p in prefixes}

    def _narrow(self, x, state, pshift):
        """x's elements under the prefixes of `state` (those of pshift),
        gathered where that pays (see the class), else x itself."""
        lo = min(state, key=lambda s: s[0])
        hi = max(state, key=lambda s: s[0])
        under = (hi[2] - hi[1] + hi[3]) - (lo[2] - lo[1])  # keys from lo to hi
        if under * max(1, len(x.devices)) * _KEEP_PART > x.size:
            return x
        pad = _pad_for(self.dt, pshift, lo[0], hi[0])
        if pad is None:
            return x
        return _core._keep_keys(x, pshift, lo[0], hi[0], under, pad)

    def _finish_on_host(self, x, state, pshift):
        """The keys of the ranks of `state` (prefixes of pshift), found among
        x's elements brought to the host: {prefix, rank within: key}."""
        return self._ranks_among(x.get(), state, pshift)

    @staticmethod
    def _ranks_among(vals, state, pshift, held=None):
        """The keys of the ranks of `state` (prefixes of pshift) among host
        values vals, those not under the prefixes left out (padding; any
        under them must sort after the keys of the ranks):
        {prefix, rank within: key}; None where fewer than `held` (the
        keys under the prefixes, None: not told) are among vals."""
        keys = _keys_of(vals)
        q = keys >> numpy.uint64(pshift)
        lo, hi = min(s[0] for s in state), max(s[0] for s in state)
        keys = keys[(q >= numpy.uint64(lo)) & (q <= numpy.uint64(hi))]
        if held is not None and keys.size != held:
            return None
        at = {}
        for s in state:
            at[s[0], s[1]] = int(numpy.count_nonzero(
                keys < numpy.uint64(s[0] << pshift))) + s[1]
        kth = sorted(set(at.values()))
        part = numpy.partition(keys, kth)
        return {k: int(part[i]) for k, i in at.items()}

    def first_on(self):
        """Whether the first count may have the gathering behind it
        (gather_first): _GATHER_FIRST and _FIRST_CAP allow it, the keys
        are wider than a digit, the first counts are not made yet."""
        w, d = self.w, self.d
        return bool(_GATHER_FIRST) and _FIRST_CAP >= 1 and w > d and \
            (w - d, w, 0) not in self.cache and \
            (_GATHER_FIRST != "one" or len({dev for dev, _ in self.x._layout()}) == 1)

    def gather_first(self, ranks):
        """The first pass and behind it, with no host wait, the gathering of
        the elements under the bins that hold the lowest and the highest of
        the ranks, the bins found on each device from every device's counts
        (read apart, fetched to each device: no combine across devices
        before; _core._keep_keys with bins): all of them where the bins
        hold at most _FIRST_CAP, else none (no piece reads x).  ranks: two
        neighbouring ranks (r0, r1), or a float q: the ranks about quantile
        q of the elements outside the top bin (dg_order_rest_ranks: of a
        float's numbers, where the NaNs' count is not read yet; the bins
        then reach from rank floor((m - 1) q) to the next, m the numbers:
        a nanmedian's middle pair with q 0.5).  One host wait reads the
        counts and what was gathered together; the first counts are kept,
        and what was gathered (self.first: host values in no order, None
        where none were kept) is where values() looks for its ranks after
        the first digit (they are found there where every key under their
        bins was gathered)."""
        w, d = self.w, self.d
        nb = 1 << d
        c = _core._count(self.x, None, nb, _RADIX, w - d, w, 0, None, True)
        devs = [dev for dev, _ in c._layout()]
        # each device reads every device's bins where they are (peers'
        # in place); unpadded: each piece's count says how many it wrote
        kept, got = _core._keep_keys(self.x, w - d, 0, 0, _FIRST_CAP, None, c, ranks, nb, True)
        starts = sorted(b[0][0] for _, b in kept._layout())
        if len(devs) > 1:  # each on one device: one copy to the host an array
            c, got, kept = (_core._dense_on(a, devs[:1]) for a in (c, got, kept))
        cv, gv, kv = _core._get_many((c, got, kept))  # the one wait
        self.cache[w - d, w, 0] = cv.reshape(-1, nb).sum(axis=0) if cv.size > nb else cv
        if int(gv.max()) > _FIRST_CAP:  # none kept: each count the bins' total
            self.first = None
        else:  # the pieces, in their counts' order
            self.first = numpy.concatenate([kv[a:a + int(g)] for a, g in zip(starts, gv)]) \
                if len(starts) > 1 else kv[:int(gv[0])]

    @staticmethod
    def _advance(state, c, bits):
        """state after the counts c of its prefixes' next digit (of `bits`)."""
        cum = numpy.cumsum(c)
        for s in state:
            b = int(numpy.searchsorted(cum, s[1], side="right"))
            s[1] -= int(cum[b - 1]) if b else 0
            s[3] = int(c[b])
            s[0] = (s[0] << bits) | b

    def values(self, ranks):
        """The values of the given ranks (ints in [0, x.size)), in order;
        two neighbouring ranks (a median's, a quantile's) with the gathering
        behind the first count where it may (gather_first)."""
        # [prefix, rank within it, rank, how many keys share the prefix] of each
        state = [[0, int(r), int(r), self.x.size] for r in ranks]
        if state and max(ranks) - min(ranks) <= 1 and self.first_on():
            self.gather_first((min(ranks), max(ranks)))
        x = self.x
        done = 0
        while done < self.w:
            if done == self.d and self.first is not None:  # gathered behind the first count
                bins = self.cache[self.w - done, self.w, 0]
                lo, hi = min(s[0] for s in state), max(s[0] for s in state)
                found = self._ranks_among(self.first, state, self.w - done,
                                          int(bins[lo:hi + 1].sum()))
                if found is not None:
                    return [_value_of_key(found[s[0], s[1]], self.dt) for s in state]
            if done:
                x = self._narrow(x, state, self.w - done)
                if x is not self.x and x.size <= _HOST_FINISH:
                    found = self._finish_on_host(x, state, self.w - done)
                    return [_value_of_key(found[s[0], s[1]], self.dt) for s in state]
            bits = min(self.d, self.w - done)
            shift = self.w - done - bits
            counts = self.counts(shift, self.w - done, sorted({s[0] for s in state}), bits, x)
            for s in state:
                self._advance([s], counts[s[0]], bits)
            done += bits
        return [_value_of_key(s[0], self.dt) for s in state]

    def first_counts(self):
        """The counts of the first pass (the top digit of the keys)."""
        return self.counts(self.w - self.d, self.w, [0], self.d)[0]


def selector(x, nranks):
    """A selector of x for nranks distinct ranks, or None where select_ranks
    sorts instead (complex dtypes, small arrays, many ranks)."""
    if (x.dtype.kind == "c" or x.size < _SELECT_MIN or nranks > _SELECT_RANKS or
            not _key_bits(x.dtype)):
        return None
    return _Selector(x)


def select_ranks(x, ranks, sel=None):
    """The values of the given ranks (ints in [0, x.size)) of all of x's
    elements in NumPy's order, as a host array of x's dtype (sel: a
    selector of x already made, its counts reused)."""
    ranks = [int(r) for r in numpy.asarray(ranks).reshape(-1)]
    uniq = sorted(set(ranks))
    sel = sel if sel is not None and len(uniq) <= _SELECT_RANKS else selector(x, len(uniq))
    if sel is None:
        s = sort(ravel(x))
        vals = take(s, numpy.array(uniq, numpy.int64)).get() if uniq else \
            numpy.empty(0, x.dtype)
    else:
        vals = numpy.array(sel.values(uniq), dtype=x.dtype)
    vals = _signed_zeros(x, vals)
    pos = {r: i for i, r in enumerate(uniq)}
    return numpy.array([vals[pos[r]] for r in ranks], dtype=x.dtype)


def _signed_zeros(x, vals):
    """vals (host values of ranks of all of x's elements) with each zero
    given its sign by dgarray's rule: -0.0 where x holds no +0.0 (then
    every zero of x is -0.0, and so is NumPy's element at that rank),
    else +0.0.  Where x holds zeros of both signs, NumPy's element at a
    rank among them is whichever its partition puts there (its
    introselect's order of equal values); dgarray answers +0.0 then, on
    every path and layout (a selection's keys make -0.0 and 0.0 one key,
    so its values are found without the sign; a sort's, stable, would
    give the zero of the input order).  Interpolated results (the mean of
    a median's middle pair, a quantile's lerp) are then made from these
    values as NumPy makes them, so they take NumPy's sign of zero.  Costs
    one reduction of x (the minimum of its bits: +0.0's are all zero),
    only where a value found is a zero."""
    if x.dtype.kind != "f" or not numpy.any(vals == 0):
        return vals
    bits = _core._view_dtype(x if x.mode == "replica" else x.change_mode("replica"),
                             numpy.dtype(f"u{x.dtype.itemsize}"), 0)
    zero = numpy.array(0.0 if int(min_(bits)) == 0 else -0.0, x.dtype)
    return numpy.where(vals == 0, zero, vals)


def count_nan_with(x, sel):
    """count_nan(x), without reading x again where the selector's first
    pass tells: every NaN's key is the largest (kernels/dg_order.h), so an
    empty top bin means no NaN; for float16 and float32 the top bin's prefix
    (12 bits) covers the sign, the exponent and a mantissa bit, so it holds
    the NaNs and nothing else (float64's holds +inf too)."""
    if sel is not None and x.dtype.kind == "f":
        top = int(sel.first_counts()[-1])
        if not top or x.dtype.itemsize <= 4:
            return top
    return count_nan(x)


def count_nan(x):
    """How many NaNs x holds (0 for dtypes without): a host int."""
    if x.dtype.kind not in "fc":
        return 0
    return int(count_nonzero(numpy.isnan(x)))


def _on_devices(v):
    """A host result (NumPy's value, its dtype) as an array on the devices:
    a 0-d one filled there (enqueued, no host wait), others copied."""
    v = numpy.asarray(v)
    return full((), v, dtype=v.dtype) if v.ndim == 0 else asarray(v)


# ---- reductions over axes (NumPy's _ureduce) -------------------------------------------

def _rows(a, axis):
    """a with the reduced axes merged last: (x, axes or None); axis None:
    x is a flattened (one row)."""
    if axis is None:
        return ravel(a), None
    axes = normalize_axis_tuple(axis, a.ndim)
    keep = [ax for ax in range(a.ndim) if ax not in axes]
    t = transpose(a, keep + sorted(axes)) if keep + sorted(axes) != list(range(a.ndim)) else a
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    x = reshape(t, tuple(a.shape[ax] for ax in keep) + (n,)) if len(axes) != 1 else t
    return x, axes


def _finish(res, a, axes, keepdims, out, lead=0):
    """keepdims (new axes where a's were reduced) and out=."""
    if keepdims:
        kept = [n for i, n in enumerate(a.shape) if axes is not None and i not in axes]
        shape = list(res.shape[:lead])
        it = iter(kept)
        for i in range(a.ndim):
            shape.append(1 if axes is None or i in axes else next(it))
        res = reshape(asdist(res), tuple(shape))
    if out is not None:
        return _write_out(asdist(res), out)
    return res


def _empty_case(func, a, *args, **kwargs):
    """An empty input: NumPy's result, warnings and errors, computed by NumPy
    on an empty host array (nothing to gather)."""
    out = kwargs.pop("out", None)
    res = func(numpy.empty(a.shape, a.dtype), *args, **kwargs)
    res = asarray(res) if isinstance(res, (numpy.ndarray, numpy.generic)) else res
    if out is not None:
        return _write_out(asarray(res), out)
    return res


# ---- median -------------------------------------------------------------------------------

def _median_rows(x):
    """The median of every row of x (reduced axis last) on the devices."""
    n = x.shape[-1]
    s = sort(x, axis=-1)
    mid = n // 2
    part = view(s, (Ellipsis, slice(mid, mid + 1) if n % 2 else slice(mid - 1, mid + 1)))
    r = mean(part, axis=-1)
    if _inexact(x.dtype):
        last = view(s, (Ellipsis, -1))
        isn = numpy.isnan(last)
        if bool(any_(isn)):
            copyto(r, last, where=isn)
    return r


def _gather_rest(sel, q, nan_skip):
    """Where the ranks of a NaN-skipping statistic of a float array wait
    for the NaNs' count: the gathering about quantile q of its numbers
    enqueued behind the first count (_Selector.gather_first), the NaNs'
    count then read from the same counts in the same host wait."""
    if nan_skip and sel is not None and sel.dt.kind == "f" and sel.first_on():
        sel.gather_first(float(q))


def _median_all(x, nan_skip=False):
    """The median of all of x's elements (NaN results as NumPy gives them),
    from the one or two middle elements found by selection."""
    sel = selector(x, 2)
    # the ranks of a median of all elements need no count of NaNs: found
    # first, the NaNs counted after from the same first pass; a nanmedian's
    # middle found on the devices behind the first count
    _gather_rest(sel, 0.5, nan_skip)
    nans = count_nan_with(x, sel) if nan_skip else 0
    n = x.size - nans
    if n == 0:  # all NaN (nanmedian): NumPy's warning and NaN
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
        return _on_devices(numpy.array(numpy.nan, x.dtype))
    ranks = [(n - 1) // 2] if n % 2 else [n // 2 - 1, n // 2]
    vals = select_ranks(x, ranks, sel)
    if not nan_skip:
        nans = count_nan_with(x, sel)
    if nans and not nan_skip:
        return _on_devices(numpy.array(numpy.nan, x.dtype))
    return _on_devices(numpy.mean(vals))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axes (all by default): selection over the whole
    array, a sort of each row along an axis."""
    a = asdist(a)
    if a.size == 0:
        return _empty_case(numpy.median, a, axis=axis, out=out, keepdims=keepdims)
    x, axes = _rows(a, axis)
    res = _median_all(x) if axes is None or x.ndim == 1 else _median_rows(x)
    return _finish(res, a, axes, keepdims, out)


def _nan_rows_median(x):
    """The median of the non-NaN elements of every row (NaN and a warning
    for rows of NaNs only)."""
    s = sort(x, axis=-1)
    c = numpy.sum(numpy.logical_not(numpy.isnan(x)), axis=-1, keepdims=True)
    lo = numpy.maximum(numpy.floor_divide(numpy.subtract(c, 1), 2), 0)
    hi = numpy.maximum(numpy.minimum(numpy.floor_divide(c, 2), x.shape[-1] - 1), 0)
    one = mean(take_along_axis(s, lo, -1), axis=-1)
    two = mean(take_along_axis(s, numpy.concatenate((lo, hi), axis=-1), -1), axis=-1)
    r = where(numpy.equal(numpy.remainder(view(c, (Ellipsis, 0)), 2), 1), one, two)
    empty = numpy.equal(view(c, (Ellipsis, 0)), 0)
    if bool(any_(empty)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
        r = where(empty, numpy.array(numpy.nan, r.dtype), r)
    return r


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NOVALUE):
    """The median of the non-NaN elements along axes."""
    a = asdist(a)
    kd = False if keepdims is _NOVALUE else keepdims
    if a.size == 0:
        return _empty_case(numpy.nanmedian, a, axis=axis, out=out, keepdims=keepdims)
    if not _inexact(a.dtype):
        return median(a, axis, out, overwrite_input, kd)
    x, axes = _rows(a, axis)
    res = _median_all(x, True) if axes is None or x.ndim == 1 else _nan_rows_median(x)
    return _finish(res, a, axes, kd, out)


# ---- quantiles ----------------------------------------------------------------------------

def _check_q(q, pct):
    """q as a host array of quantiles in [0, 1] (NumPy's ValueError else)."""
    qh = numpy.asanyarray(q.get() if isinstance(q, _DA) else q)
    if pct:
        qh = numpy.true_divide(qh, 100, out=...)
    ok = qh.size == 0 or bool(qh.min() >= 0 and qh.max() <= 1) if not (
        qh.ndim == 1 and qh.size < 10) else all(0.0 <= v <= 1.0 for v in qh)
    if not ok:
        raise ValueError("Percentiles must be in the range [0, 100]" if pct else
                         "Quantiles must be in the range [0, 1]")
    return qh


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{dict.fromkeys(_METHODS).keys()}")


def _quantile_all(x, q, method, weak_q, nan_skip):
    """Quantiles of all of x's elements: the ranks found by selection, the
    interpolation on the host as NumPy's (host arrays of x's dtype)."""
    sel = selector(x, 2 * numpy.size(q))
    if numpy.size(q) == 1:  # a nan* quantile's ranks about q, behind the first count
        _gather_rest(sel, q.reshape(-1)[0], nan_skip)
    nans = count_nan_with(x, sel) if nan_skip and _inexact(x.dtype) else 0  # else after
    n = x.size - nans
    if n == 0:
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
        return _on_devices(numpy.full(q.shape, numpy.nan, dtype=x.dtype))
    v = numpy.asanyarray(virtual_index(method, n, q))
    if method in _INT_METHODS or (method == "linear" and _is_int(v)):
        res = select_ranks(x, numpy.remainder(v, n), sel).reshape(v.shape)
    else:
        prev, nxt = indexes(v, n, _inexact(x.dtype))
        vals = select_ranks(x, numpy.concatenate([numpy.remainder(prev, n).reshape(-1),
                                                  numpy.remainder(nxt, n).reshape(-1)]), sel)
        a, b = vals[:prev.size].reshape(prev.shape), vals[prev.size:].reshape(prev.shape)
        g = gamma_of(method, v, prev)
        res = lerp(a, b, float(g) if weak_q else g)
    if not nan_skip and _inexact(x.dtype):
        nans = count_nan_with(x, sel)
    if nans and not nan_skip:
        if numpy.ndim(res) == 0:  # NumPy's result is then the NaN element itself
            return _on_devices(numpy.array(numpy.nan, x.dtype))
        res = numpy.array(res)
        numpy.copyto(res, numpy.array(numpy.nan, x.dtype), casting="unsafe")
    return _on_devices(res)


def _nan_rows_to_nan(res, s):
    """res (rows + (k,)) NaN where the sorted row of s ends in a NaN."""
    lastv = view(s, (Ellipsis, slice(-1, None)))
    isn = numpy.isnan(lastv)
    if bool(any_(isn)):
        copyto(res, lastv, where=isn)


def _quantile_rows(x, q, method, weak_q, nan_skip):
    """Quantiles of every row of x (reduced axis last) on the devices:
    shape q.shape + rows."""
    s = sort(x, axis=-1)
    nrow = x.shape[-1]
    rows = x.shape[:-1]
    inexact = _inexact(x.dtype)
    qf = q.reshape(-1)
    if nan_skip and inexact:
        c = numpy.sum(numpy.logical_not(numpy.isnan(x)), axis=-1, keepdims=True)
        cq = c.astype(q.dtype) if q.dtype.kind in "fc" else c
        v = virtual_index(method, cq, qf)          # rows + (nq,)
        last = numpy.subtract(c, 1)
    else:
        c = None
        v = numpy.asanyarray(virtual_index(method, nrow, qf))  # (nq,)
        last = nrow - 1

    def gather(idx):
        if isinstance(idx, _DA):
            idx = where(numpy.less(idx, 0), numpy.add(idx, numpy.add(last, 1)), idx)
            return take_along_axis(s, numpy.maximum(idx, 0), -1)
        return take(s, numpy.remainder(idx, nrow), axis=-1)
    if method in _INT_METHODS or (method == "linear" and _is_int(v)):
        res = gather(v)
    else:
        prev, nxt = indexes(v, last + 1 if c is not None else nrow, inexact)
        g = gamma_of(method, v, prev)
        if weak_q:  # NumPy interpolates each row with a Python float
            g = g.astype(numpy.result_type(x.dtype, 1.0))
        res = lerp(gather(prev), gather(nxt), g)
    if inexact and not nan_skip:
        _nan_rows_to_nan(res, s)
    if c is not None:
        empty = numpy.equal(c, 0)
        if bool(any_(empty)):
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
            res = where(empty, numpy.array(numpy.nan, res.dtype), res)
    res = asdist(res)
    res = moveaxis(res, -1, 0)
    return reshape(res, q.shape + rows)


def _weighted_rows(x, w, q, nan_skip):
    """The inverted_cdf quantiles with weights of every row of x: the rows
    sorted with their weights, cumulative weights normalised, and each
    quantile's rank the count of cumulative weights below it."""
    order = argsort(x, axis=-1)
    s = take_along_axis(x, order, -1)
    ws = take_along_axis(w, order, -1)
    if nan_skip and _inexact(x.dtype):
        ws = numpy.multiply(ws, numpy.logical_not(numpy.isnan(s)))
    cdf = numpy.cumsum(ws, axis=-1, dtype=numpy.float64)
    total = view(cdf, (Ellipsis, slice(-1, None)))
    cdf = numpy.true_divide(cdf, total)
    if bool(any_(numpy.isnan(view(cdf, (Ellipsis, -1))))):
        raise ValueError("Weights included NaN, inf or were all zero.")
    if q.dtype.kind == "f":
        cdf = cdf.astype(q.dtype)
    zero0 = numpy.equal(view(cdf, (Ellipsis, slice(0, 1))), 0)
    if bool(any_(zero0)):
        copyto(cdf, -1, where=numpy.equal(cdf, 0))
    n = x.shape[-1]
    outs = []
    for qq in q.reshape(-1):
        k = sum_(numpy.less(cdf, qq), axis=-1, keepdims=True)
        k = numpy.minimum(k, n - 1)
        outs.append(take_along_axis(s, k, -1))
    res = concatenate(outs, axis=-1) if outs else s[..., :0]
    if _inexact(x.dtype) and not nan_skip:
        _nan_rows_to_nan(res, s)
    res = moveaxis(res, -1, 0)
    return reshape(res, q.shape + x.shape[:-1])


def _quantile_impl(a, q, axis, out, method, keepdims, weights, pct, nan_skip, npfunc):
    a = asdist(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    weak_q = type(q) in (int, float)
    qh = _check_q(q, pct)
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
        if axis is not None:
            axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
        w = weights_valid(weights, a, axis)
        if bool(numpy.any(numpy.less(w, 0))):
            raise ValueError("Weights must be non-negative.")
    _check_method(method)
    kd = False if keepdims is _NOVALUE else keepdims
    if a.size == 0:
        kw = {"axis": axis, "out": out, "method": method, "keepdims": keepdims}
        if weights is not None:
            kw["weights"] = numpy.empty(a.shape)
        return _empty_case(npfunc, a, q, **kw)
    if qh.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    x, axes = _rows(a, axis)
    if weights is not None:
        wx, _ = _rows(_broadcast_weights(w, a), axis)
        xr = x if x.ndim > 1 else view(x, (None, slice(None)))
        wr = wx if wx.ndim > 1 else view(wx, (None, slice(None)))
        res = _weighted_rows(xr, wr, qh, nan_skip)
        if x.ndim == 1:
            res = view(res, (Ellipsis, 0))
    elif axes is None or x.ndim == 1:
        res = _quantile_all(x, qh, method, weak_q, nan_skip)
    else:
        res = _quantile_rows(x, qh, method, weak_q, nan_skip)
    return _finish(res, a, axes, kd, out, lead=qh.ndim)


def _broadcast_weights(w, a):
    """quantile weights (checked by _stats.weights_valid) broadcast to a's
    shape."""
    return w if w.shape == a.shape else broadcast_to(w, a.shape)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The q-th quantiles along axes, by every method of NumPy's."""
    return _quantile_impl(a, q, axis, out, method, keepdims, weights, False,
                          False, numpy.quantile)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The q-th percentiles along axes."""
    return _quantile_impl(a, q, axis, out, method, keepdims, weights, True,
                          False, numpy.percentile)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=_NOVALUE, *, weights=None):
    """The q-th quantiles of the non-NaN elements along axes."""
    return _quantile_impl(a, q, axis, out, method, keepdims, weights, False,
                          True, numpy.nanquantile)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=_NOVALUE, *, weights=None):
    """The q-th percentiles of the non-NaN elements along axes."""
    return _quantile_impl(a, q, axis, out, method, keepdims, weights, True,
                          True, numpy.nanpercentile)


FUNCTIONS = {
    "median": median, "nanmedian": nanmedian, "quantile": quantile,
    "percentile": percentile, "nanquantile": nanquantile, "nanpercentile": nanpercentile,
}
