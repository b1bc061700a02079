/* The dispatch file: the one place that calls a backend's function table.
 *
 * Every slot of dg_backend_i is reached through its wrapper dg_be_<slot>,
 * which passes the arguments on and, for an OPTIONAL slot the backend left
 * NULL, gives the default the interface states (dg_backend.h): a fallback
 * built from the required slots, a neutral answer, or DG_ERR_NOTIMPL with
 * one message per slot.  The wrappers add no other behaviour, so a backend
 * is free to fill a slot or not, and the rest of the core never tests a
 * slot for NULL (it asks dg_be_has where it chooses between the backend's
 * way and its own). */
#include "dg_backend.h"
#include "dg_fpe.h"

/* What is missing, for the message of a slot that raises without it. */
static const char *missing_what(dg_be_slot s)
{
    switch (s) {
    case DG_SLOT_REDUCE: return "has no reductions";
    case DG_SLOT_SCAN: return "has no scans";
    case DG_SLOT_GEMM: return "has no matrix products";
    case DG_SLOT_EXCHANGE: return "has no exchange";
    case DG_SLOT_ALLREDUCE: return "has no all-reduce";
    case DG_SLOT_SELECT: return "cannot compact arrays";
    case DG_SLOT_ROWS:
    case DG_SLOT_ROUTE: return "cannot gather rows";
    case DG_SLOT_SORT: return "cannot sort";
    case DG_SLOT_DENSE: return "has no dense linear algebra";
    case DG_SLOT_FFT: return "has no FFT";
    case DG_SLOT_JOIN:
    case DG_SLOT_TRANSPORT: return "cannot run as one process of several";
    case DG_SLOT_FUSED: return "cannot run fused elementwise chains";
    case DG_SLOT_SEARCH: return "has no sorted searches";
    case DG_SLOT_COUNT: return "has no bin counts";
    default: return "lacks an optional function";
    }
}

int dg_be_has(const dg_backend_i *be, dg_be_slot s)
{
    const int filled[DG_NSLOTS_OPTIONAL] = {
        [DG_SLOT_REDUCE] = be->reduce != NULL,
        [DG_SLOT_SCAN] = be->scan != NULL,
        [DG_SLOT_GEMM] = be->gemm != NULL,
        [DG_SLOT_EXCHANGE] = be->exchange != NULL,
        [DG_SLOT_ALLREDUCE] = be->allreduce != NULL,
        [DG_SLOT_CAN_ACCESS] = be->can_access != NULL,
        [DG_SLOT_SYNC_FOR] = be->sync_for != NULL,
        [DG_SLOT_SELECT] = be->select != NULL,
        [DG_SLOT_ROWS] = be->rows != NULL,
        [DG_SLOT_ROUTE] = be->route != NULL,
        [DG_SLOT_SORT] = be->sort != NULL,
        [DG_SLOT_REDUCE_PARTS] = be->reduce_parts != NULL,
        [DG_SLOT_BYTES_HELD] = be->bytes_held != NULL,
        [DG_SLOT_TRIM] = be->trim != NULL,
        [DG_SLOT_DENSE] = be->dense != NULL,
        [DG_SLOT_FFT] = be->fft != NULL,
        [DG_SLOT_JOIN] = be->join != NULL,
        [DG_SLOT_TRANSPORT] = be->transport != NULL,
        [DG_SLOT_FUSED] = be->fused != NULL,
        [DG_SLOT_SEARCH] = be->search != NULL,
        [DG_SLOT_COUNT] = be->count != NULL,
        [DG_SLOT_GEMM_WIDE] = be->gemm_wide != NULL,
        [DG_SLOT_WATCH] = be->watch != NULL,
        [DG_SLOT_MARK] = be->mark != NULL,
    };
    return (unsigned)s < DG_NSLOTS_OPTIONAL && filled[s];
}

