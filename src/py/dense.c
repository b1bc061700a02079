/* dgarray._core's dense linear algebra and FFTs: _dense (the backend's dense
 * slot on every chunk, dg_dense_run.h), _fft (dg_fft_run.h), and the CPU
 * backend's libraries: _set_cpu_lapack (NumPy's LAPACK, found by
 * dgarray._dense) and _set_cpu_fft (NumPy's pocketfft loops, found in
 * npy.c), _has_slot.  NumPy's semantics live in dgarray/_dense.py and dgarray/_fft.py. */
#include "dgpy.h"
#include "cpu_dense.h"
#include "cpu_fft.h"
#include "dg_dense_run.h"
#include "dg_fft_run.h"

/* The array of operand o (a DistributedArray or None -> NULL); -1 with a
 * TypeError for anything else. */
static int opt_array(PyObject *o, dg_array **out)
{
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    if (!DgArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "_dense operands are DistributedArrays or None, not "
                     "%.100s", Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = ((DgArrayObject *)o)->arr;
    return 0;
}

/* _dense((op, lower, trans, right, unit, job, m, n, k), a, b, u, vt, w, ipiv, info):
 * runs the op in place on the operands (None where unused); see
 * dg_array_dense.  Returns None; failures per matrix land in info. */
static PyObject *f_dense(PyObject *mod, PyObject *args)
{
    PyObject *spec, *o[DG_DR_N];
    dg_array *ops[DG_DR_N];
    dg_dense_call c;
    dg_error err = DG_ERROR_INIT;
    long long m, n, k;
    int r;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOOOOOOO:_dense", &spec, &o[DG_DR_A], &o[DG_DR_B],
                          &o[DG_DR_U], &o[DG_DR_VT], &o[DG_DR_W], &o[DG_DR_IPIV],
                          &o[DG_DR_INFO]))
        return NULL;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(spec, "iiiiiiLLL:_dense spec", &c.op, &c.lower, &c.trans, &c.right,
                          &c.unit, &c.job, &m, &n, &k))
        return NULL;
    c.m = m;
    c.n = n;
    c.k = k;
    for (r = 0; r < DG_DR_N; r++)
        if (opt_array(o[r], &ops[r]) < 0)
            return NULL;
    /* with the GIL: the call only enqueues work */
    if (dg_array_dense(&c, ops, &err) != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* _fft(a, kind, forward, scale, axes, ns): a new array, the transform of a
 * (dg_array_fft). */
static PyObject *f_fft(PyObject *mod, PyObject *args)
{
    PyObject *ao, *axo, *no;
    dg_fft_call c;
    dg_array *out = NULL;
    dg_error err = DG_ERROR_INIT;
    Py_ssize_t i, r;
    (void)mod;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "O!iidOO:_fft", dgpy_st->array_type, &ao, &c.kind, &c.forward,
                          &c.scale, &axo, &no))
        return NULL;
    if (!PyTuple_Check(axo) || !PyTuple_Check(no) || PyTuple_GET_SIZE(axo) != PyTuple_GET_SIZE(no)
        || PyTuple_GET_SIZE(axo) < 1 || PyTuple_GET_SIZE(axo) > DG_FFT_MAXRANK) {
        PyErr_Format(PyExc_ValueError, "_fft takes tuples of 1 to %d axes and lengths",
                     DG_FFT_MAXRANK);
        return NULL;
    }
    r = PyTuple_GET_SIZE(axo);
    c.rank = (int)r;
    for (i = 0; i < r; i++) {
        long a = PyLong_AsLong(PyTuple_GET_ITEM(axo, i));
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(no, i));
        if (PyErr_Occurred())
            return NULL;
        c.axes[i] = (int)a;
        c.n[i] = n;
    }
    if (dg_array_fft(((DgArrayObject *)ao)->arr, &c, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _set_cpu_lapack(((s, d, c, z) addresses per routine of dg_cpu_lapack_routine)
 * or None): NumPy's LAPACK for the CPU backend's dense slot.  Returns
 * whether the CPU backend runs (nothing else takes them). */
static PyObject *f_set_cpu_lapack(PyObject *mod, PyObject *fns)
{
    dg_cpu_lapack t;
    Py_ssize_t r, j;
    (void)mod;
    if (strcmp(dgpy_st->be->name, "cpu") != 0)
        Py_RETURN_FALSE;
    if (fns == Py_None) {
        dg_cpu_dense_set_lapack(NULL);
        Py_RETURN_TRUE;
    }
    if (!PyTuple_Check(fns) || PyTuple_GET_SIZE(fns) != DG_LAPACK_NROUTINES) {
        PyErr_Format(PyExc_ValueError, "_set_cpu_lapack needs %d tuples of 4 addresses",
                     DG_LAPACK_NROUTINES);
        return NULL;
    }
    for (r = 0; r < DG_LAPACK_NROUTINES; r++) {
        PyObject *row = PyTuple_GET_ITEM(fns, r);
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 4) {
            PyErr_SetString(PyExc_ValueError, "_set_cpu_lapack needs 4 addresses per routine");
            return NULL;
        }
        for (j = 0; j < 4; j++) {
            unsigned long long p = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(row, j));
            if (PyErr_Occurred())
                return NULL;
            if (!p) {
                PyErr_SetString(PyExc_ValueError, "_set_cpu_lapack: a routine's address is 0");
                return NULL;
            }
            /* a function's address as ctypes gives it (an implementation-
             * defined conversion every platform dgarray runs on defines) */
            t.fn[r][j] = (void (*)(void))(uintptr_t)p;
        }
    }
    dg_cpu_dense_set_lapack(&t);
    Py_RETURN_TRUE;
}

