/* Copies between layouts and mode changes: dg_array_assign, dg_array_reshard,
 * dg_array_change_mode, dg_array_combine.
 *
 * All data moves as dg_move batches of the planner's copies, planned with
 * DG_PLAN_REUSE_DST so that no element crosses to one device twice.  A
 * reshard moves only what changes device: a chunk asked for on a device that
 * already holds its elements is a view of the source (copy on write keeps
 * the two arrays' values apart), and one that holds most of them is made of
 * such views plus the pieces that move; the array keeps the layout asked for
 * as its logical layout.  Partial values of op modes combine by an
 * all-reduce where the backend has one and the chunks agree (the lazy
 * results of reductions), else by loops reading the other chunks in place or
 * from moved temporaries. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_fpe.h"
#include "dg_ufunc.h"

/* Remote pieces a chunk of a reshard may be made of, at most, besides its
 * views of the source: more, and it is one new buffer. */
#define RESHARD_MAX_MOVED 4

/* Adds to mv the copy of plan copy pc into chunk `d` (all of pc's box lies
 * in d), reading from the source's chunk, or, for a copy from destination u
 * (pc->src >= nsrc), from the chunks of dst that hold u: pieces[u] ..
 * pieces[u + 1] - 1. */
static dg_status add_plan_copy(dg_move *mv, int isz, const dg_array *src, const dg_plan_copy *pc,
                               const dg_array *dst, const int *pieces, const dg_chunk *d,
                               dg_error *err)
{
    dg_move_item it;
    int u, k;
    if (pc->src < src->nchunks) {
        dg_move_item_view(&it, isz, &src->chunks[pc->src], &pc->box, d);
        return dg_move_add(mv, &it, err);
    }
    u = pc->src - src->nchunks;
    for (k = pieces[u]; k < pieces[u + 1]; k++) {
        dg_box I;
        if (!dg_box_intersect(&dst->chunks[k].box, &pc->box, &I))
            continue;
        dg_move_item_view(&it, isz, &dst->chunks[k], &I, d);
        it.phase = 1;
        DG_CHECK(dg_move_add(mv, &it, err));
    }
    return DG_OK;
}

dg_status dg_array_assign(dg_array *dst, dg_array *src, dg_error *err)
{
    dg_plan_chunk *sl = NULL, *dl = NULL;
    dg_plan plan = {0, 0, NULL};
    dg_move mv;
    int *pieces = NULL;
    dg_status st;
    int i;

    if (src->mode != DG_MODE_REPLICA)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "assign from an array not in replica mode");
    DG_CHECK(dg_array_unshare(dst, err));
    dg_move_init(&mv, dst->be);
    pieces = (int *)malloc((size_t)(dst->nchunks + 1) * sizeof(int));
    if (!pieces) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0; i <= dst->nchunks; i++)
        pieces[i] = i;
    DG_CHECK_GOTO(dg_array_layout(src, &sl, err), st, done);
    DG_CHECK_GOTO(dg_array_layout(dst, &dl, err), st, done);
    DG_CHECK_GOTO(dg_plan_build_ex(sl, src->nchunks, dl, dst->nchunks, DG_PLAN_REUSE_DST, &plan,
                                   err), st, done);
    for (i = 0; i < plan.ncopies; i++)
        DG_CHECK_GOTO(add_plan_copy(&mv, dg_dtype_size(src->dtype), src, &plan.copies[i], dst,
                                    pieces, &dst->chunks[plan.copies[i].dst], err), st, done);
    st = dg_move_run(&mv, err);
done:
    dg_move_free(&mv);
    dg_plan_free(&plan);
    free(pieces);
    free(sl);
    free(dl);
    return st;
}

/* ---- reshard ------------------------------------------------------------------- */

/* 1 if a view of `box` in chunk s is worth keeping s's memory alive for: it
 * holds at least half of it. */
static int worth_viewing(const dg_chunk *s, const dg_box *box, int isz)
{
    return (size_t)dg_box_size(box) * (size_t)isz * 2 >= s->buf->mem->nbytes;
}

/* 1 if chunk s's view of `box` is dense in C order (length-1 axes aside). */
static int view_is_dense(const dg_chunk *s, const dg_box *box, int isz)
{
    int64_t st[DG_MAXDIM], want = isz;
    char *p;
    int ax;
    dg_chunk_view(s, box, &p, st);
    for (ax = box->ndim - 1; ax >= 0; ax--) {
        int64_t n = dg_range_len(box->r[ax]);
        if (n > 1 && st[ax] != want)
            return 0;
        want *= n;
    }
    return 1;
}

/* 1 if chunk s can hold `box` of a reshard as a view (flags: of the
 * reshard). */
