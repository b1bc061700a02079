/* Deferred fusion of elementwise chains: the pending chain, the rules that
 * keep it exact, and its run (dg_fuse.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_fpe.h"
#include "dg_fuse.h"
#include "dg_ufunc.h"

#define FZ_MAXPIECES 64 /* pieces of one call, or of a chain, that may join a chain */
#define FZ_COUNTED_DEVS 64 /* devices whose runs dg_fuse_device_counts keeps apart */
/* A call of fewer elements runs at once (DGARRAY_FUSION_MIN_ELEMS changes
 * it): below this, recording and running a chain costs more than the pass
 * over memory it saves (a lone `a + b` of 1,000 elements read at once took
 * 0.3 us more recorded), and the CUDA backend runs such pieces step by step
 * anyway (cuda_fused.c). */
#define FZ_MIN_ELEMS 65536

/* One piece of the chain: the fused work of one output chunk (or piece of
 * one) on its device, and the buffers its memory values live in. */
typedef struct fz_piece {
    int dev;
    int boxed;             /* lo is known and the piece is a box of unit steps: it may be
                            * re-cut (fz_cut) */
    int64_t lo[DG_MAXDIM]; /* its first element in the calls' index space */
    dg_fused_desc d;
    dg_buffer *buf[DG_FUSED_MAXVALS]; /* each value's buffer (borrowed from held); NULL for
                                       * scalars, temps */
    int nheld;
    dg_buffer *held[DG_FUSED_MAXVALS]; /* the distinct buffers, one strong reference each */
} fz_piece;

/* Where chain piece i and call piece j meet when a call joins the chain: the
 * box of `shape` at oi in piece i and at oj in piece j (each piece's own
 * coordinates).  A call whose pieces line up with the chain's one to one
 * joins along cuts (i, i) of whole pieces; else along the common refinement
 * of both sets of boxes, the chain's pieces split where it cuts them. */
typedef struct fz_cut {
    int i, j;
    int64_t oi[DG_MAXDIM], oj[DG_MAXDIM], shape[DG_MAXDIM];
} fz_cut;

/* The pending chain: nstep calls recorded, each with one step in every
 * piece. */
typedef struct fz_chain {
    dg_backend_i *be;
    int npiece;
    int nstep;
    uint32_t fpe; /* the action word of its calls (dg_fpe.h): one per chain */
    int quiet;    /* 1 while none of its steps can raise a floating-point error (copies):
                   * a call under another word may then join, the chain taking its word */
    fz_piece *pieces; /* [FZ_MAXPIECES], allocated at the first record */
    fz_piece *spare;  /* [FZ_MAXPIECES]: the pieces being re-cut (allocated at the first
                       * re-cut), swapped with `pieces` */
    int shared;       /* 1 once a call joined along cuts other than one to one: a buffer
                       * may then be held by several pieces */
} fz_chain;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static fz_chain g_chain;
/* nonzero while a chain is recorded or running: read without the lock by
 * dg_enqueue's fast path */
static atomic_int g_pending;
static int g_enabled = -1; /* -1: the environment not read yet */
static int64_t g_min_elems = -1; /* DGARRAY_FUSION_MIN_ELEMS, read with g_enabled */
/* 1 while this thread holds g_mu: the enqueues of a run of the chain pass */
static _Thread_local int t_inside;
static int64_t g_runs, g_steps;
static int64_t g_renews; /* memories renewed for an assignment (renew_outputs) */
static int g_renew_on = -1; /* DGARRAY_FUSION_RENEW; -1: not read yet */
static int64_t g_dev_runs[FZ_COUNTED_DEVS], g_dev_steps[FZ_COUNTED_DEVS];
/* the cuts of the call being recorded and the call pieces' first elements
 * (g_mu held) */
static fz_cut g_cuts[FZ_MAXPIECES];
static int64_t g_call_lo[FZ_MAXPIECES][DG_MAXDIM];

int dg_fuse_enabled(void)
{
    if (g_enabled < 0) {
        const char *e = getenv("DGARRAY_FUSION"), *m = getenv("DGARRAY_FUSION_MIN_ELEMS");
        char *end = NULL;
        long long v = m ? strtoll(m, &end, 10) : -1;
        g_min_elems = m && end != m && v >= 0 ? (int64_t)v : FZ_MIN_ELEMS;
        g_enabled = !(e && (strcmp(e, "0") == 0 || strcmp(e, "off") == 0 ||
                            strcmp(e, "false") == 0));
    }
    return g_enabled;
}

int dg_fuse_pending(void)
{
    return atomic_load_explicit(&g_pending, memory_order_acquire);
}

void dg_fuse_counts(int64_t *runs, int64_t *steps)
{
    pthread_mutex_lock(&g_mu);
    *runs = g_runs;
    *steps = g_steps;
    pthread_mutex_unlock(&g_mu);
}

/* DGARRAY_FUSION_RENEW, read once */
static int renew_on(void)
{
    if (g_renew_on < 0) {
        const char *e = getenv("DGARRAY_FUSION_RENEW");
        g_renew_on = !(e && (strcmp(e, "0") == 0 || strcmp(e, "off") == 0));
    }
    return g_renew_on;
}

int64_t dg_fuse_renew(int on, int *was)
{
    int64_t n;
    pthread_mutex_lock(&g_mu);
    *was = renew_on();
    if (on >= 0)
        g_renew_on = on != 0;
    n = g_renews;
    pthread_mutex_unlock(&g_mu);
    return n;
}

void dg_fuse_device_counts(int dev, int64_t *runs, int64_t *steps)
{
    pthread_mutex_lock(&g_mu);
    *runs = dev >= 0 && dev < FZ_COUNTED_DEVS ? g_dev_runs[dev] : 0;
    *steps = dev >= 0 && dev < FZ_COUNTED_DEVS ? g_dev_steps[dev] : 0;
    pthread_mutex_unlock(&g_mu);
}

