/* Search and count kernels (the search and count slots), matching the CPU
 * backend (cpu_surface.c) through the shared order of kernels/dg_order.h.
 *
 * A search is one thread per value: a binary search of the sorted sequence
 * in NumPy's order.  A count is a grid-stride loop adding one (or a weight)
 * per element to its bin: in shared memory per block where the bins fit
 * (DG_CU_SMEM_BYTES), added to the global bins by one atomic per bin and
 * block, else straight to the global bins.  Weighted sums are added in no
 * fixed order (float64 atomics), so they agree with NumPy's to rounding.
 * Sums of squares (a norm's) are one partial per block, one bin each. */
#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "cu_surface_kernels.h"
#include "dg_order.h"

/* The traits of one dtype: its C type, order and key (keyed dtypes). */
template <int DT> struct dg_ord;
#define DG_ORD_TRAITS(E, t, ct)                                                  \
    template <> struct dg_ord<DG_##E> {                                          \
        typedef ct T;                                                            \
        static __device__ __forceinline__ int less(ct a, ct b)                   \
        {                                                                        \
            return dg_order_less_##t(a, b);                                      \
        }                                                                        \
    };
DG_ORDER_KEYED(DG_ORD_TRAITS)
DG_ORD_TRAITS(COMPLEX64, c8, dg_c64)
DG_ORD_TRAITS(COMPLEX128, c16, dg_c128)

template <int DT> struct dg_key;
#define DG_KEY_TRAITS(E, t, ct)                                                  \
    template <> struct dg_key<DG_##E> {                                          \
        static __device__ __forceinline__ uint64_t of(const char *p)             \
        {                                                                        \
            return dg_order_key_##t(*reinterpret_cast<const ct *>(p));           \
        }                                                                        \
    };
DG_ORDER_KEYED(DG_KEY_TRAITS)

/* Byte offsets of element i (C order over shape) along two sets of strides. */
__device__ __forceinline__ void dg_sf_offsets(int ndim, const int64_t *shape,
                                              const int64_t *s0, const int64_t *s1,
                                              int64_t i, int64_t &o0, int64_t &o1)
{
    o0 = o1 = 0;
    for (int d = ndim - 1; d > 0; d--) {
        const int64_t q = i / shape[d], c = i - q * shape[d];
        i = q;
        o0 += c * s0[d];
        o1 += c * s1[d];
    }
    if (ndim > 0) {
        o0 += i * s0[0];
        o1 += i * s1[0];
    }
}

template <int DT>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_search_k(const __grid_constant__ dg_cu_search a)
{
    typedef typename dg_ord<DT>::T T;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < a.total; i += step) {
        int64_t vo, dof, lo = 0, hi = a.n;
        dg_sf_offsets(a.ndim, a.shape, a.vstr, a.dstr, i, vo, dof);
        const T v = *reinterpret_cast<const T *>(a.val + vo);
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            const T s = *reinterpret_cast<const T *>(a.seq + mid * a.seq_stride);
            const int before = a.right ? !dg_ord<DT>::less(v, s) : dg_ord<DT>::less(s, v);
            if (before)
                lo = mid + 1;
            else
                hi = mid;
        }
        int64_t *out = reinterpret_cast<int64_t *>(reinterpret_cast<char *>(a.dst) + dof);
        *out = a.accumulate ? *out + lo : lo;
    }
}

/* A first guess of the bin of v among nbins equal-looking bins between
 * e[0] and e[nbins], or -1 where there is none (not a float dtype, NaN,
 * outside): the edges decide in dg_edge_bin, the guess only saves the
 * search where it is right (equal bins: almost always). */
template <int DT> struct dg_edge_guess {
    template <typename T>
    static __device__ __forceinline__ int64_t of(T, const T *, int64_t) { return -1; }
};
template <> struct dg_edge_guess<DG_FLOAT32> {
    static __device__ __forceinline__ int64_t of(float v, const float *e, int64_t nbins)
    {
        const double lo = e[0], f = ((double)v - lo) / ((double)e[nbins] - lo) * (double)nbins;
        return f >= 0.0 && f < (double)nbins ? (int64_t)f : -1;
    }
};
template <> struct dg_edge_guess<DG_FLOAT64> {
    static __device__ __forceinline__ int64_t of(double v, const double *e, int64_t nbins)
    {
        const double f = (v - e[0]) / (e[nbins] - e[0]) * (double)nbins;
        return f >= 0.0 && f < (double)nbins ? (int64_t)f : -1;
    }
};

