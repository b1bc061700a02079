/* Internals shared by dg_array.c and dg_exec.c: buffers and chunk views. */
#ifndef DG_ARRAY_IMPL_H
#define DG_ARRAY_IMPL_H

#include "dg_array.h"

/* A new buffer of nbytes on dev (ptr NULL when nbytes is 0); refcnt 1. */
dg_status dg_buffer_new(dg_backend_i *be, int dev, size_t nbytes, dg_buffer **out,
                        dg_error *err);
/* Drops a reference; the last one releases the memory, stream-ordered after
 * every read and write of it. */
void dg_buffer_decref(dg_backend_i *be, dg_buffer *b);

/* Makes (dev, stream) wait before reading b: for its last write. */
dg_status dg_buffer_use_read(dg_backend_i *be, dg_buffer *b, int dev, int stream,
                             dg_error *err);
/* Makes (dev, stream) wait before writing b: for its last write and reads. */
dg_status dg_buffer_use_write(dg_backend_i *be, dg_buffer *b, int dev, int stream,
                              dg_error *err);
/* Records that the work ending at p read / wrote b. */
void dg_buffer_mark_read(dg_buffer *b, dg_pos p);
void dg_buffer_mark_write(dg_buffer *b, dg_pos p);

/* Pointer to the first element of `region` (inside c->box) and the byte
 * strides to step through region's indices.  Strides of length-1 axes are 0. */
void dg_chunk_view(const dg_chunk *c, const dg_box *region, char **ptr,
                   int64_t *strides);

/* A dg_array with room for nchunks chunks and none filled (a->nchunks = 0);
 * the caller fills chunks and counts them in a->nchunks. */
dg_status dg_array_alloc_shell(dg_backend_i *be, int dtype, int ndim,
                               const int64_t *shape, int nchunks, int mode,
                               dg_array **out, dg_error *err);

/* Where a loop reads one input region from. */
typedef struct dg_region_src {
    dg_buffer *buf; /* read from; a new reference */
    char *ptr;
    int64_t strides[DG_MAXDIM]; /* per axis of the region (0 for length 1) */
} dg_region_src;

/* Makes `region` of x (REPLICA) readable on device dev: in place when one
 * chunk there holds it all, else in a dense temporary built by the planner's
 * copies, enqueued on (dev, stream). */
dg_status dg_fetch_region(dg_array *x, const dg_box *region, int dev, int stream,
                          dg_region_src *out, dg_error *err);

/* A REPLICA copy of a (same layout) in which every chunk holds its own values
 * combined, with the binary loop `loop` (dtypes all a's), with those of every
 * other chunk over their intersection: how op modes resolve.  New reference. */
dg_status dg_array_combine(dg_array *a, int loop, dg_array **out, dg_error *err);

#endif /* DG_ARRAY_IMPL_H */
