/* The CPU backend's matrix products (the gemm slot's work). */
#ifndef DG_CPU_GEMM_H
#define DG_CPU_GEMM_H

#include "../../core/dg_backend.h"

/* Runs the products of `d` (dg_gemm_desc in dg_gemm.h) synchronously on the
 * calling thread (a virtual device's worker).  Cannot fail: the core
 * validated the descriptor.  `d` is borrowed. */
void dg_cpu_gemm_run(const dg_gemm_desc *d);

#endif /* DG_CPU_GEMM_H */
