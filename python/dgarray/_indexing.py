"""NumPy's indexing for DistributedArray: views, assignment, advanced indexing.

Basic indexing (ints, slices of any step, ``...``, ``None``) returns a view:
``_core._view`` maps the chunks, nothing moves, and writes through the view
reach its base.  Advanced indexing copies, as NumPy's does: the key's basic
part is applied as a view, the indexed axes are moved to the front and
merged into one (``_core._reshape``, a view where the layout allows), and
the integer index arrays become one flat row number per element, with which
``_core._take_rows`` gathers (``_core._put_rows`` scatters) the rows across
the devices.  Boolean masks become their nonzero indices, except that
``a[mask]`` over all of ``a``'s axes compacts on the devices
(``_core._select``) and ``a[mask] = scalar`` is an elementwise write where
the mask is true.  NumPy's errors (IndexError messages, ValueError for shape
mismatches) and dtype rules are kept; indices and masks may be NumPy arrays
or DistributedArrays.
"""
import operator

import numpy

from . import _core, _reductions
from ._creation import asarray, empty, empty_like

_DA = _core.DistributedArray
_NOVALUE = numpy._NoValue
_INT, _SLICE, _NEW = 0, 1, 2
_VALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
          "integer or boolean arrays are valid indices")


def _asdist(x, dtype=None):
    return asarray(x, dtype=dtype)


def _shape_of(x):
    return x.shape if isinstance(x, _DA) else numpy.shape(x)


def _replica(a):
    return a if a.mode == "replica" else a.change_mode("replica")


# ---- keys ----------------------------------------------------------------------------

def _index_array(k):
    """k (not a scalar) as an index: ('array', ints), ('bool', mask) or ('int', i)."""
    if isinstance(k, _DA):
        arr = k
    else:
        arr = numpy.asarray(k)
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise IndexError(_VALID)
        if arr.size == 0 and arr.dtype.kind == "f" and not isinstance(k, numpy.ndarray):
            arr = arr.astype(numpy.intp)  # [] indexes nothing
    if arr.dtype == numpy.bool_:
        return ("bool", arr)
    if arr.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if arr.ndim == 0:
        return ("int", operator.index(arr if isinstance(arr, _DA) else arr[()]))
    return ("array", arr)


def _entries(a, key):
    """The key as a list of entries, the ellipsis expanded (every axis of a
    named): ('int', i, axis), ('slice', s, axis), ('new',), ('array', ints,
    axis), ('bool', mask, first axis), and ('sep',) where the ellipsis was."""
    if not isinstance(key, tuple):
        key = (key,)
    raw, consumed, ell = [], 0, None
    for k in key:
        if k is None:
            raw.append(("new",))
        elif k is Ellipsis:
            if ell is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ell = len(raw)
            raw.append(("ell",))
        elif isinstance(k, slice):
            raw.append(("slice", k))
            consumed += 1
        elif isinstance(k, (bool, numpy.bool_)):
            raw.append(("bool", numpy.asarray(k)))
        elif (isinstance(k, (int, numpy.integer)) or
              (not isinstance(k, (numpy.ndarray, _DA, list, tuple, float, complex, str,
                                  bytes)) and hasattr(k, "__index__"))):
            raw.append(("int", operator.index(k)))
            consumed += 1
        elif isinstance(k, (float, complex, str, bytes)) or k is NotImplemented:
            raise IndexError(_VALID)
        else:
            e = _index_array(k)
            raw.append(e)
            consumed += e[1].ndim if e[0] == "bool" else 1
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{consumed} were indexed")
    fill = [("slice", slice(None))] * (a.ndim - consumed)
    if ell is None:
        raw += fill
    else:  # the ellipsis stays as a mark: it parts advanced indices
        raw[ell:ell + 1] = [("sep",)] + fill
    out, ax = [], 0
    for e in raw:
        kind = e[0]
        if kind in ("new", "sep"):
            out.append(e)
        elif kind == "int":
            n = a.shape[ax]
            i = e[1]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
            out.append(("int", i + n if i < 0 else i, ax))
            ax += 1
        elif kind == "slice":
            out.append(("slice", e[1], ax))
            ax += 1
        elif kind == "array":
            out.append(("array", e[1], ax))
            ax += 1
        else:
            m = e[1]
            for j in range(m.ndim):
                if m.shape[j] != a.shape[ax + j]:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {ax + j}; "
                        f"size of axis is {a.shape[ax + j]} but size of corresponding "
                        f"boolean axis is {m.shape[j]}")
            out.append(("bool", m, ax))
            ax += m.ndim
    return out


