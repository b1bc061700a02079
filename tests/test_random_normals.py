"""The normal streams of dgarray.random, against their definition
(kernels/dg_random.h): float32 normals bit for bit against a NumPy model of
the float32 definition (Philox4x32-10, then dgarray's own log and sin/cos in
single operations and fmaf), whatever the layout and the number of devices; their
statistics (mean, variance, a Kolmogorov-Smirnov test against the normal
CDF, tails, independence of a block's four); float64 normals as they were
before float32 ones got their own definition (values recorded from that
code) and as Python's libm computes the same formula."""
import math

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

F32 = np.float32
M32 = 0xFFFFFFFF
_NORMAL = 1  # dg_rand_dist of src/core/dg_backend.h

# ---- the model -------------------------------------------------------------------------


def philox_blocks(key, stream, blocks):
    """Philox4x32-10 words (4 uint64 arrays of 32-bit values) of the given
    block indices of a fill with `key` and `stream` (attempt 0)."""
    b = np.asarray(blocks, dtype=np.uint64)
    c0, c1 = b & np.uint64(M32), b >> np.uint64(32)
    c2 = np.full_like(b, stream & M32)
    c3 = np.full_like(b, stream >> 32)
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & np.uint64(M32),
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & np.uint64(M32))
    return c0, c1, c2, c3


def h(s):
    return F32(float.fromhex(s))


M2LN2 = h("-0x1.62e430p+0")
LG = [h(v) for v in ("0x1.fffff8p-3", "0x1.555550p-4", "0x1.000426p-5", "0x1.99a3f4p-7",
                     "0x1.54276cp-8", "0x1.22719ap-9", "0x1.0f376ap-10", "0x1.084872p-11",
                     "0x1.383030p-13")]
SN = [h("0x1.21fb54p-4"), h("-0x1.4abbbap-1"), h("0x1.465e92p-4"), h("-0x1.2d930cp-8")]
CS = [h("-0x1.3bd3ccp+0"), h("0x1.03c1d4p-2"), h("-0x1.55c5e0p-6"), h("0x1.d9d57cp-11")]


