/* DLPack, the array API standard's data interchange: a DistributedArray of
 * one chunk, or any one chunk of an array (DistributedArray.chunks()),
 * handed to another library without a copy (_dlpack), and another library's
 * array on a device of ours copied there without passing through the host
 * (_from_dlpack; _from_address for the CUDA array interface).
 * dgarray/_arrayapi.py and _chunks.py give the protocol's arguments and
 * errors; this file reads and writes the structs.
 *
 * The structs are DLPack's ABI (version 1.0: DLTensor, DLManagedTensor for
 * the capsule "dltensor", DLManagedTensorVersioned for
 * "dltensor_versioned"), written out here with dgarray's names. */
#include "dgpy.h"
#include "dg_surface.h"

enum { DL_CPU = 1, DL_CUDA = 2 };                                   /* DLDeviceType */
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_COMPLEX = 5, DL_BOOL = 6 }; /* type codes */
#define DL_FLAG_READ_ONLY 1u
#define DL_MAJOR 1
#define DL_MINOR 0

typedef struct dl_tensor {
    void *data;
    int32_t device_type, device_id;
    int32_t ndim;
    uint8_t code, bits;
    uint16_t lanes;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: C order */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
    dl_tensor t;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

typedef struct dl_managed_v {
    uint32_t major, minor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_v *self);
    uint64_t flags;
    dl_tensor t;
} dl_managed_v;

/* What an export owns: the managed tensor of either version, its shape and
 * strides, and a reference to the array whose memory it lends. */
typedef struct dl_export {
    dl_managed m;
    dl_managed_v v;
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    PyObject *owner;
} dl_export;

static void export_free(dl_export *e)
{
    PyGILState_STATE g = PyGILState_Ensure(); /* a consumer may release on any thread */
    Py_XDECREF(e->owner);
    PyMem_RawFree(e);
    PyGILState_Release(g);
}
static void deleter_legacy(dl_managed *m) { export_free((dl_export *)m->manager_ctx); }
static void deleter_versioned(dl_managed_v *v) { export_free((dl_export *)v->manager_ctx); }

/* A capsule no consumer took still owns its tensor. */
static void capsule_legacy(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, "dltensor")) {
        dl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
        m->deleter(m);
    }
}
static void capsule_versioned(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        dl_managed_v *v = PyCapsule_GetPointer(cap, "dltensor_versioned");
        v->deleter(v);
    }
}

static void dl_dtype_of(int dt, dl_tensor *t)
{
    static const uint8_t codes[] = {['b'] = DL_BOOL, ['i'] = DL_INT, ['u'] = DL_UINT,
                                    ['f'] = DL_FLOAT, ['c'] = DL_COMPLEX};
    t->code = codes[(unsigned char)dg_dtype_kind(dt)];
    t->bits = (uint8_t)(8 * dg_dtype_size(dt));
    t->lanes = 1;
}

/* The dgarray dtype of a DLPack dtype, or -1. */
static int dg_dtype_of_dl(const dl_tensor *t)
{
    int dt;
    if (t->lanes != 1)
        return -1;
    for (dt = 0; dt < DG_NDTYPES; dt++) {
        dl_tensor u;
        dl_dtype_of(dt, &u);
        if (u.code == t->code && u.bits == t->bits)
            return dt;
    }
    return -1;
}

/* _dlpack(a, versioned, device_type, device_id, readonly, chunk=-1): a
 * capsule lending a's one chunk (which holds all of a, REPLICA), or with
 * chunk >= 0 a's chunk `chunk` (any mode; this process's), after a's
 * pending writes and with a's memory its own (copy on write done first, so
 * that writes through the capsule reach only a). */