def _slice_entry(s, n):
    start, stop, step = s.indices(n)
    length = len(range(start, stop, step))
    return (_SLICE, start, step, length) if length else (_SLICE, 0, 1, 0)


def _basic(entries):
    return all(e[0] in ("int", "slice", "new", "sep") for e in entries)


def view(a, entries):
    """The view of a for basic entries (slices, ints, new axes)."""
    key = []
    for e in entries:
        if e[0] == "int":
            key.append((_INT, e[1], 0, 0))
        elif e[0] == "slice":
            key.append(_slice_entry(e[1], a.shape[e[2]]))
        elif e[0] == "new":
            key.append((_NEW, 0, 0, 0))
    return _core._view(a, tuple(key))


def basic_view(a, key):
    """a[key] for a key of ints, slices, ``...`` and ``None`` (a view)."""
    return view(a, _entries(a, key))


def reshaped(a, shape):
    """(a in `shape`, whether that is a view): a view where the chunks allow
    it, else a new array (the elements moved through the planner).  `shape`
    is a tuple of a's size."""
    if shape == a.shape:
        return view(a, _entries(a, ())), True
    return _core._reshape(a, shape)


def as_1d(a):
    """a as 1-d in C order (numpy.ravel): a view where the chunks allow it."""
    return reshaped(a, (a.size,))[0]


# ---- index arrays ------------------------------------------------------------------------

def _bounds_error(i, ax, n):
    return IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")


_UINT64 = numpy.dtype(numpy.uint64)


def wrap_indices(idx, n, ax, mode="raise"):
    """Integer indices into an axis of size n as int64 in [0, n): NumPy's
    IndexError for one out of bounds (mode 'raise'), or wrapped / clipped.
    Host arrays stay on the host, DistributedArrays on the devices (checking
    them reads their largest value read as unsigned, one pass, and only
    where that is not below n their minimum and maximum)."""
    if isinstance(idx, _DA):
        if idx.dtype != numpy.int64:
            idx = idx.astype(numpy.int64)
        if mode == "wrap":
            if n == 0:
                raise IndexError("cannot do a non-empty take from an empty axes.")
            return numpy.remainder(idx, n)
        if mode == "clip":
            if n == 0:
                raise IndexError("cannot do a non-empty take from an empty axes.")
            return numpy.minimum(numpy.maximum(idx, 0), n - 1)
        if idx.size:
            # one pass where all are in [0, n): read as unsigned, negative
            # indices lie above every n
            top = _reductions.max(_core._view_dtype(_replica(idx), _UINT64, 0))
            if int(top) < n:
                return idx
            lo, hi = _reductions.min(idx), _reductions.max(idx)  # both enqueued,
            lo, hi = int(lo), int(hi)                            # then one wait
            if hi >= n:
                raise _bounds_error(hi, ax, n)
            if lo < -n:
                raise _bounds_error(lo, ax, n)
            if lo < 0:
                idx = idx + (idx < 0) * n
        return idx
    idx = numpy.asarray(idx).astype(numpy.int64, copy=False)
    if mode in ("wrap", "clip") and idx.size:
        if n == 0:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        return numpy.remainder(idx, n) if mode == "wrap" else numpy.clip(idx, 0, n - 1)
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        raise _bounds_error(int(idx[bad].flat[0]), ax, n)
    return numpy.where(idx < 0, idx + n, idx)


def _broadcast_index_shapes(arrays):
    shapes = [tuple(x.shape) for x in arrays]
    try:
        return numpy.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + "".join(f"{s} " for s in shapes)) from None


