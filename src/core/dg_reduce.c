/* Reductions of distributed arrays (dg_array_reduce).
 *
 * Every element is read once, from one chunk: the chunks are cut into
 * disjoint "parts" (chunk i keeps what no earlier chunk holds), and each part
 * is reduced where it lives by the backend's reduce into a partial result
 * over its projection (the part's box with the reduced axes collapsed to
 * index 0).  The partials become the chunks of the result.  Partials of
 * different parts that cover the same output elements (the reduced axes were
 * split) are then combined: left in the op's mode (SUM, PROD, MAX, MIN:
 * lazy, resolved when read), combined on the devices with the reduction's
 * own loop, or, for argmax / argmin, on the host from the (value, index)
 * pairs, which are few. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_ufunc.h"
#include "../../kernels/dg_scalar.h"

typedef struct part {
    int chunk;
    dg_box box;
} part;

/* Appends box b (of chunk i) to *parts, growing it. */
static dg_status push_part(part **parts, int *n, int *cap, int chunk, const dg_box *b,
                           dg_error *err)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 8;
        part *p = (part *)realloc(*parts, (size_t)nc * sizeof(part));
        if (!p)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        *parts = p;
        *cap = nc;
    }
    (*parts)[*n].chunk = chunk;
    (*parts)[*n].box = *b;
    (*n)++;
    return DG_OK;
}

/* Disjoint non-empty boxes covering a, each inside one chunk: chunk i keeps
 * its box less the boxes of chunks 0..i-1.  *out malloc'ed. */
static dg_status owner_cover(const dg_array *a, part **out, int *nout, dg_error *err)
{
    part *res = NULL, *cur = NULL, *nxt = NULL;
    int nres = 0, capres = 0;
    dg_status st = DG_OK;
    int i, j, k;

    for (i = 0; i < a->nchunks && st == DG_OK; i++) {
        int ncur = 0, capcur = 0;
        if (dg_box_size(&a->chunks[i].box) == 0)
            continue;
        st = push_part(&cur, &ncur, &capcur, i, &a->chunks[i].box, err);
        for (j = 0; j < i && st == DG_OK && ncur > 0; j++) {
            int nn = 0, capn = 0;
            for (k = 0; k < ncur && st == DG_OK; k++) {
                int64_t cnt = dg_box_subtract_count(&cur[k].box, &a->chunks[j].box);
                dg_box *pieces;
                int np = 0, q;
                if (cnt > 1 << 20) {
                    st = dg_error_set(err, DG_ERR_VALUE, -1,
                                      "chunks %d and %d overlap in too complex a pattern "
                                      "to reduce (%lld pieces)", j, i, (long long)cnt);
                    break;
                }
                pieces = (dg_box *)malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(dg_box));
                if (!pieces) {
                    st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
                    break;
                }
                st = dg_box_subtract(&cur[k].box, &a->chunks[j].box, pieces, (int)cnt, &np,
                                     err);
                for (q = 0; q < np && st == DG_OK; q++)
                    if (dg_box_size(&pieces[q]) > 0)
                        st = push_part(&nxt, &nn, &capn, i, &pieces[q], err);
                free(pieces);
            }
            free(cur);
            cur = nxt;
            ncur = nn;
            nxt = NULL;
        }
        for (k = 0; k < ncur && st == DG_OK; k++)
            st = push_part(&res, &nres, &capres, i, &cur[k].box, err);
        free(cur);
        cur = NULL;
    }
    free(nxt);
    if (st != DG_OK) {
        free(res);
        return st;
    }
    *out = res;
    *nout = nres;
    return DG_OK;
}

/* Removes the reduced axes from a freshly made array (shape, boxes, strides). */
static void drop_axes(dg_array *r, const unsigned char *red)
{
    int i, ax, k = 0;
    for (ax = 0; ax < r->ndim; ax++)
        if (!red[ax])
            r->shape[k++] = r->shape[ax];
    for (i = 0; i < r->nchunks; i++) {
        dg_chunk *c = &r->chunks[i];
        int m = 0;
        for (ax = 0; ax < r->ndim; ax++) {
            if (red[ax])
                continue;
            c->box.r[m] = c->box.r[ax];
            c->strides[m] = c->strides[ax];
            m++;
        }
        c->box.ndim = m;
    }
    r->ndim = k;
}

/* The projection of box b: reduced axes collapsed to the single index 0. */
static void project(const dg_box *b, const unsigned char *red, dg_box *p)
{
    int ax;
    *p = *b;
    for (ax = 0; ax < b->ndim; ax++)
        if (red[ax])
            p->r[ax] = dg_range_make(0, 1, 1);
}

/* Combines overlapping (value, index) partials of argmax / argmin on the
 * host: a new REPLICA value array and index array with the partials' layout. */
