/* Counts into bins (dg_array_count): every chunk of the input is counted on
 * its device into that device's own set of bins, zeroed first; the sets of
 * several devices are the partials of a SUM-mode result, combined when
 * read (one all-reduce of nbins counters), so only the bins cross devices.
 * Chunks that overlap count each element once, where it lies (own_pieces):
 * no data moves for a replicated or overlapping layout. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_surface.h"

/* The index of the first chunk of x whose box holds the same elements as
 * chunk i's (i itself if none before it does). */
static int first_copy(const dg_array *x, int i)
{
    int j;
    for (j = 0; j < i; j++)
        if (dg_box_equal(&x->chunks[j].box, &x->chunks[i].box))
            return j;
    return i;
}

/* The pieces of x that chunk i counts, malloc'ed into *out (*n of them):
 * the part of its box that no box met earlier holds (boxes in the order of
 * their first chunks), each piece cut into as many slices as there are
 * chunks of this very box (its copies) and slice `rank` kept (this chunk's
 * rank among the copies), along the piece's longest axis.  Every copy of a
 * box takes the same remainder, so every element is counted once, and the
 * copies of a replicated block share its work. */
static dg_status own_pieces(const dg_array *x, int i, dg_box **out, int *n, dg_error *err)
{
    const dg_box *bi = &x->chunks[i].box;
    const int first = first_copy(x, i);
    dg_box *p, *q;
    int j, t, m = 1, copies = 0, rank = 0;

    *out = NULL;
    *n = 0;
    if (!(p = (dg_box *)malloc(sizeof *p)))
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    p[0] = *bi;
    dg_box_canon(&p[0]);
    for (j = 0; j < x->nchunks; j++) {
        const dg_box *bj = &x->chunks[j].box;
        int64_t need = 0;
        int k = 0;
        if (dg_box_equal(bi, bj)) {
            rank += j < i;
            copies++;
            continue;
        }
        if (j > first || m == 0 || first_copy(x, j) != j)
            continue; /* a later box, or one already taken away */
        for (t = 0; t < m; t++)
            need += dg_box_subtract_count(&p[t], bj);
        if (need > INT_MAX / 2) {
            free(p);
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "a count of too many pieces");
        }
        if (!(q = (dg_box *)malloc((size_t)(need > 0 ? need : 1) * sizeof *q))) {
            free(p);
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        }
        for (t = 0; t < m; t++) {
            int got = 0;
            dg_status st = dg_box_subtract(&p[t], bj, q + k, (int)need - k, &got, err);
            if (st != DG_OK) {
                free(p);
                free(q);
                return st;
            }
            k += got;
        }
        free(p);
        p = q;
        m = k;
    }
    for (t = 0, j = 0; t < m; t++) {
        dg_box b = p[t];
        int ax, best = 0;
        int64_t len, lo, hi;
        for (ax = 1; ax < b.ndim; ax++)
            if (dg_range_len(b.r[ax]) > dg_range_len(b.r[best]))
                best = ax;
        if (b.ndim > 0 && copies > 1) {
            const dg_range r = b.r[best];
            len = dg_range_len(r);
            lo = len * rank / copies;
            hi = len * (rank + 1) / copies;
            b.r[best] = dg_range_make(r.start + lo * r.step, r.start + hi * r.step, r.step);
        } else if (copies > 1 && rank > 0) {
            continue; /* a 0-d element: the first copy counts it */
        }
        if (dg_box_size(&b) > 0)
            p[j++] = b;
    }
    *out = p;
    *n = j;
    return DG_OK;
}

/* The layout of the bins: one chunk of all of them on each device holding a
 * non-empty chunk of x (on x's first device if none does), at [0, nbins),
 * or the j-th at [j nbins, (j + 1) nbins) where `apart`.  *l malloc'ed. */