def flat_rows(indices, sizes, shape):
    """One row number per element of the broadcast index arrays (each in
    range for its size): the C-order flat index into the indexed axes, as a
    1-d int64 DistributedArray of prod(shape) elements."""
    if not any(isinstance(i, _DA) for i in indices):
        f = numpy.zeros(shape, numpy.int64)
        for i, w in zip(indices, _weights(sizes)):
            f = f + i * w
        return _asdist(numpy.ascontiguousarray(numpy.broadcast_to(f, shape)).reshape(-1))
    f = None
    for i, w in zip(indices, _weights(sizes)):
        t = i * w if w != 1 else i
        f = t if f is None else f + t
    f = _asdist(f, numpy.int64)
    if f.shape != tuple(shape):
        f = _core._broadcast_to(f, tuple(shape))
    return as_1d(f)  # a broadcast one is copied here


def _weights(sizes):
    w, out = 1, []
    for n in reversed(sizes):
        out.append(w)
        w *= n
    return out[::-1]


def take_axes(v, positions, indices, sizes, at):
    """v with its axes `positions` indexed by the (in-range, int64) index
    arrays: their broadcast shape S replaces them, its axes placed before
    the remaining axis `at` (0: in front)."""
    S = _broadcast_index_shapes(indices)
    rest = [ax for ax in range(v.ndim) if ax not in positions]
    perm = list(positions) + rest
    vt = _core._transpose(v, perm) if perm != list(range(v.ndim)) else v
    nrows = 1
    for n in sizes:
        nrows *= n
    rest_shape = tuple(v.shape[ax] for ax in rest)
    vt2, _ = _core._reshape(vt, (nrows,) + rest_shape)
    f = flat_rows(indices, sizes, S)
    r = _core._take_rows(_replica(vt2), f)
    r = reshaped(r, tuple(S) + rest_shape)[0]
    if at:
        k = len(S)
        r = _core._transpose(r, list(range(k, k + at)) + list(range(k)) +
                             list(range(k + at, r.ndim)))
    return r


# ---- getitem -------------------------------------------------------------------------------

def _split_advanced(a, entries):
    """(basic entries of the view, [(view axis, index array, axis of a, size)],
    where the indexed dimensions go) for a key with advanced entries: ints
    count as index arrays, masks as their nonzero indices, a 0-d mask as a
    new axis indexed by [0] or [].  NumPy's rule: the indexed dimensions
    replace the indexed axes when no slice, new axis or ellipsis parts them,
    else they go in front."""
    key, adv, vax = [], [], 0
    kinds = [e[0] in ("int", "array", "bool") for e in entries]
    first = kinds.index(True)
    last = len(kinds) - 1 - kinds[::-1].index(True)
    adjacent = all(kinds[first:last + 1])
    for e in entries:
        kind = e[0]
        if kind == "sep":
            continue
        if kind in ("new", "slice"):
            key.append(e)
        elif kind in ("int", "array"):
            key.append(("slice", slice(None), e[2]))
            adv.append((vax, e[1] if kind == "array" else numpy.asarray(e[1]), e[2],
                        a.shape[e[2]]))
        elif e[1].ndim == 0:
            key.append(("new",))
            adv.append((vax, numpy.zeros(1 if bool(e[1]) else 0, numpy.int64), None, 1))
        else:
            nz = nonzero(e[1])
            for j, i in enumerate(nz):
                key.append(("slice", slice(None), e[2] + j))
                adv.append((vax, i, None, a.shape[e[2] + j]))
                vax += 1
            continue
        vax += 1
    at = adv[0][0] if adjacent else 0
    return key, adv, at


def _checked(adv):
    return [wrap_indices(i, n, ax) if ax is not None else
            (i.astype(numpy.int64) if isinstance(i, _DA) else numpy.asarray(i, numpy.int64))
            for _, i, ax, n in adv]


def getitem(a, key):
    """a[key] with NumPy's semantics (basic: a view; advanced: a copy)."""
    entries = _entries(a, key)
    if a.mode != "replica":
        _core._resolve(a)
    if _basic(entries):
        return view(a, entries)
    if (entries[0][0] == "bool" and entries[0][1].ndim == a.ndim >= 1 and
            all(e[0] == "sep" for e in entries[1:])):
        m = entries[0][1]
        m = _replica(m) if isinstance(m, _DA) else upload_like(m, a)
        return _core._select(a, m)
    key, adv, at = _split_advanced(a, entries)
    v = view(a, key)
    positions = [p for p, _, _, _ in adv]
    return take_axes(v, positions, _checked(adv), [n for _, _, _, n in adv], at)


