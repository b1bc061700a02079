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

/* ---- the package's Python functions that the binding calls (pycalls.c) ----
 *
 * Each is named once, in one of these two lists; the package hands them over
 * once, as the last step of `import dgarray` (dgarray._methods.CALLS, passed
 * to _core._bind_python), and the binding reaches them by number
 * (dgpy_py(DGPY_PY_<name>)).  A name the table lacks is an ImportError of
 * `import dgarray`.  docs/architecture.md ("Calls into Python"). */

/* Functions called with positional arguments: name, what calls it. */
#define DGPY_PY_FUNCS(X)                                                                   \
    X(getitem, "a[key]")                                                                  \
    X(setitem, "a[key] = value")                                                          \
    X(array_iter, "iter(a)")                                                              \
    X(matmul_op, "a @ b")                                                                 \
    X(imatmul, "a @= b")                                                                  \
    X(index_map_of, "a.index_map")                                                        \
    X(array_repr, "repr(a)")                                                              \
    X(array_str, "str(a)")                                                                \
    X(copy_into_host, "out= a NumPy array: numpy.copyto(out, host, where)")               \
    X(check_astype_casting, "a.astype(dtype, casting=...): NumPy's can_cast")             \
    X(ufunc_method, "__array_ufunc__ other than a ufunc call with dgarray loops")          \
    X(any_negative, "integer ** integer array: is any exponent negative")                 \
    X(fpe_contextvar, "NumPy's errstate context variable (None without one)")             \
    X(fpe_actions, "the action word of numpy.errstate (src/core/dg_fpe.h)")               \
    X(fpe_report, "report(noted, name): floating-point errors as numpy.errstate says")

/* DistributedArray methods written in Python, called as f(self, *args, **kw)
 * (vectorcall, self prepended): name, docstring. */
