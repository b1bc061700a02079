/* The CPU backend's dense linear algebra: each op of dg_dense.h is one
 * LAPACK call per matrix of the batch, through the ILP64 routines of the
 * library NumPy's wheel bundles (scipy-openblas; the binding finds them at
 * import, as it finds the gemm functions), so results are NumPy's own
 * (NumPy's linalg calls the same routines, except gesv, whose getrf + getrs
 * this is).  Workspace sizes are queried once per call and the workspace
 * malloc'ed on the worker for the whole batch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_dense.h"

typedef int64_t li; /* LAPACK's integer (ILP64) */

/* The routines' prototypes.  Every character argument is followed, after
 * the others, by its hidden length (gfortran's convention; routines written
 * in C ignore it). */
typedef void potrf_fn(const char *, const li *, void *, const li *, li *, size_t);
typedef void getrf_fn(const li *, const li *, void *, const li *, li *, li *);
typedef void getrs_fn(const char *, const li *, const li *, const void *, const li *, const li *,
                      void *, const li *, li *, size_t);
typedef void trsm_fn(const char *, const char *, const char *, const char *, const li *,
                     const li *, const void *, const void *, const li *, void *, const li *,
                     size_t, size_t, size_t, size_t);
typedef void geqrf_fn(const li *, const li *, void *, const li *, void *, void *, const li *,
                      li *);
typedef void orgqr_fn(const li *, const li *, const li *, void *, const li *, const void *, void *,
                      const li *, li *);
typedef void syevd_fn(const char *, const char *, const li *, void *, const li *, void *, void *,
                      const li *, li *, const li *, li *, size_t, size_t);
typedef void heevd_fn(const char *, const char *, const li *, void *, const li *, void *, void *,
                      const li *, void *, const li *, li *, const li *, li *, size_t, size_t);
typedef void gesdd_fn(const char *, const li *, const li *, void *, const li *, void *, void *,
                      const li *, void *, const li *, void *, const li *, li *, li *, size_t);
typedef void zgesdd_fn(const char *, const li *, const li *, void *, const li *, void *, void *,
                       const li *, void *, const li *, void *, const li *, void *, li *, li *,
                       size_t);
/* s/dgeev: wr and wi apart; c/zgeev: w, and rwork after work */
typedef void geev_fn(const char *, const char *, const li *, void *, const li *, void *, void *,
                     void *, const li *, void *, const li *, void *, const li *, li *, size_t,
                     size_t);
typedef void zgeev_fn(const char *, const char *, const li *, void *, const li *, void *, void *,
                      const li *, void *, const li *, void *, const li *, void *, li *, size_t,
                      size_t);

static dg_cpu_lapack lapack;
static int have_lapack;

void dg_cpu_dense_set_lapack(const dg_cpu_lapack *fns)
{
    int r, t, ok = fns != NULL;
    for (r = 0; ok && r < DG_LAPACK_NROUTINES; r++)
        for (t = 0; t < 4; t++)
            ok = ok && fns->fn[r][t] != NULL;
    if (ok)
        lapack = *fns;
    have_lapack = ok;
}

int dg_cpu_dense_available(void) { return have_lapack; }

/* LAPACK's type index of a dtype (s, d, c, z), or -1. */
static int type_index(int dtype)
{
    switch (dtype) {
    case DG_FLOAT32: return 0;
    case DG_FLOAT64: return 1;
    case DG_COMPLEX64: return 2;
    case DG_COMPLEX128: return 3;
    default: return -1;
    }
}

/* The real value of a workspace query's answer (first element of work, of
 * the type t's real or complex element), as a count of at least 1. */
static li work_count(const void *w, int t)
{
    double v = (t == 0 || t == 2) ? (double)*(const float *)w : *(const double *)w;
    li n = (li)v;
    return n < 1 ? 1 : n + 1;
}

/* One matrix operand's address for the batch index idx. */
static char *at(char *p, const int64_t *bs, const int64_t *idx, int nb)
{
    int d;
    for (d = 0; d < nb; d++)
        p += idx[d] * bs[d];
    return p;
}

/* Workspace of one call: nothing to free when the op needs none. */
typedef struct work {
    void *work, *rwork;
    li *iwork;
    li lwork, lrwork, liwork;
} work;

static void work_free(work *w)
{
    free(w->work);
    free(w->rwork);
    free(w->iwork);
    memset(w, 0, sizeof *w);
}

