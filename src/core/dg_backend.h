/* The backend interface: one function table per backend (cpu, cuda).
 *
 * Core code calls only through this table and never asks which backend runs.
 * Callers hold an opaque `dg_backend_i *`; the slots are for backend
 * implementations, which fill them, and for the dispatch file
 * (dg_backend.c), which alone calls them: the rest of the core and the
 * binding call the wrappers dg_be_<slot> declared at the end of this header.
 * Every slot states its contract in one line; slots marked OPTIONAL may be
 * NULL, and the wrapper then gives the default that the slot's comment
 * names (a fallback, or DG_ERR_NOTIMPL).
 *
 * Devices are numbered 0..ndevices-1.  DG_HOST (-1) names host memory in a
 * copy.  Each device has DG_NSTREAMS ordered queues ("streams"): work enqueued
 * on one stream runs in order; work on different streams or devices is ordered
 * only by `wait`.  A dg_pos names a point in one stream (the last work enqueued
 * at the time it was taken); seq 0 means "nothing" and is always complete.
 *
 * Memory from `alloc` is stream-ordered on the device's compute stream: it may
 * be used by work enqueued on that stream after the alloc, or on another stream
 * after that stream waited for a pos taken after the alloc.  `release` is
 * stream-ordered too: the memory returns to the pool once the work enqueued
 * before it on the compute stream has run.  The core makes the compute stream
 * wait for every other stream that used the memory before it releases it. */
#ifndef DG_BACKEND_H
#define DG_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "dg_box.h"
#include "dg_comm.h"
#include "dg_dense.h"
#include "dg_dtype.h"
#include "dg_fft.h"
#include "dg_fused.h"
#include "dg_gemm.h"
#include "dg_status.h"

#define DG_BACKEND_VERSION 9
#define DG_HOST (-1)
#define DG_MAXOPS 5 /* operands of one loop: nin + nout <= 4, plus the where mask */

enum { DG_STREAM_COMPUTE = 0, DG_STREAM_TRANSFER = 1, DG_NSTREAMS = 2 };

typedef struct dg_pos {
    int32_t dev;
    int32_t stream;
    uint64_t seq; /* 0: nothing to wait for */
} dg_pos;

/* One elementwise loop over an N-d strided iteration space.
 * Operands 0..nin-1 are inputs, nin..nop-1 outputs, in the loop's dtypes
 * (dg_loops[loop].dtypes).  An input whose data pointer is NULL is a scalar
 * whose value is in scalar[i] (stored as the loop's dtype).  Strides are in
 * bytes and may be 0 (broadcast) or negative.  Where `where` is non-NULL, an
 * output element is written only where the mask (dg_bool) is non-zero. */
typedef struct dg_ew_desc {
    int loop;
    int ndim;
    int64_t shape[DG_MAXDIM];
    int nop;
    char *data[DG_MAXOPS];
    int64_t strides[DG_MAXOPS][DG_MAXDIM];
    unsigned char scalar[DG_MAXOPS][16];
    const dg_bool *where;
    int64_t where_strides[DG_MAXDIM];
} dg_ew_desc;

/* A strided N-d copy of `shape` elements of `itemsize` bytes.  Either side may
 * be host memory (dev DG_HOST); strides are in bytes. */
typedef struct dg_copy_desc {
    int ndim;
    int64_t shape[DG_MAXDIM];
    int itemsize;
    int src_dev;
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    int dst_dev;
    char *dst;
    int64_t dst_strides[DG_MAXDIM];
} dg_copy_desc;

/* The copy of n bytes from src on src_dev to dst on dst_dev, as one dense run. */
static inline dg_copy_desc dg_copy_bytes(int src_dev, const void *src, int dst_dev, void *dst,
                                         size_t n)
{
    dg_copy_desc c;
    memset(&c, 0, sizeof c);
    c.ndim = 1;
    c.itemsize = 1;
    c.shape[0] = (int64_t)n;
    c.src_strides[0] = c.dst_strides[0] = 1;
    c.src_dev = src_dev;
    c.src = (const char *)src;
    c.dst_dev = dst_dev;
    c.dst = (char *)dst;
    return c;
}

typedef enum dg_fill_kind {
    DG_FILL_CONST,  /* every element = value */
    DG_FILL_ARANGE, /* 1-d: element with global index i = value + i * delta,
                       computed in the dtype as NumPy's arange fill does */
    DG_FILL_EYE,    /* 2-d: element (i, j) = value if j - i == k, else 0 */
    DG_FILL_RANDOM  /* N-d: a draw of distribution rnd.dist for the element's
                       flat index (dg_fill_random) */
} dg_fill_kind;

/* The distributions of a DG_FILL_RANDOM fill (dg_fill_random.dist). */
typedef enum dg_rand_dist {
    DG_RAND_UNIFORM,  /* float32/float64: a + b * u, u uniform in [0, 1) */
    DG_RAND_NORMAL,   /* float32/float64: a + b * z, z standard normal */
    DG_RAND_INTEGERS  /* integer or bool dtypes: lo + an unbiased draw from
                         [0, range) (range 0 meaning 2^64), wrapped to the dtype */
} dg_rand_dist;

/* A DG_FILL_RANDOM fill: the value of the element whose flat (C-order)
 * index in gshape is i is a pure function of (key, stream, i, dist and its
 * parameters, dtype), computed from Philox4x32-10 keyed by `key` at counters
 * (i / E, stream, attempt) (kernels/dg_random.h says how), so that it does
 * not depend on which chunk, device or backend computes it.  Bits 56-63 of
 * `stream` select the words of a redraw (attempt).  INTEGERS with a dtype of
 * at most 4 bytes take range in [1, 2^32]. */