/* The flat kernel's guess of equal bins reads a float element as a double
 * (float16's edges are searched without a guess). */
template <int DT> struct dg_edge_lo {
    static constexpr bool guess = false;
    template <typename T> static __device__ __forceinline__ double of(T) { return 0.0; }
};
template <> struct dg_edge_lo<DG_FLOAT32> {
    static constexpr bool guess = true;
    static __device__ __forceinline__ double of(float v) { return (double)v; }
};
template <> struct dg_edge_lo<DG_FLOAT64> {
    static constexpr bool guess = true;
    static __device__ __forceinline__ double of(double v) { return v; }
};

/* The bin among the nbins + 1 increasing edges of the value at p (the last
 * bin closed), or -1 outside them (NaN too): the bin b with
 * e[b] <= v < e[b + 1] (v <= e[nbins] for the last), that is, one less than
 * the number of edges <= v, as a search of the edges finds it. */
template <int DT>
__device__ __forceinline__ int64_t dg_edge_bin(const dg_cu_count &a, const char *p)
{
    typedef typename dg_ord<DT>::T T;
    const T v = *reinterpret_cast<const T *>(p);
    const T *e = reinterpret_cast<const T *>(a.edges);
    const int64_t g = dg_edge_guess<DT>::of(v, e, a.nbins);
    if (g >= 0 && !dg_ord<DT>::less(v, e[g]) &&
        (g + 1 < a.nbins ? dg_ord<DT>::less(v, e[g + 1]) : !dg_ord<DT>::less(e[a.nbins], v)))
        return g;
    int64_t lo = 0, hi = a.nbins + 1;
    while (lo < hi) { /* how many edges are <= v */
        const int64_t mid = lo + (hi - lo) / 2;
        if (!dg_ord<DT>::less(v, e[mid]))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == a.nbins + 1 && !dg_ord<DT>::less(e[a.nbins], v))
        lo = a.nbins;
    return lo >= 1 && lo <= a.nbins ? lo - 1 : -1;
}

/* The bin of the element at p in a count, or -1. */
template <int DT>
__device__ __forceinline__ int64_t dg_count_bin(const dg_cu_count &a, const char *p)
{
    if (a.radix == DG_COUNT_EDGES)
        return dg_edge_bin<DT>(a, p);
    if (a.radix == DG_COUNT_BINS) {
        const int64_t b = *reinterpret_cast<const int64_t *>(p);
        return b >= 0 && b < a.nbins ? b : -1;
    }
    const uint64_t k = dg_key<DT>::of(p);
    if (a.pshift < 64) {
        const uint64_t q = k >> a.pshift;
        if (q != a.prefix && q != a.prefix2)
            return -1;
        if (a.nprefix == 2) { /* a half of the bins for each prefix */
            const int64_t half = a.nbins >> 1;
            return (int64_t)((k >> a.shift) & (uint64_t)(half - 1)) + (q == a.prefix ? 0 : half);
        }
    }
    return (int64_t)((k >> a.shift) & (uint64_t)(a.nbins - 1));
}

#define DG_COUNT_UNROLL 4

