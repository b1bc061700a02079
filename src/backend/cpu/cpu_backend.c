/* The CPU backend: virtual devices on host memory.
 *
 * Each virtual device has its own memory pool and one worker thread draining a
 * FIFO queue, which serves as both of its streams (compute and transfer alias).
 * A dg_pos is (device, seq): seq counts the tasks enqueued on that device; the
 * worker publishes `completed`, and waiting for a pos is waiting until
 * completed >= seq.  Cross-device waits are tasks that block the waiting
 * device's worker; since a wait only names work enqueued before it, waits never
 * form a cycle.
 *
 * Small tasks on an idle device run at once on the caller's thread (the queue
 * order is kept: only when nothing is queued or running), so one small op costs
 * about what a function call costs; large ones go to the worker, so several
 * virtual devices compute on several cores.
 *
 * fork(): a forked child has the parent's memory (so every array's chunks,
 * which are host memory) but only the thread that forked, and a mutex held
 * by another thread at the fork stays held in the child.  So before a fork
 * every device's queue is drained and every device's lock taken (the
 * handlers of pthread_atfork, "Fork" below); the parent then goes on as
 * before, and the child gets fresh locks and an empty queue per device,
 * whose worker thread starts at the first task queued there.  The child
 * can read and use the parent's arrays, as a NumPy child can. */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpu_dense.h"
#include "cpu_fft.h"
#include "cpu_fused.h"
#include "cpu_gemm.h"
#include "cpu_index.h"
#include "cpu_surface.h"
#include "cpu_loops.h"
#include "cpu_place.h"
#include "cpu_transport.h"
#include "dg_backend.h"
#include "dg_fpe.h"
#include "dg_loops.h"
#include "dg_ufunc.h"

/* Work below this many elements runs inline when the device is idle. */
#define CPU_INLINE_ELEMS 65536
/* Freed blocks kept per device for reuse, at most (bytes). */
#define CPU_POOL_KEEP ((size_t)1 << 30)
/* Blocks at least this large are page-aligned and advised to use huge pages. */
#define CPU_BIG_BLOCK ((size_t)1 << 21)
#define CPU_NCLASSES 200
/* Bytes before a fused task's scratch: its descriptor, 64-byte aligned. */
#define CPU_FUSED_HEAD ((sizeof(dg_fused_desc) + 63) & ~(size_t)63)

typedef enum {
    T_EW, T_COPY, T_FILL, T_REDUCE, T_SCAN, T_WAIT, T_FREE, T_GEMM,
    T_SELECT, T_ROWS, T_ROUTE, T_SORT, T_DENSE, T_FFT, T_CALL, T_FUSED, T_SEARCH, T_COUNT
} task_kind;

typedef struct cpu_task {
    struct cpu_task *next;
    task_kind kind;
    uint32_t fpe; /* the action word of the thread that queued it (dg_fpe.h) */
    union {
        dg_ew_desc ew;
        dg_copy_desc copy;
        dg_fill_desc fill;
        struct {
            dg_reduce_desc d;
            unsigned char *have; /* a PARTS pass's have bytes, set to 1 after */
            int64_t nhave;
        } reduce;
        dg_scan_desc scan;
        dg_gemm_desc gemm;
        dg_pos wait;
        void *free;
        dg_select_desc select;
        dg_rows_desc rows;
        dg_route_desc route;
        struct {
            dg_sort_desc d;
            void *work;
        } sort;
        dg_dense_desc dense;
        struct {
            dg_fft_desc d;
            void *work;
        } fft;
        struct {
            void (*fn)(void *);
            void *arg;
        } call;
        dg_fused_desc *fused; /* malloc'ed with its scratch after it; freed when run */
        dg_search_desc search;
        dg_count_desc count;
    } u;
} cpu_task;

/* A block header sits in front of every allocation. */
typedef struct blk {
    struct blk *next; /* in a free list */
    size_t cls_size;  /* usable bytes */
    int cls;
    int big;
    char pad[64 - sizeof(void *) - sizeof(size_t) - 2 * sizeof(int)];
} blk;

typedef struct cpu_dev {
    struct cpu_be *be;
    int id;
    pthread_mutex_t mu;
    pthread_cond_t cv_work; /* the worker waits for tasks */
    pthread_cond_t cv_done; /* waiters wait for `completed` to grow */
    cpu_task *head, *tail;
    uint64_t enqueued;  /* seq of the last task enqueued */
    uint64_t completed; /* every task with seq <= completed has run */
    int inline_running;
    int stop;
    int started;        /* the worker thread runs (started at the first task queued) */
    pthread_t thread;
    cpu_task *task_free; /* recycled task records */
    /* memory */
    blk *pool[CPU_NCLASSES];
    size_t pool_bytes; /* bytes held in free lists */
    size_t in_use;     /* bytes handed out and not released */
} cpu_dev;

typedef struct cpu_be {
    dg_backend_i iface;
    int ndev;
    cpu_dev *devs;
    struct cpu_be *next_live; /* in the list of live backends (fork handlers) [live_mu] */
} cpu_be;

static cpu_be *impl_of(dg_backend_i *be) { return (cpu_be *)be->impl; }

/* ---- memory pool ------------------------------------------------------- */

/* Size class of n bytes: four classes per power of two from 64 bytes, so a
 * block wastes at most a quarter of its size. */
static int size_class(size_t n, size_t *cls_size)
{
    size_t s = 64;
    int c = 0;
    if (n <= 64) {
        *cls_size = 64;
        return 0;
    }
    if (n > ((size_t)1 << (8 * sizeof(size_t) - 2))) { /* s would overflow: no class */
        *cls_size = n;
        return -1;
    }
    while (s < n) {
        size_t q = s / 4;
        int k;
        for (k = 1; k <= 4; k++) {
            c++;
            if (s + k * q >= n) {
                *cls_size = s + k * q;
                return c < CPU_NCLASSES ? c : -1;
            }
        }
        s *= 2;
    }
    *cls_size = s;
    return c < CPU_NCLASSES ? c : -1;
}

static void blk_os_free(blk *b)
{
    if (b->big)
        munmap(b, b->cls_size + sizeof(blk));
    else
        free(b);
}

/* A fresh block of cls_size usable bytes from the OS, or NULL. */
static blk *blk_os_alloc(size_t cls_size, int cls)
{
    blk *b;
    size_t total = cls_size + sizeof(blk);
    int big = total >= CPU_BIG_BLOCK;
    if (big) {
        void *p = mmap(NULL, total, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, total, MADV_HUGEPAGE);
#endif
        b = (blk *)p;
    } else {
        b = (blk *)malloc(total);
        if (!b)
            return NULL;
    }
    b->next = NULL;
    b->cls_size = cls_size;
    b->cls = cls;
    b->big = big;
    return b;
}

