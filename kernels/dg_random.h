/* Counter-based random numbers: Philox4x32-10 and the DG_FILL_RANDOM fill,
 * shared by the CPU backend (src/backend/cpu/cpu_loops.c) and the CUDA
 * kernels (kernels/fill.cu), so that both compute the same bits.
 *
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11) maps a 128-bit counter and a 64-bit key to 128
 * random bits by ten rounds of: two 32x32->64-bit products of counter words
 * 0 and 2 with the constants M0 and M1; the new words are (hi1 ^ c1 ^ k0,
 * lo1, hi0 ^ c3 ^ k1, lo0); between rounds the key is bumped by the Weyl
 * constants W0 and W1.  Written from that description and checked against
 * the authors' known-answer vectors (Random123's kat_vectors, in
 * tests/c/test_random.c).
 *
 * The element of flat index i (C order over the array's global shape) of a
 * fill with key K and stream S reads block b = i >> shift, where 1 << shift
 * elements share a block: 4 for 32-bit draws (float32 uniforms and normals,
 * integers of at most 4 bytes), 2 for 64-bit draws (float64 uniforms and
 * normals, 8-byte integers).  The block is
 * Philox(counter = (b_lo, b_hi, S_lo, S_hi ^ attempt << 24), key = K);
 * attempt is 0 except for the redraws of a rejected integer.  Streams below
 * 2^56 leave the top byte to the attempt, so a fill of stream S + (a << 56)
 * draws the words that attempt a of stream S draws (how dgarray/random.py
 * redraws integers with array bounds on the devices, reproducing this code).
 * So the value depends only on (K, S, i, distribution, parameters, dtype):
 * not on the chunk, the device or the backend that computes it.
 *
 *   uniform float64: u = (x64 >> 11) * 2^-53 in [0, 1); a + b * u
 *   uniform float32: u = (x32 >> 8) * 2^-24 in [0, 1); (float)a + (float)b * u
 *   normal float64: u1 = ((x64 >> 11) + 1) * 2^-53 in (0, 1], u2 from the
 *       other half of the block as a uniform; z = sqrt(-2 log u1) * cos(2 pi u2)
 *       for even i, * sin(2 pi u2) for odd i (Box-Muller, libm's double
 *       functions); a + b * z.
 *   normal float32 (since 2026-11-27, this form since session 16; before,
 *       float64 normals rounded): the block's words (w0, w1, w2, w3) are two
 *       Box-Muller pairs, (w0, w1) for elements 4b and 4b + 1, (w2, w3) for
 *       4b + 2 and 4b + 3 (dg_rand_pair32): u1 = rz(4 w_even + 1) 2^-32 in
 *       [2^-32, 1 - 2^-24] (the word's low 30 bits, rounded toward zero to
 *       float: radii up to sqrt(64 ln 2) = 6.66), r = sqrtf(-2 log u1)
 *       (dg_rand_m2logf); x = (int32)w_odd 2^-32 in [-1/2, 1/2] (rounded
 *       to nearest), c and s the cos and sin of pi x / 2
 *       (dg_rand_sincosf), c negated when bit 31 of w_even is set, c and s
 *       swapped when bit 30 is (an angle uniform on the circle: see
 *       dg_rand_pair32); element 4b + j is fmaf((float)b * r, f_j,
 *       (float)a), f_0 and f_1 the pair's two factors in that order.  All
 *       in IEEE single operations (+, -, *, fmaf, sqrtf, int -> float
 *       conversions), each rounded once as IEEE says, written out below: no
 *       library function but fmaf and sqrtf, so that the CPU and the GPU
 *       compute the same bits.  Measured against double over every input
 *       (the float u of [1, 2^32), the floats x = (int32)k 2^-32 of
 *       [0, 1/2]): -2 log u1 within 0.867 ulp, r 0.965 ulp, sin(pi x / 2)
 *       0.695 ulp, cos(pi x / 2) 0.903 ulp; z within 2.67 ulp of the
 *       double Box-Muller of the same uniforms (the worst of r c and r s
 *       for the 600 worst radii with each of the 600 worst angles, and of
 *       3e6 random pairs; 2.2 ulp over 1e5 of a fill, tests/c).
 *   integers: Lemire's multiply-shift with rejection ("Fast random integer
 *       generation in an interval", 2019), unbiased: the top half of
 *       x * range, redrawn (attempt + 1) while the low half is below
 *       2^w mod range; 32-bit products for dtypes of at most 4 bytes.
 *
 * Uniforms, integers and float32 normals are integer arithmetic and single
 * IEEE operations (no contraction: gcc -ffp-contract=off, nvcc --fmad=false;
 * float32 normals' fmaf written out), identical on CPU and GPU.  Float64
 * normals call log, sqrt, sin and cos: the GPU's double functions are within
 * 1-2 ulp of glibc's, so float64 normals may differ by a few ulp between
 * backends.
 *
 * This header compiles as C11 and as CUDA C++ (DG_HD of dg_scalar.h).  Every
 * pointer its functions take is borrowed for the call; nothing here
 * allocates or keeps one.  Out-parameters are named as such. */
