/* The backend's matrix product (dg_backend_i.gemm): its descriptor and the
 * matrix shapes BLAS accepts.
 *
 * Included by dg_backend.h; the core (dg_matmul.c) fills the descriptor, the
 * CPU backend (cpu_gemm.c) and the CUDA backend (cuda_gemm.c: cuBLAS for
 * float and complex dtypes, kernels/gemm_int.cu for integers and bool) run
 * it.  Row-major language throughout: element (i, j) of a matrix X is at
 * x + i * x_rs + j * x_cs (byte strides). */
#ifndef DG_GEMM_H
#define DG_GEMM_H

#include <stdint.h>
#include "dg_box.h"
#include "dg_dtype.h"

/* A batch of matrix products, all operands in one dtype and on one device:
 *   C[b] = A[b] @ B[b]        (beta 0)
 *   C[b] = C[b] + A[b] @ B[b] (beta 1)
 * for every batch index b over batch[0..nbatch) (C order), where A[b] is
 * m x k at a + sum_i b_i * a_bs[i], B[b] is k x n, C[b] is m x n.  Batch
 * strides of A and B may be 0 (broadcast); C's elements are distinct.
 * m, n >= 1 and k >= 0 (k == 0: C = 0, or unchanged with beta 1).
 * Arithmetic is NumPy's matmul's: integers wrap in their dtype, bool is the
 * OR of ANDs, float16 accumulates in float32 (rounded once at the end:
 * NumPy rounds at every step, so results agree to float16 rounding), float
 * and complex dtypes in their own precision (through BLAS where there is
 * one).  allow_tf32: float32 products may use TF32 tensor cores.
 * wide: the product runs alone over the whole machine (dg_be_gemm_wide
 * said so for its dtype): the backend gives it every core it has, and its
 * operands may lie in other devices' memory.
 * share_sms: a transfer between devices whose kernels take processors
 * (DG_BE_XCHG_SMS) runs on this device while these products do (a
 * product's operands being fetched for later products); a backend may
 * leave it processors (the CUDA backend sizes its persistent
 * GEMM kernels to the multiprocessors NCCL leaves free).  A hint only.
 * For float and complex dtypes each of A, B and C has the shape BLAS needs
 * (dg_gemm_blas_layout); the core packs operands that do not. */
typedef struct dg_gemm_desc {
    int dtype;
    int beta;
    int allow_tf32;
    int share_sms;
    int wide;
    int nbatch;
    int64_t m, n, k;
    int64_t batch[DG_MAXDIM];
    const char *a;
    int64_t a_rs, a_cs, a_bs[DG_MAXDIM];
    const char *b;
    int64_t b_rs, b_cs, b_bs[DG_MAXDIM];
    char *c;
    int64_t c_rs, c_cs, c_bs[DG_MAXDIM];
} dg_gemm_desc;

/* How BLAS sees a rows x cols matrix with byte strides (rs, cs) of
 * `itemsize`-byte elements: returns 1 and sets *col_major (0: each row is
 * dense, rows `*ld` elements apart; 1: each column is dense, columns *ld
 * elements apart) when one axis is dense and the other's stride is a
 * multiple of the item of at least that extent, as BLAS requires; 0 when
 * the matrix must be packed first.  An axis of extent 1 takes any stride. */
static inline int dg_gemm_blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                                      int itemsize, int *col_major, int64_t *ld)
{
    if ((cols == 1 || cs == itemsize) &&
        (rows == 1 || (rs % itemsize == 0 && rs / itemsize >= cols))) {
        *col_major = 0;
        *ld = rows == 1 ? cols : rs / itemsize;
        return 1;
    }
    if ((rows == 1 || rs == itemsize) &&
        (cols == 1 || (cs % itemsize == 0 && cs / itemsize >= rows))) {
        *col_major = 1;
        *ld = cols == 1 ? rows : cs / itemsize;
        return 1;
    }
    return 0;
}

#endif /* DG_GEMM_H */
