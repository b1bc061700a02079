/* Copies between distributed arrays and host memory (dg_array_scatter,
 * dg_array_gather, their parts; the copy of one chunk's box, which
 * dg_chunkio.c's copies of one chunk at a time use too) and the host's
 * waits for them.
 *
 * Each chunk's copy is enqueued on its device's compute stream (after the
 * array's earlier work there), then the host waits for those streams: the
 * host memory is in use until the copies have run, so the wait is made even
 * after a failure. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_dist.h"

dg_status dg_chunk_host_copy(dg_backend_i *be, const dg_chunk *c, const dg_copy_desc *cp,
                             unsigned how, char *used, int64_t *nbytes, dg_error *err)
{
    const dg_access acc = dg_acc(c->buf, how);
    dg_status st = dg_enqueue(be, c->device, DG_STREAM_COMPUTE, &acc, 1, dg_work_copy(cp), err);
    int64_t n = cp->itemsize;
    int ax;
    used[c->device] = 1;
    for (ax = 0; ax < cp->ndim; ax++)
        n *= cp->shape[ax];
    if (st == DG_OK && nbytes)
        *nbytes += n;
    return st;
}

dg_status dg_devices_sync(dg_backend_i *be, const char *used, dg_status st, dg_error *err)
{
    dg_error e2 = DG_ERROR_INIT;
    int d;
    for (d = 0; d < be->ndevices; d++) {
        dg_status s2;
        if (!used[d])
            continue;
        s2 = dg_be_sync(be, dg_be_pos(be, d, DG_STREAM_COMPUTE), st == DG_OK ? err : &e2);
        if (st == DG_OK)
            st = s2;
    }
    return st;
}

/* Slab `part` of `nparts` of box b: its rows [L part / nparts, L (part + 1)
 * / nparts) along its first axis of extent L >= nparts, else along its
 * longest axis (so that no slab is much more than 1 / nparts of b; all of b
 * for part 0 where every extent is 1).  0 if the slab is empty. */
static int slab_of(const dg_box *b, int64_t part, int64_t nparts, dg_box *out)
{
    int ax, i;
    int64_t len, lo, hi;
    *out = *b;
    if (dg_box_size(b) == 0)
        return 0;
    if (nparts <= 1 || b->ndim == 0)
        return part == 0;
    for (ax = 0, i = 0; i < b->ndim; i++) {
        if (dg_range_len(b->r[i]) >= nparts) {
            ax = i;
            break;
        }
        if (dg_range_len(b->r[i]) > dg_range_len(b->r[ax]))
            ax = i;
    }
    len = dg_range_len(b->r[ax]);
    /* floor(len * part / nparts) without overflow (part < nparts <= DG_MAX_PARTS) */
    lo = len / nparts * part + len % nparts * part / nparts;
    hi = len / nparts * (part + 1) + len % nparts * (part + 1) / nparts;
    if (hi <= lo)
        return 0;
    out->r[ax] = dg_range_make(b->r[ax].start + lo * b->r[ax].step,
                               b->r[ax].start + hi * b->r[ax].step, b->r[ax].step);
    return 1;
}

dg_status dg_array_scatter(dg_array *a, const char *host, const int64_t *hstrides,
                           dg_error *err)
{
    return dg_array_scatter_part(a, host, hstrides, 0, 1, NULL, err);
}

