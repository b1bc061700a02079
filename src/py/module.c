/* dgarray._core's set-up: the process-wide state, the type and exceptions,
 * the NumPy objects the binding keeps, the backend (backend.c), and the
 * module functions of every file (their tables, dgpy.h). */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <stdlib.h>
#include <string.h>

dgpy_state *dgpy_st = NULL;
static dgpy_state the_state;

static const char *const mode_names[DG_NMODES] = {"replica", "sum", "prod", "max", "min"};

/* The settings the environment gives at start (dgarray.config's defaults). */
static void read_environment(dgpy_state *st)
{
    const char *ms = getenv("DGARRAY_MIN_SPLIT_BYTES");
    st->min_split_bytes = 1 << 20;
    if (ms && *ms)
        st->min_split_bytes = (size_t)strtoull(ms, NULL, 10);
    ms = getenv("DGARRAY_PEER_READ_BYTES");
    if (ms && *ms)
        dg_set_peer_read_bytes((size_t)strtoull(ms, NULL, 10));
}

/* DistributedArray, DeviceError and OutOfDeviceMemoryError, made and added
 * to module m; the interned mode names.  0, or -1 with an exception set. */
static int add_types(dgpy_state *st, PyObject *m)
{
    int i;
    st->array_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &dgpy_array_spec, NULL);
    if (!st->array_type ||
        PyModule_AddObjectRef(m, "DistributedArray", (PyObject *)st->array_type) < 0)
        return -1;
    st->DeviceError = PyErr_NewExceptionWithDoc(
        "dgarray.DeviceError", "A CUDA, cuBLAS or NCCL call failed.", PyExc_RuntimeError, NULL);
    if (!st->DeviceError || PyModule_AddObjectRef(m, "DeviceError", st->DeviceError) < 0)
        return -1;
    st->OutOfDeviceMemoryError = PyErr_NewExceptionWithDoc(
        "dgarray.OutOfDeviceMemoryError",
        "A device ran out of memory; `device` and `bytes` say where and how much.",
        PyExc_MemoryError, NULL);
    if (!st->OutOfDeviceMemoryError ||
        PyModule_AddObjectRef(m, "OutOfDeviceMemoryError", st->OutOfDeviceMemoryError) < 0)
        return -1;
    for (i = 0; i < DG_NMODES; i++) {
        st->mode_names[i] = PyUnicode_InternFromString(mode_names[i]);
        if (!st->mode_names[i])
            return -1;
    }
    return 0;
}

/* The numpy.dtype of every dtype and the NumPy ufunc of every ufunc id, with
 * the dict from ufunc to id; the cache of NumPy's type resolution.  0, or
 * -1 with an exception set (what was made stays in st, as it would at
 * success: the process keeps it). */
static int keep_numpy_objects(dgpy_state *st)
{
    PyObject *np = PyImport_ImportModule("numpy"), *dtype_fn;
    int i, r = -1;
    if (!np)
        return -1;
    dtype_fn = PyObject_GetAttrString(np, "dtype");
    if (!dtype_fn)
        goto done;
    for (i = 0; i < DG_NDTYPES; i++)
        if (!(st->descrs[i] = PyObject_CallFunction(dtype_fn, "s", dg_dtype_name(i))))
            goto done;
    st->ufunc_ids = PyDict_New();
    st->resolve_cache = PyDict_New();
    if (!st->ufunc_ids || !st->resolve_cache)
        goto done;
    for (i = 1; i < DG_NUFUNCS; i++) { /* 0 is `cast`, not a NumPy ufunc */
        PyObject *v;
        if (!(st->ufuncs[i] = PyObject_GetAttrString(np, dg_ufunc_name(i))))
            goto done;
        v = PyLong_FromLong(i);
        if (!v || PyDict_SetItem(st->ufunc_ids, st->ufuncs[i], v) < 0) {
            Py_XDECREF(v);
            goto done;
        }
        Py_DECREF(v);
    }
    r = 0;
done:
    Py_XDECREF(dtype_fn);
    Py_DECREF(np);
    return r;
}

/* Every file's table of module functions (dgpy.h). */
static PyMethodDef *const method_tables[] = {
    dgpy_backend_methods, dgpy_chunkio_methods, dgpy_dist_methods, dgpy_create_methods,
    dgpy_dense_methods,   dgpy_dlpack_methods,
    dgpy_hostcopy_methods, dgpy_index_methods,  dgpy_layout_methods,  dgpy_matmul_methods,
    dgpy_probe_methods,   dgpy_pycalls_methods, dgpy_random_methods,  dgpy_reduce_methods,
    dgpy_settings_methods, dgpy_fusion_methods, dgpy_surface_methods,
};

/* The module's state is process-wide (the devices are a process-wide
 * resource), so a second load in one process is refused. */
static int module_exec(PyObject *m)
{
    dgpy_state *st = &the_state;
    size_t i;

    if (dgpy_st) {
        PyErr_SetString(PyExc_ImportError,
                        "dgarray._core cannot be loaded twice in one process");
        return -1;
    }
    memset(st, 0, sizeof(*st));
    if (dgpy_npy_import() < 0)
        return -1;
    dgpy_st = st;
    read_environment(st);
    dgpy_malloc_policy();
    for (i = 0; i < sizeof method_tables / sizeof method_tables[0]; i++)
        if (PyModule_AddFunctions(m, method_tables[i]) < 0)
            goto fail;
    /* [cpu-speed]: NumPy's inner loops for the CPU backend, before it starts */
    if (add_types(st, m) < 0 || keep_numpy_objects(st) < 0 || dgpy_npy_hand_loops() < 0 ||
        dgpy_backend_choose(st) < 0)
        goto fail;
    return 0;
fail:
    dgpy_st = NULL;
    return -1;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "dgarray._core",
    .m_doc = "dgarray's C core: distributed arrays on every device of the host.",
    .m_size = 0,
    .m_methods = NULL,
    .m_slots = module_slots,
};

PyMODINIT_FUNC PyInit__core(void)
{
    return PyModuleDef_Init(&module_def);
}
