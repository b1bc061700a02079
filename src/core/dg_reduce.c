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
 * own loop, or, for argmax / argmin, from the (value, index) pairs: in a
 * job of several processes by one all-reduce of the pairs (every process
 * then holds the result), else stacked on the first partial's device and
 * folded there, or on the host. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_fpe.h"
#include "dg_ufunc.h"

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
    dg_box_copy(&(*parts)[*n].box, b);
    (*n)++;
    return DG_OK;
}

/* The share of chunk i's box that i reduces when other chunks hold the very
 * same box (replicas): the box split in near-equal slices along its longest
 * kept axis (else its longest axis), one per holder, so that replicated data
 * is reduced by every device holding it.  rank: how many earlier chunks hold
 * the box, h: how many hold it (dg_box_equal_groups). */
static void replica_share(const dg_array *a, int i, int rank, int h, const unsigned char *red,
                          dg_box *out)
{
    const dg_box *b = &a->chunks[i].box;
    int ax, best = -1;
    int64_t n, len;
    dg_box_copy(out, b);
    if (h < 2)
        return;
    for (ax = 0; ax < b->ndim; ax++) {
        len = dg_range_len(b->r[ax]);
        if (best < 0 || (!red[ax] && (red[best] || len > dg_range_len(b->r[best]))) ||
            (red[ax] == red[best] && len > dg_range_len(b->r[best])))
            best = ax;
    }
    if (best < 0 || (n = dg_range_len(b->r[best])) < h)
        return;
    {
        dg_range r = b->r[best];
        int64_t lo = n * rank / h, hi = n * (rank + 1) / h;
        out->r[best] = dg_range_make(r.start + lo * r.step, r.start + hi * r.step, r.step);
    }
}

static int cmp_int(const void *pa, const void *pb)
{
    const int x = *(const int *)pa, y = *(const int *)pb;
    return (x > y) - (x < y);
}

/* cur (ncur parts of chunk i, malloc'ed, owned) less box sj: the pieces
 * left, in *cur / *ncur (the old array freed). */
static dg_status cut_parts(part **cur, int *ncur, int i, int j, const dg_box *sj, dg_error *err)
{
    part *nxt = NULL;
    int nn = 0, capn = 0, k;
    dg_status st = DG_OK;
    for (k = 0; k < *ncur && st == DG_OK; k++) {
        int64_t cnt = dg_box_subtract_count(&(*cur)[k].box, sj);
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
        st = dg_box_subtract(&(*cur)[k].box, sj, pieces, (int)cnt, &np, err);
        for (q = 0; q < np && st == DG_OK; q++)
            if (dg_box_size(&pieces[q]) > 0)
                st = push_part(&nxt, &nn, &capn, i, &pieces[q], err);
        free(pieces);
    }
    free(*cur);
    *cur = nxt;
    *ncur = st == DG_OK ? nn : 0;
    return st;
}

/* Disjoint non-empty boxes covering a, each inside one chunk: chunk i keeps
 * its share (replica_share; its box where no other chunk holds the same)
 * less the shares of chunks 0..i-1 that meet it.  The replicas are grouped
 * by one sort and the shares that meet a chunk's found through an index of
 * them (dg_box_index): n log n for layouts of many chunks, plus the work of
 * real overlaps.  *out malloc'ed. */