template <int DT, bool SMEM>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_count_k(const __grid_constant__ dg_cu_count a)
{
    extern __shared__ double dg_bins_s[];
    double *wbins = dg_bins_s;
    unsigned int *cbins = reinterpret_cast<unsigned int *>(dg_bins_s);
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    if (SMEM) {
        for (int64_t b = threadIdx.x; b < a.nbins; b += DG_CU_THREADS) {
            if (a.weight)
                wbins[b] = 0.0;
            else
                cbins[b] = 0;
        }
        __syncthreads();
    }
    /* DG_COUNT_UNROLL elements a step, their bins (and weights) found
     * before any is added: their loads are in flight together. */
    for (int64_t i0 = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i0 < a.total;
         i0 += DG_COUNT_UNROLL * step) {
        int64_t b[DG_COUNT_UNROLL];
        double w[DG_COUNT_UNROLL];
#pragma unroll
        for (int j = 0; j < DG_COUNT_UNROLL; j++) {
            const int64_t i = i0 + j * step;
            b[j] = -1;
            w[j] = 0.0;
            if (i < a.total) {
                int64_t so, wo;
                dg_sf_offsets(a.ndim, a.shape, a.sstr, a.wstr, i, so, wo);
                b[j] = dg_count_bin<DT>(a, a.src + so);
                if (a.weight && b[j] >= 0)
                    w[j] = *reinterpret_cast<const double *>(a.weight + wo);
            }
        }
#pragma unroll
        for (int j = 0; j < DG_COUNT_UNROLL; j++) {
            if (b[j] < 0)
                continue;
            if (a.weight)
                atomicAdd(SMEM ? &wbins[b[j]] : &a.sum[b[j]], w[j]);
            else if (SMEM)
                atomicAdd(&cbins[b[j]], 1u);
            else
                atomicAdd(&a.cnt[b[j]], 1ull);
        }
    }
    if (SMEM) {
        __syncthreads();
        for (int64_t b = threadIdx.x; b < a.nbins; b += DG_CU_THREADS) {
            if (a.weight) {
                if (wbins[b] != 0.0)
                    atomicAdd(&a.sum[b], wbins[b]);
            } else if (cbins[b]) {
                atomicAdd(&a.cnt[b], (unsigned long long)cbins[b]);
            }
        }
    }
}

/* The flat kernel's bin of one element, per mode, its constants read once
 * a thread: bin(p) is the bin of the element at p, or -1 (never where
 * `all` says every element has one).
 *
 * A radix count's mode is fixed at compile time (dg_flat_radix<MODE>): every
 * key (ALL: the first digit, or a prefix longer than the keys, all 0), the
 * keys under one prefix (ONE) or under either of two, a half of the bins
 * each (TWO); keys of 4 bytes or less in 32-bit arithmetic.  The runtime
 * flags of one kernel for all three cost a branch an element: with them the
 * loop issued about 35 instructions an element, which held a count of 2^28
 * float32 to 2.5 TB/s of the H200's 4.4; float32's keys are branchless
 * (dg_order_key_f4). */
enum { DG_RADIX_ALL, DG_RADIX_ONE, DG_RADIX_TWO };
template <int MODE> struct dg_flat_radix {
    template <int DT> struct bin_of { /* DG_COUNT_RADIX */
        typedef typename dg_ord<DT>::T T;
        typedef typename std::conditional<(sizeof(T) <= 4), uint32_t, uint64_t>::type K;
        static constexpr bool all = MODE == DG_RADIX_ALL;
        K prefix, prefix2, mask;
        int shift, pshift, half;
        __device__ __forceinline__ bin_of(const dg_cu_count &a, void *)
        {
            prefix = (K)a.prefix;
            prefix2 = (K)a.prefix2;
            shift = a.shift;
            pshift = MODE == DG_RADIX_ALL ? 0 : a.pshift;
            half = MODE == DG_RADIX_TWO ? (int)(a.nbins >> 1) : 0;
            mask = (K)((a.nprefix == 2 ? a.nbins >> 1 : a.nbins) - 1);
        }
        __device__ __forceinline__ int bin(const char *p) const
        {
            const K k = (K)dg_key<DT>::of(p);
            const int b = (int)((k >> shift) & mask);
            if (MODE == DG_RADIX_ALL)
                return b;
            const K q = k >> pshift;
            if (MODE == DG_RADIX_ONE)
                return q == prefix ? b : -1;
            return q == prefix ? b : q == prefix2 ? b + half : -1;
        }
    };
};

/* The flat kernel's sure bins of equal bins (dg_flat_edges): an element's
 * position f = (v - lo) * scale in its own precision F, split into g = floor(f)
 * and f - g by one add of 2^23 (2^52) rounded down (full-rate adds: no
 * conversion instructions, which run at a quarter of the rate). */
