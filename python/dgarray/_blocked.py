"""Blocked algorithms for one matrix split over several devices
(dgarray._dense sends 2-d matrices here when they are split and large).

Cholesky and LU work on a copy laid out in blocks of ``nb`` rows dealt to
the devices in turn (block j on device j mod ndev), padded with an identity
to a whole number of blocks, so that every device keeps work to the end.
Step k factors the diagonal block (Cholesky) or the panel of block column k
gathered on block k's device (LU: LAPACK's getrf, the pivot search over the
whole panel), solves the panel or the block row against it in place on the
devices that hold it (the dense slot's triangular solve, the triangle copied
to each of them), and updates the trailing matrix with dgarray's own
products, one batched product per device and group of its row blocks
(Cholesky: only the lower triangle, in up to ``groups`` column extents per
device; LU: the whole trailing block row).  LU's row swaps are read on the
host once per step (its b pivots) and done as row gathers between devices.
A solve factors [A | B] so that the forward substitution rides on the
trailing updates, then runs a blocked backward substitution by columns.

Tall-skinny QR (TSQR) works on the matrix's own row blocks: a QR of each
block where it lives, a QR of the stacked R's on one device, and Q's blocks
as each block's Q times its part of the stacked Q, where the block is.
"""
import numpy
from numpy.linalg import LinAlgError

from . import _core, _linalg
from . import _lapack as D
from ._creation import asarray


def _ndev():
    return _core._ndevices()


def _block(n):
    """The block size for an n x n matrix: settings.block, larger blocks for
    large matrices (at most about 64 blocks)."""
    nb = max(1, D.settings.block)
    while n // nb > 64:
        nb *= 2
    return min(nb, max(1, n))


def rows_split(x):
    """True if the 2-d x is split in blocks of whole rows (all columns),
    contiguous and tiling its rows (replicas allowed)."""
    n = x.shape[1]
    return (all(box[1][:2] == (0, n) and (box[1][2] == 1 or n <= 1)
                for _, box in x._layout()) and row_blocks(x) is not None)


def row_blocks(x):
    """x's row blocks (device, start, stop), sorted, once per row range (a
    replica's first chunk); None where the blocks overlap in part."""
    seen, out = set(), []
    for dev, box in x._layout():
        s, e, st = box[0]
        if st != 1 and e - s > 1:
            return None
        if (s, e) in seen or e <= s:
            continue
        seen.add((s, e))
        out.append((dev, s, e))
    out.sort(key=lambda t: t[1])
    pos = 0
    for _, s, e in out:
        if s != pos:
            return None
        pos = e
    return out if pos == x.shape[0] else None


def diagonal(w):
    """The diagonal of a square or wide 2-d matrix whose chunks hold whole
    rows (a strided view of its flattening)."""
    n, c = w.shape
    return w.reshape((n * c,))[::c + 1][:n]


# ---- the row-cyclic working copy ----------------------------------------------------------------

