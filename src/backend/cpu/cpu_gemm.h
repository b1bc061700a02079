/* The CPU backend's matrix products (the gemm slot's work). */
#ifndef DG_CPU_GEMM_H
#define DG_CPU_GEMM_H

#include "../../core/dg_backend.h"

/* ILP64 CBLAS gemm functions (order, transa, transb, m, n, k, alpha, A,
 * lda, B, ldb, beta, C, ldc), as the BLAS NumPy links provides them. */
typedef struct dg_cpu_blas {
    void (*sgemm)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                  const float *, int64_t, float, float *, int64_t);
    void (*dgemm)(int, int, int, int64_t, int64_t, int64_t, double, const double *, int64_t,
                  const double *, int64_t, double, double *, int64_t);
    void (*cgemm)(int, int, int, int64_t, int64_t, int64_t, const void *, const void *, int64_t,
                  const void *, int64_t, const void *, void *, int64_t);
    void (*zgemm)(int, int, int, int64_t, int64_t, int64_t, const void *, const void *, int64_t,
                  const void *, int64_t, const void *, void *, int64_t);
} dg_cpu_blas;

/* Makes float and complex products use these functions (copied; NULL: the
 * loops again).  Process-wide, like the BLAS itself: call before any work
 * is queued (the binding does at import). */
void dg_cpu_gemm_set_blas(const dg_cpu_blas *fns);

/* Runs the products of `d` (dg_gemm_desc in dg_gemm.h) synchronously on the
 * calling thread (a virtual device's worker).  Cannot fail: the core
 * validated the descriptor.  `d` is borrowed. */
void dg_cpu_gemm_run(const dg_gemm_desc *d);

#endif /* DG_CPU_GEMM_H */