static void lock(void)
{
    pthread_mutex_lock(&g_mu);
    t_inside = 1;
}

static void unlock(void)
{
    t_inside = 0;
    pthread_mutex_unlock(&g_mu);
}

/* ---- values ------------------------------------------------------------------ */

/* 1 if memory value v is the view (data, strides, dtype) over space
 * (ndim, shape): every element at the same address. */
static int same_view(const dg_fused_val *v, int dtype, const char *data,
                     const int64_t *strides, int ndim, const int64_t *shape)
{
    int a;
    if (v->dtype != dtype || v->data != data)
        return 0;
    for (a = 0; a < ndim; a++)
        if (shape[a] > 1 && v->strides[a] != strides[a])
            return 0;
    return 1;
}

/* The value's buffer, if it lives in memory the chain holds. */
static dg_mem *val_mem(const fz_piece *f, int k)
{
    return f->buf[k] ? f->buf[k]->mem : NULL;
}

/* 1 if the chain reads or writes memory m. */
static int chain_uses(const dg_mem *m)
{
    int i, k;
    for (i = 0; i < g_chain.npiece; i++) {
        const fz_piece *f = &g_chain.pieces[i];
        for (k = 0; k < f->nheld; k++)
            if (f->held[k]->mem == m)
                return 1;
    }
    return 0;
}

/* 1 if the chain writes memory m. */
static int chain_writes(const dg_mem *m)
{
    int i, k;
    for (i = 0; i < g_chain.npiece; i++) {
        const fz_piece *f = &g_chain.pieces[i];
        for (k = 0; k < f->d.nval; k++)
            if (f->d.val[k].kind == DG_FV_OUT && val_mem(f, k) == m)
                return 1;
    }
    return 0;
}

/* The strides of operand k of d with those of length-1 axes zeroed. */
static void norm_strides(const dg_ew_desc *d, int k, int64_t *out)
{
    int a;
    for (a = 0; a < d->ndim; a++)
        out[a] = d->shape[a] > 1 ? d->strides[k][a] : 0;
}

/* data moved to the element at o (per axis) of a view of these strides. */
static char *at(char *data, const int64_t *strides, const int64_t *o, int ndim)
{
    int a;
    for (a = 0; a < ndim; a++)
        data += o[a] * strides[a];
    return data;
}

/* The first element of call piece p (its box's starts) in lo: 1 if p's box
 * is known, of unit steps and of p's shape (it may then be cut). */
static int call_lo(const dg_fuse_piece *p, int64_t *lo)
{
    int a;
    if (!p->box || p->box->ndim != p->d->ndim)
        return 0;
    for (a = 0; a < p->d->ndim; a++) {
        const dg_range r = p->box->r[a];
        if (dg_range_len(r) != p->d->shape[a] || (r.step != 1 && dg_range_len(r) > 1))
            return 0;
        lo[a] = r.start;
    }
    return 1;
}

/* Elements of the box that (lo0, sh0) and (lo1, sh1) share, its first
 * element and shape in lo, sh. */
static int64_t meet(int ndim, const int64_t *lo0, const int64_t *sh0, const int64_t *lo1,
                    const int64_t *sh1, int64_t *lo, int64_t *sh)
{
    int64_t n = 1;
    int a;
    for (a = 0; a < ndim; a++) {
        const int64_t b = lo0[a] > lo1[a] ? lo0[a] : lo1[a];
        const int64_t e0 = lo0[a] + sh0[a], e1 = lo1[a] + sh1[a];
        const int64_t e = e0 < e1 ? e0 : e1;
        lo[a] = b;
        sh[a] = e > b ? e - b : 0;
        n *= sh[a];
    }
    return n;
}

/* The cuts (g_cuts) along which the call's n pieces join the chain (which
 * holds some); their number, 0 where the pieces cannot join it.  Pieces
 * that line up one to one (same devices and shapes, in order) join whole.
 * Else, where every piece of both is a box of unit steps and the boxes on
 * each device are disjoint and cover the same elements in both, along the
 * boxes where a chain piece and a call piece of one device meet: the chain
 * and the call then cut the space alike, as Jacobi's shifted slices do not
 * (the neighbour rows that another device holds make pieces of their own). */