/* Sizes the workspace of d's op by a query on the first matrix (whose
 * contents LAPACK does not read then) and allocates it; 0 if out of
 * memory. */
static int work_get(const dg_dense_desc *d, int t, work *w)
{
    const size_t esz = (size_t)dg_dtype_size(d->dtype), rsz = esz / (t >= 2 ? 2 : 1);
    unsigned char q[16], rq[16];
    li iq = 0, info = 0, m = d->m, n = d->n, k = d->k, lda = d->a.ld, mn = m < n ? m : n;
    const li none = -1;
    memset(w, 0, sizeof *w);
    memset(q, 0, sizeof q);
    memset(rq, 0, sizeof rq);
    switch (d->op) {
    case DG_DENSE_GEQRF:
        ((geqrf_fn *)lapack.fn[DG_LAPACK_GEQRF][t])(&m, &n, d->a.p, &lda, d->w, q, &none, &info);
        w->lwork = work_count(q, t);
        break;
    case DG_DENSE_ORGQR:
        ((orgqr_fn *)lapack.fn[DG_LAPACK_ORGQR][t])(&m, &n, &k, d->a.p, &lda, d->w, q, &none,
                                                    &info);
        w->lwork = work_count(q, t);
        break;
    case DG_DENSE_SYEVD: {
        const char jobz = d->job ? 'V' : 'N', uplo = d->lower ? 'L' : 'U';
        if (t < 2) {
            ((syevd_fn *)lapack.fn[DG_LAPACK_SYEVD][t])(&jobz, &uplo, &n, d->a.p, &lda, d->w, q,
                                                        &none, &iq, &none, &info, 1, 1);
        } else {
            ((heevd_fn *)lapack.fn[DG_LAPACK_SYEVD][t])(&jobz, &uplo, &n, d->a.p, &lda, d->w, q,
                                                        &none, rq, &none, &iq, &none, &info,
                                                        1, 1);
            w->lrwork = work_count(rq, t - 2);
        }
        w->lwork = work_count(q, t);
        w->liwork = iq < 1 ? 1 : iq;
        break;
    }
    case DG_DENSE_GESVD: {
        const char jobz = "NSA"[d->job];
        const li mx = m > n ? m : n, ldu = d->job ? d->u.ld : 1, ldvt = d->job ? d->vt.ld : 1;
        if (t < 2) {
            ((gesdd_fn *)lapack.fn[DG_LAPACK_GESDD][t])(&jobz, &m, &n, d->a.p, &lda, d->w,
                                                        d->u.p, &ldu, d->vt.p, &ldvt, q, &none,
                                                        &iq, &info, 1);
        } else {
            li a1 = 7 * mn, a2 = 5 * mn * mn + 5 * mn, a3 = 2 * mx * mn + 2 * mn * mn + mn;
            li lr = a1 > a2 ? a1 : a2;
            ((zgesdd_fn *)lapack.fn[DG_LAPACK_GESDD][t])(&jobz, &m, &n, d->a.p, &lda, d->w,
                                                         d->u.p, &ldu, d->vt.p, &ldvt, q,
                                                         &none, rq, &iq, &info, 1);
            w->lrwork = lr > a3 ? lr : a3;
        }
        w->lwork = work_count(q, t);
        w->liwork = 8 * mn > 1 ? 8 * mn : 1;
        break;
    }
    case DG_DENSE_GEEV: {
        /* VL (never computed) and VR without vectors are not referenced:
         * rq stands in for them, as for wr and wi here */
        const char jobvl = 'N', jobvr = d->job ? 'V' : 'N';
        const li one = 1, ldvr = d->job ? d->u.ld : 1;
        void *vr = d->job ? (void *)d->u.p : (void *)rq;
        if (t < 2)
            ((geev_fn *)lapack.fn[DG_LAPACK_GEEV][t])(&jobvl, &jobvr, &n, d->a.p, &lda, rq, rq,
                                                      rq, &one, vr, &ldvr, q, &none, &info, 1,
                                                      1);
        else
            ((zgeev_fn *)lapack.fn[DG_LAPACK_GEEV][t])(&jobvl, &jobvr, &n, d->a.p, &lda, d->w,
                                                       rq, &one, vr, &ldvr, q, &none, rq,
                                                       &info, 1, 1);
        w->lwork = work_count(q, t);
        w->lrwork = 2 * n; /* wr and wi (s, d), rwork (c, z) */
        break;
    }
    default:
        return 1;
    }
    if (w->lwork)
        w->work = malloc((size_t)w->lwork * esz);
    if (w->lrwork)
        w->rwork = malloc((size_t)w->lrwork * rsz);
    if (w->liwork)
        w->iwork = (li *)malloc((size_t)w->liwork * sizeof(li));
    if ((w->lwork && !w->work) || (w->lrwork && !w->rwork) || (w->liwork && !w->iwork)) {
        work_free(w);
        return 0;
    }
    return 1;
}

