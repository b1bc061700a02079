/* The C interface of the integer and bool matrix-product kernel
 * (kernels/gemm_int.cu); float and complex products go to cuBLAS
 * (cuda_gemm.c).  Included by C (the backend) and C++ (nvcc). */
#ifndef DG_CU_GEMM_KERNELS_H
#define DG_CU_GEMM_KERNELS_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#include "dg_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launches C (=|+=) A @ B of dg_gemm_desc `d` (bool or an integer dtype;
 * any byte strides; m, n >= 1; k >= 0) on s: products and sums wrap in the
 * dtype, bool is the OR of ANDs.  cudaErrorInvalidValue for another dtype or
 * more than DG_MAXDIM - 2 batch dims. */
cudaError_t dg_cu_gemm_int_launch(const dg_gemm_desc *d, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* DG_CU_GEMM_KERNELS_H */
