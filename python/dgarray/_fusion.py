"""dgarray.fuse: CuPy's decorator that runs a function's elementwise calls
as one kernel.

Every chain of elementwise calls is fused already (the core records them and
runs them as one pass per chunk when a result is needed; dgarray.config.fusion),
so ``fuse`` only draws the kernel's edges at the function's: the chain pending
before the call runs first, the function's ufunc calls are recorded with
fusion on (whatever the setting), and the chain they make is run when the
function returns.  Arguments that are not DistributedArrays (NumPy arrays,
scalars) run the function as it is, as ``cupy.fuse`` does for NumPy inputs.
"""
import functools as _functools

from . import _core


class Fusion:
    """A function whose elementwise calls run as one kernel per chunk
    (``cupy.fuse``'s result); call it as the function."""

    def __init__(self, func, name=None):
        self.func = func
        self.name = name or getattr(func, "__name__", "fused")
        _functools.update_wrapper(self, func)

    def __repr__(self):
        return f"<Fusion '{self.name}'>"

    def __call__(self, *args, **kwargs):
        if not any(isinstance(a, _core.DistributedArray)
                   for a in (*args, *kwargs.values())):
            return self.func(*args, **kwargs)
        was = _core._get_fusion()
        _core._fusion_flush()
        _core._set_fusion(True)
        try:
            return self.func(*args, **kwargs)
        finally:
            try:
                _core._fusion_flush()
            finally:
                _core._set_fusion(was)


def fuse(*args, **kwargs):
    """``@dgarray.fuse`` or ``@dgarray.fuse(kernel_name=...)``: CuPy's
    signature (kernel_name names the kernel)."""
    name = kwargs.pop("kernel_name", None)
    if kwargs:
        raise TypeError(f"fuse() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 1 and callable(args[0]):
        return Fusion(args[0], name)
    if args:
        raise TypeError("fuse() takes a function, or only keyword arguments")
    return lambda f: Fusion(f, name)
