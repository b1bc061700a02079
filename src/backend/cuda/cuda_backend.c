/* The CUDA backend: devices, streams, positions, events and memory.
 *
 * Every GPU gets a non-blocking compute stream and a transfer stream and its
 * own stream-ordered memory pool (cudaMemPoolCreate, release threshold at the
 * maximum so that freed memory stays in the pool), readable by every peer
 * that has peer access.  A dg_pos is (device, stream, seq): seq counts the
 * operations enqueued on the stream; waiting for one records an event on its
 * stream only if the last event recorded there does not already cover it
 * (see cuda_internal.h).  Copies, elementwise loops and fills live in
 * cuda_copy.c, cuda_hostcopy.c, cuda_ew.c and cuda_fill.c.
 *
 * Nothing here aborts: every CUDA call is checked and turned into a dg_error
 * by cu_fail, which also clears the runtime's last error.
 *
 * fork(): CUDA cannot run in a child forked from a process that has
 * initialised it (the driver's state does not survive the fork), so in such
 * a child every slot makes no CUDA call: each that can fail says so and how
 * to start workers instead (cu_forked_error), releases and destruction do
 * nothing (the child's memory goes with it).  The parent is untouched. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sched_yield */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"

/* ---- errors ------------------------------------------------------------- */

dg_status cu_fail(dg_error *err, cudaError_t e, int dev, size_t bytes, const char *what)
{
    dg_status st;
    (void)cudaGetLastError(); /* clear the error state the runtime keeps */
    if (e == cudaErrorMemoryAllocation) {
        size_t freeb = 0, total = 0;
        if (cudaMemGetInfo(&freeb, &total) != cudaSuccess) {
            (void)cudaGetLastError();
            freeb = total = 0;
        }
        if (bytes > 0)
            st = dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev,
                              "out of memory on device %d: could not allocate %zu bytes "
                              "(free: %zu of %zu bytes)",
                              dev, bytes, freeb, total);
        else
            st = dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev,
                              "out of memory on device %d in %s (free: %zu of %zu bytes)",
                              dev, what, freeb, total);
        if (err != NULL && err->code == DG_ERR_DEVICE_NOMEM && err->backend_code == 0) {
            err->bytes = bytes;
            err->backend_code = (long)e;
        }
        return st;
    }
    if (cu_error_sticky(e))
        st = dg_error_set(err, DG_ERR_DEVICE, dev, "CUDA error in %s on device %d: %s (%s). "
                          "A kernel faulted: the GPU's CUDA context is lost for good, with "
                          "every array on it, and every later call on it fails the same way; "
                          "restart the Python process", what, dev, cudaGetErrorString(e),
                          cudaGetErrorName(e));
    else
        st = dg_error_set(err, DG_ERR_DEVICE, dev, "CUDA error in %s on device %d: %s (%s)",
                          what, dev, cudaGetErrorString(e), cudaGetErrorName(e));
    if (err != NULL && err->code == DG_ERR_DEVICE && err->backend_code == 0)
        err->backend_code = (long)e;
    return st;
}

int cu_error_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
        return 1;
    default:
        return 0;
    }
}

cudaError_t cu_sticky_error(void)
{
    /* a query (it never blocks) fails with the fault once the context is
     * lost; "not ready" or any other answer means it is not */
    cudaError_t e = cudaStreamQuery(NULL);
    (void)cudaGetLastError();
    return cu_error_sticky(e) ? e : cudaSuccess;
}

dg_status cu_set_device(cu_be *b, int dev, dg_error *err)
{
    CU_CHECK(cudaSetDevice(b->devs[dev].id), err, dev, "cudaSetDevice");
    return DG_OK;
}

dg_status cu_check_stream(cu_be *b, int dev, int stream, const char *op, dg_error *err)
{
    if (dev < 0 || dev >= b->ndev)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "%s on GPU %d, which does not exist "
                            "(%d in use)", op, dev, b->ndev);
    if (stream < 0 || stream >= DG_NSTREAMS)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "%s on stream %d, which does not exist",
                            op, stream);
    return DG_OK;
}

/* ---- live allocations ------------------------------------------------------- */

/* Slot of pointer p in a table of `cap` (a power of two) slots. */
static size_t live_slot(uintptr_t p, size_t cap)
{
    uint64_t x = (uint64_t)p * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(x >> 32) & (cap - 1);
}

/* Doubles d's table (or makes the first one).  0 if out of host memory.
 * Called with d->mu held. */
static int live_grow(cu_dev *d)
{
    size_t cap = d->live_cap ? d->live_cap * 2 : 1024, i;
    cu_live *t = (cu_live *)calloc(cap, sizeof(cu_live));
    if (t == NULL)
        return 0;
    for (i = 0; i < d->live_cap; i++) {
        if (d->live[i].ptr != 0) {
            size_t j = live_slot(d->live[i].ptr, cap);
            while (t[j].ptr != 0)
                j = (j + 1) & (cap - 1);
            t[j] = d->live[i];
        }
    }
    free(d->live);
    d->live = t;
    d->live_cap = cap;
    return 1;
}

/* Records allocation p of `size` bytes.  0 if out of host memory.  [mu] */
static int live_put(cu_dev *d, void *p, size_t size)
{
    size_t j;
    if ((d->live_n + 1) * 2 > d->live_cap && !live_grow(d))
        return 0;
    j = live_slot((uintptr_t)p, d->live_cap);
    while (d->live[j].ptr != 0)
        j = (j + 1) & (d->live_cap - 1);
    d->live[j].ptr = (uintptr_t)p;
    d->live[j].size = size;
    d->live_n++;
    return 1;
}

/* Forgets allocation p and returns its size (0 if p is not live).  [mu] */
static size_t live_take(cu_dev *d, void *p)
{
    size_t mask, i, j, size;
    if (d->live_cap == 0)
        return 0;
    mask = d->live_cap - 1;
    i = live_slot((uintptr_t)p, d->live_cap);
    while (d->live[i].ptr != (uintptr_t)p) {
        if (d->live[i].ptr == 0)
            return 0;
        i = (i + 1) & mask;
    }
    size = d->live[i].size;
    /* backward-shift deletion keeps every probe chain unbroken */
    j = i;
    for (;;) {
        size_t k;
        j = (j + 1) & mask;
        if (d->live[j].ptr == 0)
            break;
        k = live_slot(d->live[j].ptr, d->live_cap);
        if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
            d->live[i] = d->live[j];
            i = j;
        }
    }
    d->live[i].ptr = 0;
    d->live[i].size = 0;
    d->live_n--;
    return size;
}

