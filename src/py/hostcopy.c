/* Long copies between host arrays and the devices: in pieces, interruptible,
 * with progress.
 *
 * A copy larger than one piece (512 MiB by default) runs in parts of about
 * that size, each without the GIL: part k copies the k-th slab of every
 * chunk (dg_array_scatter_part, dg_array_gather_part), so that every device
 * takes part in each.  Between parts the GIL is taken back:
 *   - Python's signal handlers run, so Ctrl-C stops the copy with a
 *     KeyboardInterrupt (an array being made is dropped, an array being read
 *     is unchanged; the host array is no longer in use once it is raised);
 *   - once the copy has run for a second, a line on sys.stderr says how far
 *     it is, rewritten in place (carriage return) at most four times a
 *     second and ended by one that gives the time and the speed.
 * dgarray.config.progress: True (the default) shows progress after a second,
 * False never, "always" a line after every piece (for logs and tests).  In a
 * job of several processes only process 0 shows it (every process makes the
 * same copies: one line, as print(a) prints once). */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <time.h>

#include "dg_dist.h"

#define PIECE_BYTES_DEFAULT ((int64_t)512 << 20)
#define PROGRESS_AFTER_S 1.0
#define PROGRESS_EVERY_S 0.25

static int64_t piece_bytes = PIECE_BYTES_DEFAULT;
static int progress_mode = 1; /* 0 never, 1 after PROGRESS_AFTER_S, 2 always */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Part `part` of `nparts` of a copy, called without the GIL; *nbytes: the
 * bytes it copied. */
typedef dg_status (*part_fn)(void *ctx, int64_t part, int64_t nparts, int64_t *nbytes,
                             dg_error *err);

typedef struct progress {
    const char *what;
    int64_t total, done;
    double t0, last;
    int shown;
} progress;

/* Writes the progress line, then `end`, to sys.stderr (write, flush): 0, or
 * -1 with the exception set where the write raised one that is not an
 * Exception (KeyboardInterrupt from Ctrl-C, SystemExit from a signal
 * handler); errors of the stream itself are dropped (progress is not worth
 * failing a copy). */