template <int DT> struct dg_epos {
    static constexpr bool on = false;
    typedef float F;
    template <typename T> static __device__ __forceinline__ F of(T) { return 0.0f; }
};
__device__ __forceinline__ float dg_add_down(float a, float b) { return __fadd_rd(a, b); }
__device__ __forceinline__ double dg_add_down(double a, double b) { return __dadd_rd(a, b); }
__device__ __forceinline__ long long dg_fbits(float v) { return __float_as_int(v); }
__device__ __forceinline__ long long dg_fbits(double v) { return __double_as_longlong(v); }
/* the larger of *p and v, both >= 0 (their bits order as integers) */
__device__ __forceinline__ void dg_max_to(float *p, float v)
{
    atomicMax(reinterpret_cast<int *>(p), __float_as_int(v));
}
__device__ __forceinline__ void dg_max_to(double *p, double v)
{
    atomicMax(reinterpret_cast<unsigned long long *>(p),
              (unsigned long long)__double_as_longlong(v));
}
/* FT with MANT bits of mantissa (23, 52) */
template <typename FT, int MANT> struct dg_epos_of {
    static constexpr bool on = true;
    typedef FT F;
    static constexpr F eps = (F)1 / (F)(1LL << (MANT + 1)); /* half an ulp of 1 */
    static __device__ __forceinline__ F of(FT v) { return v; }
    /* floor(f) for f in [0, 2^22), and f - floor(f) (both exact) */
    static __device__ __forceinline__ int split(F f, F &fr)
    {
        const F big = (F)(1LL << MANT);
        const F r = dg_add_down(f, big);
        fr = f - (r - big);
        return (int)(dg_fbits(r) - dg_fbits(big));
    }
    static __device__ __forceinline__ void max_to(F *p, F v) { dg_max_to(p, v); }
};
template <> struct dg_epos<DG_FLOAT32> : dg_epos_of<float, 23> {};
template <> struct dg_epos<DG_FLOAT64> : dg_epos_of<double, 52> {};

template <int DT> struct dg_flat_edges { /* DG_COUNT_EDGES: float dtypes */
    typedef typename dg_ord<DT>::T T;
    typedef typename dg_epos<DT>::F F;
    static constexpr bool all = false;
    const T *e; /* the edges, in shared memory */
    int nbins;
    double lo, scale;
    /* The sure bins: P(x) = (x - plo) * pscale in F is monotone in x, and no
     * edge's P is farther than dev from its index b (found over the edges by
     * the block), so an element with f = P(v) more than dev past g = floor(f)
     * and more than dev short of g + 1 lies between edges g and g + 1 (v > e[g]
     * since P(v) > P(e[g]); v < e[g + 1] likewise): its bin needs no read of
     * the edges (two shared loads that conflict on banks for most elements).
     * tol: dev and a margin for the rounding of dev itself; 1 (never sure)
     * where edges stray by half a bin or more. */
    F plo, pscale, tol;
    __device__ __forceinline__ dg_flat_edges(const dg_cu_count &a, void *smem_edges)
    {
        e = reinterpret_cast<const T *>(smem_edges);
        nbins = (int)a.nbins;
        const T *g = reinterpret_cast<const T *>(a.edges);
        lo = dg_edge_lo<DT>::of(g[0]);
        scale = (double)nbins / (dg_edge_lo<DT>::of(g[nbins]) - lo);
        plo = pscale = (F)0;
        tol = (F)1;
        if constexpr (dg_epos<DT>::on) {
            __shared__ F dev_s;
            plo = dg_epos<DT>::of(e[0]);
            pscale = (F)nbins / (dg_epos<DT>::of(e[nbins]) - plo);
            if (threadIdx.x == 0)
                dev_s = (F)0;
            __syncthreads();
            F m = (F)0;
            for (int b = (int)threadIdx.x; b <= nbins; b += (int)blockDim.x) {
                const F d = fabs((dg_epos<DT>::of(e[b]) - plo) * pscale - (F)b);
                m = d > m ? d : m;
            }
            dg_epos<DT>::max_to(&dev_s, m);
            __syncthreads();
            const F t = dev_s + (F)(8 * (nbins + 1)) * dg_epos<DT>::eps;
            if (t < (F)0.5 && nbins < (1 << 22))
                tol = t;
        }
    }
    __device__ __forceinline__ int bin(const char *p) const
    {
        const T v = *reinterpret_cast<const T *>(p);
        if constexpr (dg_epos<DT>::on) {
            const F f = (dg_epos<DT>::of(v) - plo) * pscale;
            if (f >= (F)0 && f < (F)nbins) {
                F fr;
                const int g = dg_epos<DT>::split(f, fr);
                if (fr > tol && fr < (F)1 - tol)
                    return g;
            }
        }
        /* the guess of equal bins, kept where the edges confirm it */
        const double f = (dg_edge_lo<DT>::of(v) - lo) * scale;
        if (dg_edge_lo<DT>::guess && f >= 0.0 && f < (double)nbins) {
            const int g = (int)f;
            if (!dg_ord<DT>::less(v, e[g]) &&
                (g + 1 < nbins ? dg_ord<DT>::less(v, e[g + 1]) : !dg_ord<DT>::less(e[nbins], v)))
                return g;
        }
        int l = 0, h = nbins + 1;
        while (l < h) { /* how many edges are <= v */
            const int mid = l + (h - l) / 2;
            if (!dg_ord<DT>::less(v, e[mid]))
                l = mid + 1;
            else
                h = mid;
        }
        if (l == nbins + 1 && !dg_ord<DT>::less(e[nbins], v))
            l = nbins;
        return l >= 1 && l <= nbins ? l - 1 : -1;
    }
};

