/* NumPy ufuncs on DistributedArrays: what needs Python.  Parsing the call
 * (operands, out= / where= / dtype= / casting= / signature=), NumPy's type
 * resolution (its answer, cached), broadcasting with NumPy's messages,
 * uploading host operands, a host out=, and raising.  What the call means
 * on distributed arrays (results, out= in place or cast into, overlap,
 * where=) is the core's: src/core/dg_ufunc_call.c. */
#include "dgpy.h"
#include "dg_ufunc_call.h"

/* Markers for weak Python scalars in type-resolution keys (NEP 50). */
enum { WEAK_INT = 100, WEAK_FLOAT, WEAK_COMPLEX };

enum { OP_ARRAY, OP_HOST, OP_SCALAR };

typedef struct operand {
    int kind;
    PyObject *obj;      /* borrowed: the caller's object */
    PyObject *host;     /* OP_HOST / OP_SCALAR: owned ndarray or NULL */
    int dtype;          /* dg dtype, or a WEAK_* marker */
    int ndim;
    int64_t shape[DG_MAXDIM];
} operand;

static void operands_clear(operand *ops, int n)
{
    int i;
    for (i = 0; i < n; i++)
        Py_CLEAR(ops[i].host);
}

/* Sorts an input object into array / host array / scalar.  Returns 0, or 1
 * if the type is foreign (the caller returns NotImplemented), or -1. */
