/* dgarray._core's matrix products: _contract (the core contraction) and
 * _matmul_plan (the planner, for tests).  NumPy's semantics (shapes, dtypes,
 * errors of matmul, dot, tensordot, ...) live in dgarray/_linalg.py, which
 * turns each product into one contraction. */
#include "dgpy.h"
#include "cpu_gemm.h"
#include "dg_matmul.h"

/* Up to `cap` ints of a sequence into out; -1 with an exception. */
static int ints_from_py(PyObject *o, int64_t *out, int cap, int *n)
{
    PyObject *seq = PySequence_Fast(o, "expected a sequence of ints");
    Py_ssize_t i, k;
    if (!seq)
        return -1;
    k = PySequence_Fast_GET_SIZE(seq);
    if (k > cap) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "dgarray supports at most %d dimensions", cap);
        return -1;
    }
    for (i = 0; i < k; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        out[i] = v;
    }
    Py_DECREF(seq);
    *n = (int)k;
    return 0;
}

/* One operand's map (an iteration axis for each of its ndim axes) into
 * map; -1 with an exception. */
static int map_from_py(PyObject *o, int ndim, const char *name, int *map)
{
    int64_t v[DG_MAXDIM];
    int n, j;
    if (ints_from_py(o, v, DG_MAXDIM, &n) < 0)
        return -1;
    if (n != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must name an axis for each of the %d axes of the "
                     "operand", name, ndim);
        return -1;
    }
    for (j = 0; j < n; j++)
        map[j] = (int)v[j];
    return 0;
}

/* Fills c from (amap, bmap, shape, kshape) sequences; -1 with an exception. */
static int call_from_py(PyObject *amap, PyObject *bmap, PyObject *shape, PyObject *kshape,
                        int a_ndim, int b_ndim, dg_contract_call *c)
{
    memset(c, 0, sizeof(*c));
    if (ints_from_py(shape, c->shape, DG_MAXDIM, &c->ndim) < 0 ||
        ints_from_py(kshape, c->kshape, DG_MAXDIM, &c->nk) < 0 ||
        map_from_py(amap, a_ndim, "amap", c->amap) < 0 ||
        map_from_py(bmap, b_ndim, "bmap", c->bmap) < 0)
        return -1;
    c->min_split_bytes = dgpy_st->min_split_bytes;
    return 0;
}

/* _contract(a, b, amap, bmap, shape, kshape, allow_tf32): the contraction of
 * two DistributedArrays of one dtype (any modes) as dg_contract_call
 * describes it; a new DistributedArray, in SUM mode when partial sums are
 * left on several devices. */
static PyObject *f_contract(PyObject *mod, PyObject *args)
{
    PyObject *ao, *bo, *amap, *bmap, *shape, *kshape;
    int tf32;
    dg_contract_call c;
    dg_array *a = NULL, *b = NULL, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!O!OOOOp", dgpy_st->array_type, &ao, dgpy_st->array_type,
                          &bo, &amap, &bmap, &shape, &kshape, &tf32))
        return NULL;
    if (((DgArrayObject *)ao)->arr->dtype != ((DgArrayObject *)bo)->arr->dtype) {
        PyErr_SetString(PyExc_TypeError, "_contract needs operands of one dtype");
        return NULL;
    }
    if (call_from_py(amap, bmap, shape, kshape, ((DgArrayObject *)ao)->arr->ndim,
                     ((DgArrayObject *)bo)->arr->ndim, &c) < 0)
        return NULL;
    c.allow_tf32 = tf32;
    st = dgpy_replica((DgArrayObject *)ao, &a, &err);
    if (st == DG_OK)
        st = dgpy_replica((DgArrayObject *)bo, &b, &err);
    /* with the GIL held: the operands are shared with other Python threads,
     * and the core wants one thread at a time per array (dg_array.h); the
     * call only enqueues work */
    if (st == DG_OK)
        st = dg_array_contract(a, b, &c, &out, &err);
    if (a)
        dg_array_decref(a);
    if (b)
        dg_array_decref(b);
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* A box as ((start, stop, step), ...) over its first n axes; new reference. */
static PyObject *box_to_py(const dg_box *b, int n)
{
    PyObject *t = PyTuple_New(n);
    int ax;
    for (ax = 0; t && ax < n; ax++) {
        PyObject *r = Py_BuildValue("(LLL)", (long long)b->r[ax].start,
                                    (long long)b->r[ax].stop, (long long)b->r[ax].step);
        if (!r) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, ax, r);
    }
    return t;
}

/* _matmul_plan(a_layout, a_shape, b_layout, b_shape, amap, bmap, shape, kshape,
 *              ndevices, itemsize, cost or None):
 * the planner's answer for operands of these layouts, without data:
 * (mode, fallback, [(device, box), ...], [(device, chunk, first, a_local,
 * b_local, box), ...]).  cost: (flop/s, bytes/s, latency s, min split flop). */
