/* Host copies of one chunk at a time (dg_chunkio.h). */
#include <string.h>

#include "dg_array_impl.h"
#include "dg_chunkio.h"

/* The copy between `box` of chunk c and the host array at host (byte
 * strides hstrides over box's axes); to_host says which way. */
static void chunk_copy_desc(const dg_array *a, const dg_chunk *c, const dg_box *box,
                            char *host, const int64_t *hstrides, int to_host,
                            dg_copy_desc *cp)
{
    int ax;
    char *dptr;
    int64_t dstr[DG_MAXDIM];
    memset(cp, 0, sizeof(*cp));
    cp->ndim = a->ndim;
    cp->itemsize = dg_dtype_size(a->dtype);
    for (ax = 0; ax < a->ndim; ax++)
        cp->shape[ax] = dg_range_len(box->r[ax]);
    dg_chunk_view(c, box, &dptr, dstr);
    if (to_host) {
        cp->src_dev = c->device;
        cp->src = dptr;
        memcpy(cp->src_strides, dstr, sizeof(dstr));
        cp->dst_dev = DG_HOST;
        cp->dst = host;
        memcpy(cp->dst_strides, hstrides, (size_t)a->ndim * sizeof(int64_t));
    } else {
        cp->src_dev = DG_HOST;
        cp->src = host;
        memcpy(cp->src_strides, hstrides, (size_t)a->ndim * sizeof(int64_t));
        cp->dst_dev = c->device;
        cp->dst = dptr;
        memcpy(cp->dst_strides, dstr, sizeof(dstr));
    }
}

/* Checks chunk index and box; 0 if there is nothing to copy. */
static dg_status chunk_check(const dg_array *a, int i, const dg_box *box, int *any,
                             dg_error *err)
{
    if (i < 0 || i >= a->nchunks || box->ndim != a->ndim ||
        !dg_box_contains(&a->chunks[i].box, box))
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "a host copy of chunk %d of an array of %d chunks outside its box",
                            i, a->nchunks);
    *any = dg_box_size(box) > 0;
    return DG_OK;
}

/* The copy between box of chunk i and the host, either way (to_host). */
static dg_status chunk_host_copy(dg_array *a, int i, const dg_box *box, char *host,
                                 const int64_t *hstrides, int to_host, char *used,
                                 dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_chunk *c;
    dg_copy_desc cp;
    int any = 0;
    DG_CHECK(chunk_check(a, i, box, &any, err));
    if (!any)
        return DG_OK;
    c = &a->chunks[i];
    if (!to_host) {
        if (a->readonly)
            return dg_error_set(err, DG_ERR_VALUE, -1, "assignment destination is read-only");
        DG_CHECK(dg_buffer_unshare(be, c->buf, err));
    }
    chunk_copy_desc(a, c, box, host, hstrides, to_host, &cp);
    return dg_chunk_host_copy(be, c, &cp, to_host ? DG_ACC_READ : DG_ACC_WRITE, used, NULL,
                              err);
}

dg_status dg_chunk_to_host(dg_array *a, int i, const dg_box *box, char *host,
                           const int64_t *hstrides, char *used, dg_error *err)
{
    return chunk_host_copy(a, i, box, host, hstrides, 1, used, err);
}

dg_status dg_chunk_from_host(dg_array *a, int i, const dg_box *box, const char *host,
                             const int64_t *hstrides, char *used, dg_error *err)
{
    return chunk_host_copy(a, i, box, (char *)host, hstrides, 0, used, err);
}