static int classify(PyObject *o, operand *op)
{
    memset(op, 0, sizeof(*op));
    op->obj = o;
    if (DgArray_Check(o)) {
        dg_array *a = ((DgArrayObject *)o)->arr;
        op->kind = OP_ARRAY;
        op->dtype = a->dtype;
        op->ndim = a->ndim;
        memcpy(op->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
        return 0;
    }
    if (PyBool_Check(o)) {
        op->kind = OP_SCALAR;
        op->dtype = DG_BOOL;
        return 0;
    }
    if (!dgpy_is_npscalar(o) && !dgpy_is_ndarray(o)) {
        if (PyLong_Check(o)) { op->kind = OP_SCALAR; op->dtype = WEAK_INT; return 0; }
        if (PyFloat_Check(o)) { op->kind = OP_SCALAR; op->dtype = WEAK_FLOAT; return 0; }
        if (PyComplex_Check(o)) { op->kind = OP_SCALAR; op->dtype = WEAK_COMPLEX; return 0; }
        if (!PyList_Check(o) && !PyTuple_Check(o))
            return 1;
    }
    op->host = dgpy_as_ndarray(o, -1);
    if (!op->host)
        return -1;
    {
        int64_t strides[DG_MAXDIM];
        char *data;
        dgpy_ndarray_info(op->host, &op->ndim, op->shape, strides, &data, &op->dtype);
    }
    op->kind = op->ndim == 0 ? OP_SCALAR : OP_HOST;
    return 0;
}

/* ---- type resolution ---------------------------------------------------------- */

static PyObject *marker_obj(int m)
{
    if (m == WEAK_INT) return (PyObject *)&PyLong_Type;
    if (m == WEAK_FLOAT) return (PyObject *)&PyFloat_Type;
    if (m == WEAK_COMPLEX) return (PyObject *)&PyComplex_Type;
    if (m < 0) return Py_None;
    return dgpy_st->descrs[m];
}

/* In front of resolve's dict (whose key is a tuple of Python ints: building
 * and hashing it was a tenth of an elementwise call's host time), a table
 * in C of the answers found: direct-mapped by a hash of the call's dtypes,
 * a miss (or a collision) goes the dict's way and overwrites the slot.
 * Only calls whose casting= is absent or one of NumPy's five names are
 * kept (cast_code); the GIL guards the table. */
#define RC_SLOTS 512
#define RC_MAXOPS 6
typedef struct rc_entry {
    int used, id, nin, nout, sig, cast, loop;
    int dt[RC_MAXOPS], loop_dt[RC_MAXOPS];
} rc_entry;
static rc_entry rc_table[RC_SLOTS];

/* 0-4 for casting= "no", "equiv", "safe", "same_kind" (also the default,
 * castingp NULL), "unsafe"; -1 for anything else (the dict's way). */
static int cast_code(PyObject *castingp)
{
    static const char *const names[] = {"no", "equiv", "safe", "same_kind", "unsafe"};
    int i;
    if (!castingp)
        return 3;
    if (!PyUnicode_CheckExact(castingp))
        return -1;
    for (i = 0; i < 5; i++)
        if (PyUnicode_CompareWithASCIIString(castingp, names[i]) == 0)
            return i;
    return -1;
}

static rc_entry *rc_slot(int id, int nin, int nout, const int *dt, int sig, int cast)
{
    uint32_t h = 2166136261u;
    int i;
    h = (h ^ (uint32_t)id) * 16777619u;
    h = (h ^ (uint32_t)(sig + 7 * cast)) * 16777619u;
    for (i = 0; i < nin + nout; i++)
        h = (h ^ (uint32_t)dt[i]) * 16777619u;
    return &rc_table[(h ^ (h >> 15)) % RC_SLOTS];
}

/* The answer kept for this call, or -1 (none kept: the caller resolves). */
static int rc_find(int id, int nin, int nout, const int *dt, int sig, int cast, int *loop_dt)
{
    const rc_entry *e;
    int i;
    if (cast < 0 || nin + nout > RC_MAXOPS)
        return -1;
    e = rc_slot(id, nin, nout, dt, sig, cast);
    if (!e->used || e->id != id || e->nin != nin || e->nout != nout || e->sig != sig ||
        e->cast != cast)
        return -1;
    for (i = 0; i < nin + nout; i++)
        if (e->dt[i] != dt[i])
            return -1;
    memcpy(loop_dt, e->loop_dt, sizeof(int) * (size_t)(nin + nout));
    return e->loop;
}

static void rc_put(int id, int nin, int nout, const int *dt, int sig, int cast, int loop,
                   const int *loop_dt)
{
    rc_entry *e;
    if (cast < 0 || nin + nout > RC_MAXOPS || loop < 0)
        return;
    e = rc_slot(id, nin, nout, dt, sig, cast);
    e->used = 1;
    e->id = id;
    e->nin = nin;
    e->nout = nout;
    e->sig = sig;
    e->cast = cast;
    e->loop = loop;
    memcpy(e->dt, dt, sizeof(int) * (size_t)(nin + nout));
    memcpy(e->loop_dt, loop_dt, sizeof(int) * (size_t)(nin + nout));
}

/* NumPy's loop dtypes for these operand dtypes: fills loop_dt[nin+nout] and
 * returns the dg loop id, or -1 with an exception (NumPy's). */
static int resolve(int id, PyObject *ufunc, int nin, int nout, const int *in_dt,
                   const int *out_dt, int sig_dt, PyObject *casting, int *loop_dt)
{
    PyObject *key, *hit, *dts = NULL, *res = NULL, *kw = NULL, *f = NULL;
    int i, loop = -1, n = nin + nout;

    key = PyTuple_New(n + 3);
    if (!key)
        return -1;
    PyTuple_SET_ITEM(key, 0, PyLong_FromLong(id));
    for (i = 0; i < nin; i++)
        PyTuple_SET_ITEM(key, 1 + i, PyLong_FromLong(in_dt[i]));
    for (i = 0; i < nout; i++)
        PyTuple_SET_ITEM(key, 1 + nin + i, PyLong_FromLong(out_dt[i]));
    PyTuple_SET_ITEM(key, 1 + n, PyLong_FromLong(sig_dt));
    PyTuple_SET_ITEM(key, 2 + n, Py_NewRef(casting));
    hit = PyDict_GetItemWithError(dgpy_st->resolve_cache, key);
    if (hit) {
        PyObject *dt = PyTuple_GET_ITEM(hit, 1);
        loop = (int)PyLong_AsLong(PyTuple_GET_ITEM(hit, 0));
        for (i = 0; i < n; i++)
            loop_dt[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(dt, i));
        Py_DECREF(key);
        return loop;
    }
    if (PyErr_Occurred())
        goto done;

    dts = PyTuple_New(n);
    if (!dts)
        goto done;
    for (i = 0; i < nin; i++)
        PyTuple_SET_ITEM(dts, i, Py_NewRef(marker_obj(in_dt[i])));
    for (i = 0; i < nout; i++)
        PyTuple_SET_ITEM(dts, nin + i, Py_NewRef(marker_obj(out_dt[i])));
    kw = PyDict_New();
    if (!kw || PyDict_SetItemString(kw, "casting", casting) < 0)
        goto done;
    if (sig_dt >= 0) {
        PyObject *sig = PyTuple_New(n);
        if (!sig)
            goto done;
        for (i = 0; i < n; i++)
            PyTuple_SET_ITEM(sig, i, Py_NewRef(i < nin ? Py_None : dgpy_st->descrs[sig_dt]));
        if (PyDict_SetItemString(kw, "signature", sig) < 0) {
            Py_DECREF(sig);
            goto done;
        }
        Py_DECREF(sig);
    }
    f = PyObject_GetAttrString(ufunc, "resolve_dtypes");
    if (!f)
        goto done;
    {
        PyObject *args = PyTuple_Pack(1, dts);
        if (!args)
            goto done;
        res = PyObject_Call(f, args, kw);
        Py_DECREF(args);
    }
    if (!res)
        goto done;
    for (i = 0; i < n; i++) {
        int dt = dgpy_dtype_of_descr(PyTuple_GET_ITEM(res, i));
        if (dt < 0) {
            PyErr_Format(PyExc_TypeError,
                         "ufunc '%s' resolves to dtype %R, which dgarray does not support",
                         dg_ufunc_name(id), PyTuple_GET_ITEM(res, i));
            goto done;
        }
        loop_dt[i] = dt;
    }
    loop = dg_loop_find(id, loop_dt);
    if (loop < 0) {
        PyErr_Format(PyExc_TypeError, "dgarray has no loop for ufunc '%s' with dtypes %R",
                     dg_ufunc_name(id), res);
        goto done;
    }
    {
        PyObject *dtl = PyTuple_New(n), *val;
        if (!dtl) {
            loop = -1;
            goto done;
        }
        for (i = 0; i < n; i++)
            PyTuple_SET_ITEM(dtl, i, PyLong_FromLong(loop_dt[i]));
        val = Py_BuildValue("(iN)", loop, dtl);
        if (!val || PyDict_SetItem(dgpy_st->resolve_cache, key, val) < 0) {
            Py_XDECREF(val);
            loop = -1;
            goto done;
        }
        Py_DECREF(val);
    }
done:
    Py_XDECREF(key);
    Py_XDECREF(dts);
    Py_XDECREF(kw);
    Py_XDECREF(f);
    Py_XDECREF(res);
    if (loop < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "ufunc type resolution failed");
    return loop;
}

/* ---- shapes --------------------------------------------------------------------- */

static PyObject *shape_str(int ndim, const int64_t *shape)
{
    /* NumPy's form in its messages: (3,4), (10,), () */
    char buf[DG_MAXDIM * 22 + 4];
    size_t k = 0;
    int i;
    buf[k++] = '(';
    for (i = 0; i < ndim && i < DG_MAXDIM; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, i ? ",%lld" : "%lld",
                              (long long)shape[i]);
    if (ndim == 1)
        buf[k++] = ',';
    buf[k++] = ')';
    buf[k] = '\0';
    return PyUnicode_FromString(buf);
}

/* Broadcasts shape (nd, sh) into (*bnd, bsh).  Returns 0, or -1 if the shapes
 * do not broadcast. */
static int broadcast_into(int *bnd, int64_t *bsh, int nd, const int64_t *sh)
{
    int i;
    if (nd > *bnd) {
        int shift = nd - *bnd;
        memmove(bsh + shift, bsh, sizeof(int64_t) * (size_t)*bnd);
        for (i = 0; i < shift; i++)
            bsh[i] = 1;
        *bnd = nd;
    }
    for (i = 0; i < nd; i++) {
        int64_t *b = &bsh[*bnd - nd + i];
        int64_t s = sh[i];
        if (*b == s || s == 1)
            continue;
        if (*b == 1)
            *b = s;
        else
            return -1;
    }
    return 0;
}

static void broadcast_error(operand *ops, int n)
{
    PyObject *parts = PyUnicode_FromString("");
    int i;
    for (i = 0; i < n && parts; i++) {
        PyObject *s;
        if (ops[i].kind == OP_SCALAR)
            continue;
        s = shape_str(ops[i].ndim, ops[i].shape);
        if (!s) {
            Py_CLEAR(parts);
            break;
        }
        PyUnicode_Append(&parts, s);
        Py_DECREF(s);
        if (parts)
            PyUnicode_AppendAndDel(&parts, PyUnicode_FromString(" "));
    }
    if (parts) {
        PyErr_Format(PyExc_ValueError,
                     "operands could not be broadcast together with shapes %U", parts);
        Py_DECREF(parts);
    }
}

/* ---- arrays for operands ---------------------------------------------------------- */

/* A layout for a host operand of shape (nd, sh): the reference array's own
 * layout if the shapes agree, else a full copy on each device the reference
 * uses.  *out is PyMem-allocated. */
static int host_layout(const dg_array *ref, int nd, const int64_t *sh, dg_plan_chunk **out,
                       int *n)
{
    int i, k = 0, same = ref->ndim == nd;
    dg_plan_chunk *l;
    for (i = 0; same && i < nd; i++)
        same = ref->shape[i] == sh[i];
    l = (dg_plan_chunk *)PyMem_Calloc((size_t)ref->nchunks, sizeof(dg_plan_chunk));
    if (!l) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < ref->nchunks; i++) {
        int dev = ref->chunks[i].device, j, seen = 0;
        if (same) {
            l[k].device = dev;
            l[k].box = ref->chunks[i].box;
            k++;
            continue;
        }
        for (j = 0; j < k; j++)
            seen |= l[j].device == dev;
        if (seen)
            continue;
        l[k].device = dev;
        dg_box_full(&l[k].box, nd, sh);
        k++;
    }
    *out = l;
    *n = k;
    return 0;
}

