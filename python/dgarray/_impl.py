"""Python-level pieces of DistributedArray: index maps, printing, scalars.

The C type (dgarray._core.DistributedArray) calls these for work that is not
on a hot path.
"""
import itertools
import operator

import numpy

from . import _core, _display, _fallback, _indexing, _linalg, _namespace, _reductions, _shape


# ---- index maps --------------------------------------------------------------------

def normalize_index_map(shape, index_map):
    """{device: key or [key, ...]} -> layout [(device, box), ...], checked by
    CuPy's rules (src/core/dg_layout.c says them, and what is wrong)."""
    return _core._index_map_layout(shape, index_map)


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

def _array_function_method(self, *args, **kwargs):
    return array_function(*args, **kwargs)


def _repr_html(self):
    return _display.repr_html(self)


def _array_namespace(self, *, api_version=None):
    return _namespace.array_namespace(self, api_version=api_version)


def ufunc_method(ufunc, method_name, *inputs, **kwargs):
    """__array_ufunc__ for the methods other than __call__."""
    if method_name == "__call__" and ufunc in _linalg.GUFUNCS:
        return _linalg.GUFUNCS[ufunc](*inputs, **kwargs)
    if method_name == "reduce":
        return _reductions.ufunc_reduce(ufunc, *inputs, **kwargs)
    if method_name == "accumulate":
        return _reductions.ufunc_accumulate(ufunc, *inputs, **kwargs)
    return _fallback.ufunc_call(ufunc, method_name, inputs, kwargs)


def _numpy_functions():
    """NumPy function -> dgarray's implementation, for __array_function__."""
    table = {}
    for funcs in (_reductions.FUNCTIONS, _linalg.FUNCTIONS, _shape.FUNCTIONS,
                  _indexing.FUNCTIONS):
        for name, f in funcs.items():
            nf = getattr(numpy, name, None)
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
        return _fallback.array_function(func, types, args, kwargs)
    if not all(issubclass(t, (_core.DistributedArray, numpy.ndarray)) for t in types):
        return NotImplemented  # NEP 18: let the other type's override run
    return impl(*args, **kwargs)


def any_negative(x):
    """True if any element of x (a DistributedArray or NumPy array) is < 0."""
    if x.size == 0:
        return False
    if isinstance(x, _core.DistributedArray):
        return bool(_reductions.min(x) < 0)
    return bool((numpy.asarray(x) < 0).any())


# ---- the functions src/py calls (handed over by _core._bind_python) ------------------------

_REDUCTION_METHODS = ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "ptp",
                      "argmax", "argmin", "cumsum", "cumprod")

CALLS = {
    "getitem": _indexing.getitem, "setitem": _indexing.setitem,
    "array_iter": _indexing.array_iter, "matmul_op": _linalg.matmul_op,
    "imatmul": _linalg.imatmul,
    "index_map_of": index_map_of, "array_repr": array_repr, "array_str": array_str,
    "copy_into_host": copy_into_host, "check_astype_casting": check_astype_casting,
    "ufunc_method": ufunc_method, "any_negative": any_negative,
    # methods, called as f(self, *args, **kwargs)
    **{name: _reductions.FUNCTIONS[name] for name in _REDUCTION_METHODS},
    **_shape.METHODS, **_linalg.METHODS,
    "reshard": reshard, "item": item, "tolist": tolist,
    "__array_function__": _array_function_method, "__array_namespace__": _array_namespace,
    "_repr_html_": _repr_html,
}
