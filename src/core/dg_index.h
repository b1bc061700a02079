/* Data-dependent indexing on the devices: boolean compaction, keyed gathers
 * and scatters of rows across devices, and sorts.
 *
 * Results whose size depends on the data (a[mask], nonzero) and transfers
 * whose size does (the rows a device asks of another) need counts on the
 * host: each of these operations makes its devices count first and waits
 * for the counts once (one synchronisation), then enqueues the rest.  The
 * backend's select, rows, route and sort slots do the work where the data
 * lives; DG_ERR_NOTIMPL where the backend lacks one. */
#ifndef DG_INDEX_H
#define DG_INDEX_H

#include "dg_array.h"

/* The elements of a (REPLICA, ndim >= 1) where mask (bool, a's shape,
 * REPLICA) is true, in C order, as a new 1-d array (a NULL: their flat C
 * indices, int64).  Each chunk compacts its own elements where it lives, so
 * the result's chunks are on the devices of a's chunks; a layout whose
 * chunks do not hold disjoint runs of whole rows goes through the default
 * layout for min_split_bytes first.  New reference. */
dg_status dg_array_select(dg_array *a, dg_array *mask, size_t min_split_bytes,
                          dg_array **out, dg_error *err);

/* out[i..., r...] = src[idx[i...], r...]: rows of src (REPLICA, ndim >= 1)
 * picked by idx (int64, REPLICA, every value in [0, src.shape[0])), shape
 * idx.shape + src.shape[1:], one chunk per chunk of idx on its device.  A
 * device gathers in place the rows it holds (and, for few rows, those of
 * peers it can read); the others it asks of the devices holding them: one
 * exchange group carries the row numbers there, another the rows back.
 * New reference. */
dg_status dg_array_take_rows(dg_array *src, dg_array *idx, dg_array **out, dg_error *err);

/* dst[idx[i...], r...] = vals[i..., r...] for every chunk of dst holding the
 * row (replicas too): dst REPLICA, idx int64 with values in
 * [0, dst.shape[0]), vals of dst's dtype and shape idx.shape + dst.shape[1:].
 * Rows go to the devices that hold them as take_rows brings them; a row
 * named twice gets one of its values (NumPy: the last). */
dg_status dg_array_put_rows(dg_array *dst, dg_array *idx, dg_array *vals, dg_error *err);

/* a (REPLICA) sorted along `axis`, stably, in NumPy's order: the values in
 * *out_vals and the positions along the axis they came from (int64) in
 * *out_idx (either pointer may be NULL: not computed).  Chunks that hold the
 * whole axis sort where they are; other layouts go through one that does
 * (split along another axis, else on one device).  DG_ERR_NOTIMPL where the
 * backend does not sort a's dtype.  New references; a's layout. */
dg_status dg_array_sort(dg_array *a, int axis, dg_array **out_vals, dg_array **out_idx,
                        dg_error *err);

/* ---- shared by the index operations ---------------------------------------------- */

/* Copies the n int64 values at dev_ptr[i] (device memory of device devs[i],
 * in buffers bufs[i], each written by work recorded on it) to host[i] and
 * waits for them: the one synchronisation of a data-dependent operation. */
dg_status dg_counts_to_host(dg_backend_i *be, int n, const int *devs, dg_buffer *const *bufs,
                            const int64_t *const *dev_ptr, int64_t *host, dg_error *err);

#endif /* DG_INDEX_H */
