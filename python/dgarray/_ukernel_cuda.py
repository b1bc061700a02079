"""Users' kernels on GPUs ([fusion] item 3): CUDA source compiled by NVRTC
through the run-time compiler (_core._rtc_compile: its memory and disk
caches), loaded into each GPU's primary context (the one the CUDA runtime
of dgarray._cuda uses) and launched through the driver API (libcuda, with
ctypes) once per chunk.

Ordering: the chunks' memory is lent after their pending writes
(_core._chunk_lend), the kernels run on each GPU's legacy default stream,
and every GPU used is synchronised before the call returns, so dgarray's
own streams (non-blocking) never overlap a user's kernel."""
import ctypes
import threading

from . import _core
from ._creation import device_gpus

# the CUDA C++ type of each dtype a user's kernel can use on GPUs
CU_TYPES = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long", "float32": "float",
    "float64": "double",
}

HEADER = ("typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
          "typedef long long int64_t; typedef unsigned char uint8_t;\n"
          "typedef unsigned short uint16_t; typedef unsigned int uint32_t;\n"
          "typedef unsigned long long uint64_t;\n")

_ATTR_CC_MAJOR, _ATTR_CC_MINOR = 75, 76


def cu_type(dtype):
    name = getattr(dtype, "name", str(dtype))
    if name not in CU_TYPES:
        raise TypeError(f"user kernels on GPUs have no type for {name} yet (supported: "
                        f"{', '.join(CU_TYPES)})")
    return CU_TYPES[name]


def _dims(n):
    return max(1, n)


def args_struct_source(ndim, nmem, nraw, nscalar):
    """The CUDA struct every elementwise launch passes by value."""
    nd = _dims(ndim)
    return (f"struct dg_uk_args {{\n    long long shape[{nd}], gstart[{nd}], gstep[{nd}], "
            f"gmul[{nd}];\n    char *ptr[{_dims(nmem)}];\n    long long strides[{_dims(nmem)}]"
            f"[{nd}];\n    const char *raw[{_dims(nraw)}];\n    long long sc[{2 * _dims(nscalar)}];\n"
            f"    long long n, ind_size;\n}};\n")


def args_struct(ndim, nmem, nraw, nscalar):
    """The ctypes twin of args_struct_source (every field 8-byte aligned, so
    the layouts agree)."""
    nd = _dims(ndim)
    i64 = ctypes.c_int64

    class Args(ctypes.Structure):
        _fields_ = [("shape", i64 * nd), ("gstart", i64 * nd), ("gstep", i64 * nd),
                    ("gmul", i64 * nd), ("ptr", ctypes.c_void_p * _dims(nmem)),
                    ("strides", (i64 * nd) * _dims(nmem)),
                    ("raw", ctypes.c_void_p * _dims(nraw)), ("sc", i64 * (2 * _dims(nscalar))),
                    ("n", i64), ("ind_size", i64)]
    return Args


def elementwise_source(head, ndim, nmem, xkinds, setup, body, loop_prep="", after_loop=""):
    """A grid-stride kernel `dg_ukernel(dg_uk_args A)`: each thread finds
    its element's chunk coordinates, memory addresses p[k] and global index
    i, then runs `body`.  xkinds: 'raw' or 'scalar' for each extra argument
    _xp[j] the setup lines read."""
    nraw = xkinds.count("raw")
    nsc = xkinds.count("scalar")
    xp, r, s = [], 0, 0
    for kind in xkinds:
        if kind == "raw":
            xp.append(f"A.raw[{r}]")
            r += 1
        else:
            xp.append(f"(const char *)&A.sc[{2 * s}]")
            s += 1
    xp_init = ", ".join(xp) or "0"
    return (HEADER + head + args_struct_source(ndim, nmem, nraw, nsc)
            + "struct dg_uk_ind { long long s; __device__ long long size() const { return s; } };\n"
            + "extern \"C\" __global__ void dg_ukernel(const dg_uk_args A)\n{\n"
            + f"    const char *const _xp[{_dims(len(xkinds))}] = {{{xp_init}}};\n"
            + "    const dg_uk_ind _ind = {A.ind_size};\n"
            + setup + "\n" + loop_prep + "\n"
            + "    for (long long _e = blockIdx.x * (long long)blockDim.x + threadIdx.x; _e < A.n;\n"
            + "         _e += (long long)blockDim.x * gridDim.x) {\n"
            + f"        char *p[{_dims(nmem)}];\n        long long _r = _e, i = 0;\n"
            + f"        for (int _k = 0; _k < {nmem}; _k++) p[_k] = A.ptr[_k];\n"
            + f"        for (int _ax = {ndim} - 1; _ax >= 0; _ax--) {{\n"
            + "            long long _c = _r % A.shape[_ax];\n            _r /= A.shape[_ax];\n"
            + "            i += (A.gstart[_ax] + _c * A.gstep[_ax]) * A.gmul[_ax];\n"
            + f"            for (int _k = 0; _k < {nmem}; _k++) p[_k] += _c * A.strides[_k][_ax];\n"
            + "        }\n        {\n" + body + "\n        }\n    }\n" + after_loop + "\n}\n")


