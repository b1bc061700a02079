/* Floating-point errors the kernels noted ([surface] item 3): the records
 * of dg_cu_fpe (cu_kernels.h), one per device in mapped host memory, and
 * their reading, the fpe_fold slot (a source of the core's dg_fpe_take).
 *
 * A launch whose call watches nothing (the core's action word, fpe_actions
 * of dg_backend_i, is 0) gets a zero
 * dg_cu_fpe: its kernel checks nothing.  Else it gets the device's gate,
 * record and generation; the binding's take (at the wait it does for raise,
 * call, print and log modes and reductions, and after every other call, for
 * warn mode) reads each record without a copy or a synchronisation, reports
 * the bits whose counts moved, and starts a new generation of that device.
 * A kind raised by a kernel launched before that take, and published in
 * the same generation by an earlier kernel, is reported once for both
 * (warnings merge, as the CPU backend's do when two calls' tasks run
 * before one take).
 *
 * On by default; DGARRAY_GPU_ERRSTATE=0 in the environment when the backend
 * starts turns it off (every launch then gets the zero dg_cu_fpe, as under
 * errstate(all='ignore'), and errstate has no effect on GPUs, as in
 * CuPy).  Session 14 measured the checked kernels on one H200 under
 * NumPy's default errstate against all='ignore': add 0.999, sin 0.893, sum
 * 0.990, the fused chain 0.205 and Jacobi's fused step 0.24, and made the
 * checks opt-in; session 15 took the local memory, the calls and all but
 * one test per element out of the checked fused kernels, and the load and
 * branch per element out of the ahead-of-time ones (docs/architecture.md,
 * "Floating-point errors"), and made them the default again. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "dg_fpe.h"

typedef struct cu_fpe {
    dg_cu_fpe_rec *rec;          /* ndev records, mapped host memory */
    unsigned long long **gate;   /* per device: its gate, device memory */
    uint32_t *gen;               /* per device: the generation of new launches */
    uint32_t *seen_total;        /* per device: rec.total at the last take */
    uint32_t (*seen)[32];        /* per device: rec.cnt at the last take */
    int on;                      /* launches get the action word (not DGARRAY_GPU_ERRSTATE=0) */
} cu_fpe;

/* The name NumPy's message gives a publication's `where`. */
static const char *where_name(int32_t w)
{
    if (w == DG_CU_FPE_REDUCE)
        return "reduce";
    if (w == DG_CU_FPE_ACCUMULATE)
        return "accumulate";
    if (w >= 0 && w < dg_cu_ew_nloops)
        return dg_cu_ew_infos[w].name;
    return NULL;
}

/* The fpe_fold slot: what the devices published since the last call. */
static void fpe_fold(dg_backend_i *be, uint32_t *noted, const char **where)
{
    cu_be *b = cu_of(be);
    cu_fpe *f = b->fpe;
    int i, k;
    if (f == NULL)
        return;
    for (i = 0; i < b->ndev; i++) {
        volatile dg_cu_fpe_rec *r = &f->rec[i];
        const uint32_t total = r->total;
        uint32_t bits = 0;
        if (total == f->seen_total[i])
            continue;
        f->seen_total[i] = total;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        for (k = 0; k < 32; k++) {
            const uint32_t c = r->cnt[k];
            if (c != f->seen[i][k]) {
                f->seen[i][k] = c;
                bits |= 1u << k;
            }
        }
        if (bits) {
            const char *w = where_name(r->where);
            *noted |= bits;
            if (*where == NULL)
                *where = w;
            f->gen[i]++;
        }
    }
}

dg_cu_fpe cu_fpe_args(cu_be *b, int dev, int32_t where)
{
    dg_cu_fpe a;
    memset(&a, 0, sizeof a);
    if (b->fpe == NULL || !b->fpe->on || dev < 0 || dev >= b->ndev)
        return a;
    a.actions = b->iface.fpe_actions != NULL ? b->iface.fpe_actions() : 0;
    if (a.actions == 0)
        return a;
    a.gen = b->fpe->gen[dev];
    a.gate = b->fpe->gate[dev];
    a.rec = &b->fpe->rec[dev]; /* mapped: the same address on every device (UVA) */
    /* a reduction's combine, read later: "reduce", whatever the loop */
    a.where = a.actions & DG_FPE_AS_REDUCE ? DG_CU_FPE_REDUCE : where;
    return a;
}

dg_status cu_fpe_setup(cu_be *b, dg_error *err)
{
    cu_fpe *f = (cu_fpe *)calloc(1, sizeof *f);
    void *rec = NULL;
    int i;
    if (f == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    b->fpe = f;
    {
        const char *e = getenv("DGARRAY_GPU_ERRSTATE");
        f->on = e == NULL || strcmp(e, "0") != 0;
    }
    f->gate = (unsigned long long **)calloc((size_t)b->ndev, sizeof *f->gate);
    f->gen = (uint32_t *)calloc((size_t)b->ndev, sizeof *f->gen);
    f->seen_total = (uint32_t *)calloc((size_t)b->ndev, sizeof *f->seen_total);
    f->seen = (uint32_t(*)[32])calloc((size_t)b->ndev, sizeof *f->seen);
    if (!f->gate || !f->gen || !f->seen_total || !f->seen)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    CU_CHECK(cudaHostAlloc(&rec, (size_t)b->ndev * sizeof(dg_cu_fpe_rec),
                           cudaHostAllocMapped | cudaHostAllocPortable),
             err, -1, "cudaHostAlloc (the floating-point error records)");
    f->rec = (dg_cu_fpe_rec *)rec;
    memset(rec, 0, (size_t)b->ndev * sizeof(dg_cu_fpe_rec));
    for (i = 0; i < b->ndev; i++) {
        void *g = NULL;
        DG_CHECK(cu_set_device(b, i, err));
        CU_CHECK(cudaMalloc(&g, sizeof(unsigned long long)), err, i,
                 "cudaMalloc (the floating-point error gate)");
        f->gate[i] = (unsigned long long *)g;
        CU_CHECK(cudaMemset(g, 0, sizeof(unsigned long long)), err, i, "cudaMemset");
    }
    b->iface.fpe_fold = fpe_fold;
    return DG_OK;
}

void cu_fpe_destroy(cu_be *b)
{
    cu_fpe *f = b->fpe;
    int i;
    if (f == NULL)
        return;
    for (i = 0; f->gate && i < b->ndev; i++)
        if (f->gate[i] != NULL && cudaSetDevice(b->devs[i].id) == cudaSuccess &&
            cudaFree(f->gate[i]) != cudaSuccess)
            (void)cudaGetLastError();
    if (f->rec != NULL && cudaFreeHost(f->rec) != cudaSuccess)
        (void)cudaGetLastError();
    free(f->gate);
    free(f->gen);
    free(f->seen_total);
    free(f->seen);
    free(f);
    b->fpe = NULL;
}