typedef struct dg_fill_random {
    int dist;
    uint32_t key[2];
    uint64_t stream;
    double a, b;     /* UNIFORM: low, high - low; NORMAL: loc, scale */
    uint64_t lo;     /* INTEGERS: the lowest value (two's complement) */
    uint64_t range;  /* INTEGERS: how many values (0: 2^64) */
} dg_fill_random;

/* Fills a strided N-d block.  Global index of the element at position p on
 * axis a is origin[a] + p * gstep[a] (used by ARANGE, EYE and RANDOM). */
typedef struct dg_fill_desc {
    int kind;
    int dtype;
    int ndim;
    int64_t shape[DG_MAXDIM];
    char *dst;
    int64_t strides[DG_MAXDIM];
    unsigned char value[16];
    unsigned char delta[16];
    int64_t origin[DG_MAXDIM];
    int64_t gstep[DG_MAXDIM];
    int64_t k;
    int64_t gshape[DG_MAXDIM]; /* RANDOM: the array's global shape */
    dg_fill_random rnd;        /* RANDOM */
} dg_fill_desc;

/* What a reduction computes (dg_reduce_desc.kind). */
typedef enum dg_reduce_kind {
    DG_RED_LOOP,   /* fold with a binary elementwise loop */
    DG_RED_ARGMAX, /* the largest value and its position */
    DG_RED_ARGMIN  /* the smallest value and its position */
} dg_reduce_kind;

/* A reduction of an N-d strided input over its last `nred` dims (the caller
 * orders the dims so) into an output over the first ndim - nred ("kept")
 * dims, which may be none (one output element).  Strides are in bytes.
 *   DG_RED_LOOP: `loop` is a binary loop of DG_LOOP_LIST whose three dtypes
 *     are all `dtype`; dst[m] = the loop folded over the reduced elements of
 *     m, in any order and grouping (the core only asks for loops that are
 *     associative and commutative up to rounding), starting from `init` when
 *     has_init, else from one of the elements (every reduced extent is then
 *     >= 1).  With `where`, elements whose mask byte is 0 take no part
 *     (has_init is then set).
 *   DG_RED_ARGMAX / DG_RED_ARGMIN: dst[m] (of `dtype`) = the largest /
 *     smallest reduced element, NaN counting as beyond every number (the
 *     first NaN wins; complex compared as NumPy does, real part first);
 *     idx[m] (int64) = idx_base + sum over the reduced dims r of
 *     pos_r * idx_gstride[r] for the element found; among equal candidates
 *     the smallest such value.
 *     Every reduced extent is >= 1.
 * An output element with no reduced element (a reduced extent of 0) gets
 * `init`. */
typedef struct dg_reduce_desc {
    int kind;
    int loop;
    int dtype;
    int ndim;
    int nred;
    int64_t shape[DG_MAXDIM];
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    char *dst;
    int64_t dst_strides[DG_MAXDIM]; /* the kept dims */
    int64_t *idx;
    int64_t idx_strides[DG_MAXDIM]; /* the kept dims */
    int64_t idx_gstride[DG_MAXDIM]; /* the reduced dims (index ndim - nred + r) */
    const dg_bool *where;
    int64_t where_strides[DG_MAXDIM];
    int has_init;
    unsigned char init[16];
    /* ARGMAX / ARGMIN: when set, the index of each element is read here
     * (int64, byte strides over all dims) instead of computed from its
     * position: how partial (value, index) pairs are combined. */
    const int64_t *idx_in;
    int64_t idx_in_strides[DG_MAXDIM];
    /* ARGMAX / ARGMIN without idx_in: added to every index written for an
     * element found (the offset of a chunk in the whole array). */
    int64_t idx_base;
    /* The passes to run (a backend with reduce_parts; else always WHOLE):
     *   DG_RED_WHOLE: the reduction above.
     *   DG_RED_PARTS: the first pass alone, for a stack of partials on one
     *     device folded later by a FOLD: the outputs' partial results go to
     *     rows part_row, part_row + 1, ... (as many as reduce_parts says) of
     *     [rows][m] arrays, m the outputs in C order over the kept dims:
     *     values (dtype) at part, indices (argmax / argmin, idx_base added)
     *     at part_idx, and at part_have a byte, 0 where the row's part
     *     reduced no element.  init is not folded in.  The stack may be on
     *     a device that dev can access (dg_backend_i.can_access); there is
     *     neither where nor idx_in, and every reduced extent is >= 1.
     *   DG_RED_FOLD: the last pass alone: dst (and idx) = the rows
     *     0 .. part_rows - 1 of such a stack folded in that order (argmax /
     *     argmin: the smallest index among equal values), from init where
     *     has_init; init where no row has a value.  nred is 0; src unused. */
    int pass;
    char *part;
    int64_t *part_idx;
    unsigned char *part_have;
    int64_t part_row, part_rows;
} dg_reduce_desc;

enum { DG_RED_WHOLE, DG_RED_PARTS, DG_RED_FOLD };

/* An inclusive scan along the last dim of an N-d strided block, with a
 * binary loop of DG_LOOP_LIST whose three dtypes are all `dtype`:
 * dst[r, j] = src[r, 0] op src[r, 1] op ... op src[r, j], folded in that
 * order (j ascending), for every row r over the first ndim - 1 dims; with
 * `carry` (a value per row, byte strides carry_strides over the first
 * ndim - 1 dims), the fold starts from carry[r]: dst[r, 0] = carry[r] op
 * src[r, 0].  dst may be src itself (same pointer and strides). */
