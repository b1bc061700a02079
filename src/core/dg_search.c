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
    dg_pos p;

    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.right = right;
    d.ndim = c->box.ndim;
    block_of(c, &vp, d.shape, d.val_strides);
    d.val = vp;
    dg_chunk_view(oc, &oc->box, &op, d.dst_strides);
    d.dst = (int64_t *)op;
    DG_CHECK(dg_buffer_use_read(be, c->buf, dev, DG_STREAM_COMPUTE, err));
    DG_CHECK(dg_buffer_use_write(be, oc->buf, dev, DG_STREAM_COMPUTE, err));
    for (j = 0; j <= seq->nchunks; j++) {
        const dg_chunk *s = j < seq->nchunks ? &seq->chunks[j] : NULL;
        char *sp = NULL;
        if (s && (s->device != dev || dg_box_size(&s->box) == 0))
            continue;
        if (!s && !first)
            break;
        d.n = s ? dg_range_len(s->box.r[0]) : 0;
        if (s) {
            dg_chunk_view(s, &s->box, &sp, sst);
            d.seq_stride = sst[0];
            DG_CHECK(dg_buffer_use_read(be, s->buf, dev, DG_STREAM_COMPUTE, err));
        }
        d.seq = sp;
        d.accumulate = !first;
        DG_CHECK(be->search(be, dev, DG_STREAM_COMPUTE, &d, err));
        if (s)
            dg_buffer_mark_read(s->buf, be->pos(be, dev, DG_STREAM_COMPUTE));
        first = 0;
    }
    p = be->pos(be, dev, DG_STREAM_COMPUTE);
    dg_buffer_mark_read(c->buf, p);
    dg_buffer_mark_write(oc->buf, p);
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
    if (!be->search)
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "the %s backend cannot search", be->name);
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
