/* Transfers between GPUs and all-reduces through NCCL (the exchange and
 * allreduce slots of dg_backend_i).
 *
 * One single-process communicator per backend, over all of its devices
 * (ncclCommInitAll, rank i = device i), made at the first need and torn down
 * with the backend: by ncclCommAbort, which never waits for peers (every
 * stream was synchronised before, so nothing is left to abort).  An exchange
 * is one ncclGroupStart/End holding an ncclSend on the source's transfer
 * stream and an ncclRecv on the destination's for every transfer; NCCL pairs
 * the sends and receives between two ranks in the order they were posted,
 * which is the order of the list on both sides.  Errors carry NCCL's own
 * message (ncclGetErrorString and ncclGetLastError).
 *
 * Under CUDA_LAUNCH_BLOCKING=1, NCCL cannot drive several GPUs from one
 * thread (it launches their kernels one after the other, and the first
 * blocks until the others run: NVIDIA/nccl#774), so transfers then go by
 * peer copies and all-reduces by the core's loops; DGARRAY_TRANSFER=copy
 * chooses the same, =nccl (the default) NCCL.  So do logical devices that
 * share a GPU (DGARRAY_CUDA_DEVICES): NCCL allows one rank per GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "cuda_internal.h"
#include "dg_fpe.h"

/* Records NCCL's failure `r` of `what` on device dev (the first error is
 * kept). */
static dg_status nccl_fail(cu_be *b, dg_error *err, ncclResult_t r, int dev, const char *what)
{
    const char *last = NULL;
    dg_status st;
    (void)cudaGetLastError();
    if (b->comms != NULL && dev >= 0 && dev < b->ndev && b->comms[dev] != NULL)
        last = ncclGetLastError(b->comms[dev]);
    st = dg_error_set(err, DG_ERR_DEVICE, dev, "NCCL error in %s on device %d: %s%s%s", what,
                      dev, ncclGetErrorString(r), last && *last ? ": " : "",
                      last ? last : "");
    if (err != NULL && err->code == DG_ERR_DEVICE && err->backend_code == 0)
        err->backend_code = (long)r;
    return st;
}

/* The communicator of every device, made on first need.  NVLink multicast
 * (NVLS) stays off unless the environment turns it on: it can take GPUs of a
 * shared host out of service, and point-to-point work does not use it. */
static dg_status nccl_ready(cu_be *b, dg_error *err)
{
    ncclComm_t *comms;
    int *ids, i;
    ncclResult_t r;

    if (b->comms != NULL)
        return DG_OK;
    if (b->nccl_failed)
        return dg_error_set(err, DG_ERR_DEVICE, -1, "NCCL could not be set up earlier in this "
                            "process; transfers between GPUs are unavailable");
    comms = (ncclComm_t *)calloc((size_t)b->ndev, sizeof(ncclComm_t));
    ids = (int *)malloc((size_t)b->ndev * sizeof(int));
    if (!comms || !ids) {
        free(comms);
        free(ids);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    }
    for (i = 0; i < b->ndev; i++)
        ids[i] = b->devs[i].id;
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    r = ncclCommInitAll(comms, b->ndev, ids);
    free(ids);
    if (r != ncclSuccess) {
        free(comms);
        b->nccl_failed = 1;
        return nccl_fail(b, err, r, -1, "ncclCommInitAll (setting up the communicator)");
    }
    b->comms = comms;
    return DG_OK;
}

void cu_nccl_destroy(cu_be *b)
{
    int i;
    if (b->comms == NULL)
        return;
    for (i = 0; i < b->ndev; i++)
        if (b->comms[i] != NULL && ncclCommAbort(b->comms[i]) != ncclSuccess)
            (void)cudaGetLastError();
    free(b->comms);
    b->comms = NULL;
}

/* Counts one more operation on the transfer stream of every device in used[]. */
static void bump_used(cu_be *b, const unsigned char *used)
{
    int d;
    for (d = 0; d < b->ndev; d++)
        if (used[d])
            cu_bump(b, d, DG_STREAM_TRANSFER);
}

