/* Distributed arrays: refcounted lists of chunks on devices.
 *
 * A dg_array has a global shape, a dtype, a mode and chunks.  A chunk is
 * (device, box, buffer view): the box holds global indices; the view is a
 * byte offset into a refcounted device buffer plus a byte stride per axis of
 * the box (dense C order for chunks the core allocates; views of other arrays
 * may be strided).  Buffers remember the stream position of their last write
 * and of their last read on each stream, so that work on another stream waits
 * for exactly what it needs (DESIGN.md: execution model).
 *
 * All functions here are called with one thread at a time per array (the
 * binding holds the GIL around them, or owns the arrays it passes). */
#ifndef DG_ARRAY_H
#define DG_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include "dg_backend.h"
#include "dg_box.h"
#include "dg_layout.h"
#include "dg_plan.h"
#include "dg_status.h"

typedef enum dg_mode {
    DG_MODE_REPLICA = 0,
    DG_MODE_SUM,
    DG_MODE_PROD,
    DG_MODE_MAX,
    DG_MODE_MIN,
    DG_NMODES
} dg_mode;

/* Device memory and what was done to it: the stream positions of its last
 * writes and reads, one slot per (device, stream).  Shared by the buffers
 * that hold the same values (see dg_buffer); released when the last one goes,
 * stream-ordered after every recorded access. */
typedef struct dg_mem {
    int refcnt;     /* buffers sharing this memory */
    int device;
    void *ptr;      /* NULL for empty memory */
    size_t nbytes;
    int nslots;     /* ndevices * DG_NSTREAMS */
    dg_pos *writes; /* [nslots]: writes not yet known to be ordered before another */
    dg_pos *reads;  /* [nslots]: last read by each (device, stream) */
} dg_mem;

/* A buffer: one identity of values held in device memory.  Chunks of one
 * array and of its views share a buffer (a write through one is seen by
 * all); buffers of different arrays may share memory (a reshard that leaves
 * data in place), and then a write goes to a private copy first
 * (dg_array_unshare: copy on write).  `device`, `ptr` and `nbytes` mirror
 * mem's, so that views compute addresses without a second indirection. */
typedef struct dg_buffer {
    int refcnt;
    int device;
    void *ptr;
    size_t nbytes;
    dg_mem *mem; /* strong reference */
    int lent;    /* 1 once its memory was lent to other code (dg_array_lend_chunk): the
                  * memory is then never replaced (dg_buffer_renew) */
} dg_buffer;

typedef struct dg_chunk {
    int device;
    dg_box box;
    dg_buffer *buf;  /* strong reference */
    int64_t offset;  /* bytes from buf->ptr to the box's first element */
    int64_t strides[DG_MAXDIM]; /* bytes per step of the box on each axis */
} dg_chunk;

typedef struct dg_array {
    int refcnt;
    dg_backend_i *be; /* borrowed: outlives every array */
    int dtype;
    int ndim;
    int64_t shape[DG_MAXDIM];
    int mode;
    int nchunks;
    dg_chunk *chunks;
    /* The layout the array was asked for, when its chunks are pieces of it
     * (a reshard keeps in place what is in place: a chunk asked for may be
     * held as a view of the source plus the pieces that moved); NULL when
     * the chunks are that layout.  Owned. */
    int nlogical;
    dg_plan_chunk *logical;
    /* 1 for a view that must not be written: a broadcast (elements share
     * memory) and every view of one (dg_view.h). */
    int readonly;
    /* An op mode left by a reduction (dg_reduce_call.lazy_mode): its
     * partials are combined (dg_array_change_mode) under mode_fpe, the
     * action word (dg_fpe.h) of that reduction, not of the call that reads
     * them, so that an overflow of the combine is noted as the reduction's
     * errstate asks (has_mode_fpe 0: under the reading call's). */
    int has_mode_fpe;
    uint32_t mode_fpe;
} dg_array;

/* ---- life ---------------------------------------------------------------- */

/* New array of `shape` with one freshly allocated dense chunk per entry of
 * `layout` (uninitialised values).  The layout is validated first (devices
 * exist, boxes inside the shape, every element covered).  New reference. */
dg_status dg_array_empty(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                         const dg_plan_chunk *layout, int nchunks, int mode,
                         dg_array **out, dg_error *err);

/* dg_array_empty for a layout the core made itself (an array's own, the
 * default one): the same, less the layout's validation, which costs a
 * record of an elementwise call (the new result of every ufunc) about a
 * tenth of its host time.  The layout must be valid. */
