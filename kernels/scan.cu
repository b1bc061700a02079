/* Scan kernels (the CUDA backend's scan slot), five per foldable loop of
 * DG_LOOP_LIST (dg_ew_foldable, ew.cuh: add, multiply, maximum, minimum,
 * fmax, fmin and the logical and bitwise ufuncs, three equal dtypes); loops
 * that do not fold have none.
 *
 * dg_cu_scan.tpr threads scan one row (cu_kernels.h); the host chooses:
 *   - 1 (dg_scan_thread_k): a thread folds its row sequentially, the loads
 *     DG_SCAN_UNROLL at a time; for short rows, and for rows that lie side
 *     by side in memory (a scan along an outer axis), where the threads of a
 *     warp read neighbouring addresses;
 *   - 32 (dg_scan_warp_k): a warp per row, in tiles of 32 * ITEMS elements;
 *   - DG_CU_THREADS (dg_scan_block_k): a block per row, in tiles of
 *     DG_CU_THREADS * ITEMS elements;
 *   - DG_CU_THREADS, a long row split over many blocks (dg_scan_tile_k, two
 *     passes around the block kernel's scan of the tiles' totals; a.pass,
 *     cu_kernels.h): a block per stretch of a.tile elements, folded as the
 *     block kernel folds a row, for its total, then scanned from its
 *     prefix.
 * In a tile each thread scans its ITEMS neighbouring elements, the warp scans
 * the threads' totals with shuffles (and the block the warps' totals through
 * shared memory, folded in order), and each element gets (the row's running
 * total op the totals before its thread) op its own prefix; the running total
 * then takes in the tile's total.  The fold is left to right; floating
 * results differ from a sequential fold by rounding only.  A thread's ITEMS
 * elements, where dense, whole and aligned, load and store as 16-byte (or
 * 8-byte) vectors (dg_scan_vec).
 *
 * dst may be src (same strides): every element is read once, by the thread
 * that writes it, before it writes it (a tiled row is read twice: by the
 * totals' pass, which ends before the tiles' pass starts, and so).
 *
 * Floating-point errors (add and multiply of floats: cumsum, cumprod, and
 * their nan forms): each fold whose result is not finite while its operands
 * were calls the rule, as the reductions' fold does (dg_ew_fold_kinds,
 * ew.cuh: one compare a fold on the common path, paid under
 * errstate(all='ignore') too); a thread or's the kinds into a register,
 * counting only folds of real elements (lanes past the row's end fold
 * zeros, whose products would raise "invalid" from an infinite total), and
 * publishes them at the kernel's end where the call watches them
 * ("accumulate" in NumPy's message).  The parallel scan folds more than the
 * sequential one (the totals of threads and warps, and of a long row's tiles,
 * with their scan): a total that overflows makes the results it reaches
 * infinite, and is noted as they are. */
#include <stddef.h>
#include <stdint.h>
#include <type_traits>
#include <utility>

#include "ew.cuh"

/* Loads in flight per thread in the thread-per-row kernel. */
#define DG_SCAN_UNROLL 8

/* Loop I as a binary function on its one type T; f or's the kinds the fold
 * raised into k (FPE: dg_ew_fold_fpe; nothing, at no cost, for the others). */
template <int I> struct dg_scan_op {
    typedef dg_ew_loop<I> L;
    typedef typename L::T0 T;
    static constexpr bool FPE = dg_ew_fold_fpe<L>();
    /* Elements per thread of a tile (warp and block kernels). */
    static constexpr int ITEMS = DG_CU_SCAN_ITEMS(sizeof(T));
    static __device__ __forceinline__ T f(T a, T b, unsigned &k)
    {
        T o;
        dg_ew_none none;
        L::eval(a, b, o, none);
        if constexpr (FPE)
            k |= dg_ew_fold_kinds<L>(a, b, o);
        return o;
    }
};

/* Publishes the kinds k a thread's folds raised, where the call watches
 * them (every thread of the kernel calls it at its end). */
template <class Op> __device__ __forceinline__ void dg_scan_publish(const dg_cu_scan &a, unsigned k)
{
    if constexpr (Op::FPE)
        if (a.fpe.actions != 0)
            dg_cu_fpe_publish(a.fpe, k);
}

template <class T> __device__ __forceinline__ T dg_scan_ld(const char *p)
{
    return *reinterpret_cast<const T *>(p);
}

template <class T> __device__ __forceinline__ void dg_scan_st(char *p, const T &v)
{
    *reinterpret_cast<T *>(p) = v;
}

