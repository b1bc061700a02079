/* dgarray._cuda: the CUDA backend as a Python extension module.
 *
 * The module only hands the backend to the core: `backend_create` is a
 * PyCapsule named "dgarray._cuda.backend_create" holding a pointer to
 * dg_cuda_backend_create (a dg_backend_create_fn, see dg_cuda.h), `host_pin`
 * a PyCapsule "dgarray._cuda.host_pin" holding dg_cuda_host_pin, and
 * `device_count()` says how many GPUs the driver shows.  Importing it makes no
 * CUDA call, so that it imports on a machine without a GPU or a driver; the
 * core keeps cudart, cuBLAS and NCCL out of `import dgarray` by importing this
 * module only when it wants the CUDA backend.
 *
 * Multi-phase initialisation (PEP 489) with no module state: the backend
 * objects belong to the core, which owns and destroys them.  This is the only
 * file of the CUDA backend that includes Python.h. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dg_cuda.h"

#define DG_CUDA_CAPSULE "dgarray._cuda.backend_create"
#define DG_CUDA_PIN_CAPSULE "dgarray._cuda.host_pin"

/* device_count() -> int: usable GPUs, 0 (never an exception) when there is
 * no driver, no device, or the driver cannot start. */
static PyObject *cuda_device_count(PyObject *module, PyObject *noargs)
{
    int n = 0;
    cudaError_t e;
    (void)module;
    (void)noargs;
    Py_BEGIN_ALLOW_THREADS /* the first CUDA call loads the driver: slow */
    e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        n = 0;
        (void)cudaGetLastError();
    }
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
}

/* runtime_version() -> int: the CUDA runtime's version (12080 for 12.8),
 * 0 if it cannot tell.  Needs no driver. */
static PyObject *cuda_runtime_version(PyObject *module, PyObject *noargs)
{
    int v = 0;
    (void)module;
    (void)noargs;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
        v = 0;
        (void)cudaGetLastError();
    }
    return PyLong_FromLong(v);
}

/* device_synchronize(gpu): waits until every stream of GPU `gpu` (any
 * library's) is idle, so that another library's writes are complete before
 * dgarray reads its memory (dgarray.from_dlpack).  RuntimeError naming the
 * CUDA error if it cannot. */
static PyObject *cuda_device_synchronize(PyObject *module, PyObject *arg)
{
    int gpu = PyLong_AsLong(arg), prev = -1;
    cudaError_t e;
    (void)module;
    if (gpu == -1 && PyErr_Occurred())
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    if (cudaGetDevice(&prev) != cudaSuccess)
        prev = -1;
    e = cudaSetDevice(gpu);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (prev >= 0)
        (void)cudaSetDevice(prev);
    Py_END_ALLOW_THREADS
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return PyErr_Format(PyExc_RuntimeError, "waiting for GPU %d failed: %s", gpu,
                            cudaGetErrorString(e));
    }
    Py_RETURN_NONE;
}

/* pointer_device(address) -> int: the GPU whose memory `address` is
 * (device or managed memory, as cudaPointerGetAttributes says), or -1 for
 * host memory (registered or not), so that dgarray can copy another
 * library's array from the GPU it lives on (the CUDA array interface gives
 * an address alone).  RuntimeError naming the CUDA error if it cannot
 * tell. */
static PyObject *cuda_pointer_device(PyObject *module, PyObject *arg)
{
    unsigned long long addr = PyLong_AsUnsignedLongLong(arg);
    struct cudaPointerAttributes at;
    cudaError_t e;
    (void)module;
    if (addr == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    memset(&at, 0, sizeof at);
    Py_BEGIN_ALLOW_THREADS
    e = cudaPointerGetAttributes(&at, (const void *)(uintptr_t)addr);
    Py_END_ALLOW_THREADS
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return PyErr_Format(PyExc_RuntimeError, "cudaPointerGetAttributes of address 0x%llx "
                            "failed: %s", addr, cudaGetErrorString(e));
    }
    if (at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged)
        return PyLong_FromLong(at.device);
    return PyLong_FromLong(-1);
}

static PyMethodDef cuda_methods[] = {
    {"pointer_device", cuda_pointer_device, METH_O,
     PyDoc_STR("pointer_device(address)\n--\n\nThe GPU of device memory at address, or -1 "
               "for host memory.")},
    {"device_synchronize", cuda_device_synchronize, METH_O,
     PyDoc_STR("device_synchronize(gpu)\n--\n\nWaits until all work on the GPU is done.")},
    {"device_count", cuda_device_count, METH_NOARGS,
     PyDoc_STR("device_count()\n--\n\nNumber of usable CUDA GPUs; 0 without a driver "
               "or a GPU.")},
    {"runtime_version", cuda_runtime_version, METH_NOARGS,
     PyDoc_STR("runtime_version()\n--\n\nVersion of the CUDA runtime dgarray was "
               "built with (e.g. 13000).")},
    {NULL, NULL, 0, NULL},
};

/* Adds the capsule `name` (named "dgarray._cuda.<name>") holding fn. */
static int add_capsule(PyObject *module, const char *name, const char *full, void *fn)
{
    PyObject *cap = PyCapsule_New(fn, full, NULL);
    int rc;
    if (cap == NULL)
        return -1;
    rc = PyModule_AddObjectRef(module, name, cap);
    Py_DECREF(cap);
    return rc;
}

static int cuda_exec(PyObject *module)
{
    dg_backend_create_fn fn = dg_cuda_backend_create;
    dg_host_pin_fn pin = dg_cuda_host_pin;
    if (add_capsule(module, "backend_create", DG_CUDA_CAPSULE, (void *)fn) < 0)
        return -1;
    return add_capsule(module, "host_pin", DG_CUDA_PIN_CAPSULE, (void *)pin);
}

static PyModuleDef_Slot cuda_slots[] = {
    {Py_mod_exec, (void *)cuda_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef cuda_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "dgarray._cuda",
    .m_doc = PyDoc_STR("The CUDA backend of dgarray: backend_create (a capsule for the "
                       "core) and device_count()."),
    .m_size = 0,
    .m_methods = cuda_methods,
    .m_slots = cuda_slots,
};

PyMODINIT_FUNC PyInit__cuda(void)
{
    return PyModuleDef_Init(&cuda_module);
}