static int progress_line(progress *p, const char *end)
{
    const int big = p->total >= ((int64_t)1 << 30);
    const double unit = big ? 1024.0 * 1024.0 * 1024.0 : 1024.0 * 1024.0;
    const double t = now_s() - p->t0;
    char line[256];
    PyObject *f = PySys_GetObject("stderr"), *r;
    snprintf(line, sizeof line, "\rdgarray: %s: %.2f of %.2f %s (%3d%%), %.1f s, %.2f GB/s%s",
             p->what, (double)p->done / unit, (double)p->total / unit, big ? "GiB" : "MiB",
             p->total > 0 ? (int)(100.0 * (double)p->done / (double)p->total) : 100, t,
             t > 0 ? (double)p->done / t / 1e9 : 0.0, end);
    p->shown = 1;
    p->last = now_s();
    if (f == NULL || f == Py_None)
        return 0;
    Py_INCREF(f); /* write() may replace sys.stderr */
    r = PyObject_CallMethod(f, "write", "s", line);
    if (r != NULL) {
        Py_DECREF(r);
        r = PyObject_CallMethod(f, "flush", NULL);
    }
    Py_DECREF(f);
    if (r != NULL) {
        Py_DECREF(r);
        return 0;
    }
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

/* The last line of a copy that stops with an exception set (kept; an
 * exception of this write itself is dropped: the copy is failing already). */
static void progress_stop(progress *p, const char *end)
{
    PyObject *et, *ev, *tb;
    if (!p->shown)
        return;
    PyErr_Fetch(&et, &ev, &tb);
    if (progress_line(p, end) < 0)
        PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

/* 1 in a job's processes other than process 0, which show no progress. */
static int not_process_0(void)
{
    const int *proc_of;
    int first, n;
    if (dg_dist_processes(dgpy_st->be, &proc_of) <= 1)
        return 0;
    dg_dist_local_range(dgpy_st->be, &first, &n);
    return proc_of[first] != 0;
}

int dgpy_run_steps(const char *what, int64_t total, dgpy_step_fn fn, void *ctx)
{
    progress p = {what, total, 0, now_s(), 0.0, 0};
    const int mode = not_process_0() ? 0 : progress_mode;
    int more = 1;
    while (more) {
        dg_error err = DG_ERROR_INIT;
        int64_t done = 0;
        dg_status st;
        Py_BEGIN_ALLOW_THREADS
        st = fn(ctx, &done, &more, &err);
        Py_END_ALLOW_THREADS
        if (st != DG_OK) {
            dgpy_raise_int(&err);
            progress_stop(&p, ", failed\n");
            return -1;
        }
        p.done += done;
        if (more && mode > 0) {
            const double t = now_s();
            if ((mode == 2 || (t - p.t0 >= PROGRESS_AFTER_S &&
                                        (!p.shown || t - p.last >= PROGRESS_EVERY_S))) &&
                progress_line(&p, "") < 0) {
                progress_stop(&p, ", interrupted\n");
                return -1;
            }
        }
        if (PyErr_CheckSignals() < 0) {
            progress_stop(&p, ", interrupted\n");
            return -1;
        }
    }
    if (p.shown && progress_line(&p, ", done\n") < 0) {
        /* Ctrl-C while the last line was written: raised, as it would be
         * at the next line of Python, with the line ended */
        progress_stop(&p, ", interrupted\n");
        return -1;
    }
    return 0;
}

int64_t dgpy_piece_bytes(void)
{
    return piece_bytes;
}

/* A copy in parts as steps: part `part` of `nparts`, in turn. */
typedef struct parts_ctx {
    part_fn fn;
    void *ctx;
    int64_t part, nparts;
} parts_ctx;

static dg_status parts_step(void *ctx, int64_t *nbytes, int *more, dg_error *err)
{
    parts_ctx *c = (parts_ctx *)ctx;
    dg_status st = c->fn(c->ctx, c->part, c->nparts, nbytes, err);
    c->part++;
    *more = c->part < c->nparts;
    return st;
}

/* Runs fn over a copy of `total` bytes in parts of about piece_bytes
 * (every device taking part in each); 0, or -1 with an exception set (the
 * error of a part, or KeyboardInterrupt). */
static int copy_in_parts(const char *what, int64_t total, part_fn fn, void *ctx)
{
    parts_ctx c = {fn, ctx, 0, total > piece_bytes ? (total - 1) / piece_bytes + 1 : 1};
    if (c.nparts > DG_MAX_PARTS)
        c.nparts = DG_MAX_PARTS;
    return dgpy_run_steps(what, total, parts_step, &c);
}

/* ---- host to devices -------------------------------------------------------- */

typedef struct scatter_ctx {
    dg_array *a;
    const char *host;
    const int64_t *strides;
} scatter_ctx;

static dg_status scatter_part(void *ctx, int64_t part, int64_t nparts, int64_t *nbytes,
                              dg_error *err)
{
    scatter_ctx *c = (scatter_ctx *)ctx;
    return dg_array_scatter_part(c->a, c->host, c->strides, part, nparts, nbytes, err);
}

int dgpy_scatter(dg_array *a, const char *host, const int64_t *strides)
{
    char what[64];
    scatter_ctx c = {a, host, strides};
    int64_t total = 0;
    int devs = 0, i;
    char *seen = (char *)calloc((size_t)a->be->ndevices + 1, 1);
    if (!seen) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < a->nchunks; i++) {
        total += dg_box_size(&a->chunks[i].box) * dg_dtype_size(a->dtype);
        if (!seen[a->chunks[i].device]) {
            seen[a->chunks[i].device] = 1;
            devs++;
        }
    }
    free(seen);
    snprintf(what, sizeof what, "host array to %d device%s", devs, devs == 1 ? "" : "s");
    return copy_in_parts(what, total, scatter_part, &c);
}

/* ---- devices to host -------------------------------------------------------- */

typedef struct gather_ctx {
    dg_array *a;
    const dg_box *region;
    char *host;
    const int64_t *strides;
} gather_ctx;

static dg_status gather_part(void *ctx, int64_t part, int64_t nparts, int64_t *nbytes,
                             dg_error *err)
{
    gather_ctx *c = (gather_ctx *)ctx;
    return dg_array_gather_part(c->a, c->region, c->host, c->strides, part, nparts, nbytes,
                                err);
}

int dgpy_gather_into(dg_array *a, const dg_box *region, char *host, const int64_t *strides)
{
    gather_ctx c = {a, region, host, strides};
    /* the values read may come from a fused chain that ran for this read:
     * its floating-point errors are reported here (dgpy_fpe_end) */
    if (copy_in_parts("devices to host array", dg_box_size(region) * dg_dtype_size(a->dtype),
                      gather_part, &c) < 0)
        return -1;
    return dgpy_fpe_report();
}

/* _get_many(arrays) -> tuple of ndarrays: each array (a sequence of
 * DistributedArrays, each small enough for one part) read to the host,
 * after one host wait for the work all the reads queue behind
 * (dgpy_wait_ready_many), their copies then enqueued together and waited
 * for once (dg_array_gather_all): what a caller that needs several small
 * results of one enqueued computation waits once for. */
static PyObject *f_get_many(PyObject *mod, PyObject *arg)
{
    PyObject *seq, *res = NULL;
    dg_array **r;
    char **host = NULL;
    int64_t *hstr = NULL;
    const int64_t **hp = NULL;
    Py_ssize_t n, i, k = 0;
    (void)mod;
    if (!(seq = PySequence_Fast(arg, "_get_many takes a sequence of arrays")))
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    if (!(r = (dg_array **)PyMem_Calloc((size_t)(n ? n : 1), sizeof *r))) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (k = 0; k < n; k++) {
        dg_error err = DG_ERROR_INIT;
        dg_array *a = dgpy_arg_array(PySequence_Fast_GET_ITEM(seq, k), "_get_many");
        if (!a)
            goto done;
        if (dg_array_change_mode(a, DG_MODE_REPLICA, &r[k], &err) != DG_OK) {
            dgpy_raise(&err);
            goto done;
        }
    }
    if (dgpy_wait_ready_many(r, (int)n) < 0 || !(res = PyTuple_New(n)) ||
        !(host = (char **)PyMem_Calloc((size_t)(n ? n : 1), sizeof *host)) ||
        !(hstr = (int64_t *)PyMem_Calloc((size_t)(n ? n : 1) * DG_MAXDIM, sizeof *hstr)) ||
        !(hp = (const int64_t **)PyMem_Calloc((size_t)(n ? n : 1), sizeof *hp))) {
        if (res && !PyErr_Occurred())
            PyErr_NoMemory();
        Py_CLEAR(res);
        goto done;
    }
    for (i = 0; i < n; i++) {
        int64_t shape[DG_MAXDIM];
        int nd, dt;
        PyObject *o = dgpy_ndarray_new(r[i]->ndim, r[i]->shape, r[i]->dtype);
        if (!o) {
            Py_CLEAR(res);
            goto done;
        }
        PyTuple_SET_ITEM(res, i, o);
        dgpy_ndarray_info(o, &nd, shape, hstr + i * DG_MAXDIM, &host[i], &dt);
        hp[i] = hstr + i * DG_MAXDIM;
    }
    {
        dg_error err = DG_ERROR_INIT;
        dg_status st;
        Py_BEGIN_ALLOW_THREADS
        st = dg_array_gather_all(r, (int)n, host, hp, &err);
        Py_END_ALLOW_THREADS
        if (st != DG_OK) {
            dgpy_raise(&err);
            Py_CLEAR(res);
        } else if (dgpy_fpe_report() < 0) {
            Py_CLEAR(res);
        }
    }
done:
    for (i = 0; i < k; i++)
        if (r[i])
            dg_array_decref(r[i]);
    PyMem_Free(r);
    PyMem_Free(host);
    PyMem_Free(hstr);
    PyMem_Free(hp);
    Py_DECREF(seq);
    return res;
}

/* ---- settings ----------------------------------------------------------------- */

static PyObject *f_set_progress(PyObject *mod, PyObject *arg)
{
    (void)mod;
    if (PyUnicode_Check(arg)) {
        if (PyUnicode_CompareWithASCIIString(arg, "always") != 0) {
            PyErr_Format(PyExc_ValueError, "progress must be True, False or \"always\", "
                         "not %R", arg);
            return NULL;
        }
        progress_mode = 2;
    } else {
        const int t = PyObject_IsTrue(arg);
        if (t < 0)
            return NULL;
        progress_mode = t;
    }
    Py_RETURN_NONE;
}

static PyObject *f_get_progress(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    if (progress_mode == 2)
        return PyUnicode_FromString("always");
    return PyBool_FromLong(progress_mode);
}

static PyObject *f_piece_bytes(PyObject *mod, PyObject *arg)
{
    long long v = PyLong_AsLongLong(arg), old = (long long)piece_bytes;
    (void)mod;
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (v < 1) {
        PyErr_SetString(PyExc_ValueError, "a piece of a host copy must be at least 1 byte");
        return NULL;
    }
    piece_bytes = (int64_t)v;
    return PyLong_FromLongLong(old);
}

PyMethodDef dgpy_hostcopy_methods[] = {
    {"_get_many", f_get_many, METH_O,
     "arrays read to the host after one wait for them all: (arrays) -> tuple"},
    {"_set_progress", f_set_progress, METH_O,
     "progress of long host copies: True, False or \"always\""},
    {"_get_progress", f_get_progress, METH_NOARGS, "see _set_progress"},
    {"_piece_bytes", f_piece_bytes, METH_O,
     "sets the bytes per piece of a host copy; returns the previous value"},
    {NULL, NULL, 0, NULL},
};
