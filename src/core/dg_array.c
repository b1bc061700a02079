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

dg_status dg_array_empty(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                         const dg_plan_chunk *layout, int nchunks, int mode,
                         dg_array **out, dg_error *err)
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
    DG_CHECK(dg_layout_validate(be->ndevices, ndim, shape, layout, nchunks, err));
    DG_CHECK(dg_array_alloc_shell(be, dtype, ndim, shape, nchunks, mode, &a, err));
    for (i = 0; i < nchunks; i++) {
        dg_chunk *c = &a->chunks[i];
        int64_t n = dg_box_size(&layout[i].box);
        int64_t stride = isz;
        c->device = layout[i].device;
        c->box = layout[i].box;
        dg_box_canon(&c->box);
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

/* ---- layouts ----------------------------------------------------------------- */

dg_status dg_layout_default(int ndevices, int ndim, const int64_t *shape,
                            size_t itemsize, size_t min_split_bytes,
                            dg_plan_chunk **out, int *n, dg_error *err)
{
    int64_t size = 1;
    int ax, k, i;
    dg_plan_chunk *l;

    for (ax = 0; ax < ndim; ax++)
        size *= shape[ax];
    k = 1;
    if (ndim > 0 && size > 0 && (size_t)size * itemsize >= min_split_bytes)
        k = (int)(shape[0] < ndevices ? shape[0] : ndevices);
    if (k < 1)
        k = 1;
    l = (dg_plan_chunk *)calloc((size_t)k, sizeof(dg_plan_chunk));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < k; i++) {
        l[i].device = i;
        dg_box_full(&l[i].box, ndim, shape);
        if (ndim > 0 && k > 1)
            l[i].box.r[0] = dg_range_make(shape[0] * i / k, shape[0] * (i + 1) / k, 1);
    }
    *out = l;
    *n = k;
    return DG_OK;
}

dg_status dg_layout_axis_whole(int ndevices, int ndim, const int64_t *shape, int axis,
                               dg_plan_chunk **out, int *n, dg_error *err)
{
    dg_plan_chunk *w;
    int other = -1, ax, nd = ndevices, i;
    for (ax = 0; ax < ndim; ax++)
        if (ax != axis && (other < 0 || shape[ax] > shape[other]))
            other = ax;
    if (other < 0 || shape[other] < 2)
        nd = 1;
    else if (shape[other] < nd)
        nd = (int)shape[other];
    w = (dg_plan_chunk *)malloc((size_t)nd * sizeof(*w));
    if (!w)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < nd; i++) {
        w[i].device = i;
        dg_box_full(&w[i].box, ndim, shape);
        if (nd > 1)
            w[i].box.r[other] = dg_range_make(shape[other] * i / nd, shape[other] * (i + 1) / nd,
                                              1);
    }
    *out = w;
    *n = nd;
    return DG_OK;
}

dg_status dg_layout_validate(int ndevices, int ndim, const int64_t *shape,
                             const dg_plan_chunk *layout, int n, dg_error *err)
{
    int i, ax;
    int64_t size = 1;
    dg_box whole;

    if (ndim < 0 || ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "dgarray supports at most %d dimensions, not %d", DG_MAXDIM, ndim);
    for (ax = 0; ax < ndim; ax++) {
        if (shape[ax] < 0)
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "negative dimensions are not allowed");
        size *= shape[ax];
    }
    if (n < 1)
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "an index map must name at least one device");
    for (i = 0; i < n; i++) {
        const dg_box *b = &layout[i].box;
        if (layout[i].device < 0 || layout[i].device >= ndevices)
            return dg_error_set(err, DG_ERR_VALUE, layout[i].device,
                                "device %d does not exist: this backend has devices 0 to %d",
                                layout[i].device, ndevices - 1);
        if (b->ndim != ndim)
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "chunk box of %d axes for a %d-d array",
                                b->ndim, ndim);
        for (ax = 0; ax < ndim; ax++) {
            const dg_range *r = &b->r[ax];
            if (r->step < 1 || r->start < 0 || r->stop > shape[ax] ||
                (r->stop > r->start && r->start >= shape[ax]))
                return dg_error_set(err, DG_ERR_INDEX, -1,
                                    "chunk %d reaches outside axis %d of size %lld", i, ax,
                                    (long long)shape[ax]);
        }
    }
    if (size == 0)
        return DG_OK;
    dg_box_full(&whole, ndim, shape);
    return dg_plan_check_cover(layout, n, &whole, err);
}

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
