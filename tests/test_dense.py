"""dgarray.linalg on the devices (dgarray._dense, dgarray._blocked, the
backend's dense slot) against NumPy on the same inputs: every dtype, stacks,
split by rows, columns and 2-d blocks, 1 and 4 devices, empty and 1 x 1
matrices, singular, indefinite and NaN inputs (NumPy's errors), with no host
fallback (config.fallback = "raise").  A solve's backward error
||A x - b|| / (||A|| ||x||) is reported and bounded."""
import re
import warnings

import numpy as np
import pytest

import dgarray as dg
from dgarray import _dense
from _maps import maps_for

pytestmark = pytest.mark.skipif(not _dense.available(),
                                reason="the backend has no dense linear algebra")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(autouse=True)
def strict():
    """No host fallback; the blocked algorithms from the smallest split
    matrices, in blocks of 4 rows."""
    old = (dg.config.fallback, _dense.settings.min_blocked_rows, _dense.settings.block)
    dg.config.fallback = "raise"
    _dense.settings.min_blocked_rows = 0
    _dense.settings.block = 4
    yield
    dg.config.fallback, _dense.settings.min_blocked_rows, _dense.settings.block = old


def eps(dt):
    return np.finfo(np.dtype(dt).type(0).real.dtype).eps


def rand(shape, dt, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def with_cond(n, dt, cond, seed=0, batch=()):
    """Matrices of condition number `cond` (singular values log-spaced)."""
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rand(batch + (n, n), np.complex128 if np.dtype(dt).kind == "c"
                             else np.float64, seed))
    v, _ = np.linalg.qr(rand(batch + (n, n), u.dtype, seed + 1))
    s = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    a = (u * s) @ np.conjugate(np.swapaxes(v, -1, -2))
    rng.shuffle(a.reshape(-1, n, n) if batch else a[None])
    return a.astype(dt)


def hpd(n, dt, cond=10.0, seed=0, batch=()):
    """Hermitian positive-definite matrices of condition number cond."""
    rng = np.random.default_rng(seed)
    cplx = np.dtype(dt).kind == "c"
    q, _ = np.linalg.qr(rand(batch + (n, n), np.complex128 if cplx else np.float64, seed))
    w = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    rng.shuffle(w)
    a = (q * w) @ np.conjugate(np.swapaxes(q, -1, -2))
    return ((a + np.conjugate(np.swapaxes(a, -1, -2))) / 2).astype(dt)


