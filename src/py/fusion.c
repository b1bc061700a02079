/* dgarray._core's switches and probes of deferred fusion (src/core/dg_fuse.h):
 * dgarray.config.fusion, and what tests and benchmarks ask of the pending
 * chain. */
#include "dgpy.h"
#include "dg_fuse.h"
#include "dg_fused_memo.h"
#include "dg_fused_src.h"
#include <time.h>
#include "dg_rtc.h"
#include "dg_ufunc.h"

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

/* _fusion_renew(on=-1) -> (on before, memories renewed so far); on 0 or 1
 * turns renewing off or on */
static PyObject *f_fusion_renew(PyObject *mod, PyObject *args)
{
    int on = -1, was = 0;
    int64_t n;
    (void)mod;
    if (!PyArg_ParseTuple(args, "|i:_fusion_renew", &on))
        return NULL;
    n = dg_fuse_renew(on, &was);
    return Py_BuildValue("(OL)", was ? Py_True : Py_False, (long long)n);
}

/* _fusion_device_counts(n) -> ((fused pieces run, steps they held) of device
 * 0, ..., of device n - 1) */
static PyObject *f_fusion_device_counts(PyObject *mod, PyObject *arg)
{
    PyObject *r;
    long n = PyLong_AsLong(arg);
    long d;
    (void)mod;
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "_fusion_device_counts: n must be >= 0");
        return NULL;
    }
    if (!(r = PyTuple_New(n)))
        return NULL;
    for (d = 0; d < n; d++) {
        int64_t runs = 0, steps = 0;
        PyObject *t;
        dg_fuse_device_counts((int)d, &runs, &steps);
        if (!(t = Py_BuildValue("(LL)", (long long)runs, (long long)steps))) {
            Py_DECREF(r);
            return NULL;
        }
        PyTuple_SET_ITEM(r, d, t);
    }
    return r;
}

/* ---- the run-time compiler (dg_rtc.h), for tests ---- */

/* (available, why not) */
static PyObject *f_rtc_available(PyObject *mod, PyObject *unused)
{
    const char *why = "";
    int ok = dg_rtc_available(&why);
    (void)mod;
    (void)unused;
    return Py_BuildValue("(Os)", ok ? Py_True : Py_False, why);
}

/* _rtc_compile(src, arch, driver=0) -> (cubin bytes, 'compiled' | 'memory' | 'disk') */
static PyObject *f_rtc_compile(PyObject *mod, PyObject *args)
{
    static const char *const from_name[] = {"compiled", "memory", "disk"};
    const char *src;
    int arch, driver = 0, from = 0;
    const void *code = NULL;
    size_t n = 0;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "si|i:_rtc_compile", &src, &arch, &driver))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_rtc_compile(src, arch, driver, &code, &n, &from, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return Py_BuildValue("(y#s)", (const char *)code, (Py_ssize_t)n, from_name[from]);
}

static PyObject *f_rtc_forget(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    dg_rtc_forget();
    Py_RETURN_NONE;
}

static PyObject *f_rtc_cache_dir(PyObject *mod, PyObject *unused)
{
    const char *d = dg_rtc_cache_dir();
    (void)mod;
    (void)unused;
    if (!d)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(d);
}

/* _fused_loops_source(first, count, ndim[, check_fpe]): the CUDA source of a fused chain
 * whose steps are loops first .. first+count-1 (each reading fresh inputs of
 * its dtypes, scalars for a loop of index parity 1, and storing its outputs)
 * over an ndim-axis space: what tests compile to check the generator on
 * every loop.  -> (source, number of argument words) */
