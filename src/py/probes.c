/* dgarray._core's probes for tests and benchmarks: the bytes moves carried
 * (_move_stats), the speed of the backend's exchange (_bench_exchange) and
 * the planner's copies for two layouts (_plan). */
#include "dgpy.h"

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

PyMethodDef dgpy_probe_methods[] = {
    {"_move_stats", f_move_stats, METH_VARARGS, "(between, within, peer_read, groups)"},
    {"_bench_exchange", f_bench_exchange, METH_VARARGS,
     "best seconds of the backend's exchange: (pairs, nbytes, iters)"},
    {"_plan", f_plan, METH_VARARGS, "planner testing hook"},
    {NULL, NULL, 0, NULL},
};
