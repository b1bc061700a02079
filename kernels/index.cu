/* Index kernels: compaction (the select and route slots) and keyed row
 * copies (the rows slot), matching the CPU backend (cpu_index.c).
 *
 * A compaction runs in three steps over tiles of DG_CP_TILE elements in C
 * order: each block counts the selected elements of its tile (a warp ballot
 * a round), an exclusive scan of the counts (CUB) gives each tile its first
 * output position and the total, and each block writes its selected
 * elements in order, their positions from the ballots (one scan of the
 * tile's ballot counts in shared memory).  The elements of a round are
 * neighbouring threads, so the loads of every step are coalesced.  A dense
 * 1-d selection of values takes CUB's single-pass DeviceSelect::Flagged
 * instead.  A keyed selection (the elements under a radix selection's
 * prefixes, whose order nothing reads) is an unordered append, one kernel
 * (dg_cp_append_k): one reading of the block, no scan.
 *
 * A keyed row copy is one thread per element of the rows named: it reads
 * the key, skips it outside the range, and copies one item (1 to 16 bytes);
 * rows of one item go DG_ROWS_V keys to a thread (dg_rows1_k). */
#include <stddef.h>
#include <stdint.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "cu_kernels.h"
#include "dg_order.h"

/* Rounds of DG_CU_THREADS elements per tile. */
#define DG_CP_ROUNDS 16
#define DG_CP_TILE (DG_CP_ROUNDS * DG_CU_THREADS)
#define DG_CP_WARPS (DG_CU_THREADS / 32)

/* 16 bytes at 8-byte alignment (complex128 in buffers aligned to 8). */
struct alignas(8) dg_cp_b16 {
    uint64_t a, b;
};

/* Byte offsets of element i (C order over a's shape) in the mask and the
 * source, and its index (base + sum c[a] * gstride[a]). */
__device__ __forceinline__ void dg_cp_offsets(const dg_cu_compact &a, int64_t i, int64_t &mo,
                                              int64_t &so, int64_t &gi)
{
    mo = so = 0;
    gi = a.base;
    for (int d = a.ndim - 1; d > 0; d--) {
        const int64_t q = i / a.shape[d], c = i - q * a.shape[d];
        i = q;
        mo += c * a.mstr[d];
        so += c * a.sstr[d];
        gi += c * a.gstride[d];
    }
    mo += i * a.mstr[0];
    so += i * a.sstr[0];
    gi += i * a.gstride[0];
}

/* Whether element i is selected. */
__device__ __forceinline__ bool dg_cp_pred(const dg_cu_compact &a, int64_t i)
{
    if (a.kind == DG_CU_ROUTE) {
        const int64_t k = a.key[i];
        return k >= a.start && k < a.stop && (a.step == 1 || (k - a.start) % a.step == 0);
    }
    int64_t mo, so, gi;
    dg_cp_offsets(a, i, mo, so, gi);
    return a.mask[mo] != 0;
}

template <class T> __device__ __forceinline__ void dg_cp_copy(char *d, const char *s)
{
    *reinterpret_cast<T *>(d) = *reinterpret_cast<const T *>(s);
}

__device__ __forceinline__ void dg_cp_item(char *d, const char *s, int isz)
{
    switch (isz) {
    case 1: dg_cp_copy<uint8_t>(d, s); break;
    case 2: dg_cp_copy<uint16_t>(d, s); break;
    case 4: dg_cp_copy<uint32_t>(d, s); break;
    case 8: dg_cp_copy<uint64_t>(d, s); break;
    default: dg_cp_copy<dg_cp_b16>(d, s); break;
    }
}

/* Writes selected element i as output k. */
__device__ __forceinline__ void dg_cp_emit(const dg_cu_compact &a, int64_t i, int64_t k)
{
    if (a.kind == DG_CU_ROUTE) {
        a.rows[k] = (a.key[i] - a.start) / a.step;
        a.pos[k] = i;
        return;
    }
    int64_t mo, so, gi;
    dg_cp_offsets(a, i, mo, so, gi);
    if (a.src != NULL)
        dg_cp_item(a.dst + k * a.itemsize, a.src + so, a.itemsize);
    else
        reinterpret_cast<int64_t *>(a.dst)[k] = gi;
}

