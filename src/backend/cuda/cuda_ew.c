/* elementwise(): one typed loop of DG_LOOP_LIST over an N-d strided space.
 *
 * The space is coalesced first (cuda_dims.c).  When it is then 1-d, every
 * operand dense (or a scalar, or one broadcast element), no where mask, and
 * every dense operand aligned to the loop's vector width, the contiguous
 * kernel runs (16-byte loads and stores); anything else runs the strided
 * kernel, which also takes the where mask.  The kernels are in kernels/ew*. */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

/* 1 if loop is a copy: a cast to the same dtype, which raises nothing. */
static int is_copy(int loop)
{
    const dg_loop_info *li = &dg_loops[loop];
    return li->ufunc == DG_UF_cast && li->nin == 1 && li->nout == 1 &&
           li->dtypes[0] == li->dtypes[1];
}

dg_status cu_elementwise(dg_backend_i *be, int dev, int stream, const dg_ew_desc *d,
                         dg_error *err)
{
    cu_be *b = cu_of(be);
    const dg_cu_ew_info *info;
    const dg_cu_ew_entry *ent;
    int64_t shape[DG_MAXDIM], st[DG_MAXOPS][DG_MAXDIM], n = 1;
    uint32_t scalar_mask = 0, bcast_mask = 0;
    int nin, nop, nst, ndim, k, a, dense;
    cudaStream_t s;
    cudaError_t ce;

    DG_CHECK(cu_check_stream(b, dev, stream, "elementwise", err));
    if (d->loop < 0 || d->loop >= dg_cu_ew_nloops)
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "elementwise loop %d does not exist (the CUDA kernels have %d)",
                            d->loop, dg_cu_ew_nloops);
    info = &dg_cu_ew_infos[d->loop];
    nin = info->nin;
    nop = info->nin + info->nout;
    if (d->nop != nop || d->ndim < 0 || d->ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "a malformed elementwise call of %s (%d operands, ndim %d)",
                            info->name, d->nop, d->ndim);
    for (a = 0; a < d->ndim; a++) {
        if (d->shape[a] < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "an elementwise shape below 0");
        n *= d->shape[a];
        shape[a] = d->shape[a];
    }
    if (n == 0)
        return DG_OK;
    for (k = 0; k < nop; k++) {
        if (d->data[k] == NULL) {
            if (k >= nin)
                return dg_error_set(err, DG_ERR_INTERNAL, dev, "output %d of %s is NULL",
                                    k - nin, info->name);
            scalar_mask |= 1u << k;
        }
        for (a = 0; a < d->ndim; a++)
            st[k][a] = d->data[k] == NULL ? 0 : d->strides[k][a];
    }
    nst = nop;
    if (d->where != NULL) {
        for (a = 0; a < d->ndim; a++)
            st[nst][a] = d->where_strides[a];
        nst++;
    }
    ndim = cu_coalesce(d->ndim, shape, nst, st);

    /* the contiguous path? */
    ent = dg_cu_ew_entry_get(d->loop);
    if (ent == NULL)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "elementwise loop %d has no kernel",
                            d->loop);
    dense = ent->contig != NULL && d->where == NULL && ndim == 1;
    for (k = 0; k < nop && dense; k++) {
        int64_t sz = info->size[k];
        if (scalar_mask >> k & 1u)
            continue;
        if (st[k][0] == sz)
            dense = (uintptr_t)d->data[k] % (uint64_t)(sz * info->vec) == 0;
        else if (st[k][0] == 0 && k < nin)
            bcast_mask |= 1u << k;
        else
            dense = 0;
    }

    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;
    if (!dense && d->where == NULL && !scalar_mask && is_copy(d->loop) &&
        cu_copy_rows(b, dev, s, ndim, shape, st, info->size[0], d->data[0], d->data[1], &ce)) {
        /* a copy (a cast to the same dtype) whose rows are dense: 16-byte
         * stores at the destination's alignment (the Jacobi step's result
         * copied into the interior of its grid) */
    } else if (dense) {
        dg_cu_ew_contig c;
        memset(&c, 0, sizeof c);
        c.n = n;
        c.scalar_mask = scalar_mask;
        c.bcast_mask = bcast_mask;
        c.fpe = cu_fpe_args(b, dev, d->loop);
        for (k = 0; k < nop; k++) {
            c.data[k] = d->data[k];
            if (scalar_mask >> k & 1u)
                memcpy(c.scalar[k], d->scalar[k], 16);
        }
        ce = ent->contig(&c, cu_blocks(n / info->vec, (int64_t)1 << 22), s);
    } else {
        dg_cu_ew_strided g;
        memset(&g, 0, sizeof g);
        g.n = n;
        g.ndim = ndim;
        g.scalar_mask = scalar_mask;
        g.fpe = cu_fpe_args(b, dev, d->loop);
        for (a = 0; a < ndim; a++) {
            g.shape[a] = shape[a];
            for (k = 0; k < nop; k++)
                g.strides[a][k] = st[k][a];
            if (d->where != NULL)
                g.strides[a][DG_CU_WHERE] = st[nop][a];
        }
        for (k = 0; k < nop; k++) {
            g.data[k] = d->data[k];
            if (scalar_mask >> k & 1u)
                memcpy(g.scalar[k], d->scalar[k], 16);
        }
        g.data[DG_CU_WHERE] = (char *)(uintptr_t)d->where;
        ce = ent->strided(&g, cu_blocks(n, (int64_t)b->devs[dev].nsm * 64), s);
    }
    if (ce != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "the kernel launch of %s (loop %d)", info->name, d->loop);
        return cu_fail(err, ce, dev, 0, what);
    }
    cu_bump(b, dev, stream);
    return DG_OK;
}
