/* Loops over distributed arrays: elementwise work (dg_ew_apply), casts and fills.
 * Operands held elsewhere are brought by moves of the planner's copies
 * (dg_move.c); reshard and modes are in dg_reshard.c. */
#include <stdlib.h>
#include <string.h>

#include "dg_array.h"
#include "dg_array_impl.h"
#include "dg_fuse.h"
#include "dg_ufunc.h"

/* Drops axes of length 1 and merges adjacent axes along which every operand
 * is dense, so that contiguous work becomes one long axis. */
void dg_ew_coalesce(dg_ew_desc *d)
{
    int a, o, nd = 0;
    int nop = d->nop;
    /* drop length-1 axes */
    for (a = 0; a < d->ndim; a++) {
        if (d->shape[a] == 1)
            continue;
        d->shape[nd] = d->shape[a];
        for (o = 0; o < nop; o++)
            d->strides[o][nd] = d->strides[o][a];
        d->where_strides[nd] = d->where_strides[a];
        nd++;
    }
    d->ndim = nd;
    if (nd <= 1)
        return;
    /* merge a into a+1 from the back */
    nd = 1;
    for (a = 1; a < d->ndim; a++) {
        int ok = 1;
        int prev = nd - 1;
        for (o = 0; o < nop && ok; o++)
            if (d->data[o] && d->strides[o][prev] != d->strides[o][a] * d->shape[a])
                ok = 0;
        if (ok && d->where && d->where_strides[prev] != d->where_strides[a] * d->shape[a])
            ok = 0;
        if (ok) {
            d->shape[prev] *= d->shape[a];
            for (o = 0; o < nop; o++)
                d->strides[o][prev] = d->strides[o][a];
            d->where_strides[prev] = d->where_strides[a];
        } else {
            d->shape[nd] = d->shape[a];
            for (o = 0; o < nop; o++)
                d->strides[o][nd] = d->strides[o][a];
            d->where_strides[nd] = d->where_strides[a];
            nd++;
        }
    }
    d->ndim = nd;
}

/* The region of input x (of x->ndim axes, right-aligned against the call's
 * ndim axes) that output box B needs, and which axes are broadcast. */
static void input_region(const dg_array *x, const dg_box *B, int ndim, dg_box *R,
                         int *bcast)
{
    int k = ndim - x->ndim, j;
    R->ndim = x->ndim;
    for (j = 0; j < x->ndim; j++) {
        int a = j + k;
        if (x->shape[j] == 1 && dg_range_len(B->r[a]) > 0) {
            R->r[j] = dg_range_make(0, 1, 1);
            bcast[j] = 1;
        } else {
            R->r[j] = B->r[a];
            bcast[j] = 0;
        }
    }
}

/* Loop strides of an input region, per call axis: 0 on missing and
 * broadcast axes. */
static void loop_strides(const dg_array *x, const int *bcast, const int64_t *rstrides,
                         int ndim, int64_t *out)
{
    int k = ndim - x->ndim, a;
    for (a = 0; a < ndim; a++) {
        int j = a - k;
        out[a] = (j < 0 || bcast[j]) ? 0 : rstrides[j];
    }
}

/* ---- elementwise work ------------------------------------------------------------
 *
 * Each chunk of the output is computed where it lives.  When every input
 * region (the output box mapped back through broadcasting) is held by one
 * chunk on that device (or, small, by one the device reads in place), one
 * loop runs per output chunk.  Otherwise the output box is cut into pieces
 * along the boxes of the planner's copies: a piece whose inputs are on the
 * device reads them in place, a piece whose input comes from another device
 * reads a temporary that a move fills (one exchange group for the whole call,
 * on the transfer streams).  The pieces in place run first, while the
 * transfers are in flight; each of the others waits for its own data only. */

/* Operands of one output chunk: inputs 0..nin-1, then the where mask. */
#define EW_OPS 3
/* More pieces than this per output chunk: each remote input is gathered
 * whole into one temporary instead. */
#define EW_MAX_PIECES 64

/* A chunk a piece reads one operand from: one of the operand's own chunks
 * (borrowed) or a temporary on the output chunk's device (owned).  A
 * pointer, not a copy: a chunk record is 1 KiB, and a call over 10^5 chunks
 * would copy 100-200 MB of them. */
