/* Copies between host memory and a GPU, through pinned staging buffers.
 *
 * A copy is cut into chunks of HC_CHUNK bytes along the C-order walk of its
 * elements.  Host to device, a chunk is packed (memcpy loops; the host side
 * may be strided) into a pinned buffer and a DMA is enqueued from it; device
 * to host, a DMA into a pinned buffer is enqueued and, once its event has
 * fired, the chunk is unpacked into the host array.  Where the device side is
 * strided too, the DMA goes through a dense temporary buffer of the device's
 * pool and the strided copy kernel moves it into place (or out of it).
 *
 * Large copies are shared among host threads (the caller plus a pool of
 * workers, one a core up to HC_MAXPART), each with two pinned buffers so
 * that its packing overlaps its DMAs: one thread packs at 5-10 GB/s, a PCIe 5 link
 * takes about 50, so several pack at once to keep the link busy.  Each
 * chunk's DMA goes on the caller's stream, so the copy stays ordered after
 * the work enqueued before it and before the work enqueued after it.
 *
 * A host copy is synchronous for the host memory: it returns once the host
 * memory is no longer needed (packed, or unpacked), which is more than the
 * contract asks.  Host-to-device DMAs may still be running from the staging
 * buffers; a buffer's event is waited for before the buffer is used again.
 * Small copies (one chunk of at most HC_SMALL bytes) run on the caller's
 * thread through a ring of small buffers, so that a small upload need not
 * wait for an earlier upload still queued behind a long kernel.
 *
 * Device to host into a fresh array, the host's first touch of each page
 * (the kernel zeroing it) happens inside the unpack, after the DMA was
 * waited for; with DGARRAY_D2H_TOUCH=1 each participant touches a chunk's
 * pages right after enqueueing its DMA (d2h_touch) instead.  The arrays the
 * binding reads into come from kept blocks where it can (src/py/hostmem.c),
 * which have no first touch left.
 *
 * Where both sides are dense and the host side is page-locked (cudaHostAlloc'd
 * or registered, as hostmem.c registers a block read into again through
 * dg_cuda_host_pin), the copy is one DMA straight between them, waited for:
 * no staging, no host threads (1 GiB from an H200: 19.4 ms into pinned
 * memory against 22-24 ms through staging into memory touched before,
 * benchmarks/results/2026-11-25-nvidia-h200-gpu-speed.md). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

#define HC_CHUNK ((size_t)4 << 20)   /* bytes per chunk of a large copy */
#define HC_SMALL ((size_t)256 << 10) /* bytes of each small buffer */
#define HC_NSMALL 8                  /* small buffers */
#define HC_MAXPART 16                /* threads sharing one large copy, at most */
#define HC_PAGE 4096                 /* bytes of the host's smallest page */

/* A pinned staging buffer and the event of its last DMA. */
typedef struct hc_slot {
    char *buf;        /* pinned (portable), cap bytes, or NULL until first use */
    size_t cap;
    cudaEvent_t *ev;  /* one per device, created at first use there */
    int ev_dev;       /* device whose event marks a DMA not yet waited for, or -1 */
} hc_slot;

/* What one participant (the caller or a worker) owns. */
typedef struct hc_ctx {
    hc_slot slot[2];
} hc_ctx;

/* One copy being run. */
typedef struct hc_job {
    cu_be *b;
    int dev;
    cudaStream_t s;
    int h2d;
    int ndim, isz;
    int64_t shape[DG_MAXDIM];
    int64_t hst[DG_MAXDIM];            /* host-side strides */
    int64_t gst[2][DG_MAXDIM];         /* device side: [0] its strides, [1] dense */
    char *host;                        /* host-side base */
    char *gdev;                        /* device-side base */
    int host_dense, dev_dense;
    int64_t chunk;                     /* elements per chunk */
    int64_t nchunks, n;
    char *temp;                        /* dense device buffer, 2 chunks per participant */
    int small;                         /* runs in one small slot */
    int touch;                         /* d2h: fault the destination in beside the DMAs */
    atomic_llong next;                 /* next chunk to take */
    atomic_int failed;
    pthread_mutex_t mu;                /* guards err / st */
    dg_error err;
    dg_status st;
} hc_job;

struct cu_hc;

/* A worker thread's argument: its engine and participant number (>= 1). */
typedef struct hc_warg {
    struct cu_hc *hc;
    int w;
} hc_warg;