static dg_status bins_layout(const dg_array *x, int64_t nbins, int apart, dg_plan_chunk **l,
                             int *n, dg_error *err)
{
    int i, j;
    *n = 0;
    *l = (dg_plan_chunk *)calloc((size_t)(x->nchunks > 0 ? x->nchunks : 1), sizeof **l);
    if (!*l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i <= x->nchunks; i++) {
        int dev;
        if (i < x->nchunks && dg_box_size(&x->chunks[i].box) == 0)
            continue;
        if (i == x->nchunks && *n > 0)
            break;
        dev = i < x->nchunks ? x->chunks[i].device : (x->nchunks ? x->chunks[0].device : 0);
        for (j = 0; j < *n && (*l)[j].device != dev; j++)
            ;
        if (j < *n)
            continue;
        (*l)[*n].device = dev;
        (*l)[*n].box.ndim = 1;
        (*l)[*n].box.r[0] = apart ? dg_range_make(*n * nbins, (*n + 1) * nbins, 1)
                                  : dg_range_make(0, nbins, 1);
        (*n)++;
    }
    return DG_OK;
}

/* The chunk of the bins on dev. */
static dg_chunk *bins_on(dg_array *r, int dev)
{
    int k;
    for (k = 0; k < r->nchunks && r->chunks[k].device != dev; k++)
        ;
    return &r->chunks[k];
}

/* Counts region `box` of chunk i of x (and the same elements of w, read in
 * place where its device holds them, else fetched there) into its device's
 * bins. */
static dg_status count_chunk(dg_array *x, dg_array *w, int i, const dg_box *box,
                             const dg_count_spec *spec, dg_array *r, dg_error *err)
{
    dg_backend_i *be = x->be;
    const dg_chunk *c = &x->chunks[i];
    dg_chunk *bc = bins_on(r, c->device);
    const int dev = c->device;
    dg_region_src wr = {NULL, NULL, {0}}, er = {NULL, NULL, {0}};
    dg_count_desc d;
    dg_status st;
    char *p;
    int ax;
    dg_access acc[4];

    memset(&d, 0, sizeof d);
    d.radix = spec->radix;
    d.dtype = x->dtype;
    d.ndim = x->ndim;
    d.shift = spec->shift;
    d.pshift = spec->pshift;
    d.prefix = spec->prefix;
    d.nprefix = spec->nprefix;
    d.prefix2 = spec->prefix2;
    d.nbins = spec->nbins;
    for (ax = 0; ax < x->ndim; ax++)
        d.shape[ax] = dg_range_len(box->r[ax]);
    dg_chunk_view(c, box, &p, d.src_strides);
    d.src = p;
    if (w) {
        DG_CHECK(dg_fetch_region(w, box, dev, DG_STREAM_COMPUTE, &wr, err));
        d.weight = (const double *)wr.ptr;
        memcpy(d.weight_strides, wr.strides, sizeof d.weight_strides);
    }
    if (spec->radix == DG_COUNT_EDGES) {
        dg_box all;
        dg_box_full(&all, 1, spec->edges->shape);
        DG_CHECK_GOTO(dg_fetch_region(spec->edges, &all, dev, DG_STREAM_COMPUTE, &er, err), st,
                      done);
        d.edges = er.ptr;
        if (spec->nbins > 0 && er.strides[0] != dg_dtype_size(x->dtype)) {
            st = dg_error_set(err, DG_ERR_INTERNAL, dev, "the edges of a count must be dense");
            goto done;
        }
    }
    p = (char *)bc->buf->ptr + bc->offset;
    if (w || spec->radix == DG_COUNT_SQUARES)
        d.sum = (double *)p;
    else
        d.cnt = (int64_t *)p;
    acc[0] = dg_read(c->buf);
    acc[1] = dg_read(wr.buf);
    acc[2] = dg_read(er.buf);
    acc[3] = dg_write(bc->buf);
    DG_CHECK_GOTO(dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 4, dg_work_count(&d), err), st,
                  done);
    st = DG_OK;
done:
    if (wr.buf)
        dg_buffer_decref(be, wr.buf);
    if (er.buf)
        dg_buffer_decref(be, er.buf);
    return st;
}