/* counts[t] = the selected elements of tile t. */
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_cp_count_k(const __grid_constant__ dg_cu_compact a, int64_t *counts)
{
    __shared__ int wsum[DG_CP_WARPS];
    const int64_t first = (int64_t)blockIdx.x * DG_CP_TILE + threadIdx.x;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int c = 0;
#pragma unroll 4
    for (int r = 0; r < DG_CP_ROUNDS; r++) {
        const int64_t i = first + (int64_t)r * DG_CU_THREADS;
        c += i < a.n && dg_cp_pred(a, i);
    }
    for (int o = 16; o > 0; o /= 2)
        c += __shfl_down_sync(0xffffffffu, c, o);
    if (lane == 0)
        wsum[warp] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        int t = 0;
        for (int w = 0; w < DG_CP_WARPS; w++)
            t += wsum[w];
        counts[blockIdx.x] = t;
    }
}

/* The selected elements of tile t, from output offsets[t] on, in order. */
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_cp_write_k(const __grid_constant__ dg_cu_compact a, const int64_t *offsets)
{
    __shared__ int before[DG_CP_ROUNDS * DG_CP_WARPS];
    const int64_t first = (int64_t)blockIdx.x * DG_CP_TILE + threadIdx.x;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned lt = (1u << lane) - 1u;
    unsigned ballot[DG_CP_ROUNDS];
#pragma unroll
    for (int r = 0; r < DG_CP_ROUNDS; r++) {
        const int64_t i = first + (int64_t)r * DG_CU_THREADS;
        ballot[r] = __ballot_sync(0xffffffffu, i < a.n && dg_cp_pred(a, i));
        if (lane == 0)
            before[r * DG_CP_WARPS + warp] = __popc(ballot[r]);
    }
    __syncthreads();
    if (threadIdx.x == 0) { /* exclusive scan, rounds major, warps minor */
        int t = 0;
        for (int e = 0; e < DG_CP_ROUNDS * DG_CP_WARPS; e++) {
            const int v = before[e];
            before[e] = t;
            t += v;
        }
    }
    __syncthreads();
    const int64_t base = offsets[blockIdx.x];
#pragma unroll
    for (int r = 0; r < DG_CP_ROUNDS; r++) {
        if (ballot[r] >> lane & 1u) {
            const int64_t i = first + (int64_t)r * DG_CU_THREADS;
            dg_cp_emit(a, i, base + before[r * DG_CP_WARPS + warp] + __popc(ballot[r] & lt));
        }
    }
}

/* CUB's single-pass selection of a dense 1-d block of T. */
template <class T>
static cudaError_t dg_cp_flagged(const dg_cu_compact *a, cudaMemPool_t pool, cudaStream_t s)
{
    const T *in = reinterpret_cast<const T *>(a->src);
    T *out = reinterpret_cast<T *>(a->dst);
    size_t bytes = 0;
    void *tmp = NULL;
    cudaError_t e = cub::DeviceSelect::Flagged(NULL, bytes, in, a->mask, out, a->count,
                                               (::cuda::std::int64_t)a->n, s);
    if (e != cudaSuccess)
        return e;
    e = cudaMallocFromPoolAsync(&tmp, bytes > 0 ? bytes : 1, pool, s);
    if (e != cudaSuccess)
        return e;
    e = cub::DeviceSelect::Flagged(tmp, bytes, in, a->mask, out, a->count,
                                   (::cuda::std::int64_t)a->n, s);
    cudaError_t f = cudaFreeAsync(tmp, s);
    return e != cudaSuccess ? e : f;
}

/* ---- keyed selection: an unordered append ---------------------------------- */

