/* The cuSOLVER and cuBLAS calls of src/backend/cuda/cuda_dense.c checked
 * without a GPU.
 *
 * cuda_dense.c is compiled against the real CUDA headers and linked with the
 * stand-ins below instead of cudart, cuSOLVER, cuBLAS and its kernels: each
 * stand-in checks its arguments as the library documents them (leading
 * dimensions, data types, workspaces of the size its _bufferSize twin gave,
 * which it fills to the last byte) and then does its work with the LAPACK of
 * NumPy's wheel, through the CPU backend's dense slot (cpu_dense.c) on a
 * descriptor of one matrix, so results are bit for bit those of the CPU
 * backend run on the same descriptor.  gesvdj is held to what it does on a
 * GPU beyond its documentation: it reads and writes U and V even when it
 * computes no vectors (a NULL one faulted an H200 and lost its context):
 * their m x ucols and n x vcols parts are written; Xgeev likewise writes
 * VR's n x n part even without vectors.
 * Random batches of every op and dtype (tall, wide and square matrices;
 * empty ones never reach a backend: the core answers them; TRIZERO with and
 * without its info, some matrices holding a NaN or an infinity; padded
 * leading dimensions, gaps between matrices, 0 to 2 batch
 * axes, stacks that take the batched routines) then go through cu_dense and
 * through dg_cpu_dense_run on copies of the same operands; every byte of
 * every operand must agree.  Run by tests/test_cusolver_mapping.py with the
 * path of NumPy's scipy-openblas as its argument. */
#define _POSIX_C_SOURCE 200809L /* dlopen */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cusolverDn.h>

#include "cpu_dense.h"
#include "mock_backend.h"

/* ---- checks and counts ---------------------------------------------------------- */

static int nviolations, ncalls, nbatched, ngesvdj;

/* A broken rule of the library's: counted, reported, and the call refused
 * with the library's status for it. */
#define RULE(cond, status, ...)                                                        \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            if (nviolations++ < 10) {                                                  \
                printf("%s: ", __func__);                                              \
                printf(__VA_ARGS__);                                                   \
                printf("\n");                                                          \
            }                                                                          \
            return status;                                                             \
        }                                                                              \
    } while (0)
#define SOLVER_RULE(cond, ...) RULE(cond, CUSOLVER_STATUS_INVALID_VALUE, __VA_ARGS__)
#define BLAS_RULE(cond, ...) RULE(cond, CUBLAS_STATUS_INVALID_VALUE, __VA_ARGS__)

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

/* The workspaces the _bufferSize stand-ins ask for: each execution fills
 * what it was given to the last byte (AddressSanitizer checks the rest). */
#define WS_DEVICE 1000
#define WS_HOST 24
#define LWORK 37

static int dtype_of(cudaDataType t)
{
    switch (t) {
    case CUDA_R_32F: return DG_FLOAT32;
    case CUDA_R_64F: return DG_FLOAT64;
    case CUDA_C_32F: return DG_COMPLEX64;
    case CUDA_C_64F: return DG_COMPLEX128;
    default: return -1;
    }
}

static cudaDataType real_of(cudaDataType t)
{
    return (t == CUDA_R_32F || t == CUDA_C_32F) ? CUDA_R_32F : CUDA_R_64F;
}

/* A descriptor of one matrix of op in dtype. */
static dg_dense_desc one(int op, int dtype)
{
    dg_dense_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.dtype = dtype;
    return d;
}

/* A call's work: d (one matrix; its a and info set from A, lda, info) run
 * by the CPU slot.  Returns 0, the success of cuSOLVER and cuBLAS both. */
static int run_one(dg_dense_desc *d, const void *A, int64_t lda, int *info)
{
    d->a.p = (char *)A;
    d->a.ld = lda;
    d->info = info;
    dg_cpu_dense_run(d);
    ncalls++;
    return 0;
}

/* A 64-bit API call's work: its workspaces checked and filled, then d run
 * (run_one). */
static cusolverStatus_t x_run(dg_dense_desc *d, void *A, int64_t lda, int *info, void *dws,
                              size_t wd, void *hws, size_t wh)
{
    SOLVER_RULE(dws != NULL && wd >= WS_DEVICE, "device workspace %p of %zu bytes", dws, wd);
    SOLVER_RULE(hws != NULL && wh >= WS_HOST, "host workspace %p of %zu bytes", hws, wh);
    memset(dws, 0xab, WS_DEVICE);
    memset(hws, 0xcd, WS_HOST);
    return (cusolverStatus_t)run_one(d, A, lda, info);
}

static int op_code(cublasOperation_t t) { return t == CUBLAS_OP_N ? 0 : t == CUBLAS_OP_T ? 1 : 2; }

/* ---- cudart and kernel stand-ins -------------------------------------------------- */

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    (void)s;
    memset(p, v, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                            cudaStream_t s)
{
    (void)k, (void)s;
    memcpy(dst, src, n);
    return cudaSuccess;
}

cudaError_t dg_cu_trizero(char *a, int64_t lda, int64_t bs, int64_t batch, int64_t m,
                          int64_t n, int64_t k, int lower, int itemsize, int cplx, char *info,
                          int64_t ibs, cudaStream_t s)
{
    dg_dense_desc d = one(DG_DENSE_TRIZERO, itemsize == 4   ? DG_FLOAT32
                                            : itemsize == 16 ? DG_COMPLEX128
                                            : cplx          ? DG_COMPLEX64
                                                            : DG_FLOAT64);
    (void)s;
    if ((itemsize != 4 && itemsize != 8 && itemsize != 16) || (itemsize == 4 && cplx) ||
        (itemsize == 16 && !cplx))
        return cudaErrorInvalidValue;
    d.nbatch = 1;
    d.batch[0] = batch;
    d.a.p = a;
    d.a.ld = lda;
    d.a.bs[0] = bs;
    d.m = m;
    d.n = n;
    d.k = k;
    d.lower = lower;
    d.info = (int32_t *)info;
    d.info_bs[0] = ibs;
    dg_cpu_dense_run(&d);
    return cudaSuccess;
}

cudaError_t dg_cu_int_copy(const void *src, int src64, int64_t src_bs, void *dst, int dst64,
                           int64_t dst_bs, int64_t per, int64_t batch, cudaStream_t s)
{
    int64_t r, c;
    (void)s;
    for (r = 0; r < batch; r++)
        for (c = 0; c < per; c++) {
            const int64_t v = src64 ? ((const int64_t *)src)[r * src_bs + c]
                                    : ((const int32_t *)src)[r * src_bs + c];
            if (dst64)
                ((int64_t *)dst)[r * dst_bs + c] = v;
            else
                ((int32_t *)dst)[r * dst_bs + c] = (int32_t)v;
        }
    return cudaSuccess;
}

/* ---- handles ---------------------------------------------------------------------- */

static int nhandles;

static void *handle(void)
{
    nhandles++;
    return malloc(8);
}
static void drop(void *h)
{
    nhandles--;
    free(h);
}

