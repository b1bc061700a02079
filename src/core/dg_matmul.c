/* Contractions of distributed arrays (matmul, dot, tensordot, ...): the
 * planner and the execution.
 *
 * The plan.  The iteration space (output axes, then contracted axes) is cut
 * into a grid: along each axis at every boundary of a chunk of either
 * operand that follows it.  Each cell of the grid then lies inside or
 * outside every chunk, so each operand block a cell needs has a set of
 * holders, the devices with one chunk containing it.  The cells of one
 * output block (an output cell) differ only in their contracted ranges (its
 * k-cells).  Two whole plans are built and the one that finishes first by
 * the cost model (dg_mm_cost: compute, transfers, latencies) is kept:
 *   HOME:   every output cell on one device, its k-cells accumulated there
 *           in turn (SUMMA-like: blocks that must come from elsewhere are
 *           fetched on the transfer stream while the local k-cells compute);
 *           output cells are placed largest first where they finish first.
 *   KSPLIT: every k-cell where its blocks are (or where the least must
 *           move); an output cell whose k-cells ran on several devices has
 *           a partial sum on each, and the result is left in SUM mode,
 *           combined when read (as CuPy's matmul leaves it).
 * A row-split matrix times a replicated one thus computes where its rows
 * are with nothing moved; two row-split matrices compute where the rows of
 * the first are while the second's other blocks arrive; 2-D block layouts
 * (make_2d_index_map) compute each product where its blocks meet, moving the
 * smaller block when they do not.  When fewer output cells than devices
 * remain and the work is large, the longest output axis is cut further so
 * that every device gets a share.  Layouts the grid cannot describe (strided
 * chunks) or that would cut it too finely fall back to an output-stationary
 * plan: the result in the default layout, each chunk computed where it
 * lives from blocks the reshard planner assembles there.
 *
 * The execution.  The result's chunks are allocated from the plan; blocks
 * not in place are fetched first, on each device's transfer stream; then
 * every task enqueues the backend's gemm on its device's compute stream,
 * the first task of a chunk overwriting it and the others adding to it.
 * Operands whose blocks BLAS cannot take as they lie (contracted axes that
 * do not merge, no dense axis) are packed into dense blocks first. */
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_matmul.h"
#include "dg_ufunc.h"

const dg_mm_cost dg_mm_cost_default = {50e12, 200e9, 10e-6, 1e9};

/* Pairs (output cell, k-cell) above which, or above which times devices,
 * the grid is too fine and the output-stationary plan is used. */
#define MM_MAX_PAIRS (1 << 16)
#define MM_MAX_PAIR_DEVS (1 << 24)

/* ---- checks ------------------------------------------------------------------ */

/* Checks one operand's map; marks in `covers` the output axes it follows
 * without broadcasting. */
static dg_status check_operand(const dg_contract_call *c, const char *name, int ndim,
                               const int64_t *shape, const int *map, unsigned char *covers,
                               dg_error *err)
{
    int niter = c->ndim + c->nk, j, q;
    unsigned char seen[DG_MAXDIM] = {0};
    if (ndim < 0 || ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_VALUE, -1, "operand %s has %d axes", name, ndim);
    for (j = 0; j < ndim; j++) {
        int i = map[j];
        if (i < 0 || i >= niter)
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "axis %d of operand %s follows no axis of the product", j, name);
        if (seen[i])
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "two axes of operand %s follow the same axis of the product",
                                name);
        seen[i] = 1;
        if (shape[j] < 0)
            return dg_error_set(err, DG_ERR_VALUE, -1, "negative dimensions are not allowed");
        if (i < c->ndim) {
            if (shape[j] != c->shape[i] && shape[j] != 1)
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "axis %d of operand %s has size %lld, the product's axis "
                                    "%d size %lld", j, name, (long long)shape[j], i,
                                    (long long)c->shape[i]);
            if (shape[j] == c->shape[i])
                covers[i] = 1;
        } else if (shape[j] != c->kshape[i - c->ndim]) {
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "axis %d of operand %s has size %lld, contracted axis %d "
                                "size %lld", j, name, (long long)shape[j], i - c->ndim,
                                (long long)c->kshape[i - c->ndim]);
        }
    }
    for (q = 0; q < c->nk; q++)
        if (!seen[c->ndim + q])
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "contracted axis %d is not an axis of operand %s", q, name);
    return DG_OK;
}

dg_status dg_contract_check(const dg_contract_call *c, int a_ndim, const int64_t *a_shape,
                            int b_ndim, const int64_t *b_shape, dg_error *err)
{
    unsigned char covers[DG_MAXDIM] = {0};
    int i;
    if (c->ndim < 0 || c->nk < 0 || c->ndim + c->nk > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "a product of %d output and %d contracted axes: at most %d in all",
                            c->ndim, c->nk, DG_MAXDIM);
    for (i = 0; i < c->ndim; i++)
        if (c->shape[i] < 0)
            return dg_error_set(err, DG_ERR_VALUE, -1, "negative dimensions are not allowed");
    for (i = 0; i < c->nk; i++)
        if (c->kshape[i] < 0)
            return dg_error_set(err, DG_ERR_VALUE, -1, "negative dimensions are not allowed");
    DG_CHECK(check_operand(c, "a", a_ndim, a_shape, c->amap, covers, err));
    DG_CHECK(check_operand(c, "b", b_ndim, b_shape, c->bmap, covers, err));
    for (i = 0; i < c->ndim; i++)
        if (c->shape[i] != 1 && !covers[i])
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "output axis %d (size %lld) follows no axis of the operands", i,
                                (long long)c->shape[i]);
    return DG_OK;
}

/* ---- the planner ------------------------------------------------------------- */

/* An operand as the planner sees it. */
typedef struct mm_opnd {
    const dg_plan_chunk *l;
    int n;
    int ndim;
    const int64_t *shape;
    const int *map;
} mm_opnd;

/* 1 if axis j of x is broadcast against the product's axis it follows. */
static int is_bcast(const dg_contract_call *c, const int64_t *shape, const int *map, int j)
{
    return map[j] < c->ndim && shape[j] == 1 && c->shape[map[j]] != 1;
}

/* The block of an operand (ndim axes, map, shape) that iteration box T needs. */
static void project(const dg_contract_call *c, int ndim, const int64_t *shape, const int *map,
                    const dg_box *T, dg_box *out)
{
    int j;
    out->ndim = ndim;
    for (j = 0; j < ndim; j++)
        out->r[j] = is_bcast(c, shape, map, j) ? dg_range_make(0, 1, 1) : T->r[map[j]];
}

/* 1 if one chunk of x on dev holds all of B. */
static int holds(const mm_opnd *x, const dg_box *B, int dev)
{
    int i;
    for (i = 0; i < x->n; i++)
        if (x->l[i].device == dev && dg_box_contains(&x->l[i].box, B))
            return 1;
    return 0;
}

/* The grid: per iteration axis, the sorted cut points (0 and the extent
 * included). */
typedef struct mm_grid {
    int niter;
    int64_t ext[DG_MAXDIM];
    int ncut[DG_MAXDIM];
    int cap;
    int64_t *cut[DG_MAXDIM];
} mm_grid;