/* A core array in dtype dt and REPLICA mode for an array or host operand, laid
 * out near `ref` when it comes from the host.  New reference in *out. */
static int operand_array(operand *op, int dt, const dg_array *ref, dg_array **out)
{
    dg_error err = DG_ERROR_INIT;
    if (op->kind == OP_ARRAY) {
        if (dg_ufunc_operand(((DgArrayObject *)op->obj)->arr, dt, out, &err) != DG_OK)
            return dgpy_raise_int(&err);
        return 0;
    } else {
        PyObject *h = dgpy_as_ndarray(op->host, dt), *w;
        dg_plan_chunk *l;
        int n;
        if (!h)
            return -1;
        if (host_layout(ref, op->ndim, op->shape, &l, &n) < 0) {
            Py_DECREF(h);
            return -1;
        }
        w = dgpy_from_host(h, l, n, DG_MODE_REPLICA);
        PyMem_Free(l);
        Py_DECREF(h);
        if (!w)
            return -1;
        *out = ((DgArrayObject *)w)->arr;
        dg_array_incref(*out);
        Py_DECREF(w);
        return 0;
    }
}

/* ---- the call ----------------------------------------------------------------------- */

static const char *const known_kw[] = {"out", "where", "dtype", "casting", "signature",
                                       "order", "subok", NULL};

