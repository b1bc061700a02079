/* dgarray._core's functions for NumPy's surface beyond ufuncs, reductions,
 * products and indexing (dgarray/_sortsearch.py, _stats.py, ... give them
 * NumPy's semantics): binary searches, counts into bins, and marking a
 * result read-only as NumPy's views are. */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <limits.h>

#include "dg_surface.h"
#include "dg_view.h"

/* _set_readonly(a): a may no longer be written (NumPy's read-only results:
 * diagonal, broadcast views).  Returns a. */
static PyObject *f_set_readonly(PyObject *mod, PyObject *ao)
{
    dg_array *a = dgpy_arg_array(ao, "_set_readonly");
    (void)mod;
    if (!a)
        return NULL;
    a->readonly = 1;
    return Py_NewRef(ao);
}

/* _search(seq, v, right, mode): dg_array_search (mode 0 REPLICA, 1 SUM). */
static PyObject *f_search(PyObject *mod, PyObject *args)
{
    PyObject *so, *vo;
    dg_array *s, *v, *out = NULL;
    int right, mode;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOpi:_search", &so, &vo, &right, &mode) ||
        !(s = dgpy_arg_array(so, "_search")) || !(v = dgpy_arg_array(vo, "_search")))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_search(s, v, right, mode, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _count(x, w or None, nbins, mode, shift, pshift, prefix, edges=None,
 * apart=False): dg_array_count (mode DG_COUNT_*); prefix an int, or a pair
 * of ints for a radix count under two prefixes (nbins then covers both, a
 * half each); apart: each device's bins one after another (k * nbins,
 * REPLICA), for the reader to sum. */