/* 16 bytes of T, read as one vector. */
template <class T> union dg_cp_vec {
    uint4 q;
    T e[16 / sizeof(T)];
};

#define DG_AP_VECS 4 /* 16-byte vectors a thread reads a round */

/* The inclusive sum of x over lanes 0 .. lane of the warp (lanes below N). */
template <int N, class T> __device__ __forceinline__ T dg_warp_incl(T x, int lane)
{
#pragma unroll
    for (int o = 1; o < N; o *= 2) {
        const T y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o)
            x += y;
    }
    return x;
}

/* Appends the elements of one round of the warp that `keep` marks (bit
 * u * V + e: v[u].e[e]) after those already counted in *count: the lanes'
 * counts scanned by shuffles and one atomicAdd a warp, only where a lane
 * keeps one (a warp's ballot); no barrier and no shared memory, since the
 * order of the kept elements is free.  (Block-wide, one atomicAdd a block a
 * round cost three barriers a round wherever any thread kept one: with a
 * median's two bins of 4,096 kept, nearly every round, and the float32
 * append ran at 2.3 TB/s against the count's 4.2 on one H200.)  Those from
 * place cap on are counted only.  Every lane of the warp calls it. */
template <class T, int V>
__device__ __forceinline__ void dg_ap_append(const dg_cp_vec<T> *v, uint64_t keep, T *out,
                                             int64_t cap, unsigned long long *count)
{
    const int lane = threadIdx.x % 32;
    const int c = __popcll(keep);
    if (!__any_sync(0xffffffffu, c != 0))
        return;
    const int x = dg_warp_incl<32>(c, lane);
    unsigned long long base = 0;
    if (lane == 31)
        base = atomicAdd(count, (unsigned long long)x);
    base = __shfl_sync(0xffffffffu, base, 31);
    int64_t k = (int64_t)base + (x - c);
#pragma unroll
    for (int u = 0; u < DG_AP_VECS; u++)
#pragma unroll
        for (int e = 0; e < V; e++)
            if (keep >> (u * V + e) & 1u) {
                if (k < cap)
                    out[k] = v[u].e[e];
                k++;
            }
}

/* A keyed selection, in no particular order (the keys' set is what a radix
 * selection reads): rounds of DG_CU_THREADS * DG_AP_VECS * V elements, each
 * thread DG_AP_VECS vectors of V (DENSE: 16-byte vectors of a 1-d block,
 * the elements before the first 16-byte boundary and after the last whole
 * vector appended one by one by the grid's first threads; else each
 * element's offset from the block's strides, neighbouring threads reading
 * neighbouring elements), kept where f (its key under the prefixes) says,
 * appended at *count (zeroed before), at most a.cap written: no scan of
 * the blocks' counts and no second reading, so with few kept it reads at
 * the memory's speed.  With a.bins the prefixes are the bins found by
 * dg_cp_locate_k (a.bounds). */
