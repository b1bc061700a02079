"""NumPy's array-manipulation functions beyond the shape module, composed
of dgarray's views, assignments, gathers and elementwise work: choose,
resize, select, piecewise, place, putmask, extract, append, insert,
delete, trim_zeros, rot90, unstack, block, dsplit, row_stack, ediff1d,
sort_complex, ix_, ravel_multi_index, unravel_index, packbits, unpackbits,
the as*array conversions, isfortran, may_share_memory, shares_memory,
apply_along_axis, apply_over_axes.
"""
import collections.abc
import operator
import warnings

import numpy

from . import _core
from ._compose import asdist, host_or_dist, normalize_axis_index, normalize_axis_tuple, view
from ._creation import arange, asarray, empty, full, ones, zeros, zeros_like
from ._elementwise import copyto
from ._indexing import flatnonzero, getitem, nonzero, put, setitem, take
from ._reductions import all as all_, any as any_, max as max_, min as min_
from ._shape import (_shape_arg, argwhere, atleast_1d, broadcast_arrays, broadcast_to,
                     concatenate, expand_dims, flip, moveaxis, ravel, reshape, sort, split,
                     transpose, vstack)

_DA = _core.DistributedArray


def _at(axis, sl):
    return (slice(None),) * axis + (sl,)


# ---- choosing -----------------------------------------------------------------------------

def _weak(v):
    """v as NumPy's select keeps it: Python scalars weak, others arrays."""
    return v if type(v) in (int, float, complex) else host_or_dist(v)


def choose(a, choices, out=None, mode="raise"):
    """Elements picked from the choices by the indices in a (all broadcast
    together): one masked write per choice, on the devices."""
    a = asdist(a)
    if isinstance(choices, _DA):
        cs = [view(choices, (k,)) for k in range(choices.shape[0])]
    else:
        cs = [host_or_dist(c) for c in choices]
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if a.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {a.dtype!r} to dtype('int64') according "
                        "to the rule 'safe'")
    n = len(cs)
    if n == 0:
        raise ValueError("0-length sequence.")
    dt = numpy.result_type(*[c.dtype for c in cs])
    shape = numpy.broadcast_shapes(a.shape, *[c.shape for c in cs])
    idx = a.astype(numpy.int64)
    if mode == "wrap":
        idx = numpy.remainder(idx, n)
    elif mode == "clip":
        idx = numpy.minimum(numpy.maximum(idx, 0), n - 1)
    elif a.size:
        lo, hi = min_(idx), max_(idx)
        if int(lo) < 0 or int(hi) >= n:
            raise ValueError("invalid entry in choice array")
    res = empty(shape, dt)
    for k, c in enumerate(cs):
        copyto(res, c, casting="unsafe", where=numpy.equal(idx, k))
    if out is not None:
        copyto(out, res, casting="unsafe")
        return out
    return res


