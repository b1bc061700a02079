/* The backend dgarray._core runs on: chosen once, at set-up (DESIGN.md),
 * and the module functions that ask it about its devices and their memory. */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_loops.h"
#include "cpu_place.h"
#include "dg_fuse.h"

typedef dg_status (*cuda_create_fn)(int ndevices, dg_backend_i **out, dg_error *err);

/* The CUDA backend of module `mod` (dgarray._cuda, borrowed) in st->be: 0,
 * or -1 with an exception set (st->be left NULL). */
static int cuda_backend(dgpy_state *st, PyObject *mod)
{
    dg_error err = DG_ERROR_INIT;
    PyObject *cap = PyObject_GetAttrString(mod, "backend_create");
    cuda_create_fn fn = cap ? (cuda_create_fn)PyCapsule_GetPointer(
                                  cap, "dgarray._cuda.backend_create")
                            : NULL;
    Py_XDECREF(cap);
    if (!fn)
        return -1;
    if (fn(0, &st->be, &err) != DG_OK)
        return dgpy_raise_int(&err);
    if (st->be->version != DG_BACKEND_VERSION) {
        PyErr_Format(PyExc_RuntimeError,
                     "dgarray._cuda implements backend interface version %d, "
                     "dgarray._core needs %d: rebuild dgarray",
                     st->be->version, DG_BACKEND_VERSION);
        dg_be_destroy(st->be);
        st->be = NULL;
        return -1;
    }
    if (dg_be_fpe_attach(st->be, &err) != DG_OK) {
        dg_be_destroy(st->be);
        st->be = NULL;
        return dgpy_raise_int(&err);
    }
    return 0;
}

/* The CUDA backend made at set-up (never destroyed), for trim_at_exit. */
static dg_backend_i *exit_be;

/* At the very end of the interpreter's finalization (Py_AtExit: every
 * Python object that is going to be freed has been, and no Python API may
 * be called): the blocks the CUDA backend keeps for reuse and its reduction
 * scratch go back to the pools and the pools to the devices (dg_be_trim of
 * each device), so that compute-sanitizer's leak check at exit sees only
 * memory still held by objects Python never freed.  Errors are ignored: the
 * process is ending. */
static void trim_at_exit(void)
{
    dg_error err = DG_ERROR_INIT;
    int i;
    if (exit_be == NULL)
        return;
    for (i = 0; i < exit_be->ndevices; i++)
        (void)dg_be_trim(exit_be, i, &err);
}

void dgpy_backend_no_exit_trim(void)
{
    exit_be = NULL;
}

/* Hands hostmem.c the CUDA module's page-locking function (its capsule
 * host_pin) for the backend just made; without it (a module of another
 * build) host blocks stay pageable. */
static void cuda_host_pin(dgpy_state *st, PyObject *mod)
{
    PyObject *cap = PyObject_GetAttrString(mod, "host_pin");
    dgpy_pin_fn fn = cap ? (dgpy_pin_fn)PyCapsule_GetPointer(cap, "dgarray._cuda.host_pin")
                         : NULL;
    Py_XDECREF(cap);
    if (fn == NULL) {
        PyErr_Clear();
        return;
    }
    dgpy_hostmem_set_pin(fn, st->be);
}

/* The CUDA backend where dgarray._cuda loads and sees a GPU: 1 (st->be and
 * st->cuda_module set), 0 where it does not and `force` is 0 (no exception
 * set), -1 with an exception (that failure, when `force`). */
