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
from ._creation import device_gpu

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
    return device_gpu(dev)


# ---- reductions ----------------------------------------------------------------------

BLOCK_REDUCE = 256  # threads of a reduction's block (a power of 2)


def reduce_struct(ndim, nmem, nscalar):
    """The ctypes twin of reduction_source's dg_ur_args."""
    nd = _dims(ndim)
    i64 = ctypes.c_int64

    class Args(ctypes.Structure):
        _fields_ = [("kshape", i64 * nd), ("rshape", i64 * nd), ("gstart", i64 * nd),
                    ("gstep", i64 * nd), ("gmul", i64 * nd),
                    ("ptr", ctypes.c_void_p * _dims(nmem)), ("strides", (i64 * nd) * _dims(nmem)),
                    ("sc", i64 * (2 * _dims(nscalar))), ("pacc", ctypes.c_void_p),
                    ("pseen", ctypes.c_void_p), ("nkept", i64), ("nred", i64), ("groups", i64)]
    return Args


def final_struct(nout):
    """The ctypes twin of reduction_source's dg_uf_args."""
    i64 = ctypes.c_int64

    class Args(ctypes.Structure):
        _fields_ = [("acc", ctypes.c_void_p), ("seen", ctypes.c_void_p), ("rows", i64),
                    ("n", i64), ("out", ctypes.c_void_p * _dims(nout)),
                    ("osize", i64 * _dims(nout)), ("fseen", ctypes.c_void_p)]
    return Args


def reduction_source(head, ndim, nmem, nscalar, setup, body, reduce_expr, post_defs, post_map,
                     post_undefs, identity):
    """Two kernels.  dg_ureduce_map: block (g, kept element) of a chunk maps
    and reduces the chunk's reduced elements r with r % groups == g (its
    threads striding over them, then a tree in shared memory) into
    pacc/pseen[g * nkept + kept].  dg_ureduce_final: thread per output
    element combines `rows` partial rows (acc, seen: rows x n) with
    reduce_expr, then runs post_map into the outputs; fseen says whether
    any value was seen."""
    nd = _dims(ndim)
    nm = _dims(nmem)
    return (HEADER + head
            + f"struct dg_ur_args {{\n    long long kshape[{nd}], rshape[{nd}], gstart[{nd}], "
            f"gstep[{nd}], gmul[{nd}];\n    char *ptr[{nm}];\n    long long strides[{nm}][{nd}];\n"
            f"    long long sc[{2 * _dims(nscalar)}];\n    char *pacc;\n    unsigned char *pseen;\n"
            "    long long nkept, nred, groups;\n};\n"
            "struct dg_uf_args {\n    const char *acc;\n    const unsigned char *seen;\n"
            f"    long long rows, n;\n    char *out[{nm}];\n    long long osize[{nm}];\n"
            "    unsigned char *fseen;\n};\n"
            "__device__ __forceinline__ _type_reduce dg_ureduce(_type_reduce a, _type_reduce b)\n"
            f"{{\n    return ({reduce_expr});\n}}\n"
            f"extern \"C\" __global__ void __launch_bounds__({BLOCK_REDUCE}) "
            "dg_ureduce_map(const dg_ur_args A)\n{\n"
            f"    __shared__ _type_reduce _sa[{BLOCK_REDUCE}];\n"
            f"    __shared__ unsigned char _ss[{BLOCK_REDUCE}];\n"
            f"    const char *const _xp[{_dims(nscalar)}] = {{"
            + (", ".join(f"(const char *)&A.sc[{2 * k}]" for k in range(nscalar)) or "0") + "};\n"
            + setup + "\n"
            "    for (long long _blk = blockIdx.x; _blk < A.nkept * A.groups; _blk += gridDim.x) {\n"
            "        long long _kk = _blk % A.nkept, _g = _blk / A.nkept;\n"
            "        _type_reduce _acc = _type_reduce();\n        unsigned char _seen = 0;\n"
            "        for (long long _rr = _g * blockDim.x + threadIdx.x; _rr < A.nred;\n"
            "             _rr += A.groups * blockDim.x) {\n"
            f"            char *p[{nm}];\n            long long _a = _kk, _b = _rr, i = 0;\n"
            f"            for (int _k = 0; _k < {nmem}; _k++) p[_k] = A.ptr[_k];\n"
            f"            for (int _ax = {ndim} - 1; _ax >= 0; _ax--) {{\n"
            "                long long _c = _a % A.kshape[_ax] + _b % A.rshape[_ax];\n"
            "                _a /= A.kshape[_ax];\n                _b /= A.rshape[_ax];\n"
            "                i += (A.gstart[_ax] + _c * A.gstep[_ax]) * A.gmul[_ax];\n"
            f"                for (int _k = 0; _k < {nmem}; _k++) p[_k] += _c * A.strides[_k][_ax];\n"
            "            }\n            {\n" + body + "\n"
            "                _acc = _seen ? dg_ureduce(_acc, _m) : _m;\n                _seen = 1;\n"
            "            }\n        }\n"
            "        _sa[threadIdx.x] = _acc;\n        _ss[threadIdx.x] = _seen;\n"
            "        __syncthreads();\n"
            "        for (int _s = blockDim.x / 2; _s > 0; _s /= 2) {\n"
            "            if (threadIdx.x < _s && _ss[threadIdx.x + _s]) {\n"
            "                _sa[threadIdx.x] = _ss[threadIdx.x] ? dg_ureduce(_sa[threadIdx.x], "
            "_sa[threadIdx.x + _s]) : _sa[threadIdx.x + _s];\n"
            "                _ss[threadIdx.x] = 1;\n            }\n            __syncthreads();\n"
            "        }\n"
            "        if (threadIdx.x == 0) {\n"
            "            ((_type_reduce *)A.pacc)[_g * A.nkept + _kk] = _sa[0];\n"
            "            A.pseen[_g * A.nkept + _kk] = _ss[0];\n        }\n"
            "        __syncthreads();\n    }\n}\n"
            "extern \"C\" __global__ void dg_ureduce_final(const dg_uf_args F)\n{\n"
            "    for (long long _e = blockIdx.x * (long long)blockDim.x + threadIdx.x; _e < F.n;\n"
            "         _e += (long long)blockDim.x * gridDim.x) {\n"
            "        _type_reduce a = _type_reduce();\n        unsigned char _seen = 0;\n"
            "        for (long long _r = 0; _r < F.rows; _r++) {\n"
            "            if (!F.seen[_r * F.n + _e]) continue;\n"
            "            _type_reduce _v = ((const _type_reduce *)F.acc)[_r * F.n + _e];\n"
            "            a = _seen ? dg_ureduce(a, _v) : _v;\n            _seen = 1;\n        }\n"
            + ("        if (!_seen) { a = (_type_reduce)(%s); _seen = 1; }\n" % identity
               if identity is not None else "")
            + "        F.fseen[_e] = _seen;\n"
            "        if (!_seen) continue;\n"
            f"{post_defs}\n{post_map};\n{post_undefs}\n"
            "    }\n}\n")
