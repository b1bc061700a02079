/* The semantics of a ufunc call on distributed arrays (dg_ufunc_call.h):
 * results, out=, overlap and where=, the parts of NumPy's ufunc machinery
 * that hold for any backend and need no Python. */
#include <stdlib.h>
#include <string.h>

#include "dg_ufunc.h"
#include "dg_ufunc_call.h"
#include "dg_view.h"

void dg_ufunc_call_init(dg_ufunc_call *c)
{
    memset(c, 0, sizeof(*c));
}

void dg_ufunc_call_clear(dg_ufunc_call *c)
{
    int i;
    for (i = 0; i < 2; i++) {
        dg_array_decref(c->in[i].arr);
        dg_array_decref(c->out[i]);
        dg_array_decref(c->res[i]);
        c->in[i].arr = c->out[i] = c->res[i] = NULL;
        c->arg[i] = NULL;
    }
    dg_array_decref(c->where);
    c->where = NULL;
}

dg_status dg_ufunc_operand(dg_array *a, int dtype, dg_array **out, dg_error *err)
{
    dg_array *rep = NULL;
    dg_status st;
    DG_CHECK(dg_array_change_mode(a, DG_MODE_REPLICA, &rep, err));
    if (rep->dtype == dtype) {
        *out = rep;
        return DG_OK;
    }
    st = dg_array_cast(rep, dtype, out, err);
    dg_array_decref(rep);
    return st;
}

/* *x (a reference c holds) replaced by its REPLICA copy where it is in an op
 * mode. */
static dg_status to_replica(dg_array **x, dg_error *err)
{
    dg_array *rep = NULL;
    if ((*x)->mode == DG_MODE_REPLICA)
        return DG_OK;
    DG_CHECK(dg_array_change_mode(*x, DG_MODE_REPLICA, &rep, err));
    dg_array_decref(*x);
    *x = rep;
    return DG_OK;
}

/* 1 if a has c's shape. */
static int has_call_shape(const dg_ufunc_call *c, const dg_array *a)
{
    int j;
    if (a->ndim != c->ndim)
        return 0;
    for (j = 0; j < c->ndim; j++)
        if (a->shape[j] != c->shape[j])
            return 0;
    return 1;
}

/* A new REPLICA array of c's shape in `dtype`: laid out like ref when ref
 * (may be NULL) has c's shape, else in the default layout.  *out new. */
static dg_status new_result(const dg_ufunc_call *c, const dg_array *ref, int dtype,
                            dg_array **out, dg_error *err)
{
    dg_plan_chunk *l = NULL;
    dg_status st;
    int n = 0;
    if (ref && has_call_shape(c, ref))
        return dg_array_empty_like_core(ref, dtype, DG_MODE_REPLICA, out, err);
    DG_CHECK(dg_layout_default(c->be->ndevices, c->ndim, c->shape, (size_t)dg_dtype_size(dtype),
                               c->min_split_bytes, &l, &n, err));
    st = dg_array_empty_core(c->be, dtype, c->ndim, c->shape, l, n, DG_MODE_REPLICA, out, err);
    free(l);
    return st;
}

dg_status dg_ufunc_outputs(dg_ufunc_call *c, dg_error *err)
{
    const dg_loop_info *li = &dg_loops[c->loop];
    const int nin = li->nin, nout = li->nout;
    const dg_array *ref = NULL;
    int i;

    /* the reference layout: an out=, else the first input of the call's
     * shape, else the first result made */
    for (i = 0; i < nout && !ref; i++)
        ref = c->out[i];
    for (i = 0; i < nin && !ref; i++)
        if (c->arg[i] && has_call_shape(c, c->arg[i]))
            ref = c->arg[i];
    for (i = 0; i < nout; i++) {
        const int dt = li->dtypes[nin + i];
        dg_array *o = c->out[i];
        if (o && i == 0) {
            /* results go into out[0] directly when it is a replica of the
             * loop's dtype */
            DG_CHECK(to_replica(&c->out[0], err));
            if (c->out[0] != o)
                ref = c->out[0];
            o = c->out[0];
            if (o->dtype == dt) {
                dg_array_incref(o);
                c->res[0] = o;
                continue;
            }
        }
        if (i > 0 && o && c->res[0] && o->dtype == dt && o->mode == DG_MODE_REPLICA &&
            dg_array_same_layout(o, c->res[0])) {
            dg_array_incref(o);
            c->res[i] = o;
            continue;
        }
        DG_CHECK(new_result(c, ref, dt, &c->res[i], err));
        if (!ref)
            ref = c->res[i];
    }
    return DG_OK;
}

dg_status dg_ufunc_run(dg_ufunc_call *c, dg_error *err)
{
    const dg_loop_info *li = &dg_loops[c->loop];
    const int nin = li->nin, nout = li->nout;
    int i, j;

    /* an input (or the mask) that is another view of a result's memory is
     * read from a copy, as NumPy does; a result that is not out= itself
     * is new memory (dg_ufunc_outputs), which nothing else views */
    for (i = 0; i < nin + 1; i++) {
        dg_array **x = i < nin ? &c->in[i].arr : &c->where;
        for (j = 0; *x && j < nout; j++) {
            dg_array *cp = NULL;
            if (!c->res[j] || c->res[j] != c->out[j] || !dg_array_overlaps(*x, c->res[j]))
                continue;
            DG_CHECK(dg_array_cast(*x, (*x)->dtype, &cp, err));
            dg_array_decref(*x);
            *x = cp;
        }
    }
    if (!c->where_false) {
        dg_ew_call call;
        memset(&call, 0, sizeof(call));
        call.loop = c->loop;
        call.ndim = c->ndim;
        memcpy(call.shape, c->shape, sizeof(int64_t) * (size_t)c->ndim);
        call.in[0] = c->in[0];
        call.in[1] = c->in[1];
        call.out[0] = c->res[0];
        call.out[1] = c->res[1];
        call.where = c->where;
        DG_CHECK(dg_ew_apply(&call, err));
    }
    /* results that still have to reach out=: cast into its dtype */
    for (i = 0; i < nout; i++) {
        dg_ew_call cc;
        if (!c->out[i] || c->res[i] == c->out[i])
            continue;
        DG_CHECK(to_replica(&c->out[i], err));
        if (c->where_false)
            continue;
        memset(&cc, 0, sizeof(cc));
        cc.loop = dg_loop_cast(c->res[i]->dtype, c->out[i]->dtype);
        cc.ndim = c->ndim;
        memcpy(cc.shape, c->shape, sizeof(int64_t) * (size_t)c->ndim);
        cc.in[0].arr = c->res[i];
        cc.out[0] = c->out[i];
        cc.where = c->where;
        DG_CHECK(dg_ew_apply(&cc, err));
    }
    return DG_OK;
}