#define DGPY_PY_METHODS(X)                                                                  \
    X(sum, "sum(axis=None, dtype=None, out=None, keepdims=False, initial=, where=True)")   \
    X(prod, "prod(axis=None, dtype=None, out=None, keepdims=False, initial=, where=True)") \
    X(max, "max(axis=None, out=None, keepdims=False, initial=, where=True)")             \
    X(min, "min(axis=None, out=None, keepdims=False, initial=, where=True)")             \
    X(mean, "mean(axis=None, dtype=None, out=None, keepdims=False, where=True)")         \
    X(var, "var(axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True)")   \
    X(std, "std(axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True)")   \
    X(any, "any(axis=None, out=None, keepdims=False, where=True)")                       \
    X(all, "all(axis=None, out=None, keepdims=False, where=True)")                       \
    X(ptp, "ptp(axis=None, out=None, keepdims=False)")                                   \
    X(argmax, "argmax(axis=None, out=None, keepdims=False)")                             \
    X(argmin, "argmin(axis=None, out=None, keepdims=False)")                             \
    X(cumsum, "cumsum(axis=None, dtype=None, out=None)")                                 \
    X(cumprod, "cumprod(axis=None, dtype=None, out=None)")                               \
    X(reshape, "reshape(*shape, order='C', copy=None): a view where the layout allows")   \
    X(ravel, "ravel(order='C'): a as 1-d, a view where the layout allows")                \
    X(flatten, "flatten(order='C'): a 1-d copy")                                         \
    X(transpose, "transpose(*axes): a view with the axes permuted")                      \
    X(swapaxes, "swapaxes(axis1, axis2): a view with two axes exchanged")                \
    X(squeeze, "squeeze(axis=None): a view without length-1 axes")                       \
    X(clip, "clip(min=None, max=None, out=None): values limited to [min, max]")          \
    X(round, "round(decimals=0, out=None): rounded as numpy.round rounds")              \
    X(conj, "conj(): the complex conjugate, element-wise")                              \
    X(conjugate, "conjugate(): the complex conjugate, element-wise")                    \
    X(repeat, "repeat(repeats, axis=None): each element repeated")                       \
    X(sort, "sort(axis=-1): sorts in place")                                             \
    X(argsort, "argsort(axis=-1): the indices that sort the array")                      \
    X(take, "take(indices, axis=None, out=None, mode='raise'): elements at indices")     \
    X(put, "put(indices, values, mode='raise'): a.flat[indices] = values")               \
    X(nonzero, "nonzero(): the indices of the non-zero elements, one array per axis")    \
    X(compress, "compress(condition, axis=None, out=None): the slices where true")       \
    X(fill, "fill(value): every element = value")                                        \
    X(dot, "dot(b, out=None): the dot product with b, as numpy.dot")                      \
    X(reshard, "reshard(index_map): the same values laid out as index_map says.")          \
    X(item, "item(*args): one element as a Python scalar.")                               \
    X(tolist, "tolist(): the values as nested Python lists.")                              \
    X(__array_function__, "NumPy functions that dgarray implements run on the devices")  \
    X(__array_namespace__, "__array_namespace__(api_version=None): the dgarray module")    \
    X(_repr_html_, "Jupyter's view: the values and a picture of the layout")              \
    X(__reduce_ex__, "pickling: layout, mode and each chunk's values (protocol 5: "      \
                     "out of band)")                                                    \
    X(__copy__, "copy.copy(a): a copy of the values, as NumPy's")                        \
    X(__deepcopy__, "copy.deepcopy(a): a copy of the values, as NumPy's")                \
    X(diagonal, "diagonal(offset=0, axis1=0, axis2=1): a read-only diagonal")             \
    X(trace, "trace(offset=0, axis1=0, axis2=1, dtype=None, out=None): a diagonal's sum") \
    X(searchsorted, "searchsorted(v, side='left', sorter=None): where v goes to keep order") \
    X(partition, "partition(kth, axis=-1): partitions in place (a sort is one)")         \
    X(argpartition, "argpartition(kth, axis=-1): the indices that partition the array")   \
    X(view, "view([dtype][, type]): a view of the same memory, read as dtype")          \
    X(choose, "choose(choices, out=None, mode='raise'): elements picked from choices")   \
    X(resize, "resize(new_shape): the shape changed in place, new elements zero")       \
    X(byteswap, "byteswap(inplace=False): the bytes of each element reversed")          \
    X(tobytes, "tobytes(order='C'): the raw bytes of the elements (on the host)")      \
    X(tofile, "tofile(fid, sep='', format='%s'): the elements written to a file")      \
    X(dumps, "dumps(): a pickle of the array")                                          \
    X(dump, "dump(file): the array pickled into a file")                                \
    X(to_device, "to_device(device, /, *, stream=None): the array on those devices")     \
    X(__dlpack__, "__dlpack__(*, stream=None, max_version=None, dl_device=None, "       \
                  "copy=None): DLPack's capsule of the array's one chunk, no copy")      \
    X(__dlpack_device__, "__dlpack_device__(): (DLPack device type, device id)")         \
    X(chunks, "chunks() -> [(device, index, chunk), ...]: every chunk of the array "     \
              "(this process's, in a job), each lent without a copy.\n\n"                 \
              "device is the device number, index the tuple of slices of the array the " \
              "chunk holds (as index_map writes them), chunk an object lending the "     \
              "chunk's memory: DLPack (__dlpack__, __dlpack_device__), "                  \
              "__cuda_array_interface__ (version 3) on GPUs, __array_interface__ on the " \
              "CPU backend; shape, dtype, strides, device.  numpy.from_dlpack(chunk), "   \
              "numpy.asarray(chunk) (CPU backend), cupy.from_dlpack(chunk), "             \
              "cupy.asarray(chunk), torch.from_dlpack(chunk) view the chunk in place. "   \
              "Each lend waits for the array's pending writes and makes a writable "     \
              "array's memory its own first (copy on write); read-only arrays lend "      \
              "read-only chunks.  Replicated or overlapping layouts list a chunk per "    \
              "device; op modes (SUM, ...) lend partial values.")

