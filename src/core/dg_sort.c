/* Sorting along an axis (dg_array_sort): where each chunk holds the whole
 * axis, every chunk sorts its rows on its device (the backend's sort, with
 * the axis passed last); otherwise the array goes through a layout that
 * holds the axis whole (dg_layout_axes_whole) and the results come back to
 * its layout. */
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_index.h"

/* The view of chunk c (its first element, shape and strides) with `axis`
 * moved last. */
static void view_axis_last(const dg_chunk *c, int axis, char **ptr, int64_t *shape,
                           int64_t *strides)
{
    int64_t st[DG_MAXDIM];
    int a, k = 0;
    const int nd = c->box.ndim;
    dg_chunk_view(c, &c->box, ptr, st);
    for (a = 0; a < nd; a++) {
        if (a == axis)
            continue;
        if (shape)
            shape[k] = dg_range_len(c->box.r[a]);
        strides[k++] = st[a];
    }
    if (shape)
        shape[k] = dg_range_len(c->box.r[axis]);
    strides[k] = st[axis];
}

/* Sorts the chunks of a (each holding the whole axis) into new arrays of
 * a's layout. */
static dg_status sort_chunks(dg_array *a, int axis, dg_array **vals, dg_array **idx,
                             dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_plan_chunk *l = NULL;
    dg_status st;
    int i;

    DG_CHECK(dg_array_layout(a, &l, err));
    if (vals)
        DG_CHECK_GOTO(dg_array_empty(be, a->dtype, a->ndim, a->shape, l, a->nchunks,
                                     DG_MODE_REPLICA, vals, err), st, done);
    if (idx)
        DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, a->ndim, a->shape, l, a->nchunks,
                                     DG_MODE_REPLICA, idx, err), st, done);
    for (i = 0; i < a->nchunks; i++) {
        const dg_chunk *c = &a->chunks[i];
        dg_chunk *vc = vals ? &(*vals)->chunks[i] : NULL, *ic = idx ? &(*idx)->chunks[i] : NULL;
        dg_sort_desc d;
        dg_access acc[3];
        if (dg_box_size(&c->box) == 0)
            continue;
        memset(&d, 0, sizeof d);
        d.dtype = a->dtype;
        d.ndim = a->ndim;
        view_axis_last(c, axis, (char **)&d.src, d.shape, d.src_strides);
        if (vc)
            view_axis_last(vc, axis, &d.dst, NULL, d.dst_strides);
        if (ic)
            view_axis_last(ic, axis, (char **)&d.idx, NULL, d.idx_strides);
        acc[0] = dg_read(c->buf);
        acc[1] = dg_write(vc ? vc->buf : NULL);
        acc[2] = dg_write(ic ? ic->buf : NULL);
        DG_CHECK_GOTO(dg_enqueue(be, c->device, DG_STREAM_COMPUTE, acc, 3, dg_work_sort(&d), err),
                      st, done);
    }
    st = DG_OK;
done:
    free(l);
    if (st != DG_OK) {
        if (vals && *vals) {
            dg_array_decref(*vals);
            *vals = NULL;
        }
        if (idx && *idx) {
            dg_array_decref(*idx);
            *idx = NULL;
        }
    }
    return st;
}

/* *x resharded to a's layout, in place of *x. */
static dg_status back_to(dg_array **x, const dg_plan_chunk *l, int n, dg_error *err)
{
    dg_array *r = NULL;
    if (!*x)
        return DG_OK;
    DG_CHECK(dg_array_reshard(*x, l, n, &r, err));
    dg_array_decref(*x);
    *x = r;
    return DG_OK;
}

dg_status dg_array_sort(dg_array *a, int axis, dg_array **out_vals, dg_array **out_idx,
                        dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_plan_chunk *w = NULL, *l = NULL;
    dg_array *t = NULL, *v = NULL, *x = NULL;
    dg_status st;
    int nw = 0;

    if (out_vals)
        *out_vals = NULL;
    if (out_idx)
        *out_idx = NULL;
    DG_CHECK(dg_be_need(be, DG_SLOT_SORT, err));
    if (a->mode != DG_MODE_REPLICA || axis < 0 || axis >= a->ndim)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a bad sort along axis %d", axis);
    if (dg_array_axis_whole(a, axis))
        return sort_chunks(a, axis, out_vals, out_idx, err);
    DG_CHECK(dg_layout_axes_whole(be->ndevices, a->ndim, a->shape, &axis, 1, &w, &nw, NULL,
                                  err));
    DG_CHECK_GOTO(dg_array_reshard(a, w, nw, &t, err), st, done);
    DG_CHECK_GOTO(sort_chunks(t, axis, out_vals ? &v : NULL, out_idx ? &x : NULL, err), st,
                  done);
    DG_CHECK_GOTO(dg_array_layout(a, &l, err), st, done);
    DG_CHECK_GOTO(back_to(&v, l, a->nchunks, err), st, done);
    DG_CHECK_GOTO(back_to(&x, l, a->nchunks, err), st, done);
    if (out_vals) {
        *out_vals = v;
        v = NULL;
    }
    if (out_idx) {
        *out_idx = x;
        x = NULL;
    }
done:
    free(w);
    free(l);
    if (t)
        dg_array_decref(t);
    if (v)
        dg_array_decref(v);
    if (x)
        dg_array_decref(x);
    return st;
}
