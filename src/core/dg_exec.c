/* Device work on distributed arrays: elementwise loops, fills, copies between
 * layouts (reshard, assign) and mode changes.  Every movement of data between
 * chunks goes through the planner (dg_plan.h). */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_ufunc.h"

/* Runs the plan's copies whose destination is `dsti`, from the chunks of
 * `src` into the view (dptr, dstrides) of box `dbox` on device `ddev`,
 * enqueued on (exec_dev, stream).  Marks the source buffers read. */
static dg_status run_copies_into(dg_array *src, const dg_plan *plan, int dsti,
                                 char *dptr, const dg_box *dbox, const int64_t *dstrides,
                                 int ddev, int exec_dev, int stream, dg_error *err)
{
    dg_backend_i *be = src->be;
    int i, ax;
    int isz = dg_dtype_size(src->dtype);
    for (i = 0; i < plan->ncopies; i++) {
        const dg_plan_copy *pc = &plan->copies[i];
        dg_chunk *c;
        dg_copy_desc cp;
        char *t = dptr;
        if (pc->dst != dsti)
            continue;
        c = &src->chunks[pc->src];
        memset(&cp, 0, sizeof(cp));
        cp.ndim = src->ndim;
        cp.itemsize = isz;
        for (ax = 0; ax < src->ndim; ax++) {
            cp.shape[ax] = dg_range_len(pc->box.r[ax]);
            t += dg_box_pos(dbox, ax, pc->box.r[ax].start) * dstrides[ax];
            cp.dst_strides[ax] = cp.shape[ax] > 1
                ? dstrides[ax] * (pc->box.r[ax].step / dbox->r[ax].step) : 0;
        }
        cp.src_dev = c->device;
        dg_chunk_view(c, &pc->box, (char **)&cp.src, cp.src_strides);
        cp.dst_dev = ddev;
        cp.dst = t;
        DG_CHECK(dg_buffer_use_read(be, c->buf, exec_dev, stream, err));
        DG_CHECK(be->copy(be, exec_dev, stream, &cp, err));
        dg_buffer_mark_read(c->buf, be->pos(be, exec_dev, stream));
    }
    return DG_OK;
}

/* Makes `region` of x readable on device dev: in place when one chunk there
 * holds it all, else in a dense temporary built by the planner's copies,
 * enqueued on (dev, stream). */
dg_status dg_fetch_region(dg_array *x, const dg_box *region, int dev, int stream,
                              dg_region_src *out, dg_error *err)
{
    dg_backend_i *be = x->be;
    int i, ax;
    int isz = dg_dtype_size(x->dtype);
    dg_plan_chunk *src = NULL, dst;
    dg_plan plan = {0, 0, NULL};
    dg_status st;
    int64_t stride = isz;

    for (i = 0; i < x->nchunks; i++) {
        dg_chunk *c = &x->chunks[i];
        if (c->device == dev && dg_box_contains(&c->box, region)) {
            dg_chunk_view(c, region, &out->ptr, out->strides);
            out->buf = c->buf;
            c->buf->refcnt++;
            return DG_OK;
        }
    }
    for (ax = region->ndim - 1; ax >= 0; ax--) {
        out->strides[ax] = dg_range_len(region->r[ax]) > 1 ? stride : 0;
        stride *= dg_range_len(region->r[ax]);
    }
    DG_CHECK(dg_buffer_new(be, dev, (size_t)dg_box_size(region) * (size_t)isz, &out->buf, err));
    out->ptr = (char *)out->buf->ptr;
    DG_CHECK_GOTO(dg_array_layout(x, &src, err), st, fail);
    dst.device = dev;
    dst.box = *region;
    DG_CHECK_GOTO(dg_plan_build(src, x->nchunks, &dst, 1, &plan, err), st, fail);
    {
        /* Dense strides with length-1 axes given their true size, for copies. */
        int64_t dstr[DG_MAXDIM];
        int64_t s = isz;
        for (ax = region->ndim - 1; ax >= 0; ax--) {
            dstr[ax] = s;
            s *= dg_range_len(region->r[ax]);
        }
        DG_CHECK_GOTO(run_copies_into(x, &plan, 0, out->ptr, region, dstr, dev, dev, stream,
                                      err), st, fail);
    }
    dg_buffer_mark_write(out->buf, be->pos(be, dev, stream));
    dg_plan_free(&plan);
    free(src);
    return DG_OK;
fail:
    dg_plan_free(&plan);
    free(src);
    dg_buffer_decref(be, out->buf);
    out->buf = NULL;
    return st;
}