static int cuts_of(dg_backend_i *be, const dg_fuse_piece *p, int n)
{
    int64_t got_i[FZ_MAXPIECES] = {0}, got_j[FZ_MAXPIECES] = {0}, lo[DG_MAXDIM];
    const int nd = g_chain.pieces[0].d.ndim;
    int i, j, a, nc = 0;
    if (g_chain.be != be || g_chain.nstep >= DG_FUSED_MAXSTEPS)
        return 0;
    for (j = 0; j < n; j++)
        if (p[j].d->ndim != nd)
            return 0;
    if (n == g_chain.npiece) {
        for (i = 0; i < n; i++) {
            const fz_piece *f = &g_chain.pieces[i];
            if (f->dev != p[i].dev ||
                memcmp(f->d.shape, p[i].d->shape, sizeof(int64_t) * (size_t)nd) != 0)
                break;
        }
        if (i == n) {
            for (i = 0; i < n; i++) {
                const dg_loop_info *li = &dg_loops[p[i].d->loop];
                if (g_chain.pieces[i].d.nval + li->nin + li->nout > DG_FUSED_MAXVALS)
                    return 0;
            }
            for (i = 0; i < n; i++) {
                fz_cut *c = &g_cuts[i];
                c->i = c->j = i;
                for (a = 0; a < nd; a++) {
                    c->oi[a] = c->oj[a] = 0;
                    c->shape[a] = p[i].d->shape[a];
                }
            }
            return n;
        }
    }
    for (j = 0; j < n; j++)
        if (!call_lo(&p[j], g_call_lo[j]))
            return 0;
    for (i = 0; i < g_chain.npiece; i++)
        if (!g_chain.pieces[i].boxed)
            return 0;
    /* the boxes of one device are disjoint, in the chain and in the call */
    for (i = 0; i < g_chain.npiece; i++)
        for (j = i + 1; j < g_chain.npiece; j++) {
            const fz_piece *f = &g_chain.pieces[i], *h = &g_chain.pieces[j];
            int64_t sh[DG_MAXDIM];
            if (f->dev == h->dev && meet(nd, f->lo, f->d.shape, h->lo, h->d.shape, lo, sh))
                return 0;
        }
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++) {
            int64_t sh[DG_MAXDIM];
            if (p[i].dev == p[j].dev &&
                meet(nd, g_call_lo[i], p[i].d->shape, g_call_lo[j], p[j].d->shape, lo, sh))
                return 0;
        }
    for (i = 0; i < g_chain.npiece; i++) {
        const fz_piece *f = &g_chain.pieces[i];
        for (j = 0; j < n; j++) {
            int64_t sh[DG_MAXDIM], k;
            fz_cut *c;
            if (f->dev != p[j].dev)
                continue;
            k = meet(nd, f->lo, f->d.shape, g_call_lo[j], p[j].d->shape, lo, sh);
            if (!k)
                continue;
            if (nc == FZ_MAXPIECES)
                return 0;
            c = &g_cuts[nc];
            c->i = i;
            c->j = j;
            for (a = 0; a < nd; a++) {
                c->oi[a] = lo[a] - f->lo[a];
                c->oj[a] = lo[a] - g_call_lo[j][a];
                c->shape[a] = sh[a];
            }
            got_i[i] += k;
            got_j[j] += k;
            nc++;
        }
    }
    /* every element of both in one cut */
    for (i = 0; i < g_chain.npiece; i++)
        if (got_i[i] != dg_shape_size(nd, g_chain.pieces[i].d.shape))
            return 0;
    for (i = 0; i < nc; i++) {
        const dg_loop_info *li = &dg_loops[p[g_cuts[i].j].d->loop];
        if (g_chain.pieces[g_cuts[i].i].d.nval + li->nin + li->nout > DG_FUSED_MAXVALS)
            return 0;
    }
    for (j = 0; j < n; j++)
        if (got_j[j] != dg_shape_size(nd, p[j].d->shape))
            return 0;
    return nc;
}

/* 1 if the call's pieces p joined along the nc cuts would make the chain
 * inexact: a memory that the chain or the call writes is touched by the
 * other in the same cut through another view, or in another cut at bytes
 * that may be the same.  (A fused piece runs every step of an element
 * together, and the pieces run in any order.)  With ins_only, the call's
 * outputs are left out: they go to new memory (renew_outputs). */
static int cuts_conflict(const dg_fuse_piece *p, int nc, int ins_only)
{
    int r, r2, k, v;
    for (r = 0; r < nc; r++) {
        const fz_cut *c = &g_cuts[r];
        const dg_ew_desc *d = p[c->j].d;
        const dg_loop_info *li = &dg_loops[d->loop];
        for (k = 0; k < (ins_only ? li->nin : li->nin + li->nout); k++) {
            const int write = k >= li->nin, dt = li->dtypes[k];
            const dg_mem *m;
            int64_t s[DG_MAXDIM];
            char *data;
            if (!p[c->j].buf[k] || !d->data[k])
                continue;
            m = p[c->j].buf[k]->mem;
            norm_strides(d, k, s);
            data = at(d->data[k], s, c->oj, d->ndim);
            for (r2 = 0; r2 < nc; r2++) {
                const fz_piece *f = &g_chain.pieces[g_cuts[r2].i];
                for (v = 0; v < f->d.nval; v++) {
                    const dg_fused_val *fv = &f->d.val[v];
                    char *vd;
                    if (val_mem(f, v) != m || (!write && fv->kind != DG_FV_OUT))
                        continue;
                    vd = at(fv->data, fv->strides, g_cuts[r2].oi, d->ndim);
                    if (r2 == r) {
                        dg_fused_val w = *fv;
                        w.data = vd;
                        if (same_view(&w, dt, data, s, d->ndim, c->shape))
                            continue;
                    }
                    if (dg_spans_meet(d->ndim, vd, fv->strides, g_cuts[r2].shape,
                                   dg_dtype_size(fv->dtype), data, s, c->shape,
                                   dg_dtype_size(dt)))
                        return 1;
                }
            }
        }
    }
    return 0;
}

/* A new value of f (room checked by the caller); its index. */
static int new_val(fz_piece *f, int kind, int dtype)
{
    int k = f->d.nval++;
    memset(&f->d.val[k], 0, sizeof(f->d.val[k]));
    f->d.val[k].kind = kind;
    f->d.val[k].dtype = dtype;
    f->buf[k] = NULL;
    return k;
}

