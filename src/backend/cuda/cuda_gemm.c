/* gemm(): matrix products on one GPU.  Float and complex dtypes go to cuBLAS
 * (float16 through cublasGemmEx with float32 accumulation), bool and
 * integers to kernels/gemm_int.cu.
 *
 * cuBLAS is column-major; dgarray's descriptor is row-major with any BLAS
 * layout per matrix (dg_gemm_blas_layout).  A row-major C (m x n, ldc) is
 * the column-major C^T (n x m), so C = A B is computed as C^T = B^T A^T:
 * cuBLAS's first operand is B, its second A, each transposed or not as its
 * memory already is the column-major matrix wanted.  A column-major C is
 * computed as C = A B directly.  One batch dimension is a strided batched
 * GEMM; further ones are a loop of those.  A matrix-vector product (m or n
 * 1, no batch) runs cuBLAS's gemv, which reads the matrix once at memory
 * speed (the GEMV of a conjugate-gradient step).
 *
 * One cuBLAS handle per device, created at its first product with a 32 MiB
 * workspace, used under a lock (a handle is not for two threads at once) on
 * the stream the core asks for; TF32 math only when the descriptor allows
 * it for float32.  The handles go with the backend (cu_gemm_destroy). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "cu_gemm_kernels.h"
#include "cuda_internal.h"

/* cuBLAS's workspace per device (NVIDIA's advice for Hopper). */
#define CU_BLAS_WORKSPACE ((size_t)32 << 20)
/* Largest batch count of one strided batched call. */
#define CU_BLAS_MAXBATCH 65535

struct cu_blas {
    pthread_mutex_t mu;
    int ndev;
    cublasHandle_t *h;  /* per device, NULL until its first product [mu] */
    void **ws;          /* per device workspace [mu] */
};

/* Serialises the creation of b->blas. */
static pthread_mutex_t blas_init_mu = PTHREAD_MUTEX_INITIALIZER;

/* Records the failure of the cuBLAS call `what` on dev: out of memory as
 * DG_ERR_DEVICE_NOMEM, anything else as DG_ERR_DEVICE with cuBLAS's name and
 * message for the status. */
static dg_status blas_fail(dg_error *err, cublasStatus_t s, int dev, const char *what)
{
    dg_status st;
    (void)cudaGetLastError();
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        return dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev,
                            "out of memory on device %d in %s", dev, what);
    st = dg_error_set(err, DG_ERR_DEVICE, dev, "cuBLAS error in %s on device %d: %s (%s)", what,
                      dev, cublasGetStatusString(s), cublasGetStatusName(s));
    if (err != NULL && err->code == DG_ERR_DEVICE && err->backend_code == 0)
        err->backend_code = (long)s;
    return st;
}

#define CB_CHECK(call, err, dev, what)                      \
    do {                                                    \
        cublasStatus_t cb_s_ = (call);                      \
        if (cb_s_ != CUBLAS_STATUS_SUCCESS)                 \
            return blas_fail((err), cb_s_, (dev), (what));  \
    } while (0)