/* Drops axes of length 1 and merges adjacent axes along which every operand
 * is dense, so that contiguous work becomes one long axis. */
static void coalesce(dg_ew_desc *d)
{
    int a, o, nd = 0;
    int nop = d->nop;
    /* drop length-1 axes */
    for (a = 0; a < d->ndim; a++) {
        if (d->shape[a] == 1)
            continue;
        d->shape[nd] = d->shape[a];
        for (o = 0; o < nop; o++)
            d->strides[o][nd] = d->strides[o][a];
        d->where_strides[nd] = d->where_strides[a];
        nd++;
    }
    d->ndim = nd;
    if (nd <= 1)
        return;
    /* merge a into a+1 from the back */
    nd = 1;
    for (a = 1; a < d->ndim; a++) {
        int ok = 1;
        int prev = nd - 1;
        for (o = 0; o < nop && ok; o++)
            if (d->data[o] && d->strides[o][prev] != d->strides[o][a] * d->shape[a])
                ok = 0;
        if (ok && d->where && d->where_strides[prev] != d->where_strides[a] * d->shape[a])
            ok = 0;
        if (ok) {
            d->shape[prev] *= d->shape[a];
            for (o = 0; o < nop; o++)
                d->strides[o][prev] = d->strides[o][a];
            d->where_strides[prev] = d->where_strides[a];
        } else {
            d->shape[nd] = d->shape[a];
            for (o = 0; o < nop; o++)
                d->strides[o][nd] = d->strides[o][a];
            d->where_strides[nd] = d->where_strides[a];
            nd++;
        }
    }
    d->ndim = nd;
}

/* The region of input x (of x->ndim axes, right-aligned against the call's
 * ndim axes) that output box B needs, and which axes are broadcast. */
static void input_region(const dg_array *x, const dg_box *B, int ndim, dg_box *R,
                         int *bcast)
{
    int k = ndim - x->ndim, j;
    R->ndim = x->ndim;
    for (j = 0; j < x->ndim; j++) {
        int a = j + k;
        if (x->shape[j] == 1 && dg_range_len(B->r[a]) > 0) {
            R->r[j] = dg_range_make(0, 1, 1);
            bcast[j] = 1;
        } else {
            R->r[j] = B->r[a];
            bcast[j] = 0;
        }
    }
}

/* Loop strides of an input region, per call axis: 0 on missing and
 * broadcast axes. */
static void loop_strides(const dg_array *x, const int *bcast, const int64_t *rstrides,
                         int ndim, int64_t *out)
{
    int k = ndim - x->ndim, a;
    for (a = 0; a < ndim; a++) {
        int j = a - k;
        out[a] = (j < 0 || bcast[j]) ? 0 : rstrides[j];
    }
}

