/* The binding's calls into the package's Python: one table of functions,
 * named once (DGPY_PY_FUNCS, DGPY_PY_METHODS and the attributes' getters and
 * setters in dgpy.h), handed over once
 * by `import dgarray` and checked then, so that a function the package lacks
 * is an ImportError of the import, not an AttributeError at some later call.
 * C then reaches each function by number, without a name lookup
 * (dgpy_py). */
#include "dgpy.h"

/* Where the package keeps the table, for the messages. */
#define PY_TABLE "dgarray._methods.CALLS"

#define DGPY_PY_NAME(name, doc) #name,
#define DGPY_PY_NAME_GET(name, doc) "get_" #name,
#define DGPY_PY_NAME_GETSET(name, doc) "get_" #name, "set_" #name,
static const char *const py_names[DGPY_NPY] = {
    DGPY_PY_FUNCS(DGPY_PY_NAME) DGPY_PY_METHODS(DGPY_PY_NAME)
    DGPY_PY_GETTERS(DGPY_PY_NAME_GET) DGPY_PY_GETSETTERS(DGPY_PY_NAME_GETSET)
};
#undef DGPY_PY_NAME
#undef DGPY_PY_NAME_GET
#undef DGPY_PY_NAME_GETSET

PyObject *dgpy_py_unbound(int id)
{
    PyErr_Format(PyExc_ImportError,
                 "dgarray's Python function '%s' is not bound yet: `import dgarray` has not "
                 "finished (use DistributedArrays only after it has)",
                 py_names[id]);
    return NULL;
}

/* The name in `table` (a dict, borrowed) that the binding does not call, or
 * NULL (no exception set) when every key is one of py_names. */
static PyObject *unknown_name(PyObject *table)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(table, &pos, &key, &value)) {
        int i, known = 0;
        for (i = 0; i < DGPY_NPY && !known; i++)
            known = PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, py_names[i]) == 0;
        if (!known)
            return key;
    }
    return NULL;
}

/* _core._bind_python(table): table (a dict, borrowed) maps every name of
 * DGPY_PY_FUNCS and DGPY_PY_METHODS, and nothing else, to a callable; the
 * binding keeps a reference to each (for the process's life, as it keeps
 * the module) and calls it from then on.  ImportError naming the first name
 * missing, not callable or unknown, and nothing bound. */
static PyObject *f_bind_python(PyObject *mod, PyObject *table)
{
    PyObject *fs[DGPY_NPY], *extra;
    int i;
    (void)mod;
    if (!PyDict_Check(table)) {
        PyErr_Format(PyExc_TypeError, "_bind_python takes a dict of functions, not %.100s",
                     Py_TYPE(table)->tp_name);
        return NULL;
    }
    for (i = 0; i < DGPY_NPY; i++) {
        fs[i] = PyDict_GetItemString(table, py_names[i]);
        if (!fs[i] || !PyCallable_Check(fs[i])) {
            PyErr_Format(PyExc_ImportError,
                         PY_TABLE " %s '%s', which src/py calls: give it the "
                         "function (see DGPY_PY_FUNCS / DGPY_PY_METHODS in src/py/dgpy.h)",
                         fs[i] ? "has no callable for" : "lacks", py_names[i]);
            return NULL;
        }
    }
    extra = unknown_name(table);
    if (extra) {
        PyErr_Format(PyExc_ImportError,
                     PY_TABLE " names %R, which src/py does not call: remove it, "
                     "or add it to DGPY_PY_FUNCS / DGPY_PY_METHODS in src/py/dgpy.h", extra);
        return NULL;
    }
    for (i = 0; i < DGPY_NPY; i++)
        Py_XSETREF(dgpy_st->py[i], Py_NewRef(fs[i]));
    Py_RETURN_NONE;
}

PyMethodDef dgpy_pycalls_methods[] = {
    {"_bind_python", f_bind_python, METH_O,
     "hands the binding the package's functions it calls (once, by `import dgarray`)"},
    {NULL, NULL, 0, NULL},
};
