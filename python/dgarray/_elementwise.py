"""NumPy's elementwise helpers beyond the ufuncs: real, imag (views of the
parts of complex elements, ``_core._view_dtype``), angle, iscomplex, isreal,
isposinf, isneginf, nan_to_num, real_if_close, copyto, fix, sinc.

All run where the data lives, as ufuncs and masked writes; NumPy's dtypes
come from the ufuncs, its casting checks from NumPy itself on empty arrays.
"""
import numpy

from . import _core
from ._compose import asdist, readonly
from ._creation import ones, zeros, zeros_like
from ._indexing import assign, upload_like, where
from ._reductions import all as all_

_DA = _core.DistributedArray


def _part_dtype(dt):
    return numpy.dtype(dt.char.lower()) if dt.kind == "c" else dt


def real_of(a):
    """a.real: a view of the real parts of complex elements; a itself else."""
    if a.dtype.kind != "c":
        return a
    if a.mode not in ("replica", "sum"):
        _core._resolve(a)
    return _core._view_dtype(a, _part_dtype(a.dtype), 0, True)


def imag_of(a):
    """a.imag: a view of the imaginary parts of complex elements; read-only
    zeros of a's dtype else (as NumPy's)."""
    if a.dtype.kind != "c":
        return readonly(zeros_like(a))
    if a.mode not in ("replica", "sum"):
        _core._resolve(a)
    dt = _part_dtype(a.dtype)
    return _core._view_dtype(a, dt, dt.itemsize, True)


def real(val):
    """The real part of val's elements (a view for complex arrays)."""
    if isinstance(val, _DA):
        return real_of(val)
    if isinstance(val, (int, float, complex)) or numpy.ndim(val) == 0 and not isinstance(
            val, numpy.ndarray):
        return numpy.real(val)
    return real_of(asdist(val))


def imag(val):
    """The imaginary part of val's elements (a view for complex arrays)."""
    if isinstance(val, _DA):
        return imag_of(val)
    if isinstance(val, (int, float, complex)) or numpy.ndim(val) == 0 and not isinstance(
            val, numpy.ndarray):
        return numpy.imag(val)
    return imag_of(asdist(val))


def angle(z, deg=False):
    """The argument of complex values (arctan2 of the parts), in radians or
    degrees."""
    z = asdist(z)
    if z.dtype.kind == "c":
        a = numpy.arctan2(imag_of(z), real_of(z))
    else:
        a = numpy.arctan2(0, z)
    if deg:
        a = numpy.multiply(a, 180 / numpy.pi, out=a)
    return a


def iscomplex(x):
    """True where an element has a non-zero imaginary part."""
    x = asdist(x)
    if x.dtype.kind == "c":
        return numpy.not_equal(imag_of(x), 0)
    return zeros(x.shape, bool)


def isreal(x):
    """True where an element has a zero imaginary part."""
    x = asdist(x)
    if x.dtype.kind == "c":
        return numpy.equal(imag_of(x), 0)
    return ones(x.shape, bool)


def _no_complex(x):
    x = asdist(x)
    if x.dtype.kind == "c":
        raise TypeError(f"This operation is not supported for {x.dtype} values because it "
                        "would be ambiguous.")
    return x


def isposinf(x, out=None):
    """True where an element is +inf (NumPy's TypeError for complex)."""
    x = _no_complex(x)
    return numpy.logical_and(numpy.isinf(x), numpy.logical_not(numpy.signbit(x)), out)


def isneginf(x, out=None):
    """True where an element is -inf (NumPy's TypeError for complex)."""
    x = _no_complex(x)
    return numpy.logical_and(numpy.isinf(x), numpy.signbit(x), out)


def _where_mask(where, like):
    if where is True:
        return None
    w = where if isinstance(where, _DA) else numpy.asarray(where, dtype=bool)
    if isinstance(w, _DA):
        return w if w.dtype == numpy.bool_ else w.astype(bool)
    return upload_like(numpy.ascontiguousarray(numpy.broadcast_to(w, like.shape)), like)


def copyto(dst, src, casting="same_kind", where=True):
    """dst's elements = src's (broadcast), where `where` holds, with NumPy's
    casting rule."""
    if not isinstance(dst, _DA):
        raise TypeError("copyto() argument 1 must be numpy.ndarray, not "
                        f"{type(dst).__name__}")
    probe = numpy.empty(0, src.dtype) if isinstance(src, (_DA, numpy.ndarray)) else src
    numpy.copyto(numpy.empty(0, dst.dtype), probe, casting=casting)  # NumPy's casting error
    if _core._readonly(dst):
        raise ValueError("assignment destination is read-only")
    if dst.mode != "replica":
        _core._resolve(dst)
    if isinstance(src, _DA) and src.dtype != dst.dtype:
        src = src.astype(dst.dtype)
    assign(dst, src, _where_mask(where, dst))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by nan, posinf and neginf (the largest and
    smallest finite values by default), in a copy or in place."""
    if isinstance(x, _DA):
        a = x.copy() if copy else x
    else:
        a = asdist(numpy.array(x, copy=True))
    if a.dtype.kind not in "fc":
        return a
    info = numpy.finfo(_part_dtype(a.dtype))
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    for part in ((real_of(a), imag_of(a)) if a.dtype.kind == "c" else (a,)):
        copyto(part, nan, casting="unsafe", where=numpy.isnan(part))
        copyto(part, hi, casting="unsafe", where=isposinf(part))
        copyto(part, lo, casting="unsafe", where=isneginf(part))
    return a


def real_if_close(a, tol=100):
    """The real parts if every imaginary part is within tol (machine
    epsilons, where tol > 1) of zero; a else."""
    a = asdist(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = numpy.finfo(a.dtype).eps * tol
    if bool(all_(numpy.less(numpy.absolute(imag_of(a)), tol))):
        return real_of(a)
    return a


def fix(x, out=None):
    """Rounded toward zero (NumPy's fix: the trunc ufunc)."""
    return numpy.trunc(asdist(x), out=out)


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    x = numpy.multiply(numpy.pi, asdist(x))
    eps = numpy.finfo(x.dtype).eps if x.dtype.kind == "f" else 1e-20
    y = where(x, x, eps)
    return numpy.true_divide(numpy.sin(y), y)


FUNCTIONS = {
    "real": real, "imag": imag, "angle": angle, "iscomplex": iscomplex, "isreal": isreal,
    "isposinf": isposinf, "isneginf": isneginf, "copyto": copyto, "nan_to_num": nan_to_num,
    "real_if_close": real_if_close, "fix": fix, "sinc": sinc,
}
