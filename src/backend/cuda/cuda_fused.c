/* fused(): a fused elementwise chain (dg_fused.h) as one kernel compiled at
 * run time.
 *
 * The chain's space is coalesced, its CUDA source generated
 * (src/core/dg_fused_src.c), compiled by NVRTC for the GPU's compute
 * capability through the run-time compiler's caches (src/core/dg_rtc.c),
 * loaded once per process (cudaLibraryLoadData: every device's context) and
 * launched on the chunk's stream with the chain's addresses, extents and
 * scalars as its one argument.  The first compile of a chain costs NVRTC's
 * time (the source includes kernels/dg_scalar.h); later ones come from memory,
 * or from the disk cache in a later process.  The loaded kernel is memoized
 * by the piece's key (dg_fused_key: what the source depends on, never the
 * addresses or extents) and the GPU's compute capability, so that the
 * chain's piece on the next GPU, and the chain's next call, compute only
 * the key and the argument words: no source, no compiler key, no questions
 * to the driver (0.2 us on the host where the long way took 12 us
 * unchecked, 36 us checked: benchmarks/fused_launch_host.py).
 *
 * Where no kernel can be had (no NVRTC, a compile or load failure, too many
 * operands for one argument block), the chain runs step by step with the
 * ahead-of-time elementwise kernels instead, its temporaries in memory of
 * the device's pool: slower, never wrong.  The reason is said once on
 * stderr, and the steps are used from then on.  A piece of a chain of fewer
 * than DGARRAY_FUSED_KERNEL_MIN elements in all its pieces (default 65,536)
 * also runs step by step: there a compile (hundreds of milliseconds the
 * first time a chain is seen) costs more than the launches it saves, and a
 * program of many small distinct chains (a test suite) would spend its time
 * in NVRTC.  A small piece of a large chain (the halo row of a stencil
 * whose chain was cut at the rows another device holds) is a kernel too:
 * step by step it would cost a launch and a temporary per step at every
 * iteration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "dg_fpe.h"
#include "dg_fused_memo.h"
#include "dg_fused_src.h"
#include "dg_rtc.h"

/* Loaded kernels, by the address of their code in the compiler's memory
 * cache (stable for the life of the process). */
typedef struct fz_kernel {
    struct fz_kernel *next;
    const void *code;
    cudaKernel_t k;
} fz_kernel;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static fz_kernel *g_kernels;
static int g_rtc_off;          /* 1 after the first failure: steps from then on */
static int64_t g_kernel_min = -1; /* DGARRAY_FUSED_KERNEL_MIN, read once [g_mu] */

/* The fewest elements of a piece that runs as a generated kernel. */
static int64_t kernel_min(void)
{
    int64_t v;
    pthread_mutex_lock(&g_mu);
    if (g_kernel_min < 0) {
        const char *e = getenv("DGARRAY_FUSED_KERNEL_MIN");
        char *end = NULL;
        long long x = e ? strtoll(e, &end, 10) : -1;
        g_kernel_min = e && end != e && x >= 0 ? (int64_t)x : (int64_t)1 << 16;
    }
    v = g_kernel_min;
    pthread_mutex_unlock(&g_mu);
    return v;
}

/* The kernel of `code` (loading it the first time). */
static dg_status kernel_of(const void *code, int dev, cudaKernel_t *out, dg_error *err)
{
    fz_kernel *e;
    cudaLibrary_t lib;
    cudaError_t ce;
    pthread_mutex_lock(&g_mu);
    for (e = g_kernels; e; e = e->next)
        if (e->code == code) {
            *out = e->k;
            pthread_mutex_unlock(&g_mu);
            return DG_OK;
        }
    ce = cudaLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0);
    if (ce == cudaSuccess)
        ce = cudaLibraryGetKernel(out, lib, "dg_fused");
    if (ce != cudaSuccess) {
        pthread_mutex_unlock(&g_mu);
        return cu_fail(err, ce, dev, 0, "loading a kernel compiled at run time");
    }
    e = (fz_kernel *)calloc(1, sizeof(*e));
    if (e) { /* without the entry the kernel is loaded again next time */
        e->code = code;
        e->k = *out;
        e->next = g_kernels;
        g_kernels = e;
    }
    pthread_mutex_unlock(&g_mu);
    return DG_OK;
}

