"""dgarray: a NumPy-compatible array sharded over every GPU of a host.

``import dgarray as np`` and the arrays a program creates live in chunks on
all devices (GPUs, or virtual CPU devices where there is none); NumPy ufuncs
and operators run where the data lives.  Index maps follow CuPy's
``cupyx.distributed.array``: ``{device: key or [key, ...]}``.

Every name here is defined in a module below it (the package's modules
import one another downward, tests/_import_graph.py); this file only
gathers them, and hands the binding the Python functions it calls.
"""
import sys as _sys

import numpy as _numpy

from . import _core, distributed  # noqa: I001  ([multihost] joins a launcher's job first)
from . import _dense, _distributions, _fft, _methods, _namespace, _surface, random
from ._arrayapi import DeviceSet, __array_namespace_info__
from ._arrayapi import add_device_keyword as _add_device_keyword
from ._config import config
from ._checkpoint import from_zarr, load, save, to_zarr
from ._core import DeviceError, DistributedArray, OutOfDeviceMemoryError, backend
from ._creation import (MAX, MIN, PROD, REPLICA, SUM, arange, array, asarray, asnumpy, copy,
                        distributed_array, empty, empty_like, eye, from_dlpack, full,
                        full_like, identity, linspace, ones, ones_like, zeros, zeros_like)
from ._devices import Device, MemoryPool, devices, get_default_memory_pool, local_devices
from .distributed import process_count, process_index
from ._display import show_layout
from ._fallback import FallbackWarning
from ._fusion import fuse
from ._ccompile import CompilerNotFoundError
from ._user_kernels import ElementwiseKernel, RawKernel, ReductionKernel
# reductions
from ._reductions import (all, amax, amin, any, argmax, argmin, cumprod, cumsum, max, mean,
                          min, nanmax, nanmean, nanmin, nanprod, nansum, prod, ptp, std, sum,
                          var)
# matrix products
from ._linalg import dot, inner, make_2d_index_map, matmul, outer, tensordot, vdot
# indexing, shapes, joining, sorting
from ._indexing import compress, flatnonzero, nonzero, put, take, where
from ._shape import (argwhere, argsort, array_split, astype, atleast_1d, atleast_2d,
                     atleast_3d, broadcast_arrays, broadcast_to, clip, column_stack,
                     concatenate, diff, dstack, expand_dims, flip, fliplr, flipud, hsplit,
                     hstack, matrix_transpose, moveaxis, ravel, repeat, reshape, roll,
                     rollaxis, sort, split, squeeze, stack, swapaxes, tile, transpose, unique,
                     unique_values, vsplit, vstack)
from ._shape import round_ as round, round_ as around  # noqa: A001

if hasattr(_numpy, "vecdot"):
    from ._linalg import matvec, vecdot, vecmat  # noqa: F401

__version__ = "0.1.0"

ndarray = DistributedArray
linalg = _namespace.namespace("linalg")
fft = _namespace.namespace("fft")
_dense.install(linalg)
_surface.install_linalg(linalg)
_fft.install(fft)
emath = _namespace.namespace("emath")
__array_api_version__ = _namespace.API_VERSIONS[-1]

# NumPy's ufuncs (they dispatch to DistributedArray.__array_ufunc__), constants
# and dtypes, where dgarray defines no name of its own
globals().update(_namespace.forwarded_numpy_names(globals()))

# the Python functions src/py calls, handed to the binding once
# (docs/architecture.md, "Calls into Python")
_core._bind_python(_methods.CALLS)
# numpy.random's distributions and legacy functions on the devices
_distributions.install(random)


def __getattr__(name):
    """NumPy's other names: constants, dtypes and classes as NumPy's; functions
    that take and return DistributedArrays, through NumPy's fallback
    (dgarray.config.fallback) where dgarray does not implement them."""
    return _namespace.module_getattr(_sys.modules[__name__], name)


def __dir__():
    return _namespace.module_dir(_sys.modules[__name__])


_add_device_keyword(_sys.modules[__name__])  # device= on the creation functions