typedef struct cu_hc {
    cu_be *b;
    int npart;                 /* participants of a large copy: caller + workers */
    hc_ctx ctx[HC_MAXPART];    /* ctx[0]: the caller's */
    hc_slot small[HC_NSMALL];
    int small_next;
    pthread_t th[HC_MAXPART];
    hc_warg warg[HC_MAXPART];
    int nthreads;              /* workers started: participants 1..nthreads */
    int threads_tried;
    pthread_mutex_t mu;
    pthread_cond_t cv_go, cv_done;
    hc_job *job;               /* [mu] */
    uint64_t gen;              /* [mu] bumped for each job */
    int nw;                    /* [mu] participants of the current job */
    int busy;                  /* [mu] workers still in the current job */
    int stop;                  /* [mu] */
} cu_hc;

/* ---- host side: packing and unpacking ----------------------------------- */

/* Copies the elements [f0, f0 + cnt) of the C-order walk over shape between
 * the strided host array at `base` (byte strides hs) and the dense buffer
 * buf: pack (to_buf) or unpack. */
static void host_walk(char *base, const int64_t *shape, const int64_t *hs, int ndim, int isz,
                      int64_t f0, int64_t cnt, char *buf, int to_buf)
{
    int64_t c[DG_MAXDIM], r = f0, inner = shape[ndim - 1], is = hs[ndim - 1];
    int a;

    for (a = ndim - 1; a >= 0; a--) {
        c[a] = r % shape[a];
        r /= shape[a];
    }
    while (cnt > 0) {
        int64_t len = inner - c[ndim - 1], i;
        char *h = base;
        if (len > cnt)
            len = cnt;
        for (a = 0; a < ndim; a++)
            h += c[a] * hs[a];
        if (is == isz) {
            if (to_buf)
                memcpy(buf, h, (size_t)(len * isz));
            else
                memcpy(h, buf, (size_t)(len * isz));
        } else {
            char *from = to_buf ? h : buf, *to = to_buf ? buf : h;
            int64_t fs = to_buf ? is : isz, ts = to_buf ? isz : is;
            switch (isz) {
#define HC_CP(N)                                                     \
    case N:                                                          \
        for (i = 0; i < len; i++)                                    \
            memcpy(to + i * ts, from + i * fs, N);                   \
        break;
                HC_CP(1)
                HC_CP(2)
                HC_CP(4)
                HC_CP(8)
                HC_CP(16)
#undef HC_CP
            default:
                for (i = 0; i < len; i++)
                    memcpy(to + i * ts, from + i * fs, (size_t)isz);
            }
        }
        buf += len * isz;
        cnt -= len;
        c[ndim - 1] += len;
        for (a = ndim - 1; a > 0 && c[a] >= shape[a]; a--) {
            c[a] = 0;
            c[a - 1]++;
        }
    }
}

/* ---- slots -------------------------------------------------------------------- */

static void job_fail(hc_job *j, dg_status st, const dg_error *e)
{
    pthread_mutex_lock(&j->mu);
    if (j->st == DG_OK) {
        j->st = st;
        j->err = *e;
    }
    pthread_mutex_unlock(&j->mu);
    atomic_store(&j->failed, 1);
}

/* Waits until the slot's last DMA is done. */
static dg_status slot_wait(hc_slot *sl, dg_error *err)
{
    cudaError_t ce;
    int d = sl->ev_dev;
    if (d < 0)
        return DG_OK;
    sl->ev_dev = -1;
    ce = cudaEventSynchronize(sl->ev[d]);
    if (ce != cudaSuccess)
        return cu_fail(err, ce, d, 0, "cudaEventSynchronize (a host copy)");
    return DG_OK;
}

/* Gives the slot `cap` pinned bytes (once) and an event on dev. */
static dg_status slot_ready(hc_slot *sl, size_t cap, int dev, dg_error *err)
{
    if (sl->buf == NULL) {
        void *p = NULL;
        cudaError_t ce = cudaHostAlloc(&p, cap, cudaHostAllocPortable);
        if (ce != cudaSuccess) {
            (void)cudaGetLastError();
            return dg_error_set(err, DG_ERR_NOMEM, dev,
                                "could not allocate %zu bytes of pinned host memory for a "
                                "host copy: %s", cap, cudaGetErrorString(ce));
        }
        sl->buf = (char *)p;
        sl->cap = cap;
    }
    if (sl->ev[dev] == NULL)
        CU_CHECK(cudaEventCreateWithFlags(&sl->ev[dev], cudaEventDisableTiming), err, dev,
                 "cudaEventCreateWithFlags");
    return DG_OK;
}

