/* dense(): dense linear algebra on one GPU (dg_dense.h) through cuSOLVER's
 * 64-bit dense API (Xpotrf, Xgetrf, Xgetrs, Xgeqrf, Xsyevd, Xgesvd, Xgeev), its
 * orgqr / ungqr, gesvdj for SVDs of wide matrices (Xgesvd takes m >= n
 * only), cuBLAS's trsm, and kernels/dense.cu for TRIZERO.  The matrices of a
 * batch are one call each, in order, on the stream the core asks for, but
 * for the stacks of small matrices below.
 *
 * One cuSOLVER handle (with its params and a gesvdj info), one cuBLAS handle
 * and a host workspace per device, made at its first dense op and used
 * under one lock (a handle is not for two threads at once).  Device
 * workspaces come from the device's pool (the backend's alloc, stream-
 * ordered on the compute stream) and go back to it after the call, in
 * stream order.  info is written by cuSOLVER on the device: the core reads
 * it only when Python asks (one reduction, no wait here).  Stacks of small
 * matrices (order <= CU_BATCHED_MAX_N) run POTRF, GETRF and GETRS as one
 * batched call (cuSOLVER's potrfBatched, cuBLAS's getrfBatched and
 * getrsBatched). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cusolverDn.h>

#include "cuda_internal.h"

typedef struct cu_solver_dev {
    cusolverDnHandle_t h;
    cusolverDnParams_t params;
    gesvdjInfo_t gesvdj;
    cublasHandle_t blas;
    void *host_ws;
    size_t host_cap;
} cu_solver_dev;

struct cu_solver {
    pthread_mutex_t mu;
    int ndev;
    cu_solver_dev *d; /* [ndev], handles NULL until the device's first op [mu] */
};

static pthread_mutex_t solver_init_mu = PTHREAD_MUTEX_INITIALIZER;

/* Records the failure of cuSOLVER call `what` on dev (dev current): the
 * lost context when a kernel faulted in it (cu_sticky_error), else its
 * status. */
static dg_status sol_fail(dg_error *err, cusolverStatus_t s, int dev, const char *what)
{
    const cudaError_t lost = cu_sticky_error();
    if (lost != cudaSuccess)
        return cu_fail(err, lost, dev, 0, what);
    if (s == CUSOLVER_STATUS_ALLOC_FAILED)
        return dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev, "out of memory on device %d in %s",
                            dev, what);
    dg_error_set(err, DG_ERR_DEVICE, dev, "cuSOLVER error %d in %s on device %d", (int)s, what,
                 dev);
    if (err != NULL && err->code == DG_ERR_DEVICE && err->backend_code == 0)
        err->backend_code = (long)s;
    return DG_ERR_DEVICE;
}

static dg_status blas_fail(dg_error *err, cublasStatus_t s, int dev, const char *what)
{
    const cudaError_t lost = cu_sticky_error();
    if (lost != cudaSuccess)
        return cu_fail(err, lost, dev, 0, what);
    return dg_error_set(err, s == CUBLAS_STATUS_ALLOC_FAILED ? DG_ERR_DEVICE_NOMEM : DG_ERR_DEVICE,
                        dev, "cuBLAS error in %s on device %d: %s", what, dev,
                        cublasGetStatusString(s));
}

#define SOL_CHECK(call, what)                                    \
    do {                                                         \
        cusolverStatus_t s_ = (call);                            \
        if (s_ != CUSOLVER_STATUS_SUCCESS)                       \
            return sol_fail(err, s_, dev, (what));               \
    } while (0)

#define CB_CHECK(call, what)                                     \
    do {                                                         \
        cublasStatus_t s_ = (call);                              \
        if (s_ != CUBLAS_STATUS_SUCCESS)                         \
            return blas_fail(err, s_, dev, (what));              \
    } while (0)

/* The backend's solver state, made at the first dense op. */
static dg_status solver_state(cu_be *b, struct cu_solver **out, dg_error *err)
{
    struct cu_solver *sv = NULL;
    pthread_mutex_lock(&solver_init_mu);
    sv = b->solver;
    if (sv == NULL) {
        sv = (struct cu_solver *)calloc(1, sizeof(*sv));
        if (sv != NULL) {
            sv->d = (cu_solver_dev *)calloc((size_t)b->ndev, sizeof(cu_solver_dev));
            if (sv->d == NULL) {
                free(sv);
                sv = NULL;
            } else {
                sv->ndev = b->ndev;
                pthread_mutex_init(&sv->mu, NULL);
                b->solver = sv;
            }
        }
    }
    pthread_mutex_unlock(&solver_init_mu);
    if (sv == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory for cuSOLVER");
    *out = sv;
    return DG_OK;
}

/* Device dev's handles, made now if it has none, bound to stream s.  Call
 * with sv->mu held and dev current. */
static dg_status solver_dev(struct cu_solver *sv, int dev, cudaStream_t s, cu_solver_dev **out,
                            dg_error *err)
{
    cu_solver_dev *d = &sv->d[dev];
    if (d->h == NULL) {
        /* all four or none */
        cusolverDnHandle_t h = NULL;
        cusolverDnParams_t params = NULL;
        gesvdjInfo_t gj = NULL;
        cublasHandle_t bh = NULL;
        cusolverStatus_t r = cusolverDnCreate(&h);
        cublasStatus_t cr = CUBLAS_STATUS_SUCCESS;
        if (r == CUSOLVER_STATUS_SUCCESS)
            r = cusolverDnCreateParams(&params);
        if (r == CUSOLVER_STATUS_SUCCESS)
            r = cusolverDnCreateGesvdjInfo(&gj);
        if (r == CUSOLVER_STATUS_SUCCESS)
            cr = cublasCreate(&bh);
        if (r != CUSOLVER_STATUS_SUCCESS || cr != CUBLAS_STATUS_SUCCESS) {
            if (gj)
                cusolverDnDestroyGesvdjInfo(gj);
            if (params)
                cusolverDnDestroyParams(params);
            if (h)
                cusolverDnDestroy(h);
            return r != CUSOLVER_STATUS_SUCCESS ? sol_fail(err, r, dev, "cuSOLVER's set-up")
                                                : blas_fail(err, cr, dev, "cublasCreate");
        }
        d->h = h;
        d->params = params;
        d->gesvdj = gj;
        d->blas = bh;
    }
    SOL_CHECK(cusolverDnSetStream(d->h, s), "cusolverDnSetStream");
    CB_CHECK(cublasSetStream(d->blas, s), "cublasSetStream");
    *out = d;
    return DG_OK;
}

/* A host workspace of at least n bytes (kept for the next op); NULL for 0. */
static dg_status host_ws(cu_solver_dev *d, size_t n, void **out, int dev, dg_error *err)
{
    if (n > d->host_cap) {
        void *p = realloc(d->host_ws, n);
        if (p == NULL)
            return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory for cuSOLVER's "
                                "workspace (%zu bytes)", n);
        d->host_ws = p;
        d->host_cap = n;
    }
    *out = n ? d->host_ws : NULL;
    return DG_OK;
}

