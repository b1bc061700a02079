/* dgarray._core's folds along axes: _reduce (ufunc.reduce, argmax, argmin)
 * and _scan (ufunc.accumulate), each with the loop a NumPy ufunc has for
 * the array's dtype.  dgarray/_reductions.py gives them NumPy's semantics
 * (dtypes, initial, where, errors). */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <string.h>

/* The loop of `uf` (a NumPy ufunc, borrowed) that folds a's dtype into
 * itself (dtypes all `dtype`), or -1 with TypeError: dgarray cannot
 * `verb` ("reduce", "accumulate") with it. */
static int fold_loop(PyObject *uf, int dtype, const char *verb)
{
    PyObject *id_obj = PyDict_GetItemWithError(dgpy_st->ufunc_ids, uf);
    int dt[3] = {dtype, dtype, dtype}, loop;
    if (!id_obj) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "dgarray cannot %s with %R", verb, uf);
        return -1;
    }
    loop = dg_loop_find((int)PyLong_AsLong(id_obj), dt);
    if (loop < 0)
        PyErr_Format(PyExc_TypeError, "%R has no loop to %s %s with", uf, verb,
                     dg_dtype_name(dtype));
    return loop;
}

/* c->red from `axes` (a tuple, borrowed, of distinct ints in [0, ndim));
 * -1 with ValueError or TypeError. */
static int read_axes(PyObject *axes, int ndim, dg_reduce_call *c)
{
    Py_ssize_t i;
    for (i = 0; i < PyTuple_GET_SIZE(axes); i++) {
        long ax = PyLong_AsLong(PyTuple_GET_ITEM(axes, i));
        if (ax == -1 && PyErr_Occurred())
            return -1;
        if (ax < 0 || ax >= ndim || c->red[ax]) {
            PyErr_Format(PyExc_ValueError, "bad reduction axis %ld for %d dimensions", ax,
                         ndim);
            return -1;
        }
        c->red[ax] = 1;
    }
    return 0;
}

/* c->lazy_mode from the mode name `lazy` ('sum', 'prod', 'max', 'min'; None
 * or another name: REPLICA). */
static int read_lazy_mode(PyObject *lazy, dg_reduce_call *c)
{
    int i;
    c->lazy_mode = DG_MODE_REPLICA;
    if (lazy == Py_None || !PyUnicode_Check(lazy))
        return 0;
    for (i = 1; i < DG_NMODES; i++)
        if (PyUnicode_Compare(lazy, dgpy_st->mode_names[i]) == 0)
            c->lazy_mode = i;
    return PyErr_Occurred() ? -1 : 0;
}

/* The DistributedArrays of a reduction's result: out, or (out, idx) for
 * argmax / argmin.  Takes both references (idx may be NULL). */
static PyObject *wrap_result(dg_array *out, dg_array *idx)
{
    PyObject *v, *ix, *res;
    if (!idx)
        return dgpy_wrap(out);
    v = dgpy_wrap(out);
    ix = dgpy_wrap(idx);
    res = v && ix ? PyTuple_Pack(2, v, ix) : NULL;
    Py_XDECREF(v);
    Py_XDECREF(ix);
    return res;
}

/* _reduce(a, kind, ufunc, axes, keepdims, initial, where, lazy_mode): the core
 * reduction of `a` (a DistributedArray, any mode) over `axes` (a tuple of
 * distinct non-negative ints).  kind 0: fold with the ufunc's loop for a's
 * dtype (ufunc: a NumPy ufunc); 1 / 2: argmax / argmin (ufunc None), which
 * return (values, indices).  `initial`: a Python scalar or None; `where`: a
 * bool DistributedArray of a's shape or None; lazy_mode: the mode partial
 * results may be left in ('sum', 'prod', 'max', 'min') or None.  Python's
 * layer (dgarray._reductions) does NumPy's dtype rules and errors. */