#ifndef DG_RANDOM_H
#define DG_RANDOM_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "dg_scalar.h"
#include "../src/core/dg_backend.h"

#define DG_PHILOX_M0 0xD2511F53u
#define DG_PHILOX_M1 0xCD9E8D57u
#define DG_PHILOX_W0 0x9E3779B9u
#define DG_PHILOX_W1 0xBB67AE85u

/* Four 32-bit words (a struct, so that a GPU keeps them in registers). */
typedef struct dg_u32x4 {
    uint32_t x, y, z, w;
} dg_u32x4;

/* Philox4x32-10 of counter c under key (k0, k1). */
DG_HD dg_u32x4 dg_philox4x32_10(dg_u32x4 c, uint32_t k0, uint32_t k1)
{
    int r;
    for (r = 0; r < 10; r++) {
        const uint64_t p0 = (uint64_t)DG_PHILOX_M0 * c.x;
        const uint64_t p1 = (uint64_t)DG_PHILOX_M1 * c.z;
        dg_u32x4 n;
        if (r > 0) {
            k0 += DG_PHILOX_W0;
            k1 += DG_PHILOX_W1;
        }
        n.x = (uint32_t)(p1 >> 32) ^ c.y ^ k0;
        n.y = (uint32_t)p1;
        n.z = (uint32_t)(p0 >> 32) ^ c.w ^ k1;
        n.w = (uint32_t)p0;
        c = n;
    }
    return c;
}

/* What every block of a draw (attempt 0) of fill r shares, for
 * dg_rand_block_plan: out_pl[2 i], out_pl[2 i + 1] the key of round i
 * (bumped i times by the Weyl constants); out_pl[20], out_pl[21] the high
 * half of the first round's product of counter word 2 (the stream's low
 * half) with the key's first word xored in, and its low half; out_pl[22]
 * counter word 3 (the stream's high half) xored with the key's second word.
 * DG_RAND_PLAN words. */
#define DG_RAND_PLAN 23

DG_HD void dg_rand_plan(const dg_fill_random *r, uint32_t *out_pl)
{
    const uint64_t p1 = (uint64_t)DG_PHILOX_M1 * (uint32_t)r->stream;
    int i;
    for (i = 0; i < 10; i++) {
        out_pl[2 * i] = r->key[0] + (uint32_t)i * DG_PHILOX_W0;
        out_pl[2 * i + 1] = r->key[1] + (uint32_t)i * DG_PHILOX_W1;
    }
    out_pl[20] = (uint32_t)(p1 >> 32) ^ r->key[0];
    out_pl[21] = (uint32_t)p1;
    out_pl[22] = (uint32_t)(r->stream >> 32) ^ r->key[1];
}

/* dg_rand_block(r, b, 0) from r's plan pl (dg_rand_plan), b = hi 2^32 +
 * lo: the same Philox4x32-10 rounds, the first with the stream's part
 * precomputed (a GPU kernel reads pl from its parameters, and blocks of one
 * hi share the second round's first product). */
DG_HD dg_u32x4 dg_rand_block_plan(const uint32_t *pl, uint32_t lo, uint32_t hi)
{
#if defined(__CUDA_ARCH__)
    uint64_t p0; /* one 32 x 32 -> 64-bit product (the compiler's own left a +0) */
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(p0) : "r"(lo), "r"(DG_PHILOX_M0));
#else
    const uint64_t p0 = (uint64_t)DG_PHILOX_M0 * lo;
#endif
    dg_u32x4 c;
    int i;
    c.x = pl[20] ^ hi;
    c.y = pl[21];
    c.z = (uint32_t)(p0 >> 32) ^ pl[22];
    c.w = (uint32_t)p0;
    for (i = 1; i < 10; i++) {
        const uint64_t q0 = (uint64_t)DG_PHILOX_M0 * c.x;
        const uint64_t q1 = (uint64_t)DG_PHILOX_M1 * c.z;
        dg_u32x4 n;
        n.x = (uint32_t)(q1 >> 32) ^ c.y ^ pl[2 * i];
        n.y = (uint32_t)q1;
        n.z = (uint32_t)(q0 >> 32) ^ c.w ^ pl[2 * i + 1];
        n.w = (uint32_t)q0;
        c = n;
    }
    return c;
}

