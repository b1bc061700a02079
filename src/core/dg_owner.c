/* CuPy's rule for an array in an op mode made from one value per element
 * (dg_array_keep_first): the first chunk holding an element keeps its value,
 * every later chunk holding it gets `value` there (the mode's identity), so
 * that combining the chunks gives the element back. */
#include <string.h>

#include "dg_array_impl.h"
#include "dg_surface.h"

/* Fills region I (inside chunk c's box) of chunk c with the 16-byte value. */
static dg_status fill_region(dg_array *a, dg_chunk *c, const dg_box *I,
                             const unsigned char value[16], dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_fill_desc f;
    dg_access acc;
    int ax;
    memset(&f, 0, sizeof f);
    f.kind = DG_FILL_CONST;
    f.dtype = a->dtype;
    f.ndim = a->ndim;
    memcpy(f.value, value, sizeof f.value);
    for (ax = 0; ax < a->ndim; ax++) {
        f.shape[ax] = dg_range_len(I->r[ax]);
        f.origin[ax] = I->r[ax].start;
        f.gstep[ax] = I->r[ax].step;
        f.gshape[ax] = a->shape[ax];
    }
    dg_chunk_view(c, I, &f.dst, f.strides);
    acc = dg_write(c->buf);
    return dg_enqueue(be, c->device, DG_STREAM_COMPUTE, &acc, 1, dg_work_fill(&f), err);
}

dg_status dg_array_keep_first(dg_array *a, const unsigned char value[16], dg_error *err)
{
    int i, j;
    DG_CHECK(dg_array_unshare(a, err));
    for (i = 1; i < a->nchunks; i++) {
        dg_chunk *c = &a->chunks[i];
        for (j = 0; j < i; j++) {
            dg_box I;
            if (!dg_box_intersect(&a->chunks[j].box, &c->box, &I) || dg_box_size(&I) == 0)
                continue;
            DG_CHECK(fill_region(a, c, &I, value, err));
        }
    }
    return DG_OK;
}