static dg_status owner_cover(const dg_array *a, const unsigned char *red, part **out,
                             int *nout, dg_error *err)
{
    const int n = a->nchunks;
    part *res = NULL, *cur = NULL;
    int nres = 0, capres = 0, *hits = NULL, nhits = 0, caphits = 0, nrep = 0;
    dg_status st = DG_OK;
    int i, k;
    dg_box *rep = NULL; /* the shares of replicated boxes */
    const dg_box **share = (const dg_box **)malloc(((size_t)n + 1) * sizeof(dg_box *));
    int *rank = (int *)malloc(((size_t)n + 1) * sizeof(int));
    int *count = (int *)malloc(((size_t)n + 1) * sizeof(int));
    dg_box_index x;

    memset(&x, 0, sizeof x);
    if (!share || !rank || !count) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0; i < n; i++)
        share[i] = &a->chunks[i].box;
    DG_CHECK_GOTO(dg_box_equal_groups(share, n, rank, count, err), st, done);
    for (i = 0; i < n; i++)
        nrep += count[i] > 1;
    if (nrep > 0 && !(rep = (dg_box *)malloc((size_t)nrep * sizeof(dg_box)))) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0, k = 0; i < n; i++)
        if (count[i] > 1) {
            replica_share(a, i, rank[i], count[i], red, &rep[k]);
            share[i] = &rep[k++];
        }
    DG_CHECK_GOTO(dg_box_index_build(&x, share, n, dg_box_index_axis(share, n), err), st, done);
    res = (part *)malloc(((size_t)n + 1) * sizeof(part)); /* as a rule, a part per chunk */
    if (!res) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    capres = n + 1;
    for (i = 0; i < n && st == DG_OK; i++) {
        int ncur = 0, capcur = 0;
        if (dg_box_size(&a->chunks[i].box) == 0)
            continue;
        nhits = 0;
        st = dg_box_index_query(&x, share[i], &hits, &nhits, &caphits, err);
        if (nhits > 1)
            qsort(hits, (size_t)nhits, sizeof(int), cmp_int);
        if (st == DG_OK && (nhits == 0 || hits[0] >= i)) { /* no earlier share meets it */
            st = push_part(&res, &nres, &capres, i, share[i], err);
            continue;
        }
        if (st == DG_OK)
            st = push_part(&cur, &ncur, &capcur, i, share[i], err);
        for (k = 0; k < nhits && st == DG_OK && ncur > 0 && hits[k] < i; k++)
            st = cut_parts(&cur, &ncur, i, hits[k], share[hits[k]], err);
        for (k = 0; k < ncur && st == DG_OK; k++)
            st = push_part(&res, &nres, &capres, i, &cur[k].box, err);
        free(cur);
        cur = NULL;
    }
done:
    dg_box_index_free(&x);
    free(hits);
    free(rep);
    free(share);
    free(rank);
    free(count);
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
    dg_box_copy(p, b);
    for (ax = 0; ax < b->ndim; ax++)
        if (red[ax])
            p->r[ax] = dg_range_make(0, 1, 1);
}

/* Hands (v, ix) over as *vout and *iout (ix is dropped where iout is NULL)
 * where st is DG_OK and v was made; drops them otherwise.  Returns st. */
static dg_status hand_pair(dg_status st, dg_array *v, dg_array *ix, dg_array **vout,
                           dg_array **iout)
{
    if (st == DG_OK && v) {
        *vout = v;
        v = NULL;
        if (iout) {
            *iout = ix;
            ix = NULL;
        }
    }
    if (v)
        dg_array_decref(v);
    if (ix)
        dg_array_decref(ix);
    return st;
}

/* ---- argmax / argmin on the host ------------------------------------------- */

/* The integer of sz (1, 2, 4 or 8) bytes at p, as unsigned. */
static uint64_t load_uint(const void *p, int sz)
{
    uint8_t u1;
    uint16_t u2;
    uint32_t u4;
    uint64_t u8;
    switch (sz) {
    case 1: memcpy(&u1, p, 1); return u1;
    case 2: memcpy(&u2, p, 2); return u2;
    case 4: memcpy(&u4, p, 4); return u4;
    default: memcpy(&u8, p, 8); return u8;
    }
}

/* The order of two values of `dtype` (host memory) as argmax and argmin see
 * it: < 0, 0 or > 0 as a is below, equal to or above b (-0.0 equal to 0.0;
 * complex values by real part, then imaginary part); *nan_a, *nan_b: 1 for
 * a NaN (a complex value with a NaN part), which the order leaves out. */
