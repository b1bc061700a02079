/* The backend of a job of several processes: this process's part of every
 * slot (dg_dist.h says the model).  Every slot maps the job's device numbers
 * to the inner backend's and back; work on another process's device is
 * skipped on this one, where the owner runs it. */
#include <stdlib.h>
#include <string.h>

#include "dg_dist.h"
#include "dg_ufunc.h"

typedef struct dist_be {
    dg_backend_i iface;
    dg_backend_i *in; /* this process's devices (owned) */
    dg_comm_i *comm;  /* borrowed */
    int first, nlocal, ngdev;
    int *proc_of;  /* process of each device of the job */
    int *first_of; /* first device of each process */
    char *names;
    size_t *totals;
    unsigned char *access;
    int private_reads; /* dg_dist_private_reads */
    int allred_device; /* all-reduces device to device where they can (device_allreduce) */
} dist_be;

/* Where another process's device memory "is": never read or written here
 * (work on that device is skipped), but not NULL, since the core reads NULL
 * as "no buffer" (a scalar operand). */
#define DIST_ELSEWHERE ((void *)(uintptr_t)0x40000000u)

static dist_be *dist_of(dg_backend_i *be) { return (dist_be *)be->impl; }

/* The inner backend's number of job device g, or -1 where another process owns it. */
static int loc(const dist_be *d, int g)
{
    return g >= d->first && g < d->first + d->nlocal ? g - d->first : -1;
}

/* The failure the job already had, if any (reported by every host wait). */
static dg_status job_check(dist_be *d, dg_status st, dg_error *err)
{
    if (st != DG_OK)
        return st;
    return d->comm->check(d->comm, err);
}

static dg_status dist_device_info(dg_backend_i *be, int dev, char *name, size_t cap,
                                  size_t *total, size_t *freeb, dg_error *err)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    if (dev < 0 || dev >= d->ngdev)
        return dg_error_set(err, DG_ERR_INDEX, dev, "no device %d in the job", dev);
    if (l >= 0) {
        char own[8];
        DG_CHECK(dg_be_device_info(d->in, l, own, sizeof own, total, freeb, err));
    } else {
        *total = d->totals[dev];
        *freeb = 0; /* not known here */
    }
    if (cap > 0) { /* the job's name, the same on every process */
        strncpy(name, d->names + (size_t)dev * DG_DIST_NAME, cap - 1);
        name[cap - 1] = 0;
    }
    return DG_OK;
}

static dg_status dist_alloc(dg_backend_i *be, int dev, size_t nbytes, void **ptr, dg_error *err)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    if (l >= 0)
        return dg_be_alloc(d->in, l, nbytes, ptr, err);
    *ptr = DIST_ELSEWHERE;
    return DG_OK;
}

static void dist_release(dg_backend_i *be, int dev, void *ptr)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    if (l >= 0)
        dg_be_release(d->in, l, ptr);
}

static size_t dist_bytes_in_use(dg_backend_i *be, int dev)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    return l >= 0 ? dg_be_bytes_in_use(d->in, l) : 0;
}

static size_t dist_bytes_held(dg_backend_i *be, int dev)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    return l >= 0 ? dg_be_bytes_held(d->in, l) : 0;
}

static dg_status dist_trim(dg_backend_i *be, int dev, dg_error *err)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    return l >= 0 ? dg_be_trim(d->in, l, err) : DG_OK;
}

/* ---- positions: another process's stream has nothing to wait for here ---- */

static dg_pos dist_pos(dg_backend_i *be, int dev, int stream)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    dg_pos p = {dev, stream, 0};
    if (l >= 0) {
        p = dg_be_pos(d->in, l, stream);
        p.dev = dev;
    }
    return p;
}

/* p in the inner backend's numbering; seq 0 where another process owns it. */
static dg_pos pos_in(const dist_be *d, dg_pos p)
{
    const int l = loc(d, p.dev);
    if (l < 0)
        p.seq = 0;
    p.dev = l < 0 ? 0 : l;
    return p;
}

static dg_status dist_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    const dg_pos q = pos_in(d, p);
    if (l < 0 || q.seq == 0)
        return DG_OK;
    return dg_be_wait(d->in, l, stream, q, err);
}

/* The job's failure, if any, then the inner backend's watch of its
 * transfers between processes (dg_backend_i.watch): a transfer that waits
 * for a dead process fails the job here, so that the others learn it too. */
static dg_status job_watch(dist_be *d, dg_error *err)
{
    dg_status st = d->comm->check(d->comm, err);
    if (st == DG_OK && dg_be_has(d->in, DG_SLOT_WATCH)) {
        st = dg_be_watch(d->in, d->comm->timeout_s, err);
        if (st != DG_OK)
            d->comm->fail(d->comm, err ? err->msg : "a transfer between processes failed",
                          NULL);
    }
    return st;
}

/* How long a host wait of the job waits for the inner backend before it
 * looks at the job and the transfers again. */
#define DIST_WATCH_US 20000

/* The host waits for inner position q (this process's numbering): where the
 * inner backend watches its transfers, in slices of DIST_WATCH_US with the
 * watch between them, so that a wait on work behind a transfer to a dead
 * process ends in DG_ERR_DEVICE instead of hanging; else the inner wait. */
static dg_status inner_sync(dist_be *d, dg_pos q, dg_error *err)
{
    if (q.seq == 0)
        return DG_OK;
    if (!dg_be_has(d->in, DG_SLOT_WATCH))
        return dg_be_sync(d->in, q, err);
    for (;;) {
        int done = 0;
        DG_CHECK(dg_be_sync_for(d->in, q, DIST_WATCH_US, &done, err));
        if (done)
            return DG_OK;
        DG_CHECK(job_watch(d, err));
    }
}