static PyObject *f_count(PyObject *mod, PyObject *args)
{
    PyObject *xo, *wo, *eo = Py_None;
    int apart = 0;
    dg_array *x, *w = NULL, *out = NULL;
    dg_count_spec spec;
    long long nbins;
    unsigned long long prefix = 0, prefix2 = 0;
    PyObject *po;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    memset(&spec, 0, sizeof spec);
    if (!PyArg_ParseTuple(args, "OOLiiiO|Op:_count", &xo, &wo, &nbins, &spec.radix,
                          &spec.shift, &spec.pshift, &po, &eo, &apart))
        return NULL;
    spec.apart = apart;
    spec.nprefix = PyTuple_Check(po) ? 2 : 1;
    if (spec.nprefix == 2 ? !PyArg_ParseTuple(po, "KK:_count prefixes", &prefix, &prefix2)
                          : (prefix = PyLong_AsUnsignedLongLong(po)) == (unsigned long long)-1 &&
                                PyErr_Occurred())
        return NULL;
    if (!(x = dgpy_arg_array(xo, "_count")) ||
        (wo != Py_None && !(w = dgpy_arg_array(wo, "_count"))) ||
        (eo != Py_None && !(spec.edges = dgpy_arg_array(eo, "_count"))))
        return NULL;
    spec.nbins = nbins;
    spec.prefix = prefix;
    spec.prefix2 = prefix2;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_count(x, w, &spec, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _keep_keys(x, pshift, lo, hi, cap, pad, bins=None, ranks=None, nbins=0,
 * whole=False): dg_array_keep_keys, the elements of x whose order keys are
 * under the prefixes lo .. hi at pshift, padded with the value pad to a
 * length known before (cap: at least how many); with bins (int64 counts,
 * any mode; nbins > 0: sets of nbins, summed) and ranks (r0, r1), under the
 * bins of the ranks, found on the devices: then (kept, counts), padded
 * where pad is not None; whole: all of them or none (more than cap).
 * ranks a float q in [0, 1] instead: the ranks about quantile q of the keys
 * counted outside the last bin (dg_order_rest_ranks: of a float's numbers,
 * its NaNs in the first digit's last bin). */
static PyObject *f_keep_keys(PyObject *mod, PyObject *args)
{
    PyObject *xo, *po, *bo = Py_None, *ro = Py_None, *a, *b, *res;
    dg_array *x, *bins = NULL, *out = NULL, *cnt = NULL;
    int pshift;
    unsigned long long lo, hi;
    long long cap, r0 = 0, r1 = 0, nbins = 0;
    int whole = 0, rest = 0;
    int64_t rank[2];
    double q = 0.0;
    unsigned char pad[16];
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OiKKLO|OOLp:_keep_keys", &xo, &pshift, &lo, &hi, &cap, &po,
                          &bo, &ro, &nbins, &whole) ||
        !(x = dgpy_arg_array(xo, "_keep_keys")))
        return NULL;
    if (bo != Py_None && PyFloat_Check(ro)) {
        q = PyFloat_AsDouble(ro);
        rest = 1;
        if (!(q >= 0.0 && q <= 1.0)) {
            PyErr_SetString(PyExc_ValueError, "_keep_keys: q must be in [0, 1]");
            return NULL;
        }
    }
    if (bo != Py_None && (!(bins = dgpy_arg_array(bo, "_keep_keys")) ||
                          (!rest && !PyArg_ParseTuple(ro, "LL:_keep_keys ranks", &r0, &r1))))
        return NULL;
    rank[0] = r0;
    rank[1] = r1;
    memset(pad, 0, sizeof pad);
    if (po != Py_None && dgpy_scalar_bytes(po, x->dtype, pad) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_keep_keys(x, pshift, lo, hi, cap, po != Py_None ? pad : NULL, bins,
                            (int64_t)nbins, rank, rest ? &q : NULL, whole, &out,
                            bins ? &cnt : NULL, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    if (!bins)
        return dgpy_wrap(out);
    if (!(a = dgpy_wrap(out))) {
        dg_array_decref(cnt);
        return NULL;
    }
    if (!(b = dgpy_wrap(cnt))) {
        Py_DECREF(a);
        return NULL;
    }
    res = PyTuple_Pack(2, a, b);
    Py_DECREF(a);
    Py_DECREF(b);
    return res;
}

/* _view_dtype(a, dtype, byte_offset, part=False): a view of a's elements
 * (of a part of each, with part) as dtype (dg_array_view_dtype). */
static PyObject *f_view_dtype(PyObject *mod, PyObject *args)
{
    PyObject *ao, *dto;
    dg_array *a, *out = NULL;
    long long off;
    int dt, part = 0;
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOL|p:_view_dtype", &ao, &dto, &off, &part) ||
        !(a = dgpy_arg_array(ao, "_view_dtype")) || dgpy_dtype_from_obj(dto, &dt) < 0)
        return NULL;
    if (dg_array_view_dtype(a, dt, off, part, &out, &err) != DG_OK)
        return dgpy_raise(&err);
    return dgpy_wrap(out);
}

/* _dense_chunks(a): True if every chunk's view is dense in C order (its
 * byte strides those of a fresh block of its box). */
static PyObject *f_dense_chunks(PyObject *mod, PyObject *ao)
{
    dg_array *a = dgpy_arg_array(ao, "_dense_chunks");
    int i, ax;
    (void)mod;
    if (!a)
        return NULL;
    for (i = 0; i < a->nchunks; i++) {
        const dg_chunk *c = &a->chunks[i];
        int64_t s = dg_dtype_size(a->dtype);
        for (ax = a->ndim - 1; ax >= 0; ax--) {
            const int64_t n = dg_range_len(c->box.r[ax]);
            if (n > 1 && c->strides[ax] != s)
                Py_RETURN_FALSE;
            s *= n;
        }
    }
    Py_RETURN_TRUE;
}

/* _replace(a, b): a's contents become b's (its shape, dtype, chunks), as
 * ndarray.resize changes an array in place; b keeps them too.  Returns None. */
static PyObject *f_replace(PyObject *mod, PyObject *args)
{
    PyObject *ao, *bo;
    dg_array *b, *old;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_replace", &ao, &bo) || !dgpy_arg_array(ao, "_replace") ||
        !(b = dgpy_arg_array(bo, "_replace")))
        return NULL;
    old = ((DgArrayObject *)ao)->arr;
    dg_array_incref(b);
    ((DgArrayObject *)ao)->arr = b;
    dg_array_decref(old);
    Py_RETURN_NONE;
}

/* The lowest and one past the highest byte a chunk's view touches. */
static void chunk_bytes(const dg_chunk *c, int itemsize, int64_t *lo, int64_t *hi)
{
    int ax;
    *lo = *hi = c->offset;
    for (ax = 0; ax < c->box.ndim; ax++) {
        const int64_t span = (dg_range_len(c->box.r[ax]) - 1) * c->strides[ax];
        if (span < 0)
            *lo += span;
        else
            *hi += span;
    }
    *hi += itemsize;
}

/* _shares(a, b, exact): 1 if a chunk of a and one of b hold the same values
 * (one buffer: views of one another; a copy on write shares memory, not
 * values) (exact: and their views' byte ranges meet). */
static PyObject *f_shares(PyObject *mod, PyObject *args)
{
    PyObject *ao, *bo;
    dg_array *a, *b;
    int exact, i, j;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOp:_shares", &ao, &bo, &exact) ||
        !(a = dgpy_arg_array(ao, "_shares")) || !(b = dgpy_arg_array(bo, "_shares")))
        return NULL;
    for (i = 0; i < a->nchunks; i++)
        for (j = 0; j < b->nchunks; j++) {
            const dg_chunk *x = &a->chunks[i], *y = &b->chunks[j];
            int64_t xl, xh, yl, yh;
            if (x->buf != y->buf || !x->buf->ptr || dg_box_size(&x->box) == 0 ||
                dg_box_size(&y->box) == 0)
                continue;
            if (!exact)
                Py_RETURN_TRUE;
            chunk_bytes(x, dg_dtype_size(a->dtype), &xl, &xh);
            chunk_bytes(y, dg_dtype_size(b->dtype), &yl, &yh);
            if (xl < yh && yl < xh)
                Py_RETURN_TRUE;
        }
    Py_RETURN_FALSE;
}