typedef struct ew_src {
    const dg_chunk *c; /* the operand's chunk, or temp */
    dg_chunk *temp;    /* owned (malloc'ed, with its buffer's reference), or NULL */
} ew_src;

typedef struct ew_piece {
    int chunk;        /* output chunk */
    dg_box box;       /* output coordinates */
    int src[EW_OPS];  /* index into the sources, per operand (-1: scalar) */
    int late;         /* reads data a transfer writes: runs after the pieces whose
                       * data is in place */
} ew_piece;

typedef struct ew_work {
    ew_src *srcs;
    int nsrcs, capsrcs;
    ew_piece *pieces;
    int npieces, cappieces;
} ew_work;

/* Adds source c (borrowed), or temp when c is NULL (w owns it from
 * success on; the caller keeps it on failure); its index in *idx. */
static dg_status ew_push_src(ew_work *w, const dg_chunk *c, dg_chunk *temp, int *idx,
                             dg_error *err)
{
    DG_CHECK(dg_grow((void **)&w->srcs, &w->capsrcs, w->nsrcs + 1, sizeof(ew_src), 8, err));
    w->srcs[w->nsrcs].c = temp ? temp : c;
    w->srcs[w->nsrcs].temp = temp;
    *idx = w->nsrcs++;
    return DG_OK;
}

/* *p: all of output chunk ci's `box`, reading no source yet. */
static void ew_piece_init(ew_piece *p, int ci, const dg_box *box)
{
    int i;
    memset(p, 0, sizeof(*p));
    p->chunk = ci;
    p->box = *box;
    for (i = 0; i < EW_OPS; i++)
        p->src[i] = -1;
}

static dg_status ew_push_piece(ew_work *w, const ew_piece *p, dg_error *err)
{
    DG_CHECK(dg_grow((void **)&w->pieces, &w->cappieces, w->npieces + 1, sizeof(ew_piece), 16,
                     err));
    w->pieces[w->npieces++] = *p;
    return DG_OK;
}

static void ew_work_free(dg_backend_i *be, ew_work *w)
{
    int i;
    for (i = 0; i < w->nsrcs; i++)
        if (w->srcs[i].temp) {
            dg_buffer_decref(be, w->srcs[i].temp->buf);
            free(w->srcs[i].temp);
        }
    free(w->srcs);
    free(w->pieces);
}

/* A new temporary chunk on dev holding `box` of an operand of `isz`-byte
 * items, dense; its index in *idx. */
static dg_status ew_temp(dg_backend_i *be, ew_work *w, int dev, const dg_box *box, int isz,
                         int *idx, dg_error *err)
{
    dg_chunk *t = (dg_chunk *)calloc(1, sizeof(dg_chunk));
    int64_t stride = isz;
    int ax;
    dg_status st;
    if (!t)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    t->device = dev;
    t->box = *box;
    for (ax = box->ndim - 1; ax >= 0; ax--) {
        t->strides[ax] = stride;
        stride *= dg_range_len(box->r[ax]);
    }
    st = dg_buffer_new(be, dev, (size_t)dg_box_size(box) * (size_t)isz, &t->buf, err);
    if (st == DG_OK)
        st = ew_push_src(w, NULL, t, idx, err);
    if (st != DG_OK) {
        if (t->buf)
            dg_buffer_decref(be, t->buf);
        free(t);
    }
    return st;
}

/* The output box (inside B) whose region of x is the box xb (inside x's
 * region of B): x's axes as xb says, broadcast and missing axes whole. */
static void output_box(const dg_array *x, const dg_box *B, int ndim, const dg_box *xb,
                       dg_box *out)
{
    int k = ndim - x->ndim, a;
    *out = *B;
    for (a = k; a < ndim; a++)
        if (!(x->shape[a - k] == 1 && dg_range_len(B->r[a]) > 0))
            out->r[a] = xb->r[a - k];
}

/* The chunk of x from which output chunk ci (on dev) reads region R in
 * place: x's own chunk ci when it holds R on dev (x laid out as the output,
 * the common case, found with no search of x's chunks: layouts of many
 * chunks), else dg_find_source's. */