static PyObject *f_fused_loops_source(PyObject *mod, PyObject *args)
{
    int first, count, ndim, i, k, a, check_fpe = 0;
    dg_fused_desc *d;
    dg_fused_args *fa;
    char *buf;
    dg_error err = DG_ERROR_INIT;
    PyObject *r = NULL;
    (void)mod;
    if (!PyArg_ParseTuple(args, "iii|i:_fused_loops_source", &first, &count, &ndim, &check_fpe))
        return NULL;
    if (first < 0 || count < 1 || first + count > dg_nloops || count > DG_FUSED_MAXSTEPS ||
        ndim < 1 || ndim > 3) {
        PyErr_SetString(PyExc_ValueError, "loops or axes out of range");
        return NULL;
    }
    d = (dg_fused_desc *)calloc(1, sizeof(*d));
    fa = (dg_fused_args *)calloc(1, sizeof(*fa));
    buf = (char *)malloc(1 << 20);
    if (!d || !fa || !buf) {
        PyErr_NoMemory();
        goto done;
    }
    d->ndim = ndim;
    for (a = 0; a < ndim; a++)
        d->shape[a] = 3;
    for (i = 0; i < count; i++) {
        const dg_loop_info *li = &dg_loops[first + i];
        dg_fused_step *s = &d->step[d->nstep++];
        if (d->nval + li->nin + li->nout > DG_FUSED_MAXVALS) {
            PyErr_SetString(PyExc_ValueError, "too many values");
            goto done;
        }
        s->loop = first + i;
        for (k = 0; k < li->nin + li->nout; k++) {
            dg_fused_val *v = &d->val[d->nval];
            v->dtype = li->dtypes[k];
            v->kind = k >= li->nin ? DG_FV_OUT : (i + k) % 2 ? DG_FV_SCALAR : DG_FV_IN;
            v->data = v->kind == DG_FV_SCALAR ? NULL : (char *)(uintptr_t)(4096 * (d->nval + 1));
            for (a = 0; a < ndim; a++)
                v->strides[a] = v->kind == DG_FV_SCALAR ? 0 : dg_dtype_size(v->dtype) << a;
            s->op[k] = (int16_t)d->nval++;
        }
    }
    if (dg_fused_cuda_source(d, buf, 1 << 20, check_fpe, fa, &err) != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    r = Py_BuildValue("(si)", buf, fa->nwords);
done:
    free(d);
    free(fa);
    free(buf);
    return r;
}

/* d of a chain given whole (_fused_source_of's shape, vals, steps): 0, or
 * -1 with a Python exception. */
static int desc_of(PyObject *shape, PyObject *vals, PyObject *steps, dg_fused_desc *d)
{
    Py_ssize_t i, k;
    if (PyTuple_GET_SIZE(shape) > 3 || PyList_GET_SIZE(vals) > DG_FUSED_MAXVALS ||
        PyList_GET_SIZE(steps) > DG_FUSED_MAXSTEPS) {
        PyErr_SetString(PyExc_ValueError, "too many axes, values or steps");
        return -1;
    }
    memset(d, 0, sizeof(*d));
    d->ndim = (int)PyTuple_GET_SIZE(shape);
    for (i = 0; i < d->ndim; i++)
        d->shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    d->nval = (int)PyList_GET_SIZE(vals);
    for (i = 0; i < d->nval; i++) {
        dg_fused_val *v = &d->val[i];
        PyObject *st;
        unsigned long long addr;
        const char *sc;
        Py_ssize_t nsc;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(vals, i), "iiKO!y#", &v->kind, &v->dtype, &addr,
                              &PyTuple_Type, &st, &sc, &nsc))
            return -1;
        if (v->dtype < 0 || v->dtype >= DG_NDTYPES || PyTuple_GET_SIZE(st) != d->ndim ||
            nsc > 16) {
            PyErr_SetString(PyExc_ValueError, "a value's dtype, strides or scalar");
            return -1;
        }
        v->data = (char *)(uintptr_t)addr;
        for (k = 0; k < d->ndim; k++)
            v->strides[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(st, k));
        memcpy(v->scalar, sc, (size_t)nsc);
    }
    d->nstep = (int)PyList_GET_SIZE(steps);
    for (i = 0; i < d->nstep; i++) {
        const char *name;
        PyObject *ops;
        int uf, dts[4] = {-1, -1, -1, -1};
        if (!PyArg_ParseTuple(PyList_GET_ITEM(steps, i), "sO!", &name, &PyTuple_Type, &ops))
            return -1;
        uf = dg_ufunc_find(name);
        if (uf < 0 || PyTuple_GET_SIZE(ops) != dg_ufunc_nin(uf) + dg_ufunc_nout(uf)) {
            PyErr_Format(PyExc_ValueError, "step %s", name);
            return -1;
        }
        for (k = 0; k < PyTuple_GET_SIZE(ops); k++) {
            long o = PyLong_AsLong(PyTuple_GET_ITEM(ops, k));
            if (o < 0 || o >= d->nval) {
                PyErr_SetString(PyExc_ValueError, "an operand out of range");
                return -1;
            }
            d->step[i].op[k] = (int16_t)o;
            dts[k] = d->val[o].dtype;
        }
        d->step[i].loop = dg_loop_find(uf, dts);
        if (d->step[i].loop < 0) {
            PyErr_Format(PyExc_ValueError, "no loop of %s for those dtypes", name);
            return -1;
        }
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* _fused_source_of(shape, vals, steps): the CUDA source and argument words
 * of a chain given whole: vals a list of (kind, dtype, address, strides,
 * scalar bytes) (dg_fused_kind, dg_dtype numbers), steps a list of
 * (ufunc name, operand indices) whose loop is the one of the operands'
 * dtypes; check_fpe (optional, dg_fused_cuda_source's): 1 or 2, the
 * source checks floating-point errors (2: underflow too), its last 4
 * argument words left 0 for the caller.  -> (source, argument
 * words as bytes, (items, rows, cols, band): the row or streaming kernel's
 * tile, space and band (streaming: band > 0), items 0 for the others).
 * For tests that run the generated kernel on the host over NumPy's memory.
 * _fused_key_of (same arguments) -> the key (dg_fused_key_of) as bytes:
 * for tests that pieces of one key have one source. */
static PyObject *fused_source_or_key(PyObject *args, int want_key)
{
    PyObject *shape, *vals, *steps, *r = NULL;
    int check_fpe = 0;
    dg_fused_desc *d = (dg_fused_desc *)calloc(1, sizeof(dg_fused_desc));
    dg_fused_args *fa = (dg_fused_args *)calloc(1, sizeof(dg_fused_args));
    dg_fused_key *key = (dg_fused_key *)calloc(1, sizeof(dg_fused_key));
    char *buf = (char *)malloc(1 << 20);
    dg_error err = DG_ERROR_INIT;
    if (!d || !fa || !buf || !key) {
        PyErr_NoMemory();
        goto done;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!|i:_fused_source_of", &PyTuple_Type, &shape,
                          &PyList_Type, &vals, &PyList_Type, &steps, &check_fpe) ||
        desc_of(shape, vals, steps, d) < 0)
        goto done;
    if (dg_fused_cuda_source(d, buf, 1 << 20, check_fpe, fa, &err) != DG_OK ||
        dg_fused_key_of(d, check_fpe, key, &err) != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    if (want_key)
        r = PyBytes_FromStringAndSize((const char *)key, (Py_ssize_t)sizeof(*key));
    else
        r = Py_BuildValue("(sy#(iLLi))", buf, (const char *)fa->w,
                          (Py_ssize_t)(8 * fa->nwords), fa->items, (long long)fa->rows,
                          (long long)fa->cols, fa->band);
done:
    free(d);
    free(fa);
    free(key);
    free(buf);
    return r;
}

static PyObject *f_fused_source_of(PyObject *mod, PyObject *args)
{
    (void)mod;
    return fused_source_or_key(args, 0);
}

static PyObject *f_fused_key_of(PyObject *mod, PyObject *args)
{
    (void)mod;
    return fused_source_or_key(args, 1);
}

/* _fused_host_cost(shape, vals, steps, check_fpe, reps, memo): the host's
 * seconds (wall, CLOCK_MONOTONIC) per launch of a chain given as to
 * _fused_source_of, less the CUDA calls: memo 0 the long way cuda_fused.c
 * took before its memo (a 64 KiB buffer, the source and argument words,
 * the run-time compiler's key and memory cache, for sm_90), 1 the way a
 * launch of a memoized kernel takes (the key, its hash, the memo's lookup,
 * the argument words).  The kernel is compiled once first (NVRTC needed).
 * -> (seconds, the repeats that found that kernel) */
static PyObject *f_fused_host_cost(PyObject *mod, PyObject *args)
{
    PyObject *shape, *vals, *steps, *r = NULL;
    int check_fpe = 0, memo = 0, reps = 0, i;
    dg_fused_desc *d = (dg_fused_desc *)calloc(1, sizeof(dg_fused_desc));
    dg_fused_args *fa = (dg_fused_args *)calloc(1, sizeof(dg_fused_args));
    dg_fused_key *key = (dg_fused_key *)calloc(1, sizeof(dg_fused_key));
    char *src = (char *)malloc(1 << 16);
    dg_error err = DG_ERROR_INIT;
    struct timespec t0, t1;
    const void *code = NULL;
    size_t ncode = 0;
    int from = 0;
    const void *first;
    int hits = 0;
    (void)mod;
    if (!d || !fa || !src || !key) {
        PyErr_NoMemory();
        goto done;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!iii:_fused_host_cost", &PyTuple_Type, &shape,
                          &PyList_Type, &vals, &PyList_Type, &steps, &check_fpe, &reps, &memo) ||
        desc_of(shape, vals, steps, d) < 0)
        goto done;
    if (dg_fused_key_of(d, check_fpe, key, &err) != DG_OK ||
        dg_fused_key_source(key, src, 1 << 16, &err) != DG_OK ||
        dg_rtc_compile(src, 90, 0, &code, &ncode, &from, &err) != DG_OK) {
        dgpy_raise(&err);
        goto done;
    }
    first = code;
    dg_fused_memo_put(key, dg_fused_key_hash(key), 0, (void *)code);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < reps; i++) {
        if (memo) {
            dg_fused_key k2;
            if (dg_fused_key_of(d, check_fpe, &k2, &err) != DG_OK)
                break;
            hits += dg_fused_memo_find(&k2, dg_fused_key_hash(&k2), 0) == first;
            dg_fused_args_of(d, &k2, fa);
        } else {
            char *s2 = (char *)malloc(1 << 16);
            if (!s2 || dg_fused_cuda_source(d, s2, 1 << 16, check_fpe, fa, &err) != DG_OK ||
                dg_rtc_compile(s2, 90, 0, &code, &ncode, &from, &err) != DG_OK) {
                free(s2);
                break;
            }
            hits += code == first;
            free(s2);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (i < reps) {
        if (err.code == DG_OK)
            PyErr_NoMemory();
        else
            dgpy_raise(&err);
        goto done;
    }
    r = Py_BuildValue("(di)", ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec -
                      t0.tv_nsec)) / (reps > 0 ? reps : 1), hits);
done:
    free(d);
    free(fa);
    free(key);
    free(src);
    return r;
}

