/* Keyed gathers and scatters of rows across devices (dg_array_take_rows,
 * dg_array_put_rows): take, put and integer-array indexing.
 *
 * The keys (int64 row numbers) live in the chunks of a 1-d index array; the
 * rows in the chunks of the data array, each chunk a box of rows B0 times a
 * box of the other axes.  For a chunk of keys on device d:
 *   - every chunk of rows on d (and, when the keys are few, on a peer d
 *     reads in place) is served by one keyed copy there, which skips the
 *     keys outside the chunk's rows;
 *   - for every other chunk, d routes the keys that fall in it (their row
 *     numbers within the chunk and their positions) into two lists, whose
 *     lengths come to the host once for all chunks (one synchronisation);
 *     one exchange group carries the row lists to the devices holding the
 *     rows (and, for a scatter, the rows themselves), which copy the rows,
 *     and for a gather a second exchange group brings them back, where a
 *     keyed copy by position puts them in place.
 * A gather reads each row from one chunk (the planner's disjoint cover of
 * the data, local chunks first); a scatter writes every chunk holding the
 * row, so replicas stay equal. */
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_index.h"

/* Where the rows of one side of a keyed copy are. */
typedef struct rows_side {
    dg_buffer *buf; /* borrowed */
    char *ptr;
    int64_t rstride;
    int64_t strides[DG_MAXDIM];
} rows_side;

/* The rows `rows` of chunk c restricted to the other axes of box B: row i
 * of the side is index rows.start + i * rows.step of c's first axis. */
static void side_of(const dg_chunk *c, dg_range rows, const dg_box *B, rows_side *s)
{
    dg_box L = *B;
    int64_t st[DG_MAXDIM];
    L.r[0] = rows;
    dg_chunk_view(c, &L, &s->ptr, st);
    s->buf = c->buf;
    s->rstride = st[0];
    memcpy(s->strides, st + 1, (size_t)(DG_MAXDIM - 1) * sizeof(int64_t));
}

/* Bytes of one row of box B (its axes after the first) of isz-byte items. */
static int64_t row_bytes(const dg_box *B, int isz)
{
    int64_t n = isz;
    int a;
    for (a = 1; a < B->ndim; a++)
        n *= dg_range_len(B->r[a]);
    return n;
}

/* Dense rows of box B's other axes in buffer b. */
static void side_dense(dg_buffer *b, const dg_box *B, int isz, rows_side *s)
{
    int64_t st = isz;
    int a;
    memset(s, 0, sizeof(*s));
    s->buf = b;
    s->ptr = (char *)b->ptr;
    s->rstride = row_bytes(B, isz);
    for (a = B->ndim - 1; a >= 1; a--) {
        s->strides[a - 1] = st;
        st *= dg_range_len(B->r[a]);
    }
}

/* Enqueues on dev the keyed copy of the n keys at kptr (in kbuf) in range
 * `rg`, rows of B's other axes, from side src to side dst. */
static dg_status enqueue_rows(dg_backend_i *be, int dev, int scatter, dg_buffer *kbuf,
                              const int64_t *kptr, int64_t n, dg_range rg, const dg_box *B,
                              int isz, const rows_side *src, const rows_side *dst,
                              dg_error *err)
{
    dg_rows_desc d;
    dg_access acc[3];
    int a;
    if (n == 0)
        return DG_OK;
    memset(&d, 0, sizeof d);
    d.scatter = scatter;
    d.n = n;
    d.key = kptr;
    d.start = rg.start;
    d.stop = rg.stop;
    d.step = rg.step;
    d.itemsize = isz;
    d.ndim = B->ndim - 1;
    for (a = 1; a < B->ndim; a++)
        d.shape[a - 1] = dg_range_len(B->r[a]);
    d.src = src->ptr;
    d.src_rstride = src->rstride;
    memcpy(d.src_strides, src->strides, sizeof(d.src_strides));
    d.dst = dst->ptr;
    d.dst_rstride = dst->rstride;
    memcpy(d.dst_strides, dst->strides, sizeof(d.dst_strides));
    acc[0] = dg_read(kbuf);
    acc[1] = dg_read(src->buf);
    acc[2] = dg_write_part(dst->buf);
    return dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, 3, dg_work_rows(&d), err);
}