/* create and destroy of one kind of handle (counted: all must go) */
#define HANDLE(T, S, create, destroy, ok)        \
    S create(T *h)                               \
    {                                            \
        *h = (T)handle();                        \
        return ok;                               \
    }                                            \
    S destroy(T h)                               \
    {                                            \
        drop(h);                                 \
        return ok;                               \
    }
HANDLE(cusolverDnHandle_t, cusolverStatus_t, cusolverDnCreate, cusolverDnDestroy,
       CUSOLVER_STATUS_SUCCESS)
HANDLE(cusolverDnParams_t, cusolverStatus_t, cusolverDnCreateParams, cusolverDnDestroyParams,
       CUSOLVER_STATUS_SUCCESS)
HANDLE(gesvdjInfo_t, cusolverStatus_t, cusolverDnCreateGesvdjInfo, cusolverDnDestroyGesvdjInfo,
       CUSOLVER_STATUS_SUCCESS)
HANDLE(cublasHandle_t, cublasStatus_t, cublasCreate_v2, cublasDestroy_v2, CUBLAS_STATUS_SUCCESS)

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t s)
{
    (void)s;
    return h ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    (void)s;
    return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
const char *cublasGetStatusString(cublasStatus_t s) { (void)s; return "mock"; }

/* ---- cuSOLVER's 64-bit API ----------------------------------------------------------- */

/* Every _bufferSize of the 64-bit API: its types checked, the same sizes. */
static cusolverStatus_t x_size(cudaDataType a, cudaDataType compute, size_t *wd, size_t *wh)
{
    SOLVER_RULE(dtype_of(a) >= 0 && a == compute, "types %d, %d", (int)a, (int)compute);
    *wd = WS_DEVICE;
    *wh = WS_HOST;
    return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXpotrf_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                             cublasFillMode_t uplo, int64_t n, cudaDataType t,
                                             const void *A, int64_t lda, cudaDataType ct,
                                             size_t *wd, size_t *wh)
{
    (void)h, (void)p, (void)uplo, (void)A;
    SOLVER_RULE(n >= 0 && lda >= max1(n), "n %lld lda %lld", (long long)n, (long long)lda);
    return x_size(t, ct, wd, wh);
}
cusolverStatus_t cusolverDnXpotrf(cusolverDnHandle_t h, cusolverDnParams_t p,
                                  cublasFillMode_t uplo, int64_t n, cudaDataType t, void *A,
                                  int64_t lda, cudaDataType ct, void *dws, size_t wd, void *hws,
                                  size_t wh, int *info)
{
    dg_dense_desc d = one(DG_DENSE_POTRF, dtype_of(t));
    (void)h, (void)p;
    SOLVER_RULE(n >= 0 && lda >= max1(n) && info && t == ct && d.dtype >= 0, "arguments");
    d.lower = uplo == CUBLAS_FILL_MODE_LOWER;
    d.n = n;
    return x_run(&d, A, lda, info, dws, wd, hws, wh);
}

/* The typed 32-bit potrf (cholesky of sizes below 2^31): its workspace size
 * in elements, then the run, as CuPy calls them. */
#define TYPED_POTRF(S, T, DT)                                                               \
    cusolverStatus_t cusolverDn##S##potrf_bufferSize(cusolverDnHandle_t h,                 \
                                                     cublasFillMode_t uplo, int n, T *A,   \
                                                     int lda, int *lw)                     \
    {                                                                                       \
        (void)h, (void)uplo, (void)A;                                                       \
        SOLVER_RULE(n >= 0 && lda >= max1(n), "n %d lda %d", n, lda);                      \
        *lw = WS_DEVICE;                                                                    \
        return CUSOLVER_STATUS_SUCCESS;                                                     \
    }                                                                                       \
    cusolverStatus_t cusolverDn##S##potrf(cusolverDnHandle_t h, cublasFillMode_t uplo,     \
                                          int n, T *A, int lda, T *ws, int lw, int *info)   \
    {                                                                                       \
        dg_dense_desc d = one(DG_DENSE_POTRF, DT);                                          \
        (void)h;                                                                            \
        SOLVER_RULE(n >= 0 && lda >= max1(n) && info && ws && lw >= WS_DEVICE, "arguments"); \
        memset(ws, 0xab, (size_t)lw * sizeof(T));                                           \
        d.lower = uplo == CUBLAS_FILL_MODE_LOWER;                                           \
        d.n = n;                                                                            \
        return (cusolverStatus_t)run_one(&d, A, lda, info);                                 \
    }
TYPED_POTRF(S, float, DG_FLOAT32)
TYPED_POTRF(D, double, DG_FLOAT64)
TYPED_POTRF(C, cuComplex, DG_COMPLEX64)
TYPED_POTRF(Z, cuDoubleComplex, DG_COMPLEX128)

cusolverStatus_t cusolverDnXgetrf_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                             int64_t m, int64_t n, cudaDataType t,
                                             const void *A, int64_t lda, cudaDataType ct,
                                             size_t *wd, size_t *wh)
{
    (void)h, (void)p, (void)A;
    SOLVER_RULE(m >= 0 && n >= 0 && lda >= max1(m), "m %lld lda %lld", (long long)m,
                (long long)lda);
    return x_size(t, ct, wd, wh);
}
cusolverStatus_t cusolverDnXgetrf(cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m,
                                  int64_t n, cudaDataType t, void *A, int64_t lda,
                                  int64_t *ipiv, cudaDataType ct, void *dws, size_t wd,
                                  void *hws, size_t wh, int *info)
{
    dg_dense_desc d = one(DG_DENSE_GETRF, dtype_of(t));
    (void)h, (void)p;
    SOLVER_RULE(m >= 0 && n >= 0 && lda >= max1(m) && ipiv && info && t == ct && d.dtype >= 0,
                "arguments");
    d.m = m;
    d.n = n;
    d.ipiv = ipiv;
    return x_run(&d, A, lda, info, dws, wd, hws, wh);
}

cusolverStatus_t cusolverDnXgetrs(cusolverDnHandle_t h, cusolverDnParams_t p,
                                  cublasOperation_t trans, int64_t n, int64_t nrhs,
                                  cudaDataType ta, const void *A, int64_t lda,
                                  const int64_t *ipiv, cudaDataType tb, void *B, int64_t ldb,
                                  int *info)
{
    dg_dense_desc d = one(DG_DENSE_GETRS, dtype_of(ta));
    (void)h, (void)p;
    SOLVER_RULE(n >= 0 && nrhs >= 0 && lda >= max1(n) && ldb >= max1(n) && ipiv && info &&
                    ta == tb && d.dtype >= 0, "arguments");
    d.trans = op_code(trans);
    d.n = n;
    d.k = nrhs;
    d.b.p = (char *)B;
    d.b.ld = ldb;
    d.ipiv = (int64_t *)ipiv;
    return (cusolverStatus_t)run_one(&d, A, lda, info);
}