static dg_status combine_arg_on_host(dg_array *v, dg_array *ix, int is_min,
                                     dg_array **vout, dg_array **iout, dg_error *err)
{
    const int isz = dg_dtype_size(v->dtype), nd = v->ndim;
    dg_arg_better_fn better = dg_arg_better(v->dtype, is_min);
    int64_t nout = 1, gstr[DG_MAXDIM], hs_v[DG_MAXDIM], hs_i[DG_MAXDIM];
    char *hv = NULL, *have = NULL, *pv = NULL;
    int64_t *hi = NULL, *pi = NULL;
    dg_plan_chunk *l = NULL;
    dg_array *rv = NULL, *ri = NULL;
    dg_status st = DG_OK;
    int i, ax;

    for (ax = nd - 1; ax >= 0; ax--) {
        gstr[ax] = nout;
        nout *= v->shape[ax];
    }
    for (ax = 0; ax < nd; ax++) {
        hs_v[ax] = gstr[ax] * isz;
        hs_i[ax] = gstr[ax] * (int64_t)sizeof(int64_t);
    }
    hv = (char *)malloc((size_t)nout * (size_t)isz + 1);
    hi = (int64_t *)malloc((size_t)nout * sizeof(int64_t) + 1);
    have = (char *)calloc((size_t)nout + 1, 1);
    if (!hv || !hi || !have) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0; i < v->nchunks && st == DG_OK; i++) {
        const dg_box *b = &v->chunks[i].box;
        int64_t n = dg_box_size(b), e, ps[DG_MAXDIM], pis[DG_MAXDIM], s = 1;
        dg_array tv = *v, ti = *ix;
        int64_t pos[DG_MAXDIM] = {0};
        tv.nchunks = ti.nchunks = 1;
        tv.chunks = &v->chunks[i];
        ti.chunks = &ix->chunks[i];
        tv.mode = ti.mode = DG_MODE_REPLICA;
        for (ax = nd - 1; ax >= 0; ax--) {
            ps[ax] = s * isz;
            pis[ax] = s * (int64_t)sizeof(int64_t);
            s *= dg_range_len(b->r[ax]);
        }
        free(pv);
        free(pi);
        pv = (char *)malloc((size_t)n * (size_t)isz + 1);
        pi = (int64_t *)malloc((size_t)n * sizeof(int64_t) + 1);
        if (!pv || !pi) {
            st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            break;
        }
        st = dg_array_gather(&tv, b, pv, ps, err);
        if (st == DG_OK)
            st = dg_array_gather(&ti, b, (char *)pi, pis, err);
        for (e = 0; e < n && st == DG_OK; e++) {
            int64_t g = 0;
            const char *val = pv + e * isz;
            for (ax = 0; ax < nd; ax++)
                g += (b->r[ax].start + pos[ax] * b->r[ax].step) * gstr[ax];
            if (!have[g] || better(val, hv + g * isz) ||
                (!better(hv + g * isz, val) && pi[e] < hi[g])) {
                memcpy(hv + g * isz, val, (size_t)isz);
                hi[g] = pi[e];
                have[g] = 1;
            }
            for (ax = nd - 1; ax >= 0; ax--) {
                if (++pos[ax] < dg_range_len(b->r[ax]))
                    break;
                pos[ax] = 0;
            }
        }
    }
    if (st != DG_OK)
        goto done;
    DG_CHECK_GOTO(dg_array_layout(v, &l, err), st, done);
    DG_CHECK_GOTO(dg_array_empty(v->be, v->dtype, nd, v->shape, l, v->nchunks,
                                 DG_MODE_REPLICA, &rv, err), st, done);
    DG_CHECK_GOTO(dg_array_empty(v->be, DG_INT64, nd, v->shape, l, v->nchunks,
                                 DG_MODE_REPLICA, &ri, err), st, done);
    DG_CHECK_GOTO(dg_array_scatter(rv, hv, hs_v, err), st, done);
    DG_CHECK_GOTO(dg_array_scatter(ri, (const char *)hi, hs_i, err), st, done);
    *vout = rv;
    *iout = ri;
    rv = ri = NULL;
done:
    if (rv)
        dg_array_decref(rv);
    if (ri)
        dg_array_decref(ri);
    free(l);
    free(hv);
    free(hi);
    free(have);
    free(pv);
    free(pi);
    return st;
}

