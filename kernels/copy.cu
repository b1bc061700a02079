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
