/* Distributed arrays: their life, chunk views and layouts.
 * (Buffers and the ordering of device work on them: dg_enqueue.c; copies
 * between arrays and host memory: dg_hostcopy.c; elementwise work:
 * dg_exec.c; reshard and modes: dg_reshard.c.) */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"

/* ---- copy on write ------------------------------------------------------------ */

dg_status dg_array_unshare(dg_array *a, dg_error *err)
{
    int i;
    if (a->readonly)
        return dg_error_set(err, DG_ERR_VALUE, -1, "assignment destination is read-only");
    for (i = 0; i < a->nchunks; i++)
        DG_CHECK(dg_buffer_unshare(a->be, a->chunks[i].buf, err));
    return DG_OK;
}

/* ---- chunk views ------------------------------------------------------------- */

void dg_chunk_view(const dg_chunk *c, const dg_box *region, char **ptr,
                   int64_t *strides)
{
    int a;
    int64_t off = c->offset;
    for (a = 0; a < region->ndim; a++) {
        int64_t n = dg_range_len(region->r[a]);
        if (n > 0)
            off += dg_box_pos(&c->box, a, region->r[a].start) * c->strides[a];
        strides[a] = n > 1 ? c->strides[a] * (region->r[a].step / c->box.r[a].step) : 0;
    }
    *ptr = c->buf->ptr ? (char *)c->buf->ptr + off : NULL;
}

/* ---- arrays -------------------------------------------------------------------- */

void dg_array_decref(dg_array *a)
{
    int i;
    if (!a || --a->refcnt > 0)
        return;
    for (i = 0; i < a->nchunks; i++)
        dg_buffer_decref(a->be, a->chunks[i].buf);
    free(a->chunks);
    free(a->logical);
    free(a);
}

dg_status dg_array_alloc_shell(dg_backend_i *be, int dtype, int ndim,
                               const int64_t *shape, int nchunks, int mode,
                               dg_array **out, dg_error *err)
{
    dg_array *a = (dg_array *)calloc(1, sizeof(dg_array));
    if (!a)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    a->chunks = (dg_chunk *)calloc(nchunks > 0 ? (size_t)nchunks : 1, sizeof(dg_chunk));
    if (!a->chunks) {
        free(a);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    a->refcnt = 1;
    a->be = be;
    a->dtype = dtype;
    a->ndim = ndim;
    if (ndim)
        memcpy(a->shape, shape, (size_t)ndim * sizeof(int64_t));
    a->mode = mode;
    a->nchunks = 0; /* counts chunks filled in; set by the caller */
    *out = a;
    return DG_OK;
}

/* dg_array_empty and dg_array_empty_core: the layout validated if `check`;
 * like (NULL: layout) an array whose chunks give the layout instead. */
static dg_status empty(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                       const dg_plan_chunk *layout, const dg_array *like, int nchunks,
                       int mode, int check, dg_array **out, dg_error *err)
{
    dg_array *a;
    dg_status st;
    int i, ax;
    int isz = dg_dtype_size(dtype);

    if (isz == 0)
        return dg_error_set(err, DG_ERR_TYPE, -1, "unsupported dtype number %d", dtype);
    if (mode < 0 || mode >= DG_NMODES)
        return dg_error_set(err, DG_ERR_VALUE, -1, "unknown mode %d", mode);
    {
        /* NumPy's limit: the bytes of the whole array fit in an int64 */
        int64_t most = INT64_MAX / isz, size = 1;
        int zero = 0;
        for (ax = 0; ax < ndim; ax++)
            zero |= shape[ax] == 0;
        for (ax = 0; ax < ndim && !zero; ax++) {
            if (shape[ax] > most / size)
                return dg_error_set(err, DG_ERR_VALUE, -1, "array is too big; `arr.size * "
                                    "arr.dtype.itemsize` is larger than the maximum possible "
                                    "size.");
            size *= shape[ax];
        }
    }
    if (check)
        DG_CHECK(dg_layout_validate(be->ndevices, ndim, shape, layout, nchunks, err));
    DG_CHECK(dg_array_alloc_shell(be, dtype, ndim, shape, nchunks, mode, &a, err));
    for (i = 0; i < nchunks; i++) {
        dg_chunk *c = &a->chunks[i];
        int64_t n, stride = isz;
        c->device = like ? like->chunks[i].device : layout[i].device;
        c->box = like ? like->chunks[i].box : layout[i].box;
        dg_box_canon(&c->box);
        n = dg_box_size(&c->box);
        for (ax = ndim - 1; ax >= 0; ax--) {
            c->strides[ax] = stride;
            stride *= dg_range_len(c->box.r[ax]);
        }
        st = dg_buffer_new(be, c->device, (size_t)n * (size_t)isz, &c->buf, err);
        if (st != DG_OK) {
            dg_array_decref(a);
            return st;
        }
        a->nchunks = i + 1;
    }
    *out = a;
    return DG_OK;
}

dg_status dg_array_empty(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                         const dg_plan_chunk *layout, int nchunks, int mode,
                         dg_array **out, dg_error *err)
{
    return empty(be, dtype, ndim, shape, layout, NULL, nchunks, mode, 1, out, err);
}

dg_status dg_array_empty_core(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                              const dg_plan_chunk *layout, int nchunks, int mode,
                              dg_array **out, dg_error *err)
{
    return empty(be, dtype, ndim, shape, layout, NULL, nchunks, mode, 0, out, err);
}

dg_status dg_array_empty_like_core(const dg_array *ref, int dtype, int mode, dg_array **out,
                                   dg_error *err)
{
    dg_plan_chunk *l = NULL;
    dg_status st;
    int n = 0;
    if (!ref->logical)
        return empty(ref->be, dtype, ref->ndim, ref->shape, NULL, ref, ref->nchunks, mode, 0,
                     out, err);
    DG_CHECK(dg_array_logical_layout(ref, &l, &n, err));
    st = empty(ref->be, dtype, ref->ndim, ref->shape, l, NULL, n, mode, 0, out, err);
    free(l);
    return st;
}

/* ---- layouts (dg_layout.c holds the default one, the axis-whole one and the checks) */

dg_status dg_array_layout(const dg_array *a, dg_plan_chunk **out, dg_error *err)
{
    int i;
    dg_plan_chunk *l = (dg_plan_chunk *)malloc((size_t)(a->nchunks ? a->nchunks : 1) *
                                               sizeof(dg_plan_chunk));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < a->nchunks; i++) {
        l[i].device = a->chunks[i].device;
        l[i].box = a->chunks[i].box;
    }
    *out = l;
    return DG_OK;
}