/* Every stream of every local device, as inner_sync waits. */
static dg_status inner_sync_all(dist_be *d, dg_error *err)
{
    int l, s;
    if (dg_be_has(d->in, DG_SLOT_WATCH))
        for (l = 0; l < d->nlocal; l++)
            for (s = 0; s < DG_NSTREAMS; s++)
                DG_CHECK(inner_sync(d, dg_be_pos(d->in, l, s), err));
    return dg_be_sync_all(d->in, err);
}

static dg_status dist_sync(dg_backend_i *be, dg_pos p, dg_error *err)
{
    dist_be *d = dist_of(be);
    return job_check(d, inner_sync(d, pos_in(d, p), err), err);
}

static dg_status dist_sync_for(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                               dg_error *err)
{
    dist_be *d = dist_of(be);
    const dg_pos q = pos_in(d, p);
    dg_status st = DG_OK;
    *done = 1;
    if (q.seq) {
        st = dg_be_sync_for(d->in, q, timeout_us, done, err);
        if (st == DG_OK && !*done)
            st = job_watch(d, err);
    }
    return job_check(d, st, err);
}

static dg_status dist_sync_all(dg_backend_i *be, dg_error *err)
{
    dist_be *d = dist_of(be);
    return job_check(d, inner_sync_all(d, err), err);
}

/* ---- copies; host reads of another process's device ---------------------------- */

/* The bytes of the innermost axes of c's destination that lie densely
 * (C order, axes of extent 1 aside) in one run: the unit of host_unpack;
 * *outer: the number of axes left outside the run. */
static int64_t dense_run(const dg_copy_desc *c, int *outer)
{
    int64_t run = c->itemsize;
    int a = c->ndim - 1;
    for (; a >= 0; a--) {
        if (c->shape[a] != 1 && c->dst_strides[a] != run)
            break;
        run *= c->shape[a];
    }
    *outer = a + 1;
    return run;
}

/* Copies the dense bytes at src into c's destination (host memory, c's
 * strides): the unpacking of a broadcast host read, in runs of the
 * destination's dense innermost axes. */
static void host_unpack(const dg_copy_desc *c, const char *src)
{
    int64_t idx[DG_MAXDIM] = {0};
    int nd;
    const int64_t run = dense_run(c, &nd), n = dg_shape_size(nd, c->shape);
    int64_t e;
    for (e = 0; e < n; e++) {
        int64_t off = 0;
        int a;
        for (a = 0; a < nd; a++)
            off += idx[a] * c->dst_strides[a];
        memcpy(c->dst + off, src + e * run, (size_t)run);
        for (a = nd - 1; a >= 0; a--) {
            if (++idx[a] < c->shape[a])
                break;
            idx[a] = 0;
        }
    }
}

/* The pieces of a broadcast host read: about read_piece bytes each (at
 * most DIST_READ_MAXPIECES of them), so that the owner's copy of one piece
 * to the host runs while the one before is broadcast. */
static int64_t read_piece = (int64_t)16 << 20;
#define DIST_READ_MAXPIECES 64

static long long n_allreduce, n_allreduce_host;

void dg_dist_allreduce_counts(long long *all, long long *host)
{
    *all = n_allreduce;
    *host = n_allreduce_host;
}

int64_t dg_dist_read_piece(int64_t nbytes)
{
    const int64_t was = read_piece;
    if (nbytes > 0)
        read_piece = nbytes;
    return was;
}

/* A host read of job device c->src_dev, which every process makes at once:
 * the owner copies the region to the host, then broadcasts it; every
 * process has it in c's destination.  Where that destination is dense (a
 * whole array's read, a slab of its first axis) the owner copies into it
 * and the broadcast goes from and to it, the bytes handled once; else
 * through a dense temporary, unpacked on every process.  The region goes in
 * pieces of rows of its outermost axis of extent > 1 (each a run of the
 * dense bytes): the owner enqueues the copies of all of them at once and
 * broadcasts each as soon as its copy is done, so the copy and the
 * broadcast overlap.  Synchronous: it returns with the bytes in place. */
static dg_status host_read(dist_be *d, int stream, const dg_copy_desc *c, dg_error *err)
{
    const int64_t n = dg_shape_size(c->ndim, c->shape) * c->itemsize;
    const int l = loc(d, c->src_dev), root = d->proc_of[c->src_dev];
    int outer, ax = 0, np, k;
    const int dense = dense_run(c, &outer) == n;
    int64_t rows = 1, per, step;
    dg_pos done[DIST_READ_MAXPIECES];
    char *tmp = NULL;
    dg_status st = DG_OK;
    if (n <= 0)
        return DG_OK;
    while (ax < c->ndim - 1 && c->shape[ax] == 1)
        ax++;
    if (c->ndim > 0)
        rows = c->shape[ax];
    per = n / rows; /* bytes of one row of axis ax */
    step = per >= read_piece ? 1 : read_piece / per;
    if ((rows + step - 1) / step > DIST_READ_MAXPIECES)
        step = (rows + DIST_READ_MAXPIECES - 1) / DIST_READ_MAXPIECES;
    np = (int)((rows + step - 1) / step);
    if (!dense) {
        tmp = (char *)malloc((size_t)n);
        if (!tmp)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory reading a device");
    }
    for (k = 0; l >= 0 && k < np && st == DG_OK; k++) {
        /* the owner's copy of rows [k step, (k + 1) step) of axis ax */
        dg_copy_desc own = *c;
        const int64_t r0 = (int64_t)k * step;
        own.src_dev = l;
        if (c->ndim > 0) {
            own.shape[ax] = rows - r0 < step ? rows - r0 : step;
            own.src += r0 * c->src_strides[ax];
            own.dst += r0 * c->dst_strides[ax];
        }
        if (!dense) {
            int64_t s = c->itemsize;
            int a;
            for (a = c->ndim - 1; a >= 0; a--) {
                own.dst_strides[a] = s;
                s *= own.shape[a];
            }
            own.dst = tmp + r0 * per;
        }
        st = dg_be_copy(d->in, l, stream, &own, err);
        done[k] = dg_be_pos(d->in, l, stream);
    }
    for (k = 0; k < np && st == DG_OK; k++) {
        const int64_t r0 = (int64_t)k * step, nr = rows - r0 < step ? rows - r0 : step;
        if (l >= 0) {
            st = inner_sync(d, done[k], err);
            if (st != DG_OK)
                break;
        }
        st = d->comm->bcast(d->comm, (dense ? c->dst : tmp) + r0 * per, (size_t)(nr * per), root,
                            err);
    }
    if (l >= 0 && st != DG_OK) {
        dg_error e2 = DG_ERROR_INIT;
        /* the others must not wait for this process's pieces, and nothing
         * queued may outlive tmp */
        d->comm->fail(d->comm, "a process could not read its device for the others", NULL);
        inner_sync_all(d, &e2);
    }
    if (st == DG_OK && !dense)
        host_unpack(c, tmp);
    free(tmp);
    return st;
}