/* Marks the slot busy until the work enqueued so far on j->s is done. */
static dg_status slot_record(hc_job *j, hc_slot *sl, dg_error *err)
{
    CU_CHECK(cudaEventRecord(sl->ev[j->dev], j->s), err, j->dev, "cudaEventRecord");
    sl->ev_dev = j->dev;
    return DG_OK;
}

/* ---- chunks --------------------------------------------------------------------- */

/* Elements and first element of chunk c. */
static void chunk_range(const hc_job *j, int64_t c, int64_t *f0, int64_t *cnt)
{
    *f0 = c * j->chunk;
    *cnt = j->n - *f0 < j->chunk ? j->n - *f0 : j->chunk;
}

/* Host to device: pack chunk c into sl, DMA it to its place (through temp
 * region `region` if the device side is strided). */
static dg_status h2d_chunk(hc_job *j, hc_slot *sl, int64_t c, int region, dg_error *err)
{
    int64_t f0, cnt;
    size_t bytes;

    chunk_range(j, c, &f0, &cnt);
    bytes = (size_t)(cnt * j->isz);
    DG_CHECK(slot_wait(sl, err));
    if (j->host_dense)
        memcpy(sl->buf, j->host + f0 * j->isz, bytes);
    else
        host_walk(j->host, j->shape, j->hst, j->ndim, j->isz, f0, cnt, sl->buf, 1);
    if (j->dev_dense) {
        CU_CHECK(cudaMemcpyAsync(j->gdev + f0 * j->isz, sl->buf, bytes, cudaMemcpyHostToDevice,
                                 j->s), err, j->dev, "cudaMemcpyAsync (host to device)");
    } else {
        char *t = j->temp + (size_t)region * (size_t)j->chunk * (size_t)j->isz;
        int64_t st[2][DG_MAXDIM];
        int a;
        CU_CHECK(cudaMemcpyAsync(t, sl->buf, bytes, cudaMemcpyHostToDevice, j->s), err, j->dev,
                 "cudaMemcpyAsync (host to device)");
        for (a = 0; a < j->ndim; a++) {
            st[0][a] = j->gst[1][a];
            st[1][a] = j->gst[0][a];
        }
        /* the dense side's element f is at t + (f - f0) * isz */
        DG_CHECK(cu_copy_kernel(j->b, j->dev, j->s, j->ndim, j->shape, st, j->isz,
                                (const char *)((uintptr_t)t - (uintptr_t)(f0 * j->isz)), j->gdev,
                                f0, cnt, err));
    }
    return slot_record(j, sl, err);
}

/* Device to host, first half: enqueue chunk c's DMA into sl. */
static dg_status d2h_start(hc_job *j, hc_slot *sl, int64_t c, int region, dg_error *err)
{
    int64_t f0, cnt;
    size_t bytes;

    chunk_range(j, c, &f0, &cnt);
    bytes = (size_t)(cnt * j->isz);
    DG_CHECK(slot_wait(sl, err));
    if (j->dev_dense) {
        CU_CHECK(cudaMemcpyAsync(sl->buf, j->gdev + f0 * j->isz, bytes, cudaMemcpyDeviceToHost,
                                 j->s), err, j->dev, "cudaMemcpyAsync (device to host)");
    } else {
        char *t = j->temp + (size_t)region * (size_t)j->chunk * (size_t)j->isz;
        DG_CHECK(cu_copy_kernel(j->b, j->dev, j->s, j->ndim, j->shape, j->gst, j->isz, j->gdev,
                                (char *)((uintptr_t)t - (uintptr_t)(f0 * j->isz)), f0, cnt, err));
        CU_CHECK(cudaMemcpyAsync(sl->buf, t, bytes, cudaMemcpyDeviceToHost, j->s), err, j->dev,
                 "cudaMemcpyAsync (device to host)");
    }
    return slot_record(j, sl, err);
}

