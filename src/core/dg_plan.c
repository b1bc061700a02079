/* The reshard planner (see dg_plan.h): a pure function from a source layout
 * and destination boxes to a list of copies.
 *
 * For each destination box D, the source chunks are taken one at a time; a
 * source S contributes (S ∩ D) minus the parts of D that earlier sources
 * already gave, cut into boxes by dg_box_subtract.  The copies for D are
 * thus disjoint, each inside its source, and their union is D once the
 * elements counted reach |D|.  Subtracting whole earlier boxes S' ∩ D (not
 * the pieces left over) keeps a source's share in few boxes: interleaved
 * rows give one strided copy per source, not one per gap.
 *
 * The order of the sources is the whole policy: the destination's own
 * device first, so that data already in place never crosses devices, then
 * the other devices, least loaded first. */
#include "dg_plan.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable list of boxes (the parts of a destination still to give, or
 * already given).  Owns `b`. */
typedef struct piece_list {
    dg_box *b;
    int n, cap;
} piece_list;

/* Releases what l (borrowed) owns and leaves it empty. */
static void piece_list_free(piece_list *l)
{
    free(l->b);
    l->b = NULL;
    l->n = l->cap = 0;
}

/* Makes room for `want` boxes in l (borrowed), keeping its contents.
 * DG_ERR_NOMEM if the allocation fails or the count is beyond int. */
static dg_status piece_list_reserve(piece_list *l, int64_t want,
                                    dg_error *err)
{
    int64_t cap;
    dg_box *nb;

    if (want <= l->cap)
        return DG_OK;
    if (want > INT_MAX || (uint64_t)want > SIZE_MAX / sizeof(dg_box))
        return dg_error_set(err, DG_ERR_NOMEM, -1,
                            "planning needs %lld boxes, too many to hold",
                            (long long)want);
    cap = l->cap > 0 ? l->cap : 4;
    while (cap < want)
        cap = cap > INT_MAX / 2 ? INT_MAX : cap * 2;
    if ((uint64_t)cap > SIZE_MAX / sizeof(dg_box))
        cap = want; /* doubling past what size_t holds: take what is asked */
    nb = realloc(l->b, (size_t)cap * sizeof(dg_box));
    if (nb == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, -1,
                            "out of host memory planning a copy of %lld boxes",
                            (long long)want);
    l->b = nb;
    l->cap = (int)cap;
    return DG_OK;
}

/* Appends copy {src, dst, *box} to plan (borrowed), growing it by doubling.
 * DG_ERR_NOMEM if that fails; the plan then keeps what it had. */
static dg_status plan_push(dg_plan *plan, int src, int dst, const dg_box *box,
                           dg_error *err)
{
    if (plan->ncopies == plan->cap) {
        int cap;
        dg_plan_copy *nc;
        if (plan->cap > INT_MAX / 2 ||
            (size_t)plan->cap * 2 > SIZE_MAX / sizeof(dg_plan_copy))
            return dg_error_set(err, DG_ERR_NOMEM, -1,
                                "a plan of more than %d copies", plan->cap);
        cap = plan->cap > 0 ? plan->cap * 2 : 16;
        nc = realloc(plan->copies, (size_t)cap * sizeof(dg_plan_copy));
        if (nc == NULL)
            return dg_error_set(err, DG_ERR_NOMEM, -1,
                                "out of host memory planning %d copies", cap);
        plan->copies = nc;
        plan->cap = cap;
    }
    plan->copies[plan->ncopies].src = src;
    plan->copies[plan->ncopies].dst = dst;
    plan->copies[plan->ncopies].box = *box;
    plan->ncopies++;
    return DG_OK;
}

/* Replaces the disjoint boxes *rem by their parts outside s: rem := rem \ s.
 * *spare is scratch; the two lists (both borrowed) are swapped so that *rem
 * holds the result.  On failure *rem may have lost boxes; callers then give
 * up. */
static dg_status pieces_cut(piece_list *rem, piece_list *spare,
                            const dg_box *s, dg_error *err)
{
    piece_list tmp;

    spare->n = 0;
    for (int i = 0; i < rem->n; i++) {
        const dg_box *r = &rem->b[i];
        int64_t need = dg_box_subtract_count(r, s);
        int got;

        if (need > (int64_t)INT_MAX - spare->n)
            return dg_error_set(err, DG_ERR_NOMEM, -1,
                                "planning needs more than %d boxes", INT_MAX);
        DG_CHECK(piece_list_reserve(spare, (int64_t)spare->n + need, err));
        if (need == 0)
            continue; /* r inside s (and spare->b may still be NULL) */
        DG_CHECK(dg_box_subtract(r, s, spare->b + spare->n,
                                 spare->cap - spare->n, &got, err));
        spare->n += got;
    }
    tmp = *rem;
    *rem = *spare;
    *spare = tmp;
    return DG_OK;
}

