/* Inclusive scans of distributed arrays along one axis (dg_array_scan).
 *
 * Chunks holding the whole axis scan alone, where they live.  Chunks that
 * are blocks tiling the axis scan alone too, then fold in a carry: the
 * combined totals of the blocks before them, passed from block to block in
 * the order of the axis (each carry made on the device of the block that
 * needs it, from the last slice of the block before).  Any other layout goes
 * through one where the axis is whole, and back. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_ufunc.h"

/* The scan of chunk s along `axis` into chunk d (same box, same device), from
 * carry when not NULL (a view with strides over the box, 0 along axis). */
static dg_status scan_chunk(dg_backend_i *be, int loop, int dtype, int axis, dg_chunk *s,
                            dg_chunk *d, dg_buffer *cbuf, const char *carry,
                            const int64_t *cstr, dg_error *err)
{
    const int nd = s->box.ndim;
    int perm[DG_MAXDIM], k = 0, ax;
    char *sp, *dp;
    int64_t ss[DG_MAXDIM], ds[DG_MAXDIM];
    dg_scan_desc q;
    dg_access acc[3];
    for (ax = 0; ax < nd; ax++)
        if (ax != axis)
            perm[k++] = ax;
    perm[k] = axis;
    dg_chunk_view(s, &s->box, &sp, ss);
    dg_chunk_view(d, &d->box, &dp, ds);
    memset(&q, 0, sizeof(q));
    q.loop = loop;
    q.dtype = dtype;
    q.ndim = nd;
    q.src = sp;
    q.dst = dp;
    q.carry = carry;
    for (k = 0; k < nd; k++) {
        q.shape[k] = dg_range_len(s->box.r[perm[k]]);
        q.src_strides[k] = ss[perm[k]];
        q.dst_strides[k] = ds[perm[k]];
        if (carry)
            q.carry_strides[k] = cstr[perm[k]];
    }
    acc[0] = dg_read(s->buf);
    acc[1] = dg_write(d->buf);
    acc[2] = dg_read(cbuf);
    return dg_enqueue(be, d->device, DG_STREAM_COMPUTE, acc, 3, dg_work_scan(&q), err);
}

/* 1 if a's chunks are pairwise disjoint step-1 blocks along axis that, among
 * the chunks with the same box on the other axes, tile the axis. */
static int scan_blocks(const dg_array *a, int axis)
{
    int i, j, ax;
    for (i = 0; i < a->nchunks; i++) {
        const dg_box *b = &a->chunks[i].box;
        int64_t covered = 0;
        if (b->r[axis].step != 1 && dg_range_len(b->r[axis]) > 1)
            return 0;
        for (j = 0; j < a->nchunks; j++) {
            const dg_box *c = &a->chunks[j].box;
            dg_box I;
            int same = 1;
            if (j != i && dg_box_intersect(b, c, &I))
                return 0;
            for (ax = 0; ax < b->ndim && same; ax++)
                if (ax != axis)
                    same = dg_range_len(b->r[ax]) == 0 ||
                           (b->r[ax].start == c->r[ax].start && b->r[ax].stop == c->r[ax].stop &&
                            b->r[ax].step == c->r[ax].step);
            if (same) {
                covered += dg_range_len(c->r[axis]);
            } else {
                for (ax = 0; ax < b->ndim; ax++) {
                    dg_range x = dg_range_intersect(b->r[ax], c->r[ax]);
                    if (ax != axis && dg_range_len(x) > 0 && dg_range_len(x) !=
                        dg_range_len(b->r[ax]))
                        return 0; /* partly overlapping groups */
                }
            }
        }
        if (covered != a->shape[axis])
            return 0;
    }
    return 1;
}

/* The chunk of a just before chunk i along axis (same group), or -1. */
static int scan_prev(const dg_array *a, int axis, int i)
{
    const dg_box *b = &a->chunks[i].box;
    int j, ax;
    for (j = 0; j < a->nchunks; j++) {
        const dg_box *c = &a->chunks[j].box;
        int same = c->r[axis].stop == b->r[axis].start && j != i && dg_box_size(c) > 0;
        for (ax = 0; ax < b->ndim && same; ax++)
            if (ax != axis)
                same = b->r[ax].start == c->r[ax].start && b->r[ax].stop == c->r[ax].stop;
        if (same)
            return j;
    }
    return -1;
}

/* Copies the last slice along axis of chunk c into a new dense buffer on dev
 * (box `slice`: c's box with axis at its last index; *out NULL on failure). */
