/* reduce(): the backend's reductions (dg_reduce_desc, dg_backend.h).
 *
 * The kept dims and the reduced dims are coalesced separately (never across
 * the boundary).  When the reduced dims are the inner ones (or nothing is
 * kept), each output gets blocks reading along them (the inner pass); when
 * the kept dims are the inner ones, blocks of 32 neighbouring outputs read 8
 * reduced rows at a time, so that each warp reads consecutive memory (the
 * outer pass).  Outputs too few to fill the GPU are cut into chunks along
 * the reduced elements, whose partials the final pass folds, in order
 * (deterministic).  The kernels are in kernels/reduce.cu. */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

/* Partials of a split reduction, from the device's pool on stream s. */
static dg_status red_parts(cu_be *b, int dev, cudaStream_t s, dg_cu_red *r, int isz,
                           void **mem, dg_error *err)
{
    size_t n = (size_t)r->m * (size_t)r->nsplit;
    size_t bytes = n * (size_t)isz + n * sizeof(int64_t) + n + 64;
    cudaError_t ce = cudaMallocFromPoolAsync(mem, bytes, b->devs[dev].pool, s);
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, bytes, "cudaMallocFromPoolAsync (reduction partials)");
    r->part_idx = (int64_t *)*mem;
    r->part = (char *)*mem + n * sizeof(int64_t);
    r->part_have = (unsigned char *)r->part + n * (size_t)isz;
    return DG_OK;
}

dg_status cu_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                    dg_error *err)
{
    cu_be *b = cu_of(be);
    const int nk = d->ndim - d->nred, isz = dg_dtype_size(d->dtype);
    int64_t kst[4][DG_MAXDIM], rst[3][DG_MAXDIM], ksh[DG_MAXDIM], rsh[DG_MAXDIM];
    int64_t m = 1, k = 1, rs, ks;
    int a, inner, nb;
    dg_cu_red r;
    cudaStream_t s;
    cudaError_t ce;
    void *mem = NULL;
    dg_status st = DG_OK;
    const char *what = "reduction";

    DG_CHECK(cu_check_stream(b, dev, stream, "reduce", err));
    if (d->ndim < 0 || d->ndim > DG_MAXDIM || d->nred < 0 || nk < 0 || isz == 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed reduction (ndim %d, %d "
                            "reduced, dtype %d)", d->ndim, d->nred, d->dtype);
    if (!dg_cu_red_has(d->kind, d->loop, d->dtype))
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU cannot reduce %s with %s",
                            dg_dtype_name(d->dtype),
                            d->kind == DG_RED_LOOP && d->loop >= 0 && d->loop < dg_nloops
                                ? dg_ufunc_name(dg_loops[d->loop].ufunc)
                                : "this reduction");
    for (a = 0; a < nk; a++) {
        if (d->shape[a] <= 0)
            return DG_OK; /* no output */
        ksh[a] = d->shape[a];
        kst[0][a] = d->src_strides[a];
        kst[1][a] = d->dst_strides[a];
        kst[2][a] = d->idx ? d->idx_strides[a] : 0;
        kst[3][a] = d->where ? d->where_strides[a] : 0;
        m *= ksh[a];
    }
    for (a = 0; a < d->nred; a++) {
        rsh[a] = d->shape[nk + a];
        rst[0][a] = d->src_strides[nk + a];
        rst[1][a] = d->where ? d->where_strides[nk + a] : 0;
        rst[2][a] = d->idx_gstride[nk + a];
        k *= rsh[a];
    }
    memset(&r, 0, sizeof r);
    r.nk = nk > 0 ? cu_coalesce(nk, ksh, 4, kst) : 0;
    r.nr = k > 0 && d->nred > 0 ? cu_coalesce(d->nred, rsh, 3, rst) : 0;
    if (k > 0 && r.nr == 0) { /* nothing reduced: one element per output */
        r.nr = 1;
        rsh[0] = 1;
        rst[0][0] = rst[1][0] = rst[2][0] = 0;
    }
    for (a = 0; a < r.nk; a++) {
        r.kshape[a] = ksh[a];
        r.kstr[a] = kst[0][a];
        r.kdst[a] = kst[1][a];
        r.kidx[a] = kst[2][a];
        r.kwhere[a] = kst[3][a];
    }
    for (a = 0; a < r.nr; a++) {
        r.rshape[a] = rsh[a];
        r.rstr[a] = rst[0][a];
        r.rwhere[a] = rst[1][a];
        r.rgs[a] = rst[2][a];
    }
    r.m = m;
    r.k = k;
    r.has_init = d->has_init;
    memcpy(r.init, d->init, sizeof r.init);
    r.src = d->src;
    r.dst = d->dst;
    r.idx = d->idx;
    r.where = (const unsigned char *)d->where;

    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;
    nb = 4 * b->devs[dev].nsm; /* blocks that fill the GPU */
    if (k == 0) { /* every output is init */
        r.nsplit = 0;
        ce = dg_cu_red_launch(d->kind, d->loop, d->dtype, DG_CU_RED_FINAL, &r,
                              cu_blocks(m, nb), 1, s);
        if (ce != cudaSuccess)
            return cu_fail(err, ce, dev, 0, "the kernel launch of a reduction (init)");
        cu_bump(b, dev, stream);
        return DG_OK;
    }
    rs = r.rstr[r.nr - 1] < 0 ? -r.rstr[r.nr - 1] : r.rstr[r.nr - 1];
    ks = r.nk ? (r.kstr[r.nk - 1] < 0 ? -r.kstr[r.nk - 1] : r.kstr[r.nk - 1]) : 0;
    inner = r.nk == 0 || (rs != 0 && rs <= ks) || ks == 0;
    {
        /* chunks along the reduced elements: enough blocks to fill the GPU,
         * each thread still folding many elements */
        int64_t blocks = inner ? m : (m + 31) / 32;
        int64_t per = inner ? 4 * DG_CU_THREADS : 64;
        int64_t want = blocks >= nb ? 1 : (nb + blocks - 1) / blocks;
        int64_t most = (k + per - 1) / per;
        if (want > most)
            want = most;
        if (want > 65535)
            want = 65535;
        if (want < 1)
            want = 1;
        r.nsplit = (int32_t)want;
        r.kchunk = (k + want - 1) / want;
        if (inner && m > 0x7fffffff)
            return dg_error_set(err, DG_ERR_NOTIMPL, dev,
                                "a reduction with more than 2^31 outputs along the inner dims");
        if (r.nsplit > 1)
            DG_CHECK(red_parts(b, dev, s, &r, isz, &mem, err));
        ce = dg_cu_red_launch(d->kind, d->loop, d->dtype,
                              inner ? DG_CU_RED_INNER : DG_CU_RED_OUTER, &r, (unsigned)blocks,
                              (unsigned)r.nsplit, s);
        if (ce == cudaSuccess && r.nsplit > 1) {
            what = "the final pass of a reduction";
            ce = dg_cu_red_launch(d->kind, d->loop, d->dtype, DG_CU_RED_FINAL, &r,
                                  cu_blocks(m, nb), 1, s);
        }
    }
    if (ce != cudaSuccess) {
        char msg[96];
        snprintf(msg, sizeof msg, "the kernel launch of %s", what);
        st = cu_fail(err, ce, dev, 0, msg);
    }
    if (mem != NULL) {
        cudaError_t fe = cudaFreeAsync(mem, s);
        if (fe != cudaSuccess && st == DG_OK)
            st = cu_fail(err, fe, dev, 0, "cudaFreeAsync (reduction partials)");
    }
    cu_bump(b, dev, stream);
    return st;
}