template <class T, class F, bool DENSE>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_cp_append_k(const __grid_constant__ dg_cu_compact a, F f)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int64_t ROUND = (int64_t)DG_AP_VECS * V * DG_CU_THREADS;
    T *out = reinterpret_cast<T *>(a.dst);
    unsigned long long *count = reinterpret_cast<unsigned long long *>(a.count);
    const int64_t tid = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x;
    const int64_t cap = a.cap > 0 ? a.cap : INT64_MAX;
    int64_t head = 0, nvec = 0, total = a.n;
    if (a.bins) { /* the bins of the ranks, found by dg_cp_locate_k */
        if (a.bounds[2])
            return; /* whole, and more than cap under them: none kept */
        f.lo = a.bounds[0];
        f.hi = a.bounds[1];
    }
    if (DENSE) {
        const int64_t mis = (int64_t)(reinterpret_cast<uintptr_t>(a.src) & 15);
        head = min(a.n, mis ? (16 - mis) / (int64_t)sizeof(T) : (int64_t)0);
        nvec = (a.n - head) / V;
        total = nvec * V;
        const int64_t tail = head + total, rest = head + (a.n - tail);
        if (tid < rest) { /* head and tail, one element a thread */
            const int64_t i = tid < head ? tid : tail + (tid - head);
            const T x = reinterpret_cast<const T *>(a.src)[i];
            if (f(x)) {
                const int64_t k = (int64_t)atomicAdd(count, 1ull);
                if (k < cap)
                    out[k] = x;
            }
        }
    }
    const uint4 *vp = reinterpret_cast<const uint4 *>(a.src + head * (int64_t)sizeof(T));
    const int64_t rounds = (total + ROUND - 1) / ROUND;
    for (int64_t r = blockIdx.x; r < rounds; r += gridDim.x) {
        dg_cp_vec<T> v[DG_AP_VECS];
        uint64_t keep = 0;
        const bool whole = (r + 1) * ROUND <= total;
#pragma unroll
        for (int u = 0; u < DG_AP_VECS; u++) {
            const int64_t j = (r * DG_AP_VECS + u) * DG_CU_THREADS + threadIdx.x;
            if (DENSE) { /* vector j */
                const bool in = whole || j < nvec;
                if (in)
                    v[u].q = __ldcs(vp + j);
#pragma unroll
                for (int e = 0; e < V; e++)
                    keep |= (uint64_t)(in && f(v[u].e[e])) << (u * V + e);
            } else { /* elements j * V + e ... apart by DG_CU_THREADS */
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const int64_t i = ((r * DG_AP_VECS + u) * V + e) * DG_CU_THREADS +
                                      threadIdx.x;
                    bool in = i < total;
                    if (in) {
                        int64_t mo, so, gi;
                        dg_cp_offsets(a, i, mo, so, gi);
                        memcpy(&v[u].e[e], a.src + so, sizeof(T));
                        in = f(v[u].e[e]);
                    }
                    keep |= (uint64_t)in << (u * V + e);
                }
            }
        }
        dg_ap_append<T, V>(v, keep, out, cap, count);
    }
}

/* A keyed selection's predicate on one element (dtype sfx t, C type ct):
 * its key under the prefixes lo .. hi at pshift. */
#define DG_CP_UNDER(E, t, ct)                                                    \
    struct dg_cp_under_##t {                                                     \
        int pshift;                                                              \
        uint64_t lo, hi;                                                         \
        __device__ __forceinline__ bool operator()(const ct &v) const            \
        {                                                                        \
            const uint64_t q = dg_order_key_##t(v) >> pshift;                    \
            return q >= lo && q <= hi;                                           \
        }                                                                        \
    };
DG_ORDER_KEYED(DG_CP_UNDER)
#undef DG_CP_UNDER

#define DG_LOC_THREADS 256 /* dg_cp_locate_k's block */

/* The count of bin b: the sum of its a.nparts sets (at a.part[p], read in
 * place on a peer, or one after another from a.bins). */
__device__ __forceinline__ int64_t dg_cp_bin(const dg_cu_compact &a, int64_t b)
{
    int64_t c = 0;
    for (int64_t p = 0; p < a.nparts; p++)
        c += (a.part[0] ? a.part[p] : a.bins + p * a.nbins)[b];
    return c;
}

/* bounds[0], bounds[1]: the bins of a.nbins counts (a.bins, a.nparts sets
 * summed) that hold ranks a.rank0 and a.rank1 (the bin where the counts
 * before it sum to at most the rank and with it to more; the last bin where
 * the rank is past them all), as cpu_index.c's rank_bin; with a.rest, the
 * ranks about a.q of the keys outside the last bin (dg_order_rest_ranks of
 * the total less the last bin, as cpu_index.c's); bounds[2]: 1 where
 * a.whole and those bins hold more than a.cap in all (then *a.count gets
 * that total), else 0.  One block: each thread sums a run of bins (its
 * loads independent of one another), the runs' sums scanned (CUB), the
 * thread whose run holds a rank walking it. */