static void grid_free(mm_grid *g)
{
    int i;
    for (i = 0; i < g->niter; i++)
        free(g->cut[i]);
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Sorts axis i's cuts and drops duplicates. */
static void grid_sort(mm_grid *g, int i)
{
    int k, n = 0;
    qsort(g->cut[i], (size_t)g->ncut[i], sizeof(int64_t), cmp_i64);
    for (k = 0; k < g->ncut[i]; k++)
        if (n == 0 || g->cut[i][k] != g->cut[i][n - 1])
            g->cut[i][n++] = g->cut[i][k];
    g->ncut[i] = n;
}

static void grid_add(mm_grid *g, int i, int64_t v)
{
    if (g->ncut[i] < g->cap)
        g->cut[i][g->ncut[i]++] = v;
}

/* An empty grid (cuts 0 and extent on every axis) with room for cap cuts. */
static dg_status grid_init(mm_grid *g, const dg_contract_call *c, int cap, dg_error *err)
{
    int i;
    memset(g, 0, sizeof(*g));
    g->niter = c->ndim + c->nk;
    g->cap = cap;
    for (i = 0; i < g->niter; i++) {
        g->ext[i] = i < c->ndim ? c->shape[i] : c->kshape[i - c->ndim];
        g->cut[i] = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
        if (!g->cut[i]) {
            grid_free(g);
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        }
        grid_add(g, i, 0);
        grid_add(g, i, g->ext[i]);
    }
    return DG_OK;
}

/* Adds the boundaries of x's chunks; 0 if a chunk is strided along an axis
 * (the grid cannot describe it). */
static int grid_add_operand(mm_grid *g, const dg_contract_call *c, const mm_opnd *x)
{
    int i, j;
    for (i = 0; i < x->n; i++) {
        for (j = 0; j < x->ndim; j++) {
            dg_range r = x->l[i].box.r[j];
            if (is_bcast(c, x->shape, x->map, j) || dg_range_len(r) == 0)
                continue;
            if (r.step != 1 && dg_range_len(r) > 1)
                return 0;
            grid_add(g, x->map[j], r.start);
            grid_add(g, x->map[j], r.stop);
        }
    }
    return 1;
}

/* Cells of the grid over axes [lo, hi), saturating at 2^62. */
static int64_t grid_cells(const mm_grid *g, int lo, int hi)
{
    int64_t n = 1;
    int i;
    for (i = lo; i < hi; i++) {
        int64_t c = g->ncut[i] - 1;
        n = c > 0 && n > ((int64_t)1 << 62) / c ? (int64_t)1 << 62 : n * c;
    }
    return n;
}

/* The iteration box of output cell oc and k-cell kc (C order over the
 * cells of the output axes, and of the contracted axes). */
static void cell_box(const mm_grid *g, int ndim, int64_t oc, int64_t kc, dg_box *T)
{
    int i;
    T->ndim = g->niter;
    for (i = g->niter - 1; i >= 0; i--) {
        int64_t *x = i < ndim ? &oc : &kc;
        int64_t n = g->ncut[i] - 1, k = *x % n;
        *x /= n;
        T->r[i] = dg_range_make(g->cut[i][k], g->cut[i][k + 1], 1);
    }
}

static double box_elems(const dg_box *b, int lo, int hi)
{
    double n = 1;
    int i;
    for (i = lo; i < hi; i++)
        n *= (double)dg_range_len(b->r[i]);
    return n;
}

/* What the strategies need to know of each (output cell, k-cell) pair. */
typedef struct mm_pairs {
    int64_t nout, nk;     /* output cells, k-cells per output cell */
    int ndev;
    double *abytes, *bbytes, *flops; /* per pair */
    double *obytes;       /* per output cell */
    unsigned char *hold;  /* [pair * ndev + dev]: bit 0 a's block there, bit 1 b's */
} mm_pairs;

static void pairs_free(mm_pairs *p)
{
    free(p->abytes);
    free(p->bbytes);
    free(p->flops);
    free(p->obytes);
    free(p->hold);
}

static dg_status pairs_build(const mm_grid *g, const dg_contract_call *c, const mm_opnd *A,
                             const mm_opnd *B, int ndev, int isz, mm_pairs *p, dg_error *err)
{
    int64_t oc, kc, np;
    int i;
    memset(p, 0, sizeof(*p));
    p->nout = grid_cells(g, 0, c->ndim);
    p->nk = grid_cells(g, c->ndim, g->niter);
    p->ndev = ndev;
    np = p->nout * p->nk;
    p->abytes = (double *)malloc((size_t)np * sizeof(double));
    p->bbytes = (double *)malloc((size_t)np * sizeof(double));
    p->flops = (double *)malloc((size_t)np * sizeof(double));
    p->obytes = (double *)malloc((size_t)p->nout * sizeof(double));
    p->hold = (unsigned char *)calloc((size_t)(np * ndev), 1);
    if (!p->abytes || !p->bbytes || !p->flops || !p->obytes || !p->hold) {
        pairs_free(p);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (oc = 0; oc < p->nout; oc++) {
        for (kc = 0; kc < p->nk; kc++) {
            int64_t q = oc * p->nk + kc;
            dg_box T, ba, bb;
            cell_box(g, c->ndim, oc, kc, &T);
            project(c, A->ndim, A->shape, A->map, &T, &ba);
            project(c, B->ndim, B->shape, B->map, &T, &bb);
            p->abytes[q] = (double)dg_box_size(&ba) * isz;
            p->bbytes[q] = (double)dg_box_size(&bb) * isz;
            p->flops[q] = 2.0 * box_elems(&T, 0, g->niter);
            if (kc == 0)
                p->obytes[oc] = box_elems(&T, 0, c->ndim) * isz;
            for (i = 0; i < A->n; i++)
                if (dg_box_contains(&A->l[i].box, &ba))
                    p->hold[q * ndev + A->l[i].device] |= 1;
            for (i = 0; i < B->n; i++)
                if (dg_box_contains(&B->l[i].box, &bb))
                    p->hold[q * ndev + B->l[i].device] |= 2;
        }
    }
    return DG_OK;
}

/* Bytes and blocks that must come to dev for pair q. */
static double missing(const mm_pairs *p, int64_t q, int dev, int *nmiss)
{
    unsigned char h = p->hold[q * p->ndev + dev];
    double in = 0;
    *nmiss = 0;
    if (!(h & 1)) {
        in += p->abytes[q];
        (*nmiss)++;
    }
    if (!(h & 2)) {
        in += p->bbytes[q];
        (*nmiss)++;
    }
    return in;
}

/* a < b by more than rounding. */
static int less(double a, double b)
{
    return a < b - 1e-12 * (a > b ? a : b);
}

/* Output cells, largest first (ties in grid order). */
static int64_t *cells_by_size(const mm_pairs *p)
{
    int64_t *ord = (int64_t *)malloc((size_t)(p->nout > 0 ? p->nout : 1) * sizeof(int64_t));
    int64_t i, j;
    if (!ord)
        return NULL;
    for (i = 0; i < p->nout; i++) {
        int64_t v = i;
        for (j = i; j > 0 && p->obytes[ord[j - 1]] < p->obytes[v]; j--)
            ord[j] = ord[j - 1];
        ord[j] = v;
    }
    return ord;
}

/* The largest of n loads. */
static double max_load(const double *load, int n)
{
    double m = 0;
    int d;
    for (d = 0; d < n; d++)
        if (load[d] > m)
            m = load[d];
    return m;
}

/* HOME: each output cell where it finishes first, its k-cells in turn there,
 * blocks from elsewhere arriving while the local k-cells compute.  Writes
 * the device of every pair; returns the estimated finish time.  load: zeros
 * in, each device's estimated busy time out. */
static double plan_home(const mm_pairs *p, const int64_t *ord, const dg_mm_cost *k,
                        int *pdev, double *load)
{
    int64_t o, kc;
    int d;
    for (o = 0; o < p->nout; o++) {
        int64_t oc = ord[o];
        int best = -1;
        double bt = 0, bin = 0;
        for (d = 0; d < p->ndev; d++) {
            double in = 0, fl = 0, local = 0, t;
            int nm = 0;
            for (kc = 0; kc < p->nk; kc++) {
                int64_t q = oc * p->nk + kc;
                int m;
                in += missing(p, q, d, &m);
                nm += m;
                fl += p->flops[q];
                if (m == 0)
                    local += p->flops[q];
            }
            t = in / k->link_bw - local / k->flop_rate;
            t = load[d] + fl / k->flop_rate + (t > 0 ? t : 0) + nm * k->latency;
            if (best < 0 || less(t, bt) || (!less(bt, t) && (less(in, bin) ||
                                                             (!less(bin, in) &&
                                                              less(load[d], load[best]))))) {
                best = d;
                bt = t;
                bin = in;
            }
        }
        load[best] = bt;
        for (kc = 0; kc < p->nk; kc++)
            pdev[oc * p->nk + kc] = best;
    }
    return max_load(load, p->ndev);
}

/* KSPLIT: each k-cell where the least must move (preferring devices the
 * output cell already uses, then the least loaded); partial sums of an
 * output cell on several devices cost their combination.  Writes the device
 * of every pair; returns the estimated finish time.  load: zeros in. */
static double plan_ksplit(const mm_pairs *p, const int64_t *ord, const dg_mm_cost *k,
                          int *pdev, double *load, unsigned char *used)
{
    int64_t o, kc;
    int d;
    for (o = 0; o < p->nout; o++) {
        const int64_t oc = ord[o];
        int nused = 0;
        memset(used, 0, (size_t)p->ndev);
        for (kc = 0; kc < p->nk; kc++) {
            int64_t q = oc * p->nk + kc;
            int best = -1, bm = 0, m;
            double bin = 0, in;
            for (d = 0; d < p->ndev; d++) {
                in = missing(p, q, d, &m);
                if (best < 0 || less(in, bin) ||
                    (!less(bin, in) && (used[d] > used[best] ||
                                        (used[d] == used[best] && less(load[d], load[best]))))) {
                    best = d;
                    bin = in;
                    bm = m;
                }
            }
            load[best] += p->flops[q] / k->flop_rate + bin / k->link_bw + bm * k->latency;
            if (!used[best]++)
                nused++;
            pdev[q] = best;
        }
        /* every device holding a partial adds the others' */
        for (d = 0; d < p->ndev; d++)
            if (used[d])
                load[d] += (nused - 1) * (p->obytes[oc] / k->link_bw + k->latency);
    }
    return max_load(load, p->ndev);
}

/* Appends a task. */
static dg_status push_task(dg_mm_plan *pl, int *cap, const dg_mm_task *t, dg_error *err)
{
    if (pl->ntasks == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        dg_mm_task *x = (dg_mm_task *)realloc(pl->tasks, (size_t)nc * sizeof(dg_mm_task));
        if (!x)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        pl->tasks = x;
        *cap = nc;
    }
    pl->tasks[pl->ntasks++] = *t;
    return DG_OK;
}

/* 1 if tasks s and t (same chunk, both local) can be one: their boxes differ
 * on one contracted axis only, where they meet, and the union's blocks are
 * each in one chunk on the device.  *u: the union. */
static int mergeable(const dg_contract_call *c, const mm_opnd *A, const mm_opnd *B,
                     const dg_mm_task *s, const dg_mm_task *t, dg_box *u)
{
    int i, diff = -1;
    dg_box ba, bb;
    if (s->chunk != t->chunk || !s->a_local || !s->b_local || !t->a_local || !t->b_local)
        return 0;
    for (i = 0; i < s->box.ndim; i++) {
        if (s->box.r[i].start == t->box.r[i].start && s->box.r[i].stop == t->box.r[i].stop)
            continue;
        if (diff >= 0 || i < c->ndim || s->box.r[i].stop != t->box.r[i].start)
            return 0;
        diff = i;
    }
    if (diff < 0)
        return 0;
    *u = s->box;
    u->r[diff] = dg_range_make(s->box.r[diff].start, t->box.r[diff].stop, 1);
    project(c, A->ndim, A->shape, A->map, u, &ba);
    project(c, B->ndim, B->shape, B->map, u, &bb);
    return holds(A, &ba, s->device) && holds(B, &bb, s->device);
}

/* Joins neighbouring local tasks of a chunk into one product, then orders
 * the tasks: on every device those with both blocks in place first (they
 * compute while the others' blocks arrive), and marks each chunk's first. */
static dg_status finish_tasks(const dg_contract_call *c, const mm_opnd *A, const mm_opnd *B,
                              dg_mm_plan *pl, dg_error *err)
{
    int i, n = 0;
    dg_mm_task *ord = (dg_mm_task *)malloc((size_t)(pl->ntasks ? pl->ntasks : 1) *
                                           sizeof(dg_mm_task));
    unsigned char *seen = (unsigned char *)calloc((size_t)(pl->nchunks ? pl->nchunks : 1), 1);
    if (!ord || !seen) {
        free(ord);
        free(seen);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    /* group by chunk (a stable counting sort) */
    {
        int *start = (int *)calloc((size_t)pl->nchunks + 1, sizeof(int));
        if (!start) {
            free(ord);
            free(seen);
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        }
        for (i = 0; i < pl->ntasks; i++)
            start[pl->tasks[i].chunk + 1]++;
        for (i = 0; i < pl->nchunks; i++)
            start[i + 1] += start[i];
        for (i = 0; i < pl->ntasks; i++)
            ord[start[pl->tasks[i].chunk]++] = pl->tasks[i];
        free(start);
    }
    /* one pass joining each task to the next of its chunk where they meet
     * (a chunk's tasks run along its k-cells in C order) */
    for (i = 0; i < pl->ntasks; i++) {
        dg_box u;
        if (n > 0 && mergeable(c, A, B, &ord[n - 1], &ord[i], &u))
            ord[n - 1].box = u;
        else
            ord[n++] = ord[i];
    }
    /* local tasks first, each chunk's first task overwriting it */
    pl->ntasks = 0;
    for (i = 0; i < n; i++)
        if (ord[i].a_local && ord[i].b_local)
            pl->tasks[pl->ntasks++] = ord[i];
    for (i = 0; i < n; i++)
        if (!(ord[i].a_local && ord[i].b_local))
            pl->tasks[pl->ntasks++] = ord[i];
    for (i = 0; i < pl->ntasks; i++) {
        pl->tasks[i].first = !seen[pl->tasks[i].chunk];
        seen[pl->tasks[i].chunk] = 1;
    }
    free(ord);
    free(seen);
    return DG_OK;
}

/* The output-stationary plan: the result in the default layout, each chunk
 * computed on its device over the whole contracted range. */
static dg_status plan_fallback(const dg_contract_call *c, int ndev, int isz,
                               const mm_opnd *A, const mm_opnd *B, dg_mm_plan *pl,
                               dg_error *err)
{
    int i, cap = 0, q;
    DG_CHECK(dg_layout_default(ndev, c->ndim, c->shape, (size_t)isz, c->min_split_bytes,
                               &pl->chunks, &pl->nchunks, err));
    pl->fallback = 1;
    for (i = 0; i < pl->nchunks; i++) {
        dg_mm_task t;
        dg_box ba, bb;
        memset(&t, 0, sizeof(t));
        t.device = pl->chunks[i].device;
        t.chunk = i;
        t.box = pl->chunks[i].box;
        t.box.ndim = c->ndim + c->nk;
        for (q = 0; q < c->nk; q++)
            t.box.r[c->ndim + q] = dg_range_make(0, c->kshape[q], 1);
        project(c, A->ndim, A->shape, A->map, &t.box, &ba);
        project(c, B->ndim, B->shape, B->map, &t.box, &bb);
        t.a_local = holds(A, &ba, t.device);
        t.b_local = holds(B, &bb, t.device);
        DG_CHECK(push_task(pl, &cap, &t, err));
    }
    return finish_tasks(c, A, B, pl, err);
}

/* Chunks and tasks from the device of every pair. */
static dg_status plan_from_pairs(const mm_grid *g, const dg_contract_call *c, const mm_pairs *p,
                                 const int *pdev, dg_mm_plan *pl, dg_error *err)
{
    int64_t oc, kc;
    int d, cap = 0, overlap = 0;
    int *chunk_of = (int *)malloc((size_t)p->ndev * sizeof(int));
    dg_status st = DG_OK;
    if (!chunk_of)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    pl->chunks = (dg_plan_chunk *)malloc((size_t)(p->nout * p->nk) * sizeof(dg_plan_chunk));
    if (!pl->chunks) {
        free(chunk_of);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (oc = 0; oc < p->nout && st == DG_OK; oc++) {
        int nchunk = 0;
        dg_box T;
        for (d = 0; d < p->ndev; d++)
            chunk_of[d] = -1;
        for (kc = 0; kc < p->nk; kc++)
            chunk_of[pdev[oc * p->nk + kc]] = 0;
        for (d = 0; d < p->ndev; d++) {
            if (chunk_of[d] < 0)
                continue;
            cell_box(g, c->ndim, oc, 0, &T);
            chunk_of[d] = pl->nchunks;
            pl->chunks[pl->nchunks].device = d;
            pl->chunks[pl->nchunks].box = T;
            pl->chunks[pl->nchunks].box.ndim = c->ndim;
            pl->nchunks++;
            nchunk++;
        }
        overlap |= nchunk > 1;
        for (kc = 0; kc < p->nk && st == DG_OK; kc++) {
            int64_t q = oc * p->nk + kc;
            dg_mm_task t;
            memset(&t, 0, sizeof(t));
            t.device = pdev[q];
            t.chunk = chunk_of[t.device];
            cell_box(g, c->ndim, oc, kc, &t.box);
            t.a_local = p->hold[q * p->ndev + t.device] & 1;
            t.b_local = (p->hold[q * p->ndev + t.device] >> 1) & 1;
            st = push_task(pl, &cap, &t, err);
        }
    }
    free(chunk_of);
    pl->mode = overlap ? DG_MODE_SUM : DG_MODE_REPLICA;
    return st;
}

/* Cuts the longest output axis into `ndev` near-equal parts when the grid
 * has fewer output cells than devices and the work is worth sharing. */
static void grid_refine(mm_grid *g, const dg_contract_call *c, int ndev, double flops,
                        const dg_mm_cost *k)
{
    int i, best = -1, p;
    if (grid_cells(g, 0, c->ndim) >= ndev || flops < k->min_split_flops)
        return;
    for (i = 0; i < c->ndim; i++)
        if (g->ext[i] >= 2 && (best < 0 || g->ext[i] > g->ext[best]))
            best = i;
    if (best < 0)
        return;
    p = g->ext[best] < ndev ? (int)g->ext[best] : ndev;
    for (i = 1; i < p; i++)
        grid_add(g, best, g->ext[best] * i / p);
    grid_sort(g, best);
}

void dg_mm_plan_free(dg_mm_plan *plan)
{
    free(plan->chunks);
    free(plan->tasks);
    memset(plan, 0, sizeof(*plan));
}

dg_status dg_mm_plan_build(const dg_contract_call *c, int ndevices, int itemsize,
                           const dg_plan_chunk *al, int na, int a_ndim, const int64_t *a_shape,
                           const dg_plan_chunk *bl, int nb, int b_ndim, const int64_t *b_shape,
                           const dg_mm_cost *cost, dg_mm_plan *plan, dg_error *err)
{
    mm_opnd A = {al, na, a_ndim, a_shape, c->amap}, B = {bl, nb, b_ndim, b_shape, c->bmap};
    mm_grid g;
    mm_pairs p;
    int *ph = NULL, *pk = NULL, i, ok;
    int64_t *ord = NULL;
    double *load = NULL, th, tk, total = 1;
    unsigned char *used = NULL;
    dg_status st = DG_OK;

    memset(plan, 0, sizeof(*plan));
    memset(&p, 0, sizeof(p));
    if (!cost)
        cost = &dg_mm_cost_default;
    if (ndevices < 1 || itemsize < 1)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a product planned for %d devices",
                            ndevices);
    DG_CHECK(dg_contract_check(c, a_ndim, a_shape, b_ndim, b_shape, err));
    for (i = 0; i < c->ndim; i++)
        total *= (double)c->shape[i];
    if (total == 0) { /* an empty result: one empty chunk */
        plan->chunks = (dg_plan_chunk *)calloc(1, sizeof(dg_plan_chunk));
        if (!plan->chunks)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        plan->nchunks = 1;
        dg_box_full(&plan->chunks[0].box, c->ndim, c->shape);
        return DG_OK;
    }
    for (i = 0; i < c->nk; i++)
        total *= (double)c->kshape[i];
    if (total == 0) /* nothing contracted: zeros in the default layout, no tasks */
        return dg_layout_default(ndevices, c->ndim, c->shape, (size_t)itemsize,
                                 c->min_split_bytes, &plan->chunks, &plan->nchunks, err);

    DG_CHECK(grid_init(&g, c, 2 * (na + nb) + ndevices + 2, err));
    ok = grid_add_operand(&g, c, &A) && grid_add_operand(&g, c, &B);
    for (i = 0; i < g.niter; i++)
        grid_sort(&g, i);
    if (ok)
        grid_refine(&g, c, ndevices, 2 * total, cost);
    ok = ok && grid_cells(&g, 0, g.niter) <= MM_MAX_PAIRS &&
         grid_cells(&g, 0, g.niter) * ndevices <= MM_MAX_PAIR_DEVS;
    if (!ok) {
        grid_free(&g);
        st = plan_fallback(c, ndevices, itemsize, &A, &B, plan, err);
        if (st != DG_OK)
            dg_mm_plan_free(plan);
        return st;
    }
    DG_CHECK_GOTO(pairs_build(&g, c, &A, &B, ndevices, itemsize, &p, err), st, done);
    ph = (int *)malloc((size_t)(p.nout * p.nk) * sizeof(int));
    pk = (int *)malloc((size_t)(p.nout * p.nk) * sizeof(int));
    load = (double *)malloc((size_t)ndevices * sizeof(double));
    used = (unsigned char *)malloc((size_t)ndevices);
    ord = cells_by_size(&p);
    if (!ph || !pk || !load || !used || !ord) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    memset(load, 0, (size_t)ndevices * sizeof(double));
    th = plan_home(&p, ord, cost, ph, load);
    memset(load, 0, (size_t)ndevices * sizeof(double));
    tk = p.nk > 1 ? plan_ksplit(&p, ord, cost, pk, load, used) : th;
    DG_CHECK_GOTO(plan_from_pairs(&g, c, &p, less(tk, th) ? pk : ph, plan, err), st,
                  done);
    st = finish_tasks(c, &A, &B, plan, err);
done:
    if (st != DG_OK)
        dg_mm_plan_free(plan);
    pairs_free(&p);
    grid_free(&g);
    free(ph);
    free(pk);
    free(load);
    free(used);
    free(ord);
    return st;
}

/* ---- one product ---------------------------------------------------------------- */

/* Byte strides of an operand block (strides rs per operand axis) along each
 * iteration axis: 0 where the operand does not follow it or is broadcast. */
static void iter_strides(const dg_contract_call *c, int ndim, const int64_t *shape,
                         const int *map, const int64_t *rs, int64_t *s)
{
    int j;
    memset(s, 0, sizeof(int64_t) * DG_MAXDIM);
    for (j = 0; j < ndim; j++)
        if (!is_bcast(c, shape, map, j))
            s[map[j]] = rs[j];
}

enum { MM_PACK_A = 1, MM_PACK_B = 2, MM_BAD_C = 4 };

/* Merges the axes `ax` (n of them, in iteration order) from the innermost
 * outwards while both stride sets (s0, s1) stay consistent.  Returns how many
 * outer axes are left unmerged; *e, *t0, *t1: the merged extent and strides. */
static int merge_group(const int *ax, int n, const int64_t *ext, const int64_t *s0,
                       const int64_t *s1, int64_t *e, int64_t *t0, int64_t *t1)
{
    int k;
    *e = 1;
    *t0 = *t1 = 0;
    if (n == 0)
        return 0;
    *e = ext[ax[n - 1]];
    *t0 = s0[ax[n - 1]];
    *t1 = s1[ax[n - 1]];
    for (k = n - 2; k >= 0; k--) {
        if (s0[ax[k]] != *e * *t0 || s1[ax[k]] != *e * *t1)
            return k + 1;
        *e *= ext[ax[k]];
    }
    return 0;
}

/* The gemm descriptor of iteration box T with the operand blocks at
 * (ap, sa) and (bp, sb) and the result at (cp, sc), all strides per iteration
 * axis.  Returns 0, or MM_* bits saying which operand must be packed first. */
static int gemm_build(const dg_contract_call *c, const dg_box *T, const unsigned char *ina,
                      const unsigned char *inb, const char *ap, const int64_t *sa,
                      const char *bp, const int64_t *sb, char *cp, const int64_t *sc,
                      int dtype, dg_gemm_desc *d)
{
    int64_t e[DG_MAXDIM], zero[DG_MAXDIM] = {0};
    int mg[DG_MAXDIM], ng[DG_MAXDIM], kg[DG_MAXDIM], bt[DG_MAXDIM];
    int nm = 0, nn = 0, nkk = 0, nb = 0, i, left, bad = 0, col;
    const int isz = dg_dtype_size(dtype);
    char kind = dg_dtype_kind(dtype);
    int64_t dummy, ld, kx;

    memset(d, 0, sizeof(*d));
    d->dtype = dtype;
    d->allow_tf32 = c->allow_tf32;
    d->a = ap;
    d->b = bp;
    d->c = cp;
    for (i = 0; i < T->ndim; i++) {
        e[i] = dg_range_len(T->r[i]);
        if (e[i] <= 1)
            continue;
        if (i >= c->ndim)
            kg[nkk++] = i;
        else if (ina[i] && inb[i])
            bt[nb++] = i;
        else if (ina[i])
            mg[nm++] = i;
        else
            ng[nn++] = i;
    }
    /* contracted axes: one dimension in both operands, or pack */
    left = merge_group(kg, nkk, e, sa, zero, &d->k, &d->a_cs, &dummy);
    if (left)
        bad |= MM_PACK_A;
    left = merge_group(kg, nkk, e, sb, zero, &kx, &d->b_rs, &dummy);
    if (left)
        bad |= MM_PACK_B;
    /* rows of a and c; unmerged outer ones become batch dims (b broadcast) */
    left = merge_group(mg, nm, e, sa, sc, &d->m, &d->a_rs, &d->c_rs);
    for (i = 0; i < left; i++)
        bt[nb++] = mg[i];
    left = merge_group(ng, nn, e, sb, sc, &d->n, &d->b_cs, &d->c_cs);
    for (i = 0; i < left; i++)
        bt[nb++] = ng[i];
    /* batch dims in iteration order, neighbours merged where all agree */
    for (i = 1; i < nb; i++) { /* insertion sort: the leftovers came last */
        int v = bt[i], j = i;
        while (j > 0 && bt[j - 1] > v) {
            bt[j] = bt[j - 1];
            j--;
        }
        bt[j] = v;
    }
    for (i = 0; i < nb; i++) {
        int ax = bt[i], k = d->nbatch - 1;
        if (k >= 0 && d->a_bs[k] == e[ax] * sa[ax] && d->b_bs[k] == e[ax] * sb[ax] &&
            d->c_bs[k] == e[ax] * sc[ax]) {
            d->batch[k] *= e[ax]; /* one dimension with the previous */
        } else {
            k = d->nbatch++;
            d->batch[k] = e[ax];
        }
        d->a_bs[k] = sa[ax];
        d->b_bs[k] = sb[ax];
        d->c_bs[k] = sc[ax];
    }
    if (kind == 'f' || kind == 'c') {
        if (!dg_gemm_blas_layout(d->m, d->k, d->a_rs, d->a_cs, isz, &col, &ld))
            bad |= MM_PACK_A;
        if (!dg_gemm_blas_layout(d->k, d->n, d->b_rs, d->b_cs, isz, &col, &ld))
            bad |= MM_PACK_B;
        if (!dg_gemm_blas_layout(d->m, d->n, d->c_rs, d->c_cs, isz, &col, &ld))
            bad |= MM_BAD_C;
    }
    return bad;
}

/* Copies an operand block (extents from box, strides rs) into a new dense
 * buffer on dev whose axes run in the order BLAS wants: for a, batch axes,
 * then rows, then contracted axes; for b, batch axes, contracted axes, then
 * columns (is_b).  On success *out holds the new buffer and its strides
 * (per operand axis); the old one is left to the caller. */
static dg_status pack_block(dg_backend_i *be, const dg_contract_call *c, int isz, int dev,
                            int ndim, const int64_t *shape, const int *map,
                            const unsigned char *other, int is_b, const dg_box *box,
                            const dg_region_src *in, dg_region_src *out, dg_error *err)
{
    int ord[DG_MAXDIM], key[DG_MAXDIM], j, k;
    int64_t s = isz;
    dg_copy_desc cp;
    dg_access acc[2];
    dg_status st;
    for (j = 0; j < ndim; j++) {
        int i = map[j];
        if (i >= c->ndim)
            key[j] = is_b ? 1 : 2;
        else if (is_bcast(c, shape, map, j) || other[i])
            key[j] = 0;
        else
            key[j] = is_b ? 2 : 1;
        key[j] = key[j] * DG_MAXDIM * 2 + i;
    }
    for (j = 0; j < ndim; j++) {
        int v = j;
        for (k = j; k > 0 && key[ord[k - 1]] > key[v]; k--)
            ord[k] = ord[k - 1];
        ord[k] = v;
    }
    memset(out, 0, sizeof(*out));
    for (k = ndim - 1; k >= 0; k--) {
        int64_t n = dg_range_len(box->r[ord[k]]);
        out->strides[ord[k]] = n > 1 ? s : 0;
        s *= n;
    }
    DG_CHECK(dg_buffer_new(be, dev, (size_t)s, &out->buf, err));
    out->ptr = (char *)out->buf->ptr;
    memset(&cp, 0, sizeof(cp));
    cp.ndim = ndim;
    cp.itemsize = isz;
    for (j = 0; j < ndim; j++) {
        cp.shape[j] = dg_range_len(box->r[j]);
        cp.src_strides[j] = in->strides[j];
        cp.dst_strides[j] = out->strides[j];
    }
    cp.src_dev = cp.dst_dev = dev;
    cp.src = in->ptr;
    cp.dst = out->ptr;
    acc[0] = dg_read(in->buf);
    acc[1] = dg_write(out->buf);
    st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 2, dg_work_copy(&cp), err);
    if (st != DG_OK) {
        dg_buffer_decref(be, out->buf);
        out->buf = NULL;
        return st;
    }
    return DG_OK;
}

/* ---- execution ----------------------------------------------------------------- */

/* What the execution keeps of one operand. */
typedef struct mm_src {
    dg_array *x;
    const int *map;
    unsigned char in[DG_MAXDIM]; /* output axes it follows without broadcasting */
} mm_src;

/* Block of operand x for task t on its device: the one fetched ahead
 * (pre, a new reference taken here), or fetched now on the compute stream. */
static dg_status task_block(const dg_contract_call *c, const mm_src *x, const dg_mm_task *t,
                            const dg_region_src *pre, dg_box *box, dg_region_src *out,
                            dg_error *err)
{
    project(c, x->x->ndim, x->x->shape, x->map, &t->box, box);
    if (pre->buf) {
        *out = *pre;
        out->buf->refcnt++;
        return DG_OK;
    }
    return dg_fetch_region_local(x->x, box, t->device, DG_STREAM_COMPUTE, out, err);
}

/* Products of one element (a dot: m = n = 1, no batch) of a float or
 * complex dtype other than float16, k at most this many bytes an operand,
 * run as the backend's own loops: an elementwise multiply into a temporary,
 * a sum reduction into C (or into the temporary's last element, added to C
 * with beta).  cuBLAS's gemv for one output folds its k-split in a kernel
 * that took 30 us for k = 16384 on an H200, ten times these loops. */
#define MM_DOT_LOOP_BYTES ((int64_t)64 << 20)

static int dot_by_loops(const dg_gemm_desc *d)
{
    const char kind = dg_dtype_kind(d->dtype);
    return d->nbatch == 0 && d->m == 1 && d->n == 1 && d->k > 0 &&
           (kind == 'f' || kind == 'c') && d->dtype != DG_FLOAT16 &&
           d->k * dg_dtype_size(d->dtype) <= MM_DOT_LOOP_BYTES;
}

/* The products of a task: the backend's gemm of d, or, with tmp (a buffer
 * of k + 1 elements on the device), the dot d by loops (dot_by_loops). */
typedef struct mm_work {
    const dg_gemm_desc *d;
    dg_buffer *tmp;
} mm_work;

/* The dot d (dot_by_loops) on (dev, stream), through tmp, after the waits
 * for the operands, C and tmp. */
static dg_status dot_loops(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                           dg_buffer *tmp, dg_error *err)
{
    const int isz = dg_dtype_size(d->dtype);
    const int dts[3] = {d->dtype, d->dtype, d->dtype};
    const int mul = dg_loop_find(DG_UF_multiply, dts);
    const int add = dg_loop_find(DG_UF_add, dts);
    char *t, *sum;
    dg_ew_desc e;
    dg_reduce_desc r;
    dg_status st;

    if (mul < 0 || add < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "no multiply or add loop of %s",
                            dg_dtype_name(d->dtype));
    t = (char *)tmp->ptr;
    sum = d->beta ? t + d->k * isz : d->c;
    memset(&e, 0, sizeof e);
    e.loop = mul;
    e.ndim = 1;
    e.shape[0] = d->k;
    e.nop = 3;
    e.data[0] = (char *)d->a;
    e.strides[0][0] = d->a_cs;
    e.data[1] = (char *)d->b;
    e.strides[1][0] = d->b_rs;
    e.data[2] = t;
    e.strides[2][0] = isz;
    st = dg_be_elementwise(be, dev, stream, &e, err);
    if (st == DG_OK) {
        memset(&r, 0, sizeof r);
        r.kind = DG_RED_LOOP;
        r.loop = add;
        r.dtype = d->dtype;
        r.ndim = 1;
        r.nred = 1;
        r.shape[0] = d->k;
        r.src = t;
        r.src_strides[0] = isz;
        r.dst = sum;
        st = dg_be_reduce(be, dev, stream, &r, err);
    }
    if (st == DG_OK && d->beta) { /* C = C + the sum */
        memset(&e, 0, sizeof e);
        e.loop = add;
        e.ndim = 1;
        e.shape[0] = 1;
        e.nop = 3;
        e.data[0] = d->c;
        e.data[1] = sum;
        e.data[2] = d->c;
        st = dg_be_elementwise(be, dev, stream, &e, err);
    }
    return st;
}

static dg_status run_products(dg_backend_i *be, int dev, int stream, void *ctx, dg_error *err)
{
    const mm_work *w = (const mm_work *)ctx;
    if (w->tmp)
        return dot_loops(be, dev, stream, w->d, w->tmp, err);
    return dg_be_gemm(be, dev, stream, w->d, err);
}

/* The gemm descriptor *d of iteration box T computed on dev from the operand
 * blocks *ra and *rb (boxes ba and bb of the operands) into the result at
 * (cptr, byte strides sc per iteration axis): an operand BLAS cannot take
 * as it lies is packed on dev first, *ra or *rb then holding the packed
 * block (the reference to the old one dropped). */
static dg_status build_packed(const dg_contract_call *c, const mm_src *A, const mm_src *B,
                              const dg_box *T, int dev, const dg_box *ba, dg_region_src *ra,
                              const dg_box *bb, dg_region_src *rb, char *cptr,
                              const int64_t *sc, dg_gemm_desc *d, dg_error *err)
{
    dg_backend_i *be = A->x->be;
    const int isz = dg_dtype_size(A->x->dtype);
    int64_t sa[DG_MAXDIM], sb[DG_MAXDIM];
    dg_region_src tmp;
    int bad, round;
    for (round = 0;; round++) {
        iter_strides(c, A->x->ndim, A->x->shape, A->map, ra->strides, sa);
        iter_strides(c, B->x->ndim, B->x->shape, B->map, rb->strides, sb);
        bad = gemm_build(c, T, A->in, B->in, ra->ptr, sa, rb->ptr, sb, cptr, sc, A->x->dtype, d);
        if (!bad)
            return DG_OK;
        if (round > 0 || (bad & MM_BAD_C))
            return dg_error_set(err, DG_ERR_INTERNAL, dev,
                                "no BLAS layout for a product block (case %d)", bad);
        if (bad & MM_PACK_A) {
            DG_CHECK(pack_block(be, c, isz, dev, A->x->ndim, A->x->shape, A->map, B->in, 0, ba,
                                ra, &tmp, err));
            dg_buffer_decref(be, ra->buf);
            *ra = tmp;
        }
        if (bad & MM_PACK_B) {
            DG_CHECK(pack_block(be, c, isz, dev, B->x->ndim, B->x->shape, B->map, A->in, 1, bb,
                                rb, &tmp, err));
            dg_buffer_decref(be, rb->buf);
            *rb = tmp;
        }
    }
}

/* Enqueues the products d on dev's compute stream, reading abuf and bbuf
 * and writing cbuf (as a whole: wide, the whole of it; else the chunk's
 * product, first or added). */
static dg_status enqueue_products(dg_backend_i *be, int dev, const dg_gemm_desc *d,
                                  dg_buffer *abuf, dg_buffer *bbuf, dg_buffer *cbuf,
                                  dg_error *err)
{
    const int isz = dg_dtype_size(d->dtype);
    mm_work work = {NULL, NULL};
    const dg_work w = {run_products, &work};
    dg_access acc[4];
    dg_status st;
    work.d = d;
    if (dot_by_loops(d))
        DG_CHECK(dg_buffer_new(be, dev, (size_t)(d->k + 1) * (size_t)isz, &work.tmp, err));
    acc[0] = dg_read(abuf);
    acc[1] = dg_read(bbuf);
    acc[2] = dg_write(cbuf);
    acc[3] = dg_acc(work.tmp, DG_ACC_READ | DG_ACC_WRITE);
    st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 4, w, err);
    if (work.tmp)
        dg_buffer_decref(be, work.tmp);
    return st;
}

/* Runs task t into chunk oc of the result; share: fetches run on its device
 * meanwhile (dg_gemm_desc.share_sms). */
static dg_status run_task(const dg_contract_call *c, const mm_src *A, const mm_src *B,
                          const dg_mm_task *t, const dg_region_src *pa,
                          const dg_region_src *pb, dg_chunk *oc, int share, dg_error *err)
{
    dg_backend_i *be = A->x->be;
    const int dev = t->device;
    dg_region_src ra = {NULL, NULL, {0}}, rb = {NULL, NULL, {0}};
    int64_t sc[DG_MAXDIM], cs[DG_MAXDIM];
    dg_box ba, bb, ob;
    dg_gemm_desc d;
    char *cptr;
    dg_status st;

    DG_CHECK_GOTO(task_block(c, A, t, pa, &ba, &ra, err), st, done);
    DG_CHECK_GOTO(task_block(c, B, t, pb, &bb, &rb, err), st, done);
    ob = t->box;
    ob.ndim = c->ndim;
    dg_chunk_view(oc, &ob, &cptr, cs);
    memset(sc, 0, sizeof(sc));
    memcpy(sc, cs, sizeof(int64_t) * (size_t)c->ndim);
    DG_CHECK_GOTO(build_packed(c, A, B, &t->box, dev, &ba, &ra, &bb, &rb, cptr, sc, &d, err),
                  st, done);
    d.beta = !t->first;
    d.share_sms = share;
    st = enqueue_products(be, dev, &d, ra.buf, rb.buf, oc->buf, err);
done:
    if (ra.buf)
        dg_buffer_decref(be, ra.buf);
    if (rb.buf)
        dg_buffer_decref(be, rb.buf);
    return st;
}

/* ---- one product over the whole machine ------------------------------------------ */

/* Products whose matrices (one of a batch) have fewer multiply-adds than
 * this stay one per device: a stack of small matrices runs faster spread
 * over the devices' workers than one matrix after another in one call. */
#define MM_WIDE_MIN_MNK ((double)(1 << 21))

/* 1 if the product runs as one call over the whole machine: devices that
 * share one memory and one pool of cores (dg_be_gemm_wide), where one BLAS
 * call threaded over every core is the fastest way to a product (issue
 * [cpu-speed]: on 16 cores, a call per virtual device with cores / devices
 * threads each ran m @ m (4096, float64) at 0.19 of NumPy's speed on 8
 * devices and 0.52 on 16, OpenBLAS serialising threaded calls made at
 * once).  Not for dots (one output element per matrix: the devices' loops
 * split k) nor small matrices. */
static int use_wide(dg_backend_i *be, const dg_contract_call *c, const mm_src *A,
                    const mm_src *B, int dtype, int ntasks)
{
    double mn = 1, k = 1;
    int i;
    if (be->ndevices < 2 || ntasks == 0 || !dg_be_gemm_wide(be, dtype))
        return 0;
    for (i = 0; i < c->ndim; i++)
        if (!(A->in[i] && B->in[i]))
            mn *= (double)c->shape[i];
    for (i = 0; i < c->nk; i++)
        k *= (double)c->kshape[i];
    return mn >= 2 && mn * k >= MM_WIDE_MIN_MNK;
}

/* Operand x's block `box` for the one call on dev: a view of a chunk that
 * holds it all, on whichever device (the memory is shared), else a dense
 * temporary on dev whose copies join mv. */
static dg_status wide_block(dg_array *x, const dg_box *box, int dev, dg_move *mv,
                            dg_region_src *out, dg_error *err)
{
    int i;
    for (i = 0; i < x->nchunks; i++) {
        const dg_chunk *ch = &x->chunks[i];
        if (dg_box_contains(&ch->box, box)) {
            dg_chunk_view(ch, box, &out->ptr, out->strides);
            out->buf = ch->buf;
            ch->buf->refcnt++;
            return DG_OK;
        }
    }
    return dg_fetch_region_batch(x, box, dev, mv, out, err);
}

/* The contraction as one product on the device of r's first chunk, over
 * every core (dg_gemm_desc.wide): the operands' blocks read in place where
 * one chunk holds them, else assembled there by copies that run on their
 * source devices at once; the result written into r's chunk when it has
 * one, else into a temporary copied into every chunk by its own device.
 * A call per result chunk, each over every core and writing its chunk in
 * place (no temporary, no copies out), measured slower on 16 cores (m @ m,
 * 4096: float64 0.85 of NumPy against 0.92 on 8 devices, 0.83 against 1.19
 * on 16; float32 0.61 against 0.93 on 16: the BLAS threads a call of a few
 * hundred rows poorly): benchmarks/results/2026-11-27-s16-cpu16.md. */
static dg_status contract_wide(const dg_contract_call *c, const mm_src *A, const mm_src *B,
                               dg_array *r, dg_error *err)
{
    dg_backend_i *be = r->be;
    const int dev = r->chunks[0].device, isz = dg_dtype_size(r->dtype);
    dg_region_src ra = {NULL, NULL, {0}}, rb = {NULL, NULL, {0}};
    int64_t sc[DG_MAXDIM], cs[DG_MAXDIM], stride = isz;
    dg_box T, ba, bb;
    dg_chunk whole;
    dg_gemm_desc d;
    dg_move mv;
    char *cptr;
    dg_status st;
    int i;

    memset(&whole, 0, sizeof(whole));
    dg_move_init(&mv, be);
    T.ndim = c->ndim + c->nk;
    for (i = 0; i < T.ndim; i++)
        T.r[i] = dg_range_make(0, i < c->ndim ? c->shape[i] : c->kshape[i - c->ndim], 1);
    project(c, A->x->ndim, A->x->shape, A->map, &T, &ba);
    project(c, B->x->ndim, B->x->shape, B->map, &T, &bb);
    DG_CHECK_GOTO(wide_block(A->x, &ba, dev, &mv, &ra, err), st, done);
    if (B->x == A->x && dg_box_equal(&ba, &bb)) { /* a @ a: assembled once */
        rb = ra;
        rb.buf->refcnt++;
    } else {
        DG_CHECK_GOTO(wide_block(B->x, &bb, dev, &mv, &rb, err), st, done);
    }
    DG_CHECK_GOTO(dg_move_run_shared(&mv, 1, err), st, done);
    dg_move_free(&mv);
    dg_move_init(&mv, be);
    /* the result: r's one chunk, or a dense temporary */
    if (r->nchunks == 1) {
        whole = r->chunks[0];
        whole.buf->refcnt++;
    } else {
        whole.device = dev;
        dg_box_full(&whole.box, c->ndim, c->shape);
        for (i = c->ndim - 1; i >= 0; i--) {
            whole.strides[i] = stride;
            stride *= c->shape[i];
        }
        DG_CHECK_GOTO(dg_buffer_new(be, dev, (size_t)stride, &whole.buf, err), st, done);
    }
    dg_chunk_view(&whole, &whole.box, &cptr, cs);
    memset(sc, 0, sizeof(sc));
    memcpy(sc, cs, sizeof(int64_t) * (size_t)c->ndim);
    DG_CHECK_GOTO(build_packed(c, A, B, &T, dev, &ba, &ra, &bb, &rb, cptr, sc, &d, err), st,
                  done);
    d.wide = 1;
    DG_CHECK_GOTO(enqueue_products(be, dev, &d, ra.buf, rb.buf, whole.buf, err), st, done);
    if (r->nchunks > 1) {
        for (i = 0; i < r->nchunks; i++) {
            dg_move_item it;
            dg_move_item_view(&it, isz, &whole, &r->chunks[i].box, &r->chunks[i]);
            DG_CHECK_GOTO(dg_move_add(&mv, &it, err), st, done);
        }
        st = dg_move_run_shared(&mv, 0, err);
    }
done:
    dg_move_free(&mv);
    if (whole.buf)
        dg_buffer_decref(be, whole.buf);
    if (ra.buf)
        dg_buffer_decref(be, ra.buf);
    if (rb.buf)
        dg_buffer_decref(be, rb.buf);
    return st;
}

/* Fetches the blocks not in place on each task's device (a block several
 * tasks of one device need is fetched once), all in one move: one exchange
 * group on the transfer streams, every direction at once.  Fetches queued
 * one after another would each wait for the one before, and on a GPU the
 * later ones would find every multiprocessor taken by the products that
 * the first tasks started meanwhile.  busy[dev] = 1 for each device that
 * sends or receives through an exchange whose kernels take processors
 * (DG_BE_XCHG_SMS; peer copies take none). */
static dg_status prefetch(const dg_contract_call *c, const mm_src *A, const mm_src *B,
                          const dg_mm_plan *pl, dg_region_src *pa, dg_region_src *pb,
                          unsigned char *busy, dg_error *err)
{
    int t, w, s;
    dg_move mv;
    dg_status st = DG_OK;
    dg_move_init(&mv, A->x->be);
    for (t = 0; t < pl->ntasks && st == DG_OK; t++) {
        const dg_mm_task *tk = &pl->tasks[t];
        for (w = 0; w < 2 && st == DG_OK; w++) {
            const mm_src *x = w ? B : A;
            dg_region_src *slot = w ? pb : pa;
            dg_box box, other;
            if (w ? tk->b_local : tk->a_local)
                continue;
            project(c, x->x->ndim, x->x->shape, x->map, &tk->box, &box);
            /* the same block fetched for a recent task of the device? */
            for (s = t > 256 ? t - 256 : 0; s < t; s++) {
                if (pl->tasks[s].device != tk->device || !slot[s].buf)
                    continue;
                project(c, x->x->ndim, x->x->shape, x->map, &pl->tasks[s].box, &other);
                if (dg_box_equal(&box, &other)) {
                    slot[t] = slot[s];
                    slot[t].buf->refcnt++;
                    break;
                }
            }
            if (!slot[t].buf)
                st = dg_fetch_region_batch(x->x, &box, tk->device, &mv, &slot[t], err);
        }
    }
    if (st == DG_OK && (A->x->be->flags & DG_BE_XCHG_SMS))
        for (t = 0; t < mv.n; t++)
            if (dg_move_by_exchange(&mv, t))
                busy[mv.items[t].src_dev] = busy[mv.items[t].dst_dev] = 1;
    if (st == DG_OK)
        st = dg_move_run(&mv, err);
    dg_move_free(&mv);
    return st;
}

/* Zeros the chunks no task writes (nothing contracted). */
static dg_status zero_untouched(dg_array *r, const dg_mm_plan *pl, dg_error *err)
{
    unsigned char *touched = (unsigned char *)calloc((size_t)r->nchunks + 1, 1);
    dg_status st = DG_OK;
    dg_fill_desc f;
    int i;
    if (!touched)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < pl->ntasks; i++)
        touched[pl->tasks[i].chunk] = 1;
    memset(&f, 0, sizeof(f));
    f.kind = DG_FILL_CONST;
    for (i = 0; i < r->nchunks && st == DG_OK; i++) {
        dg_array one = *r;
        if (touched[i])
            continue;
        one.nchunks = 1;
        one.chunks = &r->chunks[i];
        st = dg_array_fill(&one, &f, NULL, err);
    }
    free(touched);
    return st;
}