/* Device to host, while chunk c's DMA runs: writes one byte of every page
 * of its dense host destination, so that the pages a fresh array has not
 * touched yet fault in (the kernel zeroes them) now, beside the DMAs in
 * flight, instead of inside the unpack that waits for them.  The bytes are
 * overwritten by the unpack. */
static void d2h_touch(hc_job *j, int64_t c)
{
    int64_t f0, cnt;
    char *p, *end;
    chunk_range(j, c, &f0, &cnt);
    p = j->host + f0 * j->isz;
    end = p + cnt * j->isz;
    for (p += (HC_PAGE - (uintptr_t)p % HC_PAGE) % HC_PAGE; p < end; p += HC_PAGE)
        *(volatile char *)p = 0;
}

/* Device to host, second half: wait for chunk c's DMA, unpack it. */
static dg_status d2h_finish(hc_job *j, hc_slot *sl, int64_t c, dg_error *err)
{
    int64_t f0, cnt;
    DG_CHECK(slot_wait(sl, err));
    if (atomic_load(&j->failed))
        return DG_OK;
    chunk_range(j, c, &f0, &cnt);
    if (j->host_dense)
        memcpy(j->host + f0 * j->isz, sl->buf, (size_t)(cnt * j->isz));
    else
        host_walk(j->host, j->shape, j->hst, j->ndim, j->isz, f0, cnt, sl->buf, 0);
    return DG_OK;
}

/* Runs chunks of j until none is left, with the slots s0 and s1 (s1 unused,
 * may be NULL, for a small job), as participant w, whose device temp regions
 * are 2w and 2w + 1. */
static void participate(hc_job *j, hc_slot *s0, hc_slot *s1, int w)
{
    hc_slot *slots[2];
    dg_error err = DG_ERROR_INIT;
    dg_status st = DG_OK;
    int64_t pend[2] = {-1, -1};
    int s = 0, k;

    slots[0] = s0;
    slots[1] = s1;
    st = cu_set_device(j->b, j->dev, &err);
    for (k = 0; k < 2 && st == DG_OK && !j->small; k++)
        st = slot_ready(slots[k], HC_CHUNK, j->dev, &err);
    while (st == DG_OK) {
        int64_t c;
        if (atomic_load(&j->failed))
            break;
        c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nchunks)
            break;
        if (pend[s] >= 0) {
            st = d2h_finish(j, slots[s], pend[s], &err);
            pend[s] = -1;
            if (st != DG_OK)
                break;
        }
        if (j->h2d) {
            st = h2d_chunk(j, slots[s], c, 2 * w + s, &err);
        } else {
            st = d2h_start(j, slots[s], c, 2 * w + s, &err);
            if (st == DG_OK) {
                pend[s] = c;
                if (j->touch)
                    d2h_touch(j, c);
            }
        }
        s ^= 1;
    }
    if (st != DG_OK)
        job_fail(j, st, &err);
    /* the other slot first: it holds the older chunk */
    for (k = 0; k < 2; k++) {
        int q = s ^ k;
        if (pend[q] >= 0) {
            dg_error e2 = DG_ERROR_INIT;
            st = d2h_finish(j, slots[q], pend[q], &e2);
            if (st != DG_OK)
                job_fail(j, st, &e2);
        }
    }
}

/* ---- the engine ------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    hc_warg *wa = (hc_warg *)arg;
    cu_hc *hc = wa->hc;
    int w = wa->w;
    uint64_t seen = 0;

    pthread_mutex_lock(&hc->mu);
    for (;;) {
        hc_job *j;
        while (!hc->stop && hc->gen == seen)
            pthread_cond_wait(&hc->cv_go, &hc->mu);
        if (hc->stop)
            break;
        seen = hc->gen;
        j = hc->job;
        if (j == NULL || w >= hc->nw)
            continue;
        pthread_mutex_unlock(&hc->mu);
        participate(j, &hc->ctx[w].slot[0], &hc->ctx[w].slot[1], w);
        pthread_mutex_lock(&hc->mu);
        if (--hc->busy == 0)
            pthread_cond_broadcast(&hc->cv_done);
    }
    pthread_mutex_unlock(&hc->mu);
    return NULL;
}

/* Whether a large copy to dense host memory faults its destination in
 * while the DMAs run (d2h_touch): only with DGARRAY_D2H_TOUCH=1.  On an H200
 * host (1 GiB into fresh memory, benchmarks/hostcopy_ab.py, two sessions) it
 * helped once and hurt once with 8 threads (54.8 against 63.1 ms, 69.4
 * against 52.8) and cost 2-5 ms with 16. */