void cu_dense_destroy(cu_be *b)
{
    struct cu_solver *sv = b->solver;
    int i;
    if (sv == NULL)
        return;
    for (i = 0; i < sv->ndev; i++) {
        cu_solver_dev *d = &sv->d[i];
        if (d->h == NULL)
            continue;
        if (cudaSetDevice(b->devs[i].id) != cudaSuccess)
            (void)cudaGetLastError();
        if (d->gesvdj)
            cusolverDnDestroyGesvdjInfo(d->gesvdj);
        if (d->params)
            cusolverDnDestroyParams(d->params);
        cusolverDnDestroy(d->h);
        if (d->blas)
            cublasDestroy(d->blas);
        free(d->host_ws);
    }
    pthread_mutex_destroy(&sv->mu);
    free(sv->d);
    free(sv);
    b->solver = NULL;
}

/* ---- one op on one matrix ------------------------------------------------- */

static cudaDataType cuda_type(int dtype)
{
    switch (dtype) {
    case DG_FLOAT32: return CUDA_R_32F;
    case DG_FLOAT64: return CUDA_R_64F;
    case DG_COMPLEX64: return CUDA_C_32F;
    default: return CUDA_C_64F;
    }
}

/* The real type of a dtype's values (eigenvalues, singular values). */
static cudaDataType cuda_real(int dtype)
{
    return (dtype == DG_FLOAT32 || dtype == DG_COMPLEX64) ? CUDA_R_32F : CUDA_R_64F;
}

/* The complex type of a dtype's precision (GEEV's eigenvalues). */
static cudaDataType cuda_complex(int dtype)
{
    return (dtype == DG_FLOAT32 || dtype == DG_COMPLEX64) ? CUDA_C_32F : CUDA_C_64F;
}

/* The pointers of one matrix of the batch. */
typedef struct one {
    char *a, *b, *u, *vt, *w;
    int64_t *ipiv;
    int *info;
} one;

static char *at(char *p, const int64_t *bs, const int64_t *idx, int nb)
{
    int k;
    if (p == NULL)
        return NULL;
    for (k = 0; k < nb; k++)
        p += idx[k] * bs[k];
    return p;
}

/* A device workspace of n bytes from dev's pool (NULL for 0); back to the
 * pool with ws_put after the work using it was enqueued. */
static dg_status ws_get(cu_be *b, int dev, size_t n, void **out, dg_error *err)
{
    *out = NULL;
    return n ? b->iface.alloc(&b->iface, dev, n, out, err) : DG_OK;
}

static void ws_put(cu_be *b, int dev, void *p)
{
    if (p != NULL)
        b->iface.release(&b->iface, dev, p);
}

/* cuSOLVER's 64-bit routines with (device, host) workspaces, sized by their
 * _bufferSize twins: POTRF, GETRF, GEQRF, SYEVD, GESVD (m >= n). */