/* The backend's cuBLAS state, made at the first product. */
static dg_status blas_state(cu_be *b, struct cu_blas **out, dg_error *err)
{
    struct cu_blas *bl = NULL;
    pthread_mutex_lock(&blas_init_mu);
    bl = b->blas;
    if (bl == NULL) {
        bl = (struct cu_blas *)calloc(1, sizeof(*bl));
        if (bl != NULL) {
            bl->h = (cublasHandle_t *)calloc((size_t)b->ndev, sizeof(cublasHandle_t));
            bl->ws = (void **)calloc((size_t)b->ndev, sizeof(void *));
            if (bl->h == NULL || bl->ws == NULL) {
                free(bl->h);
                free(bl->ws);
                free(bl);
                bl = NULL;
            } else {
                bl->ndev = b->ndev;
                pthread_mutex_init(&bl->mu, NULL);
                b->blas = bl;
            }
        }
    }
    pthread_mutex_unlock(&blas_init_mu);
    if (bl == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory for cuBLAS");
    *out = bl;
    return DG_OK;
}

/* Device dev's handle, made now if it has none, bound to stream s, with
 * TF32 math when tf32.  Call with bl->mu held and dev current. */
static dg_status blas_handle(struct cu_blas *bl, int dev, cudaStream_t s, int tf32,
                             cublasHandle_t *out, dg_error *err)
{
    if (bl->h[dev] == NULL) {
        cublasHandle_t h;
        void *ws = NULL;
        cudaError_t ce;
        CB_CHECK(cublasCreate(&h), err, dev, "cublasCreate");
        ce = cudaMalloc(&ws, CU_BLAS_WORKSPACE);
        if (ce != cudaSuccess) {
            cublasDestroy(h);
            return cu_fail(err, ce, dev, CU_BLAS_WORKSPACE, "cudaMalloc (cuBLAS workspace)");
        }
        bl->h[dev] = h;
        bl->ws[dev] = ws;
    }
    /* setting the stream resets the workspace to cuBLAS's own: set ours again */
    CB_CHECK(cublasSetStream(bl->h[dev], s), err, dev, "cublasSetStream");
    CB_CHECK(cublasSetWorkspace(bl->h[dev], bl->ws[dev], CU_BLAS_WORKSPACE), err, dev,
             "cublasSetWorkspace");
    CB_CHECK(cublasSetMathMode(bl->h[dev], tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                : CUBLAS_DEFAULT_MATH),
             err, dev, "cublasSetMathMode");
    *out = bl->h[dev];
    return DG_OK;
}

void cu_gemm_destroy(cu_be *b)
{
    struct cu_blas *bl = b->blas;
    int i;
    if (bl == NULL)
        return;
    for (i = 0; i < bl->ndev; i++) {
        if (bl->h[i] == NULL)
            continue;
        if (cudaSetDevice(b->devs[i].id) != cudaSuccess)
            (void)cudaGetLastError();
        (void)cublasDestroy(bl->h[i]);
        if (cudaFree(bl->ws[i]) != cudaSuccess)
            (void)cudaGetLastError();
    }
    pthread_mutex_destroy(&bl->mu);
    free(bl->h);
    free(bl->ws);
    free(bl);
    b->blas = NULL;
}

/* The cuBLAS types of a dtype: data type, compute type, and 1 and 0 in the
 * scale type.  0 if cuBLAS has no product of it. */
static int blas_types(int dtype, int tf32, cudaDataType *dt, cublasComputeType_t *ct,
                      unsigned char one[16], unsigned char zero[16])
{
    float f1 = 1.0f;
    double d1 = 1.0;
    memset(one, 0, 16);
    memset(zero, 0, 16);
    switch (dtype) {
    case DG_FLOAT16: *dt = CUDA_R_16F; *ct = CUBLAS_COMPUTE_32F; break;
    case DG_FLOAT32:
        *dt = CUDA_R_32F;
        *ct = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        break;
    case DG_COMPLEX64: *dt = CUDA_C_32F; *ct = CUBLAS_COMPUTE_32F; break;
    case DG_FLOAT64: *dt = CUDA_R_64F; *ct = CUBLAS_COMPUTE_64F; break;
    case DG_COMPLEX128: *dt = CUDA_C_64F; *ct = CUBLAS_COMPUTE_64F; break;
    default: return 0;
    }
    if (*ct == CUBLAS_COMPUTE_64F)
        memcpy(one, &d1, sizeof d1);
    else
        memcpy(one, &f1, sizeof f1); /* complex: (1, 0) */
    return 1;
}

/* y (=|+=) op(M) x with cuBLAS's gemv: M stored column-major rows x cols
 * with leading dimension ld; trans: use M^T. */
static dg_status blas_gemv(cublasHandle_t h, int dev, int dtype, int trans, int64_t rows,
                           int64_t cols, const void *alpha, const char *M, int64_t ld,
                           const char *x, int64_t incx, const void *beta, char *y,
                           int64_t incy, dg_error *err)
{
    cublasOperation_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    switch (dtype) {
    case DG_FLOAT32:
        CB_CHECK(cublasSgemv_64(h, op, rows, cols, (const float *)alpha, (const float *)M, ld,
                                (const float *)x, incx, (const float *)beta, (float *)y, incy),
                 err, dev, "cublasSgemv");
        return DG_OK;
    case DG_FLOAT64:
        CB_CHECK(cublasDgemv_64(h, op, rows, cols, (const double *)alpha, (const double *)M,
                                ld, (const double *)x, incx, (const double *)beta,
                                (double *)y, incy),
                 err, dev, "cublasDgemv");
        return DG_OK;
    case DG_COMPLEX64:
        CB_CHECK(cublasCgemv_64(h, op, rows, cols, (const cuComplex *)alpha,
                                (const cuComplex *)M, ld, (const cuComplex *)x, incx,
                                (const cuComplex *)beta, (cuComplex *)y, incy),
                 err, dev, "cublasCgemv");
        return DG_OK;
    case DG_COMPLEX128:
        CB_CHECK(cublasZgemv_64(h, op, rows, cols, (const cuDoubleComplex *)alpha,
                                (const cuDoubleComplex *)M, ld, (const cuDoubleComplex *)x,
                                incx, (const cuDoubleComplex *)beta, (cuDoubleComplex *)y,
                                incy),
                 err, dev, "cublasZgemv");
        return DG_OK;
    default:
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "no gemv of %s", dg_dtype_name(dtype));
    }
}

