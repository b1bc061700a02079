/* Moves: batches of copies between chunk views, run together (dg_move in
 * dg_array_impl.h).
 *
 * A copy within one device runs on that device's compute stream.  Copies
 * between devices run as one exchange group (NCCL send/recv on GPUs) on the
 * transfer streams, so that they overlap compute, but for small ones between
 * devices that reach each other's memory (dg_peer_read_bytes), which go as
 * peer copies on the destination's transfer stream (an exchange group costs
 * more to start than they take).  In an exchange, a side whose view is not
 * dense is packed into (or unpacked from) a dense temporary on its own
 * device, on the same transfer stream.  Phase 0 is one group of
 * dg_enqueue_group: every wait is enqueued before any work of the batch, so
 * the batch's own writes, which go to disjoint parts of their buffers, never
 * wait for each other; they are recorded as part writes.  Copies of phase 1
 * read destinations of phase 0 (the planner's DG_PLAN_REUSE_DST) and run
 * after them, on the compute stream. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"

void dg_move_init(dg_move *m, dg_backend_i *be)
{
    memset(m, 0, sizeof(*m));
    m->be = be;
}

void dg_move_free(dg_move *m)
{
    free(m->items);
    m->items = NULL;
    m->n = m->cap = 0;
}

dg_status dg_move_reserve(dg_move *m, int n, dg_error *err)
{
    return dg_grow((void **)&m->items, &m->cap, n, sizeof(dg_move_item), 8, err);
}

dg_status dg_move_add(dg_move *m, const dg_move_item *it, dg_error *err)
{
    int64_t n = 1;
    int ax;
    for (ax = 0; ax < it->ndim; ax++)
        n *= it->shape[ax];
    if (n == 0)
        return DG_OK;
    DG_CHECK(dg_grow((void **)&m->items, &m->cap, m->n + 1, sizeof(dg_move_item), 8, err));
    m->items[m->n++] = *it;
    return DG_OK;
}

void dg_move_item_view(dg_move_item *it, int itemsize, const dg_chunk *src, const dg_box *box,
                       const dg_chunk *dst)
{
    int ax;
    memset(it, 0, sizeof(*it));
    it->itemsize = itemsize;
    it->ndim = box->ndim;
    for (ax = 0; ax < box->ndim; ax++)
        it->shape[ax] = dg_range_len(box->r[ax]);
    it->src_dev = src->device;
    it->src_buf = src->buf;
    dg_chunk_view(src, box, (char **)&it->src, it->src_strides);
    it->dst_dev = dst->device;
    it->dst_buf = dst->buf;
    dg_chunk_view(dst, box, &it->dst, it->dst_strides);
}

/* 1 if the view (shape, strides) of `isz`-byte items is dense in C order. */
static int view_dense(int ndim, const int64_t *shape, const int64_t *strides, int64_t isz)
{
    int64_t want = isz;
    int ax;
    for (ax = ndim - 1; ax >= 0; ax--) {
        if (shape[ax] == 1)
            continue;
        if (strides[ax] != want)
            return 0;
        want *= shape[ax];
    }
    return 1;
}

static int64_t item_count(const dg_move_item *it)
{
    int64_t n = 1;
    int ax;
    for (ax = 0; ax < it->ndim; ax++)
        n *= it->shape[ax];
    return n;
}

/* The copy of it's shape from (src, sstr) on sdev to (dst, dstr) on ddev. */
static dg_copy_desc copy_of(const dg_move_item *it, int sdev, const char *src,
                            const int64_t *sstr, int ddev, char *dst, const int64_t *dstr)
{
    dg_copy_desc cp;
    memset(&cp, 0, sizeof(cp));
    cp.ndim = it->ndim;
    cp.itemsize = it->itemsize;
    memcpy(cp.shape, it->shape, sizeof(cp.shape));
    cp.src_dev = sdev;
    cp.src = src;
    memcpy(cp.src_strides, sstr, sizeof(cp.src_strides));
    cp.dst_dev = ddev;
    cp.dst = dst;
    memcpy(cp.dst_strides, dstr, sizeof(cp.dst_strides));
    return cp;
}

/* Enqueues on (dev, stream) the copy copy_of says (its waits made). */
static dg_status enqueue_copy(dg_backend_i *be, int dev, int stream, const dg_move_item *it,
                              int sdev, const char *src, const int64_t *sstr,
                              int ddev, char *dst, const int64_t *dstr, dg_error *err)
{
    const dg_copy_desc cp = copy_of(it, sdev, src, sstr, ddev, dst, dstr);
    return dg_be_copy(be, dev, stream, &cp, err);
}