cusolverStatus_t cusolverDnXgeqrf_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                             int64_t m, int64_t n, cudaDataType t,
                                             const void *A, int64_t lda, cudaDataType tt,
                                             const void *tau, cudaDataType ct, size_t *wd,
                                             size_t *wh)
{
    (void)h, (void)p, (void)A, (void)tau;
    SOLVER_RULE(m >= 0 && n >= 0 && lda >= max1(m) && tt == t, "arguments");
    return x_size(t, ct, wd, wh);
}
cusolverStatus_t cusolverDnXgeqrf(cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m,
                                  int64_t n, cudaDataType t, void *A, int64_t lda,
                                  cudaDataType tt, void *tau, cudaDataType ct, void *dws,
                                  size_t wd, void *hws, size_t wh, int *info)
{
    dg_dense_desc d = one(DG_DENSE_GEQRF, dtype_of(t));
    (void)h, (void)p;
    SOLVER_RULE(m >= 0 && n >= 0 && lda >= max1(m) && tau && info && tt == t && t == ct &&
                    d.dtype >= 0, "arguments");
    d.m = m;
    d.n = n;
    d.w = (char *)tau;
    return x_run(&d, A, lda, info, dws, wd, hws, wh);
}

cusolverStatus_t cusolverDnXsyevd_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                             cusolverEigMode_t jobz, cublasFillMode_t uplo,
                                             int64_t n, cudaDataType t, const void *A,
                                             int64_t lda, cudaDataType tw, const void *W,
                                             cudaDataType ct, size_t *wd, size_t *wh)
{
    (void)h, (void)p, (void)jobz, (void)uplo, (void)A, (void)W;
    SOLVER_RULE(n >= 0 && lda >= max1(n) && tw == real_of(t), "arguments");
    return x_size(t, ct, wd, wh);
}
cusolverStatus_t cusolverDnXsyevd(cusolverDnHandle_t h, cusolverDnParams_t p,
                                  cusolverEigMode_t jobz, cublasFillMode_t uplo, int64_t n,
                                  cudaDataType t, void *A, int64_t lda, cudaDataType tw, void *W,
                                  cudaDataType ct, void *dws, size_t wd, void *hws, size_t wh,
                                  int *info)
{
    dg_dense_desc d = one(DG_DENSE_SYEVD, dtype_of(t));
    (void)h, (void)p;
    SOLVER_RULE(n >= 0 && lda >= max1(n) && W && info && tw == real_of(t) && t == ct &&
                    d.dtype >= 0, "arguments");
    d.job = jobz == CUSOLVER_EIG_MODE_VECTOR;
    d.lower = uplo == CUBLAS_FILL_MODE_LOWER;
    d.n = n;
    d.w = (char *)W;
    return x_run(&d, A, lda, info, dws, wd, hws, wh);
}

/* Xgeev (right eigenvectors only: jobvl NOVECTOR; LAPACK's geev types: W
 * complex of A's precision, or real and 2n long for a real A, which the
 * mapping does not use; VL, VR and the compute type A's).  Held to the
 * worst it might do beyond its documentation, as gesvdj does: VR's n x n
 * part is written whatever jobvr says, so VR must be a matrix (the mapping
 * gives a scratch one without vectors). */
static cusolverStatus_t geev_check(cusolverEigMode_t jobvl, int64_t n, cudaDataType t,
                                   int64_t lda, cudaDataType tw, const void *W, cudaDataType tvl,
                                   int64_t ldvl, cudaDataType tvr, const void *VR, int64_t ldvr,
                                   cudaDataType ct)
{
    const int cx = t == CUDA_C_32F || t == CUDA_C_64F;
    const cudaDataType cw = real_of(t) == CUDA_R_32F ? CUDA_C_32F : CUDA_C_64F;
    SOLVER_RULE(jobvl == CUSOLVER_EIG_MODE_NOVECTOR, "jobvl %d: left vectors not asked",
                (int)jobvl);
    SOLVER_RULE(n >= 0 && lda >= max1(n) && ldvl >= 1 && W != NULL, "n %lld lda %lld ldvl %lld",
                (long long)n, (long long)lda, (long long)ldvl);
    SOLVER_RULE(tw == cw || (!cx && tw == t), "W's type %d for A's %d", (int)tw, (int)t);
    SOLVER_RULE(tvl == t && tvr == t && ct == t, "VL, VR, compute types %d %d %d for A's %d",
                (int)tvl, (int)tvr, (int)ct, (int)t);
    SOLVER_RULE(VR != NULL && ldvr >= max1(n), "VR %p ldvr %lld: an n x n matrix", VR,
                (long long)ldvr);
    return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t cusolverDnXgeev_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                            cusolverEigMode_t jobvl, cusolverEigMode_t jobvr,
                                            int64_t n, cudaDataType t, const void *A,
                                            int64_t lda, cudaDataType tw, const void *W,
                                            cudaDataType tvl, const void *VL, int64_t ldvl,
                                            cudaDataType tvr, const void *VR, int64_t ldvr,
                                            cudaDataType ct, size_t *wd, size_t *wh)
{
    cusolverStatus_t s = geev_check(jobvl, n, t, lda, tw, W, tvl, ldvl, tvr, VR, ldvr, ct);
    (void)h, (void)p, (void)jobvr, (void)A, (void)VL;
    return s != CUSOLVER_STATUS_SUCCESS ? s : x_size(t, ct, wd, wh);
}
cusolverStatus_t cusolverDnXgeev(cusolverDnHandle_t h, cusolverDnParams_t p,
                                 cusolverEigMode_t jobvl, cusolverEigMode_t jobvr, int64_t n,
                                 cudaDataType t, void *A, int64_t lda, cudaDataType tw, void *W,
                                 cudaDataType tvl, void *VL, int64_t ldvl, cudaDataType tvr,
                                 void *VR, int64_t ldvr, cudaDataType ct, void *dws, size_t wd,
                                 void *hws, size_t wh, int *info)
{
    dg_dense_desc d = one(DG_DENSE_GEEV, dtype_of(t));
    cusolverStatus_t s = geev_check(jobvl, n, t, lda, tw, W, tvl, ldvl, tvr, VR, ldvr, ct);
    int64_t j;
    (void)h, (void)p, (void)VL;
    if (s != CUSOLVER_STATUS_SUCCESS)
        return s;
    SOLVER_RULE(info != NULL && (tw == CUDA_C_32F || tw == CUDA_C_64F),
                "info %p, W's type %d (the mapping's: complex)", (void *)info, (int)tw);
    d.job = jobvr == CUSOLVER_EIG_MODE_VECTOR;
    if (!d.job)
        for (j = 0; j < n; j++)
            memset((char *)VR + (size_t)(j * ldvr * dg_dtype_size(d.dtype)), 0x5a,
                   (size_t)(n * dg_dtype_size(d.dtype)));
    d.n = n;
    d.w = (char *)W;
    d.u.p = (char *)VR;
    d.u.ld = ldvr;
    return x_run(&d, A, lda, info, dws, wd, hws, wh);
}

/* gesvd's job and the columns of its U and rows of its VT, or -1. */
static int svd_job(signed char ju, signed char jvt)
{
    if (ju != jvt)
        return -1;
    return ju == 'N' ? 0 : ju == 'S' ? 1 : ju == 'A' ? 2 : -1;
}