/* _set_cpu_fft(on): NumPy's pocketfft loops for the CPU backend's fft slot
 * (on), or none.  Returns whether the CPU backend runs. */
static PyObject *f_set_cpu_fft(PyObject *mod, PyObject *on)
{
    dg_cpu_fft_loops l;
    int want = PyObject_IsTrue(on);
    (void)mod;
    if (want < 0)
        return NULL;
    if (strcmp(dgpy_st->be->name, "cpu") != 0)
        Py_RETURN_FALSE;
    if (!want) {
        dg_cpu_fft_set_loops(NULL);
        Py_RETURN_TRUE;
    }
    if (dgpy_npy_fft_loops(&l) < 0)
        return NULL;
    dg_cpu_fft_set_loops(&l);
    if (!dg_cpu_fft_available()) {
        PyErr_SetString(PyExc_RuntimeError, "NumPy's pocketfft loops were not all found");
        return NULL;
    }
    Py_RETURN_TRUE;
}

/* _has_slot("dense" or "fft"): whether the backend has the slot (and, on the
 * CPU backend, the library behind it). */
static PyObject *f_has_slot(PyObject *mod, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    const int cpu = strcmp(dgpy_st->be->name, "cpu") == 0;
    (void)mod;
    if (!s)
        return NULL;
    if (strcmp(s, "dense") == 0)
        return PyBool_FromLong(dg_be_has(dgpy_st->be, DG_SLOT_DENSE) &&
                               (!cpu || dg_cpu_dense_available()));
    if (strcmp(s, "fft") == 0)
        return PyBool_FromLong(dg_be_has(dgpy_st->be, DG_SLOT_FFT) &&
                               (!cpu || dg_cpu_fft_available()));
    PyErr_Format(PyExc_ValueError, "_has_slot takes 'dense' or 'fft', not '%s'", s);
    return NULL;
}

PyMethodDef dgpy_dense_methods[] = {
    {"_dense", f_dense, METH_VARARGS, "(spec, a, b, u, vt, w, ipiv, info): a dense op in place"},
    {"_fft", f_fft, METH_VARARGS, "(a, kind, forward, scale, axes, ns) -> the transform"},
    {"_set_cpu_lapack", f_set_cpu_lapack, METH_O, "NumPy's LAPACK for the CPU backend"},
    {"_set_cpu_fft", f_set_cpu_fft, METH_O, "NumPy's pocketfft loops for the CPU backend"},
    {"_has_slot", f_has_slot, METH_O, "('dense' or 'fft'): whether the backend has it"},
    {NULL, NULL, 0, NULL}};
