/* dg_array_fft: FFTs where the data lives, slab by slab.
 *
 * The transformed axes are taken in the order they are transformed (NumPy's:
 * fftn and rfftn the last listed first; irfftn the listed order, its half
 * axis last).  At each step the longest
 * run of the next axes that every chunk holds whole is one batch of the
 * backend's fft slot per chunk (a rank-1 to rank-3 transform, so one GPU
 * holding a whole plane runs one 2-d cuFFT plan); when the next axis is
 * split, the array is first resharded by the planner to a layout holding
 * the remaining axes whole (splitting the longest other axis: the slab
 * decomposition, one all-to-all between a row and a column transform).
 * Nothing moves back: the result keeps the layout of the last step. */
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_fft_run.h"

/* One step: the transform `kind` over the axes ax[0..rank) (the desc's
 * order: the last transformed first; for R2C / C2R the half axis last) of
 * every chunk of a, into a new array *out of the chunks' boxes with those
 * axes whole at their output lengths. */
static dg_status fft_step(dg_array *a, int kind, int forward, double scale, int rank,
                          const int *ax, const int64_t *n, dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    const int cdt = kind == DG_FFT_R2C
                        ? (a->dtype == DG_FLOAT32 ? DG_COMPLEX64 : DG_COMPLEX128)
                        : a->dtype;
    const int odt = kind == DG_FFT_C2R ? (cdt == DG_COMPLEX64 ? DG_FLOAT32 : DG_FLOAT64) : cdt;
    int64_t oshape[DG_MAXDIM];
    dg_plan_chunk *l = NULL;
    dg_array *o = NULL;
    dg_status st = DG_OK;
    int i, r, k, nl = 0;

    memcpy(oshape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    for (r = 0; r < rank; r++)
        oshape[ax[r]] = (kind == DG_FFT_R2C && r == rank - 1) ? n[r] / 2 + 1 : n[r];
    l = (dg_plan_chunk *)calloc((size_t)a->nchunks + 1, sizeof(*l));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < a->nchunks; i++) {
        if (dg_box_size(&a->chunks[i].box) == 0)
            continue;
        l[nl].device = a->chunks[i].device;
        l[nl].box = a->chunks[i].box;
        for (r = 0; r < rank; r++)
            l[nl].box.r[ax[r]] = dg_range_make(0, oshape[ax[r]], 1);
        nl++;
    }
    if (nl == 0) {
        l[0].device = 0;
        dg_box_full(&l[0].box, a->ndim, oshape);
        nl = 1;
    }
    DG_CHECK_GOTO(dg_array_empty(be, odt, a->ndim, oshape, l, nl, DG_MODE_REPLICA, &o, err), st,
                  done);
    for (i = 0, k = 0; i < a->nchunks; i++) {
        const dg_chunk *ca = &a->chunks[i];
        const dg_chunk *co;
        int64_t sst[DG_MAXDIM], dst_[DG_MAXDIM];
        char *sp, *dp;
        dg_fft_desc d;
        dg_access acc[2];
        int b, q;
        if (dg_box_size(&ca->box) == 0)
            continue;
        co = &o->chunks[k++];
        memset(&d, 0, sizeof d);
        d.kind = kind;
        d.dtype = cdt;
        d.forward = forward;
        d.scale = scale;
        d.rank = rank;
        dg_chunk_view(ca, &ca->box, &sp, sst);
        dg_chunk_view(co, &co->box, &dp, dst_);
        d.src = sp;
        d.dst = dp;
        for (r = 0; r < rank; r++) {
            d.n[r] = n[r];
            d.src_strides[r] = sst[ax[r]];
            d.dst_strides[r] = dst_[ax[r]];
        }
        for (b = 0; b < a->ndim; b++) {
            int in = 0;
            for (q = 0; q < rank; q++)
                in |= ax[q] == b;
            if (in || dg_range_len(ca->box.r[b]) == 1)
                continue;
            d.batch[d.nbatch] = dg_range_len(ca->box.r[b]);
            d.src_bs[d.nbatch] = sst[b];
            d.dst_bs[d.nbatch++] = dst_[b];
        }
        /* co is on ca's device (the layout above) */
        acc[0] = dg_read(ca->buf);
        acc[1] = dg_write(co->buf);
        DG_CHECK_GOTO(dg_enqueue(be, ca->device, DG_STREAM_COMPUTE, acc, 2, dg_work_fft(&d), err),
                      st, done);
    }
done:
    free(l);
    if (st != DG_OK) {
        if (o)
            dg_array_decref(o);
        return st;
    }
    *out = o;
    return DG_OK;
}

