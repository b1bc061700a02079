/* Dense linear algebra on the matrices each chunk holds (dg_dense_run.c):
 * the backend's dense slot run where the data lives, every chunk a batch.
 * python/dgarray/_dense.py builds dgarray.linalg on it, and the blocked
 * algorithms for matrices split across devices (panels through this, the
 * updates through dgarray's products). */
#ifndef DG_DENSE_RUN_H
#define DG_DENSE_RUN_H

#include "dg_array.h"

/* The operands of a dense call, by role (dg_dense.h says which each op
 * reads and writes). */
enum {
    DG_DR_A,    /* the matrix (its dtype is the op's) */
    DG_DR_B,    /* right-hand sides (GETRS, TRSM) */
    DG_DR_U,    /* GESVD's U, GEEV's eigenvectors */
    DG_DR_VT,   /* GESVD's VT */
    DG_DR_W,    /* tau (GEQRF, ORGQR), eigenvalues, singular values */
    DG_DR_IPIV, /* pivots (int64) */
    DG_DR_INFO, /* int32 per matrix */
    DG_DR_N
};

/* One call: the op and its parameters as in dg_dense_desc, the matrix sizes
 * in LAPACK's (column-major) terms. */
typedef struct dg_dense_call {
    int op;
    int lower, trans, right, unit, job;
    int64_t m, n, k;
} dg_dense_call;

/* Runs c on every matrix of the operands, in place: ops[role] are arrays
 * (borrowed; NULL for a role the op does not use) of REPLICA mode with the
 * same batch axes (all but their last two axes for matrices, their last
 * axis for W and IPIV, all axes for INFO).  A matrix operand's last axis is
 * LAPACK's rows, its second to last LAPACK's columns (a row-major r x c
 * array is the column-major c x r matrix).  Every chunk of A holds whole
 * matrices, densely along its last axis, and each other operand has a chunk
 * on the same device with the same batch box, also holding whole trailing
 * axes (what _dense.py makes by creating them with A's batch layout).  Each
 * chunk's matrices are one batch of the backend's dense slot on its device,
 * enqueued without a host wait; failures per matrix land in INFO.
 * DG_ERR_NOTIMPL when the backend has no dense slot; DG_ERR_VALUE for
 * operands that do not fit c. */
dg_status dg_array_dense(const dg_dense_call *c, dg_array *const ops[DG_DR_N], dg_error *err);

#endif /* DG_DENSE_RUN_H */
