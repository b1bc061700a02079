/* scan(): the backend's inclusive scans (dg_scan_desc, dg_backend.h).
 *
 * The row dims are coalesced (the scan dim kept apart); then 1, 32 or
 * DG_CU_THREADS threads scan each row (kernels/scan.cu):
 *   - a thread per row for short rows, and for rows that lie side by side in
 *     memory (a scan along an outer axis) when there are enough of them to
 *     fill the GPU: the threads of a warp then read neighbouring addresses;
 *   - a warp per row for rows of moderate length, when there are enough rows
 *     to give every multiprocessor a block of them;
 *   - else a block per row, in tiles with a running total;
 *   - but rows of at least SCAN_TILE_N elements, fewer than the
 *     multiprocessors, split into tiles over many blocks (scan_tiled): each
 *     block folds its tile's total into the stream's scratch (cu_scratch),
 *     a block per row scans those totals in place from the row's carry (the
 *     block kernel), and each block scans its tile from the total before
 *     it: three launches, the input read twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

/* At most this many elements per row: a thread per row. */
#define SCAN_THREAD_N 16
/* At most this many: a warp per row (when rows are many); more: a block. */
#define SCAN_WARP_N 4096
/* At least this many, in fewer rows than multiprocessors: tiles over many
 * blocks, at least SCAN_TILE_MIN block tiles (DG_CU_SCAN_SUB) each, their
 * length a power of two, about SCAN_TILE_BLOCKS (8 to 16) per multiprocessor
 * in all. */
#define SCAN_TILE_N (1 << 16)
#define SCAN_TILE_MIN 4
#define SCAN_TILE_BLOCKS 16

static int64_t scan_abs(int64_t x) { return x < 0 ? -x : x; }

/* "add", for messages. */
static const char *scan_name(int loop)
{
    const char *n = NULL;
    if (loop >= 0 && loop < dg_nloops)
        n = dg_ufunc_name(dg_loops[loop].ufunc);
    return n != NULL ? n : "?";
}

/* Checks that d describes a scan the kernels can run; sets *n (elements). */
static dg_status scan_check(const dg_scan_desc *d, int dev, int64_t *n, dg_error *err)
{
    const dg_loop_info *li;
    int a;

    if (d->ndim < 1 || d->ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed scan (ndim %d)", d->ndim);
    if (d->loop < 0 || d->loop >= dg_nloops)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "scan loop %d does not exist (there "
                            "are %d)", d->loop, dg_nloops);
    li = &dg_loops[d->loop];
    if (dg_dtype_size(d->dtype) == 0 || li->nin != 2 || li->nout != 1 ||
        li->dtypes[0] != d->dtype || li->dtypes[1] != d->dtype || li->dtypes[2] != d->dtype)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "loop %d of %s cannot scan dtype %d",
                            d->loop, scan_name(d->loop), d->dtype);
    if (!dg_cu_scan_has(d->loop))
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU cannot scan %s with %s",
                            dg_dtype_name(d->dtype), scan_name(d->loop));
    *n = 1;
    for (a = 0; a < d->ndim; a++) {
        if (d->shape[a] < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a scan shape below 0");
        *n *= d->shape[a];
    }
    if (*n > 0 && (d->src == NULL || d->dst == NULL))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a %s scan without %s",
                            scan_name(d->loop), d->src == NULL ? "input" : "output");
    return DG_OK;
}

/* The fewest side-by-side rows (a scan along an outer axis) that a thread
 * per row scans (coalesced: a warp reads 32 neighbouring rows' elements;
 * DG_SCAN_UNROLL loads in flight a thread); fewer take a block a row (every
 * element of a row in its own memory sector).  nsm * DG_CU_THREADS (a thread
 * for every slot of the GPU) unless DGARRAY_SCAN_SIDE_ROWS says otherwise (a
 * measuring aid, read at each call: the columns' scan of a 16384^2 float32
 * grid, 16384 rows of 8192, takes a block a row by default). */
static int64_t side_rows_min(int64_t nsm)
{
    const char *e = getenv("DGARRAY_SCAN_SIDE_ROWS");
    long long v = 0;
    if (e != NULL && sscanf(e, "%lld", &v) == 1 && v >= 2)
        return (int64_t)v;
    return nsm * DG_CU_THREADS;
}

/* Fills q from d (no extent 0) and chooses the threads per row and the
 * blocks (*blocks) for a device of nsm multiprocessors. */