/* ---- events and positions ------------------------------------------------- */

/* Drops one reference to e; the last one returns it to the free list.  [mu] */
static void ev_unref(cu_dev *d, cu_event *e)
{
    if (--e->refs == 0) {
        e->next = d->ev_free;
        d->ev_free = e;
    }
}

/* An event of (dev, stream) that covers operation `want`, with a reference
 * for the caller (drop it with ev_release).  Records a new event now unless
 * the stream's last one covers `want`.  Makes dev current. */
static dg_status ev_cover(cu_be *b, int dev, int stream, uint64_t want, cu_event **out,
                          dg_error *err)
{
    cu_dev *d = &b->devs[dev];
    cu_stream *s = &d->st[stream];
    cu_event *e;
    cudaError_t ce;

    DG_CHECK(cu_set_device(b, dev, err));
    pthread_mutex_lock(&d->mu);
    if (want > s->seq) {
        pthread_mutex_unlock(&d->mu);
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "a position (%llu) past the work enqueued on GPU %d stream %d (%llu)",
                            (unsigned long long)want, dev, stream,
                            (unsigned long long)s->seq);
    }
    if (s->last != NULL && s->last->seq >= want) {
        e = s->last;
        e->refs++;
        pthread_mutex_unlock(&d->mu);
        *out = e;
        return DG_OK;
    }
    e = d->ev_free;
    if (e != NULL) {
        d->ev_free = e->next;
    } else {
        e = (cu_event *)calloc(1, sizeof(*e));
        if (e == NULL) {
            pthread_mutex_unlock(&d->mu);
            return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory for a CUDA event");
        }
        ce = cudaEventCreateWithFlags(&e->ev, cudaEventDisableTiming);
        if (ce != cudaSuccess) {
            pthread_mutex_unlock(&d->mu);
            free(e);
            return cu_fail(err, ce, dev, 0, "cudaEventCreateWithFlags");
        }
    }
    ce = cudaEventRecord(e->ev, s->s);
    if (ce != cudaSuccess) {
        e->refs = 0;
        e->next = d->ev_free;
        d->ev_free = e;
        pthread_mutex_unlock(&d->mu);
        return cu_fail(err, ce, dev, 0, "cudaEventRecord");
    }
    e->seq = s->seq;
    e->refs = 2; /* the stream's `last`, and the caller */
    if (s->last != NULL)
        ev_unref(d, s->last);
    s->last = e;
    pthread_mutex_unlock(&d->mu);
    *out = e;
    return DG_OK;
}

static void ev_release(cu_be *b, int dev, cu_event *e)
{
    cu_dev *d = &b->devs[dev];
    pthread_mutex_lock(&d->mu);
    ev_unref(d, e);
    pthread_mutex_unlock(&d->mu);
}

void cu_bump(cu_be *b, int dev, int stream)
{
    cu_dev *d = &b->devs[dev];
    pthread_mutex_lock(&d->mu);
    d->st[stream].seq++;
    pthread_mutex_unlock(&d->mu);
}

dg_pos cu_pos(dg_backend_i *be, int dev, int stream)
{
    cu_be *b = cu_of(be);
    dg_pos p;
    p.dev = dev;
    p.stream = stream;
    p.seq = 0;
    if (dev < 0 || dev >= b->ndev || stream < 0 || stream >= DG_NSTREAMS)
        return p;
    pthread_mutex_lock(&b->devs[dev].mu);
    p.seq = b->devs[dev].st[stream].seq;
    pthread_mutex_unlock(&b->devs[dev].mu);
    return p;
}

/* 1 if p is known complete (no CUDA call). */
static int pos_done(cu_be *b, dg_pos p)
{
    cu_dev *d = &b->devs[p.dev];
    int done;
    pthread_mutex_lock(&d->mu);
    done = p.seq <= d->st[p.stream].done;
    pthread_mutex_unlock(&d->mu);
    return done;
}

dg_status cu_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err)
{
    cu_be *b = cu_of(be);
    cu_event *e;
    cudaError_t ce;
    uint64_t *slot;
    int covered;

    DG_CHECK(cu_check_stream(b, dev, stream, "wait", err));
    if (p.seq == 0 || (p.dev == dev && p.stream == stream))
        return DG_OK;
    DG_CHECK(cu_check_stream(b, p.dev, p.stream, "wait for a position", err));
    if (pos_done(b, p))
        return DG_OK;
    slot = &b->devs[dev].st[stream].waited[p.dev * DG_NSTREAMS + p.stream];
    pthread_mutex_lock(&b->devs[dev].mu);
    covered = *slot >= p.seq;
    pthread_mutex_unlock(&b->devs[dev].mu);
    if (covered)
        return DG_OK;
    DG_CHECK(ev_cover(b, p.dev, p.stream, p.seq, &e, err));
    ce = cudaSetDevice(b->devs[dev].id);
    if (ce == cudaSuccess)
        ce = cudaStreamWaitEvent(b->devs[dev].st[stream].s, e->ev, 0);
    if (ce == cudaSuccess) {
        const uint64_t upto = e->seq; /* fixed while the reference is held */
        pthread_mutex_lock(&b->devs[dev].mu);
        if (*slot < upto)
            *slot = upto;
        pthread_mutex_unlock(&b->devs[dev].mu);
    }
    ev_release(b, p.dev, e);
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0, "cudaStreamWaitEvent");
    /* later positions of this stream include the wait, so that waiting for
     * them waits for p too */
    cu_bump(b, dev, stream);
    return DG_OK;
}

dg_status cu_mark(dg_backend_i *be, dg_pos p, dg_error *err)
{
    cu_be *b = cu_of(be);
    cu_event *e;
    if (p.seq == 0)
        return DG_OK;
    DG_CHECK(cu_check_stream(b, p.dev, p.stream, "mark a position", err));
    if (pos_done(b, p))
        return DG_OK;
    DG_CHECK(ev_cover(b, p.dev, p.stream, p.seq, &e, err));
    ev_release(b, p.dev, e);
    return DG_OK;
}

/* The host waits for p: fully (cudaEventSynchronize) when timeout_us < 0,
 * else for at most timeout_us, polling the covering event and yielding the
 * CPU between polls (as cudaEventSynchronize spins), so that the wait can
 * stop and the host run Python's signal handlers (src/py/wait.c); *done
 * (may be NULL for a full wait) says whether p completed. */
