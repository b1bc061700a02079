"""numpy.linalg's functions that are reductions and products, on the
devices: norm (vector norms of every order; Frobenius, 1, -1, inf and -inf
matrix norms in one pass over the data; 2, -2 and nuclear norms from the
singular values, _dense.svd_norm), vector_norm, matrix_norm, multi_dot
(NumPy's chain order), and the array API's matmul, outer, vecdot,
tensordot, trace, diagonal, matrix_transpose, cross; tensorsolve and
tensorinv (solve and inv of the array seen as a matrix).  matrix_power and the
factorisations are _dense's; install() puts these beside them in
dgarray.linalg.
"""
import operator

import numpy

from . import _core, _dense, _fallback
from ._compose import asdist, normalize_axis_index, normalize_axis_tuple
from ._elementwise import imag_of, real_of
from ._linalg import dot, matmul, outer, tensordot, vecdot
from ._matrix import diagonal, trace
from ._numeric import cross
from ._shape import atleast_2d, matrix_transpose, moveaxis, ravel, reshape, transpose

_DA = _core.DistributedArray
_INF = numpy.inf


def _svd_norm(x, ord, axis, keepdims):
    """Matrix norms of ord 2, -2, 'nuc': _dense's, from the singular values,
    where the backend has dense linear algebra; else NumPy's fallback."""
    if _dense.available():
        return _dense.svd_norm(x, ord, axis, keepdims)
    return _fallback.call(numpy.linalg.norm, (x,), {"ord": ord, "axis": axis,
                                                    "keepdims": keepdims},
                          "numpy.linalg.norm")


_SQUARES, _SQUARE_BINS = 3, 2048  # DG_COUNT_SQUARES; partials (one per GPU block)


def _sum_squares(x, round_squares):
    """The sum of the squares of x's elements (a real float dtype), summed in
    float64 where they live in one pass (_core._count's squares: partials
    per device and block, no temporary): a 0-d float64 DistributedArray.
    round_squares: each square rounded to x's dtype first, as NumPy's x * x
    (it underflows or overflows there).  NumPy sums in x's dtype; the caller
    casts the sum to it, so that a sum beyond its range overflows as
    NumPy's does."""
    x = x if x.mode == "replica" else x.change_mode("replica")
    # each device's partials apart (a row of its own, no op mode): each
    # device sums its own and only the sums cross devices, where partials
    # in SUM mode were first added across devices, bin by bin
    return _core._count(x, None, _SQUARE_BINS, _SQUARES, int(round_squares), 64, 0, None,
                        True).sum()


def _root_sum_squares(x, keepdims, products=False):
    """The 2-norm of all of x (a float or complex DistributedArray) in x's
    real dtype: as NumPy's sqrt of a dot (float16's dot multiplies in
    float32), or with products, of a sum of x * x (products in the dtype)."""
    rnd = products or x.dtype != numpy.float16
    if x.dtype.kind == "c":
        sq = numpy.add(_sum_squares(real_of(x), rnd), _sum_squares(imag_of(x), rnd))
    else:
        sq = _sum_squares(x, rnd)
    # the cast and the root in one call (one kernel less on each norm)
    ret = numpy.sqrt(sq, dtype=numpy.finfo(x.dtype).dtype)
    return reshape(ret, x.ndim * [1]) if keepdims else ret


