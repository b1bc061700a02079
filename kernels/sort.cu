/* Sort kernels (the sort slot), matching the CPU backend (cpu_index.c).
 *
 * Each element becomes an unsigned key of its width whose order is NumPy's
 * (integers with the sign bit flipped; floats with NaN largest of all and
 * -0.0 as 0.0, negatives with every bit flipped, positives with the sign bit
 * set), paired with its position along the row; CUB sorts the pairs stably
 * (DeviceRadixSort for one row, DeviceSegmentedSort for several), and a last
 * kernel writes each sorted value from the source by its position (so NaN
 * payloads and the sign of zero are kept) and the positions. */
#include <stddef.h>
#include <stdint.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "cu_kernels.h"

/* An order-preserving key of float bits of width W (exponent mask EM,
 * mantissa mask MM). */
template <class K, K EM, K MM> __device__ __forceinline__ K dg_sort_fkey(K b)
{
    const K sign = (K)((K)1 << (sizeof(K) * 8 - 1));
    if ((b & EM) == EM && (b & MM))
        return (K)~(K)0;
    if (b == sign)
        b = 0;
    return (b & sign) ? (K)~b : (K)(b | sign);
}

template <class K> __device__ __forceinline__ K dg_sort_key(int dt, const char *p)
{
    const K v = *reinterpret_cast<const K *>(p);
    const K sign = (K)((K)1 << (sizeof(K) * 8 - 1));
    switch (dt) {
    case DG_INT8: case DG_INT16: case DG_INT32: case DG_INT64: return (K)(v ^ sign);
    case DG_FLOAT16: return (K)dg_sort_fkey<uint16_t, 0x7C00, 0x03FF>((uint16_t)v);
    case DG_FLOAT32: return (K)dg_sort_fkey<uint32_t, 0x7F800000u, 0x007FFFFFu>((uint32_t)v);
    case DG_FLOAT64:
        return (K)dg_sort_fkey<uint64_t, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull>(
            (uint64_t)v);
    default: return v; /* bool and unsigned */
    }
}

/* Byte offset of row r over the row dims (strides st). */
__device__ __forceinline__ int64_t dg_sort_row(const dg_cu_sort &a, int64_t r, const int64_t *st)
{
    int64_t o = 0;
    for (int d = a.nrd - 1; d >= 0; d--) {
        const int64_t q = r / a.rshape[d], c = r - q * a.rshape[d];
        r = q;
        o += c * st[d];
    }
    return o;
}

template <class K>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_sort_prep_k(const __grid_constant__ dg_cu_sort a, K *keys, uint32_t *pos, int64_t *offs)
{
    const int64_t total = a.rows * a.n, step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < total; i += step) {
        const int64_t r = i / a.n, j = i - r * a.n;
        keys[i] = dg_sort_key<K>(a.dtype, a.src + dg_sort_row(a, r, a.rsrc) + j * a.ss);
        pos[i] = (uint32_t)j;
        if (j == 0)
            offs[r] = i;
        if (i == total - 1)
            offs[a.rows] = total;
    }
}

template <class K>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_sort_done_k(const __grid_constant__ dg_cu_sort a, const uint32_t *pos)
{
    const int64_t total = a.rows * a.n, step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < total; i += step) {
        const int64_t r = i / a.n, j = i - r * a.n, p = pos[i];
        if (a.dst != NULL)
            *reinterpret_cast<K *>(a.dst + dg_sort_row(a, r, a.rdst) + j * a.ds) =
                *reinterpret_cast<const K *>(a.src + dg_sort_row(a, r, a.rsrc) + p * a.ss);
        if (a.idx != NULL)
            *reinterpret_cast<int64_t *>(reinterpret_cast<char *>(a.idx) +
                                         dg_sort_row(a, r, a.ridx) + j * a.is) = p;
    }
}

static size_t dg_sort_round(size_t n) { return (n + 255) / 256 * 256; }

