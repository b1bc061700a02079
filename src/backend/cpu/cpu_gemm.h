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
    /* OPTIONAL (may be NULL): the BLAS's process-wide thread count
     * (OpenBLAS's openblas_set_num_threads / openblas_get_num_threads, under
     * whatever suffix the build gives them). */
    void (*set_threads)(int);
    int (*get_threads)(void);
} dg_cpu_blas;

/* Makes float and complex products use these functions (copied; NULL: the
 * loops again).  Process-wide, like the BLAS itself: call before any work
 * is queued (the binding does at import). */
void dg_cpu_gemm_set_blas(const dg_cpu_blas *fns);

/* Threads each virtual device's BLAS call may use: the cores of the
 * process's affinity mask over the number of virtual devices, at least 1, so
 * that devices computing products at once use every core and no more
 * (devices x threads <= cores), and never more than the BLAS's own count
 * when the first product starts.  0: the BLAS's own count.  Set by the
 * backend when it starts; process-wide like the BLAS. */
void dg_cpu_gemm_set_threads(int per_device);

/* 1 if products of `dtype` go through the BLAS (dg_cpu_gemm_set_blas): a
 * product with dg_gemm_desc.wide then runs with the BLAS's own thread count,
 * over every core (the backend's gemm_wide). */
int dg_cpu_gemm_wide(int dtype);

/* Runs the products of `d` (dg_gemm_desc in dg_gemm.h) synchronously on the
 * calling thread (a virtual device's worker).  Cannot fail: the core
 * validated the descriptor.  `d` is borrowed. */
void dg_cpu_gemm_run(const dg_gemm_desc *d);

#endif /* DG_CPU_GEMM_H */