/* 1 if copy it, between devices, goes as a peer copy on the destination's
 * transfer stream: small transfers between devices that reach each other's
 * memory, since an exchange group costs more to start than they take. */
static int item_direct(dg_backend_i *be, const dg_move_item *it)
{
    return !dg_be_has(be, DG_SLOT_EXCHANGE) ||
           (dg_be_can_access(be, it->dst_dev, it->src_dev) &&
            (size_t)(item_count(it) * it->itemsize) <= dg_get_peer_read_bytes());
}

int dg_move_by_exchange(const dg_move *m, int i)
{
    const dg_move_item *it = &m->items[i];
    return it->src_dev != it->dst_dev && it->phase == 0 && !item_direct(m->be, it);
}

/* One copy between devices as the exchange sees it: where the bytes leave
 * from and arrive at, and the temporaries packing and unpacking them. */
typedef struct remote {
    dg_move_item *it;
    int direct;        /* a peer copy on the destination's transfer stream */
    int src_side;      /* the device whose transfer stream reads the source */
    dg_buffer *pack;   /* on src_dev, or NULL: sent from the view itself */
    dg_buffer *unpack; /* on dst_dev, or NULL: received into the view itself */
} remote;

/* What moves have moved so far in this process (dg_move_stats). */
static dg_move_counts counts;

void dg_move_stats(dg_move_counts *out, int reset)
{
    *out = counts;
    if (reset)
        memset(&counts, 0, sizeof(counts));
}

/* A move's phase 0 as one group (dg_enqueue_group): its remote copies and
 * the exchange's transfers. */
typedef struct move_group {
    dg_move *m;
    remote *rem;
    int nrem;
    dg_xfer *xf;
    int nx;
} move_group;

/* Enqueues phase 0 of a move, every wait of which is made: the copies
 * within a device, the direct ones between devices, then the packs, the
 * exchange group and the unpacks. */
static dg_status move_phase0(dg_backend_i *be, void *ctx, dg_error *err)
{
    move_group *g = (move_group *)ctx;
    dg_move *m = g->m;
    int64_t ds[DG_MAXDIM];
    int i;
    for (i = 0; i < m->n; i++) {
        dg_move_item *it = &m->items[i];
        if (it->phase == 0 && it->src_dev == it->dst_dev)
            DG_CHECK(enqueue_copy(be, it->dst_dev, DG_STREAM_COMPUTE, it, it->src_dev, it->src,
                                  it->src_strides, it->dst_dev, it->dst, it->dst_strides, err));
    }
    for (i = 0; i < g->nrem; i++) {
        dg_move_item *it = g->rem[i].it;
        if (g->rem[i].direct)
            DG_CHECK(enqueue_copy(be, it->dst_dev, DG_STREAM_TRANSFER, it, it->src_dev, it->src,
                                  it->src_strides, it->dst_dev, it->dst, it->dst_strides, err));
    }
    for (i = 0; i < g->nrem; i++) {
        dg_move_item *it = g->rem[i].it;
        if (!g->rem[i].pack)
            continue;
        dg_dense_strides(it->ndim, it->shape, it->itemsize, ds);
        DG_CHECK(enqueue_copy(be, it->src_dev, DG_STREAM_TRANSFER, it, it->src_dev, it->src,
                              it->src_strides, it->src_dev, (char *)g->rem[i].pack->ptr, ds,
                              err));
    }
    if (g->nx > 0) {
        dg_status st = dg_be_exchange(be, g->xf, g->nx, err);
        counts.groups++;
        DG_CHECK(st);
    }
    for (i = 0; i < g->nrem; i++) {
        dg_move_item *it = g->rem[i].it;
        if (!g->rem[i].unpack)
            continue;
        dg_dense_strides(it->ndim, it->shape, it->itemsize, ds);
        DG_CHECK(enqueue_copy(be, it->dst_dev, DG_STREAM_TRANSFER, it, it->dst_dev,
                              (const char *)g->rem[i].unpack->ptr, ds, it->dst_dev, it->dst,
                              it->dst_strides, err));
    }
    return DG_OK;
}

/* Sets up remote copy r (item it) of a move: its streams, and where it is
 * not direct, its transfer xf and the temporaries packing and unpacking a
 * view that is not dense; appends its accesses to acc[*na]. */
