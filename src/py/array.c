/* The DistributedArray type: a Python handle on a core dg_array. */
#include "dgpy.h"
#include "dg_view.h"

#include <structmember.h>

#if PY_VERSION_HEX >= 0x030C0000
#define DGPY_T_PYSSIZET Py_T_PYSSIZET
#define DGPY_READONLY Py_READONLY
#else
#define DGPY_T_PYSSIZET T_PYSSIZET
#define DGPY_READONLY READONLY
#endif

PyObject *dgpy_wrap(dg_array *arr)
{
    DgArrayObject *o = PyObject_New(DgArrayObject, dgpy_st->array_type);
    if (!o) {
        dg_array_decref(arr);
        return NULL;
    }
    o->arr = arr;
    o->weakreflist = NULL;
    return (PyObject *)o;
}

static void array_dealloc(DgArrayObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->weakreflist)
        PyObject_ClearWeakRefs((PyObject *)self);
    if (self->arr)
        dg_array_decref(self->arr);
    PyObject_Free(self);
    Py_DECREF(tp);
}

/* The package's function `id` (DGPY_PY_<name>) called with one argument. */
static PyObject *call_py1(int id, PyObject *arg)
{
    PyObject *f = dgpy_py(id);
    return f ? PyObject_CallOneArg(f, arg) : NULL;
}

/* The package's function `id` called with two or three arguments (c NULL:
 * two). */
static PyObject *call_py(int id, PyObject *a, PyObject *b, PyObject *c)
{
    PyObject *f = dgpy_py(id), *args[3] = {a, b, c};
    return f ? PyObject_Vectorcall(f, args, c ? 3 : 2, NULL) : NULL;
}

dg_status dgpy_replica(DgArrayObject *a, dg_array **out, dg_error *err)
{
    return dg_array_change_mode(a->arr, DG_MODE_REPLICA, out, err);
}

