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
 * Large float32 products (no batch) go through cuBLASLt, each shape's
 * algorithm chosen by timing the ones its heuristic offers (see "float32
 * products through cuBLASLt" below).
 *
 * One cuBLAS handle per device, created at its first product with a 32 MiB
 * workspace, used under a lock (a handle is not for two threads at once) on
 * the stream the core asks for; TF32 math only when the descriptor allows
 * it for float32.  The handles go with the backend (cu_gemm_destroy). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "cu_gemm_kernels.h"
#include "cuda_internal.h"

/* cuBLAS's workspace per device (NVIDIA's advice for Hopper). */
#define CU_BLAS_WORKSPACE ((size_t)32 << 20)
/* Largest batch count of one strided batched call. */
#define CU_BLAS_MAXBATCH 65535

/* Float32 products of at least this many m n k go through cuBLASLt (the
 * mapping test, tests/cuda_mock, sets it low). */
#ifndef CU_LT_MIN_MNK
#define CU_LT_MIN_MNK 1073741824.0
#endif
/* Algorithms of cuBLASLt's heuristic timed for a shape, and rounds of it. */
#define CU_LT_CANDIDATES 8
#define CU_LT_ROUNDS 2
/* Shapes whose choice a device keeps (the least recently used goes). */
#define CU_LT_SHAPES 32
/* Multiprocessors NCCL's send/recv kernel between two GPUs takes (one per
 * channel, 16 over NVLink): left to it by products with share_sms. */
#define CU_XFER_SMS 16

/* One cuBLASLt product shape, as cuBLAS sees it (column-major C = op(A)
 * op(B), C m x n), with the alignment of its pointers. */
struct lt_key {
    int tf32, share, ta, tb, align;
    int64_t m, n, k, lda, ldb, ldc;
};

/* A shape's descriptors and the algorithms offered for it: cand[best] runs,
 * or, best == ncand, cuBLAS's own call (cublasGemmStridedBatchedEx, which
 * beat every offer for the 8192^3 TF32 product on an H200: 2,617 us against
 * 2,958).  While nev > 0 the candidates' timings are in flight: events ev[j]
 * and ev[j + 1] bracket run j, candidate j % (ncand + 1). */
struct lt_shape {
    struct lt_key key;
    int used, ok;            /* ok 0: no cuBLASLt algorithm, cublasGemmEx runs */
    unsigned long long tick; /* last use */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    int ncand, best;
    unsigned bad; /* candidates that failed to launch */
    cublasLtMatmulHeuristicResult_t cand[CU_LT_CANDIDATES];
    int nev;
    cudaEvent_t ev[(CU_LT_CANDIDATES + 1) * CU_LT_ROUNDS + 1];
};

struct cu_blas {
    pthread_mutex_t mu;
    int ndev;
    cublasHandle_t *h;        /* per device, NULL until its first product [mu] */
    void **ws;                /* per device workspace [mu] */
    cublasLtHandle_t *lt;     /* per device [mu] */
    struct lt_shape **shapes; /* per device, CU_LT_SHAPES, NULL until needed [mu] */
    unsigned long long tick;  /* [mu] */
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
            bl->lt = (cublasLtHandle_t *)calloc((size_t)b->ndev, sizeof(cublasLtHandle_t));
            bl->shapes = (struct lt_shape **)calloc((size_t)b->ndev, sizeof(struct lt_shape *));
            if (bl->h == NULL || bl->ws == NULL || bl->lt == NULL || bl->shapes == NULL) {
                free(bl->h);
                free(bl->ws);
                free(bl->lt);
                free(bl->shapes);
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
        cublasLtHandle_t lt;
        cublasStatus_t cs;
        void *ws = NULL;
        cudaError_t ce;
        CB_CHECK(cublasCreate(&h), err, dev, "cublasCreate");
        cs = cublasLtCreate(&lt);
        if (cs != CUBLAS_STATUS_SUCCESS) {
            cublasDestroy(h);
            return blas_fail(err, cs, dev, "cublasLtCreate");
        }
        ce = cudaMalloc(&ws, CU_BLAS_WORKSPACE);
        if (ce != cudaSuccess) {
            cublasLtDestroy(lt);
            cublasDestroy(h);
            return cu_fail(err, ce, dev, CU_BLAS_WORKSPACE, "cudaMalloc (cuBLAS workspace)");
        }
        bl->h[dev] = h;
        bl->lt[dev] = lt;
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

/* ---- float32 products through cuBLASLt, the algorithm chosen by timing ----
 *
 * cuBLASLt's heuristic offers several algorithms for a shape and does not
 * always rank the fastest first: for a 4096 x 8192 x 4096 TF32 product on an
 * H200 its first took 756 us, its second 630 (benchmarks/gemm_algos.cu).  So
 * the first product of a shape on a device also enqueues each offered
 * algorithm, and cuBLAS's own call, CU_LT_ROUNDS times into a scratch C
 * between events, and itself runs with the first; a later product of the
 * shape reads the events if they have completed (it never waits for them)
 * and keeps the fastest (for the 8192^3 TF32 product on an H200, cuBLAS's
 * call: 2,617 us against 2,958 for cuBLASLt's best offer).  No
 * host wait, and nothing but the scratch is written.  With share_sms the
 * heuristic is asked for kernels sized to the multiprocessors NCCL leaves
 * (SM_COUNT_TARGET): a persistent kernel sized to all of them would wait in
 * part for the transfer to end. */

/* Drops e's timing events. */
static void lt_drop_events(struct lt_shape *e)
{
    int i;
    for (i = 0; i < e->nev; i++)
        if (cudaEventDestroy(e->ev[i]) != cudaSuccess)
            (void)cudaGetLastError();
    e->nev = 0;
}

/* Frees e's descriptors and events (its device current). */
static void lt_shape_clear(struct lt_shape *e)
{
    lt_drop_events(e);
    if (e->lc)
        (void)cublasLtMatrixLayoutDestroy(e->lc);
    if (e->lb)
        (void)cublasLtMatrixLayoutDestroy(e->lb);
    if (e->la)
        (void)cublasLtMatrixLayoutDestroy(e->la);
    if (e->op)
        (void)cublasLtMatmulDescDestroy(e->op);
    memset(e, 0, sizeof(*e));
}

/* The alignment in bytes (a power of two up to 256) of three float32
 * matrices and their leading dimensions. */
static int lt_align(const void *a, const void *b, const void *c, int64_t lda, int64_t ldb,
                    int64_t ldc)
{
    uintptr_t v = (uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)lda * 4 |
                  (uintptr_t)ldb * 4 | (uintptr_t)ldc * 4 | 256;
    return (int)(v & (~v + 1));
}

/* Makes e (a free slot) for shape k: descriptors and the heuristic's
 * candidates; e->ok 0 where cuBLASLt offers none. */
static dg_status lt_shape_make(cublasLtHandle_t lt, int dev, int nsm, const struct lt_key *k,
                               struct lt_shape *e, dg_error *err)
{
    cublasLtMatmulPreference_t pref = NULL;
    const cublasComputeType_t ct = k->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const int32_t ta = k->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = k->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int32_t target = nsm - CU_XFER_SMS;
    const uint64_t wsz = CU_BLAS_WORKSPACE;
    const uint32_t al = (uint32_t)k->align;
    const cublasLtMatmulPreferenceAttributes_t align_of[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    cublasStatus_t cs;
    int got = 0, i;

    memset(e, 0, sizeof(*e));
    e->key = *k;
    e->used = 1;
    cs = cublasLtMatmulDescCreate(&e->op, ct, CUDA_R_32F);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (cs == CUBLAS_STATUS_SUCCESS && k->share && target > 0)
        cs = cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET,
                                            &target, sizeof target);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatrixLayoutCreate(&e->la, CUDA_R_32F, (uint64_t)(k->ta ? k->k : k->m),
                                        (uint64_t)(k->ta ? k->m : k->k), k->lda);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatrixLayoutCreate(&e->lb, CUDA_R_32F, (uint64_t)(k->tb ? k->n : k->k),
                                        (uint64_t)(k->tb ? k->k : k->n), k->ldb);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatrixLayoutCreate(&e->lc, CUDA_R_32F, (uint64_t)k->m, (uint64_t)k->n,
                                        k->ldc);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatmulPreferenceCreate(&pref);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz);
    for (i = 0; i < 4 && cs == CUBLAS_STATUS_SUCCESS; i++)
        cs = cublasLtMatmulPreferenceSetAttribute(pref, align_of[i], &al, sizeof al);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasLtMatmulAlgoGetHeuristic(lt, e->op, e->la, e->lb, e->lc, e->lc, pref,
                                            CU_LT_CANDIDATES, e->cand, &got);
    if (pref)
        (void)cublasLtMatmulPreferenceDestroy(pref);
    if (cs == CUBLAS_STATUS_NOT_SUPPORTED || (cs == CUBLAS_STATUS_SUCCESS && got <= 0))
        return DG_OK; /* e->ok 0: cublasGemmEx */
    if (cs != CUBLAS_STATUS_SUCCESS) {
        lt_shape_clear(e);
        return blas_fail(err, cs, dev, "cuBLASLt (a product's descriptors)");
    }
    e->ncand = got;
    e->ok = 1;
    return DG_OK;
}

/* C (=|+=) op(A) op(B) in float32 by cuBLAS's own call (the one gemm_blas
 * makes for products of one matrix), for the column-major shape k, on h's
 * stream and in its math mode. */
static cublasStatus_t lt_key_blas(cublasHandle_t h, const struct lt_key *k, const void *alpha,
                                  const void *a, const void *b, const void *beta, void *c)
{
    return cublasGemmStridedBatchedEx_64(
        h, k->ta ? CUBLAS_OP_T : CUBLAS_OP_N, k->tb ? CUBLAS_OP_T : CUBLAS_OP_N, k->m, k->n,
        k->k, alpha, a, CUDA_R_32F, k->lda, 0, b, CUDA_R_32F, k->ldb, 0, beta, c, CUDA_R_32F,
        k->ldc, 0, 1, k->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT);
}

/* Enqueues CU_LT_ROUNDS runs of each of e's candidates and of cuBLAS's own
 * call (candidate ncand) on s, into a scratch C from pool, between events.
 * Best effort: where the scratch or an event cannot be had nothing is timed
 * and the first candidate stays. */
static void lt_time(cublasLtHandle_t lt, cublasHandle_t h, cudaMemPool_t pool, cudaStream_t s,
                    void *ws, struct lt_shape *e, const void *a, const void *b)
{
    const float one = 1.0f, zero = 0.0f;
    const int nc = e->ncand + 1, n = nc * CU_LT_ROUNDS;
    size_t bytes = (size_t)((e->key.n - 1) * e->key.ldc + e->key.m) * sizeof(float);
    void *c = NULL;
    int j, ok = 1;
    if (e->key.share) /* cuBLAS's call cannot be sized to the processors NCCL leaves */
        e->bad |= 1u << e->ncand;
    if (cudaMallocFromPoolAsync(&c, bytes, pool, s) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (e->nev = 0; e->nev <= n; e->nev++)
        if (cudaEventCreate(&e->ev[e->nev]) != cudaSuccess)
            break;
    ok = e->nev == n + 1 && cudaEventRecord(e->ev[0], s) == cudaSuccess;
    for (j = 0; j < n && ok; j++) {
        int i = j % nc;
        if (!((e->bad >> i) & 1u) &&
            (i < e->ncand ? cublasLtMatmul(lt, e->op, &one, a, e->la, b, e->lb, &zero, c, e->lc,
                                           c, e->lc, &e->cand[i].algo, ws, CU_BLAS_WORKSPACE, s)
                          : lt_key_blas(h, &e->key, &one, a, b, &zero, c)) !=
                CUBLAS_STATUS_SUCCESS)
            e->bad |= 1u << i;
        ok = cudaEventRecord(e->ev[j + 1], s) == cudaSuccess;
    }
    if (!ok) {
        (void)cudaGetLastError();
        lt_drop_events(e);
    }
    if (cudaFreeAsync(c, s) != cudaSuccess)
        (void)cudaGetLastError();
}

/* Reads e's timings if they have completed: the fastest candidate that
 * launched becomes e->best. */
static void lt_settle(struct lt_shape *e)
{
    float t[CU_LT_CANDIDATES + 1], best = -1.0f, ms;
    const int nc = e->ncand + 1;
    cudaError_t q;
    int i, j;
    if (e->nev == 0)
        return;
    q = cudaEventQuery(e->ev[e->nev - 1]);
    if (q == cudaErrorNotReady)
        return;
    if (q == cudaSuccess) {
        for (i = 0; i < nc; i++)
            t[i] = -1.0f;
        for (j = 0; j + 1 < e->nev; j++) {
            i = j % nc;
            if ((e->bad >> i) & 1u)
                continue;
            if (cudaEventElapsedTime(&ms, e->ev[j], e->ev[j + 1]) != cudaSuccess) {
                (void)cudaGetLastError();
                continue;
            }
            if (t[i] < 0.0f || ms < t[i])
                t[i] = ms;
        }
        for (i = 0; i < nc; i++)
            if (t[i] >= 0.0f && (best < 0.0f || t[i] < best)) {
                best = t[i];
                e->best = i;
            }
    } else {
        (void)cudaGetLastError();
    }
    lt_drop_events(e);
}

/* C (=|+=) op(A) op(B) in float32 through cuBLASLt: the column-major call
 * `key` (as cublasGemmEx takes it) on stream s.  *done 0: not run, as
 * cuBLASLt offers no algorithm for the shape; the caller runs cublasGemmEx.
 * Call with bl->mu held and dev current. */
static dg_status lt_gemm(cu_be *b, struct cu_blas *bl, int dev, cudaStream_t s,
                         const struct lt_key *key, const void *alpha, const void *beta,
                         const void *a, const void *bm, void *c, int *done, dg_error *err)
{
    struct lt_shape *tab = bl->shapes[dev], *e = NULL, *slot = NULL;
    cublasStatus_t cs;
    int i, fresh = 0;
    *done = 0;
    if (tab == NULL) {
        tab = (struct lt_shape *)calloc(CU_LT_SHAPES, sizeof(*tab));
        if (tab == NULL)
            return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory for cuBLASLt");
        bl->shapes[dev] = tab;
    }
    for (i = 0; i < CU_LT_SHAPES && e == NULL; i++) {
        if (tab[i].used && memcmp(&tab[i].key, key, sizeof(*key)) == 0)
            e = &tab[i];
        else if (slot == NULL || (slot->used && (!tab[i].used || tab[i].tick < slot->tick)))
            slot = &tab[i];
    }
    if (e == NULL) {
        lt_shape_clear(slot);
        DG_CHECK(lt_shape_make(bl->lt[dev], dev, b->devs[dev].nsm, key, slot, err));
        e = slot;
        fresh = 1;
    }
    e->tick = ++bl->tick;
    if (!e->ok)
        return DG_OK;
    if (fresh)
        lt_time(bl->lt[dev], bl->h[dev], b->devs[dev].pool, s, bl->ws[dev], e, a, bm);
    else
        lt_settle(e);
    if (e->best == e->ncand)
        return DG_OK; /* cuBLAS's own call was the fastest: the caller makes it */
    cs = cublasLtMatmul(bl->lt[dev], e->op, alpha, a, e->la, bm, e->lb, beta, c, e->lc, c,
                        e->lc, &e->cand[e->best].algo, bl->ws[dev], CU_BLAS_WORKSPACE, s);
    if (cs == CUBLAS_STATUS_NOT_SUPPORTED || cs == CUBLAS_STATUS_INVALID_VALUE) {
        e->ok = 0; /* the shape goes to cublasGemmEx from now on */
        return DG_OK;
    }
    if (cs != CUBLAS_STATUS_SUCCESS)
        return blas_fail(err, cs, dev, "cublasLtMatmul");
    *done = 1;
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
        if (bl->shapes[i] != NULL) {
            int j;
            for (j = 0; j < CU_LT_SHAPES; j++)
                lt_shape_clear(&bl->shapes[i][j]);
            free(bl->shapes[i]);
        }
        (void)cublasLtDestroy(bl->lt[i]);
        (void)cublasDestroy(bl->h[i]);
        if (cudaFree(bl->ws[i]) != cudaSuccess)
            (void)cudaGetLastError();
    }
    pthread_mutex_destroy(&bl->mu);
    free(bl->h);
    free(bl->ws);
    free(bl->lt);
    free(bl->shapes);
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
    if (st == DG_OK && d->nbatch == 0 && d->dtype == DG_FLOAT32 &&
        (double)d->m * (double)d->n * (double)d->k >= CU_LT_MIN_MNK) {
        struct lt_key key;
        const void *x = ccol ? d->a : d->b, *y = ccol ? d->b : d->a;
        int done = 0;
        memset(&key, 0, sizeof(key)); /* compared whole, padding too */
        key.tf32 = tf32;
        key.share = d->share_sms != 0;
        key.ta = ccol ? !acol : bcol;
        key.tb = ccol ? !bcol : acol;
        key.m = ccol ? d->m : d->n;
        key.n = ccol ? d->n : d->m;
        key.k = d->k;
        key.lda = ccol ? lda : ldb;
        key.ldb = ccol ? ldb : lda;
        key.ldc = ldc;
        key.align = lt_align(x, y, d->c, key.lda, key.ldb, key.ldc);
        st = lt_gemm(b, bl, dev, s, &key, alpha, beta, x, y, d->c, &done, err);
        if (st != DG_OK || done)
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
