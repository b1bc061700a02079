/* Everything dgarray does through NumPy's C-API: dtypes, ndarrays, scalars. */
#include "dgpy.h"

#define PY_ARRAY_UNIQUE_SYMBOL dgarray_ARRAY_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/ufuncobject.h>

#include "cpu_ext.h"
#include "cpu_fft.h"

static const int dg_to_npy[DG_NDTYPES] = {
    NPY_BOOL, NPY_INT8, NPY_UINT8, NPY_INT16, NPY_UINT16, NPY_INT32, NPY_UINT32,
    NPY_INT64, NPY_UINT64, NPY_FLOAT16, NPY_FLOAT32, NPY_FLOAT64, NPY_COMPLEX64,
    NPY_COMPLEX128,
};

int dgpy_npy_import(void)
{
    import_array1(-1);
    if (_import_umath() < 0) /* PyUFunc_Type, for NumPy's inner loops */
        return -1;
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

int dgpy_ufunc_dtype_from_obj(PyObject *obj, int *out)
{
    /* a ufunc's dtype= / signature= may name a DType class (NumPy's NEP 42:
     * numpy.dtypes.Float64DType; NumPy 2.5's histogram passes type(dt)),
     * which numpy.dtype() would read as object: its instance is the dtype */
    if (PyType_Check(obj) && PyType_IsSubtype((PyTypeObject *)obj, &PyArrayDescr_Type) &&
        (PyTypeObject *)obj != &PyArrayDescr_Type) {
        PyObject *inst = PyObject_CallNoArgs(obj);
        int r;
        if (!inst)
            return -1;
        r = dgpy_dtype_from_obj(inst, out);
        Py_DECREF(inst);
        return r;
    }
    return dgpy_dtype_from_obj(obj, out);
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

/* NumPy's allocator (NEP 49) for the large arrays the devices are read
 * into: the blocks of hostmem.c, which keeps them touched for the next read
 * of that size. */
static void *hm_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return dgpy_hostmem_take(n, 0);
}

static void *hm_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    if (elsize != 0 && nelem > SIZE_MAX / elsize)
        return NULL;
    return dgpy_hostmem_take(nelem * elsize, 1);
}

static void *hm_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return dgpy_hostmem_resize(p, n);
}

static void hm_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    (void)n;
    dgpy_hostmem_give(p);
}

static PyDataMem_Handler hm_handler = {
    "dgarray_host_blocks", 1, {NULL, hm_malloc, hm_calloc, hm_realloc, hm_free}};

/* The handler as NumPy takes it; made once and kept (every array made with
 * it holds a reference too). */
static PyObject *hm_capsule(void)
{
    static PyObject *cap = NULL;
    if (cap == NULL)
        cap = PyCapsule_New(&hm_handler, "mem_handler", NULL);
    return cap;
}

