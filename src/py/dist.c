/* [multihost] Joining a job of several processes: the module functions that
 * dgarray/distributed.py calls once, at import, to wrap this process's
 * backend in the job's (src/core/dg_dist.c). */
#include "dgpy.h" /* Python.h first: it sets the feature macros (setenv) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_dist.h"
#include "dgpy_mpi.h"

/* The first of the launcher's variables in names[] that is set, as a
 * number; -1 where none is. */
static long launcher_number(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        char *end;
        long n;
        if (!v || !*v)
            continue;
        n = strtol(v, &end, 10);
        if (!*end && n >= 0)
            return n;
    }
    return -1;
}

/* This process's share of ngpu GPUs as a DGARRAY_CUDA_DEVICES list in
 * list[cap]: 1, or 0 where it keeps every GPU (dgpy.h says when). */
static int gpu_share(int ngpu, char *list, size_t cap)
{
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                            "LOCAL_WORLD_SIZE", NULL};
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                            "SLURM_LOCALID", "LOCAL_RANK", NULL};
    const char *off = getenv("DGARRAY_DISTRIBUTED");
    const long nloc = launcher_number(size_vars), r = launcher_number(rank_vars);
    size_t used = 0;
    long g, lo, hi;
    if (getenv("DGARRAY_CUDA_DEVICES") || (off && strcmp(off, "0") == 0) || nloc < 2 || r < 0 ||
        r >= nloc || ngpu < 1)
        return 0;
    lo = ngpu >= nloc ? r * ngpu / nloc : r % ngpu;
    hi = ngpu >= nloc ? (r + 1) * ngpu / nloc : lo + 1;
    list[0] = 0;
    for (g = lo; g < hi && used + 24 < cap; g++)
        used += (size_t)snprintf(list + used, cap - used, "%s%ld", g > lo ? "," : "", g);
    return 1;
}

void dgpy_dist_share_gpus(int ngpu)
{
    char list[1024];
    if (gpu_share(ngpu, list, sizeof list))
        setenv("DGARRAY_CUDA_DEVICES", list, 1);
}

/* _dist_gpu_share(ngpu) -> the DGARRAY_CUDA_DEVICES list this process would
 * take of ngpu GPUs, or None (a probe for tests). */
static PyObject *f_dist_gpu_share(PyObject *mod, PyObject *arg)
{
    char list[1024];
    const long n = PyLong_AsLong(arg);
    (void)mod;
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (!gpu_share((int)n, list, sizeof list))
        Py_RETURN_NONE;
    return PyUnicode_FromString(list);
}

/* The job's communication, once joined (one job per process). */
static dg_comm_i *job_comm;

/* _dist_local_info() -> (names, totals, access): this process's devices,
 * what every process sends the others before joining. */
static PyObject *f_dist_local_info(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    const int n = be->ndevices;
    PyObject *names = PyList_New(n), *totals = PyList_New(n), *acc = NULL, *res = NULL;
    char *a = (char *)calloc((size_t)n * (size_t)n + 1, 1);
    int i, j;
    (void)mod;
    (void)unused;
    if (!names || !totals || !a)
        goto done;
    for (i = 0; i < n; i++) {
        char name[DG_DIST_NAME] = {0};
        size_t total = 0, freeb = 0;
        dg_error err = DG_ERROR_INIT;
        if (dg_be_device_info(be, i, name, sizeof name, &total, &freeb, &err) != DG_OK) {
            dgpy_raise(&err);
            goto done;
        }
        PyList_SET_ITEM(names, i, PyUnicode_FromString(name));
        PyList_SET_ITEM(totals, i, PyLong_FromSize_t(total));
        for (j = 0; j < n; j++)
            a[(size_t)i * (size_t)n + (size_t)j] = (char)(i == j || dg_be_can_access(be, i, j));
    }
    acc = PyBytes_FromStringAndSize(a, (Py_ssize_t)n * n);
    if (acc)
        res = PyTuple_Pack(3, names, totals, acc);
done:
    Py_XDECREF(names);
    Py_XDECREF(totals);
    Py_XDECREF(acc);
    free(a);
    return res;
}

/* _dist_join(lib, xfer, coll, byte, rank, size, timeout, ndev_of, names,
 * totals, access): every process at once, before any array exists. */
