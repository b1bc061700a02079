/* The typed loops of every ufunc, listed once (see dg_ufunc.h).
 *
 * DG_LOOP_LIST(L1, L2, L12, L22) calls, for each loop:
 *   L1(ufunc, ti, to, fn)              one input, one output
 *   L2(ufunc, ta, tb, to, fn)          two inputs, one output
 *   L12(ufunc, ti, to0, to1, fn)       one input, two outputs
 *   L22(ufunc, ta, tb, to0, to1, fn)   two inputs, two outputs
 * where t* are dtype suffixes of DG_DTYPE_LIST (b1 i1 u1 i2 u2 i4 u4 i8 u8 f2
 * f4 f8 c8 c16) and fn names a scalar function of kernels/dg_scalar.h:
 *   L1:  to_ctype  fn(ti_ctype a)
 *   L2:  to_ctype  fn(ta_ctype a, tb_ctype b)
 *   L12: void      fn(ti_ctype a, to0_ctype *o0, to1_ctype *o1)
 *   L22: void      fn(ta_ctype a, tb_ctype b, to0_ctype *o0, to1_ctype *o1)
 * The loops are NumPy's loops for these dtypes (ufunc.types), so that every
 * signature NumPy resolves for numeric inputs has a loop here.
 *
 * Order (relied on by dg_ufunc.c, checked there):
 *   - loops are grouped by ufunc, the groups in DG_UFUNC_LIST order;
 *   - `cast` comes first, from-major: loop id of cast(from, to) is
 *     from * DG_NDTYPES + to;
 *   - within a ufunc, NumPy's order of ufunc.types.
 * fn is always dg_<ufunc>_<suffix of the first input>, with the second input's
 * suffix appended where the inputs differ (dg_ldexp_f4i8, dg_less_i8u8), and
 * dg_cast_<from>_<to> for casts.
 *
 * One loop depends on its strides as NumPy's does: power of float32 and
 * float64, when the exponent has stride 0 (broadcast or scalar), must call
 * dg_power_<t>_sexp instead of dg_power_<t> (NumPy's fast path: sqrt for an
 * exponent of 0.5, 1/a for -1, ...).
 *
 * The list is built from dtype groups (DG_LG_*) applied to loop shapes
 * (DG_LS_*); these helpers are part of the list, not an interface. */
#ifndef DG_LOOPS_H
#define DG_LOOPS_H

#include "dg_dtype.h"

/* dg_ct_<sfx>: the C type of a dtype suffix (dg_ct_f4 is float). */
#define DG_X_CTYPEDEF(E, sfx, ct, sz, ch, nm, kd) typedef ct dg_ct_##sfx;
DG_DTYPE_LIST(DG_X_CTYPEDEF)
#undef DG_X_CTYPEDEF

/* DG_DT_<sfx>: the dg_dtype of a dtype suffix (DG_DT_f4 == DG_FLOAT32). */
enum {
#define DG_X_DTSFX(E, sfx, ct, sz, ch, nm, kd) DG_DT_##sfx = DG_##E,
    DG_DTYPE_LIST(DG_X_DTSFX)
#undef DG_X_DTSFX
    DG_DT_SFX_END_
};

/* ---- dtype groups: M(L, ufunc, sfx) for each dtype of the group ---- */
#define DG_LG_B(M, L, u)    M(L, u, b1)
#define DG_LG_I(M, L, u)                                                  \
    M(L, u, i1) M(L, u, u1) M(L, u, i2) M(L, u, u2)                       \
    M(L, u, i4) M(L, u, u4) M(L, u, i8) M(L, u, u8)