/* A shuffle of any T of 1, 2, 4, 8 or 16 bytes, moved as 32-bit words:
 * UP: the value of lane (this lane - k) (this lane's own below k);
 * else the value of lane k.  Every lane of the warp must call it. */
template <bool UP, class T> __device__ __forceinline__ T dg_scan_shfl(const T &v, int k)
{
    if constexpr (sizeof(T) < 4) {
        typedef typename std::conditional<sizeof(T) == 1, uint8_t, uint16_t>::type U;
        union {
            T t;
            U u;
        } x, y;
        x.t = v;
        const unsigned w = (unsigned)x.u;
        y.u = (U)(UP ? __shfl_up_sync(0xffffffffu, w, k) : __shfl_sync(0xffffffffu, w, k));
        return y.t;
    } else {
        static_assert(sizeof(T) % 4 == 0, "a scan type of odd size");
        constexpr int W = (int)(sizeof(T) / 4);
        union {
            T t;
            unsigned u[W];
        } x, y;
        x.t = v;
#pragma unroll
        for (int j = 0; j < W; j++)
            y.u[j] = UP ? __shfl_up_sync(0xffffffffu, x.u[j], k)
                        : __shfl_sync(0xffffffffu, x.u[j], k);
        return y.t;
    }
}

/* The inclusive scan of v over the lanes of the warp (lane l gets v of lanes
 * 0..l folded in lane order; the kinds of its folds or'ed into kk, for the
 * caller to keep where its lane holds real elements).  Every lane must call
 * it. */
template <class Op>
__device__ __forceinline__ typename Op::T dg_scan_warp(typename Op::T v, int lane, unsigned &kk)
{
#pragma unroll
    for (int k = 1; k < 32; k *= 2) {
        const typename Op::T y = dg_scan_shfl<true>(v, k);
        if (lane >= k)
            v = Op::f(y, v, kk);
    }
    return v;
}

/* Byte offsets of row `row` (C order over the row dims) in src, dst, carry
 * (the loop not unrolled: once a row, a division a dim either way). */
__device__ __forceinline__ void dg_scan_locate(const dg_cu_scan &a, int64_t row,
                                               const char *&src, char *&dst,
                                               const char *&carry)
{
    int64_t so = 0, dof = 0, co = 0, r = row;
#pragma unroll 1
    for (int d = a.nrd - 1; d >= 0; d--) {
        const int64_t q = r / a.rshape[d], c = r - q * a.rshape[d];
        r = q;
        so += c * a.rsrc[d];
        dof += c * a.rdst[d];
        co += c * a.rcarry[d];
    }
    src = a.src + so;
    dst = a.dst + dof;
    carry = a.carry != NULL ? a.carry + co : NULL;
}

/* The N elements of type T at p, dense, as one or more aligned vector
 * accesses: V, a word of 16 bytes or of N * sizeof(T) if that is less. */
template <class T, int N> struct dg_scan_vec {
    static constexpr int B = N * (int)sizeof(T);
    static constexpr int VB = B < 16 ? B : 16;
    typedef typename std::conditional<VB == 16, uint4,
            typename std::conditional<VB == 8, uint2, unsigned>::type>::type V;
    union U {
        T t[N];
        V v[B / VB];
    };
    static_assert(B % VB == 0 && VB >= 4 && sizeof(V) == VB, "a scan tile of odd size");
    /* 1 if the N elements from element `first` (stride ss or ds) are whole
     * below n, dense and aligned for V */
    static __device__ __forceinline__ bool ok(const char *p, int64_t stride, int64_t first,
                                              int64_t n)
    {
        return stride == (int64_t)sizeof(T) && first + N <= n &&
               ((uintptr_t)(p + first * stride) & (uintptr_t)(VB - 1)) == 0;
    }
};

/* x[e] = the elements first .. first + e of the row folded (those past n
 * repeat the last one before n, so x[ITEMS - 1] is the thread's total);
 * the kinds raised or'ed into k.  Dense aligned elements load as vectors. */
