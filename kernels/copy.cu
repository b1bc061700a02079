/* The strided copy kernel: N-d copies between device buffers of one device
 * or of peers (through peer access), and the pack/unpack steps of host copies
 * whose device side is strided.  The element type only sets the width of the
 * memory accesses (1 to 16 bytes). */
#include <stddef.h>
#include <stdint.h>

#include "cu_kernels.h"

/* 16 bytes at 8-byte alignment (complex128 in a buffer aligned to 8 only). */
struct dg_cp_pair {
    uint64_t a, b;
};

/* Byte offsets of element f (C order over a.shape) in source and destination. */
template <class IDX>
__device__ __forceinline__ void dg_cp_offsets(const dg_cu_copy_args &a, IDX r, int64_t &so,
                                              int64_t &doff)
{
    so = 0;
    doff = 0;
    for (int d = a.ndim - 1; d > 0; d--) {
        const IDX sh = (IDX)a.shape[d];
        const IDX q = r / sh;
        const int64_t c = (int64_t)(r - q * sh);
        r = q;
        so += c * a.strides[d][0];
        doff += c * a.strides[d][1];
    }
    so += (int64_t)r * a.strides[0][0];
    doff += (int64_t)r * a.strides[0][1];
}

template <class T>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_copy_k(const __grid_constant__ dg_cu_copy_args a)
{
    const bool small = a.base + a.n <= (int64_t)UINT32_MAX;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < a.n; i += step) {
        int64_t so, doff;
        if (small)
            dg_cp_offsets<uint32_t>(a, (uint32_t)(a.base + i), so, doff);
        else
            dg_cp_offsets<uint64_t>(a, (uint64_t)(a.base + i), so, doff);
        *reinterpret_cast<T *>(a.dst + doff) = *reinterpret_cast<const T *>(a.src + so);
    }
}

/* ---- the row copy: the innermost axis dense on both sides --------------------
 *
 * Each row (an element of the outer axes) is copied as 16-byte stores at the
 * destination's alignment: a head and a tail of 4-byte words where the row
 * does not start or end at a multiple of 16, and between them whole aligned
 * vectors.  Where the source has the destination's alignment the vectors are
 * loaded whole; where it is shifted by k words (a dense temporary copied into
 * the interior of a grid), each thread loads the aligned source vector under
 * its own and takes the k words past it from the next lane (mode 2), or loads
 * the four words one by one (mode 1); no byte outside the row is read.  Every
 * thread loads all its vectors before it stores any. */
#define DG_CR_VEC 4                             /* vectors per thread and tile */
#define DG_CR_TILE (DG_CR_VEC * DG_CU_THREADS) /* vectors per tile */

/* Byte offsets of row r (C order over the outer axes) in source and destination. */
__device__ __forceinline__ void dg_cr_row(const dg_cu_copy_args &a, int64_t r, int64_t &so,
                                          int64_t &doff)
{
    so = 0;
    doff = 0;
#pragma unroll 1
    for (int d = a.ndim - 2; d >= 0; d--) {
        const int64_t sh = a.shape[d], q = d ? r / sh : 0, c = d ? r - q * sh : r;
        r = q;
        so += c * a.strides[d][0];
        doff += c * a.strides[d][1];
    }
}

/* Word w of vector x. */
__device__ __forceinline__ uint32_t dg_cr_word(const uint4 &x, int w)
{
    return w == 0 ? x.x : w == 1 ? x.y : w == 2 ? x.z : x.w;
}