/* Adds `base` to every element of the int64 chunk c (one elementwise loop). */
static dg_status add_base(dg_backend_i *be, dg_chunk *c, int64_t base, dg_error *err)
{
    int dt[3] = {DG_INT64, DG_INT64, DG_INT64};
    dg_ew_desc d;
    int ax;
    memset(&d, 0, sizeof(d));
    d.loop = dg_loop_find(DG_UF_add, dt);
    d.nop = 3;
    d.ndim = c->box.ndim;
    for (ax = 0; ax < d.ndim; ax++) {
        d.shape[ax] = dg_range_len(c->box.r[ax]);
        d.strides[0][ax] = d.strides[2][ax] = c->strides[ax];
    }
    d.data[0] = d.data[2] = (char *)c->buf->ptr + c->offset;
    memcpy(d.scalar[1], &base, sizeof base);
    DG_CHECK(dg_buffer_use_write(be, c->buf, c->device, DG_STREAM_COMPUTE, err));
    DG_CHECK(be->elementwise(be, c->device, DG_STREAM_COMPUTE, &d, err));
    dg_buffer_mark_write(c->buf, be->pos(be, c->device, DG_STREAM_COMPUTE));
    return DG_OK;
}

/* Reduces one part into chunk rc of the result (and ic of the indices). */
static dg_status reduce_part(dg_array *a, const dg_reduce_call *c, const part *p,
                             dg_chunk *rc, dg_chunk *ic, dg_error *err)
{
    dg_backend_i *be = a->be;
    const dg_chunk *ch = &a->chunks[p->chunk];
    const int nd = a->ndim, dev = ch->device;
    int perm[DG_MAXDIM], nk = 0, nr = 0, ax, k;
    int64_t sstr[DG_MAXDIM], mult[DG_MAXDIM], m = 1, base = 0;
    char *sptr;
    dg_reduce_desc d;
    dg_region_src w = {NULL, NULL, {0}};
    dg_status st;

    for (ax = 0; ax < nd; ax++)
        if (!c->red[ax])
            perm[nk++] = ax;
    for (ax = 0; ax < nd; ax++)
        if (c->red[ax])
            perm[nk + nr++] = ax;
    /* flat C-order index over the reduced axes, in global coordinates */
    for (ax = nd - 1; ax >= 0; ax--) {
        mult[ax] = m;
        if (c->red[ax])
            m *= a->shape[ax];
    }
    dg_chunk_view(ch, &p->box, &sptr, sstr);
    memset(&d, 0, sizeof(d));
    d.kind = c->kind;
    d.loop = c->loop;
    d.dtype = a->dtype;
    d.ndim = nd;
    d.nred = nr;
    d.src = sptr;
    d.dst = (char *)rc->buf->ptr + rc->offset;
    d.has_init = c->has_init;
    memcpy(d.init, c->init, sizeof d.init);
    if (ic)
        d.idx = (int64_t *)((char *)ic->buf->ptr + ic->offset);
    for (k = 0; k < nd; k++) {
        ax = perm[k];
        d.shape[k] = dg_range_len(p->box.r[ax]);
        d.src_strides[k] = sstr[ax];
        if (k < nk) {
            d.dst_strides[k] = rc->strides[ax];
            if (ic)
                d.idx_strides[k] = ic->strides[ax];
        } else {
            d.idx_gstride[k] = p->box.r[ax].step * mult[ax];
            base += p->box.r[ax].start * mult[ax];
        }
    }
    if (c->where) {
        DG_CHECK(dg_fetch_region(c->where, &p->box, dev, DG_STREAM_COMPUTE, &w, err));
        d.where = (const dg_bool *)w.ptr;
        for (k = 0; k < nd; k++)
            d.where_strides[k] = w.strides[perm[k]];
        st = dg_buffer_use_read(be, w.buf, dev, DG_STREAM_COMPUTE, err);
        if (st != DG_OK)
            goto done;
    }
    DG_CHECK_GOTO(dg_buffer_use_read(be, ch->buf, dev, DG_STREAM_COMPUTE, err), st, done);
    DG_CHECK_GOTO(dg_buffer_use_write(be, rc->buf, dev, DG_STREAM_COMPUTE, err), st, done);
    if (ic)
        DG_CHECK_GOTO(dg_buffer_use_write(be, ic->buf, dev, DG_STREAM_COMPUTE, err), st, done);
    DG_CHECK_GOTO(be->reduce(be, dev, DG_STREAM_COMPUTE, &d, err), st, done);
    {
        dg_pos q = be->pos(be, dev, DG_STREAM_COMPUTE);
        dg_buffer_mark_read(ch->buf, q);
        dg_buffer_mark_write(rc->buf, q);
        if (ic)
            dg_buffer_mark_write(ic->buf, q);
        if (w.buf)
            dg_buffer_mark_read(w.buf, q);
    }
    if (ic && base != 0)
        st = add_base(be, ic, base, err);
done:
    if (w.buf)
        dg_buffer_decref(be, w.buf);
    return st;
}