dg_status dg_ew_apply(const dg_ew_call *call, dg_error *err)
{
    const dg_loop_info *li = &dg_loops[call->loop];
    dg_array *o0 = call->out[0];
    dg_backend_i *be = o0->be;
    int nin = li->nin, nout = li->nout;
    int ci, i, a;
    dg_status st = DG_OK;

    for (ci = 0; ci < o0->nchunks && st == DG_OK; ci++) {
        dg_chunk *oc = &o0->chunks[ci];
        int dev = oc->device;
        const int stream = DG_STREAM_COMPUTE;
        dg_region_src rs[3];
        int nrs = 0;
        dg_ew_desc d;
        dg_box R;
        int bcast[DG_MAXDIM];
        dg_pos p;

        if (dg_box_size(&oc->box) == 0)
            continue;
        memset(&d, 0, offsetof(dg_ew_desc, strides));
        d.loop = call->loop;
        d.ndim = call->ndim;
        d.nop = nin + nout;
        d.where = NULL;
        for (a = 0; a < call->ndim; a++)
            d.shape[a] = dg_range_len(oc->box.r[a]);
        for (i = 0; i < nin && st == DG_OK; i++) {
            dg_array *x = call->in[i].arr;
            if (!x) {
                d.data[i] = NULL;
                memcpy(d.scalar[i], call->in[i].scalar, 16);
                memset(d.strides[i], 0, sizeof(d.strides[i]));
                continue;
            }
            input_region(x, &oc->box, call->ndim, &R, bcast);
            st = dg_fetch_region(x, &R, dev, stream, &rs[nrs], err);
            if (st != DG_OK)
                break;
            d.data[i] = rs[nrs].ptr;
            loop_strides(x, bcast, rs[nrs].strides, call->ndim, d.strides[i]);
            nrs++;
        }
        if (st == DG_OK && call->where) {
            dg_array *w = call->where;
            int64_t ws[DG_MAXDIM];
            input_region(w, &oc->box, call->ndim, &R, bcast);
            st = dg_fetch_region(w, &R, dev, stream, &rs[nrs], err);
            if (st == DG_OK) {
                d.where = (const dg_bool *)rs[nrs].ptr;
                loop_strides(w, bcast, rs[nrs].strides, call->ndim, ws);
                memcpy(d.where_strides, ws, sizeof(ws));
                nrs++;
            }
        }
        for (i = 0; i < nout && st == DG_OK; i++) {
            dg_chunk *c = &call->out[i]->chunks[ci];
            d.data[nin + i] = NULL;
            dg_chunk_view(c, &oc->box, &d.data[nin + i], d.strides[nin + i]);
        }
        for (i = 0; i < nrs && st == DG_OK; i++)
            st = dg_buffer_use_read(be, rs[i].buf, dev, stream, err);
        for (i = 0; i < nout && st == DG_OK; i++)
            st = dg_buffer_use_write(be, call->out[i]->chunks[ci].buf, dev, stream, err);
        if (st == DG_OK) {
            coalesce(&d);
            st = be->elementwise(be, dev, stream, &d, err);
        }
        if (st == DG_OK) {
            p = be->pos(be, dev, stream);
            for (i = 0; i < nrs; i++)
                dg_buffer_mark_read(rs[i].buf, p);
            for (i = 0; i < nout; i++)
                dg_buffer_mark_write(call->out[i]->chunks[ci].buf, p);
        }
        for (i = 0; i < nrs; i++)
            dg_buffer_decref(be, rs[i].buf);
    }
    return st;
}

dg_status dg_array_fill(dg_array *a, const dg_fill_desc *proto, const dg_box *region,
                        dg_error *err)
{
    dg_backend_i *be = a->be;
    int i, ax;
    for (i = 0; i < a->nchunks; i++) {
        dg_chunk *c = &a->chunks[i];
        dg_fill_desc f = *proto;
        dg_box B = c->box;
        if (region && !dg_box_intersect(&c->box, region, &B))
            continue;
        if (dg_box_size(&B) == 0)
            continue;
        f.dtype = a->dtype;
        f.ndim = a->ndim;
        for (ax = 0; ax < a->ndim; ax++) {
            f.shape[ax] = dg_range_len(B.r[ax]);
            f.origin[ax] = B.r[ax].start;
            f.gstep[ax] = B.r[ax].step;
        }
        dg_chunk_view(c, &B, &f.dst, f.strides);
        DG_CHECK(dg_buffer_use_write(be, c->buf, c->device, DG_STREAM_COMPUTE, err));
        DG_CHECK(be->fill(be, c->device, DG_STREAM_COMPUTE, &f, err));
        dg_buffer_mark_write(c->buf, be->pos(be, c->device, DG_STREAM_COMPUTE));
    }
    return DG_OK;
}

