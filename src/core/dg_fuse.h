/* Deferred fusion of elementwise chains (dg_fuse.c).
 *
 * An elementwise call whose operands are in place (dg_exec.c) is not
 * enqueued at once: its pieces (one loop per output chunk) join the pending
 * chain, and the chain runs as one fused piece of work per chunk (the
 * backend's `fused` slot, dg_fused.h) when something needs its results: any
 * other device work that touches memory the chain reads or writes (a read of
 * the values, a reduction, a copy: dg_enqueue asks dg_fuse_touch first), a
 * host wait (dg_fuse_flush), a call whose pieces do not line up with the
 * chain's (other devices or shapes), a length limit, or an access pattern
 * that fusion cannot keep exact.
 *
 * Exactness: within one chunk, the fused work runs every step for an element
 * before or after (never between) the steps of another element only where
 * that cannot change a result.  So a call joins the chain only if every
 * memory that the chain or the call writes is read and written, by the chain
 * and the call, through one view alone (same piece, same first element, same
 * strides, same dtype); anything else (the Jacobi step reading the
 * neighbours of what it writes, a view of a result read shifted) first runs
 * the chain.  A value computed by a step and read by a later step is passed
 * in registers; a result whose array was dropped before the chain ran (its
 * buffer held by the chain alone) is never stored, and its memory goes back
 * to the pool as soon as that is known.
 *
 * Shapes, dtypes and errors of the calls are resolved when they are called,
 * before they are recorded: only device failures can surface later, at the
 * call that runs the chain.  Floating-point errors (dg_fpe.h): a chain holds
 * calls of one errstate only (a call under another runs the chain first),
 * runs under it, and its warnings come at the host read or call that waits
 * for it; a call whose errstate asks more than a warning (raise, call,
 * print, log) is never recorded, so that it raises at the call as NumPy's.
 *
 * Thread safety: one pending chain per process, guarded by a mutex; the
 * calls below may come from any thread (a host read without the GIL). */
#ifndef DG_FUSE_H
#define DG_FUSE_H

#include "dg_enqueue.h"

/* Whether calls are recorded (1, the default; DGARRAY_FUSION=0 in the
 * environment turns it off at start) and the setting's change (turning it
 * off runs the pending chain first). */
int dg_fuse_enabled(void);
dg_status dg_fuse_set_enabled(int on, dg_error *err);

/* One piece of an elementwise call: loop d->loop over d's space (the call's
 * axes, not coalesced) on device dev; buf[k] the buffer operand k of d reads
 * or writes (NULL for a scalar input), borrowed. */
typedef struct dg_fuse_piece {
    int dev;
    const dg_ew_desc *d;
    dg_buffer *buf[DG_MAXOPS];
} dg_fuse_piece;

/* 0 where a call of nelems elements on `be` would not be recorded (fusion
 * off, a backend without the fused slot, too few elements): the caller's
 * cheap test before it describes the call's pieces. */
int dg_fuse_wanted(dg_backend_i *be, int64_t nelems);

/* Records the n pieces of one call on `be` into the pending chain (running
 * the chain first where the call cannot join it): *recorded 1.  *recorded 0
 * and nothing done where the call is not recorded (fusion off, a backend
 * without the fused slot, a mask, too many pieces, fewer elements than
 * DGARRAY_FUSION_MIN_ELEMS, 65,536 by default): the caller enqueues it.
 * The chain takes its own references to the buffers. */
dg_status dg_fuse_record(dg_backend_i *be, const dg_fuse_piece *p, int n, int *recorded,
                         dg_error *err);

/* Runs the pending chain (nothing if none). */
dg_status dg_fuse_flush(dg_error *err);

/* Runs the pending chain if it reads or writes one of the n accesses' memory:
 * what work outside the chain calls before it touches memory. */
dg_status dg_fuse_touch(const dg_access *acc, int n, dg_error *err);

/* The same for the memory of one buffer. */
dg_status dg_fuse_touch_buffer(const dg_buffer *b, dg_error *err);

/* Steps in the pending chain (0: none); for tests. */
int dg_fuse_pending(void);

/* Fused pieces of work run and steps they held, since start; for tests and
 * benchmarks. */
void dg_fuse_counts(int64_t *runs, int64_t *steps);

#endif /* DG_FUSE_H */
