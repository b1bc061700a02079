/* scan(): the backend's inclusive scans (dg_scan_desc, dg_backend.h): the
 * row dims coalesced (the scan dim kept apart), one block per row at a time
 * (kernels/scan.cu). */
#include <string.h>

#include "cuda_internal.h"

dg_status cu_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    int64_t rsh[DG_MAXDIM], rst[3][DG_MAXDIM], rows = 1;
    int a, nrd;
    dg_cu_scan q;
    cudaError_t ce;

    DG_CHECK(cu_check_stream(b, dev, stream, "scan", err));
    if (d->ndim < 1 || d->ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed scan (ndim %d)", d->ndim);
    if (!dg_cu_scan_has(d->loop))
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU cannot scan %s with %s",
                            dg_dtype_name(d->dtype),
                            d->loop >= 0 && d->loop < dg_nloops
                                ? dg_ufunc_name(dg_loops[d->loop].ufunc) : "this loop");
    for (a = 0; a < d->ndim; a++)
        if (d->shape[a] <= 0)
            return DG_OK;
    nrd = d->ndim - 1;
    for (a = 0; a < nrd; a++) {
        rsh[a] = d->shape[a];
        rst[0][a] = d->src_strides[a];
        rst[1][a] = d->dst_strides[a];
        rst[2][a] = d->carry ? d->carry_strides[a] : 0;
        rows *= rsh[a];
    }
    memset(&q, 0, sizeof q);
    q.nrd = nrd > 0 ? cu_coalesce(nrd, rsh, 3, rst) : 0;
    for (a = 0; a < q.nrd; a++) {
        q.rshape[a] = rsh[a];
        q.rsrc[a] = rst[0][a];
        q.rdst[a] = rst[1][a];
        q.rcarry[a] = rst[2][a];
    }
    q.rows = rows;
    q.n = d->shape[nrd];
    q.ss = d->src_strides[nrd];
    q.ds = d->dst_strides[nrd];
    q.src = d->src;
    q.dst = d->dst;
    q.carry = d->carry;
    DG_CHECK(cu_set_device(b, dev, err));
    ce = dg_cu_scan_launch(d->loop, &q,
                           (unsigned)(rows < 8 * (int64_t)b->devs[dev].nsm
                                          ? rows : 8 * (int64_t)b->devs[dev].nsm),
                           b->devs[dev].st[stream].s);
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0, "the kernel launch of a scan");
    cu_bump(b, dev, stream);
    return DG_OK;
}