template <int DT> struct dg_flat_bins { /* DG_COUNT_BINS: int64 bin numbers */
    static constexpr bool all = false;
    int64_t nbins;
    __device__ __forceinline__ dg_flat_bins(const dg_cu_count &a, void *) : nbins(a.nbins) {}
    __device__ __forceinline__ int bin(const char *p) const
    {
        const int64_t b = *reinterpret_cast<const int64_t *>(p);
        return b >= 0 && b < nbins ? (int)b : -1;
    }
};

/* 16 bytes of elements, read as one vector. */
template <typename T> union dg_vec16 {
    uint4 q;
    T e[16 / sizeof(T)];
};

#define DG_FLAT_VECS 4 /* 16-byte vectors a thread has in flight */

/* Adds the elements of NV vectors to their bins in shared memory: their
 * bins found first, then (where not every element has one) one branch for
 * them all, rarely taken under a prefix few keys share, instead of one an
 * element. */
template <int DT, template <int> class BIN, int NV>
__device__ __forceinline__ void dg_count_vecs(const BIN<DT> &bin,
                                              const dg_vec16<typename dg_ord<DT>::T> *v,
                                              unsigned int *cbins)
{
    constexpr int V = 16 / sizeof(typename dg_ord<DT>::T);
    int b[NV][V];
    bool any = BIN<DT>::all;
#pragma unroll
    for (int u = 0; u < NV; u++)
#pragma unroll
        for (int e = 0; e < V; e++) {
            b[u][e] = bin.bin(reinterpret_cast<const char *>(&v[u].e[e]));
            any = any || b[u][e] >= 0;
        }
    if (!any)
        return;
#pragma unroll
    for (int u = 0; u < NV; u++)
#pragma unroll
        for (int e = 0; e < V; e++)
            if (BIN<DT>::all || b[u][e] >= 0)
                atomicAdd(&cbins[b[u][e]], 1u);
}

/* A count of dense elements without weights whose bins (and edges) fit in
 * shared memory (ndim 1, the element's size apart, src aligned to it): the
 * body read as 16-byte vectors, DG_FLAT_VECS of them in flight in each
 * thread before any bin is added; the elements before the first 16-byte
 * boundary and after the last whole vector by the grid's first threads.
 * BIN (dg_flat_*) finds an element's bin with its constants loaded once a
 * thread, in 32-bit arithmetic where the keys fit, from edges copied to
 * shared memory: the general kernel's per-element loads and 64-bit work
 * held it to a third of the memory's speed. */
