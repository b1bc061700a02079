"""dgarray.linalg on the devices: solve, inv, cholesky, qr, svd, svdvals,
eigh, eigvalsh, eig, eigvals, lstsq, det, slogdet, matrix_rank, pinv,
matrix_power, cond, and the singular-value matrix norms (ord 2, -2, 'nuc')
for linalg.norm.

Every factorisation runs in the backend's ``dense`` slot (LAPACK of NumPy's
wheel on the CPU backend, cuSOLVER on GPUs) where the matrices are
(src/core/dg_dense_run.c): a stack of matrices held whole by each chunk is
one batch per chunk, with no data moving; a stack whose matrices are split
is first resharded so that each device holds whole matrices.  A single
matrix split over several devices (2-d) runs the blocked algorithms of
dgarray._blocked (Cholesky, LU with partial pivoting, tall-skinny QR, and
what is built on them) when it has at least ``settings.min_blocked_rows``
rows, else it is gathered onto the device that holds most of it.

LAPACK is column-major and dgarray row-major: the bytes of a row-major
r x c matrix are the column-major c x r matrix, its transpose.  Each
function picks the LAPACK op, triangle and operand orientation that give
the answer wanted from those bytes (a transposed copy where LAPACK must see
the matrix itself, as NumPy makes a column-major copy), as each says.

Results follow NumPy's signatures, shapes, result types and errors
(``LinAlgError`` from the info the backend writes on the device: one
reduction and one host read per call, no gather).  Input holding a NaN or
an infinity is NumPy's on host copies (_lapack.numpy_if_nonfinite: what
LAPACK makes of such values is the implementation's, and cuSOLVER's is not
OpenBLAS's); finite input pays one more reduction and host read for that
check (cholesky excepted: it learns of such values from its own outcome).  Float32 and complex64
inputs are factored in their own precision (as CuPy does; NumPy factors in
double and rounds the result), so their results agree with NumPy's to that
precision.  Integer and bool inputs become float64, float16 is NumPy's
TypeError.
"""
import operator

import numpy
from numpy.linalg import LinAlgError

from . import _blocked, _core, _lapack, _linalg, _shape
from ._creation import arange, asarray, eye
from ._elementwise import imag_of, real_of
from ._indexing import where
from ._lapack import (GEEV, GETRF, GETRS, POTRF, SYEVD, TRIZERO, Stack, all_finite,
                      assert_stacked_2d, assert_stacked_square, blocked, check, conj_swap,
                      diagonal, matrices_whole, numpy_if_nonfinite, on_host, operand,
                      outcome_clean, qr_local, real_dtype, run, stack_for, svd_local, swap,
                      to_device, work_dtype)
# where the backend has the dense slot, its settings and NumPy's LAPACK for the
# CPU backend, as dgarray._dense offered them before _lapack was cut out of it
from ._lapack import available, settings, use_numpy_lapack  # noqa: F401

_DA = _core.DistributedArray

# ---- cholesky -----------------------------------------------------------------------------------