def blocks_2d(shape, ndev):
    """A 2-d block layout (make_2d_index_map) over up to ndev devices."""
    m, n = shape
    if m < 2 or n < 2:
        return None
    devs = [[{0}, {1 % ndev}], [{2 % ndev}, {3 % ndev}]]
    return dg.make_2d_index_map([0, m // 2, m], [0, n // 2, n], devs)


def layouts(shape, ndev):
    """The layouts a matrix is checked in: maps_for's (rows, uneven,
    strided, replicated, overlapping, columns) and 2-d blocks."""
    out = maps_for(shape, ndev)
    b = blocks_2d(shape, ndev) if len(shape) == 2 else None
    if b is not None:
        out.append(("blocks", b))
    return out


def close(got, want, tol, scale=None):
    got = got.get() if isinstance(got, dg.DistributedArray) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


def backward_error(a, x, b):
    """||A x - b|| / (||A|| ||x||) per matrix (Frobenius norms, in float64)."""
    a, x, b = (np.asarray(t, np.complex128) for t in (a, x, b))
    if x.ndim == a.ndim - 1:
        x, b = x[..., None], b[..., None]
    r = a @ x - b
    num = np.linalg.norm(r, axis=(-2, -1))
    den = np.linalg.norm(a, axis=(-2, -1)) * np.linalg.norm(x, axis=(-2, -1))
    return np.max(num / np.where(den == 0, 1, den))


def same_outcome(npf, dgf, a, m):
    """dgf on a (laid out as m) does what npf does: the same LinAlgError, or
    results with NaN exactly where NumPy's are NaN (input with a NaN is
    NumPy's own on every backend: _lapack.numpy_if_nonfinite)."""
    try:
        want = npf(a)
    except np.linalg.LinAlgError as e:
        with pytest.raises(np.linalg.LinAlgError, match=str(e)):
            dgf(dg.distributed_array(a, m))
        return
    got = dgf(dg.distributed_array(a, m)).get()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


# ---- cholesky -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("cond", [10.0, 1e5])
def test_cholesky(ndev, dt, cond):
    n = 13
    cond = min(cond, 1 / (100 * n * eps(dt)))
    a = hpd(n, dt, cond)
    want = np.linalg.cholesky(a.astype(np.complex128 if np.dtype(dt).kind == "c"
                                       else np.float64))
    for name, m in layouts(a.shape, ndev):
        d = dg.distributed_array(a, m)
        for upper in (False, True):
            got = dg.linalg.cholesky(d, upper=upper)
            assert got.dtype == dt and got.shape == a.shape
            w = np.conjugate(want.T) if upper else want
            close(got, w, 50 * n * eps(dt) * np.sqrt(cond))
            g = got.get()
            if upper:
                assert np.all(np.tril(g, -1) == 0), name
            else:
                assert np.all(np.triu(g, 1) == 0), name
        np.testing.assert_array_equal(d.get(), a)  # the input is unchanged


@pytest.mark.parametrize("dt", [np.float64, np.complex64])
def test_cholesky_stacks(ndev, dt):
    a = hpd(6, dt, 100.0, batch=(5,))
    want = np.linalg.cholesky(a)
    rows = {d: (slice(None), slice(6 * d // ndev, 6 * (d + 1) // ndev)) for d in range(ndev)}
    for m in (None, rows, {d: slice(None) for d in range(ndev)}):
        got = dg.linalg.cholesky(dg.distributed_array(a, m))
        close(got, want, 200 * 6 * eps(dt))


def test_cholesky_reads_the_lower_triangle_only(ndev):
    a = hpd(7, np.float64, 10.0)
    junk = a + np.triu(np.full_like(a, 99.0), 1)
    for name, m in layouts(a.shape, ndev):
        got = dg.linalg.cholesky(dg.distributed_array(junk, m))
        close(got, np.linalg.cholesky(junk), 1e-13)


@pytest.mark.parametrize("dt", DTYPES)
def test_cholesky_errors(ndev, dt):
    indefinite = hpd(6, dt) - 2 * np.eye(6, dtype=dt)
    nan = hpd(6, dt).copy()
    nan[3, 2] = np.nan
    for a in (indefinite, nan, -np.eye(3, dtype=dt)):
        for name, m in layouts(a.shape, ndev):
            same_outcome(np.linalg.cholesky, dg.linalg.cholesky, a, m)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        dg.linalg.cholesky(dg.zeros((3, 4)))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        dg.linalg.cholesky(dg.zeros(3))
    with pytest.raises(TypeError, match="float16"):
        dg.linalg.cholesky(dg.zeros((3, 3), dtype=np.float16))


# ---- solve, inv, det, slogdet ---------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("cond", [10.0, 1e6])
def test_solve(ndev, dt, cond, capsys):
    n = 12
    cond = min(cond, 1 / (100 * n * eps(dt)))
    a = with_cond(n, dt, cond)
    b = rand((n, 3), dt, 5)
    want = np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128))
    worst = 0.0
    for name, m in layouts(a.shape, ndev):
        d = dg.distributed_array(a, m)
        for rhs in (b, b[:, 0]):
            x = dg.linalg.solve(d, dg.asarray(rhs))
            assert x.dtype == dt and x.shape == rhs.shape
            be = backward_error(a, x.get(), rhs)
            worst = max(worst, be)
            assert be < 20 * n * eps(dt), (name, be)
            w = want if rhs.ndim == 2 else want[:, 0]
            close(x, w, 20 * n * eps(dt) * cond)
    with capsys.disabled():
        print(f"\n  solve {np.dtype(dt).name} n={n} cond={cond:.0e}: backward error "
              f"{worst:.2e} ({worst / eps(dt):.1f} eps)", end="")


@pytest.mark.parametrize("dt", [np.float32, np.complex128])
def test_solve_stacks_broadcast(ndev, dt):
    a = with_cond(5, dt, 10.0, batch=(4,))
    for bshape in ((5,), (5, 2), (4, 5, 2), (3, 1, 5, 2)):
        b = rand(bshape, dt, 3)
        want = np.linalg.solve(a, b)
        for m in (None, {d: (slice(None), slice(5 * d // ndev, 5 * (d + 1) // ndev))
                         for d in range(ndev)}):
            x = dg.linalg.solve(dg.distributed_array(a, m), dg.asarray(b))
            assert x.shape == want.shape and x.dtype == want.dtype
            assert backward_error(np.broadcast_to(a, want.shape[:-2] + a.shape[-2:])
                                  if b.ndim > 1 else a, x.get(), np.broadcast_to(
                                      b, want.shape)) < 20 * 5 * eps(dt)
            close(x, want, 100 * 5 * eps(dt) * 10)


def test_solve_integer_and_mixed_dtypes(ndev):
    a = np.array([[3, 1], [1, 2]])
    b = np.array([9, 8])
    got = dg.linalg.solve(dg.asarray(a), dg.asarray(b))
    want = np.linalg.solve(a, b)
    assert got.dtype == want.dtype == np.float64
    close(got, want, 1e-15)
    got = dg.linalg.solve(dg.asarray(a.astype(np.float32)), dg.asarray(b.astype(np.complex64)))
    assert got.dtype == np.complex64


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("dt", DTYPES)
def test_singular_and_nan(ndev, dt):
    sing = rand((6, 6), dt)
    sing[:, 4] = sing[:, 1]
    sing[2] = 0
    nan = rand((6, 6), dt)
    nan[1, 1] = np.nan
    b = rand(6, dt)
    for name, m in layouts(sing.shape, ndev):
        d = dg.distributed_array(sing, m)
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            np.linalg.solve(sing, b)
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            dg.linalg.solve(d, dg.asarray(b))
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            dg.linalg.inv(d)
        assert float(abs(dg.linalg.det(d))) == abs(np.linalg.det(sing)) == 0
        s, ld = dg.linalg.slogdet(d)
        ws, wld = np.linalg.slogdet(sing)
        assert complex(s) == ws and float(ld) == wld == -np.inf
        dn = dg.distributed_array(nan, m)
        for f in (lambda x: np.linalg.solve(x, b), np.linalg.inv, np.linalg.det):
            want = f(nan)
            got = f(dn) if f is not np.linalg.solve else None
            got = dg.linalg.solve(dn, dg.asarray(b)) if got is None else got
            np.testing.assert_array_equal(np.isnan(got.get()), np.isnan(want))


def _nonfinite_calls():
    """(name, NumPy's call, dgarray's call, how many of (a, b) it takes) of
    every linalg function that takes matrices."""
    return [
        ("cholesky", np.linalg.cholesky, dg.linalg.cholesky, 1),
        ("cholesky upper", lambda x: np.linalg.cholesky(x, upper=True),
         lambda x: dg.linalg.cholesky(x, upper=True), 1),
        ("solve", np.linalg.solve, dg.linalg.solve, 2),
        ("inv", np.linalg.inv, dg.linalg.inv, 1),
        ("det", np.linalg.det, dg.linalg.det, 1),
        ("slogdet", np.linalg.slogdet, dg.linalg.slogdet, 1),
        ("eigh", np.linalg.eigh, dg.linalg.eigh, 1),
        ("eigvalsh U", lambda x: np.linalg.eigvalsh(x, UPLO="U"),
         lambda x: dg.linalg.eigvalsh(x, UPLO="U"), 1),
        ("svd", np.linalg.svd, dg.linalg.svd, 1),
        ("svdvals", lambda x: np.linalg.svd(x, compute_uv=False), dg.linalg.svdvals, 1),
        ("qr", np.linalg.qr, dg.linalg.qr, 1),
        ("qr complete", lambda x: np.linalg.qr(x, "complete"),
         lambda x: dg.linalg.qr(x, "complete"), 1),
        ("lstsq", np.linalg.lstsq, dg.linalg.lstsq, 2),
        ("cond", np.linalg.cond, dg.linalg.cond, 1),
        ("cond fro", lambda x: np.linalg.cond(x, "fro"), lambda x: dg.linalg.cond(x, "fro"), 1),
        ("pinv", np.linalg.pinv, dg.linalg.pinv, 1),
        ("matrix_rank", np.linalg.matrix_rank, dg.linalg.matrix_rank, 1),
    ]


def _as_host(r):
    if isinstance(r, tuple):
        return tuple(_as_host(t) for t in r)
    return r.get() if isinstance(r, dg.DistributedArray) else r


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dt", DTYPES)
def test_nonfinite_input_is_numpys(ndev, dt, bad, monkeypatch, capfd):
    """A NaN or an infinity in a matrix (or a right-hand side) gives NumPy's
    own answer, bit for bit, or NumPy's LinAlgError, on every backend and
    layout: every call takes NumPy's path (_lapack.numpy_answer), and such
    input never reaches the backend's dense slot, whose LAPACK (cuSOLVER on
    GPUs) handles it its own way, but in cholesky, which factors first and
    learns of it from its outcome (potrf's info, the factor's diagonal,
    TRIZERO's info).  Square, tall, wide and stacked matrices, the bad value
    on and off the read triangle."""
    asked, took_numpy = [], []
    real = dg._core._dense
    monkeypatch.setattr(dg._core, "_dense", lambda *a: asked.append(a[0][0]) or real(*a))
    answer = dg._lapack.numpy_answer
    monkeypatch.setattr(dg._lapack, "numpy_answer",
                        lambda *a, **k: took_numpy.append(1) or answer(*a, **k))

    def routed(name, answered=True):
        """This call's answer came from NumPy (an error may be dgarray's own
        check of the arguments), and its input reached the dense slot only
        in cholesky."""
        assert took_numpy or not answered, \
            f"{name}: non-finite input not answered by NumPy's path"
        assert asked == [] or name.startswith("cholesky"), \
            f"{name}: non-finite input reached the backend's dense slot"
        asked.clear()
        took_numpy.clear()
    sq = hpd(6, dt, 10.0, seed=30)
    cases = []
    # (an infinity on the diagonal makes NumPy's own SVD loop for ever)
    for where_ in ((3, 2), (2, 3), (0, 0))[:3 if np.isnan(bad) else 2]:
        m = sq.copy()
        m[where_] = bad
        cases.append((m, rand((6, 2), dt, 31)))
    tall = rand((7, 4), dt, 32)
    tall[5, 1] = bad
    wide = rand((4, 7), dt, 33)
    wide[2, 6] = bad
    stack = hpd(5, dt, 10.0, seed=34, batch=(3,))
    stack[1, 2, 2] = bad
    cases += [(tall, rand((7,), dt, 35)), (wide, rand((4, 3), dt, 36)),
              (stack, rand((3, 5, 2), dt, 37)), (sq, np.where(np.arange(6) == 4, bad, 1.0)
                                                 .astype(dt))]
    for a, b in cases:
        for name, npf, dgf, nargs in _nonfinite_calls():
            if name.startswith("lstsq") and a.ndim != 2:
                continue
            args = (a, b)[:nargs]
            if nargs == 1 and np.isfinite(a).all():
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = npf(*args)
            except (np.linalg.LinAlgError, ValueError) as e:
                with pytest.raises(type(e), match=re.escape(str(e))):
                    dgf(*(dg.asarray(t) for t in args))
                routed(name, answered=False)
                continue
            for lname, m in [("default", None)] + maps_for(a.shape, ndev)[:2]:
                dargs = (dg.distributed_array(a, m),) + tuple(dg.asarray(t) for t in args[1:])
                got = _as_host(dgf(*dargs))
                routed(f"{name} {lname}")
                ws = want if isinstance(want, tuple) else (want,)
                gs = got if isinstance(got, tuple) else (got,)
                assert len(gs) == len(ws), name
                for i, (g, w) in enumerate(zip(gs, ws)):
                    np.testing.assert_array_equal(np.asarray(g), np.asarray(w),
                                                  err_msg=f"{name} {lname}")
                    if not (name == "lstsq" and i == 2):  # dgarray's rank is an int
                        assert np.asarray(g).dtype == np.asarray(w).dtype, name
    capfd.readouterr()  # LAPACK's own complaints about the bad input (NumPy's too)


@pytest.mark.parametrize("dt", DTYPES)
def test_inv_det_slogdet(ndev, dt):
    n = 9
    a = with_cond(n, dt, 100.0, seed=3)
    wi = np.linalg.inv(a.astype(np.complex128))
    wd = np.linalg.det(a.astype(np.complex128))
    ws, wl = np.linalg.slogdet(a.astype(np.complex128))
    for name, m in layouts(a.shape, ndev):
        d = dg.distributed_array(a, m)
        got = dg.linalg.inv(d)
        assert got.dtype == dt
        close(got, wi, 100 * n * eps(dt) * 100)
        det = dg.linalg.det(d)
        assert det.dtype == dt and det.shape == ()
        close(det, wd, 100 * n * eps(dt))
        s, ld = dg.linalg.slogdet(d)
        assert s.dtype == dt and ld.dtype == np.dtype(dt).type(0).real.dtype
        close(s, ws, 100 * n * eps(dt))
        close(ld, wl, 100 * n * eps(dt))
    # a stack, and the types NumPy returns
    st = with_cond(4, dt, 10.0, batch=(3,))
    s, ld = dg.linalg.slogdet(st)
    ws, wl = np.linalg.slogdet(st)
    assert type(dg.linalg.slogdet(st)).__name__ == "SlogdetResult"
    close(s, ws, 1000 * eps(dt))
    close(ld, wl, 1000 * eps(dt))
    close(dg.linalg.det(st), np.linalg.det(st), 1000 * eps(dt))


# ---- eigh, svd, qr -------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
def test_eigh(ndev, dt):
    n = 10
    a = hpd(n, dt, 1e3) - 0.5 * np.eye(n, dtype=dt)  # indefinite Hermitian
    junk = a + np.triu(np.full_like(a, 7), 1)
    for uplo, src in (("L", junk), ("U", np.conjugate(junk.T))):
        ww, wv = np.linalg.eigh(src, UPLO=uplo)
        for name, m in layouts(a.shape, ndev):
            d = dg.distributed_array(src, m)
            w, v = dg.linalg.eigh(d, UPLO=uplo)
            assert w.dtype == ww.dtype and v.dtype == wv.dtype
            close(w, ww, 200 * n * eps(dt))
            v = v.get()
            close(a @ v, v * w.get(), 200 * n * eps(dt))
            close(np.conjugate(v.T) @ v, np.eye(n), 200 * n * eps(dt))
            close(dg.linalg.eigvalsh(d, UPLO=uplo), ww, 200 * n * eps(dt))
    st = hpd(4, dt, 10.0, batch=(2, 3))
    close(dg.linalg.eigvalsh(dg.asarray(st)), np.linalg.eigvalsh(st), 1000 * eps(dt))
    with pytest.raises(ValueError, match="UPLO"):
        dg.linalg.eigh(dg.asarray(a), UPLO="X")


# ---- eig, eigvals ------------------------------------------------------------------------------

def normal_real(n, pairs, seed=0, batch=()):
    """Real normal matrices (perfectly conditioned eigenvalues) Q B Q^T: B
    block diagonal with `pairs` 2 x 2 blocks [[a, b], [-b, a]] (eigenvalues
    a +- ib) and real eigenvalues after them, all well apart."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    b = np.zeros(batch + (n, n))
    for k in range(pairs):
        i = 2 * k
        b[..., i, i] = b[..., i + 1, i + 1] = 1.5 * k - 2
        b[..., i, i + 1], b[..., i + 1, i] = 1.0 + k, -1.0 - k
    for i in range(2 * pairs, n):
        b[..., i, i] = 3.0 + 1.25 * i
    return q @ b @ np.swapaxes(q, -1, -2)


def matched(got, want):
    """got's eigenvalues in the order of want's (each stack's nearest ones),
    for comparing eigenvalues whose order is the solver's."""
    got, want = np.asarray(got), np.asarray(want)
    out = np.empty_like(got)
    for idx in np.ndindex(want.shape[:-1]):
        left = list(got[idx])
        for j, w in enumerate(want[idx]):
            k = int(np.argmin([abs(g - w) for g in left]))
            out[idx + (j,)] = left.pop(k)
    return out


def check_eig(d, a, tol):
    """dg.linalg.eig and eigvals of d (holding a) against NumPy's: the result
    types, dtypes and shapes, the eigenvalues (matched), and each vector:
    A v = w v and unit norm; no host fallback."""
    want = np.linalg.eig(a)
    wv = np.linalg.eigvals(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dg.FallbackWarning)
        got = dg.linalg.eig(d)
        gv = dg.linalg.eigvals(d)
    assert type(got).__name__ == "EigResult"
    w, v = got
    assert isinstance(w, dg.DistributedArray) and isinstance(v, dg.DistributedArray)
    assert (w.dtype, v.dtype, gv.dtype) == (want.eigenvalues.dtype, want.eigenvectors.dtype,
                                            wv.dtype)
    assert w.shape == want.eigenvalues.shape and v.shape == a.shape and gv.shape == wv.shape
    w, v, gv = w.get(), v.get(), gv.get()
    scale = max(1.0, float(np.max(np.abs(a)))) if a.size else 1.0
    np.testing.assert_allclose(matched(w, want.eigenvalues), want.eigenvalues, rtol=0,
                               atol=tol * scale)
    np.testing.assert_allclose(matched(gv, wv), wv, rtol=0, atol=tol * scale)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=0, atol=tol * scale)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=0, atol=tol)
    return w


@pytest.mark.parametrize("dt", DTYPES)
def test_eig(ndev, dt):
    n = 7
    tol = 200 * n * eps(dt)
    cases = [("pairs", normal_real(n, 3, seed=1)), ("one pair", normal_real(n, 1, seed=2)),
             ("symmetric", hpd(n, np.float64, 1e2, seed=3) - np.eye(n)),
             ("triangular", np.triu(rand((n, n), np.float64, 4)) + np.diag(np.arange(n))),
             ("random", rand((n, n), np.float64, 5))]
    for what, a in cases:
        if np.dtype(dt).kind == "c":
            a = a + 1j * normal_real(n, 2, seed=6)
        a = a.astype(dt)
        for name, m in layouts(a.shape, ndev):
            w = check_eig(dg.distributed_array(a, m), a, tol)
            if np.dtype(dt).kind != "c":
                # real results exactly where every eigenvalue is real (NumPy's
                # rule up to 2.4; later NumPy gives complex results always)
                assert (w.dtype.kind == "f") == (what in ("symmetric", "triangular") and
                                                 _dense.eig_real_results()), what


@pytest.mark.parametrize("dt", DTYPES)
def test_eig_stacks(ndev, dt):
    """Stacks: one batch per chunk where the chunks hold whole matrices (the
    results stay on those devices), split matrices resharded; the result is
    real only where every matrix of the stack has real eigenvalues."""
    n = 5
    tol = 500 * n * eps(dt)
    sym = hpd(n, np.float64, 10.0, seed=7, batch=(2, 3))
    mixed = sym.copy()
    mixed[1, 2] = normal_real(n, 2, seed=8)
    for what, a in (("symmetric", sym), ("mixed", mixed),
                    ("pairs", normal_real(n, 2, seed=9, batch=(4,)))):
        if np.dtype(dt).kind == "c":
            a = a + 0.5j * normal_real(n, 1, seed=10)
        a = a.astype(dt)
        for name, m in maps_for(a.shape, ndev):
            d = dg.distributed_array(a, m)
            w = check_eig(d, a, tol)
            if np.dtype(dt).kind != "c":
                assert (w.dtype.kind == "f") == (what == "symmetric" and
                                                 _dense.eig_real_results()), what
            if name == "rows":
                got = dg.linalg.eig(d)
                held = {dev for dev, _ in d._layout()}
                assert {dev for dev, _ in got.eigenvalues._layout()} == held
                assert {dev for dev, _ in got.eigenvectors._layout()} == held


@pytest.mark.parametrize("real_results", [True, False], ids=["numpy<=2.4", "numpy>2.4"])
def test_eig_result_types_of_either_numpy(ndev, real_results, monkeypatch):
    """Both of NumPy's rules for real input whatever NumPy is installed: real
    results where every eigenvalue is real (up to 2.4), complex always
    (later); the values are NumPy's either way."""
    monkeypatch.setattr(_dense, "_EIG_REAL", [real_results])
    n = 6
    for what, a in (("symmetric", hpd(n, np.float64, 1e2, seed=3) - np.eye(n)),
                    ("pairs", normal_real(n, 2, seed=1))):
        want = np.linalg.eigvals(a)
        real = what == "symmetric" and real_results
        for name, m in layouts(a.shape, ndev):
            d = dg.distributed_array(a, m)
            for got in (dg.linalg.eigvals(d), dg.linalg.eig(d).eigenvalues):
                assert got.dtype == (np.float64 if real else np.complex128), (what, name)
                np.testing.assert_allclose(np.sort_complex(np.asarray(got).astype(complex)),
                                           np.sort_complex(want.astype(complex)), atol=1e-12)
            w, v = dg.linalg.eig(d)
            assert v.dtype == (np.float64 if real else np.complex128), (what, name)
            w, v = np.asarray(w), np.asarray(v)
            np.testing.assert_allclose(a @ v, v * w, atol=1e-12)


def test_eig_types_and_sizes(ndev):
    """Integers and bools become float64, float16 is NumPy's TypeError; 1 x 1
    and empty matrices and stacks give NumPy's shapes and dtypes."""
    for a in (np.array([[2, 1], [1, 3]]), np.array([[0, -1], [1, 0]], np.int8),
              np.array([[True, False], [True, True]]), np.full((1, 1), 4.0),
              np.full((2, 1, 1), -3, np.float32), np.array([[1j]], np.complex64)):
        check_eig(dg.asarray(a), a, 1e-5)
    for shape in ((0, 0), (3, 0, 0), (0, 2, 2)):
        for dt in (np.float64, np.float32, np.complex64, np.int32):
            a = np.zeros(shape, dt)
            want = np.linalg.eig(a)
            got = dg.linalg.eig(dg.asarray(a))
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype
            gv, wv = dg.linalg.eigvals(dg.asarray(a)), np.linalg.eigvals(a)
            assert gv.shape == wv.shape and gv.dtype == wv.dtype
    for f in (dg.linalg.eig, dg.linalg.eigvals):
        with pytest.raises(TypeError, match="array type float16 is unsupported in linalg"):
            f(dg.asarray(np.eye(2, dtype=np.float16)))


def test_eig_errors(ndev):
    """NumPy's LinAlgErrors and messages: not square, fewer than two
    dimensions, NaN or infinity (NumPy's check), through dgarray's functions
    and NumPy's (dispatched to the devices)."""
    bad = [np.ones((2, 3)), np.ones(3), np.ones((2, 2, 3)),
           np.array([[1.0, np.nan], [0.0, 1.0]]), np.array([[np.inf, 0.0], [0.0, 1.0]]),
           np.full((2, 2, 2), np.nan, np.complex64)]
    for a in bad:
        for npf, dgf in ((np.linalg.eig, dg.linalg.eig), (np.linalg.eigvals, dg.linalg.eigvals)):
            with pytest.raises(np.linalg.LinAlgError) as want:
                npf(a)
            for name, m in maps_for(a.shape, ndev)[:3]:
                for call in (dgf, npf):
                    with pytest.raises(np.linalg.LinAlgError, match=re.escape(str(want.value))):
                        call(dg.distributed_array(a, m))


def test_eig_does_not_converge_raises(monkeypatch):
    """A matrix the backend reports as failed (info > 0: here forced, as
    LAPACK's QR iteration practically never fails) is NumPy's LinAlgError
    "Eigenvalues did not converge"; the input is untouched."""
    L = dg._lapack
    real_run = L.run

    def failing(op, a, *args, info=None, **kw):
        real_run(op, a, *args, info=info, **kw)
        if op == L.GEEV:
            info[...] = 3
    monkeypatch.setattr(_dense, "run", failing)
    a = rand((3, 4, 4), np.float64, 11)
    d = dg.asarray(a)
    for f in (dg.linalg.eig, dg.linalg.eigvals):
        with pytest.raises(np.linalg.LinAlgError, match="Eigenvalues did not converge"):
            f(d)
    np.testing.assert_array_equal(d.get(), a)


def test_eig_numpy_dispatch():
    """numpy.linalg.eig / eigvals of a DistributedArray run here, not through
    the fallback, and are dgarray.linalg's."""
    a = normal_real(4, 1, seed=12)
    d = dg.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = np.linalg.eig(d)
        assert type(r).__name__ == "EigResult" and isinstance(r.eigenvalues, dg.DistributedArray)
        assert isinstance(np.linalg.eigvals(d), dg.DistributedArray)
    assert dg.linalg.eig is _dense.eig and dg.linalg.eigvals is _dense.eigvals


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(9, 5), (5, 9), (6, 6), (2, 7, 4)])
def test_svd(ndev, dt, shape):
    a = with_cond(max(shape[-2:]), dt, 1e3, seed=4)[:shape[-2], :shape[-1]]
    if len(shape) == 3:
        a = rand(shape, dt, 4)
    k = min(shape[-2:])
    ws = np.linalg.svd(a, compute_uv=False)
    for name, m in layouts(a.shape, ndev):
        d = dg.distributed_array(a, m)
        s = dg.linalg.svdvals(d)
        assert s.dtype == ws.dtype
        close(s, ws, 100 * max(shape) * eps(dt))
        for full in (False, True):
            r = dg.linalg.svd(d, full_matrices=full)
            wu, _, wvh = np.linalg.svd(a, full_matrices=full)
            assert type(r).__name__ == "SVDResult"
            u, s, vh = (t.get() for t in r)
            assert u.shape == wu.shape and vh.shape == wvh.shape and u.dtype == wu.dtype
            close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, 100 * max(shape) * eps(dt))
            for q in (u, np.conjugate(np.swapaxes(vh, -1, -2))):
                close(np.conjugate(np.swapaxes(q, -1, -2)) @ q,
                      np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
                      100 * max(shape) * eps(dt))


def test_svd_hermitian(ndev):
    a = hpd(6, np.float64) - 0.3 * np.eye(6)
    close(dg.linalg.svd(dg.asarray(a), hermitian=True, compute_uv=False),
          np.linalg.svd(a, hermitian=True, compute_uv=False), 1e-13)
    u, s, vh = dg.linalg.svd(dg.asarray(a), hermitian=True)
    close((u.get() * s.get()) @ vh.get(), a, 1e-13)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(11, 4), (4, 11), (6, 6), (3, 5, 3)])
