/* The dense slot's own kernel (src/backend/cuda/cuda_dense.c runs the rest
 * through cuSOLVER and cuBLAS): DG_DENSE_TRIZERO, the zeroing of a triangle
 * of column-major matrices (the part of a Cholesky or QR factor LAPACK
 * leaves as it was), matching the CPU backend's loop (cpu_dense.c). */
#include <stdint.h>

#include "cu_kernels.h"

/* 1 if v is a NaN or an infinity (either part of a complex value). */
__device__ inline bool dg_nonfinite(float v) { return !isfinite(v); }
__device__ inline bool dg_nonfinite(double v) { return !isfinite(v); }
__device__ inline bool dg_nonfinite(float2 v) { return !isfinite(v.x) || !isfinite(v.y); }
__device__ inline bool dg_nonfinite(double2 v) { return !isfinite(v.x) || !isfinite(v.y); }

/* Sets the `batch` ints at info, ibs bytes apart, to 0. */
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_trizero_info_k(char *info, int64_t ibs, int64_t batch)
{
    for (int64_t b = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; b < batch;
         b += (int64_t)gridDim.x * DG_CU_THREADS)
        *reinterpret_cast<int32_t *>(info + b * ibs) = 0;
}

/* blockIdx.y walks the columns and blockIdx.z the matrices (both
 * grid-strided); the threads of blockIdx.x's blocks walk only the rows of a
 * column that go (a contiguous run), so that no block is launched per
 * element of the half that stays.  With info, a zeroed element that was not
 * finite sets its matrix's info to 1 (every writer writes 1: no race that
 * matters). */
template <typename T>
__global__ void __launch_bounds__(DG_CU_THREADS)
    dg_trizero_k(char *a, int64_t lda, int64_t bs, int64_t batch, int64_t m, int64_t n,
                 int64_t k, int lower, char *info, int64_t ibs)
{
    for (int64_t b = blockIdx.z; b < batch; b += gridDim.z)
        for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
            T *col = reinterpret_cast<T *>(a + b * bs) + j * lda;
            /* the rows that go: j - i > k (lower) or j - i < k */
            int64_t lo = lower ? 0 : j - k + 1, hi = lower ? j - k : m;
            bool bad = false;
            if (lo < 0)
                lo = 0;
            if (hi > m)
                hi = m;
            for (int64_t i = lo + (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < hi;
                 i += (int64_t)gridDim.x * DG_CU_THREADS) {
                if (info != nullptr && dg_nonfinite(col[i]))
                    bad = true;
                col[i] = T{};
            }
            if (bad)
                *reinterpret_cast<int32_t *>(info + b * ibs) = 1;
        }
}

extern "C" cudaError_t dg_cu_trizero(char *a, int64_t lda, int64_t bs, int64_t batch,
                                     int64_t m, int64_t n, int64_t k, int lower, int itemsize,
                                     int cplx, char *info, int64_t ibs, cudaStream_t s)
{
    /* about 32 rows of a column per thread: a few blocks per column */
    const int64_t per = (int64_t)DG_CU_THREADS * 32;
    int64_t gx = (m + per - 1) / per;
    dim3 grid(1, 1, 1);
    if (batch <= 0)
        return cudaSuccess;
    if (info != nullptr) {
        const int64_t nb = (batch + DG_CU_THREADS - 1) / DG_CU_THREADS;
        dg_trizero_info_k<<<(unsigned)(nb > 4096 ? 4096 : nb), DG_CU_THREADS, 0, s>>>(info, ibs,
                                                                                   batch);
    }
    if (m <= 0 || n <= 0)
        return cudaGetLastError();
    grid.x = (unsigned)(gx < 1 ? 1 : gx > 1024 ? 1024 : gx);
    grid.y = (unsigned)(n < 65535 ? n : 65535);
    grid.z = (unsigned)(batch < 65535 ? batch : 65535);
#define DG_TRIZERO(T) dg_trizero_k<T><<<grid, DG_CU_THREADS, 0, s>>>(a, lda, bs, batch, m, n, \
                                                                     k, lower, info, ibs)
    if (itemsize == 4 && !cplx)
        DG_TRIZERO(float);
    else if (itemsize == 8 && !cplx)
        DG_TRIZERO(double);
    else if (itemsize == 8)
        DG_TRIZERO(float2);
    else if (itemsize == 16 && cplx)
        DG_TRIZERO(double2);
    else
        return cudaErrorInvalidValue;
#undef DG_TRIZERO
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