static int arg_order(int dtype, const void *a, const void *b, int *nan_a, int *nan_b)
{
    const int sz = dg_dtype_size(dtype);
    *nan_a = *nan_b = 0;
    switch (dg_dtype_kind(dtype)) {
    case 'b': {
        const int x = *(const unsigned char *)a != 0, y = *(const unsigned char *)b != 0;
        return x - y;
    }
    case 'i':
    case 'u': {
        /* a signed value with its sign bit flipped orders as unsigned */
        const uint64_t flip = dg_dtype_kind(dtype) == 'i' ? (uint64_t)1 << (8 * sz - 1) : 0;
        const uint64_t x = load_uint(a, sz) ^ flip, y = load_uint(b, sz) ^ flip;
        return (x > y) - (x < y);
    }
    case 'f':
        if (sz == 2) { /* IEEE half bits: sign and magnitude order the numbers */
            uint16_t x, y;
            int kx, ky;
            memcpy(&x, a, 2);
            memcpy(&y, b, 2);
            *nan_a = (x & 0x7fffu) > 0x7c00u;
            *nan_b = (y & 0x7fffu) > 0x7c00u;
            kx = (x & 0x8000u) ? -(int)(x & 0x7fffu) : (int)(x & 0x7fffu);
            ky = (y & 0x8000u) ? -(int)(y & 0x7fffu) : (int)(y & 0x7fffu);
            return (kx > ky) - (kx < ky);
        } else {
            double x, y;
            if (sz == 4) { float u, v; memcpy(&u, a, 4); memcpy(&v, b, 4); x = u; y = v; }
            else { memcpy(&x, a, 8); memcpy(&y, b, 8); }
            *nan_a = x != x;
            *nan_b = y != y;
            return (x > y) - (x < y);
        }
    case 'c': {
        double x[2], y[2];
        if (sz == 8) {
            float u[2], v[2];
            memcpy(u, a, 8);
            memcpy(v, b, 8);
            x[0] = u[0], x[1] = u[1], y[0] = v[0], y[1] = v[1];
        } else {
            memcpy(x, a, 16);
            memcpy(y, b, 16);
        }
        *nan_a = x[0] != x[0] || x[1] != x[1];
        *nan_b = y[0] != y[0] || y[1] != y[1];
        if (x[0] != y[0])
            return x[0] > y[0] ? 1 : -1;
        return (x[1] > y[1]) - (x[1] < y[1]);
    }
    default:
        return 0;
    }
}

/* 1 if a is a strictly better pick than b for argmax (is_min 0) or argmin:
 * a NaN beats every number (so the first NaN found wins), else the larger
 * (smaller) value.  The order the kernels use (dg_arg<max|min>_better). */
static int arg_better(int dtype, int is_min, const void *a, const void *b)
{
    int nan_a, nan_b;
    const int c = arg_order(dtype, a, b, &nan_a, &nan_b);
    if (nan_a || nan_b)
        return nan_a && !nan_b;
    return is_min ? c < 0 : c > 0;
}

/* Combines overlapping (value, index) partials of argmax / argmin on the
 * host: a new REPLICA value array and index array with the partials' layout. */
