/* Reduction kernels (the CUDA backend's reduce slot), generated from the lists.
 *
 * A reduction is an Op over a type T:
 *   - dg_red_loop_op<I>: folds with loop I of DG_LOOP_LIST (dg_ew_foldable:
 *     add, multiply, maximum, minimum, fmax, fmin and the logical and bitwise
 *     ufuncs, three equal dtypes): acc = fn(acc, x);
 *   - dg_red_arg_op<DT, MIN>: argmax / argmin of dtype DT, (value, index)
 *     pairs in NumPy's order (dg_arg<max|min>_better_<t>, dg_scalar.h), the
 *     smaller index among equals.
 * A thread folds its elements into a state (value, index, have); an empty
 * state (have false) is the neutral element, so no identity is needed.
 * States merge in a fixed order (warp shuffles, then shared memory), and
 * no atomics: a result depends only on the input and the launch geometry
 * (which depends on the GPU model only), the same bits on every run.
 *
 * Three kernels per Op (dg_cu_red in cu_kernels.h says what the host plans):
 *   - inner: `tpo` threads (1, 32 or 256) fold one output's reduced elements,
 *     read along the reduced dims; the V > 1 variant loads V elements with one
 *     aligned access (one dense reduced dim), the V = 1 variant takes any
 *     strides and the where mask;
 *   - outer: for kept dims that are the inner ones: `tx` threads read
 *     neighbouring outputs (V each in the V > 1 variant), 256 / tx threads
 *     split the reduced elements, then merge through shared memory;
 *   - final: folds the partials that the first two leave when the reduced
 *     elements of an output are cut into chunks (or that the first passes
 *     of several devices left in one stack), and writes init where nothing
 *     was reduced.
 *
 * The kernels are compiled in DG_CU_RED_NPARTS translation units
 * (kernels/reduce_<k>.cu): a part defines DG_RED_PART and includes this file,
 * which instantiates the kernels of the ops whose number (below) is
 * DG_RED_PART modulo DG_CU_RED_NPARTS and exports them as
 * dg_cu_red_part_<k>[op / DG_CU_RED_NPARTS].  kernels/reduce.cu dispatches.
 * A loop that runs another loop's kernels (kernels/dg_same_bits.h: int32
 * add is uint32 add) has no reduction kernels of its own either: the
 * dispatch reduces with that loop's op. */
#ifndef DG_REDUCE_CUH
#define DG_REDUCE_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>
#include <utility>

#include "ew.cuh"

#define DG_CU_RED_NPARTS 6
/* Independent loads in flight per thread in the dense loops. */
#define DG_RED_UNROLL 4
/* Partials a thread of the final pass loads before it merges them (fewer
 * of 8 bytes or more, and of argmax / argmin, which carry an index: no
 * spills). */
template <class Op> __host__ __device__ constexpr int dg_red_fold_batch()
{
    return Op::ARG || sizeof(typename Op::T) >= 8 ? 4 : 8;
}

/* Op numbers: loop I of DG_LOOP_LIST is op I; argmax of dtype D is op
 * dg_ew_nloops + D, argmin dg_ew_nloops + DG_NDTYPES + D. */
enum { dg_red_nops = dg_ew_nloops + 2 * DG_NDTYPES };

/* The kernels of one op; NULL where the op has none (a loop that does not
 * fold, a V > 1 variant of an op with vec 1).  All take a dg_cu_red by value. */
typedef void (*dg_red_kernel)(dg_cu_red);
enum { DG_RED_K_INNER1, DG_RED_K_INNERV, DG_RED_K_OUTER1, DG_RED_K_OUTERV, DG_RED_K_FINAL,
       DG_RED_NK };
struct dg_red_entry {
    dg_red_kernel k[DG_RED_NK];
    int vec; /* V of the V > 1 variants (1: none) */
    int op;  /* the op it was made for */
};

#ifdef DG_RED_PART

/* ---- the ops ------------------------------------------------------------ */

/* A loop of DG_LOOP_LIST as a fold.  FPE (add and multiply of floats: sum,
 * prod, mean): floating-point errors as NumPy's reduce reports them, by the
 * rule of kernels/dg_scalar.h at each fold whose result is not finite while
 * its operands were (a NaN or an infinity carried on raises nothing, and
 * costs two compares): the kinds ride in the state's index, unused by these
 * ops (or'ed by the merges, zero for an element), and are published where a
 * state is written out (dg_red_put, dg_red_put_part) if the call watches
 * them.  Underflow is not looked at.  The check costs one compare a fold
 * whether or not anything is watched (the op has no kernel arguments;
 * dg_ew_fold_kinds, ew.cuh, the same check as the scans'). */
template <int I> struct dg_red_loop_op {
    typedef dg_ew_loop<I> L;
    typedef typename L::T0 T;
    static constexpr bool ARG = false;
    static constexpr bool FPE = dg_ew_fold_fpe<L>();
    static constexpr int VEC = 16 / (int)sizeof(T) > 8 ? 8 : 16 / (int)sizeof(T);
    static __device__ __forceinline__ void fold(T &acc, int64_t &ai, T x, int64_t xi)
    {
        T a = acc, o;
        dg_ew_none none;
        L::eval(a, x, o, none);
        acc = o;
        if constexpr (FPE) {
            ai |= xi;
            ai |= (int64_t)dg_ew_fold_kinds<L>(a, x, o);
        }
    }
};