__global__ void __launch_bounds__(DG_LOC_THREADS) dg_cp_locate_k(const __grid_constant__ dg_cu_compact a)
{
    typedef cub::BlockScan<int64_t, DG_LOC_THREADS> scan_t;
    typedef cub::BlockReduce<int64_t, DG_LOC_THREADS> reduce_t;
    __shared__ union {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
    } tmp;
    __shared__ int64_t found[2];
    const int t = threadIdx.x;
    const int64_t per = (a.nbins + DG_LOC_THREADS - 1) / DG_LOC_THREADS;
    const int64_t b0 = min(a.nbins, t * per), b1 = min(a.nbins, b0 + per);
    int64_t sum = 0, before = 0, total = 0;
    for (int64_t b = b0; b < b1; b++)
        sum += dg_cp_bin(a, b);
    scan_t(tmp.scan).ExclusiveSum(sum, before, total);
    int64_t rank[2] = {a.rank0, a.rank1};
    if (a.rest) /* total: the block's, on every thread */
        dg_order_rest_ranks(total - (a.nbins > 0 ? dg_cp_bin(a, a.nbins - 1) : 0), a.q, rank);
    if (t == 0)
        found[0] = found[1] = a.nbins > 0 ? a.nbins - 1 : 0;
    __syncthreads();
    for (int j = 0; j < 2; j++) {
        const int64_t r = rank[j];
        if (r >= before && r < before + sum) {
            int64_t cum = before, b = b0;
            for (; b < b1; b++) {
                cum += dg_cp_bin(a, b);
                if (cum > r)
                    break;
            }
            found[j] = b;
        }
    }
    __syncthreads();
    const int64_t lo = found[0], hi = found[1];
    int64_t in = 0;
    if (a.whole)
        for (int64_t b = max(b0, lo); b < b1 && b <= hi; b++)
            in += dg_cp_bin(a, b);
    const int64_t held = reduce_t(tmp.reduce).Sum(in); /* thread 0's */
    if (t == 0) {
        const bool none = a.whole && held > (a.cap > 0 ? a.cap : INT64_MAX);
        a.bounds[0] = (uint64_t)lo;
        a.bounds[1] = (uint64_t)hi;
        a.bounds[2] = none;
        if (none)
            *a.count = held;
    }
}

/* Launches dg_cp_append_k over a: as many blocks as fit on the device at
 * once (at most one a round), each going round the rounds, so no second
 * wave of blocks runs part-empty. */
template <class T, class F, bool DENSE>
static cudaError_t dg_cp_append_go(const dg_cu_compact *a, const F &f, int nsm, cudaStream_t s)
{
    const int64_t per = (int64_t)DG_AP_VECS * (16 / sizeof(T)) * DG_CU_THREADS;
    const int64_t rounds = (a->n + per - 1) / per;
    int occ = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, dg_cp_append_k<T, F, DENSE>,
                                                      DG_CU_THREADS, 0) != cudaSuccess ||
        occ < 1)
        occ = 1;
    const int64_t most = (int64_t)(nsm > 0 ? nsm : 1) * occ;
    const unsigned blocks = (unsigned)(rounds < 1 ? 1 : rounds < most ? rounds : most);
    dg_cp_append_k<T, F, DENSE><<<blocks, DG_CU_THREADS, 0, s>>>(*a, f);
    return cudaGetLastError();
}

/* dg_cp_append_k of a's dtype (DENSE where `dense`). */
static cudaError_t dg_cp_keyed_go(const dg_cu_compact *a, bool dense, int nsm, cudaStream_t s)
{
    switch (a->dtype) {
#define DG_CP_KEYED_CASE(E, t, ct)                                               \
    case DG_##E: {                                                               \
        dg_cp_under_##t f;                                                       \
        f.pshift = a->pshift;                                                    \
        f.lo = a->lo;                                                            \
        f.hi = a->hi;                                                            \
        return dense ? dg_cp_append_go<ct, dg_cp_under_##t, true>(a, f, nsm, s)  \
                     : dg_cp_append_go<ct, dg_cp_under_##t, false>(a, f, nsm, s); \
    }
        DG_ORDER_KEYED(DG_CP_KEYED_CASE)
#undef DG_CP_KEYED_CASE
    default:
        return cudaErrorInvalidValue;
    }
}

