/* The host communication of a job of several processes ([multihost]).
 *
 * A job is SPMD: every process runs the same program, so every process makes
 * the same calls into the core in the same order, computes the same plans
 * and runs its own part of them.  What the core and the backends need from
 * the launcher's library (MPI) is this table: non-blocking messages between
 * two processes (for the CPU backend's transfers) and a broadcast from one
 * process to all (for host reads of a device another process owns, and the
 * NCCL id).  The binding fills it (src/py/mpi.c, over the MPI library that
 * mpi4py loaded); the core includes no MPI header.
 *
 * Messages run on a communicator of their own, broadcasts on another, so
 * that the transfer threads of the CPU backend (messages) never meet the
 * calling thread's broadcasts.  Every wait is bounded by `timeout_s`
 * without progress: past it, or after any failure, the job is `failed` for
 * good and every later call returns DG_ERR_DEVICE at once (a process that
 * died makes the others raise dgarray.DeviceError instead of hanging). */
#ifndef DG_COMM_H
#define DG_COMM_H

#include <stddef.h>
#include "dg_status.h"

typedef struct dg_comm_i dg_comm_i;
typedef struct dg_comm_req dg_comm_req; /* one message in flight (opaque) */

struct dg_comm_i {
    int rank;         /* this process, 0..size-1 */
    int size;         /* processes in the job */
    double timeout_s; /* longest wait without progress before the job fails */
    void *impl;

    /* Starts sending (send 1) or receiving (send 0) `n` bytes at buf to or
     * from process `peer` with `tag`; *req (new) is finished by test. */
    dg_status (*start)(dg_comm_i *c, int send, void *buf, size_t n, int peer, int tag,
                       dg_comm_req **req, dg_error *err);
    /* *done = 1 once req has completed (req is then freed), else 0. */
    dg_status (*test)(dg_comm_i *c, dg_comm_req *req, int *done, dg_error *err);
    /* Gives up req (after a failure): cancelled where it can be, freed. */
    void (*drop)(dg_comm_i *c, dg_comm_req *req);
    /* n bytes at buf from process root to every process, bounded by timeout_s. */
    dg_status (*bcast)(dg_comm_i *c, void *buf, size_t n, int root, dg_error *err);
    /* Every process's bytes, gathered on every process in process order:
     * this process's n bytes at send go to recv + displs[rank] on every
     * process, and process p's counts[p] bytes to recv + displs[p] here
     * (counts[] and displs[] the same on every process), bounded by
     * timeout_s.  One exchange (MPI's allgather), not size broadcasts. */
    dg_status (*allgatherv)(dg_comm_i *c, const void *send, size_t n, void *recv,
                            const size_t *counts, const size_t *displs, dg_error *err);
    /* Marks the job failed (message kept for the next callers); returns
     * DG_ERR_DEVICE.  Thread-safe. */
    dg_status (*fail)(dg_comm_i *c, const char *why, dg_error *err);
    /* DG_OK, or DG_ERR_DEVICE with the failure's message if the job failed. */
    dg_status (*check)(dg_comm_i *c, dg_error *err);
};

/* Waits for the n requests req[] (each set to NULL once done), bounded by
 * c->timeout_s without progress; on a failure or a timeout drops the
 * others and fails the job.  nbytes: the bytes they move in all (how long
 * the wait may poll without pausing, dg_comm.c).  Used by the comm's
 * collectives and the backends' transports. */
dg_status dg_comm_wait_all(dg_comm_i *c, dg_comm_req **req, int n, size_t nbytes,
                           const char *what, dg_error *err);

#endif /* DG_COMM_H */