static PyObject *f_dlpack(PyObject *mod, PyObject *args)
{
    PyObject *ao, *cap;
    dg_array *a;
    int versioned, dtype, did, readonly, ax, chunk = -1;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    dl_export *e;
    dl_tensor t;
    char *ptr;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Opiip|i:_dlpack", &ao, &versioned, &dtype, &did, &readonly,
                          &chunk) ||
        !(a = dgpy_arg_array(ao, "_dlpack")))
        return NULL;
    if (chunk >= 0 ? dgpy_own_chunk(a, chunk) < 0
                   : (a->mode != DG_MODE_REPLICA || a->nchunks < 1 ||
                      dg_box_size(&a->chunks[0].box) != dg_shape_size(a->ndim, a->shape))) {
        if (chunk < 0)
            PyErr_SetString(PyExc_BufferError,
                            "DLPack hands over one chunk holding the whole array: reshard the "
                            "array to one device first (a.to_device(dgarray.DeviceSet(0))), "
                            "or take its chunks one by one (a.chunks())");
        return NULL;
    }
    e = PyMem_RawCalloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    st = chunk < 0 ? dg_array_lend(a, readonly, &ptr, e->strides, &err)
                   : dg_array_lend_chunk(a, chunk, readonly, &ptr, e->strides, &err);
    Py_END_ALLOW_THREADS
    if (st != DG_OK) {
        PyMem_RawFree(e);
        return dgpy_raise(&err);
    }
    memset(&t, 0, sizeof t);
    t.data = ptr;
    t.device_type = dtype;
    t.device_id = did;
    t.ndim = a->ndim;
    dl_dtype_of(a->dtype, &t);
    for (ax = 0; ax < a->ndim; ax++) {
        e->shape[ax] = chunk < 0 ? a->shape[ax] : dg_range_len(a->chunks[chunk].box.r[ax]);
        e->strides[ax] /= dg_dtype_size(a->dtype);
    }
    t.shape = e->shape;
    t.strides = e->strides;
    e->owner = Py_NewRef(ao);
    if (versioned) {
        e->v.major = DL_MAJOR;
        e->v.minor = DL_MINOR;
        e->v.manager_ctx = e;
        e->v.deleter = deleter_versioned;
        e->v.flags = readonly ? DL_FLAG_READ_ONLY : 0;
        e->v.t = t;
        cap = PyCapsule_New(&e->v, "dltensor_versioned", capsule_versioned);
    } else {
        e->m.t = t;
        e->m.manager_ctx = e;
        e->m.deleter = deleter_legacy;
        cap = PyCapsule_New(&e->m, "dltensor", capsule_legacy);
    }
    if (!cap) {
        Py_DECREF(e->owner);
        PyMem_RawFree(e);
    }
    return cap;
}

/* New reference: a copy of the elements at src (memory another library
 * owns, addressable on dev, its writes complete) in a new array on device
 * dev (dg_array_from_external, without the GIL), or NULL with an exception. */
static PyObject *copy_external(int dev, int dt, int ndim, const int64_t *shape, const char *src,
                               const int64_t *byte_strides)
{
    dg_array *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_from_external(dgpy_st->be, dev, dt, ndim, shape, src, byte_strides, &out,
                                &err);
    Py_END_ALLOW_THREADS
    return st == DG_OK ? dgpy_wrap(out) : dgpy_raise(&err);
}

/* _from_dlpack(capsule, device_type, dev): a new DistributedArray on device
 * dev holding a copy of the capsule's tensor, which must be on device_type
 * (the kind of memory the backend's devices address); the capsule is
 * consumed (renamed "used_dltensor[_versioned]", its tensor released after
 * the copy). */
