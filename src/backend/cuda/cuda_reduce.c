/* reduce(): the backend's reductions (dg_reduce_desc, dg_backend.h).
 *
 * The kept dims and the reduced dims are coalesced separately (never across
 * the boundary); then one of two first passes runs (kernels/reduce.cuh):
 *   - inner, when the reduced dims are the inner ones (or nothing is kept, or
 *     few elements are reduced): a block, a warp or a thread per output,
 *     reading along the reduced elements, 16 bytes a load where the one
 *     reduced dim is dense and aligned;
 *   - outer, when the kept dims are the inner ones: threads over neighbouring
 *     outputs (coalesced, 16 bytes a load where aligned), the reduced
 *     elements split among the rows of the block.
 * When the outputs give too few blocks to fill the GPU (a full reduction,
 * few long rows, few wide columns), each output's reduced elements are cut
 * into chunks along grid y, the first pass writes one partial per chunk into
 * memory from the device's pool, and the final pass folds them in chunk
 * order: the results are the same bits on every run.  The final pass alone
 * writes init where nothing is reduced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

/* At most this many reduced elements per output: a thread per output. */
#define RED_THREAD_K 16
/* At most this many (inner pass): a warp per output; more: a block. */
#define RED_WARP_K 4096
/* A chunk gives each of its threads at least this many loads. */
#define RED_MIN_LOADS 8
/* When the outputs give too few blocks for an inner pass, the reduced
 * elements are cut into chunks for up to this many waves of blocks: blocks
 * that finish early take more, so that the multiprocessors finish together;
 * but a wave beyond the first only while each thread still makes
 * RED_WAVE_LOADS loads or more, since each chunk ends in a merge across its
 * block.  On an H200, a sum of 2^27 float32 took 125.6 us in 2 waves (124
 * loads a thread) and 126.8 in 4 (62), its argmax 128 and 133; for 2^28,
 * 4 waves (124 loads) were the faster.  DGARRAY_RED_WAVES (1 to 64, for
 * tuning) sets the waves exactly. */
#define RED_WAVES 4
#define RED_WAVE_LOADS 128

/* The waves, and whether the setting fixed them (*exact). */
static int64_t red_waves(int *exact)
{
    static int64_t w = 0;
    static int set = 0;
    if (w == 0) {
        const char *e = getenv("DGARRAY_RED_WAVES");
        long v = e && *e ? strtol(e, NULL, 10) : 0;
        set = v >= 1 && v <= 64;
        w = set ? v : RED_WAVES;
    }
    *exact = set;
    return w;
}

static int64_t red_abs(int64_t x) { return x < 0 ? -x : x; }

/* "add", "argmax": what reduction d computes, for messages. */
static const char *red_name(const dg_reduce_desc *d)
{
    const char *n = NULL;
    if (d->kind == DG_RED_ARGMAX)
        return "argmax";
    if (d->kind == DG_RED_ARGMIN)
        return "argmin";
    if (d->loop >= 0 && d->loop < dg_nloops)
        n = dg_ufunc_name(dg_loops[d->loop].ufunc);
    return n != NULL ? n : "?";
}

/* Checks that d describes a reduction the kernels can run; sets *m (outputs)
 * and *k (reduced elements per output). */