template <int DT, template <int> class BIN>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_count_flat_k(const __grid_constant__ dg_cu_count a)
{
    typedef typename dg_ord<DT>::T T;
    constexpr int V = 16 / sizeof(T);
    extern __shared__ double dg_bins_s[];
    unsigned int *cbins = reinterpret_cast<unsigned int *>(dg_bins_s);
    T *edges = reinterpret_cast<T *>(dg_bins_s + (a.nbins * 4 + 7) / 8);
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    const int64_t tid = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x;
    for (int64_t b = threadIdx.x; b < a.nbins; b += DG_CU_THREADS)
        cbins[b] = 0;
    if (a.edges)
        for (int64_t b = threadIdx.x; b <= a.nbins; b += DG_CU_THREADS)
            edges[b] = reinterpret_cast<const T *>(a.edges)[b];
    __syncthreads();
    const BIN<DT> bin(a, edges);
    const int64_t mis = (int64_t)(reinterpret_cast<uintptr_t>(a.src) & 15);
    const int64_t head = min(a.total, mis ? (16 - mis) / (int64_t)sizeof(T) : (int64_t)0);
    const int64_t nvec = (a.total - head) / V, tail = head + nvec * V;
    const uint4 *vp = reinterpret_cast<const uint4 *>(a.src + head * (int64_t)sizeof(T));
    int b0 = -1;
    if (tid < head)
        b0 = bin.bin(a.src + tid * (int64_t)sizeof(T));
    if (b0 >= 0)
        atomicAdd(&cbins[b0], 1u);
    b0 = -1;
    if (tid < a.total - tail)
        b0 = bin.bin(a.src + (tail + tid) * (int64_t)sizeof(T));
    if (b0 >= 0)
        atomicAdd(&cbins[b0], 1u);
    /* whole rounds of DG_FLAT_VECS vectors unpredicated (their addresses
     * one pointer stepped: predicated loads had the compiler rebuild each
     * address from the arguments, 20 instructions a vector), then the rest */
    const uint4 *q = vp + tid;
    const int64_t whole = nvec - tid - (DG_FLAT_VECS - 1) * step;
    for (int64_t j0 = 0; j0 < whole; j0 += DG_FLAT_VECS * step, q += DG_FLAT_VECS * step) {
        dg_vec16<T> v[DG_FLAT_VECS];
#pragma unroll
        for (int u = 0; u < DG_FLAT_VECS; u++)
            v[u].q = __ldcs(q + u * step);
        dg_count_vecs<DT, BIN, DG_FLAT_VECS>(bin, v, cbins);
    }
    for (int64_t j = q - vp; j < nvec; j += step) {
        dg_vec16<T> v;
        v.q = __ldcs(vp + j);
        dg_count_vecs<DT, BIN, 1>(bin, &v, cbins);
    }
    __syncthreads();
    for (int64_t b = threadIdx.x; b < a.nbins; b += DG_CU_THREADS)
        if (cbins[b])
            atomicAdd(&a.cnt[b], (unsigned long long)cbins[b]);
}

/* A float element as a double, and a double rounded to the dtype. */
template <int DT> struct dg_as_double;
template <> struct dg_as_double<DG_FLOAT16> {
    static __device__ __forceinline__ double of(const char *p)
    {
        return (double)dg_half_to_float(*reinterpret_cast<const dg_half *>(p));
    }
    static __device__ __forceinline__ double round(double f)
    {
        return (double)dg_half_to_float(dg_float_to_half((float)f));
    }
};
template <> struct dg_as_double<DG_FLOAT32> {
    static __device__ __forceinline__ double of(const char *p)
    {
        return (double)*reinterpret_cast<const float *>(p);
    }
    static __device__ __forceinline__ double round(double f) { return (double)(float)f; }
};
template <> struct dg_as_double<DG_FLOAT64> {
    static __device__ __forceinline__ double of(const char *p)
    {
        return *reinterpret_cast<const double *>(p);
    }
    static __device__ __forceinline__ double round(double f) { return f; }
};

