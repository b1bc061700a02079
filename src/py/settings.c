/* dgarray._core's settings of the process (dgarray.config): the size below
 * which an array stays on one device, the size of a region read in place on
 * another device, and the rule by which the CPU backend notes floating-point
 * errors. */
#include "dgpy.h"
#include "dg_fpe.h"

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

/* _set_fpe_soft(on) -> the old setting: the CPU backend notes floating-point
 * errors by the GPU kernels' software rule instead of fenv (dg_fpe_soft). */
static PyObject *f_set_fpe_soft(PyObject *mod, PyObject *arg)
{
    const int on = PyObject_IsTrue(arg);
    (void)mod;
    if (on < 0)
        return NULL;
    return PyBool_FromLong(dg_fpe_set_soft(on));
}

PyMethodDef dgpy_settings_methods[] = {
    {"_set_fpe_soft", f_set_fpe_soft, METH_O,
     "the CPU backend notes floating-point errors by the GPU's rule (DGARRAY_FPE=soft)"},
    {"_set_min_split_bytes", f_set_min_split_bytes, METH_O, "set the default split size"},
    {"_get_min_split_bytes", f_get_min_split_bytes, METH_NOARGS, "the default split size"},
    {"_set_peer_read_bytes", f_set_peer_read_bytes, METH_O,
     "regions up to this many bytes on another device are read in place"},
    {"_get_peer_read_bytes", f_get_peer_read_bytes, METH_NOARGS, "see _set_peer_read_bytes"},
    {NULL, NULL, 0, NULL},
};