/* Enqueues the keyed selection in (its count zeroed; with bins,
 * dg_cp_locate_k into 24 bytes of scratch from the pool, freed
 * stream-ordered after; then dg_cp_append_k); cudaErrorInvalidValue
 * (nothing enqueued) for a dtype without keys. */
static cudaError_t dg_cp_keyed(const dg_cu_compact *in, int nsm, cudaMemPool_t pool,
                               cudaStream_t s)
{
    dg_cu_compact a = *in;
    const bool dense = a.ndim == 1 && a.sstr[0] == a.itemsize &&
                       reinterpret_cast<uintptr_t>(a.src) % (uintptr_t)a.itemsize == 0;
    if (dg_order_key_bits(a.dtype) == 0)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(a.count, 0, sizeof(int64_t), s);
    if (e != cudaSuccess || !a.bins)
        return e != cudaSuccess ? e : dg_cp_keyed_go(&a, dense, nsm, s);
    e = cudaMallocFromPoolAsync((void **)&a.bounds, 3 * sizeof(uint64_t), pool, s);
    if (e != cudaSuccess)
        return e;
    dg_cp_locate_k<<<1, DG_LOC_THREADS, 0, s>>>(a);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = dg_cp_keyed_go(&a, dense, nsm, s);
    const cudaError_t f = cudaFreeAsync(a.bounds, s);
    return e != cudaSuccess ? e : f;
}

extern "C" cudaError_t dg_cu_compact_run(const dg_cu_compact *a, int nsm, cudaMemPool_t pool,
                                         cudaStream_t s)
{
    const int64_t ntiles = (a->n + DG_CP_TILE - 1) / DG_CP_TILE;
    size_t cub_bytes = 0, counts_bytes;
    char *mem = NULL;
    int64_t *counts, *offsets;
    cudaError_t e, f;

    if (a->n == 0)
        return cudaMemsetAsync(a->count, 0, sizeof(int64_t), s);
    if (ntiles > 0x7fffffff)
        return cudaErrorInvalidValue;
    if (a->keyed && (a->src == NULL || dg_order_key_bits(a->dtype) == 0 ||
                     dg_order_key_bits(a->dtype) / 8 != a->itemsize))
        return cudaErrorInvalidValue;
    if (a->keyed)
        return dg_cp_keyed(a, nsm, pool, s);
    if (a->kind == DG_CU_SELECT && !a->keyed && a->src != NULL && a->ndim == 1 &&
        a->sstr[0] == a->itemsize && a->mstr[0] == 1) {
        switch (a->itemsize) {
        case 1: return dg_cp_flagged<uint8_t>(a, pool, s);
        case 2: return dg_cp_flagged<uint16_t>(a, pool, s);
        case 4: return dg_cp_flagged<uint32_t>(a, pool, s);
        case 8: return dg_cp_flagged<uint64_t>(a, pool, s);
        case 16: return dg_cp_flagged<dg_cp_b16>(a, pool, s);
        default: break;
        }
    }
    e = cub::DeviceScan::ExclusiveSum(NULL, cub_bytes, (const int64_t *)NULL, (int64_t *)NULL,
                                      ntiles + 1, s);
    if (e != cudaSuccess)
        return e;
    counts_bytes = ((size_t)(ntiles + 1) * sizeof(int64_t) + 255) / 256 * 256;
    e = cudaMallocFromPoolAsync((void **)&mem, 2 * counts_bytes + cub_bytes, pool, s);
    if (e != cudaSuccess)
        return e;
    counts = (int64_t *)mem;
    offsets = (int64_t *)(mem + counts_bytes);
    e = cudaMemsetAsync(counts + ntiles, 0, sizeof(int64_t), s);
    if (e == cudaSuccess) {
        void *args[] = {(void *)a, (void *)&counts};
        e = cudaLaunchKernel((const void *)dg_cp_count_k, dim3((unsigned)ntiles),
                             dim3(DG_CU_THREADS), args, 0, s);
    }
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(mem + 2 * counts_bytes, cub_bytes, counts, offsets,
                                          ntiles + 1, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(a->count, offsets + ntiles, sizeof(int64_t),
                            cudaMemcpyDeviceToDevice, s);
    if (e == cudaSuccess) {
        void *args[] = {(void *)a, (void *)&offsets};
        e = cudaLaunchKernel((const void *)dg_cp_write_k, dim3((unsigned)ntiles),
                             dim3(DG_CU_THREADS), args, 0, s);
    }
    f = cudaFreeAsync(mem, s);
    return e != cudaSuccess ? e : f;
}

/* ---- keyed row copies ------------------------------------------------------ */

template <class T>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_rows_k(const __grid_constant__ dg_cu_rows a)
{
    const int64_t total = a.n * a.rowlen;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < total; i += step) {
        int64_t j = i, e = 0, so = 0, dof = 0;
        if (a.rowlen != 1) {
            j = i / a.rowlen;
            e = i - j * a.rowlen;
        }
        const int64_t k = a.key[j];
        if (k < a.start || k >= a.stop)
            continue;
        int64_t r = k - a.start;
        if (a.step != 1) {
            if (r % a.step)
                continue;
            r /= a.step;
        }
        for (int d = a.ndim - 1; d >= 0; d--) {
            const int64_t q = e / a.shape[d], c = e - q * a.shape[d];
            e = q;
            so += c * a.sstr[d];
            dof += c * a.dstr[d];
        }
        const int64_t si = a.scatter ? j : r, di = a.scatter ? r : j;
        dg_cp_copy<T>(a.dst + di * a.dst_rstride + dof, a.src + si * a.src_rstride + so);
    }
}

