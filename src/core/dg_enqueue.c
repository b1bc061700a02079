/* Device work and the memory it touches (dg_enqueue.h): the life of device
 * memory, stream-ordered, and the one helper through which all device work
 * is enqueued with its waits and records.
 *
 * What memory remembers (dg_mem): for each (device, stream) slot, the
 * position of the last write not known to be ordered before another, and
 * of the last read.  Work on (dev, s) that reads m waits for m's writes on
 * other streams; work that writes m waits for its reads there too.  After
 * the work, a read sets m's read slot of s; a write, having waited for every
 * recorded access, leaves s's slot as m's only write; a part write (a region
 * other writes of the same batch leave alone) joins the writes already
 * recorded.  Waits and records are made here alone: dg_mem_use_* and
 * dg_mem_mark_* are static. */
#include <stdlib.h>
#include <string.h>

#include "dg_enqueue.h"
#include "dg_fuse.h"

/* ---- the record ------------------------------------------------------------------ */

static int same_stream(dg_pos p, int dev, int stream)
{
    return p.dev == dev && p.stream == stream;
}

int dg_mem_read_waits(const dg_mem *m, int dev, int stream)
{
    int i;
    for (i = 0; i < m->nslots; i++)
        if (m->writes[i].seq && !same_stream(m->writes[i], dev, stream))
            return 1;
    return 0;
}

/* Makes (dev, stream) wait before reading m: for its last writes. */
static dg_status mem_use_read(dg_backend_i *be, dg_mem *m, int dev, int stream, dg_error *err)
{
    int i;
    for (i = 0; i < m->nslots; i++)
        if (m->writes[i].seq && !same_stream(m->writes[i], dev, stream))
            DG_CHECK(dg_be_wait(be, dev, stream, m->writes[i], err));
    return DG_OK;
}

/* Makes (dev, stream) wait before writing m: for its last writes and reads. */
static dg_status mem_use_write(dg_backend_i *be, dg_mem *m, int dev, int stream, dg_error *err)
{
    int i;
    DG_CHECK(mem_use_read(be, m, dev, stream, err));
    for (i = 0; i < m->nslots; i++)
        if (m->reads[i].seq && !same_stream(m->reads[i], dev, stream))
            DG_CHECK(dg_be_wait(be, dev, stream, m->reads[i], err));
    return DG_OK;
}

/* The slot of position p, or -1 for a position of no stream. */
static int slot_of(const dg_mem *m, dg_pos p)
{
    int slot = p.dev * DG_NSTREAMS + p.stream;
    return slot >= 0 && slot < m->nslots ? slot : -1;
}

/* Records that the work ending at p read m. */
static void mem_mark_read(dg_mem *m, dg_pos p)
{
    int slot = slot_of(m, p);
    if (slot >= 0)
        m->reads[slot] = p;
}

/* Records that the work ending at p wrote m, after waiting (mem_use_write)
 * for every earlier access: p alone is then m's last write. */
static void mem_mark_write(dg_mem *m, dg_pos p)
{
    int i, slot = slot_of(m, p);
    for (i = 0; i < m->nslots; i++)
        m->writes[i].seq = m->reads[i].seq = 0;
    if (slot >= 0)
        m->writes[slot] = p;
}

/* Records that the work ending at p wrote a part of m that other recorded
 * writes, not ordered before p, did not touch: p joins m's last writes. */
static void mem_mark_write_part(dg_mem *m, dg_pos p)
{
    int slot = slot_of(m, p);
    if (slot >= 0)
        m->writes[slot] = p;
}

/* ---- memory and buffers ------------------------------------------------------------ */

/* New memory of nbytes on dev (ptr NULL when nbytes is 0), refcnt 1, its
 * allocation recorded as its first write.  New reference in *out. */
static dg_status mem_new(dg_backend_i *be, int dev, size_t nbytes, dg_mem **out,
                         dg_error *err)
{
    int nslots = be->ndevices * DG_NSTREAMS;
    dg_mem *m = (dg_mem *)calloc(1, sizeof(dg_mem) + 2 * (size_t)nslots * sizeof(dg_pos));
    dg_status st;
    if (!m)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    m->refcnt = 1;
    m->device = dev;
    m->nbytes = nbytes;
    m->nslots = nslots;
    m->writes = (dg_pos *)(m + 1);
    m->reads = m->writes + nslots;
    if (nbytes) {
        st = dg_be_alloc(be, dev, nbytes, &m->ptr, err);
        if (st != DG_OK) {
            free(m);
            return st;
        }
        mem_mark_write(m, dg_be_pos(be, dev, DG_STREAM_COMPUTE));
    }
    *out = m;
    return DG_OK;
}

/* Drops a reference to m; the last one releases the memory, ordered on the
 * compute stream after every recorded access (or, if that ordering cannot
 * be enqueued, after the host waited for them). */