dg_status dg_array_reduce(dg_array *a, const dg_reduce_call *c, dg_array **out,
                          dg_array **out_idx, dg_error *err)
{
    dg_backend_i *be = a->be;
    const int nd = a->ndim, arg = c->kind != DG_RED_LOOP;
    int64_t oshape[DG_MAXDIM];
    part *parts = NULL;
    int nparts = 0, i, j, ax, disjoint = 1;
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL, *ri = NULL;
    dg_status st;

    if (!be->reduce)
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "the %s backend has no reductions",
                            be->name);
    if (a->mode != DG_MODE_REPLICA)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "reduction of an array in an op mode");
    if (c->kind == DG_RED_LOOP) {
        if (c->loop < 0 || c->loop >= dg_nloops || dg_loops[c->loop].nin != 2 ||
            dg_loops[c->loop].nout != 1 || dg_loops[c->loop].dtypes[0] != a->dtype ||
            dg_loops[c->loop].dtypes[1] != a->dtype || dg_loops[c->loop].dtypes[2] != a->dtype)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "loop %d cannot reduce %s", c->loop, dg_dtype_name(a->dtype));
    } else if (c->kind != DG_RED_ARGMAX && c->kind != DG_RED_ARGMIN) {
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "unknown reduction kind %d", c->kind);
    }
    for (ax = 0; ax < nd; ax++)
        oshape[ax] = c->red[ax] ? 1 : a->shape[ax];

    DG_CHECK(owner_cover(a, &parts, &nparts, err));
    if (nparts == 0) {
        /* an empty input: every output element (if any) is the start value */
        dg_plan_chunk one;
        dg_fill_desc f;
        one.device = 0;
        dg_box_full(&one.box, nd, oshape);
        DG_CHECK_GOTO(dg_array_empty(be, a->dtype, nd, oshape, &one, 1, DG_MODE_REPLICA, &r,
                                     err), st, fail);
        memset(&f, 0, sizeof(f));
        f.kind = DG_FILL_CONST;
        memcpy(f.value, c->init, sizeof f.value);
        DG_CHECK_GOTO(dg_array_fill(r, &f, NULL, err), st, fail);
        if (arg) {
            DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, nd, oshape, &one, 1, DG_MODE_REPLICA,
                                         &ri, err), st, fail);
            memset(&f, 0, sizeof(f));
            f.kind = DG_FILL_CONST;
            DG_CHECK_GOTO(dg_array_fill(ri, &f, NULL, err), st, fail);
        }
        goto finish;
    }
    l = (dg_plan_chunk *)malloc((size_t)nparts * sizeof(dg_plan_chunk));
    if (!l) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto fail;
    }
    for (i = 0; i < nparts; i++) {
        l[i].device = a->chunks[parts[i].chunk].device;
        project(&parts[i].box, c->red, &l[i].box);
    }
    DG_CHECK_GOTO(dg_array_empty(be, a->dtype, nd, oshape, l, nparts, DG_MODE_REPLICA, &r, err),
                  st, fail);
    if (arg)
        DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, nd, oshape, l, nparts, DG_MODE_REPLICA, &ri,
                                     err), st, fail);
    for (i = 0; i < nparts; i++)
        DG_CHECK_GOTO(reduce_part(a, c, &parts[i], &r->chunks[i], arg ? &ri->chunks[i] : NULL,
                                  err), st, fail);
    for (i = 0; i < nparts && disjoint; i++)
        for (j = i + 1; j < nparts && disjoint; j++) {
            dg_box I;
            disjoint = !dg_box_intersect(&r->chunks[i].box, &r->chunks[j].box, &I);
        }
    if (!disjoint) {
        dg_array *v2 = NULL, *i2 = NULL;
        if (arg) {
            DG_CHECK_GOTO(combine_arg_on_host(r, ri, c->kind == DG_RED_ARGMIN, &v2, &i2, err),
                          st, fail);
            dg_array_decref(ri);
            ri = i2;
        } else if (c->lazy_mode > DG_MODE_REPLICA && c->lazy_mode < DG_NMODES) {
            r->mode = c->lazy_mode;
            goto finish;
        } else {
            DG_CHECK_GOTO(dg_array_combine(r, c->loop, &v2, err), st, fail);
        }
        dg_array_decref(r);
        r = v2;
    }
finish:
    if (!c->keepdims) {
        drop_axes(r, c->red);
        if (ri)
            drop_axes(ri, c->red);
    }
    free(parts);
    free(l);
    *out = r;
    if (out_idx)
        *out_idx = ri;
    else if (ri)
        dg_array_decref(ri);
    return DG_OK;
fail:
    free(parts);
    free(l);
    if (r)
        dg_array_decref(r);
    if (ri)
        dg_array_decref(ri);
    return st;
}