static PyObject *f_dist_join(PyObject *mod, PyObject *args)
{
    const char *lib;
    long long xfer, coll, byte;
    int rank, size, i, ngdev = 0;
    double timeout;
    PyObject *ndev_o, *names_o, *totals_o;
    Py_buffer acc;
    int *ndev_of = NULL;
    char *names = NULL;
    size_t *totals = NULL;
    dg_comm_i *comm;
    dg_backend_i *job = NULL;
    dg_error err = DG_ERROR_INIT;
    char why[300];
    PyObject *res = NULL;
    (void)mod;
    if (!PyArg_ParseTuple(args, "sLLLiidOOOy*", &lib, &xfer, &coll, &byte, &rank, &size,
                          &timeout, &ndev_o, &names_o, &totals_o, &acc))
        return NULL;
    if (dg_dist_local_range(dgpy_st->be, &i, &ngdev), ngdev != dgpy_st->be->ndevices || i != 0) {
        PyErr_SetString(PyExc_RuntimeError, "this process already joined a job");
        goto done;
    }
    if (!PyList_Check(ndev_o) || PyList_GET_SIZE(ndev_o) != size) {
        PyErr_SetString(PyExc_ValueError, "_dist_join: ndev_of must list every process");
        goto done;
    }
    ndev_of = (int *)malloc((size_t)size * sizeof(int));
    if (!ndev_of) {
        PyErr_NoMemory();
        goto done;
    }
    ngdev = 0;
    for (i = 0; i < size; i++) {
        ndev_of[i] = (int)PyLong_AsLong(PyList_GET_ITEM(ndev_o, i));
        ngdev += ndev_of[i];
    }
    if (PyErr_Occurred())
        goto done;
    if (!PyList_Check(names_o) || PyList_GET_SIZE(names_o) != ngdev || !PyList_Check(totals_o) ||
        PyList_GET_SIZE(totals_o) != ngdev || acc.len != (Py_ssize_t)ngdev * ngdev) {
        PyErr_SetString(PyExc_ValueError, "_dist_join: the device tables disagree");
        goto done;
    }
    names = (char *)calloc((size_t)ngdev, DG_DIST_NAME);
    totals = (size_t *)calloc((size_t)ngdev, sizeof(size_t));
    if (!names || !totals) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < ngdev; i++) {
        const char *s = PyUnicode_AsUTF8(PyList_GET_ITEM(names_o, i));
        if (!s)
            goto done;
        strncpy(names + (size_t)i * DG_DIST_NAME, s, DG_DIST_NAME - 1);
        totals[i] = PyLong_AsSize_t(PyList_GET_ITEM(totals_o, i));
    }
    if (PyErr_Occurred())
        goto done;
    comm = dgpy_mpi_comm_new(lib, (intptr_t)xfer, (intptr_t)coll, (intptr_t)byte, rank, size,
                             timeout, why, sizeof why);
    if (!comm) {
        PyErr_SetString(PyExc_RuntimeError, why);
        goto done;
    }
    {
        const dg_dist_info info = {ndev_of, names, totals, (const unsigned char *)acc.buf};
        dg_status st;
        Py_BEGIN_ALLOW_THREADS
        st = dg_dist_backend_create(dgpy_st->be, comm, &info, &job, &err);
        Py_END_ALLOW_THREADS
        if (st != DG_OK) {
            dgpy_raise(&err); /* comm stays: a process joins at most once */
            goto done;
        }
    }
    dgpy_st->be = job;
    dgpy_backend_no_exit_trim();
    job_comm = comm;
    res = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&acc);
    free(ndev_of);
    free(names);
    free(totals);
    return res;
}

/* _dist_range() -> (first, n): this process's devices among the job's. */
static PyObject *f_dist_range(PyObject *mod, PyObject *unused)
{
    int first, n;
    (void)mod;
    (void)unused;
    dg_dist_local_range(dgpy_st->be, &first, &n);
    return Py_BuildValue("(ii)", first, n);
}

/* _dist_barrier(): waits for this process's devices, then until every
 * process got here: one exchange of a byte from each (the comm's
 * allgatherv, log P rounds; a process leaves it only once every process
 * has entered it), bounded by the job's timeout (a dead process raises
 * DeviceError, never hangs). */
