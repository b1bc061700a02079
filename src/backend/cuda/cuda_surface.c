/* search() and count(): the searches and counts of the CUDA backend
 * (dg_search_desc, dg_count_desc of dg_backend.h), on the kernels of
 * kernels/surface.cu.  Each coalesces its iteration space, fills the
 * kernel's argument block and enqueues it on the stream. */
#include <string.h>

#include "cuda_internal.h"
#include "cu_surface_kernels.h"

/* Checks (dev, stream) and makes dev current; *s its stream. */
static dg_status surface_begin(cu_be *b, int dev, int stream, const char *op, cudaStream_t *s,
                               dg_error *err)
{
    DG_CHECK(cu_check_stream(b, dev, stream, op, err));
    DG_CHECK(cu_set_device(b, dev, err));
    *s = b->devs[dev].st[stream].s;
    return DG_OK;
}

/* A launch's status as the slot's (the stream's count bumped on success). */
static dg_status surface_end(cu_be *b, int dev, int stream, cudaError_t ce, const char *what,
                             dg_error *err)
{
    if (ce == cudaErrorInvalidValue)
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU has no %s of this dtype", what);
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0, what);
    cu_bump(b, dev, stream);
    return DG_OK;
}

/* The block (ndim, shape) with two sets of strides, coalesced: its element
 * count, and in *ond the dims left (0 for 0-d). */
static int64_t surface_dims(int ndim, const int64_t *shape, const int64_t *s0,
                            const int64_t *s1, int *ond, int64_t *oshape, int64_t *o0,
                            int64_t *o1)
{
    int64_t sh[DG_MAXDIM], st[2][DG_MAXDIM], total = 1;
    int ax;
    for (ax = 0; ax < ndim; ax++) {
        sh[ax] = shape[ax];
        st[0][ax] = s0[ax];
        st[1][ax] = s1 ? s1[ax] : 0;
        total *= sh[ax];
    }
    *ond = ndim > 0 && total > 0 ? cu_coalesce(ndim, sh, 2, st) : 0;
    for (ax = 0; ax < *ond; ax++) {
        oshape[ax] = sh[ax];
        o0[ax] = st[0][ax];
        o1[ax] = st[1][ax];
    }
    return total;
}

dg_status cu_search(dg_backend_i *be, int dev, int stream, const dg_search_desc *d,
                    dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_cu_search a;
    cudaStream_t s;
    int nd;

    if (d->ndim < 0 || d->ndim > DG_MAXDIM || d->n < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed search");
    memset(&a, 0, sizeof a);
    a.total = surface_dims(d->ndim, d->shape, d->val_strides, d->dst_strides, &nd, a.shape,
                           a.vstr, a.dstr);
    if (a.total == 0)
        return DG_OK;
    DG_CHECK(surface_begin(b, dev, stream, "search", &s, err));
    a.ndim = nd;
    a.dtype = d->dtype;
    a.right = d->right;
    a.accumulate = d->accumulate;
    a.n = d->n;
    a.seq = d->seq;
    a.seq_stride = d->seq_stride;
    a.val = d->val;
    a.dst = d->dst;
    return surface_end(b, dev, stream,
                       dg_cu_search_launch(&a, cu_blocks(a.total,
                                                         (int64_t)b->devs[dev].nsm * 32), s),
                       "search", err);
}

dg_status cu_count(dg_backend_i *be, int dev, int stream, const dg_count_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_cu_count a;
    cudaStream_t s;
    int nd;

    if (d->ndim < 0 || d->ndim > DG_MAXDIM || d->nbins < 0 || (!d->sum && !d->cnt))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed count");
    memset(&a, 0, sizeof a);
    a.total = surface_dims(d->ndim, d->shape, d->src_strides,
                           d->weight ? d->weight_strides : NULL, &nd, a.shape, a.sstr, a.wstr);
    if (a.total == 0 || d->nbins == 0)
        return DG_OK;
    DG_CHECK(surface_begin(b, dev, stream, "count", &s, err));
    a.ndim = nd;
    a.radix = d->radix;
    a.dtype = d->dtype;
    a.shift = d->shift;
    a.pshift = d->pshift;
    a.prefix = d->prefix;
    a.prefix2 = d->nprefix == 2 ? d->prefix2 : d->prefix;
    a.nprefix = d->nprefix == 2 ? 2 : 1;
    a.nbins = d->nbins;
    a.src = d->src;
    a.weight = (const char *)d->weight;
    a.edges = d->edges;
    a.cnt = (unsigned long long *)d->cnt;
    a.sum = d->sum;
    return surface_end(b, dev, stream,
                       dg_cu_count_launch(&a, cu_blocks(a.total, (int64_t)b->devs[dev].nsm * 8),
                                          s),
                       "count", err);
}
