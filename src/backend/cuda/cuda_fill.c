/* fill(): DG_FILL_CONST, DG_FILL_ARANGE, DG_FILL_EYE and DG_FILL_RANDOM on a
 * GPU.
 *
 * A dense CONST block is a cudaMemsetAsync when every byte of the value is
 * the same (zeros, ones of int8, ...), else the 16-byte pattern kernel; a
 * strided one, EYE, ARANGE and RANDOM run the fill kernels of
 * kernels/fill.cu: RANDOM over a run of flat indices dense in memory (a
 * chunk of whole rows) with 16 bytes a thread and one store, any other RANDOM
 * fill with one thread per Philox block of elements. */
#include <string.h>

#include "cuda_internal.h"

/* Whether random fill d (n elements of isz bytes) is a run: the element at
 * position p (C order over d->shape) has flat index first + p and lives at
 * d->dst + p * isz, as in a chunk of whole rows.  Then *first is set. */
static int random_run(const dg_fill_desc *d, int isz, uint64_t *first)
{
    int64_t inner = 1, gs = 1;
    uint64_t f = 0;
    int a;
    for (a = d->ndim - 1; a >= 0; a--) {
        if (d->shape[a] > 1 &&
            (d->gstep[a] * gs != inner || d->strides[a] != (int64_t)isz * inner))
            return 0;
        f += (uint64_t)d->origin[a] * (uint64_t)gs;
        inner *= d->shape[a];
        gs *= d->gshape[a];
    }
    *first = f;
    return 1;
}

dg_status cu_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    int isz = dg_dtype_size(d->dtype), a, k, ndim;
    int64_t n = 1, shape[DG_MAXDIM], st[1][DG_MAXDIM];
    int64_t cap;
    cudaStream_t s;
    cudaError_t ce;
    const char *what = "the fill kernel";

    DG_CHECK(cu_check_stream(b, dev, stream, "fill", err));
    if (isz == 0 || d->ndim < 0 || d->ndim > DG_MAXDIM ||
        (d->kind != DG_FILL_CONST && d->kind != DG_FILL_ARANGE && d->kind != DG_FILL_EYE &&
         d->kind != DG_FILL_RANDOM))
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "a malformed fill (kind %d, dtype %d, ndim %d)", d->kind, d->dtype,
                            d->ndim);
    if (d->kind == DG_FILL_EYE && d->ndim != 2)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "an eye fill of %d dimensions", d->ndim);
    if (d->kind == DG_FILL_ARANGE && d->ndim > 1)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "an arange fill of %d dimensions",
                            d->ndim);
    for (a = 0; a < d->ndim; a++) {
        if (d->shape[a] < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a fill of negative shape");
        n *= d->shape[a];
    }
    if (n == 0)
        return DG_OK;
    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;
    cap = (int64_t)b->devs[dev].nsm * 64;

    if (d->kind == DG_FILL_RANDOM) {
        dg_cu_rand_run run;
        memset(&run, 0, sizeof run);
        ce = cudaErrorInvalidValue;
        if (random_run(d, isz, &run.first)) {
            run.dst = d->dst;
            run.n = n;
            run.dtype = d->dtype;
            run.aligned = ((uintptr_t)d->dst - (uintptr_t)(run.first * (uint64_t)isz)) % 16 == 0;
            run.r = d->rnd;
            ce = dg_cu_random_run(&run, b->devs[dev].nsm, s);
            what = "the random fill kernel";
        }
        /* else a thread per group of up to 4 elements (dg_rand_shift) */
        if (ce == cudaErrorInvalidValue)
            ce = dg_cu_fill_launch(d, n, cu_blocks((n + 3) / 4, cap), s);
    } else if (d->kind != DG_FILL_CONST) {
        ce = dg_cu_fill_launch(d, n, cu_blocks(n, cap), s);
    } else {
        for (a = 0; a < d->ndim; a++) {
            shape[a] = d->shape[a];
            st[0][a] = d->strides[a];
        }
        ndim = cu_coalesce(d->ndim, shape, 1, st);
        if (n == 1 || (ndim == 1 && (st[0][0] == isz || st[0][0] == -isz))) {
            /* dense: the lowest address first (a reversed view is dense too) */
            char *base = d->dst;
            int same = 1;
            if (n > 1 && st[0][0] < 0)
                base += (n - 1) * st[0][0];
            for (k = 1; k < isz && same; k++)
                same = d->value[k] == d->value[0];
            if (same) {
                ce = cudaMemsetAsync(base, d->value[0], (size_t)(n * isz), s);
                what = "cudaMemsetAsync";
            } else {
                ce = dg_cu_fill_pattern(base, n * isz, d->value, isz,
                                        cu_blocks((n * isz) / 16, (int64_t)1 << 22), s);
            }
        } else {
            dg_fill_desc c = *d;
            c.ndim = ndim;
            for (a = 0; a < ndim; a++) {
                c.shape[a] = shape[a];
                c.strides[a] = st[0][a];
            }
            ce = dg_cu_fill_launch(&c, n, cu_blocks(n, cap), s);
        }
    }
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0, what);
    cu_bump(b, dev, stream);
    return DG_OK;
}