/* Appends piece p of a call as the next step of chain piece f. */
static void append(fz_piece *f, const dg_fuse_piece *p, int first)
{
    const dg_ew_desc *d = p->d;
    const dg_loop_info *li = &dg_loops[d->loop];
    dg_fused_step *s;
    int k, j;
    if (first) {
        f->dev = p->dev;
        f->boxed = call_lo(p, f->lo);
        f->d.ndim = d->ndim;
        memcpy(f->d.shape, d->shape, sizeof(int64_t) * (size_t)d->ndim);
        f->d.nval = f->d.nstep = f->nheld = 0;
    }
    s = &f->d.step[f->d.nstep++];
    memset(s, 0, sizeof(*s));
    s->loop = d->loop;
    for (k = 0; k < li->nin + li->nout; k++) {
        const int dt = li->dtypes[k];
        int64_t st[DG_MAXDIM];
        int v = -1;
        if (k < li->nin && !d->data[k]) {
            v = new_val(f, DG_FV_SCALAR, dt);
            memcpy(f->d.val[v].scalar, d->scalar[k], sizeof(f->d.val[v].scalar));
            s->op[k] = (int16_t)v;
            continue;
        }
        norm_strides(d, k, st);
        if (k < li->nin)
            /* the newest value of this view: what the chain last stored there */
            for (j = f->d.nval - 1; j >= 0 && v < 0; j--)
                if (val_mem(f, j) == p->buf[k]->mem &&
                    same_view(&f->d.val[j], dt, d->data[k], st, d->ndim, d->shape))
                    v = j;
        if (v < 0) {
            v = new_val(f, k < li->nin ? DG_FV_IN : DG_FV_OUT, dt);
            f->d.val[v].data = d->data[k];
            memcpy(f->d.val[v].strides, st, sizeof(st));
            f->buf[v] = p->buf[k];
            for (j = 0; j < f->nheld && f->held[j] != p->buf[k]; j++)
                ;
            if (j == f->nheld) {
                f->held[f->nheld++] = p->buf[k];
                p->buf[k]->refcnt++;
            }
        }
        s->op[k] = (int16_t)v;
    }
}

/* 1 if the chain's pieces hold b by all of its references and write it, and
 * none reads what it held before (kind DG_FV_IN); only piece `from` where
 * no other piece may hold b. */
static int dropped(const dg_buffer *b, int from)
{
    int i, k, holders = 0, written = 0;
    if (b->mem->refcnt != 1 || b->refcnt > g_chain.npiece || (!g_chain.shared && b->refcnt != 1))
        return 0;
    for (i = g_chain.shared ? 0 : from; i < (g_chain.shared ? g_chain.npiece : from + 1); i++) {
        const fz_piece *f = &g_chain.pieces[i];
        for (k = 0; k < f->nheld; k++)
            holders += f->held[k] == b;
        for (k = 0; k < f->d.nval; k++)
            if (f->buf[k] == b) {
                if (f->d.val[k].kind == DG_FV_IN)
                    return 0;
                written |= f->d.val[k].kind == DG_FV_OUT;
            }
    }
    return written && holders == b->refcnt;
}

/* Results whose arrays are gone (their buffer held by the chain alone, its
 * memory by that buffer alone, and no value reading what it held before)
 * become temporaries, and their memory goes back to the pool.  Each piece
 * holds a buffer once; a re-cut chain (fz_cut) holds one in several pieces. */
static void reap(dg_backend_i *be)
{
    int i, h, j, k;
    for (i = 0; i < g_chain.npiece; i++) {
        fz_piece *f = &g_chain.pieces[i];
        for (h = 0; h < f->nheld; h++) {
            dg_buffer *b = f->held[h];
            if (!dropped(b, i))
                continue;
            /* every piece that holds b, this one last */
            for (j = g_chain.npiece - 1; j >= i; j--) {
                fz_piece *g = &g_chain.pieces[j];
                for (k = 0; k < g->d.nval; k++)
                    if (g->buf[k] == b) {
                        g->d.val[k].kind = DG_FV_TEMP;
                        g->d.val[k].data = NULL;
                        g->buf[k] = NULL;
                    }
                for (k = 0; k < g->nheld && g->held[k] != b; k++)
                    ;
                if (k < g->nheld) {
                    g->held[k] = g->held[--g->nheld];
                    dg_buffer_decref(be, b);
                }
            }
            h--;
        }
    }
}

/* Drops piece f's references and empties it. */
static void release_piece(dg_backend_i *be, fz_piece *f)
{
    int k;
    for (k = 0; k < f->nheld; k++)
        dg_buffer_decref(be, f->held[k]);
    for (k = 0; k < f->d.nval; k++)
        f->buf[k] = NULL;
    f->d.nval = f->d.nstep = f->nheld = 0;
}

/* *g: chain piece f restricted to the box of `shape` at o (f's own
 * coordinates), with references of its own to f's buffers. */
static void sub_piece(fz_piece *g, const fz_piece *f, const int64_t *o, const int64_t *shape)
{
    int k, a;
    g->dev = f->dev;
    g->boxed = f->boxed;
    g->d.ndim = f->d.ndim;
    for (a = 0; a < f->d.ndim; a++) {
        g->lo[a] = f->lo[a] + o[a];
        g->d.shape[a] = shape[a];
    }
    g->d.nval = f->d.nval;
    for (k = 0; k < f->d.nval; k++) {
        g->d.val[k] = f->d.val[k];
        if (f->d.val[k].data)
            g->d.val[k].data = at(f->d.val[k].data, f->d.val[k].strides, o, f->d.ndim);
        g->buf[k] = f->buf[k];
    }
    g->d.nstep = f->d.nstep;
    memcpy(g->d.step, f->d.step, sizeof(g->d.step[0]) * (size_t)f->d.nstep);
    g->nheld = f->nheld;
    for (k = 0; k < f->nheld; k++) {
        g->held[k] = f->held[k];
        f->held[k]->refcnt++;
    }
}

/* Appends the call's pieces p to the chain along the nc cuts of g_cuts
 * (cuts_of), the chain's pieces re-cut first where a cut is not one whole
 * piece of it: each cut becomes one piece.  0 where memory for the re-cut is
 * lacking (nothing done). */