/* dg_red_dt<D>: the C type of dtype D and its argmax / argmin order. */
template <int D> struct dg_red_dt;
#define DG_RED_DT(E, t, ct, sz, ch, nm, kd)                                     \
    template <> struct dg_red_dt<DG_##E> {                                      \
        typedef ct T;                                                           \
        static __device__ __forceinline__ bool max_better(ct a, ct b)           \
        {                                                                       \
            return dg_argmax_better_##t(a, b) != 0;                             \
        }                                                                       \
        static __device__ __forceinline__ bool min_better(ct a, ct b)           \
        {                                                                       \
            return dg_argmin_better_##t(a, b) != 0;                             \
        }                                                                       \
    };
DG_DTYPE_LIST(DG_RED_DT)
#undef DG_RED_DT

template <int D, bool MIN> struct dg_red_arg_op {
    typedef dg_red_dt<D> DT;
    typedef typename DT::T T;
    static constexpr bool ARG = true;
    static constexpr bool FPE = false;
    static constexpr int VEC = 16 / (int)sizeof(T) > 4 ? 4 : 16 / (int)sizeof(T);
    static __device__ __forceinline__ bool better(T a, T b)
    {
        if constexpr (MIN)
            return DT::min_better(a, b);
        else
            return DT::max_better(a, b);
    }
    /* (acc, ai) = the better of (acc, ai) and (x, xi); equals: smaller index */
    static __device__ __forceinline__ void fold(T &acc, int64_t &ai, T x, int64_t xi)
    {
        if (better(x, acc) || (xi < ai && !better(acc, x))) {
            acc = x;
            ai = xi;
        }
    }
};

/* ---- states -------------------------------------------------------------- */

template <class Op> struct dg_red_st {
    typename Op::T v;
    int64_t i;
    bool have;
};

/* a = a then b (b's elements come after a's where the order matters). */
template <class Op>
__device__ __forceinline__ void dg_red_merge(dg_red_st<Op> &a, const dg_red_st<Op> &b)
{
    if (!b.have)
        return;
    if (!a.have) { /* field by field: a struct copy would move padding too */
        a.v = b.v;
        a.i = b.i;
        a.have = true;
    } else {
        Op::fold(a.v, a.i, b.v, b.i);
    }
}

/* The value of lane (this lane + d) of the warp, any T of 1, 2, 4, 8 or 16
 * bytes (moved as 32-bit words). */
template <class T> __device__ __forceinline__ T dg_red_shfl_down(const T &v, int d)
{
    if constexpr (sizeof(T) < 4) {
        typedef typename std::conditional<sizeof(T) == 1, uint8_t, uint16_t>::type U;
        union {
            T t;
            U u;
        } x, y;
        x.t = v;
        y.u = (U)__shfl_down_sync(0xffffffffu, (unsigned)x.u, d);
        return y.t;
    } else {
        constexpr int W = (int)(sizeof(T) / 4);
        union {
            T t;
            unsigned u[W];
        } x, y;
        x.t = v;
#pragma unroll
        for (int j = 0; j < W; j++)
            y.u[j] = __shfl_down_sync(0xffffffffu, x.u[j], d);
        return y.t;
    }
}

/* Lane 0 of the warp gets the merge of the 32 lanes' states, in a fixed
 * tree order.  (Lanes whose partner is past lane 31 merge a copy of
 * themselves; lane 0 never reads them.)  Every lane of the warp must call it. */
template <class Op> __device__ __forceinline__ void dg_red_warp(dg_red_st<Op> &st)
{
#pragma unroll
    for (int d = 16; d >= 1; d /= 2) {
        dg_red_st<Op> o;
        o.v = dg_red_shfl_down(st.v, d);
        o.i = 0;
        if constexpr (Op::ARG || Op::FPE)
            o.i = dg_red_shfl_down(st.i, d);
        o.have = __shfl_down_sync(0xffffffffu, (int)st.have, d) != 0;
        dg_red_merge<Op>(st, o);
    }
}

/* Merges the states of the `p` threads (1, 32 or DG_CU_THREADS, the same in
 * the whole block) that fold one output; the first of them gets the result.
 * Every thread of the block must call it. */
template <class Op> __device__ __forceinline__ void dg_red_group(dg_red_st<Op> &st, int p)
{
    __shared__ dg_red_st<Op> ws[DG_CU_THREADS / 32];
    if (p == 1)
        return;
    dg_red_warp<Op>(st);
    if (p == 32)
        return;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    __syncthreads(); /* ws is free: a previous call's readers are done */
    if (lane == 0) {
        ws[warp].v = st.v;
        ws[warp].i = st.i;
        ws[warp].have = st.have;
    }
    __syncthreads();
    if (warp == 0) {
        st.have = false;
        if (lane < DG_CU_THREADS / 32) {
            st.v = ws[lane].v;
            st.i = ws[lane].i;
            st.have = ws[lane].have;
        }
        dg_red_warp<Op>(st);
    }
}

/* ---- addressing ------------------------------------------------------------ */

/* Byte offsets of output m (0 <= m < a.m) in src, dst, idx, where and
 * idx_in. */
