/* dgarray._core: module set-up, backend choice, and module-level functions. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dgpy.h"

dgpy_state *dgpy_st = NULL;
static dgpy_state the_state;

/* ---- backend choice ------------------------------------------------------------ */

typedef dg_status (*cuda_create_fn)(int ndevices, dg_backend_i **out, dg_error *err);

/* Picks the backend as DESIGN.md says: DGARRAY_BACKEND=cpu|cuda forces one;
 * unset, CUDA when dgarray._cuda loads and sees a GPU, else the CPU backend
 * with DGARRAY_CPU_DEVICES virtual devices (default: cores, at most 8). */
static int choose_backend(dgpy_state *st)
{
    const char *want = getenv("DGARRAY_BACKEND");
    dg_error err = DG_ERROR_INIT;
    int force_cuda = want && strcmp(want, "cuda") == 0;
    int force_cpu = want && strcmp(want, "cpu") == 0;

    if (want && *want && !force_cuda && !force_cpu) {
        PyErr_Format(PyExc_ValueError,
                     "DGARRAY_BACKEND must be 'cpu' or 'cuda', not '%s'", want);
        return -1;
    }
    if (!force_cpu) {
        PyObject *mod = PyImport_ImportModule("dgarray._cuda");
        if (!mod) {
            if (force_cuda) {
                PyObject *t, *v, *tb;
                PyErr_Fetch(&t, &v, &tb);
                PyErr_Format(PyExc_ImportError,
                             "DGARRAY_BACKEND=cuda but dgarray._cuda could not be loaded "
                             "(was dgarray built where nvcc was found?): %S",
                             v ? v : Py_None);
                Py_XDECREF(t);
                Py_XDECREF(v);
                Py_XDECREF(tb);
                return -1;
            }
            PyErr_Clear();
        } else {
            PyObject *n = PyObject_CallMethod(mod, "device_count", NULL);
            long ngpu = n ? PyLong_AsLong(n) : -1;
            Py_XDECREF(n);
            if (ngpu < 0) {
                Py_DECREF(mod);
                if (force_cuda)
                    return -1;
                PyErr_Clear();
            } else if (ngpu == 0) {
                Py_DECREF(mod);
                if (force_cuda) {
                    PyErr_SetString(PyExc_RuntimeError,
                                    "DGARRAY_BACKEND=cuda but no CUDA GPU was found");
                    return -1;
                }
            } else {
                PyObject *cap = PyObject_GetAttrString(mod, "backend_create");
                cuda_create_fn fn = cap ? (cuda_create_fn)PyCapsule_GetPointer(
                                              cap, "dgarray._cuda.backend_create")
                                        : NULL;
                Py_XDECREF(cap);
                if (!fn) {
                    Py_DECREF(mod);
                    return -1;
                }
                if (fn(0, &st->be, &err) != DG_OK) {
                    Py_DECREF(mod);
                    dgpy_raise(&err);
                    return -1;
                }
                if (st->be->version != DG_BACKEND_VERSION) {
                    PyErr_Format(PyExc_RuntimeError,
                                 "dgarray._cuda implements backend interface version %d, "
                                 "dgarray._core needs %d: rebuild dgarray",
                                 st->be->version, DG_BACKEND_VERSION);
                    st->be->destroy(st->be);
                    st->be = NULL;
                    Py_DECREF(mod);
                    return -1;
                }
                st->cuda_module = mod;
                return 0;
            }
        }
    }
    {
        const char *nd = getenv("DGARRAY_CPU_DEVICES");
        long n;
        if (nd && *nd) {
            char *end;
            n = strtol(nd, &end, 10);
            if (*end || n < 1 || n > 1024) {
                PyErr_Format(PyExc_ValueError,
                             "DGARRAY_CPU_DEVICES must be a whole number from 1 to 1024, "
                             "not '%s'", nd);
                return -1;
            }
        } else {
            n = sysconf(_SC_NPROCESSORS_ONLN);
            if (n < 1) n = 1;
            if (n > 8) n = 8;
        }
        if (dg_cpu_backend_create((int)n, &st->be, &err) != DG_OK) {
            dgpy_raise(&err);
            return -1;
        }
    }
    return 0;
}

