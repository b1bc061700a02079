"""dgarray.random: NumPy's Generator API on the devices, with counter-based streams.

``rng = dgarray.random.default_rng(seed)`` gives a :class:`Generator` whose
``random``, ``standard_normal``, ``normal``, ``uniform``, ``integers`` and
``choice`` follow NumPy's signatures, dtypes, ranges and errors, and return
DistributedArrays (Python or NumPy scalars when ``size`` is None, as NumPy
does).  Every chunk computes its own elements where it lives: the value of
element i of a call is a pure function of (seed, the call's stream number,
i), from Philox4x32-10 (kernels/dg_random.h), so that the values for a seed do
not depend on the number of devices, the layout (``index_map=``) or the
backend.  NumPy's own streams are not reproduced, only its API.

Each call takes the generator's next stream number, so a seed and a sequence
of calls give the same values every time.  Methods NumPy's Generator has and
this one does not (``exponential``, ``permutation``, ``shuffle``, ...) run
through NumPy (dgarray.FallbackWarning), seeded from the same key and stream.
"""
import math as _math
import operator as _operator

import numpy as _numpy

from . import _core, _fallback
from ._core import DistributedArray as _DA
from ._creation import asarray as _asarray, empty as _empty, zeros as _zeros
from ._index_map import layout_for as _layout_for

__all__ = ["Generator", "default_rng", "SeedSequence"]

SeedSequence = _numpy.random.SeedSequence

# dg_rand_dist of src/core/dg_backend.h
_UNIFORM, _NORMAL, _INTEGERS = 0, 1, 2
_STREAM_LIMIT = 1 << 56  # bits 56-63 of a fill's stream select a redraw
_FLOATS = (_numpy.dtype(_numpy.float32), _numpy.dtype(_numpy.float64))
_INT_CHARS = "?bBhHiIlLqQnN"
_M32 = 0xFFFFFFFF