static dg_status ew_find_source(dg_array *x, int ci, const dg_box *R, int dev,
                                const dg_chunk **in)
{
    if (ci < x->nchunks && x->chunks[ci].device == dev &&
        dg_box_contains(&x->chunks[ci].box, R)) {
        *in = &x->chunks[ci];
        return DG_OK;
    }
    return dg_find_source(x, R, dev, in);
}

/* Operand `op` (array x) of the pieces of output chunk `ci` (box B on dev),
 * pieces [first, w->npieces): read in place when one source holds x's region
 * of B; else the pieces are cut along the planner's copies, the local ones
 * read in place and the others from temporaries that move `mv` fills. */
static dg_status ew_operand(dg_backend_i *be, ew_work *w, dg_move *mv, dg_array *x, int op,
                            int ci, const dg_box *B, int ndim, int dev, int first,
                            dg_error *err)
{
    const int isz = dg_dtype_size(x->dtype);
    const dg_chunk *in = NULL;
    dg_plan_chunk *src = NULL, dst;
    dg_plan plan = {0, 0, NULL};
    dg_box R;
    int bcast[DG_MAXDIM], *cidx = NULL, i, j, n0, si;
    int64_t ncut;
    dg_status st = DG_OK;

    input_region(x, B, ndim, &R, bcast);
    DG_CHECK(ew_find_source(x, ci, &R, dev, &in));
    if (in) {
        dg_count_peer_read(x, in, &R, dev);
        DG_CHECK(ew_push_src(w, in, NULL, &si, err));
        for (i = first; i < w->npieces; i++)
            w->pieces[i].src[op] = si;
        return DG_OK;
    }
    DG_CHECK_GOTO(dg_array_layout(x, &src, err), st, done);
    dst.device = dev;
    dst.box = R;
    dg_box_canon(&dst.box);
    DG_CHECK_GOTO(dg_plan_build(src, x->nchunks, &dst, 1, &plan, err), st, done);
    cidx = (int *)malloc((size_t)(plan.ncopies ? plan.ncopies : 1) * sizeof(int));
    if (!cidx) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    ncut = (int64_t)(w->npieces - first) * plan.ncopies;
    if (ncut > EW_MAX_PIECES || plan.ncopies == 1) {
        /* the whole region into one temporary */
        DG_CHECK_GOTO(ew_temp(be, w, dev, &dst.box, isz, &si, err), st, done);
        for (j = 0; j < plan.ncopies; j++) {
            dg_move_item it;
            dg_move_item_view(&it, isz, &x->chunks[plan.copies[j].src], &plan.copies[j].box,
                              w->srcs[si].c);
            DG_CHECK_GOTO(dg_move_add(mv, &it, err), st, done);
        }
        for (i = first; i < w->npieces; i++) {
            w->pieces[i].src[op] = si;
            w->pieces[i].late = 1;
        }
        goto done;
    }
    /* one source per copy: the chunk itself where it is on dev (or, small,
     * on a peer dev reads in place), else a temporary of the copy's box */
    for (j = 0; j < plan.ncopies; j++) {
        const dg_plan_copy *pc = &plan.copies[j];
        const dg_chunk *c = &x->chunks[pc->src];
        if (c->device == dev ||
            (dg_be_can_access(be, dev, c->device) &&
             (size_t)dg_box_size(&pc->box) * (size_t)isz <= dg_get_peer_read_bytes())) {
            dg_count_peer_read(x, c, &pc->box, dev);
            DG_CHECK_GOTO(ew_push_src(w, c, NULL, &cidx[j], err), st, done);
        } else {
            dg_move_item it;
            DG_CHECK_GOTO(ew_temp(be, w, dev, &pc->box, isz, &cidx[j], err), st, done);
            dg_move_item_view(&it, isz, c, &pc->box, w->srcs[cidx[j]].c);
            DG_CHECK_GOTO(dg_move_add(mv, &it, err), st, done);
        }
    }
    /* cut each piece along the copies' output boxes */
    n0 = w->npieces;
    for (i = first; i < n0 && st == DG_OK; i++) {
        for (j = 0; j < plan.ncopies && st == DG_OK; j++) {
            ew_piece q = w->pieces[i];
            dg_box ob;
            output_box(x, B, ndim, &plan.copies[j].box, &ob);
            if (!dg_box_intersect(&w->pieces[i].box, &ob, &q.box))
                continue;
            q.src[op] = cidx[j];
            q.late |= w->srcs[cidx[j]].temp != NULL;
            q.chunk = ci;
            st = ew_push_piece(w, &q, err);
        }
    }
    if (st == DG_OK) { /* the cut pieces replace the pieces they came from */
        memmove(&w->pieces[first], &w->pieces[n0],
                (size_t)(w->npieces - n0) * sizeof(ew_piece));
        w->npieces -= n0 - first;
    }
done:
    free(cidx);
    dg_plan_free(&plan);
    free(src);
    return st;
}