def test_qr(ndev, dt, shape):
    a = rand(shape, dt, 6)
    m_, n_ = shape[-2:]
    tol = 100 * max(shape) * eps(dt)
    for name, m in layouts(a.shape, ndev):
        d = dg.distributed_array(a, m)
        for mode in ("reduced", "complete"):
            q, r = dg.linalg.qr(d, mode=mode)
            wq, wr = np.linalg.qr(a, mode=mode)
            assert q.shape == wq.shape and r.shape == wr.shape and q.dtype == wq.dtype
            q, r = q.get(), r.get()
            close(q @ r, a, tol)
            close(np.conjugate(np.swapaxes(q, -1, -2)) @ q,
                  np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), tol)
            assert np.all(np.tril(r, -1) == 0)
            close(np.abs(r), np.abs(wr), tol)
        r = dg.linalg.qr(d, mode="r")
        close(np.abs(r.get()), np.abs(np.linalg.qr(a, mode="r")), tol)
        h, tau = dg.linalg.qr(d, mode="raw")
        wh, wtau = np.linalg.qr(a, mode="raw")
        assert h.shape == wh.shape and tau.shape == wtau.shape
        close(h, wh, tol)
        close(tau, wtau, tol)
    with pytest.raises(ValueError, match="Unrecognized mode"):
        dg.linalg.qr(dg.asarray(a), mode="x")


