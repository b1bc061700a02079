/* The scalar math of every elementwise loop, shared by the CPU loops and the
 * CUDA kernels.
 *
 * One function per loop of DG_LOOP_LIST (src/core/dg_loops.h), named there:
 * dg_<ufunc>_<suffix>, dg_cast_<from>_<to>.  Each computes exactly what
 * NumPy 2's loop of that signature computes (same algorithm, same order of
 * floating-point operations), so that results are bit-identical where NumPy
 * itself uses IEEE operations or the C math library, and within a few ulp for
 * the complex transcendental functions, which are written here in terms of
 * real math functions (NumPy calls the platform's C99 complex functions).
 *
 * This header compiles as C11 (gcc -std=c11, included by the CPU backend) and
 * as CUDA C++ (nvcc, included by kernels/ *.cu): it uses only what both
 * languages share.  Functions are DG_HD: `static inline` (always inlined) in
 * C, `__host__ __device__ __forceinline__` under nvcc.  Build flags must keep
 * IEEE semantics: no -ffast-math, and no contraction of a * b + c into a
 * fused multiply-add (gcc -ffp-contract=off, nvcc --fmad=false): where NumPy
 * fuses (complex multiply and absolute), the code says fma explicitly.  With
 * those flags every loop but the transcendental ones gives the same bits on
 * the CPU and on the GPU.
 *
 * Where NumPy cannot be matched:
 *   - power of signed integers with a negative exponent: NumPy raises
 *     ValueError before running the loop.  A loop cannot raise; it returns
 *     what NumPy's squaring loop computes for such an exponent: the base if the
 *     exponent is odd, 1 if even (1 when the base is 1).  The caller is
 *     expected to check exponents first if it wants NumPy's error.
 *   - floating-point warnings (divide by zero, overflow, invalid) are not
 *     reported: the values are NumPy's, the FP status flags are not looked at.
 *   - float -> integer casts of NaN, inf or out-of-range values give a fixed
 *     value (INT32_MIN / INT64_MIN patterns as x86 does, see dg_i4_of_d), not
 *     C's undefined behaviour; NumPy's results for those are platform noise.
 *   - the sign of a zero result of maximum/minimum/fmax/fmin of +0 and -0:
 *     NumPy's own result depends on the code path (SIMD or not); these return
 *     the second operand for float32/float64 (NumPy's contiguous path) and the
 *     first for float16 (NumPy's half loop).
 *   - complex multiply, square and absolute fuse as NumPy's SIMD loops do on
 *     CPUs with FMA (x86-64 with AVX2/AVX-512, arm64); a NumPy built without
 *     FMA rounds the products separately (1 ulp apart).
 *   - complex arcsin, arccos, arctan and their hyperbolic forms are Hull et
 *     al.'s algorithms, within about 4 ulp of glibc's (both a few ulp from
 *     the exact value, in different places); complex64 ones are computed in
 *     double.  The other complex functions match glibc bit for bit on the CPU.
 *   - real transcendental functions are the C library's: NumPy's SIMD
 *     versions (float32 sin, exp, log, ...; SVML for float64 on AVX-512)
 *     differ by a few ulp. */
#ifndef DG_SCALAR_H
#define DG_SCALAR_H

#include <math.h>
#include <stdint.h>
#if !defined(__CUDA_ARCH__)
#include <string.h>
#endif
#include "../src/core/dg_dtype.h"
#include "../src/core/dg_loops.h"

/* The parts of this file a includer can do without.  A kernel compiled at run
 * time (dg_fused_src.c) defines DG_SCALAR_PARTS, the DG_SP_* parts its loops
 * call, because parsing the others is most of NVRTC's time; everything else
 * gets every part.  float32/float64, bool and the helpers are always there. */
#define DG_SP_INT 1  /* integer loops */
#define DG_SP_HALF 2 /* float16 loops */
#define DG_SP_CPX 4  /* complex loops */
#define DG_SP_CAST 8 /* casts between any two dtypes (need every other part) */
#define DG_SP_ARG 16 /* argmax / argmin orders */
#ifndef DG_SCALAR_PARTS
#define DG_SCALAR_PARTS 31
#endif
#define DG_SP(part) ((DG_SCALAR_PARTS) & DG_SP_##part)

/* Always inlined: a struct-returning complex function left out of line costs
 * several times its arithmetic in the CPU loops. */
#if defined(__CUDACC__)
#define DG_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define DG_HD static inline __attribute__((always_inline))
#else
#define DG_HD static inline
#endif

/* =========================================================================
 * Bits, constants, classification
 * ========================================================================= */

DG_HD uint32_t dg_f4_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

DG_HD float dg_f4_from_bits(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

DG_HD uint64_t dg_f8_bits(double x)
{
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

DG_HD float dg_inf_f(void) { return HUGE_VALF; }
DG_HD double dg_inf_d(void) { return HUGE_VAL; }
DG_HD float dg_nan_f(void) { return NAN; }
DG_HD double dg_nan_d(void) { return (double)NAN; }

/* Classification by comparisons only: exact without -ffast-math, the same
 * in C and CUDA, and vectorisable. */
DG_HD int dg_isnan_f(float x) { return x != x; }
DG_HD int dg_isnan_d(double x) { return x != x; }
DG_HD int dg_isinf_f(float x) { return fabsf(x) == HUGE_VALF; }
DG_HD int dg_isinf_d(double x) { return fabs(x) == HUGE_VAL; }
DG_HD int dg_isfinite_f(float x) { return fabsf(x) < HUGE_VALF; }
DG_HD int dg_isfinite_d(double x) { return fabs(x) < HUGE_VAL; }
DG_HD int dg_signbit_f(float x) { return (int)(dg_f4_bits(x) >> 31); }
DG_HD int dg_signbit_d(double x) { return (int)(dg_f8_bits(x) >> 63); }

#define DG_PI 3.14159265358979323846
#define DG_LN2 0.693147180559945309417232121458176568
#define DG_LOG2E 1.442695040888963407359924681001892137
#define DG_LOG10E 0.434294481903251827651128918916605082

/* Bits set in v (v >= 0 as unsigned). */
DG_HD uint8_t dg_popcount64(uint64_t v)
{
#if defined(__CUDA_ARCH__)
    return (uint8_t)__popcll(v);
#else
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (uint8_t)((v * 0x0101010101010101ull) >> 56);
#endif
}

/* =========================================================================
 * float16: IEEE binary16 bit patterns, converted with round-to-nearest-even
 * (NumPy's npy_half_to_float / npy_float_to_half / npy_double_to_half: NaN
 * payloads keep their top bits, a NaN never becomes inf).
 * ========================================================================= */

DG_HD float dg_half_to_float(dg_half h)
{
    uint32_t sgn = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu;
    uint32_t m = h & 0x3ffu;
    if (e == 0) {
        /* zero or subnormal: m * 2^-24 is exact in float */
        float v = (float)m * 5.9604644775390625e-8f;
        return sgn ? -v : v;
    }
    if (e == 31)
        return dg_f4_from_bits(sgn | 0x7f800000u | (m << 13));
    return dg_f4_from_bits(sgn | ((e + 112u) << 23) | (m << 13));
}

/* Rounds sig >> shift to nearest, ties to even (shift 1..63). */
DG_HD uint64_t dg_rne_shift(uint64_t sig, int shift)
{
    uint64_t q = sig >> shift;
    uint64_t rem = sig & ((1ull << shift) - 1u);
    uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return q;
}

DG_HD dg_half dg_float_to_half(float f)
{
    uint32_t u = dg_f4_bits(f);
    uint16_t sgn = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t e = (u >> 23) & 0xffu;
    uint32_t m = u & 0x7fffffu;
    if (e == 255) {
        if (m == 0)
            return (dg_half)(sgn | 0x7c00u);
        uint16_t r = (uint16_t)(0x7c00u + (m >> 13));
        if (r == 0x7c00u)
            r++;
        return (dg_half)(sgn | r);
    }
    if (e >= 143) /* >= 2^16: overflow */
        return (dg_half)(sgn | 0x7c00u);
    if (e >= 113) /* normal half; a carry may round up to inf */
        return (dg_half)(sgn + (((e - 112u) << 10) + (uint32_t)dg_rne_shift(m, 13)));
    if (e < 102) /* < 2^-25: rounds to zero */
        return sgn;
    /* subnormal half: units of 2^-24 */
    return (dg_half)(sgn | (uint32_t)dg_rne_shift(m | 0x800000u, (int)(126 - e)));
}

DG_HD dg_half dg_double_to_half(double d)
{
    uint64_t u = dg_f8_bits(d);
    uint16_t sgn = (uint16_t)((u >> 48) & 0x8000u);
    uint32_t e = (uint32_t)((u >> 52) & 0x7ffu);
    uint64_t m = u & 0xfffffffffffffull;
    if (e == 2047) {
        if (m == 0)
            return (dg_half)(sgn | 0x7c00u);
        uint16_t r = (uint16_t)(0x7c00u + (m >> 42));
        if (r == 0x7c00u)
            r++;
        return (dg_half)(sgn | r);
    }
    if (e >= 1039)
        return (dg_half)(sgn | 0x7c00u);
    if (e >= 1009)
        return (dg_half)(sgn + (((e - 1008u) << 10) + (uint32_t)dg_rne_shift(m, 42)));
    if (e < 998)
        return sgn;
    return (dg_half)(sgn | (uint32_t)dg_rne_shift(m | (1ull << 52), (int)(1051 - e)));
}

DG_HD int dg_half_isnan(dg_half h) { return (h & 0x7fffu) > 0x7c00u; }

/* =========================================================================
 * Float -> integer conversions.  C leaves NaN, inf and out-of-range values
 * undefined; these give what x86 gives (and NumPy there): the "integer
 * indefinite" value INT32_MIN / INT64_MIN.  Types narrower than 32 bits take
 * the low bits of the int32 conversion, as compiled C does on x86-64.
 * ========================================================================= */

DG_HD int32_t dg_d_to_i32(double x)
{
    return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}

DG_HD int64_t dg_d_to_i64(double x)
{
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0)
               ? (int64_t)x : INT64_MIN;
}

/* Unsigned from signed conversion as compilers emit it: values >= 2^(n-1)
 * are shifted down by 2^(n-1) first (out of range there gives 0). */
DG_HD uint64_t dg_d_to_u64(double x)
{
    if (x >= 9223372036854775808.0)
        return (uint64_t)dg_d_to_i64(x - 9223372036854775808.0) ^ 0x8000000000000000ull;
    return (uint64_t)dg_d_to_i64(x);
}

DG_HD uint32_t dg_d_to_u32(double x)
{
    if (x >= 2147483648.0)
        return (uint32_t)dg_d_to_i32(x - 2147483648.0) ^ 0x80000000u;
    return (uint32_t)dg_d_to_i32(x);
}

DG_HD int8_t dg_i1_of_d(double x) { return (int8_t)dg_d_to_i32(x); }
DG_HD uint8_t dg_u1_of_d(double x) { return (uint8_t)dg_d_to_i32(x); }
DG_HD int16_t dg_i2_of_d(double x) { return (int16_t)dg_d_to_i32(x); }
DG_HD uint16_t dg_u2_of_d(double x) { return (uint16_t)dg_d_to_i32(x); }
DG_HD int32_t dg_i4_of_d(double x) { return dg_d_to_i32(x); }
DG_HD uint32_t dg_u4_of_d(double x) { return dg_d_to_u32(x); }
DG_HD int64_t dg_i8_of_d(double x) { return dg_d_to_i64(x); }
DG_HD uint64_t dg_u8_of_d(double x) { return dg_d_to_u64(x); }

/* =========================================================================
 * Complex helpers
 * ========================================================================= */

DG_HD dg_c64 dg_c8_mk(float re, float im)
{
    dg_c64 z;
    z.re = re;
    z.im = im;
    return z;
}

DG_HD dg_c128 dg_c16_mk(double re, double im)
{
    dg_c128 z;
    z.re = re;
    z.im = im;
    return z;
}

DG_HD dg_c128 dg_c8_widen(dg_c64 z) { return dg_c16_mk((double)z.re, (double)z.im); }
DG_HD dg_c64 dg_c16_narrow(dg_c128 z) { return dg_c8_mk((float)z.re, (float)z.im); }

/* =========================================================================
 * Boolean loops (NumPy: add is or, multiply is and, invert is not)
 * ========================================================================= */

DG_HD dg_bool dg_add_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) | (b != 0)); }
DG_HD dg_bool dg_multiply_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) & (b != 0)); }
DG_HD dg_bool dg_absolute_b1(dg_bool a) { return (dg_bool)(a != 0); }
DG_HD dg_bool dg_floor_b1(dg_bool a) { return (dg_bool)(a != 0); }
DG_HD dg_bool dg_ceil_b1(dg_bool a) { return (dg_bool)(a != 0); }
DG_HD dg_bool dg_trunc_b1(dg_bool a) { return (dg_bool)(a != 0); }
DG_HD dg_bool dg_maximum_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) | (b != 0)); }
DG_HD dg_bool dg_minimum_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) & (b != 0)); }
DG_HD dg_bool dg_fmax_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) | (b != 0)); }
DG_HD dg_bool dg_fmin_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) & (b != 0)); }
DG_HD dg_bool dg_bitwise_and_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) & (b != 0)); }
DG_HD dg_bool dg_bitwise_or_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) | (b != 0)); }
DG_HD dg_bool dg_bitwise_xor_b1(dg_bool a, dg_bool b) { return (dg_bool)((a != 0) ^ (b != 0)); }
DG_HD dg_bool dg_invert_b1(dg_bool a) { return (dg_bool)(a == 0); }

/* Comparisons and logical ops of one real (non-complex) dtype, with V(a) the
 * value compared (identity, truth of a bool, or float16 -> float). */
#define DG_REAL_CMP(S, T, V)                                                    \
    DG_HD dg_bool dg_greater_##S(T a, T b) { return (dg_bool)(V(a) > V(b)); }    \
    DG_HD dg_bool dg_greater_equal_##S(T a, T b) { return (dg_bool)(V(a) >= V(b)); } \
    DG_HD dg_bool dg_less_##S(T a, T b) { return (dg_bool)(V(a) < V(b)); }       \
    DG_HD dg_bool dg_less_equal_##S(T a, T b) { return (dg_bool)(V(a) <= V(b)); } \
    DG_HD dg_bool dg_equal_##S(T a, T b) { return (dg_bool)(V(a) == V(b)); }     \
    DG_HD dg_bool dg_not_equal_##S(T a, T b) { return (dg_bool)(V(a) != V(b)); } \
    DG_HD dg_bool dg_logical_and_##S(T a, T b)                                  \
    { return (dg_bool)((V(a) != 0) & (V(b) != 0)); }                            \
    DG_HD dg_bool dg_logical_or_##S(T a, T b)                                   \
    { return (dg_bool)((V(a) != 0) | (V(b) != 0)); }                            \
    DG_HD dg_bool dg_logical_xor_##S(T a, T b)                                  \
    { return (dg_bool)((V(a) != 0) ^ (V(b) != 0)); }                            \
    DG_HD dg_bool dg_logical_not_##S(T a) { return (dg_bool)(V(a) == 0); }