/* The loop of `call` over piece p (output chunk p->chunk), not coalesced:
 * *d, its accesses acc[0 .. *na) and the buffer of each operand of d (NULL
 * for a scalar). */
static void ew_piece_desc(const dg_ew_call *call, ew_work *w, const ew_piece *p, dg_ew_desc *d,
                          dg_access *acc, int *na, dg_buffer **bufs)
{
    const dg_loop_info *li = &dg_loops[call->loop];
    const int nin = li->nin, nout = li->nout;
    dg_box R;
    int bcast[DG_MAXDIM], i, a;
    int64_t rs[DG_MAXDIM];

    *na = 0;
    memset(d, 0, offsetof(dg_ew_desc, strides));
    d->loop = call->loop;
    d->ndim = call->ndim;
    d->nop = nin + nout;
    d->where = NULL;
    for (a = 0; a < call->ndim; a++)
        d->shape[a] = dg_range_len(p->box.r[a]);
    for (i = 0; i < nin; i++) {
        dg_array *x = call->in[i].arr;
        bufs[i] = NULL;
        if (!x) {
            memcpy(d->scalar[i], call->in[i].scalar, 16);
            memset(d->strides[i], 0, sizeof(d->strides[i]));
            continue;
        }
        input_region(x, &p->box, call->ndim, &R, bcast);
        dg_chunk_view(w->srcs[p->src[i]].c, &R, &d->data[i], rs);
        loop_strides(x, bcast, rs, call->ndim, d->strides[i]);
        bufs[i] = w->srcs[p->src[i]].c->buf;
        acc[(*na)++] = dg_read(bufs[i]);
    }
    if (call->where) {
        char *wp;
        input_region(call->where, &p->box, call->ndim, &R, bcast);
        dg_chunk_view(w->srcs[p->src[nin]].c, &R, &wp, rs);
        d->where = (const dg_bool *)wp;
        loop_strides(call->where, bcast, rs, call->ndim, d->where_strides);
        acc[(*na)++] = dg_read(w->srcs[p->src[nin]].c->buf);
    }
    for (i = 0; i < nout; i++) {
        dg_chunk *c = &call->out[i]->chunks[p->chunk];
        dg_chunk_view(c, &p->box, &d->data[nin + i], d->strides[nin + i]);
        bufs[nin + i] = c->buf;
        acc[(*na)++] = dg_write(c->buf);
    }
}

/* Runs the loop of `call` over piece p (output chunk p->chunk). */
static dg_status ew_run_piece(const dg_ew_call *call, ew_work *w, const ew_piece *p,
                              dg_error *err)
{
    dg_ew_desc d;
    dg_access acc[DG_MAXOPS];
    dg_buffer *bufs[DG_MAXOPS];
    int na;
    ew_piece_desc(call, w, p, &d, acc, &na, bufs);
    dg_ew_coalesce(&d);
    return dg_enqueue(call->out[0]->be, call->out[0]->chunks[p->chunk].device,
                      DG_STREAM_COMPUTE, acc, na, dg_work_elementwise(&d), err);
}

/* Hands the pieces of `call` to the pending chain (dg_fuse.h), in the
 * order they would run (*recorded 0: not taken, the caller runs them). */
