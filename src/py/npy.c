/* Everything dgarray does through NumPy's C-API: dtypes, ndarrays, scalars. */
#include "dgpy.h"

#define PY_ARRAY_UNIQUE_SYMBOL dgarray_ARRAY_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

static const int dg_to_npy[DG_NDTYPES] = {
    NPY_BOOL, NPY_INT8, NPY_UINT8, NPY_INT16, NPY_UINT16, NPY_INT32, NPY_UINT32,
    NPY_INT64, NPY_UINT64, NPY_FLOAT16, NPY_FLOAT32, NPY_FLOAT64, NPY_COMPLEX64,
    NPY_COMPLEX128,
};

int dgpy_npy_import(void)
{
    import_array1(-1);
    return 0;
}

/* dg dtype of a NumPy type number (native byte order assumed), or -1. */
static int dtype_of_typenum(int t)
{
    int i;
    /* long and longlong are both 64-bit on the platforms we build for */
    if (t == NPY_LONG && sizeof(long) == 8) t = NPY_INT64;
    if (t == NPY_ULONG && sizeof(long) == 8) t = NPY_UINT64;
    if (t == NPY_LONGLONG) t = NPY_INT64;
    if (t == NPY_ULONGLONG) t = NPY_UINT64;
    if (t == NPY_INT && sizeof(int) == 4) t = NPY_INT32;
    if (t == NPY_UINT && sizeof(int) == 4) t = NPY_UINT32;
    for (i = 0; i < DG_NDTYPES; i++)
        if (PyArray_EquivTypenums(dg_to_npy[i], t))
            return i;
    return -1;
}

int dgpy_dtype_of_descr(PyObject *descr)
{
    PyArray_Descr *d;
    if (!PyArray_DescrCheck(descr))
        return -1;
    d = (PyArray_Descr *)descr;
    if (!PyArray_ISNBO(d->byteorder))
        return -1;
    return dtype_of_typenum(d->type_num);
}

int dgpy_dtype_from_obj(PyObject *obj, int *out)
{
    PyArray_Descr *d = NULL;
    int dt;
    if (obj == Py_None) {
        *out = -1;
        return 0;
    }
    if (!PyArray_DescrConverter(obj, &d))
        return -1;
    dt = dgpy_dtype_of_descr((PyObject *)d);
    if (dt < 0) {
        PyErr_Format(PyExc_TypeError,
                     "dgarray does not support dtype %R: use bool, an integer, "
                     "float16/32/64 or complex64/128", (PyObject *)d);
        Py_DECREF(d);
        return -1;
    }
    Py_DECREF(d);
    *out = dt;
    return 0;
}

int dgpy_is_ndarray(PyObject *o) { return PyArray_Check(o); }
int dgpy_is_npscalar(PyObject *o) { return PyArray_IsScalar(o, Generic); }

int dgpy_is_int_index(PyObject *o)
{
    if (PyBool_Check(o) || PyArray_IsScalar(o, Bool))
        return 0;
    if (PyArray_Check(o))
        return PyArray_NDIM((PyArrayObject *)o) == 0;
    return PyIndex_Check(o);
}

PyObject *dgpy_as_ndarray(PyObject *o, int dt)
{
    PyObject *arr;
    int own;
    if (dt >= 0) {
        PyArray_Descr *d = PyArray_DescrFromType(dg_to_npy[dt]);
        if (!d)
            return NULL;
        /* steals d */
        return PyArray_FromAny(o, d, 0, 0, NPY_ARRAY_FORCECAST | NPY_ARRAY_ALIGNED, NULL);
    }
    arr = PyArray_FromAny(o, NULL, 0, 0, NPY_ARRAY_ALIGNED, NULL);
    if (!arr)
        return NULL;
    own = dtype_of_typenum(PyArray_TYPE((PyArrayObject *)arr));
    if (own < 0) {
        PyErr_Format(PyExc_TypeError,
                     "dgarray does not support dtype %R: use bool, an integer, "
                     "float16/32/64 or complex64/128",
                     (PyObject *)PyArray_DESCR((PyArrayObject *)arr));
        Py_DECREF(arr);
        return NULL;
    }
    if (!PyArray_ISNBO(PyArray_DESCR((PyArrayObject *)arr)->byteorder)) {
        PyObject *b = dgpy_as_ndarray(arr, own); /* to native byte order */
        Py_DECREF(arr);
        return b;
    }
    return arr;
}

void dgpy_ndarray_info(PyObject *arr, int *ndim, int64_t *shape, int64_t *strides,
                       char **data, int *dtype)
{
    PyArrayObject *a = (PyArrayObject *)arr;
    int i, nd = PyArray_NDIM(a);
    *ndim = nd;
    for (i = 0; i < nd; i++) {
        shape[i] = PyArray_DIM(a, i);
        strides[i] = PyArray_STRIDE(a, i);
    }
    *data = PyArray_BYTES(a);
    *dtype = dtype_of_typenum(PyArray_TYPE(a));
}

PyObject *dgpy_ndarray_new(int ndim, const int64_t *shape, int dtype)
{
    npy_intp dims[NPY_MAXDIMS];
    int i;
    for (i = 0; i < ndim; i++)
        dims[i] = (npy_intp)shape[i];
    return PyArray_SimpleNew(ndim, dims, dg_to_npy[dtype]);
}

int dgpy_scalar_bytes(PyObject *o, int dt, unsigned char out[16])
{
    PyArray_Descr *d = PyArray_DescrFromType(dg_to_npy[dt]);
    PyObject *arr;
    if (!d)
        return -1;
    arr = PyArray_FromAny(o, d, 0, 0, NPY_ARRAY_FORCECAST, NULL);
    if (!arr)
        return -1;
    if (PyArray_SIZE((PyArrayObject *)arr) != 1) {
        Py_DECREF(arr);
        PyErr_SetString(PyExc_ValueError, "expected a scalar");
        return -1;
    }
    memset(out, 0, 16);
    memcpy(out, PyArray_DATA((PyArrayObject *)arr), (size_t)dg_dtype_size(dt));
    Py_DECREF(arr);
    return 0;
}
