/* The backend's dense linear algebra (dg_backend_i.dense): its descriptor.
 *
 * Included by dg_backend.h; the core (dg_dense_run.c) fills the descriptor
 * for the matrices each chunk holds, the CPU backend (cpu_dense.c: the
 * LAPACK of NumPy's wheel) and the CUDA backend (cuda_dense.c: cuSOLVER and
 * cuBLAS) run it.  LAPACK's language throughout: matrices are column-major,
 * element (i, j) of X at x + (i + j * ldx) * itemsize.  A row-major r x c
 * matrix of dgarray is the column-major c x r matrix of the same bytes (its
 * transpose): python/dgarray/_dense.py chooses the ops and triangles that
 * make the answer it wants from that. */
#ifndef DG_DENSE_H
#define DG_DENSE_H

#include <stdint.h>
#include "dg_box.h"

/* The operations (dg_dense_desc.op).  In each, every matrix of the batch is
 * independent; `info` (when not NULL) gets one int32 per matrix: 0 for
 * success, k > 0 as the op says, INT32_MIN when the backend could not get
 * its workspace (nothing was computed for that matrix).  alpha is 1. */
typedef enum dg_dense_op { /* the order is the binding's (dgarray/_dense.py) */
    DG_DENSE_POTRF, /* a: n x n Hermitian positive definite, its `lower` (or
                       upper) triangle read and overwritten by the Cholesky
                       factor (A = L L^H, or U^H U); the other triangle is
                       left as it was.  info k > 0: the leading minor of
                       order k is not positive definite */
    DG_DENSE_GETRF, /* a: m x n overwritten by L (unit diagonal, below) and U
                       of P A = L U; ipiv: min(m, n) 1-based row numbers
                       (row i was swapped with ipiv[i]).  info k > 0: U(k, k)
                       is exactly zero (the factors are still complete) */
    DG_DENSE_GETRS, /* a, ipiv: GETRF's factors of an n x n matrix; b: n x k
                       overwritten by op(A)^-1 b (trans) */
    DG_DENSE_TRSM,  /* a: triangular (lower, unit), m x m (left) or n x n
                       (right); b: m x n overwritten by op(A)^-1 b (left) or
                       b op(A)^-1 (right) */
    DG_DENSE_GEQRF, /* a: m x n overwritten by R (on and above the diagonal)
                       and the Householder reflectors of Q (below); w: the
                       min(m, n) scalars tau, in a's dtype */
    DG_DENSE_ORGQR, /* a: m x n (m >= n >= k) whose first k columns hold
                       GEQRF's reflectors, w their k tau: a overwritten by
                       the first n columns of Q */
    DG_DENSE_SYEVD, /* a: n x n Hermitian, its `lower` (or upper) triangle
                       read; w: the n eigenvalues in ascending order (the
                       real dtype of a's); job 1: a overwritten by the
                       orthonormal eigenvectors (column j for w[j]), job 0: a
                       destroyed.  info k > 0: did not converge */
    DG_DENSE_GESVD, /* a: m x n, destroyed; w: the min(m, n) singular values
                       in descending order (real dtype); job 0: values only,
                       1: u m x min(m, n) and vt min(m, n) x n too, 2: u m x m
                       and vt n x n (A = U S VT).  info k > 0: did not
                       converge */
    DG_DENSE_TRIZERO, /* a: m x n: the elements (i, j) with j - i > k (lower:
                         what is left is on and below diagonal k) or j - i < k
                         (!lower: on and above it) set to zero (k may be
                         negative).  info (optional; then the chunks hold
                         whole matrices): 1 if an element set to zero was a
                         NaN or an infinity, else 0 (what a Cholesky factor's
                         caller learns of the triangle LAPACK did not read) */
    DG_DENSE_GEEV,  /* a: n x n (general), destroyed; w: its n eigenvalues in
                       the complex dtype of a's precision, unordered (of a
                       real a: a complex conjugate pair consecutive, the one
                       with positive imaginary part first); job 1: u n x n
                       in a's dtype, the right eigenvectors, each of
                       Euclidean norm 1 with its largest component real:
                       column j for w[j], but of a real a, whose columns are
                       real, a pair's w[j], w[j + 1] have columns j (the
                       real part) and j + 1 (the imaginary part) of w[j]'s
                       vector, w[j + 1]'s its conjugate (LAPACK's geev with
                       jobvl 'N'); job 0: eigenvalues only.  info k > 0: the
                       QR algorithm did not converge (only w[k..n) were
                       found) */
    DG_DENSE_NOPS
} dg_dense_op;

/* One matrix operand: the matrix of batch index (i_0, i_1, ...) at
 * p + sum_d i_d * bs[d] (bytes), leading dimension ld (elements, >= its
 * rows, >= 1). */
typedef struct dg_dense_mat {
    char *p;
    int64_t ld;
    int64_t bs[DG_MAXDIM];
} dg_dense_mat;

/* A batch of one dense op on one device, all data there, in one dtype of
 * float32, float64, complex64, complex128.  The batch is every index over
 * batch[0..nbatch) (nbatch 0: one matrix); m, n, k as the op says.  The
 * matrices are never empty: the core answers those itself, info 0 for each
 * (dg_dense_run.c), so the sizes that make a matrix (POTRF, SYEVD and GEEV's n,
 * GETRS's n and k, every other op's m and n) are >= 1; vectors (w, ipiv) and info
 * are dense within a matrix, at their own batch strides (bytes). */
typedef struct dg_dense_desc {
    int op;
    int dtype;
    int lower; /* POTRF, SYEVD, TRSM: 1 the lower triangle, 0 the upper */
    int trans; /* GETRS, TRSM: op(A) is 0: A, 1: A^T, 2: A^H */
    int right; /* TRSM: 1: b op(A)^-1 */
    int unit;  /* TRSM: A's diagonal taken as ones */
    int job;   /* SYEVD, GESVD, GEEV: see the ops */
    int nbatch;
    int64_t batch[DG_MAXDIM];
    int64_t m, n, k; /* TRIZERO: k is the diagonal's offset, any sign */
    dg_dense_mat a, b, u, vt; /* u: GESVD's U, GEEV's eigenvectors */
    char *w;
    int64_t w_bs[DG_MAXDIM];
    int64_t *ipiv;
    int64_t ipiv_bs[DG_MAXDIM];
    int32_t *info;
    int64_t info_bs[DG_MAXDIM];
} dg_dense_desc;

/* Steps idx (d->nbatch indices) to the next batch index of d in C order;
 * 0 after the last.  The backends walk a batch with it. */
static inline int dg_dense_next_index(const dg_dense_desc *d, int64_t *idx)
{
    int ax;
    for (ax = d->nbatch - 1; ax >= 0; ax--) {
        if (++idx[ax] < d->batch[ax])
            return 1;
        idx[ax] = 0;
    }
    return 0;
}

#endif /* DG_DENSE_H */