/* What is known of the GPUs' compute capabilities (major * 10 + minor) and
 * the driver's version, asked once per GPU [g_mu]: g_arch by the GPU's id
 * (0: not asked yet), g_archs the distinct ones seen, whose index is the
 * memo's slot (dg_fused_memo.h): a kernel loaded by cudaLibraryLoadData
 * runs on every GPU of its compute capability, so the chain's piece on the
 * second GPU of two alike finds the first one's kernel. */
#define FZ_MAXID 64
static int g_arch[FZ_MAXID];
static int g_archs[DG_FUSED_MEMO_SLOTS], g_narchs;
static int g_driver;

/* GPU `id`'s compute capability, the driver's version, and the memo's slot
 * of that capability (-1: none free, not memoized). */
static dg_status arch_of(int dev, int id, int *arch, int *driver, int *slot, dg_error *err)
{
    int major = 0, minor = 0, drv = 0, i;
    cudaError_t ce;
    pthread_mutex_lock(&g_mu);
    *arch = id >= 0 && id < FZ_MAXID ? g_arch[id] : 0;
    *driver = g_driver;
    pthread_mutex_unlock(&g_mu);
    if (*arch == 0 || *driver == 0) {
        ce = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id);
        if (ce == cudaSuccess)
            ce = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id);
        if (ce == cudaSuccess)
            ce = cudaDriverGetVersion(&drv);
        if (ce != cudaSuccess)
            return cu_fail(err, ce, dev, 0, "asking the GPU's compute capability");
        *arch = major * 10 + minor;
        *driver = drv;
    }
    pthread_mutex_lock(&g_mu);
    if (id >= 0 && id < FZ_MAXID)
        g_arch[id] = *arch;
    g_driver = *driver;
    for (i = 0; i < g_narchs && g_archs[i] != *arch; i++)
        ;
    if (i == g_narchs && g_narchs < DG_FUSED_MEMO_SLOTS)
        g_archs[g_narchs++] = *arch;
    *slot = i < g_narchs ? i : -1;
    pthread_mutex_unlock(&g_mu);
    return DG_OK;
}

/* The kernel of key for GPU `dev`: from the memo (dg_fused_memo.h) where a
 * piece of the same key ran before on a GPU of its compute capability (a
 * chain called again, its piece on the second GPU), else its source
 * generated, compiled (or found in the compiler's caches), loaded, and
 * memoized. */
static dg_status kernel_for(cu_be *b, int dev, const dg_fused_key *key, cudaKernel_t *k,
                            dg_error *err)
{
    const uint64_t h = dg_fused_key_hash(key);
    const void *code = NULL;
    size_t ncode = 0;
    int arch = 0, driver = 0, slot = -1, from = 0;
    char *src;
    dg_status st;

    DG_CHECK(arch_of(dev, b->devs[dev].id, &arch, &driver, &slot, err));
    *k = (cudaKernel_t)dg_fused_memo_find(key, h, slot);
    if (*k)
        return DG_OK;
    src = (char *)malloc(1 << 16);
    if (!src)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    st = dg_fused_key_source(key, src, 1 << 16, err);
    if (st == DG_OK)
        st = dg_rtc_compile(src, arch, driver, &code, &ncode, &from, err);
    if (st == DG_OK)
        st = kernel_of(code, dev, k, err);
    if (st == DG_OK)
        dg_fused_memo_put(key, h, slot, (void *)*k);
    free(src);
    return st;
}

/* d (coalesced) as one generated kernel launched on s: its key and argument
 * words computed for this piece, its kernel memoized by key (kernel_for). */