static dg_status remote_setup(dg_backend_i *be, remote *r, dg_move_item *it, dg_xfer *xf,
                              dg_access *acc, int *na, dg_error *err)
{
    const int64_t nbytes = item_count(it) * it->itemsize;
    r->it = it;
    r->direct = item_direct(be, it);
    r->src_side = r->direct ? it->dst_dev : it->src_dev;
    acc[(*na)++] = dg_acc_on(it->src_buf, DG_ACC_READ, r->src_side, DG_STREAM_TRANSFER);
    acc[(*na)++] = dg_acc_on(it->dst_buf, DG_ACC_WRITE_PART, it->dst_dev, DG_STREAM_TRANSFER);
    if (r->direct)
        return DG_OK;
    xf->src_dev = it->src_dev;
    xf->dst_dev = it->dst_dev;
    xf->nbytes = (size_t)nbytes;
    xf->src = it->src;
    xf->dst = it->dst;
    if (!view_dense(it->ndim, it->shape, it->src_strides, it->itemsize)) {
        DG_CHECK(dg_buffer_new(be, it->src_dev, (size_t)nbytes, &r->pack, err));
        xf->src = r->pack->ptr;
        acc[(*na)++] = dg_acc_on(r->pack, DG_ACC_READ | DG_ACC_WRITE, it->src_dev,
                                 DG_STREAM_TRANSFER);
    }
    if (!view_dense(it->ndim, it->shape, it->dst_strides, it->itemsize)) {
        DG_CHECK(dg_buffer_new(be, it->dst_dev, (size_t)nbytes, &r->unpack, err));
        xf->dst = r->unpack->ptr;
        acc[(*na)++] = dg_acc_on(r->unpack, DG_ACC_READ | DG_ACC_WRITE, it->dst_dev,
                                 DG_STREAM_TRANSFER);
    }
    return DG_OK;
}

dg_status dg_move_run(dg_move *m, dg_error *err)
{
    dg_backend_i *be = m->be;
    move_group g;
    dg_access *acc = NULL;
    int na = 0, i;
    dg_status st = DG_OK;

    if (m->n == 0)
        return DG_OK;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.rem = (remote *)calloc((size_t)m->n, sizeof(remote));
    g.xf = (dg_xfer *)calloc((size_t)m->n, sizeof(dg_xfer));
    acc = (dg_access *)malloc((size_t)m->n * 4 * sizeof(dg_access));
    if (!g.rem || !g.xf || !acc) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory running a move");
        goto done;
    }
    /* phase 0: what each copy reads and writes, on which stream (every wait
     * is made before any work), and the temporaries of the exchange */
    for (i = 0; i < m->n && st == DG_OK; i++) {
        dg_move_item *it = &m->items[i];
        const int64_t nbytes = item_count(it) * it->itemsize;
        if (it->src_dev == it->dst_dev)
            counts.within += nbytes;
        else
            counts.between += nbytes;
        if (it->phase != 0)
            continue;
        if (it->src_dev == it->dst_dev) {
            acc[na++] = dg_acc_on(it->src_buf, DG_ACC_READ, it->dst_dev, DG_STREAM_COMPUTE);
            acc[na++] = dg_acc_on(it->dst_buf, DG_ACC_WRITE_PART, it->dst_dev,
                                  DG_STREAM_COMPUTE);
            continue;
        }
        st = remote_setup(be, &g.rem[g.nrem], it, &g.xf[g.nx], acc, &na, err);
        g.nx += !g.rem[g.nrem].direct;
        g.nrem++;
    }
    /* the copies write disjoint parts of their destinations: as part writes,
     * at positions taken after all of phase 0 (they cover more than each
     * copy, which only makes later waits longer) */
    if (st == DG_OK)
        st = dg_enqueue_group(be, acc, na, move_phase0, &g, err);
    /* phase 1: copies from destinations of phase 0, on the device itself */
    for (i = 0; i < m->n && st == DG_OK; i++) {
        dg_move_item *it = &m->items[i];
        dg_copy_desc cp;
        dg_access a1[2];
        if (it->phase != 1)
            continue;
        cp = copy_of(it, it->src_dev, it->src, it->src_strides, it->dst_dev, it->dst,
                     it->dst_strides);
        a1[0] = dg_read(it->src_buf);
        a1[1] = dg_write_part(it->dst_buf);
        st = dg_enqueue(be, it->dst_dev, DG_STREAM_COMPUTE, a1, 2, dg_work_copy(&cp), err);
    }
done:
    for (i = 0; g.rem && i < g.nrem; i++) {
        dg_buffer_decref(be, g.rem[i].pack);
        dg_buffer_decref(be, g.rem[i].unpack);
    }
    free(g.rem);
    free(g.xf);
    free(acc);
    return st;
}

/* What dg_move_run_shared's group enqueues. */
typedef struct shared_run {
    dg_move *m;
    int on_src;
} shared_run;

