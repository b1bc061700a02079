"""Python-level pieces of DistributedArray: index maps, printing, scalars.

The C type (dgarray._core.DistributedArray) calls these for work that is not
on a hot path.
"""
import itertools
import operator

import numpy

from . import _core


# ---- index maps --------------------------------------------------------------------

def _normalize_key(shape, key):
    """One index-map key -> ((start, stop, step), ...) over every axis.

    CuPy's rules: an int keeps its axis, missing trailing axes are whole,
    negative ints and slice bounds are normalised; a non-positive step or an
    empty slice is a ValueError, too many indices or an int out of range an
    IndexError, anything else a ValueError.
    """
    ndim = len(shape)
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, "
            f"but {len(key)} were indexed")
    key = key + (slice(None),) * (ndim - len(key))
    box = []
    for ax, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, slice):
            if k.step is not None and operator.index(k.step) <= 0:
                raise ValueError(
                    f"slice step must be positive in an index map, got {k.step} on "
                    f"axis {ax}")
            start, stop, step = k.indices(n)
            if start >= stop:
                raise ValueError(
                    f"the index is empty on axis {ax} (size {n}): every chunk of an "
                    f"index map must hold at least one element")
            box.append((start, stop, step))
        elif (not isinstance(k, (bool, numpy.bool_)) and hasattr(k, "__index__")
              and numpy.ndim(k) == 0):
            i = operator.index(k)
            j = i + n if i < 0 else i
            if not 0 <= j < n:
                raise IndexError(
                    f"index {i} is out of bounds for axis {ax} with size {n}")
            box.append((j, j + 1, 1))
        else:
            raise ValueError(
                f"invalid index {k!r} on axis {ax}: an index map takes ints and "
                f"slices (or tuples of them)")
    return tuple(box)


def normalize_index_map(shape, index_map):
    """{device: key or [key, ...]} -> layout [(device, box), ...]."""
    if not isinstance(index_map, dict):
        raise ValueError(
            "index_map must be a dict {device: key or [key, ...]}, not "
            f"{type(index_map).__name__}")
    ndev = _core._ndevices()
    layout = []
    for dev, keys in index_map.items():
        if isinstance(dev, (bool, numpy.bool_)) or not hasattr(dev, "__index__"):
            raise ValueError(f"index_map keys must be device numbers, not {dev!r}")
        dev = operator.index(dev)
        if not 0 <= dev < ndev:
            raise ValueError(
                f"device {dev} does not exist: the {_core.backend()} backend has "
                f"devices 0 to {ndev - 1}")
        if not isinstance(keys, list):
            keys = [keys]
        for key in keys:
            layout.append((dev, _normalize_key(tuple(shape), key)))
    if not layout and any(n > 0 for n in shape) and numpy.prod(shape) > 0:
        raise ValueError("index_map names no chunk: every element must be held "
                         "by at least one device")
    return layout


def index_map_of(a):
    """The index map of an array, as CuPy gives it: {device: [slices, ...]}."""
    out = {}
    for dev, box in a._layout():
        out.setdefault(dev, []).append(tuple(slice(*r) for r in box))
    for dev in out:
        out[dev].sort(key=lambda t: tuple((s.start, s.stop, s.step) for s in t))
    return out


def reshard(a, index_map):
    layout = normalize_index_map(a.shape, index_map)
    if sorted(layout) == sorted(a._layout()):
        return a
    return a._reshard_layout(layout)


# ---- printing ------------------------------------------------------------------------

def _summary_array(a):
    """A small ndarray that NumPy prints exactly as it would print all of a.

    Long axes (more than 2 * edgeitems) keep their leading and trailing
    edgeitems and one unused element between them, so NumPy's summary shows
    the same values, formatted from the same elements; only those corners are
    gathered from the devices.
    """
    opts = numpy.get_printoptions()
    e = opts["edgeitems"]
    if a.size <= opts["threshold"]:
        return a.get(), False
    shape = a.shape
    out_shape = tuple(2 * e + 1 if n > 2 * e else n for n in shape)
    out = numpy.zeros(out_shape, dtype=a.dtype)
    parts = []
    for n in shape:
        if n > 2 * e:
            parts.append([((0, e, 1), slice(0, e)),
                          ((n - e, n, 1), slice(e + 1, 2 * e + 1))])
        else:
            parts.append([((0, n, 1), slice(0, n))])
    for combo in itertools.product(*parts):
        region = tuple(c[0] for c in combo)
        dst = tuple(c[1] for c in combo)
        out[dst] = a._gather_region(region)
    return out, True


def _dtype_suffix(dtype):
    """NumPy's dtype=... text for a repr, or None when the dtype is implied."""
    try:
        from numpy._core.arrayprint import dtype_is_implied, dtype_short_repr
    except ImportError:  # older layouts of NumPy's private modules
        from numpy.core.arrayprint import dtype_is_implied, dtype_short_repr
    return None if dtype_is_implied(dtype) else f"dtype={dtype_short_repr(dtype)}"


def array_repr(a):
    """repr(a) as NumPy writes it for the same values: only the summary's
    corners are gathered; the shape it names and the line it breaks at are
    those of the whole array."""
    data, summarised = _summary_array(a)
    if not summarised:
        return numpy.array_repr(data)
    opts = numpy.get_printoptions()
    prefix = "array("
    with numpy.printoptions(threshold=0):
        body = numpy.array2string(data, separator=", ", prefix=prefix, suffix=")")
    extras = []
    legacy = opts.get("legacy", False)
    if legacy is False or float(legacy) > 2.1:
        extras.append(f"shape={a.shape}")
    dt = _dtype_suffix(data.dtype)
    if dt:
        extras.append(dt)
    if not extras:
        return prefix + body + ")"
    head = prefix + body + ","
    tail = ", ".join(extras) + ")"
    last_line = len(head) - (head.rfind("\n") + 1)
    spacer = " " if last_line + 1 + len(tail) <= opts["linewidth"] else \
        "\n" + " " * len(prefix)
    return head + spacer + tail