/* Appends *b (borrowed) to l (borrowed). */
static dg_status piece_list_push(piece_list *l, const dg_box *b,
                                 dg_error *err)
{
    DG_CHECK(piece_list_reserve(l, (int64_t)l->n + 1, err));
    l->b[l->n++] = *b;
    return DG_OK;
}

/* Writes "(i0, i1, ...)" (a Python tuple) for the smallest index, in C
 * order, of the uncovered pieces rem (borrowed, non-empty) into buf.  The
 * first index of a box is its start corner, and the smallest of those is the
 * first index of the union. */
static void first_index_str(const piece_list *rem, char *buf, size_t size)
{
    const dg_box *best = &rem->b[0];
    size_t used = 0;

    assert(rem->n > 0 && size > 0);
    for (int i = 1; i < rem->n; i++) {
        const dg_box *c = &rem->b[i];
        for (int ax = 0; ax < c->ndim; ax++) {
            if (c->r[ax].start != best->r[ax].start) {
                if (c->r[ax].start < best->r[ax].start)
                    best = c;
                break;
            }
        }
    }
    buf[0] = '\0';
#define DG_APPEND(...)                                                   \
    do {                                                                 \
        if (used < size) {                                               \
            int w_ = snprintf(buf + used, size - used, __VA_ARGS__);     \
            used = w_ < 0 ? size : used + (size_t)w_;                    \
        }                                                                \
    } while (0)
    DG_APPEND("(");
    for (int ax = 0; ax < best->ndim; ax++)
        DG_APPEND(ax == 0 ? "%lld" : ", %lld", (long long)best->r[ax].start);
    DG_APPEND(best->ndim == 1 ? ",)" : ")");
#undef DG_APPEND
}

/* Source chunks grouped by device: the devices in increasing order, and for
 * each the indices of its chunks in increasing order. */
typedef struct src_groups {
    int ndev;
    int *dev;      /* ndev device numbers */
    int *begin;    /* ndev + 1 offsets into order */
    int *order;    /* nsrc chunk indices, by (device, index) */
    int64_t *load; /* ndev elements planned to leave each device */
    char *done;    /* ndev flags: device visited for this destination */
} src_groups;

/* A source chunk's sort key: grouped by device, in index order within. */
typedef struct dev_idx {
    int device, idx;
} dev_idx;

/* qsort order of dev_idx keys: by device, then by chunk index (so that the
 * result does not depend on the qsort implementation). */