static int can_view(const dg_chunk *s, int dev, const dg_box *box, int isz, unsigned flags)
{
    return s->device == dev && dg_box_contains(&s->box, box) && worth_viewing(s, box, isz) &&
           (!(flags & DG_RESHARD_DENSE) || view_is_dense(s, box, isz));
}

/* Appends to r a chunk on dev holding `box`: a view of s sharing its memory
 * (s not NULL), else a new dense buffer. */
static dg_status push_chunk(dg_array *r, int dev, const dg_box *box, const dg_chunk *s,
                            dg_error *err)
{
    dg_chunk *c = &r->chunks[r->nchunks]; /* zeroed by dg_array_alloc_shell */
    const int isz = dg_dtype_size(r->dtype);
    int64_t stride = isz;
    int ax;
    c->device = dev;
    dg_box_copy(&c->box, box);
    dg_box_canon(&c->box);
    if (s) {
        char *ptr;
        DG_CHECK(dg_buffer_share(s->buf, &c->buf, err));
        dg_chunk_view(s, &c->box, &ptr, c->strides);
        c->offset = ptr ? (int64_t)(ptr - (char *)s->buf->ptr) : 0;
    } else {
        for (ax = c->box.ndim - 1; ax >= 0; ax--) {
            c->strides[ax] = stride;
            stride *= dg_range_len(c->box.r[ax]);
        }
        DG_CHECK(dg_buffer_new(r->be, dev, (size_t)dg_box_size(&c->box) * (size_t)isz, &c->buf,
                               err));
    }
    r->nchunks++;
    return DG_OK;
}

/* How a chunk asked for is held: a view, views and moved pieces, or one new
 * buffer; pieces[t] .. pieces[t + 1] - 1 are its chunks in the result. */
enum { HOLD_VIEW, HOLD_PIECES, HOLD_NEW };

/* The first chunk of rep (in index order) that can hold `box` of a reshard
 * as a view on dev, or -1: among the chunks the index x of rep's boxes finds
 * (ids: scratch), so that a layout of many chunks is not searched whole;
 * sdev[i]: chunk i's device. */
static int view_source(const dg_array *rep, const int *sdev, const dg_box_index *x, int dev,
                       const dg_box *box, int isz, unsigned flags, int **ids, int *nids,
                       int *capids)
{
    int k, best = -1;
    *nids = 0;
    if (dg_box_size(box) == 0 || dg_box_index_query(x, box, ids, nids, capids, NULL) != DG_OK)
        return -1;
    for (k = 0; k < *nids; k++) {
        const int i = (*ids)[k];
        if ((best < 0 || i < best) && sdev[i] == dev &&
            can_view(&rep->chunks[i], dev, box, isz, flags))
            best = i;
    }
    return best;
}

/* The result of resharding rep (REPLICA) to `layout`, chunks only: views
 * where the data stays, new buffers where it moves (and, with
 * DG_RESHARD_PIECES, chunks made of views and moved pieces).  kind[t] and
 * pieces[] say how each chunk asked for is held; sdev[i] is the device of
 * rep's chunk i (read from a table of ints, not from chunks 1 KiB apart).  The plan's copies come
 * grouped by destination, in order (dg_plan.h): those of t are found by
 * one walk (first[t]), and the chunks that could be viewed through an
 * index of rep's boxes, for layouts of many chunks. */