typedef struct dg_scan_desc {
    int loop;
    int dtype;
    int ndim;
    int64_t shape[DG_MAXDIM];
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    char *dst;
    int64_t dst_strides[DG_MAXDIM];
    const char *carry;
    int64_t carry_strides[DG_MAXDIM];
} dg_scan_desc;

/* One transfer of a dense run of bytes from one device to another
 * (dg_backend_i.exchange). */
typedef struct dg_xfer {
    int src_dev;
    const void *src;
    int dst_dev;
    void *dst;
    size_t nbytes;
} dg_xfer;

/* [multihost] One transfer between processes (dg_backend_i.transport): the
 * local device `dev` (the backend's own numbering) sends (send 1) nbytes at
 * ptr to, or receives them from, device `peer_dev` of process `peer`; src_gdev
 * and dst_gdev are the job's (global) numbers of the sending and receiving
 * devices, which name the message (the same pair's messages keep their
 * order). */
typedef struct dg_pxfer {
    int send;
    int dev;
    void *ptr;
    size_t nbytes;
    int peer;
    int src_gdev, dst_gdev;
} dg_pxfer;

/* An all-reduce (dg_backend_i.allreduce): on each of the n distinct devices
 * devs[i], dst[i][e] = src[0][e] op src[1][e] op ... op src[n-1][e] for the
 * `count` elements of `dtype`, op being DG_ALLRED_SUM, PROD, MAX or MIN
 * (NumPy's add, multiply, maximum, minimum), or DG_ALLRED_LOOP: any binary
 * loop (dtype, dtype) -> dtype, `loop` (a job's backend folds any loop; the
 * others return DG_ERR_NOTIMPL for it).  `loop` is op's loop for the four
 * ops too.  dst[i] may be src[i].
 * DG_ALLRED_ARGMAX / ARGMIN: (value, index) pairs, the int64 indices at
 * src_idx[i] and dst_idx[i] beside the values (NULL for the other ops):
 * (dst[i][e], dst_idx[i][e]) = the pair argmax / argmin picks among the n
 * pairs (src[k][e], src_idx[k][e]) (dg_reduce_desc's order: a NaN first,
 * then the larger / smaller value, the smallest index among equal ones);
 * `loop` unused.  Where flags have DG_BE_ARG_ALLRED (a job's backend); the
 * others return DG_ERR_NOTIMPL. */
enum {
    DG_ALLRED_SUM,
    DG_ALLRED_PROD,
    DG_ALLRED_MAX,
    DG_ALLRED_MIN,
    DG_ALLRED_LOOP,
    DG_ALLRED_ARGMAX,
    DG_ALLRED_ARGMIN
};
typedef struct dg_allreduce_desc {
    int n;
    const int *devs;
    const void *const *src;
    void *const *dst;
    int64_t count;
    int dtype;
    int op;
    int loop;
    const int64_t *const *src_idx;
    int64_t *const *dst_idx;
} dg_allreduce_desc;

/* Compaction (dg_backend_i.select): the elements of an N-d strided block
 * whose mask byte is non-zero, in C order of the block, written densely to
 * dst: their values (itemsize bytes each, from src) or, when src is NULL,
 * their indices as int64: base + sum over the axes of pos[a] * gstride[a].
 * How many were written goes to *count (one int64 in device memory).
 * With `keyed` (bool, integer and float dtypes; src required, mask unused)
 * the elements selected are those whose order key k (dg_order_key of
 * `dtype`, kernels/dg_order.h) has lo <= (k >> pshift) <= hi (pshift < 64):
 * a radix selection's elements under the prefixes it narrowed to, in any
 * order (the CUDA backend appends them unordered; a radix selection reads
 * only their set).  Keyed, at most `cap` of them are written where cap > 0
 * (*count still counts them all); and where `bins` is not NULL (nbins int64
 * counts in device memory, in key order, each the count of one prefix at
 * pshift), lo and hi are not the desc's but the numbers of the bins that
 * hold ranks rank[0] <= rank[1] of the counted keys (the bin b where the
 * counts before it sum to at most the rank and with it to more; the last
 * bin where the rank is past them all): the elements under the prefixes of
 * the ranks, chosen on the device from a count not yet read by the host.
 * The bins may be nparts sets of nbins one after another (nparts >= 1;
 * 0 reads as 1), each device's own count: a bin's count is the sum of its
 * nparts.  With `whole`, where the bins from the lower rank's to the higher
 * rank's hold more than cap keys in all (over every part), nothing is read
 * or written and *count gets that total (more than cap: the caller knows
 * that nothing was kept).  Where part[0] is not NULL, set p of the bins
 * (p < nparts <= DG_SELECT_PARTS) is the nbins dense counts at part[p]
 * instead of at bins + p nbins, read in place (on the work's device or on
 * one it can access: dg_backend_i.can_access); bins is then part[0].
 * With `rest` (and bins), the ranks are not rank[] but those about quantile
 * q of the keys counted outside the last bin (dg_order_rest_ranks: a
 * NaN-skipping median's middle pair, q 0.5, where the last bin holds the
 * NaNs), found on the device from the same bins. */