def cholesky(a, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix of a:
    L with a = L L^H (lower, the default), or U with a = U^H U (upper=True);
    only the lower triangle of a is read (NumPy's rule).  LinAlgError
    "Matrix is not positive definite" where a leading minor is not.

    On the devices: each chunk's matrices in one batch of the backend's
    potrf (a row-major matrix is LAPACK's transpose, so LAPACK's upper
    factor of it is the lower factor wanted); a single matrix split over
    devices runs the blocked right-looking algorithm (dgarray._blocked).

    NaN and infinities (NumPy's answer, as the other functions give it) are
    found from the factorisation's own outcome, with no pass over the input
    first: a non-finite value in the triangle potrf reads reaches a diagonal
    element of the factor (L(i, j) = (a(i, j) - sum) / L(j, j) carries it,
    and L(i, i)^2 = a(i, i) - sum abs(L(i, k))^2 takes every element of row i,
    with no cancellation) or stops potrf (info); one in the other triangle
    is seen by the kernel that zeroes it (TRIZERO's info).  All three are
    read in the one host read that the info needs anyway; only where one of
    them is off is the input checked, and NumPy's answer taken if it holds
    such a value."""
    x = operand(a)
    assert_stacked_square(x)
    dt = work_dtype(x)
    n = x.shape[-1]
    if x.size == 0:
        return on_host(lambda h: numpy.linalg.cholesky(h, upper=upper), x.astype(dt))
    if blocked(x):
        if not all_finite(x):
            return _lapack.numpy_answer(numpy.linalg.cholesky, (x,), {"upper": upper})
        return _blocked.cholesky(x, dt, upper)
    st = stack_for(x)
    w = st.copy(x, (n, n), dt)
    info = st.empty((), numpy.int32)
    run(POTRF, w, info=info, lower=upper, n=n)
    zeroed = st.empty((), numpy.int32)
    run(TRIZERO, w, info=zeroed, lower=upper, m=n, n=n, k=0)
    if outcome_clean((info, zeroed), (diagonal(w),)):
        return w
    if not all_finite(x):
        return _lapack.numpy_answer(numpy.linalg.cholesky, (x,), {"upper": upper})
    check(info, "Matrix is not positive definite")
    return w  # finite input whose factor overflowed: the devices' answer


# ---- LU: solve, inv, det, slogdet ---------------------------------------------------------------

def _lu(st, x, n, dt):
    """LAPACK's getrf of each matrix of x (given whole: its transposed copy,
    so that LAPACK factors the matrix itself, as NumPy's gesv does): (lu,
    ipiv, info), lu holding the factors of x's transpose's bytes."""
    lu = st.copy(swap(x), (n, n), dt)
    ipiv = st.empty((n,), numpy.int64)
    info = st.empty((), numpy.int32)
    run(GETRF, lu, ipiv=ipiv, info=info, m=n, n=n)
    return lu, ipiv, info


def _broadcast_batch(*shapes):
    try:
        return numpy.broadcast_shapes(*shapes)
    except ValueError:
        return None


@numpy_if_nonfinite(numpy.linalg.solve, 2)
def solve(a, b):
    """The solution x of a x = b for each square matrix of a (LAPACK's getrf
    and getrs, as NumPy's gesv).  b is a vector (M,) when 1-d, else a stack
    of (M, K) matrices, the stacks broadcast (NumPy 2's rule).  LinAlgError
    "Singular matrix" where a matrix is exactly singular.

    On the devices, each chunk's matrices one batch; a single matrix split
    over devices runs the blocked LU with partial pivoting and blocked
    triangular solves (dgarray._blocked)."""
    x, y = operand(a), operand(b)
    assert_stacked_square(x)
    dt = work_dtype(x, y)
    n = x.shape[-1]
    vec = y.ndim == 1
    yb = y.reshape(y.shape + (1,)) if vec else y
    if yb.ndim < 2 or yb.shape[-2] != n:
        core = "(m,m),(m)->(m)" if vec else "(m,m),(m,n)->(m,n)"
        raise ValueError(f"solve{'1' if vec else ''}: Input operand 1 has a mismatch in its "
                         f"core dimension 0, with gufunc signature {core} (size "
                         f"{yb.shape[-2] if yb.ndim >= 2 else y.shape[0]} is different "
                         f"from {n})")
    bshape = _broadcast_batch(x.shape[:-2], yb.shape[:-2])
    if bshape is None:
        raise ValueError("solve: operands could not be broadcast together with remapped "
                         f"shapes [original->remapped]: {x.shape}->{x.shape[:-2]} "
                         f"{y.shape}->{yb.shape[:-2]}")
    k = yb.shape[-1]
    if x.size == 0 or yb.size == 0 or 0 in bshape:
        return on_host(numpy.linalg.solve, x.astype(dt), y.astype(dt))
    if blocked(x) and not bshape:
        r = _blocked.solve(x, yb, dt)
        return r.reshape((n,)) if vec else r
    st = Stack.of(x, bshape)
    lu, ipiv, info = _lu(st, x, n, dt)
    check(info, "Singular matrix")
    # b as LAPACK's n x k column-major: the row-major (k, n) copy of b^T
    rhs = st.copy(swap(yb), (k, n), dt)
    run(GETRS, lu, b=rhs, ipiv=ipiv, trans=0, n=n, k=k)
    res = swap(rhs)
    return res.reshape(res.shape[:-1]) if vec else res


def _eye_stack(st, n, dt):
    """A stack of identity matrices of this Stack's layout."""
    e = st.zeros((n, n), dt)
    if e.size:
        diagonal(e)[...] = 1
    return e


@numpy_if_nonfinite(numpy.linalg.inv)
def inv(a):
    """The inverse of each square matrix of a: a x = I solved by LAPACK's
    getrf and getrs (NumPy's gesv with the identity).  LinAlgError "Singular
    matrix" where a matrix is exactly singular.  A single matrix split over
    devices is solved with the blocked LU (dgarray._blocked)."""
    x = operand(a)
    assert_stacked_square(x)
    dt = work_dtype(x)
    n = x.shape[-1]
    if x.size == 0:
        return on_host(numpy.linalg.inv, x.astype(dt))
    if blocked(x):
        return _blocked.solve(x, eye(n, dtype=dt), dt)
    return _inv_local(x, dt, checked=True)


def _inv_local(x, dt, checked):
    """inv on the devices; unchecked: NaN matrices where singular (NumPy's
    inv inside cond)."""
    n = x.shape[-1]
    st = stack_for(x)
    lu, ipiv, info = _lu(st, x, n, dt)
    if checked:
        check(info, "Singular matrix")
    rhs = _eye_stack(st, n, dt)
    run(GETRS, lu, b=rhs, ipiv=ipiv, trans=0, n=n, k=n)
    res = swap(rhs)
    if not checked:
        res = where((info != 0)[..., None, None], numpy.nan, res).astype(dt)
    return res


def _slogdet_parts(x, dt):
    """(sign, logabsdet) of each square matrix of x (non-empty) from LAPACK's
    getrf, as NumPy computes them: the product of the pivots' signs (or
    phases) and the sum of the logs of their magnitudes, sign 0 and -inf
    where a pivot is exactly zero."""
    n = x.shape[-1]
    if blocked(x):
        lu, ipiv, info = _blocked.lu(x, dt)
    else:
        st = stack_for(x)
        lu, ipiv, info = _lu(st, x, n, dt)
    d = diagonal(lu) if lu.ndim > 2 or matrices_whole(lu) else None
    if d is None:
        d = _blocked.diagonal(lu)
    swaps = (ipiv != arange(1, n + 1, dtype=numpy.int64)).sum(axis=-1)
    parity = 1 - 2 * (swaps % 2)
    if numpy.dtype(dt).kind == "c":
        ad = numpy.absolute(d)
        sign = (d / ad).prod(axis=-1) * parity.astype(dt)
        logdet = numpy.log(ad).sum(axis=-1)
    else:
        sign = where(d < 0, -1.0, 1.0).astype(dt).prod(axis=-1) * parity.astype(dt)
        logdet = numpy.log(numpy.absolute(d)).sum(axis=-1)
    bad = info != 0
    sign = where(bad, 0, sign).astype(dt)
    logdet = where(bad, -numpy.inf, logdet).astype(real_dtype(dt))
    return sign, logdet


def _determinant(a, host):
    """(dt, NumPy's answer for matrices with no element or None, (sign,
    logabsdet) or None) of the square matrices a."""
    x = operand(a)
    assert_stacked_square(x)
    dt = work_dtype(x)
    if x.size == 0:
        return dt, on_host(host, x.astype(dt)), None
    return dt, None, _slogdet_parts(x, dt)


@numpy_if_nonfinite(numpy.linalg.slogdet)
def slogdet(a):
    """The sign (or phase) and the natural log of the absolute value of the
    determinant of each square matrix of a (LAPACK's getrf: NumPy's way), as
    NumPy's SlogdetResult; sign 0 and logabsdet -inf for a singular matrix."""
    from numpy.linalg._linalg import SlogdetResult
    _, empty, parts = _determinant(a, numpy.linalg.slogdet)
    return empty if parts is None else SlogdetResult(*parts)


@numpy_if_nonfinite(numpy.linalg.det)
def det(a):
    """The determinant of each square matrix of a: sign * exp(logabsdet) of
    slogdet (as NumPy computes it)."""
    dt, empty, parts = _determinant(a, numpy.linalg.det)
    return empty if parts is None else (parts[0] * numpy.exp(parts[1])).astype(dt)


# ---- eigh, eigvalsh -----------------------------------------------------------------------------

def _check_uplo(UPLO):
    u = str(UPLO).upper() if isinstance(UPLO, str) else UPLO
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def _square(a):
    """(x, dt, n): a as an operand of square matrices (NumPy's LinAlgError
    where they are not), the dtype they are computed in and their order."""
    x = operand(a)
    assert_stacked_square(x)
    return x, work_dtype(x), x.shape[-1]


def _eigh(a, UPLO, vectors):
    uplo = _check_uplo(UPLO)
    x, dt, n = _square(a)
    rdt = real_dtype(dt)
    if x.size == 0:
        f = numpy.linalg.eigh if vectors else numpy.linalg.eigvalsh
        return on_host(lambda h: f(h, UPLO=uplo), x.astype(dt))
    st = stack_for(x)
    w = st.copy(x, (n, n), dt)
    ev = st.empty((n,), rdt)
    info = st.empty((), numpy.int32)
    # the row-major bytes are LAPACK's conj(a): its upper triangle is a's
    # lower one; its eigenvectors are the conjugates of a's
    run(SYEVD, w, w=ev, info=info, lower=uplo == "U", job=int(vectors), n=n)
    check(info, "Eigenvalues did not converge")
    if not vectors:
        return ev
    vec = swap(w)
    if numpy.dtype(dt).kind == "c":
        vec = numpy.conjugate(vec)
    return ev, vec


@numpy_if_nonfinite(numpy.linalg.eigh)
def eigh(a, UPLO="L"):
    """The eigenvalues (ascending) and orthonormal eigenvectors (columns) of
    each Hermitian matrix of a, reading its lower (UPLO='L') or upper
    triangle, as NumPy's EighResult (LAPACK's syevd / heevd, NumPy's
    routine).  LinAlgError "Eigenvalues did not converge" where it fails.

    A stack whose chunks hold whole matrices runs one batch per chunk; a
    single matrix split over devices is gathered onto the device that holds
    most of it (it must fit there): there is no distributed eigensolver."""
    from numpy.linalg._linalg import EighResult
    return EighResult(*_eigh(a, UPLO, True))


@numpy_if_nonfinite(numpy.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    """The eigenvalues (ascending) of each Hermitian matrix of a, as eigh
    computes them without the vectors (and with the same placement: a
    single matrix split over devices is gathered onto one)."""
    return _eigh(a, UPLO, False)


# ---- eig, eigvals -------------------------------------------------------------------------------

def _complex_dtype(dt):
    return numpy.result_type(dt, numpy.complex64)


def _pairs_to_vectors(st, vr, ev, dt):
    """The complex eigenvectors of real matrices from LAPACK's real layout
    (DG_DENSE_GEEV): vr's rows (LAPACK's columns) j and j + 1 of a pair
    (ev[j] with positive imaginary part, ev[j + 1] its conjugate) are the
    real and imaginary parts of ev[j]'s vector, ev[j + 1]'s being its
    conjugate; a real eigenvalue's row is its vector.  Returns the vectors
    as rows (..., n, n), complex; elementwise work where vr lives."""
    n = vr.shape[-1]
    im = imag_of(ev)[..., None]
    first, second = im > 0, im < 0
    nxt = st.zeros((n, n), dt)    # row j: vr's row j + 1
    nxt[..., :-1, :] = vr[..., 1:, :]
    prv = st.zeros((n, n), dt)    # row j: vr's row j - 1
    prv[..., 1:, :] = vr[..., :-1, :]
    rows = st.empty((n, n), _complex_dtype(dt))
    real_of(rows)[...] = where(second, prv, vr)
    imag_of(rows)[...] = where(first, nxt, where(second, numpy.negative(vr), 0))
    return rows


def _eig(a, vectors, real_if_zero=None):
    """NumPy's eig (vectors) or eigvals of the square matrices of a: LAPACK's
    geev (NumPy's routine; cuSOLVER's Xgeev on GPUs) of each matrix, a stack
    one batch per chunk where its chunks hold whole matrices, else split over
    the devices, a single matrix split over devices gathered onto the device
    holding most of it.  Real input gives real results where every
    eigenvalue of the whole stack is real, else complex ones (NumPy's rule
    up to 2.4; complex ones always where the installed NumPy gives them,
    eig_real_results; real_if_zero True: NumPy's rule up to 2.4 whatever
    NumPy is installed, as numpy.roots keeps it): that and the info come to
    the host in one read."""
    x, dt, n = _square(a)
    cdt = _complex_dtype(dt)
    if x.size == 0:
        return on_host(numpy.linalg.eig if vectors else numpy.linalg.eigvals, x.astype(dt))
    st = stack_for(x)
    w = st.copy(swap(x), (n, n), dt)   # LAPACK's matrix: x itself
    ev = st.empty((n,), cdt)
    info = st.empty((), numpy.int32)
    vr = st.empty((n, n), dt) if vectors else None
    run(GEEV, w, u=vr, w=ev, info=info, job=int(vectors), n=n)
    # bit 1: a matrix failed, bit 0: every eigenvalue is real
    code = (info != 0).any().astype(numpy.int8) * 2
    if dt.kind != "c":
        code = code + (imag_of(ev) == 0).all().astype(numpy.int8)
    code = int(code)
    if code & 2:
        check(info, "Eigenvalues did not converge")
    real = bool(code & 1) and (eig_real_results() if real_if_zero is None else real_if_zero)
    if real:
        ev = real_of(ev).copy()
    if not vectors:
        return ev
    # vr's rows are LAPACK's columns: the vectors
    if real or dt.kind == "c":
        return ev, swap(vr)
    return ev, swap(_pairs_to_vectors(st, vr, ev, dt))


_EIG_REAL = []


def eig_real_results():
    """Whether the installed NumPy's eig and eigvals give real results for
    real input whose eigenvalues are all real (NumPy 2.4 and before), or
    complex results always (later NumPy): asked of NumPy once."""
    if not _EIG_REAL:
        _EIG_REAL.append(numpy.linalg.eigvals(numpy.eye(1)).dtype.kind != "c")
    return _EIG_REAL[0]


@numpy_if_nonfinite(numpy.linalg.eig)
def eig(a):
    """The eigenvalues and right eigenvectors (columns, of Euclidean norm 1
    with the largest component real) of each square matrix of a, as NumPy's
    EigResult: LAPACK's geev (cuSOLVER's Xgeev on GPUs) where the matrices
    are (see _eig).  LinAlgError "Eigenvalues did not converge" where it
    fails; input with a NaN or an infinity is NumPy's LinAlgError."""
    from numpy.linalg._linalg import EigResult
    return EigResult(*_eig(a, True))


@numpy_if_nonfinite(numpy.linalg.eigvals)
def eigvals(a):
    """The eigenvalues of each square matrix of a, as eig computes them
    without the vectors (geev with jobvr 'N', NumPy's call)."""
    return _eig(a, False)


# ---- svd ------------------------------------------------------------------------------------------

def _svdvals_hermitian(x):
    """NumPy's singular values for hermitian=True: the magnitudes of the
    eigenvalues (eigvalsh), in descending order."""
    s = numpy.absolute(_eigh(x, "L", False))
    return _shape.sort(s, axis=-1)[..., ::-1]


@numpy_if_nonfinite(numpy.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition a = U diag(S) Vh of each matrix of a
    (LAPACK's gesdd, NumPy's routine, on the CPU backend; gesvd or gesvdj
    through cuSOLVER on GPUs), as NumPy's SVDResult, or S alone.
    LinAlgError "SVD did not converge" where it fails.

    A stack whose chunks hold whole matrices runs one batch per chunk.  A
    single tall matrix (rows >= columns) split by rows over devices runs on
    tall-skinny QR (dgarray._blocked): local QRs, the SVD of the small R,
    U = Q U_R, with no gather (full_matrices=True with more rows than columns
    needs a square U and gathers).  Any other matrix split over devices is
    gathered onto the device that holds most of it (it must fit there).
    hermitian=True takes the singular values from eigvalsh (NumPy's way);
    with compute_uv it is the general SVD (a valid decomposition whose
    vectors' signs may differ from NumPy's eigh-based ones)."""
    from numpy.linalg._linalg import SVDResult
    x = operand(a)
    assert_stacked_2d(x)
    dt = work_dtype(x)
    if x.size == 0:
        return on_host(lambda h: numpy.linalg.svd(h, full_matrices=full_matrices,
                                                  compute_uv=compute_uv,
                                                  hermitian=hermitian), x.astype(dt))
    if hermitian:
        assert_stacked_square(x)
        if not compute_uv:
            return _svdvals_hermitian(x)
    mr, nc = x.shape[-2:]
    if blocked(x) and mr >= nc:
        if _blocked.rows_split(x) and not (compute_uv and full_matrices and mr > nc):
            r = _blocked.svd_tall(x, dt, compute_uv)
            return SVDResult(*r) if compute_uv else r
    r = svd_local(x, dt, full_matrices, compute_uv)
    return SVDResult(*r) if compute_uv else r


def svdvals(x, /):
    """The singular values (descending) of each matrix of x: svd without
    U and Vh (same placement)."""
    return svd(x, compute_uv=False)


# ---- qr ---------------------------------------------------------------------------------------------

@numpy_if_nonfinite(numpy.linalg.qr)
def qr(a, mode="reduced"):
    """The QR factorisation of each matrix of a (LAPACK's geqrf and orgqr /
    ungqr, NumPy's routines): mode 'reduced' (Q m x k, R k x n), 'complete'
    (Q m x m, R m x n), 'r' (R), 'raw' (h, tau as NumPy gives them).

    A stack whose chunks hold whole matrices runs one batch per chunk (LAPACK
    factors a transposed copy: the matrix itself).  A single tall matrix
    split by rows over devices runs tall-skinny QR (dgarray._blocked: QR of
    each device's rows, QR of the stacked R's, Q applied back where the rows
    are) for 'reduced' and 'r'; 'complete' and 'raw' of such a matrix, and
    any other split matrix, are gathered onto one device."""
    from numpy.linalg._linalg import QRResult
    if mode not in ("reduced", "complete", "r", "raw"):
        if mode in ("f", "full", "e", "economic"):
            return to_device(numpy.linalg.qr(numpy.asarray(a), mode))  # deprecated modes
        raise ValueError(f"Unrecognized mode '{mode}'")
    x = operand(a)
    assert_stacked_2d(x)
    dt = work_dtype(x)
    mr, nc = x.shape[-2:]
    if x.size == 0:
        return on_host(lambda h: numpy.linalg.qr(h, mode), x.astype(dt))
    if blocked(x) and mr >= nc and mode in ("reduced", "r"):
        if _blocked.rows_split(x):
            q, r = _blocked.tsqr(x, dt, want_q=mode == "reduced")
            return r if mode == "r" else QRResult(q, r)
    return qr_local(x, dt, mode)


# ---- lstsq, matrix_rank, pinv --------------------------------------------------------------------

@numpy_if_nonfinite(numpy.linalg.lstsq, 2, post=lambda r: (r[0], r[1], int(r[2]), r[3]))
def lstsq(a, b, rcond=None):
    """The least-squares solution x of a x = b (a 2-d), NumPy's (x,
    residuals, rank, s): the minimum-norm solution from the SVD of a with
    singular values at most rcond * max(s) taken as zero (what NumPy's gelsd
    computes; rcond=None: eps * max(M, N), eps of float32 for single
    precision input, which is factored in single precision), residuals the squared 2-norms of
    each column of b - a x where rank == N < M, else empty.

    A tall a split by rows over devices runs on tall-skinny QR
    (dgarray._blocked): a = Q R, the SVD of R, x = V S^+ U_R^H Q^H b, with no
    gather; other layouts gather a onto one device."""
    x, y = operand(a), operand(b)
    vec = y.ndim == 1
    yb = y.reshape(y.shape + (1,)) if vec else y
    for t in (x, yb):
        if t.ndim != 2:
            raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    mr, nc = x.shape
    if yb.shape[0] != mr:
        raise LinAlgError("Incompatible dimensions")
    dt = work_dtype(x, y)
    rdt = real_dtype(dt)
    if rcond is None:
        # NumPy's eps * max(M, N), eps of the precision computed in (NumPy
        # computes float32 input in double with double's eps)
        rcond = numpy.finfo(dt).eps * max(nc, mr)
    if x.size == 0 or yb.size == 0:
        return on_host(lambda p, q: numpy.linalg.lstsq(p, q, rcond=rcond), x.astype(dt),
                       y.astype(dt))
    if blocked(x) and mr >= nc:
        if _blocked.rows_split(x):
            q, r = _blocked.tsqr(x, dt, want_q=True)
            ur, s, vh = svd_local(r, dt, False, True)
            qb = conj_swap(q) @ yb.astype(dt)
            ub = conj_swap(ur) @ qb
        else:
            u, s, vh = svd_local(x, dt, False, True)
            ub = conj_swap(u) @ yb.astype(dt)
    else:
        u, s, vh = svd_local(x, dt, False, True)
        ub = conj_swap(u) @ yb.astype(dt)
    cutoff = rcond * s.max()
    large = s > cutoff
    rank = int(large.sum())
    sinv = where(large, 1 / where(large, s, 1), 0).astype(rdt)
    sol = conj_swap(vh) @ (ub * sinv[:, None].astype(dt))
    if rank == nc and mr > nc:
        res = x.astype(dt) @ sol - yb.astype(dt)
        resid = (numpy.absolute(res) ** 2).sum(axis=0).astype(rdt)
    else:
        resid = asarray(numpy.empty((0,), rdt))
    if vec:
        sol = sol.reshape((nc,))
    return sol.astype(dt), resid, rank, s


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The rank of each matrix of A: how many singular values exceed tol
    (NumPy's rule: tol=None gives S.max * rtol, rtol=None max(M, N) * eps)."""
    x = operand(A)
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    if x.ndim < 2:
        return int(not bool((x == 0).all()))
    s = svd(x, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = max(x.shape[-2:]) * numpy.finfo(s.dtype).eps
        else:
            rtol = asarray(rtol)[..., None]
        tol = s.max(axis=-1, keepdims=True, initial=0) * rtol
    else:
        tol = asarray(tol)[..., None]
    return (s > tol).sum(axis=-1)


@numpy_if_nonfinite(numpy.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=numpy._NoValue):
    """The Moore-Penrose pseudo-inverse of each matrix of a, from its SVD
    (NumPy's rule: singular values at most rcond * max(s) dropped; rcond
    default 1e-15, or rtol's)."""
    x = operand(a)
    if rcond is None:
        if rtol is numpy._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(x.shape[-2:]) * numpy.finfo(x.dtype if x.dtype.kind in "fc"
                                                    else numpy.float64).eps
        else:
            rcond = rtol
    elif rtol is not numpy._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    assert_stacked_2d(x)
    dt = work_dtype(x)
    if x.size == 0:
        return on_host(lambda h: numpy.linalg.pinv(h, rcond=1e-15), x.astype(dt))
    rc = asarray(numpy.asarray(rcond)) if not isinstance(rcond, _DA) else rcond
    xc = x.astype(dt)
    if xc.dtype.kind == "c":
        xc = numpy.conjugate(xc)
    u, s, vt = svd(xc, full_matrices=False, hermitian=hermitian)
    cutoff = rc[..., None] * s.max(axis=-1, keepdims=True)
    large = s > cutoff
    sinv = where(large, 1 / where(large, s, 1), 0).astype(s.dtype)
    return (swap(vt) @ (sinv[..., None].astype(dt) * swap(u))).astype(dt)


# ---- matrix_power, cond, the singular-value norms ------------------------------------------------

def matrix_power(a, n):
    """a (square matrices) to the integer power n by repeated squaring with
    dgarray's products (NumPy's algorithm); n < 0 inverts first, n == 0 gives
    identities."""
    x = operand(a)
    assert_stacked_square(x)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        st = Stack.of(x) if x.size else None
        if st is None:
            return on_host(lambda h: numpy.linalg.matrix_power(h, 0), x)
        return _eye_stack(st, x.shape[-1], x.dtype)
    if n < 0:
        x = inv(x)
        n = -n
    if n == 1:
        return x
    mm = _linalg.matmul
    if n == 2:
        return mm(x, x)
    if n == 3:
        return mm(mm(x, x), x)
    z = result = None
    while n > 0:
        z = x if z is None else mm(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(result, z)
    return result


def svd_norm(x, ord, axis=(-2, -1), keepdims=False):
    """The matrix norm of ord 2 (largest singular value), -2 (smallest) or
    'nuc' (their sum) over the two axes `axis` of x, NumPy's linalg.norm
    for those orders (for dgarray.linalg.norm and matrix_norm).  x's
    integers become float64."""
    x = operand(x)
    if ord not in (2, -2, "nuc"):
        raise ValueError(f"svd_norm takes ord 2, -2 or 'nuc', not {ord!r}")
    if x.dtype.kind not in "fc":
        x = x.astype(numpy.float64)
    r, c = (operator.index(ax) % x.ndim for ax in axis)
    if r == c:
        raise ValueError("Duplicate axes given.")
    y = _shape.moveaxis(x, (r, c), (-2, -1))
    s = svd(y, compute_uv=False)
    if ord == 2:
        res = s.max(axis=-1)
    elif ord == -2:
        res = s.min(axis=-1)
    else:
        res = s.sum(axis=-1)
    if keepdims:
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        res = res.reshape(tuple(shape))
    return res


@numpy_if_nonfinite(numpy.linalg.cond)
def cond(x, p=None):
    """The condition number of each matrix of x in the norm p (NumPy's rule:
    None, 2, -2 from the singular values; 'fro', 'nuc', 1, -1, inf, -inf as
    norm(x, p) * norm(inv(x), p), inf where x is singular and has no NaN)."""
    y = operand(x)
    if y.ndim >= 2 and (y.shape[-1] == 0 or y.shape[-2] == 0):
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in (2, -2):
        s = svd(y, compute_uv=False)
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        assert_stacked_2d(y)
        assert_stacked_square(y)
        dt = work_dtype(y)
        invx = _inv_local(y, dt, checked=False)
        if p == "nuc":
            # NumPy's norm checks its SVD: a singular x's NaN inverse raises
            r = svd_norm(y, "nuc") * svd_norm(invx, "nuc")
        else:
            r = (numpy.linalg.norm(y, p, axis=(-2, -1)) *
                 numpy.linalg.norm(invx, p, axis=(-2, -1)))
        r = r.astype(dt if p != "nuc" else r.dtype)
    nan = numpy.isnan(r)
    if y.dtype.kind in "fc":
        nan = nan & ~numpy.isnan(y).any(axis=(-2, -1))
    return where(nan, numpy.inf, r).astype(r.dtype)


# ---- the namespace ------------------------------------------------------------------------------

FUNCTIONS = {"cholesky": cholesky, "solve": solve, "inv": inv, "det": det,
             "slogdet": slogdet, "eigh": eigh, "eigvalsh": eigvalsh, "eig": eig,
             "eigvals": eigvals, "svd": svd,
             "svdvals": svdvals, "qr": qr, "lstsq": lstsq, "matrix_rank": matrix_rank,
             "pinv": pinv, "matrix_power": matrix_power, "cond": cond}


def numpy_functions():
    """numpy.linalg's functions -> these, for __array_function__."""
    return {getattr(numpy.linalg, name): f for name, f in FUNCTIONS.items()
            if hasattr(numpy.linalg, name)}


def install(ns):
    """Puts these functions in the dgarray.linalg namespace (where the
    backend has dense linear algebra; else NumPy's fallback stays)."""
    if not available():
        return
    for name, f in FUNCTIONS.items():
        if hasattr(numpy.linalg, name):
            setattr(ns, name, f)
