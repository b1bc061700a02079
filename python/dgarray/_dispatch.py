"""NumPy's protocols: __array_function__ (NEP 18) and the ufunc methods of
__array_ufunc__ other than a call with dgarray loops (reduce, accumulate,
the gufuncs; the others through NumPy's fallback)."""
import numpy

from . import (_checkpoint, _core, _dense, _fallback, _fft, _indexing, _linalg, _reductions,
               _shape, _surface)


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
                  _indexing.FUNCTIONS, _checkpoint.FUNCTIONS):
        for name, f in funcs.items():
            nf = getattr(numpy, name, None)
            if nf is not None:
                table[nf] = f
    table.update(_surface.numpy_functions())
    if _dense.available():
        table.update(_dense.numpy_functions())
    if _fft.available():
        table.update(_fft.numpy_functions())
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
