/* dgarray._core's functions for NumPy's surface beyond ufuncs, reductions,
 * products and indexing (dgarray/_stats.py, _numeric.py, ... give them
 * NumPy's semantics): marking a result read-only as NumPy's views of it
 * are. */
#include "dgpy.h"

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

PyMethodDef dgpy_surface_methods[] = {
    {"_set_readonly", f_set_readonly, METH_O, "a may no longer be written; returns a"},
    {NULL, NULL, 0, NULL},
};