static dg_status last_slice(dg_backend_i *be, int isz, const dg_chunk *c, int axis, int dev,
                            dg_box *slice, dg_buffer **out, int64_t *str, dg_error *err)
{
    dg_copy_desc cp;
    dg_access acc[2];
    dg_status st;
    int64_t s = isz;
    int ax;
    *slice = c->box;
    slice->r[axis] = dg_range_make(c->box.r[axis].stop - 1, c->box.r[axis].stop, 1);
    DG_CHECK(dg_buffer_new(be, dev, (size_t)dg_box_size(slice) * (size_t)isz, out, err));
    memset(&cp, 0, sizeof(cp));
    cp.ndim = slice->ndim;
    cp.itemsize = isz;
    for (ax = slice->ndim - 1; ax >= 0; ax--) {
        cp.shape[ax] = dg_range_len(slice->r[ax]);
        cp.dst_strides[ax] = str[ax] = ax == axis ? 0 : s;
        if (ax != axis)
            s *= cp.shape[ax];
    }
    cp.src_dev = c->device;
    dg_chunk_view(c, slice, (char **)&cp.src, cp.src_strides);
    cp.dst_dev = dev;
    cp.dst = (char *)(*out)->ptr;
    acc[0] = dg_read(c->buf);
    acc[1] = dg_write(*out);
    st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 2, dg_work_copy(&cp), err);
    if (st != DG_OK) {
        dg_buffer_decref(be, *out);
        *out = NULL;
    }
    return st;
}

/* A carry made from the one before it (scan_with_carries): a copy, then an
 * elementwise op in place. */
typedef struct carry_work {
    const dg_copy_desc *cp;
    const dg_ew_desc *ew;
} carry_work;

static dg_status run_carry(dg_backend_i *be, int dev, int stream, void *ctx, dg_error *err)
{
    const carry_work *w = (const carry_work *)ctx;
    DG_CHECK(dg_be_copy(be, dev, stream, w->cp, err));
    return dg_be_elementwise(be, dev, stream, w->ew, err);
}

/* Chunks tiling the axis: local scans, then each block's carry (the combined
 * totals of the blocks before it, passed from block to block) folded in by
 * one elementwise op: block = carry op block. */
static dg_status scan_with_carries(dg_array *a, int axis, int loop, dg_array *r, dg_error *err)
{
    dg_backend_i *be = a->be;
    const int isz = dg_dtype_size(a->dtype);
    dg_buffer **carry = NULL;
    int64_t (*cstr)[DG_MAXDIM] = NULL;
    int *order = NULL, *done = NULL;
    dg_status st = DG_OK;
    int i, n = a->nchunks, k, ax;

    for (i = 0; i < n; i++)
        DG_CHECK(scan_chunk(be, loop, a->dtype, axis, &a->chunks[i], &r->chunks[i], NULL, NULL,
                            NULL, err));
    carry = (dg_buffer **)calloc((size_t)n, sizeof(*carry));
    cstr = calloc((size_t)n, sizeof(*cstr));
    order = (int *)calloc((size_t)n, sizeof(int));
    done = (int *)calloc((size_t)n, sizeof(int));
    if (!carry || !cstr || !order || !done) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto out;
    }
    /* blocks in the order of their start along axis, so that a block's
     * predecessor has its carry when the block is reached */
    for (k = 0; k < n; k++) {
        int best = -1;
        for (i = 0; i < n; i++)
            if (!done[i] && (best < 0 || a->chunks[i].box.r[axis].start <
                                             a->chunks[best].box.r[axis].start))
                best = i;
        order[k] = best;
        done[best] = 1;
    }
    for (k = 0; k < n && st == DG_OK; k++) {
        int i2 = order[k], j = scan_prev(a, axis, i2), dev = r->chunks[i2].device;
        dg_box slice;
        dg_buffer *tot = NULL;
        int64_t tstr[DG_MAXDIM];
        dg_ew_desc d;
        if (j < 0 || dg_box_size(&r->chunks[i2].box) == 0)
            continue;
        /* carry(i2) = carry(j) op total(j), where total(j) is j's last slice */
        st = last_slice(be, isz, &r->chunks[j], axis, dev, &slice, &tot, tstr, err);
        if (st != DG_OK)
            break;
        if (carry[j]) {
            dg_copy_desc cp;
            memset(&cp, 0, sizeof(cp));
            cp.ndim = slice.ndim;
            cp.itemsize = isz;
            for (ax = 0; ax < slice.ndim; ax++) {
                cp.shape[ax] = dg_range_len(slice.r[ax]);
                cp.src_strides[ax] = cstr[j][ax];
                cp.dst_strides[ax] = tstr[ax];
            }
            st = dg_buffer_new(be, dev, tot->nbytes, &carry[i2], err);
            /* carry(i2) = carry(j) (copied over), then op= total(j) */
            if (st == DG_OK) {
                carry_work cw;
                dg_work w;
                dg_access acc[3];
                cp.src_dev = carry[j]->device;
                cp.src = (const char *)carry[j]->ptr;
                cp.dst_dev = dev;
                cp.dst = (char *)carry[i2]->ptr;
                memset(&d, 0, sizeof(d));
                d.loop = loop;
                d.nop = 3;
                d.ndim = slice.ndim;
                for (ax = 0; ax < slice.ndim; ax++) {
                    d.shape[ax] = cp.shape[ax];
                    d.strides[0][ax] = d.strides[1][ax] = d.strides[2][ax] = tstr[ax];
                }
                d.data[0] = d.data[2] = (char *)carry[i2]->ptr;
                d.data[1] = (char *)tot->ptr;
                cw.cp = &cp;
                cw.ew = &d;
                w.run = run_carry;
                w.ctx = &cw;
                acc[0] = dg_read(carry[j]);
                acc[1] = dg_read(tot);
                acc[2] = dg_write(carry[i2]);
                st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 3, w, err);
            }
            dg_buffer_decref(be, tot);
        } else {
            carry[i2] = tot;
        }
        memcpy(cstr[i2], tstr, sizeof(tstr));
    }
    /* every block with a carry: block = carry op block */
    for (i = 0; i < n && st == DG_OK; i++) {
        dg_chunk *c = &r->chunks[i];
        dg_ew_desc d;
        dg_access acc[2];
        char *ptr;
        int64_t str[DG_MAXDIM];
        if (!carry[i])
            continue;
        dg_chunk_view(c, &c->box, &ptr, str);
        memset(&d, 0, sizeof(d));
        d.loop = loop;
        d.nop = 3;
        d.ndim = c->box.ndim;
        for (ax = 0; ax < d.ndim; ax++) {
            d.shape[ax] = dg_range_len(c->box.r[ax]);
            d.strides[0][ax] = cstr[i][ax];
            d.strides[1][ax] = d.strides[2][ax] = str[ax];
        }
        d.data[0] = (char *)carry[i]->ptr;
        d.data[1] = d.data[2] = ptr;
        acc[0] = dg_write(c->buf);
        acc[1] = dg_read(carry[i]);
        st = dg_enqueue(be, c->device, DG_STREAM_COMPUTE, acc, 2, dg_work_elementwise(&d), err);
    }