/* This process's side of a copy between devices of two processes (the core
 * copies some slices device to device outside exchange groups: scans pass
 * totals on, argmax stacks its pairs).  The sender packs its region densely
 * into a temporary on its device on `stream` and sends it from the transfer
 * stream; the receiver receives into a temporary and unpacks it on `stream`.
 * Each side's `stream` then waits for its transfer, so that the work after
 * the copy (a release of the temporary, a write to the source) follows it. */
static dg_status cross_copy(dist_be *d, int stream, const dg_copy_desc *c, dg_error *err)
{
    const int ls = loc(d, c->src_dev), ld = loc(d, c->dst_dev);
    const int l = ls >= 0 ? ls : ld;
    const size_t n = (size_t)(dg_shape_size(c->ndim, c->shape) * c->itemsize);
    dg_copy_desc t = *c;
    dg_pxfer x;
    void *tmp = NULL;
    int64_t s = c->itemsize;
    int a;
    dg_status st;
    if (n == 0 || l < 0)
        return DG_OK;
    DG_CHECK(dg_be_alloc(d->in, l, n, &tmp, err));
    for (a = c->ndim - 1; a >= 0; a--) {
        if (ls >= 0)
            t.dst_strides[a] = s;
        else
            t.src_strides[a] = s;
        s *= c->shape[a];
    }
    t.src_dev = t.dst_dev = l;
    if (ls >= 0)
        t.dst = (char *)tmp;
    else
        t.src = (const char *)tmp;
    x.send = ls >= 0;
    x.dev = l;
    x.ptr = tmp;
    x.nbytes = n;
    x.peer = d->proc_of[ls >= 0 ? c->dst_dev : c->src_dev];
    x.src_gdev = c->src_dev;
    x.dst_gdev = c->dst_dev;
    st = ls >= 0 ? dg_be_copy(d->in, l, stream, &t, err) : DG_OK;
    if (st == DG_OK)
        st = dg_be_wait(d->in, l, DG_STREAM_TRANSFER, dg_be_pos(d->in, l, stream), err);
    if (st == DG_OK)
        st = dg_be_transport(d->in, &x, 1, err);
    if (st == DG_OK)
        st = dg_be_wait(d->in, l, stream, dg_be_pos(d->in, l, DG_STREAM_TRANSFER), err);
    if (st == DG_OK && ld >= 0)
        st = dg_be_copy(d->in, l, stream, &t, err);
    /* tmp goes back on the compute stream: after its uses on both streams */
    if (st == DG_OK)
        st = dg_be_wait(d->in, l, DG_STREAM_COMPUTE, dg_be_pos(d->in, l, stream), err);
    if (st == DG_OK)
        st = dg_be_wait(d->in, l, DG_STREAM_COMPUTE, dg_be_pos(d->in, l, DG_STREAM_TRANSFER),
                        err);
    if (st != DG_OK) {
        dg_error e2 = DG_ERROR_INIT;
        inner_sync_all(d, &e2); /* nothing queued may outlive tmp */
    }
    dg_be_release(d->in, l, tmp);
    return st;
}

static dg_status dist_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *c,
                           dg_error *err)
{
    dist_be *d = dist_of(be);
    dg_copy_desc t = *c;
    const int hs = c->src_dev == DG_HOST, hd = c->dst_dev == DG_HOST;
    const int ls = hs ? DG_HOST : loc(d, c->src_dev), ld = hd ? DG_HOST : loc(d, c->dst_dev);
    if (hd && !hs && d->private_reads && ls < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "a read for this process alone of another process's device %d",
                            c->src_dev);
    if (hd && !hs && !d->private_reads)
        return host_read(d, stream, c, err);
    if (!hs && !hd && (ls < 0) != (ld < 0))
        return cross_copy(d, stream, c, err);
    if (loc(d, dev) < 0)
        return DG_OK; /* its owner runs it (a write from the host: every process has the data) */
    t.src_dev = ls;
    t.dst_dev = ld;
    return dg_be_copy(d->in, loc(d, dev), stream, &t, err);
}

/* ---- work on one device: run here or by its owner ------------------------------------ */

