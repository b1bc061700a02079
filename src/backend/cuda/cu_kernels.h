/* The C interface of the CUDA kernels (the .cu files of kernels/): argument
 * blocks and launchers.
 *
 * The backend (C, src/backend/cuda) prepares an argument block on the host
 * (dimensions coalesced, fast path chosen) and calls a launcher, which enqueues
 * one kernel on the given stream of the current device (cudaLaunchKernel) and
 * returns that launch's status; on failure the caller clears the runtime's
 * last error (cu_fail).
 * The blocks are passed to the kernels by value, so the caller's copy may go
 * as soon as the launcher returns.  Launchers never synchronise.
 *
 * This header is included by C (the backend) and by C++ (nvcc): the layouts
 * of the blocks must agree between the two, hence plain fixed-width fields and
 * explicit alignment. */
#ifndef DG_CU_KERNELS_H
#define DG_CU_KERNELS_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#include "dg_backend.h"
#include "dg_ufunc.h"

#ifdef __cplusplus
#define DG_CU_ALIGN16 alignas(16)
extern "C" {
#else
#define DG_CU_ALIGN16 _Alignas(16)
#endif

/* Threads per block of every kernel. */
#define DG_CU_THREADS 256
/* Index of the where mask in dg_cu_ew_strided.data / strides. */
#define DG_CU_WHERE (DG_MAXOPS - 1)
/* Elements per thread of the contiguous path are at most this many. */
#define DG_CU_MAXVEC 8
/* The elementwise kernels are compiled in this many parts (kernels/ew_<k>.cu);
 * loop `i` lives in part i % DG_CU_EW_NPARTS. */
#define DG_CU_EW_NPARTS 6

/* Floating-point errors noted by the kernels (kernels/dg_fpe.cuh; the rule
 * is kernels/dg_scalar.h's dg_fpe_rule; src/backend/cuda/cuda_fpe.c reads
 * the records).  One record per device, in mapped host memory: the host
 * reads it without a copy or a synchronisation.  A kernel whose elements
 * raised kinds its action word watches publishes the noted bits (dg_fpe.h:
 * kind * 8 + action) once per generation of the device: the gate, in device
 * memory, holds (generation << 32 | bits published), so that only the first
 * thread to raise a kind pays the writes to host memory; the host starts a
 * new generation whenever it took something from the record.  A record
 * counts publications per bit (cnt) and in all (total, written last): the
 * host, which never writes it, reports the bits whose count moved. */
typedef struct dg_cu_fpe_rec {
    uint32_t total;
    int32_t where;      /* what published last: a loop id, or DG_CU_FPE_REDUCE */
    uint32_t cnt[32];
} dg_cu_fpe_rec;

/* `where` of a reduction's publication ("reduce" in NumPy's message), and of
 * a scan's ("accumulate"). */
#define DG_CU_FPE_REDUCE (-2)
#define DG_CU_FPE_ACCUMULATE (-3)

/* What a kernel needs to note errors; actions 0: nothing is watched (the
 * kernel then checks nothing). */
typedef struct dg_cu_fpe {
    uint32_t actions;   /* the action word of the call (dg_fpe.h) */
    uint32_t gen;       /* the device's generation at the launch */
    unsigned long long *gate;
    dg_cu_fpe_rec *rec; /* the device's record (a device pointer to host memory) */
    int32_t where;      /* the loop id (or DG_CU_FPE_REDUCE, _ACCUMULATE) published */
    int32_t pad_;
} dg_cu_fpe;

/* An elementwise loop over an N-d strided space, after coalescing.  Operand k
 * of the loop (inputs, then outputs) is at data[k] with byte strides
 * strides[*][k]; an input whose bit is set in scalar_mask is the value
 * scalar[k] instead.  data[DG_CU_WHERE] is the where mask (dg_bool) or NULL.
 * Axis ndim-1 is the innermost. */
typedef struct dg_cu_ew_strided {
    DG_CU_ALIGN16 unsigned char scalar[DG_MAXLOOPOPS][16];
    int64_t n; /* product of shape */
    int32_t ndim;
    uint32_t scalar_mask;
    char *data[DG_MAXOPS];
    int64_t shape[DG_MAXDIM];
    int64_t strides[DG_MAXDIM][DG_MAXOPS];
    dg_cu_fpe fpe;
} dg_cu_ew_strided;

/* An elementwise loop over n contiguous elements: operand k at data[k], dense;
 * an input with its bit in scalar_mask is the value scalar[k]; an input with
 * its bit in bcast_mask is the one element at data[k].  Every dense operand is
 * aligned to vec * its itemsize (dg_cu_ew_info.vec). */
typedef struct dg_cu_ew_contig {
    DG_CU_ALIGN16 unsigned char scalar[DG_MAXLOOPOPS][16];
    int64_t n;
    char *data[DG_MAXLOOPOPS];
    uint32_t scalar_mask;
    uint32_t bcast_mask;
    dg_cu_fpe fpe;
} dg_cu_ew_contig;

/* What the kernels know of loop i (same order as DG_LOOP_LIST). */
typedef struct dg_cu_ew_info {
    const char *name;              /* the ufunc's name, for messages */
    int8_t nin, nout;
    int8_t vec;                    /* elements per thread of the contiguous path;
                                      1: no contiguous kernel, use the strided one */
    int8_t size[DG_MAXLOOPOPS];    /* itemsize of each operand, 0 past nin+nout */
} dg_cu_ew_info;

typedef cudaError_t (*dg_cu_ew_contig_fn)(const dg_cu_ew_contig *a, unsigned blocks,
                                          cudaStream_t s);
typedef cudaError_t (*dg_cu_ew_strided_fn)(const dg_cu_ew_strided *a, unsigned blocks,
                                           cudaStream_t s);

/* The launchers of one loop; contig is NULL where info.vec == 1.  `loop` is
 * the id they were generated for (checked when the backend starts). */
typedef struct dg_cu_ew_entry {
    dg_cu_ew_contig_fn contig;
    dg_cu_ew_strided_fn strided;
    int loop;
} dg_cu_ew_entry;

/* Number of loops the kernels were generated for (DG_LOOP_LIST's length). */
extern const int dg_cu_ew_nloops;
/* dg_cu_ew_infos[i]: loop i's operand sizes and vector width (static). */
extern const dg_cu_ew_info *const dg_cu_ew_infos;
/* The loop whose kernels loop i runs: i, or a loop of the same operand
 * sizes whose kernels compute the same bytes (kernels/dg_same_bits.h); -1
 * past the list. */
int dg_cu_ew_kernels_of(int i);
/* The launchers of loop i (0 <= i < dg_cu_ew_nloops), made for loop
 * dg_cu_ew_kernels_of(i) (their `loop`); borrowed, static. */
const dg_cu_ew_entry *dg_cu_ew_entry_get(int i);

/* A reduction (the backend's reduce slot) after coalescing: m outputs over
 * nk >= 1 kept dims (kshape; byte strides kstr in src, kdst in dst, kidx in
 * idx, kwhere in where, kin in idx_in; one dim of extent 1 when nothing is
 * kept) and k reduced elements each over nr >= 1 reduced dims (rshape; rstr
 * in src, rwhere in where, rin in idx_in; rgs: the index step of argmax /
 * argmin per dim, whose index is read from idx_in instead where it is set).
 * Output i and reduced element r (both in C order over their dims) is at
 * src + kept offset of i + reduced offset of r.  The reduced elements of an
 * output are cut into nsplit chunks of kchunk; where part is set the first
 * pass writes one partial per chunk s and output i at [s * m + i] of part /
 * part_idx (idx_base added) / part_have, and the final pass folds the nsplit
 * rows there (perhaps several devices' rows stacked); else the first pass
 * writes dst (and idx).  tpo: threads per output of the inner and
 * final passes (1, 32 or DG_CU_THREADS); tx: threads along the outputs of the
 * outer pass (a power of two up to 32). */
typedef struct dg_cu_red {
    DG_CU_ALIGN16 unsigned char init[16];
    int32_t nk, nr, has_init, nsplit, tpo, tx;
    int64_t m, k, kchunk;
    const char *src;
    char *dst;
    int64_t *idx;
    const unsigned char *where;
    char *part;
    int64_t *part_idx;
    unsigned char *part_have;
    const char *idx_in; /* argmax / argmin: indices to read, or NULL */
    int64_t idx_base;   /* argmax / argmin: added to each index found (not idx_in's) */
    int64_t kshape[DG_MAXDIM], kstr[DG_MAXDIM], kdst[DG_MAXDIM], kidx[DG_MAXDIM],
        kwhere[DG_MAXDIM], kin[DG_MAXDIM];
    int64_t rshape[DG_MAXDIM], rstr[DG_MAXDIM], rwhere[DG_MAXDIM], rgs[DG_MAXDIM],
        rin[DG_MAXDIM];
    dg_cu_fpe fpe; /* sum and prod of floats: overflow and invalid noted ("reduce") */
} dg_cu_red;

/* The passes of a reduction (kernels/reduce.cuh):
 *   INNER: tpo threads per output read along the reduced dims;
 *   OUTER: tx threads read neighbouring outputs, DG_CU_THREADS / tx split
 *          the reduced elements (for kept dims that are the inner ones);
 *   FINAL: folds the partials (nsplit of them; 0: writes init).
 * Grid: x steps over the groups of outputs (DG_CU_THREADS / tpo outputs, or
 * tx * vec of them), y is the chunk (nsplit; 1 for FINAL).  `vec` > 1 picks
 * the variant loading vec elements at once (dg_cu_red_vec): INNER then needs
 * nr 1 with rstr[0] the itemsize, no where mask, no idx_in, kchunk a
 * multiple of vec and src + every kept offset aligned to vec elements; OUTER
 * needs no where mask, no idx_in, the innermost kept dim of stride the
 * itemsize and extent a multiple of vec, src and every other stride aligned
 * to vec elements. */
enum { DG_CU_RED_INNER, DG_CU_RED_OUTER, DG_CU_RED_FINAL };

/* The elements per load of the vec variants of reduction (kind, loop,
 * dtype) (dg_reduce_desc's fields): 1 if it has none, 0 if the kernels do
 * not reduce it at all. */
int dg_cu_red_vec(int kind, int loop, int dtype);
/* Launches pass `which` (variant vec: 1 or dg_cu_red_vec) on a grid of
 * gx x gy blocks on s; cudaErrorInvalidValue if there is no such kernel. */
cudaError_t dg_cu_red_launch(int kind, int loop, int dtype, int which, int vec,
                             const dg_cu_red *a, unsigned gx, unsigned gy, cudaStream_t s);
/* Blocks of that kernel one multiprocessor of the current device holds. */
cudaError_t dg_cu_red_occupancy(int kind, int loop, int dtype, int which, int vec,
                                int *blocks_per_sm);

/* An inclusive scan (the backend's scan slot) after coalescing: `rows` rows
 * over nrd dims (rshape; byte strides rsrc, rdst, rcarry), each of n elements
 * along the scan dim (byte strides ss in src, ds in dst); carry NULL or one
 * start value per row.  tpr: threads per row (1, 32 or DG_CU_THREADS).
 * fpe: cumsum and cumprod of floats note overflow and invalid
 * ("accumulate").
 * Long rows, few of them, split into tiles over many blocks (tpr
 * DG_CU_THREADS): pass DG_CU_SCAN_TOTALS writes each tile's total (its
 * elements folded, no carry) to part, [rows][ntiles] values of the dtype,
 * block b taking tile b % ntiles of row b / ntiles, each tile `tile`
 * elements (a multiple of DG_CU_SCAN_SUB, the last one shorter); the host
 * then scans part's rows in place from the carries (pass 0, a block per
 * row), and pass DG_CU_SCAN_TILES scans each tile from its prefix: part's
 * element before it in its row, or the carry for tile 0.  pass 0: untiled
 * (tile, ntiles, part unused). */
typedef struct dg_cu_scan {
    int32_t nrd, tpr;
    int64_t rows, n, ss, ds;
    const char *src;
    char *dst;
    const char *carry;
    int64_t rshape[DG_MAXDIM], rsrc[DG_MAXDIM], rdst[DG_MAXDIM], rcarry[DG_MAXDIM];
    int32_t pass;
    int64_t tile, ntiles;
    char *part;
    dg_cu_fpe fpe;
} dg_cu_scan;

enum { DG_CU_SCAN_TOTALS = 1, DG_CU_SCAN_TILES = 3 };

/* Elements per thread of a tile of the warp and block kernels, for elements
 * of `size` bytes; DG_CU_SCAN_SUB of them: a block's tile. */
#define DG_CU_SCAN_ITEMS(size) ((size) >= 16 ? 4 : 8)
#define DG_CU_SCAN_SUB(size) (DG_CU_THREADS * DG_CU_SCAN_ITEMS(size))

/* Launches the scan with loop `loop` (dg_ew_foldable) on `blocks` (>= 1)
 * blocks of DG_CU_THREADS threads, each taking DG_CU_THREADS / tpr rows at a
 * time (kernels/scan.cu), or, for pass DG_CU_SCAN_TOTALS or DG_CU_SCAN_TILES,
 * one tile each (blocks = rows * ntiles); cudaErrorInvalidValue for a loop
 * without one or another tpr or pass. */
cudaError_t dg_cu_scan_launch(int loop, const dg_cu_scan *a, unsigned blocks, cudaStream_t s);
/* 1 if loop `loop` has a scan kernel. */
int dg_cu_scan_has(int loop);

/* A strided N-d copy of the elements [base, base + n) of the C-order
 * iteration over `shape`, each of `itemsize` bytes (1, 2, 4, 8 or 16).  The
 * element with coordinates c is read at src + sum c[a] * src_strides[a] and
 * written at dst + sum c[a] * dst_strides[a]; either pointer may be on a peer
 * device that the current device can access. */
typedef struct dg_cu_copy_args {
    int64_t n, base;
    int32_t ndim, itemsize;
    const char *src;
    char *dst;
    int64_t shape[DG_MAXDIM];
    int64_t strides[DG_MAXDIM][2]; /* [a][0]: source, [a][1]: destination */
} dg_cu_copy_args;

cudaError_t dg_cu_copy_launch(const dg_cu_copy_args *a, unsigned blocks, cudaStream_t s);

/* The copy of a space whose innermost axis is dense on both sides, rows of
 * at least 256 bytes, every row starting at a multiple of 4 bytes on both
 * sides and a multiple of 4 bytes long (a.n: all elements; base 0): 16-byte
 * stores, aligned loads where the source allows (kernels/copy.cu).  mode 1
 * or 2: how a source shifted against the destination is loaded. */
cudaError_t dg_cu_copy_rows_launch(const dg_cu_copy_args *a, int mode, unsigned max_blocks,
                                   cudaStream_t s);

/* Fills nbytes bytes at dst (no alignment needed) with the repeated
 * `itemsize`-byte pattern `value` (itemsize 1, 2, 4, 8 or 16), the pattern
 * starting at dst. */
cudaError_t dg_cu_fill_pattern(char *dst, int64_t nbytes, const unsigned char *value,
                               int itemsize, unsigned blocks, cudaStream_t s);

/* Fills the block described by `d` (DG_FILL_CONST, DG_FILL_EYE or
 * DG_FILL_ARANGE, see dg_backend.h) of n elements (n = product of d->shape). */
cudaError_t dg_cu_fill_launch(const dg_fill_desc *d, int64_t n, unsigned blocks,
                              cudaStream_t s);

/* A DG_FILL_RANDOM fill of a run: n elements of `dtype` whose flat indices
 * are first .. first + n - 1, dense at dst (what a chunk of whole rows is).
 * Each thread writes 16 bytes (one or more whole Philox blocks) with one
 * store where the run's 16-byte units are aligned, element by element at the
 * run's ends.  The values are dg_rand_bits' (kernels/dg_random.h), as the
 * general kernel's and the CPU loops' are. */
typedef struct dg_cu_rand_run {
    char *dst;
    uint64_t first;
    int64_t n;
    int32_t dtype;
    int32_t aligned;  /* dst - first * itemsize is 16-byte aligned */
    dg_fill_random r;
    uint32_t plan[23]; /* dg_rand_plan of r (DG_RAND_PLAN): dg_cu_random_run sets it */
} dg_cu_rand_run;

/* The fill of a run (above); cudaErrorInvalidValue for a dtype or a
 * distribution it has no kernel for. */
cudaError_t dg_cu_random_run(const dg_cu_rand_run *a, int nsm, cudaStream_t s);

/* ---- index work (kernels/index.cu, kernels/sort.cu) ---------------------- */

/* A compaction after coalescing (the backend's select and route slots):
 *   SELECT: the n elements of an N-d block (shape; byte strides sstr from
 *     src, mstr from mask), in C order: where the mask byte is non-zero, the
 *     element's value (itemsize bytes) or, src NULL, its index base +
 *     sum c[a] * gstride[a] (int64) is written to dst[k], k counting them;
 *     With keyed (a dtype with order keys, src required, mask unused) an
 *     element is selected where lo <= (its order key >> pshift) <= hi, and
 *     the selected are appended in no particular order (at most cap
 *     written, all counted; with bins, lo and hi the bins of nbins counts
 *     (in nparts sets, summed) that hold ranks rank0 and rank1 (with rest,
 *     those about q of the keys outside the last bin), and with whole
 *     nothing read where they hold more than cap, as dg_select_desc says);
 *   ROUTE: for each j < n whose key[j] lies in (start, stop, step):
 *     rows[k] = (key[j] - start) / step, pos[k] = j.
 * How many to *count (int64). */
enum { DG_CU_SELECT, DG_CU_ROUTE };
typedef struct dg_cu_compact {
    int32_t kind, ndim, itemsize;
    int64_t n, base;
    const char *src;
    const unsigned char *mask;
    char *dst;
    int64_t shape[DG_MAXDIM], sstr[DG_MAXDIM], mstr[DG_MAXDIM], gstride[DG_MAXDIM];
    const int64_t *key;
    int64_t start, stop, step;
    int64_t *rows, *pos;
    int64_t *count;
    int32_t keyed, dtype, pshift;
    uint64_t lo, hi;
    int64_t cap;          /* keyed: at most cap written (<= 0: no bound) */
    const int64_t *bins;  /* keyed: lo, hi the bins of ranks rank0, rank1 */
    int64_t nbins, rank0, rank1;
    int64_t nparts;       /* keyed with bins: sets of nbins counts (>= 1) */
    const int64_t *part[16]; /* ... set p at part[p] where part[0] is set (a
                                peer's read in place), else at bins + p nbins */
    int32_t whole;        /* keyed with bins: all under the bins or none */
    int32_t rest;         /* keyed with bins: the ranks about q of the keys
                             outside the last bin instead (dg_order_rest_ranks) */
    double q;
    uint64_t *bounds;     /* the launcher's: those bins, and 1 where none are kept */
} dg_cu_compact;

/* Enqueues the kernels of compaction a on s (stream of the current device,
 * nsm multiprocessors), their workspace from `pool`, freed stream-ordered. */
cudaError_t dg_cu_compact_run(const dg_cu_compact *a, int nsm, cudaMemPool_t pool,
                              cudaStream_t s);

/* Keyed row copies after coalescing a row's dims (the backend's rows slot):
 * for j < n with key[j] in (start, stop, step), r = (key[j] - start) / step,
 * a gather copies src row r to dst row j, a scatter src row j to dst row r.
 * A row has rowlen elements over ndim dims (shape; byte strides sstr, dstr;
 * ndim 0: one element), rows rstride apart on each side. */
typedef struct dg_cu_rows {
    int32_t scatter, itemsize, ndim;
    int64_t n, rowlen;
    const int64_t *key;
    int64_t start, stop, step;
    const char *src;
    char *dst;
    int64_t src_rstride, dst_rstride;
    int64_t shape[DG_MAXDIM], sstr[DG_MAXDIM], dstr[DG_MAXDIM];
} dg_cu_rows;

cudaError_t dg_cu_rows_launch(const dg_cu_rows *a, unsigned blocks, cudaStream_t s);

/* A sort of `rows` rows of n elements of dtype (not complex) along their
 * last dim, after coalescing the row dims (nrd of them: rshape; byte strides
 * rsrc, rdst, ridx), elements ss / ds / is bytes apart along a row: the
 * values sorted in NumPy's order to dst and their positions to idx (either
 * NULL).  dst must not overlap src.  n < 2^32. */
typedef struct dg_cu_sort {
    int32_t dtype, nrd;
    int64_t rows, n, ss, ds, is;
    const char *src;
    char *dst;
    int64_t *idx;
    int64_t rshape[DG_MAXDIM], rsrc[DG_MAXDIM], rdst[DG_MAXDIM], ridx[DG_MAXDIM];
} dg_cu_sort;

/* Enqueues the sort on s, its workspace from `pool`; cudaErrorNotSupported
 * (nothing enqueued) for a dtype it does not sort. */
cudaError_t dg_cu_sort_run(const dg_cu_sort *a, int nsm, cudaMemPool_t pool, cudaStream_t s);

/* ---- dense linear algebra (kernels/dense.cu) ------------------------------ */

/* DG_DENSE_TRIZERO (dg_dense.h) on `batch` column-major m x n matrices of
 * itemsize-byte elements (4 or 8 real, 8 or 16 complex: cplx), lda elements
 * between columns, bs bytes between matrices: element (i, j) set to zero
 * where j - i > k (lower) or j - i < k (!lower).  info (NULL: none): one
 * int32 per matrix, ibs bytes apart, set to 1 if an element set to zero was
 * a NaN or an infinity, else 0. */
cudaError_t dg_cu_trizero(char *a, int64_t lda, int64_t bs, int64_t batch, int64_t m,
                          int64_t n, int64_t k, int lower, int itemsize, int cplx, char *info,
                          int64_t ibs, cudaStream_t s);

/* Copies `per` integers of each of `batch` rows from src (int32, or int64
 * when src64) to dst (int32 or int64), rows src_bs and dst_bs elements
 * apart: the pivots and infos of cuBLAS's batched LU (int32, dense) to and
 * from the dense slot's (int64 pivots, int32 infos, strided). */
cudaError_t dg_cu_int_copy(const void *src, int src64, int64_t src_bs, void *dst, int dst64,
                           int64_t dst_bs, int64_t per, int64_t batch, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* DG_CU_KERNELS_H */