static dg_status run_x(cu_be *b, int dev, cu_solver_dev *sd, const dg_dense_desc *d, one *o,
                       dg_error *err)
{
    const cudaDataType t = cuda_type(d->dtype), rt = cuda_real(d->dtype);
    const cublasFillMode_t uplo = d->lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const cusolverEigMode_t jobz = d->job ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const signed char job = "NSA"[d->job];
    /* without vectors U and VT are not referenced, their leading dimensions
     * still checked */
    const int64_t ldu = d->job ? d->u.ld : (d->m > 1 ? d->m : 1);
    const int64_t ldvt = d->job ? d->vt.ld : (d->n > 1 ? d->n : 1);
    size_t wd = 0, wh = 0;
    void *dws = NULL, *hws = NULL;
    cusolverStatus_t s = CUSOLVER_STATUS_SUCCESS;
    dg_status st;
    switch (d->op) {
    case DG_DENSE_POTRF:
        SOL_CHECK(cusolverDnXpotrf_bufferSize(sd->h, sd->params, uplo, d->n, t, o->a, d->a.ld, t,
                                              &wd, &wh), "cusolverDnXpotrf_bufferSize");
        break;
    case DG_DENSE_GETRF:
        SOL_CHECK(cusolverDnXgetrf_bufferSize(sd->h, sd->params, d->m, d->n, t, o->a, d->a.ld, t,
                                              &wd, &wh), "cusolverDnXgetrf_bufferSize");
        break;
    case DG_DENSE_GEQRF:
        SOL_CHECK(cusolverDnXgeqrf_bufferSize(sd->h, sd->params, d->m, d->n, t, o->a, d->a.ld, t,
                                              o->w, t, &wd, &wh), "cusolverDnXgeqrf_bufferSize");
        break;
    case DG_DENSE_SYEVD:
        SOL_CHECK(cusolverDnXsyevd_bufferSize(sd->h, sd->params, jobz, uplo, d->n, t, o->a,
                                              d->a.ld, rt, o->w, t, &wd, &wh),
                  "cusolverDnXsyevd_bufferSize");
        break;
    default: /* GESVD */
        SOL_CHECK(cusolverDnXgesvd_bufferSize(sd->h, sd->params, job, job, d->m, d->n, t, o->a,
                                              d->a.ld, rt, o->w, t, o->u, ldu, t, o->vt, ldvt, t,
                                              &wd, &wh),
                  "cusolverDnXgesvd_bufferSize");
        break;
    }
    DG_CHECK(host_ws(sd, wh, &hws, dev, err));
    DG_CHECK(ws_get(b, dev, wd, &dws, err));
    switch (d->op) {
    case DG_DENSE_POTRF:
        s = cusolverDnXpotrf(sd->h, sd->params, uplo, d->n, t, o->a, d->a.ld, t, dws, wd, hws, wh,
                             o->info);
        break;
    case DG_DENSE_GETRF:
        s = cusolverDnXgetrf(sd->h, sd->params, d->m, d->n, t, o->a, d->a.ld, o->ipiv, t, dws, wd,
                             hws, wh, o->info);
        break;
    case DG_DENSE_GEQRF:
        s = cusolverDnXgeqrf(sd->h, sd->params, d->m, d->n, t, o->a, d->a.ld, t, o->w, t, dws, wd,
                             hws, wh, o->info);
        break;
    case DG_DENSE_SYEVD:
        s = cusolverDnXsyevd(sd->h, sd->params, jobz, uplo, d->n, t, o->a, d->a.ld, rt, o->w, t,
                             dws, wd, hws, wh, o->info);
        break;
    default:
        s = cusolverDnXgesvd(sd->h, sd->params, job, job, d->m, d->n, t, o->a, d->a.ld, rt, o->w,
                             t, o->u, ldu, t, o->vt, ldvt, t, dws, wd, hws, wh, o->info);
        break;
    }
    ws_put(b, dev, dws);
    st = s == CUSOLVER_STATUS_SUCCESS ? DG_OK : sol_fail(err, s, dev, "a cuSOLVER factorisation");
    return st;
}

/* potrf through cuSOLVER's typed 32-bit routines (sizes below 2^31; the
 * routine CuPy's cholesky calls), its device workspace from the pool. */
static dg_status run_potrf32(cu_be *b, int dev, cu_solver_dev *sd, const dg_dense_desc *d,
                             one *o, dg_error *err)
{
    const cublasFillMode_t uplo = d->lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const int n = (int)d->n, lda = (int)d->a.ld;
    int lw = 0;
    void *ws = NULL;
    cusolverStatus_t s;
    switch (d->dtype) {
    case DG_FLOAT32:
        SOL_CHECK(cusolverDnSpotrf_bufferSize(sd->h, uplo, n, (float *)o->a, lda, &lw),
                  "cusolverDnSpotrf_bufferSize");
        break;
    case DG_FLOAT64:
        SOL_CHECK(cusolverDnDpotrf_bufferSize(sd->h, uplo, n, (double *)o->a, lda, &lw),
                  "cusolverDnDpotrf_bufferSize");
        break;
    case DG_COMPLEX64:
        SOL_CHECK(cusolverDnCpotrf_bufferSize(sd->h, uplo, n, (cuComplex *)o->a, lda, &lw),
                  "cusolverDnCpotrf_bufferSize");
        break;
    default:
        SOL_CHECK(cusolverDnZpotrf_bufferSize(sd->h, uplo, n, (cuDoubleComplex *)o->a, lda, &lw),
                  "cusolverDnZpotrf_bufferSize");
        break;
    }
    DG_CHECK(ws_get(b, dev, (size_t)(lw > 0 ? lw : 1) * (size_t)dg_dtype_size(d->dtype), &ws,
                    err));
    switch (d->dtype) {
    case DG_FLOAT32:
        s = cusolverDnSpotrf(sd->h, uplo, n, (float *)o->a, lda, (float *)ws, lw, o->info);
        break;
    case DG_FLOAT64:
        s = cusolverDnDpotrf(sd->h, uplo, n, (double *)o->a, lda, (double *)ws, lw, o->info);
        break;
    case DG_COMPLEX64:
        s = cusolverDnCpotrf(sd->h, uplo, n, (cuComplex *)o->a, lda, (cuComplex *)ws, lw,
                             o->info);
        break;
    default:
        s = cusolverDnZpotrf(sd->h, uplo, n, (cuDoubleComplex *)o->a, lda, (cuDoubleComplex *)ws,
                             lw, o->info);
        break;
    }
    ws_put(b, dev, ws);
    return s == CUSOLVER_STATUS_SUCCESS ? DG_OK : sol_fail(err, s, dev, "cusolverDn?potrf");
}

