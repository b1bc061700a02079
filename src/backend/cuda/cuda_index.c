/* select(), rows(), route() and sort(): the index work of the CUDA backend
 * (dg_select_desc ... dg_sort_desc, dg_backend.h), on the kernels of
 * kernels/index.cu and kernels/sort.cu.
 *
 * Each coalesces its iteration space, fills the kernels' argument block and
 * enqueues them on the stream; the compactions and sorts take their
 * workspace from the device's pool, stream-ordered. */
#include <string.h>

#include "cuda_internal.h"

/* Checks (dev, stream), makes dev current; s its stream. */
static dg_status index_begin(cu_be *b, int dev, int stream, const char *op, cudaStream_t *s,
                             dg_error *err)
{
    DG_CHECK(cu_check_stream(b, dev, stream, op, err));
    DG_CHECK(cu_set_device(b, dev, err));
    *s = b->devs[dev].st[stream].s;
    return DG_OK;
}

/* The launch's status as the slot's, the stream's count bumped. */
static dg_status index_end(cu_be *b, int dev, int stream, cudaError_t ce, const char *what,
                           dg_error *err)
{
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0, what);
    cu_bump(b, dev, stream);
    return DG_OK;
}

static int items_ok(int isz)
{
    return isz == 1 || isz == 2 || isz == 4 || isz == 8 || isz == 16;
}

_Static_assert(sizeof(((dg_cu_compact *)0)->part) == sizeof(((dg_select_desc *)0)->part),
               "the parts of a keyed selection's bins: one count in both");

dg_status cu_select(dg_backend_i *be, int dev, int stream, const dg_select_desc *d,
                    dg_error *err)
{
    cu_be *b = cu_of(be);
    int64_t shape[DG_MAXDIM], st[3][DG_MAXDIM], n = 1;
    dg_cu_compact a;
    cudaStream_t s;
    int ax;

    if (d->ndim < 0 || d->ndim > DG_MAXDIM || (d->src && !items_ok(d->itemsize)) ||
        (d->keyed && (!d->src || d->pshift < 0 || d->pshift >= 64)))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed selection");
    DG_CHECK(index_begin(b, dev, stream, "select", &s, err));
    memset(&a, 0, sizeof a);
    for (ax = 0; ax < d->ndim; ax++) {
        shape[ax] = d->shape[ax];
        st[0][ax] = d->src ? d->src_strides[ax] : 0;
        st[1][ax] = d->keyed ? 0 : d->mask_strides[ax];
        st[2][ax] = d->gstride[ax];
        n *= shape[ax];
    }
    a.kind = DG_CU_SELECT;
    a.itemsize = d->src ? d->itemsize : 8;
    a.n = n;
    a.base = d->base;
    a.src = d->src;
    a.mask = d->keyed ? NULL : d->mask;
    a.dst = d->dst;
    a.count = d->count;
    a.keyed = d->keyed != 0;
    a.dtype = d->dtype;
    a.pshift = d->pshift;
    a.lo = d->lo;
    a.hi = d->hi;
    a.cap = d->cap;
    a.bins = d->bins;
    a.nbins = d->nbins;
    a.rank0 = d->rank[0];
    a.rank1 = d->rank[1];
    a.nparts = d->nparts > 0 ? d->nparts : 1;
    memcpy(a.part, d->part, sizeof a.part);
    a.whole = d->whole != 0;
    a.rest = d->rest != 0;
    a.q = d->q;
    a.ndim = n > 0 ? cu_coalesce(d->ndim, shape, 3, st) : 0;
    for (ax = 0; ax < a.ndim; ax++) {
        a.shape[ax] = shape[ax];
        a.sstr[ax] = st[0][ax];
        a.mstr[ax] = st[1][ax];
        a.gstride[ax] = st[2][ax];
    }
    return index_end(b, dev, stream,
                     dg_cu_compact_run(&a, b->devs[dev].nsm, b->devs[dev].pool, s),
                     "the kernels of a selection", err);
}

dg_status cu_route(dg_backend_i *be, int dev, int stream, const dg_route_desc *d,
                   dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_cu_compact a;
    cudaStream_t s;

    if (d->n < 0 || d->step < 1)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed routing");
    DG_CHECK(index_begin(b, dev, stream, "route", &s, err));
    memset(&a, 0, sizeof a);
    a.kind = DG_CU_ROUTE;
    a.n = d->n;
    a.key = d->key;
    a.start = d->start;
    a.stop = d->stop;
    a.step = d->step;
    a.rows = d->rows;
    a.pos = d->pos;
    a.count = d->count;
    return index_end(b, dev, stream,
                     dg_cu_compact_run(&a, b->devs[dev].nsm, b->devs[dev].pool, s),
                     "the kernels of a routing", err);
}