/* Enqueues on dev the keyed copy between the rows `rows` of chunk ch (box
 * B's other axes) and the dense rows of buffer `dense`: a gather of ch's
 * rows into dense (scatter 0) or a scatter of dense into them, the c keys
 * (in kbuf) numbering ch's rows from 0 to nrows. */
static dg_status rows_dense(dg_backend_i *be, int dev, int scatter, dg_buffer *kbuf, int64_t c,
                            int64_t nrows, const dg_chunk *ch, dg_range rows, const dg_box *B,
                            int isz, dg_buffer *dense, dg_error *err)
{
    rows_side cs, ds;
    side_of(ch, rows, B, &cs);
    side_dense(dense, B, isz, &ds);
    return enqueue_rows(be, dev, scatter, kbuf, (const int64_t *)kbuf->ptr, c,
                        dg_range_make(0, nrows, 1), B, isz, scatter ? &ds : &cs,
                        scatter ? &cs : &ds, err);
}

/* The keys of 1-d index chunk c dense on its device: its own buffer (a new
 * reference) when its view is dense, else a copy. */
static dg_status dense_keys(dg_backend_i *be, const dg_chunk *c, dg_buffer **buf,
                            const int64_t **ptr, dg_error *err)
{
    char *p;
    int64_t st;
    dg_move mv;
    dg_move_item it;
    dg_status s;
    dg_chunk_view(c, &c->box, &p, &st);
    if (st == 8 || dg_range_len(c->box.r[0]) <= 1) {
        *buf = c->buf;
        c->buf->refcnt++;
        *ptr = (const int64_t *)p;
        return DG_OK;
    }
    DG_CHECK(dg_buffer_new(be, c->device, (size_t)dg_box_size(&c->box) * 8, buf, err));
    memset(&it, 0, sizeof it);
    it.itemsize = 8;
    it.ndim = 1;
    it.shape[0] = dg_box_size(&c->box);
    it.src_dev = it.dst_dev = c->device;
    it.src_buf = c->buf;
    it.src = p;
    it.src_strides[0] = st;
    it.dst_buf = *buf;
    it.dst = (char *)(*buf)->ptr;
    it.dst_strides[0] = 8;
    dg_move_init(&mv, be);
    s = dg_move_add(&mv, &it, err);
    if (s == DG_OK)
        s = dg_move_run(&mv, err);
    dg_move_free(&mv);
    if (s != DG_OK) {
        dg_buffer_decref(be, *buf);
        *buf = NULL;
        return s;
    }
    *ptr = (const int64_t *)(*buf)->ptr;
    return DG_OK;
}

/* Releases the n dense key buffers (some NULL) and the arrays. */
static void keys_free(dg_backend_i *be, dg_buffer **kbuf, const int64_t **kptr, int n)
{
    int k;
    for (k = 0; kbuf && k < n; k++)
        dg_buffer_decref(be, kbuf[k]);
    free(kbuf);
    free((void *)kptr);
}

/* One pair (chunk of keys on device d, chunk of rows on device sd) served
 * through routing and exchanges. */
typedef struct remote {
    int k;          /* the chunk of keys (and of the list side) */
    int s;          /* the chunk of rows */
    dg_box B;       /* the rows and other axes it serves */
    int d, sd;
    int64_t n;      /* keys of chunk k */
    dg_buffer *rows, *pos, *cnt; /* on d: routed row numbers, positions, count */
    dg_buffer *req;  /* on sd: the row numbers */
    dg_buffer *data; /* rows in flight, on the sender */
    dg_buffer *recv; /* rows received, on the receiver */
} remote;

typedef struct remotes {
    remote *r;
    int n, cap;
    int64_t *cnt; /* host counts */
} remotes;

static void remotes_free(dg_backend_i *be, remotes *rs)
{
    int i;
    for (i = 0; i < rs->n; i++) {
        remote *r = &rs->r[i];
        dg_buffer_decref(be, r->rows);
        dg_buffer_decref(be, r->pos);
        dg_buffer_decref(be, r->cnt);
        dg_buffer_decref(be, r->req);
        dg_buffer_decref(be, r->data);
        dg_buffer_decref(be, r->recv);
    }
    free(rs->r);
    free(rs->cnt);
}

