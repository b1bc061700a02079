/* Host copies of one chunk at a time.
 *
 * For callers that walk an array's chunks themselves (pickling, checkpoint
 * files, Zarr): each copy names its chunk, so nothing plans over the whole
 * layout, and a walk over n chunks costs n copies.  The copies are enqueued
 * on the chunk's device; the host waits for them with dg_devices_sync
 * (dg_array.h) before it reads (to_host) or frees (from_host) the host
 * memory. */
#ifndef DG_CHUNKIO_H
#define DG_CHUNKIO_H

#include "dg_array.h"

/* Enqueues the copy of `box` (inside the box of chunk i of a) into the host
 * array `host` of box's shape (byte strides hstrides; host points at the
 * box's first element), on the chunk's device, whose entry in used[] (one
 * byte per device) it sets.  a, host and used are borrowed. */
dg_status dg_chunk_to_host(dg_array *a, int i, const dg_box *box, char *host,
                           const int64_t *hstrides, char *used, dg_error *err);

/* The other way: the host array's values into `box` of chunk i (its memory
 * first made private, copy on write).  Writes only chunk i: the caller
 * writes each chunk that holds an element (replicas too). */
dg_status dg_chunk_from_host(dg_array *a, int i, const dg_box *box, const char *host,
                             const int64_t *hstrides, char *used, dg_error *err);

#endif /* DG_CHUNKIO_H */