/* Parses out= into outs[nout] (borrowed, NULL for none). */
static int parse_out(PyObject *out, int nout, PyObject **outs)
{
    int i;
    for (i = 0; i < nout; i++)
        outs[i] = NULL;
    if (!out || out == Py_None)
        return 0;
    if (PyTuple_Check(out)) {
        if (PyTuple_GET_SIZE(out) != nout) {
            PyErr_SetString(PyExc_ValueError,
                            "The 'out' tuple must have exactly one entry per ufunc output");
            return -1;
        }
        for (i = 0; i < nout; i++)
            outs[i] = PyTuple_GET_ITEM(out, i) == Py_None ? NULL : PyTuple_GET_ITEM(out, i);
        return 0;
    }
    if (nout != 1) {
        PyErr_SetString(PyExc_TypeError,
                        "'out' must be a tuple of arrays for a ufunc with several outputs");
        return -1;
    }
    outs[0] = out;
    return 0;
}

/* NumPy 2 compares integer arrays with Python ints outside their dtype
 * (uint8_array < -1 is all False).  When the scalar of comparison `id` at
 * position `pos` did not fit the loop's dtype (OverflowError set), rewrites
 * the call into a comparison with the dtype's bound that gives the same
 * constant (*loop, and the 16 bytes of the scalar's value at `scalar`); 0
 * done, -1 with the error kept otherwise. */
static int out_of_range_compare(int id, int pos, const operand *op, const int *loop_dt,
                                int *loop, unsigned char *scalar)
{
    /* result of "array OP v" for v above the dtype / below it */
    static const struct { int uf; char above, below; } table[] = {
        {DG_UF_less, 1, 0}, {DG_UF_less_equal, 1, 0}, {DG_UF_greater, 0, 1},
        {DG_UF_greater_equal, 0, 1}, {DG_UF_equal, 0, 0}, {DG_UF_not_equal, 1, 1}};
    int dt = loop_dt[pos], k, above, c, uf, dts[3];
    char kind = dg_dtype_kind(dt);
    size_t n = sizeof table / sizeof table[0];
    PyObject *obj = op->host ? op->host : op->obj;
    if (!PyErr_ExceptionMatches(PyExc_OverflowError) || !PyLong_Check(obj) ||
        (kind != 'i' && kind != 'u'))
        return -1;
    for (k = 0; k < (int)n && table[k].uf != id; k++)
        ;
    if (k == (int)n)
        return -1;
    PyErr_Clear();
    {
        PyObject *zero = PyLong_FromLong(0);
        above = zero ? PyObject_RichCompareBool(obj, zero, Py_GT) : -1;
        Py_XDECREF(zero);
        if (above < 0)
            return -1;
    }
    if (pos == 1) {
        c = above ? table[k].above : table[k].below;
    } else { /* "v OP array" is "array OP' v" with OP' mirrored */
        int m = id == DG_UF_less ? DG_UF_greater : id == DG_UF_greater ? DG_UF_less :
                id == DG_UF_less_equal ? DG_UF_greater_equal :
                id == DG_UF_greater_equal ? DG_UF_less_equal : id;
        for (k = 0; table[k].uf != m; k++)
            ;
        c = above ? table[k].above : table[k].below;
    }
    /* array <= max (always true), array > max (never), array >= min (always),
     * array < min (never); mirrored when the scalar is on the left */
    if (above)
        uf = pos == 1 ? (c ? DG_UF_less_equal : DG_UF_greater)
                      : (c ? DG_UF_greater_equal : DG_UF_less);
    else
        uf = pos == 1 ? (c ? DG_UF_greater_equal : DG_UF_less)
                      : (c ? DG_UF_less_equal : DG_UF_greater);
    dts[0] = dts[1] = dt;
    dts[2] = DG_BOOL;
    if (loop_dt[0] != loop_dt[1] || (*loop = dg_loop_find(uf, dts)) < 0) {
        PyErr_Format(PyExc_OverflowError, "Python integer out of bounds for %s",
                     dg_dtype_name(dt));
        return -1;
    }
    memset(scalar, 0, 16);
    if (kind == 'u') {
        if (above)
            memset(scalar, 0xFF, (size_t)dg_dtype_size(dt));
    } else {
        int isz = dg_dtype_size(dt);
        memset(scalar, above ? 0xFF : 0x00, (size_t)isz);
        scalar[isz - 1] = above ? 0x7F : 0x80;
    }
    return 0;
}

/* NumPy raises for an integer power with a negative exponent anywhere: the
 * exponent `op` (a scalar already in `val`, of signed dtype dt, or an array,
 * checked by a reduction: one synchronisation).  0 fine, -1 with ValueError. */
static int negative_exponent(const operand *op, int dt, const unsigned char *val)
{
    int neg;
    if (op->kind == OP_SCALAR) {
        int64_t v = 0;
        switch (dg_dtype_size(dt)) {
        case 1: { int8_t x; memcpy(&x, val, 1); v = x; break; }
        case 2: { int16_t x; memcpy(&x, val, 2); v = x; break; }
        case 4: { int32_t x; memcpy(&x, val, 4); v = x; break; }
        default: memcpy(&v, val, 8);
        }
        neg = v < 0;
    } else {
        PyObject *f = dgpy_py(DGPY_PY_any_negative), *r;
        r = f ? PyObject_CallOneArg(f, op->host ? op->host : op->obj) : NULL;
        neg = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (neg < 0)
            return -1;
    }
    if (neg) {
        PyErr_SetString(PyExc_ValueError, "Integers to negative integer powers are not allowed.");
        return -1;
    }
    return 0;
}