#define DG_ID_(x) (x)
#define DG_BOOLV_(x) ((x) != 0)
DG_REAL_CMP(b1, dg_bool, DG_BOOLV_)

/* Integers and booleans are always finite. */
#define DG_INT_CLASSIFY(S, T)                                                   \
    DG_HD dg_bool dg_isfinite_##S(T a) { (void)a; return 1; }                   \
    DG_HD dg_bool dg_isinf_##S(T a) { (void)a; return 0; }                      \
    DG_HD dg_bool dg_isnan_##S(T a) { (void)a; return 0; }
DG_INT_CLASSIFY(b1, dg_bool)

/* =========================================================================
 * Integer loops.  Arithmetic wraps (done in the unsigned type W, at least
 * 32 bits wide, so nothing overflows a signed int); division by zero gives 0
 * as NumPy's loops do (NumPy also warns).
 *   S suffix, T type, W unsigned type used for wrapping arithmetic,
 *   BITS width, D2T conversion from double (reciprocal).
 * ========================================================================= */

#define DG_INT_COMMON(S, T, W, D2T)                                             \
    DG_HD T dg_add_##S(T a, T b) { return (T)((W)a + (W)b); }                   \
    DG_HD T dg_subtract_##S(T a, T b) { return (T)((W)a - (W)b); }              \
    DG_HD T dg_multiply_##S(T a, T b) { return (T)((W)a * (W)b); }              \
    DG_HD T dg_negative_##S(T a) { return (T)((W)0 - (W)a); }                   \
    DG_HD T dg_positive_##S(T a) { return a; }                                  \
    DG_HD T dg_conjugate_##S(T a) { return a; }                                 \
    DG_HD T dg_square_##S(T a) { return (T)((W)a * (W)a); }                     \
    /* NumPy: 1.0 / x in double, converted back (1/0 -> inf -> see D2T) */      \
    DG_HD T dg_reciprocal_##S(T a) { return D2T(1.0 / (double)a); }            \
    DG_HD T dg_floor_##S(T a) { return a; }                                     \
    DG_HD T dg_ceil_##S(T a) { return a; }                                      \
    DG_HD T dg_trunc_##S(T a) { return a; }                                     \
    DG_HD T dg_maximum_##S(T a, T b) { return a >= b ? a : b; }                 \
    DG_HD T dg_minimum_##S(T a, T b) { return a <= b ? a : b; }                 \
    DG_HD T dg_fmax_##S(T a, T b) { return a >= b ? a : b; }                    \
    DG_HD T dg_fmin_##S(T a, T b) { return a <= b ? a : b; }                    \
    DG_HD T dg_bitwise_and_##S(T a, T b) { return (T)(a & b); }                 \
    DG_HD T dg_bitwise_or_##S(T a, T b) { return (T)(a | b); }                  \
    DG_HD T dg_bitwise_xor_##S(T a, T b) { return (T)(a ^ b); }                 \
    DG_HD T dg_invert_##S(T a) { return (T)~a; }                                \
    /* Euclid on magnitudes (NumPy's npy_gcd: gcd(MIN, 0) wraps to MIN) */      \
    DG_HD W dg_gcdw_##S(W x, W y)                                               \
    {                                                                           \
        while (x != 0) {                                                        \
            W t = x;                                                            \
            x = y % x;                                                          \
            y = t;                                                              \
        }                                                                       \
        return y;                                                               \
    }                                                                           \
    DG_HD T dg_gcd_##S(T a, T b) { return (T)dg_gcdw_##S(dg_magw_##S(a), dg_magw_##S(b)); } \
    DG_HD T dg_lcm_##S(T a, T b)                                                \
    {                                                                           \
        W x = dg_magw_##S(a), y = dg_magw_##S(b);                               \
        W g = dg_gcdw_##S(x, y);                                                \
        return g == 0 ? (T)0 : (T)(x / g * y);                                  \
    }                                                                           \
    DG_HD uint8_t dg_bitwise_count_##S(T a) { return dg_popcount64((uint64_t)dg_magw_##S(a)); } \
    DG_INT_CLASSIFY(S, T)                                                       \
    DG_REAL_CMP(S, T, DG_ID_)

#define DG_SINT(S, T, W, BITS, D2T)                                             \
    /* |a| as unsigned; |MIN| = 2^(BITS-1) */                                   \
    DG_HD W dg_magw_##S(T a) { return a < 0 ? (W)((W)0 - (W)a) : (W)a; }        \
    DG_HD T dg_absolute_##S(T a) { return a < 0 ? (T)((W)0 - (W)a) : a; }       \
    DG_HD T dg_sign_##S(T a) { return (T)((a > 0) - (a < 0)); }                 \
    /* Python's floor division; x // 0 = 0; MIN // -1 = MIN (wraps) */          \
    DG_HD T dg_floor_divide_##S(T a, T b)                                       \
    {                                                                           \
        if (b == 0)                                                             \
            return 0;                                                           \
        if (b == -1)                                                            \
            return (T)((W)0 - (W)a);                                            \
        T q = (T)(a / b);                                                       \
        if ((T)(a % b) != 0 && ((a < 0) != (b < 0)))                            \
            q = (T)(q - 1);                                                     \
        return q;                                                               \
    }                                                                           \
    /* Python's modulo (sign of b); x % 0 = 0 */                                \
    DG_HD T dg_remainder_##S(T a, T b)                                          \
    {                                                                           \
        if (b == 0 || b == -1)                                                  \
            return 0;                                                           \
        T r = (T)(a % b);                                                       \
        if (r != 0 && ((r < 0) != (b < 0)))                                     \
            r = (T)(r + b);                                                     \
        return r;                                                               \
    }                                                                           \
    DG_HD void dg_divmod_##S(T a, T b, T *q, T *r)                              \
    {                                                                           \
        *q = dg_floor_divide_##S(a, b);                                         \
        *r = dg_remainder_##S(a, b);                                            \
    }                                                                           \
    /* C's %, sign of a; x fmod 0 = 0 */                                        \
    DG_HD T dg_fmod_##S(T a, T b)                                               \
    {                                                                           \
        return (b == 0 || b == -1) ? (T)0 : (T)(a % b);                         \
    }                                                                           \
    /* NumPy's squaring loop.  NumPy raises for b < 0; see the file comment. */ \
    DG_HD T dg_power_##S(T a, T b)                                              \
    {                                                                           \
        if (b == 0 || a == 1)                                                   \
            return 1;                                                           \
        if (b < 0)                                                              \
            return (b & 1) ? a : (T)1;                                          \
        W base = (W)a, out = (b & 1) ? (W)a : (W)1;                             \
        for (T e = (T)(b >> 1); e > 0; e = (T)(e >> 1)) {                       \
            base *= base;                                                       \
            if (e & 1)                                                          \
                out *= base;                                                    \
        }                                                                       \
        return (T)out;                                                          \
    }                                                                           \
    /* counts outside [0, BITS) shift everything out (NumPy) */                 \
    DG_HD T dg_left_shift_##S(T a, T b)                                         \
    {                                                                           \
        return (b >= 0 && b < BITS) ? (T)((W)a << b) : (T)0;                    \
    }                                                                           \
    DG_HD T dg_right_shift_##S(T a, T b)                                        \
    {                                                                           \
        if (b >= 0 && b < BITS)                                                 \
            return (T)(a >> b);                                                 \
        return a < 0 ? (T)-1 : (T)0;                                            \
    }                                                                           \
    DG_INT_COMMON(S, T, W, D2T)

#define DG_UINT(S, T, W, BITS, D2T)                                             \
    DG_HD W dg_magw_##S(T a) { return (W)a; }                                   \
    DG_HD T dg_absolute_##S(T a) { return a; }                                  \
    DG_HD T dg_sign_##S(T a) { return (T)(a > 0); }                             \
    DG_HD T dg_floor_divide_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \
    DG_HD T dg_remainder_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }   \
    DG_HD T dg_fmod_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }        \
    DG_HD void dg_divmod_##S(T a, T b, T *q, T *r)                              \
    {                                                                           \
        *q = dg_floor_divide_##S(a, b);                                         \
        *r = dg_remainder_##S(a, b);                                            \
    }                                                                           \
    DG_HD T dg_power_##S(T a, T b)                                              \
    {                                                                           \
        if (b == 0 || a == 1)                                                   \
            return 1;                                                           \
        W base = (W)a, out = (b & 1) ? (W)a : (W)1;                             \
        for (T e = (T)(b >> 1); e > 0; e = (T)(e >> 1)) {                       \
            base *= base;                                                       \
            if (e & 1)                                                          \
                out *= base;                                                    \
        }                                                                       \
        return (T)out;                                                          \
    }                                                                           \
    DG_HD T dg_left_shift_##S(T a, T b) { return b < BITS ? (T)((W)a << b) : (T)0; } \
    DG_HD T dg_right_shift_##S(T a, T b) { return b < BITS ? (T)(a >> b) : (T)0; } \
    DG_INT_COMMON(S, T, W, D2T)

#if DG_SP(INT)
DG_SINT(i1, int8_t, uint32_t, 8, dg_i1_of_d)
DG_UINT(u1, uint8_t, uint32_t, 8, dg_u1_of_d)
DG_SINT(i2, int16_t, uint32_t, 16, dg_i2_of_d)
DG_UINT(u2, uint16_t, uint32_t, 16, dg_u2_of_d)
DG_SINT(i4, int32_t, uint32_t, 32, dg_i4_of_d)
DG_UINT(u4, uint32_t, uint32_t, 32, dg_u4_of_d)
DG_SINT(i8, int64_t, uint64_t, 64, dg_i8_of_d)
DG_UINT(u8, uint64_t, uint64_t, 64, dg_u8_of_d)
#endif

/* NumPy's mixed int64/uint64 comparison loops: exact, no conversion. */
#define DG_MIXED_CMP(NAME, OP)                                                  \
    DG_HD dg_bool dg_##NAME##_i8u8(int64_t a, uint64_t b)                       \
    {                                                                           \
        return (dg_bool)(a < 0 ? (a OP 0) : ((uint64_t)a OP b));                \
    }                                                                           \
    DG_HD dg_bool dg_##NAME##_u8i8(uint64_t a, int64_t b)                       \
    {                                                                           \
        return (dg_bool)(b < 0 ? (0 OP b) : (a OP (uint64_t)b));                \
    }
#if DG_SP(INT)
DG_MIXED_CMP(greater, >)
DG_MIXED_CMP(greater_equal, >=)
DG_MIXED_CMP(less, <)
DG_MIXED_CMP(less_equal, <=)
DG_MIXED_CMP(equal, ==)
DG_MIXED_CMP(not_equal, !=)
#endif

/* =========================================================================
 * float32 / float64 loops.  S suffix, T type, F libm suffix (f or nothing),
 * FS suffix of the classification helpers (f, d).
 * ========================================================================= */

/* hypot as glibc computes it.  glibc's hypotf is correctly rounded (it works
 * in double) and its hypot is within 1 ulp (a square root corrected with
 * fma); CUDA's are within 1 and 2 ulp.  That gap is magnified where a result
 * is the log of a hypot near 1 (complex log1p, log, power), so the device
 * computes both as glibc does; the host calls the C library. */
DG_HD float dg_lm_hypotf(float a, float b)
{
#if defined(__CUDA_ARCH__)
    if (dg_isinf_f(a) || dg_isinf_f(b))
        return HUGE_VALF;
    double x = a, y = b;
    return (float)sqrt(x * x + y * y);
#else
    return hypotf(a, b);
#endif
}

/* hypot(x, y) for |x| >= |y| > 0, both finite: sqrt(x^2 + y^2) corrected by
 * the rounding errors of the squares and of the root, which fma gives
 * exactly (C. F. Borges, "An improved algorithm for hypot(a, b)", 2019);
 * operands scaled by a power of two out of the range where squares overflow
 * or lose bits. */
DG_HD double dg_hypot_corrected(double x, double y)
{
    double scale = 1.0;
    if (x > 0x1p+500) {
        x *= 0x1p-600;
        y *= 0x1p-600;
        scale = 0x1p+600;
    } else if (x < 0x1p-500) {
        x *= 0x1p+600;
        y *= 0x1p+600;
        scale = 0x1p-600;
    }
    double h = sqrt(fma(x, x, y * y));
    double h2 = h * h, x2 = x * x;
    double e = fma(-y, y, h2 - x2) + fma(h, h, -h2) - fma(x, x, -x2);
    return (h - e / (2.0 * h)) * scale;
}

DG_HD double dg_lm_hypot(double a, double b)
{
#if defined(__CUDA_ARCH__)
    double x = fabs(a), y = fabs(b);
    if (dg_isinf_d(x) || dg_isinf_d(y))
        return HUGE_VAL;
    if (x != x || y != y)
        return x + y;
    if (x < y) {
        double t = x;
        x = y;
        y = t;
    }
    if (y == 0)
        return x;
    return dg_hypot_corrected(x, y);
#else
    return hypot(a, b);
#endif
}

#define DG_FLT_UNARY_LIBM(S, T, F, NAME, FN)                                    \
    DG_HD T dg_##NAME##_##S(T a) { return FN##F(a); }