def fma32(a, b, c):
    """fmaf: a * b + c (float32 arrays or scalars) with one rounding.  a * b
    is exact in double; the sum's rounding error (two-sum) makes the double
    sum round-to-odd, which then rounds to float32 as the exact value does."""
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    s = np.where((err != 0) & even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(F32)


def rz32(v):
    """uint32 v (as uint64 values) to float32 rounded toward zero."""
    f = v.astype(np.float64).astype(F32)
    over = f.astype(np.float64) > v.astype(np.float64)
    return np.where(over, np.nextafter(f, F32(0)), f)


def model_m2log(u):
    """-2 log(u 2^-32) for float32 u in [1, 2^32), as dg_rand_m2logf."""
    t = u.view(np.uint32) - np.uint32(0x3F3504F3)
    m = ((t & np.uint32(0x7FFFFF)) + np.uint32(0x3F3504F3)).view(F32)
    e = ((t >> np.uint32(23)).astype(np.int32) - 32).astype(F32)
    g = fma32(m, F32(-2), F32(2))
    p = fma32(g, LG[8], LG[7])
    for c in LG[6::-1]:
        p = fma32(g, p, c)
    return fma32(e, M2LN2, fma32(g * g, p, g))


def model_sincos(k):
    """(cos, sin) of pi x / 2, x = (int32)k 2^-32, as dg_rand_sincosf."""
    x = k.astype(np.uint32).view(np.int32).astype(F32) * F32(2.0 ** -32)
    t = x * x
    p = fma32(t, SN[3], SN[2])
    p = fma32(t, p, SN[1])
    p = fma32(t, p, SN[0])
    sn = fma32(x, F32(1.5), x * p)
    p = fma32(t, CS[3], CS[2])
    p = fma32(t, p, CS[1])
    p = fma32(t, p, CS[0])
    return fma32(t, p, F32(1)), sn


def model_pair(w0, w1):
    """The radius and the two factors of the pair of words (w0, w1) (uint64
    arrays of 32-bit values), as dg_rand_pair32."""
    r = np.sqrt(model_m2log(rz32((w0 << np.uint64(2) | np.uint64(1)) & np.uint64(M32))))
    c, s = model_sincos(w1)
    c = np.where((w0 >> np.uint64(31)) & np.uint64(1) == 1, -c, c)
    swap = (w0 >> np.uint64(30)) & np.uint64(1) == 1
    return r, np.where(swap, s, c), np.where(swap, c, s)


def model_f32(key, stream, n, a=0.0, b=1.0):
    """The n float32 normals fmaf(b r, f, a) of flat indices 0..n-1 of a fill."""
    w = philox_blocks(key, stream, np.arange((n + 3) // 4))
    z = np.empty((len(w[0]), 4), F32)
    for p in range(2):
        r, f0, f1 = model_pair(w[2 * p], w[2 * p + 1])
        br = F32(b) * r
        z[:, 2 * p], z[:, 2 * p + 1] = fma32(br, f0, F32(a)), fma32(br, f1, F32(a))
    return z.ravel()[:n]


def model_f64(key, stream, n, a=0.0, b=1.0):
    """The n float64 normals of a fill, with Python's libm (the C library's,
    which the CPU backend calls)."""
    w = philox_blocks(key, stream, np.arange((n + 1) // 2))
    out = []
    for x0, x1, x2, x3 in zip(*(v.tolist() for v in w)):
        u1 = (((x1 << 32 | x0) >> 11) + 1) * 2.0 ** -53
        u2 = ((x3 << 32 | x2) >> 11) * 2.0 ** -53
        rad, th = math.sqrt(-2.0 * math.log(u1)), (2.0 * math.pi) * u2
        out += [a + b * (rad * math.cos(th)), a + b * (rad * math.sin(th))]
    return np.array(out[:n])


# ---- float32: the definition -------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (7,), (37, 5), (6, 4, 3), (2, 513)], ids=str)
def test_float32_normals_are_the_model(shape, ndev):
    n = math.prod(shape)
    for seed in (0, 12345):
        key = dg.random.default_rng(seed)._key
        want0 = model_f32(key, 0, n).reshape(shape)
        want1 = model_f32(key, 1, n).reshape(shape)
        for name, m in maps_for(shape, ndev):
            r = dg.random.default_rng(seed)
            got0 = r.standard_normal(shape, dtype=np.float32, index_map=m)
            got1 = r.standard_normal(shape, dtype=np.float32, index_map=m)  # stream 1
            assert got0.dtype == np.float32
            np.testing.assert_array_equal(got0.get().view(np.uint32), want0.view(np.uint32),
                                          err_msg=name)
            np.testing.assert_array_equal(got1.get().view(np.uint32), want1.view(np.uint32),
                                          err_msg=name)


def test_float32_normals_with_parameters_and_out(ndev):
    """a + b z in float32 (the fill's own parameters), and out= (a strided
    view's chunks: the elements' flat indices are the view's)."""
    r = dg.random.default_rng(99)
    key = r._key
    got = r._fill((301,), np.float32, _NORMAL, 2.0, 0.5)                       # stream 0
    np.testing.assert_array_equal(got.get(), model_f32(key, 0, 301, 2.0, 0.5))
    out = dg.empty((10, 11), dtype=np.float32,
                   index_map={d: slice(d, None, ndev) for d in range(ndev)})
    assert r.standard_normal((10, 11), dtype=np.float32, out=out) is out       # stream 1
    np.testing.assert_array_equal(out.get(), model_f32(key, 1, 110).reshape(10, 11))
    host = np.empty(9, np.float32)
    r.standard_normal(out=host, dtype=np.float32)                              # stream 2
    np.testing.assert_array_equal(host, model_f32(key, 2, 9))


def test_float32_model_is_accurate():
    """The model (and so the definition) against double: -2 log over every
    float of [2^31, 2^32) (u1 in [1/2, 1), where it is least accurate)
    within 0.87 ulp, z within 3 ulp of the double Box-Muller of the same
    uniforms (the C test checks log, sin and cos over every input)."""
    u = np.arange(0x4F000000, 0x4F800000, dtype=np.uint32).view(F32)
    got = model_m2log(u).astype(np.float64)
    want = -2 * np.log(u.astype(np.float64) * 2.0 ** -32)
    ulp = np.ldexp(1.0, np.frexp(want)[1] - 24)
    assert (np.abs(got - want) / ulp).max() <= 0.87
    n = 1 << 18
    key = (0x1234, 0x5678)
    z = model_f32(key, 3, n).astype(np.float64)
    w = philox_blocks(key, 3, np.arange(n // 4))
    ref = np.empty((n // 4, 4))
    for p in range(2):
        w0, w1 = w[2 * p], w[2 * p + 1]
        u1 = rz32((w0 << np.uint64(2) | np.uint64(1)) & np.uint64(M32)).astype(np.float64) * 2.0 ** -32
        x = w1.astype(np.uint32).view(np.int32).astype(F32).astype(np.float64) * 2.0 ** -32
        rad = np.sqrt(-2 * np.log(u1))
        c, s = np.cos(np.pi / 2 * x), np.sin(np.pi / 2 * x)
        c = np.where((w0 >> np.uint64(31)) & np.uint64(1) == 1, -c, c)
        swap = (w0 >> np.uint64(30)) & np.uint64(1) == 1
        ref[:, 2 * p] = rad * np.where(swap, s, c)
        ref[:, 2 * p + 1] = rad * np.where(swap, c, s)
    ref = ref.ravel()
    big = np.abs(ref) > 1e-3
    ulp = np.ldexp(1.0, np.frexp(ref[big])[1] - 24)
    assert (np.abs(z[big] - ref[big]) / ulp).max() <= 3.0


# ---- float32: statistics -----------------------------------------------------------------


def _normal_cdf(x):
    return 0.5 * (1.0 + np.frompyfunc(math.erf, 1, 1)(x / math.sqrt(2.0)).astype(np.float64))


def test_float32_normals_statistics():
    z = dg.random.default_rng(20261127).standard_normal(1 << 20, dtype=np.float32).get()
    check_statistics(z)


def check_statistics(z):
    """Asserts that z (a multiple of 4 standard normals, blocks of 4 in
    order) looks standard normal and independent."""
    x = z.astype(np.float64)
    n = len(x)
    assert abs(x.mean()) < 5 / math.sqrt(n)
    assert abs(x.var() - 1) < 5 * math.sqrt(2 / n)
    assert abs((x ** 3).mean()) < 5 * math.sqrt(15 / n)          # skewness
    assert abs((x ** 4).mean() - 3) < 5 * math.sqrt(96 / n)      # kurtosis
    # Kolmogorov-Smirnov against the normal CDF: D below its 0.1 % point
    s = np.sort(x)
    cdf = _normal_cdf(s)
    i = np.arange(1, n + 1)
    d = max((i / n - cdf).max(), (cdf - (i - 1) / n).max())
    assert d * math.sqrt(n) < 1.95, d
    # tails: P(|z| > 3), P(|z| > 4) within 5 sigma of their counts; none past
    # the largest radius, sqrt(-2 log 2^-32)
    for t in (3.0, 4.0):
        p = 2 * (1 - _normal_cdf(np.array([t]))[0])
        assert abs((np.abs(x) > t).sum() - n * p) < 5 * math.sqrt(n * p * (1 - p)) + 1, t
    assert np.abs(x).max() <= math.sqrt(-2 * math.log(2.0 ** -32)) + 1e-6
    # the four of a block (two Box-Muller pairs) and neighbouring blocks:
    # uncorrelated, as are squares within a pair (a radius shared twice)
    q = x.reshape(-1, 4)
    for i, j in [(0, 1), (0, 2), (1, 3), (2, 3), (1, 2)]:
        assert abs(np.corrcoef(q[:, i], q[:, j])[0, 1]) < 5 / math.sqrt(n / 4), (i, j)
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 5 / math.sqrt(n)
    sq = q ** 2
    assert abs(np.corrcoef(sq[:, 0], sq[:, 1])[0, 1]) < 5 / math.sqrt(n / 4)
    assert abs(np.corrcoef(sq[:, 0], sq[:, 2])[0, 1]) < 5 / math.sqrt(n / 4)


# ---- float64: unchanged -------------------------------------------------------------------

# dgarray.random.default_rng(2026): standard_normal(10), normal(1.5, 2.0, 7),
# standard_normal((2, 3)), recorded from the CPU backend at 404aac3 (before
# float32 normals got their own definition)
F64_KNOWN = [
    ['-0x1.2da2175ca5ab6p-2', '-0x1.b0217a5df7f4ap+0', '0x1.b7c4f0ebec4aap-1',
     '0x1.e2a13a6ab36a2p-1', '-0x1.a681382588073p+0', '0x1.30eb958cf8a76p-8',
     '-0x1.247036766b037p-2', '0x1.a2d160805c17cp-5', '0x1.ebde74f52bea6p+0',
     '0x1.ed91a5b1ee9f1p-1'],
    ['0x1.ff463aa3b2f76p+1', '0x1.a061bc795b643p-1', '-0x1.e69fcaefa4e9cp+0',
     '0x1.f2ca22bf13ca3p+1', '0x1.f604d1f119409p+1', '0x1.0b55b03c57fa6p+1',
     '0x1.41b08deb9e250p+0'],
    ['-0x1.95326c60cf7dfp-1', '-0x1.898fbde1da7acp+0', '0x1.06dec0cac8d3cp+0',
     '-0x1.67dc53ed66106p+1', '-0x1.3f1f51fc82215p-1', '0x1.5245962d787c7p-1'],
]


def _same_f64(got, want):
    """Bit for bit on the CPU backend; within 4 ulp on GPUs (their libm)."""
    if dg.backend() == "cpu":
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    else:
        np.testing.assert_array_max_ulp(got, want, maxulp=4)


def test_float64_normals_unchanged(ndev):
    want = [np.array([float.fromhex(v) for v in row]) for row in F64_KNOWN]
    for name, m in maps_for((10,), ndev):
        r = dg.random.default_rng(2026)
        _same_f64(r.standard_normal(10, index_map=m).get(), want[0])
        _same_f64(r.normal(1.5, 2.0, size=7).get(), want[1])
        _same_f64(r.standard_normal((2, 3)).get().ravel(), want[2])


def test_float64_normals_are_the_formula(ndev):
    r = dg.random.default_rng(7)
    key = r._key
    for name, m in maps_for((9, 7), ndev):
        got = r.standard_normal((9, 7), index_map=m).get().ravel()
        _same_f64(got, model_f64(key, r._stream - 1, 63))
    got = r.normal(-3.0, 0.25, size=33).get()
    _same_f64(got, model_f64(key, r._stream - 1, 33, -3.0, 0.25))
