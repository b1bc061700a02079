/* Floating-point errors noted by the kernels ([surface] item 3): the device
 * side of dg_cu_fpe (src/backend/cuda/cu_kernels.h).
 *
 * A kernel whose call watches something (dg_cu_fpe.actions != 0) or's the
 * kinds (DG_FK_*) its elements raised into a register, by
 * kernels/dg_scalar.h's rule, and hands them to dg_cu_fpe_publish at its
 * end: nothing happens for 0; else, once per generation of the device, the
 * noted bits reach the device's record in mapped host memory. */
#ifndef DG_FPE_CUH
#define DG_FPE_CUH

#include "cu_kernels.h"
#include "dg_scalar.h"

/* Publishes the kinds a thread raised (nothing for 0): dg_scalar.h's
 * dg_fpe_publish, the first thread of a generation to raise a kind writing
 * to host memory, the others reading the gate (one load in L2). */
static __device__ __forceinline__ void dg_cu_fpe_publish(const dg_cu_fpe &f, unsigned kinds)
{
    if (kinds != 0)
        dg_fpe_publish(f.actions, f.gen, f.gate, (uint32_t *)f.rec, f.where, kinds);
}

/* 1 where operand value x of dtype D is odd (dg_scalar.h's dg_fpe_odd_*):
 * a float part not finite, or tiny where underflow is watched. */
template <int D, class T> __device__ __forceinline__ bool dg_cu_fpe_odd(const T &x, bool under)
{
    if constexpr (D == DG_FLOAT16)
        return dg_fpe_odd_h(x, under);
    else if constexpr (D == DG_FLOAT32)
        return dg_fpe_odd_f(x, under);
    else if constexpr (D == DG_FLOAT64)
        return dg_fpe_odd_d(x, under, 2.2250738585072014e-308);
    else if constexpr (D == DG_COMPLEX64)
        return dg_fpe_odd_f(x.re, under) || dg_fpe_odd_f(x.im, under);
    else if constexpr (D == DG_COMPLEX128)
        return dg_fpe_odd_d(x.re, under, 2.2250738585072014e-308) ||
               dg_fpe_odd_d(x.im, under, 2.2250738585072014e-308);
    else
        return false;
}

/* The kinds one element of a loop of class C raised: operands a, b, o, o1
 * in the loop's order (inputs, then outputs; NIN inputs, NOP in all) of
 * dtypes D0..D3.  The common case is one compare per output (or per
 * divisor, per cast input); dg_fpe_rule_at, out of line, classifies the odd
 * ones.  `actions` != 0 (the caller tests it once per thread). */
template <int C, int NIN, int NOP, int D0, int D1, int D2, int D3, class T0, class T1, class T2,
          class T3>
__device__ __forceinline__ unsigned dg_cu_fpe_check(uint32_t actions, const T0 &a, const T1 &b,
                                                    const T2 &o, const T3 &o1)
{
    if constexpr ((C & 15) == DG_FPC_NONE) {
        return 0;
    } else {
        const bool under = (C & DG_FPC_UNDER) && ((actions >> 8) & 0xFu) != 0;
        bool odd = false;
        if constexpr ((C & 15) == DG_FPC_INT_DIV || (C & 15) == DG_FPC_INT_MOD) {
            odd = b == (T1)0 || b == (T1)-1;
        } else if constexpr ((C & 15) == DG_FPC_INT_RECIP) {
            odd = a == (T0)0;
        } else if constexpr ((C & 15) == DG_FPC_TO_INT) {
            const double x = dg_fpe_load(D0, &a).re;
            odd = !dg_fpe_int_ok(x, D1) || x != x;
        } else {
            if constexpr (NIN == 1) {
                odd = dg_cu_fpe_odd<D1>(b, under);
                if constexpr (NOP > 2)
                    odd = odd || dg_cu_fpe_odd<D2>(o, under);
            } else {
                odd = dg_cu_fpe_odd<D2>(o, under);
                if constexpr (NOP > 3)
                    odd = odd || dg_cu_fpe_odd<D3>(o1, under);
            }
        }
        if (!odd)
            return 0;
        const int dt[4] = {D0, D1, D2, D3};
        const void *const p[4] = {&a, &b, &o, &o1};
        return dg_fpe_rule_at(C, under, NIN, NOP, dt, p);
    }
}

#endif /* DG_FPE_CUH */