static dg_status reshard_chunks(dg_array *rep, const int *sdev, const dg_plan_chunk *layout,
                                int n, const dg_plan *plan, unsigned flags, int *kind,
                                int *pieces, dg_array **out, dg_error *err)
{
    const int isz = dg_dtype_size(rep->dtype), nsrc = rep->nchunks;
    dg_array *r = NULL;
    int t, i, j, cap = 0, *first = NULL, *view = NULL, *ids = NULL, nids = 0, capids = 0;
    const dg_box **boxes = NULL;
    dg_box_index x;
    dg_status st = DG_OK;

    memset(&x, 0, sizeof x);
    first = (int *)malloc(((size_t)n + 1) * sizeof(int));
    view = (int *)malloc(((size_t)n + 1) * sizeof(int));
    boxes = (const dg_box **)malloc(((size_t)nsrc + 1) * sizeof(*boxes));
    if (!first || !view || !boxes) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0; i < nsrc; i++)
        boxes[i] = &rep->chunks[i].box;
    DG_CHECK_GOTO(dg_box_index_build(&x, boxes, nsrc, dg_box_index_axis(boxes, nsrc), err), st,
                  done);
    for (t = 0, j = 0; t <= n; t++) {
        while (j < plan->ncopies && plan->copies[j].dst < t)
            j++;
        first[t] = j;
    }
    /* how each is held, and how many chunks that takes */
    for (t = 0; t < n; t++) {
        const dg_box *D = &layout[t].box;
        int local = 0, remote = 0, virt = 0, worth = 1;
        view[t] = view_source(rep, sdev, &x, layout[t].device, D, isz, flags, &ids, &nids,
                              &capids);
        kind[t] = view[t] >= 0 ? HOLD_VIEW : HOLD_NEW;
        for (j = first[t]; j < first[t + 1] && kind[t] != HOLD_VIEW; j++) {
            const dg_plan_copy *pc = &plan->copies[j];
            if (pc->src >= nsrc) {
                virt++;
            } else if (sdev[pc->src] == layout[t].device) {
                local++;
                worth &= worth_viewing(&rep->chunks[pc->src], &pc->box, isz);
            } else {
                remote++;
            }
        }
        if (kind[t] == HOLD_NEW && (flags & DG_RESHARD_PIECES) && local > 0 && virt == 0 &&
            worth && remote <= RESHARD_MAX_MOVED)
            kind[t] = HOLD_PIECES;
        cap += kind[t] == HOLD_PIECES ? local + remote : 1;
    }
    DG_CHECK_GOTO(dg_array_alloc_shell(rep->be, rep->dtype, rep->ndim, rep->shape, cap,
                                       DG_MODE_REPLICA, &r, err), st, done);
    for (t = 0; t < n && st == DG_OK; t++) {
        const dg_plan_chunk *L = &layout[t];
        pieces[t] = r->nchunks;
        if (kind[t] == HOLD_VIEW) {
            st = push_chunk(r, L->device, &L->box, &rep->chunks[view[t]], err);
        } else if (kind[t] == HOLD_PIECES) {
            for (j = first[t]; j < first[t + 1] && st == DG_OK; j++) {
                const dg_plan_copy *pc = &plan->copies[j];
                st = push_chunk(r, L->device, &pc->box,
                                sdev[pc->src] == L->device ? &rep->chunks[pc->src] : NULL, err);
            }
        } else {
            st = push_chunk(r, L->device, &L->box, NULL, err);
        }
    }
    pieces[n] = r->nchunks;
done:
    free(first);
    free(view);
    free(boxes);
    free(ids);
    dg_box_index_free(&x);
    if (st != DG_OK) {
        if (r)
            dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

dg_status dg_array_reshard(dg_array *a, const dg_plan_chunk *layout, int n,
                           dg_array **out, dg_error *err)
{
    return dg_array_reshard_ex(a, layout, n, 0, out, err);
}

dg_status dg_array_reshard_ex(dg_array *a, const dg_plan_chunk *layout, int n, unsigned flags,
                              dg_array **out, dg_error *err)
{
    dg_array *rep = NULL, *res = NULL;
    dg_plan_chunk *sl = NULL;
    dg_plan plan = {0, 0, NULL};
    dg_move mv;
    int *kind = NULL, *pieces = NULL, *sdev = NULL, t, j;
    const int isz = dg_dtype_size(a->dtype);
    dg_status st;

    if (!(flags & DG_RESHARD_CHECKED))
        DG_CHECK(dg_layout_validate(a->be->ndevices, a->ndim, a->shape, layout, n, err));
    dg_move_init(&mv, a->be);
    DG_CHECK_GOTO(dg_array_change_mode(a, DG_MODE_REPLICA, &rep, err), st, fail);
    kind = (int *)malloc((size_t)n * sizeof(int));
    pieces = (int *)malloc((size_t)(n + 1) * sizeof(int));
    sdev = (int *)malloc(((size_t)rep->nchunks + 1) * sizeof(int));
    if (!kind || !pieces || !sdev) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto fail;
    }
    for (j = 0; j < rep->nchunks; j++)
        sdev[j] = rep->chunks[j].device;
    DG_CHECK_GOTO(dg_array_layout(rep, &sl, err), st, fail);
    DG_CHECK_GOTO(dg_plan_build_ex(sl, rep->nchunks, layout, n, DG_PLAN_REUSE_DST, &plan, err),
                  st, fail);
    DG_CHECK_GOTO(reshard_chunks(rep, sdev, layout, n, &plan, flags, kind, pieces, &res, err),
                  st, fail);
    DG_CHECK_GOTO(dg_move_reserve(&mv, plan.ncopies, err), st, fail); /* as a rule, enough */
    /* the copies into new buffers: whole chunks, or the moved pieces */
    for (j = 0; j < plan.ncopies; j++) {
        const dg_plan_copy *pc = &plan.copies[j];
        t = pc->dst;
        if (kind[t] == HOLD_VIEW)
            continue;
        if (kind[t] == HOLD_PIECES) {
            int k;
            if (sdev[pc->src] == layout[t].device)
                continue; /* a view */
            for (k = pieces[t]; k < pieces[t + 1]; k++)
                if (dg_box_equal(&res->chunks[k].box, &pc->box))
                    break;
            DG_CHECK_GOTO(add_plan_copy(&mv, isz, rep, pc, res, pieces, &res->chunks[k], err),
                          st, fail);
        } else {
            DG_CHECK_GOTO(add_plan_copy(&mv, isz, rep, pc, res, pieces,
                                        &res->chunks[pieces[t]], err), st, fail);
        }
    }
    DG_CHECK_GOTO(dg_move_run(&mv, err), st, fail);
    if (res->nchunks != n) {
        res->logical = (dg_plan_chunk *)malloc((size_t)n * sizeof(dg_plan_chunk));
        if (!res->logical) {
            st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            goto fail;
        }
        for (t = 0; t < n; t++) {
            res->logical[t].device = layout[t].device;
            dg_box_copy(&res->logical[t].box, &layout[t].box);
            dg_box_canon(&res->logical[t].box);
        }
        res->nlogical = n;
    }
    if (a->mode != DG_MODE_REPLICA) {
        dg_array *m = NULL;
        DG_CHECK_GOTO(dg_array_change_mode(res, a->mode, &m, err), st, fail);
        dg_array_decref(res);
        res = m;
    }
    *out = res;
    res = NULL;
    st = DG_OK;
fail:
    dg_move_free(&mv);
    dg_plan_free(&plan);
    free(sl);
    free(kind);
    free(pieces);
    free(sdev);
    if (rep)
        dg_array_decref(rep);
    if (res)
        dg_array_decref(res);
    return st;
}