/* What the keywords and the positional outputs of a call say: out= into
 * outs[nout] (borrowed, NULL for none), where= and casting= (borrowed or
 * NULL), the dtype= or signature= dtype into *sig_dt (-1: none).  0, or -1
 * with NumPy's exception. */
static int parse_kwargs(int id, int nin, int nout, PyObject *const *args, int nargs,
                        PyObject *kwargs, PyObject **outs, PyObject **wherep,
                        PyObject **castingp, int *sig_dt)
{
    PyObject *dtypep = NULL, *signature = NULL, *outp = NULL;
    int i;
    *wherep = *castingp = NULL;
    *sig_dt = -1;
    outs[0] = outs[1] = NULL;
    if (kwargs) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(kwargs, &pos, &k, &v)) {
            const char *ks = PyUnicode_AsUTF8(k);
            int j, ok = 0;
            if (!ks)
                return -1;
            for (j = 0; known_kw[j]; j++)
                ok |= strcmp(ks, known_kw[j]) == 0;
            if (!ok) {
                PyErr_Format(PyExc_TypeError, "'%s' is an invalid keyword to ufunc '%s'", ks,
                             dg_ufunc_name(id));
                return -1;
            }
        }
        outp = PyDict_GetItemString(kwargs, "out");
        *wherep = PyDict_GetItemString(kwargs, "where");
        dtypep = PyDict_GetItemString(kwargs, "dtype");
        *castingp = PyDict_GetItemString(kwargs, "casting");
        signature = PyDict_GetItemString(kwargs, "signature");
    }
    if (nargs > nin) {
        if (outp) {
            PyErr_SetString(PyExc_TypeError,
                            "cannot specify 'out' as both a positional and keyword argument");
            return -1;
        }
        for (i = nin; i < nargs; i++)
            outs[i - nin] = args[i] == Py_None ? NULL : args[i];
    } else if (parse_out(outp, nout, outs) < 0) {
        return -1;
    }
    if (dtypep && dtypep != Py_None) {
        if (dgpy_ufunc_dtype_from_obj(dtypep, sig_dt) < 0)
            return -1;
    } else if (signature && signature != Py_None) {
        PyObject *last = signature;
        if (PyTuple_Check(signature) && PyTuple_GET_SIZE(signature) > 0)
            last = PyTuple_GET_ITEM(signature, PyTuple_GET_SIZE(signature) - 1);
        if (dgpy_ufunc_dtype_from_obj(last, sig_dt) < 0)
            return -1;
    }
    return 0;
}

/* The dtypes of the out= arrays (a DistributedArray, or a NumPy array that
 * gets the result from the host) into out_dt (-1 for none).  0, or -1 with
 * NumPy's exception. */
static int out_dtypes(int nout, PyObject *const *outs, int *out_dt)
{
    int i;
    for (i = 0; i < nout; i++) {
        if (!outs[i])
            continue;
        if (DgArray_Check(outs[i])) {
            if (((DgArrayObject *)outs[i])->arr->readonly) {
                PyErr_SetString(PyExc_ValueError, "output array is read-only");
                return -1;
            }
            out_dt[i] = ((DgArrayObject *)outs[i])->arr->dtype;
        } else if (dgpy_is_ndarray(outs[i])) {
            int64_t sh[DG_MAXDIM], st[DG_MAXDIM];
            char *data;
            int nd;
            dgpy_ndarray_info(outs[i], &nd, sh, st, &data, &out_dt[i]);
            if (out_dt[i] < 0) {
                PyErr_SetString(PyExc_TypeError, "out= array has a dtype dgarray does not "
                                "support");
                return -1;
            }
        } else {
            PyErr_SetString(PyExc_TypeError, "return arrays must be of ArrayType");
            return -1;
        }
    }
    return 0;
}

/* where= (borrowed in *wherep): True or absent leaves *wherep NULL; False or
 * a false scalar sets *where_false and leaves it NULL; an array must be
 * boolean and broadcast with the inputs ops[nin] into (*bnd, bsh).  0, or
 * -1 with NumPy's exception. */
static int parse_where(PyObject **wherep, int *where_false, operand *ops, int nin, int *bnd,
                       int64_t *bsh)
{
    operand w;
    int r;
    *where_false = 0;
    if (!*wherep || *wherep == Py_True) {
        *wherep = NULL;
        return 0;
    }
    if (*wherep == Py_False) {
        *where_false = 1;
        *wherep = NULL;
        return 0;
    }
    r = classify(*wherep, &w);
    if (r != 0) {
        if (r > 0)
            PyErr_SetString(PyExc_TypeError, "where= must be a boolean array");
        operands_clear(&w, 1);
        return -1;
    }
    if (w.dtype != DG_BOOL) {
        PyErr_Format(PyExc_TypeError, "Cannot cast array data from %R to "
                     "dtype('bool') according to the rule 'safe'",
                     w.dtype >= 0 && w.dtype < DG_NDTYPES ? dgpy_st->descrs[w.dtype]
                                                           : Py_None);
        operands_clear(&w, 1);
        return -1;
    }
    if (w.kind == OP_SCALAR) {
        unsigned char v[16];
        if (dgpy_scalar_bytes(w.host ? w.host : w.obj, DG_BOOL, v) < 0) {
            operands_clear(&w, 1);
            return -1;
        }
        *where_false = !v[0];
        operands_clear(&w, 1);
        *wherep = NULL;
        return 0;
    }
    if (broadcast_into(bnd, bsh, w.ndim, w.shape) < 0) {
        operand both[3] = {ops[0], nin > 1 ? ops[1] : w, w};
        broadcast_error(both, nin + 1);
        operands_clear(&w, 1);
        return -1;
    }
    operands_clear(&w, 1);
    return 0;
}

