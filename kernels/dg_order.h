/* NumPy's sort order, for the searches and counts of the CPU backend
 * (src/backend/cpu/cpu_surface.c) and the CUDA kernels (kernels/surface.cu):
 * one definition compiled by both, so that both backends find the same
 * positions and the same bins.
 *
 * dg_order_less_<t>(a, b): a sorts before b.  Real dtypes: a < b with NaN
 * after every number (-0.0 and 0.0 equal).  Complex: by class first (no NaN
 * part, NaN imaginary part, NaN real part, both NaN), then by the parts that
 * are numbers, real before imaginary: NumPy's order of complex values.
 *
 * dg_order_key_<t>(a) (bool, integer and float dtypes): an unsigned integer
 * of the dtype's width, in a uint64_t, whose order is that order and which
 * is equal for equal values (every NaN all ones, -0.0 as 0.0); the key of a
 * float's bits keeps the sign bit set for non-negative numbers and flips
 * every bit of negative ones.  dg_order_key_bits(dtype) is that width. */
#ifndef DG_ORDER_H
#define DG_ORDER_H

#include <string.h>

#include "dg_scalar.h"

#define DG_ORDER_REAL(t, ct)                                                    \
    DG_HD int dg_order_less_##t(ct a, ct b)                                     \
    {                                                                           \
        return (!dg_isnan_##t(a) && dg_isnan_##t(b)) || dg_less_##t(a, b);      \
    }
DG_ORDER_REAL(b1, dg_bool)
DG_ORDER_REAL(i1, int8_t)
DG_ORDER_REAL(u1, uint8_t)
DG_ORDER_REAL(i2, int16_t)
DG_ORDER_REAL(u2, uint16_t)
DG_ORDER_REAL(i4, int32_t)
DG_ORDER_REAL(u4, uint32_t)
DG_ORDER_REAL(i8, int64_t)
DG_ORDER_REAL(u8, uint64_t)
DG_ORDER_REAL(f2, dg_half)
DG_ORDER_REAL(f4, float)
DG_ORDER_REAL(f8, double)

#define DG_ORDER_CPLX(t, ct, p)                                                 \
    DG_HD int dg_order_class_##t(ct a)                                          \
    {                                                                           \
        return 2 * (int)dg_isnan_##p(a.re) + (int)dg_isnan_##p(a.im);           \
    }                                                                           \
    DG_HD int dg_order_less_##t(ct a, ct b)                                     \
    {                                                                           \
        const int ca = dg_order_class_##t(a), cb = dg_order_class_##t(b);       \
        if (ca != cb)                                                           \
            return ca < cb;                                                     \
        switch (ca) {                                                           \
        case 0: return a.re < b.re || (a.re == b.re && a.im < b.im);            \
        case 1: return a.re < b.re;                                             \
        case 2: return a.im < b.im;                                             \
        default: return 0;                                                      \
        }                                                                       \
    }
DG_ORDER_CPLX(c8, dg_c64, f)
DG_ORDER_CPLX(c16, dg_c128, d)

/* The key of float bits b of width w (exponent mask em, mantissa mask mm). */
DG_HD uint64_t dg_order_fkey(uint64_t b, int w, uint64_t em, uint64_t mm)
{
    const uint64_t sign = (uint64_t)1 << (w - 1);
    const uint64_t all = w == 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
    if ((b & em) == em && (b & mm))
        return all;
    if (b == sign)
        b = 0;
    return (b & sign) ? (~b & all) : (b | sign);
}

DG_HD uint64_t dg_order_key_b1(dg_bool a) { return a != 0; }
DG_HD uint64_t dg_order_key_u1(uint8_t a) { return a; }
DG_HD uint64_t dg_order_key_u2(uint16_t a) { return a; }
DG_HD uint64_t dg_order_key_u4(uint32_t a) { return a; }
DG_HD uint64_t dg_order_key_u8(uint64_t a) { return a; }
DG_HD uint64_t dg_order_key_i1(int8_t a) { return (uint8_t)((uint8_t)a ^ 0x80u); }
DG_HD uint64_t dg_order_key_i2(int16_t a) { return (uint16_t)((uint16_t)a ^ 0x8000u); }
DG_HD uint64_t dg_order_key_i4(int32_t a) { return (uint32_t)a ^ 0x80000000u; }
DG_HD uint64_t dg_order_key_i8(int64_t a) { return (uint64_t)a ^ ((uint64_t)1 << 63); }
DG_HD uint64_t dg_order_key_f2(dg_half a) { return dg_order_fkey(a, 16, 0x7C00u, 0x03FFu); }
/* float32's key in 32-bit arithmetic without branches (dg_order_fkey's,
 * every bit pattern checked on the host): the radix counts find a key for
 * each of 2^28 elements at the memory's speed.  The two cases are masks,
 * not conditional expressions: gcc (12, -O3) made `m ? b : 0` and
 * `m > inf ? ~0 : k` two branches, every number that is neither 0 nor NaN
 * jumping out of the CPU loop to the key's last two instructions and back,
 * and those loops then ran at the speed their code's placement allowed
 * (cpu_keys.h). */
DG_HD uint64_t dg_order_key_f4(float a)
{
    const uint32_t b = dg_f4_bits(a), m = b & 0x7FFFFFFFu;
    const uint32_t z = b & (0u - (uint32_t)(m != 0u)); /* -0.0 as 0.0 */
    const uint32_t k = z ^ ((0u - (z >> 31)) | 0x80000000u);
    return k | (0u - (uint32_t)(m > 0x7F800000u)); /* every NaN all ones */
}
DG_HD uint64_t dg_order_key_f8(double a)
{
    return dg_order_fkey(dg_f8_bits(a), 64, (uint64_t)0x7FF << 52,
                         ((uint64_t)1 << 52) - 1);
}

/* The width in bits of the keys of `dtype`; 0 where there are none (complex). */
DG_HD int dg_order_key_bits(int dtype)
{
    switch (dtype) {
    case DG_BOOL: case DG_INT8: case DG_UINT8: return 8;
    case DG_INT16: case DG_UINT16: case DG_FLOAT16: return 16;
    case DG_INT32: case DG_UINT32: case DG_FLOAT32: return 32;
    case DG_INT64: case DG_UINT64: case DG_FLOAT64: return 64;
    default: return 0;
    }
}

/* A test of a key's prefix, (key >> pshift) - lo <= span in 64 bits (the
 * keys under prefixes lo .. lo + span; span 0: prefix lo), in 32-bit
 * arithmetic for keys of at most 32 bits: gcc vectorises the CPU loops'
 * tests of a block of them (neither SSE2 nor AVX2 has a 64-bit unsigned
 * compare; cpu_keys.h).
 * dg_order_narrow(bits, pshift, lo, span, t) fills t so that
 * ((uint32_t)key >> t->ps) - t->lo <= t->span is that test for every key of
 * `bits` <= 32 bits: ps pshift, lo the same where it fits, span cut to the
 * largest prefix less lo (a prefix below lo, wrapping around, stays above
 * it); where pshift is past the key's width every prefix is 0, and then
 * every key passes (ps 0, lo 0, span all ones) where 0 is under the
 * prefixes.  Returns 0 where no key passes (and t is of no use). */
typedef struct dg_order_test {
    int ps;
    uint32_t lo, span;
} dg_order_test;

DG_HD int dg_order_narrow(int bits, int pshift, uint64_t lo, uint64_t span, dg_order_test *t)
{
    const uint64_t top = bits >= 32 ? 0xFFFFFFFFu : ((uint64_t)1 << bits) - 1;
    t->ps = 0;
    t->lo = 0;
    t->span = 0xFFFFFFFFu;
    if (pshift >= bits)
        return 0 - lo <= span;
    if (lo > (top >> pshift))
        return 0;
    t->ps = pshift;
    t->lo = (uint32_t)lo;
    t->span = (uint32_t)(span < 0xFFFFFFFFu - lo ? span : 0xFFFFFFFFu - lo);
    return 1;
}

/* The real dtypes, with their key functions: X(ENUM, sfx, ctype). */
#define DG_ORDER_KEYED(X)                                                       \
    X(BOOL, b1, dg_bool) X(INT8, i1, int8_t) X(UINT8, u1, uint8_t)              \
    X(INT16, i2, int16_t) X(UINT16, u2, uint16_t) X(INT32, i4, int32_t)         \
    X(UINT32, u4, uint32_t) X(INT64, i8, int64_t) X(UINT64, u8, uint64_t)       \
    X(FLOAT16, f2, dg_half) X(FLOAT32, f4, float) X(FLOAT64, f8, double)

/* The key of the element of `dtype` at p (read at any alignment); 0 for a
 * dtype without keys (dg_order_key_bits 0). */
DG_HD uint64_t dg_order_key_at(int dtype, const void *p)
{
    switch (dtype) {
#define DG_ORDER_KEY_CASE(E, t, ct)                                             \
    case DG_##E: {                                                              \
        ct v;                                                                   \
        memcpy(&v, p, sizeof v);                                                \
        return dg_order_key_##t(v);                                             \
    }
        DG_ORDER_KEYED(DG_ORDER_KEY_CASE)
#undef DG_ORDER_KEY_CASE
    default:
        return 0;
    }
}

/* The ranks about quantile q (0 <= q <= 1) among the m keys counted
 * outside a count's last bin (a float's NaNs, all in the last bin of the
 * first digit: the ranks of a NaN-skipping median or quantile whose NaNs
 * the host has not counted yet): r[0] = floor((m - 1) q), 0 where below,
 * and r[1] the one after it, at most m - 1 (0 for m 0).  Both backends
 * find the same (dg_select_desc.rest). */
DG_HD void dg_order_rest_ranks(int64_t m, double q, int64_t r[2])
{
    const double v = floor((double)(m - 1) * q);
    r[0] = v > 0 ? (int64_t)v : 0;
    r[1] = r[0] + 1 < m ? r[0] + 1 : (m > 0 ? m - 1 : 0);
}

#endif /* DG_ORDER_H */