cusolverStatus_t cusolverDnXgesvd_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                             signed char ju, signed char jvt, int64_t m,
                                             int64_t n, cudaDataType t, const void *A,
                                             int64_t lda, cudaDataType ts, const void *S,
                                             cudaDataType tu, const void *U, int64_t ldu,
                                             cudaDataType tv, const void *VT, int64_t ldvt,
                                             cudaDataType ct, size_t *wd, size_t *wh)
{
    const int job = svd_job(ju, jvt);
    (void)h, (void)p, (void)A, (void)S, (void)U, (void)VT;
    SOLVER_RULE(job >= 0 && m >= n && n >= 0 && lda >= max1(m) && ts == real_of(t) &&
                    tu == t && tv == t && ldu >= 1 && ldvt >= 1,
                "job %c%c m %lld n %lld (gesvd takes m >= n)", ju, jvt, (long long)m,
                (long long)n);
    return x_size(t, ct, wd, wh);
}
cusolverStatus_t cusolverDnXgesvd(cusolverDnHandle_t h, cusolverDnParams_t p, signed char ju,
                                  signed char jvt, int64_t m, int64_t n, cudaDataType t,
                                  void *A, int64_t lda, cudaDataType ts, void *S,
                                  cudaDataType tu, void *U, int64_t ldu, cudaDataType tv,
                                  void *VT, int64_t ldvt, cudaDataType ct, void *dws, size_t wd,
                                  void *hws, size_t wh, int *info)
{
    const int job = svd_job(ju, jvt);
    dg_dense_desc d = one(DG_DENSE_GESVD, dtype_of(t));
    (void)h, (void)p;
    SOLVER_RULE(job >= 0 && m >= n && n >= 0 && lda >= max1(m) && S && info &&
                    ts == real_of(t) && tu == t && tv == t && t == ct && d.dtype >= 0,
                "arguments (job %c, m %lld, n %lld)", ju, (long long)m, (long long)n);
    SOLVER_RULE(job == 0 || (U && VT && ldu >= max1(m) && ldvt >= max1(n)),
                "U %p ldu %lld, VT %p ldvt %lld", U, (long long)ldu, VT, (long long)ldvt);
    d.job = job;
    d.m = m;
    d.n = n;
    d.w = (char *)S;
    d.u.p = (char *)U;
    d.u.ld = ldu;
    d.vt.p = (char *)VT;
    d.vt.ld = ldvt;
    return x_run(&d, A, lda, info, dws, wd, hws, wh);
}

/* ---- cuSOLVER's 32-bit API: orgqr / ungqr, gesvdj ------------------------------------ */

static cusolverStatus_t orgqr_size(int m, int n, int k, int lda, int *lwork)
{
    SOLVER_RULE(m >= n && n >= k && k >= 0 && lda >= max1(m), "m %d n %d k %d lda %d", m, n, k,
                lda);
    *lwork = LWORK;
    return CUSOLVER_STATUS_SUCCESS;
}
static cusolverStatus_t orgqr(int dtype, int m, int n, int k, void *A, int lda,
                              const void *tau, void *work, int lwork, int *info)
{
    dg_dense_desc d = one(DG_DENSE_ORGQR, dtype);
    SOLVER_RULE(m >= n && n >= k && k >= 0 && lda >= max1(m) && tau && info, "arguments");
    SOLVER_RULE(work && lwork >= LWORK, "work %p lwork %d", work, lwork);
    memset(work, 0xab, (size_t)LWORK * (size_t)dg_dtype_size(dtype));
    d.m = m;
    d.n = n;
    d.k = k;
    d.w = (char *)tau;
    return (cusolverStatus_t)run_one(&d, A, lda, info);
}

/* gesvdj: checked, then LAPACK's SVD with V = VT^H.  It writes the m x ucols
 * part of U and the n x vcols part of V whatever jobz says. */
static cusolverStatus_t gesvdj(int dtype, cusolverEigMode_t jobz, int econ, int m, int n,
                               void *A, int lda, void *S, void *U, int ldu, void *V, int ldv,
                               void *work, int lwork, int *info, gesvdjInfo_t params)
{
    const int mn = m < n ? m : n, ucols = econ ? mn : m, vcols = econ ? mn : n;
    const size_t esz = (size_t)dg_dtype_size(dtype);
    const int cx = dtype == DG_COMPLEX64 || dtype == DG_COMPLEX128;
    dg_dense_desc d = one(DG_DENSE_GESVD, dtype);
    char *vt;
    int i, j;
    ngesvdj++;
    SOLVER_RULE(m >= 0 && n >= 0 && lda >= max1(m) && ldu >= max1(m) && ldv >= max1(n) && S &&
                    info && params, "m %d n %d lda %d ldu %d ldv %d", m, n, lda, ldu, ldv);
    SOLVER_RULE(U != NULL && V != NULL, "U %p V %p: gesvdj uses both even without vectors "
                "(jobz %d; on a GPU a NULL one is an illegal address)", U, V, (int)jobz);
    SOLVER_RULE(work && lwork >= LWORK, "work %p lwork %d", work, lwork);
    memset(work, 0xab, (size_t)LWORK * esz);
    for (j = 0; j < ucols; j++)
        memset((char *)U + (size_t)j * (size_t)ldu * esz, 0, (size_t)m * esz);
    for (j = 0; j < vcols; j++)
        memset((char *)V + (size_t)j * (size_t)ldv * esz, 0, (size_t)n * esz);
    vt = (char *)calloc((size_t)max1(vcols) * (size_t)max1(n), esz);
    d.job = jobz == CUSOLVER_EIG_MODE_VECTOR ? (econ ? 1 : 2) : 0;
    d.m = m;
    d.n = n;
    d.w = (char *)S;
    d.u.p = (char *)U;
    d.u.ld = ldu;
    d.vt.p = vt;
    d.vt.ld = max1(vcols);
    run_one(&d, A, lda, info);
    if (d.job)
        for (i = 0; i < n; i++)
            for (j = 0; j < vcols; j++) {
                char *to = (char *)V + ((size_t)i + (size_t)j * (size_t)ldv) * esz;
                memcpy(to, vt + ((size_t)j + (size_t)i * (size_t)vcols) * esz, esz);
                if (cx && esz == 8)
                    ((float *)to)[1] = -((float *)to)[1];
                else if (cx)
                    ((double *)to)[1] = -((double *)to)[1];
            }
    free(vt);
    return CUSOLVER_STATUS_SUCCESS;
}

#define ORGQR(P, T, DT)                                                                     \
    cusolverStatus_t cusolverDn##P##_bufferSize(cusolverDnHandle_t h, int m, int n, int k,  \
                                                const T *A, int lda, const T *tau,          \
                                                int *lwork)                                 \
    {                                                                                       \
        (void)h, (void)A, (void)tau;                                                        \
        return orgqr_size(m, n, k, lda, lwork);                                             \
    }                                                                                       \
    cusolverStatus_t cusolverDn##P(cusolverDnHandle_t h, int m, int n, int k, T *A, int lda, \
                                   const T *tau, T *work, int lwork, int *info)             \
    {                                                                                       \
        (void)h;                                                                            \
        return orgqr(DT, m, n, k, A, lda, tau, work, lwork, info);                          \
    }
