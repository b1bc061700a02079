"""The devices' dense slot from Python (dg_array_dense: LAPACK of NumPy's
wheel on the CPU backend, cuSOLVER on GPUs): its ops and settings, the
operands, dtypes and errors of dgarray.linalg, where a stack of matrices is
computed (Stack), and the local QR and SVD of matrices held whole.  Below
dgarray._blocked (the algorithms over split matrices) and dgarray._dense
(NumPy's linalg functions), which both build on it.
"""
import functools
import os

import numpy
from numpy.linalg import LinAlgError

from . import _core
from ._creation import asarray
from ._linalg import numpy_blas_symbols
from ._shape import swapaxes

_DA = _core.DistributedArray

# ---- the CPU backend's LAPACK -----------------------------------------------------------------

# dg_cpu_lapack_routine's order (src/backend/cpu/cpu_dense.h): the names for
# real and for complex dtypes
_ROUTINES = (("potrf", "potrf"), ("getrf", "getrf"), ("getrs", "getrs"), ("trsm", "trsm"),
             ("geqrf", "geqrf"), ("orgqr", "ungqr"), ("syevd", "heevd"), ("gesdd", "gesdd"),
             ("geev", "geev"))


def _numpy_lapack():
    """Addresses of the ILP64 LAPACK routines of NumPy's BLAS, per routine
    (s, d, c, z), or None."""
    names = [f"scipy_{t}{(real if t in 'sd' else cplx)}_64_"
             for real, cplx in _ROUTINES for t in "sdcz"]
    flat = numpy_blas_symbols(names)
    if flat is None:
        return None
    return tuple(tuple(flat[4 * i:4 * i + 4]) for i in range(len(_ROUTINES)))


def use_numpy_lapack(on=True):
    """The CPU backend's dense linear algebra through NumPy's LAPACK (on,
    where found) or none (linalg then goes through NumPy on the host).
    Returns whether LAPACK is used."""
    fns = _numpy_lapack() if on else None
    return bool(_core._set_cpu_lapack(fns)) and fns is not None


if os.environ.get("DGARRAY_CPU_LAPACK", "1") != "0":
    use_numpy_lapack()


class _Settings:
    """min_blocked_rows: a 2-d matrix split over devices with at least this
    many rows runs the blocked algorithms across the devices; a smaller one
    is gathered onto one device.  On the CPU backend the default is never:
    its virtual devices share the host's cores and memory, and one LAPACK
    call on the gathered matrix already uses every core (the tests lower it
    to run the blocked algorithms there).  block: the panel width of the
    blocked algorithms."""
    min_blocked_rows = 4096 if _core.backend() != "cpu" else 1 << 62
    block = 512


settings = _Settings()

# the ops of dg_dense_op (src/core/dg_dense.h)
POTRF, GETRF, GETRS, TRSM, GEQRF, ORGQR, SYEVD, GESVD, TRIZERO, GEEV = range(10)


def run(op, a, b=None, u=None, vt=None, w=None, ipiv=None, info=None, *, lower=0, trans=0,
        right=0, unit=0, job=0, m=0, n=0, k=0):
    """One dense op in place on the operands (dg_array_dense)."""
    _core._dense((op, int(lower), trans, int(right), int(unit), job, m, n, k), a, b, u, vt, w,
                 ipiv, info)


def available():
    """True where the backend runs dense linear algebra."""
    return _core._has_slot("dense")


# ---- operands, dtypes, errors -----------------------------------------------------------------

def operand(x, what="linalg"):
    """x as a DistributedArray (host data goes to the default layout);
    TypeError for data that is not numbers."""
    if isinstance(x, _DA):
        return x
    h = numpy.asarray(x)
    if h.dtype.kind not in "biufc":
        raise TypeError(f"array type {h.dtype.name} is unsupported in {what}")
    return asarray(h)