static dg_status cu_sync_for(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                             dg_error *err)
{
    cu_be *b = cu_of(be);
    cu_dev *d;
    cu_event *e;
    cudaError_t ce;
    struct timespec t0, t;

    if (done)
        *done = 1;
    if (p.seq == 0)
        return DG_OK;
    DG_CHECK(cu_check_stream(b, p.dev, p.stream, "sync", err));
    if (pos_done(b, p))
        return DG_OK;
    DG_CHECK(ev_cover(b, p.dev, p.stream, p.seq, &e, err));
    if (timeout_us < 0) {
        ce = cudaEventSynchronize(e->ev);
    } else {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            ce = cudaEventQuery(e->ev);
            if (ce != cudaErrorNotReady)
                break;
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((int64_t)(t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 >=
                timeout_us)
                break;
            sched_yield();
        }
    }
    d = &b->devs[p.dev];
    pthread_mutex_lock(&d->mu);
    if (ce == cudaSuccess && e->seq > d->st[p.stream].done)
        d->st[p.stream].done = e->seq;
    ev_unref(d, e);
    pthread_mutex_unlock(&d->mu);
    if (ce == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* "not ready" is no error: leave none behind */
        *done = 0;
        return DG_OK;
    }
    if (ce != cudaSuccess)
        return cu_fail(err, ce, p.dev, 0,
                       timeout_us < 0 ? "cudaEventSynchronize (waiting for the GPU's work)"
                                      : "cudaEventQuery (waiting for the GPU's work)");
    return DG_OK;
}

static dg_status cu_sync(dg_backend_i *be, dg_pos p, dg_error *err)
{
    return cu_sync_for(be, p, -1, NULL, err);
}

static dg_status cu_sync_all(dg_backend_i *be, dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_status st = DG_OK;
    int i, k;

    for (i = 0; i < b->ndev; i++) {
        cu_dev *d = &b->devs[i];
        if (cu_set_device(b, i, err) != DG_OK) {
            st = err ? err->code : DG_ERR_DEVICE;
            continue;
        }
        for (k = 0; k < DG_NSTREAMS; k++) {
            uint64_t seq;
            cudaError_t ce;
            pthread_mutex_lock(&d->mu);
            seq = d->st[k].seq;
            pthread_mutex_unlock(&d->mu);
            ce = cudaStreamSynchronize(d->st[k].s);
            if (ce != cudaSuccess) {
                st = cu_fail(err, ce, i, 0, "cudaStreamSynchronize");
                continue;
            }
            pthread_mutex_lock(&d->mu);
            if (seq > d->st[k].done)
                d->st[k].done = seq;
            pthread_mutex_unlock(&d->mu);
        }
    }
    return st;
}

/* ---- memory ------------------------------------------------------------------ */

/* Small blocks.  An allocation costs a call into the pool (a few
 * microseconds of host time, as much as a kernel launch), and most
 * operations allocate small results, partials or staging buffers.  A
 * released block of at most 2^CU_CACHE_MAX_SHIFT bytes is kept, by size
 * class, for the next allocation of its class: both are on the compute
 * stream, as the pool's own reuse is, and the core orders a release after
 * every use of the memory on the other streams (dg_backend.h), so a kept
 * block is as safe to hand out again as memory the pool frees and reuses.
 * Blocks of a class are allocated at the class's full size. */

/* Large blocks.  Taking a large block from the pool is not always cheap
 * either: in a + c.reshard(m) on two H200s, cudaMallocFromPoolAsync of the
 * 512 MiB result took 200-720 us on every call, made right after NCCL's
 * launch, and the add in place waited for it instead of running beside the
 * transfer.  Programs repeat their shapes, so the last few large blocks
 * released are kept whole (large[], oldest first) and an allocation of
 * exactly a kept block's size takes it back without a call into the pool;
 * kept blocks go back to the pool when they are the oldest of too many or
 * too much, and all of them before a retry on running out of memory. */

/* Takes entry i out of the cache of kept large blocks; its block [mu]. */
static void *large_remove(cu_dev *d, int i)
{
    void *p = d->large[i];
    d->large_bytes -= d->large_size[i];
    d->nlarge--;
    memmove(&d->large[i], &d->large[i + 1], (size_t)(d->nlarge - i) * sizeof(void *));
    memmove(&d->large_size[i], &d->large_size[i + 1],
            (size_t)(d->nlarge - i) * sizeof(size_t));
    return p;
}

/* Gives the oldest kept large block back to its pool (stream-ordered) [mu]. */
static void large_drop_oldest(cu_dev *d)
{
    void *p = large_remove(d, 0);
    if (cudaSetDevice(d->id) != cudaSuccess ||
        cudaFreeAsync(p, d->st[DG_STREAM_COMPUTE].s) != cudaSuccess)
        (void)cudaGetLastError();
}

/* A kept large block of exactly n bytes, taken out of the cache, or NULL [mu]. */
static void *large_take(cu_dev *d, size_t n)
{
    int i;
    for (i = d->nlarge - 1; i >= 0; i--)
        if (d->large_size[i] == n)
            return large_remove(d, i);
    return NULL;
}

/* Keeps released large block p of n bytes, giving older ones back to make
 * room; 0 if it is too large to keep at all [mu]. */
static int large_keep(cu_dev *d, void *p, size_t n)
{
    const size_t most = d->large_cap;
    if (n > most / 4)
        return 0;
    while (d->nlarge > 0 && (d->nlarge == CU_LARGE_KEEP || d->large_bytes + n > most))
        large_drop_oldest(d);
    d->large[d->nlarge] = p;
    d->large_size[d->nlarge++] = n;
    d->large_bytes += n;
    return 1;
}

/* The class of an allocation of n bytes, or -1 if it is not small. */
static int cache_class(size_t n)
{
    int c = 0;
    if (n > ((size_t)1 << CU_CACHE_MAX_SHIFT))
        return -1;
    while (((size_t)1 << (CU_CACHE_MIN_SHIFT + c)) < n)
        c++;
    return c;
}