static int try_cuda(dgpy_state *st, int force)
{
    PyObject *mod = PyImport_ImportModule("dgarray._cuda"), *n;
    long ngpu;
    if (!mod) {
        PyObject *t, *v, *tb;
        if (!force) {
            PyErr_Clear();
            return 0;
        }
        PyErr_Fetch(&t, &v, &tb);
        PyErr_Format(PyExc_ImportError,
                     "DGARRAY_BACKEND=cuda but dgarray._cuda could not be loaded "
                     "(was dgarray built where nvcc was found?): %S", v ? v : Py_None);
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(tb);
        return -1;
    }
    n = PyObject_CallMethod(mod, "device_count", NULL);
    ngpu = n ? PyLong_AsLong(n) : -1;
    Py_XDECREF(n);
    if (ngpu > 0)
        dgpy_dist_share_gpus((int)ngpu); /* [multihost] one share of the GPUs per process */
    if (ngpu > 0 && cuda_backend(st, mod) == 0) {
        st->cuda_module = mod;
        cuda_host_pin(st, mod);
        exit_be = st->be; /* a job wraps it later (dist.c); this stays local */
        (void)Py_AtExit(trim_at_exit);
        return 1;
    }
    Py_DECREF(mod);
    if (ngpu > 0 || (ngpu < 0 && force))
        return -1;
    if (ngpu < 0) {
        PyErr_Clear();
        return 0;
    }
    if (force) {
        PyErr_SetString(PyExc_RuntimeError, "DGARRAY_BACKEND=cuda but no CUDA GPU was found");
        return -1;
    }
    return 0;
}

/* The CPU backend with DGARRAY_CPU_DEVICES virtual devices (default: the
 * cores, at most 16: dg_cpu_default_devices) in st->be: 0, or -1 with an exception set. */
static int cpu_backend(dgpy_state *st)
{
    const char *nd = getenv("DGARRAY_CPU_DEVICES");
    dg_error err = DG_ERROR_INIT;
    long n;
    if (nd && *nd) {
        char *end;
        n = strtol(nd, &end, 10);
        if (*end || n < 1 || n > 1024) {
            PyErr_Format(PyExc_ValueError,
                         "DGARRAY_CPU_DEVICES must be a whole number from 1 to 1024, "
                         "not '%s'", nd);
            return -1;
        }
    } else {
        n = dg_cpu_default_devices(); /* [cpu-speed]: cpu_place.c says why */
    }
    if (dg_cpu_backend_create((int)n, &st->be, &err) != DG_OK)
        return dgpy_raise_int(&err);
    return 0;
}

int dgpy_backend_choose(dgpy_state *st)
{
    const char *want = getenv("DGARRAY_BACKEND");
    int force_cuda = want && strcmp(want, "cuda") == 0;
    int force_cpu = want && strcmp(want, "cpu") == 0;
    int r;

    if (want && *want && !force_cuda && !force_cpu) {
        PyErr_Format(PyExc_ValueError,
                     "DGARRAY_BACKEND must be 'cpu' or 'cuda', not '%s'", want);
        return -1;
    }
    r = force_cpu ? 0 : try_cuda(st, force_cuda);
    return r != 0 ? (r > 0 ? 0 : -1) : cpu_backend(st);
}

/* ---- its devices and their memory -------------------------------------------- */

static PyObject *f_devices_info(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    PyObject *lst = PyList_New(be->ndevices);
    int i;
    (void)mod;
    (void)unused;
    if (!lst)
        return NULL;
    for (i = 0; i < be->ndevices; i++) {
        char name[128] = {0};
        size_t total = 0, freeb = 0;
        dg_error err = DG_ERROR_INIT;
        PyObject *t;
        if (dg_be_device_info(be, i, name, sizeof(name), &total, &freeb, &err) != DG_OK) {
            Py_DECREF(lst);
            return dgpy_raise(&err);
        }
        t = Py_BuildValue("(issnn)", i, be->name, name, (Py_ssize_t)total, (Py_ssize_t)freeb);
        if (!t) {
            Py_DECREF(lst);
            return NULL;
        }
        PyList_SET_ITEM(lst, i, t);
    }
    return lst;
}

static PyObject *f_backend(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyUnicode_FromString(dgpy_st->be->name);
}

static PyObject *f_ndevices(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromLong(dgpy_st->be->ndevices);
}

/* A list of of(be, dev) for every device. */
static PyObject *per_device(size_t (*of)(dg_backend_i *, int))
{
    dg_backend_i *be = dgpy_st->be;
    PyObject *lst = PyList_New(be->ndevices);
    int i;
    for (i = 0; lst && i < be->ndevices; i++) {
        PyObject *v = PyLong_FromSize_t(of(be, i));
        if (!v) {
            Py_CLEAR(lst);
            break;
        }
        PyList_SET_ITEM(lst, i, v);
    }
    return lst;
}