static dg_status combine_arg_on_host(dg_array *v, dg_array *ix, int is_min,
                                     dg_array **vout, dg_array **iout, dg_error *err)
{
    const int isz = dg_dtype_size(v->dtype), nd = v->ndim;
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
            if (!have[g] || arg_better(v->dtype, is_min, val, hv + g * isz) ||
                (!arg_better(v->dtype, is_min, hv + g * isz, val) && pi[e] < hi[g])) {
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
done:
    hand_pair(st, rv, ri, vout, iout);
    free(l);
    free(hv);
    free(hi);
    free(have);
    free(pv);
    free(pi);
    return st;
}

/* Folds the stack (sv, si on dev: np (value, index) pairs for each element
 * of box B, part after part) into one-chunk arrays of shape `shape` on dev. */
static dg_status fold_stack(dg_backend_i *be, int dtype, int nd, const int64_t *shape,
                            const dg_box *B, int np, int dev, int kind, dg_buffer *sv,
                            dg_buffer *si, dg_array **vout, dg_array **iout, dg_error *err)
{
    const int isz = dg_dtype_size(dtype);
    const int64_t n = dg_box_size(B);
    dg_plan_chunk one;
    dg_array *rv = NULL, *ri = NULL;
    dg_reduce_desc d;
    dg_access acc[4];
    dg_status st = DG_OK;
    int ax;

    one.device = dev;
    one.box = *B;
    DG_CHECK_GOTO(dg_array_empty(be, dtype, nd, shape, &one, 1, DG_MODE_REPLICA, &rv,
                                 err), st, done);
    DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, nd, shape, &one, 1, DG_MODE_REPLICA, &ri,
                                 err), st, done);
    /* dims: the box's (kept), then the stack (reduced) */
    memset(&d, 0, sizeof(d));
    d.kind = kind;
    d.dtype = dtype;
    d.ndim = nd + 1;
    d.nred = 1;
    d.src = (const char *)sv->ptr;
    d.dst = (char *)rv->chunks[0].buf->ptr;
    d.idx = (int64_t *)ri->chunks[0].buf->ptr;
    d.idx_in = (const int64_t *)si->ptr;
    for (ax = 0; ax < nd; ax++)
        d.shape[ax] = dg_range_len(B->r[ax]);
    dg_dense_strides(nd, d.shape, isz, d.src_strides);
    dg_dense_strides(nd, d.shape, (int64_t)sizeof(int64_t), d.idx_in_strides);
    memcpy(d.dst_strides, d.src_strides, sizeof(int64_t) * (size_t)nd);
    memcpy(d.idx_strides, d.idx_in_strides, sizeof(int64_t) * (size_t)nd);
    d.shape[nd] = np; /* the stack: part after part */
    d.src_strides[nd] = n * isz;
    d.idx_in_strides[nd] = n * (int64_t)sizeof(int64_t);
    acc[0] = dg_read(sv);
    acc[1] = dg_read(si);
    acc[2] = dg_write(rv->chunks[0].buf);
    acc[3] = dg_write(ri->chunks[0].buf);
    st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 4, dg_work_reduce(&d), err);
done:
    return hand_pair(st, rv, ri, vout, iout);
}

/* Combines overlapping (value, index) partials of argmax / argmin on the
 * device of the first, when every partial covers the same box: the pairs are
 * stacked there ([part, box...]) and folded over the stack by the backend's
 * reduce reading the indices (idx_in).  New one-chunk REPLICA arrays. */
static dg_status combine_arg_on_device(dg_array *v, dg_array *ix, int kind, dg_array **vout,
                                       dg_array **iout, dg_error *err)
{
    dg_backend_i *be = v->be;
    const int isz = dg_dtype_size(v->dtype), nd = v->ndim, np = v->nchunks;
    const int dev = v->chunks[0].device;
    const dg_box *B = &v->chunks[0].box;
    const int64_t n = dg_box_size(B);
    dg_buffer *sv = NULL, *si = NULL;
    dg_status st = DG_OK;
    int p, ax;

    DG_CHECK(dg_buffer_new(be, dev, (size_t)(n * np) * (size_t)isz, &sv, err));
    st = dg_buffer_new(be, dev, (size_t)(n * np) * sizeof(int64_t), &si, err);
    for (p = 0; p < np && st == DG_OK; p++) {
        const dg_chunk *cs[2] = {&v->chunks[p], &ix->chunks[p]};
        dg_buffer *dst[2] = {sv, si};
        int w;
        for (w = 0; w < 2 && st == DG_OK; w++) {
            const int es = w ? (int)sizeof(int64_t) : isz;
            dg_copy_desc cp;
            dg_access acc[2];
            memset(&cp, 0, sizeof(cp));
            cp.ndim = nd;
            cp.itemsize = es;
            for (ax = 0; ax < nd; ax++)
                cp.shape[ax] = dg_range_len(B->r[ax]);
            dg_dense_strides(nd, cp.shape, es, cp.dst_strides);
            cp.src_dev = cs[w]->device;
            dg_chunk_view(cs[w], B, (char **)&cp.src, cp.src_strides);
            cp.dst_dev = dev;
            cp.dst = (char *)dst[w]->ptr + (size_t)p * (size_t)n * (size_t)es;
            /* rows of the stack, one after another on dev's compute stream */
            acc[0] = dg_read(cs[w]->buf);
            acc[1] = dg_write(dst[w]);
            st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 2, dg_work_copy(&cp), err);
        }
    }
    if (st == DG_OK)
        st = fold_stack(be, v->dtype, nd, v->shape, B, np, dev, kind, sv, si, vout, iout, err);
    dg_buffer_decref(be, sv);
    if (si)
        dg_buffer_decref(be, si);
    return st;
}