/* Gives every kept block of d back to its pool (stream-ordered). */
static void cache_flush(cu_dev *d)
{
    int c;
    pthread_mutex_lock(&d->mu);
    while (d->nlarge > 0)
        large_drop_oldest(d);
    for (c = 0; c < CU_CACHE_NCLASS; c++) {
        while (d->ncache[c] > 0) {
            void *p = d->cache[c][--d->ncache[c]];
            if (cudaFreeAsync(p, d->st[DG_STREAM_COMPUTE].s) != cudaSuccess)
                (void)cudaGetLastError();
        }
    }
    pthread_mutex_unlock(&d->mu);
}

/* cu_alloc's first try: memory kept in the device's caches, no CUDA call
 * (so no current device to keep, slot_alloc).  1 with *ptr set, 0 where the
 * caches hold none of that size (nothing changed), -1 out of host memory. */
static int cu_alloc_cached(cu_be *b, int dev, size_t nbytes, void **ptr)
{
    cu_dev *d = &b->devs[dev];
    void *p = NULL;
    int ok = 0, cls;
    if (nbytes == 0)
        nbytes = 1;
    cls = cache_class(nbytes);
    pthread_mutex_lock(&d->mu);
    if (cls >= 0 && d->ncache[cls] > 0) {
        p = d->cache[cls][d->ncache[cls] - 1];
        ok = live_put(d, p, nbytes);
        if (ok) /* the compute stream's position covers its release */
            d->ncache[cls]--;
    } else if (cls < 0 && d->nlarge > 0) {
        p = large_take(d, nbytes);
        ok = p != NULL && live_put(d, p, nbytes);
        if (p != NULL && !ok)
            large_keep(d, p, nbytes); /* back where it was taken from: room for
                                       * it, so nothing older goes (no CUDA call) */
    }
    if (ok)
        d->in_use += nbytes;
    pthread_mutex_unlock(&d->mu);
    if (p == NULL)
        return 0;
    if (!ok)
        return -1;
    *ptr = p;
    return 1;
}

/* An allocation the caches could not serve (slot_alloc tried them first):
 * new memory from the device's pool (sets the current device). */
static dg_status cu_alloc(dg_backend_i *be, int dev, size_t nbytes, void **ptr, dg_error *err)
{
    cu_be *b = cu_of(be);
    cu_dev *d;
    void *p = NULL;
    cudaError_t ce;
    int ok = 0;
    size_t want;
    int cls;

    DG_CHECK(cu_check_stream(b, dev, DG_STREAM_COMPUTE, "alloc", err));
    d = &b->devs[dev];
    if (nbytes == 0)
        nbytes = 1;
    cls = cache_class(nbytes);
    want = cls >= 0 ? (size_t)1 << (CU_CACHE_MIN_SHIFT + cls) : nbytes;
    DG_CHECK(cu_set_device(b, dev, err));
    ce = cudaMallocFromPoolAsync(&p, want, d->pool, d->st[DG_STREAM_COMPUTE].s);
    if (ce == cudaErrorMemoryAllocation) {
        /* Memory released on the other stream, or held by the pool in pieces
         * too small: let pending frees finish, hand unused memory back to the
         * device, and try once more. */
        int k;
        (void)cudaGetLastError();
        cache_flush(d);
        for (k = 0; k < DG_NSTREAMS; k++)
            if (cudaStreamSynchronize(d->st[k].s) != cudaSuccess)
                (void)cudaGetLastError();
        if (cudaMemPoolTrimTo(d->pool, 0) != cudaSuccess)
            (void)cudaGetLastError();
        p = NULL;
        ce = cudaMallocFromPoolAsync(&p, want, d->pool, d->st[DG_STREAM_COMPUTE].s);
    }
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, nbytes, "cudaMallocFromPoolAsync");
    pthread_mutex_lock(&d->mu);
    ok = live_put(d, p, nbytes);
    if (ok)
        d->in_use += nbytes;
    pthread_mutex_unlock(&d->mu);
    if (!ok) {
        if (cudaFreeAsync(p, d->st[DG_STREAM_COMPUTE].s) != cudaSuccess)
            (void)cudaGetLastError();
        cu_bump(b, dev, DG_STREAM_COMPUTE);
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    }
    cu_bump(b, dev, DG_STREAM_COMPUTE);
    *ptr = p;
    return DG_OK;
}

/* A release's first part (slot_release), which makes no CUDA call: ptr no
 * longer live, and kept in the small blocks' cache where it has room (1:
 * done); else 0, *size its size, for cu_release_rest. */
static int cu_release_small(cu_be *b, int dev, void *ptr, size_t *size)
{
    cu_dev *d;
    int cls;

    if (ptr == NULL || dev < 0 || dev >= b->ndev)
        return 1;
    d = &b->devs[dev];
    pthread_mutex_lock(&d->mu);
    *size = live_take(d, ptr);
    d->in_use -= *size;
    cls = *size > 0 ? cache_class(*size) : -1;
    if (cls >= 0 && d->ncache[cls] < (cls + CU_CACHE_MIN_SHIFT <= CU_CACHE_MANY_SHIFT
                                          ? CU_CACHE_KEEP : CU_CACHE_KEEP_BIG)) {
        d->cache[cls][d->ncache[cls]++] = ptr; /* kept: see cache_class */
        pthread_mutex_unlock(&d->mu);
        return 1;
    }
    pthread_mutex_unlock(&d->mu);
    return 0;
}

/* The rest of a release (ptr of `size` bytes, no longer live): a large
 * block kept whole (large_keep, which may give older ones back to the pool:
 * it sets the current device), else handed back to the pool, ordered on
 * the compute stream (sets the current device). */
static void cu_release_rest(cu_be *b, int dev, void *ptr, size_t size)
{
    cu_dev *d = &b->devs[dev];
    int kept;
    pthread_mutex_lock(&d->mu);
    kept = size > 0 && cache_class(size) < 0 && large_keep(d, ptr, size);
    pthread_mutex_unlock(&d->mu);
    if (kept)
        return;
    if (cudaSetDevice(d->id) != cudaSuccess ||
        cudaFreeAsync(ptr, d->st[DG_STREAM_COMPUTE].s) != cudaSuccess)
        (void)cudaGetLastError(); /* never fails: at worst the memory is lost */
    cu_bump(b, dev, DG_STREAM_COMPUTE);
}

static size_t cu_bytes_in_use(dg_backend_i *be, int dev)
{
    cu_be *b = cu_of(be);
    size_t n;
    if (dev < 0 || dev >= b->ndev)
        return 0;
    pthread_mutex_lock(&b->devs[dev].mu);
    n = b->devs[dev].in_use;
    pthread_mutex_unlock(&b->devs[dev].mu);
    return n;
}