static dg_status cpu_alloc(dg_backend_i *be, int dev, size_t nbytes, void **ptr,
                           dg_error *err)
{
    cpu_be *cb = impl_of(be);
    cpu_dev *d;
    size_t cls_size;
    int cls;
    blk *b = NULL;

    if (dev < 0 || dev >= cb->ndev)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "alloc on a device that does not exist");
    d = &cb->devs[dev];
    cls = size_class(nbytes ? nbytes : 1, &cls_size);
    if (cls < 0)
        cls_size = nbytes;
    pthread_mutex_lock(&d->mu);
    if (cls >= 0 && d->pool[cls]) {
        b = d->pool[cls];
        d->pool[cls] = b->next;
        d->pool_bytes -= b->cls_size;
    }
    pthread_mutex_unlock(&d->mu);
    if (!b) {
        b = blk_os_alloc(cls_size, cls);
        if (!b) {
            dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev,
                         "out of memory on virtual device cpu:%d: could not allocate "
                         "%zu bytes", dev, nbytes);
            if (err)
                err->bytes = nbytes;
            return DG_ERR_DEVICE_NOMEM;
        }
    }
    pthread_mutex_lock(&d->mu);
    d->in_use += b->cls_size;
    pthread_mutex_unlock(&d->mu);
    *ptr = (void *)(b + 1);
    return DG_OK;
}

/* Puts a block back in its device's pool (or to the OS past the keep limit).
 * Runs on the worker (or inline); takes the device lock. */
static void pool_put(cpu_dev *d, void *ptr)
{
    blk *b = (blk *)ptr - 1;
    int to_os = 0;
    pthread_mutex_lock(&d->mu);
    d->in_use -= b->cls_size;
    if (b->cls < 0 || d->pool_bytes + b->cls_size > CPU_POOL_KEEP) {
        to_os = 1;
    } else {
        b->next = d->pool[b->cls];
        d->pool[b->cls] = b;
        d->pool_bytes += b->cls_size;
    }
    pthread_mutex_unlock(&d->mu);
    if (to_os)
        blk_os_free(b);
}

static size_t cpu_bytes_in_use(dg_backend_i *be, int dev)
{
    cpu_dev *d = &impl_of(be)->devs[dev];
    size_t n;
    pthread_mutex_lock(&d->mu);
    n = d->in_use;
    pthread_mutex_unlock(&d->mu);
    return n;
}

/* ---- copies -------------------------------------------------------------- */

/* Strided N-d copy on the host.  The innermost axis is copied with memcpy when
 * both sides are dense along it, or, where the copy is at least
 * dg_cpu_stream_plain_min() bytes, with stores past the cache (cpu_loops.h): the
 * assembly and the copy out of the one-call product, reshards and slice
 * assignments of large arrays. */
static void run_copy(const dg_copy_desc *c)
{
    int nd = c->ndim, a, stream;
    int64_t idx[DG_MAXDIM];
    size_t isz = (size_t)c->itemsize, total = isz;
    int64_t n, i;
    const char *s;
    char *t;

    for (a = 0; a < nd; a++)
        if (c->shape[a] == 0)
            return;
    if (nd == 0) {
        memcpy(c->dst, c->src, isz);
        return;
    }
    for (a = 0; a < nd; a++)
        total *= (size_t)c->shape[a];
    stream = total >= dg_cpu_stream_plain_min();
    n = c->shape[nd - 1];
    memset(idx, 0, sizeof(idx));
    for (;;) {
        s = c->src;
        t = c->dst;
        for (a = 0; a < nd - 1; a++) {
            s += idx[a] * c->src_strides[a];
            t += idx[a] * c->dst_strides[a];
        }
        if (c->src_strides[nd - 1] == (int64_t)isz && c->dst_strides[nd - 1] == (int64_t)isz) {
            if (stream)
                dg_cpu_stream_copy(t, s, (size_t)n * isz);
            else
                memcpy(t, s, (size_t)n * isz);
        } else {
            int64_t ss = c->src_strides[nd - 1], ts = c->dst_strides[nd - 1];
            switch (isz) {
#define CPY(T)                                                        \
    for (i = 0; i < n; i++) *(T *)(t + i * ts) = *(const T *)(s + i * ss); \
    break;
            case 1: CPY(uint8_t)
            case 2: CPY(uint16_t)
            case 4: CPY(uint32_t)
            case 8: CPY(uint64_t)
#undef CPY
            default:
                for (i = 0; i < n; i++)
                    memcpy(t + i * ts, s + i * ss, isz);
            }
        }
        for (a = nd - 2; a >= 0; a--) {
            if (++idx[a] < c->shape[a])
                break;
            idx[a] = 0;
        }
        if (a < 0)
            break;
    }
    if (stream)
        dg_cpu_stream_fence();
}

/* ---- queue --------------------------------------------------------------- */

static void run_task_body(cpu_be *cb, cpu_dev *d, cpu_task *t);

/* The action word a task runs under: the queuing thread's, for the work whose
 * loops NumPy checks (elementwise, fused, reductions, scans); 0 for the rest,
 * and for argmax / argmin, which NumPy runs without looking at the status
 * (a NaN compared there raises "invalid" and NumPy says nothing). */
static uint32_t task_fpe(const cpu_task *t)
{
    switch (t->kind) {
    case T_REDUCE:
        return t->u.reduce.d.kind == DG_RED_ARGMAX || t->u.reduce.d.kind == DG_RED_ARGMIN ? 0
                                                                                          : t->fpe;
    case T_EW: case T_FUSED: case T_SCAN: return t->fpe;
    default: return 0;
    }
}

/* The name NumPy's message gives t's work: its ufunc's ("cast" for a cast),
 * a fused chain's by its last step, "reduce" (a reduction, or the combine of
 * its partials: DG_FPE_AS_REDUCE), "accumulate". */
static const char *task_where(const cpu_task *t)
{
    if (t->fpe & DG_FPE_AS_REDUCE) /* a reduction's combine, read later */
        return "reduce";
    switch (t->kind) {
    case T_EW:
        return t->u.ew.loop >= 0 && t->u.ew.loop < DG_NLOOPS
                   ? dg_ufunc_name(dg_loops[t->u.ew.loop].ufunc)
                   : "a device loop";
    case T_FUSED:
        return t->u.fused->nstep > 0
                   ? dg_ufunc_name(dg_loops[t->u.fused->step[t->u.fused->nstep - 1].loop].ufunc)
                   : "a fused chain";
    case T_REDUCE: return "reduce";
    case T_SCAN: return "accumulate";
    default: return "a device loop";
    }
}

