/* Deferred fusion of elementwise chains (dg_fuse.c).
 *
 * An elementwise call whose operands are in place (dg_exec.c) is not
 * enqueued at once: its pieces (one loop per output chunk) join the pending
 * chain, and the chain runs as one fused piece of work per piece (the
 * backend's `fused` slot, dg_fused.h) when something needs its results: any
 * other device work that writes memory the chain reads or writes, or reads
 * memory it writes (a read of the values, a reduction, a copy: dg_enqueue
 * asks dg_fuse_touch first), a host wait (dg_fuse_flush), a call whose
 * pieces cannot be lined up with the chain's (other devices, or boxes that
 * do not cover the same elements of each device), a length limit, or an
 * access pattern that fusion cannot keep exact.
 *
 * Lining up: a call whose pieces match the chain's one to one (device and
 * shape, in order) joins them as they are.  Else, where every piece of both
 * is a box of unit steps in the call's index space, the chain's pieces and
 * the call's are re-cut to their common boundaries (each box where a chain
 * piece and a call piece of one device meet becomes one piece): the shifted
 * slices of a stencil cut a device's chunk where their halo rows come from
 * another device, each at another row, and without the re-cut every such
 * call ran the chain.
 *
 * Exactness: within one piece, the fused work runs every step for an element
 * before or after (never between) the steps of another element, and the
 * pieces run in any order.  So a call joins the chain only if every memory
 * that the chain or the call writes is touched by the other, in the same
 * piece, through that one view alone (same first element, same strides,
 * same dtype), and in other pieces at other bytes only; anything else (the
 * assignment of the Jacobi step, which writes the interior that the chain
 * read through the shifted views, a view of a result read shifted) first
 * runs the chain.  A value computed by a step and read by a later step is
 * passed in registers; a result whose array was dropped before the chain ran
 * (its buffer held by the chain alone, in one piece or several) is never
 * stored, and its memory goes back to the pool as soon as that is known.
 * The pieces that read what a transfer wrote (halo rows) are enqueued after
 * the others, which need not wait for it.
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
    const dg_box *box; /* the elements of the call's space it covers (borrowed), or NULL:
                        * then it joins only chains whose pieces line up with the call's
                        * one to one */
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

/* Runs the pending chain if one of the n accesses writes memory the chain
 * reads or writes, or reads memory it writes: what work outside the chain
 * calls before it touches memory (a read of what the chain only reads may
 * run first). */
dg_status dg_fuse_touch(const dg_access *acc, int n, dg_error *err);

/* Runs the pending chain if it reads or writes b's memory: before the host
 * waits for b (and may lend its memory to code that writes it). */
dg_status dg_fuse_touch_buffer(const dg_buffer *b, dg_error *err);

/* Steps in the pending chain (0: none); for tests. */
int dg_fuse_pending(void);

/* Fused pieces of work run and steps they held, since start; for tests and
 * benchmarks. */
void dg_fuse_counts(int64_t *runs, int64_t *steps);

/* The same for the pieces that ran on device dev (0 for a device numbered
 * 64 or more). */
void dg_fuse_device_counts(int dev, int64_t *runs, int64_t *steps);

/* How many memories an assignment has renewed so far (the grid of a stencil
 * written in place: dg_fuse.c, renew_outputs); *was 1 where renewing is on.
 * on 0 or 1 turns it off or on (DGARRAY_FUSION_RENEW=0 at start: off), -1
 * leaves it. */
int64_t dg_fuse_renew(int on, int *was);

#endif /* DG_FUSE_H */