#define DG_SELECT_PARTS 16
typedef struct dg_select_desc {
    int ndim;
    int64_t shape[DG_MAXDIM];
    int itemsize;
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    const dg_bool *mask;
    int64_t mask_strides[DG_MAXDIM];
    int64_t base;
    int64_t gstride[DG_MAXDIM];
    char *dst;
    int64_t *count;
    int keyed, dtype, pshift;
    uint64_t lo, hi;
    int64_t cap;
    const int64_t *bins;
    int64_t nbins, rank[2];
    int64_t nparts;
    int whole;
    const int64_t *part[DG_SELECT_PARTS];
    int rest;
    double q;
} dg_select_desc;

/* Keyed copies of rows (dg_backend_i.rows).  For each j < n whose key[j]
 * lies in the range (start, stop, step), with r = (key[j] - start) / step:
 * a gather (scatter 0) copies src row r to dst row j, a scatter src row j to
 * dst row r; keys outside the range are skipped.  A row is an N-d block of
 * `shape` (ndim may be 0: one element) of itemsize-byte elements at byte
 * strides src_strides / dst_strides; row i of a side starts at its pointer
 * plus i times its rstride.  Keys are int64 in device memory, dense.  When a
 * scatter names one dst row twice, one of the rows written wins. */
typedef struct dg_rows_desc {
    int scatter;
    int64_t n;
    const int64_t *key;
    int64_t start, stop, step;
    int itemsize;
    int ndim;
    int64_t shape[DG_MAXDIM];
    const char *src;
    int64_t src_rstride;
    int64_t src_strides[DG_MAXDIM];
    char *dst;
    int64_t dst_rstride;
    int64_t dst_strides[DG_MAXDIM];
} dg_rows_desc;

/* Routing (dg_backend_i.route): for each j < n, in order, whose key[j] lies
 * in the range (start, stop, step): rows[k] = (key[j] - start) / step and
 * pos[k] = j, k counting them from 0; how many to *count (int64 in device
 * memory).  rows and pos have room for n. */
typedef struct dg_route_desc {
    int64_t n;
    const int64_t *key;
    int64_t start, stop, step;
    int64_t *rows;
    int64_t *pos;
    int64_t *count;
} dg_route_desc;

/* Sorting (dg_backend_i.sort): every row along the last dim of an N-d
 * strided block sorted stably in NumPy's order (NaN after every number,
 * -0.0 equal to 0.0, complex by real part then imaginary part, NaN parts
 * last): the sorted values to dst and the positions along the row they came
 * from (int64) to idx; either may be NULL.  dst must not overlap src. */
typedef struct dg_sort_desc {
    int dtype;
    int ndim;
    int64_t shape[DG_MAXDIM];
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    char *dst;
    int64_t dst_strides[DG_MAXDIM];
    int64_t *idx;
    int64_t idx_strides[DG_MAXDIM];
} dg_sort_desc;

/* Binary searches (dg_backend_i.search): for each element v of an N-d
 * strided block of values, how many elements of the sorted sequence
 * seq[0 .. n) (elements seq_stride bytes apart) order before v in NumPy's
 * sort order (kernels/dg_order.h): seq[i] < v (right 0, NumPy's side
 * "left") or seq[i] <= v (right 1), as int64 to dst (the values' shape, its
 * own byte strides), written, or added to what dst holds (accumulate 1).
 * Sequence and values have `dtype`. */
typedef struct dg_search_desc {
    int dtype;
    int right;
    int accumulate;
    int64_t n;
    const char *seq;
    int64_t seq_stride;
    int ndim;
    int64_t shape[DG_MAXDIM];
    const char *val;
    int64_t val_strides[DG_MAXDIM];
    int64_t *dst;
    int64_t dst_strides[DG_MAXDIM];
} dg_search_desc;

/* Counting into bins (dg_backend_i.count) over an N-d strided block, one
 * added to cnt[b] (int64) or, with `weight` (float64, the block's shape, its
 * own strides), the element's weight to sum[b] (float64), for each element
 * of `src` and its bin b, by `radix`:
 *   DG_COUNT_BINS: each element is an int64 bin number b; elements whose b is
 *     not in [0, nbins) are skipped;
 *   DG_COUNT_RADIX: each element (of `dtype`: bool, integer or float) has the
 *     order key k of dg_order_key (kernels/dg_order.h); where pshift >= 64 or
 *     (k >> pshift) == prefix, b = (k >> shift) & (nbins - 1) (nbins a power
 *     of two; no weights); with nprefix 2 (pshift < 64), two prefixes share
 *     one reading: keys under `prefix` count into bin b of the first half of
 *     the bins, keys under `prefix2` into bin nbins / 2 + b of the second,
 *     b = (k >> shift) & (nbins / 2 - 1) (nbins / 2 a power of two);
 *   DG_COUNT_EDGES: each element (of `dtype`, a float dtype) falls in bin b
 *     of the nbins + 1 increasing `edges` (same dtype, dense): edges[b] <=
 *     x < edges[b + 1], the last bin closed; elements outside (and NaN) are
 *     skipped (NumPy's histogram);
 *   DG_COUNT_SQUARES: the squares of the elements (of `dtype`, a float dtype;
 *     with shift 1 each square rounded to `dtype`, as NumPy's x * x) summed
 *     in float64 into sum[0 .. nbins) (no weights): the sum of sum[] is the
 *     sum of squares, each bin a partial (a backend may put parts of the
 *     block in different bins, so that a sum needs no atomics).
 * The counters are added to, in no defined order. */