/* DistributedArray attributes written in Python: name, docstring.  The
 * registry holds get_<name> for each (called as f(self)) and set_<name> for
 * the settable ones (DGPY_PY_GETSETTERS; called as f(self, value)). */
#define DGPY_PY_GETTERS(X)                                                              \
    X(mT, "The array with its last two axes swapped (a view).")                         \
    X(base, "None: dgarray does not track which array a view was made from.")           \
    X(flags, "Flags as NumPy's (WRITEABLE may be cleared).")                            \
    X(strides, "Byte strides, where every chunk has the same.")                         \
    X(device, "The devices holding the chunks (a dgarray.DeviceSet).")
#define DGPY_PY_GETSETTERS(X)                                                           \
    X(real, "The real part (a view of complex elements; the array itself else).")       \
    X(imag, "The imaginary part (a view of complex elements; read-only zeros else).")   \
    X(flat, "A flat iterator over the elements (indexable, assignable).")

#define DGPY_PY_ENUM(name, doc) DGPY_PY_##name,
#define DGPY_PY_ENUM_GET(name, doc) DGPY_PY_get_##name,
#define DGPY_PY_ENUM_GETSET(name, doc) DGPY_PY_get_##name, DGPY_PY_set_##name,
enum {
    DGPY_PY_FUNCS(DGPY_PY_ENUM) DGPY_PY_METHODS(DGPY_PY_ENUM)
    DGPY_PY_GETTERS(DGPY_PY_ENUM_GET) DGPY_PY_GETSETTERS(DGPY_PY_ENUM_GETSET) DGPY_NPY
};
#undef DGPY_PY_ENUM
#undef DGPY_PY_ENUM_GET
#undef DGPY_PY_ENUM_GETSET

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
    PyObject *mode_names[DG_NMODES]; /* "replica", "sum", ... */
    PyObject *descrs[DG_NDTYPES];    /* numpy.dtype objects */
    PyObject *py[DGPY_NPY];          /* the package's functions (pycalls.c), owned */
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
/* dgpy_dtype_from_obj for a ufunc's dtype= or signature=, which also take a
 * DType class (numpy.dtypes.Float64DType), as NumPy's ufuncs do. */
int dgpy_ufunc_dtype_from_obj(PyObject *obj, int *out);
int dgpy_is_ndarray(PyObject *o);
int dgpy_is_npscalar(PyObject *o);
/* Whether o is one int as an index-map key takes it: not a bool (Python's
 * or NumPy's), has __index__, and is no ndarray of dimensions. */
int dgpy_is_int_index(PyObject *o);
/* New reference: `o` as an ndarray of dtype `dt` (-1: its own dtype, which
 * must be supported).  TypeError for object, str and other dtypes. */
PyObject *dgpy_as_ndarray(PyObject *o, int dt);
/* Shape, byte strides, data and dtype of an ndarray. */
void dgpy_ndarray_info(PyObject *arr, int *ndim, int64_t *shape, int64_t *strides,
                       char **data, int *dtype);
/* New C-contiguous ndarray (uninitialised); one of at least
 * DGPY_HOSTMEM_MIN bytes lives in a block of hostmem.c. */
PyObject *dgpy_ndarray_new(int ndim, const int64_t *shape, int dtype);

/* ---- hostmem.c ---- */
/* Arrays of at least this many bytes that the devices are read into. */
#define DGPY_HOSTMEM_MIN ((size_t)16 << 20)
/* n bytes (zeroed if zero) of a kept block of their size, else of a fresh
 * mapping; NULL if out of memory.  Release with dgpy_hostmem_give. */
void *dgpy_hostmem_take(size_t n, int zero);
/* A block of n bytes holding q's first bytes; q is given back.  NULL (q
 * kept) if out of memory. */
void *dgpy_hostmem_resize(void *q, size_t n);
/* Gives back a block of dgpy_hostmem_take: kept for reuse, or unmapped. */
void dgpy_hostmem_give(void *q);
/* Page-locks (pin 1) or unlocks (pin 0) n bytes at p; 1 on success, 0 if
 * refused (the CUDA backend's dg_cuda_host_pin). */