dg_status dg_array_count(dg_array *x, dg_array *w, const dg_count_spec *spec, dg_array **out,
                         dg_error *err)
{
    dg_backend_i *be = x->be;
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL;
    dg_fill_desc zero;
    dg_status st;
    int i, n = 0;
    const int64_t nbins = spec->nbins;
    int64_t len;

    *out = NULL;
    DG_CHECK(dg_be_need(be, DG_SLOT_COUNT, err));
    if (nbins < 0 || x->mode != DG_MODE_REPLICA ||
        (spec->radix == DG_COUNT_BINS && x->dtype != DG_INT64) ||
        (spec->radix == DG_COUNT_RADIX && (nbins < 1 || (nbins & (nbins - 1)) || w)) ||
        spec->nprefix < 0 || spec->nprefix > 2 ||
        (spec->nprefix == 2 && (spec->radix != DG_COUNT_RADIX || nbins < 2 || spec->pshift >= 64)) ||
        (spec->radix == DG_COUNT_EDGES &&
         (!spec->edges || spec->edges->ndim != 1 || spec->edges->dtype != x->dtype ||
          spec->edges->shape[0] != nbins + 1 || spec->edges->mode != DG_MODE_REPLICA ||
          dg_dtype_kind(x->dtype) != 'f')) ||
        (spec->apart && w) ||
        (spec->radix == DG_COUNT_SQUARES &&
         (w || dg_dtype_kind(x->dtype) != 'f' || nbins < 1)) ||
        (w && (w->dtype != DG_FLOAT64 || w->mode != DG_MODE_REPLICA || w->ndim != x->ndim ||
               memcmp(w->shape, x->shape, (size_t)x->ndim * sizeof(int64_t)) != 0)))
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a malformed count");
    DG_CHECK(bins_layout(x, nbins, spec->apart, &l, &n, err));
    len = spec->apart ? n * nbins : nbins;
    DG_CHECK_GOTO(dg_array_empty(be, w || spec->radix == DG_COUNT_SQUARES ? DG_FLOAT64 : DG_INT64,
                                 1, &len, l, n,
                                 n > 1 && !spec->apart ? DG_MODE_SUM : DG_MODE_REPLICA, &r,
                                 err), st, done);
    memset(&zero, 0, sizeof zero);
    zero.kind = DG_FILL_CONST;
    DG_CHECK_GOTO(dg_array_fill(r, &zero, NULL, err), st, done);
    for (i = 0; i < x->nchunks && nbins > 0; i++) {
        dg_box *pieces = NULL;
        int k, np = 0;
        if (dg_box_size(&x->chunks[i].box) == 0)
            continue;
        DG_CHECK_GOTO(own_pieces(x, i, &pieces, &np, err), st, done);
        for (k = 0, st = DG_OK; k < np && st == DG_OK; k++)
            st = count_chunk(x, w, i, &pieces[k], spec, r, err);
        free(pieces);
        if (st != DG_OK)
            goto done;
    }
    *out = r;
    r = NULL;
done:
    free(l);
    if (r)
        dg_array_decref(r);
    return st;
}

/* Points d->part[p] at set p of the bins rb (nparts sets of nbins, dense
 * int64) where it can be read in place from dev (a chunk there, else one
 * on a device dev can access), each buffer read added to acc (*nacc);
 * 0 (d->part untouched) where some set cannot be. */
static int bins_in_place(dg_backend_i *be, dg_array *rb, int64_t nbins, int64_t nparts, int dev,
                         dg_select_desc *d, dg_access *acc, int *nacc)
{
    const int64_t *part[DG_SELECT_PARTS];
    dg_buffer *bufs[DG_SELECT_PARTS];
    int p, i, k, n = 0;
    if (nparts < 2 || nparts > DG_SELECT_PARTS || rb->ndim != 1)
        return 0;
    for (p = 0; p < nparts; p++) {
        const dg_chunk *best = NULL;
        for (i = 0; i < rb->nchunks; i++) {
            const dg_chunk *c = &rb->chunks[i];
            const dg_range r = c->box.r[0];
            if (r.start > p * nbins || dg_range_len(r) < 1 ||
                r.start + dg_range_len(r) * r.step < (p + 1) * nbins ||
                (dg_range_len(r) > 1 && (r.step != 1 || c->strides[0] != 8)))
                continue;
            if (c->device == dev) {
                best = c;
                break;
            }
            if (!best && dg_be_can_access(be, dev, c->device))
                best = c;
        }
        if (!best)
            return 0;
        part[p] = (const int64_t *)((const char *)best->buf->ptr + best->offset) +
                  (p * nbins - best->box.r[0].start);
        bufs[p] = best->buf;
    }
    for (p = 0; p < nparts; p++) {
        d->part[p] = part[p];
        for (k = 0; k < n && bufs[k] != bufs[p]; k++)
            ;
        if (k == n)
            bufs[n++] = bufs[p];
    }
    for (k = 0; k < n; k++)
        acc[(*nacc)++] = dg_read(bufs[k]);
    return 1;
}

