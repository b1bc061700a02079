"""dgarray's namespace beyond its own functions.

``dgarray.<name>`` for a NumPy name dgarray does not define: NumPy's
constants, dtypes and classes as they are; NumPy's functions wrapped so that
they take DistributedArrays and return DistributedArrays, through the
functions dgarray implements (NEP 18's table) or else NumPy's fallback
(dgarray._fallback, with a FallbackWarning); ``dgarray.linalg``,
``dgarray.fft`` and ``dgarray.emath`` are namespaces of NumPy's submodules
whose functions do the same.  ``DistributedArray.__array_namespace__`` (the
Python array API standard) returns the dgarray module.
"""
import functools
import sys
import types

import numpy

from . import _core, _dispatch

# NumPy functions that read no array data (dtypes, settings, text, shapes):
# forwarded as they are, without a fallback warning.
_HOST_ONLY = frozenset({
    "isdtype", "issubdtype", "promote_types", "min_scalar_type", "seterr", "geterr",
    "seterrcall", "geterrcall", "set_printoptions", "get_printoptions", "printoptions",
    "format_float_positional", "format_float_scientific", "typename", "mintypecode",
    "base_repr", "binary_repr", "show_config", "show_runtime", "get_include", "info",
    "broadcast_shapes", "isscalar", "__array_namespace_info__",
})
# NumPy submodules that become fallback namespaces; the others are forwarded.
_WRAPPED_SUBMODULES = ("linalg", "fft", "emath")


def wrap(func, name):
    """NumPy function `func` taking and returning DistributedArrays: dgarray's
    implementation if NEP 18's table has one, else NumPy's fallback."""
    @functools.wraps(func)
    def run(*args, **kwargs):
        return _dispatch.array_function(func, (_core.DistributedArray,), args, kwargs)
    run.__qualname__ = run.__name__ = name.rsplit(".", 1)[-1]
    return run


def resolve(name, obj, qualname):
    """What dgarray offers for NumPy's object `obj` (named `name`)."""
    if isinstance(obj, types.ModuleType):
        short = obj.__name__.rsplit(".", 1)[-1]
        return namespace(short) if short in _WRAPPED_SUBMODULES else obj
    if (isinstance(obj, (numpy.ufunc, type)) or not callable(obj) or name in _HOST_ONLY):
        return obj
    return wrap(obj, qualname)


class NumpyNamespace(types.ModuleType):
    """A NumPy submodule seen from dgarray (dgarray.linalg, ...): its
    functions take and return DistributedArrays through NumPy's fallback.
    Attributes set on it (real implementations) come first."""

    def __init__(self, name, np_module):
        super().__init__(f"dgarray.{name}", np_module.__doc__)
        self.__dict__["_numpy_module"] = np_module

    def __getattr__(self, attr):
        np_module = self.__dict__["_numpy_module"]
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            obj = getattr(np_module, attr)
        except AttributeError:
            raise AttributeError(f"module '{self.__name__}' has no attribute "
                                 f"'{attr}'") from None
        res = resolve(attr, obj, f"{np_module.__name__}.{attr}")
        setattr(self, attr, res)
        return res

    def __dir__(self):
        np_module = self.__dict__["_numpy_module"]
        return sorted(set(super().__dir__())
                      | {n for n in dir(np_module) if not n.startswith("_")})


def namespace(short):
    """The namespace dgarray.<short> for numpy.<short> (made once, importable
    as a module)."""
    full = f"dgarray.{short}"
    ns = sys.modules.get(full)
    if not isinstance(ns, NumpyNamespace):
        ns = NumpyNamespace(short, getattr(numpy, short))
        sys.modules[full] = ns
    return ns


# NumPy's constants, dtypes and type functions that dgarray's namespace holds
# as they are (its ufuncs too, which dispatch to __array_ufunc__)
_FORWARDED = ("pi", "e", "inf", "nan", "newaxis", "euler_gamma", "dtype", "finfo", "iinfo",
              "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128", "intp",
              "uintp", "integer", "floating", "complexfloating", "number", "generic",
              "result_type", "can_cast", "promote_types", "errstate", "printoptions",
              "set_printoptions", "get_printoptions")


def forwarded_numpy_names(defined):
    """{name: NumPy's object} for NumPy's ufuncs and the _FORWARDED names that
    `defined` (the package's names so far) lacks."""
    out = {}
    for name in dir(numpy):
        obj = getattr(numpy, name)
        if isinstance(obj, numpy.ufunc) and name not in defined:
            out[name] = obj
    for name in _FORWARDED:
        if hasattr(numpy, name) and name not in defined:
            out[name] = getattr(numpy, name)
    return out


def module_getattr(module, name):
    """dgarray's module __getattr__: NumPy's name `name` as dgarray offers it
    (kept in the module for the next look-up)."""
    if name.startswith("_") and name != "__array_namespace_info__":
        raise AttributeError(f"module 'dgarray' has no attribute '{name}'")
    try:
        obj = getattr(numpy, name)
    except AttributeError:
        raise AttributeError(f"module 'dgarray' has no attribute '{name}'") from None
    res = resolve(name, obj, f"numpy.{name}")
    setattr(module, name, res)
    return res


def module_dir(module):
    return sorted(set(vars(module)) | {n for n in dir(numpy) if not n.startswith("_")})


# the versions of the array API standard dgarray implements (and tests,
# tests/test_array_api.py): the newest is dgarray.__array_api_version__,
# whichever NumPy is installed
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def array_namespace(a, api_version=None):
    """DistributedArray.__array_namespace__: the dgarray module, for the
    versions of the array API standard it implements (a ValueError, as
    NumPy's, for the others)."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"version {api_version!r} of the array API standard is not one dgarray "
                         f"implements: pass None or one of {', '.join(API_VERSIONS)}")
    return sys.modules["dgarray"]
