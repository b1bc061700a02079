/* [multihost] The CUDA backend in a job of several processes: one NCCL
 * communicator over every GPU of every process, and transfers between
 * processes as ncclSend / ncclRecv in one group (the join and transport
 * slots of dg_backend_i).
 *
 * join: process 0 makes the NCCL id (ncclGetUniqueId: NCCL's bootstrap then
 * listens on the interface NCCL_SOCKET_IFNAME names, or the first usable
 * one, on a port the kernel picks), the job's host communication (MPI)
 * broadcasts it, and every process makes its ranks in one group:
 * ncclCommInitRank per local GPU, rank = the GPU's number in the job, so
 * that a device's job number is its NCCL rank.  The communicator lives as
 * long as the backend and is aborted by destroy, which never waits for
 * peers.  Transfers within the process keep the process's own communicator
 * (cuda_nccl.c), or peer copies, as before.
 *
 * transport: every transfer of the group is posted on the transfer stream
 * of its local GPU, inside one ncclGroupStart/End, so that a process sending
 * and receiving at once never waits for itself; NCCL pairs each pair of
 * ranks' sends and receives in posting order, which is the plan's order on
 * both processes.
 *
 * watch: a GPU whose peer process died waits in NCCL's kernel for ever, and
 * every host wait behind it with it.  So each group is bracketed, on each of
 * its GPUs' transfer streams, by two events (start: the work before it is
 * done; end: the group is), kept in a ring per GPU; the job's host waits
 * call cu_job_watch every few tens of milliseconds, which drops the finished
 * groups and, where the oldest unfinished one has been running (its start
 * seen complete) for longer than the job's timeout, or NCCL reports an
 * asynchronous error, aborts the job's communicators (ncclCommAbort ends the
 * waiting kernels) and fails: DG_ERR_DEVICE with the reason, here and for
 * every later transfer.  The clock starts when the group starts, not when it
 * is posted, so that a transfer queued behind long work is not taken for a
 * dead peer.  (A group whose connections NCCL has yet to set up can still
 * block in ncclGroupEnd if the peer died before: connections are made at the
 * first transfer between two GPUs.) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nccl.h>

#include "cuda_internal.h"

/* The groups of transfers in flight on one GPU (oldest first, a ring), and
 * their events, made at first use and kept for the next groups. */
#define CU_JWATCH_RING 64
typedef struct cu_jgroup {
    cudaEvent_t start, end;
    double seen; /* when start was first seen complete (0: not yet) */
} cu_jgroup;
typedef struct cu_jring {
    cu_jgroup g[CU_JWATCH_RING];
    int head, n;
} cu_jring;
struct cu_jwatch {
    pthread_mutex_t mu; /* the rings, dead, and the communicators' use */
    char dead[320];     /* why the job's transfers were aborted ("" while none) */
    cu_jring ring[];    /* one per local GPU */
};

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static dg_status job_fail(dg_error *err, ncclResult_t r, int dev, const char *what)
{
    dg_status st;
    (void)cudaGetLastError();
    st = dg_error_set(err, DG_ERR_DEVICE, dev, "NCCL error in %s (a job of several processes) "
                      "on device %d: %s", what, dev, ncclGetErrorString(r));
    if (err != NULL && err->code == DG_ERR_DEVICE && err->backend_code == 0)
        err->backend_code = (long)r;
    return st;
}

