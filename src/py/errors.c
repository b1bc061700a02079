/* Core errors as Python exceptions (the only place that makes them). */
#include "dgpy.h"

PyObject *dgpy_raise(const dg_error *err)
{
    PyObject *type;
    const char *msg = err->msg[0] ? err->msg : "unknown dgarray error";
    if (PyErr_Occurred())
        return NULL; /* a Python error raised underneath wins */
    switch (err->code) {
    case DG_ERR_VALUE: type = PyExc_ValueError; break;
    case DG_ERR_TYPE: type = PyExc_TypeError; break;
    case DG_ERR_INDEX: type = PyExc_IndexError; break;
    case DG_ERR_NOMEM: type = PyExc_MemoryError; break;
    case DG_ERR_NOTIMPL: type = PyExc_NotImplementedError; break;
    case DG_ERR_OVERFLOW: type = PyExc_OverflowError; break;
    case DG_ERR_INTERRUPTED: type = PyExc_KeyboardInterrupt; break;
    case DG_ERR_DEVICE_NOMEM: {
        PyObject *exc, *v;
        type = dgpy_st->OutOfDeviceMemoryError;
        exc = PyObject_CallFunction(type, "s", msg);
        if (!exc)
            return NULL;
        v = PyLong_FromLong(err->device);
        if (v) {
            PyObject_SetAttrString(exc, "device", v);
            Py_DECREF(v);
        }
        v = PyLong_FromSize_t(err->bytes);
        if (v) {
            PyObject_SetAttrString(exc, "bytes", v);
            Py_DECREF(v);
        }
        PyErr_SetObject(type, exc);
        Py_DECREF(exc);
        return NULL;
    }
    case DG_ERR_DEVICE: type = dgpy_st->DeviceError; break;
    default: type = PyExc_RuntimeError; break;
    }
    PyErr_SetString(type, msg);
    return NULL;
}

int dgpy_raise_int(const dg_error *err)
{
    dgpy_raise(err);
    return -1;
}
