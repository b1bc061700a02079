/* numpy.errstate for device work: the action word of NumPy's errstate handed
 * to the work a call enqueues, and what that work noted reported as NumPy
 * reports its loops' errors (src/core/dg_fpe.h, python/dgarray/_errstate.py). */
#include "dgpy.h"
#include "dg_fpe.h"
#include "dg_fuse.h"

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

/* dgpy_fpe_report, naming the work `name` (NULL: by what noted it). */
static int report_as(const char *name)
{
    const char *where;
    const uint32_t noted = dg_fpe_take(&where);
    PyObject *f, *r;
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
    return report_as(NULL);
}

int dgpy_fpe_end(uint32_t was, int ok, dg_array *const *res, int nres, const char *name)
{
    const uint32_t word = dg_fpe_set_actions(was);
    int i;
    if (!ok || !word)
        return ok ? 0 : -1;
    /* The call's work is waited for, unless errstate only warns and a
     * pending chain may hold it: a chain's warnings come where it runs (a
     * host read, or the end of a later call), as its other device errors do;
     * a call asking more than a warning was not deferred (dg_fpe_strict). */
    if (dg_fpe_strict(word) || !dg_fuse_pending())
        for (i = 0; i < nres; i++)
            if (res[i] && dgpy_wait_ready(res[i]) < 0)
                return -1;
    return report_as(name);
}