def select(condlist, choicelist, default=0):
    """The choice of the first true condition for each element (default
    where none is)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [_weak(c) for c in choicelist] + [_weak(default)]
    try:
        dt = numpy.result_type(*[c.dtype if hasattr(c, "dtype") else c for c in choices])
    except TypeError as e:
        raise TypeError(f"Choicelist and default value do not have a common dtype: {e}") \
            from None
    conds = broadcast_arrays(*[asdist(c) for c in condlist])
    chs = broadcast_arrays(*[asdist(numpy.asarray(c)) if not hasattr(c, "dtype") else asdist(c)
                             for c in choices])
    for i, c in enumerate(conds):
        if c.dtype != numpy.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = conds[0].shape if chs[0].ndim == 0 else \
        numpy.broadcast_shapes(conds[0].shape, chs[0].shape)
    res = full(shape, 0, dt)
    copyto(res, chs[-1], casting="unsafe")
    for c, cond in zip(chs[-2::-1], conds[::-1]):
        copyto(res, c, where=cond)
    return res


def piecewise(x, condlist, funclist, *args, **kw):
    """Each function applied to the elements its condition selects (the
    elements gathered by mask on the devices, the results scattered back)."""
    x = asdist(x)
    n2 = len(funclist)
    if numpy.isscalar(condlist) or (not isinstance(condlist[0], (list, numpy.ndarray, _DA)) and
                                    x.ndim != 0):
        condlist = [condlist]
    conds = [asdist(c).astype(bool) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        stacked = concatenate([reshape(c, (1,) + c.shape) for c in conds])
        conds.append(numpy.logical_not(any_(stacked, axis=0)))
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = zeros_like(x)
    for cond, func in zip(conds, funclist):
        if not isinstance(func, collections.abc.Callable):
            y[cond] = func
        else:
            vals = x[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y


def place(arr, mask, vals):
    """arr's elements where mask is true set to vals, repeated in order."""
    if not isinstance(arr, _DA):
        raise TypeError(f"argument 1 must be numpy.ndarray, not {type(arr).__name__}")
    m = asdist(mask)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    idx = flatnonzero(ravel(m.astype(bool)))
    v = host_or_dist(vals)
    if idx.shape[0] and v.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    if idx.shape[0]:
        put(arr, idx, v)


def putmask(a, mask, values):
    """a.flat[i] = values.flat[i % values.size] where mask is true."""
    if not isinstance(a, _DA):
        raise TypeError(f"putmask: first argument must be an array, not {type(a).__name__}")
    m = asdist(mask)
    if m.shape != a.shape:
        if m.size != a.size:
            raise ValueError("putmask: mask and data must be the same size")
        m = broadcast_to(m, a.shape)
    idx = flatnonzero(ravel(m.astype(bool)))
    v = ravel(asdist(values))
    if idx.shape[0] and v.size == 0:
        return
    if idx.shape[0]:
        vals = take(v, numpy.remainder(idx, v.size))
        put(a, idx, vals)


def extract(condition, arr):
    """The elements of arr where condition is true, in C order."""
    c = ravel(asdist(condition))
    return take(ravel(asdist(arr)), nonzero(c)[0])


# ---- inserting and deleting ----------------------------------------------------------------

def append(arr, values, axis=None):
    """values appended to arr (both flattened when axis is None)."""
    a = asdist(arr)
    if axis is None:
        if a.ndim != 1:
            a = ravel(a)
        values = ravel(asdist(values))
        axis = a.ndim - 1
    return concatenate((a, values), axis=axis)


def _flat_axis(arr, axis):
    a = asdist(arr)
    if axis is None:
        if a.ndim != 1:
            a = ravel(a)
        return a, a.ndim - 1
    return a, normalize_axis_index(axis, a.ndim)


def insert(arr, obj, values, axis=None):
    """values inserted before the given indices along an axis (a new array:
    the old elements by mask, the new ones by index)."""
    a, axis = _flat_axis(arr, axis)
    N = a.shape[axis]
    shape = list(a.shape)
    if isinstance(obj, slice):
        indices = numpy.arange(*obj.indices(N), dtype=numpy.intp)
    else:
        indices = numpy.array(obj.get() if isinstance(obj, _DA) else obj)
        if indices.dtype == bool:
            if numpy.ndim(obj) != 1:
                raise ValueError("boolean array argument obj to insert must be one dimensional")
            indices = numpy.flatnonzero(indices)
        elif indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or "
                             "scalar")
    if indices.size == 1:
        index = indices.item()
        if index < -N or index > N:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {N}")
        if index < 0:
            index += N
        v = asdist(numpy.array(values, dtype=a.dtype, ndmin=a.ndim) if not isinstance(
            values, _DA) else values.astype(a.dtype))
        if v.ndim < a.ndim:
            v = reshape(v, (1,) * (a.ndim - v.ndim) + v.shape)
        if indices.ndim == 0:
            v = moveaxis(v, 0, axis)
        k = v.shape[axis]
        shape[axis] += k
        new = empty(tuple(shape), a.dtype)
        setitem(new, _at(axis, slice(None, index)), view(a, _at(axis, slice(None, index))))
        setitem(new, _at(axis, slice(index, index + k)), v)
        setitem(new, _at(axis, slice(index + k, None)), view(a, _at(axis, slice(index, None))))
        return new
    if indices.size == 0 and not isinstance(obj, (numpy.ndarray, _DA)):
        indices = indices.astype(numpy.intp)
    indices = indices.astype(numpy.intp, copy=True)
    indices[indices < 0] += N
    k = len(indices)
    order = indices.argsort(kind="mergesort")
    indices[order] += numpy.arange(k)
    shape[axis] += k
    old = numpy.ones(shape[axis], dtype=bool)
    old[indices] = False
    new = empty(tuple(shape), a.dtype)
    setitem(new, _at(axis, indices), values)
    setitem(new, _at(axis, old), a)
    return new