def array_iter(a):
    """iter(a): the views a[0], a[1], ... along the first axis."""
    if a.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    if a.mode != "replica":
        _core._resolve(a)
    return (view(a, [("int", i, 0)] + [("slice", slice(None), ax) for ax in range(1, a.ndim)])
            for i in range(a.shape[0]))


# ---- assignment ---------------------------------------------------------------------------

def host_value(value, dtype):
    """value as an ndarray of dtype, converted as NumPy's __setitem__ does
    (a Python scalar out of range is an OverflowError, arrays cast unsafely)."""
    if numpy.ndim(value) == 0 and not isinstance(value, numpy.ndarray):
        out = numpy.empty((), dtype)
        out[()] = value
        return out
    h = numpy.asarray(value)
    out = numpy.empty(h.shape, dtype)
    out[...] = h
    return out


def _strip_leading_ones(shape, ndim):
    shape = tuple(shape)
    while len(shape) > ndim and shape[0] == 1:
        shape = shape[1:]
    return shape


def _shape_text(shape):
    """A shape as NumPy writes it in these messages: (2,1), (5,)."""
    shape = tuple(shape)
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def check_broadcast(src_shape, dst_shape, what=None):
    """NumPy's ValueError unless src_shape broadcasts into dst_shape (leading
    length-1 axes of the source may go)."""
    s = _strip_leading_ones(src_shape, len(dst_shape))
    ok = len(s) <= len(dst_shape) and all(
        x == y or x == 1 for x, y in zip(s[::-1], tuple(dst_shape)[::-1]))
    if not ok:
        src, dst = _shape_text(src_shape), _shape_text(dst_shape)
        if what:
            raise ValueError(f"shape mismatch: value array of shape {src} could not be "
                             f"broadcast to indexing result of shape {dst}")
        raise ValueError(f"could not broadcast input array from shape {src} into shape {dst}")
    return s


def upload_like(host, like):
    """A DistributedArray of the host array laid out near `like`: like's own
    layout for the same shape, else a copy on each of like's devices."""
    if host.shape == like.shape:
        layout = like._layout()
    else:
        layout = [(d, tuple((0, n, 1) for n in host.shape)) for d in like.devices]
    return _core._from_host(numpy.asarray(host, order="C"), layout, 0, None)


def _stripped(x, ndim):
    s = _strip_leading_ones(x.shape, ndim)
    if s == x.shape:
        return x
    return _core._reshape(x, s)[0]


def assign(dst, value, where=None):
    """dst[...] = value (broadcast and cast as NumPy's __setitem__ does);
    `where`: a bool DistributedArray broadcastable to dst, writing only where
    it is true."""
    if isinstance(value, _DA):
        value = _stripped(value, dst.ndim)
        check_broadcast(value.shape, dst.shape)
        if _core._overlaps(value, dst):
            value = value.copy()
    else:
        h = host_value(value, dst.dtype)
        if h.ndim == 0 and where is None:
            _core._fill(dst, 0, h, None, 0, None)
            return
        h = h.reshape(check_broadcast(h.shape, dst.shape))
        value = upload_like(h, dst)
    if where is None:
        _core._copyto(dst, value)
    else:
        _core._copyto(dst, value, where)


def _value_rows(value, dtype, shape, perm, nrows, rest_shape):
    """The values of an advanced assignment as (nrows,) + rest_shape rows of
    dtype: value broadcast to the indexing result's shape, its axes put back
    in the order of the rows (perm), merged."""
    if isinstance(value, _DA):
        v = _stripped(value, len(shape))
        check_broadcast(v.shape, shape, what="value")
        if v.dtype != dtype:
            v = v.astype(dtype)
    else:
        h = host_value(value, dtype)
        h = h.reshape(check_broadcast(h.shape, shape, what="value"))
        v = _asdist(numpy.ascontiguousarray(
            numpy.broadcast_to(h, shape).transpose(perm)).reshape((nrows,) + rest_shape))
        return v
    v = _core._broadcast_to(v, shape) if v.shape != tuple(shape) else v
    v = _core._transpose(v, perm) if perm != list(range(len(shape))) else v
    r, is_view = _core._reshape(v, (nrows,) + rest_shape)
    return r.copy() if is_view else r


