/* The CPU backend's elementwise loops and fills.
 *
 * Both run synchronously on the calling thread (a virtual device's worker)
 * and cannot fail: the descriptor was validated by the core before it was
 * enqueued (loop id in range, operands matching the loop's dtypes, shapes and
 * strides addressing memory the operands own). */
#ifndef DG_CPU_LOOPS_H
#define DG_CPU_LOOPS_H

#include "../../core/dg_backend.h"

/* Runs loop d->loop (an index of dg_loops) over the N-d strided space of `d`.
 * An input with data == NULL is the scalar d->scalar[i], stored in the loop's
 * input dtype; byte strides may be 0 or negative; where d->where is set, an
 * output element is written only where the mask is non-zero.  An output may be
 * the same memory as an input (same pointer and strides).  `d` is borrowed. */
void dg_cpu_ew_run(const dg_ew_desc *d);

/* Runs loop `loop` (an index of dg_loops) over n elements of one axis:
 * operand k at p[k] with byte stride s[k] (0 for a scalar), inputs first;
 * NumPy's loop where the binding handed one over, as dg_cpu_ew_run does. */
void dg_cpu_loop_inner(int loop, char *const *p, const int64_t *s, int64_t n);

/* The software rule of floating-point errors (DGARRAY_FPE=soft, dg_fpe.h):
 * between dg_cpu_soft_begin(actions) and dg_cpu_soft_end on one thread, the
 * elementwise loops of this file (dg_cpu_ew_run, dg_cpu_loop_inner) run
 * dg_scalar.h's functions one element at a time, as the CUDA kernels do
 * (never NumPy's own loop), and classify each element by dg_fpe_rule;
 * dg_cpu_soft_end returns the kinds (1 << DG_FPE_*) found and ends it. */
void dg_cpu_soft_begin(uint32_t actions);
unsigned dg_cpu_soft_end(void);

/* Fills the N-d strided block of `d` with a constant, NumPy's arange values,
 * an identity-like diagonal or random draws (dg_fill_kind); values are in
 * d->dtype.  `d` is
 * borrowed. */
void dg_cpu_fill_run(const dg_fill_desc *d);

/* Runs the reduction of `d` (dg_reduce_desc in dg_backend.h); the loop of a
 * DG_RED_LOOP is one whose three dtypes are d->dtype.  `d` is borrowed. */
void dg_cpu_reduce_run(const dg_reduce_desc *d);

/* Runs the inclusive scan of `d` (dg_scan_desc in dg_backend.h).  `d` is
 * borrowed. */
void dg_cpu_scan_run(const dg_scan_desc *d);

#endif /* DG_CPU_LOOPS_H */
