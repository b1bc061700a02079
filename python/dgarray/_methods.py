"""The Python side of DistributedArray: the functions src/py calls, in one
table (CALLS), and the few methods written here.

``import dgarray`` hands CALLS to the binding once (_core._bind_python); the
binding checks that it names every function it calls and nothing else
(src/py/pycalls.c; docs/architecture.md, "Calls into Python").  A method
written in Python is called as f(self, *args, **kwargs).
"""
import operator

import numpy

from . import (_core, _dispatch, _display, _errstate, _index_map, _indexing, _linalg,
               _namespace, _pickle, _printing, _reductions, _shape, _surface)


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
    return _dispatch.array_function(*args, **kwargs)


def _repr_html(self):
    return _display.repr_html(self)


def _array_namespace(self, *, api_version=None):
    return _namespace.array_namespace(self, api_version=api_version)


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
    "index_map_of": _index_map.index_map_of, "array_repr": _printing.array_repr,
    "array_str": _printing.array_str,
    "copy_into_host": copy_into_host, "check_astype_casting": check_astype_casting,
    "ufunc_method": _dispatch.ufunc_method, "any_negative": any_negative,
    "fpe_contextvar": lambda: _errstate.CONTEXTVAR, "fpe_actions": _errstate.actions,
    "fpe_report": _errstate.report,
    # methods, called as f(self, *args, **kwargs)
    **{name: _reductions.FUNCTIONS[name] for name in _REDUCTION_METHODS},
    **_shape.METHODS, **_linalg.METHODS,
    "reshard": _index_map.reshard, "item": item, "tolist": tolist,
    "__array_function__": _array_function_method, "__array_namespace__": _array_namespace,
    "_repr_html_": _repr_html,
    "__reduce_ex__": _pickle.reduce_ex, "__copy__": _pickle.copy, "__deepcopy__": _pickle.deepcopy,
    # NumPy's wider surface: methods, and the attributes' getters and setters
    **_surface.METHODS,
}
