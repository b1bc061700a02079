/* The binding layer's shared declarations: the DistributedArray object, the
 * module state, and the helpers each file of src/py offers the others.
 *
 * npy.c is the only file that uses NumPy's C-API; errors.c the only one that
 * makes Python exceptions from core errors. */
#ifndef DGPY_H
#define DGPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dg_array.h"
#include "dg_ufunc.h"

typedef struct {
    PyObject_HEAD
    dg_array *arr; /* owned reference */
    PyObject *weakreflist;
} DgArrayObject;

/* Process-wide state: the devices are a process-wide resource, so the module
 * refuses to be initialised twice (see module.c). */
typedef struct dgpy_state {
    PyTypeObject *array_type;
    PyObject *DeviceError;
    PyObject *OutOfDeviceMemoryError;
    dg_backend_i *be;
    PyObject *cuda_module;
    size_t min_split_bytes;
    PyObject *ufunc_ids;             /* dict: numpy ufunc -> int id */
    PyObject *ufuncs[DG_NUFUNCS];    /* numpy ufunc objects by id */
    PyObject *resolve_cache;         /* dict: key -> (loop, dtypes tuple) */
    PyObject *impl;                  /* dgarray._impl, imported on first use */
    PyObject *mode_names[DG_NMODES]; /* "replica", "sum", ... */
    PyObject *descrs[DG_NDTYPES];    /* numpy.dtype objects */
    PyObject *np_matmul;
} dgpy_state;

extern dgpy_state *dgpy_st;

#define DgArray_Check(o) PyObject_TypeCheck((o), dgpy_st->array_type)

/* ---- errors.c ---- */
/* Raises the Python exception for a core error; returns NULL. */
PyObject *dgpy_raise(const dg_error *err);
/* Same, returning -1. */
int dgpy_raise_int(const dg_error *err);

/* ---- npy.c (the NumPy C-API) ---- */
int dgpy_npy_import(void);
/* dg dtype of a numpy.dtype object, or -1 (no exception set). */
int dgpy_dtype_of_descr(PyObject *descr);
/* dg dtype of any dtype-like (None -> -1 with no error; unsupported -> -1
 * with TypeError naming it). */
int dgpy_dtype_from_obj(PyObject *obj, int *out);
int dgpy_is_ndarray(PyObject *o);
int dgpy_is_npscalar(PyObject *o);
/* New reference: `o` as an ndarray of dtype `dt` (-1: its own dtype, which
 * must be supported).  TypeError for object, str and other dtypes. */
PyObject *dgpy_as_ndarray(PyObject *o, int dt);
/* Shape, byte strides, data and dtype of an ndarray. */
void dgpy_ndarray_info(PyObject *arr, int *ndim, int64_t *shape, int64_t *strides,
                       char **data, int *dtype);
/* New C-contiguous ndarray (uninitialised). */
PyObject *dgpy_ndarray_new(int ndim, const int64_t *shape, int dtype);
/* Converts a scalar or 0-d array to one value of dtype dt, NumPy's way
 * (OverflowError for an out-of-range Python int). */
int dgpy_scalar_bytes(PyObject *o, int dt, unsigned char out[16]);

/* ---- array.c ---- */
/* Wraps a core array (reference transferred) in a new DistributedArray. */
PyObject *dgpy_wrap(dg_array *arr);
/* New reference to `a` (a DistributedArray) in REPLICA mode. */
dg_status dgpy_replica(DgArrayObject *a, dg_array **out, dg_error *err);
/* New reference: an ndarray holding all of `a`'s values. */
PyObject *dgpy_gather(DgArrayObject *a);
/* Layout helpers: Python list [(dev, ((start, stop, step), ...)), ...]. */
int dgpy_layout_from_py(PyObject *lst, int ndim, dg_plan_chunk **out, int *n);
PyObject *dgpy_layout_to_py(const dg_array *a);
/* A new array of this layout with the host data of ndarray `host`. */
PyObject *dgpy_from_host(PyObject *host, const dg_plan_chunk *layout, int n, int mode);
/* A default layout for shape; *out malloc'ed. */
int dgpy_default_layout(int ndim, const int64_t *shape, int dtype, dg_plan_chunk **out,
                        int *n);
