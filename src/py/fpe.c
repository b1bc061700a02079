/* numpy.errstate for device work: the action word of NumPy's errstate handed
 * to the work a call enqueues, and what that work noted reported as NumPy
 * reports its loops' errors (src/core/dg_fpe.h, python/dgarray/_errstate.py). */
#include "dgpy.h"
#include "dg_fpe.h"

/* NumPy's errstate context variable, the value it held at the last look and
 * the action word of that value: errstate is read from Python only when the
 * variable holds another object (numpy.errstate or seterr ran).  The value is
 * held, so that its address cannot come back as another object's. */
static PyObject *cv_var, *cv_val;
static uint32_t cv_word;
static int cv_looked;

/* The action word of the errstate in force: 0, or -1 with an exception set. */
static int current_actions(uint32_t *word)
{
    PyObject *val = NULL, *r;
    long w;
    if (!cv_looked) {
        PyObject *f = dgpy_py(DGPY_PY_fpe_contextvar);
        PyObject *v = f ? PyObject_CallNoArgs(f) : NULL;
        if (!v)
            return -1;
        if (v != Py_None && PyContextVar_CheckExact(v))
            cv_var = v; /* kept for the life of the process */
        else
            Py_DECREF(v);
        cv_looked = 1;
    }
    if (cv_var) {
        if (PyContextVar_Get(cv_var, NULL, &val) < 0)
            return -1;
        if (val && val == cv_val) {
            Py_DECREF(val);
            *word = cv_word;
            return 0;
        }
    }
    {
        PyObject *f = dgpy_py(DGPY_PY_fpe_actions);
        r = f ? PyObject_CallNoArgs(f) : NULL;
    }
    if (!r) {
        Py_XDECREF(val);
        return -1;
    }
    w = PyLong_AsLong(r);
    Py_DECREF(r);
    if (w == -1 && PyErr_Occurred()) {
        Py_XDECREF(val);
        return -1;
    }
    Py_XSETREF(cv_val, val); /* the new reference from PyContextVar_Get, or NULL */
    cv_word = (uint32_t)w;
    *word = cv_word;
    return 0;
}

int dgpy_fpe_begin(uint32_t *was)
{
    uint32_t word;
    if (current_actions(&word) < 0)
        return -1;
    *was = dg_fpe_set_actions(word);
    return 0;
}

/* dgpy_fpe_report, naming the work `name` (NULL: by what noted it); with
 * `job`, after or'ing in what the other processes of a job noted past a
 * warning (dgpy_dist_share_fpe: every process must pass it at this call). */
static int report_as(const char *name, int job)
{
    const char *where;
    uint32_t noted = dg_fpe_take(&where);
    PyObject *f, *r;
    if (job && dgpy_dist_share_fpe(&noted, &where) < 0)
        return -1;
    if (!noted)
        return 0;
    f = dgpy_py(DGPY_PY_fpe_report);
    r = f ? PyObject_CallFunction(f, "ks", (unsigned long)noted, name ? name : where) : NULL;
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

int dgpy_fpe_report(void)
{
    return report_as(NULL, 0);
}

int dgpy_fpe_end(uint32_t was, int ok, dg_array *const *res, int nres, const char *name)
{
    const uint32_t word = dg_fpe_set_actions(was);
    int i;
    if (!ok || !word)
        return ok ? 0 : -1;
    /* A call asking more than a warning of some kind (raise, call, print,
     * log: dg_fpe_strict) waits for its work and reports at the call, as
     * NumPy does; its work was not deferred.  A call that only warns does not
     * wait (waiting would end the overlap of the caller with the devices
     * that every call relies on): its warnings come, named by the work that
     * raised them, at the end of a later call or at a host read, when the
     * work has run -- as a fused chain's do.  Reductions, scans and casts
     * (`name` given) still wait: their work includes elementwise steps
     * under other names, and NumPy names the call. */
    if (!dg_fpe_strict(word) && name == NULL)
        return report_as(NULL, 0);
    for (i = 0; i < nres; i++)
        if (res[i] && dgpy_wait_ready(res[i]) < 0)
            return -1;
    /* in a job, what any process's devices raised raises on every process
     * (only the process owning a device notes its work) */
    return report_as(name, dg_fpe_strict(word));
}

int dgpy_cast_may_raise(int from, int to)
{
    const char kf = dg_dtype_kind(from), kt = dg_dtype_kind(to);
    const int pf = dg_dtype_size(from) / (kf == 'c' ? 2 : 1);
    const int pt = dg_dtype_size(to) / (kt == 'c' ? 2 : 1);
    if (kf == 'b' || kt == 'b')
        return 0;
    if (kf == 'f' || kf == 'c')
        return kt == 'i' || kt == 'u' || pt < pf; /* invalid; narrowing: over, under */
    /* integers: into float16, those past its largest value (65504) */
    return to == DG_FLOAT16 && (from == DG_UINT16 || dg_dtype_size(from) > 2);
}