dg_status dg_be_need(const dg_backend_i *be, dg_be_slot s, dg_error *err)
{
    if (dg_be_has(be, s))
        return DG_OK;
    return dg_error_set(err, DG_ERR_NOTIMPL, -1, "the %s backend %s", be->name,
                        missing_what(s));
}

/* ---- memory ------------------------------------------------------------------ */

dg_status dg_be_device_info(dg_backend_i *be, int dev, char *name, size_t cap,
                            size_t *total_bytes, size_t *free_bytes, dg_error *err)
{
    return be->device_info(be, dev, name, cap, total_bytes, free_bytes, err);
}

dg_status dg_be_alloc(dg_backend_i *be, int dev, size_t nbytes, void **ptr, dg_error *err)
{
    return be->alloc(be, dev, nbytes, ptr, err);
}

void dg_be_release(dg_backend_i *be, int dev, void *ptr)
{
    be->release(be, dev, ptr);
}

size_t dg_be_bytes_in_use(dg_backend_i *be, int dev)
{
    return be->bytes_in_use(be, dev);
}

size_t dg_be_bytes_held(dg_backend_i *be, int dev)
{
    return be->bytes_held ? be->bytes_held(be, dev) : be->bytes_in_use(be, dev);
}

dg_status dg_be_trim(dg_backend_i *be, int dev, dg_error *err)
{
    return be->trim ? be->trim(be, dev, err) : DG_OK;
}

/* ---- what was asked (dg_be_counts_get) ------------------------------------------ */

static dg_be_counts counts;

void dg_be_counts_get(dg_be_counts *out, int reset)
{
    *out = counts;
    if (reset)
        memset(&counts, 0, sizeof counts);
}

/* Counts a slot call of `kind` enqueueing work on dev. */
static void note_work(int kind, int dev)
{
    if (dev >= 0 && dev < DG_BE_STAT_DEVS)
        counts.works[kind][dev]++;
}

/* Counts the n elements of an N-d block that dev's work reads. */
static void note_read(int dev, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    int ax;
    for (ax = 0; ax < ndim; ax++)
        n *= shape[ax];
    if (dev >= 0 && dev < DG_BE_STAT_DEVS)
        counts.read[dev] += n;
}

/* Counts a copy's bytes by where they go. */
static void note_copy(const dg_copy_desc *d)
{
    int64_t n = d->itemsize;
    int ax;
    for (ax = 0; ax < d->ndim; ax++)
        n *= d->shape[ax];
    counts.host_copies += (d->src_dev == DG_HOST) != (d->dst_dev == DG_HOST);
    if (d->src_dev == DG_HOST && d->dst_dev != DG_HOST)
        counts.from_host += n;
    else if (d->dst_dev == DG_HOST && d->src_dev != DG_HOST)
        counts.to_host += n;
    else if (d->src_dev != d->dst_dev)
        counts.between += n;
}

/* ---- ordering ------------------------------------------------------------------ */

dg_pos dg_be_pos(dg_backend_i *be, int dev, int stream)
{
    return be->pos(be, dev, stream);
}

dg_status dg_be_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err)
{
    if (p.seq && p.dev != dev && dev >= 0 && dev < DG_BE_STAT_DEVS)
        counts.waits_across[dev]++;
    return be->wait(be, dev, stream, p, err);
}

dg_status dg_be_sync(dg_backend_i *be, dg_pos p, dg_error *err)
{
    counts.syncs += p.seq != 0;
    return be->sync(be, p, err);
}

dg_status dg_be_sync_all(dg_backend_i *be, dg_error *err)
{
    return be->sync_all(be, err);
}

dg_status dg_be_sync_for(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                         dg_error *err)
{
    if (be->sync_for)
        return be->sync_for(be, p, timeout_us, done, err);
    *done = 0;
    DG_CHECK(be->sync(be, p, err));
    *done = 1;
    return DG_OK;
}

/* ---- work on one stream ---------------------------------------------------------- */