/* ---- modes ---------------------------------------------------------------------- */

/* The identity of a mode's op in `dtype`, as bytes of that dtype. */
static void mode_identity(int mode, int dtype, unsigned char out[16])
{
    int isz = dg_dtype_size(dtype);
    char kind = dg_dtype_kind(dtype);
    memset(out, 0, 16);
    switch (mode) {
    case DG_MODE_SUM:
        return; /* zero in every dtype */
    case DG_MODE_PROD:
        if (kind == 'f' && isz == 2) { uint16_t v = 0x3C00; memcpy(out, &v, 2); }
        else if (kind == 'f' && isz == 4) { float v = 1; memcpy(out, &v, 4); }
        else if (kind == 'f' && isz == 8) { double v = 1; memcpy(out, &v, 8); }
        else if (kind == 'c' && isz == 8) { float v = 1; memcpy(out, &v, 4); }
        else if (kind == 'c' && isz == 16) { double v = 1; memcpy(out, &v, 8); }
        else out[0] = 1; /* little-endian integers and bool */
        return;
    case DG_MODE_MAX:
    case DG_MODE_MIN: {
        int lo = mode == DG_MODE_MAX; /* MAX's identity is the lowest value */
        if (kind == 'b') {
            out[0] = lo ? 0 : 1;
        } else if (kind == 'u') {
            if (!lo) memset(out, 0xFF, (size_t)isz);
        } else if (kind == 'i') {
            memset(out, lo ? 0x00 : 0xFF, (size_t)isz);
            out[isz - 1] = lo ? 0x80 : 0x7F;
        } else if (kind == 'f' && isz == 2) {
            uint16_t v = lo ? 0xFC00 : 0x7C00; memcpy(out, &v, 2);
        } else if (isz == 4 || (kind == 'c' && isz == 8)) {
            float v = lo ? -__builtin_inff() : __builtin_inff();
            memcpy(out, &v, 4);
            if (kind == 'c') memcpy(out + 4, &v, 4);
        } else {
            double v = lo ? -__builtin_inf() : __builtin_inf();
            memcpy(out, &v, 8);
            if (kind == 'c') memcpy(out + 8, &v, 8);
        }
        return;
    }
    default:
        return;
    }
}

/* The ufunc combining partial values of a mode. */
static int mode_ufunc(int mode)
{
    switch (mode) {
    case DG_MODE_SUM: return DG_UF_add;
    case DG_MODE_PROD: return DG_UF_multiply;
    case DG_MODE_MAX: return DG_UF_maximum;
    case DG_MODE_MIN: return DG_UF_minimum;
    default: return -1;
    }
}

/* A new array with a's chunks' boxes and devices (and its logical layout),
 * in `mode`, values uninitialised.  New reference. */
