/* Views: arrays whose chunks share the buffers of another array's chunks.
 *
 * Basic indexing, axis permutations, broadcasts and reshapes (where the
 * layout allows) make a new dg_array whose chunks are the base's chunks
 * mapped by dg_viewmap.h into the view's coordinates, holding the same
 * dg_buffers (refcnt++).  No data moves, and a write through the view is a
 * write into the base: both name the same buffer identity, so copy on write
 * (dg_array_unshare) gives them a private copy together.  A view keeps its
 * base's mode; a broadcast view, and every view of one, is read-only. */
#ifndef DG_VIEW_H
#define DG_VIEW_H

#include "dg_array.h"
#include "dg_viewmap.h"

/* a[key] for a basic key that names every axis of a (dg_key_check).  New
 * reference; a is borrowed. */
dg_status dg_array_view(dg_array *a, const dg_key *key, dg_array **out, dg_error *err);

/* a with its axes permuted: axis i of the view is axis perm[i] of a.  New
 * reference. */
dg_status dg_array_transpose(dg_array *a, const int *perm, dg_array **out, dg_error *err);

/* a broadcast to (ndim, shape) as NumPy broadcasts (ValueError naming both
 * shapes if it does not); read-only.  New reference. */
dg_status dg_array_broadcast(dg_array *a, int ndim, const int64_t *shape, dg_array **out,
                             dg_error *err);

/* a's elements seen as `dtype`.  part 1: a part of each element, at
 * `byte_offset` bytes into it (which must hold it): the real (offset 0) or
 * imaginary part (offset half the size) of complex elements; same boxes and
 * byte strides.  part 0 (byte_offset 0): the same bytes read as another
 * dtype: of the same size (same boxes and strides), or of another size, the
 * last axis then holding more or fewer elements (NumPy's view; it must be
 * contiguous in every chunk, and, for a larger size, every chunk must hold
 * whole new elements).  A view like the others.  New reference. */
dg_status dg_array_view_dtype(dg_array *a, int dtype, int64_t byte_offset, int part,
                              dg_array **out, dg_error *err);

/* a's elements in C order in (ndim, shape) (of a's size): a view where every
 * chunk of a maps to a box of the new shape (*is_view = 1), else a new array
 * whose elements moved as few times as the layouts allow: through a's
 * flattening (dg_array_flatten) and, where its chunks do not fall on whole
 * rows of the new shape, a 1-d reshard to the default layout of the new
 * shape for min_split_bytes (*is_view = 0).  New reference. */
dg_status dg_array_reshape(dg_array *a, int ndim, const int64_t *shape, size_t min_split_bytes,
                           dg_array **out, int *is_view, dg_error *err);

/* dg_array_reshape where it is a view: *out = NULL (no error) where a's
 * chunks do not map to boxes of the new shape; nothing moves.  New
 * reference. */
dg_status dg_array_reshape_view(dg_array *a, int ndim, const int64_t *shape, dg_array **out,
                                dg_error *err);

/* 1 if an elementwise loop writing `out` while reading `in` in place could
 * read elements it already wrote: a chunk of each uses the same buffer but
 * not as the very same view (box, offset and strides). */
int dg_array_overlaps(const dg_array *in, const dg_array *out);

#endif /* DG_VIEW_H */