#define DIST_ON_DEVICE(slot, desc_t)                                                            \
    static dg_status dist_##slot(dg_backend_i *be, int dev, int stream, const desc_t *x,          \
                                 dg_error *err)                                                   \
    {                                                                                             \
        dist_be *d = dist_of(be);                                                                 \
        const int l = loc(d, dev);                                                                \
        return l >= 0 ? dg_be_##slot(d->in, l, stream, x, err) : DG_OK;                          \
    }
DIST_ON_DEVICE(elementwise, dg_ew_desc)
DIST_ON_DEVICE(fill, dg_fill_desc)
DIST_ON_DEVICE(reduce, dg_reduce_desc)
DIST_ON_DEVICE(scan, dg_scan_desc)
DIST_ON_DEVICE(gemm, dg_gemm_desc)
DIST_ON_DEVICE(select, dg_select_desc)
DIST_ON_DEVICE(rows, dg_rows_desc)
DIST_ON_DEVICE(route, dg_route_desc)
DIST_ON_DEVICE(sort, dg_sort_desc)
DIST_ON_DEVICE(dense, dg_dense_desc)
DIST_ON_DEVICE(fft, dg_fft_desc)
DIST_ON_DEVICE(search, dg_search_desc)
DIST_ON_DEVICE(count, dg_count_desc)
DIST_ON_DEVICE(fused, dg_fused_desc)
#undef DIST_ON_DEVICE

/* A question, not work: every process must get the owner's answer, so another
 * process's device is asked as this process's first (the job's processes run
 * one backend on alike devices). */
static dg_status dist_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *r,
                                   int64_t *rows, dg_error *err)
{
    dist_be *d = dist_of(be);
    const int l = loc(d, dev);
    return dg_be_reduce_parts(d->in, l >= 0 ? l : 0, r, rows, err);
}

static int dist_can_access(dg_backend_i *be, int dev, int other)
{
    dist_be *d = dist_of(be);
    if (dev < 0 || other < 0 || dev >= d->ngdev || other >= d->ngdev)
        return 0;
    return d->access[(size_t)dev * (size_t)d->ngdev + (size_t)other];
}

/* ---- transfers: within this process by the inner exchange, across by transport ---- */