/* One piece of x that a device takes in a keyed gathering: chunk i's region
 * `box`, and its places in the result. */
typedef struct keep_piece {
    int chunk;
    dg_box box;
    int64_t len;
} keep_piece;

/* The pieces of x (own_pieces of every chunk), each with min(its size, cap)
 * places; malloc'ed into *out (*n of them). */
static dg_status keep_pieces(const dg_array *x, int64_t cap, keep_piece **out, int *n,
                             dg_error *err)
{
    keep_piece *kp = NULL;
    int i, k, cnt = 0, room = 0;
    *out = NULL;
    *n = 0;
    for (i = 0; i < x->nchunks; i++) {
        dg_box *pieces = NULL;
        int np = 0;
        dg_status st;
        if (dg_box_size(&x->chunks[i].box) == 0)
            continue;
        st = own_pieces(x, i, &pieces, &np, err);
        if (st == DG_OK && cnt + np > room) {
            keep_piece *t = (keep_piece *)realloc(kp, (size_t)(2 * (cnt + np) + 4) * sizeof *kp);
            if (t) {
                kp = t;
                room = 2 * (cnt + np) + 4;
            } else {
                st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            }
        }
        if (st != DG_OK) {
            free(pieces);
            free(kp);
            return st;
        }
        for (k = 0; k < np; k++) {
            const int64_t size = dg_box_size(&pieces[k]);
            kp[cnt].chunk = i;
            kp[cnt].box = pieces[k];
            kp[cnt].len = size < cap ? size : cap;
            cnt++;
        }
        free(pieces);
    }
    *out = kp;
    *n = cnt;
    return DG_OK;
}