PyObject *dgpy_ndarray_new(int ndim, const int64_t *shape, int dtype)
{
    npy_intp dims[NPY_MAXDIMS];
    size_t nbytes = (size_t)dg_dtype_size(dtype);
    PyObject *cap, *old, *out, *back;
    int i;
    for (i = 0; i < ndim; i++) {
        dims[i] = (npy_intp)shape[i];
        nbytes *= (size_t)shape[i];
    }
    if (nbytes < DGPY_HOSTMEM_MIN)
        return PyArray_SimpleNew(ndim, dims, dg_to_npy[dtype]);
    cap = hm_capsule();
    if (cap == NULL)
        return NULL;
    old = PyDataMem_SetHandler(cap);
    if (old == NULL)
        return NULL;
    out = PyArray_SimpleNew(ndim, dims, dg_to_npy[dtype]);
    back = PyDataMem_SetHandler(old);
    Py_DECREF(old);
    if (back == NULL) {
        Py_XDECREF(out);
        return NULL;
    }
    Py_DECREF(back);
    return out;
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

int dgpy_npy_fft_loops(dg_cpu_fft_loops *out)
{
    static const char *names[DG_NPFFT_NLOOPS] = {"fft", "ifft", "rfft_n_even", "rfft_n_odd",
                                                 "irfft"};
    static const int reals[2] = {NPY_FLOAT, NPY_DOUBLE};
    PyObject *mod = PyImport_ImportModule("numpy.fft._pocketfft_umath");
    int i, p, t;
    if (!mod)
        return -1;
    memset(out, 0, sizeof *out);
    for (i = 0; i < DG_NPFFT_NLOOPS; i++) {
        PyObject *f = PyObject_GetAttrString(mod, names[i]);
        PyUFuncObject *uf;
        if (!f) {
            Py_DECREF(mod);
            return -1;
        }
        if (strcmp(Py_TYPE(f)->tp_name, "numpy.ufunc") != 0) {
            Py_DECREF(f);
            Py_DECREF(mod);
            PyErr_Format(PyExc_TypeError, "numpy.fft._pocketfft_umath.%s is not a ufunc",
                         names[i]);
            return -1;
        }
        uf = (PyUFuncObject *)f;
        /* the loop whose second operand (the factor) is float32 / float64 */
        for (p = 0; p < 2; p++)
            for (t = 0; t < uf->ntypes; t++)
                if (uf->nargs == 3 && uf->types[t * 3 + 1] == reals[p] && uf->functions[t]) {
                    out->fn[i][p] = (dg_npy_gufunc_loop)uf->functions[t];
                    out->data[i][p] = uf->data ? uf->data[t] : NULL;
                    break;
                }
        Py_DECREF(f); /* the module keeps the ufunc, and with it the loops */
    }
    Py_DECREF(mod);
    return 0;
}

/* ---- NumPy's inner loops for the CPU backend (cpu_ext.h) ---- */

/* The ufunc's identity as bytes of dtype dt in out; 0 if it has none (None),
 * -1 with an exception.  An integer identity is stored in two's complement,
 * as NumPy does (-1 for bitwise_and is every bit set, whatever the sign). */
static int ufunc_identity_bytes(PyObject *uf, int dt, unsigned char out[16])
{
    PyObject *id = PyObject_GetAttrString(uf, "identity");
    int r = 1;
    if (!id)
        return -1;
    memset(out, 0, 16);
    if (id == Py_None) {
        r = 0;
    } else if (PyLong_Check(id) && strchr("biu", dg_dtype_kind(dt))) {
        long long v = PyLong_AsLongLong(id);
        if (v == -1 && PyErr_Occurred())
            r = -1;
        else
            memcpy(out, &v, (size_t)dg_dtype_size(dt)); /* little-endian low bytes */
    } else if (dgpy_scalar_bytes(id, dt, out) < 0) {
        r = -1;
    }
    Py_DECREF(id);
    return r;
}

/* 1 if NumPy's loop of `li` may replace dgarray's: it never calls into
 * Python (it runs on the CPU backend's worker threads) and computes what
 * dgarray promises.  Not handed: integer power of a signed type (a negative
 * exponent raises ValueError from inside the loop, taking the GIL), and
 * float16 nextafter (NumPy before 2.5 returns x where x == y, so
 * nextafter(+0, -0) is +0; dgarray follows C99 and NumPy 2.5: y). */
static int loop_handed(const dg_loop_info *li)
{
    if (li->ufunc == DG_UF_power && dg_dtype_kind(li->dtypes[0]) == 'i')
        return 0;
    if (li->ufunc == DG_UF_nextafter && li->dtypes[0] == DG_FLOAT16)
        return 0;
    return 1;
}

int dgpy_npy_hand_loops(void)
{
    const char *env = getenv("DGARRAY_CPU_LOOPS");
    int i, j, k, dt;
    if (env && *env && strcmp(env, "numpy") != 0) {
        if (strcmp(env, "own") == 0)
            return 0;
        PyErr_Format(PyExc_ValueError,
                     "DGARRAY_CPU_LOOPS must be 'numpy' (NumPy's own inner loops, the "
                     "default) or 'own' (dgarray's), not '%s'", env);
        return -1;
    }
    for (i = 0; i < dg_nloops; i++) {
        const dg_loop_info *li = &dg_loops[i];
        PyObject *o = li->ufunc > 0 && li->ufunc < DG_NUFUNCS ? dgpy_st->ufuncs[li->ufunc] : NULL;
        PyUFuncObject *uf;
        if (!o || !PyObject_TypeCheck(o, &PyUFunc_Type) || !loop_handed(li))
            continue;
        uf = (PyUFuncObject *)o;
        if (uf->nin != li->nin || uf->nout != li->nout || !uf->functions || !uf->types)
            continue;
        /* the first of NumPy's loops with these dtypes (int64 is both long
         * and longlong: long comes first, as NumPy resolves it) */
        for (j = 0; j < uf->ntypes; j++) {
            for (k = 0; k < uf->nargs; k++)
                if (dtype_of_typenum((unsigned char)uf->types[j * uf->nargs + k]) != li->dtypes[k])
                    break;
            if (k == uf->nargs && uf->functions[j])
                break;
        }
        if (j < uf->ntypes) {
            unsigned char id[16];
            int has = ufunc_identity_bytes(o, li->dtypes[li->nin], id);
            if (has < 0)
                return -1;
            /* PyUFuncGenericFunction and dg_cpu_ext_loop differ only in
             * npy_intp being intptr_t's typedef */
            dg_cpu_ext_set_loop(i, (dg_cpu_ext_loop)uf->functions[j], uf->data ? uf->data[j] : NULL,
                                has ? id : NULL);
        }
    }
    for (dt = 0; dt < DG_NDTYPES; dt++) {
        PyArray_Descr *d = PyArray_DescrFromType(dg_to_npy[dt]);
        PyArray_ArrFuncs *f = d ? PyDataType_GetArrFuncs(d) : NULL;
        if (!d)
            return -1;
        if (f) {
            dg_cpu_ext_set_arg(dt, 0, (dg_cpu_ext_argfn)f->argmax);
            dg_cpu_ext_set_arg(dt, 1, (dg_cpu_ext_argfn)f->argmin);
        }
        Py_DECREF(d);
    }
    return 0;
}