static int cmp_dev_idx(const void *pa, const void *pb)
{
    const dev_idx *a = pa, *b = pb;

    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Releases what g (borrowed) owns and zeroes it; safe on a zeroed g. */
static void src_groups_free(src_groups *g)
{
    free(g->dev);
    free(g->begin);
    free(g->order);
    free(g->load);
    free(g->done);
    memset(g, 0, sizeof *g);
}

/* Fills *g (borrowed; owns its arrays on success, none on failure) from the
 * nsrc chunks src (borrowed). */
static dg_status src_groups_build(const dg_plan_chunk *src, int nsrc,
                                  src_groups *g, dg_error *err)
{
    size_t n = nsrc > 0 ? (size_t)nsrc : 1;
    dev_idx *keys;

    memset(g, 0, sizeof *g);
    g->dev = malloc(n * sizeof *g->dev);
    g->begin = malloc((n + 1) * sizeof *g->begin);
    g->order = malloc(n * sizeof *g->order);
    g->load = calloc(n, sizeof *g->load);
    g->done = calloc(n, 1);
    keys = malloc(n * sizeof *keys);
    if (!g->dev || !g->begin || !g->order || !g->load || !g->done || !keys) {
        free(keys);
        src_groups_free(g);
        return dg_error_set(err, DG_ERR_NOMEM, -1,
                            "out of host memory planning from %d chunks",
                            nsrc);
    }
    for (int i = 0; i < nsrc; i++) {
        keys[i].device = src[i].device;
        keys[i].idx = i;
    }
    if (nsrc > 1)
        qsort(keys, (size_t)nsrc, sizeof *keys, cmp_dev_idx);
    for (int i = 0; i < nsrc; i++) {
        g->order[i] = keys[i].idx;
        if (g->ndev == 0 || g->dev[g->ndev - 1] != keys[i].device) {
            g->dev[g->ndev] = keys[i].device;
            g->begin[g->ndev] = i;
            g->ndev++;
        }
    }
    free(keys);
    g->begin[g->ndev] = nsrc;
    return DG_OK;
}

/* What the planner knows of one destination while filling it.  Owns the
 * arrays of its lists, which are reused from one destination to the next. */
typedef struct dst_state {
    int t;            /* destination index */
    dg_box d;         /* its box, canonical */
    int64_t size;     /* |D| */
    int64_t covered;  /* elements of D given by the copies so far */
    piece_list used;  /* S ∩ D of each source that gave something */
    piece_list fresh; /* scratch: the new share of one source */
    piece_list spare; /* scratch for pieces_cut */
} dst_state;

/* Adds to plan (borrowed) the copies that give the part of ds->d (borrowed)
 * held by source chunk s (borrowed, index si) and by no source taken
 * before, and adds its element count to *moved. */
static dg_status take_source(dst_state *ds, const dg_box *s, int si,
                             dg_plan *plan, int64_t *moved, dg_error *err)
{
    dg_box c;

    if (!dg_box_intersect(&ds->d, s, &c))
        return DG_OK;
    ds->fresh.n = 0;
    DG_CHECK(piece_list_push(&ds->fresh, &c, err));
    for (int i = 0; i < ds->used.n && ds->fresh.n > 0; i++)
        DG_CHECK(pieces_cut(&ds->fresh, &ds->spare, &ds->used.b[i], err));
    if (ds->fresh.n == 0)
        return DG_OK; /* nothing new: do not subtract c from later sources */
    for (int i = 0; i < ds->fresh.n; i++) {
        int64_t n = dg_box_size(&ds->fresh.b[i]);
        DG_CHECK(plan_push(plan, si, ds->t, &ds->fresh.b[i], err));
        ds->covered += n;
        *moved += n;
    }
    assert(ds->covered <= ds->size);
    return piece_list_push(&ds->used, &c, err);
}

/* Takes the chunks of device group k (all borrowed) in index order until
 * the destination is covered; adds the elements given to *moved. */
static dg_status take_group(dst_state *ds, const src_groups *g, int k,
                            const dg_plan_chunk *src, dg_plan *plan,
                            int64_t *moved, dg_error *err)
{
    for (int i = g->begin[k]; i < g->begin[k + 1] && ds->covered < ds->size;
         i++) {
        int s = g->order[i];
        DG_CHECK(take_source(ds, &src[s].box, s, plan, moved, err));
    }
    return DG_OK;
}

/* Fails with DG_ERR_VALUE naming the first index of ds->d that no source
 * gave: what is left of D once every used box is cut out of it. */
static dg_status report_hole(dst_state *ds, dg_error *err)
{
    char idx[DG_MAXDIM * 22 + 4];

    ds->fresh.n = 0;
    DG_CHECK(piece_list_push(&ds->fresh, &ds->d, err));
    for (int i = 0; i < ds->used.n; i++)
        DG_CHECK(pieces_cut(&ds->fresh, &ds->spare, &ds->used.b[i], err));
    if (ds->fresh.n == 0)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "planner lost count of destination %d", ds->t);
    first_index_str(&ds->fresh, idx, sizeof idx);
    return dg_error_set(err, DG_ERR_VALUE, -1,
                        "source layout leaves element %s on no device: "
                        "every element must be held by at least one chunk",
                        idx);
}

/* Plans the copies that fill each of the ndst chunks dst from the nsrc
 * chunks src (both borrowed).  *plan (borrowed) is overwritten: on success
 * it owns its copies, grouped by destination in increasing order, local
 * sources first (release with dg_plan_free); on failure it holds none.
 *
 * A source is local to a destination when both name the same device
 * (DG_HOST included), so a host destination reads device sources as remote.
 * Remote devices are taken one at a time, the one with the fewest elements
 * planned to leave it so far first; ties go round-robin from a device that
 * moves with the destination index, so replicated sources share the work. */
dg_status dg_plan_build(const dg_plan_chunk *src, int nsrc,
                        const dg_plan_chunk *dst, int ndst,
                        dg_plan *plan, dg_error *err)
{
    return dg_plan_build_ex(src, nsrc, dst, ndst, 0, plan, err);
}

/* dg_plan_build, and with DG_PLAN_REUSE_DST: after the sources on a
 * destination's own device, the destinations before it on that device are
 * taken as sources (index nsrc + t), so that an element two destinations of
 * one device need crosses devices once. */