#define EW_RECORD_STACK 8 /* pieces described on the stack */
static dg_status ew_record(const dg_ew_call *call, ew_work *w, int *recorded, dg_error *err)
{
    dg_fuse_piece fp_stack[EW_RECORD_STACK], *fp;
    dg_ew_desc ds_stack[EW_RECORD_STACK], *ds;
    dg_access acc[DG_MAXOPS];
    int i, pass, n = 0, na;
    dg_status st;
    *recorded = 0;
    if (call->where || w->npieces == 0 ||
        !dg_fuse_wanted(call->out[0]->be, dg_shape_size(call->ndim, call->shape)))
        return DG_OK;
    if (w->npieces <= EW_RECORD_STACK) {
        fp = fp_stack;
        ds = ds_stack;
    } else {
        fp = (dg_fuse_piece *)malloc((size_t)w->npieces * sizeof(*fp));
        ds = (dg_ew_desc *)malloc((size_t)w->npieces * sizeof(*ds));
        if (!fp || !ds) {
            free(fp);
            free(ds);
            return DG_OK;
        }
    }
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < w->npieces; i++)
            if (w->pieces[i].late == pass) {
                ew_piece_desc(call, w, &w->pieces[i], &ds[n], acc, &na, fp[n].buf);
                fp[n].d = &ds[n];
                fp[n].box = &w->pieces[i].box;
                fp[n].dev = call->out[0]->chunks[w->pieces[i].chunk].device;
                n++;
            }
    st = dg_fuse_record(call->out[0]->be, fp, n, recorded, err);
    if (fp != fp_stack) {
        free(fp);
        free(ds);
    }
    return st;
}

/* The operand arrays of call: inputs then the where mask (NULL: scalar). */
static int ew_operands(const dg_ew_call *call, dg_array **ops)
{
    const int nin = dg_loops[call->loop].nin;
    int i;
    for (i = 0; i < nin; i++)
        ops[i] = call->in[i].arr;
    ops[nin] = call->where;
    return nin + 1;
}

/* 1 if a source of piece p was last written by another stream than dev's
 * compute stream (the moved pieces of a reshard: NCCL's receive buffers,
 * perhaps still in flight).  Such a piece waits for that stream, and a wait
 * holds back everything enqueued after it on the compute stream, so it runs
 * after the pieces whose data is ready (late). */
static int ew_piece_waits(const ew_work *w, const ew_piece *p, int nops, int dev)
{
    int i;
    for (i = 0; i < nops; i++)
        if (p->src[i] >= 0 &&
            dg_mem_read_waits(w->srcs[p->src[i]].c->buf->mem, dev, DG_STREAM_COMPUTE))
            return 1;
    return 0;
}

