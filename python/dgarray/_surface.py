"""The registry of NumPy's functions and ndarray methods written in the
modules of NumPy's wider surface (_matrix.py, _stats.py, _numeric.py, ...):
what _dispatch's NEP 18 table, the linalg namespace and _methods.CALLS
(DistributedArray's methods and attributes) take from them.

FUNCTIONS maps NumPy's name ("median", "linalg.norm") to dgarray's
implementation; METHODS the ndarray method names, and the getters and
setters of the attributes ("get_real", "set_real"), to functions called as
f(self, *args, **kwargs).
"""
import numpy

from . import (_arrayapi, _arrayfuncs, _attributes, _chunks, _einsum, _elementwise,
               _histograms, _linalg_ext, _mathfuncs, _matrix, _numeric, _pad, _polys, _quantiles, _setops,
               _sortsearch, _stats)

_MODULES = (_matrix, _numeric, _sortsearch, _elementwise, _attributes, _quantiles, _histograms,
            _stats, _einsum, _linalg_ext, _pad, _polys, _arrayfuncs, _mathfuncs, _setops,
            _arrayapi, _chunks)

FUNCTIONS, METHODS = {}, {}
for _mod in _MODULES:
    FUNCTIONS.update(getattr(_mod, "FUNCTIONS", {}))
    METHODS.update(getattr(_mod, "METHODS", {}))
    METHODS.update(getattr(_mod, "ATTRIBUTES", {}))
del _mod


def numpy_function(name):
    """NumPy's function for a registry name ("linalg.norm"), or None."""
    obj = numpy
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def numpy_functions():
    """NumPy function -> dgarray's implementation, for __array_function__."""
    table = {}
    for name, f in FUNCTIONS.items():
        nf = numpy_function(name)
        if nf is not None:
            table[nf] = f
    return table


def install_linalg(ns):
    """Puts the linalg functions written here (norm, multi_dot, ...) in the
    dgarray.linalg namespace, beside _dense's (one namespace, one
    implementation of each function)."""
    for name, f in FUNCTIONS.items():
        if name.startswith("linalg.") and numpy_function(name) is not None:
            setattr(ns, name[len("linalg."):], f)