def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm, as NumPy computes it (its dtypes and errors),
    reduced where the data lives."""
    x = asdist(x)
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    nd = x.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            return _root_sum_squares(x, keepdims)
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        if ord == _INF:
            return numpy.abs(x).max(axis=axis, keepdims=keepdims, initial=0)
        if ord == -_INF:
            return numpy.abs(x).min(axis=axis, keepdims=keepdims)
        if ord == 0:
            return numpy.not_equal(x, 0).astype(real_of(x).dtype).sum(axis=axis,
                                                                       keepdims=keepdims)
        if ord == 1:
            return numpy.add.reduce(numpy.abs(x), axis=axis, keepdims=keepdims)
        if ord is None or ord == 2:
            if nd == 1:
                normalize_axis_index(axis[0], nd)
                return _root_sum_squares(x, keepdims, products=True)
            s = real_of(numpy.multiply(numpy.conjugate(x), x))
            return numpy.sqrt(numpy.add.reduce(s, axis=axis, keepdims=keepdims))
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        absx = numpy.abs(x)
        absx = numpy.power(absx, ord, out=absx)
        ret = numpy.add.reduce(absx, axis=axis, keepdims=keepdims)
        if ret.mode != "replica":
            ret = ret.change_mode("replica")
        return numpy.power(ret, numpy.reciprocal(ord, dtype=ret.dtype), out=ret)
    if len(axis) == 2:
        row, col = axis
        row, col = normalize_axis_index(row, nd), normalize_axis_index(col, nd)
        if row == col:
            raise ValueError("Duplicate axes given.")
        if ord in (2, -2, "nuc"):
            return _svd_norm(x, ord, axis, keepdims)
        if ord == 1:
            ret = numpy.add.reduce(numpy.abs(x), axis=row).max(
                axis=col - 1 if col > row else col, initial=0)
        elif ord == _INF:
            ret = numpy.add.reduce(numpy.abs(x), axis=col).max(
                axis=row - 1 if row > col else row, initial=0)
        elif ord == -1:
            ret = numpy.add.reduce(numpy.abs(x), axis=row).min(axis=col - 1 if col > row else col)
        elif ord == -_INF:
            ret = numpy.add.reduce(numpy.abs(x), axis=col).min(axis=row - 1 if row > col else row)
        elif ord in (None, "fro", "f") and nd == 2:
            return _root_sum_squares(x, keepdims, products=True)
        elif ord in (None, "fro", "f"):
            ret = numpy.sqrt(numpy.add.reduce(real_of(numpy.multiply(numpy.conjugate(x), x)),
                                              axis=axis))
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(x.shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            ret = reshape(ret, shape)
        return ret
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over axes (all of x by default)."""
    x = asdist(x)
    shape = list(x.shape)
    if axis is None and ord == 2:
        ax = None  # every element: one pass, x as it lies
    elif axis is None:
        x, ax = ravel(x), 0
    elif isinstance(axis, tuple):
        axes = normalize_axis_tuple(axis, x.ndim)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        t = transpose(x, axis + rest)
        x = reshape(t, (int(numpy.prod([x.shape[i] for i in axis], dtype=int)),
                        *[x.shape[i] for i in rest]))
        ax = 0
    else:
        ax = axis
    if ax is None:
        res = _root_sum_squares(x if x.dtype.kind in "fc" else x.astype(float), False,
                                products=True)
    else:
        res = norm(x, axis=ax, ord=ord)
    if keepdims:
        for i in normalize_axis_tuple(range(len(shape)) if axis is None else axis, len(shape)):
            shape[i] = 1
        res = reshape(res, tuple(shape))
    return res


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes."""
    return norm(asdist(x), axis=(-2, -1), keepdims=keepdims, ord=ord)


def _chain_order(shapes):
    """The split points of the cheapest product order of a chain of
    matrices (the classical dynamic programme, ties to the first split)."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = numpy.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j] = q
                    split[i][j] = k
    return split