enum { DG_COUNT_BINS, DG_COUNT_RADIX, DG_COUNT_EDGES, DG_COUNT_SQUARES };
typedef struct dg_count_desc {
    int radix;
    int dtype;
    int ndim;
    int64_t shape[DG_MAXDIM];
    const char *src;
    int64_t src_strides[DG_MAXDIM];
    const double *weight;
    int64_t weight_strides[DG_MAXDIM];
    int shift, pshift;
    uint64_t prefix;
    int nprefix; /* 2: prefix2 too (DG_COUNT_RADIX); 0 or 1: prefix alone */
    uint64_t prefix2;
    const char *edges;
    int64_t nbins;
    int64_t *cnt;
    double *sum;
} dg_count_desc;

/* Capabilities a backend states in dg_backend_i.flags. */
enum {
    DG_BE_IDX_IN = 1u,   /* reduce honours dg_reduce_desc.idx_in */
    DG_BE_XCHG_SMS = 2u, /* exchange runs kernels that take processors from
                            work beside it (NCCL's): products then get
                            dg_gemm_desc.share_sms */
    DG_BE_ARG_ALLRED = 4u, /* allreduce takes DG_ALLRED_ARGMAX / ARGMIN (a
                              job's backend over one with DG_BE_IDX_IN) */
    DG_BE_XPORT_ALLRED = 8u /* a job's all-reduce of few processes goes by
                               transport, device to device (CUDA: NCCL on the
                               GPUs' streams, no host wait); without it (the
                               CPU backend, whose devices' memory is the
                               host's, and whose messages a worker thread
                               waits for) through the host: measured 33 us
                               against 10 us for a sum on the CPU */
};

typedef struct dg_backend_i dg_backend_i;

struct dg_backend_i {
    int version; /* DG_BACKEND_VERSION */
    const char *name;
    int ndevices;
    unsigned flags; /* DG_BE_* capabilities */
    void *impl; /* the implementation's own state */

    /* Writes a short device name ("cpu:0", "NVIDIA H200") and memory figures. */
    dg_status (*device_info)(dg_backend_i *be, int dev, char *name, size_t cap,
                             size_t *total_bytes, size_t *free_bytes, dg_error *err);

    /* Allocates nbytes (>0) on dev, stream-ordered on its compute stream.
     * Out of memory: DG_ERR_DEVICE_NOMEM with device and bytes set. */
    dg_status (*alloc)(dg_backend_i *be, int dev, size_t nbytes, void **ptr,
                       dg_error *err);
    /* Returns ptr to dev's pool, stream-ordered on the compute stream; never fails. */
    void (*release)(dg_backend_i *be, int dev, void *ptr);
    /* Bytes currently allocated (not released) on dev. */
    size_t (*bytes_in_use)(dg_backend_i *be, int dev);

    /* Position of the last work enqueued on (dev, stream). */
    dg_pos (*pos)(dg_backend_i *be, int dev, int stream);
    /* Work enqueued later on (dev, stream) starts after `p` has completed. */
    dg_status (*wait)(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err);
    /* The host blocks until `p` has completed.  Called without the GIL. */
    dg_status (*sync)(dg_backend_i *be, dg_pos p, dg_error *err);
    /* The host blocks until all work on all devices has completed. */
    dg_status (*sync_all)(dg_backend_i *be, dg_error *err);

    /* Enqueues a copy on (dev, stream); dev is src_dev or dst_dev.  Host memory
     * named in the copy must stay valid until the copy has completed. */
    dg_status (*copy)(dg_backend_i *be, int dev, int stream, const dg_copy_desc *d,
                      dg_error *err);
    /* Enqueues an elementwise loop on (dev, stream); all data is on dev. */
    dg_status (*elementwise)(dg_backend_i *be, int dev, int stream,
                             const dg_ew_desc *d, dg_error *err);
    /* Enqueues a fill on (dev, stream). */
    dg_status (*fill)(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d,
                      dg_error *err);

    /* OPTIONAL: enqueues a reduction on (dev, stream); all data is on dev.
     * NULL: the core raises DG_ERR_NOTIMPL for reductions. */
    dg_status (*reduce)(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                        dg_error *err);
    /* OPTIONAL: enqueues a scan on (dev, stream); all data is on dev.
     * NULL: the core raises DG_ERR_NOTIMPL for scans. */
    dg_status (*scan)(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d,
                      dg_error *err);
    /* OPTIONAL: enqueues the matrix products of `d` (dg_gemm.h) on (dev, stream);
     * all data is on dev.  NULL: the core raises DG_ERR_NOTIMPL for matmul. */
    dg_status (*gemm)(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                      dg_error *err);

    /* OPTIONAL.  Enqueues the n transfers x[] as one group on the transfer
     * streams of the devices they name: a transfer starts after the work
     * enqueued before on both its devices' transfer streams, and the
     * positions of those streams taken afterwards cover it (the source may
     * then be reused, the destination read).  Transfers whose src_dev and
     * dst_dev are equal are not allowed.  (CUDA: NCCL send/recv in one
     * group; CPU: copies.)  NULL: copy() across devices, on the
     * destination's transfer stream, ordered as the group would be. */
    dg_status (*exchange)(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err);
    /* OPTIONAL.  Enqueues the all-reduce d on the `stream` of every device it
     * names; ordered like exchange.  Returns DG_ERR_NOTIMPL, enqueueing
     * nothing, for a dtype or op it does not reduce.  NULL: DG_ERR_NOTIMPL
     * for all (the core then folds the chunks with its own loops). */
    dg_status (*allreduce)(dg_backend_i *be, int stream, const dg_allreduce_desc *d,
                           dg_error *err);
    /* OPTIONAL.  1 if work enqueued on `dev` may read memory of device
     * `other` in place (a peer's buffer as a loop's or a copy's operand).
     * NULL: 0 for every pair. */
    int (*can_access)(dg_backend_i *be, int dev, int other);