/* Adds a remote pair and routes its keys on d. */
static dg_status remote_add(dg_backend_i *be, remotes *rs, int k, int s, const dg_box *B, int d,
                            int sd, dg_buffer *kbuf, const int64_t *kptr, int64_t n,
                            dg_error *err)
{
    remote *r;
    dg_route_desc rd;
    dg_access acc[4];
    DG_CHECK(dg_grow((void **)&rs->r, &rs->cap, rs->n + 1, sizeof(remote), 8, err));
    r = &rs->r[rs->n++];
    memset(r, 0, sizeof(*r));
    r->k = k;
    r->s = s;
    r->B = *B;
    r->d = d;
    r->sd = sd;
    r->n = n;
    DG_CHECK(dg_buffer_new(be, d, (size_t)n * 8, &r->rows, err));
    DG_CHECK(dg_buffer_new(be, d, (size_t)n * 8, &r->pos, err));
    DG_CHECK(dg_buffer_new(be, d, 8, &r->cnt, err));
    memset(&rd, 0, sizeof rd);
    rd.n = n;
    rd.key = kptr;
    rd.start = B->r[0].start;
    rd.stop = B->r[0].stop;
    rd.step = B->r[0].step;
    rd.rows = (int64_t *)r->rows->ptr;
    rd.pos = (int64_t *)r->pos->ptr;
    rd.count = (int64_t *)r->cnt->ptr;
    acc[0] = dg_read(kbuf);
    acc[1] = dg_write(r->rows);
    acc[2] = dg_write(r->pos);
    acc[3] = dg_write(r->cnt);
    return dg_enqueue(be, d, DG_STREAM_COMPUTE, acc, 4, dg_work_route(&rd), err);
}

/* The counts of every remote pair on the host (one synchronisation). */
static dg_status remotes_count(dg_backend_i *be, remotes *rs, dg_error *err)
{
    int *devs = (int *)malloc((size_t)(rs->n + 1) * sizeof(int));
    dg_buffer **bufs = (dg_buffer **)malloc((size_t)(rs->n + 1) * sizeof(dg_buffer *));
    const int64_t **ptrs = (const int64_t **)malloc((size_t)(rs->n + 1) * sizeof(int64_t *));
    dg_status st = DG_OK;
    int i;
    rs->cnt = (int64_t *)calloc((size_t)rs->n + 1, sizeof(int64_t));
    if (!devs || !bufs || !ptrs || !rs->cnt) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    } else {
        for (i = 0; i < rs->n; i++) {
            devs[i] = rs->r[i].d;
            bufs[i] = rs->r[i].cnt;
            ptrs[i] = (const int64_t *)rs->r[i].cnt->ptr;
        }
        st = dg_counts_to_host(be, rs->n, devs, bufs, ptrs, rs->cnt, err);
    }
    free(devs);
    free(bufs);
    free(ptrs);
    return st;
}

/* Adds to mv the move of nbytes from the start of buffer `from` to the
 * start of buffer `to`. */
static dg_status move_bytes(dg_move *mv, dg_buffer *from, dg_buffer *to, int64_t nbytes,
                            dg_error *err)
{
    dg_move_item it;
    memset(&it, 0, sizeof it);
    it.itemsize = 8;
    it.ndim = 1;
    it.shape[0] = nbytes / 8;
    it.src_dev = from->device;
    it.src_buf = from;
    it.src = (const char *)from->ptr;
    it.src_strides[0] = 8;
    it.dst_dev = to->device;
    it.dst_buf = to;
    it.dst = (char *)to->ptr;
    it.dst_strides[0] = 8;
    if (nbytes % 8) { /* rows of odd sizes: bytes */
        it.itemsize = 1;
        it.shape[0] = nbytes;
        it.src_strides[0] = it.dst_strides[0] = 1;
    }
    return dg_move_add(mv, &it, err);
}