dg_status dg_array_scatter_part(dg_array *a, const char *host, const int64_t *hstrides,
                                int64_t part, int64_t nparts, int64_t *nbytes, dg_error *err)
{
    dg_backend_i *be = a->be;
    int i, ax;
    dg_status st = DG_OK;
    char *used;
    if (nbytes)
        *nbytes = 0;
    if (nparts < 1 || nparts > DG_MAX_PARTS || part < 0 || part >= nparts)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "part %lld of %lld of a host copy",
                            (long long)part, (long long)nparts);
    DG_CHECK(dg_array_unshare(a, err));
    used = (char *)calloc((size_t)be->ndevices, 1);
    if (!used)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < a->nchunks && st == DG_OK; i++) {
        dg_chunk *c = &a->chunks[i];
        dg_copy_desc cp;
        const char *src = host;
        dg_box pb;
        if (!slab_of(&c->box, part, nparts, &pb))
            continue;
        memset(&cp, 0, sizeof(cp));
        cp.ndim = a->ndim;
        cp.itemsize = dg_dtype_size(a->dtype);
        for (ax = 0; ax < a->ndim; ax++) {
            cp.shape[ax] = dg_range_len(pb.r[ax]);
            src += pb.r[ax].start * hstrides[ax];
            cp.src_strides[ax] = hstrides[ax] * pb.r[ax].step;
        }
        cp.src_dev = DG_HOST;
        cp.src = src;
        cp.dst_dev = c->device;
        dg_chunk_view(c, &pb, &cp.dst, cp.dst_strides);
        st = dg_chunk_host_copy(be, c, &cp, DG_ACC_WRITE, used, nbytes, err);
    }
    st = dg_devices_sync(be, used, st, err);
    free(used);
    return st;
}

dg_status dg_array_gather(dg_array *a, const dg_box *region, char *host,
                          const int64_t *hstrides, dg_error *err)
{
    return dg_array_gather_part(a, region, host, hstrides, 0, 1, NULL, err);
}

/* In a job of several processes where every process holds all of `region`
 * on its own devices (a reduction's value, on every device after the job's
 * all-reduce; an array replicated on each process), each process reads its
 * own copy and no bytes cross processes (replicas agree: REPLICA mode's
 * rule, and the all-reduce gives every device the same bits): *yes = 1,
 * with src[] (borrowed: the array's layout, a->nchunks entries) cut down to
 * this process's chunks, *n their number, and idx[k] (borrowed, room for
 * a->nchunks) the chunk of a->chunks that src[k] now is.  Else *yes = 0,
 * src[] and *n unchanged.  Every process makes the same choice: it depends
 * on the layout and the job's table alone, the same on every process. */