# ---- lstsq, rank, pinv, power, cond, norms ------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(14, 4), (4, 9), (7, 7)])
def test_lstsq(ndev, dt, shape):
    a = rand(shape, dt, 7)
    deficient = a.copy()
    deficient[:, -1] = deficient[:, 0]
    for mat in (a, deficient):
        for bshape in ((shape[0],), (shape[0], 3)):
            b = rand(bshape, dt, 8)
            wx, wres, wrank, ws = np.linalg.lstsq(mat, b)
            for name, m in layouts(mat.shape, ndev):
                x, res, rank, s = dg.linalg.lstsq(dg.distributed_array(mat, m), dg.asarray(b))
                assert rank == wrank and x.shape == wx.shape and res.shape == wres.shape
                assert x.dtype == wx.dtype and res.dtype == wres.dtype and s.dtype == ws.dtype
                tol = 1e3 * max(shape) * eps(dt)
                close(x, wx, tol)
                close(res, wres, tol, scale=max(1.0, float(np.abs(b).max()) ** 2))
                close(s, ws, tol)


def test_matrix_rank_pinv(ndev):
    a = rand((8, 5), np.float64, 9)
    a[:, 3] = a[:, 0] + a[:, 1]
    st = rand((3, 4, 6), np.complex128, 10)
    for name, m in layouts(a.shape, ndev):
        d = dg.distributed_array(a, m)
        assert int(dg.linalg.matrix_rank(d)) == np.linalg.matrix_rank(a) == 4
        assert int(dg.linalg.matrix_rank(d, tol=1e-20)) == np.linalg.matrix_rank(a, tol=1e-20)
        close(dg.linalg.pinv(d), np.linalg.pinv(a), 1e-12)
    np.testing.assert_array_equal(dg.linalg.matrix_rank(dg.asarray(st)).get(),
                                  np.linalg.matrix_rank(st))
    close(dg.linalg.pinv(dg.asarray(st)), np.linalg.pinv(st), 1e-12)
    close(dg.linalg.pinv(dg.asarray(st), rtol=0.5), np.linalg.pinv(st, rtol=0.5), 1e-12)
    assert dg.linalg.matrix_rank(dg.asarray(np.zeros(3))) == np.linalg.matrix_rank(np.zeros(3))
    with pytest.raises(ValueError, match="rtol"):
        dg.linalg.pinv(dg.asarray(a), rcond=0.1, rtol=0.1)