static dg_status red_check(const dg_reduce_desc *d, int dev, int64_t *m, int64_t *k,
                           dg_error *err)
{
    const int nk = d->ndim - d->nred;
    int a;

    if (d->kind != DG_RED_LOOP && d->kind != DG_RED_ARGMAX && d->kind != DG_RED_ARGMIN)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "reduction kind %d does not exist",
                            d->kind);
    if (dg_dtype_size(d->dtype) == 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a reduction of dtype %d, which does "
                            "not exist", d->dtype);
    if (d->ndim < 0 || d->ndim > DG_MAXDIM || d->nred < 0 || nk < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed reduction (ndim %d, %d "
                            "reduced)", d->ndim, d->nred);
    if (d->kind == DG_RED_LOOP) {
        const dg_loop_info *li;
        if (d->loop < 0 || d->loop >= dg_nloops)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "reduction loop %d does not exist "
                                "(there are %d)", d->loop, dg_nloops);
        li = &dg_loops[d->loop];
        if (li->nin != 2 || li->nout != 1 || li->dtypes[0] != d->dtype ||
            li->dtypes[1] != d->dtype || li->dtypes[2] != d->dtype)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "loop %d of %s cannot reduce %s",
                                d->loop, red_name(d), dg_dtype_name(d->dtype));
    } else if (d->idx == NULL && d->pass != DG_RED_PARTS) {
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "%s without an index output",
                            red_name(d));
    }
    if (dg_cu_red_vec(d->kind, d->loop, d->dtype) == 0)
        return dg_error_set(err, DG_ERR_NOTIMPL, dev, "the GPU cannot reduce %s with %s",
                            dg_dtype_name(d->dtype), red_name(d));
    *m = *k = 1;
    for (a = 0; a < d->ndim; a++) {
        if (d->shape[a] < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a reduction shape below 0");
        if (a < nk)
            *m *= d->shape[a];
        else
            *k *= d->shape[a];
    }
    if (d->pass == DG_RED_PARTS) {
        if (d->where != NULL || d->idx_in != NULL || *k == 0 || d->src == NULL)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a %s partials pass with a where "
                                "mask, read indices, no input or nothing to reduce",
                                red_name(d));
        return DG_OK;
    }
    if (d->pass == DG_RED_FOLD) {
        if (d->nred != 0 || d->part_rows < 1)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a %s fold of %lld rows over %d "
                                "reduced dims", red_name(d), (long long)d->part_rows, d->nred);
    } else if (d->pass != DG_RED_WHOLE) {
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "reduction pass %d", d->pass);
    }
    if (*m > 0 && (d->dst == NULL || (d->pass == DG_RED_WHOLE && *k > 0 && d->src == NULL)))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a %s reduction without %s", red_name(d),
                            d->dst == NULL ? "output" : "input");
    return DG_OK;
}

/* Fills r from d (m, k > 0 outputs and reduced elements, or k 0): kept and
 * reduced dims coalesced apart, each group at least one dim. */
static void red_args(const dg_reduce_desc *d, int64_t m, int64_t k, dg_cu_red *r)
{
    const int nk = d->ndim - d->nred, arg = d->kind != DG_RED_LOOP;
    const int iin = arg && d->idx_in != NULL;
    int64_t ksh[DG_MAXDIM], kst[5][DG_MAXDIM], rsh[DG_MAXDIM], rst[4][DG_MAXDIM];
    int a;

    memset(r, 0, sizeof *r);
    for (a = 0; a < nk; a++) {
        ksh[a] = d->shape[a];
        kst[0][a] = d->src_strides[a];
        kst[1][a] = d->dst_strides[a];
        kst[2][a] = arg ? d->idx_strides[a] : 0;
        kst[3][a] = d->where ? d->where_strides[a] : 0;
        kst[4][a] = iin ? d->idx_in_strides[a] : 0;
    }
    for (a = 0; a < d->nred; a++) {
        rsh[a] = d->shape[nk + a];
        rst[0][a] = d->src_strides[nk + a];
        rst[1][a] = d->where ? d->where_strides[nk + a] : 0;
        rst[2][a] = arg && !iin ? d->idx_gstride[nk + a] : 0;
        rst[3][a] = iin ? d->idx_in_strides[nk + a] : 0;
    }
    /* cu_coalesce makes an empty or all-ones space one dim of extent 1 */
    r->nk = cu_coalesce(nk, ksh, 5, kst);
    r->nr = cu_coalesce(k > 0 ? d->nred : 0, rsh, 4, rst);
    for (a = 0; a < r->nk; a++) {
        r->kshape[a] = ksh[a];
        r->kstr[a] = kst[0][a];
        r->kdst[a] = kst[1][a];
        r->kidx[a] = kst[2][a];
        r->kwhere[a] = kst[3][a];
        r->kin[a] = kst[4][a];
    }
    for (a = 0; a < r->nr; a++) {
        r->rshape[a] = rsh[a];
        r->rstr[a] = rst[0][a];
        r->rwhere[a] = rst[1][a];
        r->rgs[a] = rst[2][a];
        r->rin[a] = rst[3][a];
    }
    r->m = m;
    r->k = k;
    r->kchunk = k;
    r->nsplit = 1;
    r->tpo = 1;
    r->tx = 1;
    r->has_init = d->has_init && !arg;
    memcpy(r->init, d->init, sizeof r->init);
    r->src = d->src;
    r->dst = d->dst;
    r->idx = arg ? d->idx : NULL;
    r->where = (const unsigned char *)d->where;
    r->idx_in = iin ? (const char *)d->idx_in : NULL;
    r->idx_base = arg && !iin ? d->idx_base : 0;
}