/* Kinds (1 << DG_FPE_*) raised in the floating-point status of this thread. */
static unsigned fpe_kinds(void)
{
    const int f = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
    return (f & FE_DIVBYZERO ? 1u << DG_FPE_DIVIDE : 0) | (f & FE_OVERFLOW ? 1u << DG_FPE_OVER : 0) |
           (f & FE_UNDERFLOW ? 1u << DG_FPE_UNDER : 0) | (f & FE_INVALID ? 1u << DG_FPE_INVALID : 0);
}

/* Runs t; where its action word watches anything, the status is cleared
 * before (as NumPy's ufunc call clears it) and what the loops raised is
 * noted after (dg_fpe_note): one feclearexcept and one fetestexcept per task. */
static void run_task(cpu_be *cb, cpu_dev *d, cpu_task *t)
{
    const uint32_t fpe = task_fpe(t);
    const char *where = fpe ? task_where(t) : NULL; /* before: a fused task frees its descriptor */
    /* DGARRAY_FPE=soft: elementwise, fused and scan work classified by the
     * GPU kernels' rule (dg_cpu_soft_begin; a scan's folds as the GPU's scan
     * kernels check them, dg_fpe_fold_kinds); reductions keep fenv */
    const int soft = fpe && (t->kind == T_EW || t->kind == T_FUSED || t->kind == T_SCAN) &&
                     dg_fpe_soft();
    if (soft)
        dg_cpu_soft_begin(fpe);
    else if (fpe)
        feclearexcept(FE_ALL_EXCEPT);
    run_task_body(cb, d, t);
    if (fpe) {
        const unsigned k = soft ? dg_cpu_soft_end() : fpe_kinds();
        if (k)
            dg_fpe_note(fpe, k, where);
    }
}

static void run_task_body(cpu_be *cb, cpu_dev *d, cpu_task *t)
{
    switch (t->kind) {
    case T_EW: dg_cpu_ew_run(&t->u.ew); break;
    case T_COPY: run_copy(&t->u.copy); break;
    case T_FILL: dg_cpu_fill_run(&t->u.fill); break;
    case T_REDUCE:
        dg_cpu_reduce_run(&t->u.reduce.d);
        if (t->u.reduce.have)
            memset(t->u.reduce.have, 1, (size_t)t->u.reduce.nhave);
        break;
    case T_SCAN: dg_cpu_scan_run(&t->u.scan); break;
    case T_GEMM: dg_cpu_gemm_run(&t->u.gemm); break;
    case T_FREE: pool_put(d, t->u.free); break;
    case T_SELECT: dg_cpu_select_run(&t->u.select); break;
    case T_ROWS: dg_cpu_rows_run(&t->u.rows); break;
    case T_ROUTE: dg_cpu_route_run(&t->u.route); break;
    case T_SORT: dg_cpu_sort_run(&t->u.sort.d, t->u.sort.work); break;
    case T_DENSE: dg_cpu_dense_run(&t->u.dense); break;
    case T_FFT: dg_cpu_fft_run(&t->u.fft.d, t->u.fft.work); break;
    case T_CALL: t->u.call.fn(t->u.call.arg); break;
    case T_FUSED:
        dg_cpu_fused_run(t->u.fused, (char *)t->u.fused + CPU_FUSED_HEAD);
        free(t->u.fused);
        break;
    case T_SEARCH: dg_cpu_search_run(&t->u.search); break;
    case T_COUNT: dg_cpu_count_run(&t->u.count); break;
    case T_WAIT: {
        cpu_dev *o = &cb->devs[t->u.wait.dev];
        pthread_mutex_lock(&o->mu);
        while (o->completed < t->u.wait.seq)
            pthread_cond_wait(&o->cv_done, &o->mu);
        pthread_mutex_unlock(&o->mu);
        break;
    }
    }
}

static void *worker_main(void *arg);

/* Starts d's worker thread if it does not run yet (called with d->mu held:
 * the worker takes the lock before it looks at the queue).  0 or -1. */
static int worker_ensure(cpu_dev *d)
{
    if (d->started)
        return 0;
    if (pthread_create(&d->thread, NULL, worker_main, d) != 0)
        return -1;
    d->started = 1;
    dg_cpu_place_worker(d->thread, d->id, d->be->ndev);
    return 0;
}

static void *worker_main(void *arg)
{
    cpu_dev *d = (cpu_dev *)arg;
    cpu_task *t;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while ((!d->head || d->inline_running) && !d->stop)
            pthread_cond_wait(&d->cv_work, &d->mu);
        if (!d->head && d->stop)
            break;
        if (!d->head || d->inline_running)
            continue;
        t = d->head;
        d->head = t->next;
        if (!d->head)
            d->tail = NULL;
        pthread_mutex_unlock(&d->mu);
        run_task(d->be, d, t);
        pthread_mutex_lock(&d->mu);
        d->completed++;
        t->next = d->task_free;
        d->task_free = t;
        pthread_cond_broadcast(&d->cv_done);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* A task record for `d`, uninitialised but for `next`; NULL if out of memory.
 * Called with d->mu held. */
static cpu_task *task_get(cpu_dev *d)
{
    cpu_task *t = d->task_free;
    if (t) {
        d->task_free = t->next;
    } else {
        t = (cpu_task *)malloc(sizeof(*t));
        if (!t)
            return NULL;
    }
    t->next = NULL;
    return t;
}

/* Enqueues task `proto` on device `dev`, or runs it on the caller's thread if
 * the device is idle and the work is small (`small`).  The task is copied. */
static dg_status submit(cpu_be *cb, int dev, const cpu_task *proto, size_t size,
                        int small, dg_error *err)
{
    cpu_dev *d;
    cpu_task *t;
    if (dev < 0 || dev >= cb->ndev)
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "work submitted to virtual device %d, which does not exist", dev);
    d = &cb->devs[dev];
    pthread_mutex_lock(&d->mu);
    if (small && !d->head && !d->inline_running && d->completed == d->enqueued) {
        cpu_task local;
        uint64_t seq = ++d->enqueued;
        d->inline_running = 1;
        pthread_mutex_unlock(&d->mu);
        memcpy(&local, proto, size);
        local.fpe = dg_fpe_actions();
        run_task(cb, d, &local);
        pthread_mutex_lock(&d->mu);
        d->completed = seq;
        d->inline_running = 0;
        pthread_cond_broadcast(&d->cv_done);
        if (d->head)
            pthread_cond_signal(&d->cv_work);
        pthread_mutex_unlock(&d->mu);
        return DG_OK;
    }
    if (worker_ensure(d) < 0) {
        pthread_mutex_unlock(&d->mu);
        return dg_error_set(err, DG_ERR_NOMEM, dev,
                            "could not start the worker thread of virtual device %d", dev);
    }
    t = task_get(d);
    if (!t) {
        pthread_mutex_unlock(&d->mu);
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory queueing work");
    }
    memcpy(t, proto, size);
    t->next = NULL;
    t->fpe = dg_fpe_actions();
    if (d->tail)
        d->tail->next = t;
    else
        d->head = t;
    d->tail = t;
    d->enqueued++;
    pthread_cond_signal(&d->cv_work);
    pthread_mutex_unlock(&d->mu);
    return DG_OK;
}