template <class Op>
__device__ __forceinline__ void dg_scan_items(const char *src, int64_t ss, int64_t first,
                                              int64_t n, typename Op::T (&x)[Op::ITEMS],
                                              unsigned &k)
{
    typedef typename Op::T T;
    typedef dg_scan_vec<T, Op::ITEMS> Vec;
    if (Vec::ok(src, ss, first, n)) {
        typename Vec::U u;
        const typename Vec::V *p = reinterpret_cast<const typename Vec::V *>(src + first * ss);
#pragma unroll
        for (int j = 0; j < Vec::B / Vec::VB; j++)
            u.v[j] = p[j];
#pragma unroll
        for (int e = 0; e < Op::ITEMS; e++)
            x[e] = u.t[e];
    } else {
#pragma unroll
        for (int e = 0; e < Op::ITEMS; e++)
            x[e] = first + e < n ? dg_scan_ld<T>(src + (first + e) * ss) : T{};
    }
#pragma unroll
    for (int e = 1; e < Op::ITEMS; e++)
        x[e] = first + e < n ? Op::f(x[e - 1], x[e], k) : x[e - 1];
}

/* Writes the thread's elements: (p op x[e]) where the thread has a prefix
 * p (ph), else x[e]; the kinds raised or'ed into k.  Dense aligned elements
 * store as vectors. */
template <class Op>
__device__ __forceinline__ void dg_scan_put(char *dst, int64_t ds, int64_t first, int64_t n,
                                            const typename Op::T (&x)[Op::ITEMS],
                                            const typename Op::T &p, bool ph, unsigned &k)
{
    typedef dg_scan_vec<typename Op::T, Op::ITEMS> Vec;
    if (Vec::ok(dst, ds, first, n)) {
        typename Vec::U u;
        typename Vec::V *q = reinterpret_cast<typename Vec::V *>(dst + first * ds);
#pragma unroll
        for (int e = 0; e < Op::ITEMS; e++)
            u.t[e] = ph ? Op::f(p, x[e], k) : x[e];
#pragma unroll
        for (int j = 0; j < Vec::B / Vec::VB; j++)
            q[j] = u.v[j];
        return;
    }
#pragma unroll
    for (int e = 0; e < Op::ITEMS; e++)
        if (first + e < n)
            dg_scan_st(dst + (first + e) * ds, ph ? Op::f(p, x[e], k) : x[e]);
}

/* ---- one thread per row ----------------------------------------------------- */

template <int I>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_scan_thread_k(const __grid_constant__ dg_cu_scan a)
{
    typedef dg_scan_op<I> Op;
    typedef typename Op::T T;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    unsigned k = 0; /* the kinds raised */

    for (int64_t row = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; row < a.rows;
         row += step) {
        const char *src, *carry;
        char *dst;
        dg_scan_locate(a, row, src, dst, carry);
        T acc = dg_scan_ld<T>(src);
        if (carry != NULL)
            acc = Op::f(dg_scan_ld<T>(carry), acc, k);
        dg_scan_st(dst, acc);
        for (int64_t base = 1; base < a.n; base += DG_SCAN_UNROLL) {
            T x[DG_SCAN_UNROLL];
#pragma unroll
            for (int e = 0; e < DG_SCAN_UNROLL; e++)
                if (base + e < a.n)
                    x[e] = dg_scan_ld<T>(src + (base + e) * a.ss);
#pragma unroll
            for (int e = 0; e < DG_SCAN_UNROLL; e++)
                if (base + e < a.n) {
                    acc = Op::f(acc, x[e], k);
                    dg_scan_st(dst + (base + e) * a.ds, acc);
                }
        }
    }
    dg_scan_publish<Op>(a, k);
}

/* ---- one warp per row ------------------------------------------------------- */

template <int I>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_scan_warp_k(const __grid_constant__ dg_cu_scan a)
{
    typedef dg_scan_op<I> Op;
    typedef typename Op::T T;
    constexpr int N = Op::ITEMS;
    const int lane = (int)threadIdx.x % 32;
    const int64_t tile = 32 * N, step = (int64_t)gridDim.x * (DG_CU_THREADS / 32);
    unsigned k = 0; /* the kinds raised by folds of real elements */

    /* the loops are uniform over the warp: the shuffles see all its lanes */
    for (int64_t row = (int64_t)blockIdx.x * (DG_CU_THREADS / 32) + threadIdx.x / 32;
         row < a.rows; row += step) {
        const char *src, *carry;
        char *dst;
        dg_scan_locate(a, row, src, dst, carry);
        bool rh = carry != NULL; /* run holds the fold of everything before the tile */
        T run = rh ? dg_scan_ld<T>(carry) : T{};
        for (int64_t base = 0; base < a.n; base += tile) {
            const int64_t first = base + (int64_t)lane * N, left = a.n - base;
            /* lanes 0 .. nth - 1 have elements */
            const int nth = left >= tile ? 32 : (int)((left + N - 1) / N);
            T x[N];
            unsigned kw = 0; /* lanes past nth fold zeros: their kinds are not kept */
            dg_scan_items<Op>(src, a.ss, first, a.n, x, k);
            const T incl = dg_scan_warp<Op>(x[N - 1], lane, kw);
            const T excl = dg_scan_shfl<true>(incl, 1);
            T p = run;
            bool ph = rh;
            if (lane > 0) {
                p = ph ? Op::f(p, excl, kw) : excl;
                ph = true;
            }
            k |= lane < nth ? kw : 0u;
            dg_scan_put<Op>(dst, a.ds, first, a.n, x, p, ph, k);
            const T tot = dg_scan_shfl<false>(incl, nth - 1);
            run = rh ? Op::f(run, tot, k) : tot;
            rh = true;
        }
    }
    dg_scan_publish<Op>(a, k);
}

