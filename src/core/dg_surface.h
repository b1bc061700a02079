/* Searches and counts over distributed arrays: what NumPy's searchsorted,
 * bincount and histogram, and the order statistics of median, percentile
 * and quantile, run on (dgarray/_sortsearch.py and _stats.py give them
 * NumPy's semantics).
 *
 * Both work where the data lives and leave the step across devices to the
 * array's mode: a count is one partial per device (SUM mode), combined when
 * read; a search adds, for each chunk of values, the positions found in the
 * sequence's chunks on that chunk's device. */
#ifndef DG_SURFACE_H
#define DG_SURFACE_H

#include "dg_array.h"

/* For each element v of `v`, how many elements of the 1-d sorted `seq`
 * order before it (right 0) or not after it (right 1), in NumPy's order
 * (dg_search_desc): int64, laid out as v, in `mode` (DG_MODE_REPLICA or
 * DG_MODE_SUM).  Chunk i of the result holds, for chunk i of v, the sum of
 * the counts in the chunks of seq on the same device (none: 0); the caller
 * lays the two out so that this is the answer: seq whole on every device of
 * v (REPLICA), or seq in disjoint chunks and v whole on each of their
 * devices (SUM).  seq and v have one dtype, REPLICA mode.  New reference. */
dg_status dg_array_search(dg_array *seq, dg_array *v, int right, int mode, dg_array **out,
                          dg_error *err);

/* What a count asks (dg_count_desc): the mode (DG_COUNT_*), the bins, the
 * radix digit, and for DG_COUNT_EDGES the edges (a 1-d REPLICA array of
 * nbins + 1 elements of x's dtype, borrowed; fetched to each device). */
typedef struct dg_count_spec {
    int64_t nbins;
    int radix;
    int shift, pshift;
    uint64_t prefix;
    int nprefix; /* 2: a radix count under prefix and prefix2 (dg_count_desc) */
    uint64_t prefix2;
    dg_array *edges;
    /* counts without weights (not DG_COUNT_SQUARES): each device's bins
     * apart in a REPLICA result of k * nbins, the j-th device's (of k, in
     * the order of x's chunks) at [j nbins, (j + 1) nbins), for the reader
     * to sum: no combine across devices before a host read */
    int apart;
} dg_count_spec;

/* Counts of the elements of x into spec->nbins bins (dg_count_desc: x holds
 * int64 bin numbers; values binned by their order keys, or by edges), or the
 * sums of their float64 weights w (x's shape, any layout: each chunk's
 * weights are read where that chunk's device holds them, else fetched
 * there; NULL: counts), or partial sums of their squares (DG_COUNT_SQUARES):
 * a 1-d int64 (float64 with weights or squares) array of nbins elements, one
 * chunk of all the bins on each device holding elements, in SUM mode where
 * they are several.  x's chunks may overlap: each element is counted once,
 * by one chunk holding it (copies of a block share it out).  x and w
 * REPLICA.  New reference. */
dg_status dg_array_count(dg_array *x, dg_array *w, const dg_count_spec *spec, dg_array **out,
                         dg_error *err);

