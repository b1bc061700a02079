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
 * the other devices, least loaded first.
 *
 * Layouts of many chunks (block-cyclic ones have tens of thousands) are
 * planned in n log n, with the same copies as the all-pairs walk: the source
 * boxes are indexed along one axis (dg_box_index: sorted by start, with the
 * running maximum of the stops), so a destination visits only the sources
 * whose range on that axis meets its own; a source's share is cut only by
 * the earlier shares it meets (found through an index of the destination's
 * candidates when it has many), since cutting by a disjoint box changes
 * nothing. */
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
    dg_box_copy(&plan->copies[plan->ncopies].box, box);
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
    dg_box_copy(&l->b[l->n++], b);
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

/* The devices of the source chunks, in increasing order, and the elements
 * planned to leave each so far (the remote devices' balance). */
typedef struct src_groups {
    int ndev;
    int *dev;      /* ndev device numbers */
    int64_t *load; /* ndev elements planned to leave each device */
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
    free(g->load);
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
    g->load = calloc(n, sizeof *g->load);
    keys = malloc(n * sizeof *keys);
    if (!g->dev || !g->load || !keys) {
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
    for (int i = 0; i < nsrc; i++)
        if (g->ndev == 0 || g->dev[g->ndev - 1] != keys[i].device)
            g->dev[g->ndev++] = keys[i].device;
    free(keys);
    return DG_OK;
}

/* A growable list of ints.  Owns `v`. */
typedef struct int_list {
    int *v;
    int n, cap;
} int_list;

static int cmp_int(const void *pa, const void *pb)
{
    const int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
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
    /* With many candidates (more than DG_PLAN_SCAN), the used boxes that a
     * new share meets are found through an index of the candidates' boxes
     * (cand: source ids, nsrc + u for destination u; used_at[c]: the
     * position of candidate c's share in `used`, or -1); else all are
     * scanned. */
    int ncand;
    const dg_box **cand_box;
    int *cand_id;
    int *used_at;
    int cand_cap;
    dg_box_index cidx;
    int_list hits;
    int slot;         /* the candidate being taken, or -1 */
} dst_state;

/* Up to this many used boxes a new share is cut by all of them. */
#define DG_PLAN_SCAN 32
/* Up to this many destinations the sources are scanned for each (building
 * an index of them would cost more than it saves). */
#define DG_PLAN_FEW_DST 2

/* Appends to *out the ids of the boxes among the n (borrowed) whose range
 * meets d's on the index's axis: through the index x, or (x NULL) by a scan
 * of all n. */
static dg_status candidates(const dg_box_index *x, const dg_box *const *boxes, int n,
                            const dg_box *d, int_list *out, dg_error *err)
{
    if (x != NULL)
        return dg_box_index_query(x, d, &out->v, &out->n, &out->cap, err);
    for (int i = 0; i < n; i++) {
        dg_box tmp;
        if (!dg_box_intersect(d, boxes[i], &tmp))
            continue;
        if (out->n == out->cap)
            DG_CHECK(dg_grow((void **)&out->v, &out->cap, out->n + 1, sizeof(int), 64, err));
        out->v[out->n++] = i;
    }
    return DG_OK;
}

/* Adds to plan (borrowed; NULL: only count) the copies that give the part
 * of ds->d (borrowed) held by source chunk s (borrowed, index si) and by no
 * source taken before, and adds its element count to *moved. */
static dg_status take_source(dst_state *ds, const dg_box *s, int si,
                             dg_plan *plan, int64_t *moved, dg_error *err)
{
    dg_box c;

    if (!dg_box_intersect(&ds->d, s, &c))
        return DG_OK;
    ds->fresh.n = 0;
    DG_CHECK(piece_list_push(&ds->fresh, &c, err));
    if (ds->used.n <= DG_PLAN_SCAN || ds->slot < 0) {
        for (int i = 0; i < ds->used.n && ds->fresh.n > 0; i++)
            DG_CHECK(pieces_cut(&ds->fresh, &ds->spare, &ds->used.b[i], err));
    } else {
        /* the used boxes c meets, in the order they were used */
        int k = 0;
        ds->hits.n = 0;
        DG_CHECK(dg_box_index_query(&ds->cidx, &c, &ds->hits.v, &ds->hits.n, &ds->hits.cap,
                                    err));
        for (int i = 0; i < ds->hits.n; i++) {
            const int at = ds->used_at[ds->hits.v[i]];
            dg_box tmp;
            if (at >= 0 && dg_box_intersect(&ds->used.b[at], &c, &tmp))
                ds->hits.v[k++] = at;
        }
        ds->hits.n = k;
        if (ds->hits.n > 1)
            qsort(ds->hits.v, (size_t)ds->hits.n, sizeof(int), cmp_int);
        for (int i = 0; i < ds->hits.n && ds->fresh.n > 0; i++)
            DG_CHECK(pieces_cut(&ds->fresh, &ds->spare, &ds->used.b[ds->hits.v[i]], err));
    }
    if (ds->fresh.n == 0)
        return DG_OK; /* nothing new: do not subtract c from later sources */
    for (int i = 0; i < ds->fresh.n; i++) {
        int64_t n = dg_box_size(&ds->fresh.b[i]);
        if (plan != NULL)
            DG_CHECK(plan_push(plan, si, ds->t, &ds->fresh.b[i], err));
        ds->covered += n;
        *moved += n;
    }
    assert(ds->covered <= ds->size);
    if (ds->slot >= 0)
        ds->used_at[ds->slot] = ds->used.n;
    return piece_list_push(&ds->used, &c, err);
}

/* Takes candidates lo..hi-1 of ds (in their order) until the destination
 * is covered; adds the elements given to *moved.  Candidate i is source
 * ds->cand_id[i] (or destination cand_id[i] - nsrc, DG_PLAN_REUSE_DST). */
static dg_status take_range(dst_state *ds, int lo, int hi, dg_plan *plan, int64_t *moved,
                            dg_error *err)
{
    for (int i = lo; i < hi && ds->covered < ds->size; i++) {
        ds->slot = i;
        DG_CHECK(take_source(ds, ds->cand_box[i], ds->cand_id[i], plan, moved, err));
    }
    ds->slot = -1;
    return DG_OK;
}

/* Makes room for n candidates in ds. */
static dg_status cand_reserve(dst_state *ds, int n, dg_error *err)
{
    const dg_box **b;
    int *id, *at;
    if (n <= ds->cand_cap)
        return DG_OK;
    b = realloc(ds->cand_box, (size_t)n * sizeof *b);
    if (b)
        ds->cand_box = b;
    id = b ? realloc(ds->cand_id, (size_t)n * sizeof *id) : NULL;
    if (id)
        ds->cand_id = id;
    at = id ? realloc(ds->used_at, (size_t)n * sizeof *at) : NULL;
    if (!at)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory planning");
    ds->used_at = at;
    ds->cand_cap = n;
    return DG_OK;
}

static void dst_state_free(dst_state *ds)
{
    piece_list_free(&ds->used);
    piece_list_free(&ds->fresh);
    piece_list_free(&ds->spare);
    free(ds->cand_box);
    free(ds->cand_id);
    free(ds->used_at);
    free(ds->hits.v);
    dg_box_index_free(&ds->cidx);
    memset(ds, 0, sizeof *ds);
}

/* Fails with DG_ERR_VALUE naming the first index of ds->d that no source
 * gave (what is left of D once every used box is cut out of it), the layout
 * called `what` in the message. */
static dg_status report_hole(dst_state *ds, const char *what, dg_error *err)
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
                        "%s leaves element %s on no device: "
                        "every element must be held by at least one chunk",
                        what, idx);
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
/* dg_plan_build_ex with the message's name of the source layout (`what`)
 * and, where plan is NULL, no copies kept: only whether the sources cover
 * the destinations (dg_plan_check_cover). */