dg_status dg_array_logical_layout(const dg_array *a, dg_plan_chunk **out, int *n,
                                  dg_error *err)
{
    dg_plan_chunk *l;
    if (!a->logical) {
        *n = a->nchunks;
        return dg_array_layout(a, out, err);
    }
    l = (dg_plan_chunk *)malloc((size_t)a->nlogical * sizeof(dg_plan_chunk));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    memcpy(l, a->logical, (size_t)a->nlogical * sizeof(dg_plan_chunk));
    *out = l;
    *n = a->nlogical;
    return DG_OK;
}

dg_status dg_array_copy_logical(dg_array *dst, const dg_array *src, dg_error *err)
{
    free(dst->logical);
    dst->logical = NULL;
    dst->nlogical = 0;
    if (!src->logical)
        return DG_OK;
    return dg_array_logical_layout(src, &dst->logical, &dst->nlogical, err);
}

int dg_array_axis_whole(const dg_array *a, int ax)
{
    int i;
    for (i = 0; i < a->nchunks; i++) {
        const dg_range r = a->chunks[i].box.r[ax];
        if (dg_box_size(&a->chunks[i].box) > 0 &&
            !(r.start == 0 && dg_range_len(r) == a->shape[ax] &&
              (r.step == 1 || a->shape[ax] == 1)))
            return 0;
    }
    return 1;
}

int dg_array_same_layout(const dg_array *a, const dg_array *b)
{
    int i, ax;
    if (a->ndim != b->ndim || a->nchunks != b->nchunks)
        return 0;
    for (ax = 0; ax < a->ndim; ax++)
        if (a->shape[ax] != b->shape[ax])
            return 0;
    for (i = 0; i < a->nchunks; i++)
        if (a->chunks[i].device != b->chunks[i].device ||
            !dg_box_equal(&a->chunks[i].box, &b->chunks[i].box))
            return 0;
    return 1;
}