def setitem(a, key, value):
    """a[key] = value with NumPy's semantics."""
    if _core._readonly(a):
        raise ValueError("assignment destination is read-only")
    entries = _entries(a, key)
    if a.mode != "replica":
        _core._resolve(a)
    if _basic(entries):
        assign(view(a, entries), value)
        return
    mask_entry = entries[0] if entries[0][0] == "bool" else None
    if (mask_entry is not None and mask_entry[1].ndim >= 1 and len(_shape_of(value)) == 0 and
            all(e[0] == "sep" or (e[0] == "slice" and e[1] == slice(None))
                for e in entries[1:])):
        # a[mask] = scalar: an elementwise write where the mask is true
        m = mask_entry[1]
        m = _replica(m) if isinstance(m, _DA) else \
            upload_like(m, a) if m.shape == a.shape else _asdist(m)
        if m.ndim < a.ndim:
            m = _core._reshape(m, m.shape + (1,) * (a.ndim - m.ndim))[0]
        if isinstance(value, _DA):
            value = value.astype(a.dtype) if value.dtype != a.dtype else value
        assign(a, value, m)
        return
    key, adv, at = _split_advanced(a, entries)
    v = view(a, key)
    positions = [p for p, _, _, _ in adv]
    indices = _checked(adv)
    sizes = [n for _, _, _, n in adv]
    S = _broadcast_index_shapes(indices)
    rest = [ax for ax in range(v.ndim) if ax not in positions]
    rest_shape = tuple(v.shape[ax] for ax in rest)
    nrows = 1
    for n in sizes:
        nrows *= n
    # the shape a[key] would have, and how its axes map to (S..., rest...)
    k = len(S)
    if at:
        res_shape = rest_shape[:at] + tuple(S) + rest_shape[at:]
        perm = list(range(at, at + k)) + list(range(at)) + list(range(at + k, len(res_shape)))
    else:
        res_shape = tuple(S) + rest_shape
        perm = list(range(len(res_shape)))
    total = 1
    for n in S:
        total *= n
    vals = _value_rows(value, a.dtype, res_shape, perm, total, rest_shape)
    f = flat_rows(indices, sizes, S)
    perm_v = positions + rest
    vt = _core._transpose(v, perm_v) if perm_v != list(range(v.ndim)) else v
    vt2, is_view = _core._reshape(vt, (nrows,) + rest_shape)
    _core._put_rows(vt2, f, _replica(vals))
    if not is_view:  # the rows were written into a copy: back into a
        back, _ = _core._reshape(vt2, vt.shape)
        _core._copyto(vt, back)


# ---- functions --------------------------------------------------------------------------------

def nonzero(a):
    """The indices of the non-zero elements, one int64 array per axis."""
    a = _asdist(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead. If the context of this "
                         "error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.")
    a = _replica(a)
    m = a if a.dtype == numpy.bool_ else numpy.not_equal(a, 0)
    flat = _core._select(None, m)
    if a.ndim == 1:
        return (flat,)
    out, ws = [], _weights(a.shape)
    for ax, n in enumerate(a.shape):
        q = numpy.floor_divide(flat, ws[ax]) if ws[ax] != 1 else flat
        out.append(numpy.remainder(q, n) if ax else q)
    return tuple(out)


def flatnonzero(a):
    """The flat indices of the non-zero elements."""
    return nonzero(as_1d(_asdist(a)))[0]


def _common_layout_ref(shape, *xs):
    for x in xs:
        if isinstance(x, _DA) and x.shape == tuple(shape):
            return x
    return None