static void mem_decref(dg_backend_i *be, dg_mem *m)
{
    int i;
    dg_error e = DG_ERROR_INIT;
    if (!m || --m->refcnt > 0)
        return;
    if (m->ptr) {
        if (mem_use_write(be, m, m->device, DG_STREAM_COMPUTE, &e) != DG_OK) {
            dg_error_clear(&e);
            for (i = 0; i < m->nslots; i++) {
                dg_be_sync(be, m->writes[i], &e);
                dg_be_sync(be, m->reads[i], &e);
            }
        }
        dg_be_release(be, m->device, m->ptr);
    }
    free(m);
}

/* A buffer of memory m (whose reference it takes over).  New reference. */
static dg_status buffer_of(dg_mem *m, dg_buffer **out, dg_error *err)
{
    dg_buffer *b = (dg_buffer *)calloc(1, sizeof(dg_buffer));
    if (!b)
        return dg_error_set(err, DG_ERR_NOMEM, m->device, "out of host memory");
    b->refcnt = 1;
    b->device = m->device;
    b->ptr = m->ptr;
    b->nbytes = m->nbytes;
    b->mem = m;
    *out = b;
    return DG_OK;
}

dg_status dg_buffer_new(dg_backend_i *be, int dev, size_t nbytes, dg_buffer **out,
                        dg_error *err)
{
    dg_mem *m = NULL;
    dg_status st;
    DG_CHECK(mem_new(be, dev, nbytes, &m, err));
    st = buffer_of(m, out, err);
    if (st != DG_OK)
        mem_decref(be, m);
    return st;
}

dg_status dg_buffer_share(dg_buffer *b, dg_buffer **out, dg_error *err)
{
    dg_status st = buffer_of(b->mem, out, err);
    if (st == DG_OK)
        b->mem->refcnt++;
    return st;
}

void dg_buffer_decref(dg_backend_i *be, dg_buffer *b)
{
    if (!b || --b->refcnt > 0)
        return;
    mem_decref(be, b->mem);
    free(b);
}

dg_status dg_buffer_unshare(dg_backend_i *be, dg_buffer *b, dg_error *err)
{
    /* new memory, every byte copied over; the old memory's reference,
     * handed to `old`, dropped (the other buffers keep it) */
    dg_copy_desc all;
    dg_buffer *old = NULL;
    if (b->mem->refcnt < 2)
        return DG_OK; /* the common case, before the copy's description is built */
    all = dg_copy_bytes(b->device, NULL, b->device, NULL, b->mem->nbytes);
    DG_CHECK(dg_buffer_renew(be, b, &all, b->mem->nbytes ? 1 : 0, &old, err));
    dg_buffer_decref(be, old);
    return DG_OK;
}

dg_status dg_buffer_renew(dg_backend_i *be, dg_buffer *b, const dg_copy_desc *keep, int n,
                          dg_buffer **old, dg_error *err)
{
    dg_mem *was = b->mem, *m = NULL;
    dg_access acc[2];
    dg_status st = DG_OK;
    int i;
    *old = NULL;
    DG_CHECK(mem_new(be, was->device, was->nbytes, &m, err));
    acc[0].mem = was;
    acc[0].how = DG_ACC_READ;
    acc[1].mem = m;
    acc[1].how = DG_ACC_WRITE;
    acc[0].dev = acc[0].stream = acc[1].dev = acc[1].stream = -1; /* the copy's own */
    for (i = 0; i < n && st == DG_OK; i++) {
        dg_copy_desc c = keep[i];
        c.src_dev = c.dst_dev = was->device;
        c.src = (const char *)was->ptr + (intptr_t)keep[i].src;
        c.dst = (char *)m->ptr + (intptr_t)keep[i].dst;
        st = dg_enqueue(be, was->device, DG_STREAM_COMPUTE, acc, 2, dg_work_copy(&c), err);
    }
    /* the old memory's reference passes from b to *old */
    if (st == DG_OK)
        st = buffer_of(was, old, err);
    if (st != DG_OK) {
        mem_decref(be, m);
        return st;
    }
    b->mem = m;
    b->ptr = m->ptr;
    return DG_OK;
}

dg_status dg_buffer_sync(dg_backend_i *be, dg_buffer *b, dg_error *err)
{
    int i;
    if (dg_fuse_pending())
        DG_CHECK(dg_fuse_touch_buffer(b, err));
    for (i = 0; i < b->mem->nslots; i++)
        DG_CHECK(dg_be_sync(be, b->mem->writes[i], err));
    return DG_OK;
}

/* ---- work ---------------------------------------------------------------------------- */

/* The slots as work: ctx is the slot's descriptor. */
#define DG_SLOT_WORK(slot, desc_t)                                                         \
    static dg_status run_##slot(dg_backend_i *be, int dev, int stream, void *ctx,          \
                                dg_error *err)                                             \
    {                                                                                      \
        return dg_be_##slot(be, dev, stream, (const desc_t *)ctx, err);                    \
    }                                                                                      \
    dg_work dg_work_##slot(const desc_t *d)                                                \
    {                                                                                      \
        dg_work w;                                                                         \
        w.run = run_##slot;                                                                \
        w.ctx = (void *)(uintptr_t)d;                                                      \
        return w;                                                                          \
    }