/* 1 if every chunk of v has the same box. */
static int same_boxes(const dg_array *v)
{
    int i;
    for (i = 1; i < v->nchunks; i++)
        if (!dg_box_equal(&v->chunks[i].box, &v->chunks[0].box))
            return 0;
    return 1;
}

/* 1 if the partials r hold the same box, read in place on every device
 * holding one (dg_peer_read_bytes): one element, as a full reduction has. */
static int small_result(const dg_array *r)
{
    dg_backend_i *be = r->be;
    int i;
    if (dg_box_size(&r->chunks[0].box) != 1 || !same_boxes(r))
        return 0;
    for (i = 1; i < r->nchunks; i++)
        if (!dg_be_can_access(be, r->chunks[0].device, r->chunks[i].device))
            return 0;
    return dg_get_peer_read_bytes() >= (size_t)dg_dtype_size(r->dtype);
}

/* 1 where combining partials with `loop` may raise what NumPy's reduce
 * reports (an overflow or an invalid value of a sum or product of floats)
 * and the calling thread's errstate asks more than a warning of it: the
 * partials are then combined at the call (not left in an op mode), so that
 * it raises, calls or logs there, as NumPy's single reduction does. */
static int combine_now(int loop)
{
    const int uf = dg_loops[loop].ufunc;
    const char k = dg_dtype_kind(dg_loops[loop].dtypes[0]);
    return (uf == DG_UF_add || uf == DG_UF_multiply) && (k == 'f' || k == 'c') &&
           dg_fpe_strict(dg_fpe_actions());
}

/* The reduction of part p of a on its chunk (the kept axes first, then the
 * reduced ones, each group in order: perm[k] is the axis of dim k; *nk kept
 * dims), with no output, where mask or pass set. */
static void part_desc(const dg_array *a, const dg_reduce_call *c, const part *p, int *perm,
                      int *nk_out, dg_reduce_desc *d)
{
    const dg_chunk *ch = &a->chunks[p->chunk];
    const int nd = a->ndim;
    int nk = 0, nr = 0, ax, k;
    int64_t sstr[DG_MAXDIM], mult[DG_MAXDIM], m = 1, base = 0;
    char *sptr;

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
    memset(d, 0, sizeof(*d));
    d->kind = c->kind;
    d->loop = c->loop;
    d->dtype = a->dtype;
    d->ndim = nd;
    d->nred = nr;
    d->src = sptr;
    d->has_init = c->has_init;
    memcpy(d->init, c->init, sizeof d->init);
    for (k = 0; k < nd; k++) {
        ax = perm[k];
        d->shape[k] = dg_range_len(p->box.r[ax]);
        d->src_strides[k] = sstr[ax];
        if (k >= nk) {
            d->idx_gstride[k] = p->box.r[ax].step * mult[ax];
            base += p->box.r[ax].start * mult[ax];
        }
    }
    d->idx_base = base;
    *nk_out = nk;
}

/* Points the kept dims of d (perm: part_desc's) at chunk rc of the result
 * and ic of the indices. */
static void desc_output(dg_reduce_desc *d, const int *perm, int nk, dg_chunk *rc, dg_chunk *ic)
{
    int k;
    d->dst = (char *)rc->buf->ptr + rc->offset;
    if (ic)
        d->idx = (int64_t *)((char *)ic->buf->ptr + ic->offset);
    for (k = 0; k < nk; k++) {
        d->dst_strides[k] = rc->strides[perm[k]];
        if (ic)
            d->idx_strides[k] = ic->strides[perm[k]];
    }
}