template <class IDX>
__device__ __forceinline__ void dg_red_kept_at(const dg_cu_red &a, IDX m, int64_t &ks,
                                               int64_t &kd, int64_t &ki, int64_t &kw,
                                               int64_t &kn)
{
    ks = kd = ki = kw = kn = 0;
    /* not unrolled: once an output, and a division a dim either way; nvcc's
     * unrolling of this loop and of dg_red_red_at's, in both index widths
     * and in every kernel, was a third of the reduction kernels' code and
     * of their compile time */
#pragma unroll 1
    for (int d = a.nk - 1; d > 0; d--) {
        const IDX n = (IDX)a.kshape[d], q = m / n;
        const int64_t c = (int64_t)(m - q * n);
        m = q;
        ks += c * a.kstr[d];
        kd += c * a.kdst[d];
        ki += c * a.kidx[d];
        kw += c * a.kwhere[d];
        kn += c * a.kin[d];
    }
    ks += (int64_t)m * a.kstr[0];
    kd += (int64_t)m * a.kdst[0];
    ki += (int64_t)m * a.kidx[0];
    kw += (int64_t)m * a.kwhere[0];
    kn += (int64_t)m * a.kin[0];
}

/* The byte offsets of one output; those a caller does not use cost nothing. */
struct dg_red_koff {
    int64_t src, dst, idx, where, idx_in;
};

__device__ __forceinline__ dg_red_koff dg_red_kept(const dg_cu_red &a, int64_t m)
{
    dg_red_koff o;
    if (a.m <= (int64_t)UINT32_MAX)
        dg_red_kept_at<uint32_t>(a, (uint32_t)m, o.src, o.dst, o.idx, o.where, o.idx_in);
    else
        dg_red_kept_at<uint64_t>(a, (uint64_t)m, o.src, o.dst, o.idx, o.where, o.idx_in);
    return o;
}

/* Byte offsets in src, where and idx_in, and the index value (argmax /
 * argmin), of reduced element k (0 <= k < a.k). */
template <class IDX>
__device__ __forceinline__ void dg_red_red_at(const dg_cu_red &a, IDX k, int64_t &rs,
                                              int64_t &rw, int64_t &rn, int64_t &gi)
{
    rs = rw = rn = gi = 0;
    /* not unrolled (see dg_red_kept_at): a division a dim either way */
#pragma unroll 1
    for (int d = a.nr - 1; d > 0; d--) {
        const IDX n = (IDX)a.rshape[d], q = k / n;
        const int64_t c = (int64_t)(k - q * n);
        k = q;
        rs += c * a.rstr[d];
        rw += c * a.rwhere[d];
        rn += c * a.rin[d];
        gi += c * a.rgs[d];
    }
    rs += (int64_t)k * a.rstr[0];
    rw += (int64_t)k * a.rwhere[0];
    rn += (int64_t)k * a.rin[0];
    gi += (int64_t)k * a.rgs[0];
}

/* The byte offsets (src, where) of one reduced element and its index value. */
struct dg_red_roff {
    int64_t src, where, gi;
};

/* Those of reduced element k of the output whose idx_in offset is kn: the
 * index read from idx_in where a.idx_in is set (argmax / argmin), else
 * computed. */
template <class Op>
__device__ __forceinline__ dg_red_roff dg_red_red(const dg_cu_red &a, int64_t k, int64_t kn)
{
    dg_red_roff o;
    int64_t rn;
    if (a.k <= (int64_t)UINT32_MAX)
        dg_red_red_at<uint32_t>(a, (uint32_t)k, o.src, o.where, rn, o.gi);
    else
        dg_red_red_at<uint64_t>(a, (uint64_t)k, o.src, o.where, rn, o.gi);
    if constexpr (Op::ARG) {
        if (a.idx_in != NULL)
            o.gi = *reinterpret_cast<const int64_t *>(a.idx_in + kn + rn);
    }
    return o;
}

/* ---- loads ---------------------------------------------------------------- */

template <int B> struct dg_red_raw;
template <> struct dg_red_raw<2> { typedef uint16_t type; };
template <> struct dg_red_raw<4> { typedef uint32_t type; };
template <> struct dg_red_raw<8> { typedef uint2 type; };
template <> struct dg_red_raw<16> { typedef uint4 type; };

/* x[0..V) = the V elements at p (aligned to V * sizeof(T)). */
template <class T, int V> __device__ __forceinline__ void dg_red_ld(const char *p, T (&x)[V])
{
    if constexpr (V == 1) {
        x[0] = *reinterpret_cast<const T *>(p);
    } else {
        typedef typename dg_red_raw<(int)sizeof(T) * V>::type R;
        union {
            R raw;
            T v[V];
        } u;
        u.raw = *reinterpret_cast<const R *>(p);
#pragma unroll
        for (int e = 0; e < V; e++)
            x[e] = u.v[e];
    }
}

/* ---- output ---------------------------------------------------------------- */

/* Chunk [k0, k1) of the reduced elements: chunk s of a.kchunk. */
__device__ __forceinline__ void dg_red_chunk(const dg_cu_red &a, int s, int64_t &k0,
                                             int64_t &k1)
{
    k0 = (int64_t)s * a.kchunk;
    k1 = a.k - k0 < a.kchunk ? a.k : k0 + a.kchunk;
}