def test_matrix_power(ndev):
    a = with_cond(5, np.float64, 10.0, seed=11)
    st = rand((2, 3, 3), np.complex128, 12) / 2
    for n in (-3, -1, 0, 1, 2, 3, 6, 11):
        for x in (a, st):
            close(dg.linalg.matrix_power(dg.asarray(x), n), np.linalg.matrix_power(x, n), 1e-11)
    ints = np.arange(9).reshape(3, 3)
    got = dg.linalg.matrix_power(dg.asarray(ints), 3)
    assert got.dtype == ints.dtype
    np.testing.assert_array_equal(got.get(), np.linalg.matrix_power(ints, 3))
    with pytest.raises(TypeError, match="integer"):
        dg.linalg.matrix_power(dg.asarray(a), 1.5)


def test_cond(ndev):
    a = with_cond(6, np.float64, 1e4, seed=13)
    sing = np.ones((3, 3))
    st = rand((2, 4, 4), np.complex128, 14)
    for p in (None, 2, -2, "nuc"):
        for x in (a, st, sing):
            try:
                want = np.linalg.cond(x, p)
            except np.linalg.LinAlgError as e:
                with pytest.raises(np.linalg.LinAlgError, match=str(e)):
                    dg.linalg.cond(dg.asarray(x), p)
                continue
            got = dg.linalg.cond(dg.asarray(x), p)
            w = np.asarray(want)
            g = got.get()
            if x is sing and p in (None, 2, -2):
                # rounding noise past 1/eps (its inverse for -2), or inf
                for t in (g, w):
                    assert (t <= 1e-15) if p == -2 else ~(t < 1e15)
                continue
            np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
            np.testing.assert_allclose(g[np.isfinite(w)], w[np.isfinite(w)], rtol=1e-8)
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        dg.linalg.cond(dg.zeros((0, 0)))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_svd_norms(ndev, ord):
    x = rand((3, 4, 5), np.float64, 15)
    for axis in ((-2, -1), (0, 2), (2, 0)):
        for keep in (False, True):
            close(_dense.svd_norm(dg.asarray(x), ord, axis, keep),
                  np.linalg.norm(x, ord, axis, keep), 1e-13)
    close(_dense.svd_norm(dg.asarray(np.arange(6).reshape(2, 3)), ord),
          np.linalg.norm(np.arange(6).reshape(2, 3), ord), 1e-13)