dg_status dg_array_empty_core(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                              const dg_plan_chunk *layout, int nchunks, int mode,
                              dg_array **out, dg_error *err);

/* dg_array_empty_core in ref's layout (dg_array_logical_layout's: the
 * layout ref was asked for), of ref's shape: without a copy of the layout
 * where ref's chunks are it. */
dg_status dg_array_empty_like_core(const dg_array *ref, int dtype, int mode, dg_array **out,
                                   dg_error *err);

static inline void dg_array_incref(dg_array *a) { a->refcnt++; }
/* Drops a reference; the last one releases the buffers (stream-ordered). */
void dg_array_decref(dg_array *a);

/* ---- layouts ------------------------------------------------------------- */

/* The (device, box) list of `a`; *out malloc'ed, caller frees. */
dg_status dg_array_layout(const dg_array *a, dg_plan_chunk **out, dg_error *err);

/* The layout `a` was asked for (its logical layout: dg_array.logical, else
 * its chunks'): what its index map reports and what arrays made "like a"
 * get.  *out malloc'ed (caller frees), *n entries. */
dg_status dg_array_logical_layout(const dg_array *a, dg_plan_chunk **out, int *n,
                                  dg_error *err);

/* Gives dst (whose chunks are, one for one, those of src) src's logical
 * layout. */
dg_status dg_array_copy_logical(dg_array *dst, const dg_array *src, dg_error *err);

/* 1 if a and b have the same shape and the same chunks in the same order. */
int dg_array_same_layout(const dg_array *a, const dg_array *b);

/* ---- host transfers (dg_hostcopy.c) ------------------------------------------- */

/* Copies, for every chunk, its box of the host array `host` (global index 0 at
 * `host`, byte strides `hstrides`) into the chunk, then waits for the copies.
 * Call without the GIL; `host` must not change meanwhile. */
dg_status dg_array_scatter(dg_array *a, const char *host, const int64_t *hstrides,
                           dg_error *err);

/* The same for slab `part` of `nparts` (0 <= part < nparts <= DG_MAX_PARTS)
 * of every chunk:
 * the rows [L part / nparts, L (part + 1) / nparts) of its first axis of
 * extent L > 1.  Parts 0 .. nparts - 1 in turn copy the whole array, every
 * device taking part in each; *nbytes (if not NULL): the bytes copied.  The
 * binding makes long copies this way, checking for Ctrl-C and showing
 * progress between parts. */
#define DG_MAX_PARTS ((int64_t)1 << 20)
dg_status dg_array_scatter_part(dg_array *a, const char *host, const int64_t *hstrides,
                                int64_t part, int64_t nparts, int64_t *nbytes, dg_error *err);

/* Copies the elements of `region` (a box of global indices) into the host
 * array `host` of region's shape (byte strides hstrides), each element from
 * one chunk, then waits.  `a` must be in REPLICA mode.  Call without the GIL. */
dg_status dg_array_gather(dg_array *a, const dg_box *region, char *host,
                          const int64_t *hstrides, dg_error *err);
/* The same for slab `part` of `nparts` of each of the gather's copies (one
 * per chunk part that region needs), as dg_array_scatter_part. */
dg_status dg_array_gather_part(dg_array *a, const dg_box *region, char *host,
                               const int64_t *hstrides, int64_t part, int64_t nparts,
                               int64_t *nbytes, dg_error *err);

/* A REPLICA array of x's values (x REPLICA, borrowed) in one chunk on each
 * of the n devices devs[i], each dense or x's own chunk there where one
 * holds all of x (then shared: a view), the copies in one move: what a
 * kernel reading all of x on each device, or a host read of one copy (one
 * copy to the host, not one a chunk), reads.  New reference. */
dg_status dg_array_dense_on(dg_array *x, const int *devs, int n, dg_array **out,
                            dg_error *err);
/* Copies all of each of the n arrays a[i] (REPLICA, of one backend) into
 * the host array host[i] of its shape (byte strides hstrides[i]): every
 * copy enqueued, then one wait on each device used (not one a read: what
 * reads several small results of one computation together).  For arrays
 * small enough to copy in one part.  Call without the GIL. */
dg_status dg_array_gather_all(dg_array *const *a, int n, char *const *host,
                              const int64_t *const *hstrides, dg_error *err);

/* Waits until every chunk's last write has completed. */
dg_status dg_array_sync(dg_array *a, dg_error *err);