dg_status dg_ew_apply(const dg_ew_call *call, dg_error *err)
{
    dg_array *o0 = call->out[0], *ops[EW_OPS + 1];
    dg_backend_i *be = o0->be;
    const int nout = dg_loops[call->loop].nout;
    int nops = ew_operands(call, ops), ci, i, pass, recorded = 0;
    ew_work w;
    dg_move mv;
    dg_status st = DG_OK;

    for (i = 0; i < nout; i++)
        DG_CHECK(dg_array_unshare(call->out[i], err));
    memset(&w, 0, sizeof(w));
    dg_move_init(&mv, be);
    {
        /* the common case, tried first: every operand region of every
         * output chunk read in place, one piece per output chunk, nothing
         * moves (the lists sized once: no copies of them as they grow);
         * where some region is not held in one place, the pieces made so
         * far are dropped and the general way below runs */
        int64_t peer = 0;
        int in_place = 1;
        st = dg_grow((void **)&w.pieces, &w.cappieces, o0->nchunks, sizeof(ew_piece), 16, err);
        if (st == DG_OK)
            st = dg_grow((void **)&w.srcs, &w.capsrcs, o0->nchunks * nops, sizeof(ew_src), 8,
                         err);
        for (ci = 0; ci < o0->nchunks && st == DG_OK && in_place; ci++) {
            const dg_chunk *oc = &o0->chunks[ci];
            ew_piece p;
            if (dg_box_size(&oc->box) == 0)
                continue;
            ew_piece_init(&p, ci, &oc->box);
            for (i = 0; i < nops && st == DG_OK && in_place; i++) {
                dg_box R;
                int bcast[DG_MAXDIM];
                const dg_chunk *in = NULL;
                if (!ops[i])
                    continue;
                input_region(ops[i], &oc->box, call->ndim, &R, bcast);
                if (ew_find_source(ops[i], ci, &R, oc->device, &in) != DG_OK || !in) {
                    in_place = 0;
                    break;
                }
                peer += dg_peer_read_bytes(ops[i], in, &R, oc->device);
                st = ew_push_src(&w, in, NULL, &p.src[i], err);
            }
            if (st == DG_OK && in_place)
                st = ew_push_piece(&w, &p, err);
        }
        if (st == DG_OK && in_place)
            dg_count_peer_bytes(peer);
        if (st != DG_OK || in_place)
            goto run;
        w.npieces = 0;
        w.nsrcs = 0;
    }
    for (ci = 0; ci < o0->nchunks && st == DG_OK; ci++) {
        const dg_chunk *oc = &o0->chunks[ci];
        ew_piece p;
        int first = w.npieces;
        if (dg_box_size(&oc->box) == 0)
            continue;
        ew_piece_init(&p, ci, &oc->box);
        st = ew_push_piece(&w, &p, err);
        for (i = 0; i < nops && st == DG_OK; i++)
            if (ops[i])
                st = ew_operand(be, &w, &mv, ops[i], i, ci, &oc->box, call->ndim, oc->device,
                                first, err);
    }
    if (st == DG_OK)
        st = dg_move_run(&mv, err);
run:
    for (i = 0; i < w.npieces; i++)
        w.pieces[i].late |= ew_piece_waits(&w, &w.pieces[i], nops,
                                           o0->chunks[w.pieces[i].chunk].device);
    if (st == DG_OK)
        st = ew_record(call, &w, &recorded, err);
    /* the pieces in place, then those that wait for transfers */
    for (pass = 0; pass < 2 && st == DG_OK && !recorded; pass++)
        for (i = 0; i < w.npieces && st == DG_OK; i++)
            if (w.pieces[i].late == pass)
                st = ew_run_piece(call, &w, &w.pieces[i], err);
    dg_move_free(&mv);
    ew_work_free(be, &w);
    return st;
}

dg_status dg_array_cast(dg_array *a, int dtype, dg_array **out, dg_error *err)
{
    dg_plan_chunk *l = NULL;
    dg_array *r = NULL;
    dg_ew_call call;
    dg_status st;
    int n = 0;
    DG_CHECK(dg_array_logical_layout(a, &l, &n, err));
    if (a->dtype == dtype) {
        /* a copy with the same layout */
        st = dg_array_reshard_ex(a, l, n, DG_RESHARD_PIECES, out, err);
        free(l);
        return st;
    }
    st = dg_array_empty(a->be, dtype, a->ndim, a->shape, l, n, DG_MODE_REPLICA, &r, err);
    free(l);
    if (st != DG_OK)
        return st;
    memset(&call, 0, sizeof(call));
    call.loop = dg_loop_cast(a->dtype, dtype);
    call.ndim = a->ndim;
    memcpy(call.shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    call.in[0].arr = a;
    call.out[0] = r;
    st = dg_ew_apply(&call, err);
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

dg_status dg_array_fill(dg_array *a, const dg_fill_desc *proto, const dg_box *region,
                        dg_error *err)
{
    dg_backend_i *be = a->be;
    dg_access acc;
    int i, ax;
    DG_CHECK(dg_array_unshare(a, err));
    for (i = 0; i < a->nchunks; i++) {
        dg_chunk *c = &a->chunks[i];
        dg_fill_desc f = *proto;
        dg_box B = c->box;
        if (region && !dg_box_intersect(&c->box, region, &B))
            continue;
        if (dg_box_size(&B) == 0)
            continue;
        f.dtype = a->dtype;
        f.ndim = a->ndim;
        for (ax = 0; ax < a->ndim; ax++) {
            f.shape[ax] = dg_range_len(B.r[ax]);
            f.origin[ax] = B.r[ax].start;
            f.gstep[ax] = B.r[ax].step;
            f.gshape[ax] = a->shape[ax];
        }
        dg_chunk_view(c, &B, &f.dst, f.strides);
        acc = dg_write(c->buf);
        DG_CHECK(dg_enqueue(be, c->device, DG_STREAM_COMPUTE, &acc, 1, dg_work_fill(&f), err));
    }
    return DG_OK;
}

