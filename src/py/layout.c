/* Layouts between Python and the core: the list form
 * [(device, ((start, stop, step), ...)), ...] that _layout() gives and the
 * module functions take, the default layout, and index maps.
 *
 * An index map ({device: key or [key, ...]}) is only read here: its Python
 * objects become dg_map_key entries, and dg_layout_of_index_map
 * (src/core/dg_layout.c) applies CuPy's rules and says what is wrong. */
#include "dgpy.h"

int dgpy_layout_from_py(PyObject *lst, int ndim, dg_plan_chunk **out, int *n)
{
    PyObject *seq = PySequence_Fast(lst, "a layout must be a list");
    Py_ssize_t i, k;
    dg_plan_chunk *l;
    if (!seq)
        return -1;
    k = PySequence_Fast_GET_SIZE(seq);
    l = (dg_plan_chunk *)PyMem_Calloc(k ? (size_t)k : 1, sizeof(dg_plan_chunk));
    if (!l) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < k; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *boxo;
        int dev, ax;
        if (!PyArg_ParseTuple(item, "iO", &dev, &boxo))
            goto fail;
        if (!PyTuple_Check(boxo) || PyTuple_GET_SIZE(boxo) != ndim) {
            PyErr_SetString(PyExc_ValueError, "layout box has the wrong number of axes");
            goto fail;
        }
        l[i].device = dev;
        l[i].box.ndim = ndim;
        for (ax = 0; ax < ndim; ax++) {
            long long s0, s1, s2;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(boxo, ax), "LLL", &s0, &s1, &s2))
                goto fail;
            if (s2 < 1) { /* dg_range_make's precondition */
                PyErr_SetString(PyExc_ValueError, "a layout's steps must be positive");
                goto fail;
            }
            l[i].box.r[ax] = dg_range_make(s0, s1, s2);
        }
    }
    Py_DECREF(seq);
    *out = l;
    *n = (int)k;
    return 0;
fail:
    Py_DECREF(seq);
    PyMem_Free(l);
    return -1;
}

PyObject *dgpy_box_to_py(const dg_box *b)
{
    PyObject *box = PyTuple_New(b->ndim);
    int ax;
    for (ax = 0; box && ax < b->ndim; ax++) {
        const dg_range *r = &b->r[ax];
        PyObject *t = Py_BuildValue("(LLL)", (long long)r->start, (long long)r->stop,
                                    (long long)r->step);
        if (!t)
            Py_CLEAR(box);
        else
            PyTuple_SET_ITEM(box, ax, t);
    }
    return box;
}

PyObject *dgpy_chunks_to_py(const dg_plan_chunk *l, int n)
{
    PyObject *lst = PyList_New(n);
    int i;
    for (i = 0; lst && i < n; i++) {
        PyObject *box = dgpy_box_to_py(&l[i].box);
        PyObject *item = box ? Py_BuildValue("(iN)", l[i].device, box) : NULL;
        if (!item)
            Py_CLEAR(lst);
        else
            PyList_SET_ITEM(lst, i, item);
    }
    return lst;
}

PyObject *dgpy_layout_to_py(const dg_array *a)
{
    dg_error err = DG_ERROR_INIT;
    dg_plan_chunk *l = NULL;
    PyObject *lst;
    int n = 0;
    if (dg_array_logical_layout(a, &l, &n, &err) != DG_OK)
        return dgpy_raise(&err);
    lst = dgpy_chunks_to_py(l, n);
    free(l);
    return lst;
}

int dgpy_default_layout(int ndim, const int64_t *shape, int dtype, dg_plan_chunk **out,
                        int *n)
{
    dg_error err = DG_ERROR_INIT;
    if (dg_layout_default(dgpy_st->be->ndevices, ndim, shape, (size_t)dg_dtype_size(dtype),
                          dgpy_st->min_split_bytes, out, n, &err) != DG_OK)
        return dgpy_raise_int(&err);
    return 0;
}

/* ---- index maps ------------------------------------------------------------ */

/* An int-like Python object (clamped to int64, as slice.indices clamps) into
 * *v; -1 with TypeError for anything without __index__. */
static int read_int(PyObject *o, int64_t *v)
{
    PyObject *ix = PyNumber_Index(o);
    int overflow = 0;
    long long x;
    if (!ix)
        return -1;
    x = PyLong_AsLongLongAndOverflow(ix, &overflow);
    Py_DECREF(ix);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *v = overflow > 0 ? INT64_MAX : overflow < 0 ? INT64_MIN : (int64_t)x;
    return 0;
}

/* A slice's start, stop or step (borrowed) on axis ax of key: None leaves
 * *has 0; TypeError (Python's words, and where) for what is no int. */
static int read_bound(PyObject *o, const dg_map_key *key, int ax, unsigned char *has,
                      int64_t *v)
{
    *has = o != Py_None;
    if (!*has || read_int(o, v) == 0)
        return 0;
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "index_map[%lld]: slice indices must be integers or None or have an "
                     "__index__ method, not %R (axis %d)", (long long)key->device, o, ax);
    }
    return -1;
}

/* One entry of a key (borrowed) into *e; ValueError for what is neither an
 * int nor a slice. */
static int read_entry(PyObject *k, const dg_map_key *key, int ax, dg_map_entry *e)
{
    memset(e, 0, sizeof *e);
    if (PySlice_Check(k)) {
        PySliceObject *s = (PySliceObject *)k;
        if (read_bound(s->start, key, ax, &e->has_start, &e->start) < 0 ||
            read_bound(s->stop, key, ax, &e->has_stop, &e->stop) < 0 ||
            read_bound(s->step, key, ax, &e->has_step, &e->step) < 0)
            return -1;
        return 0;
    }
    if (dgpy_is_int_index(k)) {
        e->is_int = 1;
        return read_int(k, &e->start);
    }
    PyErr_Format(PyExc_ValueError,
                 "index_map[%lld]: invalid index %R on axis %d: an index map takes ints and "
                 "slices (or tuples of them)", (long long)key->device, k, ax);
    return -1;
}