/* (cuda_internal.h; grown by doubling from 4 KiB) */
dg_status cu_scratch(cu_be *b, int dev, int stream, size_t nbytes, void **part,
                     dg_error *err)
{
    cu_stream *cs = &b->devs[dev].st[stream];
    cudaError_t ce;
    *part = NULL;
    if (nbytes > cs->red_part_cap) {
        size_t cap = cs->red_part_cap ? cs->red_part_cap : 4096;
        void *p = NULL;
        while (cap < nbytes)
            cap *= 2;
        if (cs->red_part != NULL) {
            ce = cudaFreeAsync(cs->red_part, cs->s);
            cs->red_part = NULL;
            cs->red_part_cap = 0;
            if (ce != cudaSuccess)
                return cu_fail(err, ce, dev, 0, "cudaFreeAsync (a stream's scratch)");
        }
        ce = cudaMallocFromPoolAsync(&p, cap, b->devs[dev].pool, cs->s);
        if (ce == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            return DG_OK;
        }
        if (ce != cudaSuccess)
            return cu_fail(err, ce, dev, cap, "cudaMallocFromPoolAsync (a stream's "
                           "scratch)");
        cs->red_part = p;
        cs->red_part_cap = cap;
    }
    *part = cs->red_part;
    return DG_OK;
}

void cu_reduce_scratch_free(cu_dev *d)
{
    int k;
    for (k = 0; k < DG_NSTREAMS; k++) {
        cu_stream *cs = &d->st[k];
        if (cs->s == NULL)
            continue;
        if (cs->red_part != NULL && cudaFreeAsync(cs->red_part, cs->s) != cudaSuccess)
            (void)cudaGetLastError();
        cs->red_part = NULL;
        cs->red_part_cap = 0;
        if (cudaStreamSynchronize(cs->s) != cudaSuccess)
            (void)cudaGetLastError();
    }
}

/* 1 if every stride in st[0..n) is a multiple of `al` bytes. */
static int red_aligned(const int64_t *st, int n, int64_t al)
{
    int a;
    for (a = 0; a < n; a++)
        if (st[a] % al != 0)
            return 0;
    return 1;
}

static unsigned red_grid(int64_t groups)
{
    return groups > 0x7fffffff ? 0x7fffffffu : groups < 1 ? 1u : (unsigned)groups;
}

/* Launches pass `which`; on failure records it in err. */
static dg_status red_launch(const dg_reduce_desc *d, int dev, int which, int vec,
                            const dg_cu_red *r, unsigned gx, unsigned gy, cudaStream_t s,
                            dg_error *err)
{
    static const char *const pass[3] = {"inner", "outer", "final"};
    char what[128];
    cudaError_t ce = dg_cu_red_launch(d->kind, d->loop, d->dtype, which, vec, r, gx, gy, s);
    if (ce == cudaSuccess)
        return DG_OK;
    snprintf(what, sizeof what, "the kernel launch of a reduction (%s of %s, %s pass)",
             red_name(d), dg_dtype_name(d->dtype), pass[which]);
    return cu_fail(err, ce, dev, 0, what);
}

/* How a first pass runs: the kernel (which, vec), its blocks along the
 * outputs (groups) and the chunks of each output's reduced elements
 * (r->kchunk, r->nsplit), from r as red_args filled it (k > 0). */
typedef struct red_geom {
    int which, vec;
    int64_t groups;
} red_geom;