/* Reduces one part into chunk rc of the result (and ic of the indices). */
static dg_status reduce_part(dg_array *a, const dg_reduce_call *c, const part *p,
                             dg_chunk *rc, dg_chunk *ic, dg_error *err)
{
    dg_backend_i *be = a->be;
    const dg_chunk *ch = &a->chunks[p->chunk];
    const int dev = ch->device;
    int perm[DG_MAXDIM], nk, k;
    dg_reduce_desc d;
    dg_region_src w = {NULL, NULL, {0}};
    dg_access acc[4];
    dg_status st;

    part_desc(a, c, p, perm, &nk, &d);
    desc_output(&d, perm, nk, rc, ic);
    if (c->where) {
        DG_CHECK(dg_fetch_region(c->where, &p->box, dev, DG_STREAM_COMPUTE, &w, err));
        d.where = (const dg_bool *)w.ptr;
        for (k = 0; k < a->ndim; k++)
            d.where_strides[k] = w.strides[perm[k]];
    }
    acc[0] = dg_read(w.buf);
    acc[1] = dg_read(ch->buf);
    acc[2] = dg_write(rc->buf);
    acc[3] = dg_write(ic ? ic->buf : NULL);
    st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 4, dg_work_reduce(&d), err);
    if (w.buf)
        dg_buffer_decref(be, w.buf);
    return st;
}

/* ---- partials stacked on one device ------------------------------------------ */

/* A stack of `rows` rows of m partials (dg_reduce_desc.pass) in one buffer:
 * the values, the indices (arg), the have bytes, each 16-byte aligned.
 * Returns its bytes; *ioff, *hoff: where the indices and have bytes start. */
static size_t stack_bytes(int64_t rows, int64_t m, int isz, int arg, size_t *ioff,
                          size_t *hoff)
{
    const size_t n = (size_t)rows * (size_t)m;
    *ioff = (n * (size_t)isz + 15) / 16 * 16;
    *hoff = *ioff + (arg ? n * sizeof(int64_t) : 0);
    return *hoff + n;
}

/* 1 if the parts (layout l) may leave their partials in one stack on the
 * first part's device, folded there by one last pass: at least two parts,
 * all reducing to the same non-empty box, no where mask, a backend that
 * folds stacks, and every device writing there in place. */
static int stackable(dg_backend_i *be, const dg_reduce_call *c, const dg_plan_chunk *l, int np)
{
    int i;
    if (np < 2 || c->where || !dg_be_has(be, DG_SLOT_REDUCE_PARTS) ||
        dg_box_size(&l[0].box) == 0)
        return 0;
    for (i = 1; i < np; i++)
        if (!dg_box_equal(&l[i].box, &l[0].box) ||
            !dg_be_can_access(be, l[i].device, l[0].device))
            return 0;
    return 1;
}

/* The first passes of a stacked reduction (reduce_stacked), as one group:
 * each part's descriptor is made when its pass is enqueued (a table of them
 * would be 2 KiB per part, 200 MB for 10^5 parts). */
typedef struct stack_group {
    const dg_array *a;
    const dg_reduce_call *c;
    const part *parts;
    const int64_t *row; /* each part's first row of the stack */
    int np, arg;
    char *base;         /* the stack: values, then indices at ioff, have at hoff */
    size_t ioff, hoff;
} stack_group;

/* Part i's PARTS pass into row row of the stack (base NULL: not placed yet,
 * for dg_be_reduce_parts); *nk: the kept dims (part_desc's perm in perm). */
static void stack_desc(const stack_group *g, int i, int64_t row, int *perm, int *nk,
                       dg_reduce_desc *d)
{
    part_desc(g->a, g->c, &g->parts[i], perm, nk, d); /* the same perm for every part */
    d->pass = DG_RED_PARTS;
    d->part_row = row;
    if (g->base) {
        d->part = g->base;
        d->part_idx = g->arg ? (int64_t *)(g->base + g->ioff) : NULL;
        d->part_have = (unsigned char *)g->base + g->hoff;
    }
}

/* Enqueues the first pass of every part on its chunk's device. */
static dg_status stack_parts(dg_backend_i *be, void *ctx, dg_error *err)
{
    const stack_group *g = (const stack_group *)ctx;
    int perm[DG_MAXDIM], nk, i;
    dg_reduce_desc d;
    for (i = 0; i < g->np; i++) {
        stack_desc(g, i, g->row[i], perm, &nk, &d);
        DG_CHECK(dg_be_reduce(be, g->a->chunks[g->parts[i].chunk].device, DG_STREAM_COMPUTE,
                              &d, err));
    }
    return DG_OK;
}

