/* How a view maps one strided chunk: basic index keys, axis permutations,
 * broadcasts and reshapes (pure functions over boxes and byte strides).
 *
 * A chunk as these functions see it is a dg_strided: its box (canonical, in
 * the array's coordinates), the byte offset of the box's first element in its
 * buffer and a byte stride per step of the box on each axis.  A view of an
 * array is an array of the same buffers whose chunks are its chunks mapped
 * here, re-expressed in the view's coordinates: boxes keep positive steps,
 * strides may be negative (an axis that runs backwards through memory) or 0
 * (a broadcast axis).  No data moves; dg_view.c builds the arrays.
 *
 * Tested apart from arrays against brute force (tests/c/test_viewmap.c). */
#ifndef DG_VIEWMAP_H
#define DG_VIEWMAP_H

#include <stdint.h>
#include "dg_box.h"
#include "dg_status.h"

/* A chunk's box and where its elements are: element p (positions per axis,
 * counted in steps of the box) is at byte offset + sum p[a] * strides[a]. */
typedef struct dg_strided {
    dg_box box;
    int64_t offset;
    int64_t strides[DG_MAXDIM];
} dg_strided;

/* One entry of a basic index key, already normalised against the shape:
 *   DG_KEY_INT   an index `start` of the next axis (0 <= start < n): the
 *                axis is dropped;
 *   DG_KEY_SLICE the `len` indices start, start + step, ... of the next axis
 *                (step non-zero, may be negative);
 *   DG_KEY_NEW   a new axis of length 1 (numpy.newaxis), consuming none. */
enum { DG_KEY_INT, DG_KEY_SLICE, DG_KEY_NEW };

typedef struct dg_key_entry {
    int kind;
    int64_t start, step, len;
} dg_key_entry;

#define DG_MAXKEY (2 * DG_MAXDIM)

/* A key that names every axis of the array it indexes, in order. */
typedef struct dg_key {
    int n;
    dg_key_entry e[DG_MAXKEY];
} dg_key;

/* Checks `key` against an array of `ndim` axes of `shape`: every axis
 * consumed once, indices and slices inside it, at most DG_MAXDIM axes in the
 * result.  Fills out_shape (the view's shape) and *out_ndim. */
dg_status dg_key_check(const dg_key *key, int ndim, const int64_t *shape, int *out_ndim,
                       int64_t *out_shape, dg_error *err);

/* The part of chunk `in` (borrowed) that the key selects, in the view's
 * coordinates, in *out: 1 if it holds any element, 0 if none (then *out is
 * unset).  `key` must have passed dg_key_check for the chunk's array. */
int dg_key_map(const dg_key *key, const dg_strided *in, dg_strided *out);

/* Chunk `in` of an array with its axes permuted: view axis a is axis
 * perm[a] (perm a permutation of 0..ndim-1). */
void dg_transpose_map(const int *perm, const dg_strided *in, dg_strided *out);

/* Chunk `in` of an array of shape (ndim, shape) broadcast to (out_ndim,
 * out_shape) as NumPy broadcasts (right-aligned; the caller has checked the
 * shapes): broadcast axes hold every index with stride 0. */
void dg_broadcast_map(int ndim, const int64_t *shape, int out_ndim, const int64_t *out_shape,
                      const dg_strided *in, dg_strided *out);

/* Chunk `in` of an array of shape (ndim, shape) as a chunk of the same
 * elements in C order in shape (out_ndim, out_shape) (of the same size, not
 * 0): 1 if its elements form a box there whose addresses keep uniform
 * strides (then *out is filled), 0 if not (the chunk cannot be a view of the
 * reshaped array: its elements must move). */
int dg_reshape_map(int ndim, const int64_t *shape, int out_ndim, const int64_t *out_shape,
                   const dg_strided *in, dg_strided *out);

#endif /* DG_VIEWMAP_H */
