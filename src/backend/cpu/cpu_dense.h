/* The CPU backend's dense linear algebra (the dense slot's work): LAPACK of
 * the BLAS NumPy's wheel bundles, handed over by the binding. */
#ifndef DG_CPU_DENSE_H
#define DG_CPU_DENSE_H

#include "../../core/dg_backend.h"

/* The LAPACK routines the slot calls, one per op and dtype. */
typedef enum dg_cpu_lapack_routine {
    DG_LAPACK_POTRF,
    DG_LAPACK_GETRF,
    DG_LAPACK_GETRS,
    DG_LAPACK_TRSM,
    DG_LAPACK_GEQRF,
    DG_LAPACK_ORGQR, /* ungqr for complex dtypes */
    DG_LAPACK_SYEVD, /* heevd for complex dtypes */
    DG_LAPACK_GESDD,
    DG_LAPACK_GEEV,
    DG_LAPACK_NROUTINES
} dg_cpu_lapack_routine;

/* Addresses of the ILP64 Fortran routines (64-bit integers, hidden string
 * lengths) of one BLAS/LAPACK library: fn[routine][t], t = 0..3 for
 * float32, float64, complex64, complex128 (LAPACK's s, d, c, z). */
typedef struct dg_cpu_lapack {
    void (*fn[DG_LAPACK_NROUTINES][4])(void);
} dg_cpu_lapack;

/* Makes the dense slot use these routines (copied; NULL: no LAPACK, and the
 * slot raises DG_ERR_NOTIMPL).  Process-wide, like the library itself: call
 * before any dense work is queued (the binding does at import). */
void dg_cpu_dense_set_lapack(const dg_cpu_lapack *fns);

/* 1 if routines were handed over. */
int dg_cpu_dense_available(void);

/* Runs `d` (dg_dense_desc in dg_dense.h) synchronously on the calling thread
 * (a virtual device's worker).  Cannot fail: a matrix whose workspace cannot
 * be allocated gets info INT32_MIN.  `d` is borrowed. */
void dg_cpu_dense_run(const dg_dense_desc *d);

#endif /* DG_CPU_DENSE_H */