PyMethodDef dgpy_fusion_methods[] = {
    {"_set_fusion", f_set_fusion, METH_O, "record elementwise chains and run them fused (bool)"},
    {"_get_fusion", f_get_fusion, METH_NOARGS, "see _set_fusion"},
    {"_fusion_flush", f_fusion_flush, METH_NOARGS, "run the pending elementwise chain"},
    {"_fusion_counts", f_fusion_counts, METH_NOARGS,
     "(pending, fused pieces run, steps they held)"},
    {"_fusion_renew", f_fusion_renew, METH_VARARGS,
     "_fusion_renew(on=-1) -> (on before, memories renewed so far for an assignment that "
     "joined a chain reading them); on 0 or 1 sets it"},
    {"_fusion_device_counts", f_fusion_device_counts, METH_O,
     "(n) -> ((fused pieces run, steps they held) of devices 0 .. n-1)"},
    {"_rtc_available", f_rtc_available, METH_NOARGS, "(NVRTC loads, why not)"},
    {"_rtc_compile", f_rtc_compile, METH_VARARGS,
     "(src, arch, driver=0) -> (cubin, 'compiled' | 'memory' | 'disk')"},
    {"_rtc_forget", f_rtc_forget, METH_NOARGS, "forget the run-time compiler's memory cache"},
    {"_rtc_cache_dir", f_rtc_cache_dir, METH_NOARGS, "the run-time compiler's disk cache"},
    {"_fused_loops_source", f_fused_loops_source, METH_VARARGS,
     "(first loop, count, ndim, check_fpe=False) -> (CUDA source, argument words)"},
    {"_fused_source_of", f_fused_source_of, METH_VARARGS,
     "(shape, vals, steps, check_fpe=False) -> (CUDA source, argument words, tile)"},
    {"_fused_key_of", f_fused_key_of, METH_VARARGS,
     "(shape, vals, steps, check_fpe=False) -> the kernel's key (bytes)"},
    {"_fused_host_cost", f_fused_host_cost, METH_VARARGS,
     "(shape, vals, steps, check_fpe, reps, memo) -> (seconds per launch on the host, "
     "repeats that found the kernel)"},
    {NULL, NULL, 0, NULL},
};
