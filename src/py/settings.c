/* dgarray._core's settings of the process (dgarray.config): the size below
 * which an array stays on one device, and the size of a region read in
 * place on another device. */
#include "dgpy.h"

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

PyMethodDef dgpy_settings_methods[] = {
    {"_set_min_split_bytes", f_set_min_split_bytes, METH_O, "set the default split size"},
    {"_get_min_split_bytes", f_get_min_split_bytes, METH_NOARGS, "the default split size"},
    {"_set_peer_read_bytes", f_set_peer_read_bytes, METH_O,
     "regions up to this many bytes on another device are read in place"},
    {"_get_peer_read_bytes", f_get_peer_read_bytes, METH_NOARGS, "see _set_peer_read_bytes"},
    {NULL, NULL, 0, NULL},
};