def delete(arr, obj, axis=None):
    """A copy of arr without the given indices along an axis."""
    a, axis = _flat_axis(arr, axis)
    N = a.shape[axis]
    if isinstance(obj, slice):
        keep = numpy.ones(N, dtype=bool)
        keep[obj] = False
        return getitem(a, _at(axis, keep))
    if isinstance(obj, (int, numpy.integer)) and not isinstance(obj, (bool, numpy.bool_)):
        single = True
    else:
        single = False
        o = numpy.asarray(obj.get() if isinstance(obj, _DA) else obj)
        if o.size == 0 and not isinstance(obj, (numpy.ndarray, _DA)):
            o = o.astype(numpy.intp)
        elif o.size == 1 and o.dtype.kind in "ui":
            obj, single = o.item(), True
    if single:
        obj = operator.index(obj)
        if obj < -N or obj >= N:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {N}")
        keep = numpy.ones(N, dtype=bool)
        keep[obj] = False
    elif o.dtype == bool:
        if o.shape != (N,):
            raise ValueError("boolean array argument obj to delete must be one dimensional and "
                             f"match the axis length of {N}")
        keep = ~o
    else:
        keep = numpy.ones(N, dtype=bool)
        keep[o,] = False
    return getitem(a, _at(axis, keep)).copy() if keep.all() else getitem(a, _at(axis, keep))


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading and/or trailing zeros (along axes): a
    view."""
    f = asdist(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(f.ndim)) if axis is None else normalize_axis_tuple(axis, f.ndim,
                                                                           argname="axis")
    if not axes:
        return filt
    nz = argwhere(f)
    if nz.shape[0] == 0:
        start = stop = [0] * f.ndim
    else:
        start = [int(v) for v in min_(nz, axis=0).get()]
        stop = [int(v) + 1 for v in max_(nz, axis=0).get()]
        if "f" not in trim:
            start = [None] * f.ndim
        if "b" not in trim:
            stop = [None] * f.ndim
    key = tuple(slice(start[ax], stop[ax]) if ax in axes else slice(None)
                for ax in range(f.ndim))
    return view(f, key)


# ---- rotations, stacks and splits ---------------------------------------------------------

def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of the axes: a view."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = asdist(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return view(m, ())
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(m, axes[1]), perm)
    return flip(transpose(m, perm), axes[1])


def unstack(x, /, *, axis=0):
    """The slices of x along an axis, as a tuple of views."""
    x = asdist(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    t = moveaxis(x, axis, 0)
    return tuple(view(t, (i,)) for i in range(t.shape[0]))


def block(arrays):
    """An array assembled from nested lists of blocks (NumPy's block)."""

    def depth_of(x, parents):
        if isinstance(x, tuple):
            raise TypeError(f"{_path(parents)} is a tuple. Only lists can be used to arrange "
                            "blocks, and np.block does not allow implicit conversion from "
                            "tuple to ndarray.")
        if isinstance(x, list):
            if not x:
                raise ValueError(f"{_path(parents)} cannot be empty. Lists cannot contain "
                                 "empty lists.")
            ds = [depth_of(e, parents + [i]) for i, e in enumerate(x)]
            if len(set(d[0] for d in ds)) != 1:
                raise ValueError(f"List depths are mismatched. First element was at depth "
                                 f"{ds[0][0] + 1}, but there is an element at depth "
                                 f"{[d for d in ds if d[0] != ds[0][0]][0][0] + 1} "
                                 f"({_path(parents + [ds.index([d for d in ds if d[0] != ds[0][0]][0])])})")
            return (ds[0][0] + 1, max(d[1] for d in ds))
        return (0, asdist(x).ndim)

    def _path(p):
        return "arrays" + "".join(f"[{i}]" for i in p)
    list_depth, arr_ndim = depth_of(arrays, [])
    ndim = max(arr_ndim, list_depth)

    def assemble(x, depth):
        if isinstance(x, list):
            parts = [assemble(e, depth + 1) for e in x]
            return concatenate(parts, axis=-(list_depth - depth))
        a = asdist(x)
        if a.ndim < ndim:
            a = reshape(a, (1,) * (ndim - a.ndim) + a.shape)
        return a
    return assemble(arrays, 0)


def dsplit(ary, indices_or_sections):
    """Views of ary along its third axis."""
    a = asdist(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """vstack, under NumPy's deprecated name."""
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened array,
    with values before and after."""
    a = ravel(asdist(ary))
    dt = a.dtype
    d = numpy.subtract(view(a, (slice(1, None),)), view(a, (slice(None, -1),)))
    parts = []
    for extra, name in ((to_begin, "to_begin"), (to_end, "to_end")):
        if extra is None:
            parts.append(None)
            continue
        e = ravel(asdist(extra))
        if not numpy.can_cast(e.dtype, dt, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        parts.append(e.astype(dt))
    if parts[0] is None and parts[1] is None:
        return d
    seq = [p for p in (parts[0], d, parts[1]) if p is not None]
    return concatenate(seq)


def sort_complex(a):
    """The elements sorted (real part first), as a complex array."""
    b = sort(asdist(a))
    if b.dtype.kind == "c":
        return b
    return b.astype("F" if b.dtype.char in "bhBH" else "D")


# ---- index arithmetic ----------------------------------------------------------------------

def ix_(*args):
    """An open mesh from 1-d sequences (booleans as their indices)."""
    out = []
    nd = len(args)
    for k, s in enumerate(args):
        x = host_or_dist(s)
        if not isinstance(s, (_DA, numpy.ndarray)) and x.size == 0:
            x = x.astype(numpy.intp)
        if x.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        x = asdist(x)
        if x.dtype == numpy.bool_:
            x = nonzero(x)[0]
        out.append(reshape(x, (1,) * k + (x.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of the coordinate arrays in an array of shape dims."""
    dims = tuple(operator.index(d) for d in (dims if numpy.iterable(dims) else (dims,)))
    idx = [asdist(i) for i in multi_index]
    if len(idx) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = mode if isinstance(mode, (tuple, list)) else (mode,) * len(dims)
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    for i in idx:
        if i.dtype.kind not in "iu":
            raise TypeError("only int indices permitted")
    ws = [1] * len(dims)
    order_axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    w = 1
    for ax in order_axes:
        ws[ax] = w
        w *= dims[ax]
    res = None
    for i, n, m, wt in zip(idx, dims, modes, ws):
        i = i.astype(numpy.intp)
        if m == "wrap":
            i = numpy.remainder(i, n)
        elif m == "clip":
            i = numpy.minimum(numpy.maximum(i, 0), n - 1)
        elif i.size and (int(min_(i)) < 0 or int(max_(i)) >= n):
            raise ValueError("invalid entry in coordinates array")
        t = numpy.multiply(i, wt) if wt != 1 else i
        res = t if res is None else numpy.add(res, t)
    return res


def unravel_index(indices, shape, order="C"):
    """The coordinate arrays of flat indices into an array of shape."""
    shape = tuple(operator.index(d) for d in (shape if numpy.iterable(shape) else (shape,)))
    x = asdist(indices)
    if x.dtype.kind not in "iu":
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to dtype('int64') according "
                        "to the rule 'safe'")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    size = 1
    for n in shape:
        size *= n
    x = x.astype(numpy.intp)
    if x.size:
        lo, hi = int(min_(x)), int(max_(x))
        bad = hi if hi >= size else lo if lo < 0 else None
        if bad is not None:
            raise ValueError(f"index {bad} is out of bounds for array with size {size}")
    out = [None] * len(shape)
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    rest = x
    for ax in axes:
        n = shape[ax]
        out[ax] = numpy.remainder(rest, n) if n else rest
        rest = numpy.floor_divide(rest, n) if n else rest
    return tuple(out)


def _bits_axis(a, axis, bitorder, kinds, message):
    """a (checked: dtype kinds, bit order) with its bit axis last (the
    flattened a for axis None)."""
    x = asdist(a)
    if x.dtype.kind not in kinds or (kinds == "u" and x.dtype != numpy.uint8):
        raise TypeError(message)
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        x, axis = ravel(x), 0
    return moveaxis(x, normalize_axis_index(axis, x.ndim), -1)


def packbits(a, /, axis=None, bitorder="big"):
    """The elements of a binary-valued array packed into bits of uint8
    (padded with zero bits), along an axis (the flattened array by
    default)."""
    t = _bits_axis(a, axis, bitorder, "biu", "Expected an input array of integer or boolean "
                   "data type")
    axis = 0 if axis is None else normalize_axis_index(axis, asdist(a).ndim)
    n = t.shape[-1]
    nb = (n + 7) // 8
    bits = zeros(t.shape[:-1] + (nb * 8,), numpy.uint8)
    if n:
        bits[..., :n] = numpy.not_equal(t, 0)
    b = reshape(bits, t.shape[:-1] + (nb, 8))
    w = numpy.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else
                    [1, 2, 4, 8, 16, 32, 64, 128], numpy.uint8)
    packed = numpy.sum(numpy.multiply(b, w), axis=-1, dtype=numpy.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as elements of uint8 (count: how many to
    keep, negative: how many to drop)."""
    t = _bits_axis(a, axis, bitorder, "u", "Expected an input array of unsigned byte data type")
    axis = 0 if axis is None else normalize_axis_index(axis, asdist(a).ndim)
    shifts = numpy.array([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else
                         [0, 1, 2, 3, 4, 5, 6, 7], numpy.uint8)
    bits = numpy.bitwise_and(numpy.right_shift(view(t, (Ellipsis, None)), shifts),
                             numpy.uint8(1))
    bits = reshape(bits, t.shape[:-1] + (t.shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits = view(bits, (Ellipsis, slice(0, keep)))
        else:
            z = zeros(bits.shape[:-1] + (keep,), numpy.uint8)
            z[..., :n] = bits
            bits = z
    return moveaxis(bits, -1, axis)


# ---- conversions and memory ---------------------------------------------------------------

def asanyarray(a, dtype=None, order=None, *, like=None, device=None, copy=None):
    return asarray(a, dtype=dtype, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None):
    return atleast_1d(asdist(a, dtype))


def asfortranarray(a, dtype=None, *, like=None):
    return atleast_1d(asdist(a, dtype))


def asarray_chkfinite(a, dtype=None, order=None):
    """a as an array, NumPy's ValueError if it holds infs or NaNs."""
    x = asdist(a, dtype)
    if x.dtype.kind in "fc" and not bool(all_(numpy.isfinite(x))):
        raise ValueError("array must not contain infs or NaNs")
    return x


def require(a, dtype=None, requirements=None, *, like=None):
    """a as an array of dtype meeting NumPy's requirements (all of them hold
    for a DistributedArray but O's copy)."""
    names = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
             "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
             "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}
    if requirements:
        reqs = {names[r.upper()] for r in ([requirements] if isinstance(requirements, str)
                                           else requirements)}
    else:
        reqs = set()
    if "C" in reqs and "F" in reqs:
        raise ValueError("Cannot specify both C and Fortran contiguous.")
    x = asdist(a, dtype)
    if "O" in reqs or ("W" in reqs and _core._readonly(x)):
        x = x.copy()
    return x


def isfortran(a):
    """False: a DistributedArray is never Fortran-ordered only."""
    return False


def may_share_memory(a, b, /, max_work=0):
    """True if the arrays' chunks use the same device memory (a host array
    shares none with a DistributedArray)."""
    if not (isinstance(a, _DA) and isinstance(b, _DA)):
        return False
    return bool(_core._shares(a, b, 0))


def shares_memory(a, b, /, max_work=-1):
    """True if an element of one array is stored in the memory of an element
    of the other."""
    if not (isinstance(a, _DA) and isinstance(b, _DA)):
        return False
    return bool(_core._shares(a, b, 1))


# ---- applying functions ---------------------------------------------------------------------

def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-d slice along axis (each a view on the
    devices), the results assembled as NumPy assembles them."""
    a = asdist(arr)
    nd = a.ndim
    axis = normalize_axis_index(axis, nd)
    t = moveaxis(a, axis, -1)
    rows = list(numpy.ndindex(t.shape[:-1]))
    if not rows:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    first = asdist(func1d(view(t, rows[0] + (Ellipsis,)), *args, **kwargs))
    out = empty(t.shape[:-1] + first.shape, first.dtype)
    out[rows[0] + (Ellipsis,)] = first
    for r in rows[1:]:
        out[r + (Ellipsis,)] = func1d(view(t, r + (Ellipsis,)), *args, **kwargs)
    k = first.ndim
    perm = list(range(out.ndim))
    src = list(range(nd - 1, nd - 1 + k))
    return moveaxis(out, src, list(range(axis, axis + k))) if k else out


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping dimensions."""
    val = asdist(a)
    N = val.ndim
    if numpy.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = N + axis
        res = asdist(func(val, axis))
        if res.ndim == val.ndim:
            val = res
        else:
            res = expand_dims(res, axis)
            if res.ndim == val.ndim:
                val = res
            else:
                raise ValueError("function is not returning an array of the correct shape")
    return val


def resize(a, new_shape):
    """a's elements repeated to fill a new shape."""
    if isinstance(new_shape, (int, numpy.integer)):
        new_shape = (new_shape,)
    a = ravel(asdist(a))
    shape = _shape_arg(new_shape)
    size = 1
    for n in shape:
        if n < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
        size *= n
    if a.size == 0 or size == 0:
        return zeros_like(a, shape=shape)
    reps = -(-size // a.size)
    full = concatenate((a,) * reps) if reps > 1 else a
    return reshape(view(full, (slice(0, size),)), shape)


FUNCTIONS = {
    "choose": choose, "select": select, "piecewise": piecewise, "place": place,
    "putmask": putmask, "extract": extract, "append": append, "insert": insert,
    "delete": delete, "trim_zeros": trim_zeros, "rot90": rot90, "unstack": unstack,
    "block": block, "dsplit": dsplit, "row_stack": row_stack, "ediff1d": ediff1d,
    "sort_complex": sort_complex, "ix_": ix_, "ravel_multi_index": ravel_multi_index,
    "unravel_index": unravel_index, "packbits": packbits, "unpackbits": unpackbits,
    "asanyarray": asanyarray, "ascontiguousarray": ascontiguousarray,
    "asfortranarray": asfortranarray, "asarray_chkfinite": asarray_chkfinite,
    "require": require, "isfortran": isfortran, "may_share_memory": may_share_memory,
    "shares_memory": shares_memory, "apply_along_axis": apply_along_axis,
    "apply_over_axes": apply_over_axes, "resize": resize,
}