/* ---- module functions --------------------------------------------------------------- */

/* _from_host(obj, layout or None, mode, dtype or None) */
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

/* _empty(shape, dtype, layout or None, mode) */
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

static PyObject *f_devices_info(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    PyObject *lst = PyList_New(be->ndevices);
    int i;
    (void)mod;
    (void)unused;
    if (!lst)
        return NULL;
    for (i = 0; i < be->ndevices; i++) {
        char name[128] = {0};
        size_t total = 0, freeb = 0;
        dg_error err = DG_ERROR_INIT;
        PyObject *t;
        if (be->device_info(be, i, name, sizeof(name), &total, &freeb, &err) != DG_OK) {
            Py_DECREF(lst);
            return dgpy_raise(&err);
        }
        t = Py_BuildValue("(issnn)", i, be->name, name, (Py_ssize_t)total, (Py_ssize_t)freeb);
        if (!t) {
            Py_DECREF(lst);
            return NULL;
        }
        PyList_SET_ITEM(lst, i, t);
    }
    return lst;
}

static PyObject *f_backend(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyUnicode_FromString(dgpy_st->be->name);
}

static PyObject *f_ndevices(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromLong(dgpy_st->be->ndevices);
}

/* A list of of(be, dev) for every device. */
static PyObject *per_device(size_t (*of)(dg_backend_i *, int))
{
    dg_backend_i *be = dgpy_st->be;
    PyObject *lst = PyList_New(be->ndevices);
    int i;
    for (i = 0; lst && i < be->ndevices; i++) {
        PyObject *v = PyLong_FromSize_t(of(be, i));
        if (!v) {
            Py_CLEAR(lst);
            break;
        }
        PyList_SET_ITEM(lst, i, v);
    }
    return lst;
}