ORGQR(Sorgqr, float, DG_FLOAT32)
ORGQR(Dorgqr, double, DG_FLOAT64)
ORGQR(Cungqr, cuComplex, DG_COMPLEX64)
ORGQR(Zungqr, cuDoubleComplex, DG_COMPLEX128)

#define GESVDJ(P, T, R, DT)                                                                 \
    cusolverStatus_t cusolverDn##P##_bufferSize(                                            \
        cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, const T *A,   \
        int lda, const R *S, const T *U, int ldu, const T *V, int ldv, int *lwork,          \
        gesvdjInfo_t params)                                                                \
    {                                                                                       \
        (void)h, (void)jobz, (void)econ, (void)A, (void)S, (void)U, (void)V, (void)params;  \
        SOLVER_RULE(m >= 0 && n >= 0 && lda >= max1(m) && ldu >= max1(m) && ldv >= max1(n), \
                    "sizes");                                                               \
        *lwork = LWORK;                                                                     \
        return CUSOLVER_STATUS_SUCCESS;                                                     \
    }                                                                                       \
    cusolverStatus_t cusolverDn##P(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ,  \
                                   int m, int n, T *A, int lda, R *S, T *U, int ldu, T *V,  \
                                   int ldv, T *work, int lwork, int *info,                  \
                                   gesvdjInfo_t params)                                     \
    {                                                                                       \
        (void)h;                                                                            \
        return gesvdj(DT, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info,   \
                      params);                                                              \
    }
GESVDJ(Sgesvdj, float, float, DG_FLOAT32)
GESVDJ(Dgesvdj, double, double, DG_FLOAT64)
GESVDJ(Cgesvdj, cuComplex, float, DG_COMPLEX64)
GESVDJ(Zgesvdj, cuDoubleComplex, double, DG_COMPLEX128)

/* ---- batched routines: one matrix at a time through the ones above --------------- */

static cusolverStatus_t potrf_batched(int dtype, cublasFillMode_t uplo, int n, void *const *A,
                                      int lda, int *info, int batch)
{
    int i;
    SOLVER_RULE(n >= 0 && lda >= max1(n) && batch >= 0 && A && info, "arguments");
    for (i = 0; i < batch; i++) {
        dg_dense_desc d = one(DG_DENSE_POTRF, dtype);
        d.lower = uplo == CUBLAS_FILL_MODE_LOWER;
        d.n = n;
        d.a.p = (char *)A[i];
        d.a.ld = lda;
        d.info = info + i;
        dg_cpu_dense_run(&d);
    }
    nbatched++;
    return CUSOLVER_STATUS_SUCCESS;
}

static cublasStatus_t getrf_batched(int dtype, int n, void *const *A, int lda, int *P,
                                    int *info, int batch)
{
    int64_t *piv = (int64_t *)malloc((size_t)max1(n) * sizeof(int64_t));
    int i, j;
    BLAS_RULE(n >= 0 && lda >= max1(n) && batch >= 0 && A && P && info, "arguments");
    for (i = 0; i < batch; i++) {
        dg_dense_desc d = one(DG_DENSE_GETRF, dtype);
        d.m = d.n = n;
        d.a.p = (char *)A[i];
        d.a.ld = lda;
        d.ipiv = piv;
        d.info = info + i;
        dg_cpu_dense_run(&d);
        for (j = 0; j < n; j++)
            P[(size_t)i * (size_t)n + (size_t)j] = (int)piv[j];
    }
    free(piv);
    nbatched++;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t getrs_batched(int dtype, cublasOperation_t trans, int n, int nrhs,
                                    const void *const *A, int lda, const int *P,
                                    void *const *B, int ldb, int *info, int batch)
{
    int64_t *piv = (int64_t *)malloc((size_t)max1(n) * sizeof(int64_t));
    int32_t dummy = 0;
    int i, j;
    BLAS_RULE(n >= 0 && nrhs >= 0 && lda >= max1(n) && ldb >= max1(n) && batch >= 0 && A &&
                  P && B && info, "arguments");
    for (i = 0; i < batch; i++) {
        dg_dense_desc d = one(DG_DENSE_GETRS, dtype);
        for (j = 0; j < n; j++)
            piv[j] = P[(size_t)i * (size_t)n + (size_t)j];
        d.trans = op_code(trans);
        d.n = n;
        d.k = nrhs;
        d.a.p = (char *)A[i];
        d.a.ld = lda;
        d.b.p = (char *)B[i];
        d.b.ld = ldb;
        d.ipiv = piv;
        d.info = &dummy;
        dg_cpu_dense_run(&d);
    }
    *info = 0;
    free(piv);
    nbatched++;
    return CUBLAS_STATUS_SUCCESS;
}

#define BATCHED(S, T, DT)                                                                   \
    cusolverStatus_t cusolverDn##S##potrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, \
                                                 int n, T *A[], int lda, int *info, int nb) \
    {                                                                                       \
        (void)h;                                                                            \
        return potrf_batched(DT, uplo, n, (void *const *)A, lda, info, nb);                \
    }                                                                                       \
    cublasStatus_t cublas##S##getrfBatched(cublasHandle_t h, int n, T *const A[], int lda,  \
                                           int *P, int *info, int nb)                       \
    {                                                                                       \
        (void)h;                                                                            \
        return getrf_batched(DT, n, (void *const *)A, lda, P, info, nb);                   \
    }                                                                                       \
    cublasStatus_t cublas##S##getrsBatched(cublasHandle_t h, cublasOperation_t trans, int n, \
                                           int nrhs, const T *const A[], int lda,           \
                                           const int *P, T *const B[], int ldb, int *info,  \
                                           int nb)                                          \
    {                                                                                       \
        (void)h;                                                                            \
        return getrs_batched(DT, trans, n, nrhs, (const void *const *)A, lda, P,           \
                             (void *const *)B, ldb, info, nb);                              \
    }
BATCHED(S, float, DG_FLOAT32)
BATCHED(D, double, DG_FLOAT64)
BATCHED(C, cuComplex, DG_COMPLEX64)
BATCHED(Z, cuDoubleComplex, DG_COMPLEX128)

/* ---- cuBLAS: trsm, geam ---------------------------------------------------------------- */

static cublasStatus_t trsm(int dtype, cublasSideMode_t side, cublasFillMode_t uplo,
                           cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
                           const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb)
{
    const int single = dtype == DG_FLOAT32 || dtype == DG_COMPLEX64;
    const int cx = dtype == DG_COMPLEX64 || dtype == DG_COMPLEX128;
    const double are = single ? ((const float *)alpha)[0] : ((const double *)alpha)[0];
    const double aim = !cx ? 0 : single ? ((const float *)alpha)[1] : ((const double *)alpha)[1];
    dg_dense_desc d = one(DG_DENSE_TRSM, dtype);
    BLAS_RULE(m >= 0 && n >= 0 && lda >= max1(side == CUBLAS_SIDE_LEFT ? m : n) &&
                  ldb >= max1(m), "m %lld n %lld lda %lld ldb %lld", (long long)m,
              (long long)n, (long long)lda, (long long)ldb);
    BLAS_RULE(are == 1 && aim == 0, "alpha %g%+gi (the mapping passes 1)", are, aim);
    d.right = side == CUBLAS_SIDE_RIGHT;
    d.lower = uplo == CUBLAS_FILL_MODE_LOWER;
    d.trans = op_code(trans);
    d.unit = diag == CUBLAS_DIAG_UNIT;
    d.m = m;
    d.n = n;
    d.b.p = (char *)B;
    d.b.ld = ldb;
    return (cublasStatus_t)run_one(&d, A, lda, NULL);
}