/* The pool's reserved bytes: what is allocated, kept in the caches, or
 * freed to the pool and not yet handed back to the device. */
static size_t cu_bytes_held(dg_backend_i *be, int dev)
{
    cu_be *b = cu_of(be);
    uint64_t v = 0; /* cuuint64_t */
    size_t n = cu_bytes_in_use(be, dev);
    if (dev < 0 || dev >= b->ndev)
        return 0;
    if (cudaMemPoolGetAttribute(b->devs[dev].pool, cudaMemPoolAttrReservedMemCurrent, &v) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return n;
    }
    return (size_t)v > n ? (size_t)v : n;
}

static dg_status cu_trim(dg_backend_i *be, int dev, dg_error *err)
{
    cu_be *b = cu_of(be);
    cu_dev *d;
    int k;
    DG_CHECK(cu_check_stream(b, dev, DG_STREAM_COMPUTE, "trim", err));
    d = &b->devs[dev];
    DG_CHECK(cu_set_device(b, dev, err));
    cache_flush(d);
    cu_reduce_scratch_free(d); /* made again at the next reduction's need */
    for (k = 0; k < DG_NSTREAMS; k++)
        CU_CHECK(cudaStreamSynchronize(d->st[k].s), err, dev, "cudaStreamSynchronize");
    CU_CHECK(cudaMemPoolTrimTo(d->pool, 0), err, dev, "cudaMemPoolTrimTo");
    return DG_OK;
}

static dg_status cu_device_info(dg_backend_i *be, int dev, char *name, size_t cap,
                                size_t *total_bytes, size_t *free_bytes, dg_error *err)
{
    cu_be *b = cu_of(be);
    size_t freeb = 0, total = 0;

    DG_CHECK(cu_check_stream(b, dev, 0, "device_info", err));
    if (name != NULL && cap > 0)
        snprintf(name, cap, "%s", b->devs[dev].name);
    if (total_bytes != NULL || free_bytes != NULL) {
        DG_CHECK(cu_set_device(b, dev, err));
        CU_CHECK(cudaMemGetInfo(&freeb, &total), err, dev, "cudaMemGetInfo");
    }
    if (total_bytes != NULL)
        *total_bytes = total;
    if (free_bytes != NULL)
        *free_bytes = freeb;
    return DG_OK;
}

/* ---- life cycle ------------------------------------------------------------------ */

/* Waits for the device's work and frees what it holds.  Errors are ignored:
 * at interpreter exit the runtime may already be unloading, and every call
 * then fails fast. */
static void dev_teardown(cu_dev *d)
{
    size_t i;
    int k;

    if (cudaSetDevice(d->id) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (k = 0; k < DG_NSTREAMS; k++)
        if (d->st[k].s != NULL && cudaStreamSynchronize(d->st[k].s) != cudaSuccess)
            (void)cudaGetLastError();
    /* kept blocks, scratch, and allocations the core did not release */
    if (d->st[DG_STREAM_COMPUTE].s != NULL)
        cache_flush(d);
    cu_reduce_scratch_free(d);
    if (d->live != NULL && d->st[DG_STREAM_COMPUTE].s != NULL) {
        for (i = 0; i < d->live_cap; i++)
            if (d->live[i].ptr != 0 &&
                cudaFreeAsync((void *)d->live[i].ptr, d->st[DG_STREAM_COMPUTE].s) != cudaSuccess)
                (void)cudaGetLastError();
        if (cudaStreamSynchronize(d->st[DG_STREAM_COMPUTE].s) != cudaSuccess)
            (void)cudaGetLastError();
    }
    free(d->live);
    d->live = NULL;
    d->live_cap = d->live_n = 0;
    d->in_use = 0;
    for (k = 0; k < DG_NSTREAMS; k++) {
        if (d->st[k].last != NULL) {
            ev_unref(d, d->st[k].last);
            d->st[k].last = NULL;
        }
    }
    while (d->ev_free != NULL) {
        cu_event *e = d->ev_free;
        d->ev_free = e->next;
        if (cudaEventDestroy(e->ev) != cudaSuccess)
            (void)cudaGetLastError();
        free(e);
    }
    for (k = 0; k < DG_NSTREAMS; k++) {
        if (d->st[k].s != NULL && cudaStreamDestroy(d->st[k].s) != cudaSuccess)
            (void)cudaGetLastError();
        d->st[k].s = NULL;
        free(d->st[k].waited);
        d->st[k].waited = NULL;
    }
    if (d->pool != NULL && cudaMemPoolDestroy(d->pool) != cudaSuccess)
        (void)cudaGetLastError();
    d->pool = NULL;
}

static void cu_destroy(dg_backend_i *be)
{
    cu_be *b;
    int i, k;

    if (be == NULL || be->impl == NULL)
        return;
    b = cu_of(be);
    /* first let every queued operation finish, on all devices: host copies
     * and peer copies may involve several of them */
    for (i = 0; i < b->ndev; i++) {
        cu_dev *d = &b->devs[i];
        if (!d->started || cudaSetDevice(d->id) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        for (k = 0; k < DG_NSTREAMS; k++)
            if (d->st[k].s != NULL && cudaStreamSynchronize(d->st[k].s) != cudaSuccess)
                (void)cudaGetLastError();
    }
    cu_hc_destroy(b);
    cu_nccl_destroy(b);
    cu_job_destroy(b); /* [multihost] */
    cu_gemm_destroy(b);
    cu_dense_destroy(b);
    cu_fft_destroy(b);
    cu_fpe_destroy(b);
    for (i = 0; i < b->ndev; i++) {
        cu_dev *d = &b->devs[i];
        if (!d->started)
            continue;
        dev_teardown(d);
        pthread_mutex_destroy(&d->mu);
    }
    pthread_mutex_destroy(&b->hc_mu);
    free(b->peer);
    free(b->devs);
    be->impl = NULL;
    free(b);
}

/* ---- fork ------------------------------------------------------------------ */

/* Set in a child forked after a backend was made (pthread_atfork). */
static volatile sig_atomic_t cu_forked;
static pthread_once_t cu_fork_once = PTHREAD_ONCE_INIT;

static void cu_fork_child(void) { cu_forked = 1; }

static void cu_fork_register(void) { (void)pthread_atfork(NULL, NULL, cu_fork_child); }

/* The error of every slot in a forked child: the cause and the fix. */
static dg_status cu_forked_error(dg_error *err)
{
    return dg_error_set(err, DG_ERR_DEVICE, -1,
                        "CUDA cannot be used in this process: it was forked (os.fork, or "
                        "multiprocessing's 'fork' start method) from a process that had "
                        "already initialised CUDA by importing dgarray.  Start worker "
                        "processes with the 'spawn' or 'forkserver' start method instead "
                        "(multiprocessing.get_context('spawn'), or "
                        "multiprocessing.set_start_method('spawn') before the first worker "
                        "starts); arrays passed to them are pickled");
}

/* ---- the table's slots ----------------------------------------------------- */

/* Every slot leaves the calling thread's current device as it found it, so
 * that CuPy or PyTorch code running in the same thread keeps its device. */
static int dev_save(void)
{
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError();
        d = -1;
    }
    return d;
}

static void dev_restore(int d)
{
    if (d >= 0 && cudaSetDevice(d) != cudaSuccess)
        (void)cudaGetLastError();
}

#define KEEP_DEVICE(call)               \
    do {                                \
        int prev_;                      \
        if (cu_forked) {                \
            st = cu_forked_error(err);  \
            break;                      \
        }                               \
        prev_ = dev_save();             \
        st = (call);                    \
        dev_restore(prev_);             \
    } while (0)

static dg_status slot_device_info(dg_backend_i *be, int dev, char *name, size_t cap,
                                  size_t *total, size_t *freeb, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_device_info(be, dev, name, cap, total, freeb, err));
    return st;
}