# ---- empty, 1 x 1, dispatch, memory --------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (1, 1), (2, 1, 1)])
def test_empty_and_one_by_one(ndev, shape):
    a = np.full(shape, 4.0)
    d = dg.asarray(a)
    checks = [
        (np.linalg.cholesky, ()), (np.linalg.inv, ()), (np.linalg.det, ()),
        (np.linalg.eigvalsh, ()), (np.linalg.svd, ()), (np.linalg.qr, ()),
        (np.linalg.pinv, ()), (np.linalg.matrix_rank, ()), (np.linalg.slogdet, ()),
        (np.linalg.eig, ()), (np.linalg.eigvals, ()),
    ]
    for f, args in checks:
        want = f(a, *args)
        got = getattr(dg.linalg, f.__name__)(d, *args)
        ws = want if isinstance(want, tuple) else (want,)
        gs = got if isinstance(got, tuple) else (got,)
        for g, w in zip(gs, ws):
            g = g.get() if isinstance(g, dg.DistributedArray) else np.asarray(g)
            assert g.shape == np.shape(w), f.__name__
            np.testing.assert_allclose(np.abs(g), np.abs(w), atol=1e-14)
    b = np.ones(shape[:-1] + (2,))
    np.testing.assert_allclose(dg.linalg.solve(d, dg.asarray(b)).get(), np.linalg.solve(a, b))


