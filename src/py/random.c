/* The binding of random fills: _fill_random (dgarray/random.py builds on it). */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <string.h>

/* _fill_random(array, dist, key0, key1, stream, a, b, lo, range): fills the
 * array (borrowed, REPLICA mode) in place with the draws of dg_fill_random
 * (src/core/dg_backend.h).  The Python layer checks the user's arguments;
 * what reaches here and does not fit the fill is a ValueError. */
static PyObject *f_fill_random(PyObject *mod, PyObject *args)
{
    PyObject *arr;
    int dist;
    unsigned int k0, k1;
    unsigned long long stream, lo, range;
    double pa, pb;
    dg_fill_desc f;
    dg_error err = DG_ERROR_INIT;
    dg_array *a;
    char kind;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!iIIKddKK", dgpy_st->array_type, &arr, &dist, &k0, &k1,
                          &stream, &pa, &pb, &lo, &range))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    kind = dg_dtype_kind(a->dtype);
    if (a->mode != DG_MODE_REPLICA) {
        PyErr_SetString(PyExc_ValueError, "a random fill needs an array in replica mode");
        return NULL;
    }
    if (dist == DG_RAND_UNIFORM || dist == DG_RAND_NORMAL) {
        if (a->dtype != DG_FLOAT32 && a->dtype != DG_FLOAT64) {
            PyErr_Format(PyExc_ValueError, "a random float fill of dtype %s",
                         dg_dtype_name(a->dtype));
            return NULL;
        }
    } else if (dist == DG_RAND_INTEGERS) {
        if (kind != 'b' && kind != 'i' && kind != 'u') {
            PyErr_Format(PyExc_ValueError, "a random integer fill of dtype %s",
                         dg_dtype_name(a->dtype));
            return NULL;
        }
        if (dg_dtype_size(a->dtype) <= 4 && (range == 0 || range > (1ull << 32))) {
            PyErr_Format(PyExc_ValueError, "a random %s fill of %llu values",
                         dg_dtype_name(a->dtype), range);
            return NULL;
        }
    } else {
        PyErr_Format(PyExc_ValueError, "unknown random distribution %d", dist);
        return NULL;
    }
    memset(&f, 0, sizeof(f));
    f.kind = DG_FILL_RANDOM;
    f.rnd.dist = dist;
    f.rnd.key[0] = k0;
    f.rnd.key[1] = k1;
    f.rnd.stream = stream;
    f.rnd.a = pa;
    f.rnd.b = pb;
    f.rnd.lo = lo;
    f.rnd.range = range;
    if (dg_array_fill(a, &f, NULL, &err) != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

PyMethodDef dgpy_random_methods[] = {
    {"_fill_random", f_fill_random, METH_VARARGS,
     "random fill in place: (array, dist, key0, key1, stream, a, b, lo, range)"},
    {NULL, NULL, 0, NULL},
};
