/* The CPU backend's matrix products, generated from DG_DTYPE_LIST.
 *
 * Each product runs NumPy's own matmul arithmetic for its dtype: every step
 * is c = c + a * b with the dtype's add and multiply loops (kernels/
 * dg_scalar.h), so integers wrap, bool is the OR of ANDs and float16 rounds
 * at every step exactly as NumPy's non-BLAS matmul loop does.  The order is
 * i, then k, then j, with a block of C's row held in a local accumulator, so
 * that the innermost loop runs along a row of B (contiguous in the common
 * case, which gcc vectorises).  Where the binding handed over NumPy's own
 * BLAS (dg_cpu_gemm_set_blas), float32, float64 and complex products go
 * there instead, as NumPy's matmul does. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu_gemm.h"
#include "../../core/dg_loops.h"
#include "../../../kernels/dg_scalar.h"

/* Columns of C accumulated at once. */
#define CPU_GEMM_NB 256

/* One m x n x k product of dtype sfx: C (=|+=) A @ B. */
#define DG_X_CPU_GEMM(E, sfx, ct, sz, ch, nm, kd)                                      \
    static void gemm_##sfx(const dg_gemm_desc *d, const char *a, const char *b, char *c) \
    {                                                                                  \
        ct acc[CPU_GEMM_NB];                                                           \
        int64_t i, j, p, j0;                                                           \
        for (i = 0; i < d->m; i++) {                                                   \
            for (j0 = 0; j0 < d->n; j0 += CPU_GEMM_NB) {                               \
                const int64_t nb = d->n - j0 < CPU_GEMM_NB ? d->n - j0 : CPU_GEMM_NB;  \
                char *crow = c + i * d->c_rs + j0 * d->c_cs;                           \
                for (j = 0; j < nb; j++)                                               \
                    acc[j] = d->beta ? *(const ct *)(crow + j * d->c_cs) : (ct){0};    \
                for (p = 0; p < d->k; p++) {                                           \
                    const ct av = *(const ct *)(a + i * d->a_rs + p * d->a_cs);        \
                    const char *brow = b + p * d->b_rs + j0 * d->b_cs;                 \
                    if (d->b_cs == (int64_t)sizeof(ct)) {                              \
                        const ct *bv = (const ct *)brow;                               \
                        for (j = 0; j < nb; j++)                                       \
                            acc[j] = dg_add_##sfx(acc[j], dg_multiply_##sfx(av, bv[j])); \
                    } else {                                                           \
                        for (j = 0; j < nb; j++)                                       \
                            acc[j] = dg_add_##sfx(                                     \
                                acc[j], dg_multiply_##sfx(                             \
                                            av, *(const ct *)(brow + j * d->b_cs)));   \
                    }                                                                  \
                }                                                                      \
                for (j = 0; j < nb; j++)                                               \
                    *(ct *)(crow + j * d->c_cs) = acc[j];                              \
            }                                                                          \
        }                                                                              \
    }
DG_DTYPE_LIST(DG_X_CPU_GEMM)
#undef DG_X_CPU_GEMM

typedef void (*gemm_fn)(const dg_gemm_desc *d, const char *a, const char *b, char *c);

static gemm_fn gemm_of(int dtype)
{
    switch (dtype) {
#define DG_X_CASE(E, sfx, ct, sz, ch, nm, kd) case DG_##E: return gemm_##sfx;
        DG_DTYPE_LIST(DG_X_CASE)
#undef DG_X_CASE
    default: return NULL;
    }
}

/* CBLAS's enums. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_COL_MAJOR = 102, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

static dg_cpu_blas cpu_blas;
static int have_blas;

/* The BLAS's thread count while virtual devices run products (issue
 * [cpu-speed]): a BLAS call from each of N workers, each starting the
 * BLAS's default of one thread per core, put N x cores threads on the cores
 * (measured on 16 cores: 8 devices ran m @ m at 0.39 of NumPy's speed, 16 at
 * 0.34).  The count is the BLAS's process-wide setting, so it is set when
 * the first product starts and given back when the last one ends: NumPy's
 * own products between dgarray's keep the user's count. */
static int blas_threads;          /* per device; 0: leave the BLAS's count */
static pthread_mutex_t blas_mu = PTHREAD_MUTEX_INITIALIZER;
static int blas_inside;           /* products running now */
static int blas_saved;            /* the count before the first of them */

void dg_cpu_gemm_set_threads(int per_device) { blas_threads = per_device; }

/* wide: the product runs alone over the machine (dg_gemm_desc.wide), with
 * the count the user left the BLAS, as NumPy's own products do. */