static dg_status run_kernel(cu_be *b, int dev, cudaStream_t s, const dg_fused_desc *d,
                            int64_t n, dg_error *err)
{
    dg_fused_key key;
    dg_fused_args args_s, *args = &args_s;
    cudaKernel_t k;
    dg_status st;
    cudaError_t ce;
    void *params[1];
    dim3 grid, block;

    {
        /* where the chain's errstate watches anything, its checked kernel,
         * noting as the ahead-of-time kernels do (named by its last step) */
        const dg_cu_fpe f = cu_fpe_args(b, dev, d->step[d->nstep - 1].loop);
        /* 2: underflow is watched too (its own kernel, dg_fused_src.h) */
        const int under = ((f.actions >> DG_FPE_SHIFT(DG_FPE_UNDER)) & 0xFu) != 0;
        const int check = f.actions == 0 ? 0 : under ? 2 : 1;
        st = dg_fused_key_of(d, check, &key, err);
        if (st != DG_OK)
            return st;
        dg_fused_args_of(d, &key, args);
        if (args->fpe_word >= 0) {
            args->w[args->fpe_word] = (uint64_t)f.actions | (uint64_t)f.gen << 32;
            args->w[args->fpe_word + 1] = (uint64_t)(uintptr_t)f.gate;
            args->w[args->fpe_word + 2] = (uint64_t)(uintptr_t)f.rec;
            args->w[args->fpe_word + 3] = (uint64_t)(uint32_t)f.where;
        }
    }
    st = kernel_for(b, dev, &key, &k, err);
    if (st == DG_OK) {
        if (args->band > 0) {
            /* the streaming kernel: a block per tile of columns and band of rows */
            const int64_t tile = (int64_t)args->items * DG_CU_THREADS;
            const int64_t gy = (args->rows + args->band - 1) / args->band;
            grid.x = (unsigned)((args->cols + tile - 1) / tile);
            grid.y = (unsigned)(gy < 1 ? 1 : gy > 65535 ? 65535 : gy);
        } else if (args->items > 0) {
            /* the row kernel: a block per tile of a row, rows a grid stride
             * apart; args->per_sm blocks per SM in all (16, as the other
             * kernels, unless DGARRAY_FUSED_ROWS says otherwise) */
            const int64_t tile = (int64_t)args->items * DG_CU_THREADS;
            const int64_t gx = (args->cols + tile - 1) / tile;
            int64_t gy = (int64_t)b->devs[dev].nsm * args->per_sm / gx;
            gy = gy < 1 ? 1 : gy > args->rows ? args->rows : gy;
            grid.x = (unsigned)gx;
            grid.y = (unsigned)(gy < 1 ? 1 : gy > 65535 ? 65535 : gy);
        } else {
            /* a contiguous kernel's thread moves args->vec elements */
            grid.x = cu_blocks((n + args->vec - 1) / args->vec, (int64_t)b->devs[dev].nsm * 16);
            grid.y = 1;
        }
        grid.z = 1;
        block.x = DG_CU_THREADS;
        block.y = block.z = 1;
        params[0] = args->w;
        ce = cudaLaunchKernel((const void *)k, grid, block, params, 0, s);
        if (ce != cudaSuccess)
            st = cu_fail(err, ce, dev, 0, "the launch of a fused elementwise kernel");
    }
    return st;
}

/* d (coalesced) step by step with the ahead-of-time kernels; its temporaries
 * in the device's pool, released after the steps (stream-ordered). */