/* ---- one block per row, or per tile of a long row ------------------------- */

/* The block folds the elements [begin, end) of a row (src, dst: the row's
 * first element) in sub-tiles of DG_CU_THREADS * ITEMS elements, from run
 * where rh; W: each element's prefix written to dst.  run then holds the
 * fold through end (rh set).  ws: the block's shared slots for the warps'
 * totals.  Every thread of the block calls it (the loops are uniform over
 * the block) and gets the same run. */
template <class Op, bool W>
__device__ __forceinline__ void dg_scan_block_run(const char *src, int64_t ss, char *dst,
                                                  int64_t ds, int64_t begin, int64_t end,
                                                  typename Op::T &run, bool &rh,
                                                  typename Op::T *ws, unsigned &k)
{
    typedef typename Op::T T;
    constexpr int N = Op::ITEMS;
    const int t = (int)threadIdx.x, lane = t % 32, w = t / 32;
    const int64_t tile = (int64_t)DG_CU_THREADS * N;
    for (int64_t base = begin; base < end; base += tile) {
        const int64_t first = base + (int64_t)t * N, left = end - base;
        /* threads 0 .. nth - 1 (warps 0 .. nw - 1) have elements */
        const int nth = left >= tile ? DG_CU_THREADS : (int)((left + N - 1) / N);
        const int nw = (nth + 31) / 32;
        T x[N];
        unsigned kw = 0; /* threads past nth fold zeros: their kinds are not kept */
        dg_scan_items<Op>(src, ss, first, end, x, k);
        const T incl = dg_scan_warp<Op>(x[N - 1], lane, kw);
        T excl{};
        if constexpr (W)
            excl = dg_scan_shfl<true>(incl, 1);
        if (w < nw && lane == (nth - 1 - 32 * w < 31 ? nth - 1 - 32 * w : 31))
            ws[w] = incl;
        __syncthreads();
        if constexpr (W) {
            T p = run;
            bool ph = rh;
            if (w < nw) {
                for (int j = 0; j < w; j++) {
                    p = ph ? Op::f(p, ws[j], k) : ws[j];
                    ph = true;
                }
                if (lane > 0) {
                    p = ph ? Op::f(p, excl, kw) : excl;
                    ph = true;
                }
                dg_scan_put<Op>(dst, ds, first, end, x, p, ph, k);
            }
        }
        k |= t < nth ? kw : 0u;
        T tot = ws[0];
        for (int j = 1; j < nw; j++)
            tot = Op::f(tot, ws[j], k);
        run = rh ? Op::f(run, tot, k) : tot;
        rh = true;
        __syncthreads(); /* ws is read by all before the next sub-tile writes it */
    }
}

template <int I>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_scan_block_k(const __grid_constant__ dg_cu_scan a)
{
    typedef dg_scan_op<I> Op;
    typedef typename Op::T T;
    __shared__ T ws[DG_CU_THREADS / 32]; /* the warps' totals of a sub-tile */
    unsigned k = 0; /* the kinds raised by folds of real elements */

    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const char *src, *carry;
        char *dst;
        dg_scan_locate(a, row, src, dst, carry);
        bool rh = carry != NULL;
        T run = rh ? dg_scan_ld<T>(carry) : T{};
        dg_scan_block_run<Op, true>(src, a.ss, dst, a.ds, 0, a.n, run, rh, ws, k);
    }
    dg_scan_publish<Op>(a, k);
}