/* _keep_first(a, identity): dg_array_keep_first with the identity given as
 * a 0-d ndarray (or scalar) converted to a's dtype. */
static PyObject *f_keep_first(PyObject *mod, PyObject *args)
{
    PyObject *ao, *vo;
    dg_array *a;
    unsigned char value[16];
    dg_error err = DG_ERROR_INIT;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_keep_first", &ao, &vo) ||
        !(a = dgpy_arg_array(ao, "_keep_first")))
        return NULL;
    memset(value, 0, sizeof value);
    if (dgpy_scalar_bytes(vo, a->dtype, value) < 0)
        return NULL;
    if (dg_array_keep_first(a, value, &err) != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* _dense_on(x, devs): dg_array_dense_on, x's values (REPLICA mode, any
 * layout) in one chunk on each device of the sequence devs. */
static PyObject *f_dense_on(PyObject *mod, PyObject *args)
{
    PyObject *xo, *dl, *seq;
    dg_array *x, *r = NULL, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    Py_ssize_t n, i;
    int *devs;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO:_dense_on", &xo, &dl) || !(x = dgpy_arg_array(xo, "_dense_on")))
        return NULL;
    if (!(seq = PySequence_Fast(dl, "_dense_on takes a sequence of devices")))
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    if (!(devs = (int *)PyMem_Calloc((size_t)(n ? n : 1), sizeof *devs))) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (i = 0; i < n; i++) {
        const long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred())
            goto done;
        devs[i] = v < INT_MIN ? INT_MIN : v > INT_MAX ? INT_MAX : (int)v;
    }
    if (dg_array_change_mode(x, DG_MODE_REPLICA, &r, &err) != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_dense_on(r, devs, (int)n, &out, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        dgpy_raise(&err);
done:
    if (r)
        dg_array_decref(r);
    PyMem_Free(devs);
    Py_DECREF(seq);
    return out ? dgpy_wrap(out) : NULL;
}

PyMethodDef dgpy_surface_methods[] = {
    {"_dense_on", f_dense_on, METH_VARARGS,
     "x's values in one chunk on each device named: (x, devs)"},
    {"_keep_first", f_keep_first, METH_VARARGS,
     "(a, identity): the first chunk holding an element keeps it, the others the identity"},
    {"_shares", f_shares, METH_VARARGS, "(a, b, exact): whether the arrays share memory"},
    {"_replace", f_replace, METH_VARARGS, "(a, b): a's contents become b's (resize in place)"},
    {"_dense_chunks", f_dense_chunks, METH_O, "whether every chunk is dense in C order"},
    {"_view_dtype", f_view_dtype, METH_VARARGS,
     "(a, dtype, byte_offset, part=False): a view as dtype (bit casts; parts: real, imag)"},
    {"_search", f_search, METH_VARARGS, "(seq, v, right, mode): positions of v in sorted seq"},
    {"_count", f_count, METH_VARARGS,
     "(x, w, nbins, mode, shift, pshift, prefix, edges=None, apart=False): counts (weight "
     "sums) per bin"},
    {"_keep_keys", f_keep_keys, METH_VARARGS,
     "(x, pshift, lo, hi, cap, pad, bins=None, ranks=None, nbins=0, whole=False): the "
     "elements whose keys are under lo .. hi, padded; with bins, under the bins of the ranks "
     "(r0, r1), or of those about quantile q (a float) of the keys outside the last bin: "
     "(kept, counts)"},
    {"_set_readonly", f_set_readonly, METH_O, "a may no longer be written; returns a"},
    {NULL, NULL, 0, NULL},
};