/* An allocation that the device's caches serve, and a release that the
 * small blocks' cache takes, make no CUDA call: no current device to save
 * and restore (two runtime calls each, a part of every recorded elementwise
 * call's host time).  A large block's release may give older kept blocks
 * back to the pool (large_drop_oldest sets the current device): saved and
 * restored. */
static dg_status slot_alloc(dg_backend_i *be, int dev, size_t n, void **ptr, dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_status st;
    if (!cu_forked && dev >= 0 && dev < b->ndev) {
        const int got = cu_alloc_cached(b, dev, n, ptr);
        if (got != 0)
            return got > 0 ? DG_OK : dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    }
    KEEP_DEVICE(cu_alloc(be, dev, n, ptr, err));
    return st;
}

static void slot_release(dg_backend_i *be, int dev, void *ptr)
{
    cu_be *b = cu_of(be);
    size_t size = 0;
    int prev;
    if (cu_forked || cu_release_small(b, dev, ptr, &size))
        return;
    prev = dev_save();
    cu_release_rest(b, dev, ptr, size);
    dev_restore(prev);
}

static size_t slot_bytes_held(dg_backend_i *be, int dev)
{
    int prev;
    size_t n;
    if (cu_forked)
        return 0;
    prev = dev_save();
    n = cu_bytes_held(be, dev);
    dev_restore(prev);
    return n;
}

static dg_status slot_trim(dg_backend_i *be, int dev, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_trim(be, dev, err));
    return st;
}

static dg_status slot_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_wait(be, dev, stream, p, err));
    return st;
}

static dg_status slot_mark(dg_backend_i *be, dg_pos p, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_mark(be, p, err));
    return st;
}

static dg_status slot_sync(dg_backend_i *be, dg_pos p, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_sync(be, p, err));
    return st;
}

static dg_status slot_sync_for(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                               dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_sync_for(be, p, timeout_us, done, err));
    return st;
}

static dg_status slot_sync_all(dg_backend_i *be, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_sync_all(be, err));
    return st;
}

static dg_status slot_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *d,
                           dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_copy(be, dev, stream, d, err));
    return st;
}

static dg_status slot_elementwise(dg_backend_i *be, int dev, int stream, const dg_ew_desc *d,
                                  dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_elementwise(be, dev, stream, d, err));
    return st;
}

static dg_status slot_fused(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                            dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_fused(be, dev, stream, d, err));
    return st;
}

static dg_status slot_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d,
                           dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_fill(be, dev, stream, d, err));
    return st;
}

static dg_status slot_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                             dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_reduce(be, dev, stream, d, err));
    return st;
}

static dg_status slot_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *d,
                                  int64_t *rows, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_reduce_parts(be, dev, d, rows, err));
    return st;
}

/* The index slots, each keeping the caller's current device. */
#define INDEX_SLOT(name, desc)                                                            \
    static dg_status slot_##name(dg_backend_i *be, int dev, int stream, const desc *d,    \
                                 dg_error *err)                                          \
    {                                                                                    \
        dg_status st;                                                                    \
        KEEP_DEVICE(cu_##name(be, dev, stream, d, err));                                 \
        return st;                                                                       \
    }
INDEX_SLOT(select, dg_select_desc)
INDEX_SLOT(rows, dg_rows_desc)
INDEX_SLOT(route, dg_route_desc)
INDEX_SLOT(sort, dg_sort_desc)
INDEX_SLOT(search, dg_search_desc)
INDEX_SLOT(count, dg_count_desc)

static dg_status slot_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d,
                           dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_scan(be, dev, stream, d, err));
    return st;
}

static dg_status slot_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_exchange(be, x, n, err));
    return st;
}

/* [multihost] cuda_transport.c */
static dg_status slot_join(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev,
                           dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_join(be, comm, first_gdev, ngdev, err));
    return st;
}

static dg_status slot_watch(dg_backend_i *be, double timeout_s, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_job_watch(be, timeout_s, err));
    return st;
}

static dg_status slot_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_transport(be, x, n, err));
    return st;
}

static dg_status slot_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *d,
                                dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_allreduce(be, stream, d, err));
    return st;
}

static dg_status slot_gemm(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                           dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_gemm(be, dev, stream, d, err));
    return st;
}

static dg_status slot_dense(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d,
                            dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_dense(be, dev, stream, d, err));
    return st;
}

static dg_status slot_fft(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d,
                          dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(cu_fft(be, dev, stream, d, err));
    return st;
}

/* In a forked child: nothing in use, and no position to wait for (every
 * slot that would enqueue or wait fails first). */
static size_t slot_bytes_in_use(dg_backend_i *be, int dev)
{
    return cu_forked ? 0 : cu_bytes_in_use(be, dev);
}

static dg_pos slot_pos(dg_backend_i *be, int dev, int stream)
{
    dg_pos p = {dev, stream, 0};
    return cu_forked ? p : cu_pos(be, dev, stream);
}