static dg_status empty_like_chunks(dg_array *a, int mode, dg_array **out, dg_error *err)
{
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL;
    dg_status st;
    DG_CHECK(dg_array_layout(a, &l, err));
    st = dg_array_empty(a->be, a->dtype, a->ndim, a->shape, l, a->nchunks, mode, &r, err);
    free(l);
    if (st == DG_OK)
        st = dg_array_copy_logical(r, a, err);
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

/* A copy of a (same layout, same mode), chunk by chunk on each device. */
static dg_status copy_same_layout(dg_array *a, int mode, dg_array **out, dg_error *err)
{
    dg_array *r = NULL;
    dg_move mv;
    dg_status st;
    int i;
    DG_CHECK(empty_like_chunks(a, mode, &r, err));
    dg_move_init(&mv, a->be);
    for (i = 0, st = DG_OK; i < a->nchunks && st == DG_OK; i++) {
        dg_move_item it;
        dg_move_item_view(&it, dg_dtype_size(a->dtype), &a->chunks[i], &a->chunks[i].box,
                          &r->chunks[i]);
        st = dg_move_add(&mv, &it, err);
    }
    return dg_move_finish(&mv, st, r, out, err);
}

/* From an op mode to REPLICA: each chunk of the result is its own partial
 * combined with every other chunk's partial over their intersection; under
 * the errstate of the reduction that left the mode, where one did
 * (dg_array.mode_fpe), its work named "reduce" (DG_FPE_AS_REDUCE). */
static dg_status to_replica(dg_array *a, dg_array **out, dg_error *err)
{
    int dt[3] = {a->dtype, a->dtype, a->dtype};
    int loop = dg_loop_find(mode_ufunc(a->mode), dt);
    uint32_t was = 0;
    dg_status st;
    if (loop < 0)
        return dg_error_set(err, DG_ERR_TYPE, -1, "mode %d has no loop for dtype %s", a->mode,
                            dg_dtype_name(a->dtype));
    if (a->has_mode_fpe)
        was = dg_fpe_set_actions(a->mode_fpe ? a->mode_fpe | DG_FPE_AS_REDUCE : 0);
    st = dg_array_combine(a, loop, out, err);
    if (a->has_mode_fpe)
        dg_fpe_set_actions(was);
    return st;
}

/* Enqueues on the device of chunk d: d's view of box I = x op y (x, y
 * views of I read in place on that device, in the buffers xb, yb). */
static dg_status fold_views(dg_backend_i *be, int loop, dg_chunk *d, const dg_box *I,
                            const dg_region_src *x, const dg_region_src *y, dg_error *err)
{
    dg_ew_desc e;
    dg_access acc[3];
    int ax;
    memset(&e, 0, sizeof(e));
    e.loop = loop;
    e.nop = 3;
    e.ndim = I->ndim;
    for (ax = 0; ax < I->ndim; ax++)
        e.shape[ax] = dg_range_len(I->r[ax]);
    e.data[0] = x->ptr;
    memcpy(e.strides[0], x->strides, sizeof(x->strides));
    e.data[1] = y->ptr;
    memcpy(e.strides[1], y->strides, sizeof(y->strides));
    dg_chunk_view(d, I, &e.data[2], e.strides[2]);
    dg_ew_coalesce(&e);
    acc[0] = dg_read(x->buf);
    acc[1] = dg_read(y->buf);
    acc[2] = dg_write(d->buf);
    return dg_enqueue(be, d->device, DG_STREAM_COMPUTE, acc, 3, dg_work_elementwise(&e), err);
}

/* Chunk j of a alone, as an array (borrowing a's chunk), for dg_fetch_region. */
static dg_array one_chunk(const dg_array *a, int j)
{
    dg_array t = *a;
    t.nchunks = 1;
    t.chunks = &a->chunks[j];
    t.logical = NULL;
    t.nlogical = 0;
    t.mode = DG_MODE_REPLICA;
    return t;
}

/* The all-reduce op of `loop`'s ufunc, or -1. */
static int allreduce_op(int loop)
{
    switch (dg_loops[loop].ufunc) {
    case DG_UF_add: return DG_ALLRED_SUM;
    case DG_UF_multiply: return DG_ALLRED_PROD;
    case DG_UF_maximum: return DG_ALLRED_MAX;
    case DG_UF_minimum: return DG_ALLRED_MIN;
    default: return -1;
    }
}

/* 1 if every chunk of a holds the same box, dense, and (distinct) each on
 * its own device.  One pass: the devices seen are marked in a table. */
static int same_dense_boxes(const dg_array *a, int distinct)
{
    const int isz = dg_dtype_size(a->dtype), nd = a->be->ndevices;
    unsigned char *seen = distinct ? (unsigned char *)calloc((size_t)nd + 1, 1) : NULL;
    int i, ax, ok = !distinct || seen != NULL;
    for (i = 0; i < a->nchunks && ok; i++) {
        const dg_chunk *c = &a->chunks[i];
        int64_t want = isz;
        if (!dg_box_equal(&c->box, &a->chunks[0].box))
            ok = 0;
        if (distinct && ok) {
            if (c->device < 0 || c->device >= nd || seen[c->device])
                ok = 0;
            else
                seen[c->device] = 1;
        }
        for (ax = c->box.ndim - 1; ax >= 0 && ok; ax--) {
            int64_t n = dg_range_len(c->box.r[ax]);
            if (n > 1 && c->strides[ax] != want)
                ok = 0;
            want *= n;
        }
    }
    free(seen);
    return ok;
}

/* 1 if the device of a's first chunk reads every other chunk's device in
 * place (0 across the processes of a job). */
static int all_read_first(const dg_array *a)
{
    int i;
    for (i = 1; i < a->nchunks; i++)
        if (!dg_be_can_access(a->be, a->chunks[0].device, a->chunks[i].device))
            return 0;
    return 1;
}

/* The backend's all-reduce d as a group; DG_ERR_NOTIMPL (err untouched)
 * where it has none for d's dtype and op. */
static dg_status run_allreduce(dg_backend_i *be, void *ctx, dg_error *err)
{
    dg_error e2 = DG_ERROR_INIT;
    dg_status st = dg_be_allreduce(be, DG_STREAM_COMPUTE, (const dg_allreduce_desc *)ctx, &e2);
    if (st == DG_ERR_NOTIMPL)
        dg_error_clear(&e2);
    else if (st != DG_OK)
        *err = e2;
    return st;
}

/* Chunks holding the same box on distinct devices, combined by the backend's
 * all-reduce `op` into r (same layout): with `loop` (any op but argmax /
 * argmin's), or, with ai and ri (op DG_ALLRED_ARGMAX / ARGMIN), as (value,
 * index) pairs, ai the indices beside a and ri beside r (same layout).
 * DG_ERR_NOTIMPL (err untouched) where the backend has none for this dtype
 * and op. */
static dg_status combine_allreduce(dg_array *a, dg_array *ai, int loop, int op, dg_array *r,
                                   dg_array *ri, dg_error *err)
{
    dg_backend_i *be = a->be;
    const int n = a->nchunks, nacc = ai ? 4 : 2;
    int *devs = (int *)malloc((size_t)n * sizeof(int));
    const void **src = (const void **)malloc((size_t)n * sizeof(void *));
    void **dst = (void **)malloc((size_t)n * sizeof(void *));
    const int64_t **src_idx = ai ? (const int64_t **)malloc((size_t)n * sizeof(void *)) : NULL;
    int64_t **dst_idx = ai ? (int64_t **)malloc((size_t)n * sizeof(void *)) : NULL;
    dg_access *acc = (dg_access *)malloc((size_t)n * (size_t)nacc * sizeof(dg_access));
    dg_allreduce_desc d;
    dg_status st = DG_OK;
    int i;

    if (!devs || !src || !dst || !acc || (ai && (!src_idx || !dst_idx))) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0; i < n; i++) {
        devs[i] = a->chunks[i].device;
        src[i] = (const char *)a->chunks[i].buf->ptr + a->chunks[i].offset;
        dst[i] = (char *)r->chunks[i].buf->ptr + r->chunks[i].offset;
        acc[nacc * i] = dg_acc_on(a->chunks[i].buf, DG_ACC_READ, devs[i], DG_STREAM_COMPUTE);
        acc[nacc * i + 1] = dg_acc_on(r->chunks[i].buf, DG_ACC_WRITE, devs[i],
                                      DG_STREAM_COMPUTE);
        if (ai) {
            src_idx[i] = (const int64_t *)((const char *)ai->chunks[i].buf->ptr +
                                           ai->chunks[i].offset);
            dst_idx[i] = (int64_t *)((char *)ri->chunks[i].buf->ptr + ri->chunks[i].offset);
            acc[nacc * i + 2] = dg_acc_on(ai->chunks[i].buf, DG_ACC_READ, devs[i],
                                          DG_STREAM_COMPUTE);
            acc[nacc * i + 3] = dg_acc_on(ri->chunks[i].buf, DG_ACC_WRITE, devs[i],
                                          DG_STREAM_COMPUTE);
        }
    }
    memset(&d, 0, sizeof d);
    d.n = n;
    d.devs = devs;
    d.src = src;
    d.dst = (void *const *)dst;
    d.count = dg_box_size(&a->chunks[0].box);
    d.dtype = a->dtype;
    d.op = op;
    d.loop = loop;
    d.src_idx = (const int64_t *const *)src_idx;
    d.dst_idx = (int64_t *const *)dst_idx;
    st = dg_enqueue_group(be, acc, nacc * n, run_allreduce, &d, err);
done:
    free(devs);
    free(src);
    free(dst);
    free(src_idx);
    free(dst_idx);
    free(acc);
    return st;
}

