/* The CPU backend's matrix products, generated from DG_DTYPE_LIST.
 *
 * Each product runs NumPy's own matmul arithmetic for its dtype: every step
 * is c = c + a * b with the dtype's add and multiply loops (kernels/
 * dg_scalar.h), so integers wrap, bool is the OR of ANDs and float16 rounds
 * at every step exactly as NumPy's non-BLAS matmul loop does.  The order is
 * i, then k, then j, with a block of C's row held in a local accumulator, so
 * that the innermost loop runs along a row of B (contiguous in the common
 * case, which gcc vectorises). */
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
    for (;;) {
        const char *a = d->a, *b = d->b;
        char *c = d->c;
        for (ax = 0; ax < d->nbatch; ax++) {
            a += idx[ax] * d->a_bs[ax];
            b += idx[ax] * d->b_bs[ax];
            c += idx[ax] * d->c_bs[ax];
        }
        f(d, a, b, c);
        for (ax = d->nbatch - 1; ax >= 0; ax--) {
            if (++idx[ax] < d->batch[ax])
                break;
            idx[ax] = 0;
        }
        if (ax < 0)
            break;
    }
}