#define DG_LG_F(M, L, u)    M(L, u, f2) M(L, u, f4) M(L, u, f8)
#define DG_LG_C(M, L, u)    M(L, u, c8) M(L, u, c16)
#define DG_LG_BI(M, L, u)   DG_LG_B(M, L, u) DG_LG_I(M, L, u)
#define DG_LG_IF(M, L, u)   DG_LG_I(M, L, u) DG_LG_F(M, L, u)
#define DG_LG_FC(M, L, u)   DG_LG_F(M, L, u) DG_LG_C(M, L, u)
#define DG_LG_BIF(M, L, u)  DG_LG_B(M, L, u) DG_LG_IF(M, L, u)
#define DG_LG_IFC(M, L, u)  DG_LG_IF(M, L, u) DG_LG_C(M, L, u)
#define DG_LG_ALL(M, L, u)  DG_LG_B(M, L, u) DG_LG_IFC(M, L, u)

/* ---- loop shapes ---- */
#define DG_LS_11(L, u, t) L(u, t, t, dg_##u##_##t)        /* t -> t */
#define DG_LS_1B(L, u, t) L(u, t, b1, dg_##u##_##t)       /* t -> bool */
#define DG_LS_21(L, u, t) L(u, t, t, t, dg_##u##_##t)     /* t, t -> t */
#define DG_LS_2B(L, u, t) L(u, t, t, b1, dg_##u##_##t)    /* t, t -> bool */
#define DG_LS_12(L, u, t) L(u, t, t, t, dg_##u##_##t)     /* t -> t, t */
#define DG_LS_22(L, u, t) L(u, t, t, t, t, dg_##u##_##t)  /* t, t -> t, t */
#define DG_LS_FREXP(L, u, t) L(u, t, t, i4, dg_##u##_##t) /* t -> t, int32 */
#define DG_LS_POPC(L, u, t) L(u, t, u1, dg_##u##_##t)     /* t -> uint8 */

/* ---- cast: every ordered pair, from-major ---- */
#define DG_LS_CAST(L, from, to) L(cast, from, to, dg_cast_##from##_##to)
#define DG_LOOPS_CAST_ROW(L, from)                                        \
    DG_LS_CAST(L, from, b1) DG_LS_CAST(L, from, i1)                       \
    DG_LS_CAST(L, from, u1) DG_LS_CAST(L, from, i2)                       \
    DG_LS_CAST(L, from, u2) DG_LS_CAST(L, from, i4)                       \
    DG_LS_CAST(L, from, u4) DG_LS_CAST(L, from, i8)                       \
    DG_LS_CAST(L, from, u8) DG_LS_CAST(L, from, f2)                       \
    DG_LS_CAST(L, from, f4) DG_LS_CAST(L, from, f8)                       \
    DG_LS_CAST(L, from, c8) DG_LS_CAST(L, from, c16)
#define DG_LOOPS_CAST(L)                                                  \
    DG_LOOPS_CAST_ROW(L, b1) DG_LOOPS_CAST_ROW(L, i1)                     \
    DG_LOOPS_CAST_ROW(L, u1) DG_LOOPS_CAST_ROW(L, i2)                     \
    DG_LOOPS_CAST_ROW(L, u2) DG_LOOPS_CAST_ROW(L, i4)                     \
    DG_LOOPS_CAST_ROW(L, u4) DG_LOOPS_CAST_ROW(L, i8)                     \
    DG_LOOPS_CAST_ROW(L, u8) DG_LOOPS_CAST_ROW(L, f2)                     \
    DG_LOOPS_CAST_ROW(L, f4) DG_LOOPS_CAST_ROW(L, f8)                     \
    DG_LOOPS_CAST_ROW(L, c8) DG_LOOPS_CAST_ROW(L, c16)