/* The host waits for the work enqueued so far on the compute stream of each
 * device whose used[] byte is set (one byte per device), even after an
 * earlier failure st: host memory must not be freed or read while copies
 * already queued use it.  Returns st if it is a failure (the wait's errors
 * then dropped), else the wait's status. */
dg_status dg_devices_sync(dg_backend_i *be, const char *used, dg_status st, dg_error *err);

/* Copy on write: gives every chunk of `a` whose memory another array shares
 * a private copy (see dg_buffer).  Every function that writes into an
 * existing array calls it first; a read-only array (a broadcast view) is a
 * DG_ERR_VALUE here. */
dg_status dg_array_unshare(dg_array *a, dg_error *err);

/* Regions of at most this many bytes that a device can read in place on
 * another (dg_backend_i.can_access) are read there, not moved.  Process-wide. */
void dg_set_peer_read_bytes(size_t n);
size_t dg_get_peer_read_bytes(void);

/* Bytes moved between devices and within devices by moves, bytes read in
 * place on another device, and exchange groups, since the last reset
 * (process-wide; for tests and benchmarks).  reset: zero them after. */
typedef struct dg_move_counts {
    int64_t between, within, peer_read, groups;
} dg_move_counts;
void dg_move_stats(dg_move_counts *out, int reset);

/* The best time (seconds) of `iters` exchanges, each of the npairs
 * transfers (pairs[2i] -> pairs[2i+1]) of nbytes in one group, from the
 * call to the end of the transfers, on the backend alone (dg_bench.c).  For
 * benchmarks: the backend's own speed, beside which moves are measured. */
dg_status dg_bench_exchange(dg_backend_i *be, const int *pairs, int npairs, size_t nbytes,
                            int iters, double *best, dg_error *err);

/* ---- device work ----------------------------------------------------------- */

/* Fills every chunk (or only its part inside `region`, if not NULL): `proto`
 * gives kind, value, delta, k and rnd; the core sets dtype, shape, dst,
 * strides, origin, gstep and gshape per chunk. */
dg_status dg_array_fill(dg_array *a, const dg_fill_desc *proto, const dg_box *region,
                        dg_error *err);

/* One operand of an elementwise call: an array (in the loop's dtype, REPLICA
 * mode, broadcastable to the call's shape) or a scalar value. */
typedef struct dg_operand {
    dg_array *arr; /* borrowed; NULL for a scalar */
    unsigned char scalar[16];
} dg_operand;

typedef struct dg_ew_call {
    int loop;                  /* dg_loops index */
    int ndim;
    int64_t shape[DG_MAXDIM];  /* the broadcast shape = every output's shape */
    dg_operand in[2];
    dg_array *out[2];          /* borrowed; loop's output dtypes, same layout */
    dg_array *where;           /* borrowed bool array or NULL */
} dg_ew_call;

/* Runs the loop for every chunk of out[0], where that chunk lives: each input
 * region is read in place when one chunk on that device holds it, else
 * assembled there by the planner's copies. */
dg_status dg_ew_apply(const dg_ew_call *call, dg_error *err);

/* A new array of a's values in `dtype` with a's logical layout: a's values
 * cast by the loop dg_loop_cast names into a REPLICA array (a REPLICA), or,
 * for a's own dtype, a copy of a with the same layout and mode.  a
 * borrowed; new reference in *out. */
dg_status dg_array_cast(dg_array *a, int dtype, dg_array **out, dg_error *err);

/* A new array with `layout` holding a's values (mode kept), one chunk per
 * entry of `layout`: a chunk whose elements its device already holds in one
 * chunk of a (at least half of that chunk's memory) is a view of it (copy on
 * write keeps the values of the two arrays apart), the others are filled by
 * one move.  New reference. */
dg_status dg_array_reshard(dg_array *a, const dg_plan_chunk *layout, int n,
                           dg_array **out, dg_error *err);

/* Flags of dg_array_reshard_ex. */
enum {
    /* a chunk whose device holds most of its elements may be held as views
     * of a plus the pieces that move (the array keeps `layout` as its
     * logical layout): only what changes device moves */
    DG_RESHARD_PIECES = 1u,
    /* every chunk of the result dense in C order: views of a only where
     * they are (what dg_array_flatten needs of a view's reshard) */
    DG_RESHARD_DENSE = 2u,
    /* `layout` is known valid (made by dg_layout_of_index_map, or an
     * array's own): not checked again (the cover check walks every chunk) */
    DG_RESHARD_CHECKED = 4u
};
dg_status dg_array_reshard_ex(dg_array *a, const dg_plan_chunk *layout, int n, unsigned flags,
                              dg_array **out, dg_error *err);