/* Writes the result of an output whose dst and idx are at byte offsets kd
 * and ki: init folded with the state (loop with has_init), the state, or
 * init where nothing was reduced; idx 0 then. */
template <class Op>
__device__ __forceinline__ void dg_red_put(const dg_cu_red &a, int64_t kd, int64_t ki,
                                           const dg_red_st<Op> &st)
{
    typedef typename Op::T T;
    T v = *reinterpret_cast<const T *>(a.init);
    if (st.have) {
        if (!Op::ARG && a.has_init) {
            int64_t none = 0;
            Op::fold(v, none, st.v, 0);
        } else {
            v = st.v;
        }
    }
    *reinterpret_cast<T *>(a.dst + kd) = v;
    if constexpr (Op::ARG)
        *reinterpret_cast<int64_t *>(reinterpret_cast<char *>(a.idx) + ki) =
            st.have ? st.i + a.idx_base : 0;
    if constexpr (Op::FPE)
        if (a.fpe.actions != 0 && st.have)
            dg_cu_fpe_publish(a.fpe, (unsigned)st.i);
}

/* Writes the partial of output m and chunk s ([nsplit][m] arrays, perhaps
 * on a peer): argmax / argmin indices with idx_base added, as the final
 * pass reads them. */
template <class Op>
__device__ __forceinline__ void dg_red_put_part(const dg_cu_red &a, int64_t m, int s,
                                                const dg_red_st<Op> &st)
{
    const int64_t p = (int64_t)s * a.m + m;
    reinterpret_cast<typename Op::T *>(a.part)[p] = st.v;
    if constexpr (Op::ARG)
        a.part_idx[p] = st.i + a.idx_base;
    a.part_have[p] = st.have;
    if constexpr (Op::FPE)
        if (a.fpe.actions != 0 && st.have)
            dg_cu_fpe_publish(a.fpe, (unsigned)st.i);
}

/* *p read from L2 (ld.global.cg): partials other blocks wrote, never
 * cached in this multiprocessor's L1. */
template <class T> __device__ __forceinline__ T dg_red_ldcg(const T *p)
{
    T v;
    if constexpr (sizeof(T) == 1) {
        const unsigned char x = __ldcg(reinterpret_cast<const unsigned char *>(p));
        memcpy(&v, &x, 1);
    } else if constexpr (sizeof(T) == 2) {
        const unsigned short x = __ldcg(reinterpret_cast<const unsigned short *>(p));
        memcpy(&v, &x, 2);
    } else if constexpr (sizeof(T) == 4) {
        const unsigned int x = __ldcg(reinterpret_cast<const unsigned int *>(p));
        memcpy(&v, &x, 4);
    } else if constexpr (sizeof(T) == 8) {
        const unsigned long long x = __ldcg(reinterpret_cast<const unsigned long long *>(p));
        memcpy(&v, &x, 8);
    } else {
        static_assert(sizeof(T) == 16, "a dtype of 1, 2, 4, 8 or 16 bytes");
        const uint4 x = __ldcg(reinterpret_cast<const uint4 *>(p));
        memcpy(&v, &x, 16);
    }
    return v;
}

/* Folds the a.nsplit partials of outputs m0 .. m1 - 1 in chunk order, p
 * threads per output (1, 32 or DG_CU_THREADS), and writes them (init where
 * none has an element).  Every thread of the block calls it alike. */
template <class Op>
__device__ __forceinline__ void dg_red_fold_parts(const dg_cu_red &a, int64_t m0, int64_t m1,
                                                  int p)
{
    typedef typename Op::T T;
    const int lane = (int)threadIdx.x & (p - 1), sub = (int)threadIdx.x / p;
    const int opb = DG_CU_THREADS / p;
    for (int64_t mb = m0; mb < m1; mb += opb) {
        const int64_t m = mb + sub;
        dg_red_st<Op> st;
        st.i = 0;
        st.have = false;
        if (m < m1) {
            /* dg_red_fold_batch partials' loads in flight before any merge
             * (a value is read whether or not its have flag is set: the
             * memory is there), merged in chunk order */
            constexpr int NB = dg_red_fold_batch<Op>();
            for (int s0 = lane; s0 < a.nsplit; s0 += NB * p) {
                bool h[NB];
                T v[NB];
                int64_t ix[NB];
#pragma unroll
                for (int u = 0; u < NB; u++) {
                    const int s = s0 + u * p;
                    const int64_t q = (int64_t)s * a.m + m;
                    h[u] = s < a.nsplit;
                    if (h[u]) {
                        h[u] = dg_red_ldcg(a.part_have + q) != 0;
                        v[u] = dg_red_ldcg(reinterpret_cast<const T *>(a.part) + q);
                        ix[u] = Op::ARG ? dg_red_ldcg(a.part_idx + q) : 0;
                    }
                }
#pragma unroll
                for (int u = 0; u < NB; u++)
                    if (h[u]) {
                        dg_red_st<Op> o{v[u], ix[u], true};
                        dg_red_merge<Op>(st, o);
                    }
            }
        }
        dg_red_group<Op>(st, p);
        if (lane == 0 && m < m1) {
            const dg_red_koff o = dg_red_kept(a, m);
            dg_red_put<Op>(a, o.dst, o.idx, st);
        }
    }
}

