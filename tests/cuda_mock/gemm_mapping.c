/* The cuBLAS calls of src/backend/cuda/cuda_gemm.c checked without a GPU.
 *
 * cuda_gemm.c is compiled against the real CUDA headers and linked with the
 * stand-ins below instead of cudart and cuBLAS: host implementations of the
 * few functions it calls, with cuBLAS's column-major meaning (op, m, n, k,
 * leading dimensions, strides, alpha and beta in the compute type), running
 * on host memory.  Random products of every float and complex dtype, every
 * row- or column-major layout of A, B and C with padded leading dimensions,
 * 0 to 2 batch dims (broadcast ones too), m or n of 1 (the gemv path), k of
 * 0 and beta 0 or 1 then go through cu_gemm and must match the CPU backend's
 * loops (cpu_gemm.c) on the same descriptor.  What this cannot check is the
 * GPU itself; the rest of the mapping from dgarray's row-major descriptor to
 * cuBLAS's arguments it does.  Built and run by tests/test_cublas_mapping.py. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "cpu_gemm.h"
#include "dg_scalar.h"
#include "mock_backend.h"

/* ---- cudart and backend stand-ins (the others: mock_backend.c) ----------------- */

cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

dg_status cu_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d, dg_error *err)
{
    int64_t idx[DG_MAXDIM] = {0}, n = 1;
    int a, isz = dg_dtype_size(d->dtype);
    (void)be, (void)dev, (void)stream, (void)err;
    for (a = 0; a < d->ndim; a++)
        n *= d->shape[a];
    while (n-- > 0) {
        char *p = d->dst;
        for (a = 0; a < d->ndim; a++)
            p += idx[a] * d->strides[a];
        memcpy(p, d->value, (size_t)isz);
        for (a = d->ndim - 1; a >= 0 && ++idx[a] == d->shape[a]; a--)
            idx[a] = 0;
    }
    mock_bumps++;
    return DG_OK;
}
cudaError_t dg_cu_gemm_int_launch(const dg_gemm_desc *d, cudaStream_t s)
{
    (void)d, (void)s;
    return cudaErrorInvalidValue; /* integer products: the GPU test suite's */
}

/* ---- cuBLAS stand-ins: column-major, on host memory ----------------------------- */

typedef struct { double re, im; } cplx;