#define TASK_SIZE(field) (offsetof(cpu_task, u) + sizeof(((cpu_task *)0)->u.field))

/* Stream-ordered, as the interface says (and as CUDA's pool is): a block
 * that fits in the device's pool goes there at once, where the next alloc on
 * the device may take it, since every use of that alloc is queued after the
 * work queued before this release ([cpu-speed]: without it a chain of
 * large temporaries allocated fresh, page-faulted blocks while the worker
 * had yet to run their predecessors' frees: sqrt(a*a+b*b) + sin(a)*2 - b/3
 * on 2^25 float64 took 1076 ms of CPU time on one device against NumPy's
 * 856).  A block going back to the OS waits for the queued work, in a task. */
static void cpu_release(dg_backend_i *be, int dev, void *ptr)
{
    cpu_be *cb = impl_of(be);
    cpu_task t;
    dg_error e = DG_ERROR_INIT;
    if (!ptr)
        return;
    if (dev >= 0 && dev < cb->ndev) {
        cpu_dev *d = &cb->devs[dev];
        blk *b = (blk *)ptr - 1;
        pthread_mutex_lock(&d->mu);
        if (b->cls >= 0 && d->pool_bytes + b->cls_size <= CPU_POOL_KEEP) {
            d->in_use -= b->cls_size;
            b->next = d->pool[b->cls];
            d->pool[b->cls] = b;
            d->pool_bytes += b->cls_size;
            pthread_mutex_unlock(&d->mu);
            return;
        }
        pthread_mutex_unlock(&d->mu);
    }
    t.kind = T_FREE;
    t.u.free = ptr;
    if (submit(cb, dev, &t, TASK_SIZE(free), 1, &e) != DG_OK) {
        /* No memory for a task record: wait for the device, then free now. */
        cpu_dev *d = &cb->devs[dev];
        pthread_mutex_lock(&d->mu);
        while (d->completed < d->enqueued)
            pthread_cond_wait(&d->cv_done, &d->mu);
        pthread_mutex_unlock(&d->mu);
        pool_put(d, ptr);
    }
}

/* [multihost] cpu_transport.h: fn(arg) queued on dev's worker, never inline. */
dg_status dg_cpu_submit_call(dg_backend_i *be, int dev, void (*fn)(void *), void *arg,
                             dg_error *err)
{
    cpu_task t;
    t.kind = T_CALL;
    t.u.call.fn = fn;
    t.u.call.arg = arg;
    return submit(impl_of(be), dev, &t, TASK_SIZE(call), 0, err);
}

static dg_status cpu_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *c,
                          dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_COPY;
    t.u.copy = *c;
    return submit(impl_of(be), dev, &t, TASK_SIZE(copy),
                  dg_shape_size(c->ndim, c->shape) * c->itemsize < CPU_INLINE_ELEMS * 8, err);
}

static dg_status cpu_elementwise(dg_backend_i *be, int dev, int stream,
                                 const dg_ew_desc *d, dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_EW;
    t.u.ew = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(ew),
                  dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS, err);
}

static dg_status cpu_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *f,
                          dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_FILL;
    t.u.fill = *f;
    return submit(impl_of(be), dev, &t, TASK_SIZE(fill),
                  dg_shape_size(f->ndim, f->shape) < CPU_INLINE_ELEMS, err);
}

/* 1 if `loop` is a binary loop whose three dtypes are all dtype. */
static int fold_loop_ok(int loop, int dtype)
{
    return loop >= 0 && loop < dg_nloops && dg_loops[loop].nin == 2 &&
           dg_loops[loop].nout == 1 && dg_loops[loop].dtypes[0] == dtype &&
           dg_loops[loop].dtypes[1] == dtype && dg_loops[loop].dtypes[2] == dtype;
}

/* The rows of partials a PARTS pass writes here: one, since the loops fold
 * a part whole. */
static dg_status cpu_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *d,
                                  int64_t *rows, dg_error *err)
{
    (void)be;
    (void)dev;
    (void)d;
    (void)err;
    *rows = 1;
    return DG_OK;
}

/* The whole reduction that the PARTS or FOLD pass r is here.  PARTS: the
 * part reduced into row part_row of the stack (its have bytes are set to 1
 * after, by the same task (cpu_reduce): with neither where nor empty
 * extents every output has a value).  FOLD: the stack, shape (kept dims, rows), reduced over its rows,
 * argmax / argmin reading their indices from it. */
static dg_status cpu_stack_desc(const dg_reduce_desc *r, int dev, dg_reduce_desc *w,
                                dg_error *err)
{
    const int nk = r->ndim - r->nred, isz = dg_dtype_size(r->dtype);
    const int arg = r->kind != DG_RED_LOOP;
    int64_t m, ks[DG_MAXDIM];
    int a;
    if (nk < 0 || nk > DG_MAXDIM || r->part == NULL || r->part_have == NULL ||
        (arg && r->part_idx == NULL))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a reduction pass without its stack");
    m = dg_shape_size(nk, r->shape);
    dg_dense_strides(nk, r->shape, 1, ks);
    *w = *r;
    w->pass = DG_RED_WHOLE;
    if (r->pass == DG_RED_PARTS) {
        if (r->where != NULL || r->idx_in != NULL || r->part_row < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a partials pass with a where "
                                "mask, read indices or a row below 0");
        w->has_init = 0;
        w->dst = r->part + r->part_row * m * isz;
        w->idx = arg ? r->part_idx + r->part_row * m : NULL;
        for (a = 0; a < nk; a++) {
            w->dst_strides[a] = ks[a] * isz;
            w->idx_strides[a] = ks[a] * (int64_t)sizeof(int64_t);
        }
        return DG_OK;
    }
    if (r->nred != 0 || r->part_rows < 1 || nk + 1 > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a fold of %lld rows over %d reduced "
                            "dims", (long long)r->part_rows, r->nred);
    w->ndim = nk + 1;
    w->nred = 1;
    w->shape[nk] = r->part_rows;
    w->src = r->part;
    w->where = NULL;
    for (a = 0; a < nk; a++) {
        w->src_strides[a] = ks[a] * isz;
        w->idx_in_strides[a] = ks[a] * (int64_t)sizeof(int64_t);
    }
    w->src_strides[nk] = m * isz;
    w->idx_in_strides[nk] = m * (int64_t)sizeof(int64_t);
    w->idx_in = arg ? r->part_idx : NULL;
    w->idx_gstride[nk] = 0;
    w->idx_base = 0;
    return DG_OK;
}

