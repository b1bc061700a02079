"""Shape and joining functions with NumPy's semantics: reshape, transpose,
concatenate, split, roll, sort, unique, ...

Views where NumPy makes views and the layout allows it (``_core._reshape``,
``_transpose``, ``_broadcast_to`` and basic indexing map chunks, moving
nothing); new arrays are filled by assignments into views of them, which the
planner turns into moves of only what changes device.  Sorting runs on the
devices (``_core._sort``), along an axis each chunk holds whole.
"""
import builtins
import itertools
import math
import operator

import numpy

from . import _core, _indexing
from ._arrayapi import to_device
from ._creation import asarray, empty, empty_like, zeros
from ._indexing import _asdist
from ._linalg import _put

_DA = _core.DistributedArray
_NOVALUE = numpy._NoValue

try:
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy < 2
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple


def _shape_arg(shape):
    if isinstance(shape, (int, numpy.integer)) or (
            hasattr(shape, "__index__") and not isinstance(shape, (tuple, list))):
        return (operator.index(shape),)
    return tuple(operator.index(n) for n in shape)


def _view(a, key):
    return _indexing.basic_view(a, key)


# ---- reshaping ---------------------------------------------------------------------------

def _reshape_target(size, shape):
    """shape with its -1 inferred, NumPy's ValueErrors otherwise."""
    shape = list(_shape_arg(shape))
    unknown = [i for i, n in enumerate(shape) if n < 0]

    def err():  # NumPy's text: leading unknowns dropped, later ones "newaxis"
        i = 0
        while i < len(shape) and shape[i] < 0:
            i += 1
        text = ",".join("newaxis" if n < 0 else str(n) for n in shape[i:])
        if len(shape) == 1:
            text += ","
        return ValueError(f"cannot reshape array of size {size} into shape ({text})")
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        if shape[unknown[0]] != -1:
            raise ValueError("negative dimensions not allowed")
        known = math.prod(n for i, n in enumerate(shape) if i != unknown[0])
        if known == 0 or size % known:
            raise err()
        shape[unknown[0]] = size // known
    if math.prod(shape) != size:
        raise err()
    return tuple(shape)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """a's elements in a new shape: a view where the chunks allow it, else a
    new array (the elements moved through the planner)."""
    if newshape is not None:
        if shape is not None:
            raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the "
                            "same time.")
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    a = _asdist(a)
    target = _reshape_target(a.size, shape)
    if order in ("F", "f"):
        r = transpose(reshape(transpose(a), target[::-1], copy=copy))
        return r
    if order not in ("C", "c", "A", "a", "K", "k", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    r, is_view = _indexing.reshaped(a, target)
    if copy and is_view:
        return r.copy()
    if copy is False and not is_view:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return r


def _check_order(order):
    """NumPy's error for an order that is not C, F, A or K."""
    if order is not None:
        numpy.empty(0).ravel(order=order)


def ravel(a, order="C"):
    """a as 1-d (a view where the chunks allow it)."""
    _check_order(order)
    a = _asdist(a)
    if order in ("F", "f"):
        return reshape(transpose(a), (-1,))
    return reshape(a, (-1,))


def flatten(a, order="C"):
    """A 1-d copy of a."""
    _check_order(order)
    a = _asdist(a)
    src = transpose(a) if order in ("F", "f") else a
    r, is_view = _core._reshape(src, (src.size,))
    return r.copy() if is_view else r


def transpose(a, axes=None):
    """a with its axes permuted (reversed by default): a view."""
    a = _asdist(a)
    if axes is None:
        perm = list(range(a.ndim))[::-1]
    else:
        if len(axes) == 1 and not isinstance(axes[0], (int, numpy.integer)) and \
                hasattr(axes[0], "__len__"):
            axes = axes[0]
        if len(axes) != a.ndim:
            raise ValueError("axes don't match array")
        perm = list(normalize_axis_tuple(axes, a.ndim, allow_duplicate=False))
    return _core._transpose(a, perm)


def matrix_transpose(x):
    """x with its last two axes swapped."""
    x = _asdist(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional, but it is "
                         f"{x.ndim}")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    """a with two axes exchanged: a view."""
    a = _asdist(a)
    i, j = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    perm = list(range(a.ndim))
    perm[i], perm[j] = j, i
    return _core._transpose(a, perm)


def moveaxis(a, source, destination):
    """a with axes moved to new positions: a view."""
    a = _asdist(a)
    source = normalize_axis_tuple(source, a.ndim, "source")
    destination = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _core._transpose(a, order)


def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: axis moved to before `start`."""
    a = _asdist(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise numpy.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return _view(a, ())
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _core._transpose(a, axes)


def expand_dims(a, axis):
    """a with new length-1 axes at the given positions: a view."""
    a = _asdist(a)
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    out_nd = a.ndim + len(axis)
    axes = normalize_axis_tuple(axis, out_nd)
    key = tuple(None if ax in axes else slice(None) for ax in range(out_nd))
    return _view(a, key)


def squeeze(a, axis=None):
    """a without (some of) its length-1 axes: a view."""
    a = _asdist(a)
    if axis is None:
        axes = tuple(ax for ax, n in enumerate(a.shape) if n == 1)
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
        if any(a.shape[ax] != 1 for ax in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    return _view(a, tuple(0 if ax in axes else slice(None) for ax in range(a.ndim)))


def broadcast_to(array, shape, subok=False):
    """array broadcast to shape: a read-only view."""
    shape = _shape_arg(shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    return _core._broadcast_to(_asdist(array), shape)


def broadcast_arrays(*args, subok=False):
    """The arguments broadcast against each other (read-only views)."""
    xs = [_asdist(x) for x in args]
    shape = numpy.broadcast_shapes(*[x.shape for x in xs])
    return tuple(x if x.shape == shape else broadcast_to(x, shape) for x in xs)


def atleast_1d(*arys):
    res = [x if x.ndim >= 1 else reshape(x, (1,)) for x in map(_asdist, arys)]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    res = []
    for x in map(_asdist, arys):
        if x.ndim == 0:
            x = reshape(x, (1, 1))
        elif x.ndim == 1:
            x = _view(x, (None, slice(None)))
        res.append(x)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys):
    res = []
    for x in map(_asdist, arys):
        if x.ndim == 0:
            x = reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = _view(x, (None, slice(None), None))
        elif x.ndim == 2:
            x = _view(x, (Ellipsis, None))
        res.append(x)
    return res[0] if len(res) == 1 else tuple(res)


def astype(x, dtype, /, *, copy=True, device=None):
    """x cast to dtype (NumPy 2's numpy.astype), on the devices of `device`
    (the array API's keyword; None: where x is)."""
    res = _asdist(x).astype(dtype, copy=copy)
    return res if device is None else to_device(res, device)


# ---- joining and splitting ------------------------------------------------------------------

def _operands(arrays):
    return [x if isinstance(x, _DA) else numpy.asarray(x) for x in arrays]


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The arrays joined along an existing axis, into a new array in the
    default layout (each part moved where that layout puts it)."""
    if isinstance(arrays, (_DA, numpy.ndarray)):
        arrays = list(arrays)
    xs = _operands(arrays)
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but "
                        "both were provided.")
    if axis is None:
        xs = [ravel(x) if isinstance(x, _DA) else x.reshape(-1) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != nd:
            raise ValueError("all the input arrays must have same number of dimensions, but "
                             f"the array at index 0 has {nd} dimension(s) and the array at "
                             f"index {i} has {x.ndim} dimension(s)")
    axis = normalize_axis_index(axis, nd)
    for i, x in enumerate(xs[1:], 1):
        for d in range(nd):
            if d != axis and x.shape[d] != xs[0].shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{xs[0].shape[d]} and the array at index {i} has size {x.shape[d]}")
    if out is not None:
        dt = out.dtype
    else:
        dt = numpy.dtype(dtype) if dtype is not None else numpy.result_type(
            *[x.dtype for x in xs])
    for x in xs:
        if not numpy.can_cast(x.dtype, dt, casting=casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dt!r} according "
                            f"to the rule {casting!r}")
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    shape = tuple(shape)
    if out is not None:
        if tuple(out.shape) != shape:
            raise ValueError("Output array is the wrong shape")
        res = out
    else:
        res = empty(shape, dt)
    off = 0
    for x in xs:
        n = x.shape[axis]
        if n:
            _indexing.assign(_view(res, (slice(None),) * axis + (slice(off, off + n),)), x)
        off += n
    return res


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The arrays (of one shape) joined along a new axis."""
    xs = _operands(arrays)
    if not xs:
        raise ValueError("need at least one array to stack")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, xs[0].ndim + 1)
    xs = [expand_dims(x, axis) if isinstance(x, _DA) else numpy.expand_dims(x, axis)
          for x in xs]
    return concatenate(xs, axis, out=out, dtype=dtype, casting=casting)


def argwhere(a):
    """The indices of the non-zero elements, grouped by element: (N, ndim),
    nonzero's index arrays stacked as columns."""
    a = _asdist(a)
    if a.ndim == 0:
        r = argwhere(_core._reshape(a, (1,))[0])
        return _view(r, (slice(None), slice(0, 0)))
    return stack(_indexing.nonzero(a), axis=1)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays joined along their second axis (the first for 1-d)."""
    xs = [atleast_1d(x) if isinstance(x, _DA) else numpy.atleast_1d(x) for x in tup]
    if xs and xs[0].ndim == 1:
        return concatenate(xs, 0, dtype=dtype, casting=casting)
    return concatenate(xs, 1, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays joined along their first axis (1-d ones as rows)."""
    xs = [atleast_2d(x) if isinstance(x, _DA) else numpy.atleast_2d(x) for x in tup]
    return concatenate(xs, 0, dtype=dtype, casting=casting)


def dstack(tup):
    """The arrays joined along their third axis."""
    xs = [atleast_3d(x) if isinstance(x, _DA) else numpy.atleast_3d(x) for x in tup]
    return concatenate(xs, 2)


def column_stack(tup):
    """1-d arrays as columns, 2-d ones as they are, joined along axis 1."""
    xs = []
    for x in _operands(tup):
        if x.ndim < 2:
            x = _view(_asdist(x), (slice(None), None)) if x.ndim == 1 else x
        xs.append(x)
    return concatenate(xs, 1)


def array_split(ary, indices_or_sections, axis=0):
    """Views of ary along an axis: at the given indices, or in that many
    near-equal parts."""
    a = _asdist(ary)
    axis = normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    try:
        sections = len(indices_or_sections) + 1
        div = [0] + list(indices_or_sections) + [n]
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        div = list(itertools.accumulate(sizes))
    out = []
    for i in range(sections):
        lo, hi = div[i], div[i + 1]
        out.append(_view(a, (slice(None),) * axis + (slice(lo, hi),)))
    return out


def split(ary, indices_or_sections, axis=0):
    """Views of ary along an axis, in equal parts or at the given indices."""
    a = _asdist(ary)
    try:
        len(indices_or_sections)
    except TypeError:
        sections = indices_or_sections
        n = a.shape[normalize_axis_index(axis, a.ndim)]
        if n % sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    a = _asdist(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    a = _asdist(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


# ---- elementwise compositions ---------------------------------------------------------------

def clip(a, a_min=_NOVALUE, a_max=_NOVALUE, out=None, *, min=_NOVALUE, max=_NOVALUE,
         **kwargs):
    """a limited to [a_min, a_max] (NumPy's dtypes: maximum then minimum)."""
    if min is not _NOVALUE:
        if a_min is not _NOVALUE:
            raise ValueError("Passed more than one argument for the same parameter")
        a_min = min
    if max is not _NOVALUE:
        if a_max is not _NOVALUE:
            raise ValueError("Passed more than one argument for the same parameter")
        a_max = max
    a = _asdist(a)

    def bound(v, lower):
        """NumPy's reading: a Python int beyond an integer dtype on the side
        that clips nothing is dropped; beyond it on the other side the ufunc
        raises OverflowError (NEP 50)."""
        if v is _NOVALUE:
            return None
        if type(v) is int and a.dtype.kind in "iu":
            info = numpy.iinfo(a.dtype)
            if (v <= int(info.min)) if lower else (v >= int(info.max)):
                return None
        return v
    a_min, a_max = bound(a_min, True), bound(a_max, False)
    if a_min is None and a_max is None:
        return numpy.positive(a, out=out, **kwargs)  # bool: NumPy's UFuncTypeError
    if a_max is None:
        return numpy.maximum(a, a_min, out=out, **kwargs)
    if a_min is None:
        return numpy.minimum(a, a_max, out=out, **kwargs)
    lo = numpy.maximum(a, a_min, **kwargs)
    return numpy.minimum(lo, a_max, out=out, **kwargs)


def roll(a, shift, axis=None):
    """Elements shifted along axes, wrapping around: a new array of a's
    layout, filled by moves of the shifted parts."""
    a = _asdist(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axis = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    broadcasted = numpy.broadcast(shift, axis)
    if broadcasted.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = {ax: 0 for ax in range(a.ndim)}
    for sh, ax in broadcasted:
        shifts[ax] += int(sh)
    rolls = [((slice(None), slice(None)),)] * a.ndim
    for ax, offset in shifts.items():
        offset %= a.shape[ax] or 1
        if offset:
            rolls[ax] = ((slice(None, -offset), slice(offset, None)),
                         (slice(-offset, None), slice(None, offset)))
    res = empty_like(a)
    for indices in itertools.product(*rolls):
        src, dst = zip(*indices)
        _indexing.assign(_view(res, dst), _view(a, src))
    return res


def diff(a, n=1, axis=-1, prepend=_NOVALUE, append=_NOVALUE):
    """The n-th discrete difference along an axis (views of a, subtracted)."""
    if n == 0:
        return _asdist(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = _asdist(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, a.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is _NOVALUE:
            parts.append(None)
            continue
        e = extra if isinstance(extra, _DA) else numpy.asarray(extra)
        if e.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            e = broadcast_to(e, tuple(shape)) if isinstance(e, _DA) else \
                numpy.broadcast_to(e, tuple(shape))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        seq = ([parts[0]] if parts[0] is not None else []) + [a] + \
            ([parts[1]] if parts[1] is not None else [])
        a = concatenate(seq, axis)
    op = numpy.not_equal if a.dtype == numpy.bool_ else numpy.subtract
    hi = (slice(None),) * axis + (slice(1, None),)
    lo = (slice(None),) * axis + (slice(None, -1),)
    for _ in range(n):
        a = op(_view(a, hi), _view(a, lo))
    return a


def flip(m, axis=None):
    """m reversed along axes (all by default): a view with negative strides."""
    m = _asdist(m)
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    return _view(m, tuple(slice(None, None, -1) if ax in axes else slice(None)
                          for ax in range(m.ndim)))


def fliplr(m):
    m = _asdist(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m):
    m = _asdist(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def _repeat_scalar(a, r, axis):
    """a with each index of axis repeated r times: a broadcast view of a new
    axis after it, merged into it (one copy)."""
    shape = list(a.shape)
    v = _view(a, (slice(None),) * (axis + 1) + (None,))
    v = broadcast_to(v, tuple(shape[:axis + 1]) + (r,) + tuple(shape[axis + 1:]))
    shape[axis] *= r
    out, is_view = _core._reshape(v, tuple(shape))
    return out.copy() if is_view else out


def repeat(a, repeats, axis=None):
    """Each element (each index of an axis) repeated."""
    a = _asdist(a)
    if axis is None:
        a, axis = ravel(a), 0
    else:
        axis = normalize_axis_index(axis, a.ndim)
    reps = repeats.get() if isinstance(repeats, _DA) else numpy.asarray(repeats)
    if reps.size == 0 and not isinstance(repeats, (_DA, numpy.ndarray)):
        reps = reps.astype(numpy.intp)  # [] reads as float64; NumPy takes it
    if reps.dtype.kind not in "iu" and reps.dtype != numpy.bool_:
        reps = reps.astype(numpy.intp, casting="safe")
    if (reps < 0).any():
        raise ValueError("repeats may not contain negative values.")
    n = a.shape[axis]
    if reps.ndim == 0 or reps.size == 1:
        return _repeat_scalar(a, int(reps.reshape(-1)[0]), axis)
    if reps.ndim != 1 or reps.size != n:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) "
                         f"({reps.size},)")
    return _indexing.take(a, numpy.repeat(numpy.arange(n), reps), axis=axis)


def tile(A, reps):
    """A repeated as a whole along each axis (one broadcast view, merged)."""
    tup = tuple(reps) if numpy.iterable(reps) else (reps,)
    a = _asdist(A)
    d = len(tup)
    if a.ndim < d:
        a = reshape(a, (1,) * (d - a.ndim) + a.shape)
    tup = (1,) * (a.ndim - d) + tup
    key, big = [], []
    for n, t in zip(a.shape, tup):
        key += [None, slice(None)]
        big += [operator.index(t), n]
    v = broadcast_to(_view(a, tuple(key)), tuple(big))
    out, is_view = _core._reshape(v, tuple(t * n for t, n in zip(tup, a.shape)))
    return out.copy() if is_view else out


# ---- sorting ------------------------------------------------------------------------------

def _sort_call(a, axis, values, indices):
    a = _asdist(a)
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:
        raise numpy.exceptions.AxisError(axis, 0)
    axis = normalize_axis_index(axis, a.ndim)
    if a.mode != "replica":
        a = a.change_mode("replica")
    try:
        return _core._sort(a, axis, values, indices)
    except NotImplementedError:
        # a backend that cannot sort this dtype (complex on GPUs): through
        # the host, stated in the docs
        h = a.get()
        v = asarray(numpy.sort(h, axis=axis, kind="stable")) if values else None
        i = asarray(numpy.argsort(h, axis=axis, kind="stable")) if indices else None
        return v, i


def _check_sort_args(kind, order):
    """NumPy's errors for a sort kind it does not know and for order= (the
    sort itself is stable whatever the kind)."""
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if kind is not None:
        numpy.empty(0).sort(kind=kind)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """A sorted copy (stable whatever `kind` says; NaNs last).  descending=True
    (the array API's keyword) gives the ascending order reversed: NaNs first."""
    _check_sort_args(kind, order)
    s = _sort_call(a, axis, True, False)[0]
    return flip(s, -1 if axis is None else axis) if descending else s


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """The indices that sort a (a stable sort whatever `kind` says); a 0-d
    array sorts as one element along an axis of its own, as NumPy's.
    descending=True (the array API's keyword): the indices of the descending
    order, equal values still in their first order (the stable ascending
    sort of a reversed, read backwards)."""
    _check_sort_args(kind, order)
    a = _asdist(a)
    if a.ndim == 0:
        a = reshape(a, (1,))
    if not descending:
        return _sort_call(a, axis, False, True)[1]
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis_index(axis, a.ndim)
    idx = _sort_call(flip(a, axis), axis, False, True)[1]
    return (a.shape[axis] - 1) - flip(idx, axis)


def sort_inplace(a, axis=-1, kind=None, order=None, *, stable=None):
    """ndarray.sort: a sorted in place."""
    _check_sort_args(kind, order)
    if _core._readonly(a):
        raise ValueError("assignment destination is read-only")
    s = _sort_call(a, axis, True, False)[0]
    if a.mode != "replica":
        _core._resolve(a)
    _core._copyto(a, s)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    """The sorted unique elements (and where they first are, how to rebuild
    ar from them, how often each occurs), computed on the devices."""
    a = _asdist(ar)
    if axis is not None:
        normalize_axis_index(operator.index(axis), a.ndim)
        raise NotImplementedError("dgarray's unique does not take axis= yet")
    shape = a.shape
    flat = ravel(a)
    n = flat.size
    need_perm = return_index or return_inverse
    if need_perm:
        perm = argsort(flat)
        s = _indexing.take(flat, perm)
    else:
        s = sort(flat)
    if n == 0:
        res = [s]
        if return_index:
            res.append(empty((0,), numpy.int64))
        if return_inverse:
            res.append(reshape(empty((0,), numpy.int64), shape))
        if return_counts:
            res.append(empty((0,), numpy.int64))
        return res[0] if len(res) == 1 else tuple(res)
    # first of each run: True at 0, then where an element differs from the last
    first = empty((n,), numpy.bool_)
    _indexing.assign(_view(first, (slice(0, 1),)), True)
    if n > 1:
        neq = numpy.not_equal(_view(s, (slice(1, None),)), _view(s, (slice(None, -1),)))
        if equal_nan and s.dtype.kind in "fc":
            both_nan = numpy.logical_and(numpy.isnan(_view(s, (slice(1, None),))),
                                         numpy.isnan(_view(s, (slice(None, -1),))))
            neq = numpy.logical_and(neq, numpy.logical_not(both_nan))
        _indexing.assign(_view(first, (slice(1, None),)), neq)
    starts = _indexing.nonzero(first)[0]
    res = [_indexing.take(s, starts)]
    if return_index:
        res.append(_indexing.take(perm, starts))
    if return_inverse:
        group = numpy.subtract(numpy.cumsum(first.astype(numpy.int64)), 1)
        inv = zeros((n,), numpy.int64)
        _indexing.put(inv, perm, group)
        res.append(reshape(inv, shape) if len(shape) != 1 else inv)
    if return_counts:
        ends = concatenate([starts, numpy.asarray([n], numpy.int64)])
        res.append(diff(ends))
    return res[0] if len(res) == 1 else tuple(res)


def unique_values(x):
    """The unique values (NaNs distinct, as the array API's)."""
    return unique(x, equal_nan=False)


def ndim(a):
    return a.ndim if isinstance(a, _DA) else numpy.ndim(a)


def shape(a):
    return a.shape if isinstance(a, _DA) else numpy.shape(a)


def size(a, axis=None):
    if not isinstance(a, _DA):
        return numpy.size(a, axis)
    return a.size if axis is None else a.shape[normalize_axis_index(axis, a.ndim)]


def _power_of_ten(n):
    """10.0 ** n as NumPy's round computes it (exact up to 10^22)."""
    p = (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)
    if n < 9:
        return p[n]
    r = 1e9
    for _ in range(n - 9):
        r *= 10.0
    return r


def round_(a, decimals=0, out=None):
    """Evenly rounded to `decimals` places, as numpy.round: x * 10^d, rint,
    / 10^d in x's dtype (d < 0: / then *); integers with d >= 0 unchanged;
    complex and bool through the host (NumPy's own rules there)."""
    a = _asdist(a)
    d = operator.index(decimals)
    if a.dtype.kind in "cb":
        r = asarray(numpy.round(a.get(), d))
    elif a.dtype.kind in "iu" and d >= 0:
        r = a.copy()
    else:
        f = _power_of_ten(abs(d))
        x = a.astype(numpy.float64) if a.dtype.kind in "iu" else a
        if d >= 0:
            r = numpy.true_divide(numpy.rint(numpy.multiply(x, f)), f)
        else:
            r = numpy.multiply(numpy.rint(numpy.true_divide(x, f)), f)
        if r.dtype != a.dtype:
            r = r.astype(a.dtype)
    if out is None:
        return r
    return _put(r, out, "round")


def conjugate(a):
    return numpy.conjugate(_asdist(a))


FUNCTIONS = {
    "round": round_, "around": round_,
    "ndim": ndim, "shape": shape, "size": size, "reshape": reshape, "ravel": ravel,
    "transpose": transpose, "swapaxes": swapaxes,
    "moveaxis": moveaxis, "rollaxis": rollaxis, "expand_dims": expand_dims,
    "squeeze": squeeze, "broadcast_to": broadcast_to, "broadcast_arrays": broadcast_arrays,
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
    "astype": astype, "concatenate": concatenate, "stack": stack, "hstack": hstack,
    "vstack": vstack, "dstack": dstack, "column_stack": column_stack, "split": split,
    "array_split": array_split, "hsplit": hsplit, "vsplit": vsplit, "clip": clip,
    "roll": roll, "diff": diff, "flip": flip, "fliplr": fliplr, "flipud": flipud,
    "tile": tile, "repeat": repeat, "sort": sort, "argsort": argsort, "unique": unique,
    "unique_values": unique_values, "matrix_transpose": matrix_transpose,
    "argwhere": argwhere,
}


def _method_reshape(a, *shape, order="C", copy=None):
    if len(shape) == 1 and not isinstance(shape[0], (int, numpy.integer)):
        shape = shape[0]
    return reshape(a, shape, order=order, copy=copy)


def _method_transpose(a, *axes):
    return transpose(a, axes if axes else None)


def _method_squeeze(a, axis=None):
    return squeeze(a, axis)


def _method_fill(a, value):
    _indexing.setitem(a, Ellipsis, value)


# DistributedArray methods written here (src/py/array.c forwards them)
METHODS = {
    "round": round_, "conj": conjugate, "conjugate": conjugate,
    "reshape": _method_reshape, "ravel": ravel, "flatten": flatten,
    "transpose": _method_transpose, "swapaxes": swapaxes, "squeeze": _method_squeeze,
    "clip": clip, "repeat": repeat, "sort": sort_inplace, "argsort": argsort,
    "take": _indexing.take, "put": _indexing.put, "nonzero": _indexing.nonzero,
    "compress": lambda a, condition, axis=None, out=None: _indexing.compress(
        condition, a, axis, out), "fill": _method_fill,
}