typedef int (*dgpy_pin_fn)(dg_backend_i *be, void *p, size_t n, int pin);
/* From now on kept blocks taken again are page-locked by fn (with be, which
 * lives as long as the process), unless DGARRAY_HOST_PIN=0.  Called once,
 * when the CUDA backend is made. */
void dgpy_hostmem_set_pin(dgpy_pin_fn fn, dg_backend_i *be);

/* ---- mallocpolicy.c ---- */
/* Raises glibc's mmap and trim thresholds so that the large tables of layouts
 * of many chunks are reused from the heap, not mapped afresh on each call
 * (mallocpolicy.c says why and how to change it).  At module load. */
void dgpy_malloc_policy(void);
/* Converts a scalar or 0-d array to one value of dtype dt, NumPy's way
 * (OverflowError for an out-of-range Python int). */
int dgpy_scalar_bytes(PyObject *o, int dt, unsigned char out[16]);
struct dg_cpu_fft_loops;
/* NumPy's pocketfft gufunc loops (numpy.fft._pocketfft_umath) into *out:
 * 0, or -1 with an exception. */
int dgpy_npy_fft_loops(struct dg_cpu_fft_loops *out);
/* Hands NumPy's own inner loops and argmax / argmin functions to the CPU
 * backend (cpu_ext.h), unless DGARRAY_CPU_LOOPS=own.  Needs
 * dgpy_st->ufuncs.  0, or -1 with an exception. */
int dgpy_npy_hand_loops(void);

/* ---- array.c ---- */
/* Wraps a core array (reference transferred) in a new DistributedArray. */
PyObject *dgpy_wrap(dg_array *arr);
/* New reference to `a` (a DistributedArray) in REPLICA mode. */
dg_status dgpy_replica(DgArrayObject *a, dg_array **out, dg_error *err);
/* New reference: an ndarray holding all of `a`'s values. */
PyObject *dgpy_gather(DgArrayObject *a);
/* A new array of this layout with the host data of ndarray `host`. */
PyObject *dgpy_from_host(PyObject *host, const dg_plan_chunk *layout, int n, int mode);
extern PyType_Spec dgpy_array_spec;

/* ---- layout.c ---- */
/* A layout's list form [(dev, ((start, stop, step), ...)), ...] (borrowed)
 * into *out (PyMem_Malloc'ed, caller frees), *n chunks: parsed, not checked
 * (the core function it goes to checks it). */
int dgpy_layout_from_py(PyObject *lst, int ndim, dg_plan_chunk **out, int *n);
/* The layout index map `map` (borrowed) names over shape, checked
 * (dg_layout_of_index_map), into *out (malloc'ed, caller frees), *n chunks;
 * -1 with an exception set.  No Python object per chunk. */
int dgpy_index_map_layout(PyObject *map, int ndim, const int64_t *shape, dg_plan_chunk **out,
                          int *n);
/* a._reshard_map(index_map): a itself (a new reference) where the index map
 * (checked by dg_layout_of_index_map) names a's layout, else a resharded to
 * it; all in C, so that maps of many chunks make no Python objects. */
PyObject *dgpy_reshard_map(DgArrayObject *self, PyObject *map);
/* New reference: the list form of a's logical layout. */
PyObject *dgpy_layout_to_py(const dg_array *a);
/* New references: ((start, stop, step), ...) of a box; the list
 * [(dev, box), ...] of n plan chunks (borrowed). */
PyObject *dgpy_box_to_py(const dg_box *b);
PyObject *dgpy_chunks_to_py(const dg_plan_chunk *l, int n);
/* A default layout for shape; *out malloc'ed. */
int dgpy_default_layout(int ndim, const int64_t *shape, int dtype, dg_plan_chunk **out,
                        int *n);

/* ---- pycalls.c ---- */
/* Sets the ImportError of a call made before `import dgarray` handed its
 * functions over; returns NULL. */
PyObject *dgpy_py_unbound(int id);
/* Borrowed: the package's function `id` (DGPY_PY_<name>), or NULL with an
 * exception set while the package is still being imported. */