/* orgqr / ungqr (cuSOLVER's 32-bit API: sizes below 2^31). */
static dg_status run_orgqr(cu_be *b, int dev, cu_solver_dev *sd, const dg_dense_desc *d, one *o,
                           dg_error *err)
{
    const int m = (int)d->m, n = (int)d->n, k = (int)d->k, lda = (int)d->a.ld;
    const size_t esz = (size_t)dg_dtype_size(d->dtype);
    int lwork = 0;
    void *ws = NULL;
    cusolverStatus_t s;
    if (d->m > INT32_MAX || d->a.ld > INT32_MAX)
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "cuSOLVER's orgqr takes fewer than 2^31 "
                            "rows");
    switch (d->dtype) {
    case DG_FLOAT32:
        SOL_CHECK(cusolverDnSorgqr_bufferSize(sd->h, m, n, k, (float *)o->a, lda,
                                              (float *)o->w, &lwork), "cusolverDnSorgqr_bufferSize");
        break;
    case DG_FLOAT64:
        SOL_CHECK(cusolverDnDorgqr_bufferSize(sd->h, m, n, k, (double *)o->a, lda,
                                              (double *)o->w, &lwork), "cusolverDnDorgqr_bufferSize");
        break;
    case DG_COMPLEX64:
        SOL_CHECK(cusolverDnCungqr_bufferSize(sd->h, m, n, k, (cuComplex *)o->a, lda,
                                              (cuComplex *)o->w, &lwork),
                  "cusolverDnCungqr_bufferSize");
        break;
    default:
        SOL_CHECK(cusolverDnZungqr_bufferSize(sd->h, m, n, k, (cuDoubleComplex *)o->a, lda,
                                              (cuDoubleComplex *)o->w, &lwork),
                  "cusolverDnZungqr_bufferSize");
        break;
    }
    DG_CHECK(ws_get(b, dev, (size_t)(lwork > 0 ? lwork : 1) * esz, &ws, err));
    switch (d->dtype) {
    case DG_FLOAT32:
        s = cusolverDnSorgqr(sd->h, m, n, k, (float *)o->a, lda, (float *)o->w, (float *)ws,
                             lwork, o->info);
        break;
    case DG_FLOAT64:
        s = cusolverDnDorgqr(sd->h, m, n, k, (double *)o->a, lda, (double *)o->w, (double *)ws,
                             lwork, o->info);
        break;
    case DG_COMPLEX64:
        s = cusolverDnCungqr(sd->h, m, n, k, (cuComplex *)o->a, lda, (cuComplex *)o->w,
                             (cuComplex *)ws, lwork, o->info);
        break;
    default:
        s = cusolverDnZungqr(sd->h, m, n, k, (cuDoubleComplex *)o->a, lda,
                             (cuDoubleComplex *)o->w, (cuDoubleComplex *)ws, lwork, o->info);
        break;
    }
    ws_put(b, dev, ws);
    return s == CUSOLVER_STATUS_SUCCESS ? DG_OK : sol_fail(err, s, dev, "orgqr");
}

/* The SVD of a wide matrix (m < n): gesvdj (32-bit API) gives V, and VT is
 * its conjugate transpose (cuBLAS's geam).  gesvdj reads and writes U and V
 * even when it computes no vectors (jobz NOVECTOR: a NULL U or V is an
 * illegal address on the device, which loses the context), so it always
 * gets both: the caller's U or a scratch one of the same size, and V from
 * the pool. */
static dg_status run_gesvdj(cu_be *b, int dev, cu_solver_dev *sd, const dg_dense_desc *d,
                            one *o, dg_error *err)
{
    const int m = (int)d->m, n = (int)d->n, lda = (int)d->a.ld, mn = m < n ? m : n;
    const int econ = d->job != 2, vcols = econ ? mn : n, ucols = econ ? mn : m;
    const cusolverEigMode_t jobz = d->job ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const size_t esz = (size_t)dg_dtype_size(d->dtype);
    const int ldu = d->job ? (int)d->u.ld : (m > 1 ? m : 1), ldv = n > 1 ? n : 1;
    int lwork = 0;
    void *ws = NULL, *v = NULL, *uscratch = NULL;
    char *u = o->u;
    cusolverStatus_t s;
    dg_status st = DG_OK;
    if (d->n > INT32_MAX || d->a.ld > INT32_MAX || (d->job && d->u.ld > INT32_MAX))
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "cuSOLVER's gesvdj takes fewer than 2^31 "
                            "columns");
    DG_CHECK(ws_get(b, dev, (size_t)ldv * (size_t)vcols * esz, &v, err));
    if (!d->job) {
        st = ws_get(b, dev, (size_t)ldu * (size_t)ucols * esz, &uscratch, err);
        if (st != DG_OK) {
            ws_put(b, dev, v);
            return st;
        }
        u = (char *)uscratch;
    }
#define SVDJ_SIZE(T, fn) \
    fn(sd->h, jobz, econ, m, n, (T *)o->a, lda, (void *)o->w, (T *)u, ldu, (T *)v, ldv, \
       &lwork, sd->gesvdj)
    switch (d->dtype) {
    case DG_FLOAT32: s = SVDJ_SIZE(float, cusolverDnSgesvdj_bufferSize); break;
    case DG_FLOAT64: s = SVDJ_SIZE(double, cusolverDnDgesvdj_bufferSize); break;
    case DG_COMPLEX64: s = SVDJ_SIZE(cuComplex, cusolverDnCgesvdj_bufferSize); break;
    default: s = SVDJ_SIZE(cuDoubleComplex, cusolverDnZgesvdj_bufferSize); break;
    }
#undef SVDJ_SIZE
    if (s != CUSOLVER_STATUS_SUCCESS)
        st = sol_fail(err, s, dev, "gesvdj_bufferSize");
    if (st == DG_OK)
        st = ws_get(b, dev, (size_t)(lwork > 0 ? lwork : 1) * esz, &ws, err);
    if (st != DG_OK) {
        ws_put(b, dev, uscratch);
        ws_put(b, dev, v);
        return st;
    }
#define SVDJ(T, fn) \
    fn(sd->h, jobz, econ, m, n, (T *)o->a, lda, (void *)o->w, (T *)u, ldu, (T *)v, ldv, \
       (T *)ws, lwork, o->info, sd->gesvdj)
    switch (d->dtype) {
    case DG_FLOAT32: s = SVDJ(float, cusolverDnSgesvdj); break;
    case DG_FLOAT64: s = SVDJ(double, cusolverDnDgesvdj); break;
    case DG_COMPLEX64: s = SVDJ(cuComplex, cusolverDnCgesvdj); break;
    default: s = SVDJ(cuDoubleComplex, cusolverDnZgesvdj); break;
    }