static void slot_destroy(dg_backend_i *be)
{
    int prev;
    if (cu_forked)
        return;
    prev = dev_save();
    cu_destroy(be);
    dev_restore(prev);
}

/* The bytes of released large blocks a device of `total` bytes keeps:
 * DGARRAY_LARGE_CACHE_BYTES, else 1/CU_LARGE_SHARE of its memory. */
static dg_status large_cap_setting(size_t total, size_t *cap, dg_error *err)
{
    const char *e = getenv("DGARRAY_LARGE_CACHE_BYTES");
    char *end = NULL;
    unsigned long long v;
    *cap = total / CU_LARGE_SHARE;
    if (e == NULL || *e == '\0')
        return DG_OK;
    v = strtoull(e, &end, 10);
    if (*end != '\0' || *e == '-' || *e == ' ')
        return dg_error_set(err, DG_ERR_VALUE, -1, "DGARRAY_LARGE_CACHE_BYTES must be a number "
                            "of bytes (0: keep no large blocks), not '%s'", e);
    *cap = (size_t)v;
    return DG_OK;
}

/* Streams and memory pool of device i. */
static dg_status dev_setup(cu_be *b, int i, dg_error *err)
{
    cu_dev *d = &b->devs[i];
    struct cudaDeviceProp prop;
    struct cudaMemPoolProps pp;
    uint64_t threshold = UINT64_MAX;
    int v = 0, k;

    DG_CHECK(cu_set_device(b, i, err));
    CU_CHECK(cudaGetDeviceProperties(&prop, d->id), err, i, "cudaGetDeviceProperties");
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    d->nsm = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    d->total_mem = prop.totalGlobalMem;
    DG_CHECK(large_cap_setting(d->total_mem, &d->large_cap, err));
    d->large_cap /= (size_t)d->nshare; /* logical devices of one GPU share it */
    CU_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, d->id), err, i,
             "cudaDeviceGetAttribute");
    if (!v)
        return dg_error_set(err, DG_ERR_DEVICE, i,
                            "GPU %d (%s) has no stream-ordered memory pools "
                            "(cudaMallocAsync), which dgarray needs", i, d->name);
    {
        /* DGARRAY_L2_FETCH_BYTES: the L2's largest fetch on a miss (a hint
         * for the whole context, other libraries' kernels included), for
         * measuring gathers (benchmarks/take_ab.py); unset: the driver's */
        const char *l2 = getenv("DGARRAY_L2_FETCH_BYTES");
        if (l2 != NULL && *l2 != '\0')
            CU_CHECK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity,
                                        (size_t)strtoull(l2, NULL, 10)),
                     err, i, "cudaDeviceSetLimit(MaxL2FetchGranularity)");
    }
    for (k = 0; k < DG_NSTREAMS; k++) {
        CU_CHECK(cudaStreamCreateWithFlags(&d->st[k].s, cudaStreamNonBlocking), err, i,
                 "cudaStreamCreateWithFlags");
        d->st[k].waited = (uint64_t *)calloc((size_t)b->ndev * DG_NSTREAMS, sizeof(uint64_t));
        if (d->st[k].waited == NULL)
            return dg_error_set(err, DG_ERR_NOMEM, i, "out of host memory");
    }
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.handleTypes = cudaMemHandleTypeNone;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = d->id;
    CU_CHECK(cudaMemPoolCreate(&d->pool, &pp), err, i, "cudaMemPoolCreate");
    CU_CHECK(cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &threshold), err,
             i, "cudaMemPoolSetAttribute(ReleaseThreshold)");
    return DG_OK;
}

/* Peer access from i to j's memory, where the hardware allows it: i can then
 * run kernels reading and writing j's buffers. */
static dg_status peer_setup(cu_be *b, int i, int j, dg_error *err)
{
    struct cudaMemAccessDesc acc;
    int can = 0;
    cudaError_t ce;

    if (b->devs[i].id == b->devs[j].id) {
        b->peer[i * b->ndev + j] = 1; /* logical devices of one GPU */
        return DG_OK;
    }
    CU_CHECK(cudaDeviceCanAccessPeer(&can, b->devs[i].id, b->devs[j].id), err, i,
             "cudaDeviceCanAccessPeer");
    if (!can)
        return DG_OK;
    DG_CHECK(cu_set_device(b, i, err));
    ce = cudaDeviceEnablePeerAccess(b->devs[j].id, 0);
    if (ce != cudaSuccess && ce != cudaErrorPeerAccessAlreadyEnabled) {
        /* e.g. too many peers: copies between i and j then go through the
         * driver (cudaMemcpyPeerAsync) or the host */
        (void)cudaGetLastError();
        return DG_OK;
    }
    (void)cudaGetLastError(); /* AlreadyEnabled: someone else (CuPy, torch) did it */
    memset(&acc, 0, sizeof acc);
    acc.location.type = cudaMemLocationTypeDevice;
    acc.location.id = b->devs[i].id;
    acc.flags = cudaMemAccessFlagsProtReadWrite;
    ce = cudaMemPoolSetAccess(b->devs[j].pool, &acc, 1);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        return DG_OK;
    }
    b->peer[i * b->ndev + j] = 1;
    return DG_OK;
}

/* The GPU of each logical device.  DGARRAY_CUDA_DEVICES, a comma-separated
 * list of CUDA ordinals ("0,0,0,0": four logical devices on GPU 0), gives one
 * logical device per entry, so that every path between devices runs where one
 * GPU is present; otherwise logical device i is GPU i, for the first
 * `ndevices` of the `ngpu` GPUs (ndevices <= 0: all of them).  New array of
 * *n ordinals in *ids (the caller frees it). */