static dg_status cpu_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *r,
                            dg_error *err)
{
    cpu_task t;
    (void)stream;
    if (r->kind == DG_RED_LOOP && !fold_loop_ok(r->loop, r->dtype))
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "reduction with loop %d, which is not a binary loop of %s",
                            r->loop, dg_dtype_name(r->dtype));
    t.kind = T_REDUCE;
    t.u.reduce.have = NULL;
    t.u.reduce.nhave = 0;
    if (r->pass == DG_RED_WHOLE)
        t.u.reduce.d = *r;
    else if (r->pass == DG_RED_PARTS || r->pass == DG_RED_FOLD)
        DG_CHECK(cpu_stack_desc(r, dev, &t.u.reduce.d, err));
    else
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "reduction pass %d", r->pass);
    if (r->pass == DG_RED_PARTS) { /* its row's have bytes, in the same task */
        t.u.reduce.nhave = dg_shape_size(r->ndim - r->nred, r->shape);
        t.u.reduce.have = r->part_have + r->part_row * t.u.reduce.nhave;
    }
    return submit(impl_of(be), dev, &t, TASK_SIZE(reduce),
                  dg_shape_size(t.u.reduce.d.ndim, t.u.reduce.d.shape) < CPU_INLINE_ELEMS, err);
}

static dg_status cpu_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *sc,
                          dg_error *err)
{
    cpu_task t;
    (void)stream;
    if (!fold_loop_ok(sc->loop, sc->dtype))
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "scan with loop %d, which is not a binary loop of %s", sc->loop,
                            dg_dtype_name(sc->dtype));
    t.kind = T_SCAN;
    t.u.scan = *sc;
    return submit(impl_of(be), dev, &t, TASK_SIZE(scan),
                  dg_shape_size(sc->ndim, sc->shape) < CPU_INLINE_ELEMS, err);
}

/* ---- index work (cpu_index.c) ------------------------------------------------------ */

static dg_status cpu_select(dg_backend_i *be, int dev, int stream, const dg_select_desc *d,
                            dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_SELECT;
    t.u.select = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(select),
                  dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS, err);
}

static dg_status cpu_rows(dg_backend_i *be, int dev, int stream, const dg_rows_desc *d,
                          dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_ROWS;
    t.u.rows = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(rows),
                  d->n * dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS, err);
}

static dg_status cpu_route(dg_backend_i *be, int dev, int stream, const dg_route_desc *d,
                           dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_ROUTE;
    t.u.route = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(route), d->n < CPU_INLINE_ELEMS, err);
}

/* The sort's workspace comes from the device's pool and goes back to it
 * after the sort, in queue order. */
static dg_status cpu_sort(dg_backend_i *be, int dev, int stream, const dg_sort_desc *d,
                          dg_error *err)
{
    cpu_task t;
    dg_status st;
    (void)stream;
    t.kind = T_SORT;
    t.u.sort.d = *d;
    DG_CHECK(cpu_alloc(be, dev, dg_cpu_sort_work_bytes(d), &t.u.sort.work, err));
    st = submit(impl_of(be), dev, &t, TASK_SIZE(sort),
                dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS, err);
    cpu_release(be, dev, t.u.sort.work);
    return st;
}

/* ---- dense linear algebra and FFTs (cpu_dense.c, cpu_fft.c) --------------------------- */

/* LAPACK through the routines the binding handed over; without them
 * DG_ERR_NOTIMPL, enqueueing nothing. */
static dg_status cpu_dense(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d,
                           dg_error *err)
{
    cpu_task t;
    (void)stream;
    if (!dg_cpu_dense_available())
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the CPU backend has no LAPACK (NumPy's "
                            "was not found)");
    if (d->op < 0 || d->op >= DG_DENSE_NOPS)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "dense op %d", d->op);
    t.kind = T_DENSE;
    t.u.dense = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(dense), 0, err);
}

/* NumPy's pocketfft loops; a work buffer from the device's pool goes back
 * after the transform, in queue order. */
static dg_status cpu_fft(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d,
                         dg_error *err)
{
    cpu_task t;
    dg_status st;
    size_t wb = dg_cpu_fft_work_bytes(d);
    int64_t work = 1;
    int a;
    (void)stream;
    if (!dg_cpu_fft_available())
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the CPU backend has no FFT (NumPy's "
                            "pocketfft loops were not found)");
    if (d->rank < 1 || d->rank > DG_FFT_MAXRANK ||
        (d->dtype != DG_COMPLEX64 && d->dtype != DG_COMPLEX128))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "an FFT of rank %d in %s", d->rank,
                            dg_dtype_name(d->dtype));
    for (a = 0; a < d->rank; a++)
        work *= d->n[a];
    for (a = 0; a < d->nbatch; a++)
        work *= d->batch[a];
    t.kind = T_FFT;
    t.u.fft.d = *d;
    t.u.fft.work = NULL;
    if (wb)
        DG_CHECK(cpu_alloc(be, dev, wb, &t.u.fft.work, err));
    st = submit(impl_of(be), dev, &t, TASK_SIZE(fft), work < CPU_INLINE_ELEMS / 8, err);
    if (t.u.fft.work)
        cpu_release(be, dev, t.u.fft.work);
    return st;
}

/* ---- fused elementwise chains (cpu_fused.c) ------------------------------------------ */

/* A copy of the descriptor and the scratch of its temporaries in one host
 * block (not the device's pool: a block just released there may still be
 * in use by queued work, and this one is written now), freed by the task. */
static dg_status cpu_fused(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                           dg_error *err)
{
    cpu_task t;
    dg_status st;
    size_t scratch = dg_cpu_fused_scratch_bytes(d);
    int s;
    (void)stream;
    if (d->nstep < 1 || d->nstep > DG_FUSED_MAXSTEPS || d->nval > DG_FUSED_MAXVALS ||
        d->ndim < 0 || d->ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a fused chain of %d steps, %d values",
                            d->nstep, d->nval);
    for (s = 0; s < d->nstep; s++)
        if (d->step[s].loop < 0 || d->step[s].loop >= dg_nloops)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "fused loop %d", d->step[s].loop);
    t.kind = T_FUSED;
    t.u.fused = (dg_fused_desc *)aligned_alloc(64, CPU_FUSED_HEAD + ((scratch + 63) & ~(size_t)63));
    if (!t.u.fused)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory for a fused chain's "
                            "scratch (%zu bytes)", scratch);
    memcpy(t.u.fused, d, sizeof(*d));
    st = submit(impl_of(be), dev, &t, TASK_SIZE(fused),
                dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS, err);
    if (st != DG_OK)
        free(t.u.fused);
    return st;
}

