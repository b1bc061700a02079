/* Internals shared by the core's array operations: chunk views, moves,
 * regions fetched for a loop, combines.  Buffers and the enqueueing of device
 * work on them: dg_enqueue.h. */
#ifndef DG_ARRAY_IMPL_H
#define DG_ARRAY_IMPL_H

#include "dg_array.h"
#include "dg_enqueue.h"

/* Pointer to the first element of `region` (inside c->box) and the byte
 * strides to step through region's indices.  Strides of length-1 axes are 0. */
void dg_chunk_view(const dg_chunk *c, const dg_box *region, char **ptr,
                   int64_t *strides);

/* A dg_array with room for nchunks chunks, zeroed, and none filled
 * (a->nchunks = 0); the caller fills chunks and counts them in a->nchunks. */
dg_status dg_array_alloc_shell(dg_backend_i *be, int dtype, int ndim,
                               const int64_t *shape, int nchunks, int mode,
                               dg_array **out, dg_error *err);

/* ---- moves (dg_move.c) ---------------------------------------------------- */

/* One copy of a move: `shape` elements from a view of src_buf on src_dev to
 * a view of dst_buf on dst_dev (byte strides; buffers borrowed).  Phase 0
 * copies read arrays outside the move; phase 1 copies read what phase 0
 * copies wrote, and run after them. */
typedef struct dg_move_item {
    int itemsize;
    int ndim;
    int64_t shape[DG_MAXDIM];
    int src_dev;
    dg_buffer *src_buf;
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    int dst_dev;
    dg_buffer *dst_buf;
    char *dst;
    int64_t dst_strides[DG_MAXDIM];
    int phase;
} dg_move_item;

/* A batch of copies, run together by
 * dg_move_run: copies within a device on its compute stream, copies between
 * devices as one exchange group on the transfer streams, packed and
 * unpacked where a view is not dense.  Owns `items`. */
typedef struct dg_move {
    dg_backend_i *be;
    int n, cap;
    dg_move_item *items;
} dg_move;

void dg_move_init(dg_move *m, dg_backend_i *be);
/* Appends a copy (of no element: nothing). */
dg_status dg_move_add(dg_move *m, const dg_move_item *it, dg_error *err);
/* Makes room for n copies in all (a move of 10^5 copies grown by doubling
 * copies its 800-byte items over and over). */
dg_status dg_move_reserve(dg_move *m, int n, dg_error *err);
/* The copy of the elements `box` (global indices inside both chunks' boxes)
 * of `itemsize` bytes from chunk src to chunk dst, phase 0. */
void dg_move_item_view(dg_move_item *it, int itemsize, const dg_chunk *src, const dg_box *box,
                       const dg_chunk *dst);
/* Enqueues every copy and records in the buffers what read and wrote them
 * (writes as part writes: the copies of one move write disjoint elements).
 * The buffers must live until the call returns; the work may still run. */
dg_status dg_move_run(dg_move *m, dg_error *err);
/* 1 if dg_move_run sends copy i of m through the backend's exchange group
 * (a copy between devices not small enough for a peer copy). */
int dg_move_by_exchange(const dg_move *m, int i);
/* Runs m's copies (phase 0 only) as one group, each on the compute stream of
 * its source device (on_src) or of its destination, reading and writing the
 * other device's memory in place: for devices that share one memory
 * (dg_be_gemm_wide), where the copies from many devices (or into many) run
 * at once, each on its own device's worker, and none goes through the
 * exchange.  Accesses recorded as dg_move_run records them. */
dg_status dg_move_run_shared(dg_move *m, int on_src, dg_error *err);
void dg_move_free(dg_move *m);

/* The end of a call that fills a new array r by one move: runs m where st
 * is DG_OK, frees m, and hands r to *out, or drops r and returns the error. */
dg_status dg_move_finish(dg_move *m, dg_status st, dg_array *r, dg_array **out, dg_error *err);

/* Counts a loop on dev reading `region` of x in place from chunk c. */
void dg_count_peer_read(const dg_array *x, const dg_chunk *c, const dg_box *region, int dev);
/* The bytes such a read takes from a peer (0 where c is on dev), and their
 * count for a caller that adds them up first. */