/* Each out= must have the broadcast shape (*bnd, bsh) of the inputs (an
 * out= of more dimensions extends it).  0, or -1 with NumPy's ValueError. */
static int check_out_shapes(int nout, PyObject *const *outs, int *bnd, int64_t *bsh)
{
    int i;
    for (i = 0; i < nout; i++) {
        int64_t osh[DG_MAXDIM];
        int ond, j, same;
        if (!outs[i])
            continue;
        if (DgArray_Check(outs[i])) {
            dg_array *oa = ((DgArrayObject *)outs[i])->arr;
            ond = oa->ndim;
            memcpy(osh, oa->shape, sizeof(int64_t) * (size_t)ond);
        } else {
            int64_t st[DG_MAXDIM];
            char *data;
            int dt;
            dgpy_ndarray_info(outs[i], &ond, osh, st, &data, &dt);
        }
        {
            int tnd = *bnd;
            int64_t tsh[DG_MAXDIM];
            memcpy(tsh, bsh, sizeof(int64_t) * (size_t)*bnd);
            same = broadcast_into(&tnd, tsh, ond, osh) == 0 && tnd == ond;
            for (j = 0; same && j < ond; j++)
                same = tsh[j] == osh[j];
            if (same) {
                *bnd = tnd;
                memcpy(bsh, tsh, sizeof(int64_t) * (size_t)tnd);
            }
        }
        if (!same) {
            PyObject *s1 = shape_str(ond, osh), *s2 = shape_str(*bnd, bsh);
            if (s1 && s2)
                PyErr_Format(PyExc_ValueError, "non-broadcastable output operand with shape "
                             "%U doesn't match the broadcast shape %U", s1, s2);
            Py_XDECREF(s1);
            Py_XDECREF(s2);
            return -1;
        }
    }
    if (*bnd > DG_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "dgarray supports at most %d dimensions", DG_MAXDIM);
        return -1;
    }
    return 0;
}

/* Puts the core's out= arrays (which it may have replaced by their REPLICA
 * copies) back into the DistributedArrays given as out=. */
static void install_outs(int nout, PyObject *const *outs, const dg_ufunc_call *c)
{
    int i;
    for (i = 0; i < nout; i++) {
        DgArrayObject *oo = outs[i] && DgArray_Check(outs[i]) ? (DgArrayObject *)outs[i] : NULL;
        if (!oo || !c->out[i] || oo->arr == c->out[i])
            continue;
        dg_array_incref(c->out[i]);
        dg_array_decref(oo->arr);
        oo->arr = c->out[i];
    }
}

/* A NumPy out= of a call: the result res (taken over) gathered to the host
 * and copied in where the mask wherep (borrowed, NULL: everywhere) is set.
 * 0, or -1 with an exception. */
static int result_to_host(dg_array *res, PyObject *out, PyObject *wherep)
{
    PyObject *tmp = dgpy_wrap(res), *host, *f, *rr;
    if (!tmp)
        return -1;
    host = dgpy_gather((DgArrayObject *)tmp);
    Py_DECREF(tmp);
    if (!host)
        return -1;
    f = dgpy_py(DGPY_PY_copy_into_host);
    rr = f ? PyObject_CallFunctionObjArgs(f, out, host, wherep ? wherep : Py_True, NULL) : NULL;
    Py_DECREF(host);
    if (!rr)
        return -1;
    Py_DECREF(rr);
    return 0;
}

/* NumPy's loops cast into their dtypes in buffers of this many elements
 * (numpy.getbufsize(), default) */
#define NPY_BUFSIZE_DEFAULT 8192

/* The name NumPy's messages give the floating-point errors of a call's
 * casts: a result cast into out= of another dtype, and an input cast into
 * the loop's dtype (dtype=, signature=) of more elements than NumPy's
 * buffer, are named by the ufunc ("overflow encountered in add"); smaller
 * inputs NumPy casts ahead of the loop, as a cast ("... in cast").  Only
 * casts that can raise (dgpy_cast_may_raise) count: int -> float64 of a
 * mixed-dtype call neither names nor waits.  NULL:
 * by the work that noted them (the loop's by the ufunc, a cast's "cast"),
 * reported at the call only where errstate asks more than a warning
 * (dgpy_fpe_end: a name makes the call wait). */
static const char *fpe_name(int id, int nin, int nout, const operand *ops,
                            PyObject *const *outs, const int *loop_dt)
{
    int i, named = 0;
    for (i = 0; i < nout; i++)
        if (outs[i] && DgArray_Check(outs[i]) &&
            dgpy_cast_may_raise(loop_dt[nin + i], ((DgArrayObject *)outs[i])->arr->dtype))
            named = 1;
    for (i = 0; i < nin; i++)
        if (ops[i].kind == OP_ARRAY && dgpy_cast_may_raise(ops[i].dtype, loop_dt[i])) {
            if (dg_shape_size(ops[i].ndim, ops[i].shape) <= NPY_BUFSIZE_DEFAULT)
                return NULL;
            named = 1;
        }
    return named ? dg_ufunc_name(id) : NULL;
}