static int shared_dev(const shared_run *g, const dg_move_item *it)
{
    return g->on_src ? it->src_dev : it->dst_dev;
}

static dg_status shared_phase(dg_backend_i *be, void *ctx, dg_error *err)
{
    const shared_run *g = (const shared_run *)ctx;
    int i;
    for (i = 0; i < g->m->n; i++) {
        const dg_move_item *it = &g->m->items[i];
        DG_CHECK(enqueue_copy(be, shared_dev(g, it), DG_STREAM_COMPUTE, it, it->src_dev,
                              it->src, it->src_strides, it->dst_dev, it->dst,
                              it->dst_strides, err));
    }
    return DG_OK;
}

dg_status dg_move_run_shared(dg_move *m, int on_src, dg_error *err)
{
    shared_run g;
    dg_access *acc;
    dg_status st;
    int i;
    if (m->n <= 0)
        return DG_OK;
    for (i = 0; i < m->n; i++)
        if (m->items[i].phase != 0)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "a move of two phases run in shared memory");
    acc = (dg_access *)malloc((size_t)m->n * 2 * sizeof(dg_access));
    if (!acc)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory running a move");
    g.m = m;
    g.on_src = on_src;
    for (i = 0; i < m->n; i++) {
        const dg_move_item *it = &m->items[i];
        const int dev = shared_dev(&g, it);
        acc[2 * i] = dg_acc_on(it->src_buf, DG_ACC_READ, dev, DG_STREAM_COMPUTE);
        acc[2 * i + 1] = dg_acc_on(it->dst_buf, DG_ACC_WRITE_PART, dev, DG_STREAM_COMPUTE);
    }
    st = dg_enqueue_group(m->be, acc, 2 * m->n, shared_phase, &g, err);
    free(acc);
    return st;
}

/* ---- regions ------------------------------------------------------------------ */

/* Regions up to this many bytes on a device that `dev` can access in place
 * are read there by the loop itself (no copy, no transfer): below it a
 * transfer's fixed cost exceeds the time the loop spends reading. */
static size_t peer_read_bytes = (size_t)256 << 10;

void dg_set_peer_read_bytes(size_t n) { peer_read_bytes = n; }
size_t dg_get_peer_read_bytes(void) { return peer_read_bytes; }

static dg_status find_source(dg_array *x, const dg_box *region, int dev, int peer_ok,
                             const dg_chunk **out);
static dg_status fetch_region(dg_array *x, const dg_box *region, int dev, int peer_ok,
                              dg_move *batch, dg_region_src *out, dg_error *err);

dg_status dg_find_source(dg_array *x, const dg_box *region, int dev, const dg_chunk **out)
{
    return find_source(x, region, dev, 1, out);
}

/* The stream argument of both: the move picks its streams, and readers
 * wait for its writes. */
dg_status dg_fetch_region(dg_array *x, const dg_box *region, int dev, int stream,
                          dg_region_src *out, dg_error *err)
{
    (void)stream;
    return fetch_region(x, region, dev, 1, NULL, out, err);
}

dg_status dg_fetch_region_local(dg_array *x, const dg_box *region, int dev, int stream,
                                dg_region_src *out, dg_error *err)
{
    (void)stream;
    return fetch_region(x, region, dev, 0, NULL, out, err);
}

dg_status dg_fetch_region_batch(dg_array *x, const dg_box *region, int dev, dg_move *batch,
                                dg_region_src *out, dg_error *err)
{
    return fetch_region(x, region, dev, 0, batch, out, err);
}

dg_status dg_array_dense_on(dg_array *x, const int *devs, int n, dg_array **out, dg_error *err)
{
    dg_array *r = NULL;
    dg_move mv;
    dg_box all;
    dg_status st = DG_OK;
    int i, ax;
    *out = NULL;
    if (x->mode != DG_MODE_REPLICA || n < 1)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a malformed copy to devices");
    for (i = 0; i < n; i++)
        if (devs[i] < 0 || devs[i] >= x->be->ndevices)
            return dg_error_set(err, DG_ERR_VALUE, -1, "no device %d", devs[i]);
    DG_CHECK(dg_array_alloc_shell(x->be, x->dtype, x->ndim, x->shape, n, DG_MODE_REPLICA, &r,
                                  err));
    dg_box_full(&all, x->ndim, x->shape);
    dg_box_canon(&all);
    dg_move_init(&mv, x->be);
    for (i = 0; i < n && st == DG_OK; i++) {
        dg_region_src src = {NULL, NULL, {0}};
        dg_chunk *c = &r->chunks[r->nchunks];
        st = fetch_region(x, &all, devs[i], 0, &mv, &src, err);
        if (st != DG_OK)
            break;
        memset(c, 0, sizeof *c);
        c->device = devs[i];
        c->box = all;
        c->buf = src.buf;
        c->offset = (int64_t)(src.ptr - (char *)src.buf->ptr);
        for (ax = 0; ax < x->ndim; ax++)
            c->strides[ax] = src.strides[ax];
        r->nchunks++;
    }
    return dg_move_finish(&mv, st, r, out, err);
}