/* Blocks per multiprocessor the register budget of a first pass aims at:
 * the dense folds of up to 4 elements a load keep DG_RED_UNROLL loads of 16
 * bytes in flight per thread, so 4 blocks (64 registers) keep enough memory
 * traffic in flight, the dense argmax / argmin of the inner pass too (it
 * keeps one state, dg_red_arg_items); the others need more registers (8
 * lanes, complex128, the strided loops, argmax / argmin's lane states).  On
 * an H200, argmax of 2^27 float32 took 138 us at 2 blocks (92 registers),
 * 128 us at 4 with one state; a sum 125. */
template <class Op, int V, bool INNER> constexpr int dg_red_minblocks()
{
    return Op::ARG ? (INNER && V > 1 ? 4 : 2)
                   : sizeof(typename Op::T) >= 16 ? 2 : V > 1 && V <= 4 ? 4 : 3;
}

/* The number of i = first, first + step, ... below end. */
__device__ __forceinline__ int64_t dg_red_count(int64_t first, int64_t end, int64_t step)
{
    return first < end ? (end - first + step - 1) / step : 0;
}

/* Folds element x of item `item` into a lane state (acc, ai) that holds
 * items before it: for argmax / argmin, ai counts items while the loop runs
 * (dg_red_fold_items turns it into the index value at the end), and a strict
 * improvement alone replaces the state, since among equal elements the
 * earlier one, already held, wins; other ops fold as usual. */
template <class Op>
__device__ __forceinline__ void dg_red_fold_seq(typename Op::T &acc, int64_t &ai,
                                                typename Op::T x, int64_t item)
{
    if constexpr (Op::ARG) {
        if (Op::better(x, acc)) {
            acc = x;
            ai = item;
        }
    } else {
        Op::fold(acc, ai, x, 0);
    }
}

/* Folds this thread's n items into (acc, ai), lane by lane: ld(i, x) loads
 * the V elements of item i (0 <= i < n), ix(i, e) is the index value of
 * element e of item i, increasing with i.  Loads go in batches of
 * DG_RED_UNROLL, issued before any of them is folded (the last batch
 * predicated), so that that many are in flight.  Returns n > 0 (acc, ai
 * set). */
template <class Op, int V, class LD, class IX>
__device__ __forceinline__ bool dg_red_fold_items(int64_t n, const LD &ld, const IX &ix,
                                                  typename Op::T (&acc)[V], int64_t (&ai)[V])
{
    typedef typename Op::T T;
    constexpr int U = DG_RED_UNROLL;
    int64_t i = 0;
    if (n >= U) {
        T x[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
            ld((int64_t)u, x[u]);
#pragma unroll
        for (int e = 0; e < V; e++) {
            acc[e] = x[0][e];
            ai[e] = 0;
        }
#pragma unroll
        for (int u = 1; u < U; u++)
#pragma unroll
            for (int e = 0; e < V; e++)
                dg_red_fold_seq<Op>(acc[e], ai[e], x[u][e], (int64_t)u);
#pragma unroll 1
        for (i = U; i + U <= n; i += U) {
#pragma unroll
            for (int u = 0; u < U; u++)
                ld(i + u, x[u]);
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    dg_red_fold_seq<Op>(acc[e], ai[e], x[u][e], i + u);
        }
    }
    if (i < n) {
        T x[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i + u < n)
                ld(i + u, x[u]);
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (i + u < n) {
#pragma unroll
                for (int e = 0; e < V; e++) {
                    if (i + u == 0) {
                        acc[e] = x[u][e];
                        ai[e] = 0;
                    } else {
                        dg_red_fold_seq<Op>(acc[e], ai[e], x[u][e], i + u);
                    }
                }
            }
        }
    }
    if constexpr (Op::ARG) {
        if (n > 0) {
#pragma unroll
            for (int e = 0; e < V; e++)
                ai[e] = ix(ai[e], e);
        }
    }
    return n > 0;
}

/* argmax / argmin of this thread's n items of V elements (ld(i, x) loads
 * item i) into one state: the best element, the first among equals, in
 * acc and its position i * V + e in *pos.  The loads of DG_RED_UNROLL items
 * are issued before any is looked at; the batch's best value is found by a
 * tree of comparisons of values alone, and only a batch whose best beats
 * the state is searched for the first element as good.  For most data
 * that is one comparison and one select an element, and no index moves.
 * Returns n > 0 (acc, *pos set). */
template <class Op, int V, class LD>
__device__ __forceinline__ bool dg_red_arg_items(int64_t n, const LD &ld, typename Op::T &acc,
                                                 int64_t &pos)
{
    typedef typename Op::T T;
    constexpr int U = DG_RED_UNROLL, N = U * V;
    bool have = false;
    int64_t i = 0;
#pragma unroll 1
    for (; i + U <= n; i += U) {
        T x[U][V], b[N / 2];
#pragma unroll
        for (int u = 0; u < U; u++)
            ld(i + u, x[u]);
#pragma unroll
        for (int t = 0; t < N / 2; t++) {
            const T &l = x[(2 * t) / V][(2 * t) % V], &r = x[(2 * t + 1) / V][(2 * t + 1) % V];
            b[t] = Op::better(r, l) ? r : l;
        }
#pragma unroll
        for (int w = N / 4; w >= 1; w /= 2)
#pragma unroll
            for (int t = 0; t < w; t++)
                b[t] = Op::better(b[2 * t + 1], b[2 * t]) ? b[2 * t + 1] : b[2 * t];
        if (!have || Op::better(b[0], acc)) {
            /* the first element of the batch as good as its best */
            int f = N - 1;
#pragma unroll
            for (int t = N - 2; t >= 0; t--)
                if (!Op::better(b[0], x[t / V][t % V]))
                    f = t;
#pragma unroll
            for (int t = 0; t < N; t++)
                if (t == f)
                    acc = x[t / V][t % V];
            pos = i * V + f;
            have = true;
        }
    }
#pragma unroll 1
    for (; i < n; i++) {
        T x[V];
        ld(i, x);
#pragma unroll
        for (int e = 0; e < V; e++)
            if (!have || Op::better(x[e], acc)) {
                acc = x[e];
                pos = i * V + e;
                have = true;
            }
    }
    return have;
}