out:
    for (i = 0; carry && i < n; i++)
        if (carry[i])
            dg_buffer_decref(be, carry[i]);
    free(carry);
    free(cstr);
    free(order);
    free(done);
    return st;
}

dg_status dg_array_scan(dg_array *a, int axis, int loop, dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL, *t = NULL, *tr = NULL;
    dg_status st = DG_OK;
    int i;

    DG_CHECK(dg_be_need(be, DG_SLOT_SCAN, err));
    if (a->mode != DG_MODE_REPLICA || axis < 0 || axis >= a->ndim || loop < 0 ||
        loop >= dg_nloops || dg_loops[loop].nin != 2 || dg_loops[loop].dtypes[0] != a->dtype ||
        dg_loops[loop].dtypes[1] != a->dtype || dg_loops[loop].dtypes[2] != a->dtype)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "bad scan of %s along axis %d",
                            dg_dtype_name(a->dtype), axis);
    DG_CHECK(dg_array_layout(a, &l, err));
    DG_CHECK_GOTO(dg_array_empty(be, a->dtype, a->ndim, a->shape, l, a->nchunks,
                                 DG_MODE_REPLICA, &r, err), st, fail);
    if (dg_array_axis_whole(a, axis)) {
        for (i = 0; i < a->nchunks && st == DG_OK; i++)
            if (dg_box_size(&a->chunks[i].box) > 0)
                st = scan_chunk(be, loop, a->dtype, axis, &a->chunks[i], &r->chunks[i], NULL,
                                NULL, NULL, err);
    } else if (scan_blocks(a, axis)) {
        st = scan_with_carries(a, axis, loop, r, err);
    } else {
        /* any other layout: through one where the axis is whole, and back */
        dg_plan_chunk *w = NULL;
        int nw = 0;
        DG_CHECK_GOTO(dg_layout_axes_whole(be->ndevices, a->ndim, a->shape, &axis, 1, &w, &nw,
                                           NULL, err),
                      st, fail);
        st = dg_array_reshard(a, w, nw, &t, err);
        free(w);
        if (st == DG_OK)
            st = dg_array_scan(t, axis, loop, &tr, err);
        if (st == DG_OK) {
            dg_array_decref(r);
            r = NULL;
            st = dg_array_reshard(tr, l, a->nchunks, &r, err);
        }
    }
fail:
    if (st == DG_OK) {
        *out = r;
        r = NULL;
    }
    if (t)
        dg_array_decref(t);
    if (tr)
        dg_array_decref(tr);
    if (r)
        dg_array_decref(r);
    free(l);
    return st;
}