static void blas_enter(int wide)
{
    if (wide || !have_blas || !cpu_blas.set_threads || blas_threads <= 0)
        return;
    pthread_mutex_lock(&blas_mu);
    if (blas_inside++ == 0) {
        /* never more than the count the user (OPENBLAS_NUM_THREADS,
         * threadpoolctl) left the BLAS with */
        blas_saved = cpu_blas.get_threads ? cpu_blas.get_threads() : 0;
        cpu_blas.set_threads(blas_saved > 0 && blas_saved < blas_threads ? blas_saved
                                                                         : blas_threads);
    }
    pthread_mutex_unlock(&blas_mu);
}

static void blas_leave(int wide)
{
    if (wide || !have_blas || !cpu_blas.set_threads || blas_threads <= 0)
        return;
    pthread_mutex_lock(&blas_mu);
    if (--blas_inside == 0 && blas_saved > 0)
        cpu_blas.set_threads(blas_saved);
    pthread_mutex_unlock(&blas_mu);
}

void dg_cpu_gemm_set_blas(const dg_cpu_blas *fns)
{
    have_blas = fns && fns->sgemm && fns->dgemm && fns->cgemm && fns->zgemm;
    if (fns)
        cpu_blas = *fns;
}

int dg_cpu_gemm_wide(int dtype)
{
    return have_blas && (dtype == DG_FLOAT32 || dtype == DG_FLOAT64 || dtype == DG_COMPLEX64 ||
                         dtype == DG_COMPLEX128);
}

/* One product through the BLAS: 1 if done, 0 if this dtype or layout has no
 * BLAS call (the loops run it then). */
static int gemm_blas(const dg_gemm_desc *d, const char *a, const char *b, char *c)
{
    const int isz = dg_dtype_size(d->dtype);
    int acol, bcol, ccol, ord, ta, tb;
    int64_t lda, ldb, ldc;
    const double one[2] = {1, 0}, zero[2] = {0, 0};
    const float onef[2] = {1, 0}, zerof[2] = {0, 0};
    if (!have_blas || d->k == 0 ||
        !dg_gemm_blas_layout(d->m, d->k, d->a_rs, d->a_cs, isz, &acol, &lda) ||
        !dg_gemm_blas_layout(d->k, d->n, d->b_rs, d->b_cs, isz, &bcol, &ldb) ||
        !dg_gemm_blas_layout(d->m, d->n, d->c_rs, d->c_cs, isz, &ccol, &ldc))
        return 0;
    /* in C's order, an operand stored the other way is its transpose */
    ord = ccol ? CBLAS_COL_MAJOR : CBLAS_ROW_MAJOR;
    ta = acol == ccol ? CBLAS_NO_TRANS : CBLAS_TRANS;
    tb = bcol == ccol ? CBLAS_NO_TRANS : CBLAS_TRANS;
    switch (d->dtype) {
    case DG_FLOAT32:
        cpu_blas.sgemm(ord, ta, tb, d->m, d->n, d->k, 1.0f, (const float *)a, lda,
                       (const float *)b, ldb, d->beta ? 1.0f : 0.0f, (float *)c, ldc);
        return 1;
    case DG_FLOAT64:
        cpu_blas.dgemm(ord, ta, tb, d->m, d->n, d->k, 1.0, (const double *)a, lda,
                       (const double *)b, ldb, d->beta ? 1.0 : 0.0, (double *)c, ldc);
        return 1;
    case DG_COMPLEX64:
        cpu_blas.cgemm(ord, ta, tb, d->m, d->n, d->k, onef, a, lda, b, ldb,
                       d->beta ? onef : zerof, c, ldc);
        return 1;
    case DG_COMPLEX128:
        cpu_blas.zgemm(ord, ta, tb, d->m, d->n, d->k, one, a, lda, b, ldb,
                       d->beta ? one : zero, c, ldc);
        return 1;
    default:
        return 0;
    }
}

void dg_cpu_gemm_run(const dg_gemm_desc *d)
{
    gemm_fn f = gemm_of(d->dtype);
    int64_t idx[DG_MAXDIM] = {0};
    int ax;
    if (!f || d->m <= 0 || d->n <= 0)
        return;
    for (ax = 0; ax < d->nbatch; ax++)
        if (d->batch[ax] <= 0)
            return;
    blas_enter(d->wide);
    for (;;) {
        const char *a = d->a, *b = d->b;
        char *c = d->c;
        for (ax = 0; ax < d->nbatch; ax++) {
            a += idx[ax] * d->a_bs[ax];
            b += idx[ax] * d->b_bs[ax];
            c += idx[ax] * d->c_bs[ax];
        }
        if (!gemm_blas(d, a, b, c))
            f(d, a, b, c);
        for (ax = d->nbatch - 1; ax >= 0; ax--) {
            if (++idx[ax] < d->batch[ax])
                break;
            idx[ax] = 0;
        }
        if (ax < 0)
            break;
    }
    blas_leave(d->wide);
}