/* The parts (stackable) reduced by first passes that write their partials
 * straight into a stack on l[0]'s device (peer writes: no copies, no pass
 * per device to finish them), then one fold there into new one-chunk arrays
 * of shape oshape (*iout too for argmax / argmin).  *done = 0, nothing
 * enqueued, where the stack would be large: more than the peer-read limit
 * and more than 1/16 of the bytes reduced, unless each row is one value
 * small enough to read in place (a full reduction, small_result: unstacked,
 * the partials would be folded on one device all the same, each from a chunk
 * of its own, by dg_array_combine_one). */
static dg_status reduce_stacked(dg_array *a, const dg_reduce_call *c, const part *parts,
                                int np, const dg_plan_chunk *l, const int64_t *oshape,
                                dg_array **vout, dg_array **iout, int *done, dg_error *err)
{
    dg_backend_i *be = a->be;
    const int isz = dg_dtype_size(a->dtype), arg = c->kind != DG_RED_LOOP;
    const int dev = l[0].device;
    const int64_t m = dg_box_size(&l[0].box);
    int64_t *row = (int64_t *)malloc((size_t)np * sizeof(int64_t));
    int64_t reduced = 0, rows = 0, nrow = 0;
    size_t nbytes = 0;
    dg_access *acc = (dg_access *)malloc((size_t)(2 * np + 1) * sizeof(dg_access));
    dg_buffer *sb = NULL;
    dg_array *rv = NULL, *ri = NULL;
    dg_status st = DG_OK;
    int perm[DG_MAXDIM], i, nk = 0;
    dg_reduce_desc d;
    stack_group g;

    *done = 0;
    memset(&g, 0, sizeof g);
    g.a = a;
    g.c = c;
    g.parts = parts;
    g.row = row;
    g.np = np;
    g.arg = arg;
    if (!row || !acc) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto out;
    }
    /* each part's rows, and its accesses: a read of its chunk, a part write
     * of the stack (made below: one walk over the chunks, 1 KiB apart) */
    for (i = 0; i < np && st == DG_OK; i++) {
        const dg_chunk *ch = &a->chunks[parts[i].chunk];
        stack_desc(&g, i, rows, perm, &nk, &d);
        row[i] = rows;
        st = dg_be_reduce_parts(be, ch->device, &d, &nrow, err);
        rows += nrow;
        reduced += dg_box_size(&parts[i].box);
        acc[i] = dg_acc_on(NULL, DG_ACC_WRITE_PART, ch->device, DG_STREAM_COMPUTE);
        acc[np + i] = dg_acc_on(ch->buf, DG_ACC_READ, ch->device, DG_STREAM_COMPUTE);
    }
    if (st != DG_OK)
        goto out;
    nbytes = stack_bytes(rows, m, isz, arg, &g.ioff, &g.hoff);
    if ((m > 1 || dg_get_peer_read_bytes() < (size_t)isz) &&
        nbytes > dg_get_peer_read_bytes() && nbytes > (size_t)reduced * (size_t)isz / 16)
        goto out;
    *done = 1;
    DG_CHECK_GOTO(dg_buffer_new(be, dev, nbytes, &sb, err), st, out);
    DG_CHECK_GOTO(dg_array_empty(be, a->dtype, a->ndim, oshape, l, 1, DG_MODE_REPLICA, &rv,
                                 err), st, out);
    if (arg)
        DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, a->ndim, oshape, l, 1, DG_MODE_REPLICA,
                                     &ri, err), st, out);
    g.base = (char *)sb->ptr;
    /* one group: every device waits for the stack's memory before any part
     * writes it, and the part writes do not wait for one another */
    for (i = 0; i < np; i++)
        acc[i].mem = sb->mem;
    DG_CHECK_GOTO(dg_enqueue_group(be, acc, 2 * np, stack_parts, &g, err), st, out);
    /* the fold: the kept dims alone, read from the stack */
    stack_desc(&g, 0, 0, perm, &nk, &d);
    d.pass = DG_RED_FOLD;
    d.ndim = nk;
    d.nred = 0;
    d.src = NULL;
    d.part_rows = rows;
    desc_output(&d, perm, nk, &rv->chunks[0], ri ? &ri->chunks[0] : NULL);
    acc[0] = dg_read(sb);
    acc[1] = dg_write(rv->chunks[0].buf);
    acc[2] = dg_write(ri ? ri->chunks[0].buf : NULL);
    st = dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 3, dg_work_reduce(&d), err);