/* Applies ufunc `id` to inputs args[0..nin) with the keyword arguments. */
static PyObject *ufunc_apply(int id, PyObject *ufunc, PyObject *const *args, int nargs,
                             PyObject *kwargs)
{
    int nin = dg_ufunc_nin(id), nout = dg_ufunc_nout(id);
    operand ops[2];
    PyObject *outs[2] = {NULL, NULL}, *wherep = NULL, *castingp = NULL;
    int in_dt[2], out_dt[2] = {-1, -1}, sig_dt = -1, loop_dt[DG_MAXLOOPOPS];
    int loop, i, nops = 0, bnd = 0, r;
    int64_t bsh[DG_MAXDIM];
    dg_ufunc_call c;
    dg_error err = DG_ERROR_INIT;
    PyObject *ret = NULL;
    int where_false = 0, fpe_on = 0;
    uint32_t fpe_was = 0;

    dg_ufunc_call_init(&c);
    if (nargs < nin || nargs > nin + nout) {
        PyErr_Format(PyExc_TypeError, "%s() takes from %d to %d positional arguments but %d "
                     "were given", dg_ufunc_name(id), nin, nin + nout, nargs);
        return NULL;
    }
    if (parse_kwargs(id, nin, nout, args, nargs, kwargs, outs, &wherep, &castingp, &sig_dt) < 0)
        return NULL;

    for (i = 0; i < nin; i++) {
        r = classify(args[i], &ops[i]);
        nops = i + 1;
        if (r < 0)
            goto done;
        if (r > 0) {
            ret = Py_NewRef(Py_NotImplemented);
            goto done;
        }
        in_dt[i] = ops[i].dtype;
    }
    if (out_dtypes(nout, outs, out_dt) < 0)
        goto done;

    {
        const int cast = cast_code(castingp);
        int dts[RC_MAXOPS];
        if (nin + nout <= RC_MAXOPS) {
            memcpy(dts, in_dt, sizeof(int) * (size_t)nin);
            memcpy(dts + nin, out_dt, sizeof(int) * (size_t)nout);
        }
        loop = rc_find(id, nin, nout, dts, sig_dt, cast, loop_dt);
        if (loop < 0) {
            PyObject *cast_obj = castingp ? castingp : NULL;
            PyObject *default_casting = NULL;
            if (!cast_obj) {
                default_casting = PyUnicode_InternFromString("same_kind");
                cast_obj = default_casting;
            }
            loop = cast_obj ? resolve(id, ufunc, nin, nout, in_dt, out_dt, sig_dt, cast_obj,
                                      loop_dt) : -1;
            Py_XDECREF(default_casting);
            if (loop < 0)
                goto done;
            rc_put(id, nin, nout, dts, sig_dt, cast, loop, loop_dt);
        }
    }

    /* broadcast inputs, the mask and outputs */
    for (i = 0; i < nin; i++)
        if (ops[i].kind != OP_SCALAR && broadcast_into(&bnd, bsh, ops[i].ndim, ops[i].shape) < 0) {
            broadcast_error(ops, nin);
            goto done;
        }
    if (parse_where(&wherep, &where_false, ops, nin, &bnd, bsh) < 0 ||
        check_out_shapes(nout, outs, &bnd, bsh) < 0)
        goto done;

    /* the work from here on runs under NumPy's errstate (dgpy_fpe_end) */
    if (dgpy_fpe_begin(&fpe_was) < 0)
        goto done;
    fpe_on = 1;

    /* the results (the core's: out= or new arrays laid out like it or an input) */
    c.be = dgpy_st->be;
    c.loop = loop;
    c.ndim = bnd;
    memcpy(c.shape, bsh, sizeof(int64_t) * (size_t)bnd);
    c.min_split_bytes = dgpy_st->min_split_bytes;
    c.where_false = where_false;
    for (i = 0; i < nin; i++)
        if (ops[i].kind == OP_ARRAY)
            c.arg[i] = ((DgArrayObject *)ops[i].obj)->arr;
    for (i = 0; i < nout; i++)
        if (outs[i] && DgArray_Check(outs[i])) {
            c.out[i] = ((DgArrayObject *)outs[i])->arr;
            dg_array_incref(c.out[i]);
        }
    r = dg_ufunc_outputs(&c, &err) == DG_OK ? 0 : -1;
    install_outs(nout, outs, &c);
    if (r < 0) {
        dgpy_raise(&err);
        goto done;
    }

    /* inputs in the loop's dtypes: scalars' values, arrays, host arrays
     * uploaded laid out like the first result */
    for (i = 0; i < nin; i++) {
        if (ops[i].kind == OP_SCALAR) {
            if (dgpy_scalar_bytes(ops[i].host ? ops[i].host : ops[i].obj, loop_dt[i],
                                  c.in[i].scalar) < 0 &&
                out_of_range_compare(id, i, &ops[i], loop_dt, &c.loop, c.in[i].scalar) < 0)
                goto done;
            continue;
        }
        if (operand_array(&ops[i], loop_dt[i], c.res[0], &c.in[i].arr) < 0)
            goto done;
    }
    if (id == DG_UF_power && dg_dtype_kind(loop_dt[1]) == 'i' &&
        dg_shape_size(bnd, bsh) > 0 && /* nothing computed: NumPy raises nothing */
        negative_exponent(&ops[1], loop_dt[1], c.in[1].scalar) != 0)
        goto done;
    if (wherep) {
        operand w;
        if (classify(wherep, &w) != 0)
            goto done;
        r = operand_array(&w, DG_BOOL, c.res[0], &c.where);
        operands_clear(&w, 1);
        if (r < 0)
            goto done;
    }

    /* the loop, and the results cast into out= (the core's) */
    r = dg_ufunc_run(&c, &err) == DG_OK ? 0 : -1;
    install_outs(nout, outs, &c);
    if (r < 0) {
        dgpy_raise(&err);
        goto done;
    }
    /* a NumPy out= gets the result from the host (nothing where the mask is
     * all False: out keeps its values, as in NumPy) */
    for (i = 0; i < nout; i++) {
        if (!outs[i] || DgArray_Check(outs[i]) || where_false)
            continue;
        r = result_to_host(c.res[i], outs[i], wherep);
        c.res[i] = NULL;
        if (r < 0)
            goto done;
    }

    /* the return value */
    {
        PyObject *vals[2] = {NULL, NULL};
        for (i = 0; i < nout; i++) {
            if (outs[i]) {
                vals[i] = Py_NewRef(outs[i]);
            } else {
                vals[i] = dgpy_wrap(c.res[i]);
                c.res[i] = NULL;
                if (!vals[i]) {
                    Py_XDECREF(vals[0]);
                    goto done;
                }
            }
        }
        ret = nout == 1 ? vals[0] : PyTuple_Pack(2, vals[0], vals[1]);
        if (nout != 1) {
            Py_DECREF(vals[0]);
            Py_DECREF(vals[1]);
        }
    }
done:
    if (fpe_on) {
        dg_array *res[2] = {NULL, NULL};
        for (i = 0; ret && i < nout; i++) {
            PyObject *o = nout == 1 ? ret : PyTuple_GET_ITEM(ret, i);
            res[i] = DgArray_Check(o) ? ((DgArrayObject *)o)->arr : NULL;
        }
        if (dgpy_fpe_end(fpe_was, ret != NULL, res, nout,
                         ret ? fpe_name(id, nin, nout, ops, outs, loop_dt) : NULL) < 0 &&
            ret)
            Py_CLEAR(ret);
    }
    dg_ufunc_call_clear(&c);
    operands_clear(ops, nops);
    return ret;
}

