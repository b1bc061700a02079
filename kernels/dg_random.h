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
 *   normal float32 (since 2026-11-27; before, float64 normals rounded): the
 *       block's words (w0, w1, w2, w3) are two Box-Muller pairs, (w0, w1) for
 *       elements 4b and 4b + 1, (w2, w3) for 4b + 2 and 4b + 3:
 *       u1 = ((w_even >> 8) + 1) * 2^-24 in (0, 1], u2 = (w_odd >> 8) * 2^-24
 *       in [0, 1); z = sqrtf(-2 * dg_rand_logf(u1)) * (cos for the pair's
 *       first element, sin for its second, of dg_rand_sincosf(u2));
 *       (float)a + (float)b * z.  Everything in IEEE single operations (+, -,
 *       *, /, sqrtf, int <-> float conversions), each rounded to nearest
 *       even, written out below: no library call, so that the CPU and the GPU
 *       compute the same bits.  Measured against double references over
 *       every possible input: log within 0.85 ulp, sqrt(-2 log u1) 0.98 ulp,
 *       sin(pi x / 2) 0.74 ulp and cos(pi x / 2) 1.12 ulp of the reduced
 *       angle, z within 2.9 ulp of sqrt(-2 log u1) * cos (sin) of 2 pi u2 in
 *       double (the worst of 1.5e7 pairs: the 600 worst radii and angles
 *       and random ones, each with each).
 *   integers: Lemire's multiply-shift with rejection ("Fast random integer
 *       generation in an interval", 2019), unbiased: the top half of
 *       x * range, redrawn (attempt + 1) while the low half is below
 *       2^w mod range; 32-bit products for dtypes of at most 4 bytes.
 *
 * Uniforms, integers and float32 normals are integer arithmetic and single
 * IEEE operations (no contraction: gcc -ffp-contract=off, nvcc --fmad=false),
 * identical on CPU and GPU.  Float64 normals call log, sqrt, sin and cos: the
 * GPU's double functions are within 1-2 ulp of glibc's, so float64 normals
 * may differ by a few ulp between backends.
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

/* log(k * 2^-24) for k in [1, 2^24], in IEEE single operations: u = m * 2^e
 * with m in [0x1.6a09e6p-1, 2 * 0x1.6a09e6p-1) (about [sqrt(1/2), sqrt(2)),
 * split on the bits of (float)k), f = m - 1
 * (exact), s = f / (2 + f), log m = 2 atanh s = f - f^2/2 + s (f^2/2 + R(s^2)),
 * R(z) = z (L0 + z (L1 + z L2)) a fit of 2 atanh(s) / s - 2 of relative error
 * 2.8e-7 (Lawson's minimax on s^2 in [0, 0.0295]), e ln 2 with ln 2 in two
 * parts (e * LN2_HI exact).  Within 0.85 ulp of log over every k (measured
 * against double). */
#define DG_RN_LN2_HI 0x1.62e4p-1f     /* ln 2 on 17 bits */
#define DG_RN_LN2_LO 0x1.7f7d1cp-20f  /* ln 2 - LN2_HI */
#define DG_RN_L0 0x1.55555cp-1f
#define DG_RN_L1 0x1.997c24p-2f
#define DG_RN_L2 0x1.2ee788p-2f

DG_HD float dg_rand_logf(uint32_t k)
{
    const float u = (float)k;
    uint32_t b, t;
    float m, f, hfsq, s, z, R, e;
    memcpy(&b, &u, 4);
    /* b - bits(0x1.6a09e6p-1) + (128 - 24) << 23: e + 128 above bit 23, m's
     * mantissa (less that of 0x1.6a09e6p-1) below */
    t = b - 0x0b3504f3u;
    b = (t & 0x7fffffu) + 0x3f3504f3u;
    memcpy(&m, &b, 4);
    e = (float)((int32_t)(t >> 23) - 128);
    f = m - 1.0f;
    hfsq = 0.5f * f * f;
    s = f / (2.0f + f);
    z = s * s;
    R = z * (DG_RN_L0 + z * (DG_RN_L1 + z * DG_RN_L2));
    return e * DG_RN_LN2_HI - ((hfsq - (s * (hfsq + R) + e * DG_RN_LN2_LO)) - f);
}

/* cos and sin of 2 pi k 2^-24 for k in [0, 2^24), in IEEE single
 * operations: the quadrant q = round(k / 2^22) (halves up) and the rest
 * x = k / 2^22 - q in [-1/2, 1/2) exactly; sin(pi x / 2) =
 * 1.5 x + x (S0 + t (S1 + t (S2 + t S3))) (1.5 x exact: the leading
 * coefficient's error away) and cos(pi x / 2) = 1 + t (C0 + t (C1 + t (C2 +
 * t C3))), t = x^2, fits of relative (sin) and absolute (cos) error 3.2e-9
 * and 6.4e-11 (Lawson's minimax, then each coefficient moved by a few ulp
 * to the smallest measured error); then the quadrant's rotation.  sin(pi x / 2)
 * within 0.74 ulp, cos(pi x / 2) within 1.12 ulp over every x (measured
 * against double). */
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
    const uint32_t q = (k + (1u << 21)) >> 22;
    const float x = (float)((int32_t)k - (int32_t)(q << 22)) * 0x1p-22f;
    const float t = x * x;
    const float sn = x * 1.5f + x * (DG_RN_S0 + t * (DG_RN_S1 + t * (DG_RN_S2 + t * DG_RN_S3)));
    const float cs = 1.0f + t * (DG_RN_C0 + t * (DG_RN_C1 + t * (DG_RN_C2 + t * DG_RN_C3)));
    /* (cos, sin) in quadrant q & 3 = 0, 1, 2, 3: (cs, sn), (-sn, cs),
     * (-cs, -sn), (sn, -cs) */
    const float c = (q & 1) ? sn : cs, s = (q & 1) ? cs : sn;
    *out_c = (q + 1) & 2 ? -c : c;
    *out_s = q & 2 ? -s : s;
}

/* A block's standard normals: float64 (rad, c, s: the first element takes
 * rad * c, the second rad * s; a GPU computes both with one sincos, its
 * double functions within 1-2 ulp of glibc's either way) or float32 (f, the
 * block's four). */
typedef struct dg_rand_polar {
    double rad, c, s;
    float f[4];
} dg_rand_polar;

DG_HD dg_rand_polar dg_rand_normals(dg_u32x4 w, int isz)
{
    dg_rand_polar p;
    if (isz == 4) {
        int k;
        p.rad = p.c = p.s = 0.0;
        for (k = 0; k < 2; k++) {
            const float r = sqrtf(-2.0f * dg_rand_logf((dg_rand_word(w, 2 * k) >> 8) + 1));
            float c, s;
            dg_rand_sincosf(dg_rand_word(w, 2 * k + 1) >> 8, &c, &s);
            p.f[2 * k] = r * c;
            p.f[2 * k + 1] = r * s;
        }
        return p;
    }
    {
        const double u1 = (double)((dg_rand_word64(w, 0) >> 11) + 1) * 0x1p-53;
        const double u2 = (double)(dg_rand_word64(w, 1) >> 11) * 0x1p-53;
        const double th = (2.0 * DG_PI) * u2;
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
        const float v = (float)r->a + (float)r->b * pr.f[flat & 3];
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
    dg_rand_polar pr = {0.0, 0.0, 0.0, {0.0f, 0.0f, 0.0f, 0.0f}};
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