/* The square of the element at p, rounded to the dtype if ROUND. */
template <int DT, bool ROUND>
__device__ __forceinline__ double dg_square(const char *p)
{
    const double v = dg_as_double<DT>::of(p);
    return ROUND ? dg_as_double<DT>::round(v * v) : v * v;
}

/* DG_COUNT_SQUARES: each thread sums the squares of its elements in double
 * (four loads in flight along a 1-d block), a block its threads' sums (warp
 * shuffles, then one warp), added to bin blockIdx.x: with at most nbins
 * blocks (the launcher's cap) every bin has one writer and the sum is the
 * same on every run. */
template <int DT, bool ROUND>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_squares_k(const __grid_constant__ dg_cu_count a)
{
    __shared__ double warps[DG_CU_THREADS / 32];
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x;
    double s = 0.0;
    if (a.ndim == 1) {
        const int64_t st = a.sstr[0];
        double s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (; i + 3 * step < a.total; i += 4 * step) {
            s += dg_square<DT, ROUND>(a.src + i * st);
            s1 += dg_square<DT, ROUND>(a.src + (i + step) * st);
            s2 += dg_square<DT, ROUND>(a.src + (i + 2 * step) * st);
            s3 += dg_square<DT, ROUND>(a.src + (i + 3 * step) * st);
        }
        for (; i < a.total; i += step)
            s += dg_square<DT, ROUND>(a.src + i * st);
        s += (s1 + s2) + s3;
    } else {
        for (; i < a.total; i += step) {
            int64_t so, unused;
            dg_sf_offsets(a.ndim, a.shape, a.sstr, a.sstr, i, so, unused);
            s += dg_square<DT, ROUND>(a.src + so);
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0)
        warps[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < DG_CU_THREADS / 32 ? warps[threadIdx.x] : 0.0;
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) {
            if (gridDim.x <= a.nbins)
                a.sum[blockIdx.x] += s;
            else
                atomicAdd(&a.sum[blockIdx.x % a.nbins], s);
        }
    }
}

template <int DT>
static void dg_squares_go(const dg_cu_count *a, unsigned blocks, cudaStream_t s)
{
    if (a->shift)
        dg_squares_k<DT, true><<<blocks, DG_CU_THREADS, 0, s>>>(*a);
    else
        dg_squares_k<DT, false><<<blocks, DG_CU_THREADS, 0, s>>>(*a);
}