PyObject *dgpy_ufunc_call(int id, PyObject *ufunc, PyObject *args, PyObject *kwargs)
{
    return ufunc_apply(id, ufunc, &PyTuple_GET_ITEM(args, 0), (int)PyTuple_GET_SIZE(args),
                       kwargs);
}

PyObject *dgpy_binop(int id, PyObject *a, PyObject *b)
{
    PyObject *args[2] = {a, b};
    /* NumPy arrays on the left defer to us through __array_ufunc__; anything
     * we cannot take gives NotImplemented so Python tries the other side. */
    return ufunc_apply(id, dgpy_st->ufuncs[id], args, 2, NULL);
}

PyObject *dgpy_inplace(int id, PyObject *a, PyObject *b)
{
    PyObject *args[3] = {a, b, a};
    PyObject *r;
    if (!DgArray_Check(a))
        Py_RETURN_NOTIMPLEMENTED;
    r = ufunc_apply(id, dgpy_st->ufuncs[id], args, 3, NULL);
    return r;
}

PyObject *dgpy_ufunc_apply(int id, PyObject *const *args, int nargs)
{
    return ufunc_apply(id, dgpy_st->ufuncs[id], (PyObject **)args, nargs, NULL);
}

PyObject *dgpy_unop(int id, PyObject *a)
{
    PyObject *args[1] = {a};
    return ufunc_apply(id, dgpy_st->ufuncs[id], args, 1, NULL);
}

PyObject *dgpy_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *ufunc, *method, *id_obj, *inputs;
    const char *m;
    int id;
    (void)self;
    if (PyTuple_GET_SIZE(args) < 2) {
        PyErr_SetString(PyExc_TypeError, "__array_ufunc__ needs a ufunc and a method");
        return NULL;
    }
    ufunc = PyTuple_GET_ITEM(args, 0);
    method = PyTuple_GET_ITEM(args, 1);
    m = PyUnicode_AsUTF8(method);
    if (!m)
        return NULL;
    id_obj = PyDict_GetItemWithError(dgpy_st->ufunc_ids, ufunc);
    if (!id_obj && PyErr_Occurred())
        return NULL;
    if (strcmp(m, "__call__") != 0 || !id_obj) {
        /* reduce, accumulate, ..., and the gufuncs (matmul, ...):
         * the package's ufunc_method(ufunc, method, *inputs, **kw) */
        PyObject *f = dgpy_py(DGPY_PY_ufunc_method);
        return f ? PyObject_Call(f, args, kwargs) : NULL;
    }
    id = (int)PyLong_AsLong(id_obj);
    inputs = PyTuple_GetSlice(args, 2, PyTuple_GET_SIZE(args));
    if (!inputs)
        return NULL;
    {
        PyObject *r = ufunc_apply(id, ufunc, &PyTuple_GET_ITEM(inputs, 0),
                                  (int)PyTuple_GET_SIZE(inputs), kwargs);
        Py_DECREF(inputs);
        return r;
    }
}
