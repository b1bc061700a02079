/* The semantics of a ufunc call on distributed arrays, once the binding has
 * parsed it, NumPy has chosen its loop and the shapes broadcast
 * (dg_ufunc_call.c): where the results live, out= (made REPLICA, written
 * in place or cast into), inputs that are views of an output's memory,
 * where= (a mask, or False: nothing computed).  No Python here: the binding
 * (src/py/ufunc.c) parses, resolves dtypes with NumPy, uploads host
 * operands and raises; a host (NumPy) out= is the binding's too.
 *
 * A call runs in two steps around the binding's work on the inputs:
 *   dg_ufunc_outputs  the results (res[]), laid out from out= or an input;
 *   (the binding fills in[] and where, host operands laid out like res[0])
 *   dg_ufunc_run      the loop into res[], then res[] cast into out= where
 *                     it is not out= itself.
 * dg_ufunc_call_clear drops what the call holds. */
#ifndef DG_UFUNC_CALL_H
#define DG_UFUNC_CALL_H

#include "dg_array.h"

typedef struct dg_ufunc_call {
    /* set by the caller before dg_ufunc_outputs */
    dg_backend_i *be;
    int loop;                  /* dg_loops index; its dtypes are the call's */
    int ndim;
    int64_t shape[DG_MAXDIM];  /* inputs, mask and outputs broadcast together */
    size_t min_split_bytes;    /* for a result laid out by default (dg_layout_default) */
    dg_array *arg[2];          /* borrowed: the caller's input arrays as given (NULL: a
                                * host or scalar operand): a result of the call's shape
                                * is laid out like the first of that shape */
    dg_array *out[2];          /* out= arrays (NULL: none, or a host array): references
                                * the call holds; an out= not in REPLICA mode is
                                * replaced by its REPLICA copy, which the caller
                                * installs in its place */
    /* set by the caller before dg_ufunc_run */
    dg_operand in[2];          /* the inputs in the loop's dtypes, REPLICA, broadcastable
                                * to shape (dg_ufunc_operand); arr: a reference the
                                * call holds, NULL for a scalar */
    dg_array *where;           /* the bool mask (REPLICA), a reference the call holds, or
                                * NULL */
    int where_false;           /* where=False: nothing is computed or written */
    /* set by dg_ufunc_outputs */
    dg_array *res[2];          /* what the loop writes, in the loop's output dtypes:
                                * out[i] itself or a new array; references */
} dg_ufunc_call;

/* *c with nothing set and nothing held. */
void dg_ufunc_call_init(dg_ufunc_call *c);
/* Drops every reference c holds (in[], where, out[], res[]) and sets those
 * pointers and arg[] to NULL. */
void dg_ufunc_call_clear(dg_ufunc_call *c);

/* The results res[] of c (NumPy's rules where they are observable):
 *   - out[0] not in REPLICA mode is replaced by its REPLICA copy first;
 *   - a result is out[i] itself where out[i] has the loop's output dtype (and
 *     for the second output, is REPLICA and laid out like the first result);
 *   - any other result is a new REPLICA array of shape c->shape laid out like
 *     the reference array, when that has c->shape: out[0] (or the first out=
 *     given), else the first input of c->shape (arg[]), else the first result
 *     made; otherwise in the default layout. */
dg_status dg_ufunc_outputs(dg_ufunc_call *c, dg_error *err);

/* An array operand of a loop: a as REPLICA in `dtype` (a itself, a new
 * reference, when it is both already).  a borrowed; new reference in *out. */
dg_status dg_ufunc_operand(dg_array *a, int dtype, dg_array **out, dg_error *err);

/* Runs c (after dg_ufunc_outputs, with in[] and where set):
 *   - an input or the mask that is another view of a result's memory is read
 *     from a copy, as NumPy does (the loop would read what it already wrote);
 *   - unless where_false, the loop writes res[] where the mask is set;
 *   - each out[i] that is not res[i] is made REPLICA (replaced as in
 *     dg_ufunc_outputs) and, unless where_false, gets res[i] cast into its
 *     dtype where the mask is set (NumPy's casting into out=). */
dg_status dg_ufunc_run(dg_ufunc_call *c, dg_error *err);

#endif /* DG_UFUNC_CALL_H */