/* C = alpha op(A) + beta op(B) (cuBLAS's geam: B not read when beta is 0;
 * in place only as C = B with ldb == ldc, op(B) = B, or the same for A). */
static cublasStatus_t geam(int dtype, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                           const void *alpha, const void *A, int lda, const void *beta,
                           const void *B, int ldb, void *C, int ldc)
{
    const int single = dtype == DG_FLOAT32 || dtype == DG_COMPLEX64;
    const int cx = dtype == DG_COMPLEX64 || dtype == DG_COMPLEX128;
    const size_t esz = (size_t)dg_dtype_size(dtype);
    double al[2] = {0, 0}, be[2] = {0, 0};
    int i, j, q;
    for (q = 0; q < (cx ? 2 : 1); q++) {
        al[q] = single ? ((const float *)alpha)[q] : ((const double *)alpha)[q];
        be[q] = single ? ((const float *)beta)[q] : ((const double *)beta)[q];
    }
    BLAS_RULE(m >= 0 && n >= 0 && ldc >= max1(m) &&
                  lda >= max1(ta == CUBLAS_OP_N ? m : n) &&
                  ldb >= max1(tb == CUBLAS_OP_N ? m : n), "sizes");
    BLAS_RULE(C != B || (ldb == ldc && tb == CUBLAS_OP_N), "C = B in place needs ldb == ldc "
              "and op(B) = B");
    BLAS_RULE(C != A || (lda == ldc && ta == CUBLAS_OP_N), "C = A in place needs lda == ldc "
              "and op(A) = A");
    for (j = 0; j < n; j++)
        for (i = 0; i < m; i++) {
            double v[2] = {0, 0}, x[2] = {0, 0}, y[2] = {0, 0};
            const char *pa = (const char *)A + (ta == CUBLAS_OP_N
                                                    ? ((size_t)i + (size_t)j * (size_t)lda)
                                                    : ((size_t)j + (size_t)i * (size_t)lda)) *
                                                   esz;
            char *pc = (char *)C + ((size_t)i + (size_t)j * (size_t)ldc) * esz;
            for (q = 0; q < (cx ? 2 : 1); q++)
                x[q] = single ? ((const float *)pa)[q] : ((const double *)pa)[q];
            if (ta == CUBLAS_OP_C)
                x[1] = -x[1];
            v[0] = al[0] * x[0] - al[1] * x[1];
            v[1] = al[0] * x[1] + al[1] * x[0];
            if (be[0] != 0 || be[1] != 0) {
                const char *pb = (const char *)B + (tb == CUBLAS_OP_N
                                                        ? ((size_t)i + (size_t)j * (size_t)ldb)
                                                        : ((size_t)j + (size_t)i * (size_t)ldb)) *
                                                       esz;
                for (q = 0; q < (cx ? 2 : 1); q++)
                    y[q] = single ? ((const float *)pb)[q] : ((const double *)pb)[q];
                if (tb == CUBLAS_OP_C)
                    y[1] = -y[1];
                v[0] += be[0] * y[0] - be[1] * y[1];
                v[1] += be[0] * y[1] + be[1] * y[0];
            }
            for (q = 0; q < (cx ? 2 : 1); q++) {
                if (single)
                    ((float *)pc)[q] = (float)v[q];
                else
                    ((double *)pc)[q] = v[q];
            }
        }
    ncalls++;
    return CUBLAS_STATUS_SUCCESS;
}

#define BLAS3(S, T, DT)                                                                     \
    cublasStatus_t cublas##S##trsm_v2_64(cublasHandle_t h, cublasSideMode_t side,           \
                                         cublasFillMode_t uplo, cublasOperation_t trans,    \
                                         cublasDiagType_t diag, int64_t m, int64_t n,       \
                                         const T *alpha, const T *A, int64_t lda, T *B,     \
                                         int64_t ldb)                                       \
    {                                                                                       \
        (void)h;                                                                            \
        return trsm(DT, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);              \
    }                                                                                       \
    cublasStatus_t cublas##S##geam(cublasHandle_t h, cublasOperation_t ta,                  \
                                   cublasOperation_t tb, int m, int n, const T *alpha,      \
                                   const T *A, int lda, const T *beta, const T *B, int ldb, \
                                   T *C, int ldc)                                           \
    {                                                                                       \
        (void)h;                                                                            \
        return geam(DT, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);                 \
    }
BLAS3(S, float, DG_FLOAT32)
BLAS3(D, double, DG_FLOAT64)
BLAS3(C, cuComplex, DG_COMPLEX64)
BLAS3(Z, cuDoubleComplex, DG_COMPLEX128)

/* ---- the test ----------------------------------------------------------------------- */

/* One operand of a batch: its buffer (both copies) and layout. */
typedef struct operand {
    char *cu, *cpu;  /* the copy cu_dense writes, the one dg_cpu_dense_run writes */
    int64_t size;    /* bytes */
    int64_t ld;      /* matrices: leading dimension (elements) */
    int64_t bs[DG_MAXDIM];
} operand;

static void fill_random(char *p, int64_t bytes, int dtype)
{
    int64_t i;
    if (dtype == DG_FLOAT32 || dtype == DG_COMPLEX64)
        for (i = 0; i < bytes / 4; i++)
            ((float *)p)[i] = (float)(mock_rnd(2001) - 1000) / 500.0f;
    else if (dtype == DG_FLOAT64 || dtype == DG_COMPLEX128)
        for (i = 0; i < bytes / 8; i++)
            ((double *)p)[i] = (double)(mock_rnd(2001) - 1000) / 500.0;
    else
        for (i = 0; i < bytes; i++)
            p[i] = (char)mock_rnd(256);
}

/* An operand of rows x cols matrices (cols 0: a vector of rows elements;
 * rows 0 too: one value) of esz bytes over the batch, with padding: the
 * leading dimension and gaps between matrices. */
static void make_operand(operand *o, const dg_dense_desc *d, int64_t rows, int64_t cols,
                         int64_t esz, int dtype)
{
    int64_t mat, acc;
    int q;
    memset(o, 0, sizeof *o);
    o->ld = max1(rows) + (cols ? mock_rnd(3) : 0);
    mat = cols ? o->ld * cols : (rows ? rows : 1);
    acc = (mat + mock_rnd(2)) * esz;
    for (q = d->nbatch - 1; q >= 0; q--) {
        o->bs[q] = acc;
        acc = acc * d->batch[q] + mock_rnd(2) * esz;
    }
    o->size = acc > 0 ? acc : esz;
    o->cu = (char *)malloc((size_t)o->size);
    o->cpu = (char *)malloc((size_t)o->size);
    fill_random(o->cu, o->size, dtype);
}