/* 1 if the backend's all-reduce rather than reads in place should combine
 * the chunks of a (the same box on distinct devices): where the devices
 * cannot read one another (a job's processes: one exchange instead of a
 * fetch for each pair of devices) or, with `large`, for large partials. */
static int allreduce_pays(const dg_array *a, int large)
{
    dg_backend_i *be = a->be;
    return dg_be_has(be, DG_SLOT_ALLREDUCE) &&
           (large || !dg_be_has(be, DG_SLOT_CAN_ACCESS) || !all_read_first(a));
}

dg_status dg_array_combine_arg(dg_array *v, dg_array *ix, int kind, dg_array **vout,
                               dg_array **iout, dg_error *err)
{
    dg_array *r = NULL, *ri = NULL;
    dg_status st;
    if (!(v->be->flags & DG_BE_ARG_ALLRED) || v->nchunks < 2 || !same_dense_boxes(v, 1) ||
        !same_dense_boxes(ix, 1) || !allreduce_pays(v, 0))
        return DG_ERR_NOTIMPL;
    DG_CHECK(empty_like_chunks(v, DG_MODE_REPLICA, &r, err));
    st = empty_like_chunks(ix, DG_MODE_REPLICA, &ri, err);
    if (st == DG_OK)
        st = combine_allreduce(v, ix, -1, kind == DG_RED_ARGMIN ? DG_ALLRED_ARGMIN
                                                                : DG_ALLRED_ARGMAX, r, ri, err);
    if (st != DG_OK) {
        dg_array_decref(r);
        if (ri)
            dg_array_decref(ri);
        return st;
    }
    *vout = r;
    *iout = ri;
    return DG_OK;
}

