/* Boolean compaction (dg_array_select): a[mask] and the flat indices of
 * nonzero, where the data lives.
 *
 * When a's chunks hold disjoint runs of whole rows (the default layout's
 * do), the C order of the result is the chunks' orders one after another,
 * sorted by first row: each chunk compacts its elements into a buffer of its
 * own size on its device (the backend's select), the counts come to the host
 * once, and the result's chunks are those buffers, one after another along
 * the result's single axis (a buffer less than a quarter full is first
 * copied to one of the right size; fuller ones are kept as they are, which
 * saves a copy and a counting pass at the price of memory).  Other layouts go through the default
 * layout. */
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_index.h"

dg_status dg_counts_to_host(dg_backend_i *be, int n, const int *devs, dg_buffer *const *bufs,
                            const int64_t *const *dev_ptr, int64_t *host, dg_error *err)
{
    dg_status st = DG_OK;
    int i;
    for (i = 0; i < n && st == DG_OK; i++) {
        const dg_copy_desc cp = dg_copy_bytes(devs[i], dev_ptr[i], DG_HOST, &host[i], 8);
        const dg_access acc = dg_read(bufs[i]);
        st = dg_enqueue(be, devs[i], DG_STREAM_COMPUTE, &acc, 1, dg_work_copy(&cp), err);
    }
    /* wait even after a failure: queued copies write into `host` */
    for (i = 0; i < n; i++) {
        dg_error e2 = DG_ERROR_INIT;
        dg_status s2 = dg_be_sync(be, dg_be_pos(be, devs[i], DG_STREAM_COMPUTE),
                                st == DG_OK ? err : &e2);
        if (st == DG_OK)
            st = s2;
    }
    return st;
}

/* 1 if chunk c holds whole rows: a step-1 range of the first axis and every
 * index of the others. */
static int holds_whole_rows(const dg_array *a, const dg_chunk *c)
{
    int ax;
    if (dg_range_len(c->box.r[0]) > 1 && c->box.r[0].step != 1)
        return 0;
    for (ax = 1; ax < a->ndim; ax++)
        if (c->box.r[ax].start != 0 || dg_range_len(c->box.r[ax]) != a->shape[ax] ||
            (a->shape[ax] > 1 && c->box.r[ax].step != 1))
            return 0;
    return 1;
}

/* The non-empty chunks of a in order of their first row in order[], their
 * number in *n; 0 if they are not disjoint runs of whole rows. */
static int row_order(const dg_array *a, int *order, int *n)
{
    int i, k = 0;
    for (i = 0; i < a->nchunks; i++) {
        if (dg_box_size(&a->chunks[i].box) == 0)
            continue;
        if (!holds_whole_rows(a, &a->chunks[i]))
            return 0;
        order[k++] = i;
    }
    /* insertion sort by first row (few chunks), then no overlap */
    for (i = 1; i < k; i++) {
        int j = i, t = order[i];
        while (j > 0 && a->chunks[order[j - 1]].box.r[0].start > a->chunks[t].box.r[0].start) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = t;
    }
    for (i = 1; i < k; i++)
        if (a->chunks[order[i]].box.r[0].start < a->chunks[order[i - 1]].box.r[0].stop)
            return 0;
    *n = k;
    return 1;
}

/* x resharded to `like`'s layout (a new reference to x itself if it has
 * it). */
static dg_status with_layout_of(dg_array *x, const dg_array *like, dg_array **out,
                                dg_error *err)
{
    dg_plan_chunk *l = NULL;
    dg_status st;
    if (dg_array_same_layout(x, like)) {
        dg_array_incref(x);
        *out = x;
        return DG_OK;
    }
    DG_CHECK(dg_array_layout(like, &l, err));
    st = dg_array_reshard(x, l, like->nchunks, out, err);
    free(l);
    return st;
}

/* Builds the result of shape (total,) from the compacted buffers (one per
 * chunk of a in `order`, counts cnt): empty ones dropped, large ones for
 * their count copied to a buffer of the right size.  Takes over bufs. */