# ---- the driver ----------------------------------------------------------------------

class _Driver:
    """libcuda through ctypes: each GPU's primary context, and modules loaded
    once per (GPU, source)."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise _core.DeviceError(f"user kernels on GPUs need the CUDA driver (libcuda.so.1): "
                                    f"{e}") from e
        self._check(self.lib.cuInit(0), "cuInit")
        v = ctypes.c_int(0)
        self._check(self.lib.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
        self.driver = v.value
        self.lib.cuModuleGetFunction.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_char_p]
        self.lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.ctx, self.arch, self.funcs = {}, {}, {}
        self.lock = threading.Lock()

    def _check(self, rc, what):
        if rc != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(s))
            msg = s.value.decode() if s.value else f"error {rc}"
            raise _core.DeviceError(f"{what} failed in a user kernel: {msg} (CUDA driver "
                                    f"error {rc})")

    def use(self, gpu):
        """Makes GPU gpu's primary context current on this thread."""
        if gpu not in self.ctx:
            dev, ctx = ctypes.c_int(0), ctypes.c_void_p()
            self._check(self.lib.cuDeviceGet(ctypes.byref(dev), gpu), "cuDeviceGet")
            self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                        "cuDevicePrimaryCtxRetain")
            major, minor = ctypes.c_int(0), ctypes.c_int(0)
            self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(major), _ATTR_CC_MAJOR, dev),
                        "cuDeviceGetAttribute")
            self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(minor), _ATTR_CC_MINOR, dev),
                        "cuDeviceGetAttribute")
            self.ctx[gpu], self.arch[gpu] = ctx, major.value * 10 + minor.value
        self._check(self.lib.cuCtxSetCurrent(self.ctx[gpu]), "cuCtxSetCurrent")

    def function(self, source, name, gpu):
        """The CUfunction `name` of `source` on GPU gpu (compiled by NVRTC
        for its compute capability; kept for the process)."""
        with self.lock:
            key = (gpu, source, name)
            f = self.funcs.get(key)
            if f is not None:
                return f
            self.use(gpu)
            try:
                image, _ = _core._rtc_compile(source, self.arch[gpu], self.driver)
            except NotImplementedError as e:
                raise NotImplementedError(f"user kernels on GPUs are compiled by NVRTC, which "
                                          f"cannot be loaded: {e}") from e
            mod, f = ctypes.c_void_p(), ctypes.c_void_p()
            self._check(self.lib.cuModuleLoadData(ctypes.byref(mod), image), "cuModuleLoadData")
            rc = self.lib.cuModuleGetFunction(ctypes.byref(f), mod, name.encode())
            if rc != 0:
                raise AttributeError(f"the kernel's code defines no extern \"C\" __global__ "
                                     f"function {name!r}")
            self.funcs[key] = f
            return f

    def launch(self, f, gpu, grid, block, params, shared_mem=0):
        """Launches f on gpu's legacy default stream with `params` (ctypes
        objects, passed by address as kernelParams)."""
        self.use(gpu)
        arr = (ctypes.c_void_p * max(1, len(params)))(
            *[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in params])
        g = (tuple(grid) + (1, 1))[:3]
        b = (tuple(block) + (1, 1))[:3]
        self._check(self.lib.cuLaunchKernel(f, *[int(v) for v in g], *[int(v) for v in b],
                                            int(shared_mem), None, arr, None), "cuLaunchKernel")

    def synchronize(self, gpus):
        for gpu in sorted(set(gpus)):
            self.use(gpu)
            self._check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


_driver = None


def driver():
    global _driver
    if _driver is None:
        _driver = _Driver()
    return _driver


def gpu_of(dev):
    """The GPU number of dgarray device dev."""
    return device_gpus()[dev]