static PyObject *f_reduce(PyObject *mod, PyObject *args)
{
    PyObject *ao, *uf, *axes, *initial, *whereo, *lazyo, *res = NULL;
    int kind, keepdims;
    dg_reduce_call c;
    dg_array *a = NULL, *w = NULL, *out = NULL, *idx = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    uint32_t fpe_was;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!iOO!pOOO", dgpy_st->array_type, &ao, &kind, &uf,
                          &PyTuple_Type, &axes, &keepdims, &initial, &whereo, &lazyo))
        return NULL;
    if (kind < DG_RED_LOOP || kind > DG_RED_ARGMIN) {
        PyErr_Format(PyExc_ValueError, "unknown reduction kind %d", kind);
        return NULL;
    }
    if (whereo != Py_None && !DgArray_Check(whereo)) {
        PyErr_SetString(PyExc_TypeError, "where must be a DistributedArray here");
        return NULL;
    }
    memset(&c, 0, sizeof(c));
    c.kind = kind;
    c.keepdims = keepdims;
    c.loop = -1;
    if (dgpy_replica((DgArrayObject *)ao, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    if (read_axes(axes, a->ndim, &c) < 0 || read_lazy_mode(lazyo, &c) < 0 ||
        (kind == DG_RED_LOOP && (c.loop = fold_loop(uf, a->dtype, "reduce")) < 0) ||
        (initial != Py_None && dgpy_scalar_bytes(initial, a->dtype, c.init) < 0))
        goto done;
    c.has_init = initial != Py_None;
    if (whereo != Py_None && dgpy_replica((DgArrayObject *)whereo, &w, &err) != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    c.where = w;
    if (dgpy_fpe_begin(&fpe_was) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_reduce(a, &c, &out, kind == DG_RED_LOOP ? NULL : &idx, &err);
    Py_END_ALLOW_THREADS
    if (dgpy_fpe_end(fpe_was, st == DG_OK, &out, 1, "reduce") < 0 && st == DG_OK) {
        dg_array_decref(out);
        if (idx)
            dg_array_decref(idx);
        goto done;
    }
    res = st == DG_OK ? wrap_result(out, idx) : dgpy_raise(&err);
done:
    dg_array_decref(a);
    if (w)
        dg_array_decref(w);
    return res;
}

/* _scan(a, ufunc, axis): the inclusive scan (ufunc.accumulate) of a along axis
 * with the ufunc's loop for a's dtype; a new array with a's layout. */
static PyObject *f_scan(PyObject *mod, PyObject *args)
{
    PyObject *ao, *uf;
    int axis, loop;
    uint32_t fpe_was;
    dg_array *a = NULL, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!Oi", dgpy_st->array_type, &ao, &uf, &axis))
        return NULL;
    if (dgpy_replica((DgArrayObject *)ao, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    loop = fold_loop(uf, a->dtype, "accumulate");
    if (loop >= 0 && (axis < 0 || axis >= a->ndim))
        PyErr_Format(PyExc_ValueError, "bad scan axis %d for %d dimensions", axis, a->ndim);
    if (PyErr_Occurred()) {
        dg_array_decref(a);
        return NULL;
    }
    if (dgpy_fpe_begin(&fpe_was) < 0) {
        dg_array_decref(a);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_scan(a, axis, loop, &out, &err);
    Py_END_ALLOW_THREADS
    dg_array_decref(a);
    if (dgpy_fpe_end(fpe_was, st == DG_OK, &out, 1, "accumulate") < 0 && st == DG_OK) {
        dg_array_decref(out);
        return NULL;
    }
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _cast_reduced(a, dtype): a reduction's result (a float16 sum or product,
 * reduced in float32 as NumPy's half loops do) cast back into the dtype, its
 * overflow reported as NumPy reports it: "reduce", not "cast". */
static PyObject *f_cast_reduced(PyObject *mod, PyObject *args)
{
    PyObject *ao, *dto;
    int dt;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!O", dgpy_st->array_type, &ao, &dto) ||
        dgpy_dtype_from_obj(dto, &dt) < 0)
        return NULL;
    if (dt < 0) {
        PyErr_SetString(PyExc_TypeError, "_cast_reduced needs a dtype dgarray holds");
        return NULL;
    }
    return dgpy_cast_reported((DgArrayObject *)ao, dt, "reduce");
}

PyMethodDef dgpy_reduce_methods[] = {
    {"_cast_reduced", f_cast_reduced, METH_VARARGS,
     "(a, dtype): a reduction's result cast back, its errors named 'reduce'"},
    {"_reduce", f_reduce, METH_VARARGS, "core reduction: see f_reduce in src/py/reduce.c"},
    {"_scan", f_scan, METH_VARARGS, "inclusive scan along an axis: (a, ufunc, axis)"},
    {NULL, NULL, 0, NULL},
};