static dg_status find_source(dg_array *x, const dg_box *region, int dev, int peer_ok,
                             const dg_chunk **out)
{
    dg_backend_i *be = x->be;
    const dg_chunk *peer = NULL;
    int i;
    *out = NULL;
    for (i = 0; i < x->nchunks; i++) {
        const dg_chunk *c = &x->chunks[i];
        if (!dg_box_contains(&c->box, region))
            continue;
        if (c->device == dev) {
            *out = c;
            return DG_OK;
        }
        if (!peer && peer_ok && dg_be_can_access(be, dev, c->device))
            peer = c;
    }
    if (peer && (size_t)dg_box_size(region) * (size_t)dg_dtype_size(x->dtype) <= peer_read_bytes)
        *out = peer;
    return DG_OK;
}

int64_t dg_peer_read_bytes(const dg_array *x, const dg_chunk *c, const dg_box *region, int dev)
{
    return c->device != dev ? dg_box_size(region) * dg_dtype_size(x->dtype) : 0;
}

void dg_count_peer_read(const dg_array *x, const dg_chunk *c, const dg_box *region, int dev)
{
    dg_count_peer_bytes(dg_peer_read_bytes(x, c, region, dev));
}

void dg_count_peer_bytes(int64_t bytes)
{
    counts.peer_read += bytes;
}

/* batch NULL: a move of its own, run here; else the copies join *batch,
 * which the caller runs. */
static dg_status fetch_region(dg_array *x, const dg_box *region, int dev, int peer_ok,
                              dg_move *batch, dg_region_src *out, dg_error *err)
{
    dg_backend_i *be = x->be;
    const int isz = dg_dtype_size(x->dtype);
    const dg_chunk *in = NULL;
    dg_plan_chunk *src = NULL, dst;
    dg_plan plan = {0, 0, NULL};
    dg_move own, *mv = batch ? batch : &own;
    dg_chunk tmp;
    dg_status st;
    int i, ax;
    int64_t stride = isz;

    DG_CHECK(find_source(x, region, dev, peer_ok, &in));
    if (in) {
        dg_count_peer_read(x, in, region, dev);
        dg_chunk_view(in, region, &out->ptr, out->strides);
        out->buf = in->buf;
        in->buf->refcnt++;
        return DG_OK;
    }
    memset(&tmp, 0, sizeof(tmp));
    tmp.device = dev;
    tmp.box = *region;
    dg_box_canon(&tmp.box);
    for (ax = region->ndim - 1; ax >= 0; ax--) {
        tmp.strides[ax] = stride;
        stride *= dg_range_len(region->r[ax]);
    }
    DG_CHECK(dg_buffer_new(be, dev, (size_t)dg_box_size(region) * (size_t)isz, &tmp.buf, err));
    if (!batch)
        dg_move_init(&own, be);
    DG_CHECK_GOTO(dg_array_layout(x, &src, err), st, done);
    dst.device = dev;
    dst.box = tmp.box;
    DG_CHECK_GOTO(dg_plan_build(src, x->nchunks, &dst, 1, &plan, err), st, done);
    for (i = 0; i < plan.ncopies; i++) {
        dg_move_item it;
        dg_move_item_view(&it, isz, &x->chunks[plan.copies[i].src], &plan.copies[i].box, &tmp);
        DG_CHECK_GOTO(dg_move_add(mv, &it, err), st, done);
    }
    st = batch ? DG_OK : dg_move_run(&own, err);
done:
    if (!batch)
        dg_move_free(&own);
    dg_plan_free(&plan);
    free(src);
    if (st != DG_OK) {
        dg_buffer_decref(be, tmp.buf);
        out->buf = NULL;
        return st;
    }
    dg_chunk_view(&tmp, region, &out->ptr, out->strides);
    out->buf = tmp.buf;
    return DG_OK;
}

dg_status dg_move_finish(dg_move *m, dg_status st, dg_array *r, dg_array **out, dg_error *err)
{
    if (st == DG_OK)
        st = dg_move_run(m, err);
    dg_move_free(m);
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}