static dg_status own_copy(const dg_array *a, dg_plan_chunk *src, int *n, int *idx,
                          const dg_box *region, int *yes, dg_error *err)
{
    const int *proc_of;
    const int np = dg_dist_processes(a->be, &proc_of);
    const int64_t want = dg_box_size(region);
    int first, nloc, p, i, k, me;
    int64_t *held;
    dg_plan_chunk *sub;
    *yes = 0;
    if (np <= 1)
        return DG_OK;
    dg_dist_local_range(a->be, &first, &nloc);
    me = proc_of[first];
    held = (int64_t *)calloc((size_t)np, sizeof(int64_t));
    sub = (dg_plan_chunk *)malloc((size_t)*n * sizeof(*sub) + 1);
    if (!held || !sub) {
        free(held);
        free(sub);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    /* a quick test first: each process must hold at least want elements of it */
    for (i = 0; i < *n; i++) {
        dg_box c;
        if (dg_box_intersect(&src[i].box, region, &c))
            held[proc_of[src[i].device]] += dg_box_size(&c);
    }
    *yes = 1;
    for (p = 0; p < np && *yes; p++)
        *yes = held[p] >= want;
    for (p = 0; p < np && *yes; p++) {
        dg_error e2 = DG_ERROR_INIT;
        for (k = 0, i = 0; i < *n; i++)
            if (proc_of[src[i].device] == p)
                sub[k++] = src[i];
        *yes = dg_plan_check_cover(sub, k, region, &e2) == DG_OK;
    }
    if (*yes) {
        for (k = 0, i = 0; i < *n; i++)
            if (proc_of[src[i].device] == me) {
                idx[k] = i;
                src[k++] = src[i];
            }
        *n = k;
    }
    free(held);
    free(sub);
    return DG_OK;
}

/* Enqueues the copies of slab `part` of `nparts` of region of a to host
 * (dg_array_gather_part), marking the devices they run on in used[]; no
 * wait. */
static dg_status gather_enqueue(dg_array *a, const dg_box *region, char *host,
                                const int64_t *hstrides, int64_t part, int64_t nparts,
                                int64_t *nbytes, char *used, dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_plan_chunk *src = NULL;
    dg_plan_chunk dst;
    dg_plan plan = {0, 0, NULL};
    dg_status st;
    int i, ax, nsrc = a->nchunks, own = 0, was = 0;
    int *idx = NULL;

    if (nparts < 1 || nparts > DG_MAX_PARTS || part < 0 || part >= nparts)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "part %lld of %lld of a host copy",
                            (long long)part, (long long)nparts);
    if (a->mode != DG_MODE_REPLICA)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "gather of an array not in replica mode");
    if (dg_box_size(region) == 0)
        return DG_OK;
    idx = (int *)malloc((size_t)a->nchunks * sizeof(int) + 1);
    if (!idx)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    DG_CHECK_GOTO(dg_array_layout(a, &src, err), st, done);
    DG_CHECK_GOTO(own_copy(a, src, &nsrc, idx, region, &own, err), st, done);
    dst.device = DG_HOST;
    dst.box = *region;
    DG_CHECK_GOTO(dg_plan_build(src, nsrc, &dst, 1, &plan, err), st, done);
    if (own)
        was = dg_dist_private_reads(be, 1);
    for (i = 0; i < plan.ncopies && st == DG_OK; i++) {
        const dg_plan_copy *pc = &plan.copies[i];
        dg_chunk *c = &a->chunks[own ? idx[pc->src] : pc->src];
        dg_copy_desc cp;
        char *dptr = host;
        dg_box pb;
        if (!slab_of(&pc->box, part, nparts, &pb))
            continue;
        memset(&cp, 0, sizeof(cp));
        cp.ndim = a->ndim;
        cp.itemsize = dg_dtype_size(a->dtype);
        for (ax = 0; ax < a->ndim; ax++) {
            cp.shape[ax] = dg_range_len(pb.r[ax]);
            dptr += dg_box_pos(region, ax, pb.r[ax].start) * hstrides[ax];
            cp.dst_strides[ax] = cp.shape[ax] > 1
                ? hstrides[ax] * (pb.r[ax].step / region->r[ax].step) : 0;
        }
        cp.src_dev = c->device;
        dg_chunk_view(c, &pb, (char **)&cp.src, cp.src_strides);
        cp.dst_dev = DG_HOST;
        cp.dst = dptr;
        st = dg_chunk_host_copy(be, c, &cp, DG_ACC_READ, used, nbytes, err);
    }
    if (own)
        dg_dist_private_reads(be, was);
done:
    dg_plan_free(&plan);
    free(src);
    free(idx);
    return st;
}

dg_status dg_array_gather_part(dg_array *a, const dg_box *region, char *host,
                               const int64_t *hstrides, int64_t part, int64_t nparts,
                               int64_t *nbytes, dg_error *err)
{
    char *used = (char *)calloc((size_t)a->be->ndevices, 1);
    dg_status st;
    if (nbytes)
        *nbytes = 0;
    if (!used)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    st = gather_enqueue(a, region, host, hstrides, part, nparts, nbytes, used, err);
    st = dg_devices_sync(a->be, used, st, err);
    free(used);
    return st;
}

dg_status dg_array_gather_all(dg_array *const *a, int n, char *const *host,
                              const int64_t *const *hstrides, dg_error *err)
{
    char *used;
    dg_status st = DG_OK;
    int i;
    if (n < 1)
        return DG_OK;
    if (!(used = (char *)calloc((size_t)a[0]->be->ndevices, 1)))
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < n && st == DG_OK; i++) {
        dg_box whole;
        dg_box_full(&whole, a[i]->ndim, a[i]->shape);
        st = gather_enqueue(a[i], &whole, host[i], hstrides[i], 0, 1, NULL, used, err);
    }
    /* wait even after a failure: queued copies write into the host memory */
    st = dg_devices_sync(a[0]->be, used, st, err);
    free(used);
    return st;
}

dg_status dg_array_sync(dg_array *a, dg_error *err)
{
    int i;
    for (i = 0; i < a->nchunks; i++)
        DG_CHECK(dg_buffer_sync(a->be, a->chunks[i].buf, err));
    return DG_OK;
}
