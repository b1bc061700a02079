/* Floating-point errors noted by the kernels ([surface] item 3): the device
 * side of dg_cu_fpe (src/backend/cuda/cu_kernels.h).
 *
 * A kernel whose call watches something (dg_cu_fpe.actions != 0) or's the
 * kinds (DG_FK_*) its elements raised into a register, by
 * kernels/dg_scalar.h's rule, and hands them to dg_cu_fpe_publish at its
 * end: nothing happens for 0; else, once per generation of the device, the
 * noted bits reach the device's record in mapped host memory.  The rule
 * runs only for the elements of an iteration in which one's results were
 * odd (dg_cu_fpe_odd_el: a compare per element, or'ed into a flag), so
 * that the common path holds no call (a call in the loop keeps the live
 * values in registers across it, and its branch costs more than the test). */
#ifndef DG_FPE_CUH
#define DG_FPE_CUH

#include "cu_kernels.h"
#include "dg_scalar.h"

/* Publishes the kinds a thread raised (nothing for 0): dg_scalar.h's
 * dg_fpe_publish_warp, one thread of a warp for its threads' kinds; the
 * first thread of a generation to raise a kind writing to host memory, the
 * others reading the gate (one load in L2). */
static __device__ __forceinline__ void dg_cu_fpe_publish(const dg_cu_fpe &f, unsigned kinds)
{
    dg_fpe_publish_warp(f.actions, f.gen, f.gate, (uint32_t *)f.rec, f.where, kinds);
}

/* Underflow is watched for loop L's elements: its action word watches it
 * and the loop rounds tiny results (DG_FPC_UNDER). */
template <class L> __device__ __forceinline__ bool dg_cu_fpe_under(uint32_t actions)
{
    return (L::CLS & DG_FPC_UNDER) && ((actions >> 8) & 0xFu) != 0;
}

/* 1 where operand value x of dtype D is odd (dg_scalar.h's dg_fpe_odd_*):
 * a float part not finite, or tiny where underflow is watched; in bool
 * operations (two compares, no branch; a threshold of 0 where underflow is
 * not watched made ptxas spill in float32 multiply's kernel). */
template <int D, class T> __device__ __forceinline__ bool dg_cu_fpe_odd(const T &x, bool under)
{
    if constexpr (D == DG_FLOAT16) {
        return dg_fpe_odd_h(x, under);
    } else if constexpr (D == DG_FLOAT32) {
        return !(fabsf(x) < HUGE_VALF) | (under & (fabsf(x) < 1.17549435e-38f));
    } else if constexpr (D == DG_FLOAT64) {
        return !(fabs(x) < HUGE_VAL) | (under & (fabs(x) < 2.2250738585072014e-308));
    } else if constexpr (D == DG_COMPLEX64) {
        return dg_cu_fpe_odd<DG_FLOAT32>(x.re, under) | dg_cu_fpe_odd<DG_FLOAT32>(x.im, under);
    } else if constexpr (D == DG_COMPLEX128) {
        return dg_cu_fpe_odd<DG_FLOAT64>(x.re, under) | dg_cu_fpe_odd<DG_FLOAT64>(x.im, under);
    } else {
        return false;
    }
}

/* dg_fpe_rule of one element of loop L (operands by value, in the loop's
 * order): out of line, one copy per loop, so that each unrolled element of
 * each kernel adds a call, not the classification; the rule inline there
 * (dg_fpe_rule_of, the loop's class and dtypes constants: a few compares,
 * no stack), not the generic dg_fpe_rule_at (its operands through local
 * memory: 192 bytes of stack and 48 registers for float32 multiply's
 * contiguous kernel, 34 and none now; ew_0.cu compiles as fast). */
template <class L, class T0, class T1, class T2, class T3>
static __device__ __noinline__ unsigned dg_cu_fpe_classify(bool under, T0 a, T1 b, T2 o, T3 o1)
{
    const int dt[4] = {L::D0, L::D1, L::D2, L::D3};
    const void *const p[4] = {&a, &b, &o, &o1};
    return dg_fpe_rule_of(L::CLS, under, L::NIN, L::NIN + L::NOUT, dt, p);
}

/* 1 where one element of loop L is odd (worth dg_cu_fpe_classify):
 * operands a, b, o, o1 in the loop's order (inputs, then outputs); one
 * compare per float output (two where underflow is watched, `under`:
 * dg_cu_fpe_under), per divisor, per cast input.  The kernels or it into a
 * flag per iteration and classify the iteration's elements where it holds. */
template <class L, class T0, class T1, class T2, class T3>
__device__ __forceinline__ bool dg_cu_fpe_odd_el(bool under, const T0 &a, const T1 &b,
                                                 const T2 &o, const T3 &o1)
{
    constexpr int C = L::CLS;
    if constexpr ((C & 15) == DG_FPC_NONE) {
        return false;
    } else if constexpr ((C & 15) == DG_FPC_INT_DIV || (C & 15) == DG_FPC_INT_MOD) {
        return b == (T1)0 || b == (T1)-1;
    } else if constexpr ((C & 15) == DG_FPC_INT_RECIP) {
        return a == (T0)0;
    } else if constexpr ((C & 15) == DG_FPC_TO_INT) {
        return !dg_fpe_int_ok(dg_fpe_load(L::D0, &a).re, L::D1);
    } else if constexpr (L::NIN == 1) {
        if constexpr (L::NOUT > 1)
            return dg_cu_fpe_odd<L::D1>(b, under) | dg_cu_fpe_odd<L::D2>(o, under);
        else
            return dg_cu_fpe_odd<L::D1>(b, under);
    } else {
        if constexpr (L::NOUT > 1)
            return dg_cu_fpe_odd<L::D2>(o, under) | dg_cu_fpe_odd<L::D3>(o1, under);
        else
            return dg_cu_fpe_odd<L::D2>(o, under);
    }
}

/* The kinds one element of loop L raised (operands as dg_cu_fpe_odd_el's):
 * the cheap test, and the rule, out of line, for an odd element.  `actions`
 * != 0 (the caller tests it). */
template <class L, class T0, class T1, class T2, class T3>
__device__ __forceinline__ unsigned dg_cu_fpe_check(uint32_t actions, const T0 &a, const T1 &b,
                                                    const T2 &o, const T3 &o1)
{
    const bool under = dg_cu_fpe_under<L>(actions);
    if constexpr ((L::CLS & 15) == DG_FPC_NONE)
        return 0;
    else
        return dg_cu_fpe_odd_el<L>(under, a, b, o, o1) ? dg_cu_fpe_classify<L>(under, a, b, o, o1)
                                                        : 0u;
}

#endif /* DG_FPE_CUH */