dg_status cu_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err)
{
    cu_be *b = cu_of(be);
    unsigned char *used;
    ncclResult_t r = ncclSuccess, r2;
    const char *what = "ncclSend";
    int i, bad = -1;

    for (i = 0; i < n; i++)
        if (x[i].src_dev < 0 || x[i].src_dev >= b->ndev || x[i].dst_dev < 0 ||
            x[i].dst_dev >= b->ndev || x[i].src_dev == x[i].dst_dev)
            return dg_error_set(err, DG_ERR_INTERNAL, x[i].dst_dev,
                                "a transfer from GPU %d to GPU %d", x[i].src_dev, x[i].dst_dev);
    if (n == 0)
        return DG_OK;
    if (b->xfer_copies)
        return cu_exchange_copies(b, x, n, err);
    DG_CHECK(nccl_ready(b, err));
    used = (unsigned char *)calloc((size_t)b->ndev, 1);
    if (!used)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    r = ncclGroupStart();
    for (i = 0; i < n && r == ncclSuccess; i++) {
        const int s = x[i].src_dev, d = x[i].dst_dev;
        size_t off, part = b->nccl_split ? b->nccl_split : x[i].nbytes;
        /* a large transfer as several sends of `part` bytes (posted in the
         * same order on both sides), which NCCL may spread over channels */
        for (off = 0; off < x[i].nbytes && r == ncclSuccess; off += part) {
            size_t len = x[i].nbytes - off < part ? x[i].nbytes - off : part;
            r = ncclSend((const char *)x[i].src + off, len, ncclUint8, d, b->comms[s],
                         b->devs[s].st[DG_STREAM_TRANSFER].s);
            if (r != ncclSuccess) {
                bad = s;
                break;
            }
            r = ncclRecv((char *)x[i].dst + off, len, ncclUint8, s, b->comms[d],
                         b->devs[d].st[DG_STREAM_TRANSFER].s);
            if (r != ncclSuccess) {
                what = "ncclRecv";
                bad = d;
                break;
            }
            used[s] = used[d] = 1;
        }
    }
    /* the group is closed whatever happened inside it */
    r2 = ncclGroupEnd();
    bump_used(b, used);
    free(used);
    if (r != ncclSuccess)
        return nccl_fail(b, err, r, bad, what);
    if (r2 != ncclSuccess)
        return nccl_fail(b, err, r2, x[0].src_dev, "ncclGroupEnd (a transfer between GPUs)");
    return DG_OK;
}

/* NCCL's type and op for an all-reduce of dtype with op, and the element
 * count multiplier (complex: two reals); 0 where NCCL's result would not be
 * NumPy's (16-bit integers, float16, maxima and minima of floats, whose NaN
 * handling NumPy defines, products of complex). */
static int nccl_kind(int dtype, int op, ncclDataType_t *t, ncclRedOp_t *o, int *mult)
{
    static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin};
    const char kind = dg_dtype_kind(dtype);
    const int isz = dg_dtype_size(dtype);
    if (op < 0 || op > DG_ALLRED_MIN)
        return 0;
    *o = ops[op];
    *mult = 1;
    switch (kind) {
    case 'b': /* NumPy's add / multiply of bools are or / and */
        *t = ncclUint8;
        *o = op == DG_ALLRED_SUM || op == DG_ALLRED_MAX ? ncclMax : ncclMin;
        return 1;
    case 'i':
    case 'u':
        if (isz == 1)
            *t = kind == 'i' ? ncclInt8 : ncclUint8;
        else if (isz == 4)
            *t = kind == 'i' ? ncclInt32 : ncclUint32;
        else if (isz == 8)
            *t = kind == 'i' ? ncclInt64 : ncclUint64;
        else
            return 0;
        return 1;
    case 'f':
        if (isz == 2 || op == DG_ALLRED_MAX || op == DG_ALLRED_MIN)
            return 0;
        *t = isz == 4 ? ncclFloat32 : ncclFloat64;
        return 1;
    case 'c':
        if (op != DG_ALLRED_SUM)
            return 0;
        *t = isz == 8 ? ncclFloat32 : ncclFloat64;
        *mult = 2;
        return 1;
    default:
        return 0;
    }
}

/* 1 where NCCL's fold would hide what the call's errstate watches: a sum or
 * product of floats whose overflow or invalid value is watched (NCCL notes
 * nothing; the core's fold of the partials, by the checked elementwise
 * kernels, notes them as NumPy's reduce raises them). */
static int nccl_hides_fpe(cu_be *b, const dg_allreduce_desc *d)
{
    const char k = dg_dtype_kind(d->dtype);
    const uint32_t w = cu_fpe_args(b, 0, 0).actions;
    return (d->op == DG_ALLRED_SUM || d->op == DG_ALLRED_PROD) && (k == 'f' || k == 'c') &&
           (((w >> DG_FPE_SHIFT(DG_FPE_OVER)) & 0xFu) != 0 ||
            ((w >> DG_FPE_SHIFT(DG_FPE_INVALID)) & 0xFu) != 0);
}