def _shape_of(size):
    """NumPy's size argument as a shape tuple (None stays None)."""
    if size is None:
        return None
    if hasattr(size, "__index__"):
        shape = (_operator.index(size),)
    else:
        try:
            items = list(size)
        except TypeError:
            raise TypeError(f"expected a sequence of integers or a single integer, "
                            f"got '{size}'") from None
        shape = tuple(_operator.index(n) for n in items)
    if any(n < 0 for n in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _is_scalar(x):
    return x.ndim == 0 if isinstance(x, _DA) else _numpy.ndim(x) == 0


def _host_float(x):
    return float(_numpy.asarray(x, dtype=_numpy.float64))


def _as_float_array(x):
    """x as a float64 DistributedArray or ndarray (DistributedArrays stay on
    the devices)."""
    if isinstance(x, _DA):
        return x if x.dtype == _numpy.float64 else x.astype(_numpy.float64)
    return _numpy.asarray(x, dtype=_numpy.float64)


def _any(x):
    """bool(any(x)) for a DistributedArray or ndarray of bools."""
    return bool(x.any())


def _broadcast_shape(size, *params, size_first=True):
    """The result shape of a draw with array parameters: NumPy's broadcast of
    the parameters (and of size, which it must then equal; NumPy's error
    names size first for the float draws, last for integers)."""
    shapes = [tuple(p.shape) for p in params]
    if size is None:
        return _numpy.broadcast_shapes(*shapes)
    shape = _shape_of(size) if not isinstance(size, tuple) else size
    both = [shape] + shapes if size_first else shapes + [shape]
    if _numpy.broadcast_shapes(*both) != shape:  # NumPy's shape-mismatch ValueError
        raise ValueError("shape mismatch: objects cannot be broadcast to a single shape")
    return shape


def _int_dtype(dtype):
    """dtype= of integers(): the dtype, and whether NumPy returns a Python
    scalar for size=None (dtype given as the Python type int or bool)."""
    py = dtype is int or dtype is bool
    dt = _numpy.dtype(dtype)
    if dt.char not in _INT_CHARS:
        raise TypeError(f"Unsupported dtype {dt!r} for integers")
    return dt, py


def _int_bounds(dt):
    """Lowest and highest value of an integer or bool dtype."""
    if dt == _numpy.bool_:
        return 0, 1
    info = _numpy.iinfo(dt)
    return int(info.min), int(info.max)


def _any_below(x, v):
    """any(x < v) for an integer array x and a Python int v of any size."""
    info = _numpy.iinfo(x.dtype)
    if v <= info.min:
        return False
    return x.size > 0 if v > info.max else _any(x < v)


def _any_above(x, v):
    """any(x > v) for an integer array x and a Python int v of any size."""
    info = _numpy.iinfo(x.dtype)
    if v >= info.max:
        return False
    return x.size > 0 if v < info.min else _any(x > v)


def _bounds_error(closed, low_is_zero):
    if low_is_zero:
        return ValueError("high < 0" if closed else "high <= 0")
    return ValueError("low > high" if closed else "low >= high")


def _mulhi64(a, b):
    """The high 64 bits of a * b for uint64 DistributedArrays."""
    al, ah, bl, bh = a & _M32, a >> 32, b & _M32, b >> 32
    lh, hl = al * bh, ah * bl
    mid = ((al * bl) >> 32) + (lh & _M32) + (hl & _M32)
    return ah * bh + (lh >> 32) + (hl >> 32) + (mid >> 32)


class Generator:
    """A random generator on the devices: NumPy's Generator API over a
    counter-based Philox4x32-10 keyed by the seed.  Make one with
    :func:`default_rng`."""

    def __init__(self, seed_seq):
        if not isinstance(seed_seq, _numpy.random.SeedSequence):
            seed_seq = _numpy.random.SeedSequence(seed_seq)
        self._seed_seq = seed_seq
        k = seed_seq.generate_state(2, _numpy.uint32)
        self._key = (int(k[0]), int(k[1]))
        self._stream = 0

    def __repr__(self):
        return f"Generator(Philox4x32-10) at {id(self):#X}"

    def _next_stream(self):
        s = self._stream
        if s >= _STREAM_LIMIT:
            raise RuntimeError("this Generator has used all of its 2**56 streams; "
                               "spawn() new ones")
        self._stream = s + 1
        return s

    def spawn(self, n_children):
        """n_children new Generators with independent streams (NumPy's
        SeedSequence.spawn)."""
        return [Generator(s) for s in self._seed_seq.spawn(n_children)]

    # ---- the fill on the devices -------------------------------------------------

    def _fill(self, shape, dtype, dist, a=0.0, b=1.0, lo=0, rng=0, index_map=None,
              stream=None):
        """A new DistributedArray of `shape` filled on the devices."""
        dt = _numpy.dtype(dtype)
        out = _core._empty(shape, dt, _layout_for(shape, index_map), 0)
        self._fill_into(out, dist, a, b, lo, rng, stream)
        return out

    def _fill_into(self, out, dist, a=0.0, b=1.0, lo=0, rng=0, stream=None):
        if stream is None:
            stream = self._next_stream()
        _core._fill_random(out, dist, self._key[0], self._key[1], stream, float(a), float(b),
                           lo % (1 << 64), rng % (1 << 64))
        return out

    def _float_draw(self, name, size, dtype, out, dist, a, b, index_map):
        """random() and standard_normal(): size, dtype= and out= as NumPy takes
        them; a float, or the filled array."""
        dt = _numpy.dtype(dtype)
        if dt not in _FLOATS:
            raise TypeError(f"Unsupported dtype {dt!r} for {name}")
        if out is not None:
            return self._fill_out(out, size, dt, dist, a, b)
        return self._sized_draw(size, dt, dist, a, b, index_map)

    def _sized_draw(self, size, dt, dist, a, b, index_map):
        """A float draw with scalar parameters: a Python float for size=None
        (as NumPy returns), else a new array."""
        shape = _shape_of(size)
        res = self._fill(() if shape is None else shape, dt, dist, a, b,
                         index_map=index_map)
        return float(res) if shape is None else res

    def _fill_out(self, out, size, dt, dist, a, b):
        """Writes a draw into out= (a DistributedArray or ndarray)."""
        if size is not None and _shape_of(size) != tuple(out.shape):
            raise ValueError("size must match out.shape when used together")
        if out.dtype != dt:
            raise TypeError(f"Supplied output array has the wrong type. Expected {dt}, "
                            f"got {out.dtype}")
        if isinstance(out, _DA) and out.mode == "replica":
            return self._fill_into(out, dist, a, b)
        if isinstance(out, _DA):
            raise ValueError("out= must be in replica mode")
        if not isinstance(out, _numpy.ndarray):
            raise TypeError("out must be a DistributedArray or a numpy array")
        out[...] = self._fill(out.shape, dt, dist, a, b).get()
        return out

    # ---- NumPy's Generator methods ------------------------------------------------

    def random(self, size=None, dtype=_numpy.float64, out=None, *, index_map=None):
        """Floats uniform in [0, 1) (float64 or float32), as NumPy's
        Generator.random."""
        return self._float_draw("random", size, dtype, out, _UNIFORM, 0.0, 1.0, index_map)

    def standard_normal(self, size=None, dtype=_numpy.float64, out=None, *, index_map=None):
        """Standard normal floats (float64 or float32; Box-Muller), as NumPy's
        Generator.standard_normal.  float32 ones are computed in single
        precision, four from a Philox block (kernels/dg_random.h), not
        float64 ones rounded."""
        return self._float_draw("standard_normal", size, dtype, out, _NORMAL, 0.0, 1.0,
                                index_map)

    def normal(self, loc=0.0, scale=1.0, size=None, *, index_map=None):
        """Normal floats loc + scale * z, as NumPy's Generator.normal (loc and
        scale may be arrays or DistributedArrays that broadcast)."""
        if _is_scalar(loc) and _is_scalar(scale):
            loc, scale = _host_float(loc), _host_float(scale)
            if scale < 0:
                raise ValueError("scale < 0")
            return self._sized_draw(size, _numpy.float64, _NORMAL, loc, scale, index_map)
        loc, scale = _as_float_array(loc), _as_float_array(scale)
        if _any(scale < 0):
            raise ValueError("scale < 0")
        shape = _broadcast_shape(size, loc, scale)
        z = self._fill(shape, _numpy.float64, _NORMAL, index_map=index_map)
        return loc + scale * z

    def uniform(self, low=0.0, high=1.0, size=None, *, index_map=None):
        """Floats uniform in [low, high), as NumPy's Generator.uniform (low
        and high may be arrays or DistributedArrays that broadcast)."""
        if _is_scalar(low) and _is_scalar(high):
            low, high = _host_float(low), _host_float(high)
            rng = high - low
            if not _numpy.isfinite(rng):
                raise OverflowError("high - low range exceeds valid bounds")
            if rng < 0:
                raise ValueError("high - low < 0")
            return self._sized_draw(size, _numpy.float64, _UNIFORM, low, rng, index_map)
        low, high = _as_float_array(low), _as_float_array(high)
        rng = high - low
        if not bool(_numpy.isfinite(rng).all()):
            raise OverflowError("Range exceeds valid bounds")
        if _any(rng < 0):
            raise ValueError("high - low < 0")
        shape = _broadcast_shape(size, low, high)
        u = self._fill(shape, _numpy.float64, _UNIFORM, index_map=index_map)
        return low + rng * u

    def integers(self, low, high=None, size=None, dtype=_numpy.int64, endpoint=False, *,
                 index_map=None):
        """Integers uniform in [low, high) (or [low, high] with endpoint), as
        NumPy's Generator.integers: unbiased (Lemire's multiply-shift with
        rejection), of any integer or bool dtype.  low and high may be arrays
        or DistributedArrays that broadcast."""
        dt, py_scalar = _int_dtype(dtype)
        if high is None:
            low, high = 0, low
        shape = _shape_of(size)
        if shape is not None and _math.prod(shape) == 0:
            return _empty(shape, dt, index_map=index_map)
        closed = bool(endpoint)
        lo_bound, hi_bound = _int_bounds(dt)
        one = shape is not None
        low_h = None if isinstance(low, _DA) else _numpy.asarray(low)
        high_h = None if isinstance(high, _DA) else _numpy.asarray(high)
        if (low_h is not None and high_h is not None
                and (low_h.ndim == 0 or (one and low_h.ndim == 1 and low_h.size == 1))
                and (high_h.ndim == 0 or (one and high_h.ndim == 1 and high_h.size == 1))):
            lo, hi = int(low_h.reshape(())), int(high_h.reshape(()))
            if not closed:
                hi -= 1
            if lo < lo_bound:
                raise ValueError(f"low is out of bounds for {dt}")
            if hi > hi_bound:
                raise ValueError(f"high is out of bounds for {dt}")
            if lo > hi:
                raise _bounds_error(closed, lo == 0)
            res = self._fill(() if shape is None else shape, dt, _INTEGERS, lo=lo,
                             rng=hi - lo + 1, index_map=index_map)
            if shape is not None:
                return res
            value = res.get()[()]
            return bool(value) if dtype is bool else int(value) if dtype is int else value
        return self._integers_arrays(low, high, shape, dt, closed, lo_bound, hi_bound,
                                     index_map)

    def _integers_arrays(self, low, high, shape, dt, closed, lo_bound, hi_bound, index_map):
        """integers() with array bounds: the draws of the scalar path (the same
        words, Lemire's method and redraws), computed with elementwise ops on
        the devices."""
        def ints(x):
            """x as an int64 or uint64 DistributedArray (floats truncated)."""
            if not isinstance(x, _DA):
                h = _numpy.asarray(x)
                if h.dtype.kind == "O":
                    h = h.astype(_numpy.uint64 if (h >= 2 ** 63).any() else _numpy.int64)
                x = _asarray(h)
            if x.dtype in (_numpy.int64, _numpy.uint64):
                return x
            return x.astype(_numpy.uint64 if x.dtype.kind == "u" else _numpy.int64)

        low, high = ints(low), ints(high)
        if _any_below(low, lo_bound):
            raise ValueError(f"low is out of bounds for {dt}")
        if _any_above(high, hi_bound + (0 if closed else 1)):
            raise ValueError(f"high is out of bounds for {dt}")
        # one dtype for both, that holds every value in bounds
        work = _numpy.uint64 if dt == _numpy.uint64 else _numpy.int64
        if _any_below(high, lo_bound + (0 if closed else 1)):
            raise _bounds_error(closed, bool((low == 0).all()))
        low, high = low.astype(work), high.astype(work)
        if _any(low > high if closed else low >= high):
            raise _bounds_error(closed, bool((low == 0).all()))
        shape = _broadcast_shape(shape, low, high, size_first=False)
        lo_u = low.astype(_numpy.uint64)
        rng = high.astype(_numpy.uint64) - lo_u
        if closed:
            rng = rng + 1  # 2**64 wraps to 0, which the fill reads as 2**64
        stream = self._next_stream()
        wide = dt.itemsize > 4
        raw = _numpy.uint64 if wide else _numpy.uint32

        def words(attempt):
            w = self._fill(shape, raw, _INTEGERS, lo=0, rng=0 if wide else 1 << 32,
                           index_map=index_map, stream=stream + (attempt << 56))
            return w if wide else w.astype(_numpy.uint64)

        full = rng == 0  # 2**64 values (64-bit dtypes only)
        r1 = rng + full
        if wide:
            thresh = (0 - r1) % r1  # 2**64 mod range

            def draw(x):
                return _mulhi64(x, rng) + x * full, x * rng < thresh
        else:
            thresh = ((1 << 32) - r1) % r1

            def draw(x):
                m = x * rng
                return m >> 32, (m & _M32) < thresh
        res, rejected = draw(words(0))
        attempt = 0
        while _any(rejected):
            attempt = (attempt + 1) & 0xFF
            again, still = draw(words(attempt))
            _numpy.add(again, 0, out=res, where=rejected)
            rejected = rejected & still
        res = lo_u + res
        if tuple(res.shape) != shape:  # bounds broadcast, no draw wider than them
            res = _zeros(shape, _numpy.uint64, index_map=index_map) + res
        return res.astype(dt)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Samples from a population, as NumPy's Generator.choice.  Indices are
        drawn on the devices (integers) for replace=True without p; with p=
        the uniforms are drawn on the devices and looked up in the cumulative
        probabilities on the host; without replacement the population's
        random keys (64-bit draws, or Efraimidis-Spirakis keys log(u) / p) are
        drawn on the devices and the smallest (largest) sorted on the host,
        so a sample without replacement is always in random order (shuffle=
        is accepted for NumPy's signature).  The elements of an array
        population are taken on the host."""
        a_orig = a
        if isinstance(a, _DA):
            a = a.get()
        a = _numpy.asarray(a)
        if a.ndim == 0:
            try:
                pop = _operator.index(a.item())
            except TypeError as exc:
                raise ValueError(f"a must be a sequence or an integer, "
                                 f"not {type(a_orig)}") from exc
            if pop <= 0 and (size is None or _numpy.prod(size) != 0):
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            pop = a.shape[axis]
            if pop == 0 and (size is None or _numpy.prod(size) != 0):
                raise ValueError("a cannot be empty unless no samples are taken")
        if p is not None:
            atol = _numpy.sqrt(_numpy.finfo(_numpy.float64).eps)
            if isinstance(p, _numpy.ndarray) and _numpy.issubdtype(p.dtype, _numpy.floating):
                atol = max(atol, _numpy.sqrt(_numpy.finfo(p.dtype).eps))
            p = _numpy.ascontiguousarray(_numpy.asarray(p, dtype=_numpy.float64))
            if p.ndim != 1:
                raise ValueError("p must be 1-dimensional")
            if p.size != pop:
                raise ValueError("a and p must have same size")
            p_sum = _numpy.sum(p)
            if _numpy.isnan(p_sum):
                raise ValueError("Probabilities contain NaN")
            if _numpy.logical_or.reduce(p < 0):
                raise ValueError("Probabilities are not non-negative")
            if abs(p_sum - 1.0) > atol:
                raise ValueError("Probabilities do not sum to 1. See Notes section of "
                                 "docstring for more information.")
        shape = () if size is None else _shape_of(size)
        n = _math.prod(shape)
        if replace and p is None:
            idx = self.integers(0, max(pop, 1), size=shape)
        elif replace:
            u = self.random(shape)
            cdf = p.cumsum()
            cdf /= cdf[-1]
            idx = _host_to_like(cdf.searchsorted(u.get(), side="right").astype(_numpy.int64),
                                u)
        else:
            if n > pop:
                raise ValueError("Cannot take a larger sample than population when "
                                 "replace is False")
            if p is not None:
                if _numpy.count_nonzero(p > 0) < n:
                    raise ValueError("Fewer non-zero entries in p than size")
                with _numpy.errstate(divide="ignore"):
                    keys = -_numpy.log(self.random(pop).get()) / p
                order = _numpy.argsort(keys, kind="stable")
            else:
                keys = self._fill((pop,), _numpy.uint64, _INTEGERS, lo=0, rng=0).get()
                order = _numpy.argsort(keys, kind="stable")
            idx = _asarray(order[:n].reshape(shape).astype(_numpy.int64))
        if a.ndim == 0:
            return int(idx) if size is None else idx
        host_idx = idx.get() if isinstance(idx, _DA) else _numpy.asarray(idx)
        if size is not None and host_idx.ndim == 0 and a.ndim == 1:
            res = _numpy.empty((), dtype=a.dtype)
            res[()] = a[host_idx]
            return _asarray(res)
        res = a.take(host_idx.astype(_numpy.intp), axis=axis)
        if size is None and a.ndim == 1:
            return res
        return _asarray(res)

    def __getattr__(self, name):
        """NumPy Generator methods dgarray does not implement: run by NumPy's
        Generator seeded from this one's key and next stream, with a
        FallbackWarning; arrays come back as DistributedArrays."""
        if name.startswith("_") or not callable(getattr(_numpy.random.Generator, name, None)):
            raise AttributeError(f"'Generator' object has no attribute '{name}'")

        def method(*args, **kwargs):
            host = _numpy.random.default_rng([self._key[0], self._key[1],
                                              self._next_stream()])
            writes = (0,) if name == "shuffle" else ()
            return _fallback.call(getattr(host, name), args, kwargs,
                                  f"numpy.random.Generator.{name}", writes=writes)
        method.__name__ = name
        return method


def _host_to_like(host, like):
    """host values as a DistributedArray laid out like `like`."""
    return _asarray(host, index_map=like.index_map)


def default_rng(seed=None):
    """A Generator seeded by `seed` (None, an int, a sequence of ints or a
    SeedSequence, as NumPy's default_rng takes; a dgarray Generator is
    returned as it is)."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, _numpy.random.Generator):
        seed = seed.bit_generator.seed_seq
    elif isinstance(seed, _numpy.random.BitGenerator):
        seed = seed.seed_seq
    if not isinstance(seed, _numpy.random.SeedSequence):
        seed = _numpy.random.SeedSequence(seed)
    return Generator(seed)


def __getattr__(name):
    """numpy.random's other functions (the legacy rand, randn, seed, ...) run
    through NumPy with a FallbackWarning; arrays come back as
    DistributedArrays."""
    obj = getattr(_numpy.random, name, None) if not name.startswith("_") else None
    if obj is None:
        raise AttributeError(f"module 'dgarray.random' has no attribute '{name}'")
    if isinstance(obj, type) or not callable(obj):
        return obj

    def fn(*args, **kwargs):
        writes = (0,) if name == "shuffle" else ()
        return _fallback.call(obj, args, kwargs, f"numpy.random.{name}", writes=writes)
    fn.__name__ = name
    fn.__doc__ = obj.__doc__
    return fn


