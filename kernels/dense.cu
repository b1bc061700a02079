/* The dense slot's own kernel (src/backend/cuda/cuda_dense.c runs the rest
 * through cuSOLVER and cuBLAS): DG_DENSE_TRIZERO, the zeroing of a triangle
 * of column-major matrices (the part of a Cholesky or QR factor LAPACK
 * leaves as it was), matching the CPU backend's loop (cpu_dense.c). */
#include <stdint.h>

#include "cu_kernels.h"

/* One thread per element of a column; blockIdx.y walks the columns and
 * blockIdx.z the matrices (both grid-strided). */
template <typename T>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_trizero_k(char *a, int64_t lda, int64_t bs, int64_t batch, int64_t m, int64_t n,
                 int64_t k, int lower)
{
    for (int64_t b = blockIdx.z; b < batch; b += gridDim.z)
        for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
            T *col = reinterpret_cast<T *>(a + b * bs) + j * lda;
            for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < m;
                 i += (int64_t)gridDim.x * DG_CU_THREADS)
                if (lower ? j - i > k : j - i < k)
                    col[i] = T{};
        }
}

extern "C" cudaError_t dg_cu_trizero(char *a, int64_t lda, int64_t bs, int64_t batch,
                                     int64_t m, int64_t n, int64_t k, int lower, int itemsize,
                                     cudaStream_t s)
{
    dim3 grid((unsigned)((m + DG_CU_THREADS - 1) / DG_CU_THREADS), 1, 1);
    if (m <= 0 || n <= 0 || batch <= 0)
        return cudaSuccess;
    if (grid.x > 1024)
        grid.x = 1024;
    grid.y = (unsigned)(n < 65535 ? n : 65535);
    grid.z = (unsigned)(batch < 65535 ? batch : 65535);
    switch (itemsize) {
    case 4: dg_trizero_k<float><<<grid, DG_CU_THREADS, 0, s>>>(a, lda, bs, batch, m, n, k, lower); break;
    case 8: dg_trizero_k<double><<<grid, DG_CU_THREADS, 0, s>>>(a, lda, bs, batch, m, n, k, lower); break;
    case 16: dg_trizero_k<double2><<<grid, DG_CU_THREADS, 0, s>>>(a, lda, bs, batch, m, n, k, lower); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* dg_cu_int_copy: one thread per integer, grid-strided. */
template <typename S, typename D>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_int_copy_k(const S *src, int64_t sbs, D *dst, int64_t dbs, int64_t per, int64_t total)
{
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * DG_CU_THREADS) {
        const int64_t r = i / per, c = i % per;
        dst[r * dbs + c] = (D)src[r * sbs + c];
    }
}

extern "C" cudaError_t dg_cu_int_copy(const void *src, int src64, int64_t src_bs, void *dst,
                                      int dst64, int64_t dst_bs, int64_t per, int64_t batch,
                                      cudaStream_t s)
{
    const int64_t total = per * batch;
    int64_t nb = (total + DG_CU_THREADS - 1) / DG_CU_THREADS;
    if (total <= 0)
        return cudaSuccess;
    if (nb > 4096)
        nb = 4096;
#define DG_INT_COPY(S, D)                                                               \
    dg_int_copy_k<S, D><<<(unsigned)nb, DG_CU_THREADS, 0, s>>>((const S *)src, src_bs,    \
                                                              (D *)dst, dst_bs, per, total)
    if (src64 && dst64)
        DG_INT_COPY(int64_t, int64_t);
    else if (src64)
        DG_INT_COPY(int64_t, int32_t);
    else if (dst64)
        DG_INT_COPY(int32_t, int64_t);
    else
        DG_INT_COPY(int32_t, int32_t);
#undef DG_INT_COPY
    return cudaGetLastError();
}