dg_status dg_plan_build_ex(const dg_plan_chunk *src, int nsrc,
                           const dg_plan_chunk *dst, int ndst, unsigned flags,
                           dg_plan *plan, dg_error *err)
{
    dg_status st = DG_OK;
    src_groups g;
    dst_state ds;

    assert(plan != NULL);
    assert(nsrc >= 0 && ndst >= 0);
    assert(nsrc == 0 || src != NULL);
    assert(ndst == 0 || dst != NULL);
    plan->ncopies = plan->cap = 0;
    plan->copies = NULL;
    if (nsrc < 0 || ndst < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "plan with %d sources and %d destinations",
                            nsrc, ndst);
    for (int i = 0; i < nsrc; i++)
        if (ndst > 0 && src[i].box.ndim != dst[0].box.ndim)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "plan from %d-d chunks to %d-d chunks",
                                src[i].box.ndim, dst[0].box.ndim);
    for (int i = 0; i < ndst; i++)
        if (dst[i].box.ndim != dst[0].box.ndim)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "plan to chunks of %d and %d dimensions",
                                dst[0].box.ndim, dst[i].box.ndim);
    DG_CHECK(src_groups_build(src, nsrc, &g, err));
    memset(&ds, 0, sizeof ds);

    for (int t = 0; t < ndst; t++) {
        int local = -1, rot = g.ndev > 0 ? t % g.ndev : 0;
        int64_t moved = 0;

        ds.t = t;
        ds.d = dst[t].box;
        dg_box_canon(&ds.d);
        ds.size = dg_box_size(&ds.d);
        ds.covered = 0;
        ds.used.n = 0;
        if (ds.size == 0)
            continue;
        memset(g.done, 0, (size_t)(g.ndev > 0 ? g.ndev : 1));

        for (int k = 0; k < g.ndev; k++)
            if (g.dev[k] == dst[t].device)
                local = k;
        if (local >= 0) {
            DG_CHECK_GOTO(take_group(&ds, &g, local, src, plan, &moved, err),
                          st, done);
            g.done[local] = 1;
        }
        for (int u = 0; (flags & DG_PLAN_REUSE_DST) && u < t && ds.covered < ds.size; u++)
            if (dst[u].device == dst[t].device)
                DG_CHECK_GOTO(take_source(&ds, &dst[u].box, nsrc + u, plan, &moved, err),
                              st, done);
        while (ds.covered < ds.size) {
            int best = -1;
            for (int j = 0; j < g.ndev; j++) {
                int k = (rot + j) % g.ndev;
                if (!g.done[k] && (best < 0 || g.load[k] < g.load[best]))
                    best = k;
            }
            if (best < 0)
                break;
            moved = 0;
            DG_CHECK_GOTO(take_group(&ds, &g, best, src, plan, &moved, err),
                          st, done);
            g.done[best] = 1;
            g.load[best] += moved;
        }
        if (ds.covered < ds.size) {
            st = report_hole(&ds, err);
            goto done;
        }
    }
done:
    piece_list_free(&ds.used);
    piece_list_free(&ds.fresh);
    piece_list_free(&ds.spare);
    src_groups_free(&g);
    if (st != DG_OK)
        dg_plan_free(plan);
    return st;
}

/* Releases the copies owned by *plan (borrowed) and leaves it empty; safe on
 * an empty or already freed plan, and on NULL. */
void dg_plan_free(dg_plan *plan)
{
    if (plan == NULL)
        return;
    free(plan->copies);
    plan->copies = NULL;
    plan->ncopies = plan->cap = 0;
}

/* Fails with DG_ERR_VALUE, naming the first uncovered index in C order, if
 * the n chunks (borrowed) leave some index of *whole (borrowed) uncovered.
 * This is the index-map check: every element must live somewhere. */
dg_status dg_plan_check_cover(const dg_plan_chunk *chunks, int n,
                              const dg_box *whole, dg_error *err)
{
    dg_status st = DG_OK;
    piece_list rem = {NULL, 0, 0}, spare = {NULL, 0, 0};

    assert(whole != NULL && n >= 0 && (n == 0 || chunks != NULL));
    for (int i = 0; i < n; i++)
        if (chunks[i].box.ndim != whole->ndim)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "a %d-d chunk in a %d-d array",
                                chunks[i].box.ndim, whole->ndim);
    if (dg_box_size(whole) == 0)
        return DG_OK;
    DG_CHECK(piece_list_reserve(&rem, 1, err));
    rem.b[rem.n++] = *whole;
    dg_box_canon(&rem.b[0]);
    for (int i = 0; i < n && rem.n > 0; i++)
        DG_CHECK_GOTO(pieces_cut(&rem, &spare, &chunks[i].box, err), st,
                      done);
    if (rem.n > 0) {
        char idx[DG_MAXDIM * 22 + 4];
        first_index_str(&rem, idx, sizeof idx);
        st = dg_error_set(err, DG_ERR_VALUE, -1,
                          "index map leaves element %s on no device: every "
                          "element must be held by at least one chunk",
                          idx);
    }
done:
    piece_list_free(&rem);
    piece_list_free(&spare);
    return st;
}