    /* OPTIONAL.  Like sync, but returns after at most about timeout_us
     * microseconds: *done = 1 if `p` has completed, else 0 (the work goes
     * on).  Called without the GIL.  What lets a host wait stop for Ctrl-C;
     * NULL: the core waits with sync. */
    dg_status (*sync_for)(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                          dg_error *err);
    /* OPTIONAL ([numpy] indexing; NULL: the core raises DG_ERR_NOTIMPL).
     * Each enqueues its work on (dev, stream); all data is on dev. */
    /* A compaction (dg_select_desc). */
    dg_status (*select)(dg_backend_i *be, int dev, int stream, const dg_select_desc *d,
                        dg_error *err);
    /* Keyed row copies (dg_rows_desc). */
    dg_status (*rows)(dg_backend_i *be, int dev, int stream, const dg_rows_desc *d,
                      dg_error *err);
    /* A routing (dg_route_desc). */
    dg_status (*route)(dg_backend_i *be, int dev, int stream, const dg_route_desc *d,
                       dg_error *err);
    /* A sort (dg_sort_desc); DG_ERR_NOTIMPL, enqueueing nothing, for a dtype
     * it does not sort. */
    dg_status (*sort)(dg_backend_i *be, int dev, int stream, const dg_sort_desc *d,
                      dg_error *err);

    /* OPTIONAL: how many rows of partials (>= 1) the DG_RED_PARTS pass of
     * reduction d on dev writes; a backend with it runs PARTS and FOLD
     * passes (dg_reduce_desc.pass).  NULL: the core reduces whole (the
     * wrapper says 1 row, and no PARTS pass is asked of the backend). */
    dg_status (*reduce_parts)(dg_backend_i *be, int dev, const dg_reduce_desc *d, int64_t *rows,
                              dg_error *err);

    /* OPTIONAL: bytes dev's memory pool holds, allocated or kept for reuse
     * (at least bytes_in_use).  NULL: bytes_in_use. */
    size_t (*bytes_held)(dg_backend_i *be, int dev);
    /* OPTIONAL: waits for dev's work, then hands the memory kept for reuse
     * back to the device, for other libraries or processes.  Allocated
     * memory is untouched.  NULL: nothing is kept. */
    dg_status (*trim)(dg_backend_i *be, int dev, dg_error *err);

    /* Waits for all work, frees every resource; `be` is invalid afterwards. */
    void (*destroy)(dg_backend_i *be);

    /* OPTIONAL ([linalg-fft]; NULL: DG_ERR_NOTIMPL, nothing enqueued, and
     * the Python layer runs NumPy on the host).  Each enqueues its work on
     * (dev, stream); all data is on dev; the backend gets its own workspace. */
    /* A batch of one dense linear algebra op (dg_dense.h: Cholesky, LU and
     * its solves, triangular solves, QR, Hermitian eigenproblems, SVD),
     * per-matrix failures reported in the desc's info array on the device. */
    dg_status (*dense)(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d,
                       dg_error *err);
    /* A batch of FFTs over 1 to 3 strided axes (dg_fft.h: c2c, r2c, c2r,
     * scaled), plans cached by the backend. */
    dg_status (*fft)(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d,
                     dg_error *err);

    /* OPTIONAL ([multihost]; NULL: the backend cannot join a job of several
     * processes, DG_ERR_NOTIMPL).  Called once, by every process of the job at
     * once, before any work: this process's devices are the job's devices
     * first_gdev.. first_gdev + ndevices - 1 of ngdev; `comm` (borrowed, lives
     * as long as the backend) carries what the backend needs to set up
     * (CUDA: the NCCL id, broadcast from process 0, then one communicator
     * over every GPU of the job made in one group). */
    dg_status (*join)(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev,
                      dg_error *err);
    /* OPTIONAL ([multihost]; NULL: DG_ERR_NOTIMPL).  Enqueues the n transfers
     * x[] between this process's devices and other processes' as one group,
     * ordered like exchange on the local device's transfer stream (CUDA:
     * ncclSend / ncclRecv in one group; CPU: MPI messages on the device's
     * worker).  Every process enqueues its side of the same group. */
    dg_status (*transport)(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err);
    /* OPTIONAL ([fusion]; NULL: the core runs elementwise chains loop by
     * loop, never recording them).  Runs the steps of a fused chain over its
     * space (dg_fused.h) on (dev, stream); all data is on dev. */
    dg_status (*fused)(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                      dg_error *err);
    /* OPTIONAL ([surface]; NULL: DG_ERR_NOTIMPL, nothing enqueued).  Each
     * enqueues its work on (dev, stream); all data is on dev. */
    /* Binary searches in a sorted sequence (dg_search_desc). */
    dg_status (*search)(dg_backend_i *be, int dev, int stream, const dg_search_desc *d,
                        dg_error *err);
    /* Counts into bins (dg_count_desc). */
    dg_status (*count)(dg_backend_i *be, int dev, int stream, const dg_count_desc *d,
                       dg_error *err);
    /* OPTIONAL ([cpu-speed]; NULL: 0 for every dtype).  1 if a gemm of
     * `dtype` with dg_gemm_desc.wide set runs over every core of the machine
     * (one threaded BLAS call) and may read and write memory of every device
     * in place: devices that share one memory and one pool of cores (the CPU
     * backend's virtual devices, where NumPy's BLAS is found).  The core then
     * runs a product as one such call instead of one call per device. */
    int (*gemm_wide)(dg_backend_i *be, int dtype);
    /* OPTIONAL ([multihost]; NULL: DG_OK, nothing watched).  Called by a
     * job's host waits while they wait, every few tens of milliseconds
     * (without the GIL): DG_ERR_DEVICE where a transfer between processes
     * (transport) has been running for more than timeout_s seconds without
     * completing, or the transport reported a failure (a process of the job
     * died or stopped).  The job's transfers are then aborted, so that no
     * wait on this process's devices hangs, and every later transport fails
     * with the same message.  Where the transport's waits are bounded
     * already (the CPU backend's MPI messages) there is nothing to watch. */
    dg_status (*watch)(dg_backend_i *be, double timeout_s, dg_error *err);
    /* OPTIONAL (NULL: DG_OK, nothing done).  Makes position p, the work just
     * enqueued on its stream, one that a later `wait` on another stream
     * waits for exactly: a backend that marks positions only when a wait
     * asks for one (the CUDA backend's events) would otherwise mark the
     * stream's end at that time, and the wait would take in work enqueued
     * on p's stream after p.  The core marks the positions of work that
     * touches another device's memory (a peer read of a neighbour's rows),
     * the positions another device's work is likely to wait for. */
    dg_status (*mark)(dg_backend_i *be, dg_pos p, dg_error *err);