dg_status dg_array_assign(dg_array *dst, dg_array *src, dg_error *err)
{
    dg_backend_i *be = dst->be;
    dg_plan_chunk *sl = NULL, *dl = NULL;
    dg_plan plan = {0, 0, NULL};
    dg_status st;
    int j;

    if (src->mode != DG_MODE_REPLICA)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "assign from an array not in replica mode");
    DG_CHECK_GOTO(dg_array_layout(src, &sl, err), st, done);
    DG_CHECK_GOTO(dg_array_layout(dst, &dl, err), st, done);
    DG_CHECK_GOTO(dg_plan_build(sl, src->nchunks, dl, dst->nchunks, &plan, err), st, done);
    for (j = 0; j < dst->nchunks; j++) {
        dg_chunk *c = &dst->chunks[j];
        char *ptr;
        int64_t strides[DG_MAXDIM];
        int64_t full[DG_MAXDIM];
        int ax;
        if (dg_box_size(&c->box) == 0)
            continue;
        dg_chunk_view(c, &c->box, &ptr, strides);
        for (ax = 0; ax < dst->ndim; ax++)
            full[ax] = c->strides[ax];
        DG_CHECK_GOTO(dg_buffer_use_write(be, c->buf, c->device, DG_STREAM_COMPUTE, err), st,
                      done);
        DG_CHECK_GOTO(run_copies_into(src, &plan, j, ptr, &c->box, full, c->device, c->device,
                                      DG_STREAM_COMPUTE, err), st, done);
        dg_buffer_mark_write(c->buf, be->pos(be, c->device, DG_STREAM_COMPUTE));
    }
done:
    dg_plan_free(&plan);
    free(sl);
    free(dl);
    return st;
}

dg_status dg_array_reshard(dg_array *a, const dg_plan_chunk *layout, int n,
                           dg_array **out, dg_error *err)
{
    dg_array *rep = NULL, *res = NULL;
    dg_status st;
    DG_CHECK(dg_array_change_mode(a, DG_MODE_REPLICA, &rep, err));
    DG_CHECK_GOTO(dg_array_empty(a->be, a->dtype, a->ndim, a->shape, layout, n,
                                 DG_MODE_REPLICA, &res, err), st, fail);
    DG_CHECK_GOTO(dg_array_assign(res, rep, err), st, fail);
    dg_array_decref(rep);
    rep = NULL;
    if (a->mode != DG_MODE_REPLICA) {
        dg_array *m = NULL;
        DG_CHECK_GOTO(dg_array_change_mode(res, a->mode, &m, err), st, fail);
        dg_array_decref(res);
        res = m;
    }
    *out = res;
    return DG_OK;
fail:
    dg_array_decref(rep);
    dg_array_decref(res);
    return st;
}

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

/* A copy of a (same layout, same mode), chunk by chunk on each device. */
static dg_status copy_same_layout(dg_array *a, int mode, dg_array **out, dg_error *err)
{
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL;
    dg_backend_i *be = a->be;
    dg_status st;
    int i;
    DG_CHECK(dg_array_layout(a, &l, err));
    st = dg_array_empty(be, a->dtype, a->ndim, a->shape, l, a->nchunks, mode, &r, err);
    free(l);
    if (st != DG_OK)
        return st;
    for (i = 0; i < a->nchunks; i++) {
        dg_chunk *s = &a->chunks[i], *d = &r->chunks[i];
        dg_copy_desc cp;
        int ax;
        if (dg_box_size(&s->box) == 0)
            continue;
        memset(&cp, 0, sizeof(cp));
        cp.ndim = a->ndim;
        cp.itemsize = dg_dtype_size(a->dtype);
        for (ax = 0; ax < a->ndim; ax++)
            cp.shape[ax] = dg_range_len(s->box.r[ax]);
        cp.src_dev = s->device;
        dg_chunk_view(s, &s->box, (char **)&cp.src, cp.src_strides);
        cp.dst_dev = d->device;
        dg_chunk_view(d, &d->box, &cp.dst, cp.dst_strides);
        DG_CHECK_GOTO(dg_buffer_use_read(be, s->buf, s->device, DG_STREAM_COMPUTE, err), st,
                      fail);
        DG_CHECK_GOTO(be->copy(be, s->device, DG_STREAM_COMPUTE, &cp, err), st, fail);
        {
            dg_pos p = be->pos(be, s->device, DG_STREAM_COMPUTE);
            dg_buffer_mark_read(s->buf, p);
            dg_buffer_mark_write(d->buf, p);
        }
    }
    *out = r;
    return DG_OK;
fail:
    dg_array_decref(r);
    return st;
}

