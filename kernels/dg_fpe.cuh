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
        return dg_fpe_odd_f(x, under ? 1.17549435e-38f : 0.0f);
    else if constexpr (D == DG_FLOAT64)
        return dg_fpe_odd_d(x, under ? 2.2250738585072014e-308 : 0.0);
    else if constexpr (D == DG_COMPLEX64)
        return dg_fpe_odd_f(x.re, under ? 1.17549435e-38f : 0.0f) ||
               dg_fpe_odd_f(x.im, under ? 1.17549435e-38f : 0.0f);
    else if constexpr (D == DG_COMPLEX128)
        return dg_fpe_odd_d(x.re, under ? 2.2250738585072014e-308 : 0.0) ||
               dg_fpe_odd_d(x.im, under ? 2.2250738585072014e-308 : 0.0);
    else
        return false;
}

/* dg_fpe_rule_at of one element of loop L (operands by value, in the
 * loop's order): out of line, one copy per loop, so that each unrolled
 * element of each kernel adds a call, not the classification. */
template <class L, class T0, class T1, class T2, class T3>
static __device__ __noinline__ unsigned dg_cu_fpe_classify(bool under, T0 a, T1 b, T2 o, T3 o1)
{
    const int dt[4] = {L::D0, L::D1, L::D2, L::D3};
    const void *const p[4] = {&a, &b, &o, &o1};
    return dg_fpe_rule_at(L::CLS, under, L::NIN, L::NIN + L::NOUT, dt, p);
}

/* The kinds one element of loop L raised: operands a, b, o, o1 in the
 * loop's order (inputs, then outputs).  The common case is one compare per
 * output (or per divisor, per cast input); dg_cu_fpe_classify, out of line,
 * classifies the odd ones.  `actions` != 0 (the caller tests it). */
template <class L, class T0, class T1, class T2, class T3>
__device__ __forceinline__ unsigned dg_cu_fpe_check(uint32_t actions, const T0 &a, const T1 &b,
                                                    const T2 &o, const T3 &o1)
{
    constexpr int C = L::CLS;
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
            odd = !dg_fpe_int_ok(dg_fpe_load(L::D0, &a).re, L::D1);
        } else if constexpr (L::NIN == 1) {
            odd = dg_cu_fpe_odd<L::D1>(b, under);
            if constexpr (L::NOUT > 1)
                odd = odd || dg_cu_fpe_odd<L::D2>(o, under);
        } else {
            odd = dg_cu_fpe_odd<L::D2>(o, under);
            if constexpr (L::NOUT > 1)
                odd = odd || dg_cu_fpe_odd<L::D3>(o1, under);
        }
        return odd ? dg_cu_fpe_classify<L>(under, a, b, o, o1) : 0u;
    }
}

#endif /* DG_FPE_CUH */