static dg_status select_result(dg_array *a, const int *order, int n, dg_buffer **bufs,
                               const int64_t *cnt, int isz, int dtype, dg_array **out,
                               dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_array *r = NULL;
    int64_t total = 0, off = 0;
    dg_status st = DG_OK;
    int i;
    for (i = 0; i < n; i++)
        total += cnt[i];
    DG_CHECK(dg_array_alloc_shell(be, dtype, 1, &total, n > 0 ? n : 1, DG_MODE_REPLICA, &r,
                                  err));
    for (i = 0; i < n && st == DG_OK; i++) {
        dg_chunk *c = &r->chunks[r->nchunks];
        const int dev = a->chunks[order[i]].device;
        if (cnt[i] == 0 && !(total == 0 && i == 0))
            continue;
        memset(c, 0, sizeof(*c));
        c->device = dev;
        c->box.ndim = 1;
        c->box.r[0] = dg_range_make(off, off + cnt[i], 1);
        c->strides[0] = isz;
        if ((size_t)cnt[i] * (size_t)isz * 4 < bufs[i]->nbytes) {
            /* less than a quarter used: keep only that */
            dg_move mv;
            dg_move_item it;
            st = dg_buffer_new(be, dev, (size_t)cnt[i] * (size_t)isz, &c->buf, err);
            if (st != DG_OK)
                break;
            memset(&it, 0, sizeof it);
            it.itemsize = isz;
            it.ndim = 1;
            it.shape[0] = cnt[i];
            it.src_dev = it.dst_dev = dev;
            it.src_buf = bufs[i];
            it.src = (const char *)bufs[i]->ptr;
            it.src_strides[0] = it.dst_strides[0] = isz;
            it.dst_buf = c->buf;
            it.dst = (char *)c->buf->ptr;
            dg_move_init(&mv, be);
            st = dg_move_add(&mv, &it, err);
            if (st == DG_OK)
                st = dg_move_run(&mv, err);
            dg_move_free(&mv);
        } else {
            c->buf = bufs[i];
            bufs[i] = NULL;
        }
        r->nchunks++;
        off += cnt[i];
    }
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

dg_status dg_array_select(dg_array *a, dg_array *mask, size_t min_split_bytes,
                          dg_array **out, dg_error *err)
{
    dg_backend_i *be = mask->be;
    dg_array *x = NULL, *m = NULL;
    dg_buffer **bufs = NULL, **cbufs = NULL;
    const int64_t **cptr = NULL;
    int64_t *cnt = NULL;
    int *order = NULL, *devs = NULL, n = 0, i, ax;
    const int want_idx = a == NULL;
    const int isz = want_idx ? 8 : dg_dtype_size(a->dtype);
    int64_t w[DG_MAXDIM];
    dg_status st = DG_OK;

    DG_CHECK(dg_be_need(be, DG_SLOT_SELECT, err));
    if (mask->ndim < 1 || mask->dtype != DG_BOOL || mask->mode != DG_MODE_REPLICA ||
        (a && (a->ndim != mask->ndim || a->mode != DG_MODE_REPLICA ||
               memcmp(a->shape, mask->shape, (size_t)a->ndim * sizeof(int64_t)) != 0)))
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a bad compaction");
    /* the layout: a's (or the mask's) when it is disjoint runs of whole rows */
    x = a ? a : mask;
    dg_array_incref(x);
    order = (int *)malloc((size_t)(x->nchunks + 1) * sizeof(int));
    if (!order) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    if (!row_order(x, order, &n)) {
        dg_plan_chunk *l = NULL;
        int nl = 0;
        dg_array *t = NULL;
        DG_CHECK_GOTO(dg_layout_default(be->ndevices, x->ndim, x->shape, (size_t)isz,
                                        min_split_bytes, &l, &nl, err), st, done);
        st = dg_array_reshard(x, l, nl, &t, err);
        free(l);
        if (st != DG_OK)
            goto done;
        dg_array_decref(x);
        x = t;
        free(order);
        order = (int *)malloc((size_t)(x->nchunks + 1) * sizeof(int));
        if (!order || !row_order(x, order, &n)) {
            st = order ? dg_error_set(err, DG_ERR_INTERNAL, -1, "the default layout is not "
                                      "whole rows")
                       : dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            goto done;
        }
    }
    DG_CHECK_GOTO(with_layout_of(mask, x, &m, err), st, done);
    bufs = (dg_buffer **)calloc((size_t)n + 1, sizeof(*bufs));
    cbufs = (dg_buffer **)calloc((size_t)n + 1, sizeof(*cbufs));
    cptr = (const int64_t **)calloc((size_t)n + 1, sizeof(*cptr));
    cnt = (int64_t *)calloc((size_t)n + 1, sizeof(*cnt));
    devs = (int *)calloc((size_t)n + 1, sizeof(*devs));
    if (!bufs || !cbufs || !cptr || !cnt || !devs) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    w[x->ndim - 1] = 1;
    for (ax = x->ndim - 2; ax >= 0; ax--)
        w[ax] = w[ax + 1] * x->shape[ax + 1];
    /* compact each chunk where it lives */
    for (i = 0; i < n && st == DG_OK; i++) {
        const dg_chunk *c = &x->chunks[order[i]], *mc = &m->chunks[order[i]];
        const int dev = c->device;
        const int64_t size = dg_box_size(&c->box);
        dg_select_desc d;
        dg_access acc[4];
        devs[i] = dev;
        DG_CHECK_GOTO(dg_buffer_new(be, dev, (size_t)size * (size_t)isz, &bufs[i], err), st,
                      done);
        DG_CHECK_GOTO(dg_buffer_new(be, dev, 8, &cbufs[i], err), st, done);
        cptr[i] = (const int64_t *)cbufs[i]->ptr;
        memset(&d, 0, sizeof d);
        d.ndim = x->ndim;
        d.itemsize = isz;
        d.base = 0;
        for (ax = 0; ax < x->ndim; ax++) {
            d.shape[ax] = dg_range_len(c->box.r[ax]);
            d.base += c->box.r[ax].start * w[ax];
            d.gstride[ax] = c->box.r[ax].step * w[ax];
        }
        if (!want_idx)
            dg_chunk_view(c, &c->box, (char **)&d.src, d.src_strides);
        dg_chunk_view(mc, &mc->box, (char **)&d.mask, d.mask_strides);
        d.dst = (char *)bufs[i]->ptr;
        d.count = (int64_t *)cbufs[i]->ptr;
        acc[0] = dg_read(want_idx ? NULL : c->buf);
        acc[1] = dg_read(mc->buf);
        acc[2] = dg_write(bufs[i]);
        acc[3] = dg_write(cbufs[i]);
        DG_CHECK_GOTO(dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 4, dg_work_select(&d), err),
                      st, done);
    }
    DG_CHECK_GOTO(dg_counts_to_host(be, n, devs, cbufs, cptr, cnt, err), st, done);
    if (n == 0) { /* no element at all: one empty chunk */
        order[0] = 0;
        devs[0] = x->chunks[0].device;
        DG_CHECK_GOTO(dg_buffer_new(be, devs[0], 0, &bufs[0], err), st, done);
        n = 1;
    }
    st = select_result(x, order, n, bufs, cnt, isz, want_idx ? DG_INT64 : x->dtype, out, err);
done:
    for (i = 0; i < n; i++) {
        if (bufs && bufs[i])
            dg_buffer_decref(be, bufs[i]);
        if (cbufs && cbufs[i])
            dg_buffer_decref(be, cbufs[i]);
    }
    free(bufs);
    free(cbufs);
    free(cptr);
    free(cnt);
    free(devs);
    free(order);
    if (x)
        dg_array_decref(x);
    if (m)
        dg_array_decref(m);
    return st;
}