dg_status dg_array_contract(dg_array *a, dg_array *b, const dg_contract_call *c,
                            dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_plan_chunk *al = NULL, *bl = NULL;
    dg_mm_plan pl;
    dg_array *r = NULL;
    dg_region_src *pa = NULL, *pb = NULL;
    unsigned char *busy = NULL;
    mm_src A, B;
    dg_status st;
    int t, j, wide;

    memset(&pl, 0, sizeof(pl));
    DG_CHECK(dg_be_need(be, DG_SLOT_GEMM, err));
    if (a->mode != DG_MODE_REPLICA || b->mode != DG_MODE_REPLICA || a->dtype != b->dtype)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "a product of operands in an op mode or of two dtypes");
    DG_CHECK(dg_contract_check(c, a->ndim, a->shape, b->ndim, b->shape, err));
    memset(&A, 0, sizeof(A));
    memset(&B, 0, sizeof(B));
    A.x = a;
    A.map = c->amap;
    B.x = b;
    B.map = c->bmap;
    for (j = 0; j < a->ndim; j++)
        if (c->amap[j] < c->ndim && !is_bcast(c, a->shape, c->amap, j))
            A.in[c->amap[j]] = 1;
    for (j = 0; j < b->ndim; j++)
        if (c->bmap[j] < c->ndim && !is_bcast(c, b->shape, c->bmap, j))
            B.in[c->bmap[j]] = 1;
    DG_CHECK_GOTO(dg_array_layout(a, &al, err), st, done);
    DG_CHECK_GOTO(dg_array_layout(b, &bl, err), st, done);
    DG_CHECK_GOTO(dg_mm_plan_build(c, be->ndevices, dg_dtype_size(a->dtype), al, a->nchunks,
                                   a->ndim, a->shape, bl, b->nchunks, b->ndim, b->shape, NULL,
                                   &pl, err), st, done);
    wide = use_wide(be, c, &A, &B, a->dtype, pl.ntasks);
    if (wide && pl.mode != DG_MODE_REPLICA) { /* partial sums: not in one call */
        free(pl.chunks);
        pl.chunks = NULL;
        pl.mode = DG_MODE_REPLICA;
        DG_CHECK_GOTO(dg_layout_default(be->ndevices, c->ndim, c->shape,
                                        (size_t)dg_dtype_size(a->dtype), c->min_split_bytes,
                                        &pl.chunks, &pl.nchunks, err), st, done);
    }
    DG_CHECK_GOTO(dg_array_empty(be, a->dtype, c->ndim, c->shape, pl.chunks, pl.nchunks,
                                 pl.mode, &r, err), st, done);
    if (wide) {
        st = contract_wide(c, &A, &B, r, err);
        goto done;
    }
    pa = (dg_region_src *)calloc((size_t)(pl.ntasks ? pl.ntasks : 1), sizeof(dg_region_src));
    pb = (dg_region_src *)calloc((size_t)(pl.ntasks ? pl.ntasks : 1), sizeof(dg_region_src));
    busy = (unsigned char *)calloc((size_t)be->ndevices, 1);
    if (!pa || !pb || !busy) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    DG_CHECK_GOTO(zero_untouched(r, &pl, err), st, done);
    DG_CHECK_GOTO(prefetch(c, &A, &B, &pl, pa, pb, busy, err), st, done);
    /* local tasks run first, while the fetches are in flight */
    for (t = 0; t < pl.ntasks; t++)
        DG_CHECK_GOTO(run_task(c, &A, &B, &pl.tasks[t], &pa[t], &pb[t],
                               &r->chunks[pl.tasks[t].chunk],
                               busy[pl.tasks[t].device] && pl.tasks[t].a_local &&
                                   pl.tasks[t].b_local,
                               err), st, done);
done:
    for (t = 0; t < pl.ntasks; t++) {
        if (pa && pa[t].buf)
            dg_buffer_decref(be, pa[t].buf);
        if (pb && pb[t].buf)
            dg_buffer_decref(be, pb[t].buf);
    }
    free(pa);
    free(pb);
    free(busy);
    free(al);
    free(bl);
    dg_mm_plan_free(&pl);
    if (st == DG_OK) {
        *out = r;
    } else if (r) {
        dg_array_decref(r);
    }
    return st;
}