/* 1 if dev serves the rows of chunk c for n keys in place: c is on dev, or
 * on a peer dev reads in place and the rows are few. */
static int in_place(dg_backend_i *be, int dev, const dg_chunk *c, int64_t n, const dg_box *B,
                    int isz)
{
    if (c->device == dev)
        return 1;
    return dg_be_can_access(be, dev, c->device) &&
           (size_t)(n * row_bytes(B, isz)) <= dg_get_peer_read_bytes();
}

/* The layout of (n, rest of like) on idx's chunks: chunk k on idx's chunk
 * k's device, its rows times every index of the other axes; its shape in
 * shape.  *out malloc'ed. */
static dg_status rows_layout(const dg_array *like, const dg_array *idx, int64_t *shape,
                             dg_plan_chunk **out, dg_error *err)
{
    dg_plan_chunk *l = (dg_plan_chunk *)malloc((size_t)idx->nchunks * sizeof(dg_plan_chunk));
    int k;
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    memcpy(shape, like->shape, (size_t)like->ndim * sizeof(int64_t));
    shape[0] = idx->shape[0];
    for (k = 0; k < idx->nchunks; k++) {
        l[k].device = idx->chunks[k].device;
        dg_box_full(&l[k].box, like->ndim, shape);
        l[k].box.r[0] = idx->chunks[k].box.r[0];
    }
    *out = l;
    return DG_OK;
}

/* Serves the n keys of chunk k on device d (in kbuf) for the rows B of
 * chunk rc (index s of its array): in place by one keyed copy between rc's
 * rows and those of the list chunk lc (a gather into lc, a scatter from
 * it), else routed, to go through the exchanges. */
static dg_status serve(dg_backend_i *be, remotes *rs, int scatter, int k, dg_buffer *kbuf,
                       const int64_t *kptr, int64_t n, int d, const dg_chunk *lc, int s,
                       const dg_chunk *rc, const dg_box *B, int isz, dg_error *err)
{
    rows_side rows, list;
    if (!in_place(be, d, rc, n, B, isz))
        return remote_add(be, rs, k, s, B, d, rc->device, kbuf, kptr, n, err);
    side_of(rc, B->r[0], B, &rows);
    side_of(lc, lc->box.r[0], B, &list);
    return enqueue_rows(be, d, scatter, kbuf, kptr, n, B->r[0], B, isz,
                        scatter ? &list : &rows, scatter ? &rows : &list, err);
}

/* A new array laid out by rows_layout, dense, uninitialised. */
static dg_status rows_like(dg_array *like, dg_array *idx, dg_array **out, dg_error *err)
{
    dg_plan_chunk *l = NULL;
    int64_t shape[DG_MAXDIM];
    dg_status st;
    DG_CHECK(rows_layout(like, idx, shape, &l, err));
    st = dg_array_empty(like->be, like->dtype, like->ndim, shape, l, idx->nchunks,
                        DG_MODE_REPLICA, out, err);
    free(l);
    return st;
}

static dg_status check_args(dg_backend_i *be, const dg_array *data, const dg_array *idx,
                            dg_error *err)
{
    DG_CHECK(dg_be_need(be, DG_SLOT_ROWS, err));
    DG_CHECK(dg_be_need(be, DG_SLOT_ROUTE, err));
    if (data->ndim < 1 || idx->ndim != 1 || idx->dtype != DG_INT64 ||
        data->mode != DG_MODE_REPLICA || idx->mode != DG_MODE_REPLICA)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "bad keyed rows");
    return DG_OK;
}

