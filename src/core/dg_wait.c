/* Host waits that can stop early (what lets Ctrl-C interrupt a long wait).
 *
 * A host read of an array (gather, scatter into a new array) enqueues its
 * copies on the compute streams of the array's devices and then blocks until
 * they have run; those copies run after everything enqueued there before.
 * The binding first waits, in short slices, for exactly that earlier work
 * (dg_waitset_of_array, then dg_waitset_wait in a loop, checking for signals
 * between slices), so that the wait that cannot be abandoned (the host memory
 * is in use by the copies) covers only the copies themselves.  Abandoning a
 * waitset leaves every array and device as it was: the work goes on. */
#include <stdlib.h>
#include <time.h>

#include "dg_array.h"
#include "dg_fuse.h"

/* *w (caller's storage) for `be`, with nothing to wait for; w->pos is new
 * (dg_waitset_free). */
static dg_status waitset_new(dg_backend_i *be, dg_waitset *w, dg_error *err)
{
    w->n = be->ndevices * DG_NSTREAMS;
    w->pos = (dg_pos *)calloc((size_t)w->n, sizeof(dg_pos));
    if (!w->pos) {
        w->n = 0;
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    return DG_OK;
}

/* Adds position p to w (borrowed): the later of it and what w holds for
 * its stream. */
static void waitset_add(dg_waitset *w, dg_pos p)
{
    int slot = p.dev * DG_NSTREAMS + p.stream;
    if (p.seq == 0 || p.dev < 0 || p.stream < 0 || p.stream >= DG_NSTREAMS || slot >= w->n)
        return;
    if (p.seq > w->pos[slot].seq)
        w->pos[slot] = p;
}

dg_status dg_waitset_of_array(const dg_array *a, dg_waitset *w, dg_error *err)
{
    dg_backend_i *be = a->be;
    int i, k;
    for (i = 0; i < a->nchunks; i++)
        DG_CHECK(dg_fuse_touch_buffer(a->chunks[i].buf, err));
    DG_CHECK(waitset_new(be, w, err));
    for (i = 0; i < a->nchunks; i++) {
        const dg_mem *m = a->chunks[i].buf->mem;
        for (k = 0; k < m->nslots; k++)
            waitset_add(w, m->writes[k]);
        waitset_add(w, dg_be_pos(be, a->chunks[i].device, DG_STREAM_COMPUTE));
    }
    return DG_OK;
}

dg_status dg_waitset_all(dg_backend_i *be, dg_waitset *w, dg_error *err)
{
    int d, s;
    DG_CHECK(dg_fuse_flush(err));
    DG_CHECK(waitset_new(be, w, err));
    for (d = 0; d < be->ndevices; d++)
        for (s = 0; s < DG_NSTREAMS; s++)
            waitset_add(w, dg_be_pos(be, d, s));
    return DG_OK;
}

/* Microseconds since an arbitrary origin (C11 timespec_get). */
static int64_t now_us(void)
{
    struct timespec t;
    if (timespec_get(&t, TIME_UTC) != TIME_UTC)
        return 0;
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

dg_status dg_waitset_wait(dg_backend_i *be, dg_waitset *w, int64_t timeout_us, int *done,
                          dg_error *err)
{
    const int64_t until = now_us() + timeout_us;
    int i;
    *done = 0;
    for (i = 0; i < w->n; i++) {
        int ok = 1;
        int64_t left = until - now_us();
        if (w->pos[i].seq == 0)
            continue;
        DG_CHECK(dg_be_sync_for(be, w->pos[i], left > 0 ? left : 0, &ok, err));
        if (!ok)
            return DG_OK;
        w->pos[i].seq = 0;
    }
    *done = 1;
    return DG_OK;
}

void dg_waitset_merge(dg_waitset *w, const dg_waitset *o)
{
    int i;
    for (i = 0; i < o->n; i++)
        waitset_add(w, o->pos[i]);
}

void dg_waitset_free(dg_waitset *w)
{
    free(w->pos);
    w->pos = NULL;
    w->n = 0;
}
