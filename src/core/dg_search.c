/* Binary searches of values in a sorted sequence (dg_array_search): each
 * chunk of values is searched, on its device, in the chunks of the sequence
 * there, and the positions found are added up in the result's chunk. */
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_surface.h"

/* The view of chunk c as an N-d block: first element, shape and strides. */
static void block_of(const dg_chunk *c, char **ptr, int64_t *shape, int64_t *strides)
{
    int ax;
    dg_chunk_view(c, &c->box, ptr, strides);
    for (ax = 0; ax < c->box.ndim; ax++)
        shape[ax] = dg_range_len(c->box.r[ax]);
}

/* Searches chunk c of the values into chunk oc of the result: every
 * non-empty chunk of seq on c's device, the first writing, the others
 * adding (none: one search of nothing writes zeros). */
static dg_status search_chunk(dg_array *seq, const dg_chunk *c, dg_chunk *oc, int right,
                              int dtype, dg_error *err)
{
    dg_backend_i *be = seq->be;
    const int dev = c->device;
    dg_search_desc d;
    int64_t sst[DG_MAXDIM];
    char *vp, *op;
    int j, first = 1;

    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.right = right;
    d.ndim = c->box.ndim;
    block_of(c, &vp, d.shape, d.val_strides);
    d.val = vp;
    dg_chunk_view(oc, &oc->box, &op, d.dst_strides);
    d.dst = (int64_t *)op;
    for (j = 0; j <= seq->nchunks; j++) {
        const dg_chunk *s = j < seq->nchunks ? &seq->chunks[j] : NULL;
        char *sp = NULL;
        dg_access acc[3];
        if (s && (s->device != dev || dg_box_size(&s->box) == 0))
            continue;
        if (!s && !first)
            break;
        d.n = s ? dg_range_len(s->box.r[0]) : 0;
        if (s) {
            dg_chunk_view(s, &s->box, &sp, sst);
            d.seq_stride = sst[0];
        }
        d.seq = sp;
        d.accumulate = !first;
        acc[0] = dg_read(c->buf);
        acc[1] = dg_read(s ? s->buf : NULL);
        acc[2] = dg_write(oc->buf);
        DG_CHECK(dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 3, dg_work_search(&d), err));
        first = 0;
    }
    return DG_OK;
}

dg_status dg_array_search(dg_array *seq, dg_array *v, int right, int mode, dg_array **out,
                          dg_error *err)
{
    dg_backend_i *be = v->be;
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL;
    dg_status st;
    int i;

    *out = NULL;
    DG_CHECK(dg_be_need(be, DG_SLOT_SEARCH, err));
    if (seq->ndim != 1 || seq->dtype != v->dtype || seq->mode != DG_MODE_REPLICA ||
        v->mode != DG_MODE_REPLICA || (mode != DG_MODE_REPLICA && mode != DG_MODE_SUM))
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a malformed search");
    DG_CHECK(dg_array_layout(v, &l, err));
    DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, v->ndim, v->shape, l, v->nchunks, mode, &r,
                                 err), st, done);
    for (i = 0; i < v->nchunks; i++) {
        if (dg_box_size(&v->chunks[i].box) == 0)
            continue;
        DG_CHECK_GOTO(search_chunk(seq, &v->chunks[i], &r->chunks[i], right, v->dtype, err),
                      st, done);
    }
    *out = r;
    r = NULL;
done:
    free(l);
    if (r)
        dg_array_decref(r);
    return st;
}