static dg_status plan_build(const dg_plan_chunk *src, int nsrc, const dg_plan_chunk *dst,
                            int ndst, unsigned flags, const char *what, dg_plan *plan,
                            dg_error *err)
{
    dg_status st = DG_OK;
    src_groups g;
    dst_state ds;
    dg_box_index sidx, didx;
    const dg_box **sbox = NULL, **dbox = NULL;
    dev_idx *keys = NULL;
    int_list found = {NULL, 0, 0};
    int *sdev = NULL, *ddev = NULL; /* the chunks' devices, apart from their 800-byte boxes */
    int *seg_lo = NULL, *seg_hi = NULL, *seg_k = NULL;
    char *seg_done = NULL;
    int ax = 0;

    assert(nsrc >= 0 && ndst >= 0);
    assert(nsrc == 0 || src != NULL);
    assert(ndst == 0 || dst != NULL);
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
    memset(&sidx, 0, sizeof sidx);
    memset(&didx, 0, sizeof didx);
    ds.slot = -1;
    sbox = malloc((size_t)(nsrc > 0 ? nsrc : 1) * sizeof *sbox);
    dbox = malloc((size_t)(ndst > 0 ? ndst : 1) * sizeof *dbox);
    keys = malloc((size_t)(nsrc > 0 ? nsrc : 1) * sizeof *keys);
    sdev = malloc((size_t)(nsrc > 0 ? nsrc : 1) * sizeof *sdev);
    ddev = malloc((size_t)(ndst > 0 ? ndst : 1) * sizeof *ddev);
    seg_lo = malloc((size_t)(g.ndev + 1) * sizeof *seg_lo);
    seg_hi = malloc((size_t)(g.ndev + 1) * sizeof *seg_hi);
    seg_k = malloc((size_t)(g.ndev + 1) * sizeof *seg_k);
    seg_done = malloc((size_t)(g.ndev + 1));
    if (!sbox || !dbox || !keys || !sdev || !ddev || !seg_lo || !seg_hi || !seg_k ||
        !seg_done) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory planning from %d chunks",
                          nsrc);
        goto done;
    }
    for (int i = 0; i < nsrc; i++) {
        sbox[i] = &src[i].box;
        sdev[i] = src[i].device;
    }
    for (int i = 0; i < ndst; i++) {
        dbox[i] = &dst[i].box;
        ddev[i] = dst[i].device;
    }
    /* a few destinations scan the sources; more query an index of them */
    ax = dg_box_index_axis(sbox, nsrc);
    if (ndst > DG_PLAN_FEW_DST) {
        DG_CHECK_GOTO(dg_box_index_build(&sidx, sbox, nsrc, ax, err), st, done);
        if (flags & DG_PLAN_REUSE_DST)
            DG_CHECK_GOTO(dg_box_index_build(&didx, dbox, ndst, ax, err), st, done);
    }

    for (int t = 0; t < ndst; t++) {
        int rot = g.ndev > 0 ? t % g.ndev : 0, nk = 0, nseg = 0, local = -1, nsc;
        int64_t moved = 0;

        ds.t = t;
        dg_box_copy(&ds.d, &dst[t].box);
        dg_box_canon(&ds.d);
        ds.size = dg_box_size(&ds.d);
        ds.covered = 0;
        ds.used.n = 0;
        if (ds.size == 0)
            continue;
        /* the sources that may meet D, by (device, index): the walk's order
         * (one that does not meet it gives nothing: take_source) */
        found.n = 0;
        DG_CHECK_GOTO(candidates(ndst > DG_PLAN_FEW_DST ? &sidx : NULL, sbox, nsrc, &ds.d, &found,
                                 err), st, done);
        for (int i = 0; i < found.n; i++) {
            keys[nk].device = sdev[found.v[i]];
            keys[nk].idx = found.v[i];
            nk++;
        }
        if (nk > 1)
            qsort(keys, (size_t)nk, sizeof *keys, cmp_dev_idx);
        nsc = nk;
        /* then, with DG_PLAN_REUSE_DST, the earlier destinations of its device */
        found.n = 0;
        if (flags & DG_PLAN_REUSE_DST)
            DG_CHECK_GOTO(candidates(ndst > DG_PLAN_FEW_DST ? &didx : NULL, dbox, t, &ds.d,
                                     &found, err), st, done);
        if (found.n > 1)
            qsort(found.v, (size_t)found.n, sizeof(int), cmp_int);
        DG_CHECK_GOTO(cand_reserve(&ds, nk + found.n, err), st, done);
        for (int i = 0; i < nk; i++) {
            ds.cand_id[i] = keys[i].idx;
            ds.cand_box[i] = sbox[keys[i].idx];
        }
        ds.ncand = nk;
        for (int i = 0; i < found.n; i++) {
            const int u = found.v[i];
            if (u < t && ddev[u] == ddev[t]) {
                ds.cand_id[ds.ncand] = nsrc + u;
                ds.cand_box[ds.ncand] = dbox[u];
                ds.ncand++;
            }
        }
        for (int i = 0; i < ds.ncand; i++)
            ds.used_at[i] = -1;
        if (ds.ncand > DG_PLAN_SCAN)
            DG_CHECK_GOTO(dg_box_index_build(&ds.cidx, ds.cand_box, ds.ncand, ax, err), st,
                          done);
        /* the devices' runs among the sources */
        for (int i = 0; i < nsc; i++) {
            if (nseg == 0 || keys[i].device != keys[seg_lo[nseg - 1]].device) {
                int lo = 0, hi = g.ndev;
                while (lo < hi) { /* the device's group */
                    const int m = lo + (hi - lo) / 2;
                    if (g.dev[m] < keys[i].device)
                        lo = m + 1;
                    else
                        hi = m;
                }
                seg_lo[nseg] = i;
                seg_k[nseg] = lo;
                seg_done[nseg] = 0;
                if (keys[i].device == dst[t].device)
                    local = nseg;
                nseg++;
            }
            seg_hi[nseg - 1] = i + 1;
        }
        if (local >= 0) {
            DG_CHECK_GOTO(take_range(&ds, seg_lo[local], seg_hi[local], plan, &moved, err),
                          st, done);
            seg_done[local] = 1;
        }
        DG_CHECK_GOTO(take_range(&ds, nsc, ds.ncand, plan, &moved, err), st, done);
        while (ds.covered < ds.size) {
            /* the least loaded device, ties to the first from rot on */
            int best = -1;
            for (int j = 0; j < nseg; j++) {
                if (seg_done[j])
                    continue;
                if (best < 0 || g.load[seg_k[j]] < g.load[seg_k[best]] ||
                    (g.load[seg_k[j]] == g.load[seg_k[best]] &&
                     (seg_k[j] - rot + g.ndev) % g.ndev < (seg_k[best] - rot + g.ndev) % g.ndev))
                    best = j;
            }
            if (best < 0)
                break;
            moved = 0;
            DG_CHECK_GOTO(take_range(&ds, seg_lo[best], seg_hi[best], plan, &moved, err),
                          st, done);
            seg_done[best] = 1;
            g.load[seg_k[best]] += moved;
        }
        if (ds.covered < ds.size) {
            st = report_hole(&ds, what, err);
            goto done;
        }
    }