static dg_status red_plan(cu_be *b, int dev, const dg_reduce_desc *d, dg_cu_red *r,
                          red_geom *g, dg_error *err)
{
    const int isz = dg_dtype_size(d->dtype);
    const int64_t m = r->m, k = r->k;
    const int vmax = dg_cu_red_vec(d->kind, d->loop, d->dtype);
    const int64_t ks = red_abs(r->kstr[r->nk - 1]), rs = red_abs(r->rstr[r->nr - 1]);
    const int64_t al = (int64_t)vmax * isz;
    int per_sm = 0;
    int64_t slots;
    cudaError_t ce;

    g->vec = 1;
    g->which = m > 1 && k > RED_THREAD_K && ks != 0 && ks < rs ? DG_CU_RED_OUTER
                                                                : DG_CU_RED_INNER;
    if (g->which == DG_CU_RED_INNER) {
        r->tpo = k <= RED_THREAD_K ? 1 : k <= RED_WARP_K ? 32 : DG_CU_THREADS;
        if (vmax > 1 && d->where == NULL && r->idx_in == NULL && r->nr == 1 &&
            r->rstr[0] == isz && (uintptr_t)d->src % (uint64_t)al == 0 &&
            red_aligned(r->kstr, r->nk, al))
            g->vec = vmax;
        g->groups = (m + DG_CU_THREADS / r->tpo - 1) / (DG_CU_THREADS / r->tpo);
    } else {
        if (vmax > 1 && d->where == NULL && r->idx_in == NULL && r->kstr[r->nk - 1] == isz &&
            r->kshape[r->nk - 1] % vmax == 0 && (uintptr_t)d->src % (uint64_t)al == 0 &&
            red_aligned(r->kstr, r->nk - 1, al) && red_aligned(r->rstr, r->nr, al))
            g->vec = vmax;
        /* the fewest threads along the outputs that cover them, at most a warp */
        r->tx = 32;
        while (r->tx > 1 && (int64_t)(r->tx / 2) * g->vec >= m)
            r->tx /= 2;
        g->groups = (m + (int64_t)r->tx * g->vec - 1) / ((int64_t)r->tx * g->vec);
    }
    if (g->which == DG_CU_RED_INNER && r->tpo != DG_CU_THREADS)
        return DG_OK;

    /* chunks: enough blocks for one full wave of the GPU when the outputs
     * give fewer, each thread still making RED_MIN_LOADS loads or more */
    ce = dg_cu_red_occupancy(d->kind, d->loop, d->dtype, g->which, g->vec, &per_sm);
    if (ce != cudaSuccess) {
        char what[128];
        snprintf(what, sizeof what, "cudaOccupancyMaxActiveBlocksPerMultiprocessor "
                 "(a reduction: %s of %s)", red_name(d), dg_dtype_name(d->dtype));
        return cu_fail(err, ce, dev, 0, what);
    }
    slots = (int64_t)(per_sm > 0 ? per_sm : 1) * b->devs[dev].nsm;
    if (g->groups < slots) {
        const int64_t rows = g->which == DG_CU_RED_OUTER ? DG_CU_THREADS / r->tx
                                                         : DG_CU_THREADS;
        const int64_t per = rows * (g->which == DG_CU_RED_INNER ? g->vec : 1) * RED_MIN_LOADS;
        /* several waves where one long fold is cut (a full reduction);
         * outer passes keep one, their final pass grows with outputs */
        int exact = 0;
        const int64_t waves = g->which == DG_CU_RED_INNER ? red_waves(&exact) : 1;
        const int64_t one = slots / g->groups > 1 ? slots / g->groups : 1;
        const int64_t deep = k / (per / RED_MIN_LOADS * RED_WAVE_LOADS);
        int64_t want = waves * slots / g->groups, most = (k + per - 1) / per;
        if (!exact && want > one && want > deep)
            want = deep > one ? deep : one;
        if (want > most)
            want = most;
        if (want > 65535)
            want = 65535;
        if (want > 1) {
            r->kchunk = (k + want - 1) / want;
            if (g->which == DG_CU_RED_INNER)
                r->kchunk = (r->kchunk + g->vec - 1) / g->vec * g->vec;
            r->nsplit = (int32_t)((k + r->kchunk - 1) / r->kchunk);
        }
    }
    return DG_OK;
}

/* Launches the final pass over the r->nsplit partials of each of the r->m
 * outputs (none: init): a thread per output where there are many outputs
 * (neighbouring threads read neighbouring partials), else a warp or a
 * block per output as the partials are many. */
static dg_status red_final(const dg_reduce_desc *d, int dev, dg_cu_red *r, cudaStream_t s,
                           dg_error *err)
{
    r->tpo = r->m >= 8192 || r->nsplit < 8 ? 1 : r->nsplit >= 64 ? DG_CU_THREADS : 32;
    return red_launch(d, dev, DG_CU_RED_FINAL, 1, r,
                      red_grid((r->m + DG_CU_THREADS / r->tpo - 1) / (DG_CU_THREADS / r->tpo)),
                      1, s, err);
}