@pytest.mark.parametrize("op", ["potrf", "getrf", "getrs", "syevd", "gesvd", "geev"])
def test_dense_slot_answers_empty_matrices(ndev, op):
    """A stack of matrices with no element given to the dense slot: every
    info 0 (answered by the core, src/core/dg_dense_run.c, before any
    backend), the stack split over the devices."""
    L = dg._lapack
    st = L.Stack.split((5,))
    info = st.copy(dg.asarray(np.full(5, 7, np.int32)), (), np.int32)
    f64 = np.float64
    if op == "potrf":
        L.run(L.POTRF, st.empty((0, 0), f64), info=info, n=0)
    elif op == "getrf":
        L.run(L.GETRF, st.empty((0, 3), f64), ipiv=st.empty((0,), np.int64), info=info,
              m=3, n=0)
    elif op == "getrs":
        L.run(L.GETRS, st.empty((3, 3), f64), b=st.empty((0, 3), f64),
              ipiv=st.copy(dg.arange(1, 4), (3,), np.int64), info=info, n=3, k=0)
    elif op == "syevd":
        L.run(L.SYEVD, st.empty((0, 0), f64), w=st.empty((0,), f64), info=info, n=0)
    elif op == "geev":
        L.run(L.GEEV, st.empty((0, 0), f64), u=st.empty((0, 0), f64),
              w=st.empty((0,), np.complex128), info=info, job=1, n=0)
    else:
        L.run(L.GESVD, st.empty((0, 4), f64), w=st.empty((0,), f64), info=info, m=4, n=0)
    np.testing.assert_array_equal(info.get(), np.zeros(5, np.int32))