dg_status dg_array_take_rows(dg_array *src, dg_array *idx, dg_array **out, dg_error *err)
{
    dg_backend_i *be = src->be;
    const int isz = dg_dtype_size(src->dtype);
    dg_array *r = NULL;
    dg_plan_chunk *sl = NULL, whole;
    dg_plan plan = {0, 0, NULL};
    dg_buffer **kbuf = NULL;
    const int64_t **kptr = NULL;
    remotes rs;
    dg_move mv;
    dg_status st = DG_OK;
    int k, j, i, plan_dev = -1;

    DG_CHECK(check_args(be, src, idx, err));
    memset(&rs, 0, sizeof rs);
    dg_move_init(&mv, be);
    DG_CHECK(rows_like(src, idx, &r, err));
    kbuf = (dg_buffer **)calloc((size_t)idx->nchunks, sizeof(*kbuf));
    kptr = (const int64_t **)calloc((size_t)idx->nchunks, sizeof(*kptr));
    if (!kbuf || !kptr) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    DG_CHECK_GOTO(dg_array_layout(src, &sl, err), st, done);
    whole.device = -1;
    dg_box_full(&whole.box, src->ndim, src->shape);
    /* rows in place, and the routing of the others */
    for (k = 0; k < idx->nchunks; k++) {
        const dg_chunk *ic = &idx->chunks[k], *oc = &r->chunks[k];
        const int d = ic->device;
        const int64_t n = dg_box_size(&ic->box);
        if (n == 0)
            continue;
        DG_CHECK_GOTO(dense_keys(be, ic, &kbuf[k], &kptr[k], err), st, done);
        if (plan_dev != d) {
            dg_plan_free(&plan);
            whole.device = d;
            DG_CHECK_GOTO(dg_plan_build(sl, src->nchunks, &whole, 1, &plan, err), st, done);
            plan_dev = d;
        }
        for (j = 0; j < plan.ncopies; j++) {
            const dg_plan_copy *pc = &plan.copies[j];
            DG_CHECK_GOTO(serve(be, &rs, 0, k, kbuf[k], kptr[k], n, d, oc, pc->src,
                                &src->chunks[pc->src], &pc->box, isz, err), st, done);
        }
    }
    if (rs.n == 0)
        goto done;
    DG_CHECK_GOTO(remotes_count(be, &rs, err), st, done);
    /* the row numbers to the devices holding the rows */
    for (i = 0; i < rs.n; i++) {
        remote *q = &rs.r[i];
        const int64_t c = rs.cnt[i];
        if (c == 0)
            continue;
        DG_CHECK_GOTO(dg_buffer_new(be, q->sd, (size_t)c * 8, &q->req, err), st, done);
        DG_CHECK_GOTO(move_bytes(&mv, q->rows, q->req, c * 8, err), st, done);
    }
    DG_CHECK_GOTO(dg_move_run(&mv, err), st, done);
    dg_move_free(&mv);
    /* there, the rows into dense lists */
    for (i = 0; i < rs.n; i++) {
        remote *q = &rs.r[i];
        const int64_t c = rs.cnt[i];
        if (c == 0)
            continue;
        DG_CHECK_GOTO(dg_buffer_new(be, q->sd, (size_t)(c * row_bytes(&q->B, isz)), &q->data,
                                    err), st, done);
        DG_CHECK_GOTO(rows_dense(be, q->sd, 0, q->req, c, dg_range_len(q->B.r[0]),
                                 &src->chunks[q->s], q->B.r[0], &q->B, isz, q->data, err),
                      st, done);
    }
    /* back, and into place by position */
    for (i = 0; i < rs.n; i++) {
        remote *q = &rs.r[i];
        const int64_t c = rs.cnt[i];
        if (c == 0)
            continue;
        DG_CHECK_GOTO(dg_buffer_new(be, q->d, (size_t)(c * row_bytes(&q->B, isz)), &q->recv,
                                    err), st, done);
        DG_CHECK_GOTO(move_bytes(&mv, q->data, q->recv, c * row_bytes(&q->B, isz), err), st,
                      done);
    }
    DG_CHECK_GOTO(dg_move_run(&mv, err), st, done);
    for (i = 0; i < rs.n; i++) {
        remote *q = &rs.r[i];
        const dg_chunk *oc = &r->chunks[q->k];
        if (rs.cnt[i])
            DG_CHECK_GOTO(rows_dense(be, q->d, 1, q->pos, rs.cnt[i], q->n, oc, oc->box.r[0],
                                     &q->B, isz, q->recv, err), st, done);
    }
done:
    dg_move_free(&mv);
    remotes_free(be, &rs);
    dg_plan_free(&plan);
    keys_free(be, kbuf, kptr, idx->nchunks);
    free(sl);
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

dg_status dg_array_put_rows(dg_array *dst, dg_array *idx, dg_array *vals, dg_error *err)
{
    dg_backend_i *be = dst->be;
    const int isz = dg_dtype_size(dst->dtype);
    dg_array *v = NULL;
    int64_t vshape[DG_MAXDIM];
    dg_buffer **kbuf = NULL;
    const int64_t **kptr = NULL;
    dg_plan_chunk *vl = NULL;
    remotes rs;
    dg_move mv;
    dg_status st = DG_OK;
    int k, s, i;

    DG_CHECK(check_args(be, dst, idx, err));
    if (vals->dtype != dst->dtype || vals->ndim != dst->ndim || vals->shape[0] != idx->shape[0])
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "bad values for keyed rows");
    memset(&rs, 0, sizeof rs);
    dg_move_init(&mv, be);
    DG_CHECK(dg_array_unshare(dst, err));
    /* the values laid out like the keys */
    DG_CHECK_GOTO(rows_layout(vals, idx, vshape, &vl, err), st, done);
    DG_CHECK_GOTO(dg_array_reshard(vals, vl, idx->nchunks, &v, err), st, done);
    kbuf = (dg_buffer **)calloc((size_t)idx->nchunks, sizeof(*kbuf));
    kptr = (const int64_t **)calloc((size_t)idx->nchunks, sizeof(*kptr));
    if (!kbuf || !kptr) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    for (k = 0; k < idx->nchunks; k++) {
        const dg_chunk *ic = &idx->chunks[k], *vc = &v->chunks[k];
        const int d = ic->device;
        const int64_t n = dg_box_size(&ic->box);
        if (n == 0)
            continue;
        DG_CHECK_GOTO(dense_keys(be, ic, &kbuf[k], &kptr[k], err), st, done);
        for (s = 0; s < dst->nchunks; s++) {
            const dg_chunk *dc = &dst->chunks[s];
            if (dg_box_size(&dc->box) > 0)
                DG_CHECK_GOTO(serve(be, &rs, 1, k, kbuf[k], kptr[k], n, d, vc, s, dc, &dc->box,
                                    isz, err), st, done);
        }
    }
    if (rs.n == 0)
        goto done;
    DG_CHECK_GOTO(remotes_count(be, &rs, err), st, done);
    /* the rows asked for, dense, then with their row numbers to the chunks */
    for (i = 0; i < rs.n; i++) {
        remote *q = &rs.r[i];
        const dg_chunk *vc = &v->chunks[q->k];
        const int64_t c = rs.cnt[i], rb = row_bytes(&q->B, isz);
        if (c == 0)
            continue;
        DG_CHECK_GOTO(dg_buffer_new(be, q->d, (size_t)(c * rb), &q->data, err), st, done);
        DG_CHECK_GOTO(rows_dense(be, q->d, 0, q->pos, c, q->n, vc, vc->box.r[0], &q->B, isz,
                                 q->data, err), st, done);
        DG_CHECK_GOTO(dg_buffer_new(be, q->sd, (size_t)c * 8, &q->req, err), st, done);
        DG_CHECK_GOTO(dg_buffer_new(be, q->sd, (size_t)(c * rb), &q->recv, err), st, done);
        DG_CHECK_GOTO(move_bytes(&mv, q->rows, q->req, c * 8, err), st, done);
        DG_CHECK_GOTO(move_bytes(&mv, q->data, q->recv, c * rb, err), st, done);
    }
    DG_CHECK_GOTO(dg_move_run(&mv, err), st, done);
    for (i = 0; i < rs.n; i++) {
        remote *q = &rs.r[i];
        if (rs.cnt[i])
            DG_CHECK_GOTO(rows_dense(be, q->sd, 1, q->req, rs.cnt[i], dg_range_len(q->B.r[0]),
                                     &dst->chunks[q->s], q->B.r[0], &q->B, isz, q->recv, err),
                          st, done);
    }
done:
    dg_move_free(&mv);
    remotes_free(be, &rs);
    keys_free(be, kbuf, kptr, idx->nchunks);
    free(vl);
    if (v)
        dg_array_decref(v);
    return st;
}