static int join(dg_backend_i *be, const dg_fuse_piece *p, int n, int nc)
{
    unsigned char seen[FZ_MAXPIECES] = {0};
    const int nd = g_chain.pieces[0].d.ndim;
    int r, k, whole = nc == g_chain.npiece;
    for (r = 0; r < nc && whole; r++) {
        const fz_cut *c = &g_cuts[r];
        whole = !seen[c->i] && memcmp(c->shape, g_chain.pieces[c->i].d.shape,
                                      sizeof(int64_t) * (size_t)nd) == 0;
        seen[c->i] = 1;
    }
    if (!whole) {
        fz_piece *old = g_chain.pieces;
        if (!g_chain.spare &&
            !(g_chain.spare = (fz_piece *)calloc(FZ_MAXPIECES, sizeof(fz_piece))))
            return 0;
        for (r = 0; r < nc; r++)
            sub_piece(&g_chain.spare[r], &old[g_cuts[r].i], g_cuts[r].oi, g_cuts[r].shape);
        for (r = 0; r < g_chain.npiece; r++)
            release_piece(be, &old[r]);
        g_chain.pieces = g_chain.spare;
        g_chain.spare = old;
        g_chain.npiece = nc;
        for (r = 0; r < nc; r++) {
            g_cuts[r].i = r;
            memset(g_cuts[r].oi, 0, sizeof(g_cuts[r].oi));
        }
    }
    for (r = 0; r < nc; r++) {
        const fz_cut *c = &g_cuts[r];
        const dg_loop_info *li = &dg_loops[p[c->j].d->loop];
        dg_ew_desc e = *p[c->j].d;
        dg_fuse_piece q = p[c->j];
        memcpy(e.shape, c->shape, sizeof(int64_t) * (size_t)nd);
        for (k = 0; k < li->nin + li->nout; k++)
            if (e.data[k])
                e.data[k] = at(e.data[k], e.strides[k], c->oj, nd);
        q.d = &e;
        q.box = NULL;
        append(&g_chain.pieces[c->i], &q, 0);
    }
    /* a call piece in several cuts: its buffers held by several pieces */
    g_chain.shared |= !whole || nc != n;
    return 1;
}

/* 1 if piece f reads or writes memory last written by another stream than
 * its device's compute stream (a transfer's): it runs after the pieces that
 * need not wait (a wait holds back what follows it on the stream). */
static int piece_waits(const fz_piece *f)
{
    int k;
    for (k = 0; k < f->nheld; k++)
        if (dg_mem_read_waits(f->held[k]->mem, f->dev, DG_STREAM_COMPUTE))
            return 1;
    return 0;
}

/* ---- running the chain ------------------------------------------------------- */

/* f without the steps whose results nobody reads and the values they alone
 * used, into *out. */
static void prune(const fz_piece *f, dg_fused_desc *out, dg_buffer **bufs)
{
    unsigned char need[DG_FUSED_MAXVALS] = {0}, keep[DG_FUSED_MAXSTEPS] = {0};
    int16_t map[DG_FUSED_MAXVALS];
    int s, k;
    for (k = 0; k < f->d.nval; k++)
        need[k] = f->d.val[k].kind == DG_FV_OUT;
    for (s = f->d.nstep - 1; s >= 0; s--) {
        const dg_fused_step *st = &f->d.step[s];
        const dg_loop_info *li = &dg_loops[st->loop];
        for (k = li->nin; k < li->nin + li->nout; k++)
            keep[s] |= need[st->op[k]];
        if (keep[s])
            for (k = 0; k < li->nin + li->nout; k++)
                need[st->op[k]] = 1;
    }
    out->ndim = f->d.ndim;
    memcpy(out->shape, f->d.shape, sizeof(out->shape));
    out->nval = out->nstep = 0;
    for (k = 0; k < f->d.nval; k++) {
        map[k] = -1;
        if (!need[k])
            continue;
        map[k] = (int16_t)out->nval;
        bufs[out->nval] = f->buf[k];
        out->val[out->nval++] = f->d.val[k];
    }
    for (s = 0; s < f->d.nstep; s++) {
        const dg_loop_info *li = &dg_loops[f->d.step[s].loop];
        dg_fused_step *o;
        if (!keep[s])
            continue;
        o = &out->step[out->nstep++];
        *o = f->d.step[s];
        for (k = 0; k < li->nin + li->nout; k++)
            o->op[k] = map[f->d.step[s].op[k]];
    }
}

/* The one step of d (no temporaries) as a plain elementwise loop. */
static void as_ew(const dg_fused_desc *d, dg_ew_desc *e)
{
    const dg_fused_step *s = &d->step[0];
    const dg_loop_info *li = &dg_loops[s->loop];
    int k;
    memset(e, 0, sizeof(*e));
    e->loop = s->loop;
    e->ndim = d->ndim;
    memcpy(e->shape, d->shape, sizeof(e->shape));
    e->nop = li->nin + li->nout;
    for (k = 0; k < e->nop; k++) {
        const dg_fused_val *v = &d->val[s->op[k]];
        e->data[k] = v->kind == DG_FV_SCALAR ? NULL : v->data;
        memcpy(e->strides[k], v->strides, sizeof(e->strides[k]));
        memcpy(e->scalar[k], v->scalar, sizeof(e->scalar[k]));
    }
    dg_ew_coalesce(e);
}

/* Enqueues piece f: its needed steps as one fused piece of work (or one
 * plain loop), reading and writing its memory values. */