/* Searches and counts (cpu_surface.c). */
static dg_status cpu_search(dg_backend_i *be, int dev, int stream, const dg_search_desc *d,
                            dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_SEARCH;
    t.u.search = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(search),
                  dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS / 16, err);
}

static dg_status cpu_count(dg_backend_i *be, int dev, int stream, const dg_count_desc *d,
                           dg_error *err)
{
    cpu_task t;
    (void)stream;
    t.kind = T_COUNT;
    t.u.count = *d;
    return submit(impl_of(be), dev, &t, TASK_SIZE(count),
                  dg_shape_size(d->ndim, d->shape) < CPU_INLINE_ELEMS, err);
}

/* ---- transfers and collectives ------------------------------------------------- */

static dg_pos cpu_pos(dg_backend_i *be, int dev, int stream);
static dg_status cpu_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err);
static dg_status cpu_sync_all(dg_backend_i *be, dg_error *err);

/* Enqueues on dev a copy of nbytes from src to dst (dense). */
static dg_status submit_bytes(cpu_be *cb, int dev, const void *src, void *dst, size_t nbytes,
                              dg_error *err)
{
    cpu_task t;
    memset(&t.u.copy, 0, sizeof(t.u.copy));
    t.kind = T_COPY;
    t.u.copy.ndim = 1;
    t.u.copy.itemsize = 1;
    t.u.copy.shape[0] = (int64_t)nbytes;
    t.u.copy.src_strides[0] = t.u.copy.dst_strides[0] = 1;
    t.u.copy.src_dev = t.u.copy.dst_dev = dev;
    t.u.copy.src = (const char *)src;
    t.u.copy.dst = (char *)dst;
    return submit(cb, dev, &t, TASK_SIZE(copy), nbytes < CPU_INLINE_ELEMS * 8, err);
}

/* Enqueues on dev dst[e] = a[e] op b[e] for the n elements (loop `loop`). */
static dg_status submit_fold(cpu_be *cb, int dev, int loop, const void *a, const void *b,
                             void *dst, int64_t n, int64_t isz, dg_error *err)
{
    cpu_task t;
    memset(&t.u.ew, 0, sizeof(t.u.ew));
    t.kind = T_EW;
    t.u.ew.loop = loop;
    t.u.ew.ndim = 1;
    t.u.ew.shape[0] = n;
    t.u.ew.nop = 3;
    t.u.ew.data[0] = (char *)a;
    t.u.ew.data[1] = (char *)b;
    t.u.ew.data[2] = (char *)dst;
    t.u.ew.strides[0][0] = t.u.ew.strides[1][0] = t.u.ew.strides[2][0] = isz;
    return submit(cb, dev, &t, TASK_SIZE(ew), n < CPU_INLINE_ELEMS, err);
}

/* Each transfer is a copy run by the destination's worker after the work
 * enqueued so far on the source; the source's queue then waits for the copy,
 * so that positions of either device taken afterwards cover it (the ordering
 * NCCL gives on GPUs).  Waits only name work enqueued before them, so they
 * cannot form a cycle. */
static dg_status cpu_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err)
{
    cpu_be *cb = impl_of(be);
    int i;
    for (i = 0; i < n; i++) {
        if (x[i].src_dev < 0 || x[i].src_dev >= cb->ndev || x[i].dst_dev < 0 ||
            x[i].dst_dev >= cb->ndev || x[i].src_dev == x[i].dst_dev)
            return dg_error_set(err, DG_ERR_INTERNAL, x[i].dst_dev,
                                "a transfer from device %d to device %d", x[i].src_dev,
                                x[i].dst_dev);
        if (x[i].nbytes == 0)
            continue;
        DG_CHECK(cpu_wait(be, x[i].dst_dev, DG_STREAM_TRANSFER,
                          cpu_pos(be, x[i].src_dev, DG_STREAM_TRANSFER), err));
        DG_CHECK(submit_bytes(cb, x[i].dst_dev, x[i].src, x[i].dst, x[i].nbytes, err));
        DG_CHECK(cpu_wait(be, x[i].src_dev, DG_STREAM_TRANSFER,
                          cpu_pos(be, x[i].dst_dev, DG_STREAM_TRANSFER), err));
    }
    return DG_OK;
}

/* The ufunc of an all-reduce op. */
static int allred_ufunc(int op)
{
    switch (op) {
    case DG_ALLRED_SUM: return DG_UF_add;
    case DG_ALLRED_PROD: return DG_UF_multiply;
    case DG_ALLRED_MAX: return DG_UF_maximum;
    case DG_ALLRED_MIN: return DG_UF_minimum;
    default: return -1;
    }
}

/* Each device waits for every device's work so far, then folds all the
 * sources, in device order (so that every result has the same bits), into a
 * temporary of its own; once every device has, each copies its temporary
 * into its destination (which may be its source, read by the others in the
 * first step). */
static dg_status cpu_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *r,
                               dg_error *err)
{
    cpu_be *cb = impl_of(be);
    int dt[3] = {r->dtype, r->dtype, r->dtype};
    int uf = allred_ufunc(r->op), loop = uf < 0 ? -1 : dg_loop_find(uf, dt);
    int64_t isz = dg_dtype_size(r->dtype);
    size_t nbytes = (size_t)(r->count * isz);
    void **tmp;
    dg_pos *ready;
    dg_status st = DG_OK;
    int i, j, k;

    if (loop < 0 || r->n < 1)
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "no all-reduce of %s with op %d",
                            dg_dtype_name(r->dtype), r->op);
    for (i = 0; i < r->n; i++)
        if (r->devs[i] < 0 || r->devs[i] >= cb->ndev)
            return dg_error_set(err, DG_ERR_INTERNAL, r->devs[i],
                                "an all-reduce on device %d", r->devs[i]);
    if (r->count == 0)
        return DG_OK;
    tmp = (void **)calloc((size_t)r->n, sizeof(void *));
    ready = (dg_pos *)calloc((size_t)r->n, sizeof(dg_pos));
    if (!tmp || !ready) {
        free(tmp);
        free(ready);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (i = 0; i < r->n; i++)
        ready[i] = cpu_pos(be, r->devs[i], stream);
    for (i = 0; i < r->n && st == DG_OK; i++) {
        const int dev = r->devs[i];
        st = cpu_alloc(be, dev, nbytes, &tmp[i], err);
        for (j = 0; j < r->n && st == DG_OK; j++)
            st = cpu_wait(be, dev, stream, ready[j], err);
        if (st == DG_OK && r->n == 1)
            st = submit_bytes(cb, dev, r->src[0], tmp[i], nbytes, err);
        for (k = 1; k < r->n && st == DG_OK; k++)
            st = submit_fold(cb, dev, loop, k == 1 ? r->src[0] : tmp[i], r->src[k], tmp[i],
                             r->count, isz, err);
    }
    for (i = 0; i < r->n && st == DG_OK; i++)
        ready[i] = cpu_pos(be, r->devs[i], stream);
    for (i = 0; i < r->n && st == DG_OK; i++) {
        for (j = 0; j < r->n && st == DG_OK; j++)
            st = cpu_wait(be, r->devs[i], stream, ready[j], err);
        if (st == DG_OK)
            st = submit_bytes(cb, r->devs[i], tmp[i], r->dst[i], nbytes, err);
    }
    if (st != DG_OK) {
        /* let what was queued run before the temporaries go */
        dg_error e2 = DG_ERROR_INIT;
        cpu_sync_all(be, &e2);
    }
    for (i = 0; i < r->n; i++)
        if (tmp[i])
            cpu_release(be, r->devs[i], tmp[i]);
    free(tmp);
    free(ready);
    return st;
}