static PyObject *f_bytes_in_use(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    st = be->sync_all(be, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return per_device(be->bytes_in_use);
}

static size_t held_or_used(dg_backend_i *be, int dev)
{
    return be->bytes_held ? be->bytes_held(be, dev) : be->bytes_in_use(be, dev);
}

static PyObject *f_bytes_held(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return per_device(held_or_used);
}

static PyObject *f_trim(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int i;
    (void)mod;
    (void)unused;
    /* the long wait without the GIL; the hand-back after it is short */
    Py_BEGIN_ALLOW_THREADS
    st = be->sync_all(be, &err);
    Py_END_ALLOW_THREADS
    for (i = 0; i < be->ndevices && st == DG_OK && be->trim; i++)
        st = be->trim(be, i, &err);
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *f_sync_all(PyObject *mod, PyObject *unused)
{
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    (void)unused;
    if (dgpy_wait_all() < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dgpy_st->be->sync_all(dgpy_st->be, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *f_set_min_split_bytes(PyObject *mod, PyObject *arg)
{
    long long v = PyLong_AsLongLong(arg);
    (void)mod;
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (v < 0) {
        PyErr_SetString(PyExc_ValueError, "min_split_bytes must be >= 0");
        return NULL;
    }
    dgpy_st->min_split_bytes = (size_t)v;
    Py_RETURN_NONE;
}

static PyObject *f_get_min_split_bytes(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromSize_t(dgpy_st->min_split_bytes);
}

static PyObject *f_set_peer_read_bytes(PyObject *mod, PyObject *arg)
{
    long long v = PyLong_AsLongLong(arg);
    (void)mod;
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (v < 0) {
        PyErr_SetString(PyExc_ValueError, "peer_read_bytes must be >= 0");
        return NULL;
    }
    dg_set_peer_read_bytes((size_t)v);
    Py_RETURN_NONE;
}

static PyObject *f_get_peer_read_bytes(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromSize_t(dg_get_peer_read_bytes());
}

/* _move_stats(reset=False) -> (between, within, peer_read, groups): bytes
 * moved between and within devices, bytes read in place on another device
 * and exchange groups run since the last reset. */
static PyObject *f_move_stats(PyObject *mod, PyObject *args)
{
    int reset = 0;
    dg_move_counts c;
    (void)mod;
    if (!PyArg_ParseTuple(args, "|p:_move_stats", &reset))
        return NULL;
    dg_move_stats(&c, reset);
    return Py_BuildValue("(LLLL)", (long long)c.between, (long long)c.within,
                         (long long)c.peer_read, (long long)c.groups);
}

/* _bench_exchange(pairs, nbytes, iters) -> seconds: the best time of the
 * backend's own exchange of nbytes for each (src, dst) pair in one group. */
static PyObject *f_bench_exchange(PyObject *mod, PyObject *args)
{
    PyObject *lst, *seq;
    Py_ssize_t nbytes, n, i;
    int iters, *pairs;
    double best = 0;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Oni:_bench_exchange", &lst, &nbytes, &iters))
        return NULL;
    seq = PySequence_Fast(lst, "pairs must be a sequence of (src, dst)");
    if (!seq)
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    pairs = (int *)PyMem_Calloc((size_t)(n ? n : 1), 2 * sizeof(int));
    if (!pairs) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (i = 0; i < n; i++)
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ii", &pairs[2 * i],
                              &pairs[2 * i + 1])) {
            PyMem_Free(pairs);
            Py_DECREF(seq);
            return NULL;
        }
    Py_DECREF(seq);
    Py_BEGIN_ALLOW_THREADS
    st = dg_bench_exchange(dgpy_st->be, pairs, (int)n, (size_t)nbytes, iters, &best, &err);
    Py_END_ALLOW_THREADS
    PyMem_Free(pairs);
    if (st != DG_OK)
        return dgpy_raise(&err);
    return PyFloat_FromDouble(best);
}

/* _plan(src_layout, dst_layout, ndim): the planner's copies, for tests:
 * [(src_index, dst_index, ((start, stop, step), ...)), ...]. */
static PyObject *f_plan(PyObject *mod, PyObject *args)
{
    PyObject *so, *dso, *lst = NULL;
    int ndim, ns, nd, i, ax;
    dg_plan_chunk *s = NULL, *d = NULL;
    dg_plan plan = {0, 0, NULL};
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOi", &so, &dso, &ndim))
        return NULL;
    if (dgpy_layout_from_py(so, ndim, &s, &ns) < 0)
        return NULL;
    if (dgpy_layout_from_py(dso, ndim, &d, &nd) < 0)
        goto done;
    if (dg_plan_build(s, ns, d, nd, &plan, &err) != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    lst = PyList_New(plan.ncopies);
    for (i = 0; lst && i < plan.ncopies; i++) {
        PyObject *box = PyTuple_New(ndim);
        if (!box) {
            Py_CLEAR(lst);
            break;
        }
        for (ax = 0; ax < ndim; ax++) {
            dg_range r = plan.copies[i].box.r[ax];
            PyTuple_SET_ITEM(box, ax, Py_BuildValue("(LLL)", (long long)r.start,
                                                    (long long)r.stop, (long long)r.step));
        }
        PyList_SET_ITEM(lst, i, Py_BuildValue("(iiN)", plan.copies[i].src, plan.copies[i].dst,
                                              box));
    }
done:
    dg_plan_free(&plan);
    PyMem_Free(s);
    PyMem_Free(d);
    return lst;
}

static PyObject *f_validate_layout(PyObject *mod, PyObject *args)
{
    PyObject *shapeo, *lo;
    int nd, n;
    int64_t shape[DG_MAXDIM];
    dg_plan_chunk *l;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO", &shapeo, &lo))
        return NULL;
    if (dgpy_parse_shape(shapeo, &nd, shape) < 0 || dgpy_layout_from_py(lo, nd, &l, &n) < 0)
        return NULL;
    st = dg_layout_validate(dgpy_st->be->ndevices, nd, shape, l, n, &err);
    PyMem_Free(l);
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
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
    int kind, keepdims, i;
    dg_reduce_call c;
    dg_array *a = NULL, *w = NULL, *out = NULL, *idx = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OiOO!pOOO", &ao, &kind, &uf, &PyTuple_Type, &axes, &keepdims,
                          &initial, &whereo, &lazyo))
        return NULL;
    if (!DgArray_Check(ao)) {
        PyErr_SetString(PyExc_TypeError, "_reduce needs a DistributedArray");
        return NULL;
    }
    memset(&c, 0, sizeof(c));
    c.kind = kind;
    c.keepdims = keepdims;
    c.loop = -1;
    c.lazy_mode = DG_MODE_REPLICA;
    if (kind < DG_RED_LOOP || kind > DG_RED_ARGMIN) {
        PyErr_Format(PyExc_ValueError, "unknown reduction kind %d", kind);
        return NULL;
    }
    if (dgpy_replica((DgArrayObject *)ao, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    for (i = 0; i < PyTuple_GET_SIZE(axes); i++) {
        long ax = PyLong_AsLong(PyTuple_GET_ITEM(axes, i));
        if (ax == -1 && PyErr_Occurred())
            goto done;
        if (ax < 0 || ax >= a->ndim || c.red[ax]) {
            PyErr_Format(PyExc_ValueError, "bad reduction axis %ld for %d dimensions", ax,
                         a->ndim);
            goto done;
        }
        c.red[ax] = 1;
    }
    if (kind == DG_RED_LOOP) {
        PyObject *id_obj = PyDict_GetItemWithError(dgpy_st->ufunc_ids, uf);
        int dt[3] = {a->dtype, a->dtype, a->dtype};
        if (!id_obj) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "dgarray cannot reduce with %R", uf);
            goto done;
        }
        c.loop = dg_loop_find((int)PyLong_AsLong(id_obj), dt);
        if (c.loop < 0) {
            PyErr_Format(PyExc_TypeError, "%R has no loop that reduces %s to %s", uf,
                         dg_dtype_name(a->dtype), dg_dtype_name(a->dtype));
            goto done;
        }
    }
    if (initial != Py_None) {
        if (dgpy_scalar_bytes(initial, a->dtype, c.init) < 0)
            goto done;
        c.has_init = 1;
    }
    if (whereo != Py_None) {
        if (!DgArray_Check(whereo)) {
            PyErr_SetString(PyExc_TypeError, "where must be a DistributedArray here");
            goto done;
        }
        if (dgpy_replica((DgArrayObject *)whereo, &w, &err) != DG_OK) {
            dgpy_raise(&err);
            goto done;
        }
        c.where = w;
    }
    if (lazyo != Py_None) {
        for (i = 1; i < DG_NMODES; i++) {
            int eq = PyUnicode_Check(lazyo) &&
                     PyUnicode_Compare(lazyo, dgpy_st->mode_names[i]) == 0;
            if (eq)
                c.lazy_mode = i;
        }
        if (PyErr_Occurred())
            goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_reduce(a, &c, &out, kind == DG_RED_LOOP ? NULL : &idx, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    if (kind == DG_RED_LOOP) {
        res = dgpy_wrap(out);
    } else {
        PyObject *v = dgpy_wrap(out), *ix = dgpy_wrap(idx);
        res = v && ix ? PyTuple_Pack(2, v, ix) : NULL;
        Py_XDECREF(v);
        Py_XDECREF(ix);
    }
    out = idx = NULL; /* dgpy_wrap took them */
done:
    if (a)
        dg_array_decref(a);
    if (w)
        dg_array_decref(w);
    return res;
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

/* _scan(a, ufunc, axis): the inclusive scan (ufunc.accumulate) of a along axis
 * with the ufunc's loop for a's dtype; a new array with a's layout. */
static PyObject *f_scan(PyObject *mod, PyObject *args)
{
    PyObject *ao, *uf, *id_obj;
    int axis, loop;
    dg_array *a = NULL, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOi", &ao, &uf, &axis))
        return NULL;
    if (!DgArray_Check(ao)) {
        PyErr_SetString(PyExc_TypeError, "_scan needs a DistributedArray");
        return NULL;
    }
    id_obj = PyDict_GetItemWithError(dgpy_st->ufunc_ids, uf);
    if (!id_obj) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "dgarray cannot accumulate with %R", uf);
        return NULL;
    }
    if (dgpy_replica((DgArrayObject *)ao, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    {
        int dt[3] = {a->dtype, a->dtype, a->dtype};
        loop = dg_loop_find((int)PyLong_AsLong(id_obj), dt);
    }
    if (loop < 0) {
        PyErr_Format(PyExc_TypeError, "%R has no loop that accumulates %s", uf,
                     dg_dtype_name(a->dtype));
        dg_array_decref(a);
        return NULL;
    }
    if (axis < 0 || axis >= a->ndim) {
        PyErr_Format(PyExc_ValueError, "bad scan axis %d for %d dimensions", axis, a->ndim);
        dg_array_decref(a);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_scan(a, axis, loop, &out, &err);
    Py_END_ALLOW_THREADS
    dg_array_decref(a);
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
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

static PyMethodDef module_methods[] = {
    {"_contract", dgpy_f_contract, METH_VARARGS, "a contraction: see src/py/matmul.c"},
    {"_matmul_plan", dgpy_f_matmul_plan, METH_VARARGS, "the product planner, for tests"},
    {"_set_cpu_blas", dgpy_f_set_cpu_blas, METH_O, "NumPy's BLAS for the CPU backend"},
    {"_flatten", f_flatten, METH_O, "a as 1-d in C order (a view where possible)"},
    {"_scan", f_scan, METH_VARARGS, "inclusive scan along an axis: (a, ufunc, axis)"},
    {"_assign", f_assign, METH_VARARGS, "dst's values = src's (same shape and dtype)"},
    {"_reduce", f_reduce, METH_VARARGS, "core reduction: see f_reduce"},
    {"_from_host", f_from_host, METH_VARARGS, "array from host data: (obj, layout, mode, dtype)"},
    {"_empty", f_empty, METH_VARARGS, "uninitialised array: (shape, dtype, layout, mode)"},
    {"_fill", f_fill, METH_VARARGS, "fill in place: (array, kind, value, delta, k)"},
    {"_fill_random", dgpy_fill_random, METH_VARARGS,
     "random fill in place: (array, dist, key0, key1, stream, a, b, lo, range)"},
    {"_devices_info", f_devices_info, METH_NOARGS, "[(id, backend, name, total, free)]"},
    {"backend", f_backend, METH_NOARGS, "backend() -> 'cpu' or 'cuda'"},
    {"_ndevices", f_ndevices, METH_NOARGS, "number of devices"},
    {"_bytes_in_use", f_bytes_in_use, METH_NOARGS, "device bytes allocated, per device"},
    {"_bytes_held", f_bytes_held, METH_NOARGS,
     "device bytes the memory pools hold (allocated or kept for reuse), per device"},
    {"_trim", f_trim, METH_NOARGS,
     "waits for all work, then hands memory kept for reuse back to every device"},
    {"_sync_all", f_sync_all, METH_NOARGS, "wait for all devices"},
    {"_set_min_split_bytes", f_set_min_split_bytes, METH_O, "set the default split size"},
    {"_get_min_split_bytes", f_get_min_split_bytes, METH_NOARGS, "the default split size"},
    {"_move_stats", f_move_stats, METH_VARARGS, "(between, within, peer_read, groups)"},
    {"_bench_exchange", f_bench_exchange, METH_VARARGS,
     "best seconds of the backend's exchange: (pairs, nbytes, iters)"},
    {"_set_peer_read_bytes", f_set_peer_read_bytes, METH_O,
     "regions up to this many bytes on another device are read in place"},
    {"_get_peer_read_bytes", f_get_peer_read_bytes, METH_NOARGS, "see _set_peer_read_bytes"},
    {"_set_progress", dgpy_f_set_progress, METH_O,
     "progress of long host copies: True, False or \"always\""},
    {"_get_progress", dgpy_f_get_progress, METH_NOARGS, "see _set_progress"},
    {"_piece_bytes", dgpy_f_piece_bytes, METH_O,
     "sets the bytes per piece of a host copy; returns the previous value"},
    {"_plan", f_plan, METH_VARARGS, "planner testing hook"},
    {"_validate_layout", f_validate_layout, METH_VARARGS, "check a layout against a shape"},
    {NULL, NULL, 0, NULL},
};

/* ---- init ------------------------------------------------------------------------------ */

static const char *const mode_names[DG_NMODES] = {"replica", "sum", "prod", "max", "min"};

static int module_exec(PyObject *m)
{
    dgpy_state *st = &the_state;
    PyObject *np = NULL, *dtype_fn = NULL;
    int i;

    if (dgpy_st) {
        PyErr_SetString(PyExc_ImportError,
                        "dgarray._core cannot be loaded twice in one process");
        return -1;
    }
    memset(st, 0, sizeof(*st));
    if (dgpy_npy_import() < 0)
        return -1;
    dgpy_st = st;
    st->min_split_bytes = 1 << 20;
    {
        const char *ms = getenv("DGARRAY_MIN_SPLIT_BYTES");
        if (ms && *ms)
            st->min_split_bytes = (size_t)strtoull(ms, NULL, 10);
        ms = getenv("DGARRAY_PEER_READ_BYTES");
        if (ms && *ms)
            dg_set_peer_read_bytes((size_t)strtoull(ms, NULL, 10));
    }
    st->array_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &dgpy_array_spec, NULL);
    if (!st->array_type)
        goto fail;
    if (PyModule_AddObjectRef(m, "DistributedArray", (PyObject *)st->array_type) < 0)
        goto fail;
    if (PyModule_AddFunctions(m, dgpy_index_methods) < 0 ||
        PyModule_AddFunctions(m, dgpy_surface_methods) < 0)
        goto fail;
    st->DeviceError = PyErr_NewExceptionWithDoc(
        "dgarray.DeviceError", "A CUDA, cuBLAS or NCCL call failed.", PyExc_RuntimeError, NULL);
    if (!st->DeviceError || PyModule_AddObjectRef(m, "DeviceError", st->DeviceError) < 0)
        goto fail;
    st->OutOfDeviceMemoryError = PyErr_NewExceptionWithDoc(
        "dgarray.OutOfDeviceMemoryError",
        "A device ran out of memory; `device` and `bytes` say where and how much.",
        PyExc_MemoryError, NULL);
    if (!st->OutOfDeviceMemoryError ||
        PyModule_AddObjectRef(m, "OutOfDeviceMemoryError", st->OutOfDeviceMemoryError) < 0)
        goto fail;
    for (i = 0; i < DG_NMODES; i++) {
        st->mode_names[i] = PyUnicode_InternFromString(mode_names[i]);
        if (!st->mode_names[i])
            goto fail;
    }
    np = PyImport_ImportModule("numpy");
    if (!np)
        goto fail;
    dtype_fn = PyObject_GetAttrString(np, "dtype");
    if (!dtype_fn)
        goto fail;
    for (i = 0; i < DG_NDTYPES; i++) {
        st->descrs[i] = PyObject_CallFunction(dtype_fn, "s", dg_dtype_name(i));
        if (!st->descrs[i])
            goto fail;
    }
    st->ufunc_ids = PyDict_New();
    st->resolve_cache = PyDict_New();
    if (!st->ufunc_ids || !st->resolve_cache)
        goto fail;
    for (i = 1; i < DG_NUFUNCS; i++) { /* 0 is `cast`, not a NumPy ufunc */
        PyObject *u = PyObject_GetAttrString(np, dg_ufunc_name(i)), *v;
        if (!u)
            goto fail;
        st->ufuncs[i] = u;
        v = PyLong_FromLong(i);
        if (!v || PyDict_SetItem(st->ufunc_ids, u, v) < 0) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    if (choose_backend(st) < 0)
        goto fail;
    Py_DECREF(dtype_fn);
    Py_DECREF(np);
    return 0;
fail:
    Py_XDECREF(dtype_fn);
    Py_XDECREF(np);
    dgpy_st = NULL;
    return -1;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "dgarray._core",
    .m_doc = "dgarray's C core: distributed arrays on every device of the host.",
    .m_size = 0,
    .m_methods = module_methods,
    .m_slots = module_slots,
};

PyMODINIT_FUNC PyInit__core(void)
{
    return PyModuleDef_Init(&module_def);
}