static dg_status dist_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err)
{
    dist_be *d = dist_of(be);
    dg_xfer *in = n ? (dg_xfer *)malloc((size_t)n * sizeof(*in)) : NULL;
    dg_pxfer *px = n ? (dg_pxfer *)malloc((size_t)n * sizeof(*px)) : NULL;
    int i, nin = 0, npx = 0;
    dg_status st = DG_OK;
    if (n && (!in || !px)) {
        free(in);
        free(px);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (i = 0; i < n; i++) {
        const int ls = loc(d, x[i].src_dev), ld = loc(d, x[i].dst_dev);
        if (ls >= 0 && ld >= 0) {
            in[nin] = x[i];
            in[nin].src_dev = ls;
            in[nin++].dst_dev = ld;
        } else if ((ls >= 0 || ld >= 0) && x[i].nbytes > 0) {
            dg_pxfer *p = &px[npx++];
            p->send = ls >= 0;
            p->dev = ls >= 0 ? ls : ld;
            p->ptr = ls >= 0 ? (void *)x[i].src : x[i].dst;
            p->nbytes = x[i].nbytes;
            p->peer = d->proc_of[ls >= 0 ? x[i].dst_dev : x[i].src_dev];
            p->src_gdev = x[i].src_dev;
            p->dst_gdev = x[i].dst_dev;
        }
    }
    if (nin)
        st = dg_be_exchange(d->in, in, nin, err);
    if (st == DG_OK && npx)
        st = dg_be_transport(d->in, px, npx, err);
    free(in);
    free(px);
    return st;
}

/* ---- all-reduce: one exchange of the partials, the same fold everywhere ---- */

/* 1 for the all-reduces of (value, index) pairs (argmax / argmin). */
static int arg_op(int op)
{
    return op == DG_ALLRED_ARGMAX || op == DG_ALLRED_ARGMIN;
}

/* The bytes of one device's row of all-reduce r in the exchange: its count
 * values, then, for argmax / argmin, its count indices at *ioff, each part
 * padded to 16 bytes so that on the device where the rows are folded, one
 * after another, every value and every index is aligned. */
static size_t row_bytes(const dg_allreduce_desc *r, size_t *ioff)
{
    const size_t vb = (size_t)r->count * (size_t)dg_dtype_size(r->dtype);
    if (!arg_op(r->op)) {
        *ioff = vb;
        return vb;
    }
    *ioff = (vb + 15) / 16 * 16;
    return *ioff + ((size_t)r->count * sizeof(int64_t) + 15) / 16 * 16;
}

/* The fold of an all-reduce on this process: n rows (row_bytes; row i of
 * device r->devs[i], in r's order) at `stack` on local device `l` (the
 * process's first device in r, r->devs[first]), folded there on `stream`
 * into dst (and dst_idx) of that device, then copied from there to the
 * other local dst on l's `stream`, and each of those devices' `stream` made
 * to wait for l's (which also orders their later writes after every read of
 * their partials on l).  A loop
 * folds in row order, row 0 op row 1 op ... (the order of every backend's
 * all-reduce and of the core's own fold, so the bits are the same as in one
 * process); argmax / argmin is one reduce over the rows reading their
 * indices (idx_in: the inner backend's own pick, as the core's combine of
 * partials on one device makes it in one process).  Enqueues only. */
static dg_status fold_stack(dist_be *d, int stream, const dg_allreduce_desc *r, int l, int first,
                            char *stack, dg_error *err)
{
    const int isz = dg_dtype_size(r->dtype), arg = arg_op(r->op);
    size_t ioff;
    const size_t row = row_bytes(r, &ioff), vbytes = (size_t)r->count * (size_t)isz;
    char *acc = (char *)r->dst[first];
    dg_copy_desc c;
    dg_status st = DG_OK;
    int i;
    if (arg) { /* dims: the elements (kept), the rows (reduced) */
        dg_reduce_desc e;
        memset(&e, 0, sizeof e);
        e.kind = r->op == DG_ALLRED_ARGMIN ? DG_RED_ARGMIN : DG_RED_ARGMAX;
        e.dtype = r->dtype;
        e.ndim = 2;
        e.nred = 1;
        e.shape[0] = r->count;
        e.shape[1] = r->n;
        e.src = stack;
        e.src_strides[0] = isz;
        e.src_strides[1] = (int64_t)row;
        e.idx_in = (const int64_t *)(stack + ioff);
        e.idx_in_strides[0] = (int64_t)sizeof(int64_t);
        e.idx_in_strides[1] = (int64_t)row;
        e.dst = acc;
        e.dst_strides[0] = isz;
        e.idx = r->dst_idx[first];
        e.idx_strides[0] = (int64_t)sizeof(int64_t);
        st = dg_be_reduce(d->in, l, stream, &e, err);
    }
    for (i = 1; !arg && i < r->n && st == DG_OK; i++) {
        dg_ew_desc e;
        memset(&e, 0, sizeof e);
        e.loop = r->loop;
        e.nop = 3;
        e.ndim = 1;
        e.shape[0] = r->count;
        e.data[0] = i == 1 ? stack : acc;
        e.data[1] = stack + (size_t)i * row;
        e.data[2] = acc;
        e.strides[0][0] = e.strides[1][0] = e.strides[2][0] = isz;
        st = dg_be_elementwise(d->in, l, stream, &e, err);
    }
    if (!arg && st == DG_OK && r->n == 1) { /* one row: a copy */
        c = dg_copy_bytes(l, stack, l, acc, row);
        st = dg_be_copy(d->in, l, stream, &c, err);
    }
    /* the other local devices' copies of the result, on l's stream (acc
     * may be reused by l's later work once this returns), then each of
     * those devices' stream waits for them: the core records their dst
     * written, and their partials read, at their own streams' positions */
    for (i = first + 1; i < r->n && st == DG_OK; i++) {
        const int li = loc(d, r->devs[i]);
        if (li < 0)
            continue;
        c = dg_copy_bytes(l, acc, li, r->dst[i], vbytes);
        st = dg_be_copy(d->in, l, stream, &c, err);
        if (arg && st == DG_OK) {
            c = dg_copy_bytes(l, r->dst_idx[first], li, r->dst_idx[i],
                              (size_t)r->count * sizeof(int64_t));
            st = dg_be_copy(d->in, l, stream, &c, err);
        }
    }
    for (i = first + 1; i < r->n && st == DG_OK; i++) {
        const int li = loc(d, r->devs[i]);
        if (li >= 0)
            st = dg_be_wait(d->in, li, stream, dg_be_pos(d->in, l, stream), err);
    }
    return st;
}

/* fold_stack from n rows at host memory `rows`, copied to local device l
 * first.  Waits for all of it (rows may go once this returns). */
static dg_status fold_rows(dist_be *d, int stream, const dg_allreduce_desc *r, int l, int first,
                           const char *rows, dg_error *err)
{
    size_t ioff;
    const size_t row = row_bytes(r, &ioff);
    void *stack = NULL;
    dg_copy_desc c;
    dg_status st;
    int i;
    DG_CHECK(dg_be_alloc(d->in, l, row * (size_t)r->n, &stack, err));
    c = dg_copy_bytes(DG_HOST, rows, l, stack, row * (size_t)r->n);
    st = dg_be_copy(d->in, l, stream, &c, err);
    if (st == DG_OK)
        st = fold_stack(d, stream, r, l, first, (char *)stack, err);
    /* waits for this fold's work (not the devices' other work) */
    if (st == DG_OK)
        st = inner_sync(d, dg_be_pos(d->in, l, stream), err);
    for (i = first + 1; i < r->n && st == DG_OK; i++) {
        const int li = loc(d, r->devs[i]);
        if (li >= 0)
            st = inner_sync(d, dg_be_pos(d->in, li, stream), err);
    }
    if (st != DG_OK) {
        dg_error e2 = DG_ERROR_INIT;
        inner_sync_all(d, &e2); /* nothing queued may outlive rows and stack */
    }
    dg_be_release(d->in, l, stack);
    return st;
}

/* The most processes whose devices an all-reduce spans for it to go device
 * to device (device_allreduce: each process's first device sends its rows
 * to every other's, P - 1 messages each); past it, through the host (one
 * allgather of MPI, log P steps). */
#define DIST_DEVICE_ALLRED_PROCS 8

/* The all-reduce device to device, enqueued only, no host wait: this
 * process's partials gathered into a stack of the n rows (r's order) on its
 * first device of r (`l`, r->devs[first]) by device copies, every run of
 * consecutive rows of one process sent by transport from that process's
 * first device to every other process's first device (the same list on
 * every process: NCCL and MPI pair messages in posting order), then folded
 * there (fold_stack), the same fold as through the host, so the same bits. */
static dg_status device_allreduce(dist_be *d, int stream, const dg_allreduce_desc *r, int first,
                                  dg_error *err)
{
    const int me = d->comm->rank, isz = dg_dtype_size(r->dtype), arg = arg_op(r->op);
    const int l = loc(d, r->devs[first]);
    size_t ioff;
    const size_t row = row_bytes(r, &ioff);
    int *lead = NULL; /* the first device of r of each process (job numbers), or -1 */
    dg_pxfer *x = NULL;
    void *stack = NULL;
    int i, j, p, nx = 0;
    dg_status st = DG_OK;
    lead = (int *)malloc((size_t)d->comm->size * sizeof(int));
    x = (dg_pxfer *)malloc(2 * (size_t)r->n * (size_t)d->comm->size * sizeof(dg_pxfer));
    if (!lead || !x) {
        free(lead);
        free(x);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (p = 0; p < d->comm->size; p++)
        lead[p] = -1;
    for (i = 0; i < r->n; i++)
        if (lead[d->proc_of[r->devs[i]]] < 0)
            lead[d->proc_of[r->devs[i]]] = r->devs[i];
    st = dg_be_alloc(d->in, l, row * (size_t)r->n, &stack, err);
    /* this process's rows into the stack, on l's stream after each source's */
    for (i = 0; i < r->n && st == DG_OK; i++) {
        const int li = loc(d, r->devs[i]);
        char *to = (char *)stack + (size_t)i * row;
        dg_copy_desc c;
        if (li < 0)
            continue;
        if (li != l)
            st = dg_be_wait(d->in, l, stream, dg_be_pos(d->in, li, stream), err);
        c = dg_copy_bytes(li, r->src[i], l, to, (size_t)r->count * (size_t)isz);
        if (st == DG_OK)
            st = dg_be_copy(d->in, l, stream, &c, err);
        if (arg && st == DG_OK) {
            c = dg_copy_bytes(li, r->src_idx[i], l, to + ioff,
                              (size_t)r->count * sizeof(int64_t));
            st = dg_be_copy(d->in, l, stream, &c, err);
        }
    }
    /* the runs of rows of one process, each sent to every other leader */
    for (i = 0; i < r->n && st == DG_OK; i = j) {
        const int q = d->proc_of[r->devs[i]];
        for (j = i + 1; j < r->n && d->proc_of[r->devs[j]] == q;)
            j++;
        for (p = 0; p < d->comm->size; p++) {
            dg_pxfer *t;
            if (p == q || lead[p] < 0 || (q != me && p != me))
                continue;
            t = &x[nx++];
            t->send = q == me;
            t->dev = l;
            t->ptr = (char *)stack + (size_t)i * row;
            t->nbytes = (size_t)(j - i) * row;
            t->peer = q == me ? p : q;
            t->src_gdev = lead[q];
            t->dst_gdev = lead[p];
        }
    }
    if (st == DG_OK && nx > 0) {
        st = dg_be_wait(d->in, l, DG_STREAM_TRANSFER, dg_be_pos(d->in, l, stream), err);
        if (st == DG_OK)
            st = dg_be_transport(d->in, x, nx, err);
        if (st == DG_OK)
            st = dg_be_wait(d->in, l, stream, dg_be_pos(d->in, l, DG_STREAM_TRANSFER), err);
    }
    if (st == DG_OK)
        st = fold_stack(d, stream, r, l, first, (char *)stack, err);
    /* the stack goes back on the compute stream: after its uses on both */
    if (st == DG_OK && stream != DG_STREAM_COMPUTE)
        st = dg_be_wait(d->in, l, DG_STREAM_COMPUTE, dg_be_pos(d->in, l, stream), err);
    if (st == DG_OK && nx > 0)
        st = dg_be_wait(d->in, l, DG_STREAM_COMPUTE, dg_be_pos(d->in, l, DG_STREAM_TRANSFER),
                        err);
    if (st != DG_OK) {
        dg_error e2 = DG_ERROR_INIT;
        /* the others must not wait for this process's rows; nothing queued
         * may outlive the stack */
        d->comm->fail(d->comm, "a process could not send its partials of an all-reduce", NULL);
        inner_sync_all(d, &e2);
    }
    if (stack)
        dg_be_release(d->in, l, stack);
    free(lead);
    free(x);
    return st;
}

/* The all-reduce of a job (dg_backend_i.allreduce): every process copies
 * its devices' partials (and, for argmax / argmin, their indices) to the
 * host, one allgather of the comm gives every process every partial (n
 * rows in r's order), and each process folds them on its first device of r
 * and copies the result to its other devices of r (fold_rows).  So every
 * device gets the same bits, whichever process it is on, with one exchange
 * of the n rows for the job (log P steps of MPI's allgather) instead of a
 * transfer for each pair of devices.  Synchronous: it returns with dst
 * written.  Any binary loop; argmax / argmin where the inner backend's
 * reduce reads indices (DG_BE_ARG_ALLRED set at creation), DG_ERR_NOTIMPL
 * otherwise (the same answer on every process, nothing done). */
static dg_status dist_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *r,
                                dg_error *err)
{
    dist_be *d = dist_of(be);
    const int np = d->comm->size, arg = arg_op(r->op);
    size_t ioff;
    const size_t row = row_bytes(r, &ioff);
    size_t *counts, *displs;
    char *mine = NULL, *all = NULL;
    int *order = NULL, i, p, first = -1, l = -1, nmine = 0;
    dg_status st = DG_OK;
    if (arg ? !(be->flags & DG_BE_ARG_ALLRED) : r->loop < 0 || r->loop >= dg_nloops)
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "no all-reduce of loop %d (op %d)",
                            r->loop, r->op);
    if (r->n < 1 || (arg && (!r->src_idx || !r->dst_idx)))
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "an all-reduce of %d devices (op %d)%s",
                            r->n, r->op, r->n < 1 ? "" : " without its indices");
    if (r->count == 0)
        return DG_OK;
    n_allreduce++;
    counts = (size_t *)calloc(2 * (size_t)np, sizeof(size_t));
    if (!counts)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    displs = counts + np;
    /* rows grouped by process (the allgather's order), each group in r's order */
    for (i = 0; i < r->n; i++)
        counts[d->proc_of[r->devs[i]]] += row;
    for (p = 1; p < np; p++)
        displs[p] = displs[p - 1] + counts[p - 1];
    /* device to device where few processes take part (the same choice on
     * every process: it depends on r and the job alone) */
    if (d->allred_device) {
        int nproc = 0;
        for (p = 0; p < np; p++)
            nproc += counts[p] > 0;
        if (nproc <= DIST_DEVICE_ALLRED_PROCS) {
            free(counts);
            for (i = 0; i < r->n && loc(d, r->devs[i]) < 0; i++)
                ; /* this process's first device of r, if any */
            st = i < r->n ? device_allreduce(d, stream, r, i, err) : DG_OK;
            return job_check(d, st, err);
        }
    }
    n_allreduce_host++;
    /* zeroed: the padding of argmax's rows goes out too */
    mine = (char *)calloc(counts[d->comm->rank] + 1, 1);
    all = (char *)malloc(row * (size_t)r->n + 1);
    order = (int *)malloc((size_t)r->n * sizeof(int));
    if (!mine || !all || !order) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    {
        size_t *at = (size_t *)calloc((size_t)np, sizeof(size_t));
        if (!at) {
            st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            goto done;
        }
        for (i = 0; i < r->n; i++) { /* row i's place in the gathered buffer */
            p = d->proc_of[r->devs[i]];
            order[i] = (int)((displs[p] + at[p]) / row);
            at[p] += row;
        }
        free(at);
    }
    /* this process's partials to the host: every copy queued, then waited for */
    for (i = 0; i < r->n && st == DG_OK; i++) {
        const int li = loc(d, r->devs[i]);
        char *to = mine + (size_t)nmine * row;
        dg_copy_desc c;
        if (li < 0)
            continue;
        if (first < 0) {
            first = i;
            l = li;
        }
        nmine++;
        c = dg_copy_bytes(li, r->src[i], DG_HOST, to, (size_t)r->count *
                          (size_t)dg_dtype_size(r->dtype));
        st = dg_be_copy(d->in, li, stream, &c, err);
        if (arg && st == DG_OK) {
            c = dg_copy_bytes(li, r->src_idx[i], DG_HOST, to + ioff,
                              (size_t)r->count * sizeof(int64_t));
            st = dg_be_copy(d->in, li, stream, &c, err);
        }
    }
    for (i = 0; i < r->n && st == DG_OK; i++) {
        const int li = loc(d, r->devs[i]);
        if (li >= 0)
            st = inner_sync(d, dg_be_pos(d->in, li, stream), err);
    }
    if (st != DG_OK && nmine > 0) {
        dg_error e2 = DG_ERROR_INIT;
        inner_sync_all(d, &e2); /* no copy queued may outlive mine */
    }
    if (st != DG_OK) /* the others must not wait for this process's rows */
        d->comm->fail(d->comm, "a process could not read its partials of an all-reduce", NULL);
    else
        st = d->comm->allgatherv(d->comm, mine, counts[d->comm->rank], all, counts, displs, err);
    if (st == DG_OK && first >= 0) {
        /* back into r's order, then folded */
        char *rows = (char *)malloc(row * (size_t)r->n + 1);
        if (!rows) {
            st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            goto done;
        }
        for (i = 0; i < r->n; i++)
            memcpy(rows + (size_t)i * row, all + (size_t)order[i] * row, row);
        st = fold_rows(d, stream, r, l, first, rows, err);
        free(rows);
    }