static int cpu_can_access(dg_backend_i *be, int dev, int other)
{
    (void)be;
    (void)dev;
    (void)other;
    return 1; /* the virtual devices share the host's memory */
}

/* The virtual devices share the host's memory and cores: one BLAS call
 * (threaded over every core) can compute a product whose operands lie on
 * several of them. */
static int cpu_gemm_wide(dg_backend_i *be, int dtype)
{
    (void)be;
    return dg_cpu_gemm_wide(dtype);
}

static dg_status cpu_gemm(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *g,
                          dg_error *err)
{
    cpu_task t;
    double work = (double)g->m * (double)g->n * (double)(g->k + 1);
    int ax;
    (void)stream;
    for (ax = 0; ax < g->nbatch; ax++)
        work *= (double)g->batch[ax];
    t.kind = T_GEMM;
    t.u.gemm = *g;
    return submit(impl_of(be), dev, &t, TASK_SIZE(gemm), work < CPU_INLINE_ELEMS, err);
}

/* ---- positions ------------------------------------------------------------ */

static dg_pos cpu_pos(dg_backend_i *be, int dev, int stream)
{
    cpu_dev *d = &impl_of(be)->devs[dev];
    dg_pos p;
    (void)stream;
    pthread_mutex_lock(&d->mu);
    p.seq = d->enqueued;
    pthread_mutex_unlock(&d->mu);
    p.dev = dev;
    p.stream = 0;
    return p;
}

static dg_status cpu_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err)
{
    cpu_be *cb = impl_of(be);
    cpu_dev *o;
    cpu_task t;
    int done;
    (void)stream;
    if (p.seq == 0 || p.dev == dev)
        return DG_OK;
    if (p.dev < 0 || p.dev >= cb->ndev)
        return dg_error_set(err, DG_ERR_INTERNAL, p.dev, "wait on a device that does not exist");
    o = &cb->devs[p.dev];
    pthread_mutex_lock(&o->mu);
    done = o->completed >= p.seq;
    pthread_mutex_unlock(&o->mu);
    if (done)
        return DG_OK;
    t.kind = T_WAIT;
    t.u.wait = p;
    return submit(cb, dev, &t, TASK_SIZE(wait), 0, err);
}

static dg_status cpu_sync(dg_backend_i *be, dg_pos p, dg_error *err)
{
    cpu_be *cb = impl_of(be);
    cpu_dev *d;
    if (p.seq == 0)
        return DG_OK;
    if (p.dev < 0 || p.dev >= cb->ndev)
        return dg_error_set(err, DG_ERR_INTERNAL, p.dev, "sync on a device that does not exist");
    d = &cb->devs[p.dev];
    pthread_mutex_lock(&d->mu);
    while (d->completed < p.seq)
        pthread_cond_wait(&d->cv_done, &d->mu);
    pthread_mutex_unlock(&d->mu);
    return DG_OK;
}

/* sync for at most timeout_us: a timed wait on the device's condition. */
static dg_status cpu_sync_for(dg_backend_i *be, dg_pos p, int64_t timeout_us, int *done,
                              dg_error *err)
{
    cpu_be *cb = impl_of(be);
    cpu_dev *d;
    struct timespec until;
    *done = 1;
    if (p.seq == 0)
        return DG_OK;
    if (p.dev < 0 || p.dev >= cb->ndev)
        return dg_error_set(err, DG_ERR_INTERNAL, p.dev, "sync on a device that does not exist");
    d = &cb->devs[p.dev];
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_us < 0)
        timeout_us = 0;
    until.tv_sec += (time_t)(timeout_us / 1000000);
    until.tv_nsec += (long)(timeout_us % 1000000) * 1000;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&d->mu);
    while (d->completed < p.seq)
        if (pthread_cond_timedwait(&d->cv_done, &d->mu, &until) == ETIMEDOUT)
            break;
    *done = d->completed >= p.seq;
    pthread_mutex_unlock(&d->mu);
    return DG_OK;
}

static dg_status cpu_sync_all(dg_backend_i *be, dg_error *err)
{
    cpu_be *cb = impl_of(be);
    int i;
    for (i = 0; i < cb->ndev; i++)
        DG_CHECK(cpu_sync(be, cpu_pos(be, i, 0), err));
    return DG_OK;
}

static dg_status cpu_device_info(dg_backend_i *be, int dev, char *name, size_t cap,
                                 size_t *total, size_t *freeb, dg_error *err)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
    long avail = sysconf(_SC_AVPHYS_PAGES);
    (void)err;
    (void)be;
    if (name && cap)
        snprintf(name, cap, "cpu:%d", dev);
    if (total)
        *total = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0;
    if (freeb)
        *freeb = avail > 0 && psz > 0 ? (size_t)avail * (size_t)psz : 0;
    return DG_OK;
}

/* ---- fork ------------------------------------------------------------------ */

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static cpu_be *live_head; /* every backend not yet destroyed [live_mu] */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* 1 if nothing is queued or running on d (d->mu held). */
static int dev_idle(const cpu_dev *d)
{
    return d->head == NULL && !d->inline_running && d->completed == d->enqueued;
}

/* Takes the locks of every device of cb, in device order, at a moment when
 * every queue is empty: so the forking thread holds them all through the
 * fork, and the child inherits no half-run task and no lock another thread
 * held.  A device found busy is waited for with no lock held (its worker may
 * be waiting for another device's lock, in a T_WAIT), then all are tried
 * again.  Work queued meanwhile by other threads is waited for too. */
static void quiesce(cpu_be *cb)
{
    for (;;) {
        int i, busy = -1;
        for (i = 0; i < cb->ndev; i++) {
            pthread_mutex_lock(&cb->devs[i].mu);
            if (!dev_idle(&cb->devs[i])) {
                busy = i;
                break;
            }
        }
        if (busy < 0)
            return;
        for (i = 0; i < busy; i++)
            pthread_mutex_unlock(&cb->devs[i].mu);
        {
            cpu_dev *d = &cb->devs[busy];
            while (!dev_idle(d))
                pthread_cond_wait(&d->cv_done, &d->mu);
            pthread_mutex_unlock(&d->mu);
        }
    }
}