/* The state of lanes (acc, ai) merged in lane order. */
template <class Op, int V>
__device__ __forceinline__ dg_red_st<Op> dg_red_lanes(const typename Op::T (&acc)[V],
                                                      const int64_t (&ai)[V], bool have)
{
    dg_red_st<Op> l{acc[0], ai[0], have};
#pragma unroll
    for (int e = 1; e < V; e++)
        Op::fold(l.v, l.i, acc[e], ai[e]);
    return l;
}

/* ---- inner: threads along the reduced elements ------------------------------ */

/* Folds elements [k0, k1) of the output whose src begins at `row` into st:
 * this thread takes those of index k0 + lane, k0 + lane + p, ...  V > 1: one
 * dense reduced dim (a.nr 1, stride the itemsize), no where mask, row + k0
 * aligned to V elements; V elements a load (this thread takes the vectors
 * k0 / V + lane, + p, ...), one lane state each (argmax / argmin: one state
 * in all, dg_red_arg_items). */
template <class Op, int V>
__device__ __forceinline__ void dg_red_inner_dense(const dg_cu_red &a, const char *row,
                                                   int64_t k0, int64_t k1, int lane, int p,
                                                   dg_red_st<Op> &st)
{
    typedef typename Op::T T;
    typedef typename dg_red_raw<(int)sizeof(T) * V>::type R;
    const int64_t gs = a.rgs[0];
    const int64_t j0 = k0 / V + lane, j1 = k1 / V;
    const char *const q = row + j0 * (int64_t)sizeof(R);
    const int64_t step = (int64_t)sizeof(R) * p;
    const int64_t n = dg_red_count(j0, j1, p);
    const auto ld = [&](int64_t i, T (&x)[V]) { dg_red_ld<T, V>(q + i * step, x); };
    if constexpr (Op::ARG) {
        T acc;
        int64_t pos;
        if (dg_red_arg_items<Op, V>(n, ld, acc, pos))
            dg_red_merge<Op>(st, dg_red_st<Op>{acc, ((j0 + pos / V * p) * V + pos % V) * gs,
                                               true});
    } else {
        T acc[V];
        int64_t ai[V];
        if (dg_red_fold_items<Op, V>(n, ld, [&](int64_t, int) { return (int64_t)0; }, acc, ai))
            dg_red_merge<Op>(st, dg_red_lanes<Op, V>(acc, ai, true));
    }
    /* the k1 % V last elements of the row */
    const int64_t kt = j1 * V;
#pragma unroll 1
    for (int64_t k = (kt > k0 ? kt : k0) + lane; k < k1; k += p) {
        dg_red_st<Op> l{reinterpret_cast<const T *>(row)[k], k * gs, true};
        dg_red_merge<Op>(st, l);
    }
}

/* The same for any strides (V = 1): one reduced dim without where mask in
 * batches of loads, else element by element with the reduced index
 * decomposed. */
template <class Op>
__device__ __forceinline__ void dg_red_inner_any(const dg_cu_red &a, const char *row,
                                                 const unsigned char *wrow, int64_t kn,
                                                 int64_t k0, int64_t k1, int lane, int p,
                                                 dg_red_st<Op> &st)
{
    typedef typename Op::T T;
    if (a.nr == 1 && wrow == NULL && a.idx_in == NULL) {
        const int64_t rs = a.rstr[0], gs = a.rgs[0], first = k0 + lane;
        const char *const q = row + first * rs;
        const int64_t step = rs * p;
        T acc[1];
        int64_t ai[1];
        const bool have = dg_red_fold_items<Op, 1>(
            dg_red_count(first, k1, p),
            [&](int64_t i, T (&x)[1]) { x[0] = *reinterpret_cast<const T *>(q + i * step); },
            [&](int64_t i, int) { return (first + i * p) * gs; }, acc, ai);
        if (have)
            dg_red_merge<Op>(st, dg_red_st<Op>{acc[0], ai[0], true});
        return;
    }
    for (int64_t k = k0 + lane; k < k1; k += p) {
        const dg_red_roff r = dg_red_red<Op>(a, k, kn);
        if (wrow != NULL && !wrow[r.where])
            continue;
        /* the index of argmax / argmin; 0 for a loop's fold (its kinds, if FPE) */
        dg_red_st<Op> l{*reinterpret_cast<const T *>(row + r.src), Op::ARG ? r.gi : 0, true};
        dg_red_merge<Op>(st, l);
    }
}