static PyObject *f_dist_barrier(PyObject *mod, PyObject *unused)
{
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    st = dg_be_sync_all(dgpy_st->be, &err);
    if (st == DG_OK && job_comm) {
        const int np = job_comm->size;
        size_t *counts = (size_t *)malloc(2 * (size_t)np * sizeof(size_t));
        char *all = (char *)malloc((size_t)np), b = 1;
        int p;
        if (!counts || !all) {
            st = dg_error_set(&err, DG_ERR_NOMEM, -1, "out of host memory");
        } else {
            for (p = 0; p < np; p++) {
                counts[p] = 1;
                counts[np + p] = (size_t)p;
            }
            st = job_comm->allgatherv(job_comm, &b, 1, all, counts, counts + np, &err);
        }
        free(counts);
        free(all);
    }
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* The noted bits (dg_fpe.h: kind * 8 + action) of the actions past a
 * warning (raise, call, print, log), for every kind. */
#define DIST_FPE_STRICT 0x3C3C3C3Cu

/* A process's part of dgpy_dist_share_fpe's exchange. */
typedef struct dist_fpe_rec {
    uint32_t noted;
    char where[28];
} dist_fpe_rec;

int dgpy_dist_share_fpe(uint32_t *noted, const char **where)
{
    static char name[sizeof(((dist_fpe_rec *)0)->where)]; /* under the GIL */
    dist_fpe_rec mine, *all;
    size_t *counts;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int np, p, named = 0;
    if (!job_comm)
        return 0;
    np = job_comm->size;
    memset(&mine, 0, sizeof mine);
    mine.noted = *noted & DIST_FPE_STRICT;
    if (mine.noted && *where)
        snprintf(mine.where, sizeof mine.where, "%s", *where);
    all = (dist_fpe_rec *)malloc((size_t)np * sizeof *all);
    counts = (size_t *)malloc(2 * (size_t)np * sizeof(size_t));
    if (!all || !counts) {
        free(all);
        free(counts);
        PyErr_NoMemory();
        return -1;
    }
    for (p = 0; p < np; p++) {
        counts[p] = sizeof(dist_fpe_rec);
        counts[np + p] = (size_t)p * sizeof(dist_fpe_rec);
    }
    Py_BEGIN_ALLOW_THREADS
    st = job_comm->allgatherv(job_comm, &mine, sizeof mine, all, counts, counts + np, &err);
    Py_END_ALLOW_THREADS
    for (p = 0; p < np && st == DG_OK; p++) {
        *noted |= all[p].noted & DIST_FPE_STRICT;
        if (!named && all[p].noted && all[p].where[0]) {
            memcpy(name, all[p].where, sizeof name);
            name[sizeof name - 1] = 0;
            named = 1;
        }
    }
    free(all);
    free(counts);
    if (st != DG_OK) {
        dgpy_raise(&err);
        return -1;
    }
    if (!*where && named)
        *where = name;
    return 0;
}

/* _dist_counts() -> (broadcasts, exchanges) this process's job comm has made
 * ((0, 0) alone): what tests count. */
static PyObject *f_dist_counts(PyObject *mod, PyObject *unused)
{
    long long nb = 0, nx = 0;
    (void)mod;
    (void)unused;
    if (job_comm)
        dgpy_mpi_counts(job_comm, &nb, &nx);
    return Py_BuildValue("(LL)", nb, nx);
}

/* _dist_allreduces() -> (all-reduces, of those through the host) of this
 * process's job: what tests count. */
static PyObject *f_dist_allreduces(PyObject *mod, PyObject *unused)
{
    long long all = 0, host = 0;
    (void)mod;
    (void)unused;
    dg_dist_allreduce_counts(&all, &host);
    return Py_BuildValue("(LL)", all, host);
}

/* _dist_read_piece(nbytes) -> the previous bytes of a piece of a host read
 * from another process (nbytes <= 0: only asks; tests set it small to
 * make reads of many pieces). */
static PyObject *f_dist_read_piece(PyObject *mod, PyObject *arg)
{
    const long long n = PyLong_AsLongLong(arg);
    (void)mod;
    if (n == -1 && PyErr_Occurred())
        return NULL;
    return PyLong_FromLongLong((long long)dg_dist_read_piece((int64_t)n));
}

PyMethodDef dgpy_dist_methods[] = {
    {"_dist_counts", f_dist_counts, METH_NOARGS,
     "(broadcasts, exchanges) of the job's host communication so far"},
    {"_dist_allreduces", f_dist_allreduces, METH_NOARGS,
     "(all-reduces, of those through the host) of the job so far"},
    {"_dist_read_piece", f_dist_read_piece, METH_O,
     "sets the bytes of a piece of a host read from another process; returns the previous"},
    {"_dist_gpu_share", f_dist_gpu_share, METH_O,
     "the DGARRAY_CUDA_DEVICES list this process would take of n GPUs, or None"},
    {"_dist_barrier", f_dist_barrier, METH_NOARGS,
     "waits for this process's devices, then for every process of the job"},
    {"_dist_local_info", f_dist_local_info, METH_NOARGS,
     "(names, totals, access) of this process's devices"},
    {"_dist_join", f_dist_join, METH_VARARGS, "joins a job of several processes (once)"},
    {"_dist_range", f_dist_range, METH_NOARGS, "(first, n): this process's devices in the job"},
    {NULL, NULL, 0, NULL},
};