/* The matrix of batch index idx of o. */
static char *matrix_at(const operand *o, const dg_dense_desc *d, const int64_t *idx)
{
    char *p = o->cu;
    int q;
    for (q = 0; q < d->nbatch; q++)
        p += idx[q] * o->bs[q];
    return p;
}

/* Makes each n x n matrix of the operand Hermitian positive definite
 * (a + a^H + 2n I) or, without hpd, adds 4 to its diagonal (a triangle of
 * it then solves without overflow). */
static void shape_matrices(operand *o, const dg_dense_desc *d, int64_t n, int dtype, int hpd)
{
    const int64_t esz = dg_dtype_size(dtype);
    const int single = dtype == DG_FLOAT32 || dtype == DG_COMPLEX64;
    const int cx = dtype == DG_COMPLEX64 || dtype == DG_COMPLEX128;
    int64_t idx[DG_MAXDIM] = {0}, i, j;
    do {
        char *p = matrix_at(o, d, idx);
        for (j = 0; j < n; j++)
            for (i = 0; i < n; i++) {
                char *x = p + (i + j * o->ld) * esz, *y = p + (j + i * o->ld) * esz;
                int part;
                if (!hpd) {
                    if (i == j) {
                        if (single)
                            ((float *)x)[0] += 4;
                        else
                            ((double *)x)[0] += 4;
                    }
                    continue;
                }
                if (i > j)
                    continue;
                for (part = 0; part < (cx ? 2 : 1); part++) {
                    double v = single ? ((float *)x)[part] + ((float *)y)[part]
                                      : ((double *)x)[part] + ((double *)y)[part];
                    if (part == 1)
                        v = i == j ? 0 : v;
                    if (part == 0 && i == j)
                        v += 2.0 * (double)n;
                    if (single) {
                        ((float *)x)[part] = (float)v;
                        ((float *)y)[part] = (float)(part ? -v : v);
                    } else {
                        ((double *)x)[part] = v;
                        ((double *)y)[part] = part ? -v : v;
                    }
                }
            }
    } while (dg_dense_next_index(d, idx));
}

/* One element of each m x n matrix of the operand (anywhere) made a NaN or
 * an infinity: what TRIZERO's info reports where it zeroes it. */
static void spoil(operand *o, const dg_dense_desc *d, int64_t m, int64_t n, int dtype)
{
    const int64_t esz = dg_dtype_size(dtype);
    const int single = dtype == DG_FLOAT32 || dtype == DG_COMPLEX64;
    int64_t idx[DG_MAXDIM] = {0};
    do {
        const int64_t i = mock_rnd(m), j = mock_rnd(n);
        const double v = mock_rnd(2) ? NAN : -INFINITY;
        char *x = matrix_at(o, d, idx) + (i + j * o->ld) * esz;
        if (single)
            *(float *)x = (float)v;
        else
            *(double *)x = v;
    } while (dg_dense_next_index(d, idx));
}

/* Valid pivots (row i swapped with a row at or below it) in every vector. */
static void make_pivots(operand *o, const dg_dense_desc *d, int64_t n)
{
    int64_t idx[DG_MAXDIM] = {0}, i;
    do {
        int64_t *p = (int64_t *)matrix_at(o, d, idx);
        for (i = 0; i < n; i++)
            p[i] = i + 1 + mock_rnd(n - i);
    } while (dg_dense_next_index(d, idx));
}

static void set_mat(dg_dense_mat *m, const operand *o, int which_cpu)
{
    m->p = which_cpu ? o->cpu : o->cu;
    m->ld = o->ld;
    memcpy(m->bs, o->bs, sizeof m->bs);
}

static const char *op_name[] = {"potrf", "getrf", "getrs", "trsm",    "geqrf",
                                "orgqr", "syevd", "gesvd", "trizero", "geev"};