static PyObject *f_matmul_plan(PyObject *mod, PyObject *args)
{
    PyObject *alo, *aso, *blo, *bso, *amap, *bmap, *shape, *kshape, *costo;
    PyObject *chunks = NULL, *tasks = NULL, *res = NULL;
    int ndev, isz, na = 0, nb = 0, and_ = 0, bnd = 0, i;
    int64_t ash[DG_MAXDIM], bsh[DG_MAXDIM];
    dg_plan_chunk *al = NULL, *bl = NULL;
    dg_contract_call c;
    dg_mm_cost cost = dg_mm_cost_default;
    dg_mm_plan pl;
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    memset(&pl, 0, sizeof(pl));
    if (!PyArg_ParseTuple(args, "OOOOOOOOiiO", &alo, &aso, &blo, &bso, &amap, &bmap, &shape,
                          &kshape, &ndev, &isz, &costo))
        return NULL;
    if (costo != Py_None &&
        !PyArg_ParseTuple(costo, "dddd", &cost.flop_rate, &cost.link_bw, &cost.latency,
                          &cost.min_split_flops))
        return NULL;
    if (ints_from_py(aso, ash, DG_MAXDIM, &and_) < 0 ||
        ints_from_py(bso, bsh, DG_MAXDIM, &bnd) < 0 ||
        call_from_py(amap, bmap, shape, kshape, and_, bnd, &c) < 0)
        return NULL;
    if (dgpy_layout_from_py(alo, and_, &al, &na) < 0)
        return NULL;
    if (dgpy_layout_from_py(blo, bnd, &bl, &nb) < 0)
        goto done;
    if (dg_mm_plan_build(&c, ndev, isz, al, na, and_, ash, bl, nb, bnd, bsh, &cost, &pl, &err)
        != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    chunks = PyList_New(pl.nchunks);
    tasks = PyList_New(pl.ntasks);
    if (!chunks || !tasks)
        goto done;
    for (i = 0; i < pl.nchunks; i++) {
        PyObject *item = Py_BuildValue("(iN)", pl.chunks[i].device,
                                       box_to_py(&pl.chunks[i].box, c.ndim));
        if (!item)
            goto done;
        PyList_SET_ITEM(chunks, i, item);
    }
    for (i = 0; i < pl.ntasks; i++) {
        const dg_mm_task *t = &pl.tasks[i];
        PyObject *item = Py_BuildValue("(iiiiiN)", t->device, t->chunk, t->first, t->a_local,
                                       t->b_local, box_to_py(&t->box, c.ndim + c.nk));
        if (!item)
            goto done;
        PyList_SET_ITEM(tasks, i, item);
    }
    res = Py_BuildValue("(OiOO)", dgpy_st->mode_names[pl.mode], pl.fallback, chunks, tasks);
done:
    Py_XDECREF(chunks);
    Py_XDECREF(tasks);
    dg_mm_plan_free(&pl);
    PyMem_Free(al);
    PyMem_Free(bl);
    return res;
}

/* _set_cpu_blas((sgemm, dgemm, cgemm, zgemm[, set_threads, get_threads]) or
 * None): addresses of NumPy's ILP64 CBLAS gemm functions (dgarray._linalg
 * finds them) for the CPU backend's float and complex products, and of the
 * BLAS's thread-count setter and getter (0: none); None: its own loops.
 * Returns whether the CPU backend runs (nothing else takes them). */
static PyObject *f_set_cpu_blas(PyObject *mod, PyObject *fns)
{
    dg_cpu_blas t;
    unsigned long long p[6] = {0, 0, 0, 0, 0, 0};
    (void)mod;
    if (strcmp(dgpy_st->be->name, "cpu") != 0)
        Py_RETURN_FALSE;
    if (fns == Py_None) {
        dg_cpu_gemm_set_blas(NULL);
        Py_RETURN_TRUE;
    }
    if (!PyArg_ParseTuple(fns, "KKKK|KK", &p[0], &p[1], &p[2], &p[3], &p[4], &p[5]))
        return NULL;
    if (!p[0] || !p[1] || !p[2] || !p[3]) {
        PyErr_SetString(PyExc_ValueError, "_set_cpu_blas needs four function addresses");
        return NULL;
    }
    /* addresses of functions, as ctypes gives them (implementation-defined
     * conversions every platform dgarray runs on defines) */
    t.sgemm = (void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                        const float *, int64_t, float, float *, int64_t))(uintptr_t)p[0];
    t.dgemm = (void (*)(int, int, int, int64_t, int64_t, int64_t, double, const double *,
                        int64_t, const double *, int64_t, double, double *,
                        int64_t))(uintptr_t)p[1];
    t.cgemm = (void (*)(int, int, int, int64_t, int64_t, int64_t, const void *, const void *,
                        int64_t, const void *, int64_t, const void *, void *,
                        int64_t))(uintptr_t)p[2];
    t.zgemm = (void (*)(int, int, int, int64_t, int64_t, int64_t, const void *, const void *,
                        int64_t, const void *, int64_t, const void *, void *,
                        int64_t))(uintptr_t)p[3];
    t.set_threads = p[4] && p[5] ? (void (*)(int))(uintptr_t)p[4] : NULL;
    t.get_threads = p[4] && p[5] ? (int (*)(void))(uintptr_t)p[5] : NULL;
    dg_cpu_gemm_set_blas(&t);
    Py_RETURN_TRUE;
}

PyMethodDef dgpy_matmul_methods[] = {
    {"_contract", f_contract, METH_VARARGS, "a contraction: see src/py/matmul.c"},
    {"_matmul_plan", f_matmul_plan, METH_VARARGS, "the product planner, for tests"},
    {"_set_cpu_blas", f_set_cpu_blas, METH_O, "NumPy's BLAS for the CPU backend"},
    {NULL, NULL, 0, NULL},
};