static inline PyObject *dgpy_py(int id)
{
    PyObject *f = dgpy_st->py[id];
    return f ? f : dgpy_py_unbound(id);
}

/* ---- backend.c ---- */
/* Sets st->be to the backend DESIGN.md says (DGARRAY_BACKEND, else CUDA
 * where dgarray._cuda sees a GPU, else the CPU backend): 0, or -1 with an
 * exception set. */
int dgpy_backend_choose(dgpy_state *st);
/* No trim of the CUDA backend at exit (a job's devices may be left in
 * transfers that wait on other processes); dist.c calls it on joining. */
void dgpy_backend_no_exit_trim(void);

/* ---- create.c ---- */
/* An int or a sequence of ints -> (ndim, shape); -1 with ValueError for
 * negative sizes or more than DG_MAXDIM axes. */
int dgpy_parse_shape(PyObject *o, int *nd, int64_t *shape);

/* ---- chunkio.c ---- */
/* 0 if a has a chunk i on one of this process's devices (every device but
 * in a job of several processes), else -1 with IndexError (no chunk i) or
 * BufferError (another process's). */
int dgpy_own_chunk(const dg_array *a, int i);

/* ---- index.c ---- */
/* The core array of a DistributedArray argument (borrowed), or NULL with
 * TypeError naming the function. */