static dg_status device_list(int ndevices, int ngpu, int **ids, int *n, dg_error *err)
{
    const char *e = getenv("DGARRAY_CUDA_DEVICES");
    int cnt = 0, i;
    *ids = NULL;
    *n = 0;
    if (ndevices <= 0 && e != NULL && *e != '\0') {
        const char *p = e;
        int *v = (int *)malloc(sizeof(int) * (strlen(e) / 2 + 1));
        if (v == NULL)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        for (;;) {
            char *end = NULL;
            long o;
            if (*p < '0' || *p > '9') {
                free(v);
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "DGARRAY_CUDA_DEVICES must be a comma-separated list of GPU "
                                    "numbers (e.g. '0,0,0,0': four devices on GPU 0), not '%s'",
                                    e);
            }
            o = strtol(p, &end, 10);
            if (o >= ngpu) {
                free(v);
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "DGARRAY_CUDA_DEVICES='%s' names GPU %ld, but only %d "
                                    "present (0 to %d)", e, o, ngpu, ngpu - 1);
            }
            v[cnt++] = (int)o;
            if (*end == '\0')
                break;
            if (*end != ',') {
                free(v);
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "DGARRAY_CUDA_DEVICES must be a comma-separated list of GPU "
                                    "numbers (e.g. '0,0,0,0': four devices on GPU 0), not '%s'",
                                    e);
            }
            p = end + 1;
        }
        *ids = v;
        *n = cnt;
        return DG_OK;
    }
    if (ndevices <= 0)
        ndevices = ngpu;
    if (ndevices > ngpu)
        return dg_error_set(err, DG_ERR_VALUE, -1, "%d GPUs asked for, but only %d present",
                            ndevices, ngpu);
    *ids = (int *)malloc(sizeof(int) * (size_t)ndevices);
    if (*ids == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < ndevices; i++)
        (*ids)[i] = i;
    *n = ndevices;
    return DG_OK;
}

static dg_status backend_create(int ndevices, dg_backend_i **out, dg_error *err)
{
    cu_be *b;
    dg_status st = DG_OK;
    cudaError_t ce;
    int n = 0, i, j, *ids = NULL;

    /* the kernel table must be the loop list's: loop i's entry made for the
     * loop whose kernels it runs */
    for (i = 0; i < dg_cu_ew_nloops; i++) {
        const dg_cu_ew_entry *ent = dg_cu_ew_entry_get(i);
        if (ent == NULL || ent->loop != dg_cu_ew_kernels_of(i) || ent->strided == NULL)
            return dg_error_set(err, DG_ERR_INTERNAL, -1,
                                "the CUDA elementwise kernels are out of order at loop %d "
                                "(a stale build?)", i);
    }
    if (dg_cu_ew_nloops != dg_nloops)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "the CUDA kernels have %d elementwise loops, the core %d "
                            "(a stale build?)", dg_cu_ew_nloops, dg_nloops);
    ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n <= 0) {
        (void)cudaGetLastError();
        st = dg_error_set(err, DG_ERR_DEVICE, -1, "no usable CUDA GPU: %s",
                          ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
        if (err != NULL && err->backend_code == 0)
            err->backend_code = (long)ce;
        return st;
    }
    DG_CHECK(device_list(ndevices, n, &ids, &ndevices, err));
    b = (cu_be *)calloc(1, sizeof(*b));
    if (b != NULL) {
        b->devs = (cu_dev *)calloc((size_t)ndevices, sizeof(cu_dev));
        b->peer = (unsigned char *)calloc((size_t)ndevices * (size_t)ndevices, 1);
    }
    if (b == NULL || b->devs == NULL || b->peer == NULL) {
        if (b != NULL) {
            free(b->devs);
            free(b->peer);
        }
        free(b);
        free(ids);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    b->ndev = ndevices;
    b->iface.version = DG_BACKEND_VERSION;
    b->iface.name = "cuda";
    b->iface.ndevices = ndevices;
    b->iface.impl = b;
    b->iface.device_info = slot_device_info;
    b->iface.alloc = slot_alloc;
    b->iface.release = slot_release;
    b->iface.bytes_in_use = slot_bytes_in_use;
    b->iface.bytes_held = slot_bytes_held;
    b->iface.trim = slot_trim;
    b->iface.pos = slot_pos;
    b->iface.wait = slot_wait;
    b->iface.sync = slot_sync;
    b->iface.sync_all = slot_sync_all;
    b->iface.sync_for = slot_sync_for;
    b->iface.copy = slot_copy;
    b->iface.elementwise = slot_elementwise;
    b->iface.fill = slot_fill;
    b->iface.reduce = slot_reduce;
    b->iface.flags = DG_BE_IDX_IN | DG_BE_XPORT_ALLRED;
    b->iface.scan = slot_scan;
    b->iface.gemm = slot_gemm;
    b->iface.exchange = slot_exchange;
    b->iface.allreduce = slot_allreduce;
    b->iface.join = slot_join;           /* [multihost] */
    b->iface.transport = slot_transport; /* [multihost] */
    b->iface.watch = slot_watch;         /* [multihost] */
    b->iface.mark = slot_mark;
    b->iface.can_access = cu_can_access;
    b->iface.select = slot_select;
    b->iface.rows = slot_rows;
    b->iface.route = slot_route;
    b->iface.sort = slot_sort;
    b->iface.reduce_parts = slot_reduce_parts;
    b->iface.destroy = slot_destroy;
    b->iface.dense = slot_dense;
    b->iface.fft = slot_fft;
    b->iface.fused = slot_fused;
    b->iface.search = slot_search;
    b->iface.count = slot_count;
    (void)pthread_once(&cu_fork_once, cu_fork_register);
    pthread_mutex_init(&b->hc_mu, NULL);
    for (i = 0; i < ndevices; i++) {
        b->devs[i].id = ids[i];
        pthread_mutex_init(&b->devs[i].mu, NULL);
        b->devs[i].started = 1;
        for (j = 0; j < i; j++)
            if (ids[j] == ids[i])
                b->shared_gpu = 1;
    }
    free(ids);
    for (i = 0; i < ndevices; i++)
        for (j = 0; j < ndevices; j++)
            if (b->devs[i].id == b->devs[j].id)
                b->devs[i].nshare++;
    for (i = 0; i < ndevices && st == DG_OK; i++)
        st = dev_setup(b, i, err);
    for (i = 0; i < ndevices && st == DG_OK; i++)
        for (j = 0; j < ndevices && st == DG_OK; j++)
            if (i != j)
                st = peer_setup(b, i, j, err);
    /* after the peers: copies are the default where every pair has access */
    if (st == DG_OK)
        st = cu_transfer_setup(b, err);
    if (st == DG_OK && !b->xfer_copies)
        b->iface.flags |= DG_BE_XCHG_SMS; /* NCCL's kernels */
    if (st == DG_OK)
        st = cu_fpe_setup(b, err);
    if (st != DG_OK) {
        cu_destroy(&b->iface);
        return st;
    }
    *out = &b->iface;
    return DG_OK;
}

dg_status dg_cuda_backend_create(int ndevices, dg_backend_i **out, dg_error *err)
{
    dg_status st;
    KEEP_DEVICE(backend_create(ndevices, out, err));
    return st;
}