done:
    dst_state_free(&ds);
    dg_box_index_free(&sidx);
    dg_box_index_free(&didx);
    free(found.v);
    free(sbox);
    free(dbox);
    free(keys);
    free(sdev);
    free(ddev);
    free(seg_lo);
    free(seg_hi);
    free(seg_k);
    free(seg_done);
    src_groups_free(&g);
    if (st != DG_OK)
        dg_plan_free(plan);
    return st;
}

dg_status dg_plan_build_ex(const dg_plan_chunk *src, int nsrc,
                           const dg_plan_chunk *dst, int ndst, unsigned flags,
                           dg_plan *plan, dg_error *err)
{
    assert(plan != NULL);
    plan->ncopies = plan->cap = 0;
    plan->copies = NULL;
    if (ndst > 16) { /* a copy per destination at least: not grown from 16 by copying */
        plan->copies = malloc((size_t)ndst * sizeof(dg_plan_copy));
        if (!plan->copies)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory planning %d copies",
                                ndst);
        plan->cap = ndst;
    }
    return plan_build(src, nsrc, dst, ndst, flags, "source layout", plan, err);
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
 * This is the index-map check: every element must live somewhere.  It is
 * the planner's walk for one destination, counting the elements the chunks
 * give without keeping the copies (n log n for chunks that seldom meet). */
dg_status dg_plan_check_cover(const dg_plan_chunk *chunks, int n,
                              const dg_box *whole, dg_error *err)
{
    dg_plan_chunk d;

    assert(whole != NULL && n >= 0 && (n == 0 || chunks != NULL));
    for (int i = 0; i < n; i++)
        if (chunks[i].box.ndim != whole->ndim)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "a %d-d chunk in a %d-d array",
                                chunks[i].box.ndim, whole->ndim);
    if (dg_box_size(whole) == 0)
        return DG_OK;
    d.device = INT_MIN; /* no chunk's: every device is remote */
    d.box = *whole;
    return plan_build(chunks, n, &d, 1, 0, "index map", NULL, err);
}