static dg_status run_piece(dg_backend_i *be, fz_piece *f, int64_t chain_elems, dg_error *err)
{
    dg_fused_desc dd, *d = &dd;
    dg_buffer *bufs[DG_FUSED_MAXVALS];
    dg_access acc[DG_FUSED_MAXVALS];
    int na = 0, k, j, temps = 0;
    dg_status st;
    prune(f, d, bufs);
    d->chain_elems = chain_elems;
    for (k = 0; k < d->nval; k++) {
        unsigned how;
        temps |= d->val[k].kind == DG_FV_TEMP;
        if (!bufs[k])
            continue;
        how = d->val[k].kind == DG_FV_OUT ? DG_ACC_WRITE : DG_ACC_READ;
        for (j = 0; j < na && acc[j].mem != bufs[k]->mem; j++)
            ;
        if (j == na)
            acc[na++] = dg_acc(bufs[k], how);
        else
            acc[j].how |= how;
    }
    if (d->nstep == 0) {
        st = DG_OK;
    } else if (d->nstep == 1 && !temps) {
        dg_ew_desc e;
        as_ew(d, &e);
        st = dg_enqueue(be, f->dev, DG_STREAM_COMPUTE, acc, na, dg_work_elementwise(&e), err);
    } else {
        st = dg_enqueue(be, f->dev, DG_STREAM_COMPUTE, acc, na, dg_work_fused(d), err);
    }
    if (st == DG_OK && d->nstep) {
        g_runs++;
        g_steps += d->nstep;
        if (f->dev >= 0 && f->dev < FZ_COUNTED_DEVS) {
            g_dev_runs[f->dev]++;
            g_dev_steps[f->dev] += d->nstep;
        }
    }
    return st;
}

/* Runs and empties the chain (g_mu held).  Every piece is run, or at least
 * released, even after one fails; the first error is kept. */
static dg_status flush_locked(dg_error *err)
{
    dg_status st = DG_OK;
    dg_error e2 = DG_ERROR_INIT;
    unsigned char late[FZ_MAXPIECES];
    int64_t elems = 0;
    int i, pass;
    uint32_t fpe_was;
    if (!g_chain.nstep)
        return DG_OK;
    reap(g_chain.be);
    for (i = 0; i < g_chain.npiece; i++) {
        late[i] = (unsigned char)piece_waits(&g_chain.pieces[i]);
        elems += dg_shape_size(g_chain.pieces[i].d.ndim, g_chain.pieces[i].d.shape);
    }
    /* the chain's work runs under its calls' errstate, whichever thread
     * runs it and whatever errstate that thread has now */
    fpe_was = dg_fpe_set_actions(g_chain.fpe);
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < g_chain.npiece; i++)
            if (late[i] == pass) {
                dg_status s2 = run_piece(g_chain.be, &g_chain.pieces[i], elems,
                                         st == DG_OK ? err : &e2);
                if (st == DG_OK)
                    st = s2;
            }
    for (i = 0; i < g_chain.npiece; i++)
        release_piece(g_chain.be, &g_chain.pieces[i]);
    dg_error_clear(&e2);
    dg_fpe_set_actions(fpe_was);
    g_chain.nstep = 0;
    g_chain.npiece = 0;
    g_chain.shared = 0;
    atomic_store_explicit(&g_pending, 0, memory_order_release);
    return st;
}

dg_status dg_fuse_flush(dg_error *err)
{
    dg_status st;
    if (t_inside || !dg_fuse_pending())
        return DG_OK;
    lock();
    st = flush_locked(err);
    unlock();
    return st;
}

dg_status dg_fuse_set_enabled(int on, dg_error *err)
{
    dg_status st = DG_OK;
    dg_fuse_enabled();
    if (!on)
        st = dg_fuse_flush(err);
    g_enabled = on != 0;
    return st;
}

dg_status dg_fuse_touch(const dg_access *acc, int n, dg_error *err)
{
    dg_status st = DG_OK;
    int i, hit = 0;
    if (t_inside || !dg_fuse_pending())
        return DG_OK;
    lock();
    /* a read of what the chain only reads can come first (a halo row sent
     * from a chunk that the chain reads) */
    for (i = 0; i < n && !hit; i++)
        hit = acc[i].mem && (acc[i].how & (DG_ACC_WRITE | DG_ACC_WRITE_PART)
                                 ? chain_uses(acc[i].mem)
                                 : chain_writes(acc[i].mem));
    if (hit)
        st = flush_locked(err);
    unlock();
    return st;
}

dg_status dg_fuse_touch_buffer(const dg_buffer *b, dg_error *err)
{
    dg_access a;
    a.mem = b->mem;
    /* as a write: the host may go on to lend the memory to code that
     * writes it (dg_external.c) */
    a.how = DG_ACC_WRITE_PART;
    a.dev = a.stream = -1;
    return dg_fuse_touch(&a, 1, err);
}

int dg_fuse_wanted(dg_backend_i *be, int64_t nelems)
{
    return dg_fuse_enabled() && nelems >= g_min_elems && !t_inside &&
           dg_be_has(be, DG_SLOT_FUSED);
}

/* ---- an assignment into new memory --------------------------------------------- */

/* A stencil's assignment (`u[1:-1, 1:-1] = f(u's shifted views)`) writes
 * memory that the chain reads at other offsets: the chain would have to run
 * into a temporary and a second kernel copy that into place, a pass over
 * the data of its own.  Instead, where the assignment (a copy, a cast, or
 * any call of one output that reads none of that memory) writes, on each
 * device, one box of memory laid out densely, that memory is
 * renewed: the buffer gets new memory, the bytes outside the box copied
 * there from the old (a grid's edges, a few rows and columns), and the
 * chain goes on reading the old, so the assignment joins it and the fused
 * kernel writes the grid directly.  Every view of the buffer sees the new
 * memory; a buffer lent to other code (DLPack, __cuda_array_interface__,
 * chunks) is never renewed.  DGARRAY_FUSION_RENEW=0 turns this off. */
#define FZ_MAXKEEP (2 * DG_MAXDIM) /* copies of what lies outside a box */

typedef struct fz_renew {
    dg_buffer *b;
    int nkeep;
    dg_copy_desc keep[FZ_MAXKEEP]; /* src, dst: byte offsets in the memory */
} fz_renew;