static cudaError_t dg_squares_launch(const dg_cu_count *a, unsigned blocks, cudaStream_t s)
{
    if (blocks > (uint64_t)a->nbins)
        blocks = (unsigned)a->nbins;
    switch (a->dtype) {
    case DG_FLOAT16: dg_squares_go<DG_FLOAT16>(a, blocks, s); break;
    case DG_FLOAT32: dg_squares_go<DG_FLOAT32>(a, blocks, s); break;
    case DG_FLOAT64: dg_squares_go<DG_FLOAT64>(a, blocks, s); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t dg_cu_search_launch(const dg_cu_search *a, unsigned blocks,
                                           cudaStream_t s)
{
    switch (a->dtype) {
#define DG_SEARCH_CASE(E, t, ct)                                                 \
    case DG_##E:                                                                 \
        dg_search_k<DG_##E><<<blocks, DG_CU_THREADS, 0, s>>>(*a);                \
        break;
        DG_ORDER_KEYED(DG_SEARCH_CASE)
        DG_SEARCH_CASE(COMPLEX64, c8, dg_c64)
        DG_SEARCH_CASE(COMPLEX128, c16, dg_c128)
#undef DG_SEARCH_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* The flat kernel's shared memory for a count (its bins, then its edges),
 * 0 where it cannot take the count. */
template <int DT>
static size_t dg_flat_smem(const dg_cu_count *a)
{
    typedef typename dg_ord<DT>::T T;
    const size_t bins = (size_t)(a->nbins * 4 + 7) / 8 * 8;
    const size_t smem = bins + (a->radix == DG_COUNT_EDGES ? (size_t)(a->nbins + 1) * sizeof(T) : 0);
    const bool flat = !a->weight && a->ndim == 1 && a->sstr[0] == (int64_t)sizeof(T) &&
                      reinterpret_cast<uintptr_t>(a->src) % sizeof(T) == 0 &&
                      (a->radix != DG_COUNT_EDGES || a->nbins >= 1);
    return flat && smem <= DG_CU_SMEM_BYTES ? smem : 0;
}

template <int DT>
static void dg_count_go(const dg_cu_count *a, unsigned blocks, cudaStream_t s)
{
    typedef typename dg_ord<DT>::T T;
    const size_t smem = (size_t)a->nbins * (a->weight ? 8 : 4), flat = dg_flat_smem<DT>(a);
    const int kbits = sizeof(T) <= 4 ? 32 : 64; /* the flat kernel's key width */
    if (flat && a->radix == DG_COUNT_RADIX && a->pshift >= kbits) {
        /* a prefix longer than the keys: all 0, so the keys under a prefix
         * of 0 are every key, under any other none (nothing to count) */
        if (a->pshift < 64 && a->prefix != 0 && a->prefix2 != 0)
            return;
        if (a->nprefix == 1 || a->pshift >= 64) {
            dg_count_flat_k<DT, dg_flat_radix<DG_RADIX_ALL>::bin_of>
                <<<blocks, DG_CU_THREADS, flat, s>>>(*a);
            return;
        }
    } else if (flat && a->radix == DG_COUNT_RADIX) {
        if (a->nprefix == 1 || a->prefix == a->prefix2)
            dg_count_flat_k<DT, dg_flat_radix<DG_RADIX_ONE>::bin_of>
                <<<blocks, DG_CU_THREADS, flat, s>>>(*a);
        else
            dg_count_flat_k<DT, dg_flat_radix<DG_RADIX_TWO>::bin_of>
                <<<blocks, DG_CU_THREADS, flat, s>>>(*a);
        return;
    }
    if constexpr (DT == DG_INT64) { /* bin numbers are int64 */
        if (flat && a->radix == DG_COUNT_BINS) {
            dg_count_flat_k<DT, dg_flat_bins><<<blocks, DG_CU_THREADS, flat, s>>>(*a);
            return;
        }
    }
    if (smem <= DG_CU_SMEM_BYTES)
        dg_count_k<DT, true><<<blocks, DG_CU_THREADS, smem, s>>>(*a);
    else
        dg_count_k<DT, false><<<blocks, DG_CU_THREADS, 0, s>>>(*a);
}

/* An edges count: the flat kernel where it can take it. */
template <int DT>
static void dg_count_edges_go(const dg_cu_count *a, unsigned blocks, cudaStream_t s)
{
    const size_t flat = dg_flat_smem<DT>(a);
    if (flat)
        dg_count_flat_k<DT, dg_flat_edges><<<blocks, DG_CU_THREADS, flat, s>>>(*a);
    else
        dg_count_go<DT>(a, blocks, s);
}

extern "C" cudaError_t dg_cu_count_launch(const dg_cu_count *a, unsigned blocks,
                                          cudaStream_t s)
{
    if (a->radix == DG_COUNT_BINS) {
        dg_count_go<DG_INT64>(a, blocks, s);
        return cudaGetLastError();
    }
    if (a->radix == DG_COUNT_SQUARES)
        return dg_squares_launch(a, blocks, s);
    if (a->radix == DG_COUNT_EDGES) {
        switch (a->dtype) {
        case DG_FLOAT16: dg_count_edges_go<DG_FLOAT16>(a, blocks, s); break;
        case DG_FLOAT32: dg_count_edges_go<DG_FLOAT32>(a, blocks, s); break;
        case DG_FLOAT64: dg_count_edges_go<DG_FLOAT64>(a, blocks, s); break;
        default: return cudaErrorInvalidValue;
        }
        return cudaGetLastError();
    }
    switch (a->dtype) {
#define DG_COUNT_CASE(E, t, ct)                                                  \
    case DG_##E:                                                                 \
        dg_count_go<DG_##E>(a, blocks, s);                                       \
        break;
        DG_ORDER_KEYED(DG_COUNT_CASE)
#undef DG_COUNT_CASE
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
