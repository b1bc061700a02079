/* Elementwise kernels, generated from DG_LOOP_LIST (src/core/dg_loops.h).
 *
 * Each loop of the list becomes one specialisation dg_ew_loop<I> (I its
 * position in the list) holding the operand types and an `eval` that calls
 * the loop's scalar function of kernels/dg_scalar.h.  Two kernel templates run
 * any loop:
 *   - dg_ew_contig_k: every operand dense (or a scalar), `vec` elements per
 *     thread moved with one aligned load/store of up to 16 bytes per operand;
 *   - dg_ew_strided_k: N-d strided and broadcast operands (byte strides, 0 to
 *     broadcast), scalars passed by value, the where mask.
 * The host (src/backend/cuda/cuda_ew.c) chooses between them.
 *
 * The kernels are compiled in DG_CU_EW_NPARTS translation units
 * (kernels/ew_<k>.cu) so that the build runs in parallel: a part defines
 * DG_EW_PART and includes this file, which instantiates the kernels of the
 * loops I with I % DG_CU_EW_NPARTS == DG_EW_PART only, and exports their
 * launchers as dg_cu_ew_part_<k>[I / DG_CU_EW_NPARTS].  kernels/ew_table.cu
 * includes this file without DG_EW_PART: it instantiates no kernel and only
 * builds the info table and the dispatch over the parts.
 *
 * Loops whose kernels would compute the same bytes as another loop's
 * (kernels/dg_same_bits.h: int32 add is uint32 add) have none of their own:
 * their entry is empty, and the dispatch (dg_cu_ew_entry_get) returns that
 * loop's entry.
 *
 * The loops are numbered with __COUNTER__ as the list expands (checked
 * against DG_NLOOPS below), and every launcher entry carries the number it
 * was made for, which the backend checks when it starts. */
#ifndef DG_EW_CUH
#define DG_EW_CUH

#include <stddef.h>
#include <stdint.h>
#include <type_traits>
#include <utility>

#include "cu_kernels.h"
#include "dg_dtype.h"
#include "dg_loops.h"
#include "dg_fpe.cuh"
#include "dg_same_bits.h"
#include "dg_scalar.h"

/* The type of an operand slot a loop does not use. */
struct dg_ew_none {};

template <class T> struct dg_ew_size { static constexpr int value = (int)sizeof(T); };
template <> struct dg_ew_size<dg_ew_none> { static constexpr int value = 0; };

/* dg_ew_loop<I>: loop I of DG_LOOP_LIST, of the ufunc NAME.  NIN inputs, NOUT outputs; operand
 * types T0..T3 (inputs first, dg_ew_none past NIN + NOUT); eval reads the
 * inputs and writes the outputs of one element. */
template <int I> struct dg_ew_loop;

constexpr bool dg_ew_streq(const char *a, const char *b)
{
    return *a == *b && (*a == 0 || dg_ew_streq(a + 1, b + 1));
}

/* NumPy's float32/float64 power loop takes its own path when the exponent is
 * one value for every element (dg_power_<t>_sexp, kernels/dg_scalar.h); SEXP
 * marks those loops, and the kernels call dg_ew_power_sexp there. */
__device__ __forceinline__ float dg_ew_power_sexp(float a, float b) { return dg_power_f4_sexp(a, b); }
__device__ __forceinline__ double dg_ew_power_sexp(double a, double b) { return dg_power_f8_sexp(a, b); }

enum { dg_ew_counter_base = __COUNTER__ };
/* The position of the loop being expanded: __COUNTER__ grows by one per use,
 * and each entry of the list uses it once. */
#define DG_EW_IDX (__COUNTER__ - dg_ew_counter_base - 1)