template <int MODE>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_copy_rows_k(const __grid_constant__ dg_cu_copy_args a)
{
    const int64_t cols = a.shape[a.ndim - 1], rowbytes = cols * a.itemsize;
    const int64_t rows = a.n / cols;
    const int64_t tpr = (rowbytes / 16 + DG_CR_TILE) / DG_CR_TILE, ntiles = rows * tpr;
    const unsigned lane = threadIdx.x & 31u;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t row = t / tpr, tile = t - row * tpr;
        int64_t so, doff;
        dg_cr_row(a, row, so, doff);
        const char *s = a.src + so;
        char *dp = a.dst + doff;
        int64_t head = (int64_t)((16u - ((uintptr_t)dp & 15u)) & 15u);
        if (head > rowbytes)
            head = rowbytes;
        const int64_t nvec = (rowbytes - head) / 16, tail = head + nvec * 16;
        if (tile == 0) {
            for (int64_t w = (int64_t)threadIdx.x * 4; w < head; w += DG_CU_THREADS * 4)
                *reinterpret_cast<uint32_t *>(dp + w) = *reinterpret_cast<const uint32_t *>(s + w);
            for (int64_t w = tail + (int64_t)threadIdx.x * 4; w < rowbytes; w += DG_CU_THREADS * 4)
                *reinterpret_cast<uint32_t *>(dp + w) = *reinterpret_cast<const uint32_t *>(s + w);
        }
        const char *sb = s + head;
        uint4 *db = reinterpret_cast<uint4 *>(dp + head);
        const int k = (int)(((uintptr_t)sb & 15u) >> 2); /* the source's shift in words */
        const int64_t v0 = tile * DG_CR_TILE + threadIdx.x;
        uint4 x[DG_CR_VEC];
        if (k == 0) {
            const uint4 *sv = reinterpret_cast<const uint4 *>(sb);
#pragma unroll
            for (int j = 0; j < DG_CR_VEC; j++) {
                const int64_t v = v0 + (int64_t)j * DG_CU_THREADS;
                if (v < nvec)
                    x[j] = __ldg(sv + v);
            }
        } else if (MODE == 1) {
            const uint32_t *sw = reinterpret_cast<const uint32_t *>(sb);
#pragma unroll
            for (int j = 0; j < DG_CR_VEC; j++) {
                const int64_t v = v0 + (int64_t)j * DG_CU_THREADS;
                if (v < nvec)
                    x[j] = make_uint4(__ldg(sw + 4 * v), __ldg(sw + 4 * v + 1),
                                      __ldg(sw + 4 * v + 2), __ldg(sw + 4 * v + 3));
            }
        } else {
            /* aligned vector A[v] holds words k..3 of vector v; words 0..k-1
             * of A[v + 1] come from the next lane, or (last lane, last
             * vector of the row) from single loads of just those words */
            const uint4 *sv = reinterpret_cast<const uint4 *>(sb - 4 * k);
            const uint32_t *sw = reinterpret_cast<const uint32_t *>(sb);
#pragma unroll
            for (int j = 0; j < DG_CR_VEC; j++) {
                const int64_t v = v0 + (int64_t)j * DG_CU_THREADS;
                const bool on = v < nvec;
                const uint4 lo = on ? __ldg(sv + v) : make_uint4(0u, 0u, 0u, 0u);
                uint32_t n0 = __shfl_down_sync(0xffffffffu, lo.x, 1);
                uint32_t n1 = __shfl_down_sync(0xffffffffu, lo.y, 1);
                uint32_t n2 = __shfl_down_sync(0xffffffffu, lo.z, 1);
                if (on && (lane == 31u || v + 1 == nvec)) {
                    /* the words of the row past vector v's first 4 - k */
                    const uint32_t *q = sw + 4 * v + (4 - k);
                    n0 = __ldg(q);
                    n1 = k > 1 ? __ldg(q + 1) : 0u;
                    n2 = k > 2 ? __ldg(q + 2) : 0u;
                }
                const uint4 hi = make_uint4(n0, n1, n2, 0u);
                uint32_t w[4];
#pragma unroll
                for (int i = 0; i < 4; i++)
                    w[i] = i + k < 4 ? dg_cr_word(lo, i + k) : dg_cr_word(hi, i + k - 4);
                x[j] = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
#pragma unroll
        for (int j = 0; j < DG_CR_VEC; j++) {
            const int64_t v = v0 + (int64_t)j * DG_CU_THREADS;
            if (v < nvec)
                db[v] = x[j];
        }
    }
}

extern "C" cudaError_t dg_cu_copy_rows_launch(const dg_cu_copy_args *a, int mode,
                                              unsigned max_blocks, cudaStream_t s)
{
    void *args[] = {(void *)a};
    const int64_t cols = a->shape[a->ndim - 1], rowbytes = cols * a->itemsize;
    const int64_t tiles = a->n / cols * ((rowbytes / 16 + DG_CR_TILE) / DG_CR_TILE);
    const unsigned blocks = tiles < (int64_t)max_blocks ? (unsigned)(tiles > 0 ? tiles : 1)
                                                        : max_blocks;
    const void *k = mode == 1 ? (const void *)dg_copy_rows_k<1> : (const void *)dg_copy_rows_k<2>;
    return cudaLaunchKernel(k, dim3(blocks), dim3(DG_CU_THREADS), args, 0, s);
}

/* 1 if every address the copy touches is a multiple of `al`. */
static int dg_cp_aligned(const dg_cu_copy_args *a, int64_t al)
{
    int d;
    if ((uintptr_t)a->src % (uint64_t)al || (uintptr_t)a->dst % (uint64_t)al)
        return 0;
    for (d = 0; d < a->ndim; d++)
        if (a->strides[d][0] % al || a->strides[d][1] % al)
            return 0;
    return 1;
}

extern "C" cudaError_t dg_cu_copy_launch(const dg_cu_copy_args *a, unsigned blocks,
                                         cudaStream_t s)
{
    void *args[] = {(void *)a};
    const void *k;
    switch (a->itemsize) {
    case 1: k = (const void *)dg_copy_k<uint8_t>; break;
    case 2: k = (const void *)dg_copy_k<uint16_t>; break;
    case 4: k = (const void *)dg_copy_k<uint32_t>; break;
    case 8: k = (const void *)dg_copy_k<uint64_t>; break;
    case 16:
        k = dg_cp_aligned(a, 16) ? (const void *)dg_copy_k<uint4>
                                 : (const void *)dg_copy_k<dg_cp_pair>;
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaLaunchKernel(k, dim3(blocks), dim3(DG_CU_THREADS), args, 0, s);
}