#undef SVDJ
    ws_put(b, dev, ws);
    ws_put(b, dev, uscratch);
    if (s != CUSOLVER_STATUS_SUCCESS)
        st = sol_fail(err, s, dev, "gesvdj");
    if (st == DG_OK && d->job) {
        /* VT (vcols x n, ld vt.ld) = V^H (V: n x vcols, ld ldv) */
        const float f1[2] = {1, 0}, f0[2] = {0, 0};
        const double d1[2] = {1, 0}, d0[2] = {0, 0};
        const int64_t ldvt = d->vt.ld;
        cublasStatus_t cs;
        switch (d->dtype) {
        case DG_FLOAT32:
            cs = cublasSgeam(sd->blas, CUBLAS_OP_T, CUBLAS_OP_N, vcols, n, f1, (float *)v, ldv,
                             f0, (float *)o->vt, (int)ldvt, (float *)o->vt, (int)ldvt);
            break;
        case DG_FLOAT64:
            cs = cublasDgeam(sd->blas, CUBLAS_OP_T, CUBLAS_OP_N, vcols, n, d1, (double *)v, ldv,
                             d0, (double *)o->vt, (int)ldvt, (double *)o->vt, (int)ldvt);
            break;
        case DG_COMPLEX64:
            cs = cublasCgeam(sd->blas, CUBLAS_OP_C, CUBLAS_OP_N, vcols, n,
                             (const cuComplex *)f1, (cuComplex *)v, ldv, (const cuComplex *)f0,
                             (cuComplex *)o->vt, (int)ldvt, (cuComplex *)o->vt, (int)ldvt);
            break;
        default:
            cs = cublasZgeam(sd->blas, CUBLAS_OP_C, CUBLAS_OP_N, vcols, n,
                             (const cuDoubleComplex *)d1, (cuDoubleComplex *)v, ldv,
                             (const cuDoubleComplex *)d0, (cuDoubleComplex *)o->vt, (int)ldvt,
                             (cuDoubleComplex *)o->vt, (int)ldvt);
            break;
        }
        if (cs != CUBLAS_STATUS_SUCCESS)
            st = blas_fail(err, cs, dev, "geam (V^H)");
    }
    ws_put(b, dev, v);
    return st;
}

/* GEEV: cuSOLVER's Xgeev, right eigenvectors only (jobvl NOVECTOR).  W is
 * complex for every A (for a real A, Xgeev's option that writes both
 * eigenvalues of each conjugate pair, computed in real arithmetic), VR in
 * A's type (for a real A, LAPACK's real columns: the op's contract).  VL
 * and VR always point at an n x n matrix of A's type with leading
 * dimension >= n, as CuPy passes them: VL at VR (not referenced without
 * left vectors), VR at the caller's U, or without vectors a scratch one
 * from the pool (no NULL where the library might touch the memory, as
 * gesvdj does).  The host workspace is the device's pageable one. */
static dg_status run_geev(cu_be *b, int dev, cu_solver_dev *sd, const dg_dense_desc *d, one *o,
                          dg_error *err)
{
    const cudaDataType t = cuda_type(d->dtype), tw = cuda_complex(d->dtype);
    const cusolverEigMode_t jobvl = CUSOLVER_EIG_MODE_NOVECTOR;
    const cusolverEigMode_t jobvr = d->job ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int64_t n = d->n, ldv = d->job ? d->u.ld : n;
    size_t wd = 0, wh = 0;
    void *dws = NULL, *hws = NULL, *scratch = NULL, *vr = o->u;
    cusolverStatus_t s;
    dg_status st = DG_OK;
    if (!d->job) {
        DG_CHECK(ws_get(b, dev, (size_t)n * (size_t)n * (size_t)dg_dtype_size(d->dtype),
                        &scratch, err));
        vr = scratch;
    }
    s = cusolverDnXgeev_bufferSize(sd->h, sd->params, jobvl, jobvr, n, t, o->a, d->a.ld, tw,
                                   o->w, t, vr, ldv, t, vr, ldv, t, &wd, &wh);
    if (s != CUSOLVER_STATUS_SUCCESS)
        st = sol_fail(err, s, dev, "cusolverDnXgeev_bufferSize");
    if (st == DG_OK)
        st = host_ws(sd, wh, &hws, dev, err);
    if (st == DG_OK)
        st = ws_get(b, dev, wd, &dws, err);
    if (st == DG_OK) {
        s = cusolverDnXgeev(sd->h, sd->params, jobvl, jobvr, n, t, o->a, d->a.ld, tw, o->w, t,
                            vr, ldv, t, vr, ldv, t, dws, wd, hws, wh, o->info);
        if (s != CUSOLVER_STATUS_SUCCESS)
            st = sol_fail(err, s, dev, "cusolverDnXgeev");
    }
    ws_put(b, dev, dws);
    ws_put(b, dev, scratch);
    return st;
}

/* GETRS: cuSOLVER's Xgetrs (its info to o->info, a scratch when the caller
 * wants none). */
static dg_status run_getrs(cu_solver_dev *sd, int dev, const dg_dense_desc *d, one *o,
                           dg_error *err)
{
    const cudaDataType t = cuda_type(d->dtype);
    const cublasOperation_t tr = d->trans == 0 ? CUBLAS_OP_N
                                 : d->trans == 1 ? CUBLAS_OP_T : CUBLAS_OP_C;
    SOL_CHECK(cusolverDnXgetrs(sd->h, sd->params, tr, d->n, d->k, t, o->a, d->a.ld, o->ipiv, t,
                               o->b, d->b.ld, o->info), "cusolverDnXgetrs");
    return DG_OK;
}