/* Checks c against a: kind, dtypes, axes and the lengths the transform reads. */
static dg_status check_call(const dg_array *a, const dg_fft_call *c, dg_error *err)
{
    int r, q;
    const int real = a->dtype == DG_FLOAT32 || a->dtype == DG_FLOAT64;
    const int cplx = a->dtype == DG_COMPLEX64 || a->dtype == DG_COMPLEX128;
    if (a->mode != DG_MODE_REPLICA || c->rank < 1 || c->rank > DG_FFT_MAXRANK ||
        c->rank > a->ndim || c->kind < DG_FFT_C2C || c->kind > DG_FFT_C2R)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a bad FFT call (kind %d, rank %d)",
                            c->kind, c->rank);
    if (c->kind == DG_FFT_R2C ? !real : !cplx)
        return dg_error_set(err, DG_ERR_TYPE, -1, "an FFT of kind %d cannot take %s", c->kind,
                            dg_dtype_name(a->dtype));
    for (r = 0; r < c->rank; r++) {
        const int ax = c->axes[r];
        int64_t want = c->n[r];
        if (ax < 0 || ax >= a->ndim || c->n[r] < 1)
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "an FFT along axis %d of %lld points",
                                ax, (long long)c->n[r]);
        for (q = 0; q < r; q++)
            if (c->axes[q] == ax)
                return dg_error_set(err, DG_ERR_INTERNAL, -1, "an FFT along axis %d twice", ax);
        if (c->kind == DG_FFT_C2R && r == c->rank - 1)
            want = c->n[r] / 2 + 1;
        if (a->shape[ax] != want)
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "an FFT of %lld points along an axis "
                                "of %lld", (long long)want, (long long)a->shape[ax]);
    }
    return DG_OK;
}

dg_status dg_array_fft(dg_array *a, const dg_fft_call *c, dg_array **out, dg_error *err)
{
    dg_backend_i *be = a->be;
    int ord[DG_FFT_MAXRANK];
    int64_t nord[DG_FFT_MAXRANK];
    dg_array *cur;
    dg_status st = DG_OK;
    int pos = 0, r;

    *out = NULL;
    DG_CHECK(check_call(a, c, err));
    DG_CHECK(dg_be_need(be, DG_SLOT_FFT, err));
    /* the order of the steps */
    for (r = 0; r < c->rank; r++) {
        const int src = c->kind == DG_FFT_C2R ? r : c->rank - 1 - r;
        ord[r] = c->axes[src];
        nord[r] = c->n[src];
    }
    cur = a;
    dg_array_incref(cur);
    while (pos < c->rank) {
        int g = 0, ax[DG_FFT_MAXRANK], kind, fwd, q;
        int64_t n[DG_FFT_MAXRANK];
        dg_array *next = NULL;
        while (pos + g < c->rank && dg_array_axis_whole(cur, ord[pos + g]))
            g++;
        if (g == 0) {
            dg_plan_chunk *l = NULL;
            int nl = 0, kept = 0;
            DG_CHECK_GOTO(dg_layout_axes_whole(be->ndevices, cur->ndim, cur->shape, ord + pos,
                                               c->rank - pos, &l, &nl, &kept, err),
                          st, done);
            st = dg_array_reshard(cur, l, nl, &next, err);
            free(l);
            if (st != DG_OK)
                goto done;
            dg_array_decref(cur);
            cur = next;
            next = NULL;
            while (pos + g < c->rank && dg_array_axis_whole(cur, ord[pos + g]))
                g++;
            if (g == 0) {
                st = dg_error_set(err, DG_ERR_INTERNAL, -1, "a reshard for an FFT left its "
                                  "axis %d split", ord[pos]);
                goto done;
            }
        }
        /* the step's kind and the desc's order of its axes */
        if (c->kind == DG_FFT_R2C) {
            kind = pos == 0 ? DG_FFT_R2C : DG_FFT_C2C;
            fwd = 1;
        } else if (c->kind == DG_FFT_C2R) {
            kind = pos + g == c->rank ? DG_FFT_C2R : DG_FFT_C2C;
            fwd = 0;
        } else {
            kind = DG_FFT_C2C;
            fwd = c->forward;
        }
        for (q = 0; q < g; q++) {
            /* desc order: transformed from its last axis to its first, a
             * C2R's half axis (ord's last) after the others */
            const int src = (kind == DG_FFT_C2R) ? (q == g - 1 ? pos + g - 1 : pos + g - 2 - q)
                                                 : pos + g - 1 - q;
            ax[q] = ord[src];
            n[q] = nord[src];
        }
        DG_CHECK_GOTO(fft_step(cur, kind, fwd, pos + g == c->rank ? c->scale : 1.0, g, ax, n,
                               &next, err),
                      st, done);
        dg_array_decref(cur);
        cur = next;
        pos += g;
    }
done:
    if (st != DG_OK) {
        dg_array_decref(cur);
        return st;
    }
    *out = cur;
    return DG_OK;
}
