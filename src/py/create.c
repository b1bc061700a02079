/* dgarray._core's new arrays: from host data (_from_host), uninitialised
 * (_empty), and fills in place (_fill: a value, a range, a diagonal), in a
 * layout given as a list or the default one.  dgarray/_creation.py builds
 * NumPy's creation functions on them. */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <stdlib.h>
#include <string.h>

int dgpy_parse_shape(PyObject *o, int *nd, int64_t *shape)
{
    PyObject *seq;
    Py_ssize_t i, n;
    if (PyLong_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 0) {
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return -1;
        }
        *nd = 1;
        shape[0] = v;
        return 0;
    }
    seq = PySequence_Fast(o, "shape must be an int or a tuple of ints");
    if (!seq)
        return -1;
    n = PySequence_Fast_GET_SIZE(seq);
    if (n > DG_MAXDIM) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "dgarray supports at most %d dimensions", DG_MAXDIM);
        return -1;
    }
    for (i = 0; i < n; i++) {
        PyObject *ix = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
        long long v;
        if (!ix) {
            Py_DECREF(seq);
            return -1;
        }
        v = PyLong_AsLongLong(ix);
        Py_DECREF(ix);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return -1;
        }
        shape[i] = v;
    }
    *nd = (int)n;
    Py_DECREF(seq);
    return 0;
}

/* _from_host(obj, layout, mode, dtype or None); layout: a list, an index map
 * (a dict, read and checked in C) or None (the default). */
static PyObject *f_from_host(PyObject *mod, PyObject *args)
{
    PyObject *obj, *layout, *dtypeo, *host, *res;
    int mode, dt = -1, n, nd, hdt;
    dg_plan_chunk *l = NULL;
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    char *data;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOiO", &obj, &layout, &mode, &dtypeo))
        return NULL;
    if (dgpy_dtype_from_obj(dtypeo, &dt) < 0)
        return NULL;
    host = dgpy_as_ndarray(obj, dt);
    if (!host)
        return NULL;
    dgpy_ndarray_info(host, &nd, shape, strides, &data, &hdt);
    if (nd > DG_MAXDIM) {
        Py_DECREF(host);
        PyErr_Format(PyExc_ValueError, "dgarray supports at most %d dimensions", DG_MAXDIM);
        return NULL;
    }
    if (layout == Py_None) {
        if (dgpy_default_layout(nd, shape, hdt, &l, &n) < 0) {
            Py_DECREF(host);
            return NULL;
        }
        res = dgpy_from_host(host, l, n, mode);
        free(l);
    } else if (PyDict_Check(layout)) { /* an index map, read here */
        if (dgpy_index_map_layout(layout, nd, shape, &l, &n) < 0) {
            Py_DECREF(host);
            return NULL;
        }
        res = dgpy_from_host(host, l, n, mode);
        free(l);
    } else {
        if (dgpy_layout_from_py(layout, nd, &l, &n) < 0) {
            Py_DECREF(host);
            return NULL;
        }
        res = dgpy_from_host(host, l, n, mode);
        PyMem_Free(l);
    }
    Py_DECREF(host);
    return res;
}

/* _empty(shape, dtype, layout, mode); layout as _from_host's */
static PyObject *f_empty(PyObject *mod, PyObject *args)
{
    PyObject *shapeo, *dtypeo, *layout;
    int mode, dt, nd, n;
    int64_t shape[DG_MAXDIM];
    dg_plan_chunk *l = NULL;
    dg_array *a = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOOi", &shapeo, &dtypeo, &layout, &mode))
        return NULL;
    if (dgpy_parse_shape(shapeo, &nd, shape) < 0 || dgpy_dtype_from_obj(dtypeo, &dt) < 0)
        return NULL;
    if (dt < 0)
        dt = DG_FLOAT64;
    if (layout == Py_None) {
        if (dgpy_default_layout(nd, shape, dt, &l, &n) < 0)
            return NULL;
        st = dg_array_empty(dgpy_st->be, dt, nd, shape, l, n, mode, &a, &err);
        free(l);
    } else if (PyDict_Check(layout)) { /* an index map, read here */
        if (dgpy_index_map_layout(layout, nd, shape, &l, &n) < 0)
            return NULL;
        st = dg_array_empty(dgpy_st->be, dt, nd, shape, l, n, mode, &a, &err);
        free(l);
    } else {
        if (dgpy_layout_from_py(layout, nd, &l, &n) < 0)
            return NULL;
        st = dg_array_empty(dgpy_st->be, dt, nd, shape, l, n, mode, &a, &err);
        PyMem_Free(l);
    }
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(a);
}

/* _fill(array, kind, value, delta, k, region or None): fills in place. */
static PyObject *f_fill(PyObject *mod, PyObject *args)
{
    PyObject *arr, *value, *delta, *regiono;
    dg_plan_chunk *rl = NULL;
    int rn;
    dg_status st;
    int kind;
    long long k;
    dg_fill_desc f;
    dg_error err = DG_ERROR_INIT;
    dg_array *a;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!iOOLO", dgpy_st->array_type, &arr, &kind, &value, &delta,
                          &k, &regiono))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    memset(&f, 0, sizeof(f));
    f.kind = kind;
    f.k = k;
    if (dgpy_scalar_bytes(value, a->dtype, f.value) < 0)
        return NULL;
    if (delta != Py_None && dgpy_scalar_bytes(delta, a->dtype, f.delta) < 0)
        return NULL;
    if (a->mode != DG_MODE_REPLICA) {
        PyErr_SetString(PyExc_ValueError, "fill needs an array in replica mode");
        return NULL;
    }
    if (regiono != Py_None) {
        PyObject *wrapped = Py_BuildValue("[(iO)]", 0, regiono);
        int r = wrapped ? dgpy_layout_from_py(wrapped, a->ndim, &rl, &rn) : -1;
        Py_XDECREF(wrapped);
        if (r < 0)
            return NULL;
    }
    st = dg_array_fill(a, &f, rl ? &rl[0].box : NULL, &err);
    PyMem_Free(rl);
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

PyMethodDef dgpy_create_methods[] = {
    {"_from_host", f_from_host, METH_VARARGS, "array from host data: (obj, layout, mode, dtype)"},
    {"_empty", f_empty, METH_VARARGS, "uninitialised array: (shape, dtype, layout, mode)"},
    {"_fill", f_fill, METH_VARARGS, "fill in place: (array, kind, value, delta, k)"},
    {NULL, NULL, 0, NULL},
};
