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
 * both processes. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "cuda_internal.h"

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
    if (b->jcomms != NULL)
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
    b->jcomms = (struct ncclComm **)jc;
    b->jfirst = first_gdev;
    return DG_OK;
}

dg_status cu_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err)
{
    cu_be *b = cu_of(be);
    unsigned char *used;
    ncclResult_t r = ncclSuccess, r2;
    int i, bad = -1, d;
    if (b->jcomms == NULL)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a transfer between processes before join");
    for (i = 0; i < n; i++)
        if (x[i].dev < 0 || x[i].dev >= b->ndev)
            return dg_error_set(err, DG_ERR_INTERNAL, x[i].dev, "a transfer on GPU %d",
                                x[i].dev);
    used = (unsigned char *)calloc((size_t)b->ndev, 1);
    if (!used)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
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
    for (d = 0; d < b->ndev; d++)
        if (used[d])
            cu_bump(b, d, DG_STREAM_TRANSFER);
    free(used);
    if (r != ncclSuccess)
        return job_fail(err, r, bad, x[0].send ? "ncclSend" : "ncclRecv");
    if (r2 != ncclSuccess)
        return job_fail(err, r2, x[0].dev, "ncclGroupEnd (a transfer between processes)");
    return DG_OK;
}

void cu_job_destroy(cu_be *b)
{
    int i;
    if (b->jcomms == NULL)
        return;
    for (i = 0; i < b->ndev; i++)
        if (b->jcomms[i] != NULL && ncclCommAbort((ncclComm_t)b->jcomms[i]) != ncclSuccess)
            (void)cudaGetLastError();
    free(b->jcomms);
    b->jcomms = NULL;
}