#define DG_FLT(S, T, F, FS)                                                     \
    DG_HD T dg_add_##S(T a, T b) { return a + b; }                              \
    DG_HD T dg_subtract_##S(T a, T b) { return a - b; }                         \
    DG_HD T dg_multiply_##S(T a, T b) { return a * b; }                         \
    DG_HD T dg_divide_##S(T a, T b) { return a / b; }                           \
    /* NumPy's npy_divmod: fmod based, Python's signs, quotient snapped */      \
    DG_HD T dg_divmod_impl_##S(T a, T b, T *modulus)                            \
    {                                                                           \
        T mod = fmod##F(a, b);                                                  \
        if (!b) {                                                               \
            *modulus = mod;                                                     \
            return a / b;                                                       \
        }                                                                       \
        T div = (a - mod) / b;                                                  \
        if (mod) {                                                              \
            if ((b < 0) != (mod < 0)) {                                         \
                mod += b;                                                       \
                div -= (T)1;                                                    \
            }                                                                   \
        } else {                                                                \
            mod = copysign##F((T)0, b);                                         \
        }                                                                       \
        T floordiv;                                                             \
        if (div) {                                                              \
            floordiv = floor##F(div);                                           \
            if (div - floordiv > (T)0.5)                                        \
                floordiv += (T)1;                                               \
        } else {                                                                \
            floordiv = copysign##F((T)0, a / b);                                \
        }                                                                       \
        *modulus = mod;                                                         \
        return floordiv;                                                        \
    }                                                                           \
    DG_HD T dg_floor_divide_##S(T a, T b)                                       \
    {                                                                           \
        T mod;                                                                  \
        if (!b)                                                                 \
            return a / b;                                                       \
        return dg_divmod_impl_##S(a, b, &mod);                                  \
    }                                                                           \
    DG_HD T dg_remainder_##S(T a, T b)                                          \
    {                                                                           \
        T mod;                                                                  \
        if (!b)                                                                 \
            return fmod##F(a, b);                                               \
        dg_divmod_impl_##S(a, b, &mod);                                         \
        return mod;                                                             \
    }                                                                           \
    DG_HD void dg_divmod_##S(T a, T b, T *q, T *r) { *q = dg_divmod_impl_##S(a, b, r); } \
    DG_HD T dg_fmod_##S(T a, T b) { return fmod##F(a, b); }                     \
    DG_HD T dg_power_##S(T a, T b) { return pow##F(a, b); }                     \
    DG_HD T dg_negative_##S(T a) { return -a; }                                 \
    DG_HD T dg_positive_##S(T a) { return +a; }                                 \
    DG_HD T dg_absolute_##S(T a) { return fabs##F(a); }                         \
    DG_HD T dg_fabs_##S(T a) { return fabs##F(a); }                             \
    /* NumPy 2: sign(-0.0) = 0.0, sign(nan) = nan */                            \
    DG_HD T dg_sign_##S(T a)                                                    \
    {                                                                           \
        return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (a == 0 ? (T)0 : a));            \
    }                                                                           \
    DG_HD T dg_conjugate_##S(T a) { return a; }                                 \
    DG_HD T dg_reciprocal_##S(T a) { return (T)1 / a; }                         \
    DG_HD T dg_square_##S(T a) { return a * a; }                                \
    DG_HD T dg_heaviside_##S(T a, T h0)                                         \
    {                                                                           \
        if (a != a)                                                             \
            return dg_nan_##FS();                                               \
        if (a == 0)                                                             \
            return h0;                                                          \
        return a < 0 ? (T)0 : (T)1;                                             \
    }                                                                           \
    DG_FLT_UNARY_LIBM(S, T, F, sqrt, sqrt)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, cbrt, cbrt)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, exp, exp)                                        \
    DG_FLT_UNARY_LIBM(S, T, F, exp2, exp2)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, expm1, expm1)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, log, log)                                        \
    DG_FLT_UNARY_LIBM(S, T, F, log2, log2)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, log10, log10)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, log1p, log1p)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, sin, sin)                                        \
    DG_FLT_UNARY_LIBM(S, T, F, cos, cos)                                        \
    DG_FLT_UNARY_LIBM(S, T, F, tan, tan)                                        \
    DG_FLT_UNARY_LIBM(S, T, F, arcsin, asin)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, arccos, acos)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, arctan, atan)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, sinh, sinh)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, cosh, cosh)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, tanh, tanh)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, arcsinh, asinh)                                  \
    DG_FLT_UNARY_LIBM(S, T, F, arccosh, acosh)                                  \
    DG_FLT_UNARY_LIBM(S, T, F, arctanh, atanh)                                  \
    DG_FLT_UNARY_LIBM(S, T, F, rint, rint)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, floor, floor)                                    \
    DG_FLT_UNARY_LIBM(S, T, F, ceil, ceil)                                      \
    DG_FLT_UNARY_LIBM(S, T, F, trunc, trunc)                                    \
    DG_HD T dg_arctan2_##S(T a, T b) { return atan2##F(a, b); }                 \
    DG_HD T dg_hypot_##S(T a, T b) { return dg_lm_hypot##F(a, b); }                   \
    DG_HD T dg_copysign_##S(T a, T b) { return copysign##F(a, b); }             \
    DG_HD T dg_nextafter_##S(T a, T b) { return nextafter##F(a, b); }           \
    /* npy_logaddexp / npy_logaddexp2 */                                        \
    DG_HD T dg_logaddexp_##S(T a, T b)                                          \
    {                                                                           \
        if (a == b)                                                             \
            return a + (T)DG_LN2;                                               \
        T t = a - b;                                                            \
        if (t > 0)                                                              \
            return a + log1p##F(exp##F(-t));                                    \
        if (t <= 0)                                                             \
            return b + log1p##F(exp##F(t));                                     \
        return t;                                                               \
    }                                                                           \
    DG_HD T dg_logaddexp2_##S(T a, T b)                                         \
    {                                                                           \
        if (a == b)                                                             \
            return a + (T)1;                                                    \
        T t = a - b;                                                            \
        if (t > 0)                                                              \
            return a + (T)DG_LOG2E * log1p##F(exp2##F(-t));                     \
        if (t <= 0)                                                             \
            return b + (T)DG_LOG2E * log1p##F(exp2##F(t));                      \
        return t;                                                               \
    }                                                                           \
    /* constants rounded to T first, as NumPy's (180.0f / NPY_PIf) */           \
    DG_HD T dg_degrees_##S(T a) { return a * ((T)180.0 / (T)DG_PI); }           \
    DG_HD T dg_rad2deg_##S(T a) { return a * ((T)180.0 / (T)DG_PI); }           \
    DG_HD T dg_radians_##S(T a) { return a * ((T)DG_PI / (T)180.0); }           \
    DG_HD T dg_deg2rad_##S(T a) { return a * ((T)DG_PI / (T)180.0); }           \
    DG_HD dg_bool dg_isfinite_##S(T a) { return (dg_bool)dg_isfinite_##FS(a); } \
    DG_HD dg_bool dg_isinf_##S(T a) { return (dg_bool)dg_isinf_##FS(a); }       \
    DG_HD dg_bool dg_isnan_##S(T a) { return (dg_bool)dg_isnan_##FS(a); }       \
    DG_HD dg_bool dg_signbit_##S(T a) { return (dg_bool)dg_signbit_##FS(a); }   \
    /* npy_spacing: ulp away from zero, +smallest subnormal at +-0 */          \
    DG_HD T dg_spacing_##S(T a)                                                 \
    {                                                                           \
        if (!dg_isfinite_##FS(a))                                               \
            return dg_nan_##FS();                                               \
        if (a == 0)                                                             \
            return nextafter##F((T)0, (T)1);                                    \
        return nextafter##F(a, copysign##F(dg_inf_##FS(), a)) - a;              \
    }                                                                           \
    DG_HD void dg_modf_##S(T a, T *frac, T *ipart) { *frac = modf##F(a, ipart); } \
    DG_HD void dg_frexp_##S(T a, T *mant, int32_t *ex)                          \
    {                                                                           \
        int e = 0;                                                              \
        if (!dg_isfinite_##FS(a) || a == 0) {                                   \
            *mant = a + a;                                                      \
            *ex = 0;                                                            \
            return;                                                             \
        }                                                                       \
        *mant = frexp##F(a, &e);                                                \
        *ex = (int32_t)e;                                                       \
    }                                                                           \
    DG_HD T dg_ldexp_##S##i4(T a, int32_t e) { return ldexp##F(a, (int)e); }     \
    /* exponents beyond int range saturate (NumPy's int64 loop) */              \
    DG_HD T dg_ldexp_##S##i8(T a, int64_t e)                                    \
    {                                                                           \
        int ie = e > 2147483647 ? 2147483647                                    \
                 : (e < -2147483647 - 1 ? -2147483647 - 1 : (int)e);            \
        return ldexp##F(a, ie);                                                 \
    }                                                                           \
    /* maximum/minimum propagate NaN (the first if both); fmax/fmin ignore it */ \
    DG_HD T dg_maximum_##S(T a, T b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); } \
    DG_HD T dg_minimum_##S(T a, T b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); } \
    DG_HD T dg_fmax_##S(T a, T b) { return b != b ? a : (a != a ? b : (a > b ? a : b)); } \
    DG_HD T dg_fmin_##S(T a, T b) { return b != b ? a : (a != a ? b : (a < b ? a : b)); } \
    DG_REAL_CMP(S, T, DG_ID_)

DG_FLT(f4, float, f, f)
DG_FLT(f8, double, , d)

/* NumPy's float32/float64 power loop, when the exponent is one broadcast
 * value (stride 0 or a scalar), computes 1/a, 1, sqrt(a), a, a*a for the
 * exponents -1, 0, 0.5, 1, 2 instead of pow: (-0.0) ** 0.5 is -0.0 and
 * (-inf) ** 0.5 is nan there.  Kernels call these on that path only. */
#define DG_POWER_SEXP(S, T, F)                                                  \
    DG_HD T dg_power_##S##_sexp(T a, T b)                                       \
    {                                                                           \
        if (b == -1)                                                            \
            return (T)1 / a;                                                    \
        if (b == 0)                                                             \
            return (T)1;                                                        \
        if (b == (T)0.5)                                                        \
            return sqrt##F(a);                                                  \
        if (b == 1)                                                             \
            return a;                                                           \
        if (b == 2)                                                             \
            return a * a;                                                       \
        return pow##F(a, b);                                                    \
    }
DG_POWER_SEXP(f4, float, f)
DG_POWER_SEXP(f8, double, )

DG_HD double dg_float_power_f8(double a, double b) { return pow(a, b); }

/* =========================================================================
 * float16 loops: arithmetic and math in float32, rounded back (NumPy's half
 * loops); sign, copysign, nextafter, spacing, classification on the bits.
 * ========================================================================= */

#if DG_SP(HALF)
#define DG_HALF_VIA_F4_1(NAME)                                                  \
    DG_HD dg_half dg_##NAME##_f2(dg_half a)                                     \
    { return dg_float_to_half(dg_##NAME##_f4(dg_half_to_float(a))); }
#define DG_HALF_VIA_F4_2(NAME)                                                  \
    DG_HD dg_half dg_##NAME##_f2(dg_half a, dg_half b)                          \
    { return dg_float_to_half(dg_##NAME##_f4(dg_half_to_float(a), dg_half_to_float(b))); }

DG_HALF_VIA_F4_2(add)
DG_HALF_VIA_F4_2(subtract)
DG_HALF_VIA_F4_2(multiply)
DG_HALF_VIA_F4_2(divide)
DG_HALF_VIA_F4_2(floor_divide)
DG_HALF_VIA_F4_2(remainder)
DG_HALF_VIA_F4_2(fmod)
DG_HALF_VIA_F4_2(power)
DG_HALF_VIA_F4_2(heaviside)
DG_HALF_VIA_F4_2(logaddexp)
DG_HALF_VIA_F4_2(logaddexp2)
DG_HALF_VIA_F4_2(arctan2)
DG_HALF_VIA_F4_2(hypot)
DG_HALF_VIA_F4_1(reciprocal)
DG_HALF_VIA_F4_1(square)
DG_HALF_VIA_F4_1(sqrt)
DG_HALF_VIA_F4_1(cbrt)
DG_HALF_VIA_F4_1(exp)
DG_HALF_VIA_F4_1(exp2)
DG_HALF_VIA_F4_1(expm1)
DG_HALF_VIA_F4_1(log)
DG_HALF_VIA_F4_1(log2)
DG_HALF_VIA_F4_1(log10)
DG_HALF_VIA_F4_1(log1p)
DG_HALF_VIA_F4_1(sin)
DG_HALF_VIA_F4_1(cos)
DG_HALF_VIA_F4_1(tan)
DG_HALF_VIA_F4_1(arcsin)
DG_HALF_VIA_F4_1(arccos)
DG_HALF_VIA_F4_1(arctan)
DG_HALF_VIA_F4_1(sinh)
DG_HALF_VIA_F4_1(cosh)
DG_HALF_VIA_F4_1(tanh)
DG_HALF_VIA_F4_1(arcsinh)
DG_HALF_VIA_F4_1(arccosh)
DG_HALF_VIA_F4_1(arctanh)
DG_HALF_VIA_F4_1(degrees)
DG_HALF_VIA_F4_1(radians)
DG_HALF_VIA_F4_1(deg2rad)
DG_HALF_VIA_F4_1(rad2deg)
DG_HALF_VIA_F4_1(rint)
DG_HALF_VIA_F4_1(floor)
DG_HALF_VIA_F4_1(ceil)
DG_HALF_VIA_F4_1(trunc)

DG_HD void dg_divmod_f2(dg_half a, dg_half b, dg_half *q, dg_half *r)
{
    float mod;
    float div = dg_divmod_impl_f4(dg_half_to_float(a), dg_half_to_float(b), &mod);
    *q = dg_float_to_half(div);
    *r = dg_float_to_half(mod);
}

DG_HD dg_half dg_negative_f2(dg_half a) { return (dg_half)(a ^ 0x8000u); }
DG_HD dg_half dg_positive_f2(dg_half a) { return a; }
DG_HD dg_half dg_conjugate_f2(dg_half a) { return a; }
DG_HD dg_half dg_absolute_f2(dg_half a) { return (dg_half)(a & 0x7fffu); }
DG_HD dg_half dg_fabs_f2(dg_half a) { return (dg_half)(a & 0x7fffu); }
DG_HD dg_half dg_sign_f2(dg_half a)
{
    if (dg_half_isnan(a))
        return a;
    if ((a & 0x7fffu) == 0)
        return 0;
    return (a & 0x8000u) ? (dg_half)0xbc00u : (dg_half)0x3c00u;
}
DG_HD dg_half dg_copysign_f2(dg_half a, dg_half b)
{
    return (dg_half)((a & 0x7fffu) | (b & 0x8000u));
}
/* npy_half_nextafter: NaN gives 0x7e00; x == y gives y as C99 says (and
 * NumPy since numpy/numpy#31475; before it, x: only nextafter(+-0, -+0)
 * differs) */
DG_HD dg_half dg_nextafter_f2(dg_half x, dg_half y)
{
    if (dg_half_isnan(x) || dg_half_isnan(y))
        return 0x7e00u;
    if (dg_half_to_float(x) == dg_half_to_float(y))
        return y;
    if ((x & 0x7fffu) == 0)
        return (dg_half)((y & 0x8000u) + 1u);
    if (!(x & 0x8000u))
        return (int16_t)x > (int16_t)y ? (dg_half)(x - 1u) : (dg_half)(x + 1u);
    if (!(y & 0x8000u) || (x & 0x7fffu) > (y & 0x7fffu))
        return (dg_half)(x - 1u);
    return (dg_half)(x + 1u);
}
/* npy_half_spacing: always positive; below a negative power of two it is the
 * smaller spacing (NumPy's own rule for float16 only) */
DG_HD dg_half dg_spacing_f2(dg_half h)
{
    uint16_t e = (uint16_t)(h & 0x7c00u);
    uint16_t m = (uint16_t)(h & 0x03ffu);
    if (e == 0x7c00u)
        return 0x7e00u;
    if (h == 0x7bffu)
        return 0x7c00u;
    if ((h & 0x8000u) && m == 0) {
        if (e > 0x2c00u)
            return (dg_half)(e - 0x2c00u);
        if (e > 0x0400u)
            return (dg_half)(1u << ((e >> 10) - 2));
        return 1u;
    }
    if (e > 0x2800u)
        return (dg_half)(e - 0x2800u);
    if (e > 0x0400u)
        return (dg_half)(1u << ((e >> 10) - 1));
    return 1u;
}
DG_HD dg_bool dg_isnan_f2(dg_half a) { return (dg_bool)dg_half_isnan(a); }
DG_HD dg_bool dg_isinf_f2(dg_half a) { return (dg_bool)((a & 0x7fffu) == 0x7c00u); }
DG_HD dg_bool dg_isfinite_f2(dg_half a) { return (dg_bool)((a & 0x7c00u) != 0x7c00u); }
DG_HD dg_bool dg_signbit_f2(dg_half a) { return (dg_bool)((a & 0x8000u) != 0); }
#define DG_HALFV_(x) dg_half_to_float(x)
DG_REAL_CMP(f2, dg_half, DG_HALFV_)
/* NumPy's half loops: (a >= b || isnan(a)) ? a : b and friends */
DG_HD dg_half dg_maximum_f2(dg_half a, dg_half b)
{
    return (dg_half_to_float(a) >= dg_half_to_float(b) || dg_half_isnan(a)) ? a : b;
}
DG_HD dg_half dg_minimum_f2(dg_half a, dg_half b)
{
    return (dg_half_to_float(a) <= dg_half_to_float(b) || dg_half_isnan(a)) ? a : b;
}
DG_HD dg_half dg_fmax_f2(dg_half a, dg_half b)
{
    return (dg_half_to_float(a) >= dg_half_to_float(b) || dg_half_isnan(b)) ? a : b;
}
DG_HD dg_half dg_fmin_f2(dg_half a, dg_half b)
{
    return (dg_half_to_float(a) <= dg_half_to_float(b) || dg_half_isnan(b)) ? a : b;
}
DG_HD void dg_modf_f2(dg_half a, dg_half *frac, dg_half *ipart)
{
    float ip, fr = modff(dg_half_to_float(a), &ip);
    *frac = dg_float_to_half(fr);
    *ipart = dg_float_to_half(ip);
}
DG_HD void dg_frexp_f2(dg_half a, dg_half *mant, int32_t *ex)
{
    float m;
    dg_frexp_f4(dg_half_to_float(a), &m, ex);
    *mant = dg_float_to_half(m);
}
DG_HD dg_half dg_ldexp_f2i4(dg_half a, int32_t e)
{
    return dg_float_to_half(dg_ldexp_f4i4(dg_half_to_float(a), e));
}
DG_HD dg_half dg_ldexp_f2i8(dg_half a, int64_t e)
{
    return dg_float_to_half(dg_ldexp_f4i8(dg_half_to_float(a), e));
}
#endif /* DG_SP(HALF) */

#if DG_SP(CPX)
/* =========================================================================
 * Complex transcendental functions, written on real libm calls.
 *
 * exp, log, sqrt, sinh, cosh, tanh (and sin, cos, tan through them) follow
 * the C library's (glibc's) algorithms, in float for complex64 and in double
 * for complex128, so that on the CPU they agree with NumPy, which calls
 * cexp, clog, ... to the last bit (within a few ulp where the device's real
 * functions differ).  The inverse functions are Hull, Fairgrieve & Tang's
 * algorithms (1997) in double; complex64 widens and rounds.  Special values
 * follow C99 Annex G as the C library resolves its choices.
 * ========================================================================= */

#define DG_CD_EPS 2.220446049250313e-16

/* x*x + y*y - 1 for 0.5 <= x < 1, where the naive form cancels: the exact
 * products (fma) and -1 are summed smallest first with error-free additions,
 * as the C library's clog does, so the result is correctly rounded in
 * practice. */
DG_HD double dg_cd_x2y2m1(double x, double y)
{
    double v[5];
    v[1] = x * x;
    v[0] = fma(x, x, -v[1]);
    v[3] = y * y;
    v[2] = fma(y, y, -v[3]);
    v[4] = -1.0;
    /* insertion sort by magnitude, ascending */
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && fabs(v[j - 1]) > fabs(v[j]); j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    for (int i = 0; i <= 3; i++) {
        double hi = v[i + 1] + v[i];
        v[i] = (v[i + 1] - hi) + v[i];
        v[i + 1] = hi;
        for (int k = i + 2; k < 5; k++)
            for (int j = k; j > i + 1 && fabs(v[j - 1]) > fabs(v[j]); j--) {
                double t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
    }
    return v[4] + v[3] + v[2] + v[1] + v[0];
}

/* The float version evaluates in double, where it is exact enough. */
DG_HD float dg_cf_x2y2m1(float x, float y)
{
    double dx = x, dy = y;
    return (float)((dx - 1) * (dx + 1) + dy * dy);
}

/* P prefix (dg_cd_, dg_cf_), CT struct, T part type, F libm suffix, FS
 * classification suffix, MK constructor, TEXP = (int)((max_exp - 1) * ln2)
 * and TTANH = TEXP / 2 rounded down (where exp and sinh^2 overflow), TMAX,
 * TMIN, TEPS, MANT: T's limits, X2Y2M1: x*x + y*y - 1 without cancellation. */
#define DG_CPX_ELEM(P, CT, T, F, FS, MK, TEXP, TTANH, TMAX, TMIN, TEPS, MANT, X2Y2M1) \
    /* sin y, cos y (y itself and 1 when tiny) */                               \
    DG_HD void P##sincos(T y, T *s, T *c)                                       \
    {                                                                           \
        if (fabs##F(y) > (T)TMIN) {                                             \
            *s = sin##F(y);                                                     \
            *c = cos##F(y);                                                     \
        } else {                                                                \
            *s = y;                                                             \
            *c = (T)1;                                                          \
        }                                                                       \
    }                                                                           \
    /* exp(ax) * (c, s) for ax > TEXP: exp(TEXP) folded into c and s once or */ \
    /* twice (half of it for cosh/sinh: h = 2), saturating beyond 3 TEXP */    \
    DG_HD CT P##big_exp(T ax, T c, T s, T h)                                    \
    {                                                                           \
        T et = exp##F((T)TEXP);                                                 \
        ax -= (T)TEXP;                                                          \
        s *= et / h;                                                            \
        c *= et / h;                                                            \
        if (ax > (T)TEXP) {                                                     \
            ax -= (T)TEXP;                                                      \
            s *= et;                                                            \
            c *= et;                                                            \
        }                                                                       \
        if (ax > (T)TEXP)                                                       \
            return MK((T)TMAX * c, (T)TMAX * s);                                \
        T e = exp##F(ax);                                                       \
        return MK(e * c, e * s);                                                \
    }                                                                           \
    DG_HD CT P##exp(T x, T y)                                                   \
    {                                                                           \
        if (dg_isfinite_##FS(x)) {                                              \
            if (!dg_isfinite_##FS(y))                                           \
                return MK(y - y, y - y);                                        \
            T sy, cy;                                                           \
            P##sincos(y, &sy, &cy);                                             \
            if (x > (T)TEXP)                                                    \
                return P##big_exp(x, cy, sy, (T)1);                             \
            T e = exp##F(x);                                                    \
            return MK(e * cy, e * sy);                                          \
        }                                                                       \
        if (x != x)                                                             \
            return y == 0 ? MK(x, y) : MK(x, x);                                \
        if (x > 0) {                                                            \
            if (y == 0)                                                         \
                return MK(x, y);                                                \
            if (dg_isfinite_##FS(y))                                            \
                return MK(x * cos##F(y), x * sin##F(y));                        \
            return MK(x, y - y);                                                \
        }                                                                       \
        if (dg_isfinite_##FS(y))                                                \
            return MK(copysign##F((T)0, cos##F(y)), copysign##F((T)0, sin##F(y))); \
        return MK((T)0, copysign##F((T)0, y));                                  \
    }                                                                           \
    /* log|z| by the C library's case split: log1p forms near |z| = 1, */      \
    /* rescaling at the ends of the range, log(hypot) elsewhere */             \
    DG_HD CT P##log(T x, T y)                                                   \
    {                                                                           \
        if (dg_isinf_##FS(x) || dg_isinf_##FS(y))                               \
            return MK(dg_inf_##FS(), atan2##F(y, x));                           \
        if (x != x || y != y)                                                   \
            return MK(x + y, x + y);                                            \
        if (x == 0 && y == 0)                                                   \
            return MK((T)-1 / fabs##F(x), atan2##F(y, x));                      \
        T ax = fabs##F(x), ay = fabs##F(y), re;                                 \
        int scale = 0;                                                          \
        if (ax < ay) {                                                          \
            T t = ax;                                                           \
            ax = ay;                                                            \
            ay = t;                                                             \
        }                                                                       \
        if (ax > (T)TMAX / 2) {                                                 \
            scale = -1;                                                         \
            ax = ldexp##F(ax, -1);                                              \
            ay = ay >= (T)TMIN * 2 ? ldexp##F(ay, -1) : (T)0;                   \
        } else if (ax < (T)TMIN && ay < (T)TMIN) {                              \
            scale = MANT;                                                       \
            ax = ldexp##F(ax, MANT);                                            \
            ay = ldexp##F(ay, MANT);                                            \
        }                                                                       \
        if (ax == 1 && scale == 0) {                                            \
            re = log1p##F(ay * ay) / 2;                                         \
        } else if (ax > 1 && ax < 2 && ay < 1 && scale == 0) {                  \
            T d2m1 = (ax - 1) * (ax + 1);                                       \
            if (ay >= (T)TEPS)                                                  \
                d2m1 += ay * ay;                                                \
            re = log1p##F(d2m1) / 2;                                            \
        } else if (ax < 1 && ax >= (T)0.5 && ay < (T)TEPS / 2 && scale == 0) {  \
            re = log1p##F((ax - 1) * (ax + 1)) / 2;                             \
        } else if (ax < 1 && ax >= (T)0.5 && scale == 0                         \
                   && ax * ax + ay * ay >= (T)0.5) {                            \
            re = log1p##F(X2Y2M1(ax, ay)) / 2;                                  \
        } else {                                                                \
            re = log##F(dg_lm_hypot##F(ax, ay)) - (T)scale * (T)DG_LN2;               \
        }                                                                       \
        return MK(re, atan2##F(y, x));                                          \
    }                                                                           \
    /* sqrt: Re = sqrt((|z| + |x|) / 2), Im from 2 Re Im = y; scaled at the */  \
    /* ends of the range */                                                     \
    DG_HD CT P##sqrt(T x, T y)                                                  \
    {                                                                           \
        if (!dg_isfinite_##FS(x) || !dg_isfinite_##FS(y)) {                     \
            if (dg_isinf_##FS(y))                                               \
                return MK(dg_inf_##FS(), y);                                    \
            if (dg_isinf_##FS(x)) {                                             \
                if (x < 0)                                                      \
                    return MK(y != y ? y : (T)0, copysign##F(dg_inf_##FS(), y)); \
                return MK(x, y != y ? y : copysign##F((T)0, y));                \
            }                                                                   \
            return MK(x + y, x + y);                                            \
        }                                                                       \
        if (y == 0) {                                                           \
            if (x < 0)                                                          \
                return MK((T)0, copysign##F(sqrt##F(-x), y));                   \
            return MK(fabs##F(sqrt##F(x)), copysign##F((T)0, y));               \
        }                                                                       \
        if (x == 0) {                                                           \
            T r = fabs##F(y) >= 2 * (T)TMIN ? sqrt##F((T)0.5 * fabs##F(y))      \
                                            : (T)0.5 * sqrt##F(2 * fabs##F(y)); \
            return MK(r, copysign##F(r, y));                                    \
        }                                                                       \
        int scale = 0;                                                          \
        T r, s;                                                                 \
        if (fabs##F(x) > (T)TMAX / 4) {                                         \
            scale = 1;                                                          \
            x = ldexp##F(x, -2);                                                \
            y = ldexp##F(y, -2);                                                \
        } else if (fabs##F(y) > (T)TMAX / 4) {                                  \
            scale = 1;                                                          \
            x = fabs##F(x) >= 4 * (T)TMIN ? ldexp##F(x, -2) : (T)0;             \
            y = ldexp##F(y, -2);                                                \
        } else if (fabs##F(x) < 2 * (T)TMIN && fabs##F(y) < 2 * (T)TMIN) {      \
            scale = -((MANT + 1) / 2);                                          \
            x = ldexp##F(x, -2 * scale);                                        \
            y = ldexp##F(y, -2 * scale);                                        \
        }                                                                       \
        T d = dg_lm_hypot##F(x, y);                                                   \
        if (x > 0) {                                                            \
            r = sqrt##F((T)0.5 * (d + x));                                      \
            if (scale == 1 && fabs##F(y) < 1) {                                 \
                s = y / r;                                                      \
                r = ldexp##F(r, scale);                                         \
                scale = 0;                                                      \
            } else {                                                            \
                s = (T)0.5 * (y / r);                                           \
            }                                                                   \
        } else {                                                                \
            s = sqrt##F((T)0.5 * (d - x));                                      \
            if (scale == 1 && fabs##F(y) < 1) {                                 \
                r = fabs##F(y / s);                                             \
                s = ldexp##F(s, scale);                                         \
                scale = 0;                                                      \
            } else {                                                            \
                r = fabs##F((T)0.5 * (y / s));                                  \
            }                                                                   \
        }                                                                       \
        if (scale) {                                                            \
            r = ldexp##F(r, scale);                                             \
            s = ldexp##F(s, scale);                                             \
        }                                                                       \
        return MK(r, copysign##F(s, y));                                        \
    }                                                                           \
    DG_HD CT P##sinh(T x, T y)                                                  \
    {                                                                           \
        if (dg_isfinite_##FS(x) && dg_isfinite_##FS(y)) {                       \
            T sy, cy;                                                           \
            P##sincos(y, &sy, &cy);                                             \
            if (fabs##F(x) > (T)TEXP) {                                         \
                if (x < 0)                                                      \
                    cy = -cy;                                                   \
                return P##big_exp(fabs##F(x), cy, sy, (T)2);                    \
            }                                                                   \
            return MK(sinh##F(x) * cy, cosh##F(x) * sy);                        \
        }                                                                       \
        if (x == 0 && !dg_isfinite_##FS(y))                                     \
            return MK(x, y - y);                                                \
        if (y == 0 && !dg_isfinite_##FS(x))                                     \
            return MK(x, y);                                                    \
        if (dg_isfinite_##FS(x))                                                \
            return MK(y - y, y - y);                                            \
        if (dg_isinf_##FS(x)) {                                                 \
            if (!dg_isfinite_##FS(y))                                           \
                return MK(x * x, x * (y - y));                                  \
            return MK(x * cos##F(y), dg_inf_##FS() * sin##F(y));                \
        }                                                                       \
        return MK(x + y, x + y);                                                \
    }                                                                           \
    DG_HD CT P##cosh(T x, T y)                                                  \
    {                                                                           \
        if (dg_isfinite_##FS(x) && dg_isfinite_##FS(y)) {                       \
            T sy, cy;                                                           \
            P##sincos(y, &sy, &cy);                                             \
            if (fabs##F(x) > (T)TEXP) {                                         \
                if (x < 0)                                                      \
                    sy = -sy;                                                   \
                return P##big_exp(fabs##F(x), cy, sy, (T)2);                    \
            }                                                                   \
            return MK(cosh##F(x) * cy, sinh##F(x) * sy);                        \
        }                                                                       \
        if (x == 0 && !dg_isfinite_##FS(y))                                     \
            return MK(y - y, x * copysign##F((T)0, y));                         \
        if (y == 0 && !dg_isfinite_##FS(x))                                     \
            return MK(x * x, copysign##F((T)0, x) * y);                         \
        if (dg_isfinite_##FS(x))                                                \
            return MK(y - y, y - y);                                            \
        if (dg_isinf_##FS(x)) {                                                 \
            if (!dg_isfinite_##FS(y))                                           \
                return MK(x * x, y - y);                                        \
            return MK(dg_inf_##FS() * cos##F(y), x * sin##F(y));                \
        }                                                                       \
        return MK(x + y, x + y);                                                \
    }                                                                           \
    /* tanh(x + iy) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y); */ \
    /* beyond TTANH the real part is +-1 and the imaginary part */             \
    /* 4 sin y cos y / exp(2|x|), divided in two steps */                      \
    DG_HD CT P##tanh(T x, T y)                                                  \
    {                                                                           \
        if (x != x)                                                             \
            return y == 0 ? MK(x, y) : MK(x, x);                                \
        if (dg_isinf_##FS(x))                                                   \
            return MK(copysign##F((T)1, x),                                     \
                      copysign##F((T)0, dg_isfinite_##FS(y) && fabs##F(y) > 1   \
                                            ? sin##F(y) * cos##F(y) : y));      \
        if (!dg_isfinite_##FS(y))                                               \
            return MK(x == 0 ? x : y - y, y - y);                               \
        T sy, cy;                                                               \
        P##sincos(y, &sy, &cy);                                                 \
        if (fabs##F(x) > (T)TTANH) {                                            \
            T e2t = exp##F(2 * (T)TTANH);                                       \
            T ax = fabs##F(x) - (T)TTANH;                                       \
            T im = 4 * sy * cy / e2t;                                           \
            im = ax > (T)TTANH ? im / e2t : im / exp##F(2 * ax);                \
            return MK(copysign##F((T)1, x), im);                                \
        }                                                                       \
        T sh = x, ch = (T)1;                                                    \
        if (fabs##F(x) > (T)TMIN) {                                             \
            sh = sinh##F(x);                                                    \
            ch = cosh##F(x);                                                    \
        }                                                                       \
        T den = fabs##F(sh) > fabs##F(cy) * (T)TEPS ? sh * sh + cy * cy : cy * cy; \
        return MK(sh * ch / den, sy * cy / den);                                \
    }                                                                           \
    /* sin z = i conj(sinh(i conj z)), cos z = cosh(iz), */                     \
    /* tan z = i conj(tanh(i conj z)): the forms whose special values agree */ \
    /* with the C library's */                                                  \
    DG_HD CT P##sin(T x, T y)                                                   \
    {                                                                           \
        CT w = P##sinh(y, x);                                                   \
        return MK(w.im, w.re);                                                  \
    }                                                                           \
    DG_HD CT P##cos(T x, T y) { return P##cosh(-y, x); }                        \
    DG_HD CT P##tan(T x, T y)                                                   \
    {                                                                           \
        CT w = P##tanh(y, x);                                                   \
        return MK(w.im, w.re);                                                  \
    }

DG_CPX_ELEM(dg_cd_, dg_c128, double, , d, dg_c16_mk, 709, 354, 1.7976931348623157e+308,
            2.2250738585072014e-308, 2.220446049250313e-16, 53, dg_cd_x2y2m1)
DG_CPX_ELEM(dg_cf_, dg_c64, float, f, f, dg_c8_mk, 88, 44, 3.40282347e+38f,
            1.17549435e-38f, 1.1920929e-07f, 24, dg_cf_x2y2m1)

/* ---- inverse functions: Hull, Fairgrieve & Tang (1997) ---- */

#define DG_CD_RECIP_EPS 4503599627370496.0
#define DG_CD_FOUR_SQRT_MIN 5.966672584960166e-154
#define DG_CD_QUARTER_SQRT_MAX 1.6759759912428246e+153
#define DG_CD_SQRT_MIN 1.4916681462400413e-154
#define DG_CD_PIO2_HI 1.5707963267948966
#define DG_CD_PIO2_LO 6.123233995736766e-17

/* (hypot(a, b) - b) / 2 computed without cancellation: hab = hypot(a, b). */
DG_HD double dg_cd_half_hypot_minus(double a, double b, double hab)
{
    if (b < 0)
        return (hab - b) * 0.5;
    if (b == 0)
        return a * 0.5;
    return a * a / (hab + b) * 0.5;
}

/* For x, y >= 0 finite: A = (|z + i| + |z - i|) / 2 gives
 * re asinh(z) = log(A + sqrt(A^2 - 1)) (in *rx) and im asinh(z) = asin(y / A),
 * computed as asin(*b) when *b_ok, else as atan2(*ny, *sq). */
DG_HD void dg_cd_asinh_core(double x, double y, double *rx, int *b_ok, double *b,
                            double *sq, double *ny)
{
    double r = dg_lm_hypot(x, y + 1.0);
    double s = dg_lm_hypot(x, y - 1.0);
    double A = (r + s) * 0.5;
    if (A < 1.0)
        A = 1.0;
    if (A < 10.0) {
        if (y == 1.0 && x < DG_CD_EPS * DG_CD_EPS / 128.0) {
            *rx = sqrt(x);
        } else if (x >= DG_CD_EPS * fabs(y - 1.0)) {
            double am1 = dg_cd_half_hypot_minus(x, 1.0 + y, r)
                         + dg_cd_half_hypot_minus(x, 1.0 - y, s);
            *rx = log1p(am1 + sqrt(am1 * (A + 1.0)));
        } else if (y < 1.0) {
            *rx = x / sqrt((1.0 - y) * (1.0 + y));
        } else {
            *rx = log1p((y - 1.0) + sqrt((y - 1.0) * (y + 1.0)));
        }
    } else {
        *rx = log(A + sqrt(A * A - 1.0));
    }
    *ny = y;
    if (y < DG_CD_FOUR_SQRT_MIN) {
        *b_ok = 0;
        *sq = A * (2.0 / DG_CD_EPS);
        *ny = y * (2.0 / DG_CD_EPS);
        return;
    }
    *b = y / A;
    *b_ok = 1;
    if (*b > 0.6417) {
        *b_ok = 0;
        if (y == 1.0 && x < DG_CD_EPS / 128.0) {
            *sq = sqrt(x) * sqrt((A + y) * 0.5);
        } else if (x >= DG_CD_EPS * fabs(y - 1.0)) {
            double amy = dg_cd_half_hypot_minus(x, y + 1.0, r)
                         + dg_cd_half_hypot_minus(x, y - 1.0, s);
            *sq = sqrt(amy * (A + y));
        } else if (y > 1.0) {
            const double big = 4.0 / DG_CD_EPS / DG_CD_EPS;
            *sq = x * big * y / sqrt((y + 1.0) * (y - 1.0));
            *ny = y * big;
        } else {
            *sq = sqrt((1.0 - y) * (1.0 + y));
        }
    }
}

/* log(x + iy) for |z| beyond 1/eps, where the inverse functions reduce to
 * logarithms; avoids overflow in x^2 + y^2. */
DG_HD dg_c128 dg_cd_log_large(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    if (ax < ay) {
        double t = ax;
        ax = ay;
        ay = t;
    }
    if (ax > 8.98846567431158e+307) /* DBL_MAX / 2 */
        return dg_c16_mk(log(dg_lm_hypot(x / 2.718281828459045, y / 2.718281828459045)) + 1.0,
                         atan2(y, x));
    if (ax > DG_CD_QUARTER_SQRT_MAX || ay < DG_CD_SQRT_MIN)
        return dg_c16_mk(log(dg_lm_hypot(x, y)), atan2(y, x));
    return dg_c16_mk(log(ax * ax + ay * ay) * 0.5, atan2(y, x));
}

DG_HD dg_c128 dg_cd_asinh(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    if (dg_isnan_d(x) || dg_isnan_d(y)) {
        if (dg_isinf_d(x))
            return dg_c16_mk(x, y + y);
        if (dg_isinf_d(y))
            return dg_c16_mk(fabs(y), x + x);
        if (y == 0)
            return dg_c16_mk(x + x, y);
        return dg_c16_mk(x + y, x + y);
    }
    if (ax > DG_CD_RECIP_EPS || ay > DG_CD_RECIP_EPS) {
        dg_c128 w = dg_cd_log_large(ax, ay);
        return dg_c16_mk(copysign(w.re + DG_LN2, x), copysign(w.im, y));
    }
    if (ax < 9.125060374972142e-09 && ay < 9.125060374972142e-09) /* sqrt(6 eps)/4 */
        return dg_c16_mk(x, y);
    double rx, ry, b = 0, sq = 0, ny = 0;
    int b_ok = 0;
    dg_cd_asinh_core(ax, ay, &rx, &b_ok, &b, &sq, &ny);
    ry = b_ok ? asin(b) : atan2(ny, sq);
    return dg_c16_mk(copysign(rx, x), copysign(ry, y));
}

DG_HD dg_c128 dg_cd_acos(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    int sx = dg_signbit_d(x), sy = dg_signbit_d(y);
    if (dg_isnan_d(x) || dg_isnan_d(y)) {
        if (dg_isinf_d(x))
            return dg_c16_mk(y + y, -dg_inf_d());
        if (dg_isinf_d(y))
            return dg_c16_mk(x + x, -y);
        if (x == 0)
            return dg_c16_mk(DG_CD_PIO2_HI + DG_CD_PIO2_LO, y + y);
        return dg_c16_mk(x + y, x + y);
    }
    if (ax > DG_CD_RECIP_EPS || ay > DG_CD_RECIP_EPS) {
        dg_c128 w = dg_cd_log_large(x, y);
        double rx = fabs(w.im), ry = w.re + DG_LN2;
        return dg_c16_mk(rx, sy ? ry : -ry);
    }
    if (x == 1.0 && y == 0)
        return dg_c16_mk(0.0, -y);
    if (ax < 9.125060374972142e-09 && ay < 9.125060374972142e-09)
        return dg_c16_mk(DG_CD_PIO2_HI - (x - DG_CD_PIO2_LO), -y);
    double rx, ry, b = 0, sq = 0, nx = 0;
    int b_ok = 0;
    dg_cd_asinh_core(ay, ax, &ry, &b_ok, &b, &sq, &nx);
    if (b_ok)
        rx = sx ? acos(-b) : acos(b);
    else
        rx = sx ? atan2(sq, -nx) : atan2(sq, nx);
    return dg_c16_mk(rx, sy ? ry : -ry);
}

DG_HD dg_c128 dg_cd_acosh(double x, double y)
{
    dg_c128 w = dg_cd_acos(x, y);
    double rx = w.re, ry = w.im;
    if (dg_isnan_d(rx) && dg_isnan_d(ry))
        return dg_c16_mk(ry, rx);
    if (dg_isnan_d(rx))
        return dg_c16_mk(fabs(ry), rx);
    if (dg_isnan_d(ry))
        return dg_c16_mk(ry, rx);
    return dg_c16_mk(fabs(ry), copysign(rx, y));
}

DG_HD dg_c128 dg_cd_asin(double x, double y)
{
    dg_c128 w = dg_cd_asinh(y, x);
    return dg_c16_mk(w.im, w.re);
}

/* Real part of 1 / (x + iy) = x / (x^2 + y^2), for |z| large: scaled by a
 * power of two so that the squares neither overflow nor lose the result. */
DG_HD double dg_cd_re_recip(double x, double y)
{
    if (dg_isinf_d(x) || dg_isinf_d(y))
        return copysign(0.0, x);
    int e;
    frexp(fabs(x) > fabs(y) ? x : y, &e);
    double xs = ldexp(x, -e), ys = ldexp(y, -e);
    return ldexp(xs / (xs * xs + ys * ys), -e);
}

DG_HD dg_c128 dg_cd_atanh(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    if (y == 0 && ax <= 1.0)
        return dg_c16_mk(atanh(x), y);
    if (x == 0)
        return dg_c16_mk(x, atan(y));
    if (dg_isnan_d(x) || dg_isnan_d(y)) {
        if (dg_isinf_d(x))
            return dg_c16_mk(copysign(0.0, x), y + y);
        if (dg_isinf_d(y))
            return dg_c16_mk(copysign(0.0, x), copysign(DG_CD_PIO2_HI + DG_CD_PIO2_LO, y));
        return dg_c16_mk(x + y, x + y);
    }
    if (ax > DG_CD_RECIP_EPS || ay > DG_CD_RECIP_EPS)
        return dg_c16_mk(dg_cd_re_recip(x, y), copysign(DG_CD_PIO2_HI + DG_CD_PIO2_LO, y));
    if (ax < 1.2904784139758924e-08 && ay < 1.2904784139758924e-08) /* sqrt(3 eps)/2 */
        return dg_c16_mk(x, y);
    double rx, ry;
    if (ax == 1.0 && ay < DG_CD_EPS) {
        rx = (DG_LN2 - log(ay)) * 0.5;
    } else {
        double d = ax - 1.0;
        double ss = ay < DG_CD_SQRT_MIN ? d * d : d * d + ay * ay;
        rx = log1p(4.0 * ax / ss) * 0.25;
    }
    if (ax == 1.0)
        ry = atan2(2.0, -ay) * 0.5;
    else if (ay < DG_CD_EPS)
        ry = atan2(2.0 * ay, (1.0 - ax) * (1.0 + ax)) * 0.5;
    else
        ry = atan2(2.0 * ay, (1.0 - ax) * (1.0 + ax) - ay * ay) * 0.5;
    return dg_c16_mk(copysign(rx, x), copysign(ry, y));
}

DG_HD dg_c128 dg_cd_atan(double x, double y)
{
    dg_c128 w = dg_cd_atanh(y, x);
    return dg_c16_mk(w.im, w.re);
}

/* =========================================================================
 * Complex loops.  S suffix, CT struct, T part type, F libm suffix, FS
 * classification suffix, MK constructor, WIDE / NARROW to and from dg_c128.
 * Arithmetic and NumPy's own formulas are computed in T, as NumPy does;
 * functions NumPy takes from the C library are computed in double.
 * ========================================================================= */

#define DG_CPX_VIA_D(S, CT, WIDE, NARROW, NAME, IMPL)                            \
    DG_HD CT dg_##NAME##_##S(CT a)                                              \
    {                                                                           \
        dg_c128 w = WIDE(a);                                                    \
        return NARROW(IMPL(w.re, w.im));                                        \
    }

#define DG_C16_ID_(z) (z)

#define DG_CPX(S, CT, T, F, FS, MK, WIDE, NARROW, P)                             \
    DG_HD CT dg_add_##S(CT a, CT b) { return MK(a.re + b.re, a.im + b.im); }    \
    DG_HD CT dg_subtract_##S(CT a, CT b) { return MK(a.re - b.re, a.im - b.im); } \
    /* NumPy's SIMD loop: fused multiply-add (re = ar*br - (ai*bi) with one */  \
    /* rounding of the first product), on strided data too */                  \
    DG_HD CT dg_multiply_##S(CT a, CT b)                                        \
    {                                                                           \
        return MK(fma##F(a.re, b.re, -(a.im * b.im)), fma##F(a.re, b.im, a.im * b.re)); \
    }                                                                           \
    /* npymath's cmul (no fusion), used by power */                             \
    DG_HD CT dg_cmul_simple_##S(CT a, CT b)                                     \
    {                                                                           \
        return MK(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);        \
    }                                                                           \
    /* NumPy's division loop: Smith's method plus NaN/inf fix-ups */            \
    DG_HD CT dg_divide_##S(CT a, CT b)                                          \
    {                                                                           \
        T ar = a.re, ai = a.im, br = b.re, bi = b.im;                           \
        T abr = fabs##F(br), abi = fabs##F(bi);                                 \
        int arn = ar != ar, ain = ai != ai;                                     \
        if (br == br && bi == bi && (arn || ain)                                \
            && ((((!arn && dg_isinf_##FS(ar)) || (!ain && dg_isinf_##FS(ai)))   \
                 && (br != 0 || bi != 0))                                       \
                || (dg_isinf_##FS(br) && dg_isinf_##FS(bi)))) {                 \
            T nan = arn ? ar : ai;                                              \
            return MK(nan, nan);                                                \
        }                                                                       \
        if (abr >= abi) {                                                       \
            if (abr == 0 && abi == 0) {                                         \
                if ((arn && (ai == 0 || ain)) || (ar == 0 && ain))              \
                    return MK(arn ? ar : ai, ain ? ai : ar);                    \
                return MK(ar / abr, ai / abi);                                  \
            }                                                                   \
            T rat = bi / br;                                                    \
            T scl = (T)1 / (br + bi * rat);                                     \
            return MK((ar + ai * rat) * scl, (ai - ar * rat) * scl);            \
        }                                                                       \
        T rat = br / bi;                                                        \
        T scl = (T)1 / (bi + br * rat);                                         \
        return MK((ar * rat + ai) * scl, (ai * rat - ar) * scl);                \
    }                                                                           \
    /* C99 Annex G multiplication (what C's z * w does): the plain products, */ \
    /* with infinities recovered where they came out as NaN + i NaN */          \
    DG_HD CT dg_cmul_c99_##S(CT z, CT w)                                        \
    {                                                                           \
        T a = z.re, b = z.im, c = w.re, d = w.im;                               \
        T ac = a * c, bd = b * d, ad = a * d, bc = b * c;                       \
        T x = ac - bd, y = ad + bc;                                             \
        if (x == x || y == y)                                                   \
            return MK(x, y);                                                    \
        int recalc = 0;                                                         \
        if (dg_isinf_##FS(a) || dg_isinf_##FS(b)) {                             \
            a = copysign##F(dg_isinf_##FS(a) ? (T)1 : (T)0, a);                 \
            b = copysign##F(dg_isinf_##FS(b) ? (T)1 : (T)0, b);                 \
            if (c != c)                                                         \
                c = copysign##F((T)0, c);                                       \
            if (d != d)                                                         \
                d = copysign##F((T)0, d);                                       \
            recalc = 1;                                                         \
        }                                                                       \
        if (dg_isinf_##FS(c) || dg_isinf_##FS(d)) {                             \
            c = copysign##F(dg_isinf_##FS(c) ? (T)1 : (T)0, c);                 \
            d = copysign##F(dg_isinf_##FS(d) ? (T)1 : (T)0, d);                 \
            if (a != a)                                                         \
                a = copysign##F((T)0, a);                                       \
            if (b != b)                                                         \
                b = copysign##F((T)0, b);                                       \
            recalc = 1;                                                         \
        }                                                                       \
        if (!recalc && (dg_isinf_##FS(ac) || dg_isinf_##FS(bd)                  \
                        || dg_isinf_##FS(ad) || dg_isinf_##FS(bc))) {           \
            if (a != a)                                                         \
                a = copysign##F((T)0, a);                                       \
            if (b != b)                                                         \
                b = copysign##F((T)0, b);                                       \
            if (c != c)                                                         \
                c = copysign##F((T)0, c);                                       \
            if (d != d)                                                         \
                d = copysign##F((T)0, d);                                       \
            recalc = 1;                                                         \
        }                                                                       \
        if (recalc) {                                                           \
            x = dg_inf_##FS() * (a * c - b * d);                                \
            y = dg_inf_##FS() * (a * d + b * c);                                \
        }                                                                       \
        return MK(x, y);                                                        \
    }                                                                           \
    /* npymath's cdiv (no fix-ups), used by power */                            \
    DG_HD CT dg_cdiv_simple_##S(CT a, CT b)                                     \
    {                                                                           \
        T abr = fabs##F(b.re), abi = fabs##F(b.im);                             \
        if (abr >= abi) {                                                       \
            if (abr == 0 && abi == 0)                                           \
                return MK(a.re / abr, a.im / abi);                              \
            T rat = b.im / b.re;                                                \
            T scl = (T)1 / (b.re + b.im * rat);                                 \
            return MK((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);    \
        }                                                                       \
        T rat = b.re / b.im;                                                    \
        T scl = (T)1 / (b.im + b.re * rat);                                     \
        return MK((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);        \
    }                                                                           \
    DG_HD CT dg_negative_##S(CT a) { return MK(-a.re, -a.im); }                 \
    DG_HD CT dg_positive_##S(CT a) { return MK(+a.re, +a.im); }                 \
    DG_HD CT dg_conjugate_##S(CT a) { return MK(a.re, -a.im); }                 \
    /* NumPy's SIMD loop: larger * sqrt(1 + (smaller/larger)^2), fused */       \
    DG_HD T dg_absolute_##S(CT a)                                               \
    {                                                                           \
        T re = fabs##F(a.re), im = fabs##F(a.im);                               \
        if (dg_isinf_##FS(re) || dg_isinf_##FS(im))                             \
            return dg_inf_##FS();                                               \
        if (re != re || im != im)                                               \
            return dg_nan_##FS();                                               \
        T big = re > im ? re : im, small = re > im ? im : re;                   \
        T ratio = big == 0 ? (T)0 : small / big;                                \
        return sqrt##F(fma##F(ratio, ratio, (T)1)) * big;                        \
    }                                                                           \
    DG_HD CT dg_square_##S(CT a) { return dg_multiply_##S(a, a); }              \
    DG_HD CT dg_reciprocal_##S(CT a)                                            \
    {                                                                           \
        if (fabs##F(a.im) <= fabs##F(a.re)) {                                   \
            T r = a.im / a.re;                                                  \
            T d = a.re + a.im * r;                                              \
            return MK((T)1 / d, -r / d);                                        \
        }                                                                       \
        T r = a.re / a.im;                                                      \
        T d = a.re * r + a.im;                                                  \
        return MK(r / d, (T)-1 / d);                                            \
    }                                                                           \
    /* NumPy 2: z / |z|; nan -> nan; infinite parts -> unit direction */        \
    DG_HD CT dg_sign_##S(CT a)                                                  \
    {                                                                           \
        T m = dg_lm_hypot##F(a.re, a.im);                                             \
        if (m != m)                                                             \
            return MK(dg_nan_##FS(), dg_nan_##FS());                            \
        if (dg_isinf_##FS(m)) {                                                 \
            if (dg_isinf_##FS(a.re)) {                                          \
                if (dg_isinf_##FS(a.im))                                        \
                    return MK(dg_nan_##FS(), dg_nan_##FS());                    \
                return MK(a.re > 0 ? (T)1 : (T)-1, (T)0);                       \
            }                                                                   \
            return MK((T)0, a.im > 0 ? (T)1 : (T)-1);                           \
        }                                                                       \
        if (m == 0)                                                             \
            return MK((T)0, (T)0);                                              \
        return MK(a.re / m, a.im / m);                                          \
    }                                                                           \
    DG_HD CT dg_rint_##S(CT a) { return MK(rint##F(a.re), rint##F(a.im)); }     \
    DG_HD dg_bool dg_isfinite_##S(CT a)                                         \
    { return (dg_bool)(dg_isfinite_##FS(a.re) & dg_isfinite_##FS(a.im)); }      \
    DG_HD dg_bool dg_isinf_##S(CT a)                                            \
    { return (dg_bool)(dg_isinf_##FS(a.re) | dg_isinf_##FS(a.im)); }            \
    DG_HD dg_bool dg_isnan_##S(CT a)                                            \
    { return (dg_bool)(dg_isnan_##FS(a.re) | dg_isnan_##FS(a.im)); }            \
    /* NumPy's lexicographic order: real parts, then imaginary parts */         \
    DG_HD int dg_cge_##S(CT a, CT b)                                            \
    {                                                                           \
        return (a.re > b.re && a.im == a.im && b.im == b.im)                    \
               || (a.re == b.re && a.im >= b.im);                               \
    }                                                                           \
    DG_HD int dg_cle_##S(CT a, CT b)                                            \
    {                                                                           \
        return (a.re < b.re && a.im == a.im && b.im == b.im)                    \
               || (a.re == b.re && a.im <= b.im);                               \
    }                                                                           \
    DG_HD dg_bool dg_greater_equal_##S(CT a, CT b) { return (dg_bool)dg_cge_##S(a, b); } \
    DG_HD dg_bool dg_less_equal_##S(CT a, CT b) { return (dg_bool)dg_cle_##S(a, b); } \
    DG_HD dg_bool dg_greater_##S(CT a, CT b)                                    \
    {                                                                           \
        return (dg_bool)((a.re > b.re && a.im == a.im && b.im == b.im)          \
                         || (a.re == b.re && a.im > b.im));                     \
    }                                                                           \
    DG_HD dg_bool dg_less_##S(CT a, CT b)                                       \
    {                                                                           \
        return (dg_bool)((a.re < b.re && a.im == a.im && b.im == b.im)          \
                         || (a.re == b.re && a.im < b.im));                     \
    }                                                                           \
    DG_HD dg_bool dg_equal_##S(CT a, CT b)                                      \
    { return (dg_bool)(a.re == b.re && a.im == b.im); }                         \
    DG_HD dg_bool dg_not_equal_##S(CT a, CT b)                                  \
    { return (dg_bool)(a.re != b.re || a.im != b.im); }                         \
    DG_HD int dg_ctruth_##S(CT a) { return a.re != 0 || a.im != 0; }            \
    DG_HD dg_bool dg_logical_and_##S(CT a, CT b)                                \
    { return (dg_bool)(dg_ctruth_##S(a) && dg_ctruth_##S(b)); }                 \
    DG_HD dg_bool dg_logical_or_##S(CT a, CT b)                                 \
    { return (dg_bool)(dg_ctruth_##S(a) || dg_ctruth_##S(b)); }                 \
    DG_HD dg_bool dg_logical_xor_##S(CT a, CT b)                                \
    { return (dg_bool)(dg_ctruth_##S(a) != dg_ctruth_##S(b)); }                 \
    DG_HD dg_bool dg_logical_not_##S(CT a) { return (dg_bool)!dg_ctruth_##S(a); } \
    DG_HD int dg_cnan_##S(CT a) { return a.re != a.re || a.im != a.im; }        \
    DG_HD CT dg_maximum_##S(CT a, CT b)                                         \
    { return (dg_cnan_##S(a) || dg_cge_##S(a, b)) ? a : b; }                    \
    DG_HD CT dg_minimum_##S(CT a, CT b)                                         \
    { return (dg_cnan_##S(a) || dg_cle_##S(a, b)) ? a : b; }                    \
    DG_HD CT dg_fmax_##S(CT a, CT b)                                            \
    { return (dg_cnan_##S(b) || dg_cge_##S(a, b)) ? a : b; }                    \
    DG_HD CT dg_fmin_##S(CT a, CT b)                                            \
    { return (dg_cnan_##S(b) || dg_cle_##S(a, b)) ? a : b; }                    \
    /* C library functions (NumPy calls csqrt, cexp, ...) */                    \
    DG_HD CT dg_sqrt_##S(CT a) { return P##sqrt(a.re, a.im); }                  \
    DG_HD CT dg_exp_##S(CT a) { return P##exp(a.re, a.im); }                     \
    DG_HD CT dg_log_##S(CT a) { return P##log(a.re, a.im); }                     \
    DG_HD CT dg_sin_##S(CT a) { return P##sin(a.re, a.im); }                    \
    DG_HD CT dg_cos_##S(CT a) { return P##cos(a.re, a.im); }                    \
    DG_HD CT dg_tan_##S(CT a) { return P##tan(a.re, a.im); }                    \
    DG_HD CT dg_sinh_##S(CT a) { return P##sinh(a.re, a.im); }                  \
    DG_HD CT dg_cosh_##S(CT a) { return P##cosh(a.re, a.im); }                  \
    DG_HD CT dg_tanh_##S(CT a) { return P##tanh(a.re, a.im); }                  \
    DG_CPX_VIA_D(S, CT, WIDE, NARROW, arcsin, dg_cd_asin)                       \
    DG_CPX_VIA_D(S, CT, WIDE, NARROW, arccos, dg_cd_acos)                       \
    DG_CPX_VIA_D(S, CT, WIDE, NARROW, arctan, dg_cd_atan)                       \
    DG_CPX_VIA_D(S, CT, WIDE, NARROW, arcsinh, dg_cd_asinh)                     \
    DG_CPX_VIA_D(S, CT, WIDE, NARROW, arccosh, dg_cd_acosh)                     \
    DG_CPX_VIA_D(S, CT, WIDE, NARROW, arctanh, dg_cd_atanh)                     \
    /* NumPy's own formulas, in T */                                            \
    DG_HD CT dg_exp2_##S(CT a)                                                  \
    {                                                                           \
        return dg_exp_##S(MK(a.re * (T)DG_LN2, a.im * (T)DG_LN2));              \
    }                                                                           \
    DG_HD CT dg_log2_##S(CT a)                                                  \
    {                                                                           \
        CT l = dg_log_##S(a);                                                   \
        return MK(l.re * (T)DG_LOG2E, l.im * (T)DG_LOG2E);                      \
    }                                                                           \
    DG_HD CT dg_log10_##S(CT a)                                                 \
    {                                                                           \
        CT l = dg_log_##S(a);                                                   \
        return MK(l.re * (T)DG_LOG10E, l.im * (T)DG_LOG10E);                    \
    }                                                                           \
    DG_HD CT dg_expm1_##S(CT a)                                                 \
    {                                                                           \
        T h = sin##F(a.im / (T)2);                                              \
        return MK(expm1##F(a.re) * cos##F(a.im) - (T)2 * h * h,                 \
                  exp##F(a.re) * sin##F(a.im));                                 \
    }                                                                           \
    DG_HD CT dg_log1p_##S(CT a)                                                 \
    {                                                                           \
        T l = dg_lm_hypot##F(a.re + (T)1, a.im);                                      \
        return MK(log##F(l), atan2##F(a.im, a.re + (T)1));                      \
    }                                                                           \
    /* npy_cpow: exact small integer powers by repeated multiplication, */     \
    /* else exp(b log a) as the C library's cpow */                             \
    DG_HD CT dg_power_##S(CT a, CT b)                                           \
    {                                                                           \
        T ar = a.re, ai = a.im, br = b.re, bi = b.im;                           \
        if (br == 0 && bi == 0)                                                 \
            return MK((T)1, (T)0);                                              \
        if (ar == 0 && ai == 0) {                                               \
            if (br > 0)                                                         \
                return MK((T)0, (T)0);                                          \
            return MK(dg_nan_##FS(), dg_nan_##FS());                            \
        }                                                                       \
        if (bi == 0 && br > -100 && br < 100 && (T)(int)br == br) {             \
            int n = (int)br;                                                    \
            if (n == 1)                                                         \
                return MK(ar, ai);                                              \
            if (n == 2)                                                         \
                return dg_cmul_simple_##S(a, a);                                   \
            if (n == 3)                                                         \
                return dg_cmul_simple_##S(a, dg_cmul_simple_##S(a, a));            \
            int mask = 1;                                                       \
            if (n < 0)                                                          \
                n = -n;                                                         \
            CT acc = MK((T)1, (T)0), p = a;                                     \
            for (;;) {                                                          \
                if (n & mask)                                                   \
                    acc = dg_cmul_simple_##S(acc, p);                              \
                mask <<= 1;                                                     \
                if (n < mask)                                                   \
                    break;                                                      \
                p = dg_cmul_simple_##S(p, p);                                      \
            }                                                                   \
            if (br < 0)                                                         \
                acc = dg_cdiv_simple_##S(MK((T)1, (T)0), acc);                  \
            return acc;                                                         \
        }                                                                       \
        CT l = dg_log_##S(a);                                                   \
        return dg_exp_##S(dg_cmul_c99_##S(b, l));                               \
    }

DG_CPX(c8, dg_c64, float, f, f, dg_c8_mk, dg_c8_widen, dg_c16_narrow, dg_cf_)
DG_CPX(c16, dg_c128, double, , d, dg_c16_mk, DG_C16_ID_, DG_C16_ID_, dg_cd_)

DG_HD dg_c128 dg_float_power_c16(dg_c128 a, dg_c128 b) { return dg_power_c16(a, b); }
#endif /* DG_SP(CPX) */

#if DG_SP(CAST)
/* =========================================================================
 * Casts (NumPy's astype with casting='unsafe'): to bool is != 0 (complex:
 * either part); complex to real takes the real part; bool is 0/1; float to
 * integer truncates (dg_*_of_d); float16 via float32, directly from double.
 * Generated per (source kind, destination kind); kinds: B bool, I integer,
 * H float16, R float32/float64, C complex.
 * ========================================================================= */

typedef float dg_part_c8;

/* float16 -> integer: as from double, except that NumPy's float16 -> uint32
 * goes through int64 (NaN and -inf give 0) */
DG_HD int8_t dg_i1_of_h(float x) { return dg_i1_of_d((double)x); }
DG_HD uint8_t dg_u1_of_h(float x) { return dg_u1_of_d((double)x); }
DG_HD int16_t dg_i2_of_h(float x) { return dg_i2_of_d((double)x); }
DG_HD uint16_t dg_u2_of_h(float x) { return dg_u2_of_d((double)x); }
DG_HD int32_t dg_i4_of_h(float x) { return dg_i4_of_d((double)x); }
DG_HD uint32_t dg_u4_of_h(float x) { return (uint32_t)dg_d_to_i64((double)x); }
DG_HD int64_t dg_i8_of_h(float x) { return dg_i8_of_d((double)x); }
DG_HD uint64_t dg_u8_of_h(float x) { return dg_u8_of_d((double)x); }
typedef double dg_part_c16;

DG_HD dg_half dg_half_of_f4(float x) { return dg_float_to_half(x); }
DG_HD dg_half dg_half_of_f8(double x) { return dg_double_to_half(x); }
DG_HD dg_half dg_half_of_c8(dg_c64 z) { return dg_float_to_half(z.re); }
DG_HD dg_half dg_half_of_c16(dg_c128 z) { return dg_double_to_half(z.re); }

#define DG_CV_B_B(a, D, S) ((dg_bool)((a) != 0))
#define DG_CV_B_I(a, D, S) ((dg_ct_##D)((a) != 0))
#define DG_CV_B_H(a, D, S) ((dg_half)((a) != 0 ? 0x3c00u : 0u))
#define DG_CV_B_R(a, D, S) ((dg_ct_##D)((a) != 0))
#define DG_CV_B_C(a, D, S) dg_##D##_mk((dg_part_##D)((a) != 0), (dg_part_##D)0)
#define DG_CV_I_B(a, D, S) ((dg_bool)((a) != 0))
#define DG_CV_I_I(a, D, S) ((dg_ct_##D)(a))
#define DG_CV_I_H(a, D, S) dg_float_to_half((float)(a))
#define DG_CV_I_R(a, D, S) ((dg_ct_##D)(a))
#define DG_CV_I_C(a, D, S) dg_##D##_mk((dg_part_##D)(a), (dg_part_##D)0)
#define DG_CV_H_B(a, D, S) ((dg_bool)(((a) & 0x7fffu) != 0))
#define DG_CV_H_I(a, D, S) dg_##D##_of_h(dg_half_to_float(a))
#define DG_CV_H_H(a, D, S) (a)
#define DG_CV_H_R(a, D, S) ((dg_ct_##D)dg_half_to_float(a))
#define DG_CV_H_C(a, D, S) dg_##D##_mk((dg_part_##D)dg_half_to_float(a), (dg_part_##D)0)
#define DG_CV_R_B(a, D, S) ((dg_bool)((a) != 0))
#define DG_CV_R_I(a, D, S) dg_##D##_of_d((double)(a))
#define DG_CV_R_H(a, D, S) dg_half_of_##S(a)
#define DG_CV_R_R(a, D, S) ((dg_ct_##D)(a))
#define DG_CV_R_C(a, D, S) dg_##D##_mk((dg_part_##D)(a), (dg_part_##D)0)
#define DG_CV_C_B(a, D, S) ((dg_bool)((a).re != 0 || (a).im != 0))
#define DG_CV_C_I(a, D, S) dg_##D##_of_d((double)(a).re)
#define DG_CV_C_H(a, D, S) dg_half_of_##S(a)
#define DG_CV_C_R(a, D, S) ((dg_ct_##D)(a).re)
#define DG_CV_C_C(a, D, S) dg_##D##_mk((dg_part_##D)(a).re, (dg_part_##D)(a).im)

#define DG_CAST1(S, SK, D, DK)                                                  \
    DG_HD dg_ct_##D dg_cast_##S##_##D(dg_ct_##S a) { return DG_CV_##SK##_##DK(a, D, S); }
#define DG_CAST_ROW(S, SK)                                                      \
    DG_CAST1(S, SK, b1, B) DG_CAST1(S, SK, i1, I) DG_CAST1(S, SK, u1, I)        \
    DG_CAST1(S, SK, i2, I) DG_CAST1(S, SK, u2, I) DG_CAST1(S, SK, i4, I)        \
    DG_CAST1(S, SK, u4, I) DG_CAST1(S, SK, i8, I) DG_CAST1(S, SK, u8, I)        \
    DG_CAST1(S, SK, f2, H) DG_CAST1(S, SK, f4, R) DG_CAST1(S, SK, f8, R)        \
    DG_CAST1(S, SK, c8, C) DG_CAST1(S, SK, c16, C)

DG_CAST_ROW(b1, B)
DG_CAST_ROW(i1, I)
DG_CAST_ROW(u1, I)
DG_CAST_ROW(i2, I)
DG_CAST_ROW(u2, I)
DG_CAST_ROW(i4, I)
DG_CAST_ROW(u4, I)
DG_CAST_ROW(i8, I)
DG_CAST_ROW(u8, I)
DG_CAST_ROW(f2, H)
DG_CAST_ROW(f4, R)
DG_CAST_ROW(f8, R)
DG_CAST_ROW(c8, C)
DG_CAST_ROW(c16, C)
#endif /* DG_SP(CAST) */

#if DG_SP(ARG)
/* =========================================================================
 * argmax / argmin order (NumPy's): a NaN beats every number (so the first
 * NaN wins), else the larger / smaller; complex lexicographically, a NaN in
 * either part making the value NaN.  dg_arg<max|min>_better_<t>(a, b): a is
 * a strictly better pick than b.
 * ========================================================================= */
#define DG_ARG_BETTER(E, t, ct, sz, ch, nm, kd)                                 \
    DG_HD int dg_argmax_better_##t(ct a, ct b)                                  \
    {                                                                           \
        return (dg_isnan_##t(a) && !dg_isnan_##t(b)) || dg_greater_##t(a, b);   \
    }                                                                           \
    DG_HD int dg_argmin_better_##t(ct a, ct b)                                  \
    {                                                                           \
        return (dg_isnan_##t(a) && !dg_isnan_##t(b)) || dg_less_##t(a, b);      \
    }
DG_DTYPE_LIST(DG_ARG_BETTER)

#if !defined(__CUDACC__)
/* The same on values stored at byte pointers, by dtype (host code). */
typedef int (*dg_arg_better_fn)(const void *a, const void *b);
#define DG_ARG_BETTER_PTR(E, t, ct, sz, ch, nm, kd)                             \
    static inline int dg_argmax_better_p_##t(const void *a, const void *b)      \
    {                                                                           \
        ct x, y;                                                                \
        memcpy(&x, a, sizeof x);                                                \
        memcpy(&y, b, sizeof y);                                                \
        return dg_argmax_better_##t(x, y);                                      \
    }                                                                           \
    static inline int dg_argmin_better_p_##t(const void *a, const void *b)      \
    {                                                                           \
        ct x, y;                                                                \
        memcpy(&x, a, sizeof x);                                                \
        memcpy(&y, b, sizeof y);                                                \
        return dg_argmin_better_##t(x, y);                                      \
    }
DG_DTYPE_LIST(DG_ARG_BETTER_PTR)

static inline dg_arg_better_fn dg_arg_better(int dtype, int is_min)
{
    switch (dtype) {
#define DG_ARG_BETTER_CASE(E, t, ct, sz, ch, nm, kd)                            \
    case DG_##E:                                                                \
        return is_min ? dg_argmin_better_p_##t : dg_argmax_better_p_##t;
        DG_DTYPE_LIST(DG_ARG_BETTER_CASE)
#undef DG_ARG_BETTER_CASE
    default:
        return NULL;
    }
}
#endif
#endif /* DG_SP(ARG) */

/* =========================================================================
 * Floating-point errors noted in software ([surface] item 3, dg_fpe.h).
 *
 * A GPU keeps no floating-point status, so its kernels classify results
 * themselves, where the call's action word watches anything: each element
 * whose result is odd (dg_fpe_odd_*: a float part not finite, or tiny while
 * underflow is watched; an integer division by 0 or -1; a float -> integer
 * cast out of range: rare, one compare) goes to dg_fpe_kinds, which says
 * what NumPy's loop raises there, from the loop's class (dg_fpe_cls):
 *   - invalid: a NaN out of inputs none of which is NaN;
 *   - divide: an infinity out of finite inputs at a pole of the function
 *     (DG_FPC_POLE*: divide, floor_divide, divmod by 0, reciprocal and
 *     power of 0, the log family, arctanh); integer division by 0;
 *   - overflow: an infinity out of finite inputs anywhere else; integer
 *     floor_divide / divmod of the type's minimum by -1;
 *   - underflow (only where watched: NumPy ignores it by default): a zero
 *     or subnormal result out of finite non-zero inputs, for the loops that
 *     round a tiny result (DG_FPC_UNDER: multiply, divide, power, exp, ...;
 *     not add or subtract, whose tiny results are exact).  Where the tiny
 *     result is exact (5e-324 * 1.0) the CPU raises nothing and this rule
 *     notes underflow.
 * The CPU backend runs the same rule instead of fenv under DGARRAY_FPE=soft
 * (cpu_loops.c), so that CI checks it against NumPy (tests/test_errstate.py
 * lists where it differs).
 * ========================================================================= */

/* Kinds: bit 1 << DG_FPE_<kind> of dg_fpe.h. */
#define DG_FK_DIVIDE 1u
#define DG_FK_OVER 2u
#define DG_FK_UNDER 4u
#define DG_FK_INVALID 8u

/* Loop classes (dg_fpe_cls), with DG_FPC_UNDER or'ed in. */
enum {
    DG_FPC_NONE = 0,  /* nothing noted (no float output; NumPy's loop raises nothing) */
    DG_FPC_FLOAT = 1, /* invalid and overflow as above */
    DG_FPC_POLE = 2,  /* an infinity out of finite inputs is divide */
    DG_FPC_POLE_A0 = 3, /* ... where the first input is 0, else overflow */
    DG_FPC_POLE_B0 = 4, /* ... where the second input is 0, else overflow */
    DG_FPC_INT_DIV = 5, /* integers: b == 0 divide, min / -1 overflow */
    DG_FPC_INT_MOD = 6, /* integers: b == 0 divide */
    DG_FPC_TO_INT = 7,  /* a float -> integer cast: NaN, inf or out of range: invalid */
    DG_FPC_INT_RECIP = 8, /* integer reciprocal: a == 0 divide and invalid */
    DG_FPC_QUIET = 9,   /* float output: underflow only (spacing) */
    DG_FPC_UNDER = 16   /* flag: a tiny result from non-zero inputs is underflow */
};

/* The ufuncs whose class is not DG_FPC_FLOAT for float outputs (fc) or not
 * DG_FPC_NONE for integer inputs (ic).  One list for the CPU emulation, the
 * CUDA kernels and the fused kernels' generator. */
#define DG_FPE_UFUNC_CLASSES(X)                                                \
    X(cast, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                          \
    X(multiply, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                      \
    X(square, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                        \
    X(divide, DG_FPC_POLE_B0 | DG_FPC_UNDER, DG_FPC_NONE)                      \
    X(floor_divide, DG_FPC_POLE_B0, DG_FPC_INT_DIV)                            \
    X(divmod, DG_FPC_POLE_B0, DG_FPC_INT_DIV)                                  \
    X(remainder, DG_FPC_FLOAT, DG_FPC_INT_MOD)                                 \
    X(fmod, DG_FPC_FLOAT, DG_FPC_INT_MOD)                                      \
    X(reciprocal, DG_FPC_POLE_A0 | DG_FPC_UNDER, DG_FPC_INT_RECIP)             \
    X(power, DG_FPC_POLE_A0 | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(float_power, DG_FPC_POLE_A0 | DG_FPC_UNDER, DG_FPC_NONE)                 \
    X(exp, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                           \
    X(exp2, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                          \
    X(ldexp, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                         \
    X(sin, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                           \
    X(arctan2, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(hypot, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                         \
    X(degrees, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(radians, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(deg2rad, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(rad2deg, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(nextafter, DG_FPC_FLOAT | DG_FPC_UNDER, DG_FPC_NONE)                     \
    X(spacing, DG_FPC_QUIET | DG_FPC_UNDER, DG_FPC_NONE)                       \
    X(log, DG_FPC_POLE, DG_FPC_NONE)                                           \
    X(log2, DG_FPC_POLE, DG_FPC_NONE)                                          \
    X(log10, DG_FPC_POLE, DG_FPC_NONE)                                         \
    X(log1p, DG_FPC_POLE, DG_FPC_NONE)                                         \
    X(arctanh, DG_FPC_POLE, DG_FPC_NONE)

/* Compile-time where a C++ compiler reads this (the kernels' templates);
 * DG_FPE_COLD: the rare branch, out of line in kernels (one copy per
 * translation unit, not one per loop). */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define DG_FPE_CX constexpr __host__ __device__
#define DG_FPE_COLD static __host__ __device__ __noinline__
#elif defined(__cplusplus)
#define DG_FPE_CX constexpr
#define DG_FPE_COLD static inline
#else
#define DG_FPE_CX static inline
#define DG_FPE_COLD static inline
#endif

DG_FPE_CX int dg_fpe_streq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* The kind character of dtype dt (dg_dtype_kind, at compile time). */
DG_FPE_CX char dg_fpe_kind(int dt)
{
    switch (dt) {
#define DG_FPE_KIND_X(E, sfx, ct, sz, ch, nm, kd)                              \
    case DG_##E:                                                               \
        return kd;
        DG_DTYPE_LIST(DG_FPE_KIND_X)
#undef DG_FPE_KIND_X
    default:
        return 0;
    }
}

/* The class of the loop of ufunc `uf` whose first input, second input (0
 * without one) and outputs are of dtype kinds k0, k1, o0, o1 ('b', 'i', 'u',
 * 'f', 'c'; 0 without one). */
DG_FPE_CX int dg_fpe_cls(const char *uf, char k0, char k1, char o0, char o1)
{
    const int isint = (k0 == 'i' || k0 == 'u') && (k1 == 0 || k1 == 'i' || k1 == 'u');
    const int fout = o0 == 'f' || o0 == 'c' || o1 == 'f' || o1 == 'c';
    int fc = DG_FPC_FLOAT, ic = DG_FPC_NONE;
#define DG_FPE_CLS_X(name, f, i)                                               \
    if (dg_fpe_streq(uf, #name)) {                                             \
        fc = (f);                                                              \
        ic = (i);                                                              \
    }
    DG_FPE_UFUNC_CLASSES(DG_FPE_CLS_X)
#undef DG_FPE_CLS_X
    if (dg_fpe_streq(uf, "cast") && (k0 == 'f' || k0 == 'c'))
        return o0 == 'i' || o0 == 'u' ? DG_FPC_TO_INT : o0 == 'b' ? DG_FPC_NONE : fc;
    if (isint && ic != DG_FPC_NONE && !fout)
        return ic;
    return fout ? fc : DG_FPC_NONE;
}

/* The smallest normal magnitude of a float dtype (of its parts). */
DG_FPE_CX double dg_fpe_tiny(int dt)
{
    return dt == DG_FLOAT16 ? 6.103515625e-05
           : dt == DG_FLOAT32 || dt == DG_COMPLEX64 ? 1.1754943508222875e-38
                                                    : 2.2250738585072014e-308;
}

/* x converts to integer dtype dt without the invalid operation of the
 * conversion (the ranges of dg_d_to_i32 and its kin). */
DG_HD int dg_fpe_int_ok(double x, int dt)
{
    switch (dt) {
    case DG_INT64: return x >= -9223372036854775808.0 && x < 9223372036854775808.0;
    case DG_UINT64: return x > -9223372036854775809.0 && x < 18446744073709551616.0;
    case DG_UINT32: return x > -2147483649.0 && x < 4294967296.0;
    case DG_BOOL: return 1;
    default: return x > -2147483649.0 && x < 2147483648.0;
    }
}

/* An element's results are odd (worth dg_fpe_kinds): the cheap test, per
 * float part, per divisor, per cast input.  For float parts: not finite,
 * or of magnitude below `tiny`, the smallest normal (dg_fpe_tiny) where
 * underflow is watched and the loop rounds tiny results, else 0 (then the
 * test is one compare, or'ed into the caller's flag: a kernel keeps tiny in
 * a register, chosen once). */
DG_HD int dg_fpe_odd_d(double x, double tiny)
{
    return !(fabs(x) < HUGE_VAL) || (tiny > 0.0 && fabs(x) < tiny);
}
DG_HD int dg_fpe_odd_f(float x, float tiny)
{
    return !(fabsf(x) < HUGE_VALF) || (tiny > 0.0f && fabsf(x) < tiny);
}
DG_HD int dg_fpe_odd_h(dg_half h, int under)
{
    return (h & 0x7c00u) == 0x7c00u || (under && (h & 0x7c00u) == 0);
}

/* One operand's value as the rule reads it. */
typedef struct dg_fpe_v {
    double re, im; /* a float or complex value; an integer's as double */
    int64_t i;     /* an integer's bits */
    int dt;        /* its dtype */
} dg_fpe_v;

/* The value of dtype dt at p. */
DG_HD dg_fpe_v dg_fpe_load(int dt, const void *p)
{
    dg_fpe_v v;
    const unsigned char *b = (const unsigned char *)p;
    v.re = v.im = 0.0;
    v.i = 0;
    v.dt = dt;
    switch (dt) {
    case DG_BOOL: v.i = b[0] != 0; break;
    case DG_INT8: v.i = *(const int8_t *)p; break;
    case DG_UINT8: v.i = b[0]; break;
    case DG_INT16: v.i = *(const int16_t *)p; break;
    case DG_UINT16: v.i = *(const uint16_t *)p; break;
    case DG_INT32: v.i = *(const int32_t *)p; break;
    case DG_UINT32: v.i = *(const uint32_t *)p; break;
    case DG_INT64: v.i = *(const int64_t *)p; break;
    case DG_UINT64: v.i = (int64_t)*(const uint64_t *)p; break;
    case DG_FLOAT16: v.re = (double)dg_half_to_float(*(const dg_half *)p); return v;
    case DG_FLOAT32: v.re = (double)*(const float *)p; return v;
    case DG_FLOAT64: v.re = *(const double *)p; return v;
    case DG_COMPLEX64:
        v.re = (double)((const float *)p)[0];
        v.im = (double)((const float *)p)[1];
        return v;
    case DG_COMPLEX128:
        v.re = ((const double *)p)[0];
        v.im = ((const double *)p)[1];
        return v;
    default: break;
    }
    v.re = dt == DG_UINT64 ? (double)(uint64_t)v.i : (double)v.i;
    return v;
}

/* The kinds (DG_FK_*) NumPy's loop of class cls raises for one element:
 * inputs in[0..nin), outputs out[0..nout); `under`: underflow is watched. */
DG_HD unsigned dg_fpe_rule(int cls, int under, int nin, const dg_fpe_v *in, int nout,
                           const dg_fpe_v *out)
{
    const int c = cls & 15;
    int nan_in = 0, fin_in = 1, zero_in = 0, k;
    unsigned r = 0;
    if (c == DG_FPC_NONE)
        return 0;
    if (c == DG_FPC_INT_DIV || c == DG_FPC_INT_MOD) {
        const int sgn = in[0].dt == DG_INT8 || in[0].dt == DG_INT16 || in[0].dt == DG_INT32 ||
                        in[0].dt == DG_INT64;
        const int bits = in[0].dt == DG_INT8 ? 8 : in[0].dt == DG_INT16 ? 16
                         : in[0].dt == DG_INT32 ? 32 : 64;
        if (in[1].i == 0)
            return DG_FK_DIVIDE;
        if (c == DG_FPC_INT_DIV && sgn && in[1].i == -1 &&
            in[0].i == (int64_t)(~(uint64_t)0 << (bits - 1)))
            return DG_FK_OVER;
        return 0;
    }
    if (c == DG_FPC_INT_RECIP)
        return in[0].i == 0 ? DG_FK_DIVIDE | DG_FK_INVALID : 0;
    if (c == DG_FPC_TO_INT)
        return in[0].re != in[0].re || !dg_fpe_int_ok(in[0].re, out[0].dt) ? DG_FK_INVALID : 0;
    for (k = 0; k < nin; k++) {
        nan_in |= in[k].re != in[k].re || in[k].im != in[k].im;
        fin_in &= fabs(in[k].re) < HUGE_VAL && fabs(in[k].im) < HUGE_VAL;
        zero_in |= in[k].re == 0.0 && in[k].im == 0.0;
    }
    for (k = 0; k < nout; k++) {
        const int dt = out[k].dt;
        int part;
        if (dt != DG_FLOAT16 && dt != DG_FLOAT32 && dt != DG_FLOAT64 && dt != DG_COMPLEX64 &&
            dt != DG_COMPLEX128)
            continue;
        for (part = 0; part < (dt == DG_COMPLEX64 || dt == DG_COMPLEX128 ? 2 : 1); part++) {
            const double x = part ? out[k].im : out[k].re;
            if (c == DG_FPC_QUIET && !(fabs(x) < dg_fpe_tiny(dt)))
                continue;
            if (x != x) {
                if (!nan_in)
                    r |= DG_FK_INVALID;
            } else if (!(fabs(x) < HUGE_VAL)) {
                if (fin_in)
                    r |= c == DG_FPC_POLE                          ? DG_FK_DIVIDE
                         : c == DG_FPC_POLE_A0 && in[0].re == 0.0 ? DG_FK_DIVIDE
                         : c == DG_FPC_POLE_B0 && nin > 1 && in[1].re == 0.0 &&
                                   in[1].im == 0.0
                             ? DG_FK_DIVIDE
                             : DG_FK_OVER;
            } else if (under && (cls & DG_FPC_UNDER) && fin_in && !zero_in && !nan_in &&
                       fabs(x) < dg_fpe_tiny(dt) && dt != DG_COMPLEX64 &&
                       dt != DG_COMPLEX128) {
                r |= DG_FK_UNDER;
            }
        }
    }
    return r;
}

/* dg_fpe_rule of the element whose operands (nin inputs, then outputs) of
 * dtypes dt[] are at p[]: inline (dg_fpe_rule_of: where the class, the
 * dtypes and the counts are constants, a few compares once inlined) or out
 * of line (dg_fpe_rule_at). */
DG_HD unsigned dg_fpe_rule_of(int cls, int under, int nin, int nop, const int *dt,
                              const void *const *p)
{
    dg_fpe_v v[4];
    int k;
    for (k = 0; k < nop; k++)
        v[k] = dg_fpe_load(dt[k], p[k]);
    return dg_fpe_rule(cls, under, nin, v, nop - nin, v + nin);
}
DG_FPE_COLD unsigned dg_fpe_rule_at(int cls, int under, int nin, int nop, const int *dt,
                                    const void *const *p)
{
    return dg_fpe_rule_of(cls, under, nin, nop, dt, p);
}

/* 1 where v (dtype dt) explains the result r of a fold that took it: r is
 * NaN and so is v, or r is infinite and v is NaN or infinite (the IEEE
 * rules carrying a NaN or an infinity on raise nothing). */
DG_HD int dg_fpe_fold_from(int dt, const void *v, const void *r)
{
    const dg_fpe_v a = dg_fpe_load(dt, v), o = dg_fpe_load(dt, r);
    const int nan_o = o.re != o.re || o.im != o.im, nan_a = a.re != a.re || a.im != a.im;
    return nan_o ? nan_a : (nan_a || !(fabs(a.re) < HUGE_VAL) || !(fabs(a.im) < HUGE_VAL));
}

/* The kinds NumPy's reduce and accumulate raise for one fold o = a op x of
 * a loop of class cls (add or multiply of floats; its three operands of
 * dtype dt): nothing where o is finite or an operand explains it, else the
 * rule (underflow not looked at).  The CPU backend's scans under
 * DGARRAY_FPE=soft, at every fold; the GPU kernels' check is the same
 * (ew.cuh, dg_ew_fold_kinds: its compare inline, then dg_fpe_fold_from
 * and the rule). */
DG_HD unsigned dg_fpe_fold_kinds(int cls, int dt, const void *a, const void *x, const void *o)
{
    const int d[3] = {dt, dt, dt};
    const void *const p[3] = {a, x, o};
    const dg_fpe_v r = dg_fpe_load(dt, o);
    if ((fabs(r.re) < HUGE_VAL && fabs(r.im) < HUGE_VAL) || dg_fpe_fold_from(dt, a, o) ||
        dg_fpe_fold_from(dt, x, o))
        return 0;
    return dg_fpe_rule_of(cls, 0, 2, 3, d, p);
}

/* The noted word (dg_fpe.h: bit kind * 8 + action) of `kinds` raised under
 * the action word `actions`: the kinds whose action is not ignore. */
DG_HD uint32_t dg_fpe_noted_bits(uint32_t actions, unsigned kinds)
{
    uint32_t bits = 0;
    int k;
    for (k = 0; k < 4; k++) {
        const uint32_t act = (actions >> (k * 4)) & 0xFu;
        if ((kinds >> k & 1u) && act != 0)
            bits |= 1u << (k * 8 + (int)act);
    }
    return bits;
}

/* Publishes the kinds (non-zero) a kernel's thread raised under the action
 * word `actions`, as dg_cu_fpe says (src/backend/cuda/cu_kernels.h): gate
 * (device memory) holds (generation << 32 | bits published in it); rec, in
 * mapped host memory, is { total, where, cnt[32] }.  The first thread of a
 * generation to raise a kind writes its count and `where`, then total;
 * the others read the gate and stop.  Out of line (the rare branch).  Off
 * the GPU (the host tests of generated kernels) the same, without atomics. */
DG_FPE_COLD void dg_fpe_publish(uint32_t actions, uint32_t gen, unsigned long long *gate,
                                uint32_t *rec, int32_t where, unsigned kinds)
{
    const unsigned long long bits = dg_fpe_noted_bits(actions, kinds);
    unsigned long long cur = *(volatile unsigned long long *)gate, fresh = 0;
    int b;
    if (bits == 0)
        return;
    for (;;) {
        const uint32_t g = (uint32_t)(cur >> 32);
        const unsigned long long have = g == gen ? (cur & 0xffffffffull) : 0;
        const unsigned long long want = ((unsigned long long)gen << 32) | have | bits;
        unsigned long long prev;
        if (g == gen && (cur & bits) == bits)
            return; /* published in this generation */
        if ((int32_t)(g - gen) > 0) {
            fresh = bits; /* a launch of an older generation: published ungated */
            break;
        }
#if defined(__CUDA_ARCH__)
        prev = atomicCAS(gate, cur, want);
#else
        prev = *gate;
        if (prev == cur)
            *gate = want;
#endif
        if (prev == cur) {
            fresh = bits & ~have;
            break;
        }
        cur = prev;
    }
    ((volatile uint32_t *)rec)[1] = (uint32_t)where;
#if defined(__CUDA_ARCH__)
    __threadfence_system();
    for (b = 0; b < 32; b++)
        if (fresh >> b & 1u)
            atomicAdd(&rec[2 + b], 1u);
    __threadfence_system();
    atomicAdd(&rec[0], 1u);
#else
    for (b = 0; b < 32; b++)
        if (fresh >> b & 1u)
            rec[2 + b]++;
    rec[0]++;
#endif
}

/* dg_fpe_publish of the kinds the threads of a warp raised, or'ed: one
 * thread publishes for the warp where any raised one (a kernel whose every
 * element overflows reads the gate once per warp, not once per thread);
 * nothing where none did.  Before sm_80 (no __reduce_or_sync) and off the
 * GPU, each thread its own. */
DG_HD void dg_fpe_publish_warp(uint32_t actions, uint32_t gen, unsigned long long *gate,
                               uint32_t *rec, int32_t where, unsigned kinds)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned m = __activemask();
    unsigned lane;
    if (!__any_sync(m, kinds != 0))
        return;
    kinds = __reduce_or_sync(m, kinds);
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    if (lane != (unsigned)(__ffs(m) - 1))
        return;
#endif
    if (kinds != 0)
        dg_fpe_publish(actions, gen, gate, rec, where, kinds);
}

#endif /* DG_SCALAR_H */