/* Block (group g, chunk blockIdx.y): DG_CU_THREADS / tpo outputs, tpo
 * threads each; blocks step over the groups. */
template <class Op, int V>
__global__ void __launch_bounds__(DG_CU_THREADS, dg_red_minblocks<Op, V, true>())
dg_red_inner_k(const __grid_constant__ dg_cu_red a)
{
    const int p = a.tpo, lane = (int)threadIdx.x & (p - 1), sub = (int)threadIdx.x / p;
    const int opb = DG_CU_THREADS / p, s = (int)blockIdx.y;
    const int64_t ngroups = (a.m + opb - 1) / opb;
    int64_t k0, k1;
    dg_red_chunk(a, s, k0, k1);
    for (int64_t g = blockIdx.x; g < ngroups; g += gridDim.x) {
        const int64_t m = g * opb + sub;
        dg_red_st<Op> st;
        st.i = 0;
        st.have = false;
        if (m < a.m) {
            const dg_red_koff o = dg_red_kept(a, m);
            if constexpr (V > 1)
                dg_red_inner_dense<Op, V>(a, a.src + o.src, k0, k1, lane, p, st);
            else
                dg_red_inner_any<Op>(a, a.src + o.src, a.where ? a.where + o.where : NULL,
                                     o.idx_in, k0, k1, lane, p, st);
        }
        dg_red_group<Op>(st, p);
        if (lane == 0 && m < a.m) {
            if (a.part != NULL) {
                dg_red_put_part<Op>(a, m, s, st);
            } else {
                const dg_red_koff o = dg_red_kept(a, m);
                dg_red_put<Op>(a, o.dst, o.idx, st);
            }
        }
    }
}

/* ---- outer: threads along the outputs ------------------------------------------ */

/* Block (group g, chunk blockIdx.y): tx * V neighbouring outputs; thread
 * (tx, ty) folds outputs m0 .. m0 + V - 1 over the reduced elements k0 + ty,
 * k0 + ty + 256 / tx, ...  V > 1: the V outputs are neighbours in memory (the
 * innermost kept dim dense, its extent a multiple of V, every other stride
 * and src aligned to V elements), no where mask. */
template <class Op, int V>
__global__ void __launch_bounds__(DG_CU_THREADS, dg_red_minblocks<Op, V, false>())
dg_red_outer_k(const __grid_constant__ dg_cu_red a)
{
    typedef typename Op::T T;
    __shared__ T sv[DG_CU_THREADS * V];
    __shared__ int64_t si[Op::ARG ? DG_CU_THREADS * V : 1];
    __shared__ unsigned sk[Op::FPE ? DG_CU_THREADS : 1]; /* kinds of a thread's V lanes */
    __shared__ bool sh[DG_CU_THREADS];
    const int ntx = a.tx, nty = DG_CU_THREADS / ntx, t = (int)threadIdx.x;
    const int tx = t & (ntx - 1), ty = t / ntx, s = (int)blockIdx.y;
    const int64_t per = (int64_t)ntx * V;
    const int64_t ngroups = (a.m + per - 1) / per;
    int64_t k0, k1;
    dg_red_chunk(a, s, k0, k1);
    for (int64_t g = blockIdx.x; g < ngroups; g += gridDim.x) {
        const int64_t m0 = g * per + (int64_t)tx * V;
        T acc[V];
        int64_t ai[V];
        bool have = false;
#pragma unroll
        for (int e = 0; e < V; e++) {
            acc[e] = T();
            ai[e] = 0;
        }
        if (m0 < a.m) {
            const dg_red_koff o = dg_red_kept(a, m0);
            const char *const base = a.src + o.src;
            const int64_t first = k0 + ty;
            if (a.nr == 1 && a.where == NULL && a.idx_in == NULL) {
                const int64_t rs = a.rstr[0], gs = a.rgs[0], step = rs * nty;
                const char *const q = base + first * rs;
                have = dg_red_fold_items<Op, V>(
                    dg_red_count(first, k1, nty),
                    [&](int64_t i, T (&x)[V]) { dg_red_ld<T, V>(q + i * step, x); },
                    [&](int64_t i, int) { return (first + i * nty) * gs; }, acc, ai);
            } else {
                for (int64_t k = first; k < k1; k += nty) {
                    const dg_red_roff r = dg_red_red<Op>(a, k, o.idx_in);
                    T x[V];
                    if (V == 1 && a.where != NULL && !a.where[o.where + r.where])
                        continue;
                    dg_red_ld<T, V>(base + r.src, x);
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        if (have) {
                            Op::fold(acc[e], ai[e], x[e], Op::ARG ? r.gi : 0);
                        } else {
                            acc[e] = x[e];
                            ai[e] = Op::ARG ? r.gi : 0;
                        }
                    }
                    have = true;
                }
            }
        }
        /* merge the nty threads of each column group, in ty order */
        __syncthreads(); /* sv is free: the previous group's readers are done */
#pragma unroll
        for (int e = 0; e < V; e++) {
            sv[t * V + e] = acc[e];
            if constexpr (Op::ARG)
                si[t * V + e] = ai[e];
        }
        sh[t] = have;
        unsigned kk = 0;
        if constexpr (Op::FPE) {
#pragma unroll
            for (int e = 0; e < V; e++)
                kk |= (unsigned)ai[e];
            sk[t] = kk;
        }
        for (int w = nty / 2; w >= 1; w /= 2) {
            __syncthreads();
            if (ty < w) {
                const int o = t + w * ntx;
                if (sh[o]) {
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const T ov = sv[o * V + e];
                        const int64_t oi = Op::ARG ? si[o * V + e] : 0;
                        if (have) {
                            Op::fold(acc[e], ai[e], ov, oi);
                        } else {
                            acc[e] = ov;
                            ai[e] = oi;
                        }
                        sv[t * V + e] = acc[e];
                        if constexpr (Op::ARG)
                            si[t * V + e] = ai[e];
                    }
                    if constexpr (Op::FPE) {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            kk |= (unsigned)ai[e];
                        kk |= sk[o];
                        sk[t] = kk;
                    }
                    have = true;
                    sh[t] = true;
                }
            }
        }
        if (ty == 0 && m0 < a.m) {
            /* the V outputs differ in the innermost kept dim only */
            const int64_t ds = a.kdst[a.nk - 1], is = a.kidx[a.nk - 1];
            dg_red_koff o{0, 0, 0, 0, 0};
            if (a.part == NULL)
                o = dg_red_kept(a, m0);
#pragma unroll
            for (int e = 0; e < V; e++) {
                /* FPE: the kinds of all V outputs on each (published once) */
                dg_red_st<Op> st{acc[e], Op::FPE ? (int64_t)kk : ai[e], have};
                if (a.part != NULL)
                    dg_red_put_part<Op>(a, m0 + e, s, st);
                else
                    dg_red_put<Op>(a, o.dst + e * ds, o.idx + e * is, st);
            }
        }
    }
}