/* One random batch of one op through cu_dense and dg_cpu_dense_run. */
static int one_case(dg_backend_i *be, int trial)
{
    static const int dtypes[] = {DG_FLOAT32, DG_FLOAT64, DG_COMPLEX64, DG_COMPLEX128};
    const int op = (int)mock_rnd(DG_DENSE_NOPS), dtype = dtypes[mock_rnd(4)];
    const int64_t esz = dg_dtype_size(dtype);
    const int64_t resz = (dtype == DG_FLOAT32 || dtype == DG_COMPLEX64) ? 4 : 8;
    /* stacks of at least 4 small matrices take the batched routines */
    const int stacked = mock_rnd(3) == 0;
    dg_dense_desc d, dc;
    operand ops[7];
    int used[7] = {0}, r, q, bad = 0;
    int64_t m, n, k, mn;
    dg_error err = DG_ERROR_INIT;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.dtype = dtype;
    d.nbatch = stacked ? 1 : (int)mock_rnd(3);
    for (q = 0; q < d.nbatch; q++)
        d.batch[q] = stacked ? 4 + mock_rnd(3) : 1 + mock_rnd(3);
    m = 1 + mock_rnd(7);
    n = 1 + mock_rnd(7);
    k = mock_rnd(5);
    d.lower = (int)mock_rnd(2);
    d.trans = (int)mock_rnd(3);
    d.right = (int)mock_rnd(2);
    d.unit = (int)mock_rnd(2);
    d.job = (int)mock_rnd(op == DG_DENSE_GESVD ? 3 : 2);
    switch (op) {
    case DG_DENSE_POTRF:
    case DG_DENSE_SYEVD:
    case DG_DENSE_GEEV:
        m = n;
        break;
    case DG_DENSE_GETRF:
        if (stacked)
            m = n;
        break;
    case DG_DENSE_GETRS:
        m = n;
        k = 1 + k % 4;
        break;
    case DG_DENSE_ORGQR:
        if (m < n) {
            int64_t t = m;
            m = n;
            n = t;
        }
        if (k > n)
            k = n;
        break;
    case DG_DENSE_TRIZERO:
        k = mock_rnd(7) - 3;
        break;
    default:
        break;
    }
    mn = m < n ? m : n;
    d.m = m;
    d.n = n;
    d.k = k;
    /* the operands, as role_need (src/core/dg_dense_run.c) lays them out */
    switch (op) {
    case DG_DENSE_POTRF:
        make_operand(&ops[0], &d, n, n, esz, dtype);
        shape_matrices(&ops[0], &d, n, dtype, mock_rnd(4) != 0);
        used[0] = 1;
        break;
    case DG_DENSE_GETRF:
        make_operand(&ops[0], &d, m, n, esz, dtype);
        make_operand(&ops[5], &d, mn, 0, 8, -1);
        used[0] = used[5] = 1;
        break;
    case DG_DENSE_GETRS:
        make_operand(&ops[0], &d, n, n, esz, dtype);
        shape_matrices(&ops[0], &d, n, dtype, 0);
        make_operand(&ops[1], &d, n, k, esz, dtype);
        make_operand(&ops[5], &d, n, 0, 8, -1);
        make_pivots(&ops[5], &d, n);
        used[0] = used[1] = used[5] = 1;
        break;
    case DG_DENSE_TRSM:
        make_operand(&ops[0], &d, d.right ? n : m, d.right ? n : m, esz, dtype);
        shape_matrices(&ops[0], &d, d.right ? n : m, dtype, 0);
        make_operand(&ops[1], &d, m, n, esz, dtype);
        used[0] = used[1] = 1;
        break;
    case DG_DENSE_GEQRF:
        make_operand(&ops[0], &d, m, n, esz, dtype);
        make_operand(&ops[4], &d, mn, 0, esz, dtype);
        used[0] = used[4] = 1;
        break;
    case DG_DENSE_ORGQR:
        make_operand(&ops[0], &d, m, n, esz, dtype);
        make_operand(&ops[4], &d, k, 0, esz, dtype);
        used[0] = used[4] = 1;
        break;
    case DG_DENSE_SYEVD:
        make_operand(&ops[0], &d, n, n, esz, dtype);
        make_operand(&ops[4], &d, n, 0, resz, dtype == DG_COMPLEX64 ? DG_FLOAT32
                                                 : dtype == DG_COMPLEX128 ? DG_FLOAT64 : dtype);
        used[0] = used[4] = 1;
        break;
    case DG_DENSE_GESVD:
        make_operand(&ops[0], &d, m, n, esz, dtype);
        make_operand(&ops[4], &d, mn, 0, resz, dtype == DG_COMPLEX64 ? DG_FLOAT32
                                                  : dtype == DG_COMPLEX128 ? DG_FLOAT64 : dtype);
        used[0] = used[4] = 1;
        if (d.job) {
            make_operand(&ops[2], &d, m, d.job == 2 ? m : mn, esz, dtype);
            make_operand(&ops[3], &d, d.job == 2 ? n : mn, n, esz, dtype);
            used[2] = used[3] = 1;
        }
        break;
    case DG_DENSE_GEEV:
        make_operand(&ops[0], &d, n, n, esz, dtype);
        make_operand(&ops[4], &d, n, 0, 2 * resz, resz == 4 ? DG_COMPLEX64 : DG_COMPLEX128);
        used[0] = used[4] = 1;
        if (d.job) {
            make_operand(&ops[2], &d, n, n, esz, dtype);
            used[2] = 1;
        }
        break;
    default: /* TRIZERO */
        make_operand(&ops[0], &d, m, n, esz, dtype);
        if (mock_rnd(2))
            spoil(&ops[0], &d, m, n, dtype);
        used[0] = 1;
        break;
    }
    /* info: required by POTRF, GETRF, SYEVD, GESVD, GEEV, optional for the rest */
    if (op == DG_DENSE_POTRF || op == DG_DENSE_GETRF || op == DG_DENSE_SYEVD ||
        op == DG_DENSE_GESVD || op == DG_DENSE_GEEV || (op != DG_DENSE_TRSM && mock_rnd(2))) {
        make_operand(&ops[6], &d, 0, 0, 4, -1);
        used[6] = 1;
    }
    for (r = 0; r < 7; r++)
        if (used[r])
            memcpy(ops[r].cpu, ops[r].cu, (size_t)ops[r].size);
    dc = d;
    for (r = 0; r < 2; r++) {
        dg_dense_desc *x = r ? &dc : &d;
        if (used[0])
            set_mat(&x->a, &ops[0], r);
        if (used[1])
            set_mat(&x->b, &ops[1], r);
        if (used[2])
            set_mat(&x->u, &ops[2], r);
        if (used[3])
            set_mat(&x->vt, &ops[3], r);
        if (used[4]) {
            x->w = r ? ops[4].cpu : ops[4].cu;
            memcpy(x->w_bs, ops[4].bs, sizeof x->w_bs);
        }
        if (used[5]) {
            x->ipiv = (int64_t *)(r ? ops[5].cpu : ops[5].cu);
            memcpy(x->ipiv_bs, ops[5].bs, sizeof x->ipiv_bs);
        }
        if (used[6]) {
            x->info = (int32_t *)(r ? ops[6].cpu : ops[6].cu);
            memcpy(x->info_bs, ops[6].bs, sizeof x->info_bs);
        }
    }
    if (cu_dense(be, 0, DG_STREAM_COMPUTE, &d, &err) != DG_OK) {
        printf("trial %d (%s, %s, m %lld n %lld k %lld, job %d): cu_dense failed: %s\n", trial,
               op_name[op], dg_dtype_name(dtype), (long long)m, (long long)n, (long long)k,
               d.job, err.msg);
        bad = 1;
    } else {
        dg_cpu_dense_run(&dc);
        for (r = 0; r < 7; r++)
            if (used[r] && memcmp(ops[r].cu, ops[r].cpu, (size_t)ops[r].size) != 0) {
                printf("trial %d (%s, %s, m %lld n %lld k %lld, job %d, batch %d): operand %d "
                       "differs from the CPU backend's\n", trial, op_name[op],
                       dg_dtype_name(dtype), (long long)m, (long long)n, (long long)k, d.job,
                       d.nbatch, r);
                bad = 1;
            }
    }
    for (r = 0; r < 7; r++)
        if (used[r]) {
            free(ops[r].cu);
            free(ops[r].cpu);
        }
    return bad;
}

static const char *routine[DG_LAPACK_NROUTINES][2] = {
    {"potrf", "potrf"}, {"getrf", "getrf"}, {"getrs", "getrs"}, {"trsm", "trsm"},
    {"geqrf", "geqrf"}, {"orgqr", "ungqr"}, {"syevd", "heevd"}, {"gesdd", "gesdd"},
    {"geev", "geev"}};

int main(int argc, char **argv)
{
    dg_cpu_lapack fns;
    void *lib;
    cu_dev dev;
    cu_be b;
    int r, t, trials, failed = 0;
    if (argc < 2) {
        printf("usage: dense_mapping LIBSCIPY_OPENBLAS [TRIALS]\n");
        return 2;
    }
    trials = argc > 2 ? atoi(argv[2]) : 4000;
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("cannot load %s: %s\n", argv[1], dlerror());
        return 2;
    }
    for (r = 0; r < DG_LAPACK_NROUTINES; r++)
        for (t = 0; t < 4; t++) {
            char name[64];
            void *f;
            snprintf(name, sizeof name, "scipy_%c%s_64_", "sdcz"[t], routine[r][t >= 2]);
            f = dlsym(lib, name);
            if (!f) {
                printf("no %s in %s\n", name, argv[1]);
                return 2;
            }
            memcpy(&fns.fn[r][t], &f, sizeof f);
        }
    dg_cpu_dense_set_lapack(&fns);
    mock_backend_init(&b, &dev);
    for (t = 0; t < trials; t++)
        failed += one_case(&b.iface, t);
    cu_dense_destroy(&b);
    if (nhandles != 0) {
        printf("%d handles were not destroyed\n", nhandles);
        failed++;
    }
    printf("%d batches (%d single calls, %d batched, %d gesvdj), %d broken rules, %d failed\n",
           trials, ncalls, nbatched, ngesvdj, nviolations, failed);
    dlclose(lib);
    return failed != 0 || nviolations != 0;
}