dg_status dg_be_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *d,
                     dg_error *err)
{
    note_work(DG_BE_WORK_COPY, dev);
    note_copy(d);
    return be->copy(be, dev, stream, d, err);
}

dg_status dg_be_elementwise(dg_backend_i *be, int dev, int stream, const dg_ew_desc *d,
                            dg_error *err)
{
    note_work(DG_BE_WORK_ELEMENTWISE, dev);
    return be->elementwise(be, dev, stream, d, err);
}

dg_status dg_be_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d,
                     dg_error *err)
{
    note_work(DG_BE_WORK_FILL, dev);
    return be->fill(be, dev, stream, d, err);
}

/* Calls slot `fn` of be with (dev, stream, d, err), or raises DG_ERR_NOTIMPL
 * for slot s where the backend left it NULL. */
#define DG_BE_OPTIONAL(fn, s)                                   \
    do {                                                        \
        if (!be->fn)                                            \
            return dg_be_need(be, s, err);                      \
        return be->fn(be, dev, stream, d, err);                 \
    } while (0)

dg_status dg_be_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                       dg_error *err)
{
    note_work(DG_BE_WORK_REDUCE, dev);
    DG_BE_OPTIONAL(reduce, DG_SLOT_REDUCE);
}

dg_status dg_be_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d,
                     dg_error *err)
{
    note_work(DG_BE_WORK_SCAN, dev);
    DG_BE_OPTIONAL(scan, DG_SLOT_SCAN);
}

dg_status dg_be_gemm(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                     dg_error *err)
{
    note_work(DG_BE_WORK_GEMM, dev);
    DG_BE_OPTIONAL(gemm, DG_SLOT_GEMM);
}

dg_status dg_be_select(dg_backend_i *be, int dev, int stream, const dg_select_desc *d,
                       dg_error *err)
{
    note_work(DG_BE_WORK_SELECT, dev);
    note_read(dev, d->ndim, d->shape);
    DG_BE_OPTIONAL(select, DG_SLOT_SELECT);
}

dg_status dg_be_rows(dg_backend_i *be, int dev, int stream, const dg_rows_desc *d,
                     dg_error *err)
{
    note_work(DG_BE_WORK_ROWS, dev);
    DG_BE_OPTIONAL(rows, DG_SLOT_ROWS);
}

dg_status dg_be_route(dg_backend_i *be, int dev, int stream, const dg_route_desc *d,
                      dg_error *err)
{
    note_work(DG_BE_WORK_ROUTE, dev);
    DG_BE_OPTIONAL(route, DG_SLOT_ROUTE);
}

dg_status dg_be_sort(dg_backend_i *be, int dev, int stream, const dg_sort_desc *d,
                     dg_error *err)
{
    note_work(DG_BE_WORK_SORT, dev);
    DG_BE_OPTIONAL(sort, DG_SLOT_SORT);
}

dg_status dg_be_dense(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d,
                      dg_error *err)
{
    note_work(DG_BE_WORK_DENSE, dev);
    DG_BE_OPTIONAL(dense, DG_SLOT_DENSE);
}

dg_status dg_be_fft(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d,
                    dg_error *err)
{
    note_work(DG_BE_WORK_FFT, dev);
    DG_BE_OPTIONAL(fft, DG_SLOT_FFT);
}

dg_status dg_be_fused(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                      dg_error *err)
{
    note_work(DG_BE_WORK_FUSED, dev);
    DG_BE_OPTIONAL(fused, DG_SLOT_FUSED);
}

dg_status dg_be_search(dg_backend_i *be, int dev, int stream, const dg_search_desc *d,
                       dg_error *err)
{
    note_work(DG_BE_WORK_SEARCH, dev);
    DG_BE_OPTIONAL(search, DG_SLOT_SEARCH);
}

dg_status dg_be_count(dg_backend_i *be, int dev, int stream, const dg_count_desc *d,
                      dg_error *err)
{
    note_work(DG_BE_WORK_COUNT, dev);
    note_read(dev, d->ndim, d->shape);
    DG_BE_OPTIONAL(count, DG_SLOT_COUNT);
}