static cplx cmul(cplx a, cplx b) { return (cplx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static cplx cadd(cplx a, cplx b) { return (cplx){a.re + b.re, a.im + b.im}; }

static int type_size(cudaDataType t)
{
    switch (t) {
    case CUDA_R_16F: return 2;
    case CUDA_R_32F: return 4;
    case CUDA_R_64F: case CUDA_C_32F: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
    }
}

static cplx load(const void *p, cudaDataType t)
{
    switch (t) {
    case CUDA_R_16F: return (cplx){dg_half_to_float(*(const dg_half *)p), 0};
    case CUDA_R_32F: return (cplx){*(const float *)p, 0};
    case CUDA_R_64F: return (cplx){*(const double *)p, 0};
    case CUDA_C_32F: return (cplx){((const float *)p)[0], ((const float *)p)[1]};
    default: return (cplx){((const double *)p)[0], ((const double *)p)[1]};
    }
}

static void store(void *p, cudaDataType t, cplx v)
{
    switch (t) {
    case CUDA_R_16F: *(dg_half *)p = dg_float_to_half((float)v.re); break;
    case CUDA_R_32F: *(float *)p = (float)v.re; break;
    case CUDA_R_64F: *(double *)p = v.re; break;
    case CUDA_C_32F: ((float *)p)[0] = (float)v.re; ((float *)p)[1] = (float)v.im; break;
    default: ((double *)p)[0] = v.re; ((double *)p)[1] = v.im; break;
    }
}

/* A scale (alpha, beta) in the scale type of compute type ct for data t. */
static cplx scale(const void *p, cublasComputeType_t ct, cudaDataType t)
{
    int cx = t == CUDA_C_32F || t == CUDA_C_64F;
    if (ct == CUBLAS_COMPUTE_64F)
        return load(p, cx ? CUDA_C_64F : CUDA_R_64F);
    return load(p, cx ? CUDA_C_32F : CUDA_R_32F);
}

static int nblas, ngemv;
static unsigned rnd_mock(void)
{
    static unsigned x = 12345u;
    x = x * 1103515245u + 12345u;
    return x >> 16;
}
static void *workspace;

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = (cublasHandle_t)malloc(1);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free((void *)h);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    (void)h, (void)s;
    workspace = NULL;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *w, size_t n)
{
    (void)h;
    workspace = n >= ((size_t)32 << 20) ? w : NULL;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m)
{
    (void)h, (void)m;
    return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusString(cublasStatus_t s) { (void)s; return "mock"; }
const char *cublasGetStatusName(cublasStatus_t s) { (void)s; return "CUBLAS_STATUS_MOCK"; }

/* Element (i, j) of column-major X (rows x cols, ld) after op: op(X)(i, j). */
static const char *at(const char *x, cublasOperation_t op, int64_t i, int64_t j, int64_t ld,
                      int isz)
{
    return op == CUBLAS_OP_N ? x + (i + j * ld) * isz : x + (j + i * ld) * isz;
}

/* C[q] = alpha op(A[q]) op(B[q]) + beta C[q], column-major, q < count. */
static cublasStatus_t gemm_cm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                              int64_t k, const void *alpha, const void *A, cudaDataType at_,
                              int64_t lda, long long sa, const void *B, cudaDataType bt,
                              int64_t ldb, long long sb, const void *beta, void *C,
                              cudaDataType ct_, int64_t ldc, long long sc, int64_t count,
                              cublasComputeType_t comp)
{
    int isz = type_size(ct_);
    int64_t q, i, j, p;
    cplx al = scale(alpha, comp, ct_), be = scale(beta, comp, ct_);
    if (at_ != ct_ || bt != ct_ || m < 0 || n < 0 || k < 0 ||
        count < 1 || count > 65535 || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    for (q = 0; q < count; q++)
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) {
                cplx acc = {0, 0};
                char *c = (char *)C + (q * sc + i + j * ldc) * isz;
                for (p = 0; p < k; p++)
                    acc = cadd(acc, cmul(load(at((const char *)A + q * sa * isz, ta, i, p, lda,
                                                 isz), ct_),
                                         load(at((const char *)B + q * sb * isz, tb, p, j, ldb,
                                                 isz), ct_)));
                acc = cmul(al, acc);
                if (be.re != 0 || be.im != 0)
                    acc = cadd(acc, cmul(be, load(c, ct_)));
                store(c, ct_, acc);
            }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
    int64_t k, const void *alpha, const void *A, cudaDataType at_, int64_t lda,
    long long sa, const void *B, cudaDataType bt, int64_t ldb, long long sb, const void *beta,
    void *C, cudaDataType ct_, int64_t ldc, long long sc, int64_t count,
    cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    cublasStatus_t r;
    (void)algo;
    if (!h || !workspace)
        return CUBLAS_STATUS_INVALID_VALUE;
    r = gemm_cm(ta, tb, m, n, k, alpha, A, at_, lda, sa, B, bt, ldb, sb, beta, C, ct_, ldc, sc,
                count, comp);
    nblas += r == CUBLAS_STATUS_SUCCESS;
    return r;
}

/* ---- cuBLASLt stand-ins: descriptors as host structs, three algorithms ---------- */

struct mock_desc {
    cublasComputeType_t ct;
    int32_t ta, tb, target;
};
struct mock_layout {
    cudaDataType t;
    uint64_t rows, cols;
    int64_t ld;
};
static int nlt, nlt_timed, ntarget;

static cublasStatus_t mock_free(void *p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = (cublasLtHandle_t)malloc(1);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { return mock_free((void *)h); }
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t ct,
                                        cudaDataType_t scale_type)
{
    struct mock_desc *m = (struct mock_desc *)calloc(1, sizeof(*m));
    if (scale_type != CUDA_R_32F)
        return CUBLAS_STATUS_INVALID_VALUE;
    m->ct = ct;
    *d = (cublasLtMatmulDesc_t)m;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { return mock_free((void *)d); }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    struct mock_desc *m = (struct mock_desc *)d;
    int32_t *to = attr == CUBLASLT_MATMUL_DESC_TRANSA ? &m->ta
                : attr == CUBLASLT_MATMUL_DESC_TRANSB ? &m->tb
                : attr == CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET ? &m->target : NULL;
    if (to == NULL || size != sizeof(int32_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(to, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    struct mock_layout *m = (struct mock_layout *)calloc(1, sizeof(*m));
    m->t = type;
    m->rows = rows;
    m->cols = cols;
    m->ld = ld;
    *l = (cublasLtMatrixLayout_t)m;
    return ld >= (int64_t)(rows > 1 ? rows : 1) ? CUBLAS_STATUS_SUCCESS
                                                 : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { return mock_free((void *)l); }
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    *p = (cublasLtMatmulPreference_t)malloc(1);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) { return mock_free((void *)p); }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size)
{
    uint32_t al;
    (void)p;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
        return size == sizeof(uint64_t) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    if (attr < CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES ||
        attr > CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES || size != sizeof al)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&al, buf, sizeof al);
    return al >= 4 && al <= 256 && (al & (al - 1)) == 0 ? CUBLAS_STATUS_SUCCESS
                                                        : CUBLAS_STATUS_INVALID_VALUE;
}

/* The m n k of a call whose layouts agree with its ops, else -1 in *k. */
static void lt_dims(const struct mock_desc *d, const struct mock_layout *a,
                    const struct mock_layout *b, const struct mock_layout *c, int64_t *m,
                    int64_t *n, int64_t *k)
{
    *m = (int64_t)c->rows;
    *n = (int64_t)c->cols;
    *k = (int64_t)(d->ta == CUBLAS_OP_N ? a->cols : a->rows);
    if ((int64_t)(d->ta == CUBLAS_OP_N ? a->rows : a->cols) != *m ||
        (int64_t)(d->tb == CUBLAS_OP_N ? b->rows : b->cols) != *k ||
        (int64_t)(d->tb == CUBLAS_OP_N ? b->cols : b->rows) != *n)
        *k = -1;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t A,
    cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *res,
    int *got)
{
    const struct mock_desc *d = (const struct mock_desc *)op;
    int64_t m, n, k;
    int i;
    lt_dims(d, (struct mock_layout *)A, (struct mock_layout *)B, (struct mock_layout *)C, &m,
            &n, &k);
    if (!lt || !pref || C != D || k < 0 || requested < 1 || (d->target != 0 && d->target < 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    ntarget += d->target > 0;
    *got = requested < 3 ? requested : 3;
    for (i = 0; i < *got; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        res[i].algo.data[0] = (uint64_t)i + 1;
        res[i].state = CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lt, cublasLtMatmulDesc_t op, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Ad, const void *B,
                              cublasLtMatrixLayout_t Bd, const void *beta, const void *C,
                              cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsz,
                              cudaStream_t s)
{
    const struct mock_desc *d = (const struct mock_desc *)op;
    const struct mock_layout *a = (const struct mock_layout *)Ad,
                             *b = (const struct mock_layout *)Bd,
                             *c = (const struct mock_layout *)Cd;
    int64_t m, n, k;
    cublasStatus_t r;
    (void)s;
    lt_dims(d, a, b, c, &m, &n, &k);
    if (!lt || C != D || Cd != Dd || k < 0 || !algo || algo->data[0] < 1 ||
        algo->data[0] > 3 || !ws || wsz < ((size_t)32 << 20))
        return CUBLAS_STATUS_INVALID_VALUE;
    r = gemm_cm(d->ta, d->tb, m, n, k, alpha, A, a->t, a->ld, 0, B, b->t, b->ld, 0, beta, D,
                c->t, c->ld, 0, 1, d->ct);
    nlt += r == CUBLAS_STATUS_SUCCESS;
    return r;
}

/* events and the pool: timings that vary, scratch from the host heap */
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)malloc(1);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)e, (void)s;
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e)
{
    (void)e;
    nlt_timed++;
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    (void)a, (void)b;
    *ms = (float)(1 + rnd_mock() % 5);
    return cudaSuccess;
}
cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    (void)pool, (void)s;
    *p = malloc(n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    (void)s;
    free(p);
    return cudaSuccess;
}

static cublasStatus_t gemv(cudaDataType t, cublasOperation_t op, int64_t rows, int64_t cols,
                           const void *alpha, const void *A, int64_t lda, const void *x,
                           int64_t incx, const void *beta, void *y, int64_t incy)
{
    int isz = type_size(t);
    int64_t ny = op == CUBLAS_OP_N ? rows : cols, nx = op == CUBLAS_OP_N ? cols : rows, i, p;
    cplx al = load(alpha, t), be = load(beta, t);
    if (!workspace || lda < (rows > 1 ? rows : 1) || incx < 1 || incy < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    ngemv++;
    for (i = 0; i < ny; i++) {
        cplx acc = {0, 0};
        char *yi = (char *)y + i * incy * isz;
        for (p = 0; p < nx; p++) {
            /* op(A)(i, p) of the stored rows x cols matrix */
            const char *ap = op == CUBLAS_OP_N ? (const char *)A + (i + p * lda) * isz
                                               : (const char *)A + (p + i * lda) * isz;
            acc = cadd(acc, cmul(load(ap, t), load((const char *)x + p * incx * isz, t)));
        }
        acc = cmul(al, acc);
        if (be.re != 0 || be.im != 0)
            acc = cadd(acc, cmul(be, load(yi, t)));
        store(yi, t, acc);
    }
    return CUBLAS_STATUS_SUCCESS;
}

#define GEMV(name, T, CT)                                                                  \
    cublasStatus_t name(cublasHandle_t h, cublasOperation_t op, int64_t m, int64_t n,      \
                        const T *alpha, const T *A, int64_t lda, const T *x, int64_t incx, \
                        const T *beta, T *y, int64_t incy)                                 \
    {                                                                                      \
        (void)h;                                                                           \
        return gemv(CT, op, m, n, alpha, A, lda, x, incx, beta, y, incy);                 \
    }
GEMV(cublasSgemv_v2_64, float, CUDA_R_32F)
GEMV(cublasDgemv_v2_64, double, CUDA_R_64F)
GEMV(cublasCgemv_v2_64, cuComplex, CUDA_C_32F)
GEMV(cublasZgemv_v2_64, cuDoubleComplex, CUDA_C_64F)

/* ---- the test ----------------------------------------------------------------------- */


/* Strides of a rows x cols matrix, row- or column-major, ld padded. */
static void layout(int64_t rows, int64_t cols, int isz, int64_t *rs, int64_t *cs, int64_t *size)
{
    int64_t pad = mock_rnd(3);
    if (mock_rnd(2)) {
        *cs = isz;
        *rs = (cols + pad) * isz;
        *size = rows * *rs;
    } else {
        *rs = isz;
        *cs = (rows + pad) * isz;
        *size = cols * *cs;
    }
}

static void fill_random(char *p, int64_t n, int dtype)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        double v = (double)(mock_rnd(17) - 8) / 4;
        switch (dtype) {
        case DG_FLOAT16: ((dg_half *)p)[i] = dg_float_to_half((float)v); break;
        case DG_FLOAT32: ((float *)p)[i] = (float)v; break;
        case DG_FLOAT64: ((double *)p)[i] = v; break;
        case DG_COMPLEX64: ((float *)p)[i] = (float)v; break; /* n counts floats here */
        default: ((double *)p)[i] = v; break;
        }
    }
}

int main(void)
{
    static const int dtypes[] = {DG_FLOAT16, DG_FLOAT32, DG_FLOAT64, DG_COMPLEX64,
                                 DG_COMPLEX128};
    cu_dev dev;
    cu_be b;
    int t, nfail = 0, ntest = 0;
    mock_backend_init(&b, &dev);
    dev.nsm = 132;
    for (t = 0; t < 4000; t++) {
        const int dtype = dtypes[t % 5], isz = dg_dtype_size(dtype);
        const int cx = dg_dtype_kind(dtype) == 'c';
        const int64_t sizes[] = {1, 1, 2, 3, 5, 8};
        dg_gemm_desc d;
        int64_t asz, bsz, csz, atot, btot, ctot, i, bm = 1;
        char *A, *B, *C, *R;
        dg_error err = DG_ERROR_INIT;
        double tol = dtype == DG_FLOAT16 ? 2e-2 : (dtype == DG_FLOAT32 || cx) ? 1e-5 : 1e-12;
        memset(&d, 0, sizeof d);
        d.dtype = dtype;
        d.m = sizes[mock_rnd(6)];
        d.n = sizes[mock_rnd(6)];
        d.k = mock_rnd(10) == 0 ? 0 : sizes[mock_rnd(6)];
        d.beta = (int)mock_rnd(2);
        d.allow_tf32 = (int)mock_rnd(2);
        d.share_sms = (int)mock_rnd(2);
        layout(d.m, d.k, isz, &d.a_rs, &d.a_cs, &asz);
        layout(d.k, d.n, isz, &d.b_rs, &d.b_cs, &bsz);
        layout(d.m, d.n, isz, &d.c_rs, &d.c_cs, &csz);
        if (d.k == 0)
            asz = bsz = isz;
        d.nbatch = (int)mock_rnd(3);
        atot = asz;
        btot = bsz;
        ctot = csz;
        for (i = d.nbatch - 1; i >= 0; i--) { /* inner batch dims first */
            d.batch[i] = 1 + mock_rnd(3);
            d.a_bs[i] = mock_rnd(4) == 0 ? 0 : atot;
            d.b_bs[i] = mock_rnd(4) == 0 ? 0 : btot;
            d.c_bs[i] = ctot;
            atot += d.a_bs[i] ? atot * (d.batch[i] - 1) : 0;
            btot += d.b_bs[i] ? btot * (d.batch[i] - 1) : 0;
            ctot *= d.batch[i];
            bm *= d.batch[i];
        }
        A = (char *)malloc((size_t)atot);
        B = (char *)malloc((size_t)btot);
        C = (char *)malloc((size_t)ctot);
        R = (char *)malloc((size_t)ctot);
        fill_random(A, atot / (cx ? isz / 2 : isz), dtype);
        fill_random(B, btot / (cx ? isz / 2 : isz), dtype);
        fill_random(C, ctot / (cx ? isz / 2 : isz), dtype);
        memcpy(R, C, (size_t)ctot);
        d.a = A;
        d.b = B;
        d.c = R;
        dg_cpu_gemm_run(&d); /* the reference: the CPU backend's loops */
        d.c = C;
        ntest++;
        /* beta 0 runs twice: the second finds its shape's cuBLASLt choice made */
        if (cu_gemm(&b.iface, 0, DG_STREAM_COMPUTE, &d, &err) != DG_OK ||
            (!d.beta && cu_gemm(&b.iface, 0, DG_STREAM_COMPUTE, &d, &err) != DG_OK)) {
            printf("FAIL: dtype %s m %lld n %lld k %lld nbatch %d: %s\n", dg_dtype_name(dtype),
                   (long long)d.m, (long long)d.n, (long long)d.k, d.nbatch, err.msg);
            nfail++;
        } else {
            int64_t e, n = ctot / (cx ? isz / 2 : isz);
            for (e = 0; e < n; e++) {
                double x, y;
                if (dtype == DG_FLOAT16) {
                    x = dg_half_to_float(((dg_half *)C)[e]);
                    y = dg_half_to_float(((dg_half *)R)[e]);
                } else if (dtype == DG_FLOAT32 || dtype == DG_COMPLEX64) {
                    x = ((float *)C)[e];
                    y = ((float *)R)[e];
                } else {
                    x = ((double *)C)[e];
                    y = ((double *)R)[e];
                }
                if (fabs(x - y) > tol * (1 + fabs(y))) {
                    printf("FAIL: dtype %s m %lld n %lld k %lld nbatch %d beta %d "
                           "rs/cs a %lld/%lld b %lld/%lld c %lld/%lld: element %lld is %g, "
                           "not %g\n", dg_dtype_name(dtype), (long long)d.m, (long long)d.n,
                           (long long)d.k, d.nbatch, d.beta, (long long)d.a_rs,
                           (long long)d.a_cs, (long long)d.b_rs, (long long)d.b_cs,
                           (long long)d.c_rs, (long long)d.c_cs, (long long)e, x, y);
                    nfail++;
                    break;
                }
            }
        }
        (void)bm;
        free(A);
        free(B);
        free(C);
        free(R);
    }
    cu_gemm_destroy(&b);
    if (nlt == 0 || nlt_timed == 0 || ntarget == 0) {
        printf("FAIL: cuBLASLt ran %d products, read %d timings, had %d SM targets\n", nlt,
               nlt_timed, ntarget);
        nfail++;
    }
    printf("%d products (%d strided batched GEMM calls, %d gemv calls, %d cuBLASLt calls), "
           "%d failed\n", ntest, nblas, ngemv, nlt, nfail);
    return nfail != 0;
}