dg_status cu_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *d, int64_t *rows,
                          dg_error *err)
{
    cu_be *b = cu_of(be);
    int64_t m = 0, k = 0;
    dg_cu_red r;
    red_geom g;

    *rows = 1;
    DG_CHECK(cu_check_stream(b, dev, DG_STREAM_COMPUTE, "reduce_parts", err));
    DG_CHECK(red_check(d, dev, &m, &k, err));
    if (d->pass != DG_RED_PARTS)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "the rows of a reduction pass %d",
                            d->pass);
    red_args(d, m, k, &r);
    DG_CHECK(cu_set_device(b, dev, err));
    DG_CHECK(red_plan(b, dev, d, &r, &g, err));
    *rows = r.nsplit;
    return DG_OK;
}

dg_status cu_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                    dg_error *err)
{
    cu_be *b = cu_of(be);
    const int isz = dg_dtype_size(d->dtype);
    int64_t m = 0, k = 0;
    dg_cu_red r;
    red_geom g;
    cudaStream_t s;
    dg_status st;

    DG_CHECK(cu_check_stream(b, dev, stream, "reduce", err));
    DG_CHECK(red_check(d, dev, &m, &k, err));
    if (d->pass != DG_RED_WHOLE &&
        (d->part == NULL || d->part_have == NULL || d->part_row < 0 ||
         (d->kind != DG_RED_LOOP && d->part_idx == NULL)))
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a %s %s pass without its stack",
                            red_name(d), d->pass == DG_RED_PARTS ? "partials" : "fold");
    if (m == 0)
        return DG_OK;
    red_args(d, m, k, &r);
    r.fpe = cu_fpe_args(b, dev, DG_CU_FPE_REDUCE);
    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;

    if (d->pass == DG_RED_FOLD) { /* the stack's rows, in order */
        r.nsplit = (int32_t)d->part_rows;
        r.part = d->part;
        r.part_idx = r.idx != NULL ? d->part_idx : NULL;
        r.part_have = d->part_have;
        r.idx_base = 0;
        if (d->part_rows > 0x7fffffff)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a fold of %lld rows",
                                (long long)d->part_rows);
        st = red_final(d, dev, &r, s, err);
        if (st == DG_OK)
            cu_bump(b, dev, stream);
        return st;
    }
    if (k == 0) { /* every output is init */
        r.nsplit = 0;
        st = red_final(d, dev, &r, s, err);
        if (st == DG_OK)
            cu_bump(b, dev, stream);
        return st;
    }
    DG_CHECK(red_plan(b, dev, d, &r, &g, err));

    if (d->pass == DG_RED_PARTS) {
        /* the partials go to the caller's stack (red_plan gave its rows) */
        const size_t off = (size_t)d->part_row * (size_t)m;
        r.part = d->part + off * (size_t)isz;
        r.part_idx = d->kind != DG_RED_LOOP ? d->part_idx + off : NULL;
        r.part_have = d->part_have + off;
    } else if (r.nsplit > 1) {
        /* the partials, in the stream's scratch: values, indices (argmax /
         * argmin) and have flags of [nsplit][m] */
        const size_t n = (size_t)r.nsplit * (size_t)m;
        const size_t vb = (n * (size_t)isz + 15) / 16 * 16;
        const size_t ib = r.idx != NULL ? n * sizeof(int64_t) : 0;
        void *mem = NULL;
        DG_CHECK(cu_scratch(b, dev, stream, vb + ib + n, &mem, err));
        if (mem == NULL) {
            /* no room for the partials: one pass, slower but the same result
             * up to rounding */
            r.nsplit = 1;
            r.kchunk = k;
        } else {
            r.part = (char *)mem;
            r.part_idx = r.idx != NULL ? (int64_t *)((char *)mem + vb) : NULL;
            r.part_have = (unsigned char *)mem + vb + ib;
        }
    }

    st = red_launch(d, dev, g.which, g.vec, &r, red_grid(g.groups), (unsigned)r.nsplit, s, err);
    if (st == DG_OK && d->pass == DG_RED_WHOLE && r.part != NULL) {
        r.idx_base = 0; /* the partials' indices hold it */
        st = red_final(d, dev, &r, s, err);
    }
    cu_bump(b, dev, stream);
    return st;
}