#undef DG_BE_OPTIONAL

dg_status dg_be_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *d, int64_t *rows,
                             dg_error *err)
{
    if (be->reduce_parts)
        return be->reduce_parts(be, dev, d, rows, err);
    *rows = 1;
    return DG_OK;
}

/* ---- work across devices ----------------------------------------------------------- */

dg_status dg_be_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err)
{
    int i;
    for (i = 0; i < n; i++)
        counts.between += (int64_t)x[i].nbytes;
    if (be->exchange)
        return be->exchange(be, x, n, err);
    for (i = 0; i < n; i++) {
        const dg_copy_desc cp = dg_copy_bytes(x[i].src_dev, x[i].src, x[i].dst_dev, x[i].dst,
                                              x[i].nbytes);
        if (x[i].src_dev == x[i].dst_dev)
            return dg_error_set(err, DG_ERR_INTERNAL, x[i].src_dev,
                                "an exchange transfer within device %d", x[i].src_dev);
        DG_CHECK(be->wait(be, x[i].dst_dev, DG_STREAM_TRANSFER,
                          be->pos(be, x[i].src_dev, DG_STREAM_TRANSFER), err));
        if (x[i].nbytes)
            DG_CHECK(be->copy(be, x[i].dst_dev, DG_STREAM_TRANSFER, &cp, err));
        DG_CHECK(be->wait(be, x[i].src_dev, DG_STREAM_TRANSFER,
                          be->pos(be, x[i].dst_dev, DG_STREAM_TRANSFER), err));
    }
    return DG_OK;
}

dg_status dg_be_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *d,
                          dg_error *err)
{
    if (!be->allreduce)
        return dg_be_need(be, DG_SLOT_ALLREDUCE, err);
    counts.allreduces++;
    counts.allreduce_bytes += (int64_t)d->n * d->count * dg_dtype_size(d->dtype);
    return be->allreduce(be, stream, d, err);
}

int dg_be_can_access(dg_backend_i *be, int dev, int other)
{
    return be->can_access ? be->can_access(be, dev, other) : 0;
}

int dg_be_gemm_wide(dg_backend_i *be, int dtype)
{
    return be->gemm_wide ? be->gemm_wide(be, dtype) : 0;
}

dg_status dg_be_join(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev,
                     dg_error *err)
{
    if (!be->join)
        return dg_be_need(be, DG_SLOT_JOIN, err);
    return be->join(be, comm, first_gdev, ngdev, err);
}

dg_status dg_be_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err)
{
    if (!be->transport)
        return dg_be_need(be, DG_SLOT_TRANSPORT, err);
    return be->transport(be, x, n, err);
}

dg_status dg_be_watch(dg_backend_i *be, double timeout_s, dg_error *err)
{
    return be->watch ? be->watch(be, timeout_s, err) : DG_OK;
}

dg_status dg_be_mark(dg_backend_i *be, dg_pos p, dg_error *err)
{
    return be->mark ? be->mark(be, p, err) : DG_OK;
}

/* dg_fpe_source_fn of a backend's fpe_fold. */
static void be_fpe_fold(void *ctx, uint32_t *noted, const char **where)
{
    dg_backend_i *be = (dg_backend_i *)ctx;
    be->fpe_fold(be, noted, where);
}

dg_status dg_be_fpe_attach(dg_backend_i *be, dg_error *err)
{
    be->fpe_actions = dg_fpe_actions;
    if (be->fpe_fold != NULL && dg_fpe_add_source(be_fpe_fold, be) < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "too many backends note floating-point errors at once");
    return DG_OK;
}

void dg_be_destroy(dg_backend_i *be)
{
    if (be->fpe_fold != NULL)
        dg_fpe_remove_source(be_fpe_fold, be);
    be->destroy(be);
}