/* TRSM: cuBLAS's 64-bit trsm, alpha 1. */
static dg_status run_trsm(cu_solver_dev *sd, int dev, const dg_dense_desc *d, one *o,
                          dg_error *err)
{
    const cublasSideMode_t side = d->right ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
    const cublasFillMode_t uplo = d->lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const cublasOperation_t tr = d->trans == 0 ? CUBLAS_OP_N
                                 : d->trans == 1 ? CUBLAS_OP_T : CUBLAS_OP_C;
    const cublasDiagType_t diag = d->unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const float f1[2] = {1, 0};
    const double d1[2] = {1, 0};
    switch (d->dtype) {
    case DG_FLOAT32:
        CB_CHECK(cublasStrsm_64(sd->blas, side, uplo, tr, diag, d->m, d->n, f1,
                                (const float *)o->a, d->a.ld, (float *)o->b, d->b.ld),
                 "cublasStrsm");
        break;
    case DG_FLOAT64:
        CB_CHECK(cublasDtrsm_64(sd->blas, side, uplo, tr, diag, d->m, d->n, d1,
                                (const double *)o->a, d->a.ld, (double *)o->b, d->b.ld),
                 "cublasDtrsm");
        break;
    case DG_COMPLEX64:
        CB_CHECK(cublasCtrsm_64(sd->blas, side, uplo, tr, diag, d->m, d->n,
                                (const cuComplex *)f1, (const cuComplex *)o->a, d->a.ld,
                                (cuComplex *)o->b, d->b.ld), "cublasCtrsm");
        break;
    default:
        CB_CHECK(cublasZtrsm_64(sd->blas, side, uplo, tr, diag, d->m, d->n,
                                (const cuDoubleComplex *)d1, (const cuDoubleComplex *)o->a,
                                d->a.ld, (cuDoubleComplex *)o->b, d->b.ld), "cublasZtrsm");
        break;
    }
    return DG_OK;
}

/* ---- stacks of small matrices: one batched call ------------------------------- */

/* Matrices of at most this order in a stack of at least CU_BATCHED_MIN go to
 * the batched routines (cuSOLVER's potrfBatched, cuBLAS's getrfBatched and
 * getrsBatched), one call for the stack instead of one per matrix. */
#define CU_BATCHED_MAX_N 64
#define CU_BATCHED_MIN 4

/* d with its batch axes of extent 1 dropped and neighbours that every
 * operand walks as one merged. */
static void coalesce_batch(dg_dense_desc *d)
{
    int64_t *bs[7] = {d->a.bs, d->b.bs, d->u.bs, d->vt.bs, d->w_bs, d->ipiv_bs, d->info_bs};
    int q, k = 0, r, merge;
    for (q = 0; q < d->nbatch; q++) {
        if (d->batch[q] == 1)
            continue;
        merge = k > 0;
        for (r = 0; r < 7 && merge; r++)
            merge = bs[r][k - 1] == bs[r][q] * d->batch[q];
        if (merge) {
            d->batch[k - 1] *= d->batch[q];
            for (r = 0; r < 7; r++)
                bs[r][k - 1] = bs[r][q];
            continue;
        }
        d->batch[k] = d->batch[q];
        for (r = 0; r < 7; r++)
            bs[r][k] = bs[r][q];
        k++;
    }
    d->nbatch = k;
}

/* 1 if d (coalesced) is a stack the batched routines take. */
static int batched_ok(const dg_dense_desc *d)
{
    if (d->nbatch != 1 || d->batch[0] < CU_BATCHED_MIN || d->batch[0] > INT32_MAX ||
        d->n > CU_BATCHED_MAX_N)
        return 0;
    switch (d->op) {
    case DG_DENSE_POTRF: return d->info != NULL && d->info_bs[0] % 4 == 0;
    case DG_DENSE_GETRF:
        return d->m == d->n && d->info != NULL && d->info_bs[0] % 4 == 0 &&
               d->ipiv_bs[0] % 8 == 0;
    case DG_DENSE_GETRS:
        return d->k <= INT32_MAX && d->b.ld <= INT32_MAX && d->ipiv_bs[0] % 8 == 0 &&
               (d->info == NULL || d->info_bs[0] % 4 == 0);
    default: return 0;
    }
}

/* The device array of the matrices' addresses (p + i * bs bytes, i < n),
 * from dev's pool; ws_put it after the call. */