/* Gathers `region` of a (REPLICA) into a new ndarray of region's shape. */
static PyObject *gather_region(dg_array *r, const dg_box *region)
{
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    int ax, nd, dt;
    char *data;
    PyObject *out;
    if (dgpy_wait_ready(r) < 0)
        return NULL;
    for (ax = 0; ax < region->ndim; ax++)
        shape[ax] = dg_range_len(region->r[ax]);
    out = dgpy_ndarray_new(region->ndim, shape, r->dtype);
    if (!out)
        return NULL;
    dgpy_ndarray_info(out, &nd, shape, strides, &data, &dt);
    if (dgpy_gather_into(r, region, data, strides) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

PyObject *dgpy_gather(DgArrayObject *a)
{
    dg_array *r = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_box whole;
    PyObject *out;
    if (dgpy_replica(a, &r, &err) != DG_OK)
        return dgpy_raise(&err);
    dg_box_full(&whole, r->ndim, r->shape);
    out = gather_region(r, &whole);
    dg_array_decref(r);
    return out;
}

PyObject *dgpy_from_host(PyObject *host, const dg_plan_chunk *layout, int n, int mode)
{
    int nd, dt;
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    char *data;
    dg_array *a = NULL;
    dg_error err = DG_ERROR_INIT;
    dgpy_ndarray_info(host, &nd, shape, strides, &data, &dt);
    if (nd > DG_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "dgarray supports at most %d dimensions, not %d",
                     DG_MAXDIM, nd);
        return NULL;
    }
    if (dg_array_empty(dgpy_st->be, dt, nd, shape, layout, n, mode, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    if (dgpy_wait_ready(a) < 0) {
        dg_array_decref(a);
        return NULL;
    }
    if (dgpy_scatter(a, data, strides) < 0) {
        dg_array_decref(a);
        return NULL;
    }
    return dgpy_wrap(a);
}

/* ---- properties --------------------------------------------------------------- */

static PyObject *shape_tuple(const dg_array *a)
{
    PyObject *t = PyTuple_New(a->ndim);
    int i;
    if (!t)
        return NULL;
    for (i = 0; i < a->ndim; i++) {
        PyObject *v = PyLong_FromLongLong(a->shape[i]);
        if (!v) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static int64_t array_size(const dg_array *a)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < a->ndim; i++)
        n *= a->shape[i];
    return n;
}

static PyObject *get_shape(DgArrayObject *self, void *c) { (void)c; return shape_tuple(self->arr); }
static PyObject *get_ndim(DgArrayObject *self, void *c) { (void)c; return PyLong_FromLong(self->arr->ndim); }
static PyObject *get_size(DgArrayObject *self, void *c) { (void)c; return PyLong_FromLongLong(array_size(self->arr)); }
static PyObject *get_itemsize(DgArrayObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(dg_dtype_size(self->arr->dtype));
}
static PyObject *get_nbytes(DgArrayObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(array_size(self->arr) * dg_dtype_size(self->arr->dtype));
}
static PyObject *get_dtype(DgArrayObject *self, void *c)
{
    (void)c;
    return Py_NewRef(dgpy_st->descrs[self->arr->dtype]);
}
static PyObject *get_mode(DgArrayObject *self, void *c)
{
    (void)c;
    return Py_NewRef(dgpy_st->mode_names[self->arr->mode]);
}
static PyObject *get_devices(DgArrayObject *self, void *c)
{
    PyObject *s = PySet_New(NULL), *lst;
    int i;
    (void)c;
    if (!s)
        return NULL;
    for (i = 0; i < self->arr->nchunks; i++) {
        PyObject *v = PyLong_FromLong(self->arr->chunks[i].device);
        if (!v || PySet_Add(s, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(s);
            return NULL;
        }
        Py_DECREF(v);
    }
    lst = PySequence_List(s);
    Py_DECREF(s);
    if (lst && PyList_Sort(lst) < 0) {
        Py_DECREF(lst);
        return NULL;
    }
    return lst;
}
static PyObject *get_index_map(DgArrayObject *self, void *c)
{
    (void)c;
    return call_py1(DGPY_PY_index_map_of, (PyObject *)self);
}
static PyObject *get_T(DgArrayObject *self, void *c)
{
    int perm[DG_MAXDIM], i, nd = self->arr->ndim;
    dg_array *out = NULL;
    dg_error err = DG_ERROR_INIT;
    (void)c;
    for (i = 0; i < nd; i++)
        perm[i] = nd - 1 - i;
    if (dg_array_transpose(self->arr, perm, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* Attributes written in Python (DGPY_PY_GETTERS / DGPY_PY_GETSETTERS in
 * dgpy.h): the getter calls the registry's get_<name> as f(self), the
 * setter set_<name> as f(self, value). */
#define PY_GETTER_DECL(name, doc) static PyObject *pg_##name(PyObject *self, void *c);
#define PY_SETTER_DECL(name, doc) \
    PY_GETTER_DECL(name, doc) static int ps_##name(PyObject *self, PyObject *v, void *c);
DGPY_PY_GETTERS(PY_GETTER_DECL)
DGPY_PY_GETSETTERS(PY_SETTER_DECL)

static PyGetSetDef array_getset[] = {
    {"shape", (getter)get_shape, NULL, "Tuple of array dimensions.", NULL},
    {"ndim", (getter)get_ndim, NULL, "Number of array dimensions.", NULL},
    {"size", (getter)get_size, NULL, "Number of elements.", NULL},
    {"itemsize", (getter)get_itemsize, NULL, "Bytes per element.", NULL},
    {"nbytes", (getter)get_nbytes, NULL, "Bytes of all elements (counted once).", NULL},
    {"dtype", (getter)get_dtype, NULL, "Data type of the elements.", NULL},
    {"mode", (getter)get_mode, NULL, "How overlapping chunks combine: 'replica', 'sum', "
     "'prod', 'max' or 'min'.", NULL},
    {"devices", (getter)get_devices, NULL, "Sorted list of the devices holding chunks.", NULL},
    {"index_map", (getter)get_index_map, NULL,
     "{device: [tuple of slices, ...]}: which block each chunk holds.", NULL},
    {"T", (getter)get_T, NULL, "Transposed array.", NULL},
#define PY_GETTER_ENTRY(name, doc) {#name, (getter)pg_##name, NULL, doc, NULL},
#define PY_GETSETTER_ENTRY(name, doc) {#name, (getter)pg_##name, (setter)ps_##name, doc, NULL},
    DGPY_PY_GETTERS(PY_GETTER_ENTRY)
    DGPY_PY_GETSETTERS(PY_GETSETTER_ENTRY)
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- methods -------------------------------------------------------------------- */

static PyObject *m_get(DgArrayObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "order", "out", "blocking", NULL};
    PyObject *stream = Py_None, *order = Py_None, *out = Py_None, *blocking = Py_True;
    PyObject *res;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOO:get", kwlist, &stream, &order, &out,
                                     &blocking))
        return NULL;
    res = dgpy_gather(self);
    if (res && out != Py_None) {
        PyObject *r2 = call_py(DGPY_PY_copy_into_host, out, res, NULL);
        Py_DECREF(res);
        return r2;
    }
    return res;
}

static PyObject *m_array(DgArrayObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None, *res;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    if (copy == Py_False) {
        PyErr_SetString(PyExc_ValueError,
                        "Unable to avoid copy while creating a NumPy array from a "
                        "DistributedArray: its data lives on the devices");
        return NULL;
    }
    res = dgpy_gather(self);
    if (res && dtype != Py_None) {
        PyObject *r2 = PyObject_CallMethod(res, "astype", "O", dtype);
        Py_DECREF(res);
        return r2;
    }
    return res;
}

static PyObject *m_layout(DgArrayObject *self, PyObject *unused)
{
    (void)unused;
    return dgpy_layout_to_py(self->arr);
}

static PyObject *m_reshard_layout(DgArrayObject *self, PyObject *lst)
{
    dg_plan_chunk *l;
    int n;
    dg_array *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    if (dgpy_layout_from_py(lst, self->arr->ndim, &l, &n) < 0)
        return NULL;
    st = dg_array_reshard_ex(self->arr, l, n, DG_RESHARD_PIECES, &out, &err);
    PyMem_Free(l);
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* Mode number of a mode name ("replica", "SUM", ...), or -1 with ValueError. */
static int mode_of(PyObject *name)
{
    int i;
    PyObject *low;
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "mode must be a string such as 'replica' or 'sum', "
                     "not %.100s", Py_TYPE(name)->tp_name);
        return -1;
    }
    low = PyObject_CallMethod(name, "lower", NULL);
    if (!low)
        return -1;
    for (i = 0; i < DG_NMODES; i++) {
        int eq = PyUnicode_Compare(low, dgpy_st->mode_names[i]) == 0;
        if (eq) {
            Py_DECREF(low);
            return i;
        }
    }
    Py_DECREF(low);
    PyErr_Format(PyExc_ValueError,
                 "unknown mode %R: use one of 'replica', 'sum', 'prod', 'max', 'min'", name);
    return -1;
}

static PyObject *m_change_mode(DgArrayObject *self, PyObject *modeo)
{
    int mode = mode_of(modeo);
    dg_array *out = NULL;
    dg_error err = DG_ERROR_INIT;
    if (mode < 0)
        return NULL;
    if (mode == self->arr->mode)
        return Py_NewRef(self);
    if (dg_array_change_mode(self->arr, mode, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

static PyObject *m_gather_region(DgArrayObject *self, PyObject *lst)
{
    /* lst: ((start, stop, step), ...) for every axis */
    dg_plan_chunk *l;
    int n;
    dg_array *r = NULL;
    dg_error err = DG_ERROR_INIT;
    PyObject *wrapped, *out;
    wrapped = Py_BuildValue("[(iO)]", 0, lst);
    if (!wrapped)
        return NULL;
    if (dgpy_layout_from_py(wrapped, self->arr->ndim, &l, &n) < 0) {
        Py_DECREF(wrapped);
        return NULL;
    }
    Py_DECREF(wrapped);
    if (dgpy_replica(self, &r, &err) != DG_OK) {
        PyMem_Free(l);
        return dgpy_raise(&err);
    }
    out = gather_region(r, &l[0].box);
    dg_array_decref(r);
    PyMem_Free(l);
    return out;
}

static PyObject *m_astype(DgArrayObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "order", "casting", "subok", "copy", NULL};
    PyObject *dtype, *order = Py_None, *casting = Py_None, *subok = Py_True, *copy = Py_True;
    int dt;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOO:astype", kwlist, &dtype, &order,
                                     &casting, &subok, &copy))
        return NULL;
    if (dgpy_dtype_from_obj(dtype, &dt) < 0)
        return NULL;
    if (dt < 0)
        dt = DG_FLOAT64;
    if (dt == self->arr->dtype) {
        const int c = PyObject_IsTrue(copy);
        if (c < 0)
            return NULL;
        if (!c)
            return Py_NewRef(self);
    }
    if (casting != Py_None) {
        PyObject *r = call_py(DGPY_PY_check_astype_casting, dgpy_st->descrs[self->arr->dtype],
                              dgpy_st->descrs[dt], casting);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    /* NumPy's casts report "invalid value encountered in cast" */
    return dgpy_cast_reported(self, dt, "cast");
}

PyObject *dgpy_cast_reported(DgArrayObject *self, int dt, const char *name)
{
    dg_array *src = NULL, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    uint32_t fpe_was;
    dg_status st;
    if (dgpy_fpe_begin(&fpe_was) < 0)
        return NULL;
    st = dgpy_replica(self, &src, &err);
    if (st == DG_OK)
        st = dg_array_cast(src, dt, &out, &err);
    if (src)
        dg_array_decref(src);
    if (dgpy_fpe_end(fpe_was, st == DG_OK, &out, 1, name) < 0 && st == DG_OK) {
        dg_array_decref(out);
        return NULL;
    }
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

static PyObject *m_copy(DgArrayObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"order", NULL};
    PyObject *order = Py_None;
    dg_array *out = NULL;
    dg_plan_chunk *l = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int n = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:copy", kwlist, &order))
        return NULL;
    st = dg_array_logical_layout(self->arr, &l, &n, &err);
    if (st == DG_OK)
        st = dg_array_reshard_ex(self->arr, l, n, DG_RESHARD_PIECES | DG_RESHARD_CHECKED, &out,
                                 &err);
    free(l);
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* f(self, *args, **kw) for a vectorcall method's arguments (args: nargs
 * positional, then the values of kwnames), with no tuple or dict made. */
static PyObject *call_with_self(PyObject *f, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *small[9], **v = small, *res;
    const Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    Py_ssize_t i;
    if (n + 1 > (Py_ssize_t)(sizeof small / sizeof small[0])) {
        v = (PyObject **)PyMem_Malloc((size_t)(n + 1) * sizeof(PyObject *));
        if (!v)
            return PyErr_NoMemory();
    }
    v[0] = self;
    for (i = 0; i < n; i++)
        v[i + 1] = args[i];
    res = PyObject_Vectorcall(f, v, (size_t)(nargs + 1), kwnames);
    if (v != small)
        PyMem_Free(v);
    return res;
}

static PyObject *m_sync(DgArrayObject *self, PyObject *unused)
{
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_sync(self->arr, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *m_complex(PyObject *self, PyObject *unused);

/* Methods written in Python (DGPY_PY_METHODS): the package's function,
 * called as f(self, *args, **kw). */
#define PY_METHOD_FN(name, doc)                                                          \
    static PyObject *pm_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,  \
                               PyObject *kwnames)                                        \
    {                                                                                    \
        PyObject *f = dgpy_py(DGPY_PY_##name);                                           \
        return f ? call_with_self(f, self, args, nargs, kwnames) : NULL;                 \
    }
DGPY_PY_METHODS(PY_METHOD_FN)

#define PY_GETTER_FN(name, doc)                                                     \
    static PyObject *pg_##name(PyObject *self, void *c)                               \
    {                                                                                 \
        PyObject *f = dgpy_py(DGPY_PY_get_##name);                                    \
        (void)c;                                                                      \
        return f ? PyObject_CallOneArg(f, self) : NULL;                               \
    }
#define PY_SETTER_FN(name, doc)                                                       \
    PY_GETTER_FN(name, doc)                                                           \
    static int ps_##name(PyObject *self, PyObject *v, void *c)                        \
    {                                                                                 \
        PyObject *f, *r;                                                              \
        (void)c;                                                                      \
        if (!v) {                                                                     \
            PyErr_SetString(PyExc_AttributeError, "cannot delete array " #name);       \
            return -1;                                                                \
        }                                                                             \
        f = dgpy_py(DGPY_PY_set_##name);                                              \
        r = f ? PyObject_CallFunctionObjArgs(f, self, v, NULL) : NULL;                \
        if (!r)                                                                       \
            return -1;                                                                \
        Py_DECREF(r);                                                                 \
        return 0;                                                                     \
    }
DGPY_PY_GETTERS(PY_GETTER_FN)
DGPY_PY_GETSETTERS(PY_SETTER_FN)

#define PY_METHOD_DEF(name, doc) \
    {#name, (PyCFunction)(void (*)(void))pm_##name, METH_FASTCALL | METH_KEYWORDS, doc},

static PyMethodDef array_methods[] = {
    DGPY_PY_METHODS(PY_METHOD_DEF)
    {"__complex__", (PyCFunction)m_complex, METH_NOARGS, "complex(a) for a size-1 array."},
    {"get", (PyCFunction)(void (*)(void))m_get, METH_VARARGS | METH_KEYWORDS,
     "get() -> numpy.ndarray: a copy of all values on the host."},
    {"asnumpy", (PyCFunction)(void (*)(void))m_get, METH_VARARGS | METH_KEYWORDS,
     "asnumpy() -> numpy.ndarray: a copy of all values on the host."},
    {"__array__", (PyCFunction)(void (*)(void))m_array, METH_VARARGS | METH_KEYWORDS,
     "NumPy's array protocol: gathers the values to the host."},
    {"__array_ufunc__", (PyCFunction)(void (*)(void))dgpy_array_ufunc,
     METH_VARARGS | METH_KEYWORDS, "NumPy ufuncs run on the devices."},
    {"_layout", (PyCFunction)m_layout, METH_NOARGS, "[(device, box), ...]"},
    {"_reshard_layout", (PyCFunction)m_reshard_layout, METH_O, "reshard to a layout list"},
    {"_reshard_map", (PyCFunction)dgpy_reshard_map, METH_O,
     "reshard to an index map (the array itself where it has that layout)"},
    {"_gather_region", (PyCFunction)m_gather_region, METH_O,
     "ndarray of the box ((start, stop, step), ...) of global indices"},
    {"change_mode", (PyCFunction)m_change_mode, METH_O,
     "change_mode(mode): the same values with overlaps combined in `mode`."},
    {"astype", (PyCFunction)(void (*)(void))m_astype, METH_VARARGS | METH_KEYWORDS,
     "astype(dtype): a copy cast to dtype."},
    {"copy", (PyCFunction)(void (*)(void))m_copy, METH_VARARGS | METH_KEYWORDS,
     "copy(): a copy with the same layout."},
    {"_sync", (PyCFunction)m_sync, METH_NOARGS, "wait for the array's pending writes"},
    {NULL, NULL, 0, NULL},
};

/* ---- number protocol --------------------------------------------------------- */

#define BINOP(name, uf) \
    static PyObject *name(PyObject *a, PyObject *b) { return dgpy_binop(DG_UF_##uf, a, b); }
#define INPLACE(name, uf) \
    static PyObject *name(PyObject *a, PyObject *b) { return dgpy_inplace(DG_UF_##uf, a, b); }
#define UNOP(name, uf) \
    static PyObject *name(PyObject *a) { return dgpy_unop(DG_UF_##uf, a); }

BINOP(nb_add, add) BINOP(nb_sub, subtract) BINOP(nb_mul, multiply)
BINOP(nb_truediv, divide) BINOP(nb_floordiv, floor_divide) BINOP(nb_rem, remainder)
BINOP(nb_divmod, divmod) BINOP(nb_lshift, left_shift) BINOP(nb_rshift, right_shift)
BINOP(nb_and, bitwise_and) BINOP(nb_or, bitwise_or) BINOP(nb_xor, bitwise_xor)
INPLACE(nb_iadd, add) INPLACE(nb_isub, subtract) INPLACE(nb_imul, multiply)
INPLACE(nb_itruediv, divide) INPLACE(nb_ifloordiv, floor_divide)
INPLACE(nb_irem, remainder) INPLACE(nb_ilshift, left_shift)
INPLACE(nb_irshift, right_shift) INPLACE(nb_iand, bitwise_and)
INPLACE(nb_ior, bitwise_or) INPLACE(nb_ixor, bitwise_xor)
UNOP(nb_neg, negative) UNOP(nb_pos, positive) UNOP(nb_abs, absolute) UNOP(nb_inv, invert)

/* NumPy's `array ** exponent` calls square for the Python int 2 and, for
 * float and complex arrays, reciprocal for the int -1 and sqrt for the float
 * 0.5 (exact Python types only); result dtypes and values follow those
 * ufuncs (bool ** 2 is int8).  The ufunc id, or DG_UF_power. */
static int pow_ufunc(PyObject *a, PyObject *b)
{
    char kind;
    if (!DgArray_Check(a))
        return DG_UF_power;
    kind = dg_dtype_kind(((DgArrayObject *)a)->arr->dtype);
    if (PyLong_CheckExact(b)) {
        int overflow = 0;
        long e = PyLong_AsLongAndOverflow(b, &overflow);
        if (e == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return DG_UF_power;
        }
        if (!overflow && e == 2)
            return DG_UF_square;
        if (!overflow && e == -1 && (kind == 'f' || kind == 'c'))
            return DG_UF_reciprocal;
    } else if (PyFloat_CheckExact(b) && PyFloat_AS_DOUBLE(b) == 0.5 &&
               (kind == 'f' || kind == 'c')) {
        return DG_UF_sqrt;
    }
    return DG_UF_power;
}

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *m)
{
    int id;
    if (m != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    id = pow_ufunc(a, b);
    return id == DG_UF_power ? dgpy_binop(id, a, b) : dgpy_unop(id, a);
}
static PyObject *nb_ipow(PyObject *a, PyObject *b, PyObject *m)
{
    int id;
    PyObject *args[2];
    if (m != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    id = pow_ufunc(a, b);
    if (id == DG_UF_power)
        return dgpy_inplace(id, a, b);
    args[0] = a;
    args[1] = a;
    return dgpy_ufunc_apply(id, args, 2);
}

/* a @ b and a @= b: dgarray._linalg.matmul_op / imatmul (NumPy's rules). */
static PyObject *nb_matmul(PyObject *a, PyObject *b)
{
    return call_py(DGPY_PY_matmul_op, a, b, NULL);
}
static PyObject *nb_imatmul(PyObject *a, PyObject *b)
{
    return call_py(DGPY_PY_imatmul, a, b, NULL);
}

/* A Python scalar from a size-1 array, through NumPy's own conversion (so
 * its warnings and errors are NumPy's). */
static PyObject *scalar_convert(PyObject *self, PyObject *(*conv)(PyObject *))
{
    PyObject *host = dgpy_gather((DgArrayObject *)self), *res;
    if (!host)
        return NULL;
    res = conv(host);
    Py_DECREF(host);
    return res;
}
static PyObject *nb_float(PyObject *self) { return scalar_convert(self, PyNumber_Float); }
static PyObject *nb_int(PyObject *self) { return scalar_convert(self, PyNumber_Long); }
static PyObject *nb_index(PyObject *self) { return scalar_convert(self, PyNumber_Index); }
static int nb_bool(PyObject *self)
{
    PyObject *host = dgpy_gather((DgArrayObject *)self);
    int r;
    if (!host)
        return -1;
    r = PyObject_IsTrue(host);
    Py_DECREF(host);
    return r;
}
static PyObject *m_complex(PyObject *self, PyObject *unused)
{
    PyObject *host = dgpy_gather((DgArrayObject *)self), *res;
    (void)unused;
    if (!host)
        return NULL;
    res = PyObject_CallMethod(host, "__complex__", NULL);
    Py_DECREF(host);
    return res;
}

static Py_ssize_t mp_length(DgArrayObject *self)
{
    if (self->arr->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return (Py_ssize_t)self->arr->shape[0];
}

/* a[key] and a[key] = value: NumPy's indexing (dgarray/_indexing.py). */
static PyObject *mp_subscript(PyObject *self, PyObject *key)
{
    return call_py(DGPY_PY_getitem, self, key, NULL);
}

static int mp_ass_subscript(PyObject *self, PyObject *key, PyObject *value)
{
    PyObject *r;
    if (!value) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    r = call_py(DGPY_PY_setitem, self, key, value);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* iter(a): the views a[0], a[1], ... (dgarray/_indexing.py). */
static PyObject *array_iter(PyObject *self)
{
    return call_py1(DGPY_PY_array_iter, self);
}

static PyObject *richcompare(PyObject *a, PyObject *b, int op)
{
    int id;
    switch (op) {
    case Py_LT: id = DG_UF_less; break;
    case Py_LE: id = DG_UF_less_equal; break;
    case Py_EQ: id = DG_UF_equal; break;
    case Py_NE: id = DG_UF_not_equal; break;
    case Py_GT: id = DG_UF_greater; break;
    case Py_GE: id = DG_UF_greater_equal; break;
    default: Py_RETURN_NOTIMPLEMENTED;
    }
    return dgpy_binop(id, a, b);
}

static PyObject *array_repr(PyObject *self)
{
    return call_py1(DGPY_PY_array_repr, self);
}
static PyObject *array_str(PyObject *self)
{
    return call_py1(DGPY_PY_array_str, self);
}

static PyMemberDef array_members[] = {
    {"__weaklistoffset__", DGPY_T_PYSSIZET, offsetof(DgArrayObject, weakreflist), DGPY_READONLY,
     NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot array_slots[] = {
    {Py_tp_dealloc, (void *)array_dealloc},
    {Py_tp_getset, array_getset},
    {Py_tp_methods, array_methods},
    {Py_tp_members, array_members},
    {Py_tp_repr, (void *)array_repr},
    {Py_tp_str, (void *)array_str},
    {Py_tp_richcompare, (void *)richcompare},
    {Py_tp_hash, (void *)PyObject_HashNotImplemented},
    {Py_tp_doc, "An N-dimensional array whose chunks live on several devices.\n\n"
                "Create one with dgarray.distributed_array, asarray, zeros, ...; "
                "NumPy ufuncs and operators run where the data lives."},
    {Py_nb_add, (void *)nb_add}, {Py_nb_subtract, (void *)nb_sub},
    {Py_nb_multiply, (void *)nb_mul}, {Py_nb_true_divide, (void *)nb_truediv},
    {Py_nb_floor_divide, (void *)nb_floordiv}, {Py_nb_remainder, (void *)nb_rem},
    {Py_nb_divmod, (void *)nb_divmod}, {Py_nb_power, (void *)nb_pow},
    {Py_nb_lshift, (void *)nb_lshift}, {Py_nb_rshift, (void *)nb_rshift},
    {Py_nb_and, (void *)nb_and}, {Py_nb_or, (void *)nb_or}, {Py_nb_xor, (void *)nb_xor},
    {Py_nb_inplace_add, (void *)nb_iadd}, {Py_nb_inplace_subtract, (void *)nb_isub},
    {Py_nb_inplace_multiply, (void *)nb_imul},
    {Py_nb_inplace_true_divide, (void *)nb_itruediv},
    {Py_nb_inplace_floor_divide, (void *)nb_ifloordiv},
    {Py_nb_inplace_remainder, (void *)nb_irem}, {Py_nb_inplace_power, (void *)nb_ipow},
    {Py_nb_inplace_lshift, (void *)nb_ilshift}, {Py_nb_inplace_rshift, (void *)nb_irshift},
    {Py_nb_inplace_and, (void *)nb_iand}, {Py_nb_inplace_or, (void *)nb_ior},
    {Py_nb_inplace_xor, (void *)nb_ixor},
    {Py_nb_negative, (void *)nb_neg}, {Py_nb_positive, (void *)nb_pos},
    {Py_nb_absolute, (void *)nb_abs}, {Py_nb_invert, (void *)nb_inv},
    {Py_nb_matrix_multiply, (void *)nb_matmul},
    {Py_nb_inplace_matrix_multiply, (void *)nb_imatmul},
    {Py_nb_float, (void *)nb_float}, {Py_nb_int, (void *)nb_int},
    {Py_nb_index, (void *)nb_index}, {Py_nb_bool, (void *)nb_bool},
    {Py_mp_length, (void *)mp_length},
    {Py_mp_subscript, (void *)mp_subscript},
    {Py_tp_iter, (void *)array_iter},
    {Py_mp_ass_subscript, (void *)mp_ass_subscript},
    {0, NULL},
};

PyType_Spec dgpy_array_spec = {
    .name = "dgarray.DistributedArray",
    .basicsize = sizeof(DgArrayObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = array_slots,
};