/* A vector's element step for BLAS (a length-1 vector may have any). */
static int64_t inc_of(int64_t n, int64_t stride, int isz)
{
    return n > 1 ? stride / isz : 1;
}

/* C = A B with m or n 1 and no batch, through gemv. */
static dg_status gemm_as_gemv(cublasHandle_t h, int dev, const dg_gemm_desc *d, int isz,
                              const void *alpha, const void *beta, dg_error *err)
{
    int col;
    int64_t ld;
    if (d->n == 1) {
        /* c[:, 0] = A b[:, 0]: A stored row-major is the column-major A^T */
        if (!dg_gemm_blas_layout(d->m, d->k, d->a_rs, d->a_cs, isz, &col, &ld))
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a product operand BLAS cannot take");
        return blas_gemv(h, dev, d->dtype, !col, col ? d->m : d->k, col ? d->k : d->m, alpha,
                         d->a, ld, d->b, inc_of(d->k, d->b_rs, isz), beta, d->c,
                         inc_of(d->m, d->c_rs, isz), err);
    }
    /* c[0, :] = B^T a[0, :]: B stored row-major is the column-major B^T */
    if (!dg_gemm_blas_layout(d->k, d->n, d->b_rs, d->b_cs, isz, &col, &ld))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a product operand BLAS cannot take");
    return blas_gemv(h, dev, d->dtype, col, col ? d->k : d->n, col ? d->n : d->k, alpha, d->b,
                     ld, d->a, inc_of(d->k, d->a_cs, isz), beta, d->c,
                     inc_of(d->n, d->c_cs, isz), err);
}

