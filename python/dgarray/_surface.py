"""The registry of NumPy's functions and ndarray methods written in the
modules of NumPy's wider surface (_matrix.py, _stats.py, _numeric.py, ...):
what _impl's NEP 18 table and DistributedArray's methods take from them.

FUNCTIONS maps NumPy's name ("median", "linalg.norm") to dgarray's
implementation; METHODS the ndarray method names to functions called as
f(self, *args, **kwargs).
"""
import importlib

import numpy

_MODULES = ("_matrix", "_numeric", "_sortsearch", "_elementwise", "_attributes", "_quantiles",
            "_histograms", "_stats", "_einsum", "_linalg_ext", "_pad", "_polys", "_arrayfuncs",
            "_mathfuncs", "_setops", "_arrayapi")


def _load():
    functions, methods = {}, {}
    for name in _MODULES:
        mod = importlib.import_module(f"dgarray.{name}")
        functions.update(getattr(mod, "FUNCTIONS", {}))
        methods.update(getattr(mod, "METHODS", {}))
        methods.update(getattr(mod, "ATTRIBUTES", {}))
    return functions, methods


FUNCTIONS, METHODS = _load()


def numpy_function(name):
    """NumPy's function for a registry name ("linalg.norm"), or None."""
    obj = numpy
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