dg_status cu_join(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev, dg_error *err)
{
    cu_be *b = cu_of(be);
    ncclUniqueId id;
    ncclComm_t *jc;
    ncclResult_t r = ncclSuccess, r2;
    int i, bad = -1;
    if (b->jwatch != NULL)
        return dg_error_set(err, DG_ERR_VALUE, -1, "this process already joined a job");
    if (b->shared_gpu)
        return dg_error_set(err, DG_ERR_VALUE, -1, "a job of several processes needs one "
                            "device per GPU (DGARRAY_CUDA_DEVICES names a GPU twice): NCCL "
                            "allows one rank per GPU");
    memset(&id, 0, sizeof id);
    if (comm->rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess) {
        /* the others wait for the id: tell them (they fail at the broadcast) */
        comm->fail(comm, "process 0 could not make the NCCL id", NULL);
        return job_fail(err, r, -1, "ncclGetUniqueId");
    }
    DG_CHECK(comm->bcast(comm, &id, sizeof id, 0, err));
    jc = (ncclComm_t *)calloc((size_t)b->ndev, sizeof(ncclComm_t));
    if (!jc)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    r = ncclGroupStart();
    for (i = 0; i < b->ndev && r == ncclSuccess; i++) {
        if (cudaSetDevice(b->devs[i].id) != cudaSuccess) {
            r = ncclUnhandledCudaError;
            bad = i;
            break;
        }
        r = ncclCommInitRank(&jc[i], ngdev, id, first_gdev + i);
        if (r != ncclSuccess)
            bad = i;
    }
    r2 = ncclGroupEnd();
    if (r != ncclSuccess || r2 != ncclSuccess) {
        for (i = 0; i < b->ndev; i++)
            if (jc[i] != NULL)
                (void)ncclCommAbort(jc[i]);
        free(jc);
        comm->fail(comm, "a process could not make its NCCL ranks", NULL);
        return job_fail(err, r != ncclSuccess ? r : r2, bad, "ncclCommInitRank");
    }
    b->jwatch = (struct cu_jwatch *)calloc(1, sizeof(struct cu_jwatch) +
                                           (size_t)b->ndev * sizeof(cu_jring));
    if (!b->jwatch || pthread_mutex_init(&b->jwatch->mu, NULL) != 0) {
        for (i = 0; i < b->ndev; i++)
            (void)ncclCommAbort(jc[i]);
        free(jc);
        free(b->jwatch);
        b->jwatch = NULL;
        comm->fail(comm, "a process ran out of host memory joining the job", NULL);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    b->jcomms = (struct ncclComm **)jc;
    b->jfirst = first_gdev;
    return DG_OK;
}

/* The events of the next group on local GPU d (made at first use), or NULL
 * where the ring is full (the group then goes unwatched: the oldest, which
 * a dead peer would hold, still is).  Called with jw->mu held. */
static cu_jgroup *ring_next(cu_be *b, int d)
{
    cu_jring *r = &b->jwatch->ring[d];
    cu_jgroup *g;
    if (r->n == CU_JWATCH_RING)
        return NULL;
    g = &r->g[(r->head + r->n) % CU_JWATCH_RING];
    if (!g->start && cudaEventCreateWithFlags(&g->start, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        g->start = NULL;
        return NULL;
    }
    if (!g->end && cudaEventCreateWithFlags(&g->end, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        g->end = NULL;
        return NULL;
    }
    return g;
}

static dg_status cu_transport_locked(cu_be *b, const dg_pxfer *x, int n, dg_error *err);

dg_status cu_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_status st;
    if (b->jwatch == NULL)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a transfer between processes before join");
    pthread_mutex_lock(&b->jwatch->mu);
    st = b->jwatch->dead[0] || b->jcomms == NULL
             ? dg_error_set(err, DG_ERR_DEVICE, -1, "no transfer between processes: %s",
                            b->jwatch->dead[0] ? b->jwatch->dead : "the job's NCCL communicator "
                                                                   "is gone")
             : DG_OK;
    if (st == DG_OK)
        st = cu_transport_locked(b, x, n, err);
    pthread_mutex_unlock(&b->jwatch->mu);
    return st;
}

/* cu_transport with the job's lock held. */
static dg_status cu_transport_locked(cu_be *b, const dg_pxfer *x, int n, dg_error *err)
{
    unsigned char *used;
    cu_jgroup **watched;
    ncclResult_t r = ncclSuccess, r2;
    int i, bad = -1, d;
    for (i = 0; i < n; i++)
        if (x[i].dev < 0 || x[i].dev >= b->ndev)
            return dg_error_set(err, DG_ERR_INTERNAL, x[i].dev, "a transfer on GPU %d",
                                x[i].dev);
    used = (unsigned char *)calloc((size_t)b->ndev, 1);
    watched = (cu_jgroup **)calloc((size_t)b->ndev, sizeof(cu_jgroup *));
    if (!used || !watched) {
        free(used);
        free(watched);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    /* each GPU's start event, before the group on its transfer stream */
    for (i = 0; i < n; i++) {
        d = x[i].dev;
        if (x[i].nbytes == 0 || used[d])
            continue;
        used[d] = 1;
        if (cudaSetDevice(b->devs[d].id) == cudaSuccess && (watched[d] = ring_next(b, d)) &&
            cudaEventRecord(watched[d]->start, b->devs[d].st[DG_STREAM_TRANSFER].s) !=
                cudaSuccess) {
            (void)cudaGetLastError();
            watched[d] = NULL;
        }
    }
    memset(used, 0, (size_t)b->ndev);
    r = ncclGroupStart();
    for (i = 0; i < n && r == ncclSuccess; i++) {
        const dg_pxfer *t = &x[i];
        ncclComm_t c = (ncclComm_t)b->jcomms[t->dev];
        cudaStream_t s = b->devs[t->dev].st[DG_STREAM_TRANSFER].s;
        if (t->nbytes == 0)
            continue;
        r = t->send ? ncclSend(t->ptr, t->nbytes, ncclUint8, t->dst_gdev, c, s)
                    : ncclRecv(t->ptr, t->nbytes, ncclUint8, t->src_gdev, c, s);
        if (r != ncclSuccess)
            bad = t->dev;
        used[t->dev] = 1;
    }
    r2 = ncclGroupEnd(); /* closed whatever happened inside */
    for (d = 0; d < b->ndev; d++) {
        if (!used[d])
            continue;
        cu_bump(b, d, DG_STREAM_TRANSFER);
        /* the end event after it: the group is watched from here */
        if (watched[d] && cudaSetDevice(b->devs[d].id) == cudaSuccess &&
            cudaEventRecord(watched[d]->end, b->devs[d].st[DG_STREAM_TRANSFER].s) == cudaSuccess) {
            watched[d]->seen = 0;
            b->jwatch->ring[d].n++;
        } else {
            (void)cudaGetLastError();
        }
    }
    free(used);
    free(watched);
    if (r != ncclSuccess)
        return job_fail(err, r, bad, x[0].send ? "ncclSend" : "ncclRecv");
    if (r2 != ncclSuccess)
        return job_fail(err, r2, x[0].dev, "ncclGroupEnd (a transfer between processes)");
    return DG_OK;
}

/* Aborts the job's communicators (NCCL's kernels waiting on them end) and
 * keeps why.  Called with jw->mu held. */
static void job_abort(cu_be *b, const char *why)
{
    int i;
    if (!b->jwatch->dead[0])
        snprintf(b->jwatch->dead, sizeof b->jwatch->dead, "%s", why);
    if (b->jcomms == NULL)
        return;
    for (i = 0; i < b->ndev; i++)
        if (b->jcomms[i] != NULL && ncclCommAbort((ncclComm_t)b->jcomms[i]) != ncclSuccess)
            (void)cudaGetLastError();
    free(b->jcomms);
    b->jcomms = NULL;
}

/* The finished groups of GPU d dropped; "" or why the job must stop in
 * why[].  Called with jw->mu held. */
static void watch_gpu(cu_be *b, int d, double now, double timeout_s, char *why, size_t cap)
{
    cu_jring *r = &b->jwatch->ring[d];
    ncclResult_t ar = ncclSuccess;
    cudaError_t ce;
    if (b->jcomms[d] != NULL && ncclCommGetAsyncError((ncclComm_t)b->jcomms[d], &ar) ==
                                    ncclSuccess && ar != ncclSuccess && ar != ncclInProgress) {
        snprintf(why, cap, "NCCL reported an error on GPU %d of the job: %s", d,
                 ncclGetErrorString(ar));
        return;
    }
    while (r->n > 0) {
        cu_jgroup *g = &r->g[r->head];
        ce = cudaEventQuery(g->end);
        if (ce == cudaErrorNotReady)
            break;
        if (ce != cudaSuccess) {
            snprintf(why, cap, "a transfer between processes on GPU %d failed: %s", d,
                     cudaGetErrorString(ce));
            (void)cudaGetLastError();
            return;
        }
        r->head = (r->head + 1) % CU_JWATCH_RING;
        r->n--;
    }
    (void)cudaGetLastError(); /* "not ready" is no error */
    if (r->n > 0) {
        cu_jgroup *g = &r->g[r->head];
        if (g->seen == 0) {
            if (cudaEventQuery(g->start) == cudaSuccess)
                g->seen = now;
            (void)cudaGetLastError();
        } else if (now - g->seen > timeout_s) {
            snprintf(why, cap, "a transfer between processes on GPU %d has waited %.0f s for "
                     "another process of the job (it died or stopped: "
                     "DGARRAY_DISTRIBUTED_TIMEOUT sets the limit); the job's NCCL "
                     "communicator was aborted", d, now - g->seen);
        }
    }
}

dg_status cu_job_watch(dg_backend_i *be, double timeout_s, dg_error *err)
{
    cu_be *b = cu_of(be);
    char why[320] = "";
    const double now = mono_s();
    int d;
    dg_status st = DG_OK;
    if (b->jwatch == NULL)
        return DG_OK;
    pthread_mutex_lock(&b->jwatch->mu);
    for (d = 0; d < b->ndev && !b->jwatch->dead[0] && b->jcomms != NULL && !why[0]; d++)
        if (cudaSetDevice(b->devs[d].id) == cudaSuccess)
            watch_gpu(b, d, now, timeout_s, why, sizeof why);
        else
            (void)cudaGetLastError();
    if (why[0])
        job_abort(b, why);
    if (b->jwatch->dead[0])
        st = dg_error_set(err, DG_ERR_DEVICE, -1, "%s", b->jwatch->dead);
    pthread_mutex_unlock(&b->jwatch->mu);
    return st;
}

void cu_job_destroy(cu_be *b)
{
    int d, k;
    if (b->jwatch == NULL)
        return;
    pthread_mutex_lock(&b->jwatch->mu);
    job_abort(b, "the job ended");
    pthread_mutex_unlock(&b->jwatch->mu);
    for (d = 0; d < b->ndev; d++)
        for (k = 0; k < CU_JWATCH_RING; k++) {
            cu_jgroup *g = &b->jwatch->ring[d].g[k];
            if (g->start)
                (void)cudaEventDestroy(g->start);
            if (g->end)
                (void)cudaEventDestroy(g->end);
        }
    (void)cudaGetLastError();
    pthread_mutex_destroy(&b->jwatch->mu);
    free(b->jwatch);
    b->jwatch = NULL;
}
