/* A distributed array as 1-d in C order (dg_array_flatten): views of its
 * chunks where they hold whole rows, else through the default layout. */
#include <stdlib.h>

#include "dg_array.h"
#include "dg_array_impl.h"

/* 1 if chunk c holds whole rows: every axis but the first complete, the
 * first of step 1, the elements dense in C order. */
static int whole_rows(const dg_array *a, const dg_chunk *c)
{
    int64_t s = dg_dtype_size(a->dtype);
    int ax;
    for (ax = a->ndim - 1; ax >= 0; ax--) {
        int64_t n = dg_range_len(c->box.r[ax]);
        if (ax > 0 && (c->box.r[ax].start != 0 || n != a->shape[ax]))
            return 0;
        if (n > 1 && (c->box.r[ax].step != 1 || c->strides[ax] != s))
            return 0;
        s *= n;
    }
    return 1;
}

dg_status dg_array_flatten(dg_array *a, size_t min_split_bytes, dg_array **out, dg_error *err)
{
    const int nd = a->ndim;
    int64_t total = 1, row = 1;
    dg_array *src = a, *r = NULL;
    dg_status st = DG_OK;
    int i, ax, ok = 1;

    for (ax = 0; ax < nd; ax++) {
        total *= a->shape[ax];
        if (ax > 0)
            row *= a->shape[ax];
    }
    for (i = 0; i < a->nchunks && ok; i++)
        ok = dg_box_size(&a->chunks[i].box) == 0 || whole_rows(a, &a->chunks[i]);
    if (!ok || nd == 0) { /* through the default layout, which holds whole rows */
        dg_plan_chunk *l = NULL;
        int n = 0;
        DG_CHECK(dg_layout_default(a->be->ndevices, nd, a->shape,
                                   (size_t)dg_dtype_size(a->dtype), min_split_bytes, &l, &n,
                                   err));
        st = dg_array_reshard_ex(a, l, n, DG_RESHARD_DENSE, &src, err);
        free(l);
        if (st != DG_OK)
            return st;
    }
    DG_CHECK_GOTO(dg_array_alloc_shell(a->be, a->dtype, 1, &total, src->nchunks, src->mode, &r,
                                       err), st, done);
    r->has_mode_fpe = src->has_mode_fpe;
    r->mode_fpe = src->mode_fpe;
    for (i = 0; i < src->nchunks; i++) {
        const dg_chunk *c = &src->chunks[i];
        dg_chunk *d = &r->chunks[r->nchunks];
        int64_t first = nd ? c->box.r[0].start * row : 0;
        int64_t n = dg_box_size(&c->box);
        d->device = c->device;
        d->box.ndim = 1;
        d->box.r[0] = dg_range_make(first, first + n, 1);
        d->buf = c->buf;
        d->buf->refcnt++;
        d->offset = c->offset;
        d->strides[0] = dg_dtype_size(a->dtype);
        r->nchunks++;
    }
    *out = r;
done:
    if (src != a)
        dg_array_decref(src);
    return st;
}
