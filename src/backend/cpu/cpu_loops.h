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

/* Stores that bypass the cache, for outputs too large to stay in it (issue
 * [cpu-speed]).  A store to a line not in the cache first reads the line
 * (read for ownership): an elementwise result written with plain stores costs
 * its bytes three times in memory traffic (read, written, and read before the
 * write), one more than it must.  Where the run's output is at least
 * dg_cpu_stream_min() bytes, the loops compute each tile of it into a buffer
 * in the first-level cache and write the tile out with non-temporal stores
 * (x86-64's movntdq; elsewhere a plain copy), so that a memory-bound loop on
 * many cores reaches the bandwidth that plain stores waste on those reads.
 * The values are the loop's own: only where they are stored changes.  Only
 * loops that cost little per element stream (dg_cpu_loop_streams: arithmetic
 * without division, comparisons, casts; a fused chain of them): for a loop
 * bound by its arithmetic on the core, such as exp, the tile written apart
 * after it was computed costs more than the reads it saves (exp of 2^25
 * float64 on one core of the 2-core machine: 27.8 -> 31.5 ms streamed; a + b
 * on 2 devices 21.6 -> 18.5 ms, the Jacobi expression on one 62.2 -> 49.2).
 * DGARRAY_CPU_STREAM_LOOPS=all streams every loop (for measurements).
 *
 * dg_cpu_stream_setup(ndev) sets the threshold for ndev virtual devices: the
 * last-level cache divided among the devices (outputs that fit the cache are
 * better left there for the next operation), or DGARRAY_CPU_STREAM_BYTES
 * (0: never); for the output of a single loop and for a copy
 * (dg_cpu_stream_plain_min) only from 8 devices on, where the fused chains
 * stream whatever the count (cpu_loops.c, DG_STREAM_PLAIN_DEVICES).  dg_cpu_stream_copy writes n bytes; dg_cpu_stream_fence orders
 * the non-temporal stores before the stores that follow it (the task's end,
 * which other threads read), and runs at the end of every loop that streamed
 * (which it counts). */
void dg_cpu_stream_setup(int ndev);
size_t dg_cpu_stream_min(void);
size_t dg_cpu_stream_plain_min(void); /* a single loop's output, a copy */
void dg_cpu_stream_set_min(size_t bytes); /* both; (size_t)-1: never */
void dg_cpu_stream_set_plain_min(size_t bytes);
int dg_cpu_loop_streams(int loop);
void dg_cpu_stream_copy(char *dst, const char *src, size_t n);
void dg_cpu_stream_fence(void);
long long dg_cpu_stream_runs(void); /* runs that streamed so far (tests) */

/* The software rule of floating-point errors (DGARRAY_FPE=soft, dg_fpe.h):
 * between dg_cpu_soft_begin(actions) and dg_cpu_soft_end on one thread, the
 * elementwise loops of this file (dg_cpu_ew_run, dg_cpu_loop_inner) run
 * dg_scalar.h's functions one element at a time, as the CUDA kernels do
 * (never NumPy's own loop), and classify each element by dg_fpe_rule, and
 * the scans of sums and products of floats (dg_cpu_scan_run) each fold by
 * dg_fpe_fold_kinds, as the CUDA scan kernels do; dg_cpu_soft_end returns
 * the kinds (1 << DG_FPE_*) found and ends it. */
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