/* Rows of one item (take of a 1-d array, put into one): each thread takes
 * DG_ROWS_V neighbouring keys, read with one or two 16-byte loads marked as
 * streaming (read once: they should not push the rows out of L2), and issues
 * their DG_ROWS_V random reads before it stores any, so that several are in
 * flight per thread; a gather then stores its items with one vector store
 * where all of them fall in this chunk.  The elements copied are the general
 * kernel's. */
#define DG_ROWS_V 4

/* A read of memory no thread of the kernel writes (the read-only path). */
template <class T> __device__ __forceinline__ T dg_rows_ld(const char *p)
{
    return __ldg(reinterpret_cast<const T *>(p));
}
template <> __device__ __forceinline__ dg_cp_b16 dg_rows_ld<dg_cp_b16>(const char *p)
{
    dg_cp_b16 v;
    v.a = __ldg(reinterpret_cast<const unsigned long long *>(p));
    v.b = __ldg(reinterpret_cast<const unsigned long long *>(p) + 1);
    return v;
}

template <class T> struct alignas(sizeof(T) * DG_ROWS_V) dg_rows_vec {
    T v[DG_ROWS_V];
};

/* A gather's vector of items stored marked as streaming (written once, not
 * read again by the kernel: it should not push the rows out of L2 either),
 * 16 bytes at a time where it is a multiple of 16 bytes. */
template <class T>
__device__ __forceinline__ void dg_rows_st(dg_rows_vec<T> *p, const dg_rows_vec<T> &v)
{
    if constexpr (sizeof(dg_rows_vec<T>) % 16 == 0) {
        const uint4 *s = reinterpret_cast<const uint4 *>(&v);
        uint4 *d = reinterpret_cast<uint4 *>(p);
#pragma unroll
        for (int i = 0; i < (int)(sizeof(dg_rows_vec<T>) / 16); i++)
            __stcs(d + i, s[i]);
    } else {
        *p = v;
    }
}