/* A new array with a's layout and values in `mode` (CuPy's semantics: to
 * REPLICA combines overlapping chunks with the mode's op; to an op mode keeps
 * each element in one chunk and sets the other copies to the identity).
 * Same mode: a new reference to a itself. */
dg_status dg_array_change_mode(dg_array *a, int mode, dg_array **out, dg_error *err);

/* Copies src's values into dst (same shape and dtype, any layouts); dst's
 * chunks are overwritten, each element from one source chunk.  src REPLICA. */
dg_status dg_array_assign(dg_array *dst, dg_array *src, dg_error *err);

/* A reduction (dg_array_reduce). */
typedef struct dg_reduce_call {
    int kind;                     /* dg_reduce_kind */
    int loop;                     /* DG_RED_LOOP: a binary loop, dtypes all a's */
    unsigned char red[DG_MAXDIM]; /* 1 for each reduced axis */
    int keepdims;                 /* keep reduced axes as length 1 */
    int has_init;                 /* start every fold from init */
    unsigned char init[16];       /* in a's dtype */
    dg_array *where;              /* borrowed bool array of a's shape, or NULL */
    int lazy_mode;                /* SUM/PROD/MAX/MIN: partial results that overlap
                                     may be left in this mode; REPLICA: combine them */
} dg_reduce_call;

/* Reduces a (REPLICA) over the axes c->red: each element read once where it
 * lives, per-chunk partials combined as dg_reduce.c describes.  *out: the
 * values, in a's dtype; for DG_RED_ARGMAX / ARGMIN also *out_idx (int64):
 * the flat C-order index over the reduced axes of the element found (may be
 * NULL otherwise).  Output shape: a's with the reduced axes dropped, or kept
 * as length 1 with keepdims.  New references. */
dg_status dg_array_reduce(dg_array *a, const dg_reduce_call *c, dg_array **out,
                          dg_array **out_idx, dg_error *err);

/* The inclusive scan of a (REPLICA) along `axis` with `loop` (a binary loop,
 * dtypes all a's): a new array with a's layout.  Chunks holding the whole
 * axis scan alone; blocks tiling the axis scan alone and then fold in the
 * totals of the blocks before them; other layouts go through one of those. */
dg_status dg_array_scan(dg_array *a, int axis, int loop, dg_array **out, dg_error *err);

/* a as 1-d in C order: views of its chunks when they hold whole rows (the
 * default layout does), else through the default layout for
 * min_split_bytes.  The result shares a's buffers (a view).  New reference. */
dg_status dg_array_flatten(dg_array *a, size_t min_split_bytes, dg_array **out,
                           dg_error *err);

/* ---- host waits that can stop early (dg_wait.c) ------------------------------ */

/* Positions the host waits for, at most one per (device, stream): the
 * latest that matters there.  Owns `pos`. */
typedef struct dg_waitset {
    int n;       /* ndevices * DG_NSTREAMS */
    dg_pos *pos; /* seq 0: nothing (left) to wait for on that stream */
} dg_waitset;

/* The work a host read of `a` would queue behind: the recorded writes of
 * its buffers and all work enqueued so far on the compute streams of its
 * devices.  *w is new (dg_waitset_free it); a is borrowed. */
dg_status dg_waitset_of_array(const dg_array *a, dg_waitset *w, dg_error *err);
/* All work enqueued so far on every stream of every device; *w is new
 * (dg_waitset_free it). */
dg_status dg_waitset_all(dg_backend_i *be, dg_waitset *w, dg_error *err);
/* Waits at most about timeout_us (the backend's sync_for; without it, in
 * full) for the positions of w (borrowed): *done = 1 once all have
 * completed.  Those found complete leave w, so a loop of calls resumes where
 * one stopped.  Called without the GIL. */
dg_status dg_waitset_wait(dg_backend_i *be, dg_waitset *w, int64_t timeout_us, int *done,
                          dg_error *err);
/* Adds o's positions to w (both borrowed, of one backend): the later of
 * the two on each stream. */
void dg_waitset_merge(dg_waitset *w, const dg_waitset *o);
/* Frees what w holds (w itself is the caller's). */
void dg_waitset_free(dg_waitset *w);

#endif /* DG_ARRAY_H */