def array_str(a):
    data, summarised = _summary_array(a)
    if summarised:
        with numpy.printoptions(threshold=0):
            return numpy.array_str(data)
    return numpy.array_str(data)


# ---- scalars --------------------------------------------------------------------------

def item(a, *args):
    """NumPy's ndarray.item, gathering only the element asked for."""
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    # NumPy's own argument checks and errors, on a zero-memory stand-in
    numpy.broadcast_to(numpy.zeros((), dtype=a.dtype), a.shape).item(*args)
    if not args:
        idx = (0,) * a.ndim
    elif len(args) == 1:
        k = operator.index(args[0])
        if k < 0:
            k += a.size
        idx = numpy.unravel_index(k, a.shape) if a.ndim else ()
    else:
        idx = tuple(operator.index(i) + (n if operator.index(i) < 0 else 0)
                    for i, n in zip(args, a.shape))
    region = tuple((int(i), int(i) + 1, 1) for i in idx)
    return a._gather_region(region).item()


def tolist(a):
    return a.get().tolist()


def copy_into_host(out, host, where=True):
    numpy.copyto(out, host, casting="unsafe", where=where)
    return out


def check_astype_casting(src, dst, casting):
    if not numpy.can_cast(src, dst, casting=casting):
        raise TypeError(
            f"Cannot cast array data from {src!r} to {dst!r} according to the rule "
            f"{casting!r}")


# ---- methods and protocols written in Python (called from src/py/array.c) -------------

def matmul_op(a, b):
    from . import _linalg
    return _linalg.matmul_op(a, b)


def imatmul(a, b):
    from . import _linalg
    return _linalg.imatmul(a, b)


def method_of(name):
    """The function f that DistributedArray.<name>(*args, **kwargs) calls as
    f(self, *args, **kwargs), for the methods array.c forwards (it asks once
    per method and keeps the answer)."""
    if name == "__array_function__":
        return _array_function_method
    if name in _PROTOCOL_METHODS:
        return _PROTOCOL_METHODS[name]
    from . import _linalg, _reductions, _shape, _surface
    if name in _linalg.METHODS:
        return _linalg.METHODS[name]
    return (_reductions.FUNCTIONS.get(name) or _shape.METHODS.get(name) or
            _surface.METHODS[name])


def _array_function_method(self, *args, **kwargs):
    return array_function(*args, **kwargs)


def _repr_html(self):
    from . import _display
    return _display.repr_html(self)


def _array_namespace(self, *, api_version=None):
    from . import _namespace
    return _namespace.array_namespace(self, api_version=api_version)


# Protocol methods written in Python (Jupyter, the array API standard).
_PROTOCOL_METHODS = {"_repr_html_": _repr_html, "__array_namespace__": _array_namespace}


def ufunc_method(ufunc, method_name, *inputs, **kwargs):
    """__array_ufunc__ for the methods other than __call__."""
    from . import _linalg, _reductions
    if method_name == "__call__" and ufunc in _linalg.GUFUNCS:
        return _linalg.GUFUNCS[ufunc](*inputs, **kwargs)
    if method_name == "reduce":
        return _reductions.ufunc_reduce(ufunc, *inputs, **kwargs)
    if method_name == "accumulate":
        return _reductions.ufunc_accumulate(ufunc, *inputs, **kwargs)
    from . import _fallback
    return _fallback.ufunc_call(ufunc, method_name, inputs, kwargs)


def _numpy_functions():
    """NumPy function -> dgarray's implementation, for __array_function__."""
    from . import _indexing, _linalg, _reductions, _shape
    table = {}
    for funcs in (_reductions.FUNCTIONS, _linalg.FUNCTIONS, _shape.FUNCTIONS,
                  _indexing.FUNCTIONS):
        for name, f in funcs.items():
            nf = getattr(numpy, name, None)
            if nf is not None:
                table[nf] = f
    from . import _surface
    for name, f in _surface.FUNCTIONS.items():
        nf = _surface.numpy_function(name)
        if nf is not None:
            table[nf] = f
    return table


_NP_FUNCTIONS = None


def array_function(func, types, args, kwargs):
    """NEP 18: NumPy functions that dgarray implements run on the devices;
    the others run through NumPy on the gathered data (dgarray._fallback)."""
    global _NP_FUNCTIONS
    if _NP_FUNCTIONS is None:
        _NP_FUNCTIONS = _numpy_functions()
    impl = _NP_FUNCTIONS.get(func)
    if impl is None:
        from . import _fallback
        return _fallback.array_function(func, types, args, kwargs)
    if not all(issubclass(t, (_core.DistributedArray, numpy.ndarray)) for t in types):
        return NotImplemented  # NEP 18: let the other type's override run
    return impl(*args, **kwargs)


def any_negative(x):
    """True if any element of x (a DistributedArray or NumPy array) is < 0."""
    if x.size == 0:
        return False
    if isinstance(x, _core.DistributedArray):
        from . import _reductions
        return bool(_reductions.min(x) < 0)
    return bool((numpy.asarray(x) < 0).any())


# a[key] and a[key] = value (src/py/array.c calls these)
from ._indexing import array_iter, getitem, setitem  # noqa: E402,F401