/* From an op mode to REPLICA: each chunk of the result is its own partial
 * combined with every other chunk's partial over their intersection. */
static dg_status to_replica(dg_array *a, dg_array **out, dg_error *err)
{
    int dt[3] = {a->dtype, a->dtype, a->dtype};
    int loop = dg_loop_find(mode_ufunc(a->mode), dt);
    if (loop < 0)
        return dg_error_set(err, DG_ERR_TYPE, -1, "mode %d has no loop for dtype %s", a->mode,
                            dg_dtype_name(a->dtype));
    return dg_array_combine(a, loop, out, err);
}

dg_status dg_array_combine(dg_array *a, int loop, dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_array *r = NULL;
    dg_status st;
    int i, j, ax;

    DG_CHECK(copy_same_layout(a, DG_MODE_REPLICA, &r, err));
    for (i = 0; i < a->nchunks; i++) {
        dg_chunk *rc = &r->chunks[i];
        for (j = 0; j < a->nchunks; j++) {
            dg_box I;
            dg_region_src rs;
            dg_ew_desc d;
            dg_pos p;
            dg_array tmp; /* a one-chunk view of a's chunk j, for fetch_region */
            if (j == i || !dg_box_intersect(&rc->box, &a->chunks[j].box, &I))
                continue;
            tmp = *a;
            tmp.nchunks = 1;
            tmp.chunks = &a->chunks[j];
            DG_CHECK_GOTO(dg_fetch_region(&tmp, &I, rc->device, DG_STREAM_COMPUTE, &rs, err), st,
                          fail);
            memset(&d, 0, sizeof(d));
            d.loop = loop;
            d.nop = 3;
            d.ndim = a->ndim;
            for (ax = 0; ax < a->ndim; ax++)
                d.shape[ax] = dg_range_len(I.r[ax]);
            dg_chunk_view(rc, &I, &d.data[0], d.strides[0]);
            d.data[1] = rs.ptr;
            memcpy(d.strides[1], rs.strides, sizeof(rs.strides));
            d.data[2] = d.data[0];
            memcpy(d.strides[2], d.strides[0], sizeof(d.strides[0]));
            st = dg_buffer_use_read(be, rs.buf, rc->device, DG_STREAM_COMPUTE, err);
            if (st == DG_OK)
                st = dg_buffer_use_write(be, rc->buf, rc->device, DG_STREAM_COMPUTE, err);
            if (st == DG_OK) {
                coalesce(&d);
                st = be->elementwise(be, rc->device, DG_STREAM_COMPUTE, &d, err);
            }
            if (st == DG_OK) {
                p = be->pos(be, rc->device, DG_STREAM_COMPUTE);
                dg_buffer_mark_read(rs.buf, p);
                dg_buffer_mark_write(rc->buf, p);
            }
            dg_buffer_decref(be, rs.buf);
            if (st != DG_OK)
                goto fail;
        }
    }
    *out = r;
    return DG_OK;
fail:
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
            DG_CHECK_GOTO(dg_buffer_use_write(be, c->buf, c->device, DG_STREAM_COMPUTE, err),
                          st, fail);
            DG_CHECK_GOTO(be->fill(be, c->device, DG_STREAM_COMPUTE, &f, err), st, fail);
            dg_buffer_mark_write(c->buf, be->pos(be, c->device, DG_STREAM_COMPUTE));
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
