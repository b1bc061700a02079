/* The backend of a job of several processes ([multihost], dg_dist.c).
 *
 * Devices are numbered over the whole job, process by process: process p's
 * devices are first_of[p] .. first_of[p] + ndev_of[p] - 1.  The core runs on
 * this backend as on any other, so every process computes the same plans
 * over every device of the job; the backend runs only this process's part:
 * work on another process's device is skipped, its memory is a placeholder
 * never read, a transfer with one end here goes through the inner backend's
 * transport slot, and a host read of another process's device receives the
 * owner's bytes (a broadcast), so every process sees the same values. */
#ifndef DG_DIST_H
#define DG_DIST_H

#include "dg_backend.h"
#include "dg_comm.h"

#define DG_DIST_NAME 64 /* bytes of a device's name in the job's table */

/* What every process says about its devices, gathered (the same on every
 * process): ndev_of[comm->size], and for the job's ngdev devices their names
 * (ngdev * DG_DIST_NAME bytes), total memory, and access[i * ngdev + j] = 1
 * where device i may read device j in place (0 across processes). */
typedef struct dg_dist_info {
    const int *ndev_of;
    const char *names;
    const size_t *totals;
    const unsigned char *access;
} dg_dist_info;

/* The job's backend over `inner` (this process's devices; transferred on
 * success, when inner's join slot has run) and `comm` (borrowed: it must
 * outlive the backend).  Calls inner's join, which every process must do at
 * the same time.  New backend in *out. */
dg_status dg_dist_backend_create(dg_backend_i *inner, dg_comm_i *comm, const dg_dist_info *info,
                                 dg_backend_i **out, dg_error *err);

/* The first global device of this process and how many it has (0, ndevices
 * for a backend that is not a job's). */
void dg_dist_local_range(const dg_backend_i *be, int *first, int *n);

/* The number of processes of the job of `be` (1 for a backend that is not
 * a job's) and, in *proc_of (borrowed, lives as long as be; NULL alone),
 * the process of each of its devices. */
int dg_dist_processes(const dg_backend_i *be, const int **proc_of);

/* Sets the bytes of a piece of a host read broadcast from another process
 * (dg_dist.c; 16 MiB at start; nbytes <= 0 leaves it) and returns the
 * previous value.  Process-wide; every process of a job must set the same. */
int64_t dg_dist_read_piece(int64_t nbytes);

/* The all-reduces this process's job backends have made so far, and of
 * those the ones that went through the host (an allgather of the comm)
 * rather than device to device: what tests count. */
void dg_dist_allreduce_counts(long long *all, long long *host);

/* Host reads for this process alone (on 1) or for every process (0, the
 * default: a read of a device is a step of every process, the owner's
 * bytes broadcast).  While on, a copy from one of this process's devices to
 * the host is an ordinary copy (no other process takes part: checkpoints
 * write each process's own chunks) and one from another process's device is
 * DG_ERR_INTERNAL.  Returns the previous setting; 0 and nothing done for a
 * backend that is not a job's. */
int dg_dist_private_reads(dg_backend_i *be, int on);

#endif /* DG_DIST_H */