done:
    free(counts);
    free(mine);
    free(all);
    free(order);
    return job_check(d, st, err);
}

/* Frees d and its tables (not the inner backend). */
static void dist_free(dist_be *d)
{
    free(d->proc_of);
    free(d->first_of);
    free(d->names);
    free(d->totals);
    free(d->access);
    free(d);
}

static void dist_destroy(dg_backend_i *be)
{
    dist_be *d = dist_of(be);
    dg_be_destroy(d->in);
    dist_free(d);
}

void dg_dist_local_range(const dg_backend_i *be, int *first, int *n)
{
    if (be->destroy == dist_destroy) {
        const dist_be *d = (const dist_be *)be->impl;
        *first = d->first;
        *n = d->nlocal;
    } else {
        *first = 0;
        *n = be->ndevices;
    }
}

int dg_dist_processes(const dg_backend_i *be, const int **proc_of)
{
    if (be->destroy == dist_destroy) {
        const dist_be *d = (const dist_be *)be->impl;
        *proc_of = d->proc_of;
        return d->comm->size;
    }
    *proc_of = NULL;
    return 1;
}

int dg_dist_private_reads(dg_backend_i *be, int on)
{
    int was = 0;
    if (be->destroy == dist_destroy) {
        dist_be *d = (dist_be *)be->impl;
        was = d->private_reads;
        d->private_reads = on != 0;
    }
    return was;
}