def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices, multiplied in NumPy's cheapest
    order."""
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if n == 2:
        return dot(arrays[0], arrays[1], out=out)
    xs = [asdist(a) for a in arrays]
    first, last = xs[0].ndim, xs[-1].ndim
    if first == 1:
        xs[0] = atleast_2d(xs[0])
    if last == 1:
        xs[-1] = transpose(atleast_2d(xs[-1]))
    for x in xs:
        if x.ndim != 2:
            raise numpy.linalg.LinAlgError(f"{x.ndim}-dimensional array given. Array must be "
                                           "two-dimensional")
    if n == 3:
        (a0, a1b0), (b1c0, c1) = xs[0].shape, xs[2].shape
        if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
            res = dot(dot(xs[0], xs[1]), xs[2], out=out)
        else:
            res = dot(xs[0], dot(xs[1], xs[2]), out=out)
    else:
        split = _chain_order([x.shape for x in xs])

        def prod(i, j, out=None):
            if i == j:
                return xs[i]
            k = split[i][j]
            return dot(prod(i, k), prod(k + 1, j), out=out)
        res = prod(0, n - 1, out)
    if first == 1 and last == 1:
        return res[0, 0]
    if first == 1 or last == 1:
        return ravel(res)
    return res


# ---- tensorsolve, tensorinv: solve and inv of the array seen as a matrix ------------------

def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b: a's trailing axes (after moving
    `axes` to the end) are x's shape, a seen as a square matrix of
    prod(b.shape) rows and solved on the devices (linalg.solve)."""
    x, y = asdist(a), asdist(b)
    if axes is not None:
        order = list(range(x.ndim))
        for k in axes:
            order.remove(k)
            order.append(k)
        x = transpose(x, order)
    xshape = x.shape[y.ndim:]
    n = 1
    for k in xshape:
        n *= k
    if x.size != n * n:
        # NumPy's message, its line continuation's spaces included
        raise numpy.linalg.LinAlgError(
            "Input arrays must satisfy the requirement" + " " * 13 +
            "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return reshape(_dense.solve(reshape(x, (n, n)), ravel(y)), xshape)


def tensorinv(a, ind=2):
    """The inverse of a with respect to tensordot over its first `ind`
    axes: a seen as a matrix of prod(a.shape[:ind]) rows, inverted on the
    devices (linalg.inv), reshaped to a.shape[ind:] + a.shape[:ind]."""
    x = asdist(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    rows = 1
    for k in x.shape[ind:]:
        rows *= k
    if rows == 0:
        raise ValueError(f"cannot reshape array of size {x.size} into shape ({rows},newaxis)")
    inverse = _dense.inv(reshape(x, (rows, x.size // rows)))
    return reshape(inverse, x.shape[ind:] + x.shape[:ind])


# ---- the array API's linalg functions ------------------------------------------------------

def linalg_matmul(x1, x2, /):
    return matmul(x1, x2)


def linalg_outer(x1, x2, /):
    a, b = asdist(x1), asdist(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={a.ndim!r} and x2.ndim={b.ndim!r}.")
    return outer(a, b)


def linalg_vecdot(x1, x2, /, *, axis=-1):
    a, b = asdist(x1), asdist(x2)
    if axis != -1:
        nd = max(a.ndim, b.ndim)
        ax = normalize_axis_index(axis, nd)
        a = moveaxis(a, ax - (nd - a.ndim), -1) if a.ndim else a
        b = moveaxis(b, ax - (nd - b.ndim), -1) if b.ndim else b
    return vecdot(a, b)


def linalg_tensordot(x1, x2, /, *, axes=2):
    return tensordot(x1, x2, axes=axes)


def linalg_trace(x, /, *, offset=0, dtype=None):
    return trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def linalg_diagonal(x, /, *, offset=0):
    return diagonal(x, offset, axis1=-2, axis2=-1)


def linalg_matrix_transpose(x, /):
    return matrix_transpose(x)


def linalg_cross(x1, x2, /, *, axis=-1):
    a, b = asdist(x1), asdist(x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {a.shape[axis]} and {b.shape[axis]} dimensional instead.")
    return cross(a, b, axis=axis)


FUNCTIONS = {
    "linalg.norm": norm, "linalg.vector_norm": vector_norm,
    "linalg.matrix_norm": matrix_norm, "linalg.multi_dot": multi_dot,
    "linalg.matmul": linalg_matmul,
    "linalg.outer": linalg_outer, "linalg.vecdot": linalg_vecdot,
    "linalg.tensordot": linalg_tensordot, "linalg.trace": linalg_trace,
    "linalg.diagonal": linalg_diagonal, "linalg.matrix_transpose": linalg_matrix_transpose,
    "linalg.cross": linalg_cross,
    "linalg.tensorsolve": tensorsolve, "linalg.tensorinv": tensorinv,
}