out:
    hand_pair(st, rv, ri, vout, iout);
    if (sb)
        dg_buffer_decref(be, sb);
    free(row);
    free(acc);
    return st;
}

dg_status dg_array_reduce(dg_array *a, const dg_reduce_call *c, dg_array **out,
                          dg_array **out_idx, dg_error *err)
{
    dg_backend_i *be = a->be;
    const int nd = a->ndim, arg = c->kind != DG_RED_LOOP;
    int64_t oshape[DG_MAXDIM];
    part *parts = NULL;
    int nparts = 0, i, ax, disjoint = 1;
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL, *ri = NULL;
    dg_status st;

    DG_CHECK(dg_be_need(be, DG_SLOT_REDUCE, err));
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

    DG_CHECK(owner_cover(a, c->red, &parts, &nparts, err));
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
    if (stackable(be, c, l, nparts)) {
        int done = 0;
        DG_CHECK_GOTO(reduce_stacked(a, c, parts, nparts, l, oshape, &r, arg ? &ri : NULL,
                                     &done, err), st, fail);
        if (done)
            goto finish;
    }
    DG_CHECK_GOTO(dg_array_empty(be, a->dtype, nd, oshape, l, nparts, DG_MODE_REPLICA, &r, err),
                  st, fail);
    if (arg)
        DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, nd, oshape, l, nparts, DG_MODE_REPLICA, &ri,
                                     err), st, fail);
    for (i = 0; i < nparts; i++)
        DG_CHECK_GOTO(reduce_part(a, c, &parts[i], &r->chunks[i], arg ? &ri->chunks[i] : NULL,
                                  err), st, fail);
    {
        const dg_box **rb = (const dg_box **)malloc((size_t)(nparts > 0 ? nparts : 1) * sizeof(dg_box *));
        if (!rb) {
            st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            goto fail;
        }
        for (i = 0; i < nparts; i++)
            rb[i] = &r->chunks[i].box;
        st = dg_boxes_disjoint(rb, nparts, &disjoint, err);
        free(rb);
        if (st != DG_OK)
            goto fail;
    }
    if (!disjoint) {
        dg_array *v2 = NULL, *i2 = NULL;
        if (arg) {
            /* in a job, one exchange leaving the pairs on every process;
             * else stacked on the first device, or on the host */
            st = dg_array_combine_arg(r, ri, c->kind, &v2, &i2, err);
            if (st == DG_ERR_NOTIMPL && (be->flags & DG_BE_IDX_IN) && same_boxes(r))
                st = combine_arg_on_device(r, ri, c->kind, &v2, &i2, err);
            else if (st == DG_ERR_NOTIMPL)
                st = combine_arg_on_host(r, ri, c->kind == DG_RED_ARGMIN, &v2, &i2, err);
            if (st != DG_OK)
                goto fail;
            dg_array_decref(ri);
            ri = i2;
        } else if (small_result(r)) {
            /* a few values (a full reduction): combined at once on one
             * device, reading the other partials in place, cheaper than a
             * lazy mode resolved on every device when read */
            DG_CHECK_GOTO(dg_array_combine_one(r, c->loop, &v2, err), st, fail);
        } else if (c->lazy_mode > DG_MODE_REPLICA && c->lazy_mode < DG_NMODES &&
                   !combine_now(c->loop)) {
            /* combined when read, under this call's errstate: its warnings
             * come then (as a deferred fused chain's do) */
            r->mode = c->lazy_mode;
            r->has_mode_fpe = 1;
            r->mode_fpe = dg_fpe_actions();
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
