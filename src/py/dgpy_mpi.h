/* [multihost] The job's communication over MPI (mpi.c). */
#ifndef DGPY_MPI_H
#define DGPY_MPI_H

#include <stddef.h>
#include <stdint.h>
#include "dg_comm.h"

/* A dg_comm_i over the MPI library at lib_path (the one mpi4py loaded), with
 * the handles mpi4py gives for two communicators of the job (xfer: messages,
 * coll: broadcasts) and MPI_BYTE.  Lives as long as the process.  NULL with
 * the reason in why[cap] where the library lacks what it needs. */
dg_comm_i *dgpy_mpi_comm_new(const char *lib_path, intptr_t xfer, intptr_t coll, intptr_t byte,
                             int rank, int size, double timeout_s, char *why, size_t cap);

/* How many broadcasts and how many exchanges (allgatherv) of comm c (one
 * that dgpy_mpi_comm_new made) this process has made: the collectives that
 * tests count (a host read of a replica held on every process makes none, a
 * barrier one exchange). */
void dgpy_mpi_counts(dg_comm_i *c, long long *bcasts, long long *exchanges);

#endif /* DGPY_MPI_H */
