/* The CPU backend's fused elementwise work: tiles of the innermost axis
 * (cpu_fused.h). */
#include <string.h>

#include "cpu_fused.h"
#include "../../core/dg_box.h"
#include "cpu_loops.h"
#include "../../core/dg_ufunc.h"

/* Bytes of all the values one tile touches are kept near this, so that a
 * tile's values stay in the first levels of the cache. */
#define FZ_TILE_BYTES (64 * 1024)
#define FZ_TILE_MIN 256
#define FZ_TILE_MAX 8192

/* Elements per tile for d. */
static int64_t tile_len(const dg_fused_desc *d)
{
    int64_t per = 0, t;
    int k;
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind != DG_FV_SCALAR)
            per += dg_dtype_size(d->val[k].dtype);
    t = per ? FZ_TILE_BYTES / per : FZ_TILE_MAX;
    t &= ~(int64_t)63;
    return t < FZ_TILE_MIN ? FZ_TILE_MIN : t > FZ_TILE_MAX ? FZ_TILE_MAX : t;
}

/* Scratch bytes of one temporary of `dtype` for tiles of t elements. */
static size_t temp_bytes(int dtype, int64_t t)
{
    return ((size_t)t * (size_t)dg_dtype_size(dtype) + 63) & ~(size_t)63;
}

/* Temporaries, and the outputs that may be streamed past the cache (a tile
 * each, whether or not the run streams them). */
size_t dg_cpu_fused_scratch_bytes(const dg_fused_desc *d)
{
    const int64_t t = tile_len(d);
    size_t n = 0;
    int k;
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_TEMP || d->val[k].kind == DG_FV_OUT)
            n += temp_bytes(d->val[k].dtype, t);
    return n;
}

/* 1 if value k lives in memory. */
static int in_memory(const dg_fused_val *v)
{
    return v->kind == DG_FV_IN || v->kind == DG_FV_OUT;
}

/* 1 if output value o of d (coalesced: ndim axes of `shape`, strides st) is
 * written tile by tile past the cache (cpu_loops.h, dg_cpu_stream_min): every
 * step is a loop that streams (dg_cpu_loop_streams), one step writes o and
 * none reads it, it is dense along the inner axis and at least the threshold
 * in bytes, and no other memory value's bytes meet it (an input read after
 * the step in the same tile would otherwise see the old values). */
static int fused_streams(const dg_fused_desc *d, int ndim, const int64_t *shape,
                         int64_t st[][DG_MAXDIM], int o)
{
    const int isz = dg_dtype_size(d->val[o].dtype);
    int64_t n = 1;
    int s, k, writes = 0;
    for (s = 0; s < d->nstep; s++) {
        const dg_loop_info *li = &dg_loops[d->step[s].loop];
        if (!dg_cpu_loop_streams(d->step[s].loop))
            return 0;
        for (k = 0; k < li->nin + li->nout; k++)
            if (d->step[s].op[k] == o) {
                if (k < li->nin)
                    return 0;
                writes++;
            }
    }
    for (k = 0; k < ndim; k++)
        n *= shape[k];
    if (writes != 1 || st[o][ndim - 1] != isz || isz > 16 || shape[ndim - 1] < 2 ||
        (size_t)n * (size_t)isz < dg_cpu_stream_min())
        return 0;
    for (k = 0; k < d->nval; k++)
        if (k != o && in_memory(&d->val[k]) &&
            dg_spans_meet(ndim, d->val[o].data, st[o], shape, isz, d->val[k].data, st[k], shape,
                          dg_dtype_size(d->val[k].dtype)))
            return 0;
    return 1;
}

void dg_cpu_fused_run(dg_fused_desc *d, void *scratch)
{
    int64_t shape[DG_MAXDIM], st[DG_FUSED_MAXVALS][DG_MAXDIM], idx[DG_MAXDIM] = {0};
    char *base[DG_FUSED_MAXVALS], *reg[DG_FUSED_MAXVALS];
    const int64_t t = tile_len(d);
    char *sp = (char *)scratch;
    int ndim, inner, a, k, s, nstream = 0;
    int stream[DG_FUSED_MAXVALS];

    for (a = 0; a < d->ndim; a++)
        if (d->shape[a] <= 0)
            return;
    dg_fused_coalesce(d);
    ndim = d->ndim > 0 ? d->ndim : 1;
    for (a = 0; a < ndim; a++) {
        shape[a] = d->ndim > 0 ? d->shape[a] : 1;
        for (k = 0; k < d->nval; k++)
            st[k][a] = d->ndim > 0 && in_memory(&d->val[k]) ? d->val[k].strides[a] : 0;
    }
    inner = ndim - 1;
    for (k = 0; k < d->nval; k++) {
        const dg_fused_val *v = &d->val[k];
        base[k] = in_memory(v) ? v->data : NULL;
        reg[k] = NULL;
        stream[k] = v->kind == DG_FV_OUT && fused_streams(d, ndim, shape, st, k);
        nstream += stream[k];
        if (v->kind == DG_FV_SCALAR) {
            reg[k] = (char *)v->scalar;
        } else if (v->kind == DG_FV_TEMP || v->kind == DG_FV_OUT) {
            /* an output's tile: used where it is streamed */
            reg[k] = sp;
            sp += temp_bytes(v->dtype, t);
        }
    }
    for (;;) {
        int64_t i0;
        for (i0 = 0; i0 < shape[inner]; i0 += t) {
            const int64_t n = shape[inner] - i0 < t ? shape[inner] - i0 : t;
            for (s = 0; s < d->nstep; s++) {
                const dg_fused_step *fs = &d->step[s];
                const dg_loop_info *li = &dg_loops[fs->loop];
                char *p[DG_MAXLOOPOPS];
                int64_t ps[DG_MAXLOOPOPS];
                for (k = 0; k < li->nin + li->nout; k++) {
                    const int v = fs->op[k];
                    if (base[v] && !stream[v]) {
                        p[k] = base[v] + i0 * st[v][inner];
                        ps[k] = st[v][inner];
                    } else {
                        p[k] = reg[v];
                        ps[k] = d->val[v].kind == DG_FV_SCALAR
                                    ? 0
                                    : dg_dtype_size(d->val[v].dtype);
                    }
                }
                /* one element: an output stride of one element, as
                 * dg_cpu_ew_run gives NumPy's loops (a stride of 0 picks
                 * another path, with other bits for complex products) */
                if (n == 1)
                    for (k = li->nin; k < li->nin + li->nout; k++)
                        if (ps[k] == 0)
                            ps[k] = dg_dtype_size(li->dtypes[k]);
                dg_cpu_loop_inner(fs->loop, p, ps, n);
            }
            for (k = 0; nstream && k < d->nval; k++)
                if (stream[k])
                    dg_cpu_stream_copy(base[k] + i0 * st[k][inner], reg[k],
                                       (size_t)n * (size_t)dg_dtype_size(d->val[k].dtype));
        }
        /* next outer index; back at the start means done */
        for (a = inner - 1; a >= 0; a--) {
            for (k = 0; k < d->nval; k++)
                if (base[k])
                    base[k] += st[k][a];
            if (++idx[a] < shape[a])
                break;
            for (k = 0; k < d->nval; k++)
                if (base[k])
                    base[k] -= st[k][a] * shape[a];
            idx[a] = 0;
        }
        if (a < 0)
            break;
    }
    if (nstream)
        dg_cpu_stream_fence();
}