/* The random words of block b of fill r, for draw `attempt` (0 first). */
DG_HD dg_u32x4 dg_rand_block(const dg_fill_random *r, uint64_t b, uint32_t attempt)
{
    dg_u32x4 c;
    c.x = (uint32_t)b;
    c.y = (uint32_t)(b >> 32);
    c.z = (uint32_t)r->stream;
    c.w = (uint32_t)(r->stream >> 32) ^ (attempt << 24);
    return dg_philox4x32_10(c, r->key[0], r->key[1]);
}

/* Word k (0..3) of w. */
DG_HD uint32_t dg_rand_word(dg_u32x4 w, unsigned k)
{
    return k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w;
}

/* Half k (0 or 1) of w as a 64-bit word (its first word the low half). */
DG_HD uint64_t dg_rand_word64(dg_u32x4 w, unsigned k)
{
    return k == 0 ? ((uint64_t)w.y << 32 | w.x) : ((uint64_t)w.w << 32 | w.z);
}

/* The high 64 bits of a * b. */
DG_HD uint64_t dg_mulhi64(uint64_t a, uint64_t b)
{
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#elif defined(__SIZEOF_INT128__)
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#else
    const uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    const uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

/* An unbiased draw from [0, range) for element `flat` of fill r, range in
 * [1, 2^32] (2^32 and above: the word itself), from its first word x. */
DG_HD uint64_t dg_rand_below32(const dg_fill_random *r, uint64_t flat, uint32_t x)
{
    uint32_t rr, l, t, attempt = 0;
    uint64_t m;
    if (r->range >= ((uint64_t)1 << 32) || r->range == 0)
        return x;
    rr = (uint32_t)r->range;
    m = (uint64_t)x * rr;
    l = (uint32_t)m;
    if (l < rr) {
        t = (uint32_t)(0u - rr) % rr;
        while (l < t) {
            attempt = (attempt + 1) & 0xffu;
            x = dg_rand_word(dg_rand_block(r, flat >> 2, attempt), (unsigned)(flat & 3));
            m = (uint64_t)x * rr;
            l = (uint32_t)m;
        }
    }
    return m >> 32;
}

/* The same for range in [1, 2^64) (0: 2^64, the word itself), from the
 * element's first 64-bit word x. */
DG_HD uint64_t dg_rand_below64(const dg_fill_random *r, uint64_t flat, uint64_t x)
{
    const uint64_t rr = r->range;
    uint64_t lo, t;
    uint32_t attempt = 0;
    if (rr == 0)
        return x;
    lo = x * rr;
    if (lo < rr) {
        t = (0 - rr) % rr;
        while (lo < t) {
            attempt = (attempt + 1) & 0xffu;
            x = dg_rand_word64(dg_rand_block(r, flat >> 1, attempt), (unsigned)(flat & 1));
            lo = x * rr;
        }
    }
    return dg_mulhi64(x, rr);
}

/* fmaf with one rounding: the GPU's FFMA, the CPU's fmaf (hardware FMA
 * where the CPU has it: src/backend/cpu/cpu_loops.c compiles the fill loop
 * twice and picks the FMA one at run time; else the C library's exact
 * software fmaf), so that both compute the same bits. */
#if defined(__CUDA_ARCH__)
#define DG_RN_FMA(a, b, c) __fmaf_rn((a), (b), (c))
#else
#define DG_RN_FMA(a, b, c) fmaf((a), (b), (c))
#endif

/* (float)v rounded toward zero, for v in [1, 2^32): v itself below 2^24,
 * else v less its bits below the 24 leading ones. */
DG_HD float dg_rand_uint_rz(uint32_t v)
{
#if defined(__CUDA_ARCH__)
    return __uint2float_rz(v);
#else
    float f = (float)v; /* rounded to nearest: one ulp above v at most */
    uint32_t b;
    memcpy(&b, &f, 4);
    b -= (uint32_t)((uint64_t)f > v);
    memcpy(&f, &b, 4);
    return f;
#endif
}

/* -2 log(u * 2^-32) for u = dg_rand_uint_rz(v), v in [1, 2^32): u = m 2^(e + 32)
 * with m in [0x1.6a09e6p-1, 2 * 0x1.6a09e6p-1) (about [sqrt(1/2), sqrt(2)),
 * split on the bits of u), g = -2 (m - 1) (exact, one fma), and
 * -2 log u = e (-2 ln 2) + g + g^2 P(g), P of degree 8 a fit of
 * (-2 log(1 - g/2) - g) / g^2 (Lawson's minimax for the relative error of
 * log(1 + f) on f in [sqrt(1/2) - 1, sqrt(2) - 1], the coefficients, fitted
 * in f, scaled by powers of 2 into g: the same float32 numbers), ln 2 as the
 * float nearest (its error 2.7e-9 of the result at most), Horner with fmaf.
 * Within 0.867 ulp of the double value over every u (the header comment). */
#define DG_RN_M2LN2 -0x1.62e430p+0f /* -2 * (float)ln 2 */
#define DG_RN_P0 0x1.fffff8p-3f    /* -c_i (-1/2)^(i+1), c_i the fit in f */
#define DG_RN_P1 0x1.555550p-4f
#define DG_RN_P2 0x1.000426p-5f
#define DG_RN_P3 0x1.99a3f4p-7f
#define DG_RN_P4 0x1.54276cp-8f
#define DG_RN_P5 0x1.22719ap-9f
#define DG_RN_P6 0x1.0f376ap-10f
#define DG_RN_P7 0x1.084872p-11f
#define DG_RN_P8 0x1.383030p-13f

DG_HD float dg_rand_m2logf(float u)
{
    uint32_t b, t;
    float m, g, p, e;
    memcpy(&b, &u, 4);
    t = b - 0x3f3504f3u; /* u / 0x1.6a09e6p-1: e + 32 above bit 23 */
    b = (t & 0x7fffffu) + 0x3f3504f3u;
    memcpy(&m, &b, 4);
    e = (float)((int32_t)(t >> 23) - 32);
    g = DG_RN_FMA(m, -2.0f, 2.0f);
    p = DG_RN_FMA(g, DG_RN_P8, DG_RN_P7);
    p = DG_RN_FMA(g, p, DG_RN_P6);
    p = DG_RN_FMA(g, p, DG_RN_P5);
    p = DG_RN_FMA(g, p, DG_RN_P4);
    p = DG_RN_FMA(g, p, DG_RN_P3);
    p = DG_RN_FMA(g, p, DG_RN_P2);
    p = DG_RN_FMA(g, p, DG_RN_P1);
    p = DG_RN_FMA(g, p, DG_RN_P0);
    return DG_RN_FMA(e, DG_RN_M2LN2, DG_RN_FMA(g * g, p, g));
}

/* sqrtf(x) for x in [2^-100, 2^100]: on a GPU the fast path of the
 * compiler's own correctly rounded sqrtf (an approximate reciprocal square
 * root y, s = x y, then s + (x - s^2) y / 2 with one fma: what nvcc 13
 * emits for sqrtf on sm_75 to sm_120, checked in the SASS, less its range
 * check and slow path), the C library's sqrtf on the CPU: the same bits. */
DG_HD float dg_rand_sqrtf(float x)
{
#if defined(__CUDA_ARCH__)
    float y, s;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    s = __fmul_rn(x, y);
    return __fmaf_rn(__fmaf_rn(-s, s, x), __fmul_rn(y, 0.5f), s);
#else
    return sqrtf(x);
#endif
}

/* cos and sin of pi x / 2 for x = (int32)k 2^-32 in [-1/2, 1/2]:
 * sin = x + x S(t), cos = 1 + t C(t), t = x^2, S and C of degree 3, fits
 * of relative error 3.2e-9 and 6.4e-11 (Lawson's minimax), Horner with
 * fmaf (sin's leading term 1.5 x inside the last fma); within 0.695 and
 * 0.903 ulp of the double values over every x. */
#define DG_RN_S0 0x1.21fb54p-4f   /* pi/2 - 1.5 */
#define DG_RN_S1 -0x1.4abbbap-1f
#define DG_RN_S2 0x1.465e92p-4f
#define DG_RN_S3 -0x1.2d930cp-8f
#define DG_RN_C0 -0x1.3bd3ccp+0f  /* -pi^2/8 */
#define DG_RN_C1 0x1.03c1d4p-2f
#define DG_RN_C2 -0x1.55c5e0p-6f
#define DG_RN_C3 0x1.d9d57cp-11f

DG_HD void dg_rand_sincosf(uint32_t k, float *out_c, float *out_s)
{
    const float x = (float)(int32_t)k * 0x1p-32f;
    const float t = x * x;
    float p = DG_RN_FMA(t, DG_RN_S3, DG_RN_S2);
    p = DG_RN_FMA(t, p, DG_RN_S1);
    p = DG_RN_FMA(t, p, DG_RN_S0);
    *out_s = DG_RN_FMA(x, 1.5f, x * p);
    p = DG_RN_FMA(t, DG_RN_C3, DG_RN_C2);
    p = DG_RN_FMA(t, p, DG_RN_C1);
    p = DG_RN_FMA(t, p, DG_RN_C0);
    *out_c = DG_RN_FMA(t, p, 1.0f);
}

/* A block's standard normals: float64 (rad, c, s: the first element takes
 * rad * c, the second rad * s; a GPU computes both with one sincos, its
 * double functions within 1-2 ulp of glibc's either way) or float32 (r,
 * the radii of its two pairs, and f, the factors of its four: element
 * 4b + j is r[j / 2] * f[j]). */
typedef struct dg_rand_polar {
    double rad, c, s;
    float r[2], f[4];
} dg_rand_polar;

/* The float32 pair of words (w0, w1): radius sqrt(-2 log u1), u1 =
 * rz(4 w0 + 1) 2^-32 (w0's low 30 bits) in [2^-32, 1 - 2^-24]; factors
 * cos and sin of pi x / 2, x = (int32)w1 2^-32 in [-1/2, 1/2], cos negated
 * when bit 31 of w0 is set, the two swapped when bit 30 is.  (cos, sin) of
 * an angle uniform on the circle, the angle pi x / 2 plus a quarter turn q:
 * (c, s) for q = 0, (-s, c), (-c, -s), (s, -c) for q = 1, 2, 3, which for
 * q = 1 and 2 is (s, c) and (-c, s) of the angle -pi x / 2, as likely. */
DG_HD void dg_rand_pair32(uint32_t w0, uint32_t w1, float *out_r, float *out_f)
{
    float c, s;
    uint32_t cb;
    *out_r = dg_rand_sqrtf(dg_rand_m2logf(dg_rand_uint_rz(w0 << 2 | 1u)));
    dg_rand_sincosf(w1, &c, &s);
    memcpy(&cb, &c, 4);
    cb ^= w0 & 0x80000000u;
    memcpy(&c, &cb, 4);
    out_f[0] = w0 & 0x40000000u ? s : c;
    out_f[1] = w0 & 0x40000000u ? c : s;
}

DG_HD dg_rand_polar dg_rand_normals(dg_u32x4 w, int isz)
{
    dg_rand_polar p;
    if (isz == 4) {
        p.rad = p.c = p.s = 0.0;
        dg_rand_pair32(w.x, w.y, &p.r[0], &p.f[0]);
        dg_rand_pair32(w.z, w.w, &p.r[1], &p.f[2]);
        return p;
    }
    {
        const double u1 = (double)((dg_rand_word64(w, 0) >> 11) + 1) * 0x1p-53;
        const double u2 = (double)(dg_rand_word64(w, 1) >> 11) * 0x1p-53;
        const double th = (2.0 * DG_PI) * u2;
        p.r[0] = p.r[1] = 0.0f;
        p.f[0] = p.f[1] = p.f[2] = p.f[3] = 0.0f;
        p.rad = sqrt(-2.0 * log(u1));
#if defined(__CUDA_ARCH__)
        sincos(th, &p.s, &p.c);
#else
        p.c = cos(th);
        p.s = sin(th);
#endif
    }
    return p;
}

/* log2 of the elements per block of a fill with elements of isz bytes. */
DG_HD int dg_rand_shift(const dg_fill_desc *d, int isz)
{
    (void)d;
    return isz <= 4 ? 2 : 1;
}

/* The bits of the element of flat index `flat` of fill r in an isz-byte
 * dtype (its low isz bytes; a float32 as its 32 bits), from its block's
 * words w and, for normals, the block's pair pr.  The one formula of each
 * distribution: the CPU loops and both GPU kernels store what this returns. */
DG_HD uint64_t dg_rand_bits(const dg_fill_random *r, int isz, uint64_t flat, dg_u32x4 w,
                            dg_rand_polar pr)
{
    uint32_t b32;
    uint64_t b64;
    if (r->dist == DG_RAND_UNIFORM && isz == 4) {
        const float u = (float)(dg_rand_word(w, (unsigned)(flat & 3)) >> 8) * 0x1p-24f;
        const float v = (float)r->a + (float)r->b * u;
        memcpy(&b32, &v, 4);
        return b32;
    }
    if (r->dist == DG_RAND_UNIFORM) {
        const double u = (double)(dg_rand_word64(w, (unsigned)(flat & 1)) >> 11) * 0x1p-53;
        const double v = r->a + r->b * u;
        memcpy(&b64, &v, 8);
        return b64;
    }
    if (r->dist == DG_RAND_NORMAL && isz == 4) {
        const float v = DG_RN_FMA((float)r->b * pr.r[(flat >> 1) & 1], pr.f[flat & 3], (float)r->a);
        memcpy(&b32, &v, 4);
        return b32;
    }
    if (r->dist == DG_RAND_NORMAL) {
        const double v = r->a + r->b * (pr.rad * ((flat & 1) ? pr.s : pr.c));
        memcpy(&b64, &v, 8);
        return b64;
    }
    /* the low bytes: two's complement wraps to the dtype */
    return r->lo + (isz <= 4 ? dg_rand_below32(r, flat, dg_rand_word(w, (unsigned)(flat & 3)))
                             : dg_rand_below64(r, flat, dg_rand_word64(w, (unsigned)(flat & 1))));
}

/* Stores the low isz bytes of v at dst. */
DG_HD void dg_rand_put(int isz, uint64_t v, char *dst)
{
    switch (isz) {
    case 1: *(uint8_t *)dst = (uint8_t)v; break;
    case 2: *(uint16_t *)dst = (uint16_t)v; break;
    case 4: *(uint32_t *)dst = (uint32_t)v; break;
    default: *(uint64_t *)dst = v; break;
    }
}

/* Stores the element of flat index `flat` (block words w; for normals the
 * block's pair pr) at dst. */
DG_HD void dg_rand_store(const dg_fill_desc *d, int isz, uint64_t flat, dg_u32x4 w,
                         dg_rand_polar pr, char *dst)
{
    dg_rand_put(isz, dg_rand_bits(&d->rnd, isz, flat, w, pr), dst);
}

/* Byte offset, flat global index and last-axis coordinate of position p
 * (C order over d->shape) of the block that fill d writes. */
DG_HD void dg_rand_locate(const dg_fill_desc *d, int64_t p, int64_t *off, uint64_t *flat,
                          int64_t *col)
{
    int64_t o = 0, gs = 1, c;
    uint64_t f = 0;
    int a;
    *col = 0;
    for (a = d->ndim - 1; a >= 0; a--) {
        c = a > 0 ? p % d->shape[a] : p;
        p = a > 0 ? p / d->shape[a] : 0;
        if (a == d->ndim - 1)
            *col = c;
        o += c * d->strides[a];
        f += (uint64_t)(d->origin[a] + c * d->gstep[a]) * (uint64_t)gs;
        gs *= d->gshape[a];
    }
    *off = o;
    *flat = f;
}

/* Writes group g of the n elements of fill d (elements of isz bytes,
 * shift = dg_rand_shift): the positions [g << shift, (g + 1) << shift) in C
 * order over d->shape, below n.  Consecutive elements of one block compute
 * its Philox words once. */
DG_HD void dg_random_group(const dg_fill_desc *d, int isz, int shift, int64_t g, int64_t n)
{
    const int64_t p0 = g << shift;
    const int last = d->ndim - 1;
    int64_t pend = p0 + ((int64_t)1 << shift), p, off = 0, col = 0;
    uint64_t flat = 0, block = 0;
    dg_u32x4 w = {0, 0, 0, 0};
    dg_rand_polar pr = {0.0, 0.0, 0.0, {0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
    int have = 0;
    if (pend > n)
        pend = n;
    for (p = p0; p < pend; p++) {
        if (p > p0 && col + 1 < d->shape[last]) {
            col++;
            off += d->strides[last];
            flat += (uint64_t)d->gstep[last];
        } else {
            dg_rand_locate(d, p, &off, &flat, &col);
        }
        if (!have || flat >> shift != block) {
            block = flat >> shift;
            w = dg_rand_block(&d->rnd, block, 0);
            if (d->rnd.dist == DG_RAND_NORMAL)
                pr = dg_rand_normals(w, isz);
            have = 1;
        }
        dg_rand_store(d, isz, flat, w, pr, d->dst + off);
    }
}

#endif /* DG_RANDOM_H */