    /* Floating-point errors ([surface] item 3, dg_fpe.h) of devices that keep
     * no floating-point status (GPUs: their kernels note what they raise).
     * fpe_actions: set by the core (dg_be_fpe_attach) before any work, never
     * by the backend: the calling thread's action word (dg_fpe_actions of the
     * core's copy of dg_fpe.c: the backend may be another extension module,
     * with copies of its own).  OPTIONAL fpe_fold (NULL: the backend notes
     * with dg_fpe_note itself, as the CPU backend does): or's into *noted
     * the noted words its devices published since its last call, and sets
     * *where (if NULL) to the name of the work that published; called by
     * dg_fpe_take (the binding's calls, never two at once), without waiting
     * for any work. */
    uint32_t (*fpe_actions)(void);
    void (*fpe_fold)(dg_backend_i *be, uint32_t *noted, const char **where);
};

/* ---- calls into the table (dg_backend.c) -----------------------------------
 *
 * The one way the core and the binding reach a backend: dg_be_<slot> has the
 * slot's arguments and contract, and gives the default of an OPTIONAL slot
 * the backend left NULL.  Code outside dg_backend.c never calls a slot
 * itself. */

/* Hands be the core's action word (fpe_actions) and adds its fpe_fold as a
 * source of dg_fpe_take, until dg_be_destroy: once, when the binding takes
 * the backend.  DG_ERR_INTERNAL where dg_fpe has no room for another. */
dg_status dg_be_fpe_attach(dg_backend_i *be, dg_error *err);

/* The OPTIONAL slots, for dg_be_has and dg_be_need. */
typedef enum dg_be_slot {
    DG_SLOT_REDUCE,
    DG_SLOT_SCAN,
    DG_SLOT_GEMM,
    DG_SLOT_EXCHANGE,
    DG_SLOT_ALLREDUCE,
    DG_SLOT_CAN_ACCESS,
    DG_SLOT_SYNC_FOR,
    DG_SLOT_SELECT,
    DG_SLOT_ROWS,
    DG_SLOT_ROUTE,
    DG_SLOT_SORT,
    DG_SLOT_REDUCE_PARTS,
    DG_SLOT_BYTES_HELD,
    DG_SLOT_TRIM,
    DG_SLOT_DENSE,
    DG_SLOT_FFT,
    DG_SLOT_JOIN,
    DG_SLOT_TRANSPORT,
    DG_SLOT_FUSED,
    DG_SLOT_SEARCH,
    DG_SLOT_COUNT,
    DG_SLOT_GEMM_WIDE,
    DG_SLOT_WATCH,
    DG_SLOT_MARK,
    DG_NSLOTS_OPTIONAL
} dg_be_slot;

/* 1 if the backend fills optional slot s itself (where the core chooses
 * between the backend's way and its own: an exchange group or peer copies,
 * an all-reduce or folds by loops, stacked partials or whole reductions). */
int dg_be_has(const dg_backend_i *be, dg_be_slot s);
/* DG_OK if the backend fills s, else DG_ERR_NOTIMPL with the message the
 * wrapper of s would give: how an op checks up front, before any work. */
dg_status dg_be_need(const dg_backend_i *be, dg_be_slot s, dg_error *err);

dg_status dg_be_device_info(dg_backend_i *be, int dev, char *name, size_t cap,
                            size_t *total_bytes, size_t *free_bytes, dg_error *err);
dg_status dg_be_alloc(dg_backend_i *be, int dev, size_t nbytes, void **ptr, dg_error *err);
void dg_be_release(dg_backend_i *be, int dev, void *ptr);
size_t dg_be_bytes_in_use(dg_backend_i *be, int dev);
/* NULL bytes_held: bytes_in_use. */
size_t dg_be_bytes_held(dg_backend_i *be, int dev);
/* NULL trim: DG_OK, nothing done (nothing is kept). */
dg_status dg_be_trim(dg_backend_i *be, int dev, dg_error *err);