dg_status cu_rows(dg_backend_i *be, int dev, int stream, const dg_rows_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    int64_t shape[DG_MAXDIM], st[2][DG_MAXDIM], len = 1;
    dg_cu_rows a;
    cudaStream_t s;
    int ax;

    if (d->ndim < 0 || d->ndim > DG_MAXDIM || d->n < 0 || d->step < 1 ||
        !items_ok(d->itemsize))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "malformed keyed rows");
    for (ax = 0; ax < d->ndim; ax++) {
        shape[ax] = d->shape[ax];
        st[0][ax] = d->src_strides[ax];
        st[1][ax] = d->dst_strides[ax];
        len *= shape[ax];
    }
    if (d->n == 0 || len == 0)
        return DG_OK;
    DG_CHECK(index_begin(b, dev, stream, "rows", &s, err));
    memset(&a, 0, sizeof a);
    a.scatter = d->scatter;
    a.itemsize = d->itemsize;
    a.n = d->n;
    a.rowlen = len;
    a.key = d->key;
    a.start = d->start;
    a.stop = d->stop;
    a.step = d->step;
    a.src = d->src;
    a.dst = d->dst;
    a.src_rstride = d->src_rstride;
    a.dst_rstride = d->dst_rstride;
    a.ndim = d->ndim > 0 ? cu_coalesce(d->ndim, shape, 2, st) : 0;
    for (ax = 0; ax < a.ndim; ax++) {
        a.shape[ax] = shape[ax];
        a.sstr[ax] = st[0][ax];
        a.dstr[ax] = st[1][ax];
    }
    return index_end(b, dev, stream,
                     dg_cu_rows_launch(&a, cu_blocks(a.n * a.rowlen,
                                                     (int64_t)b->devs[dev].nsm * 64), s),
                     "the keyed row copy kernel", err);
}

dg_status cu_sort(dg_backend_i *be, int dev, int stream, const dg_sort_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    int64_t shape[DG_MAXDIM], st[3][DG_MAXDIM], rows = 1;
    const int nrd = d->ndim - 1;
    dg_cu_sort a;
    cudaStream_t s;
    cudaError_t ce;
    int ax;

    if (d->ndim < 1 || d->ndim > DG_MAXDIM || dg_dtype_size(d->dtype) == 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed sort");
    if (d->dtype == DG_COMPLEX64 || d->dtype == DG_COMPLEX128 ||
        d->shape[nrd] > (int64_t)UINT32_MAX)
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU does not sort %s rows of %lld",
                            dg_dtype_name(d->dtype), (long long)d->shape[nrd]);
    memset(&a, 0, sizeof a);
    for (ax = 0; ax < nrd; ax++) {
        shape[ax] = d->shape[ax];
        st[0][ax] = d->src_strides[ax];
        st[1][ax] = d->dst ? d->dst_strides[ax] : 0;
        st[2][ax] = d->idx ? d->idx_strides[ax] : 0;
        rows *= shape[ax];
    }
    if (rows == 0 || d->shape[nrd] == 0)
        return DG_OK;
    DG_CHECK(index_begin(b, dev, stream, "sort", &s, err));
    a.dtype = d->dtype;
    a.rows = rows;
    a.n = d->shape[nrd];
    a.ss = d->src_strides[nrd];
    a.ds = d->dst ? d->dst_strides[nrd] : 0;
    a.is = d->idx ? d->idx_strides[nrd] : 0;
    a.src = d->src;
    a.dst = d->dst;
    a.idx = d->idx;
    a.nrd = nrd > 0 ? cu_coalesce(nrd, shape, 3, st) : 0;
    for (ax = 0; ax < a.nrd; ax++) {
        a.rshape[ax] = shape[ax];
        a.rsrc[ax] = st[0][ax];
        a.rdst[ax] = st[1][ax];
        a.ridx[ax] = st[2][ax];
    }
    ce = dg_cu_sort_run(&a, b->devs[dev].nsm, b->devs[dev].pool, s);
    if (ce == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU does not sort %s",
                            dg_dtype_name(d->dtype));
    }
    return index_end(b, dev, stream, ce, "the kernels of a sort", err);
}