/* pthread_atfork's prepare handler: every backend drained and locked. */
static void fork_prepare(void)
{
    cpu_be *cb;
    pthread_mutex_lock(&live_mu);
    for (cb = live_head; cb; cb = cb->next_live)
        quiesce(cb);
}

/* The parent after a fork: everything as it was. */
static void fork_parent(void)
{
    cpu_be *cb;
    int i;
    for (cb = live_head; cb; cb = cb->next_live)
        for (i = cb->ndev - 1; i >= 0; i--)
            pthread_mutex_unlock(&cb->devs[i].mu);
    pthread_mutex_unlock(&live_mu);
}

/* The child: the only thread is the one that forked, holding every lock
 * (made afresh rather than unlocked: the conditions may count waiters that
 * were the parent's other threads).  The queues are empty (prepare drained
 * them), the workers gone: each starts again at the first task queued on its
 * device (worker_ensure).  The memory pools, the counters and the positions
 * the arrays recorded carry on as they were. */
static void fork_child(void)
{
    cpu_be *cb;
    int i;
    for (cb = live_head; cb; cb = cb->next_live) {
        for (i = 0; i < cb->ndev; i++) {
            cpu_dev *d = &cb->devs[i];
            pthread_mutex_init(&d->mu, NULL);
            pthread_cond_init(&d->cv_work, NULL);
            pthread_cond_init(&d->cv_done, NULL);
            d->started = 0;
            d->stop = 0;
            d->inline_running = 0;
            d->head = d->tail = NULL;
        }
    }
    pthread_mutex_init(&live_mu, NULL);
}

static void fork_register(void)
{
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Adds cb to (or removes it from) the backends the fork handlers see. */
static void live_add(cpu_be *cb)
{
    pthread_mutex_lock(&live_mu);
    cb->next_live = live_head;
    live_head = cb;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(cpu_be *cb)
{
    cpu_be **p;
    pthread_mutex_lock(&live_mu);
    for (p = &live_head; *p; p = &(*p)->next_live)
        if (*p == cb) {
            *p = cb->next_live;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

static void cpu_destroy(dg_backend_i *be)
{
    cpu_be *cb = impl_of(be);
    int i, c;
    if (!cb)
        return;
    live_remove(cb);
    for (i = 0; i < cb->ndev; i++) {
        cpu_dev *d = &cb->devs[i];
        if (!d->started)
            continue;
        pthread_mutex_lock(&d->mu);
        d->stop = 1;
        pthread_cond_broadcast(&d->cv_work);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
    }
    for (i = 0; i < cb->ndev; i++) {
        cpu_dev *d = &cb->devs[i];
        while (d->task_free) {
            cpu_task *t = d->task_free;
            d->task_free = t->next;
            free(t);
        }
        for (c = 0; c < CPU_NCLASSES; c++) {
            while (d->pool[c]) {
                blk *b = d->pool[c];
                d->pool[c] = b->next;
                blk_os_free(b);
            }
        }
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv_work);
        pthread_cond_destroy(&d->cv_done);
    }
    free(cb->devs);
    free(cb);
}

dg_status dg_cpu_backend_create(int ndevices, dg_backend_i **out, dg_error *err)
{
    cpu_be *cb;
    int i;
    if (ndevices < 1 || ndevices > 1024)
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "DGARRAY_CPU_DEVICES must be between 1 and 1024, not %d",
                            ndevices);
    cb = (cpu_be *)calloc(1, sizeof(*cb));
    if (!cb)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    cb->devs = (cpu_dev *)calloc((size_t)ndevices, sizeof(cpu_dev));
    if (!cb->devs) {
        free(cb);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    cb->ndev = ndevices;
    cb->iface.version = DG_BACKEND_VERSION;
    cb->iface.name = "cpu";
    cb->iface.ndevices = ndevices;
    cb->iface.impl = cb;
    cb->iface.device_info = cpu_device_info;
    cb->iface.alloc = cpu_alloc;
    cb->iface.release = cpu_release;
    cb->iface.bytes_in_use = cpu_bytes_in_use;
    cb->iface.pos = cpu_pos;
    cb->iface.wait = cpu_wait;
    cb->iface.sync = cpu_sync;
    cb->iface.sync_all = cpu_sync_all;
    cb->iface.sync_for = cpu_sync_for;
    cb->iface.copy = cpu_copy;
    cb->iface.elementwise = cpu_elementwise;
    cb->iface.reduce = cpu_reduce;
    cb->iface.flags = DG_BE_IDX_IN;
    cb->iface.scan = cpu_scan;
    cb->iface.fill = cpu_fill;
    cb->iface.exchange = cpu_exchange;
    cb->iface.allreduce = cpu_allreduce;
    cb->iface.can_access = cpu_can_access;
    cb->iface.gemm_wide = cpu_gemm_wide;
    cb->iface.gemm = cpu_gemm;
    cb->iface.select = cpu_select;
    cb->iface.rows = cpu_rows;
    cb->iface.route = cpu_route;
    cb->iface.sort = cpu_sort;
    cb->iface.reduce_parts = cpu_reduce_parts;
    cb->iface.destroy = cpu_destroy;
    cb->iface.dense = cpu_dense;
    cb->iface.fft = cpu_fft;
    dg_cpu_transport_install(&cb->iface); /* [multihost] */
    cb->iface.fused = cpu_fused;
    cb->iface.search = cpu_search;
    cb->iface.count = cpu_count;
    for (i = 0; i < ndevices; i++) {
        cpu_dev *d = &cb->devs[i];
        d->be = cb;
        d->id = i;
        pthread_mutex_init(&d->mu, NULL);
        pthread_cond_init(&d->cv_work, NULL);
        pthread_cond_init(&d->cv_done, NULL);
    }
    (void)pthread_once(&fork_once, fork_register);
    live_add(cb);
    for (i = 0; i < ndevices; i++) {
        cpu_dev *d = &cb->devs[i];
        int r;
        pthread_mutex_lock(&d->mu);
        r = worker_ensure(d);
        pthread_mutex_unlock(&d->mu);
        if (r < 0) {
            cpu_destroy(&cb->iface);
            return dg_error_set(err, DG_ERR_NOMEM, -1,
                                "could not start the worker thread of virtual device %d", i);
        }
    }
    {
        /* [cpu-speed]: each device's BLAS call on its share of the cores */
        const int cores = dg_cpu_cores();
        dg_cpu_gemm_set_threads(cores > ndevices ? cores / ndevices : 1);
    }
    dg_cpu_stream_setup(ndevices); /* large outputs past the cache */
    *out = &cb->iface;
    return DG_OK;
}