DG_SLOT_WORK(copy, dg_copy_desc)
DG_SLOT_WORK(elementwise, dg_ew_desc)
DG_SLOT_WORK(fill, dg_fill_desc)
DG_SLOT_WORK(reduce, dg_reduce_desc)
DG_SLOT_WORK(scan, dg_scan_desc)
DG_SLOT_WORK(gemm, dg_gemm_desc)
DG_SLOT_WORK(select, dg_select_desc)
DG_SLOT_WORK(rows, dg_rows_desc)
DG_SLOT_WORK(route, dg_route_desc)
DG_SLOT_WORK(sort, dg_sort_desc)
DG_SLOT_WORK(dense, dg_dense_desc)
DG_SLOT_WORK(fft, dg_fft_desc)
DG_SLOT_WORK(fused, dg_fused_desc)
DG_SLOT_WORK(search, dg_search_desc)
DG_SLOT_WORK(count, dg_count_desc)
#undef DG_SLOT_WORK

/* Makes the waits of access a on (dev, stream). */
static dg_status wait_for(dg_backend_i *be, const dg_access *a, int dev, int stream,
                          dg_error *err)
{
    if (a->how & (DG_ACC_WRITE | DG_ACC_WRITE_PART))
        return mem_use_write(be, a->mem, dev, stream, err);
    return mem_use_read(be, a->mem, dev, stream, err);
}

/* Records the n accesses acc, each at *at or, at NULL, at the position of
 * its own stream now: the reads first, then the writes (a write of memory
 * the same work read forgets that read, which it covers); with ok 0 (the
 * work failed), writes as part writes. */
static void record(dg_backend_i *be, const dg_access *acc, int n, const dg_pos *at, int ok)
{
    const unsigned wr = DG_ACC_WRITE | DG_ACC_WRITE_PART;
    int i;
    for (i = 0; i < n; i++)
        if (acc[i].mem && (acc[i].how & DG_ACC_READ))
            mem_mark_read(acc[i].mem, at ? *at : dg_be_pos(be, acc[i].dev, acc[i].stream));
    for (i = 0; i < n; i++) {
        const dg_access *a = &acc[i];
        dg_pos p;
        if (!a->mem || !(a->how & wr))
            continue;
        p = at ? *at : dg_be_pos(be, a->dev, a->stream);
        if (ok && (a->how & DG_ACC_WRITE))
            mem_mark_write(a->mem, p);
        else
            mem_mark_write_part(a->mem, p);
    }
}

/* Marks (dg_be_mark) the position of each access of work that touched
 * memory of another device than its own, where waits of that device's work
 * come next (the neighbour's next write waits for this read): marked now,
 * such a wait takes in nothing the stream runs later (a copy one device
 * enqueued after its peer read would hold back the other device's write). */
static dg_status mark_foreign(dg_backend_i *be, const dg_access *acc, int n, const dg_pos *at,
                              dg_error *err)
{
    int i;
    for (i = 0; i < n; i++) {
        const int dev = at ? at->dev : acc[i].dev;
        if (acc[i].mem && acc[i].mem->device != dev) {
            DG_CHECK(dg_be_mark(be, at ? *at : dg_be_pos(be, dev, acc[i].stream), err));
            if (at)
                break; /* one position: marked */
        }
    }
    return DG_OK;
}

dg_status dg_enqueue(dg_backend_i *be, int dev, int stream, const dg_access *acc, int n,
                     dg_work w, dg_error *err)
{
    dg_status st;
    dg_pos p;
    int i;
    if (dg_fuse_pending())
        DG_CHECK(dg_fuse_touch(acc, n, err));
    for (i = 0; i < n; i++)
        if (acc[i].mem)
            DG_CHECK(wait_for(be, &acc[i], dev, stream, err));
    st = w.run(be, dev, stream, w.ctx, err);
    p = dg_be_pos(be, dev, stream);
    record(be, acc, n, &p, st == DG_OK);
    if (st == DG_OK)
        st = mark_foreign(be, acc, n, &p, err);
    return st;
}

dg_status dg_enqueue_group(dg_backend_i *be, const dg_access *acc, int n, dg_group_fn fn,
                           void *ctx, dg_error *err)
{
    dg_status st;
    int i;
    if (dg_fuse_pending())
        DG_CHECK(dg_fuse_touch(acc, n, err));
    for (i = 0; i < n; i++)
        if (acc[i].mem)
            DG_CHECK(wait_for(be, &acc[i], acc[i].dev, acc[i].stream, err));
    st = fn(be, ctx, err);
    record(be, acc, n, NULL, st == DG_OK);
    if (st == DG_OK)
        st = mark_foreign(be, acc, n, NULL, err);
    return st;
}