static fz_renew g_renew[FZ_MAXPIECES];
static dg_fuse_piece g_rp[FZ_MAXPIECES]; /* the call's pieces, addresses in the new memory */
static dg_ew_desc g_rd[FZ_MAXPIECES];

/* The copies of the bytes of b's memory outside what the call's pieces
 * writing it (output operand k, itemsize isz) cover: 0 unless the memory is
 * a dense array in the call's axes (strides decreasing in some order, the
 * innermost one element, each the next's times that axis's length, the
 * whole memory), those pieces together one box of it, and the rest at most
 * as large as the box. */
static int renew_plan(const dg_fuse_piece *p, int n, int k, int isz, fz_renew *r)
{
    const dg_buffer *b = r->b;
    const int nd = p[0].d->ndim;
    int64_t st[DG_MAXDIM], full[DG_MAXDIM], lo[DG_MAXDIM], hi[DG_MAXDIM];
    int64_t pl[FZ_MAXPIECES][DG_MAXDIM];
    int perm[DG_MAXDIM], seen[DG_MAXDIM] = {0}, own[FZ_MAXPIECES], no = 0, i, j, a;
    int64_t frame = 1, box = 1, sum = 0;
    for (j = 0; j < n; j++)
        if (p[j].buf[k] == b)
            own[no++] = j;
    /* each axis's stride, from a piece long on it */
    for (a = 0; a < nd; a++) {
        st[a] = p[own[0]].d->strides[k][a];
        for (i = 0; i < no; i++) {
            const dg_ew_desc *d = p[own[i]].d;
            if (d->shape[a] <= 1)
                continue;
            if (!seen[a]) {
                st[a] = d->strides[k][a];
                seen[a] = 1;
            } else if (d->strides[k][a] != st[a]) {
                return 0;
            }
        }
        if (st[a] <= 0)
            return 0;
    }
    /* axes by decreasing stride, ties in the axes' order */
    for (a = 0; a < nd; a++) {
        for (i = a; i > 0 && st[perm[i - 1]] < st[a]; i--)
            perm[i] = perm[i - 1];
        perm[i] = a;
    }
    if (st[perm[nd - 1]] != isz)
        return 0;
    for (i = nd - 1; i > 0; i--) {
        if (st[perm[i - 1]] % st[perm[i]])
            return 0;
        full[perm[i]] = st[perm[i - 1]] / st[perm[i]];
    }
    if ((int64_t)b->nbytes % st[perm[0]])
        return 0;
    full[perm[0]] = (int64_t)b->nbytes / st[perm[0]];
    for (a = 0; a < nd; a++)
        frame *= full[a];
    if (frame * isz != (int64_t)b->nbytes)
        return 0;
    /* each piece's first element in the frame; their union one box */
    for (i = 0; i < no; i++) {
        const dg_ew_desc *d = p[own[i]].d;
        int64_t off = d->data[k] - (const char *)b->ptr;
        if (off < 0 || off >= (int64_t)b->nbytes)
            return 0;
        for (j = 0; j < nd; j++) {
            pl[i][perm[j]] = off / st[perm[j]];
            off %= st[perm[j]];
        }
        if (off)
            return 0;
        for (a = 0; a < nd; a++) {
            if (pl[i][a] + d->shape[a] > full[a])
                return 0;
            lo[a] = i && lo[a] < pl[i][a] ? lo[a] : pl[i][a];
            hi[a] = i && hi[a] > pl[i][a] + d->shape[a] ? hi[a] : pl[i][a] + d->shape[a];
        }
        sum += dg_shape_size(nd, d->shape);
        for (j = 0; j < i; j++) {
            int64_t l2[DG_MAXDIM], s2[DG_MAXDIM];
            if (meet(nd, pl[i], d->shape, pl[j], p[own[j]].d->shape, l2, s2))
                return 0;
        }
    }
    for (a = 0; a < nd; a++)
        box *= hi[a] - lo[a];
    if (sum != box || box == 0 || frame - box > box)
        return 0;
    /* the frame outside the box: along each axis (outermost first), below
     * and above the box, the axes before it within the box, those after whole */
    r->nkeep = 0;
    for (i = 0; i < nd; i++) {
        int side;
        for (side = 0; side < 2; side++) {
            dg_copy_desc *c = &r->keep[r->nkeep];
            int64_t off = 0, m = 1;
            memset(c, 0, sizeof(*c));
            c->ndim = nd;
            c->itemsize = isz;
            for (a = 0; a < nd; a++) {
                int64_t s0, e0;
                const int at_i = a == perm[i];
                if (at_i) {
                    s0 = side ? hi[a] : 0;
                    e0 = side ? full[a] : lo[a];
                } else {
                    for (j = 0; j < i && perm[j] != a; j++)
                        ;
                    s0 = j < i ? lo[a] : 0;
                    e0 = j < i ? hi[a] : full[a];
                }
                c->shape[a] = e0 - s0;
                c->src_strides[a] = c->dst_strides[a] = st[a];
                off += s0 * st[a];
                m *= e0 - s0;
            }
            if (!m)
                continue;
            c->src = (const char *)(intptr_t)off;
            c->dst = (char *)(intptr_t)off;
            r->nkeep++;
        }
    }
    return 1;
}

/* Where the call (pieces p, joining along the nc cuts; one output, which
 * none of its inputs reads) is kept out of the chain by its writes alone,
 * gives each memory it writes new memory (see above), points *pp at the
 * call's pieces rebased there and returns 1.  Else 0, and the call runs
 * after the chain as before (also where new memory cannot be had: *pp then
 * holds the pieces rebased so far). */
