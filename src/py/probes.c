/* dgarray._core's probes for tests and benchmarks: the bytes moves carried
 * (_move_stats), the speed of the backend's exchange (_bench_exchange) and
 * the planner's copies for two layouts (_plan), and the work asked of the
 * backend (_work_stats). */
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

/* _work_stats(reset=False) -> dict: what the core asked of the backend
 * since the last reset (dg_be_counts_get): 'works' {slot: [per device]}
 * (slots with any), 'read' and 'waits_across' [per device], and the ints
 * 'between', 'from_host', 'to_host', 'host_copies', 'allreduces',
 * 'allreduce_bytes', 'syncs'. */
static PyObject *f_work_stats(PyObject *mod, PyObject *args)
{
    static const char *const names[DG_BE_WORK_KINDS] = {
        "copy", "fill", "elementwise", "reduce", "scan", "gemm", "select", "rows",
        "route", "sort", "dense", "fft", "fused", "search", "count"};
    const int ndev = dgpy_st->be->ndevices < DG_BE_STAT_DEVS ? dgpy_st->be->ndevices
                                                              : DG_BE_STAT_DEVS;
    PyObject *res = NULL, *works = NULL, *v = NULL;
    dg_be_counts c;
    int reset = 0, k;
    (void)mod;
    if (!PyArg_ParseTuple(args, "|p:_work_stats", &reset))
        return NULL;
    dg_be_counts_get(&c, reset);
    if (!(works = PyDict_New()))
        return NULL;
    for (k = 0; k < DG_BE_WORK_KINDS; k++) {
        int d, any = 0;
        for (d = 0; d < ndev; d++)
            any |= c.works[k][d] != 0;
        if (!any)
            continue;
        if (!(v = PyList_New(ndev)))
            goto fail;
        for (d = 0; d < ndev; d++) {
            PyObject *o = PyLong_FromLongLong((long long)c.works[k][d]);
            if (!o)
                goto fail;
            PyList_SET_ITEM(v, d, o);
        }
        if (PyDict_SetItemString(works, names[k], v) < 0)
            goto fail;
        Py_CLEAR(v);
    }
    if (!(res = PyDict_New()) || PyDict_SetItemString(res, "works", works) < 0)
        goto fail;
    for (k = 0; k < 2; k++) {
        const int64_t *a = k ? c.waits_across : c.read;
        int d;
        if (!(v = PyList_New(ndev)))
            goto fail;
        for (d = 0; d < ndev; d++) {
            PyObject *o = PyLong_FromLongLong((long long)a[d]);
            if (!o)
                goto fail;
            PyList_SET_ITEM(v, d, o);
        }
        if (PyDict_SetItemString(res, k ? "waits_across" : "read", v) < 0)
            goto fail;
        Py_CLEAR(v);
    }
    {
        const char *const keys[] = {"between", "from_host", "to_host", "host_copies",
                                    "allreduces", "allreduce_bytes", "syncs"};
        const int64_t vals[] = {c.between, c.from_host, c.to_host, c.host_copies,
                                c.allreduces, c.allreduce_bytes, c.syncs};
        for (k = 0; k < 7; k++) {
            if (!(v = PyLong_FromLongLong((long long)vals[k])) ||
                PyDict_SetItemString(res, keys[k], v) < 0)
                goto fail;
            Py_CLEAR(v);
        }
    }
    Py_DECREF(works);
    return res;
fail:
    Py_XDECREF(v);
    Py_XDECREF(works);
    Py_XDECREF(res);
    return NULL;
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
    {"_work_stats", f_work_stats, METH_VARARGS,
     "what the core asked of the backend: {works, read, waits_across, between, ...}"},
    {"_bench_exchange", f_bench_exchange, METH_VARARGS,
     "best seconds of the backend's exchange: (pairs, nbytes, iters)"},
    {"_plan", f_plan, METH_VARARGS, "planner testing hook"},
    {NULL, NULL, 0, NULL},
};
