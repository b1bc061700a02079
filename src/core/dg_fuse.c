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

#define FZ_MAXPIECES 64 /* pieces of one call that may join a chain */
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
    dg_fused_desc d;
    dg_buffer *buf[DG_FUSED_MAXVALS]; /* each value's buffer (borrowed from held); NULL for
                                       * scalars, temps */
    int nheld;
    dg_buffer *held[DG_FUSED_MAXVALS]; /* the distinct buffers, one strong reference each */
} fz_piece;

/* The pending chain: nstep calls recorded, each with one step in every
 * piece. */
typedef struct fz_chain {
    dg_backend_i *be;
    int npiece;
    int nstep;
    uint32_t fpe; /* the action word of its calls (dg_fpe.h): one per chain */
    fz_piece *pieces; /* [FZ_MAXPIECES], allocated at the first record */
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

/* 1 if operand (m, dtype, data, strides) of a call's piece pi, read or
 * written (`write`), would make the chain inexact: the chain or the operand
 * writes m, and the other touches it through another view or piece. */
static int conflicts(const dg_mem *m, int pi, int write, int dtype, const char *data,
                     const int64_t *strides, int ndim, const int64_t *shape)
{
    int i, k;
    for (i = 0; i < g_chain.npiece; i++) {
        const fz_piece *f = &g_chain.pieces[i];
        for (k = 0; k < f->d.nval; k++) {
            const dg_fused_val *v = &f->d.val[k];
            if (val_mem(f, k) != m || (!write && v->kind != DG_FV_OUT))
                continue;
            if (i != pi || !same_view(v, dtype, data, strides, ndim, shape))
                return 1;
        }
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

/* 1 if the call's n pieces can join the pending chain (which holds some). */
static int joinable(dg_backend_i *be, const dg_fuse_piece *p, int n)
{
    int i, k;
    if (g_chain.be != be || g_chain.npiece != n || g_chain.nstep >= DG_FUSED_MAXSTEPS)
        return 0;
    for (i = 0; i < n; i++) {
        const fz_piece *f = &g_chain.pieces[i];
        const dg_ew_desc *d = p[i].d;
        const dg_loop_info *li = &dg_loops[d->loop];
        if (f->dev != p[i].dev || f->d.ndim != d->ndim ||
            memcmp(f->d.shape, d->shape, sizeof(int64_t) * (size_t)d->ndim) != 0 ||
            f->d.nval + li->nin + li->nout > DG_FUSED_MAXVALS)
            return 0;
        for (k = 0; k < li->nin + li->nout; k++) {
            int64_t s[DG_MAXDIM];
            if (!p[i].buf[k] || !d->data[k])
                continue;
            norm_strides(d, k, s);
            if (conflicts(p[i].buf[k]->mem, i, k >= li->nin, li->dtypes[k], d->data[k], s,
                          d->ndim, d->shape))
                return 0;
        }
    }
    return 1;
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

/* Results of piece f whose arrays are gone (their buffer held by the chain
 * alone, its memory by that buffer alone, and no value reading what it held
 * before) become temporaries, and their memory goes back to the pool.  A
 * buffer written here is in no other piece (joinable's rule), so the
 * chain's one reference is this piece's. */
static void reap(dg_backend_i *be, fz_piece *f)
{
    int h, j;
    for (h = 0; h < f->nheld; h++) {
        dg_buffer *b = f->held[h];
        int written = 0, read = 0;
        if (b->refcnt != 1 || b->mem->refcnt != 1)
            continue;
        for (j = 0; j < f->d.nval; j++)
            if (f->buf[j] == b) {
                written |= f->d.val[j].kind == DG_FV_OUT;
                read |= f->d.val[j].kind == DG_FV_IN;
            }
        if (!written || read)
            continue;
        for (j = 0; j < f->d.nval; j++)
            if (f->buf[j] == b) {
                f->d.val[j].kind = DG_FV_TEMP;
                f->d.val[j].data = NULL;
                f->buf[j] = NULL;
            }
        f->held[h--] = f->held[--f->nheld];
        dg_buffer_decref(be, b);
    }
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
static dg_status run_piece(dg_backend_i *be, fz_piece *f, dg_error *err)
{
    dg_fused_desc dd, *d = &dd;
    dg_buffer *bufs[DG_FUSED_MAXVALS];
    dg_access acc[DG_FUSED_MAXVALS];
    int na = 0, k, j, temps = 0;
    dg_status st;
    reap(be, f);
    prune(f, d, bufs);
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
    }
    return st;
}

/* Runs and empties the chain (g_mu held).  Every piece is run, or at least
 * released, even after one fails; the first error is kept. */
static dg_status flush_locked(dg_error *err)
{
    dg_status st = DG_OK;
    dg_error e2 = DG_ERROR_INIT;
    int i, k;
    uint32_t fpe_was;
    if (!g_chain.nstep)
        return DG_OK;
    /* the chain's work runs under its calls' errstate, whichever thread
     * runs it and whatever errstate that thread has now */
    fpe_was = dg_fpe_set_actions(g_chain.fpe);
    for (i = 0; i < g_chain.npiece; i++) {
        fz_piece *f = &g_chain.pieces[i];
        dg_status s2 = run_piece(g_chain.be, f, st == DG_OK ? err : &e2);
        if (st == DG_OK)
            st = s2;
        for (k = 0; k < f->nheld; k++)
            dg_buffer_decref(g_chain.be, f->held[k]);
        for (k = 0; k < f->d.nval; k++)
            f->buf[k] = NULL;
        f->d.nval = f->d.nstep = f->nheld = 0;
    }
    dg_error_clear(&e2);
    dg_fpe_set_actions(fpe_was);
    g_chain.nstep = 0;
    g_chain.npiece = 0;
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
    for (i = 0; i < n && !hit; i++)
        hit = acc[i].mem && chain_uses(acc[i].mem);
    if (hit)
        st = flush_locked(err);
    unlock();
    return st;
}

dg_status dg_fuse_touch_buffer(const dg_buffer *b, dg_error *err)
{
    dg_access a;
    a.mem = b->mem;
    a.how = DG_ACC_READ;
    a.dev = a.stream = -1;
    return dg_fuse_touch(&a, 1, err);
}

int dg_fuse_wanted(dg_backend_i *be, int64_t nelems)
{
    return dg_fuse_enabled() && nelems >= g_min_elems && !t_inside &&
           dg_be_has(be, DG_SLOT_FUSED);
}

dg_status dg_fuse_record(dg_backend_i *be, const dg_fuse_piece *p, int n, int *recorded,
                         dg_error *err)
{
    dg_status st = DG_OK;
    int i;
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
    /* a call under another errstate starts a chain of its own */
    if (g_chain.nstep && (!joinable(be, p, n) || g_chain.fpe != dg_fpe_actions()))
        st = flush_locked(err);
    if (st == DG_OK) {
        const int first = g_chain.nstep == 0;
        if (first) {
            g_chain.fpe = dg_fpe_actions();
            g_chain.be = be;
            g_chain.npiece = n;
        }
        for (i = 0; i < n; i++) {
            append(&g_chain.pieces[i], &p[i], first);
            reap(be, &g_chain.pieces[i]);
        }
        g_chain.nstep++;
        atomic_store_explicit(&g_pending, 1, memory_order_release);
        *recorded = 1;
        if (g_chain.nstep >= DG_FUSED_MAXSTEPS)
            st = flush_locked(err);
    }
    unlock();
    return st;
}