dg_pos dg_be_pos(dg_backend_i *be, int dev, int stream);
dg_status dg_be_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err);
dg_status dg_be_sync(dg_backend_i *be, dg_pos p, dg_error *err);
dg_status dg_be_sync_all(dg_backend_i *be, dg_error *err);
/* NULL sync_for: sync, then *done = 1. */
dg_status dg_be_sync_for(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                         dg_error *err);

dg_status dg_be_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *d,
                     dg_error *err);
dg_status dg_be_elementwise(dg_backend_i *be, int dev, int stream, const dg_ew_desc *d,
                            dg_error *err);
dg_status dg_be_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d,
                     dg_error *err);
/* NULL reduce, scan, gemm, select, rows, route, sort, dense, fft, search, count:
 * DG_ERR_NOTIMPL, nothing enqueued. */
dg_status dg_be_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                       dg_error *err);
dg_status dg_be_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d,
                     dg_error *err);
dg_status dg_be_gemm(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                     dg_error *err);
dg_status dg_be_select(dg_backend_i *be, int dev, int stream, const dg_select_desc *d,
                       dg_error *err);
dg_status dg_be_rows(dg_backend_i *be, int dev, int stream, const dg_rows_desc *d,
                     dg_error *err);
dg_status dg_be_route(dg_backend_i *be, int dev, int stream, const dg_route_desc *d,
                      dg_error *err);
dg_status dg_be_sort(dg_backend_i *be, int dev, int stream, const dg_sort_desc *d,
                     dg_error *err);
dg_status dg_be_dense(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d,
                      dg_error *err);
dg_status dg_be_fft(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d,
                    dg_error *err);
/* NULL fused: DG_ERR_NOTIMPL, nothing enqueued (the core asks dg_be_has
 * before it records a chain). */
dg_status dg_be_fused(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                      dg_error *err);
dg_status dg_be_search(dg_backend_i *be, int dev, int stream, const dg_search_desc *d,
                       dg_error *err);
dg_status dg_be_count(dg_backend_i *be, int dev, int stream, const dg_count_desc *d,
                      dg_error *err);
/* NULL reduce_parts: *rows = 1 (the core reduces whole). */
dg_status dg_be_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *d, int64_t *rows,
                             dg_error *err);

/* NULL exchange: each transfer a copy on its destination's transfer stream,
 * after that stream waited for the source's, which then waits for the copy
 * (the group's ordering, without its concurrency). */
dg_status dg_be_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err);
/* NULL allreduce: DG_ERR_NOTIMPL, nothing enqueued. */
dg_status dg_be_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *d,
                          dg_error *err);
/* NULL can_access: 0 for every pair. */
int dg_be_can_access(dg_backend_i *be, int dev, int other);
/* NULL gemm_wide: 0 for every dtype. */
int dg_be_gemm_wide(dg_backend_i *be, int dtype);
/* NULL join, transport: DG_ERR_NOTIMPL, nothing done. */
dg_status dg_be_join(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev,
                     dg_error *err);
dg_status dg_be_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err);
/* NULL watch: DG_OK. */
dg_status dg_be_watch(dg_backend_i *be, double timeout_s, dg_error *err);
/* NULL mark: DG_OK. */
dg_status dg_be_mark(dg_backend_i *be, dg_pos p, dg_error *err);

/* What the core asked of the backends since the last reset (process-wide,
 * for tests and benchmarks; exact for one enqueuing thread): per device
 * (the first DG_BE_STAT_DEVS), the slot calls that enqueue work, by slot
 * (DG_BE_WORK_*; a CUDA slot call launches one kernel or a few), the
 * elements the count and select slots read, the waits of its streams for
 * another device's work; bytes copied between devices, from and to the
 * host, and the copies to or from the host (each a round trip on GPUs:
 * cuda_hostcopy.c returns once the host memory is done with); all-reduces and the bytes each device sends into them (its count
 * of elements); backend syncs (dg_be_sync of work not known done: host
 * waits that do not go through the binding's waitsets too). */
#define DG_BE_STAT_DEVS 16
enum {
    DG_BE_WORK_COPY, DG_BE_WORK_FILL, DG_BE_WORK_ELEMENTWISE, DG_BE_WORK_REDUCE,
    DG_BE_WORK_SCAN, DG_BE_WORK_GEMM, DG_BE_WORK_SELECT, DG_BE_WORK_ROWS, DG_BE_WORK_ROUTE,
    DG_BE_WORK_SORT, DG_BE_WORK_DENSE, DG_BE_WORK_FFT, DG_BE_WORK_FUSED, DG_BE_WORK_SEARCH,
    DG_BE_WORK_COUNT, DG_BE_WORK_KINDS
};
typedef struct dg_be_counts {
    int64_t works[DG_BE_WORK_KINDS][DG_BE_STAT_DEVS];
    int64_t read[DG_BE_STAT_DEVS];
    int64_t waits_across[DG_BE_STAT_DEVS];
    int64_t between, from_host, to_host, host_copies;
    int64_t allreduces, allreduce_bytes;
    int64_t syncs;
} dg_be_counts;
void dg_be_counts_get(dg_be_counts *out, int reset);

void dg_be_destroy(dg_backend_i *be);

/* The CPU backend with `ndevices` virtual devices (each with its own memory
 * pool and a worker thread per device).  New reference in *out. */
dg_status dg_cpu_backend_create(int ndevices, dg_backend_i **out, dg_error *err);

#endif /* DG_BACKEND_H */
