/* Boxes: strided rectangular sets of global indices, the unit of layouts.
 *
 * A box holds, per axis, a range (start, stop, step) with step >= 1.  Boxes are
 * kept canonical so that two boxes holding the same indices compare equal:
 *   - an empty axis has stop == start and step 1;
 *   - a non-empty axis has stop == start + (n - 1) * step + 1 (tight), and
 *     step == 1 when n == 1.
 * dg_range_make and dg_box_canon establish this. */
#ifndef DG_BOX_H
#define DG_BOX_H

#include <stdint.h>
#include "dg_status.h"

#define DG_MAXDIM 32

typedef struct dg_range {
    int64_t start, stop, step;
} dg_range;

typedef struct dg_box {
    int ndim;
    dg_range r[DG_MAXDIM];
} dg_box;

/* Canonical range of the indices start, start+step, ... below stop (step>=1). */
dg_range dg_range_make(int64_t start, int64_t stop, int64_t step);

/* r0 ∩ r1, canonical (an empty result is (s, s, 1) for some s).  The inputs
 * need not be canonical. */
dg_range dg_range_intersect(dg_range r0, dg_range r1);

/* Number of indices in r. */
static inline int64_t dg_range_len(dg_range r)
{
    return r.stop > r.start ? (r.stop - r.start - 1) / r.step + 1 : 0;
}

/* Number of elements of a block of `shape` (1 for ndim 0). */
static inline int64_t dg_shape_size(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    int a;
    for (a = 0; a < ndim; a++)
        n *= shape[a];
    return n;
}

/* Dense C-order strides of a block of `shape`, elements `itemsize` apart
 * along the last axis (itemsize 1: strides in elements). */
static inline void dg_dense_strides(int ndim, const int64_t *shape, int64_t itemsize,
                                    int64_t *strides)
{
    int a;
    for (a = ndim - 1; a >= 0; a--) {
        strides[a] = itemsize;
        itemsize *= shape[a];
    }
}

/* *dst = *src, the axes src has alone (the ranges past ndim are left as
 * they were): a box is 776 bytes, most of them unused, and tables of 10^5
 * boxes are copied on every call of a layout of many chunks. */
static inline void dg_box_copy(dg_box *dst, const dg_box *src)
{
    int a;
    dst->ndim = src->ndim;
    for (a = 0; a < src->ndim; a++)
        dst->r[a] = src->r[a];
}

/* Canonicalises every axis of b in place. */
void dg_box_canon(dg_box *b);

/* The whole array of this shape: (0, shape[i], 1) on each axis. */
void dg_box_full(dg_box *b, int ndim, const int64_t *shape);

/* Number of indices in b (product of the axes' lengths; 1 for ndim 0). */
int64_t dg_box_size(const dg_box *b);

/* 1 if the boxes hold the same indices. */
int dg_box_equal(const dg_box *a, const dg_box *b);

/* 1 if every index of `inner` is in `outer`. */
int dg_box_contains(const dg_box *outer, const dg_box *inner);

/* out = a ∩ b (canonical; empty if disjoint).  Returns 1 if non-empty. */
int dg_box_intersect(const dg_box *a, const dg_box *b, dg_box *out);

/* Writes into out[0..*n) disjoint boxes whose union is a \ b, at most `cap`.
 * Returns DG_ERR_INTERNAL (through err) if more than cap pieces are needed. */
dg_status dg_box_subtract(const dg_box *a, const dg_box *b, dg_box *out,
                          int cap, int *n, dg_error *err);

/* Number of boxes dg_box_subtract(a, b, ...) writes (saturating at
 * INT64_MAX), so that a caller can size `out` before the call. */
int64_t dg_box_subtract_count(const dg_box *a, const dg_box *b);

/* Position of index `idx` (on axis `ax`) inside box b, counted in steps:
 * (idx - b->r[ax].start) / b->r[ax].step.  idx must lie in b. */
static inline int64_t dg_box_pos(const dg_box *b, int ax, int64_t idx)
{
    return (idx - b->r[ax].start) / b->r[ax].step;
}

/* ---- an index of boxes along one axis ----------------------------------- */

/* Boxes indexed by their range [start, stop) on axis `ax` (a 0-d box: [0,
 * 1)): box ids sorted by start, with the largest stop among the first i of
 * them, so that the boxes whose range meets a query's are found by a binary
 * search (the first position whose running stop passes the query's start)
 * and a scan up to the first start at or past its stop: n log n to build,
 * log n plus what it finds (and the boxes that reach over those) to query,
 * for layouts of many chunks.  Empty boxes are left out.  Owns its arrays,
 * which a later build reuses; zero it before the first build. */
typedef struct dg_box_index {
    int ax;
    int n, cap;
    int *id;          /* box ids by start */
    int64_t *start;   /* start of box id[i] on ax */
    int64_t *stop;    /* stop of box id[i] on ax */
    int64_t *maxstop; /* the largest stop of boxes id[0..i] */
} dg_box_index;

/* The axis along which the n boxes (borrowed, all of one ndim: those of one
 * array or layout) overlap least: the smallest sum of their extents over
 * the span they cover (their mean depth there); 0 for none, or for 0-d and
 * 1-d boxes without a pass over them. */
int dg_box_index_axis(const dg_box *const *boxes, int n);

/* Builds x (borrowed) over the n boxes (borrowed; box i has id i) along axis
 * ax.  DG_ERR_NOMEM if that fails (x then indexes nothing). */
dg_status dg_box_index_build(dg_box_index *x, const dg_box *const *boxes, int n, int ax,
                             dg_error *err);

/* Appends to the growable int array *ids (*n of them, room for *cap; both
 * borrowed) the ids of the boxes whose range on x->ax meets b's, in the
 * index's order (by start).  Their boxes may still miss b on other axes
 * or between their steps. */
dg_status dg_box_index_query(const dg_box_index *x, const dg_box *b, int **ids, int *n,
                             int *cap, dg_error *err);

/* Releases what x owns and zeroes it. */
void dg_box_index_free(dg_box_index *x);

/* ---- many boxes at once, n log n ---------------------------------------- */

/* A total order of boxes in which equal boxes (dg_box_equal) compare 0: by
 * ndim, empty boxes (all equal) first, then each axis's canonical (start,
 * stop, step).  For sorting boxes. */
int dg_box_cmp(const dg_box *a, const dg_box *b);

/* The groups of equal boxes (dg_box_equal) among the n boxes (borrowed):
 * rank[i] = how many boxes j < i equal box i, count[i] = how many boxes equal
 * box i, itself included (both borrowed, n each).  By one sort of the boxes,
 * for layouts of many chunks where a walk over all pairs is too slow.
 * DG_ERR_NOMEM if the sort's keys cannot be had. */
dg_status dg_box_equal_groups(const dg_box *const *boxes, int n, int *rank, int *count,
                              dg_error *err);

/* *disjoint = 1 if no two of the n boxes (borrowed) share an index, else 0
 * (found at the first pair that does), through an index along the axis of
 * least overlap (dg_box_index_axis). */
dg_status dg_boxes_disjoint(const dg_box *const *boxes, int n, int *disjoint, dg_error *err);

/* 1 if the bytes that two strided views may touch meet: view k at dk with
 * byte strides sk over shape hk, items of iszk bytes (its lowest and highest
 * byte compared, so a "may": interleaved views that share no byte count as
 * meeting). */
int dg_spans_meet(int ndim, const char *d0, const int64_t *s0, const int64_t *h0, int isz0,
                  const char *d1, const int64_t *s1, const int64_t *h1, int isz1);

#endif /* DG_BOX_H */