dg_array *dgpy_arg_array(PyObject *o, const char *fn);

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
/* __array_ufunc__ entry. */
PyObject *dgpy_array_ufunc(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- wait.c ---- */
/* Waits until a host read of `a` (borrowed) would not queue behind other
 * work (dg_waitset_of_array), interruptibly: 0, or -1 with an exception set
 * (KeyboardInterrupt from Ctrl-C), the work going on. */
int dgpy_wait_ready(const dg_array *a);
/* The same for n arrays at once (borrowed): one wait for the work all
 * their reads would queue behind. */
int dgpy_wait_ready_many(dg_array *const *a, int n);
/* The same for all work on all devices. */
int dgpy_wait_all(void);
/* How many host waits found work enqueued (done or not) so far. */
long long dgpy_host_waits(void);

/* ---- fpe.c ---- */
/* Hands the calling thread's work NumPy's errstate (dg_fpe_set_actions);
 * *was the word to give dgpy_fpe_end.  0, or -1 with an exception set. */
int dgpy_fpe_begin(uint32_t *was);
/* Ends a call begun with dgpy_fpe_begin: restores `was`; where the call
 * succeeded (ok) and errstate watched anything, waits for its results
 * res[0..nres) (NULLs skipped; not where a fused chain is pending) and
 * reports what its work noted, named `name` in NumPy's message ("reduce";
 * NULL: by the ufunc whose loop noted it).  0, or -1 (nothing set where
 * !ok; else an exception set: FloatingPointError, a callback's). */
int dgpy_fpe_end(uint32_t was, int ok, dg_array *const *res, int nres, const char *name);
/* a's elements cast into dtype dt (a new array, its layout), the cast's
 * floating-point errors reported under NumPy's errstate named `name` in
 * NumPy's message ("cast"; "reduce" for a reduction's result cast back):
 * dgpy_fpe_begin / dgpy_fpe_end around dg_array_cast.  A new reference, or
 * NULL with an exception set.  (array.c) */
PyObject *dgpy_cast_reported(DgArrayObject *a, int dt, const char *name);
/* 1 where NumPy's cast from dtype `from` into `to` can raise a
 * floating-point error (a float into an integer: invalid; into a narrower
 * float: overflow, underflow; an integer wider than int16, or uint16, into
 * float16: overflow), 0 for the others (exact, or wrapping integers).
 * (fpe.c) */
int dgpy_cast_may_raise(int from, int to);
/* Reports what device work noted since the last report (host reads call
 * it after their wait).  0, or -1 with an exception set. */
int dgpy_fpe_report(void);

/* ---- hostcopy.c ---- */
/* Copies the host array (`host`, byte strides `strides`, a's shape) into
 * every chunk of a, or region of a (REPLICA) into the host array `host` of
 * region's shape: in pieces without the GIL, Ctrl-C between them, progress
 * on sys.stderr for long copies (config.progress).  0, or -1 with an
 * exception set. */
int dgpy_scatter(dg_array *a, const char *host, const int64_t *strides);
int dgpy_gather_into(dg_array *a, const dg_box *region, char *host, const int64_t *strides);
/* A long host copy as steps: each called without the GIL, says the bytes it
 * copied and whether another follows; Ctrl-C and progress between steps, as
 * above, `total` being the bytes of all steps.  0, or -1 with an exception
 * set (a step's error is raised from its dg_error). */
typedef dg_status (*dgpy_step_fn)(void *ctx, int64_t *nbytes, int *more, dg_error *err);
int dgpy_run_steps(const char *what, int64_t total, dgpy_step_fn fn, void *ctx);
/* The bytes of one piece of a host copy (_core._piece_bytes sets it). */
int64_t dgpy_piece_bytes(void);

/* ---- the module's functions ----
 * Each file that defines functions of dgarray._core lists them in its own
 * table; module.c adds every table to the module. */
extern PyMethodDef dgpy_backend_methods[];  /* backend.c: devices, memory */
extern PyMethodDef dgpy_chunkio_methods[];  /* chunkio.c: chunk host copies, .npy files */
extern PyMethodDef dgpy_dist_methods[];     /* dist.c: joining a job of processes */
/* [multihost] dist.c: where a launcher started several processes on this host
 * and DGARRAY_CUDA_DEVICES is unset, sets it to this process's share of the
 * host's ngpu GPUs (local rank r of L: GPUs r*ngpu/L .. (r+1)*ngpu/L - 1;
 * GPU r % ngpu when there are fewer GPUs than processes). */
void dgpy_dist_share_gpus(int ngpu);
/* [surface] item 3: in a job of several processes, or's into *noted the
 * kinds every process noted with an action asking more than a warning
 * (raise, call, print, log: dg_fpe_strict), so that each process reports
 * them alike (an error raised on the devices of one process raises on all,
 * as the SPMD program needs), and sets *where, where it is NULL, to the
 * name of the first process's work that noted them; one exchange of 32
 * bytes from each process.  Every process must call it at the same call
 * (the errstate decides, the same everywhere).  Nothing alone.  0, or -1
 * with an exception set. */
int dgpy_dist_share_fpe(uint32_t *noted, const char **where);
extern PyMethodDef dgpy_create_methods[];   /* create.c: _from_host, _empty, _fill */
extern PyMethodDef dgpy_dense_methods[];    /* dense.c: _dense, _fft, LAPACK, pocketfft */
extern PyMethodDef dgpy_fusion_methods[];   /* fusion.c: config.fusion, the pending chain */
extern PyMethodDef dgpy_dlpack_methods[];   /* dlpack.c: _dlpack, _from_dlpack */
extern PyMethodDef dgpy_hostcopy_methods[]; /* hostcopy.c: progress of host copies */
extern PyMethodDef dgpy_index_methods[];    /* index.c: views, assignment, rows, sorts */
extern PyMethodDef dgpy_layout_methods[];   /* layout.c: _index_map_layout */
extern PyMethodDef dgpy_matmul_methods[];   /* matmul.c: _contract, _matmul_plan, BLAS */
extern PyMethodDef dgpy_probe_methods[];    /* probes.c: counters, timings, plans */
extern PyMethodDef dgpy_pycalls_methods[];  /* pycalls.c: _bind_python */
extern PyMethodDef dgpy_random_methods[];   /* random.c: _fill_random */
extern PyMethodDef dgpy_reduce_methods[];   /* reduce.c: _reduce, _scan */
extern PyMethodDef dgpy_settings_methods[]; /* settings.c: split and peer-read sizes */
extern PyMethodDef dgpy_surface_methods[];  /* surface.c: searches, counts, dtype views */

#endif /* DGPY_H */