/* A tile of a long row (a.pass, dg_cu_scan): block b takes tile
 * b % a.ntiles of row b / a.ntiles.  TILES false (DG_CU_SCAN_TOTALS): the
 * tile's total, its elements folded as the block kernel folds them, to
 * a.part; true (DG_CU_SCAN_TILES): the tile scanned from its prefix (the
 * element of a.part before it, which the scan of a.part's row made, or the
 * row's carry for tile 0).  The totals' folds are checked as every other
 * fold (a tile whose total overflows makes the prefixes after it infinite,
 * and is noted with them). */
template <int I, bool TILES>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_scan_tile_k(const __grid_constant__ dg_cu_scan a)
{
    typedef dg_scan_op<I> Op;
    typedef typename Op::T T;
    __shared__ T ws[DG_CU_THREADS / 32];
    const int64_t row = (int64_t)blockIdx.x / a.ntiles, t = (int64_t)blockIdx.x - row * a.ntiles;
    const int64_t begin = t * a.tile, end = begin + a.tile < a.n ? begin + a.tile : a.n;
    T *part = reinterpret_cast<T *>(a.part) + row * a.ntiles;
    unsigned k = 0;
    const char *src, *carry;
    char *dst;
    bool rh = false;
    T run{};

    if (row < a.rows) {
        dg_scan_locate(a, row, src, dst, carry);
        if (TILES && t > 0) {
            run = part[t - 1];
            rh = true;
        } else if (TILES && carry != NULL) {
            run = dg_scan_ld<T>(carry);
            rh = true;
        }
        dg_scan_block_run<Op, TILES>(src, a.ss, dst, a.ds, begin, end, run, rh, ws, k);
        if (!TILES && threadIdx.x == 0)
            part[t] = run;
    }
    dg_scan_publish<Op>(a, k);
}

/* ---- the table -------------------------------------------------------------- */

typedef void (*dg_scan_kernel)(dg_cu_scan);
/* Loop I's kernels for 1, 32 and DG_CU_THREADS threads per row, and the
 * passes DG_CU_SCAN_TOTALS and DG_CU_SCAN_TILES, or NULLs. */
struct dg_scan_entry {
    dg_scan_kernel k[5];
};

/* A loop that runs another loop's kernels (kernels/dg_same_bits.h: int32 add
 * is uint32 add) scans with that loop's, which fold too. */
template <int I> constexpr dg_scan_entry dg_scan_entry_of()
{
    constexpr int S = dg_same_bits_loop(I);
    if constexpr (dg_ew_foldable(I)) {
        static_assert(dg_ew_foldable(S), "a foldable loop runs a non-foldable one's kernels");
        return dg_scan_entry{{&dg_scan_thread_k<S>, &dg_scan_warp_k<S>, &dg_scan_block_k<S>,
                              &dg_scan_tile_k<S, false>, &dg_scan_tile_k<S, true>}};
    } else {
        return dg_scan_entry{{NULL, NULL, NULL, NULL, NULL}};
    }
}

template <class Seq> struct dg_scan_table;
template <size_t... I> struct dg_scan_table<std::index_sequence<I...> > {
    static constexpr dg_scan_entry entries[] = {dg_scan_entry_of<(int)I>()...};
};
typedef dg_scan_table<std::make_index_sequence<dg_ew_nloops> > dg_scans;

extern "C" {
int dg_cu_scan_has(int loop)
{
    return loop >= 0 && loop < dg_ew_nloops && dg_scans::entries[loop].k[0] != NULL;
}

cudaError_t dg_cu_scan_launch(int loop, const dg_cu_scan *a, unsigned blocks, cudaStream_t s)
{
    void *args[] = {(void *)a};
    int k;
    if (!dg_cu_scan_has(loop) || blocks == 0)
        return cudaErrorInvalidValue;
    if (a->pass == DG_CU_SCAN_TOTALS || a->pass == DG_CU_SCAN_TILES) {
        if (a->tpr != DG_CU_THREADS || a->ntiles < 1 || a->tile < 1 || a->part == NULL ||
            (int64_t)blocks != a->rows * a->ntiles)
            return cudaErrorInvalidValue;
        k = a->pass == DG_CU_SCAN_TOTALS ? 3 : 4;
    } else if (a->pass != 0) {
        return cudaErrorInvalidValue;
    } else if (a->tpr == 1) {
        k = 0;
    } else if (a->tpr == 32) {
        k = 1;
    } else if (a->tpr == DG_CU_THREADS) {
        k = 2;
    } else {
        return cudaErrorInvalidValue;
    }
    return cudaLaunchKernel((const void *)dg_scans::entries[loop].k[k], dim3(blocks),
                            dim3(DG_CU_THREADS), args, 0, s);
}
}