static PyObject *f_bytes_in_use(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    (void)unused;
    if (dg_fuse_flush(&err) != DG_OK)
        return dgpy_raise(&err);
    Py_BEGIN_ALLOW_THREADS
    st = dg_be_sync_all(be, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    return per_device(dg_be_bytes_in_use);
}

static PyObject *f_bytes_held(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return per_device(dg_be_bytes_held);
}

static PyObject *f_trim(PyObject *mod, PyObject *unused)
{
    dg_backend_i *be = dgpy_st->be;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int i;
    (void)mod;
    (void)unused;
    /* the long wait without the GIL; the hand-back after it is short */
    if (dg_fuse_flush(&err) != DG_OK)
        return dgpy_raise(&err);
    Py_BEGIN_ALLOW_THREADS
    st = dg_be_sync_all(be, &err);
    Py_END_ALLOW_THREADS
    for (i = 0; i < be->ndevices && st == DG_OK; i++)
        st = dg_be_trim(be, i, &err);
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *f_sync_all(PyObject *mod, PyObject *unused)
{
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    (void)unused;
    if (dgpy_wait_all() < 0)
        return NULL;
    if (dg_fuse_flush(&err) != DG_OK)
        return dgpy_raise(&err);
    Py_BEGIN_ALLOW_THREADS
    st = dg_be_sync_all(dgpy_st->be, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK)
        return dgpy_raise(&err);
    Py_RETURN_NONE;
}

/* _host_waits() -> how many host waits found work enqueued so far (the
 * round trips a sequence of ops makes: what tests count). */
static PyObject *f_host_waits(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong(dgpy_host_waits());
}

/* _cpu_stream_bytes(n=-1, plain=-1) -> (threshold, runs, plain): the CPU
 * backend's thresholds (bytes) above which an output is written past the
 * cache (cpu_loops.h; 0: never): a fused chain's, and a single loop's or a
 * copy's; and the runs that streamed so far.  n >= 0 sets both (for tests:
 * every size then takes that path), plain >= 0 then the second alone. */
static PyObject *f_cpu_stream_bytes(PyObject *mod, PyObject *args)
{
    long long n = -1, plain = -1;
    const size_t old = dg_cpu_stream_min(), oldp = dg_cpu_stream_plain_min();
    (void)mod;
    if (!PyArg_ParseTuple(args, "|LL", &n, &plain))
        return NULL;
    if (n >= 0)
        dg_cpu_stream_set_min(n == 0 ? (size_t)-1 : (size_t)n);
    if (plain >= 0)
        dg_cpu_stream_set_plain_min(plain == 0 ? (size_t)-1 : (size_t)plain);
    return Py_BuildValue("(LLL)", old == (size_t)-1 ? 0LL : (long long)old,
                         dg_cpu_stream_runs(), oldp == (size_t)-1 ? 0LL : (long long)oldp);
}

PyMethodDef dgpy_backend_methods[] = {
    {"_cpu_stream_bytes", f_cpu_stream_bytes, METH_VARARGS,
     "_cpu_stream_bytes(n=-1, plain=-1): the CPU backend's thresholds for stores past the "
     "cache (0: never) and the runs that streamed: (fused, runs, plain); n >= 0 sets both, "
     "plain >= 0 the second"},
    {"_devices_info", f_devices_info, METH_NOARGS, "[(id, backend, name, total, free)]"},
    {"backend", f_backend, METH_NOARGS, "backend() -> 'cpu' or 'cuda'"},
    {"_ndevices", f_ndevices, METH_NOARGS, "number of devices"},
    {"_bytes_in_use", f_bytes_in_use, METH_NOARGS, "device bytes allocated, per device"},
    {"_bytes_held", f_bytes_held, METH_NOARGS,
     "device bytes the memory pools hold (allocated or kept for reuse), per device"},
    {"_trim", f_trim, METH_NOARGS,
     "waits for all work, then hands memory kept for reuse back to every device"},
    {"_sync_all", f_sync_all, METH_NOARGS, "wait for all devices"},
    {"_host_waits", f_host_waits, METH_NOARGS,
     "how many host waits found work enqueued on the devices so far"},
    {NULL, NULL, 0, NULL},
};