def test_numpy_functions_dispatch_to_the_devices():
    a = dg.asarray(hpd(5, np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (np.linalg.cholesky, np.linalg.inv, np.linalg.det, np.linalg.eigvalsh,
                  np.linalg.svd, np.linalg.qr, np.linalg.pinv, np.linalg.matrix_rank):
            r = f(a)
            r = r if isinstance(r, tuple) else (r,)
            assert all(isinstance(t, dg.DistributedArray) for t in r), f.__name__
        assert isinstance(np.linalg.solve(a, dg.ones(5)), dg.DistributedArray)
    assert dg.linalg.solve is _dense.solve and "solve" in dir(dg.linalg)


def test_no_leaks(no_leak):
    a = hpd(8, np.float64)
    d = dg.asarray(a)
    for _ in range(3):
        dg.linalg.cholesky(d)
        dg.linalg.solve(d, dg.ones(8))
        dg.linalg.qr(dg.asarray(rand((20, 3), np.float64)))
        dg.linalg.svd(d)
        dg.linalg.slogdet(d)
        with pytest.raises(np.linalg.LinAlgError):
            dg.linalg.cholesky(-d)


def test_blocked_paths_run_across_devices(ndev):
    """A split matrix with several blocks per device: the blocked algorithms
    (Cholesky, LU, TSQR) give NumPy's answers; the input stays put."""
    n = 37
    a = hpd(n, np.float64, 1e3, seed=20)
    g = with_cond(n, np.float64, 1e3, seed=21)
    rows = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    for m in (rows, blocks_2d((n, n), ndev)):
        close(dg.linalg.cholesky(dg.distributed_array(a, m)), np.linalg.cholesky(a), 1e-12)
        d = dg.distributed_array(g, m)
        b = rand((n, 2), np.float64, 22)
        x = dg.linalg.solve(d, dg.asarray(b))
        assert backward_error(g, x.get(), b) < 50 * n * eps(np.float64)
        close(dg.linalg.det(d), np.linalg.det(g), 1e-11)
        close(dg.linalg.inv(d), np.linalg.inv(g), 1e-9)
    t = rand((90, 6), np.float64, 23)
    q, r = dg.linalg.qr(dg.distributed_array(t, {d: slice(90 * d // ndev, 90 * (d + 1) // ndev)
                                                 for d in range(ndev)}))
    assert len({dev for dev, _ in q._layout()}) == ndev  # Q's rows stay where A's were
    close(q.get() @ r.get(), t, 1e-13)