def work_dtype(*arrays):
    """The dtype a computation on these arrays runs in and returns (NumPy's
    _commonType, in the inputs' precision): float32/complex64 when every
    float input is single precision, else float64/complex128; integers and
    bools count as float64; float16 is NumPy's TypeError."""
    single, cplx = True, False
    for a in arrays:
        dt = numpy.dtype(a.dtype)
        if dt.kind in "fc":
            cplx = cplx or dt.kind == "c"
            if dt in (numpy.float64, numpy.complex128):
                single = False
            elif dt not in (numpy.float32, numpy.complex64):
                raise TypeError(f"array type {dt.name} is unsupported in linalg")
        elif dt.kind in "biu":
            single = False
        else:
            raise TypeError(f"array type {dt.name} is unsupported in linalg")
    if cplx:
        return numpy.dtype(numpy.complex64 if single else numpy.complex128)
    return numpy.dtype(numpy.float32 if single else numpy.float64)


def real_dtype(dt):
    return numpy.dtype(dt).type(0).real.dtype


def assert_stacked_2d(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")


def assert_stacked_square(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")
        if a.shape[-1] != a.shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def check(info, msg):
    """Raises LinAlgError(msg) where a matrix's info is not 0 (read on the
    host: one reduction and one synchronisation); MemoryError where the
    backend could not get a workspace."""
    if info is None or info.size == 0:
        return
    if bool((info != 0).any()):
        if bool((info == _NO_WORKSPACE).any()):
            raise MemoryError("the dense linear algebra of a device could not allocate its "
                              "workspace")
        raise LinAlgError(msg)


# the info of a matrix whose workspace the backend could not allocate
_NO_WORKSPACE = numpy.iinfo(numpy.int32).min


def _finite_flag(a):
    """A device bool (DistributedArray) or host bool: every element of a is
    finite; None for data with no float or complex values (nothing to check,
    or not numbers: the function itself then raises NumPy's error)."""
    if isinstance(a, _DA):
        return numpy.isfinite(a).all() if a.dtype.kind in "fc" else None
    try:
        h = numpy.asarray(a)
    except Exception:  # noqa: BLE001 - not array data: the function raises
        return None
    return bool(numpy.isfinite(h).all()) if h.dtype.kind in "fc" else None


def all_finite(*arrays):
    """True if no element of these arrays is NaN or infinite: one reduction
    per array on the devices and one host read for all of them."""
    flag = None
    for a in arrays:
        f = _finite_flag(a)
        if f is False:
            return False
        if f is not None and f is not True:
            flag = f if flag is None else flag & f
    return True if flag is None else bool(flag)


def _host(v):
    return v.get() if isinstance(v, _DA) else v


def _result_to_device(res):
    """NumPy's result as dgarray's: arrays and NumPy scalars as
    DistributedArrays (in tuples and named tuples too), anything else as it
    is."""
    if isinstance(res, (numpy.ndarray, numpy.generic)):
        return asarray(res)
    if isinstance(res, tuple):
        items = [_result_to_device(r) for r in res]
        return type(res)(*items) if hasattr(res, "_fields") else tuple(items)
    return res


def numpy_answer(host, args, kw, post=None):
    """NumPy's `host` on host copies of the arguments: its result (post(result)
    first, where given) as dgarray's, or its error."""
    res = host(*(_host(a) for a in args), **{k: _host(v) for k, v in kw.items()})
    return _result_to_device(post(res) if post is not None else res)


def numpy_if_nonfinite(host, narrays=1, post=None):
    """Decorator of the linalg functions: where one of the first `narrays`
    arguments holds a NaN or an infinity, the call is NumPy's `host` on host
    copies of the arguments (numpy_answer).

    Why: what LAPACK makes of NaN and infinities is the implementation's
    (which elements of a solve come out NaN, whether a factorisation
    reports an error, or loops), and cuSOLVER's differs from the OpenBLAS of
    NumPy's wheel: on GPUs a solve with a NaN gave finite numbers where
    NumPy gives NaN.  Such input is rare and its answer is NumPy's exactly
    this way; the price for finite input is one reduction per array and one
    host read per call.  (cholesky needs no such check first: it learns of
    such input from its own outcome, see outcome_clean.)"""
    def wrap(func):
        @functools.wraps(func)
        def call(*args, **kw):
            if all_finite(*args[:narrays]):
                return func(*args, **kw)
            return numpy_answer(host, args, kw, post)
        return call
    return wrap


def outcome_clean(infos, probes=()):
    """True if every info (int32 arrays on the devices) is 0 and every value
    of the probes (arrays on the devices) is finite: reductions on the
    devices and one host read for all of them."""
    flag = None
    for x in infos:
        f = (x == 0).all()
        flag = f if flag is None else flag & f
    for x in probes:
        f = numpy.isfinite(x).all()
        flag = f if flag is None else flag & f
    return True if flag is None else bool(flag)


def on_host(func, *arrays, **kw):
    """func (NumPy's) on empty host arrays of these arrays' shapes and dtypes:
    the answer for matrices with no element (no data to gather); results go
    to the devices."""
    hosts = [numpy.empty(a.shape, a.dtype) for a in arrays]
    return to_device(func(*hosts, **kw))


def to_device(res):
    """NumPy arrays in res (also in tuples and named tuples) as
    DistributedArrays."""
    if isinstance(res, numpy.ndarray):
        return asarray(res)
    if isinstance(res, tuple):
        items = [to_device(r) for r in res]
        return type(res)(*items) if hasattr(res, "_fields") else tuple(items)
    return res


# ---- where the matrices are computed ------------------------------------------------------------

def _rng(n):
    return (0, n, 1)


def matrices_whole(x):
    """True if every chunk of x holds whole matrices (its last two axes)."""
    m, n = x.shape[-2:]
    for _, box in x._layout():
        if box[-2][:2] != (0, m) and m > 0 or box[-1][:2] != (0, n) and n > 0:
            return False
        if (box[-2][2] != 1 and m > 1) or (box[-1][2] != 1 and n > 1):
            return False
    return True


def main_device(x):
    """The device holding the most elements of x."""
    held = {}
    for dev, box in x._layout():
        size = 1
        for s, e, st in box:
            size *= max(0, -(-(e - s) // st))
        held[dev] = held.get(dev, 0) + size
    return max(held, key=lambda d: (held[d], -d)) if held else 0


class Stack:
    """Where a stack of matrices is computed: the batch shape and, for each
    chunk, its device and box over the batch axes.  Arrays made here hold
    whole trailing axes in every chunk, so each chunk is one batch of the
    dense slot and no data moves between the ops of one call."""

    def __init__(self, bshape, entries):
        self.bshape = tuple(bshape)
        self.entries = entries

    @classmethod
    def one(cls, bshape, dev):
        return cls(bshape, [(dev, tuple(_rng(n) for n in bshape))])

    @classmethod
    def of(cls, x, bshape=None):
        """x's own batch layout when its chunks hold whole matrices and its
        batch shape is bshape; else the batch split over the devices (its
        largest axis), or one device for a single matrix."""
        bshape = x.shape[:-2] if bshape is None else tuple(bshape)
        if x.shape[:-2] == bshape and matrices_whole(x):
            seen, entries = set(), []
            for dev, box in x._layout():
                key = tuple(box[:-2])
                if key not in seen:
                    seen.add(key)
                    entries.append((dev, key))
            return cls(bshape, entries)
        return cls.split(bshape, main_device(x))

    @classmethod
    def split(cls, bshape, dev=0):
        """The batch's largest axis split in near-equal blocks over the
        devices; one device (dev) when there is no batch."""
        size = 1
        for n in bshape:
            size *= n
        ndev = _core._ndevices()
        if not bshape or size == 0 or ndev == 1:
            return cls.one(bshape, dev)
        ax = max(range(len(bshape)), key=lambda i: (bshape[i], -i))
        k = min(ndev, bshape[ax])
        entries = []
        for i in range(k):
            box = [_rng(n) for n in bshape]
            box[ax] = (bshape[ax] * i // k, bshape[ax] * (i + 1) // k, 1)
            entries.append((i, tuple(box)))
        return cls(bshape, entries)

    def layout(self, tail):
        return [(dev, bb + tuple(_rng(n) for n in tail)) for dev, bb in self.entries]

    def empty(self, tail, dtype):
        tail = tuple(tail)
        return _core._empty(self.bshape + tail, numpy.dtype(dtype), self.layout(tail), 0)

    def copy(self, src, tail, dtype):
        """A new array (batch + tail) of this layout holding src (broadcast to
        that shape, cast to dtype)."""
        w = self.empty(tail, dtype)
        if w.size:
            _core._copyto(w, src)
        return w

    def zeros(self, tail, dtype):
        w = self.empty(tail, dtype)
        if w.size:
            _core._fill(w, 0, 0, None, 0, None)
        return w


def swap(x):
    """x with its last two axes swapped (a view)."""
    return swapaxes(x, -1, -2)


def conj_swap(x):
    """x's conjugate transpose over its last two axes: a view for real x."""
    return numpy.conjugate(swap(x)) if x.dtype.kind == "c" else swap(x)


def diagonal(x):
    """The main diagonals of the square matrices x (..., n, n) whose chunks
    hold whole dense matrices: a strided view of each chunk."""
    n = x.shape[-1]
    return x.reshape(x.shape[:-2] + (n * n,))[..., ::n + 1]


def blocked(x):
    """True if a 2-d x is split over devices and large enough for the
    blocked algorithms."""
    return (x.ndim == 2 and not matrices_whole(x) and _core._ndevices() > 1
            and x.shape[0] >= settings.min_blocked_rows)


def stack_for(x, bshape=None):
    """The Stack x is computed in: its own where its chunks hold whole
    matrices, else its batch split over the devices, or for one matrix split
    over devices the device holding most of it (a gather there)."""
    return Stack.of(x, bshape)


# ---- QR and SVD of matrices held whole -----------------------------------------------------------

def qr_local(x, dt, mode):
    """The QR factorisation (LAPACK's geqrf and orgqr / ungqr) of each matrix
    of x (non-empty) in dtype dt, computed where x's Stack says (dgarray's
    qr with its modes, less the deprecated ones and the blocked path)."""
    from numpy.linalg._linalg import QRResult
    mr, nc = x.shape[-2:]
    k = min(mr, nc)
    st = stack_for(x)
    w = st.copy(swap(x), (nc, mr), dt)   # LAPACK's m x n matrix: x itself
    tau = st.empty((k,), dt)
    run(GEQRF, w, w=tau, m=mr, n=nc)
    if mode == "raw":
        return w, tau
    rrows = mr if mode == "complete" else k
    r = st.copy(swap(w)[..., :rrows, :], (rrows, nc), dt)
    run(TRIZERO, r, lower=True, m=nc, n=rrows, k=0)
    if mode == "r":
        return r
    if mode == "complete" and mr > nc:
        z = st.empty((mr, mr), dt)
        z[..., :nc, :] = w
        run(ORGQR, z, w=tau, m=mr, n=mr, k=k)
        return QRResult(swap(z), r)
    qv = w if mr >= nc else w[..., :mr, :]
    if mr < nc:
        qv = st.copy(qv, (mr, mr), dt)
    run(ORGQR, qv, w=tau, m=mr, n=k, k=k)
    return QRResult(swap(qv), r)


def svd_local(x, dt, full, uv):
    """LAPACK's gesdd of each matrix of x (whole per chunk, or gathered).
    x's bytes are LAPACK's x^T = U' S V'^H, so x = conj(V') S U'^T: LAPACK's
    vt, read row-major, is x's U and its u is x's Vh."""
    rdt = real_dtype(dt)
    mr, nc = x.shape[-2:]
    k = min(mr, nc)
    st = stack_for(x)
    w = st.copy(x, (mr, nc), dt)
    s = st.empty((k,), rdt)
    info = st.empty((), numpy.int32)
    if not uv:
        run(GESVD, w, w=s, info=info, job=0, m=nc, n=mr)
        check(info, "SVD did not converge")
        return s
    if full:
        vh, u = st.empty((nc, nc), dt), st.empty((mr, mr), dt)
    else:
        vh, u = st.empty((k, nc), dt), st.empty((mr, k), dt)
    run(GESVD, w, u=vh, vt=u, w=s, info=info, job=2 if full else 1, m=nc, n=mr)
    check(info, "SVD did not converge")
    return u, s, vh