dg_status dg_array_keep_keys(dg_array *x, int pshift, uint64_t lo, uint64_t hi, int64_t cap,
                             const unsigned char pad[16], dg_array *bins, int64_t nbins,
                             const int64_t rank[2], const double *q, int whole,
                             dg_array **out, dg_array **counts, dg_error *err)
{
    dg_backend_i *be = x->be;
    keep_piece *kp = NULL;
    dg_plan_chunk *l = NULL, *lc = NULL;
    dg_array *r = NULL, *cnt = NULL, *rb = NULL;
    dg_fill_desc fill;
    dg_status st = DG_OK;
    dg_box ball;
    int64_t total = 0, npieces;
    int i, n = 0;
    const char kind = dg_dtype_kind(x->dtype);
    const int isz = dg_dtype_size(x->dtype);

    *out = NULL;
    if (counts)
        *counts = NULL;
    DG_CHECK(dg_be_need(be, DG_SLOT_SELECT, err));
    if (x->mode != DG_MODE_REPLICA || pshift < 0 || pshift >= 64 || cap < 1 || lo > hi ||
        (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') || (!bins && !pad) ||
        (bins && (bins->dtype != DG_INT64 || bins->ndim != 1 || !rank || rank[0] > rank[1] ||
                  (q && !(*q >= 0.0 && *q <= 1.0)) ||
                  nbins < 0 || (nbins > 0 && bins->shape[0] % nbins != 0))) ||
        ((whole || q) && !bins))
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a malformed keyed gathering");
    if (bins) {
        DG_CHECK(dg_array_change_mode(bins, DG_MODE_REPLICA, &rb, err));
        dg_box_full(&ball, 1, rb->shape);
    }
    DG_CHECK_GOTO(keep_pieces(x, cap, &kp, &n, err), st, done);
    l = (dg_plan_chunk *)calloc((size_t)(n > 0 ? n : 1), sizeof *l);
    lc = (dg_plan_chunk *)calloc((size_t)(n > 0 ? n : 1), sizeof *lc);
    if (!l || !lc) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (i = 0; i < n; i++) {
        l[i].device = lc[i].device = x->chunks[kp[i].chunk].device;
        l[i].box.ndim = lc[i].box.ndim = 1;
        l[i].box.r[0] = dg_range_make(total, total + kp[i].len, 1);
        lc[i].box.r[0] = dg_range_make(i, i + 1, 1);
        total += kp[i].len;
    }
    if (n == 0) { /* x holds nothing: one empty chunk */
        l[0].device = lc[0].device = x->nchunks > 0 ? x->chunks[0].device : 0;
        l[0].box.ndim = lc[0].box.ndim = 1;
        l[0].box.r[0] = lc[0].box.r[0] = dg_range_make(0, 0, 1);
    }
    npieces = n;
    DG_CHECK_GOTO(dg_array_empty(be, x->dtype, 1, &total, l, n > 0 ? n : 1, DG_MODE_REPLICA,
                                 &r, err), st, done);
    DG_CHECK_GOTO(dg_array_empty(be, DG_INT64, 1, &npieces, lc, n > 0 ? n : 1, DG_MODE_REPLICA,
                                 &cnt, err), st, done);
    if (pad) {
        memset(&fill, 0, sizeof fill);
        fill.kind = DG_FILL_CONST;
        memcpy(fill.value, pad, 16);
        DG_CHECK_GOTO(dg_array_fill(r, &fill, NULL, err), st, done);
    }
    for (i = 0; i < n; i++) {
        const dg_chunk *c = &x->chunks[kp[i].chunk];
        const dg_chunk *rc = &r->chunks[i];
        const dg_chunk *cc = &cnt->chunks[i];
        dg_region_src bs = {NULL, NULL, {0}};
        dg_select_desc d;
        dg_access acc[4 + DG_SELECT_PARTS];
        char *p;
        int ax, nacc = 4;
        memset(&d, 0, sizeof d);
        if (rb) {
            d.nbins = nbins > 0 ? nbins : rb->shape[0];
            d.nparts = d.nbins > 0 ? rb->shape[0] / d.nbins : 1;
            d.whole = whole;
            if (bins_in_place(be, rb, d.nbins, d.nparts, c->device, &d, acc, &nacc)) {
                d.bins = d.part[0]; /* each device's set read where it is */
            } else {
                DG_CHECK_GOTO(dg_fetch_region(rb, &ball, c->device, DG_STREAM_COMPUTE, &bs,
                                              err), st, done);
                if (rb->shape[0] > 1 && bs.strides[0] != 8) {
                    dg_buffer_decref(be, bs.buf);
                    st = dg_error_set(err, DG_ERR_INTERNAL, c->device, "the bins must be dense");
                    goto done;
                }
                d.bins = (const int64_t *)bs.ptr;
            }
            d.rank[0] = rank[0];
            d.rank[1] = rank[1];
            d.rest = q != NULL;
            d.q = q ? *q : 0.0;
        }
        d.ndim = x->ndim;
        d.itemsize = isz;
        for (ax = 0; ax < x->ndim; ax++)
            d.shape[ax] = dg_range_len(kp[i].box.r[ax]);
        dg_chunk_view(c, &kp[i].box, &p, d.src_strides);
        d.src = p;
        d.dst = (char *)rc->buf->ptr + rc->offset;
        d.count = (int64_t *)((char *)cc->buf->ptr + cc->offset);
        d.keyed = 1;
        d.dtype = x->dtype;
        d.pshift = pshift;
        d.lo = lo;
        d.hi = hi;
        /* whole: cap is the bound on them all (none kept above it), and
         * then no piece keeps more than its places */
        d.cap = whole ? cap : kp[i].len;
        acc[0] = dg_read(c->buf);
        acc[1] = dg_write(rc->buf);
        acc[2] = dg_write(cc->buf);
        acc[3] = dg_read(bs.buf);
        st = dg_enqueue(be, c->device, DG_STREAM_COMPUTE, acc, nacc, dg_work_select(&d), err);
        if (bs.buf)
            dg_buffer_decref(be, bs.buf);
        if (st != DG_OK)
            goto done;
    }
    *out = r;
    r = NULL;
    if (counts) {
        *counts = cnt;
        cnt = NULL;
    }
done:
    free(kp);
    free(l);
    free(lc);
    if (r)
        dg_array_decref(r);
    if (cnt)
        dg_array_decref(cnt);
    if (rb)
        dg_array_decref(rb);
    return st;
}
