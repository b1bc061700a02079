/* dgarray._core's indexing functions: views (basic keys, transposes,
 * broadcasts, reshapes), assignment into views, and the data-dependent work
 * of advanced indexing and sorting (compaction, keyed rows, sorts).
 * dgarray/_indexing.py and _shape.py give them NumPy's semantics. */
#include "dgpy.h"
#include "dg_index.h"
#include "dg_view.h"

dg_array *dgpy_arg_array(PyObject *o, const char *fn)
{
    if (!DgArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s needs a DistributedArray, not %.100s", fn,
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    return ((DgArrayObject *)o)->arr;
}

/* _view(a, key): key a tuple of (kind, start, step, len), kind 0 an index,
 * 1 a slice, 2 a new axis (dg_key), naming every axis of a. */
static PyObject *f_view(PyObject *mod, PyObject *args)
{
    PyObject *ao, *keyo, *seq;
    dg_array *a, *out = NULL;
    dg_key key;
    dg_error err = DG_ERROR_INIT;
    Py_ssize_t i, n;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_view", &ao, &keyo) || !(a = dgpy_arg_array(ao, "_view")))
        return NULL;
    seq = PySequence_Fast(keyo, "a key must be a sequence");
    if (!seq)
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    if (n > DG_MAXKEY) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_IndexError, "too many indices for array");
        return NULL;
    }
    memset(&key, 0, sizeof key);
    key.n = (int)n;
    for (i = 0; i < n; i++) {
        long long s0, s1, s2;
        int kind;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iLLL", &kind, &s0, &s1, &s2)) {
            Py_DECREF(seq);
            return NULL;
        }
        key.e[i].kind = kind;
        key.e[i].start = s0;
        key.e[i].step = s1;
        key.e[i].len = s2;
    }
    Py_DECREF(seq);
    if (dg_array_view(a, &key, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _transpose(a, perm) */
static PyObject *f_transpose(PyObject *mod, PyObject *args)
{
    PyObject *ao, *po;
    dg_array *a, *out = NULL;
    int64_t p64[DG_MAXDIM];
    int perm[DG_MAXDIM], n, i;
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_transpose", &ao, &po) ||
        !(a = dgpy_arg_array(ao, "_transpose")))
        return NULL;
    if (dgpy_parse_shape(po, &n, p64) < 0)
        return NULL;
    if (n != a->ndim) {
        PyErr_SetString(PyExc_ValueError, "axes don't match array");
        return NULL;
    }
    for (i = 0; i < n; i++)
        perm[i] = (int)p64[i];
    if (dg_array_transpose(a, perm, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _broadcast_to(a, shape): a read-only view. */
static PyObject *f_broadcast_to(PyObject *mod, PyObject *args)
{
    PyObject *ao, *so;
    dg_array *a, *out = NULL;
    int64_t shape[DG_MAXDIM];
    int nd;
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_broadcast_to", &ao, &so) ||
        !(a = dgpy_arg_array(ao, "_broadcast_to")) || dgpy_parse_shape(so, &nd, shape) < 0)
        return NULL;
    if (dg_array_broadcast(a, nd, shape, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _reshape(a, shape) -> (array, is_view); _reshape(a, shape, True) -> the
 * view, or None where the reshape is not one (nothing is copied). */
static PyObject *f_reshape(PyObject *mod, PyObject *args)
{
    PyObject *ao, *so, *w;
    dg_array *a, *out = NULL;
    int64_t shape[DG_MAXDIM];
    int nd, is_view = 0, view_only = 0;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO|p:_reshape", &ao, &so, &view_only) ||
        !(a = dgpy_arg_array(ao, "_reshape")) || dgpy_parse_shape(so, &nd, shape) < 0)
        return NULL;
    st = view_only ? dg_array_reshape_view(a, nd, shape, &out, &err)
                   : dg_array_reshape(a, nd, shape, dgpy_st->min_split_bytes, &out, &is_view,
                                      &err);
    if (st != DG_OK)
        return dgpy_raise(&err);
    if (view_only)
        return out ? dgpy_wrap(out) : Py_NewRef(Py_None);
    w = dgpy_wrap(out);
    return w ? Py_BuildValue("(NO)", w, is_view ? Py_True : Py_False) : NULL;
}

/* _overlaps(in, out): 1 if an elementwise loop writing `out` could read
 * elements of `in` it already wrote. */
static PyObject *f_overlaps(PyObject *mod, PyObject *args)
{
    PyObject *io, *oo;
    dg_array *i, *o;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_overlaps", &io, &oo) ||
        !(i = dgpy_arg_array(io, "_overlaps")) ||
        !(o = dgpy_arg_array(oo, "_overlaps")))
        return NULL;
    return PyBool_FromLong(dg_array_overlaps(i, o));
}

/* _readonly(a) */
static PyObject *f_readonly(PyObject *mod, PyObject *ao)
{
    dg_array *a = dgpy_arg_array(ao, "_readonly");
    (void)mod;
    return a ? PyBool_FromLong(a->readonly) : NULL;
}

/* _resolve(a): a's partial values combined (an op mode to REPLICA) in
 * place, so that views of it read and write the values themselves. */
static PyObject *f_resolve(PyObject *mod, PyObject *ao)
{
    DgArrayObject *o = (DgArrayObject *)ao;
    dg_array *rep = NULL;
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    if (!dgpy_arg_array(ao, "_resolve"))
        return NULL;
    if (o->arr->mode != DG_MODE_REPLICA) {
        if (dgpy_replica(o, &rep, &err) != DG_OK)
            return dgpy_raise(&err);
        dg_array_decref(o->arr);
        o->arr = rep;
    }
    Py_RETURN_NONE;
}

/* _copyto(dst, src, where=None): dst's elements = src's broadcast to dst's
 * shape and cast to its dtype (NumPy's unsafe casting), only where `where`
 * (a bool array broadcastable to dst) is true; src and where any mode, dst
 * REPLICA and writable.  The caller has checked the shapes and overlap. */
static PyObject *f_copyto(PyObject *mod, PyObject *args)
{
    PyObject *dso, *so, *wo = Py_None;
    dg_array *d, *s0, *s = NULL, *w = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st = DG_OK;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO|O:_copyto", &dso, &so, &wo) ||
        !(d = dgpy_arg_array(dso, "_copyto")) || !(s0 = dgpy_arg_array(so, "_copyto")) ||
        (wo != Py_None && !dgpy_arg_array(wo, "_copyto")))
        return NULL;
    if (d->readonly) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return NULL;
    }
    if (d->mode != DG_MODE_REPLICA) {
        PyErr_SetString(PyExc_ValueError, "the destination must be in replica mode");
        return NULL;
    }
    st = dgpy_replica((DgArrayObject *)so, &s, &err);
    if (st == DG_OK && wo != Py_None)
        st = dgpy_replica((DgArrayObject *)wo, &w, &err);
    if (st == DG_OK && !w && s->dtype == d->dtype && s->ndim == d->ndim &&
        memcmp(s->shape, d->shape, (size_t)d->ndim * sizeof(int64_t)) == 0 &&
        !dg_array_same_layout(d, s)) {
        /* moves straight into place (a source of the same layout is copied
         * by the loop below, chunk by chunk where it is) */
        st = dg_array_assign(d, s, &err);
    } else if (st == DG_OK) {
        dg_ew_call call;
        /* a cast that can raise (dgpy_cast_may_raise: float -> narrower
         * float or integer, integer -> float16) runs under NumPy's errstate
         * and reports as NumPy's __setitem__ does ("cast", at the call: it
         * waits for dst); other copies raise nothing and do not wait */
        const int loop = dg_loop_cast(s->dtype, d->dtype);
        const int fpe = dgpy_cast_may_raise(s->dtype, d->dtype);
        uint32_t fpe_was = 0;
        if (fpe && dgpy_fpe_begin(&fpe_was) < 0) {
            dg_array_decref(s);
            if (w)
                dg_array_decref(w);
            return NULL;
        }
        memset(&call, 0, sizeof call);
        call.loop = loop;
        call.ndim = d->ndim;
        memcpy(call.shape, d->shape, (size_t)d->ndim * sizeof(int64_t));
        call.in[0].arr = s;
        call.out[0] = d;
        call.where = w;
        st = dg_ew_apply(&call, &err);
        if (fpe && dgpy_fpe_end(fpe_was, st == DG_OK, &d, 1, "cast") < 0 && st == DG_OK) {
            dg_array_decref(s);
            if (w)
                dg_array_decref(w);
            return NULL;
        }
    }
    if (s)
        dg_array_decref(s);
    if (w)
        dg_array_decref(w);
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* _select(a or None, mask): a[mask] (1-d), or the flat indices of the true
 * elements of mask (int64) when a is None; both REPLICA, same shape. */
static PyObject *f_select(PyObject *mod, PyObject *args)
{
    PyObject *ao, *mo;
    dg_array *a = NULL, *m, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_select", &ao, &mo) || !(m = dgpy_arg_array(mo, "_select")))
        return NULL;
    if (ao != Py_None && !(a = dgpy_arg_array(ao, "_select")))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_select(a, m, dgpy_st->min_split_bytes, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _take_rows(src, idx): src[idx] along the first axis; idx 1-d int64 with
 * every value in range, both REPLICA. */
static PyObject *f_take_rows(PyObject *mod, PyObject *args)
{
    PyObject *so, *io;
    dg_array *s, *i, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_take_rows", &so, &io) ||
        !(s = dgpy_arg_array(so, "_take_rows")) ||
        !(i = dgpy_arg_array(io, "_take_rows")))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_take_rows(s, i, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _put_rows(dst, idx, vals): dst[idx] = vals along the first axis. */
static PyObject *f_put_rows(PyObject *mod, PyObject *args)
{
    PyObject *dso, *io, *vo;
    dg_array *d, *i, *v;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOO:_put_rows", &dso, &io, &vo) ||
        !(d = dgpy_arg_array(dso, "_put_rows")) || !(i = dgpy_arg_array(io, "_put_rows")) ||
        !(v = dgpy_arg_array(vo, "_put_rows")))
        return NULL;
    if (d->readonly) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_put_rows(d, i, v, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* _sort(a, axis, values, indices) -> (sorted or None, argsort or None) */
static PyObject *f_sort(PyObject *mod, PyObject *args)
{
    PyObject *ao, *vo, *io;
    dg_array *a, *vals = NULL, *idx = NULL;
    int axis, want_v, want_i;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Oipp:_sort", &ao, &axis, &want_v, &want_i) ||
        !(a = dgpy_arg_array(ao, "_sort")))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_sort(a, axis, want_v ? &vals : NULL, want_i ? &idx : NULL, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    vo = vals ? dgpy_wrap(vals) : Py_NewRef(Py_None);
    io = idx ? dgpy_wrap(idx) : Py_NewRef(Py_None);
    if (!vo || !io) {
        Py_XDECREF(vo);
        Py_XDECREF(io);
        return NULL;
    }
    return Py_BuildValue("(NN)", vo, io);
}

/* _assign(dst, src): dst's values = src's (same shape and dtype, any layouts). */
static PyObject *f_assign(PyObject *mod, PyObject *args)
{
    PyObject *d, *s;
    dg_array *src = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO", &d, &s))
        return NULL;
    if (!DgArray_Check(d) || !DgArray_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "_assign needs two DistributedArrays");
        return NULL;
    }
    if (dgpy_replica((DgArrayObject *)s, &src, &err) != DG_OK)
        return dgpy_raise(&err);
    if (((DgArrayObject *)d)->arr->mode != DG_MODE_REPLICA) {
        dg_array_decref(src);
        PyErr_SetString(PyExc_ValueError, "the output array must be in replica mode");
        return NULL;
    }
    st = dg_array_assign(((DgArrayObject *)d)->arr, src, &err);
    dg_array_decref(src);
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* _flatten(a): a as 1-d in C order on the devices (a view where the chunks
 * hold whole rows). */
static PyObject *f_flatten(PyObject *mod, PyObject *ao)
{
    dg_array *a = NULL, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!DgArray_Check(ao)) {
        PyErr_SetString(PyExc_TypeError, "_flatten needs a DistributedArray");
        return NULL;
    }
    if (dgpy_replica((DgArrayObject *)ao, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    st = dg_array_flatten(a, dgpy_st->min_split_bytes, &out, &err);
    dg_array_decref(a);
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

PyMethodDef dgpy_index_methods[] = {
    {"_view", f_view, METH_VARARGS, "a view of a basic key: (a, ((kind, start, step, len), ...))"},
    {"_transpose", f_transpose, METH_VARARGS, "a view with permuted axes: (a, perm)"},
    {"_broadcast_to", f_broadcast_to, METH_VARARGS, "a read-only broadcast view: (a, shape)"},
    {"_reshape", f_reshape, METH_VARARGS,
     "(a, shape) -> (array, is_view); (a, shape, True) -> the view or None"},
    {"_overlaps", f_overlaps, METH_VARARGS, "(in, out): could a loop read what it wrote"},
    {"_readonly", f_readonly, METH_O, "whether a view may not be written"},
    {"_resolve", f_resolve, METH_O, "combine an op mode into replica values in place"},
    {"_copyto", f_copyto, METH_VARARGS, "(dst, src, where=None): dst = src broadcast, cast"},
    {"_select", f_select, METH_VARARGS, "(a or None, mask): a[mask] or the flat indices"},
    {"_take_rows", f_take_rows, METH_VARARGS, "(src, idx): src[idx] along axis 0"},
    {"_put_rows", f_put_rows, METH_VARARGS, "(dst, idx, vals): dst[idx] = vals along axis 0"},
    {"_sort", f_sort, METH_VARARGS, "(a, axis, values, indices) -> (sorted, argsort)"},
    {"_assign", f_assign, METH_VARARGS, "dst's values = src's (same shape and dtype)"},
    {"_flatten", f_flatten, METH_O, "a as 1-d in C order (a view where possible)"},
    {NULL, NULL, 0, NULL},
};