template <class K>
static cudaError_t dg_sort_typed(const dg_cu_sort *a, int nsm, cudaMemPool_t pool,
                                 cudaStream_t s)
{
    const int64_t total = a->rows * a->n;
    const size_t kb = dg_sort_round((size_t)total * sizeof(K));
    const size_t pb = dg_sort_round((size_t)total * sizeof(uint32_t));
    const size_t ob = dg_sort_round((size_t)(a->rows + 1) * sizeof(int64_t));
    size_t cub_bytes = 0;
    char *mem = NULL;
    K *k0, *k1;
    uint32_t *p0, *p1;
    int64_t *offs;
    cudaError_t e, f;
    const int64_t nb = (total + DG_CU_THREADS - 1) / DG_CU_THREADS, cap = (int64_t)nsm * 64;
    const unsigned blocks = (unsigned)(nb < 1 ? 1 : nb > cap ? cap : nb);

    if (a->rows == 1)
        e = cub::DeviceRadixSort::SortPairs(NULL, cub_bytes, (const K *)NULL, (K *)NULL,
                                            (const uint32_t *)NULL, (uint32_t *)NULL, total, 0,
                                            (int)(sizeof(K) * 8), s);
    else
        e = cub::DeviceSegmentedSort::StableSortPairs(
            NULL, cub_bytes, (const K *)NULL, (K *)NULL, (const uint32_t *)NULL,
            (uint32_t *)NULL, total, a->rows, (const int64_t *)NULL, (const int64_t *)NULL, s);
    if (e != cudaSuccess)
        return e;
    e = cudaMallocFromPoolAsync((void **)&mem, 2 * kb + 2 * pb + ob + cub_bytes, pool, s);
    if (e != cudaSuccess)
        return e;
    k0 = (K *)mem;
    k1 = (K *)(mem + kb);
    p0 = (uint32_t *)(mem + 2 * kb);
    p1 = (uint32_t *)(mem + 2 * kb + pb);
    offs = (int64_t *)(mem + 2 * kb + 2 * pb);
    {
        void *args[] = {(void *)a, (void *)&k0, (void *)&p0, (void *)&offs};
        e = cudaLaunchKernel((const void *)dg_sort_prep_k<K>, dim3(blocks), dim3(DG_CU_THREADS),
                             args, 0, s);
    }
    if (e == cudaSuccess) {
        void *tmp = mem + 2 * kb + 2 * pb + ob;
        if (a->rows == 1)
            e = cub::DeviceRadixSort::SortPairs(tmp, cub_bytes, k0, k1, p0, p1, total, 0,
                                                (int)(sizeof(K) * 8), s);
        else
            e = cub::DeviceSegmentedSort::StableSortPairs(tmp, cub_bytes, k0, k1, p0, p1, total,
                                                          a->rows, offs, offs + 1, s);
    }
    if (e == cudaSuccess) {
        void *args[] = {(void *)a, (void *)&p1};
        e = cudaLaunchKernel((const void *)dg_sort_done_k<K>, dim3(blocks), dim3(DG_CU_THREADS),
                             args, 0, s);
    }
    f = cudaFreeAsync(mem, s);
    return e != cudaSuccess ? e : f;
}

extern "C" cudaError_t dg_cu_sort_run(const dg_cu_sort *a, int nsm, cudaMemPool_t pool,
                                      cudaStream_t s)
{
    if (a->rows == 0 || a->n == 0)
        return cudaSuccess;
    if (a->n > (int64_t)UINT32_MAX)
        return cudaErrorNotSupported;
    switch (dg_dtype_size(a->dtype) * (a->dtype == DG_COMPLEX64 ? 0 : 1)) {
    case 1: return dg_sort_typed<uint8_t>(a, nsm, pool, s);
    case 2: return dg_sort_typed<uint16_t>(a, nsm, pool, s);
    case 4: return dg_sort_typed<uint32_t>(a, nsm, pool, s);
    case 8: return dg_sort_typed<uint64_t>(a, nsm, pool, s);
    default: return cudaErrorNotSupported; /* complex */
    }
}