/* Runs d's op on the matrix of batch index idx; LAPACK's info. */
static li run_one(const dg_dense_desc *d, int t, const int64_t *idx, work *w)
{
    const int nb = d->nbatch;
    char *a = at(d->a.p, d->a.bs, idx, nb);
    li m = d->m, n = d->n, k = d->k, lda = d->a.ld, info = 0;
    const char uplo = d->lower ? 'L' : 'U', tr = "NTC"[d->trans];
    switch (d->op) {
    case DG_DENSE_POTRF:
        ((potrf_fn *)lapack.fn[DG_LAPACK_POTRF][t])(&uplo, &n, a, &lda, &info, 1);
        break;
    case DG_DENSE_GETRF:
        ((getrf_fn *)lapack.fn[DG_LAPACK_GETRF][t])(
            &m, &n, a, &lda, (li *)at((char *)d->ipiv, d->ipiv_bs, idx, nb), &info);
        break;
    case DG_DENSE_GETRS: {
        li ldb = d->b.ld;
        ((getrs_fn *)lapack.fn[DG_LAPACK_GETRS][t])(
            &tr, &n, &k, a, &lda, (const li *)at((char *)d->ipiv, d->ipiv_bs, idx, nb),
            at(d->b.p, d->b.bs, idx, nb), &ldb, &info, 1);
        break;
    }
    case DG_DENSE_TRSM: {
        const double one[2] = {1, 0};
        const float onef[2] = {1, 0};
        const char side = d->right ? 'R' : 'L', diag = d->unit ? 'U' : 'N';
        li ldb = d->b.ld;
        ((trsm_fn *)lapack.fn[DG_LAPACK_TRSM][t])(
            &side, &uplo, &tr, &diag, &m, &n, (t == 0 || t == 2) ? (const void *)onef : one, a,
            &lda, at(d->b.p, d->b.bs, idx, nb), &ldb, 1, 1, 1, 1);
        break;
    }
    case DG_DENSE_GEQRF:
        ((geqrf_fn *)lapack.fn[DG_LAPACK_GEQRF][t])(&m, &n, a, &lda,
                                                    at(d->w, d->w_bs, idx, nb), w->work,
                                                    &w->lwork, &info);
        break;
    case DG_DENSE_ORGQR:
        ((orgqr_fn *)lapack.fn[DG_LAPACK_ORGQR][t])(&m, &n, &k, a, &lda,
                                                    at(d->w, d->w_bs, idx, nb), w->work,
                                                    &w->lwork, &info);
        break;
    case DG_DENSE_SYEVD: {
        const char jobz = d->job ? 'V' : 'N';
        char *ev = at(d->w, d->w_bs, idx, nb);
        if (t < 2)
            ((syevd_fn *)lapack.fn[DG_LAPACK_SYEVD][t])(&jobz, &uplo, &n, a, &lda, ev, w->work,
                                                        &w->lwork, w->iwork, &w->liwork, &info,
                                                        1, 1);
        else
            ((heevd_fn *)lapack.fn[DG_LAPACK_SYEVD][t])(&jobz, &uplo, &n, a, &lda, ev, w->work,
                                                        &w->lwork, w->rwork, &w->lrwork,
                                                        w->iwork, &w->liwork, &info, 1, 1);
        break;
    }
    case DG_DENSE_GESVD: {
        const char jobz = "NSA"[d->job];
        li ldu = d->job ? d->u.ld : 1, ldvt = d->job ? d->vt.ld : 1;
        char *u = d->job ? at(d->u.p, d->u.bs, idx, nb) : NULL;
        char *vt = d->job ? at(d->vt.p, d->vt.bs, idx, nb) : NULL;
        char *s = at(d->w, d->w_bs, idx, nb);
        if (t < 2)
            ((gesdd_fn *)lapack.fn[DG_LAPACK_GESDD][t])(&jobz, &m, &n, a, &lda, s, u, &ldu, vt,
                                                        &ldvt, w->work, &w->lwork, w->iwork,
                                                        &info, 1);
        else
            ((zgesdd_fn *)lapack.fn[DG_LAPACK_GESDD][t])(&jobz, &m, &n, a, &lda, s, u, &ldu, vt,
                                                         &ldvt, w->work, &w->lwork, w->rwork,
                                                         w->iwork, &info, 1);
        break;
    }
    case DG_DENSE_GEEV: {
        const char jobvl = 'N', jobvr = d->job ? 'V' : 'N';
        const li one = 1, ldvr = d->job ? d->u.ld : 1;
        char *ev = at(d->w, d->w_bs, idx, nb);
        unsigned char unused[16];
        void *vr = d->job ? (void *)at(d->u.p, d->u.bs, idx, nb) : (void *)unused;
        if (t < 2) {
            /* wr and wi in rwork, then interleaved into w's complex values */
            char *wr = (char *)w->rwork, *wi = wr + n * (t ? 8 : 4);
            int64_t j;
            ((geev_fn *)lapack.fn[DG_LAPACK_GEEV][t])(&jobvl, &jobvr, &n, a, &lda, wr, wi,
                                                      unused, &one, vr, &ldvr, w->work,
                                                      &w->lwork, &info, 1, 1);
            for (j = 0; j < n; j++)
                if (t) {
                    ((double *)ev)[2 * j] = ((const double *)wr)[j];
                    ((double *)ev)[2 * j + 1] = ((const double *)wi)[j];
                } else {
                    ((float *)ev)[2 * j] = ((const float *)wr)[j];
                    ((float *)ev)[2 * j + 1] = ((const float *)wi)[j];
                }
        } else {
            ((zgeev_fn *)lapack.fn[DG_LAPACK_GEEV][t])(&jobvl, &jobvr, &n, a, &lda, ev, unused,
                                                       &one, vr, &ldvr, w->work, &w->lwork,
                                                       w->rwork, &info, 1, 1);
        }
        break;
    }
    case DG_DENSE_TRIZERO: {
        /* info 1 where an element set to zero was not finite */
        const int64_t esz = dg_dtype_size(d->dtype);
        const int single = d->dtype == DG_FLOAT32 || d->dtype == DG_COMPLEX64;
        const int64_t parts = esz / (single ? 4 : 8);
        int64_t i, j, q;
        for (j = 0; j < n; j++) {
            char *col = a + j * lda * esz;
            /* rows i of column j that go: j - i > k (lower) or j - i < k */
            int64_t lo = d->lower ? 0 : j - k + 1, hi = d->lower ? j - k : m;
            if (lo < 0)
                lo = 0;
            if (hi > m)
                hi = m;
            for (i = lo; i < hi; i++) {
                for (q = 0; q < parts && !info; q++)
                    info = single ? !isfinite(((const float *)(col + i * esz))[q])
                                  : !isfinite(((const double *)(col + i * esz))[q]);
                memset(col + i * esz, 0, (size_t)esz);
            }
        }
        break;
    }
    default:
        break;
    }
    return info;
}

/* Writes v to every info of the batch. */
static void fill_info(const dg_dense_desc *d, int32_t v)
{
    int64_t idx[DG_MAXDIM] = {0};
    if (!d->info)
        return;
    do
        *(int32_t *)at((char *)d->info, d->info_bs, idx, d->nbatch) = v;
    while (dg_dense_next_index(d, idx));
}

void dg_cpu_dense_run(const dg_dense_desc *d)
{
    const int t = type_index(d->dtype);
    int64_t idx[DG_MAXDIM] = {0};
    work w;
    int ax;
    for (ax = 0; ax < d->nbatch; ax++)
        if (d->batch[ax] <= 0)
            return;
    if (t < 0 || !have_lapack || !work_get(d, t, &w)) {
        fill_info(d, INT32_MIN);
        return;
    }
    do {
        li info = run_one(d, t, idx, &w);
        if (d->info)
            *(int32_t *)at((char *)d->info, d->info_bs, idx, d->nbatch) =
                info > INT32_MAX ? INT32_MAX : info < -INT32_MAX ? -INT32_MAX : (int32_t)info;
    } while (dg_dense_next_index(d, idx));
    work_free(&w);
}