/* Chunks holding the same box: every chunk of r (whose chunks are a's, or
 * a's first alone) gets a_0 op a_1 op ... in chunk order (the same bits on
 * every device), each a_j read in place where the device can (its own, or a
 * small one on a peer), else moved. */
static dg_status combine_same_boxes(dg_array *a, int loop, dg_array *r, dg_error *err)
{
    dg_backend_i *be = a->be;
    const dg_box *I = &a->chunks[0].box;
    dg_status st = DG_OK;
    int i, j;
    for (i = 0; i < r->nchunks && st == DG_OK; i++) {
        dg_chunk *rc = &r->chunks[i];
        dg_region_src acc, x;
        dg_array t0 = one_chunk(a, 0);
        DG_CHECK(dg_fetch_region(&t0, I, rc->device, DG_STREAM_COMPUTE, &acc, err));
        for (j = 1; j < a->nchunks && st == DG_OK; j++) {
            dg_array tj = one_chunk(a, j);
            st = dg_fetch_region(&tj, I, rc->device, DG_STREAM_COMPUTE, &x, err);
            if (st != DG_OK)
                break;
            st = fold_views(be, loop, rc, I, &acc, &x, err);
            dg_buffer_decref(be, x.buf);
            if (st == DG_OK && j == 1) { /* the fold goes on in rc */
                dg_buffer_decref(be, acc.buf);
                acc.buf = rc->buf;
                rc->buf->refcnt++;
                dg_chunk_view(rc, I, &acc.ptr, acc.strides);
            }
        }
        dg_buffer_decref(be, acc.buf);
    }
    return st;
}