dg_status cu_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    ncclDataType_t t;
    ncclRedOp_t o;
    ncclResult_t r = ncclSuccess, r2;
    int mult, i, bad = -1;

    if (!b->allred_nccl || !nccl_kind(d->dtype, d->op, &t, &o, &mult) ||
        nccl_hides_fpe(b, d))
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "no NCCL all-reduce of %s with op %d",
                            dg_dtype_name(d->dtype), d->op);
    if (d->n < 1 || stream < 0 || stream >= DG_NSTREAMS)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "an all-reduce over %d GPUs", d->n);
    for (i = 0; i < d->n; i++)
        if (d->devs[i] < 0 || d->devs[i] >= b->ndev)
            return dg_error_set(err, DG_ERR_INTERNAL, d->devs[i], "an all-reduce on GPU %d",
                                d->devs[i]);
    if (d->count == 0)
        return DG_OK;
    if (d->n != b->ndev) /* the communicator spans every GPU */
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "an all-reduce over %d of %d GPUs", d->n,
                            b->ndev);
    DG_CHECK(nccl_ready(b, err));
    r = ncclGroupStart();
    for (i = 0; i < d->n && r == ncclSuccess; i++) {
        const int dev = d->devs[i];
        r = ncclAllReduce(d->src[i], d->dst[i], (size_t)d->count * (size_t)mult, t, o,
                          b->comms[dev], b->devs[dev].st[stream].s);
        if (r != ncclSuccess)
            bad = dev;
    }
    r2 = ncclGroupEnd();
    for (i = 0; i < d->n; i++)
        cu_bump(b, d->devs[i], stream);
    if (r != ncclSuccess)
        return nccl_fail(b, err, r, bad, "ncclAllReduce");
    if (r2 != ncclSuccess)
        return nccl_fail(b, err, r2, d->devs[0], "ncclGroupEnd (an all-reduce)");
    return DG_OK;
}

dg_status cu_transfer_setup(cu_be *b, dg_error *err)
{
    const char *t = getenv("DGARRAY_TRANSFER"), *lb = getenv("CUDA_LAUNCH_BLOCKING");
    int all_peers, i, j;
    if (t && *t && strcmp(t, "nccl") != 0 && strcmp(t, "copy") != 0)
        return dg_error_set(err, DG_ERR_VALUE, -1, "DGARRAY_TRANSFER must be 'nccl' or 'copy', "
                            "not '%s'", t);
    if (b->shared_gpu && t && strcmp(t, "nccl") == 0)
        return dg_error_set(err, DG_ERR_VALUE, -1, "DGARRAY_TRANSFER=nccl cannot move data "
                            "between logical devices of one GPU (DGARRAY_CUDA_DEVICES names "
                            "a GPU twice): unset it, or set it to 'copy'");
    /* Transfers between GPUs of this process are peer copies on the copy
     * engines where every pair of them has peer access (faster than NCCL on
     * every row measured, and no multiprocessors taken from the kernels
     * beside them), unless DGARRAY_TRANSFER=nccl; NCCL where some pair has
     * none, or where asked.  NCCL cannot have two ranks on one GPU (logical
     * devices copy) nor drive several GPUs from one thread under
     * CUDA_LAUNCH_BLOCKING=1.  (Across the processes of a job: the job's
     * communicator, cuda_transport.c.) */
    all_peers = 1;
    for (i = 0; i < b->ndev; i++)
        for (j = 0; j < b->ndev; j++)
            all_peers &= i == j || b->peer[i * b->ndev + j];
    b->xfer_copies = (t && strcmp(t, "copy") == 0) || (lb && strcmp(lb, "1") == 0) ||
                     b->shared_gpu || (all_peers && !(t && strcmp(t, "nccl") == 0));
    /* all-reduces of a few bytes (a full reduction's partials) stay NCCL's
     * unless copies are asked for or forced: one kernel per GPU against a
     * copy, a fold and copies back */
    b->allred_nccl = !((t && strcmp(t, "copy") == 0) || (lb && strcmp(lb, "1") == 0) ||
                       b->shared_gpu);
    t = getenv("DGARRAY_NCCL_SPLIT");
    b->nccl_split = t && *t ? (size_t)strtoull(t, NULL, 10) : 0;
    return DG_OK;
}

int cu_can_access(dg_backend_i *be, int dev, int other)
{
    cu_be *b = cu_of(be);
    if (dev < 0 || dev >= b->ndev || other < 0 || other >= b->ndev)
        return 0;
    return dev == other || b->peer[dev * b->ndev + other];
}