static int hc_touch_wanted(void)
{
    const char *env = getenv("DGARRAY_D2H_TOUCH");
    return env != NULL && strcmp(env, "1") == 0;
}

/* Threads sharing a large copy: one a core, at most HC_MAXPART;
 * DGARRAY_COPY_THREADS overrides.  16 against 8 on a 16-core H200 host,
 * 1 GiB to the host: 46.5-48.4 against 52.8-63.1 ms into fresh memory,
 * 22.2 against 23.9 into memory touched before; to the GPU the same within
 * 0.8 ms (benchmarks/hostcopy_ab.py). */
static int hc_participants(void)
{
    const char *env = getenv("DGARRAY_COPY_THREADS");
    long n;
    if (env != NULL && *env) {
        n = strtol(env, NULL, 10);
    } else {
        n = sysconf(_SC_NPROCESSORS_ONLN);
    }
    if (n < 1)
        n = 1;
    if (n > HC_MAXPART)
        n = HC_MAXPART;
    return (int)n;
}

static void slot_free(cu_be *b, hc_slot *sl)
{
    int d;
    if (sl->ev_dev >= 0 && cudaEventSynchronize(sl->ev[sl->ev_dev]) != cudaSuccess)
        (void)cudaGetLastError();
    sl->ev_dev = -1;
    if (sl->buf != NULL && cudaFreeHost(sl->buf) != cudaSuccess)
        (void)cudaGetLastError();
    sl->buf = NULL;
    if (sl->ev != NULL) {
        for (d = 0; d < b->ndev; d++)
            if (sl->ev[d] != NULL && cudaEventDestroy(sl->ev[d]) != cudaSuccess)
                (void)cudaGetLastError();
        free(sl->ev);
        sl->ev = NULL;
    }
}

void cu_hc_destroy(cu_be *b)
{
    cu_hc *hc = b->hc;
    int i;
    if (hc == NULL)
        return;
    pthread_mutex_lock(&hc->mu);
    hc->stop = 1;
    pthread_cond_broadcast(&hc->cv_go);
    pthread_mutex_unlock(&hc->mu);
    for (i = 1; i <= hc->nthreads; i++)
        pthread_join(hc->th[i], NULL);
    for (i = 0; i < HC_MAXPART; i++) {
        slot_free(b, &hc->ctx[i].slot[0]);
        slot_free(b, &hc->ctx[i].slot[1]);
    }
    for (i = 0; i < HC_NSMALL; i++)
        slot_free(b, &hc->small[i]);
    pthread_mutex_destroy(&hc->mu);
    pthread_cond_destroy(&hc->cv_go);
    pthread_cond_destroy(&hc->cv_done);
    free(hc);
    b->hc = NULL;
}

/* The engine of b, made at the first host copy (threads come later, at the
 * first large copy).  Called with b->hc_mu held. */
static cu_hc *hc_get(cu_be *b, dg_error *err)
{
    cu_hc *hc;
    int i;
    if (b->hc != NULL)
        return b->hc;
    hc = (cu_hc *)calloc(1, sizeof(*hc));
    if (hc == NULL) {
        dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        return NULL;
    }
    hc->b = b;
    hc->npart = hc_participants();
    pthread_mutex_init(&hc->mu, NULL);
    pthread_cond_init(&hc->cv_go, NULL);
    pthread_cond_init(&hc->cv_done, NULL);
    b->hc = hc; /* from here on cu_hc_destroy frees what was made */
    for (i = 0; i < HC_MAXPART; i++) {
        hc->ctx[i].slot[0].ev_dev = hc->ctx[i].slot[1].ev_dev = -1;
        hc->ctx[i].slot[0].ev = (cudaEvent_t *)calloc((size_t)b->ndev, sizeof(cudaEvent_t));
        hc->ctx[i].slot[1].ev = (cudaEvent_t *)calloc((size_t)b->ndev, sizeof(cudaEvent_t));
        if (hc->ctx[i].slot[0].ev == NULL || hc->ctx[i].slot[1].ev == NULL)
            goto nomem;
    }
    for (i = 0; i < HC_NSMALL; i++) {
        hc->small[i].ev_dev = -1;
        hc->small[i].ev = (cudaEvent_t *)calloc((size_t)b->ndev, sizeof(cudaEvent_t));
        if (hc->small[i].ev == NULL)
            goto nomem;
    }
    return hc;
nomem:
    cu_hc_destroy(b);
    dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    return NULL;
}