/* The products of d through cuBLAS (a float or complex dtype). */
static dg_status gemm_blas(cu_be *b, int dev, cudaStream_t s, const dg_gemm_desc *d,
                           dg_error *err)
{
    const int isz = dg_dtype_size(d->dtype);
    struct cu_blas *bl = NULL;
    cublasHandle_t h = NULL;
    cudaDataType dt;
    cublasComputeType_t ct;
    unsigned char one[16], zero[16];
    const void *alpha = one, *beta;
    int acol, bcol, ccol, tf32 = d->allow_tf32 && d->dtype == DG_FLOAT32;
    int64_t lda, ldb, ldc, idx[DG_MAXDIM] = {0}, inner = 1, sa = 0, sb = 0, sc = 0;
    int nouter = d->nbatch > 0 ? d->nbatch - 1 : 0, ax;
    dg_status st = DG_OK;

    if (!blas_types(d->dtype, tf32, &dt, &ct, one, zero))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "cuBLAS has no product of %s",
                            dg_dtype_name(d->dtype));
    beta = d->beta ? one : zero;
    if (!dg_gemm_blas_layout(d->m, d->k, d->a_rs, d->a_cs, isz, &acol, &lda) ||
        !dg_gemm_blas_layout(d->k, d->n, d->b_rs, d->b_cs, isz, &bcol, &ldb) ||
        !dg_gemm_blas_layout(d->m, d->n, d->c_rs, d->c_cs, isz, &ccol, &ldc))
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "a product operand BLAS cannot take (the core packs those)");
    if (d->nbatch > 0) {
        inner = d->batch[d->nbatch - 1];
        sa = d->a_bs[d->nbatch - 1] / isz;
        sb = d->b_bs[d->nbatch - 1] / isz;
        sc = d->c_bs[d->nbatch - 1] / isz;
    }
    DG_CHECK(blas_state(b, &bl, err));
    pthread_mutex_lock(&bl->mu);
    st = blas_handle(bl, dev, s, tf32, &h, err);
    if (st == DG_OK && d->nbatch == 0 && (d->m == 1 || d->n == 1) && d->dtype != DG_FLOAT16) {
        st = gemm_as_gemv(h, dev, d, isz, alpha, beta, err);
        goto out;
    }
    while (st == DG_OK) {
        const char *a = d->a, *bp = d->b;
        char *c = d->c;
        int64_t done;
        for (ax = 0; ax < nouter; ax++) {
            a += idx[ax] * d->a_bs[ax];
            bp += idx[ax] * d->b_bs[ax];
            c += idx[ax] * d->c_bs[ax];
        }
        for (done = 0; done < inner && st == DG_OK; done += CU_BLAS_MAXBATCH) {
            int64_t cnt = inner - done < CU_BLAS_MAXBATCH ? inner - done : CU_BLAS_MAXBATCH;
            const char *x = a + done * sa * isz, *y = bp + done * sb * isz;
            char *z = c + done * sc * isz;
            cublasStatus_t cs;
            if (ccol) /* C = A B, column-major: each operand transposed if row-major */
                cs = cublasGemmStridedBatchedEx_64(
                    h, acol ? CUBLAS_OP_N : CUBLAS_OP_T, bcol ? CUBLAS_OP_N : CUBLAS_OP_T, d->m,
                    d->n, d->k, alpha, x, dt, lda, sa, y, dt, ldb, sb, beta, z, dt, ldc, sc, cnt,
                    ct, CUBLAS_GEMM_DEFAULT);
            else /* C^T = B^T A^T: a row-major operand is already transposed */
                cs = cublasGemmStridedBatchedEx_64(
                    h, bcol ? CUBLAS_OP_T : CUBLAS_OP_N, acol ? CUBLAS_OP_T : CUBLAS_OP_N, d->n,
                    d->m, d->k, alpha, y, dt, ldb, sb, x, dt, lda, sa, beta, z, dt, ldc, sc, cnt,
                    ct, CUBLAS_GEMM_DEFAULT);
            if (cs != CUBLAS_STATUS_SUCCESS)
                st = blas_fail(err, cs, dev, "cublasGemmStridedBatchedEx");
        }
        for (ax = nouter - 1; ax >= 0; ax--) {
            if (++idx[ax] < d->batch[ax])
                break;
            idx[ax] = 0;
        }
        if (ax < 0)
            break;
    }
out:
    pthread_mutex_unlock(&bl->mu);
    return st;
}

/* C = 0 (beta 0, k 0): a fill of C's elements. */
static dg_status gemm_zero(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                           dg_error *err)
{
    dg_fill_desc f;
    int ax;
    if (d->nbatch > DG_MAXDIM - 2)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a product of %d batch dims",
                            d->nbatch);
    memset(&f, 0, sizeof f);
    f.kind = DG_FILL_CONST;
    f.dtype = d->dtype;
    f.ndim = d->nbatch + 2;
    for (ax = 0; ax < d->nbatch; ax++) {
        f.shape[ax] = d->batch[ax];
        f.strides[ax] = d->c_bs[ax];
    }
    f.shape[ax] = d->m;
    f.strides[ax] = d->c_rs;
    f.shape[ax + 1] = d->n;
    f.strides[ax + 1] = d->c_cs;
    f.dst = d->c;
    return cu_fill(be, dev, stream, &f, err);
}

dg_status cu_gemm(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    char kind = dg_dtype_kind(d->dtype);
    cudaStream_t s;
    dg_status st;
    int ax;

    DG_CHECK(cu_check_stream(b, dev, stream, "gemm", err));
    if (kind == 0 || d->nbatch < 0 || d->nbatch > DG_MAXDIM || d->m < 0 || d->n < 0 ||
        d->k < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed product (dtype %d)",
                            d->dtype);
    if (d->m == 0 || d->n == 0)
        return DG_OK;
    for (ax = 0; ax < d->nbatch; ax++)
        if (d->batch[ax] <= 0)
            return DG_OK;
    if (d->k == 0)
        return d->beta ? DG_OK : gemm_zero(be, dev, stream, d, err);
    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;
    if (kind == 'b' || kind == 'i' || kind == 'u') {
        cudaError_t ce = dg_cu_gemm_int_launch(d, s);
        if (ce != cudaSuccess)
            return cu_fail(err, ce, dev, 0, "the integer matrix product kernel");
        st = DG_OK;
    } else {
        st = gemm_blas(b, dev, s, d, err);
    }
    cu_bump(b, dev, stream);
    return st;
}