static dg_status run_steps(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                           int64_t n, dg_error *err)
{
    void *tmp[DG_FUSED_MAXVALS] = {0};
    int64_t tst[DG_FUSED_MAXVALS][DG_MAXDIM];
    dg_status st = DG_OK;
    int k, a, s;
    for (k = 0; k < d->nval && st == DG_OK; k++) {
        int64_t stride = dg_dtype_size(d->val[k].dtype);
        if (d->val[k].kind != DG_FV_TEMP)
            continue;
        for (a = d->ndim - 1; a >= 0; a--) {
            tst[k][a] = stride;
            stride *= d->shape[a];
        }
        st = be->alloc(be, dev, (size_t)n * (size_t)dg_dtype_size(d->val[k].dtype), &tmp[k],
                       err);
    }
    for (s = 0; s < d->nstep && st == DG_OK; s++) {
        const dg_fused_step *fs = &d->step[s];
        const dg_loop_info *li = &dg_loops[fs->loop];
        dg_ew_desc e;
        memset(&e, 0, sizeof e);
        e.loop = fs->loop;
        e.ndim = d->ndim;
        memcpy(e.shape, d->shape, sizeof e.shape);
        e.nop = li->nin + li->nout;
        for (k = 0; k < e.nop; k++) {
            const dg_fused_val *v = &d->val[fs->op[k]];
            if (v->kind == DG_FV_SCALAR) {
                memcpy(e.scalar[k], v->scalar, 16);
            } else if (v->kind == DG_FV_TEMP) {
                e.data[k] = (char *)tmp[fs->op[k]];
                memcpy(e.strides[k], tst[fs->op[k]], sizeof(int64_t) * (size_t)d->ndim);
            } else {
                e.data[k] = v->data;
                memcpy(e.strides[k], v->strides, sizeof(int64_t) * (size_t)d->ndim);
            }
        }
        st = cu_elementwise(be, dev, stream, &e, err);
    }
    for (k = 0; k < d->nval; k++)
        if (tmp[k])
            be->release(be, dev, tmp[k]);
    return st;
}

dg_status cu_fused(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d0,
                   dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_fused_desc *d;
    dg_status st = DG_OK;
    int64_t n;
    int a, s, off;

    DG_CHECK(cu_check_stream(b, dev, stream, "fused", err));
    if (stream != DG_STREAM_COMPUTE)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "fused work runs on the compute stream");
    if (d0->nstep < 1 || d0->nstep > DG_FUSED_MAXSTEPS || d0->nval < 1 ||
        d0->nval > DG_FUSED_MAXVALS || d0->ndim < 0 || d0->ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed fused chain (%d steps, %d "
                            "values)", d0->nstep, d0->nval);
    for (s = 0; s < d0->nstep; s++)
        if (d0->step[s].loop < 0 || d0->step[s].loop >= dg_cu_ew_nloops)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "fused loop %d does not exist",
                                d0->step[s].loop);
    n = dg_shape_size(d0->ndim, d0->shape);
    for (a = 0; a < d0->ndim; a++)
        if (d0->shape[a] < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a fused shape below 0");
    if (n == 0)
        return DG_OK;
    d = (dg_fused_desc *)malloc(sizeof(*d));
    if (!d)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    memcpy(d, d0, sizeof(*d));
    dg_fused_coalesce(d);
    if (d->ndim == 0) {
        d->ndim = 1;
        d->shape[0] = 1;
        for (a = 0; a < d->nval; a++)
            d->val[a].strides[0] = 0;
    }
    DG_CHECK_GOTO(cu_set_device(b, dev, err), st, done);
    off = (d0->chain_elems > n ? d0->chain_elems : n) < kernel_min();
    pthread_mutex_lock(&g_mu);
    off |= g_rtc_off;
    pthread_mutex_unlock(&g_mu);
    if (!off) {
        dg_error e2 = DG_ERROR_INIT;
        st = run_kernel(b, dev, b->devs[dev].st[stream].s, d, n, &e2);
        if (st == DG_OK) {
            cu_bump(b, dev, stream);
            goto done;
        }
        if (e2.code == DG_ERR_DEVICE_NOMEM) { /* the GPU's state, not the compiler's */
            if (err->code == DG_OK)
                *err = e2;
            goto done;
        }
        pthread_mutex_lock(&g_mu);
        if (!g_rtc_off)
            fprintf(stderr, "dgarray: fused elementwise chains run step by step on this "
                    "process's GPUs: %s\n", e2.msg);
        g_rtc_off = 1;
        pthread_mutex_unlock(&g_mu);
        dg_error_clear(&e2);
    }
    st = run_steps(be, dev, stream, d, n, err);
done:
    free(d);
    return st;
}