/* Starts the workers once; where a thread cannot start, large copies use
 * fewer participants. */
static void hc_start_workers(cu_hc *hc)
{
    int i;
    if (hc->threads_tried)
        return;
    hc->threads_tried = 1;
    for (i = 1; i < hc->npart; i++) {
        hc->warg[i].hc = hc;
        hc->warg[i].w = i;
        if (pthread_create(&hc->th[i], NULL, worker_main, &hc->warg[i]) != 0)
            break;
        hc->nthreads = i;
    }
    hc->npart = hc->nthreads + 1;
}

/* A small slot whose last DMA is done, else the next one in turn. */
static hc_slot *small_pick(cu_hc *hc)
{
    int i, k = hc->small_next;
    for (i = 0; i < HC_NSMALL; i++) {
        hc_slot *sl = &hc->small[(hc->small_next + i) % HC_NSMALL];
        if (sl->ev_dev < 0 || cudaEventQuery(sl->ev[sl->ev_dev]) == cudaSuccess) {
            k = (hc->small_next + i) % HC_NSMALL;
            break;
        }
    }
    hc->small_next = (k + 1) % HC_NSMALL;
    return &hc->small[k];
}

/* ---- page-locked host memory ------------------------------------------------- */

/* Whether the n bytes at p are page-locked host memory: both ends are (a
 * block is registered whole; memory that is not still copies correctly, only
 * slower). */
static int hc_pinned(const char *p, size_t n)
{
    struct cudaPointerAttributes at;
    int k;
    for (k = 0; k < 2; k++) {
        if (cudaPointerGetAttributes(&at, k ? p + n - 1 : p) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        if (at.type != cudaMemoryTypeHost)
            return 0;
    }
    return 1;
}

/* Dense device memory to or from dense page-locked host memory on s (a
 * stream of dev): one DMA, waited for, so that the host memory is the
 * caller's again on return. */
static dg_status hc_direct(cu_be *b, int dev, cudaStream_t s, char *dst, const char *src,
                           size_t bytes, int h2d, dg_error *err)
{
    cudaEvent_t ev;
    cudaError_t ce, ce2;
    DG_CHECK(cu_set_device(b, dev, err));
    CU_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), err, dev,
             "cudaEventCreateWithFlags");
    ce = cudaMemcpyAsync(dst, src, bytes, h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                         s);
    if (ce == cudaSuccess)
        ce = cudaEventRecord(ev, s);
    if (ce == cudaSuccess)
        ce = cudaEventSynchronize(ev);
    ce2 = cudaEventDestroy(ev);
    if (ce == cudaSuccess)
        ce = ce2;
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0,
                       h2d ? "cudaMemcpyAsync (host to device, pinned)"
                           : "cudaMemcpyAsync (device to host, pinned)");
    return DG_OK;
}

int dg_cuda_host_pin(dg_backend_i *be, void *p, size_t n, int pin)
{
    cudaError_t ce;
    if (pin) {
        /* a context of a device in use (portable: every device's DMAs use it) */
        ce = cudaSetDevice(cu_of(be)->devs[0].id);
        if (ce == cudaSuccess)
            ce = cudaHostRegister(p, n, cudaHostRegisterPortable);
    } else {
        ce = cudaHostUnregister(p);
    }
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return 1;
}