class _Cyclic:
    """An N x Nc working matrix in row blocks of nb dealt to the devices in
    turn; A (n x n) in its top left, an identity on the padded diagonal, B
    (n x k, optional) in columns N..N+k."""

    def __init__(self, a, dt, rhs=None):
        n = a.shape[0]
        self.n = n
        self.nb = nb = _block(n)
        self.nblk = nblk = -(-n // nb)
        self.N = N = nblk * nb
        self.k = 0 if rhs is None else rhs.shape[1]
        self.Nc = Nc = N + self.k
        self.ndev = ndev = _ndev()
        self.devs = [j % ndev for j in range(nblk)]
        layout = [(self.devs[j], ((j * nb, (j + 1) * nb, 1), (0, Nc, 1))) for j in range(nblk)]
        self.W = w = _core._empty((N, Nc), numpy.dtype(dt), layout, 0)
        if N > n or self.k:
            _core._fill(w, 0, 0, None, 0, None)
        if N > n:
            diagonal(w)[n:N] = 1
        _core._copyto(w[:n, :n], a)
        if rhs is not None:
            _core._copyto(w[:n, N:Nc], rhs)
        self.w3 = w.reshape((nblk, nb, Nc))

    def later(self, k):
        """The devices holding blocks after k, each with the first such block."""
        out = {}
        for j in range(k + 1, self.nblk):
            out.setdefault(self.devs[j], j)
        return out

    def earlier(self, k):
        out = {}
        for j in range(k):
            out.setdefault(self.devs[j], j)
        return out

    def blocks_of(self, first, stop):
        """The blocks of first's device from first to stop (exclusive): a
        strided slice of w3's first axis."""
        return slice(first, stop, self.ndev)

    def replicate(self, src, devs):
        """src (a block, a panel) copied onto each of devs: one array holding
        it whole on every one of them, what each device's solve or products
        read in place (the product planner would otherwise cut a product at
        every chunk boundary of the panel: a fetch and a GEMM per block)."""
        shape = src.shape
        layout = [(d, tuple((0, s, 1) for s in shape)) for d in sorted(devs)]
        r = _core._empty(shape, src.dtype, layout, 0)
        _core._copyto(r, src)
        return r


def _update(t, a, b):
    """t -= a @ b in place (t a view of the working matrix)."""
    numpy.subtract(t, _linalg.matmul(a, b), out=t)


def _check_infos(infos, msg):
    for info in infos:
        D.check(info, msg)


# ---- Cholesky ---------------------------------------------------------------------------------

def cholesky(x, dt, upper):
    """The Cholesky factor of a 2-d Hermitian positive-definite x split over
    devices: blocked right-looking, lower; upper=True returns its conjugate
    transpose (a view for real dtypes)."""
    c = _Cyclic(x, dt)
    nb, nblk, N = c.nb, c.nblk, c.N
    w, w3 = c.W, c.w3
    groups = max(1, int(getattr(D.settings, "groups", 4)))
    infos = []
    for k in range(nblk):
        k0, k1 = k * nb, (k + 1) * nb
        dk = c.devs[k]
        diag = w[k0:k1, k0:k1]
        info = D.Stack.one((), dk).empty((), numpy.int32)
        # LAPACK's upper factor of the row-major block: its lower factor
        D.run(D.POTRF, diag, info=info, lower=0, n=nb)
        infos.append(info)
        if k1 == N:
            break
        later = c.later(k)
        tri = c.replicate(diag, later)
        # the panel L21 = A21 L11^-H, in place where its rows are: LAPACK's
        # conj(L11) X = A21^T from the left on the panel's bytes
        D.run(D.TRSM, tri, b=w[k1:N, k0:k1], lower=0, trans=2, unit=0, m=nb, n=N - k1)
        # L21^H whole on every device that updates (one move each), so that
        # each device's products read it in place
        pan = c.replicate(D.conj_swap(w[k1:N, k0:k1]), later)
        # the lower part of the trailing matrix: per device, its later
        # blocks in up to `groups` runs, each to its last block's diagonal
        for dev, first in later.items():
            mine = list(range(first, nblk, c.ndev))
            per = -(-len(mine) // groups)
            for g in range(0, len(mine), per):
                run = mine[g:g + per]
                stop = (run[-1] + 1) * nb
                sel = c.blocks_of(run[0], run[-1] + 1)
                _update(w3[sel, :, k1:stop], w3[sel, :, k0:k1], pan[:, :stop - k1])
    _check_infos(infos, "Matrix is not positive definite")
    n = c.n
    res = w[:n, :n]
    D.run(D.TRIZERO, res, lower=0, m=n, n=n, k=0)
    return D.conj_swap(res) if upper else res


# ---- LU with partial pivoting -------------------------------------------------------------------

def _factor(c, dt):
    """LU with partial pivoting of the working matrix's first N columns, the
    row swaps and the eliminations applied to all its Nc columns (so a
    right-hand side in columns N.. becomes L^-1 P b).  Returns (ipiv on the
    host, 1-based over the first N rows, LAPACK's convention; the infos)."""
    nb, nblk, N, Nc = c.nb, c.nblk, c.N, c.Nc
    w, w3 = c.W, c.w3
    ipiv = numpy.arange(1, N + 1, dtype=numpy.int64)
    infos = []
    for k in range(nblk):
        k0, k1 = k * nb, (k + 1) * nb
        dk = c.devs[k]
        st = D.Stack.one((), dk)
        # the panel, gathered on block k's device as LAPACK's column-major
        # (N - k0) x nb matrix, factored with its pivot search over all rows
        p = st.copy(D.swap(w[k0:N, k0:k1]), (nb, N - k0), dt)
        piv = st.empty((nb,), numpy.int64)
        info = st.empty((), numpy.int32)
        D.run(D.GETRF, p, ipiv=piv, info=info, m=N - k0, n=nb)
        infos.append(info)
        hp = piv.get()
        ipiv[k0:k1] = hp + k0
        perm = numpy.arange(N - k0)
        for i, q in enumerate(hp):
            perm[i], perm[q - 1] = perm[q - 1], perm[i]
        moved = numpy.nonzero(perm != numpy.arange(N - k0))[0]
        if moved.size:
            rows = w[asarray(k0 + perm[moved])]
            w[asarray(k0 + moved)] = rows
        _core._copyto(w[k0:N, k0:k1], D.swap(p))
        if k1 == Nc:
            break
        # U12 = L11^-1 A12 on block k's device: LAPACK's X L11^T = A12^T
        D.run(D.TRSM, p[:, :nb], b=w[k0:k1, k1:Nc], right=1, lower=1, trans=1, unit=1,
              m=Nc - k1, n=nb)
        later = c.later(k)
        if not later:
            continue
        u12 = c.replicate(w[k0:k1, k1:Nc], later)
        for dev, first in later.items():
            sel = c.blocks_of(first, nblk)
            _update(w3[sel, :, k1:Nc], w3[sel, :, k0:k1], u12)
    return ipiv, infos


def lu(x, dt):
    """LU of a 2-d square x split over devices: (the factors, laid out by
    rows, padded; ipiv over its first n rows as an int64 array; info 1 where
    a pivot is exactly zero, else 0) for slogdet / det."""
    c = _Cyclic(x, dt)
    ipiv, infos = _factor(c, dt)
    n = c.n
    bad = any(bool(i != 0) for i in infos)
    return c.W[:, :c.N], asarray(ipiv[:n]).reshape((n,)), asarray(numpy.int32(bad))


def solve(x, b, dt):
    """x^-1 b for a 2-d square x split over devices and b (n x k): the LU of
    [x | b] (forward substitution in its updates), then a blocked backward
    substitution by block columns.  LinAlgError "Singular matrix" where a
    pivot is exactly zero."""
    c = _Cyclic(x, dt, rhs=b)
    _, infos = _factor(c, dt)
    _check_infos(infos, "Singular matrix")
    nb, nblk, N, Nc = c.nb, c.nblk, c.N, c.Nc
    w, w3 = c.W, c.w3
    for k in range(nblk - 1, -1, -1):
        k0, k1 = k * nb, (k + 1) * nb
        # U_kk x_k = y_k: LAPACK's X U^T = Y^T on the block row's bytes
        D.run(D.TRSM, w[k0:k1, k0:k1], b=w[k0:k1, N:Nc], right=1, lower=1, trans=0, unit=0,
              m=Nc - N, n=nb)
        earlier = c.earlier(k)
        if not earlier:
            continue
        xk = c.replicate(w[k0:k1, N:Nc], earlier)
        for dev, first in earlier.items():
            sel = c.blocks_of(first, k)
            _update(w3[sel, :, N:Nc], w3[sel, :, k0:k1], xk)
    return w[:c.n, N:Nc].copy()


# ---- tall-skinny QR ------------------------------------------------------------------------------

def tsqr(x, dt, want_q):
    """(Q or None, R) of a tall 2-d x whose chunks hold whole rows: QR of each
    row block where it lives (LAPACK's geqrf / orgqr there), QR of the stacked
    R's on the first block's device, each block of Q its local Q times its
    rows of the stacked Q, where the block is."""
    m, n = x.shape
    blocks = row_blocks(x)
    if blocks is None:
        raise ValueError("tsqr needs a matrix split by rows")
    rs, qs = [], []
    for dev, r0, r1 in blocks:
        mi = r1 - r0
        ki = min(mi, n)
        st = D.Stack.one((), dev)
        wk = st.copy(D.swap(x[r0:r1]), (n, mi), dt)
        tau = st.empty((ki,), dt)
        D.run(D.GEQRF, wk, w=tau, m=mi, n=n)
        r = st.copy(D.swap(wk)[:ki, :], (ki, n), dt)
        D.run(D.TRIZERO, r, lower=True, m=n, n=ki, k=0)
        rs.append(r)
        if want_q:
            qv = wk if mi >= n else st.copy(wk[:mi, :], (mi, mi), dt)
            D.run(D.ORGQR, qv, w=tau, m=mi, n=ki, k=ki)
            qs.append(D.swap(qv))
    d0 = blocks[0][0]
    kk = sum(r.shape[0] for r in rs)
    st0 = D.Stack.one((), d0)
    stack = st0.empty((kk, n), dt)
    off = []
    pos = 0
    for r in rs:
        off.append(pos)
        _core._copyto(stack[pos:pos + r.shape[0]], r)
        pos += r.shape[0]
    if not want_q:
        return None, D.qr_local(stack, dt, "r")
    q2, rr = D.qr_local(stack, dt, "reduced")
    layout = [(dev, ((r0, r1, 1), (0, n, 1))) for dev, r0, r1 in blocks]
    q = _core._empty((m, n), numpy.dtype(dt), layout, 0)
    for (dev, r0, r1), qi, o in zip(blocks, qs, off):
        _core._copyto(q[r0:r1], _linalg.matmul(qi, q2[o:o + qi.shape[1]]))
    return q, rr


def svd_tall(x, dt, uv):
    """The thin SVD of a tall x split by rows, on TSQR: x = Q R, R = U_R S Vh,
    U = Q U_R (computed where Q's rows are)."""
    q, r = tsqr(x, dt, want_q=uv)
    if not uv:
        return D.svd_local(r, dt, False, False)
    ur, s, vh = D.svd_local(r, dt, False, True)
    return _linalg.matmul(q, ur), s, vh


__all__ = ["cholesky", "lu", "solve", "tsqr", "svd_tall", "rows_split", "row_blocks",
           "diagonal", "LinAlgError"]
