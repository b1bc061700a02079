/* dgarray._core's switches and probes of deferred fusion (src/core/dg_fuse.h):
 * dgarray.config.fusion, and what tests and benchmarks ask of the pending
 * chain. */
#include "dgpy.h"
#include "dg_fuse.h"

static PyObject *f_set_fusion(PyObject *mod, PyObject *arg)
{
    dg_error err = DG_ERROR_INIT;
    int on = PyObject_IsTrue(arg);
    (void)mod;
    if (on < 0)
        return NULL;
    if (dg_fuse_set_enabled(on, &err) != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *f_get_fusion(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyBool_FromLong(dg_fuse_enabled());
}

/* Runs the pending chain now (enqueues it; waits for nothing). */
static PyObject *f_fusion_flush(PyObject *mod, PyObject *unused)
{
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    (void)unused;
    if (dg_fuse_flush(&err) != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* (steps pending, fused pieces run, steps they held) */
static PyObject *f_fusion_counts(PyObject *mod, PyObject *unused)
{
    int64_t runs = 0, steps = 0;
    (void)mod;
    (void)unused;
    dg_fuse_counts(&runs, &steps);
    return Py_BuildValue("(iLL)", dg_fuse_pending(), (long long)runs, (long long)steps);
}

PyMethodDef dgpy_fusion_methods[] = {
    {"_set_fusion", f_set_fusion, METH_O, "record elementwise chains and run them fused (bool)"},
    {"_get_fusion", f_get_fusion, METH_NOARGS, "see _set_fusion"},
    {"_fusion_flush", f_fusion_flush, METH_NOARGS, "run the pending elementwise chain"},
    {"_fusion_counts", f_fusion_counts, METH_NOARGS,
     "(pending, fused pieces run, steps they held)"},
    {NULL, NULL, 0, NULL},
};