/* Comparisons: bool, ints, NumPy's int64/uint64 mixed loops, floats, complex. */
#define DG_LOOPS_CMP(L2, u)                                               \
    DG_LG_BI(DG_LS_2B, L2, u)                                             \
    L2(u, i8, u8, b1, dg_##u##_i8u8) L2(u, u8, i8, b1, dg_##u##_u8i8)     \
    DG_LG_FC(DG_LS_2B, L2, u)

#define DG_LOOP_LIST(L1, L2, L12, L22)                                    \
    DG_LOOPS_CAST(L1)                                                     \
    DG_LG_ALL(DG_LS_21, L2, add)                                          \
    DG_LG_IFC(DG_LS_21, L2, subtract)                                     \
    DG_LG_ALL(DG_LS_21, L2, multiply)                                     \
    DG_LG_FC(DG_LS_21, L2, divide)                                        \
    DG_LG_IF(DG_LS_21, L2, floor_divide)                                  \
    DG_LG_IF(DG_LS_21, L2, remainder)                                     \
    DG_LG_IF(DG_LS_21, L2, fmod)                                          \
    DG_LG_IF(DG_LS_22, L22, divmod)                                       \
    DG_LG_IFC(DG_LS_21, L2, power)                                        \
    DG_LS_21(L2, float_power, f8) DG_LS_21(L2, float_power, c16)          \
    DG_LG_IFC(DG_LS_11, L1, negative)                                     \
    DG_LG_IFC(DG_LS_11, L1, positive)                                     \
    DG_LG_BIF(DG_LS_11, L1, absolute)                                     \
    L1(absolute, c8, f4, dg_absolute_c8)                                  \
    L1(absolute, c16, f8, dg_absolute_c16)                                \
    DG_LG_F(DG_LS_11, L1, fabs)                                           \
    DG_LG_IFC(DG_LS_11, L1, sign)                                         \
    DG_LG_IFC(DG_LS_11, L1, conjugate)                                    \
    DG_LG_IFC(DG_LS_11, L1, reciprocal)                                   \
    DG_LG_IFC(DG_LS_11, L1, square)                                       \
    DG_LG_FC(DG_LS_11, L1, sqrt)                                          \
    DG_LG_F(DG_LS_11, L1, cbrt)                                           \
    DG_LG_F(DG_LS_21, L2, heaviside)                                      \
    DG_LG_FC(DG_LS_11, L1, exp)                                           \
    DG_LG_FC(DG_LS_11, L1, exp2)                                          \
    DG_LG_FC(DG_LS_11, L1, expm1)                                         \
    DG_LG_FC(DG_LS_11, L1, log)                                           \
    DG_LG_FC(DG_LS_11, L1, log2)                                          \
    DG_LG_FC(DG_LS_11, L1, log10)                                         \
    DG_LG_FC(DG_LS_11, L1, log1p)                                         \
    DG_LG_F(DG_LS_21, L2, logaddexp)                                      \
    DG_LG_F(DG_LS_21, L2, logaddexp2)                                     \
    DG_LG_FC(DG_LS_11, L1, sin)                                           \
    DG_LG_FC(DG_LS_11, L1, cos)                                           \
    DG_LG_FC(DG_LS_11, L1, tan)                                           \
    DG_LG_FC(DG_LS_11, L1, arcsin)                                        \
    DG_LG_FC(DG_LS_11, L1, arccos)                                        \
    DG_LG_FC(DG_LS_11, L1, arctan)                                        \
    DG_LG_F(DG_LS_21, L2, arctan2)                                        \
    DG_LG_F(DG_LS_21, L2, hypot)                                          \
    DG_LG_FC(DG_LS_11, L1, sinh)                                          \
    DG_LG_FC(DG_LS_11, L1, cosh)                                          \
    DG_LG_FC(DG_LS_11, L1, tanh)                                          \
    DG_LG_FC(DG_LS_11, L1, arcsinh)                                       \
    DG_LG_FC(DG_LS_11, L1, arccosh)                                       \
    DG_LG_FC(DG_LS_11, L1, arctanh)                                       \
    DG_LG_F(DG_LS_11, L1, degrees)                                        \
    DG_LG_F(DG_LS_11, L1, radians)                                        \
    DG_LG_F(DG_LS_11, L1, deg2rad)                                        \
    DG_LG_F(DG_LS_11, L1, rad2deg)                                        \
    DG_LG_FC(DG_LS_11, L1, rint)                                          \
    DG_LG_BIF(DG_LS_11, L1, floor)                                        \
    DG_LG_BIF(DG_LS_11, L1, ceil)                                         \
    DG_LG_BIF(DG_LS_11, L1, trunc)                                        \
    DG_LG_ALL(DG_LS_1B, L1, isfinite)                                     \
    DG_LG_ALL(DG_LS_1B, L1, isinf)                                        \
    DG_LG_ALL(DG_LS_1B, L1, isnan)                                        \
    DG_LG_F(DG_LS_1B, L1, signbit)                                        \
    DG_LG_F(DG_LS_21, L2, copysign)                                       \
    DG_LG_F(DG_LS_21, L2, nextafter)                                      \
    DG_LG_F(DG_LS_11, L1, spacing)                                        \
    DG_LG_F(DG_LS_12, L12, modf)                                          \
    DG_LG_F(DG_LS_FREXP, L12, frexp)                                      \
    L2(ldexp, f2, i4, f2, dg_ldexp_f2i4) L2(ldexp, f4, i4, f4, dg_ldexp_f4i4) \
    L2(ldexp, f2, i8, f2, dg_ldexp_f2i8) L2(ldexp, f4, i8, f4, dg_ldexp_f4i8) \
    L2(ldexp, f8, i4, f8, dg_ldexp_f8i4) L2(ldexp, f8, i8, f8, dg_ldexp_f8i8) \
    DG_LOOPS_CMP(L2, greater)                                             \
    DG_LOOPS_CMP(L2, greater_equal)                                       \
    DG_LOOPS_CMP(L2, less)                                                \
    DG_LOOPS_CMP(L2, less_equal)                                          \
    DG_LOOPS_CMP(L2, equal)                                               \
    DG_LOOPS_CMP(L2, not_equal)                                           \
    DG_LG_ALL(DG_LS_2B, L2, logical_and)                                  \
    DG_LG_ALL(DG_LS_2B, L2, logical_or)                                   \
    DG_LG_ALL(DG_LS_2B, L2, logical_xor)                                  \
    DG_LG_ALL(DG_LS_1B, L1, logical_not)                                  \
    DG_LG_ALL(DG_LS_21, L2, maximum)                                      \
    DG_LG_ALL(DG_LS_21, L2, minimum)                                      \
    DG_LG_ALL(DG_LS_21, L2, fmax)                                         \
    DG_LG_ALL(DG_LS_21, L2, fmin)                                         \
    DG_LG_BI(DG_LS_21, L2, bitwise_and)                                   \
    DG_LG_BI(DG_LS_21, L2, bitwise_or)                                    \
    DG_LG_BI(DG_LS_21, L2, bitwise_xor)                                   \
    DG_LG_BI(DG_LS_11, L1, invert)                                        \
    DG_LG_I(DG_LS_21, L2, left_shift)                                     \
    DG_LG_I(DG_LS_21, L2, right_shift)                                    \
    DG_LG_I(DG_LS_POPC, L1, bitwise_count)                                \
    DG_LG_I(DG_LS_21, L2, gcd)                                            \
    DG_LG_I(DG_LS_21, L2, lcm)

/* DG_NLOOPS: the number of loops, as a compile-time constant. */
#define DG_LCOUNT1_(u, a, o, fn) +1
#define DG_LCOUNT2_(u, a, b, o, fn) +1
#define DG_LCOUNT12_(u, a, o0, o1, fn) +1
#define DG_LCOUNT22_(u, a, b, o0, o1, fn) +1
enum {
    DG_NLOOPS = 0 DG_LOOP_LIST(DG_LCOUNT1_, DG_LCOUNT2_, DG_LCOUNT12_, DG_LCOUNT22_)
};

#endif /* DG_LOOPS_H */