static PyObject *f_from_dlpack(PyObject *mod, PyObject *args)
{
    PyObject *cap;
    int dtype_want, dev, versioned, dt, ax;
    dl_managed *m = NULL;
    dl_managed_v *v = NULL;
    const dl_tensor *t;
    int64_t strides[DG_MAXDIM];
    PyObject *res;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Oii:_from_dlpack", &cap, &dtype_want, &dev))
        return NULL;
    versioned = PyCapsule_IsValid(cap, "dltensor_versioned");
    if (versioned) {
        v = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (v->major > DL_MAJOR) {
            PyErr_Format(PyExc_BufferError, "the producer's DLPack version %u.%u is newer "
                         "than dgarray's %d.%d", v->major, v->minor, DL_MAJOR, DL_MINOR);
            return NULL;
        }
        t = &v->t;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        m = PyCapsule_GetPointer(cap, "dltensor");
        t = &m->t;
    } else {
        PyErr_SetString(PyExc_ValueError, "not a DLPack capsule (or one already consumed)");
        return NULL;
    }
    dt = dg_dtype_of_dl(t);
    if (t->device_type != dtype_want || t->ndim < 0 || t->ndim > DG_MAXDIM || dt < 0) {
        PyErr_Format(PyExc_BufferError, "dgarray cannot take this DLPack tensor (device type "
                     "%d, %d dimensions, type code %d of %d bits x %d): it takes tensors of "
                     "NumPy's number dtypes, at most %d dimensions, on device type %d",
                     t->device_type, t->ndim, t->code, t->bits, t->lanes, DG_MAXDIM,
                     dtype_want);
        return NULL;
    }
    for (ax = t->ndim - 1; ax >= 0; ax--)
        strides[ax] = t->strides ? t->strides[ax] * dg_dtype_size(dt)
                                 : (ax == t->ndim - 1 ? dg_dtype_size(dt)
                                                      : strides[ax + 1] * t->shape[ax + 1]);
    if (!(res = copy_external(dev, dt, t->ndim, t->shape,
                              (const char *)t->data + t->byte_offset, strides)))
        return NULL;
    /* consumed: the capsule no longer owns the tensor; released now, copied */
    if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
        Py_DECREF(res);
        return NULL;
    }
    if (versioned && v->deleter)
        v->deleter(v);
    else if (!versioned && m->deleter)
        m->deleter(m);
    return res;
}

/* _from_address(address, dtype, shape, byte_strides, dev): a new
 * DistributedArray on device dev holding a copy of the elements of `dtype`
 * at address (memory dev addresses: a GPU's for the CUDA backend) read with
 * byte_strides over shape: the CUDA array interface's
 * import (dgarray/_creation.py checks the interface and finds the device;
 * the producer's writes must be complete). */
static PyObject *f_from_address(PyObject *mod, PyObject *args)
{
    PyObject *shapeo, *stro, *dto, *seq;
    unsigned long long addr;
    int dev, dt, ndim, ax;
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    (void)mod;
    if (!PyArg_ParseTuple(args, "KOOOi:_from_address", &addr, &dto, &shapeo, &stro, &dev) ||
        dgpy_dtype_from_obj(dto, &dt) < 0 || dgpy_parse_shape(shapeo, &ndim, shape) < 0)
        return NULL;
    if (dt < 0)
        return PyErr_Format(PyExc_TypeError, "_from_address needs a dtype");
    if (!(seq = PySequence_Fast(stro, "byte_strides must be a sequence of ints")))
        return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != ndim) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "%zd strides for %d dimensions",
                            PySequence_Fast_GET_SIZE(seq), ndim);
    }
    for (ax = 0; ax < ndim; ax++) {
        strides[ax] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, ax));
        if (strides[ax] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    return copy_external(dev, dt, ndim, shape, (const char *)(uintptr_t)addr, strides);
}

PyMethodDef dgpy_dlpack_methods[] = {
    {"_dlpack", f_dlpack, METH_VARARGS,
     "_dlpack(a, versioned, device_type, device_id, readonly, chunk=-1): a DLPack capsule "
     "of a's one chunk, or of its chunk `chunk`"},
    {"_from_dlpack", f_from_dlpack, METH_VARARGS,
     "_from_dlpack(capsule, device_type, device): a copy of a DLPack tensor on device"},
    {"_from_address", f_from_address, METH_VARARGS,
     "_from_address(address, dtype, shape, byte_strides, device): a copy of memory of "
     "another library's (the CUDA array interface) on device"},
    {NULL, NULL, 0, NULL},
};