/* ---- final: the partials ----------------------------------------------------------- */

/* tpo threads per output fold its a.nsplit partials (none: init). */
template <class Op>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_red_final_k(const __grid_constant__ dg_cu_red a)
{
    const int64_t opb = DG_CU_THREADS / a.tpo;
    const int64_t ngroups = (a.m + opb - 1) / opb;
    for (int64_t g = blockIdx.x; g < ngroups; g += gridDim.x)
        dg_red_fold_parts<Op>(a, g * opb, (g + 1) * opb < a.m ? (g + 1) * opb : a.m, a.tpo);
}

/* ---- this part's table ------------------------------------------------------------- */

template <class Op, int OP> constexpr dg_red_entry dg_red_entry_of()
{
    if constexpr (Op::VEC > 1)
        return dg_red_entry{{&dg_red_inner_k<Op, 1>, &dg_red_inner_k<Op, Op::VEC>,
                             &dg_red_outer_k<Op, 1>, &dg_red_outer_k<Op, Op::VEC>,
                             &dg_red_final_k<Op>},
                            Op::VEC,
                            OP};
    else
        return dg_red_entry{{&dg_red_inner_k<Op, 1>, NULL, &dg_red_outer_k<Op, 1>, NULL,
                             &dg_red_final_k<Op>},
                            1,
                            OP};
}

/* The kernels of op OP (none for a loop that does not fold, or that runs
 * another loop's kernels). */
template <int OP> constexpr dg_red_entry dg_red_op_entry()
{
    if constexpr (OP < dg_ew_nloops) {
        if constexpr (dg_ew_foldable(OP) && dg_same_bits_loop(OP) == OP)
            return dg_red_entry_of<dg_red_loop_op<OP>, OP>();
        else
            return dg_red_entry{{NULL, NULL, NULL, NULL, NULL}, 1, OP};
    } else if constexpr (OP < dg_ew_nloops + DG_NDTYPES) {
        return dg_red_entry_of<dg_red_arg_op<OP - dg_ew_nloops, false>, OP>();
    } else {
        return dg_red_entry_of<dg_red_arg_op<OP - dg_ew_nloops - DG_NDTYPES, true>, OP>();
    }
}

/* This part's ops: DG_RED_PART, DG_RED_PART + NPARTS, ...; one extra empty
 * entry keeps the array non-empty. */
enum {
    dg_red_part_count = dg_red_nops > DG_RED_PART
                            ? (dg_red_nops - DG_RED_PART + DG_CU_RED_NPARTS - 1) / DG_CU_RED_NPARTS
                            : 0
};

/* The part number is a template parameter so that each part's table is a
 * distinct entity (see ew.cuh). */
template <int P, class Seq> struct dg_red_part_table;
template <int P, size_t... J> struct dg_red_part_table<P, std::index_sequence<J...> > {
    static constexpr dg_red_entry entries[] = {
        dg_red_op_entry<(int)J * DG_CU_RED_NPARTS + P>()...,
        dg_red_entry{{NULL, NULL, NULL, NULL, NULL}, 1, -1}};
};

#define DG_RED_CAT2(a, b) a##b
#define DG_RED_CAT(a, b) DG_RED_CAT2(a, b)

extern "C" {
extern const dg_red_entry *const DG_RED_CAT(dg_cu_red_part_, DG_RED_PART);
const dg_red_entry *const DG_RED_CAT(dg_cu_red_part_, DG_RED_PART) =
    dg_red_part_table<DG_RED_PART, std::make_index_sequence<dg_red_part_count> >::entries;
}

#endif /* DG_RED_PART */

#endif /* DG_REDUCE_CUH */