int64_t dg_peer_read_bytes(const dg_array *x, const dg_chunk *c, const dg_box *region, int dev);
void dg_count_peer_bytes(int64_t bytes);

/* Where a loop reads one input region from. */
typedef struct dg_region_src {
    dg_buffer *buf; /* read from; a new reference */
    char *ptr;
    int64_t strides[DG_MAXDIM]; /* per axis of the region (0 for length 1) */
} dg_region_src;

/* The chunk of x from which a loop on `dev` reads `region` in place, or
 * NULL in *out: one on dev holding it all, else one on a device dev can
 * access that holds it all, when the region is small (dg_peer_read_bytes). */
dg_status dg_find_source(dg_array *x, const dg_box *region, int dev, const dg_chunk **out);

/* Makes `region` of x (REPLICA) readable on device dev: in place where
 * dg_find_source finds it, else in a dense temporary on dev filled by a move
 * of the planner's copies (readers wait for its writes; `stream` is the
 * reader's). */
dg_status dg_fetch_region(dg_array *x, const dg_box *region, int dev, int stream,
                          dg_region_src *out, dg_error *err);
/* The same, never reading in place on another device: for operands a kernel
 * reads many times (a matrix product's), which a peer would serve over the
 * link every time. */
dg_status dg_fetch_region_local(dg_array *x, const dg_box *region, int dev, int stream,
                                dg_region_src *out, dg_error *err);
/* dg_fetch_region_local whose copies join `batch` instead of running: the
 * caller runs the batch (one exchange group for many fetches, so that
 * transfers in both directions fly at once), or frees it unrun on error. */
dg_status dg_fetch_region_batch(dg_array *x, const dg_box *region, int dev, dg_move *batch,
                                dg_region_src *out, dg_error *err);

/* Drops the length-1 axes of an elementwise loop and merges neighbouring
 * axes along which every operand is dense, so that contiguous work becomes
 * one long axis. */
void dg_ew_coalesce(dg_ew_desc *d);

/* A REPLICA copy of a (same layout) in which every chunk holds its own values
 * combined, with the binary loop `loop` (dtypes all a's), with those of every
 * other chunk over their intersection: how op modes resolve.  New reference. */
dg_status dg_array_combine(dg_array *a, int loop, dg_array **out, dg_error *err);
/* The same combined values held once, on the device of a's first chunk,
 * where every chunk of a holds the same box (dg_array_combine otherwise).
 * New reference. */
dg_status dg_array_combine_one(dg_array *a, int loop, dg_array **out, dg_error *err);
/* Partials of argmax / argmin (kind DG_RED_ARGMAX or ARGMIN): values v and
 * their indices ix, whose chunks hold the same box on distinct devices that
 * cannot all read the first one's (a job's processes), combined by the
 * backend's all-reduce of (value, index) pairs: every chunk of *vout and
 * *iout (v's and ix's layouts) gets the pair argmax / argmin picks, every
 * process holding the result on its own devices.  DG_ERR_NOTIMPL (err
 * untouched, nothing made) for other layouts, or where the backend has no
 * such all-reduce.  New references. */
dg_status dg_array_combine_arg(dg_array *v, dg_array *ix, int kind, dg_array **vout,
                               dg_array **iout, dg_error *err);

/* 1 if every non-empty chunk of a holds axis ax whole (in order, step 1):
 * where a scan, a sort or an FFT along ax runs chunk by chunk. */
int dg_array_axis_whole(const dg_array *a, int ax);

/* Enqueues cp, a copy between chunk c and the host that accesses c's buffer
 * as `how` says (DG_ACC_READ to the host, DG_ACC_WRITE from it), on c's
 * device's compute stream (dg_hostcopy.c); adds its bytes to *nbytes (if not
 * NULL) and sets c's device in used[], even on failure (the host waits for
 * it, dg_devices_sync). */
dg_status dg_chunk_host_copy(dg_backend_i *be, const dg_chunk *c, const dg_copy_desc *cp,
                             unsigned how, char *used, int64_t *nbytes, dg_error *err);

#endif /* DG_ARRAY_IMPL_H */