static dg_status ptr_array(cu_be *b, int dev, cudaStream_t s, char *p, int64_t bs, int64_t n,
                           void **out, dg_error *err)
{
    char **h = (char **)malloc((size_t)n * sizeof(char *));
    cudaError_t ce;
    int64_t i;
    if (h == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    for (i = 0; i < n; i++)
        h[i] = p + i * bs;
    if (ws_get(b, dev, (size_t)n * sizeof(char *), out, err) != DG_OK) {
        free(h);
        return DG_ERR_DEVICE_NOMEM;
    }
    /* from pageable memory: returns once h is staged, so it may go */
    ce = cudaMemcpyAsync(*out, h, (size_t)n * sizeof(char *), cudaMemcpyHostToDevice, s);
    free(h);
    if (ce != cudaSuccess) {
        ws_put(b, dev, *out);
        *out = NULL;
        return cu_fail(err, ce, dev, 0, "cudaMemcpyAsync (matrix addresses)");
    }
    return DG_OK;
}

/* POTRF, GETRF or GETRS of the whole stack in one batched call (d
 * coalesced, batched_ok).  cuBLAS's pivots and cuSOLVER's infos are int32
 * and dense: they go through temporaries widened to the desc's. */
static dg_status run_batched(cu_be *b, int dev, cudaStream_t s, cu_solver_dev *sd,
                             const dg_dense_desc *d, dg_error *err)
{
    const int n = (int)d->n, lda = (int)d->a.ld, nb = (int)d->batch[0];
    void *aptr = NULL, *bptr = NULL, *piv = NULL, *info = NULL;
    dg_status st;
    cudaError_t ce = cudaSuccess;
    cublasStatus_t cs = CUBLAS_STATUS_SUCCESS;
    cusolverStatus_t ss = CUSOLVER_STATUS_SUCCESS;
    int hinfo = 0;

    st = ptr_array(b, dev, s, d->a.p, d->a.bs[0], nb, &aptr, err);
    if (st == DG_OK && d->op == DG_DENSE_GETRS)
        st = ptr_array(b, dev, s, d->b.p, d->b.bs[0], nb, &bptr, err);
    if (st == DG_OK && d->op != DG_DENSE_POTRF)
        st = ws_get(b, dev, (size_t)n * (size_t)nb * sizeof(int), &piv, err);
    if (st == DG_OK && d->info != NULL)
        st = ws_get(b, dev, (size_t)nb * sizeof(int), &info, err);
    if (st != DG_OK)
        goto done;
    if (d->op == DG_DENSE_GETRS) {
        ce = dg_cu_int_copy(d->ipiv, 1, d->ipiv_bs[0] / 8, piv, 0, n, n, nb, s);
        /* getrs fails no matrix: info 0 for each where the caller asks */
        if (ce == cudaSuccess && info != NULL)
            ce = cudaMemsetAsync(info, 0, (size_t)nb * sizeof(int), s);
    }
    if (ce == cudaSuccess) {
        switch (d->op * 4 + (d->dtype == DG_FLOAT32 ? 0 : d->dtype == DG_FLOAT64 ? 1
                             : d->dtype == DG_COMPLEX64 ? 2 : 3)) {
#define UPLO (d->lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER)
#define TRANS (d->trans == 0 ? CUBLAS_OP_N : d->trans == 1 ? CUBLAS_OP_T : CUBLAS_OP_C)
        case DG_DENSE_POTRF * 4 + 0:
            ss = cusolverDnSpotrfBatched(sd->h, UPLO, n, (float **)aptr, lda, (int *)info, nb);
            break;
        case DG_DENSE_POTRF * 4 + 1:
            ss = cusolverDnDpotrfBatched(sd->h, UPLO, n, (double **)aptr, lda, (int *)info, nb);
            break;
        case DG_DENSE_POTRF * 4 + 2:
            ss = cusolverDnCpotrfBatched(sd->h, UPLO, n, (cuComplex **)aptr, lda, (int *)info,
                                         nb);
            break;
        case DG_DENSE_POTRF * 4 + 3:
            ss = cusolverDnZpotrfBatched(sd->h, UPLO, n, (cuDoubleComplex **)aptr, lda,
                                         (int *)info, nb);
            break;
        case DG_DENSE_GETRF * 4 + 0:
            cs = cublasSgetrfBatched(sd->blas, n, (float *const *)aptr, lda, (int *)piv,
                                     (int *)info, nb);
            break;
        case DG_DENSE_GETRF * 4 + 1:
            cs = cublasDgetrfBatched(sd->blas, n, (double *const *)aptr, lda, (int *)piv,
                                     (int *)info, nb);
            break;
        case DG_DENSE_GETRF * 4 + 2:
            cs = cublasCgetrfBatched(sd->blas, n, (cuComplex *const *)aptr, lda, (int *)piv,
                                     (int *)info, nb);
            break;
        case DG_DENSE_GETRF * 4 + 3:
            cs = cublasZgetrfBatched(sd->blas, n, (cuDoubleComplex *const *)aptr, lda,
                                     (int *)piv, (int *)info, nb);
            break;
        case DG_DENSE_GETRS * 4 + 0:
            cs = cublasSgetrsBatched(sd->blas, TRANS, n, (int)d->k, (const float *const *)aptr,
                                     lda, (const int *)piv, (float *const *)bptr, (int)d->b.ld,
                                     &hinfo, nb);
            break;
        case DG_DENSE_GETRS * 4 + 1:
            cs = cublasDgetrsBatched(sd->blas, TRANS, n, (int)d->k,
                                     (const double *const *)aptr, lda, (const int *)piv,
                                     (double *const *)bptr, (int)d->b.ld, &hinfo, nb);
            break;
        case DG_DENSE_GETRS * 4 + 2:
            cs = cublasCgetrsBatched(sd->blas, TRANS, n, (int)d->k,
                                     (const cuComplex *const *)aptr, lda, (const int *)piv,
                                     (cuComplex *const *)bptr, (int)d->b.ld, &hinfo, nb);
            break;
        default:
            cs = cublasZgetrsBatched(sd->blas, TRANS, n, (int)d->k,
                                     (const cuDoubleComplex *const *)aptr, lda,
                                     (const int *)piv, (cuDoubleComplex *const *)bptr,
                                     (int)d->b.ld, &hinfo, nb);
            break;
#undef UPLO
#undef TRANS
        }
    }
    if (ce != cudaSuccess)
        st = cu_fail(err, ce, dev, 0, "the pivots' conversion");
    else if (ss != CUSOLVER_STATUS_SUCCESS)
        st = sol_fail(err, ss, dev, "potrfBatched");
    else if (cs != CUBLAS_STATUS_SUCCESS)
        st = blas_fail(err, cs, dev, d->op == DG_DENSE_GETRF ? "getrfBatched" : "getrsBatched");
    else if (hinfo != 0)
        st = dg_error_set(err, DG_ERR_INTERNAL, dev, "getrsBatched: argument %d", -hinfo);
    if (st == DG_OK && d->op == DG_DENSE_GETRF)
        ce = dg_cu_int_copy(piv, 0, n, d->ipiv, 1, d->ipiv_bs[0] / 8, n, nb, s);
    if (st == DG_OK && ce == cudaSuccess && info != NULL)
        ce = dg_cu_int_copy(info, 0, 1, d->info, 0, d->info_bs[0] / 4, 1, nb, s);
    if (st == DG_OK && ce != cudaSuccess)
        st = cu_fail(err, ce, dev, 0, "the pivots' conversion");
done:
    ws_put(b, dev, aptr);
    ws_put(b, dev, bptr);
    ws_put(b, dev, piv);
    ws_put(b, dev, info);
    return st;
}

/* The whole batch, under the solver lock, on stream s of the current dev. */
static dg_status run_batch(cu_be *b, int dev, cudaStream_t s, const dg_dense_desc *d,
                           int *scratch, dg_error *err)
{
    struct cu_solver *sv = NULL;
    cu_solver_dev *sd = NULL;
    int64_t idx[DG_MAXDIM] = {0};
    const int nb = d->nbatch;
    dg_status st = DG_OK;
    DG_CHECK(solver_state(b, &sv, err));
    pthread_mutex_lock(&sv->mu);
    st = solver_dev(sv, dev, s, &sd, err);
    if (st == DG_OK && batched_ok(d)) {
        st = run_batched(b, dev, s, sd, d, err);
        pthread_mutex_unlock(&sv->mu);
        return st;
    }
    while (st == DG_OK) {
        one o;
        o.a = at(d->a.p, d->a.bs, idx, nb);
        o.b = at(d->b.p, d->b.bs, idx, nb);
        o.u = at(d->u.p, d->u.bs, idx, nb);
        o.vt = at(d->vt.p, d->vt.bs, idx, nb);
        o.w = at(d->w, d->w_bs, idx, nb);
        o.ipiv = (int64_t *)at((char *)d->ipiv, d->ipiv_bs, idx, nb);
        o.info = d->info ? (int *)at((char *)d->info, d->info_bs, idx, nb) : scratch;
        switch (d->op) {
        case DG_DENSE_GETRS: st = run_getrs(sd, dev, d, &o, err); break;
        case DG_DENSE_TRSM: st = run_trsm(sd, dev, d, &o, err); break;
        case DG_DENSE_ORGQR: st = run_orgqr(b, dev, sd, d, &o, err); break;
        case DG_DENSE_GEEV: st = run_geev(b, dev, sd, d, &o, err); break;
        case DG_DENSE_GESVD:
            st = d->m >= d->n ? run_x(b, dev, sd, d, &o, err)
                              : run_gesvdj(b, dev, sd, d, &o, err);
            break;
        case DG_DENSE_POTRF:
            st = d->n < INT32_MAX && d->a.ld < INT32_MAX ? run_potrf32(b, dev, sd, d, &o, err)
                                                         : run_x(b, dev, sd, d, &o, err);
            break;
        default: st = run_x(b, dev, sd, d, &o, err); break;
        }
        if (!dg_dense_next_index(d, idx))
            break;
    }
    pthread_mutex_unlock(&sv->mu);
    return st;
}

/* TRIZERO over the batch: the last batch axis in one launch (with its
 * infos, where asked). */
static dg_status run_trizero(cu_be *b, int dev, cudaStream_t s, const dg_dense_desc *d,
                             dg_error *err)
{
    int64_t idx[DG_MAXDIM] = {0};
    const int nb = d->nbatch;
    const int64_t last = nb ? d->batch[nb - 1] : 1, lbs = nb ? d->a.bs[nb - 1] : 0;
    const int64_t ibs = nb ? d->info_bs[nb - 1] : 0;
    const int cplx = d->dtype == DG_COMPLEX64 || d->dtype == DG_COMPLEX128;
    dg_dense_desc outer = *d;
    (void)b;
    outer.nbatch = nb ? nb - 1 : 0;
    for (;;) {
        char *info = d->info ? at((char *)d->info, d->info_bs, idx, outer.nbatch) : NULL;
        cudaError_t ce = dg_cu_trizero(at(d->a.p, d->a.bs, idx, outer.nbatch), d->a.ld, lbs,
                                       last, d->m, d->n, d->k, d->lower,
                                       dg_dtype_size(d->dtype), cplx, info, ibs, s);
        if (ce != cudaSuccess)
            return cu_fail(err, ce, dev, 0, "the triangle kernel");
        if (!dg_dense_next_index(&outer, idx))
            return DG_OK;
    }
}

dg_status cu_dense(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    cudaStream_t s;
    int *scratch = NULL;
    dg_status st;
    int k;

    DG_CHECK(cu_check_stream(b, dev, stream, "dense", err));
    if (stream != DG_STREAM_COMPUTE)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "dense work on stream %d: its workspace "
                            "is ordered on the compute stream", stream);
    if (d->op < 0 || d->op >= DG_DENSE_NOPS || d->nbatch < 0 || d->nbatch > DG_MAXDIM ||
        (d->dtype != DG_FLOAT32 && d->dtype != DG_FLOAT64 && d->dtype != DG_COMPLEX64 &&
         d->dtype != DG_COMPLEX128))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed dense op %d in %s", d->op,
                            dg_dtype_name(d->dtype));
    for (k = 0; k < d->nbatch; k++)
        if (d->batch[k] <= 0)
            return DG_OK;
    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;
    if (d->op == DG_DENSE_TRIZERO) {
        st = run_trizero(b, dev, s, d, err);
        cu_bump(b, dev, stream);
        return st;
    }
    if (d->info == NULL && (d->op == DG_DENSE_GETRS || d->op == DG_DENSE_ORGQR ||
                            d->op == DG_DENSE_GEQRF || d->op == DG_DENSE_GETRF ||
                            d->op == DG_DENSE_POTRF || d->op == DG_DENSE_SYEVD ||
                            d->op == DG_DENSE_GESVD || d->op == DG_DENSE_GEEV))
        DG_CHECK(ws_get(b, dev, sizeof(int), (void **)&scratch, err));
    {
        dg_dense_desc c = *d;
        coalesce_batch(&c);
        st = run_batch(b, dev, s, &c, scratch, err);
    }
    ws_put(b, dev, scratch);
    cu_bump(b, dev, stream);
    return st;
}