/* The elements of x (REPLICA, a bool, integer or float dtype) whose order
 * key k (kernels/dg_order.h) has lo <= (k >> pshift) <= hi, gathered where
 * they live (the pieces of x that dg_array_count counts, each element once)
 * in no defined order, each piece's followed by copies of `pad` (a value of
 * x's dtype, 16 bytes, whose key is not under lo .. hi) up to min(the
 * piece's size, cap) places: a 1-d REPLICA array whose length is known
 * before the gathering runs, so that no count comes to the host.  `cap`
 * must be at least how many elements are under lo .. hi (the counts that
 * chose the prefixes say it): more are written past the places.  What a
 * radix selection narrows to, for its later counts to read alone (they
 * count under the prefixes, so the padding is never counted).  New
 * reference.
 *
 * With `bins` (int64 counts of nbins = its length, any mode: combined on
 * the devices, each the count of one prefix at pshift, in key order) lo and
 * hi are not these but the bins that hold ranks rank[0] <= rank[1] of the
 * counted keys (dg_select_desc.bins), found on each device from the bins
 * there: the gathering is enqueued behind the count that chose it, no host
 * wait between.  Then each piece's first places hold what it kept, at most
 * min(its size, cap) of them, the rest pad (where pad is not NULL: the
 * caller cannot know whether its key is under the bins), and *counts (new
 * reference, NULL not to ask) gets how many it kept (more than its places
 * where some were left out): an int64 array of one element a piece, on the
 * piece's device, in the order of the result's chunks.  `bins` may hold
 * several sets of nbins counts one after another (nbins > 0; 0: bins is
 * one set), each device's own (dg_count_spec.apart): a bin's count is their
 * sum, found on each device with no combine across devices before (each
 * device fetches the others' sets).  With `whole`, where the ranks' bins
 * hold more than cap keys in all, no piece reads x and each count is that
 * total (dg_select_desc.whole): a gathering that keeps all or nothing.
 * Where q is not NULL, the ranks are not rank[] but those about quantile *q
 * of the keys counted outside the last bin (dg_select_desc.rest: the middle
 * of a float's numbers, its NaNs in the last bin of the first digit). */
dg_status dg_array_keep_keys(dg_array *x, int pshift, uint64_t lo, uint64_t hi, int64_t cap,
                             const unsigned char pad[16], dg_array *bins, int64_t nbins,
                             const int64_t rank[2], const double *q, int whole,
                             dg_array **out, dg_array **counts, dg_error *err);

/* CuPy's rule for an op-mode array made from one value per element (every
 * chunk holding a copy of its block): the first chunk holding an element
 * keeps it, each later one gets `value` (the mode's identity, 16 bytes in
 * a's dtype) there, so that the chunks combine to the values.  In place. */
dg_status dg_array_keep_first(dg_array *a, const unsigned char value[16], dg_error *err);

/* A new REPLICA array of one chunk on device dev holding a copy of another
 * library's array at `src` (memory dgarray does not own, addressable on
 * dev: DLPack's producers), read with `byte_strides` (any sign); waits for
 * the copy, so that the producer may release src when this returns.  The
 * producer's writes to src must be complete.  New reference. */
dg_status dg_array_from_external(dg_backend_i *be, int dev, int dtype, int ndim,
                                 const int64_t *shape, const char *src,
                                 const int64_t *byte_strides, dg_array **out, dg_error *err);

/* A new REPLICA array of one chunk on chunk i's device holding a copy of
 * chunk i's elements (its box's shape; in op modes the chunk's partial
 * values), ordered after the chunk's pending writes (DLPack's copy=True of
 * one chunk).  DG_ERR_INDEX for no chunk i.  New reference in *out. */
dg_status dg_array_chunk_copy(dg_array *a, int i, dg_array **out, dg_error *err);

/* The memory of a's chunk 0, lent to another library (DLPack's
 * __dlpack__): its first element and byte strides over a's shape.  a must
 * be REPLICA with chunk 0 holding all of it (else DG_ERR_VALUE); a's
 * pending writes are complete on return and, unless readonly, its memory
 * is its own (copy on write done), so writes through the pointer reach a
 * alone.  The pointer lives as long as a's chunk 0. */
dg_status dg_array_lend(dg_array *a, int readonly, char **ptr, int64_t *byte_strides,
                        dg_error *err);

/* The memory of a's chunk i (any mode), lent to code that runs on it where
 * it lives (users' kernels, dgarray/_user_kernels.py): its first element and
 * byte strides over the chunk's box.  a's pending writes are complete on
 * return and, unless readonly, its memory is its own (copy on write done).
 * The pointer lives as long as a's chunk i.  DG_ERR_INDEX for no chunk i. */
dg_status dg_array_lend_chunk(dg_array *a, int i, int readonly, char **ptr,
                              int64_t *byte_strides, dg_error *err);

#endif /* DG_SURFACE_H */