def where(condition, x=_NOVALUE, y=_NOVALUE):
    """where(cond): nonzero(cond); where(cond, x, y): x where cond is true,
    else y (broadcast together; NumPy's result dtype)."""
    if x is _NOVALUE and y is _NOVALUE:
        return nonzero(condition)
    if x is _NOVALUE or y is _NOVALUE:
        raise ValueError("either both or neither of x and y should be given")
    def probe(v):
        if isinstance(v, _DA):
            return v.dtype
        if isinstance(v, (int, float, complex, bool)) and not isinstance(v, numpy.generic):
            return v
        return numpy.asarray(v)
    dt = numpy.result_type(probe(x), probe(y))
    c = condition if isinstance(condition, _DA) else numpy.asarray(condition)
    if c.dtype != numpy.bool_:
        c = c.astype(numpy.bool_)
    shape = numpy.broadcast_shapes(_shape_of(c), _shape_of(x), _shape_of(y))
    ref = _common_layout_ref(shape, c, x, y)
    out = empty_like(ref, dtype=dt) if ref is not None else empty(shape, dt)
    if not isinstance(c, _DA):
        c = upload_like(c, out)
    assign(out, y)
    assign(out, x, _replica(c))
    return out


def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of a along an axis (the flattened a for axis None) at the
    given indices, gathered across the devices."""
    a = _replica(_asdist(a))
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if axis is None:
        a, axis = as_1d(a), 0
    else:
        axis = _reductions.normalize_axes(axis, a.ndim)[0] if a.ndim else \
            _reductions.normalize_axes(axis, 0)
    idx = indices if isinstance(indices, _DA) else numpy.asarray(indices)
    if not isinstance(idx, _DA) and idx.dtype.kind not in "iu":
        if idx.size == 0:
            idx = idx.astype(numpy.intp)
        else:
            raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') "
                            "according to the rule 'safe'")
    n = a.shape[axis]
    idx = wrap_indices(idx, n, axis, mode)
    if idx.ndim == 0:
        r = take_axes(a, [axis], [reshaped(idx, (1,))[0] if isinstance(idx, _DA)
                                  else idx.reshape(1)], [n], axis)
        r = basic_view(r, (slice(None),) * axis + (0,))
    else:
        r = take_axes(a, [axis], [idx], [n], axis)
    if out is not None:
        return _reductions._write_out(r, out)
    return r


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v (v repeated to the length of ind), scattered to the
    devices holding the elements."""
    if not isinstance(a, _DA):
        raise TypeError(f"put: first argument must be a DistributedArray, not "
                        f"{type(a).__name__}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if _core._readonly(a):
        raise ValueError("assignment destination is read-only")
    if a.mode != "replica":
        _core._resolve(a)
    idx = ind if isinstance(ind, _DA) else numpy.asarray(ind)
    if not isinstance(idx, _DA) and idx.dtype.kind not in "iu":
        if idx.size:
            raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') "
                            "according to the rule 'safe'")
        idx = idx.astype(numpy.intp)
    idx = wrap_indices(idx, a.size, 0, mode)
    n = idx.size
    if n == 0:
        return
    idx = reshaped(_asdist(idx), (n,))[0]
    if isinstance(v, _DA):
        vals = as_1d(v).astype(a.dtype) if v.dtype != a.dtype else as_1d(v)
        if vals.size == 0:
            return
        if vals.size != n:
            vals = take(vals, numpy.arange(n) % vals.size)
    else:
        h = host_value(v, a.dtype).reshape(-1)
        if h.size == 0:
            return
        vals = _asdist(numpy.resize(h, n))
    flat, is_view = _core._reshape(a, (a.size,))
    _core._put_rows(flat, idx, _replica(vals))
    if not is_view:
        _core._copyto(a, _core._reshape(flat, a.shape)[0])


def compress(condition, a, axis=None, out=None):
    """The slices of a along an axis (the flattened a for axis None) where
    the 1-d condition is true."""
    c = condition if isinstance(condition, _DA) else numpy.asarray(condition)
    if c.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    a = _asdist(a)
    if axis is None:
        a, axis = as_1d(a), 0
    else:
        axis = _reductions.normalize_axes(axis, a.ndim)[0]
    n = a.shape[axis]
    if c.shape[0] > n:
        raise IndexError(f"index {n} is out of bounds for axis {axis} with size {n}")
    if isinstance(c, _DA):
        idx = nonzero(c.astype(numpy.bool_))[0]
    else:
        idx = numpy.nonzero(c)[0]
    return take(a, idx, axis=axis, out=out)


FUNCTIONS = {
    "take": take, "put": put, "nonzero": nonzero, "flatnonzero": flatnonzero,
    "where": where, "compress": compress,
}