dg_status dg_array_combine_one(dg_array *a, int loop, dg_array **out, dg_error *err)
{
    dg_plan_chunk one;
    dg_array *r = NULL;
    dg_status st;
    if (a->nchunks < 2 || !same_dense_boxes(a, 0))
        return dg_array_combine(a, loop, out, err);
    one.device = a->chunks[0].device;
    one.box = a->chunks[0].box;
    DG_CHECK(dg_array_empty(a->be, a->dtype, a->ndim, a->shape, &one, 1, DG_MODE_REPLICA, &r,
                            err));
    st = combine_same_boxes(a, loop, r, err);
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

static int cmp_chunk_id(const void *pa, const void *pb)
{
    const int x = *(const int *)pa, y = *(const int *)pb;
    return (x > y) - (x < y);
}

dg_status dg_array_combine(dg_array *a, int loop, dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_array *r = NULL;
    dg_status st;
    const dg_box **boxes = NULL;
    dg_box_index x_idx;
    int *hits = NULL, nhits = 0, caphits = 0;
    int i, k;

    memset(&x_idx, 0, sizeof x_idx);
    if (a->nchunks > 1 && same_dense_boxes(a, 1)) {
        const size_t bytes = (size_t)dg_box_size(&a->chunks[0].box) *
                             (size_t)dg_dtype_size(a->dtype);
        DG_CHECK(empty_like_chunks(a, DG_MODE_REPLICA, &r, err));
        st = DG_ERR_NOTIMPL;
        /* the backend's all-reduce where it is cheaper than reads in place:
         * large partials, or devices that cannot read one another (a job's
         * processes: one exchange instead of a fetch per pair of devices;
         * any binary loop there, the others' backends returning NOTIMPL) */
        if (allreduce_pays(a, bytes > dg_get_peer_read_bytes()))
            st = combine_allreduce(a, NULL, loop,
                                   allreduce_op(loop) >= 0 ? allreduce_op(loop) : DG_ALLRED_LOOP,
                                   r, NULL, err);
        if (st == DG_ERR_NOTIMPL)
            st = combine_same_boxes(a, loop, r, err);
        if (st != DG_OK) {
            dg_array_decref(r);
            return st;
        }
        *out = r;
        return DG_OK;
    }
    /* any layout: a copy, then each chunk folds in every other chunk's
     * values over their intersection, in chunk order (those that meet it
     * found through an index of the boxes) */
    DG_CHECK(copy_same_layout(a, DG_MODE_REPLICA, &r, err));
    boxes = (const dg_box **)malloc((size_t)a->nchunks * sizeof(dg_box *));
    if (!boxes) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto fail;
    }
    for (i = 0; i < a->nchunks; i++)
        boxes[i] = &a->chunks[i].box;
    DG_CHECK_GOTO(dg_box_index_build(&x_idx, boxes, a->nchunks,
                                     dg_box_index_axis(boxes, a->nchunks), err), st, fail);
    for (i = 0; i < a->nchunks; i++) {
        dg_chunk *rc = &r->chunks[i];
        nhits = 0;
        DG_CHECK_GOTO(dg_box_index_query(&x_idx, &rc->box, &hits, &nhits, &caphits, err), st,
                      fail);
        if (nhits > 1)
            qsort(hits, (size_t)nhits, sizeof(int), cmp_chunk_id);
        for (k = 0; k < nhits; k++) {
            const int j = hits[k];
            dg_box I;
            dg_region_src self, x;
            dg_array tj;
            if (j == i || !dg_box_intersect(&rc->box, &a->chunks[j].box, &I))
                continue;
            tj = one_chunk(a, j);
            DG_CHECK_GOTO(dg_fetch_region(&tj, &I, rc->device, DG_STREAM_COMPUTE, &x, err), st,
                          fail);
            self.buf = rc->buf;
            dg_chunk_view(rc, &I, &self.ptr, self.strides);
            st = fold_views(be, loop, rc, &I, &self, &x, err);
            dg_buffer_decref(be, x.buf);
            if (st != DG_OK)
                goto fail;
        }
    }
    dg_box_index_free(&x_idx);
    free(hits);
    free(boxes);
    *out = r;
    return DG_OK;
fail:
    dg_box_index_free(&x_idx);
    free(hits);
    free(boxes);
    dg_array_decref(r);
    return st;
}

/* From REPLICA to an op mode: a copy in which every element keeps its value
 * in the last chunk holding it and the mode's identity in the others. */
static dg_status to_op_mode(dg_array *a, int mode, dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_array *r = NULL;
    dg_status st;
    int i, j, ax;
    DG_CHECK(copy_same_layout(a, mode, &r, err));
    for (i = 0; i < r->nchunks; i++) {
        dg_chunk *c = &r->chunks[i];
        for (j = i + 1; j < r->nchunks; j++) {
            dg_box I;
            dg_fill_desc f;
            dg_access acc;
            if (!dg_box_intersect(&c->box, &r->chunks[j].box, &I))
                continue;
            memset(&f, 0, sizeof(f));
            f.kind = DG_FILL_CONST;
            f.dtype = r->dtype;
            f.ndim = r->ndim;
            mode_identity(mode, r->dtype, f.value);
            for (ax = 0; ax < r->ndim; ax++) {
                f.shape[ax] = dg_range_len(I.r[ax]);
                f.origin[ax] = I.r[ax].start;
                f.gstep[ax] = I.r[ax].step;
            }
            dg_chunk_view(c, &I, &f.dst, f.strides);
            acc = dg_write(c->buf);
            DG_CHECK_GOTO(dg_enqueue(be, c->device, DG_STREAM_COMPUTE, &acc, 1, dg_work_fill(&f),
                                     err), st, fail);
        }
    }
    *out = r;
    return DG_OK;
fail:
    dg_array_decref(r);
    return st;
}

dg_status dg_array_change_mode(dg_array *a, int mode, dg_array **out, dg_error *err)
{
    dg_array *rep = NULL;
    dg_status st;
    if (mode < 0 || mode >= DG_NMODES)
        return dg_error_set(err, DG_ERR_VALUE, -1, "unknown mode %d", mode);
    if (mode == a->mode) {
        dg_array_incref(a);
        *out = a;
        return DG_OK;
    }
    if (a->mode == DG_MODE_REPLICA)
        return to_op_mode(a, mode, out, err);
    DG_CHECK(to_replica(a, &rep, err));
    if (mode == DG_MODE_REPLICA) {
        *out = rep;
        return DG_OK;
    }
    st = to_op_mode(rep, mode, out, err);
    dg_array_decref(rep);
    return st;
}