dg_status dg_dist_backend_create(dg_backend_i *inner, dg_comm_i *comm, const dg_dist_info *info,
                                 dg_backend_i **out, dg_error *err)
{
    dist_be *d;
    int p, g = 0, ngdev = 0;
    for (p = 0; p < comm->size; p++) {
        if (info->ndev_of[p] < 1)
            return dg_error_set(err, DG_ERR_VALUE, -1, "process %d of the job has no devices", p);
        ngdev += info->ndev_of[p];
    }
    if (info->ndev_of[comm->rank] != inner->ndevices)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "the job's table disagrees with the backend");
    d = (dist_be *)calloc(1, sizeof(*d));
    if (!d)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    d->proc_of = (int *)malloc((size_t)ngdev * sizeof(int));
    d->first_of = (int *)malloc((size_t)comm->size * sizeof(int));
    d->names = (char *)malloc((size_t)ngdev * DG_DIST_NAME);
    d->totals = (size_t *)malloc((size_t)ngdev * sizeof(size_t));
    d->access = (unsigned char *)malloc((size_t)ngdev * (size_t)ngdev);
    if (!d->proc_of || !d->first_of || !d->names || !d->totals || !d->access) {
        dist_free(d);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (p = 0; p < comm->size; p++) {
        int k;
        d->first_of[p] = g;
        for (k = 0; k < info->ndev_of[p]; k++)
            d->proc_of[g++] = p;
    }
    memcpy(d->names, info->names, (size_t)ngdev * DG_DIST_NAME);
    memcpy(d->totals, info->totals, (size_t)ngdev * sizeof(size_t));
    memcpy(d->access, info->access, (size_t)ngdev * (size_t)ngdev);
    d->in = inner;
    d->comm = comm;
    d->ngdev = ngdev;
    d->first = d->first_of[comm->rank];
    d->nlocal = inner->ndevices;
    /* all-reduces by transport where the backend says they are faster so
     * (DG_BE_XPORT_ALLRED); DGARRAY_JOB_ALLREDUCE=host or =device chooses,
     * to compare and to test both paths on any backend */
    {
        const char *how = getenv("DGARRAY_JOB_ALLREDUCE");
        d->allred_device = dg_be_has(inner, DG_SLOT_TRANSPORT) &&
                           (how && *how ? strcmp(how, "device") == 0
                                        : (inner->flags & DG_BE_XPORT_ALLRED) != 0);
    }
    {
        const dg_status st = dg_be_join(inner, comm, d->first, ngdev, err);
        if (st != DG_OK) {
            dist_free(d);
            return st;
        }
    }
    d->iface.version = DG_BACKEND_VERSION;
    d->iface.name = inner->name;
    d->iface.ndevices = ngdev;
    d->iface.flags = inner->flags & ~(unsigned)(DG_BE_ARG_ALLRED | DG_BE_XPORT_ALLRED);
    if ((inner->flags & DG_BE_IDX_IN) && dg_be_has(inner, DG_SLOT_REDUCE))
        d->iface.flags |= DG_BE_ARG_ALLRED; /* dist_allreduce folds pairs by its reduce */
    /* gemm_wide stays NULL: across processes memory is not shared, so each
     * device computes its products (dg_matmul.c's per-device plan) */
    d->iface.impl = d;
    d->iface.device_info = dist_device_info;
    d->iface.alloc = dist_alloc;
    d->iface.release = dist_release;
    d->iface.bytes_in_use = dist_bytes_in_use;
    d->iface.bytes_held = dist_bytes_held;
    d->iface.trim = dist_trim;
    d->iface.pos = dist_pos;
    d->iface.wait = dist_wait;
    d->iface.sync = dist_sync;
    d->iface.sync_for = dist_sync_for;
    d->iface.sync_all = dist_sync_all;
    d->iface.copy = dist_copy;
    d->iface.elementwise = dist_elementwise;
    d->iface.fill = dist_fill;
    /* optional slots the inner backend lacks stay NULL, so that the core
     * makes the same choice on every process */
    d->iface.reduce = dg_be_has(inner, DG_SLOT_REDUCE) ? dist_reduce : NULL;
    d->iface.scan = dg_be_has(inner, DG_SLOT_SCAN) ? dist_scan : NULL;
    d->iface.gemm = dg_be_has(inner, DG_SLOT_GEMM) ? dist_gemm : NULL;
    d->iface.select = dg_be_has(inner, DG_SLOT_SELECT) ? dist_select : NULL;
    d->iface.rows = dg_be_has(inner, DG_SLOT_ROWS) ? dist_rows : NULL;
    d->iface.route = dg_be_has(inner, DG_SLOT_ROUTE) ? dist_route : NULL;
    d->iface.sort = dg_be_has(inner, DG_SLOT_SORT) ? dist_sort : NULL;
    d->iface.dense = dg_be_has(inner, DG_SLOT_DENSE) ? dist_dense : NULL;
    d->iface.fft = dg_be_has(inner, DG_SLOT_FFT) ? dist_fft : NULL;
    d->iface.search = dg_be_has(inner, DG_SLOT_SEARCH) ? dist_search : NULL;
    d->iface.count = dg_be_has(inner, DG_SLOT_COUNT) ? dist_count : NULL;
    d->iface.reduce_parts = dg_be_has(inner, DG_SLOT_REDUCE_PARTS) ? dist_reduce_parts : NULL;
    /* fusion: every process records the same chain (the same calls, and
     * joins decided by buffers and by views within one buffer, which the
     * placeholder of another process's memory keeps apart by offset); a
     * chain's pieces are work on one device each, no transfer, so each
     * process runs its own devices' pieces whenever it flushes */
    d->iface.fused = dg_be_has(inner, DG_SLOT_FUSED) ? dist_fused : NULL;
    d->iface.exchange = dist_exchange;
    d->iface.can_access = dist_can_access;
    /* the all-reduce of the job, whatever the inner backend has: one
     * exchange of the partials (dist_allreduce); the core calls it on every
     * process alike, since can_access says no across processes */
    d->iface.allreduce = dist_allreduce;
    d->iface.destroy = dist_destroy;
    *out = &d->iface;
    return DG_OK;
}
