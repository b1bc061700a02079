/* Memory shared with other libraries (DLPack, the CUDA array interface):
 * an array's chunks lent out in place, a copy of one chunk, and a copy of
 * another library's array, on a device of ours, into a new array there. */
#include <string.h>

#include "dg_array_impl.h"
#include "dg_surface.h"

/* A new REPLICA array of one chunk on device dev holding a copy of the
 * elements at src (byte strides over shape), read by the copy as an access
 * of src_buf (borrowed; NULL: memory dgarray does not own, whose writes are
 * complete, waited for before returning so that its owner may release it).
 * New reference in *out. */
static dg_status copy_in(dg_backend_i *be, int dev, int dtype, int ndim, const int64_t *shape,
                         const char *src, const int64_t *byte_strides, dg_buffer *src_buf,
                         dg_array **out, dg_error *err)
{
    dg_plan_chunk one;
    dg_copy_desc c;
    dg_access acc[2];
    dg_array *a = NULL;
    dg_chunk *ch;
    dg_status st;
    int ax;

    *out = NULL;
    if (dev < 0 || dev >= be->ndevices)
        return dg_error_set(err, DG_ERR_VALUE, -1, "device %d does not exist: the %s backend "
                            "has devices 0 to %d", dev, be->name, be->ndevices - 1);
    one.device = dev;
    dg_box_full(&one.box, ndim, shape);
    DG_CHECK(dg_array_empty(be, dtype, ndim, shape, &one, 1, DG_MODE_REPLICA, &a, err));
    ch = &a->chunks[0];
    if (dg_box_size(&ch->box) > 0) {
        memset(&c, 0, sizeof c);
        c.ndim = ndim;
        c.itemsize = dg_dtype_size(dtype);
        c.src_dev = c.dst_dev = dev;
        c.src = src;
        dg_chunk_view(ch, &ch->box, &c.dst, c.dst_strides);
        for (ax = 0; ax < ndim; ax++) {
            c.shape[ax] = shape[ax];
            c.src_strides[ax] = byte_strides[ax];
        }
        acc[0] = dg_write(ch->buf);
        acc[1] = dg_read(src_buf);
        DG_CHECK_GOTO(dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, src_buf ? 2 : 1,
                                 dg_work_copy(&c), err),
                      st, fail);
        if (!src_buf) /* the producer may release its memory as soon as this returns */
            DG_CHECK_GOTO(dg_array_sync(a, err), st, fail);
    }
    *out = a;
    return DG_OK;
fail:
    dg_array_decref(a);
    return st;
}

dg_status dg_array_from_external(dg_backend_i *be, int dev, int dtype, int ndim,
                                 const int64_t *shape, const char *src,
                                 const int64_t *byte_strides, dg_array **out, dg_error *err)
{
    return copy_in(be, dev, dtype, ndim, shape, src, byte_strides, NULL, out, err);
}

dg_status dg_array_chunk_copy(dg_array *a, int i, dg_array **out, dg_error *err)
{
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    dg_chunk *c;
    char *ptr;
    int ax;
    *out = NULL;
    if (i < 0 || i >= a->nchunks)
        return dg_error_set(err, DG_ERR_INDEX, -1, "chunk %d of an array of %d chunks", i,
                            a->nchunks);
    c = &a->chunks[i];
    dg_chunk_view(c, &c->box, &ptr, strides);
    for (ax = 0; ax < a->ndim; ax++)
        shape[ax] = dg_range_len(c->box.r[ax]);
    return copy_in(a->be, c->device, a->dtype, a->ndim, shape, ptr, strides, c->buf, out, err);
}

dg_status dg_array_lend(dg_array *a, int readonly, char **ptr, int64_t *byte_strides,
                        dg_error *err)
{
    if (a->mode != DG_MODE_REPLICA || a->nchunks < 1 ||
        dg_box_size(&a->chunks[0].box) != dg_shape_size(a->ndim, a->shape))
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "only a REPLICA array whose first chunk holds all of it can be "
                            "lent");
    return dg_array_lend_chunk(a, 0, readonly, ptr, byte_strides, err);
}

dg_status dg_array_lend_chunk(dg_array *a, int i, int readonly, char **ptr,
                              int64_t *byte_strides, dg_error *err)
{
    dg_chunk *c;
    if (i < 0 || i >= a->nchunks)
        return dg_error_set(err, DG_ERR_INDEX, -1, "chunk %d of an array of %d chunks", i,
                            a->nchunks);
    if (!readonly)
        DG_CHECK(dg_array_unshare(a, err));
    DG_CHECK(dg_array_sync(a, err));
    c = &a->chunks[i];
    c->buf->lent = 1;
    dg_chunk_view(c, &c->box, ptr, byte_strides);
    return DG_OK;
}