#define DG_EW_L1(uf, ti, to, fn)                                               \
    template <> struct dg_ew_loop<DG_EW_IDX> {                                 \
        enum { NIN = 1, NOUT = 1 };                                            \
        static constexpr const char *NAME = #uf;                               \
        static constexpr bool SEXP = false;                                    \
        typedef dg_ct_##ti T0;                                                 \
        typedef dg_ct_##to T1;                                                 \
        typedef dg_ew_none T2;                                                 \
        typedef dg_ew_none T3;                                                 \
        static constexpr int D0 = DG_DT_##ti, D1 = DG_DT_##to, D2 = -1, D3 = -1; \
        static constexpr int CLS = dg_fpe_cls(#uf, dg_fpe_kind(D0), 0, dg_fpe_kind(D1), 0); \
        static __device__ __forceinline__ void eval(T0 &a, T1 &o, T2 &, T3 &)  \
        {                                                                      \
            o = fn(a);                                                         \
        }                                                                      \
    };
#define DG_EW_L2(uf, ta, tb, to, fn)                                           \
    template <> struct dg_ew_loop<DG_EW_IDX> {                                 \
        enum { NIN = 2, NOUT = 1 };                                            \
        static constexpr const char *NAME = #uf;                               \
        typedef dg_ct_##ta T0;                                                 \
        typedef dg_ct_##tb T1;                                                 \
        typedef dg_ct_##to T2;                                                 \
        typedef dg_ew_none T3;                                                 \
        static constexpr int D0 = DG_DT_##ta, D1 = DG_DT_##tb, D2 = DG_DT_##to, D3 = -1; \
        static constexpr int CLS =                                             \
            dg_fpe_cls(#uf, dg_fpe_kind(D0), dg_fpe_kind(D1), dg_fpe_kind(D2), 0); \
        static constexpr bool SEXP =                                           \
            dg_ew_streq(#uf, "power") && std::is_same<T0, T1>::value &&        \
            (std::is_same<T0, float>::value || std::is_same<T0, double>::value); \
        static __device__ __forceinline__ void eval(T0 &a, T1 &b, T2 &o, T3 &) \
        {                                                                      \
            o = fn(a, b);                                                      \
        }                                                                      \
    };
#define DG_EW_L12(uf, ti, to0, to1, fn)                                        \
    template <> struct dg_ew_loop<DG_EW_IDX> {                                 \
        enum { NIN = 1, NOUT = 2 };                                            \
        static constexpr const char *NAME = #uf;                               \
        static constexpr bool SEXP = false;                                    \
        typedef dg_ct_##ti T0;                                                 \
        typedef dg_ct_##to0 T1;                                                \
        typedef dg_ct_##to1 T2;                                                \
        typedef dg_ew_none T3;                                                 \
        static constexpr int D0 = DG_DT_##ti, D1 = DG_DT_##to0, D2 = DG_DT_##to1, D3 = -1; \
        static constexpr int CLS =                                             \
            dg_fpe_cls(#uf, dg_fpe_kind(D0), 0, dg_fpe_kind(D1), dg_fpe_kind(D2)); \
        static __device__ __forceinline__ void eval(T0 &a, T1 &o0, T2 &o1, T3 &) \
        {                                                                      \
            fn(a, &o0, &o1);                                                   \
        }                                                                      \
    };
#define DG_EW_L22(uf, ta, tb, to0, to1, fn)                                    \
    template <> struct dg_ew_loop<DG_EW_IDX> {                                 \
        enum { NIN = 2, NOUT = 2 };                                            \
        static constexpr const char *NAME = #uf;                               \
        static constexpr bool SEXP = false;                                    \
        typedef dg_ct_##ta T0;                                                 \
        typedef dg_ct_##tb T1;                                                 \
        typedef dg_ct_##to0 T2;                                                \
        typedef dg_ct_##to1 T3;                                                \
        static constexpr int D0 = DG_DT_##ta, D1 = DG_DT_##tb, D2 = DG_DT_##to0, \
                             D3 = DG_DT_##to1;                                 \
        static constexpr int CLS = dg_fpe_cls(#uf, dg_fpe_kind(D0), dg_fpe_kind(D1), \
                                              dg_fpe_kind(D2), dg_fpe_kind(D3)); \
        static __device__ __forceinline__ void eval(T0 &a, T1 &b, T2 &o0, T3 &o1) \
        {                                                                      \
            fn(a, b, &o0, &o1);                                                \
        }                                                                      \
    };

DG_LOOP_LIST(DG_EW_L1, DG_EW_L2, DG_EW_L12, DG_EW_L22)

/* Number of loops in the list. */
enum { dg_ew_nloops = DG_EW_IDX };
static_assert((int)dg_ew_nloops == (int)DG_NLOOPS,
              "__COUNTER__ numbered the loops wrongly");

#undef DG_EW_L1
#undef DG_EW_L2
#undef DG_EW_L12
#undef DG_EW_L22
#undef DG_EW_IDX

static_assert((int)dg_sb_nloops == (int)dg_ew_nloops, "dg_same_bits.h read another list");

/* Loops that reductions and scans fold with: ufuncs that are associative and
 * commutative (up to rounding), three equal dtypes. */
constexpr bool dg_ew_foldable(int i)
{
    const dg_sb_sig &s = dg_sb_sigs[i];
    switch (s.uf) {
    case DG_UF_add: case DG_UF_multiply: case DG_UF_maximum: case DG_UF_minimum:
    case DG_UF_fmax: case DG_UF_fmin: case DG_UF_logical_and: case DG_UF_logical_or:
    case DG_UF_logical_xor: case DG_UF_bitwise_and: case DG_UF_bitwise_or:
    case DG_UF_bitwise_xor:
        return s.nin == 2 && s.nout == 1 && s.d[0] == s.d[1] && s.d[0] == s.d[2];
    default:
        return false;
    }
}

/* Folds whose floating-point errors NumPy reports (loop L of a reduction or
 * a scan): add and multiply of floats, complex included (sum, prod, cumsum,
 * cumprod: "reduce" and "accumulate" in its messages).  Underflow is not
 * looked at. */
template <class L> constexpr bool dg_ew_fold_fpe()
{
    return (L::CLS & 15) == DG_FPC_FLOAT &&
           (dg_ew_streq(L::NAME, "add") || dg_ew_streq(L::NAME, "multiply"));
}

/* The kinds the fold o = a op x of loop L (dg_ew_fold_fpe) raised, as NumPy's
 * reduce and accumulate raise them: 0 where o is finite (one compare: the
 * common path), else the rule of kernels/dg_scalar.h, out of line, where
 * neither operand explains o (a NaN or an infinity carried on raises
 * nothing, and costs two compares more).  (The compares of the rare path
 * out of line too, one function per loop, made the scan kernels' code a
 * third smaller but took as many registers or more: each fold site then
 * saves its live values for the call.) */
template <class L, class T>
__device__ __forceinline__ unsigned dg_ew_fold_kinds(const T &a, const T &x, const T &o)
{
    dg_ew_none none;
    unsigned k = 0;
    if (dg_cu_fpe_odd<L::D2>(o, false) && !dg_fpe_fold_from(L::D0, &a, &o) &&
        !dg_fpe_fold_from(L::D0, &x, &o))
        k = dg_cu_fpe_classify<L>(false, a, x, o, none);
    return k;
}

/* Compile-time facts about a loop: operand sizes, and the elements per thread
 * of the contiguous path (16 bytes of the widest operand, at most
 * DG_CU_MAXVEC). */
template <class L> struct dg_ew_traits {
    static constexpr int s0 = dg_ew_size<typename L::T0>::value;
    static constexpr int s1 = dg_ew_size<typename L::T1>::value;
    static constexpr int s2 = dg_ew_size<typename L::T2>::value;
    static constexpr int s3 = dg_ew_size<typename L::T3>::value;
    static constexpr int m01 = s0 > s1 ? s0 : s1;
    static constexpr int m23 = s2 > s3 ? s2 : s3;
    static constexpr int maxsize = m01 > m23 ? m01 : m23;
    static constexpr int vec0 = 16 / maxsize;
    static constexpr int vec = vec0 > DG_CU_MAXVEC ? DG_CU_MAXVEC : (vec0 < 1 ? 1 : vec0);
};

#ifdef DG_EW_PART

/* An unsigned integer of B bytes (B a power of two up to 16), for moving B
 * bytes with one aligned memory access. */
template <int B> struct dg_ew_raw;
template <> struct dg_ew_raw<1> { typedef uint8_t type; };
template <> struct dg_ew_raw<2> { typedef uint16_t type; };
template <> struct dg_ew_raw<4> { typedef uint32_t type; };
template <> struct dg_ew_raw<8> { typedef uint2 type; };
template <> struct dg_ew_raw<16> { typedef uint4 type; };

/* V elements of T, viewed as one B-byte word. */
template <class T, int V> union dg_ew_pack {
    typename dg_ew_raw<sizeof(T) * V>::type raw;
    T v[V];
};

/* Operand K (an input) of a contiguous kernel: x[0..V) = the V elements of
 * vector j, or the scalar value s. */
template <int K, class L, class T, int V>
__device__ __forceinline__ void dg_ew_load_vec(T (&x)[V], const dg_cu_ew_contig &a,
                                               int64_t j, bool dense, const T &s)
{
    if constexpr (K < L::NIN) {
        if (dense) {
            dg_ew_pack<T, V> p;
            p.raw = reinterpret_cast<const decltype(p.raw) *>(a.data[K])[j];
#pragma unroll
            for (int e = 0; e < V; e++)
                x[e] = p.v[e];
        } else {
#pragma unroll
            for (int e = 0; e < V; e++)
                x[e] = s;
        }
    }
}

/* Operand K (an output) of a contiguous kernel: stores vector j. */
template <int K, class L, class T, int V>
__device__ __forceinline__ void dg_ew_store_vec(const T (&x)[V], const dg_cu_ew_contig &a,
                                                int64_t j)
{
    if constexpr (K >= L::NIN && K < L::NIN + L::NOUT) {
        dg_ew_pack<T, V> p;
#pragma unroll
        for (int e = 0; e < V; e++)
            p.v[e] = x[e];
        reinterpret_cast<decltype(p.raw) *>(a.data[K])[j] = p.raw;
    }
}

/* The value of input K that is the same for every element: the scalar passed
 * by value, or the one element a broadcast operand points at. */
template <int K, class L, class T>
__device__ __forceinline__ void dg_ew_scalar(T &s, const unsigned char (*scalar)[16],
                                             char *const *data, uint32_t scalar_mask,
                                             uint32_t bcast_mask)
{
    if constexpr (K < L::NIN) {
        if (scalar_mask >> K & 1u)
            s = *reinterpret_cast<const T *>(scalar[K]);
        else if (bcast_mask >> K & 1u)
            s = *reinterpret_cast<const T *>(data[K]);
    }
}

/* One element of loop L; `uexp`: input 1 is the same for every element. */
template <class L, class T0, class T1, class T2, class T3>
__device__ __forceinline__ void dg_ew_eval(bool uexp, T0 &a, T1 &b, T2 &o, T3 &o1)
{
    if constexpr (L::SEXP) {
        if (uexp) {
            o = dg_ew_power_sexp(a, b);
            return;
        }
    }
    L::eval(a, b, o, o1);
}

/* dg_ew_eval and, where the call watches errors (fpe.actions != 0), the
 * kinds the element raised or'ed into fk (kernels/dg_fpe.cuh): the cheap
 * test (a compare) whatever the call watches, the rest only for an odd
 * element.  Testing first costs the unchecked calls that compare; testing
 * the action word first cost each element of a checked call a load, a
 * branch and the test (sin float32: 15 instructions more than unchecked,
 * 11% of its speed on an H200, session 14). */
template <class L, class T0, class T1, class T2, class T3>
__device__ __forceinline__ void dg_ew_eval_fpe(bool uexp, const dg_cu_fpe &fpe, unsigned &fk,
                                               T0 &a, T1 &b, T2 &o, T3 &o1)
{
    dg_ew_eval<L>(uexp, a, b, o, o1);
    if constexpr ((L::CLS & 15) != DG_FPC_NONE) {
        if (dg_cu_fpe_odd_el<L>(dg_cu_fpe_under<L>(fpe.actions), a, b, o, o1) &&
            fpe.actions != 0)
            fk |= dg_cu_fpe_classify<L>(dg_cu_fpe_under<L>(fpe.actions), a, b, o, o1);
    }
}

/* All operands dense or uniform: V elements per thread and iteration, one
 * memory access per dense operand; the n % V last elements one each. */
template <class L, int V>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_ew_contig_k(const __grid_constant__ dg_cu_ew_contig a)
{
    typedef typename L::T0 T0;
    typedef typename L::T1 T1;
    typedef typename L::T2 T2;
    typedef typename L::T3 T3;
    const uint32_t uni = a.scalar_mask | a.bcast_mask;
    T0 s0{};
    T1 s1{};
    T2 s2{};
    T3 s3{};
    dg_ew_scalar<0, L>(s0, a.scalar, a.data, a.scalar_mask, a.bcast_mask);
    dg_ew_scalar<1, L>(s1, a.scalar, a.data, a.scalar_mask, a.bcast_mask);
    const bool d0 = !(uni & 1u), d1 = !(uni & 2u);
    const bool uexp = !d1;
    const int64_t nvec = a.n / V;
    const int64_t first = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    unsigned fk = 0;

    for (int64_t j = first; j < nvec; j += step) {
        T0 x0[V];
        T1 x1[V];
        T2 x2[V];
        T3 x3[V];
        dg_ew_load_vec<0, L>(x0, a, j, d0, s0);
        dg_ew_load_vec<1, L>(x1, a, j, d1, s1);
#pragma unroll
        for (int e = 0; e < V; e++)
            dg_ew_eval_fpe<L>(uexp, a.fpe, fk, x0[e], x1[e], x2[e], x3[e]);
        dg_ew_store_vec<1, L>(x1, a, j);
        dg_ew_store_vec<2, L>(x2, a, j);
        dg_ew_store_vec<3, L>(x3, a, j);
    }
    if (first < a.n - nvec * V) {
        const int64_t i = nvec * V + first;
        T0 x0 = s0;
        T1 x1 = s1;
        T2 x2{};
        T3 x3{};
        if (d0)
            x0 = reinterpret_cast<const T0 *>(a.data[0])[i];
        if constexpr (L::NIN > 1) {
            if (d1)
                x1 = reinterpret_cast<const T1 *>(a.data[1])[i];
        }
        dg_ew_eval_fpe<L>(uexp, a.fpe, fk, x0, x1, x2, x3);
        if constexpr (L::NIN == 1)
            reinterpret_cast<T1 *>(a.data[1])[i] = x1;
        if constexpr (L::NIN + L::NOUT > 2)
            reinterpret_cast<T2 *>(a.data[2])[i] = x2;
        if constexpr (L::NIN + L::NOUT > 3)
            reinterpret_cast<T3 *>(a.data[3])[i] = x3;
    }
    dg_cu_fpe_publish(a.fpe, fk);
}

/* Byte offsets of element i of the iteration space in every operand (and the
 * where mask, slot DG_CU_WHERE).  IDX is uint32_t when n < 2^32 (cheaper
 * division), else uint64_t. */
template <class IDX>
__device__ __forceinline__ void dg_ew_offsets(const dg_cu_ew_strided &a, IDX r,
                                              int64_t (&off)[DG_MAXOPS])
{
#pragma unroll
    for (int k = 0; k < DG_MAXOPS; k++)
        off[k] = 0;
    /* not unrolled: a division per dim costs what it costs either way, and
     * nvcc's unrolling (by 4, for any ndim) of this loop, in both index
     * widths, was most of every strided kernel's code: 18% of the
     * elementwise kernels' compile time */
#pragma unroll 1
    for (int d = a.ndim - 1; d > 0; d--) {
        const IDX sh = (IDX)a.shape[d];
        const IDX q = r / sh;
        const int64_t c = (int64_t)(r - q * sh);
        r = q;
#pragma unroll
        for (int k = 0; k < DG_MAXOPS; k++)
            off[k] += c * a.strides[d][k];
    }
#pragma unroll
    for (int k = 0; k < DG_MAXOPS; k++)
        off[k] += (int64_t)r * a.strides[0][k];
}

/* Elements per thread of a tile of the 2-d strided path. */
#define DG_EW_ROW_ITEMS 4
#define DG_EW_ROW_TILE (DG_EW_ROW_ITEMS * DG_CU_THREADS)

/* The strided kernel on a space of one or two dims (a row-strided view, the
 * interior of a grid): tiles of DG_EW_ROW_TILE neighbouring elements of one
 * row, found with one division per tile, not per element; each thread loads
 * the inputs of its DG_EW_ROW_ITEMS elements before it computes and stores
 * any, so that several loads are in flight (an output that is an input is
 * the same element of it, never another: the core reads overlapping views
 * from copies). */
template <class L, class T0, class T1>
__device__ __forceinline__ void dg_ew_rows(const dg_cu_ew_strided &a, const T0 &s0,
                                           const T1 &s1, bool d0, bool d1, bool uexp,
                                           unsigned &fk)
{
    typedef typename L::T2 T2;
    typedef typename L::T3 T3;
    constexpr int NOP = L::NIN + L::NOUT;
    const bool two = a.ndim == 2;
    const int ic = two ? 1 : 0;
    const int64_t rows = two ? a.shape[0] : 1, cols = a.shape[ic];
    const int64_t ntc = (cols + DG_EW_ROW_TILE - 1) / DG_EW_ROW_TILE, ntiles = rows * ntc;
    const char *where = a.data[DG_CU_WHERE];

    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t row = t / ntc, c0 = (t - row * ntc) * DG_EW_ROW_TILE + threadIdx.x;
        char *p[DG_MAXOPS];
        const char *w = NULL;
#pragma unroll
        for (int k = 0; k < NOP; k++)
            p[k] = a.data[k] == NULL ? NULL : a.data[k] + (two ? row * a.strides[0][k] : 0);
        if (where != NULL)
            w = where + (two ? row * a.strides[0][DG_CU_WHERE] : 0);
        T0 x0[DG_EW_ROW_ITEMS];
        T1 x1[DG_EW_ROW_ITEMS];
        bool on[DG_EW_ROW_ITEMS];
#pragma unroll
        for (int j = 0; j < DG_EW_ROW_ITEMS; j++) {
            const int64_t c = c0 + (int64_t)j * DG_CU_THREADS;
            on[j] = c < cols &&
                    (w == NULL || *(const dg_bool *)(w + c * a.strides[ic][DG_CU_WHERE]));
            x0[j] = s0;
            x1[j] = s1;
            if (on[j] && d0)
                x0[j] = *reinterpret_cast<const T0 *>(p[0] + c * a.strides[ic][0]);
            if constexpr (L::NIN > 1) {
                if (on[j] && d1)
                    x1[j] = *reinterpret_cast<const T1 *>(p[1] + c * a.strides[ic][1]);
            }
        }
#pragma unroll
        for (int j = 0; j < DG_EW_ROW_ITEMS; j++) {
            const int64_t c = c0 + (int64_t)j * DG_CU_THREADS;
            T2 x2{};
            T3 x3{};
            if (!on[j])
                continue;
            dg_ew_eval_fpe<L>(uexp, a.fpe, fk, x0[j], x1[j], x2, x3);
            if constexpr (L::NIN == 1)
                *reinterpret_cast<T1 *>(p[1] + c * a.strides[ic][1]) = x1[j];
            if constexpr (NOP > 2)
                *reinterpret_cast<T2 *>(p[2] + c * a.strides[ic][2]) = x2;
            if constexpr (NOP > 3)
                *reinterpret_cast<T3 *>(p[3] + c * a.strides[ic][3]) = x3;
        }
    }
}

/* Any strides (0: broadcast; negative), scalars by value, the where mask;
 * a.ndim >= 1.  One or two dims: dg_ew_rows; more: one element per thread
 * and iteration, its offsets found by division. */
template <class L>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_ew_strided_k(const __grid_constant__ dg_cu_ew_strided a)
{
    typedef typename L::T0 T0;
    typedef typename L::T1 T1;
    typedef typename L::T2 T2;
    typedef typename L::T3 T3;
    T0 s0{};
    T1 s1{};
    dg_ew_scalar<0, L>(s0, a.scalar, a.data, a.scalar_mask, 0u);
    dg_ew_scalar<1, L>(s1, a.scalar, a.data, a.scalar_mask, 0u);
    const bool d0 = !(a.scalar_mask & 1u), d1 = !(a.scalar_mask & 2u);
    /* NumPy decides per inner loop: by the stride of the innermost dimension */
    const bool uexp = !d1 || a.strides[a.ndim - 1][1] == 0;
    const char *where = a.data[DG_CU_WHERE];
    const bool small = a.n <= (int64_t)UINT32_MAX;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;

    unsigned fk = 0;
    if (a.ndim <= 2) {
        dg_ew_rows<L>(a, s0, s1, d0, d1, uexp, fk);
        dg_cu_fpe_publish(a.fpe, fk);
        return;
    }
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < a.n; i += step) {
        int64_t off[DG_MAXOPS];
        if (small)
            dg_ew_offsets<uint32_t>(a, (uint32_t)i, off);
        else
            dg_ew_offsets<uint64_t>(a, (uint64_t)i, off);
        if (where != NULL && !*(const dg_bool *)(where + off[DG_CU_WHERE]))
            continue;
        T0 x0 = s0;
        T1 x1 = s1;
        T2 x2{};
        T3 x3{};
        if (d0)
            x0 = *reinterpret_cast<const T0 *>(a.data[0] + off[0]);
        if constexpr (L::NIN > 1) {
            if (d1)
                x1 = *reinterpret_cast<const T1 *>(a.data[1] + off[1]);
        }
        dg_ew_eval_fpe<L>(uexp, a.fpe, fk, x0, x1, x2, x3);
        if constexpr (L::NIN == 1)
            *reinterpret_cast<T1 *>(a.data[1] + off[1]) = x1;
        if constexpr (L::NIN + L::NOUT > 2)
            *reinterpret_cast<T2 *>(a.data[2] + off[2]) = x2;
        if constexpr (L::NIN + L::NOUT > 3)
            *reinterpret_cast<T3 *>(a.data[3] + off[3]) = x3;
    }
    dg_cu_fpe_publish(a.fpe, fk);
}

template <int I>
static cudaError_t dg_ew_launch_contig(const dg_cu_ew_contig *a, unsigned blocks,
                                       cudaStream_t s)
{
    typedef dg_ew_loop<I> L;
    void *args[] = {(void *)a};
    return cudaLaunchKernel(dg_ew_contig_k<L, dg_ew_traits<L>::vec>, dim3(blocks),
                            dim3(DG_CU_THREADS), args, 0, s);
}

template <int I>
static cudaError_t dg_ew_launch_strided(const dg_cu_ew_strided *a, unsigned blocks,
                                        cudaStream_t s)
{
    void *args[] = {(void *)a};
    return cudaLaunchKernel(dg_ew_strided_k<dg_ew_loop<I> >, dim3(blocks), dim3(DG_CU_THREADS),
                            args, 0, s);
}

/* The launchers of loop I (instantiated only for this part's loops); none
 * for a loop that runs another loop's kernels. */
template <int I> constexpr dg_cu_ew_entry dg_ew_entry()
{
    if constexpr (dg_same_bits_loop(I) != I)
        return dg_cu_ew_entry{NULL, NULL, -1};
    else if constexpr (dg_ew_traits<dg_ew_loop<I> >::vec > 1)
        return dg_cu_ew_entry{&dg_ew_launch_contig<I>, &dg_ew_launch_strided<I>, I};
    else
        return dg_cu_ew_entry{NULL, &dg_ew_launch_strided<I>, I};
}

/* This part's loops: I = DG_EW_PART, DG_EW_PART + NPARTS, ...; one extra
 * empty entry keeps the array non-empty. */
enum {
    dg_ew_part_count = dg_ew_nloops > DG_EW_PART
                           ? (dg_ew_nloops - DG_EW_PART + DG_CU_EW_NPARTS - 1) / DG_CU_EW_NPARTS
                           : 0
};

/* The part number is a template parameter so that each part's table is a
 * distinct entity: parts with as many loops would otherwise share one
 * (inline variables of equal types are merged at link time). */
template <int P, class Seq> struct dg_ew_part_table;
template <int P, size_t... J> struct dg_ew_part_table<P, std::index_sequence<J...> > {
    static constexpr dg_cu_ew_entry entries[] = {
        dg_ew_entry<(int)J * DG_CU_EW_NPARTS + P>()..., dg_cu_ew_entry{NULL, NULL, -1}};
};

#define DG_EW_CAT2(a, b) a##b
#define DG_EW_CAT(a, b) DG_EW_CAT2(a, b)

extern "C" {
extern const dg_cu_ew_entry *const DG_EW_CAT(dg_cu_ew_part_, DG_EW_PART);
const dg_cu_ew_entry *const DG_EW_CAT(dg_cu_ew_part_, DG_EW_PART) =
    dg_ew_part_table<DG_EW_PART, std::make_index_sequence<dg_ew_part_count> >::entries;
}

#endif /* DG_EW_PART */

#endif /* DG_EW_CUH */
