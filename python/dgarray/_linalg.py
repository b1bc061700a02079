"""Matrix products with NumPy's semantics: matmul (``@``), dot, vdot, inner,
outer, tensordot, vecdot, matvec, vecmat, and make_2d_index_map.

Each product becomes one contraction for ``_core._contract``: an iteration
space of output axes and contracted axes, and for every axis of each operand
the iteration axis it follows (src/core/dg_matmul.h).  The core plans where
each block is computed (src/core/dg_matmul.c) and runs the backend's gemm:
cuBLAS on GPUs, NumPy's matmul arithmetic on the CPU backend.  Here are
NumPy's rules: shapes and their errors, result dtypes (asked of NumPy and
cached), ``out=``, ``dtype=`` and ``casting=``.
"""
import functools
import operator
import os

import numpy

from . import _core
from ._compose import normalize_axis_index
from ._creation import asarray

_DA = _core.DistributedArray
_MATMUL_SIG = "(n?,k),(k,m?)->(n?,m?)"


# OpenBLAS's thread-count setter and getter under the names builds give them
# (scipy-openblas's ILP64 prefix and suffix first)
_BLAS_THREADS = [("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                 ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
                 ("openblas_set_num_threads", "openblas_get_num_threads")]


def numpy_blas_symbols(names):
    """Addresses of the functions `names` in the BLAS NumPy's wheel bundles
    (scipy-openblas, ILP64), or None where there is no such library or it
    lacks one of them."""
    import ctypes
    import glob
    import os
    here = os.path.dirname(numpy.__file__)
    for path in sorted(glob.glob(os.path.join(here + ".libs", "*openblas*")) +
                       glob.glob(os.path.join(here, ".dylibs", "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)  # the copy NumPy loaded
            return tuple(ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in names)
        except (OSError, AttributeError):
            continue
    return None


def _numpy_blas():
    """Addresses of the ILP64 CBLAS gemm functions of NumPy's BLAS and of its
    thread-count setter and getter (0, 0 if it has none), or None where there
    is no such library."""
    fns = numpy_blas_symbols([f"scipy_cblas_{t}gemm64_" for t in "sdcz"])
    if fns is None:
        return None
    for pair in _BLAS_THREADS:
        threads = numpy_blas_symbols(pair)
        if threads is not None:
            return fns + threads
    return fns + (0, 0)


def use_numpy_blas(on=True):
    """The CPU backend's float and complex products through NumPy's BLAS
    (on, where found) or through dgarray's own loops.  Returns whether BLAS
    is used."""
    fns = _numpy_blas() if on else None
    return bool(_core._set_cpu_blas(fns)) and fns is not None


if os.environ.get("DGARRAY_CPU_BLAS", "1") != "0":
    use_numpy_blas()


class _Settings:
    allow_tf32 = False

    def set_allow_tf32(self, value):
        self.allow_tf32 = bool(value)


settings = _Settings()


def _operand(x):
    """x as a DistributedArray (host data goes to the default layout); 0-d
    inputs stay NumPy arrays (scalars).  TypeError for what NumPy cannot
    make a numeric array of."""
    if isinstance(x, _DA):
        return x
    h = numpy.asarray(x)
    if h.dtype.kind not in "biufc":
        raise TypeError(f"dgarray has no matrix products of dtype {h.dtype}")
    if h.ndim == 0:
        return h
    return asarray(h)


def _contract(a, b, amap, bmap, shape, kshape, dtype):
    """The core contraction of a and b (DistributedArrays) in dtype."""
    dtype = numpy.dtype(dtype)
    if a.dtype != dtype:
        a = a.astype(dtype)
    if b.dtype != dtype:
        b = b.astype(dtype)
    return _core._contract(a, b, tuple(amap), tuple(bmap), tuple(shape), tuple(kshape),
                           settings.allow_tf32)


def _shape_str(shape):
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _put(res, out, name):
    """Writes res into out (a DistributedArray or ndarray of res's shape)
    as a ufunc's out= takes it; returns out."""
    if isinstance(out, _DA):
        if res.mode != "replica":
            res = res.change_mode("replica")
        if res.dtype != out.dtype:
            res = res.astype(out.dtype)
        if out.mode != "replica":
            raise ValueError(f"{name}: the output array must be in replica mode")
        _core._assign(out, res)
        return out
    if isinstance(out, numpy.ndarray):
        numpy.copyto(out, res.get(), casting="unsafe")
        return out
    raise TypeError("return arrays must be of ArrayType")


# ---- matmul --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _ufunc_dtypes(ufunc, dt1, dt2, out_dt, sig_dt, casting):
    """NumPy's loop dtypes (in1, in2, out) for a gufunc call (its errors too)."""
    kw = {} if sig_dt is None else {"signature": (None, None, sig_dt)}
    return ufunc.resolve_dtypes((dt1, dt2, out_dt), casting=casting, **kw)


def _core_dims_error(name, sig, op, dim, got, want, kind="Input"):
    return ValueError(f"{name}: {kind} operand {op} has a mismatch in its core dimension "
                      f"{dim}, with gufunc signature {sig} (size {got} is different from "
                      f"{want})")


def _broadcast_error(shapes, ncore, requested):
    parts = []
    for s, nc in zip(shapes, ncore):
        remapped = tuple(s[:len(s) - nc]) + ("newaxis",) * nc
        parts.append(f"{_shape_str(s)}->" + "(" + ",".join(str(x) for x in remapped) + ")")
    return ValueError("operands could not be broadcast together with remapped shapes "
                      "[original->remapped]: " + " ".join(parts) +
                      f"  and requested shape {_shape_str(requested)}")


def _out_arg(out, nout=1):
    if isinstance(out, tuple):
        if len(out) != nout:
            raise ValueError(f"The 'out' tuple must have exactly {nout} entry")
        out = out[0]
    return out


def _gufunc_products(ufunc, x1, x2, out, dtype, casting):
    """(a, b, amap, bmap, shape, kshape, loop dtype, out) of matmul, vecdot,
    matvec or vecmat as NumPy's gufunc broadcasting defines them."""
    name = ufunc.__name__
    sig = ufunc.signature
    a, b = _operand(x1), _operand(x2)
    # core dims of each operand: matmul (n?,k),(k,m?); vecdot (n),(n);
    # matvec (m,n),(n); vecmat (n),(n,m)
    need = {"matmul": (1, 1), "vecdot": (1, 1), "matvec": (2, 1), "vecmat": (1, 2)}[name]
    for i, (x, nd) in enumerate(((a, need[0]), (b, need[1]))):
        if x.ndim < nd:
            raise ValueError(f"{name}: Input operand {i} does not have enough dimensions "
                             f"(has {x.ndim}, gufunc core with signature {sig} requires {nd})")
    if name == "matmul":
        ca = 2 if a.ndim >= 2 else 1
        cb = 2 if b.ndim >= 2 else 1
        ka, kb = a.shape[-1], b.shape[-cb]
        if ka != kb:
            raise _core_dims_error(name, sig, 1, 0, kb, ka)
        core_out = ((a.shape[-2],) if ca == 2 else ()) + ((b.shape[-1],) if cb == 2 else ())
    elif name == "vecdot":
        ca = cb = 1
        if a.shape[-1] != b.shape[-1]:
            raise _core_dims_error(name, sig, 1, 0, b.shape[-1], a.shape[-1])
        core_out = ()
    elif name == "matvec":
        ca, cb = 2, 1
        if a.shape[-1] != b.shape[-1]:
            raise _core_dims_error(name, sig, 1, 0, b.shape[-1], a.shape[-1])
        core_out = (a.shape[-2],)
    else:  # vecmat
        ca, cb = 1, 2
        if a.shape[-1] != b.shape[-2]:
            raise _core_dims_error(name, sig, 1, 0, b.shape[-2], a.shape[-1])
        core_out = (b.shape[-1],)
    ba, bb = a.shape[:a.ndim - ca], b.shape[:b.ndim - cb]
    try:
        batch = numpy.broadcast_shapes(ba, bb)
    except ValueError:
        raise _broadcast_error((a.shape, b.shape), (ca, cb), core_out) from None
    shape = batch + core_out
    nb = len(batch)
    out = _out_arg(out)
    if out is not None:
        if not isinstance(out, (_DA, numpy.ndarray)):
            raise TypeError("return arrays must be of ArrayType")
        if tuple(out.shape) != shape:
            got = tuple(out.shape[len(out.shape) - len(core_out):]) if len(
                out.shape) >= len(core_out) else ()
            if len(got) == len(core_out) and got != core_out:
                i = next(i for i, (g, w) in enumerate(zip(got, core_out)) if g != w)
                off = 1 if name == "matmul" and ca == 1 else 0  # the signature's n? is absent
                raise _core_dims_error(name, sig, 0, i + off, got[i], core_out[i],
                                       kind="Output")
            raise ValueError(f"{name}: the output array has shape {tuple(out.shape)}, the "
                             f"result {shape}")
    dts = _ufunc_dtypes(ufunc, a.dtype, b.dtype, None if out is None else out.dtype,
                        None if dtype is None else numpy.dtype(dtype), casting)
    # iteration axes: batch (0..nb), then the core output axes, then k
    k = len(shape)
    amap = [nb - len(ba) + j for j in range(len(ba))]
    bmap = [nb - len(bb) + j for j in range(len(bb))]
    if name == "matmul":
        amap += ([nb] if ca == 2 else []) + [k]
        bmap += [k] + ([len(shape) - 1] if cb == 2 else [])
    elif name == "vecdot":
        amap += [k]
        bmap += [k]
    elif name == "matvec":
        amap += [nb, k]
        bmap += [k]
    else:
        amap += [k]
        bmap += [k, nb]
    if name == "vecdot" and a.dtype.kind == "c":
        a = numpy.conjugate(a)
    return a, b, amap, bmap, shape, (a.shape[-1],), dts, out


def _gufunc(ufunc, x1, x2, out=None, *, dtype=None, casting="same_kind", order="K",
            subok=True, signature=None, axes=None, axis=None):
    """matmul, vecdot, matvec and vecmat on DistributedArrays (the
    __array_ufunc__ of these gufuncs and their dgarray names)."""
    if axes is not None or axis is not None:
        raise NotImplementedError(f"dgarray's {ufunc.__name__} does not take axes= or axis=")
    if signature is not None and dtype is None:
        dtype = signature[-1] if isinstance(signature, tuple) else signature
    a, b, amap, bmap, shape, kshape, dts, out = _gufunc_products(ufunc, x1, x2, out, dtype,
                                                                 casting)
    res = _contract(a, b, amap, bmap, shape, kshape, dts[0])
    if res.dtype != dts[2]:
        res = res.astype(dts[2])
    if out is not None:
        return _put(res, out, ufunc.__name__)
    return res


def matmul(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """The matrix product of two arrays, as numpy.matmul (batched, with
    NumPy's broadcasting of the batch axes and 1-d promotion)."""
    return _gufunc(numpy.matmul, x1, x2, out, dtype=dtype, casting=casting,
                   signature=signature, axes=axes, axis=axis)


def vecdot(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """The vector dot product over the last axis (the first conjugated), or
    over axis= of each operand (axes=[(i,), (j,), ()]: axis i of x1 with
    axis j of x2), as NumPy's gufunc takes them."""
    if axis is not None or axes is not None:
        x1, x2 = _vector_axes_last(x1, x2, axes, axis)
    return _gufunc(numpy.vecdot, x1, x2, out, dtype=dtype, casting=casting,
                   signature=signature)


def _vector_axes_last(x1, x2, axes, axis):
    """x1 and x2 with the axes vecdot's axes= / axis= name moved last (views),
    NumPy's errors for bad ones."""
    if axes is not None and axis is not None:
        raise TypeError("cannot specify both 'axis' and 'axes'")
    if axes is None:
        axes = [axis, axis]
    else:
        axes = list(axes)
        if len(axes) == 3 and axes[2] in ((), []):
            axes = axes[:2]
        if len(axes) != 2:
            raise ValueError("axes should be a list with an entry for all 3 inputs and "
                             "outputs; entries for outputs can only be omitted if none of "
                             "them has core axes.")
    out = []
    for i, (x, ax) in enumerate(zip((_operand(x1), _operand(x2)), axes)):
        if isinstance(ax, (tuple, list)):
            if len(ax) != 1:
                raise numpy.exceptions.AxisError(
                    f"vecdot: operand {i} has 1 core dimensions, but {len(ax)} dimensions are "
                    "specified by axes tuple.")
            ax = ax[0]
        ax = normalize_axis_index(operator.index(ax), x.ndim)
        out.append(x.transpose([i for i in range(x.ndim) if i != ax] + [ax]))
    return out


def matvec(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """Matrix-vector products over the last axes, as numpy.matvec."""
    return _gufunc(numpy.matvec, x1, x2, out, dtype=dtype, casting=casting,
                   signature=signature, axes=axes, axis=axis)


def vecmat(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """Vector-matrix products over the last axes, as numpy.vecmat (the
    vector conjugated)."""
    if isinstance(x1, _DA) and x1.dtype.kind == "c":
        x1 = numpy.conjugate(x1)
    return _gufunc(numpy.vecmat, x1, x2, out, dtype=dtype, casting=casting,
                   signature=signature, axes=axes, axis=axis)


GUFUNCS = {numpy.matmul: matmul}
for _name in ("vecdot", "matvec", "vecmat"):
    if hasattr(numpy, _name):
        GUFUNCS[getattr(numpy, _name)] = globals()[_name]


def matmul_op(a, b):
    """a @ b for the number protocol (either side a DistributedArray):
    NotImplemented for operands NumPy would not take."""
    for x in (a, b):
        if not isinstance(x, (_DA, numpy.ndarray, numpy.generic, list, tuple, int, float,
                              complex)):
            return NotImplemented
    return matmul(a, b)


def imatmul(a, b):
    """a @= b: the product written into a (NumPy's rules: same shape,
    same_kind casting)."""
    if not isinstance(a, _DA):
        return NotImplemented
    return matmul(a, b, out=(a,))


# ---- dot and friends ------------------------------------------------------------------------

_result_type = functools.lru_cache(maxsize=1024)(numpy.result_type)


def _result_dtype(a, b):
    return _result_type(a.dtype, b.dtype)


def _scalar_product(a, b, out):
    """A product with a 0-d operand: NumPy multiplies."""
    if out is not None:
        return numpy.multiply(a, b, out=out)
    res = numpy.multiply(a, b)
    return res if isinstance(res, _DA) else asarray(res)


def _check_dot_out(out, shape, dtype):
    if out is None:
        return
    if tuple(out.shape) != shape or out.dtype != dtype or not isinstance(out, (
            _DA, numpy.ndarray)):
        raise ValueError("output array is not acceptable (must have the right datatype, "
                         "number of dimensions, and be a C-Array)")


def dot(a, b, out=None):
    """The dot product of two arrays, as numpy.dot: a sum product over the
    last axis of a and the second-to-last of b (the only one if 1-d)."""
    a, b = _operand(a), _operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b, out)
    kb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[kb]:
        raise ValueError(f"shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} not "
                         f"aligned: {a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[kb]} "
                         f"(dim {kb})")
    bfree = [j for j in range(b.ndim) if j != kb]
    shape = a.shape[:-1] + tuple(b.shape[j] for j in bfree)
    dt = _result_dtype(a, b)
    _check_dot_out(out, shape, dt)
    na, k = a.ndim - 1, len(shape)
    amap = list(range(na)) + [k]
    bmap = [0] * b.ndim
    for i, j in enumerate(bfree):
        bmap[j] = na + i
    bmap[kb] = k
    res = _contract(a, b, amap, bmap, shape, (a.shape[-1],), dt)
    return res if out is None else _put(res, out, "dot")


def vdot(a, b, /):
    """The dot product of the flattened arrays, the first conjugated."""
    a, b = _operand(a), _operand(b)
    a = asarray(a) if isinstance(a, numpy.ndarray) else a
    b = asarray(b) if isinstance(b, numpy.ndarray) else b
    if a.size != b.size:
        raise ValueError(f"cannot reshape array of size {b.size} into shape ({a.size},)")
    dt = _result_dtype(a, b)
    fa, fb = _core._flatten(a), _core._flatten(b)
    if fa.dtype.kind == "c":
        fa = numpy.conjugate(fa)
    return _contract(fa, fb, [0], [0], (), (a.size,), dt)


def inner(a, b, /):
    """Sum products over the last axes of both, as numpy.inner."""
    a, b = _operand(a), _operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b, None)
    if a.shape[-1] != b.shape[-1]:
        shown = b.shape if b.ndim < 2 else b.shape[:-2] + (b.shape[-1], b.shape[-2])
        kd = 0 if b.ndim < 2 else b.ndim - 2
        raise ValueError(f"shapes {_shape_str(a.shape)} and {_shape_str(shown)} not "
                         f"aligned: {a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} "
                         f"(dim {kd})")
    shape = a.shape[:-1] + b.shape[:-1]
    k = len(shape)
    amap = list(range(a.ndim - 1)) + [k]
    bmap = list(range(a.ndim - 1, k)) + [k]
    return _contract(a, b, amap, bmap, shape, (a.shape[-1],), _result_dtype(a, b))


def outer(a, b, out=None):
    """The outer product of the flattened arrays, as numpy.outer."""
    a, b = _operand(a), _operand(b)
    a = asarray(a) if isinstance(a, numpy.ndarray) else a
    b = asarray(b) if isinstance(b, numpy.ndarray) else b
    fa, fb = _core._flatten(a), _core._flatten(b)
    dt = numpy.multiply.resolve_dtypes((a.dtype, b.dtype, None))[2]
    shape = (a.size, b.size)
    if out is not None:
        # numpy.outer is multiply(a.ravel()[:, None], b.ravel()[None, :], out)
        if not isinstance(out, (_DA, numpy.ndarray)):
            raise TypeError("return arrays must be of ArrayType")
        if tuple(out.shape) != shape:
            raise ValueError(f"operands could not be broadcast together with shapes "
                             f"({a.size},1) (1,{b.size}) {_shape_str(out.shape)} (the out= "
                             f"array of outer must have shape {_shape_str(shape)})")
        numpy.multiply.resolve_dtypes((a.dtype, b.dtype, out.dtype), casting="same_kind")
    res = _contract(fa, fb, [0], [1], shape, (), dt)
    return res if out is None else _put(res, out, "outer")


def _tensordot_axes(a, b, axes):
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        return list(range(-n, 0)), list(range(0, n))  # NumPy's reading, negative n too
    axes_a, axes_b = axes
    axes_a = [operator.index(x) for x in (axes_a if hasattr(axes_a, "__len__")
                                          else [axes_a])]
    axes_b = [operator.index(x) for x in (axes_b if hasattr(axes_b, "__len__")
                                          else [axes_b])]
    return axes_a, axes_b


def tensordot(a, b, axes=2):
    """Sum products over the given axes, as numpy.tensordot."""
    a, b = _operand(a), _operand(b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    if a.ndim == 0 or b.ndim == 0:
        if axes_a:
            raise ValueError("shape-mismatch for sum")
        return _scalar_product(a, b, None)
    ka, kb = [], []
    for x, y in zip(axes_a, axes_b):
        if not -a.ndim <= x < a.ndim or not -b.ndim <= y < b.ndim:
            raise IndexError("tuple index out of range")
        x, y = x % a.ndim, y % b.ndim
        if a.shape[x] != b.shape[y]:
            raise ValueError("shape-mismatch for sum")
        ka.append(x)
        kb.append(y)
    if len(set(ka)) != len(ka) or len(set(kb)) != len(kb):
        raise ValueError("repeated axis in tensordot")
    fa = [j for j in range(a.ndim) if j not in ka]
    fb = [j for j in range(b.ndim) if j not in kb]
    shape = tuple(a.shape[j] for j in fa) + tuple(b.shape[j] for j in fb)
    n = len(shape)
    amap, bmap = [0] * a.ndim, [0] * b.ndim
    for i, j in enumerate(fa):
        amap[j] = i
    for i, j in enumerate(fb):
        bmap[j] = len(fa) + i
    for q, (x, y) in enumerate(zip(ka, kb)):
        amap[x] = n + q
        bmap[y] = n + q
    kshape = tuple(a.shape[x] for x in ka)
    return _contract(a, b, amap, bmap, shape, kshape, _result_dtype(a, b))


def dot_method(self, b, out=None):
    """DistributedArray.dot(b, out=None)."""
    return dot(self, b, out=out)


# ---- index maps -----------------------------------------------------------------------------

def make_2d_index_map(i_partitions, j_partitions, devices):
    """An index map for a 2-d matrix cut in blocks: i_partitions and
    j_partitions are the block boundaries (starting at 0, increasing) along
    the rows and the columns; devices[i][j] the devices (an iterable) that
    hold block (i, j).  As cupyx.distributed.array.make_2d_index_map."""
    for name, parts in (("i_partitions", i_partitions), ("j_partitions", j_partitions)):
        parts = list(parts)
        if not parts or parts[0] != 0 or sorted(set(parts)) != parts:
            raise ValueError(f"{name} must start at 0 and increase strictly, not {parts}")
    if len(devices) != len(i_partitions) - 1:
        raise ValueError(f"devices has {len(devices)} rows of blocks, i_partitions "
                         f"{len(i_partitions) - 1}")
    index_map = {}
    for i, row in enumerate(devices):
        if len(row) != len(j_partitions) - 1:
            raise ValueError(f"row {i} of devices has {len(row)} blocks, j_partitions "
                             f"{len(j_partitions) - 1}")
        for j, devs in enumerate(row):
            idx = (slice(i_partitions[i], i_partitions[i + 1]),
                   slice(j_partitions[j], j_partitions[j + 1]))
            if hasattr(devs, "__index__"):
                raise TypeError(f"devices[{i}][{j}] must be an iterable of device numbers "
                                f"(a set, as {{{devs!r}}}), not {devs!r}")
            for dev in devs:
                index_map.setdefault(operator.index(dev), []).append(idx)
    return index_map


FUNCTIONS = {"dot": dot, "vdot": vdot, "inner": inner, "outer": outer,
             "tensordot": tensordot}
METHODS = {"dot": dot_method}