/* dgarray._impl.<name>, borrowed. */
PyObject *dgpy_impl(const char *name);
extern PyType_Spec dgpy_array_spec;

/* ---- module.c ---- */
/* An int or a sequence of ints -> (ndim, shape); -1 with ValueError for
 * negative sizes or more than DG_MAXDIM axes. */
int dgpy_parse_shape(PyObject *o, int *nd, int64_t *shape);

/* ---- index.c ---- */
/* The core array of a DistributedArray argument (borrowed), or NULL with
 * TypeError naming the function. */
dg_array *dgpy_arg_array(PyObject *o, const char *fn);
/* The module functions of indexing, views and sorting (_view, _select, ...). */
extern PyMethodDef dgpy_index_methods[];

/* ---- surface.c ---- */
/* The module functions of NumPy's surface beyond indexing (_set_readonly, ...). */
extern PyMethodDef dgpy_surface_methods[];

/* ---- ufunc.c ---- */
/* Applies ufunc `id` (NumPy object `ufunc`) to args/kwargs as
 * ufunc.__call__ would.  Returns NotImplemented for operands it cannot take. */
PyObject *dgpy_ufunc_call(int id, PyObject *ufunc, PyObject *args, PyObject *kwargs);
/* Binary operator a OP b for ufunc id (NotImplemented for foreign types). */
PyObject *dgpy_binop(int id, PyObject *a, PyObject *b);
/* In-place operator: ufunc(a, b, out=a). */
PyObject *dgpy_inplace(int id, PyObject *a, PyObject *b);
PyObject *dgpy_unop(int id, PyObject *a);
/* ufunc `id` on positional args (inputs then outputs), no keywords. */
PyObject *dgpy_ufunc_apply(int id, PyObject *const *args, int nargs);
/* Casts a into dtype (same layout); new reference. */
dg_status dgpy_cast(dg_array *a, int dtype, dg_array **out, dg_error *err);
/* __array_ufunc__ entry. */
PyObject *dgpy_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- matmul.c ---- */
/* _core._contract and _core._matmul_plan (see matmul.c). */
PyObject *dgpy_f_contract(PyObject *mod, PyObject *args);
PyObject *dgpy_f_matmul_plan(PyObject *mod, PyObject *args);
PyObject *dgpy_f_set_cpu_blas(PyObject *mod, PyObject *fns);

/* ---- wait.c ---- */
/* Waits until a host read of `a` (borrowed) would not queue behind other
 * work (dg_waitset_of_array), interruptibly: 0, or -1 with an exception set
 * (KeyboardInterrupt from Ctrl-C), the work going on. */
int dgpy_wait_ready(const dg_array *a);
/* The same for all work on all devices. */
int dgpy_wait_all(void);

/* ---- hostcopy.c ---- */
/* Copies the host array (`host`, byte strides `strides`, a's shape) into
 * every chunk of a, or region of a (REPLICA) into the host array `host` of
 * region's shape: in pieces without the GIL, Ctrl-C between them, progress
 * on sys.stderr for long copies (config.progress).  0, or -1 with an
 * exception set. */
int dgpy_scatter(dg_array *a, const char *host, const int64_t *strides);
int dgpy_gather_into(dg_array *a, const dg_box *region, char *host, const int64_t *strides);
/* _core._set_progress(True | False | "always"), _core._get_progress(),
 * _core._piece_bytes(n) -> the previous piece size (tests). */
PyObject *dgpy_f_set_progress(PyObject *mod, PyObject *arg);
PyObject *dgpy_f_get_progress(PyObject *mod, PyObject *unused);
PyObject *dgpy_f_piece_bytes(PyObject *mod, PyObject *arg);

/* ---- random.c ---- */
/* _fill_random(array, dist, key0, key1, stream, a, b, lo, range): fills in
 * place (dg_fill_random). */
PyObject *dgpy_fill_random(PyObject *mod, PyObject *args);

#endif /* DGPY_H */