static void scan_args(const dg_scan_desc *d, int64_t nsm, dg_cu_scan *q, unsigned *blocks)
{
    const int nrd = d->ndim - 1;
    int64_t rsh[DG_MAXDIM], rst[3][DG_MAXDIM], rows = 1, nb;
    int a, side;

    memset(q, 0, sizeof *q);
    for (a = 0; a < nrd; a++) {
        rsh[a] = d->shape[a];
        rst[0][a] = d->src_strides[a];
        rst[1][a] = d->dst_strides[a];
        rst[2][a] = d->carry != NULL ? d->carry_strides[a] : 0;
        rows *= rsh[a];
    }
    q->nrd = nrd > 0 ? cu_coalesce(nrd, rsh, 3, rst) : 0;
    for (a = 0; a < q->nrd; a++) {
        q->rshape[a] = rsh[a];
        q->rsrc[a] = rst[0][a];
        q->rdst[a] = rst[1][a];
        q->rcarry[a] = rst[2][a];
    }
    q->rows = rows;
    q->n = d->shape[nrd];
    q->ss = d->src_strides[nrd];
    q->ds = d->dst_strides[nrd];
    q->src = d->src;
    q->dst = d->dst;
    q->carry = d->carry;

    /* neighbouring rows closer in memory than neighbouring elements? */
    side = q->nrd > 0 && q->rows > 1 &&
           scan_abs(q->rsrc[q->nrd - 1]) < scan_abs(q->ss) &&
           scan_abs(q->rdst[q->nrd - 1]) < scan_abs(q->ds);
    if (q->n <= SCAN_THREAD_N || (side && rows >= side_rows_min(nsm))) {
        q->tpr = 1;
        nb = (rows + DG_CU_THREADS - 1) / DG_CU_THREADS;
        if (nb > nsm * 16)
            nb = nsm * 16;
    } else if (q->n <= SCAN_WARP_N && rows >= nsm * (DG_CU_THREADS / 32)) {
        q->tpr = 32;
        nb = (rows + DG_CU_THREADS / 32 - 1) / (DG_CU_THREADS / 32);
        if (nb > nsm * 16)
            nb = nsm * 16;
    } else {
        q->tpr = DG_CU_THREADS;
        nb = rows < nsm * 8 ? rows : nsm * 8;
    }
    *blocks = (unsigned)(nb < 1 ? 1 : nb);
}

/* The tiles of q's rows (element size isz) on a device of nsm
 * multiprocessors: sets q->tile and q->ntiles and returns 1 where the rows
 * are long and few enough to split (q->tpr DG_CU_THREADS), else 0.  Tile
 * lengths are powers of two, so the tiles' boundaries fall on the same
 * elements whatever nsm is, down to the shortest tile. */
static int scan_tiles(dg_cu_scan *q, int64_t nsm, int isz)
{
    int64_t tile = (int64_t)DG_CU_SCAN_SUB(isz) * SCAN_TILE_MIN, nt;
    if (q->tpr != DG_CU_THREADS || q->n < SCAN_TILE_N || q->rows >= nsm)
        return 0;
    while (q->rows * ((q->n + tile - 1) / tile) > nsm * SCAN_TILE_BLOCKS)
        tile *= 2;
    nt = (q->n + tile - 1) / tile;
    if (nt < 2)
        return 0;
    q->tile = tile;
    q->ntiles = nt;
    return 1;
}

/* Enqueues q's tiled scan (scan_tiles set its tiles) on s, the tiles'
 * totals in `part` ([rows][ntiles] of isz bytes): their totals, a block per
 * row scanning them in place from the carries, the tiles from their
 * prefixes.  The three launches share q's errstate record (one call). */
static cudaError_t scan_tiled(int loop, dg_cu_scan *q, int isz, char *part, cudaStream_t s)
{
    const unsigned blocks = (unsigned)(q->rows * q->ntiles);
    dg_cu_scan t = *q;
    int64_t step = q->ntiles * isz;
    cudaError_t ce;
    int a;

    q->part = part;
    q->pass = DG_CU_SCAN_TOTALS;
    ce = dg_cu_scan_launch(loop, q, blocks, s);
    if (ce != cudaSuccess)
        return ce;
    /* part's rows: the rows' dims, dense (row-major), ntiles each */
    t.pass = 0;
    t.n = q->ntiles;
    t.ss = t.ds = isz;
    t.src = t.dst = part;
    for (a = q->nrd - 1; a >= 0; a--) {
        t.rsrc[a] = t.rdst[a] = step;
        step *= q->rshape[a];
    }
    ce = dg_cu_scan_launch(loop, &t, (unsigned)q->rows, s);
    if (ce != cudaSuccess)
        return ce;
    q->pass = DG_CU_SCAN_TILES;
    return dg_cu_scan_launch(loop, q, blocks, s);
}

dg_status cu_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    const int isz = dg_dtype_size(d->dtype);
    const int64_t nsm = b->devs[dev].nsm > 0 ? b->devs[dev].nsm : 1;
    int64_t n = 0;
    unsigned blocks;
    dg_cu_scan q;
    cudaError_t ce;
    void *part = NULL;

    DG_CHECK(cu_check_stream(b, dev, stream, "scan", err));
    DG_CHECK(scan_check(d, dev, &n, err));
    if (n == 0)
        return DG_OK;
    scan_args(d, nsm, &q, &blocks);
    q.fpe = cu_fpe_args(b, dev, DG_CU_FPE_ACCUMULATE);
    DG_CHECK(cu_set_device(b, dev, err));
    /* (no room for the tiles' totals: a block per row) */
    if (scan_tiles(&q, nsm, isz))
        DG_CHECK(cu_scratch(b, dev, stream, (size_t)(q.rows * q.ntiles) * (size_t)isz, &part,
                            err));
    if (part != NULL)
        ce = scan_tiled(d->loop, &q, isz, (char *)part, b->devs[dev].st[stream].s);
    else
        ce = dg_cu_scan_launch(d->loop, &q, blocks, b->devs[dev].st[stream].s);
    if (ce != cudaSuccess) {
        char what[112];
        snprintf(what, sizeof what, "the kernel launch of a %s scan of %s (%d threads a row%s)",
                 scan_name(d->loop), dg_dtype_name(d->dtype), (int)q.tpr,
                 part != NULL ? ", tiled" : "");
        return cu_fail(err, ce, dev, 0, what);
    }
    cu_bump(b, dev, stream);
    return DG_OK;
}