dg_status cu_hc_copy(cu_be *b, int dev, int stream, int ndim, const int64_t *shape,
                     int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst, int h2d,
                     dg_error *err)
{
    cu_dev *d = &b->devs[dev];
    cu_hc *hc;
    hc_job *j;
    dg_status rc = DG_OK;
    int64_t dense = isz;
    int a, nw = 1;

    j = (hc_job *)calloc(1, sizeof(*j));
    if (j == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    j->b = b;
    j->dev = dev;
    j->s = d->st[stream].s;
    j->h2d = h2d;
    j->ndim = ndim;
    j->isz = isz;
    j->n = 1;
    for (a = ndim - 1; a >= 0; a--) {
        j->shape[a] = shape[a];
        j->hst[a] = st[h2d ? 0 : 1][a];
        j->gst[0][a] = st[h2d ? 1 : 0][a];
        j->gst[1][a] = dense;
        dense *= shape[a];
        j->n *= shape[a];
    }
    j->host = h2d ? (char *)(uintptr_t)src : dst;
    j->gdev = h2d ? dst : (char *)(uintptr_t)src;
    j->host_dense = j->n == 1 || (ndim == 1 && j->hst[0] == isz);
    j->dev_dense = j->n == 1 || (ndim == 1 && j->gst[0][0] == isz);
    j->small = (size_t)(j->n * isz) <= HC_SMALL;
    j->touch = !h2d && j->host_dense && !j->small && hc_touch_wanted();
    j->chunk = j->small ? j->n : (int64_t)(HC_CHUNK / (size_t)isz);
    if (j->chunk < 1)
        j->chunk = 1;
    j->nchunks = (j->n + j->chunk - 1) / j->chunk;
    if (!j->small && j->host_dense && j->dev_dense) {
        /* dev's context current first: the query must not start another */
        int direct = 1;
        rc = cu_set_device(b, dev, err);
        if (rc == DG_OK) {
            direct = hc_pinned(j->host, (size_t)(j->n * isz));
            if (direct)
                rc = hc_direct(b, dev, j->s, dst, src, (size_t)(j->n * isz), h2d, err);
        }
        if (direct) {
            free(j);
            return rc;
        }
        /* else pageable: through the staging buffers below */
    }
    atomic_init(&j->next, 0);
    atomic_init(&j->failed, 0);
    pthread_mutex_init(&j->mu, NULL);
    j->err.code = DG_OK;
    j->err.device = -1;

    pthread_mutex_lock(&b->hc_mu);
    hc = hc_get(b, err);
    if (hc == NULL) {
        rc = err ? err->code : DG_ERR_NOMEM;
        goto out;
    }
    rc = cu_set_device(b, dev, err);
    if (rc != DG_OK)
        goto out;
    if (!j->small) {
        hc_start_workers(hc);
        nw = hc->npart;
        if (nw > j->nchunks)
            nw = (int)j->nchunks;
    }
    if (!j->dev_dense) {
        size_t tb = (size_t)(j->small ? 1 : 2 * nw) * (size_t)j->chunk * (size_t)isz;
        void *t = NULL;
        cudaError_t ce = cudaMallocFromPoolAsync(&t, tb, d->pool, j->s);
        if (ce != cudaSuccess) {
            rc = cu_fail(err, ce, dev, tb, "cudaMallocFromPoolAsync (a host copy's buffer)");
            goto out;
        }
        j->temp = (char *)t;
    }
    if (j->small) {
        hc_slot *sl = small_pick(hc);
        dg_error e2 = DG_ERROR_INIT;
        dg_status s2 = slot_ready(sl, HC_SMALL, dev, &e2);
        if (s2 == DG_OK)
            participate(j, sl, NULL, 0);
        else
            job_fail(j, s2, &e2);
    } else {
        pthread_mutex_lock(&hc->mu);
        hc->job = j;
        hc->nw = nw;
        hc->busy = nw - 1;
        hc->gen++;
        pthread_cond_broadcast(&hc->cv_go);
        pthread_mutex_unlock(&hc->mu);
        participate(j, &hc->ctx[0].slot[0], &hc->ctx[0].slot[1], 0);
        pthread_mutex_lock(&hc->mu);
        while (hc->busy > 0)
            pthread_cond_wait(&hc->cv_done, &hc->mu);
        hc->job = NULL;
        pthread_mutex_unlock(&hc->mu);
    }
    if (j->temp != NULL) {
        cudaError_t ce = cudaSetDevice(d->id);
        if (ce == cudaSuccess)
            ce = cudaFreeAsync(j->temp, j->s);
        if (ce != cudaSuccess) {
            dg_error e2 = DG_ERROR_INIT;
            job_fail(j, cu_fail(&e2, ce, dev, 0, "cudaFreeAsync"), &e2);
        }
    }
    if (j->st != DG_OK) {
        rc = j->st;
        if (err != NULL && err->code == DG_OK)
            *err = j->err;
    }
out:
    pthread_mutex_unlock(&b->hc_mu);
    pthread_mutex_destroy(&j->mu);
    free(j);
    return rc;
}