static int renew_outputs(dg_backend_i *be, const dg_fuse_piece **pp, int n, int nc)
{
    const dg_fuse_piece *p = *pp;
    const dg_loop_info *li = &dg_loops[p[0].d->loop];
    const int k = li->nin, isz = dg_dtype_size(li->dtypes[k]);
    int nr = 0, i, j, h, v;
    if (!renew_on() || li->nout != 1 || cuts_conflict(p, nc, 1))
        return 0;
    for (j = 0; j < n; j++) {
        dg_buffer *b = p[j].buf[k];
        if (!b || !p[j].d->data[k] || b->lent || !b->nbytes || b->device != p[j].dev ||
            chain_writes(b->mem))
            return 0;
        for (i = 0; i < n; i++)
            for (h = 0; h < li->nin; h++)
                if (p[i].buf[h] && p[i].buf[h]->mem == b->mem)
                    return 0;
        for (i = 0; i < nr && g_renew[i].b != b; i++)
            ;
        if (i < nr)
            continue;
        g_renew[nr].b = b;
        if (!renew_plan(p, n, k, isz, &g_renew[nr]))
            return 0;
        nr++;
    }
    /* the call's pieces, rebased as each memory is renewed */
    for (j = 0; j < n; j++) {
        g_rd[j] = *p[j].d;
        g_rp[j] = p[j];
        g_rp[j].d = &g_rd[j];
    }
    for (i = 0; i < nr; i++) {
        dg_buffer *b = g_renew[i].b, *old = NULL;
        const char *was = (const char *)b->ptr;
        fz_piece *f;
        dg_error e2 = DG_ERROR_INIT;
        if (dg_buffer_renew(be, b, g_renew[i].keep, g_renew[i].nkeep, &old, &e2) != DG_OK) {
            /* no memory for it: the call runs after the chain, as before,
             * through the rebased pieces (the memories renewed so far hold
             * the same values; this one's pieces keep their addresses) */
            dg_error_clear(&e2);
            break;
        }
        for (j = 0; j < n; j++)
            if (p[j].buf[k] == b)
                g_rd[j].data[k] = (char *)b->ptr + (p[j].d->data[k] - was);
        /* the chain reads the old memory through `old` */
        for (h = 0; h < g_chain.npiece; h++) {
            f = &g_chain.pieces[h];
            for (v = 0; v < f->d.nval; v++)
                if (f->buf[v] == b)
                    f->buf[v] = old;
            for (v = 0; v < f->nheld; v++)
                if (f->held[v] == b) {
                    f->held[v] = old;
                    old->refcnt++;
                    b->refcnt--;
                }
        }
        dg_buffer_decref(be, old);
        g_renews++;
    }
    *pp = g_rp;
    return i == nr;
}

/* 1 if the call of pieces p can raise no floating-point error whatever
 * its errstate: a copy (a cast to the same dtype), as `a[...] = b` and
 * copyto are.  Such a call joins a chain under another action word (the
 * assignment of a chain's result into place runs under none), and a chain of
 * such calls takes the word of the next call. */
static int quiet_call(const dg_fuse_piece *p)
{
    const dg_loop_info *li = &dg_loops[p[0].d->loop];
    return li->ufunc == DG_UF_cast && li->dtypes[0] == li->dtypes[1];
}

dg_status dg_fuse_record(dg_backend_i *be, const dg_fuse_piece *p, int n, int *recorded,
                         dg_error *err)
{
    dg_status st = DG_OK;
    int i, joined = 0;
    *recorded = 0;
    if (t_inside || n <= 0 || n > FZ_MAXPIECES || !dg_fuse_enabled() ||
        !dg_be_has(be, DG_SLOT_FUSED) || dg_fpe_strict(dg_fpe_actions()))
        return DG_OK;
    {
        int64_t total = 0;
        for (i = 0; i < n; i++) {
            if (p[i].d->where || p[i].d->ndim > DG_MAXDIM)
                return DG_OK;
            total += dg_shape_size(p[i].d->ndim, p[i].d->shape);
        }
        if (total < g_min_elems)
            return DG_OK;
    }
    lock();
    if (!g_chain.pieces) {
        g_chain.pieces = (fz_piece *)calloc(FZ_MAXPIECES, sizeof(fz_piece));
        if (!g_chain.pieces) {
            unlock();
            return DG_OK; /* not recorded: the caller enqueues the call */
        }
    }
    if (g_chain.nstep) {
        /* a call under another errstate starts a chain of its own, unless
         * it or the chain can raise nothing */
        const uint32_t word = dg_fpe_actions();
        const int quiet = quiet_call(p);
        const int nc = g_chain.fpe == word || quiet || g_chain.quiet ? cuts_of(be, p, n) : 0;
        int fits = nc && !cuts_conflict(p, nc, 0);
        if (nc && !fits)
            fits = renew_outputs(be, &p, n, nc);
        if (fits && join(be, p, n, nc)) {
            joined = 1;
            if (g_chain.fpe != word && !quiet)
                g_chain.fpe = word; /* the chain was quiet */
            g_chain.quiet &= quiet;
        } else {
            st = flush_locked(err);
        }
    }
    if (st == DG_OK) {
        if (!joined) {
            g_chain.quiet = quiet_call(p);
            g_chain.fpe = dg_fpe_actions();
            g_chain.be = be;
            g_chain.npiece = n;
            g_chain.shared = 0;
            for (i = 0; i < n; i++)
                append(&g_chain.pieces[i], &p[i], 1);
        }
        reap(be);
        g_chain.nstep++;
        atomic_store_explicit(&g_pending, 1, memory_order_release);
        *recorded = 1;
        if (g_chain.nstep >= DG_FUSED_MAXSTEPS)
            st = flush_locked(err);
    }
    unlock();
    return st;
}