template <class T>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_rows1_k(const __grid_constant__ dg_cu_rows a)
{
    const int64_t ngroups = (a.n + DG_ROWS_V - 1) / DG_ROWS_V;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    const bool kvec = (uintptr_t)a.key % 16 == 0;
    const bool dvec = !a.scatter && a.dst_rstride == (int64_t)sizeof(T) &&
                      (uintptr_t)a.dst % sizeof(dg_rows_vec<T>) == 0;
    for (int64_t g = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; g < ngroups; g += step) {
        const int64_t j0 = g * DG_ROWS_V;
        const bool full = j0 + DG_ROWS_V <= a.n;
        int64_t k[DG_ROWS_V];
        bool ok[DG_ROWS_V], all = full;
        if (kvec && full) {
#pragma unroll
            for (int q = 0; q < DG_ROWS_V; q += 2) {
                const longlong2 kk = __ldcs(reinterpret_cast<const longlong2 *>(a.key + j0 + q));
                k[q] = kk.x;
                k[q + 1] = kk.y;
            }
        } else {
#pragma unroll
            for (int q = 0; q < DG_ROWS_V; q++)
                k[q] = j0 + q < a.n ? __ldcs(a.key + j0 + q) : a.stop;
        }
#pragma unroll
        for (int q = 0; q < DG_ROWS_V; q++) {
            int64_t r = k[q] - a.start;
            ok[q] = k[q] >= a.start && k[q] < a.stop;
            if (a.step != 1) {
                ok[q] = ok[q] && r % a.step == 0;
                r /= a.step;
            }
            k[q] = r; /* from here the row within the chunk */
            all = all && ok[q];
        }
        if (!a.scatter) {
            dg_rows_vec<T> v;
#pragma unroll
            for (int q = 0; q < DG_ROWS_V; q++)
                if (ok[q])
                    v.v[q] = dg_rows_ld<T>(a.src + k[q] * a.src_rstride);
            if (dvec && all) {
                dg_rows_st<T>(
                    reinterpret_cast<dg_rows_vec<T> *>(a.dst + j0 * (int64_t)sizeof(T)), v);
            } else {
#pragma unroll
                for (int q = 0; q < DG_ROWS_V; q++)
                    if (ok[q])
                        *reinterpret_cast<T *>(a.dst + (j0 + q) * a.dst_rstride) = v.v[q];
            }
        } else {
            T v[DG_ROWS_V];
#pragma unroll
            for (int q = 0; q < DG_ROWS_V; q++)
                if (ok[q])
                    v[q] = *reinterpret_cast<const T *>(a.src + (j0 + q) * a.src_rstride);
#pragma unroll
            for (int q = 0; q < DG_ROWS_V; q++)
                if (ok[q])
                    *reinterpret_cast<T *>(a.dst + k[q] * a.dst_rstride) = v[q];
        }
    }
}

extern "C" cudaError_t dg_cu_rows_launch(const dg_cu_rows *a, unsigned blocks, cudaStream_t s)
{
    void *args[] = {(void *)a};
    const void *k;
    const bool one = a->rowlen == 1;
    switch (a->itemsize) {
    case 1: k = one ? (const void *)dg_rows1_k<uint8_t> : (const void *)dg_rows_k<uint8_t>; break;
    case 2: k = one ? (const void *)dg_rows1_k<uint16_t> : (const void *)dg_rows_k<uint16_t>;
        break;
    case 4: k = one ? (const void *)dg_rows1_k<uint32_t> : (const void *)dg_rows_k<uint32_t>;
        break;
    case 8: k = one ? (const void *)dg_rows1_k<uint64_t> : (const void *)dg_rows_k<uint64_t>;
        break;
    case 16: k = one ? (const void *)dg_rows1_k<dg_cp_b16> : (const void *)dg_rows_k<dg_cp_b16>;
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaLaunchKernel(k, dim3(blocks), dim3(DG_CU_THREADS), args, 0, s);
}