/* One key (borrowed: an int, a slice or a tuple of them) into *key, whose
 * device and item are set. */
static int read_key(PyObject *k, dg_map_key *key)
{
    Py_ssize_t i, n = PyTuple_Check(k) ? PyTuple_GET_SIZE(k) : 1;
    key->nentries = n > DG_MAXDIM ? DG_MAXDIM + 1 : (int)n;
    if (!PyTuple_Check(k))
        return read_entry(k, key, 0, &key->e[0]);
    for (i = 0; i < n && i < DG_MAXDIM; i++)
        if (read_entry(PyTuple_GET_ITEM(k, i), key, (int)i, &key->e[i]) < 0)
            return -1;
    return 0;
}

/* The number of keys of index map `map` (a dict, borrowed); -1 with
 * ValueError for a device that is no number. */
static Py_ssize_t count_keys(PyObject *map)
{
    PyObject *dev, *keys;
    Py_ssize_t pos = 0, n = 0;
    while (PyDict_Next(map, &pos, &dev, &keys)) {
        if (!dgpy_is_int_index(dev)) {
            PyErr_Format(PyExc_ValueError, "index_map keys must be device numbers, not %R",
                         dev);
            return -1;
        }
        n += PyList_Check(keys) ? PyList_GET_SIZE(keys) : 1;
    }
    return n;
}

/* Index map `map` (borrowed) read into *out (PyMem_Malloc'ed, caller frees),
 * *n keys in the dict's order, a device's list in its order. */
static int read_index_map(PyObject *map, dg_map_key **out, int *n)
{
    PyObject *devo, *keys;
    Py_ssize_t pos = 0, total, j = 0, i;
    dg_map_key *k;
    if (!PyDict_Check(map)) {
        PyErr_Format(PyExc_ValueError,
                     "index_map must be a dict {device: key or [key, ...]}, not %.100s",
                     Py_TYPE(map)->tp_name);
        return -1;
    }
    total = count_keys(map);
    if (total < 0)
        return -1;
    if (total > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "an index map of more than 2^31 keys");
        return -1;
    }
    k = (dg_map_key *)PyMem_Calloc(total ? (size_t)total : 1, sizeof(dg_map_key));
    if (!k) {
        PyErr_NoMemory();
        return -1;
    }
    while (PyDict_Next(map, &pos, &devo, &keys)) {
        int64_t dev;
        const int many = PyList_Check(keys);
        const Py_ssize_t m = many ? PyList_GET_SIZE(keys) : 1;
        if (read_int(devo, &dev) < 0)
            goto fail;
        for (i = 0; i < m && j < total; i++, j++) {
            k[j].device = dev;
            k[j].item = many ? (int)i : -1;
            if (read_key(many ? PyList_GET_ITEM(keys, i) : keys, &k[j]) < 0)
                goto fail;
        }
    }
    *out = k;
    *n = (int)j;
    return 0;
fail:
    PyMem_Free(k);
    return -1;
}

int dgpy_index_map_layout(PyObject *map, int ndim, const int64_t *shape, dg_plan_chunk **out,
                          int *n)
{
    dg_map_key *keys = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    if (read_index_map(map, &keys, n) < 0)
        return -1;
    st = dg_layout_of_index_map(dgpy_st->be->ndevices, ndim, shape, keys, *n, out, &err);
    PyMem_Free(keys);
    return st == DG_OK ? 0 : dgpy_raise_int(&err);
}

/* _index_map_layout(shape, index_map): the layout list an index map names
 * over shape, checked (dg_layout_of_index_map). */
static PyObject *f_index_map_layout(PyObject *mod, PyObject *args)
{
    PyObject *shapeo, *map, *res;
    int nd, n = 0;
    int64_t shape[DG_MAXDIM];
    dg_plan_chunk *l = NULL;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_index_map_layout", &shapeo, &map))
        return NULL;
    if (dgpy_parse_shape(shapeo, &nd, shape) < 0 ||
        dgpy_index_map_layout(map, nd, shape, &l, &n) < 0)
        return NULL;
    res = dgpy_chunks_to_py(l, n);
    free(l);
    return res;
}

PyObject *dgpy_reshard_map(DgArrayObject *self, PyObject *map)
{
    dg_array *a = self->arr, *out = NULL;
    dg_plan_chunk *l = NULL, *cur = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int n = 0, ncur = 0, same = 0;
    if (dgpy_index_map_layout(map, a->ndim, a->shape, &l, &n) < 0)
        return NULL;
    st = dg_array_logical_layout(a, &cur, &ncur, &err);
    if (st == DG_OK)
        st = dg_layout_same(l, n, cur, ncur, &same, &err);
    if (st == DG_OK && !same)
        st = dg_array_reshard_ex(a, l, n, DG_RESHARD_PIECES | DG_RESHARD_CHECKED, &out, &err);
    free(l);
    free(cur);
    if (st != DG_OK)
        return dgpy_raise(&err);
    if (same) {
        Py_INCREF(self);
        return (PyObject *)self;
    }
    return dgpy_wrap(out);
}

PyMethodDef dgpy_layout_methods[] = {
    {"_index_map_layout", f_index_map_layout, METH_VARARGS,
     "the layout list of an index map over a shape, checked: (shape, index_map)"},
    {NULL, NULL, 0, NULL},
};
