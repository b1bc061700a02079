"""Users' kernels in CuPy's form (dgarray/_user_kernels.py): ElementwiseKernel,
ReductionKernel and RawKernel against NumPy, on 1 and 4 devices and every
layout of tests/_maps.py (uneven, strided, replicated, overlapping, columns),
with broadcasting, scalars, views, `i` and raw arguments; their errors; the
compiler's disk cache and a missing compiler.  GPU tests run only on the
CUDA backend."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

CPU = dg.backend() == "cpu"
cpu_only = pytest.mark.skipif(not CPU, reason="user kernels compile with the host's C "
                                              "compiler on the CPU backend only")
gpu_only = pytest.mark.skipif(CPU, reason="needs the CUDA backend (GPUs)")


def layouts(shape, ndev):
    return [m for _, m in maps_for(shape, ndev)]


def dist(x, m):
    return dg.asarray(x) if m is None else dg.distributed_array(x, m)


SQUARED_DIFF = dict(in_params="float32 x, float32 y", out_params="float32 z",
                    operation="z = (x - y) * (x - y)", name="squared_diff")
GENERIC = dict(in_params="T x, T y", out_params="T z",
               operation="T diff = x - y;\nz = diff * diff;", name="squared_diff_generic")


# ---- ElementwiseKernel -------------------------------------------------------------------

@cpu_only
def test_squared_difference_every_layout(ndev, no_leak):
    k = dg.ElementwiseKernel(**SQUARED_DIFF)
    h = np.arange(70, dtype=np.float32).reshape(14, 5) * 0.5
    row = np.arange(5, dtype=np.float32)
    for m in layouts(h.shape, ndev):
        x = dist(h, m)
        np.testing.assert_array_equal(k(x, dg.asarray(row)).get(), (h - row) ** 2)
        np.testing.assert_array_equal(k(x, 5).get(), (h - np.float32(5)) ** 2)
        # the output takes the first array's layout
        assert dg._core._chunk_layout(k(x, 5)) == dg._core._chunk_layout(x)


@cpu_only
def test_generic_types_follow_the_inputs(ndev):
    k = dg.ElementwiseKernel(**GENERIC)
    for dt in (np.int32, np.float64, np.uint8, np.complex128):
        h = (np.arange(24) % 7).astype(dt).reshape(4, 6)
        y = (np.arange(6) % 3).astype(dt)
        for m in layouts(h.shape, ndev)[:4]:
            r = k(dist(h, m), dg.asarray(y))
            assert r.dtype == dt
            np.testing.assert_array_equal(r.get(), (h - y) * (h - y))


@cpu_only
def test_broadcast_against_layouts_of_both(ndev):
    """Both operands distributed, differently: the column is read where it
    lies or copied to each output chunk's device."""
    k = dg.ElementwiseKernel("T x, T y", "T z", "z = x * 10 + y", "bcast")
    a = np.arange(36.0).reshape(9, 4)
    col = np.arange(9.0).reshape(9, 1) * -1
    for ma in layouts(a.shape, ndev):
        for mc in layouts(col.shape, ndev)[:3]:
            np.testing.assert_array_equal(k(dist(a, ma), dist(col, mc)).get(), a * 10 + col)
            # the first array input broadcast decides the output's layout
            np.testing.assert_array_equal(k(dist(col, mc), dist(a, ma)).get(), col * 10 + a)


@cpu_only
def test_views_and_given_outputs(ndev, no_leak):
    k = dg.ElementwiseKernel("T x, T y", "T z", "z += x - y", "accumulate")
    h = np.arange(80.0).reshape(16, 5)
    outh = np.ones((16, 6))
    for m, mo in zip(layouts(h.shape, ndev), layouts(outh.shape, ndev)[::-1]):
        x = dist(h, m)
        v = x[1::3, ::2]
        out = dist(outh, mo)
        ov = out[2::3, 1:6:2]  # a strided view written in place
        r = k(v, 2.5, ov)
        assert r is ov
        want = outh.copy()
        want[2::3, 1:6:2] += h[1::3, ::2] - 2.5
        np.testing.assert_array_equal(out.get(), want)


@cpu_only
def test_global_index_and_size(ndev):
    k = dg.ElementwiseKernel("T x", "int64 y, int64 s", "y = i; s = _ind.size()", "where")
    h = np.zeros((11, 3))
    for m in layouts(h.shape, ndev):
        y, s = k(dist(h, m))
        np.testing.assert_array_equal(y.get(), np.arange(33).reshape(11, 3))
        np.testing.assert_array_equal(s.get(), np.full((11, 3), 33))
    iota = dg.ElementwiseKernel("", "int64 z", "z = i * 2", "iota")
    np.testing.assert_array_equal(iota(size=13).get(), np.arange(13) * 2)


@cpu_only
def test_raw_argument_is_the_whole_array(ndev):
    k = dg.ElementwiseKernel("T w, raw T x", "T y", "y = w + x[_ind.size() - i - 1]", "rev")
    h = np.arange(17.0) ** 2
    for m in layouts(h.shape, ndev):
        a = dist(h, m)
        np.testing.assert_array_equal(k(a, a).get(), h + h[::-1])
    rev = dg.ElementwiseKernel("raw T x", "T y", "y = x[_ind.size() - i - 1]", "rev2")
    np.testing.assert_array_equal(rev(dist(h, layouts(h.shape, ndev)[-1]), size=17).get(),
                                  h[::-1])


@cpu_only
def test_fixed_types_cast_and_scalars(ndev):
    k = dg.ElementwiseKernel("float64 x, int32 c", "float64 y", "y = x * c", "scale")
    h = np.arange(12, dtype=np.int16).reshape(3, 4)
    r = k(dist(h, layouts(h.shape, ndev)[-1]), 3)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.get(), h.astype(np.float64) * 3)
    # a placeholder only a scalar gives: NumPy's dtype of the scalar
    s = dg.ElementwiseKernel("T x, U c", "U y", "y = x + c", "addc")
    r = s(dg.arange(4), 0.5)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.get(), np.arange(4) + 0.5)


@cpu_only
def test_math_preamble_and_multiple_outputs(ndev):
    k = dg.ElementwiseKernel("T x", "T s, T c", "s = my_sq(sin(x)); c = cos(x)", "sc",
                             preamble="static double my_sq(double v) { return v * v; }")
    h = np.linspace(0, 3, 40).reshape(8, 5)
    for m in layouts(h.shape, ndev)[:3]:
        s, c = k(dist(h, m))
        np.testing.assert_allclose(s.get(), np.sin(h) ** 2, rtol=1e-15)
        np.testing.assert_allclose(c.get(), np.cos(h), rtol=1e-15)


@cpu_only
def test_queued_work_sees_the_values_before_the_kernel(ndev):
    """A read of the output recorded (fused, queued) before the kernel
    overwrites it sees the old values; one after it sees the new ones."""
    k = dg.ElementwiseKernel("T x", "T y", "y = x * 3", "triple")
    h = np.arange(40.0).reshape(8, 5)
    for m in layouts(h.shape, ndev)[:4]:
        out = dist(h + 1, m)
        before = out * 2 + 1
        k(dist(h, m), out)
        after = out + 1
        np.testing.assert_array_equal(before.get(), (h + 1) * 2 + 1)
        np.testing.assert_array_equal(after.get(), h * 3 + 1)


@cpu_only
def test_empty_and_zero_size():
    k = dg.ElementwiseKernel(**GENERIC)
    r = k(dg.zeros((0, 3)), dg.zeros(3))
    assert r.shape == (0, 3)


@cpu_only
@pytest.mark.parametrize("ins, outs, msg", [
    ("T x y", "T z", "syntax error"),
    ("T x,", "T z", "syntax error"),
    ("T i", "T z", "reserved"),
    ("T _x", "T z", "reserved"),
    ("T x, T x", "T z", "used twice"),
    ("T x", "raw T z", "raw output"),
])
def test_bad_parameter_lists(ins, outs, msg):
    with pytest.raises(ValueError, match=msg):
        dg.ElementwiseKernel(ins, outs, "z = x", "bad")


@cpu_only
def test_call_errors():
    k = dg.ElementwiseKernel(**GENERIC)
    with pytest.raises(TypeError, match="Type is mismatched"):
        k(dg.arange(3.0), dg.arange(3))
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        k(dg.arange(3.0))
    with pytest.raises(ValueError, match="broadcast"):
        k(dg.arange(3.0), dg.arange(3.0), dg.zeros(4))
    with pytest.raises(TypeError, match="Type is mismatched"):
        k(dg.arange(3.0), dg.arange(3.0), dg.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="undecided"):
        dg.ElementwiseKernel("", "int64 z", "z = i", "nosize")()
    with pytest.raises(TypeError, match="Cannot determine the type"):
        dg.ElementwiseKernel("", "T z", "z = i", "notype")(size=3)
    with pytest.raises(TypeError, match="float16"):
        k(dg.arange(3, dtype=np.float16), dg.arange(3, dtype=np.float16))
    with pytest.raises(ValueError, match="read-only"):
        k(dg.arange(3.0), dg.arange(3.0), dg.broadcast_to(dg.zeros(1), (3,)))
    with pytest.raises(RuntimeError, match="does not compile"):
        dg.ElementwiseKernel("T x", "T y", "y = x +* ;", "broken")(dg.arange(3.0))


# ---- ReductionKernel ---------------------------------------------------------------------

@cpu_only
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_l2norm_every_layout(ndev, axis, keepdims, no_leak):
    l2 = dg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    h = np.arange(60.0).reshape(12, 5) - 20
    want = np.sqrt((h * h).sum(axis=axis, keepdims=keepdims))
    for m in layouts(h.shape, ndev):
        r = l2(dist(h, m), axis=axis, keepdims=keepdims)
        assert r.shape == want.shape and r.dtype == want.dtype
        np.testing.assert_allclose(r.get(), want, rtol=1e-13)


@cpu_only
def test_reduction_max_broadcast_scalar_and_out(ndev):
    mx = dg.ReductionKernel("T x, T y, T c", "T z", "x * y + c", "a > b ? a : b", "z = a",
                            None, "maxmap")
    h = np.arange(24).reshape(4, 6) % 5 - 2
    row = np.arange(6) - 3
    for m in layouts(h.shape, ndev):
        out = dg.zeros(6, dtype=h.dtype)
        r = mx(dist(h, m), dg.asarray(row), 7, out, axis=0)
        assert r is out
        np.testing.assert_array_equal(out.get(), (h * row + 7).max(axis=0))
    with pytest.raises(ValueError, match="no identity"):
        mx(dg.zeros((0, 3)), dg.zeros(3), 1.0, axis=0)


@cpu_only
def test_reduction_type_and_identity_on_empty():
    mean_like = dg.ReductionKernel("T x", "float64 y", "x", "a + b", "y = a / _in_count", "0",
                                   "s", reduce_type="float64",
                                   preamble="#define _in_count 4.0")
    h = np.arange(8, dtype=np.int8).reshape(2, 4) * 40  # int8 overflows; float64 does not
    np.testing.assert_array_equal(mean_like(dg.asarray(h), axis=1).get(),
                                  h.astype(np.float64).sum(1) / 4)
    s = dg.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum0")
    np.testing.assert_array_equal(s(dg.zeros((0, 3)), axis=0).get(), np.zeros(3))


@cpu_only
def test_reduction_errors():
    s = dg.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum0")
    with pytest.raises(np.exceptions.AxisError):
        s(dg.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match="shape"):
        s(dg.zeros((2, 3)), dg.zeros(2), axis=0)
    with pytest.raises(ValueError, match="no raw"):
        dg.ReductionKernel("raw T x", "T y", "x[0]", "a + b", "y = a", "0", "r")


# ---- RawKernel ---------------------------------------------------------------------------

ADD = r"""
void my_add(const float *x1, const float *x2, float *y, const int64_t *box)
{
    int64_t n = (box[1] - box[0] + box[2] - 1) / box[2];
    for (int64_t k = 0; k < n; k++)
        y[k] = x1[k] + x2[k];
}
"""

ROWS = r"""
void rows(double *y, int64_t ncols, double scale, const int64_t *box)
{
    /* each element becomes scale * (its global row), the box's start and step */
    int64_t nr = (box[1] - box[0] + box[2] - 1) / box[2];
    int64_t nc = (box[4] - box[3] + box[5] - 1) / box[5];
    for (int64_t r = 0; r < nr; r++)
        for (int64_t c = 0; c < nc; c++)
            y[r * nc + c] = scale * (double)(box[0] + r * box[2]) + (box[3] + c * box[5]);
    (void)ncols;
}
"""


@cpu_only
def test_raw_kernel_adds(ndev, no_leak):
    k = dg.RawKernel(ADD, "my_add")
    h1 = np.arange(25, dtype=np.float32)
    h2 = np.arange(25, dtype=np.float32) * 3
    for m1 in layouts(h1.shape, ndev):
        for m2 in layouts(h1.shape, ndev)[:3]:
            y = dist(np.zeros(25, np.float32), m1)
            k((5,), (5,), (dist(h1, m2), dist(h2, m1), y))
            np.testing.assert_array_equal(y.get(), h1 + h2)


@cpu_only
def test_raw_kernel_gets_the_box(ndev):
    k = dg.RawKernel(ROWS, "rows")
    for m in layouts((9, 4), ndev):
        y = dist(np.zeros((9, 4)), m)
        k((1,), (1,), (y, 4, np.float64(100.0)))
        np.testing.assert_array_equal(y.get(), 100.0 * np.arange(9)[:, None] + np.arange(4))
    # a strided view: its chunks are made dense for the kernel and copied back
    base = dg.zeros((9, 8))
    k((1,), (1,), (base[:, ::2], 4, 10.0))
    want = np.zeros((9, 8))
    want[:, ::2] = 10.0 * np.arange(9)[:, None] + np.arange(4)
    np.testing.assert_array_equal(base.get(), want)


@cpu_only
def test_raw_kernel_errors():
    k = dg.RawKernel(ADD, "my_add")
    with pytest.raises(ValueError, match="first array's shape"):
        k((1,), (1,), (dg.zeros(3, np.float32), dg.zeros(4, np.float32), dg.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="at least one"):
        k((1,), (1,), (1, 2))
    with pytest.raises(TypeError, match="RawKernel's argument"):
        k((1,), (1,), (dg.zeros(3, np.float32), "x"))
    with pytest.raises(AttributeError, match="no function"):
        dg.RawKernel(ADD, "nope")((1,), (1,), (dg.zeros(3, np.float32),))


# ---- the compiler ------------------------------------------------------------------------

_CHILD = r"""
import dgarray as dg, numpy as np
k = dg.ElementwiseKernel('T x', 'T y', 'y = x * 3 + 1', 'child')
print(k(dg.arange(6.0)).get().tolist())
"""


def _child(env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    env["DGARRAY_BACKEND"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(dg.__file__))]
                                        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                           if p])
    return subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=300)


@cpu_only
def test_disk_cache_corrupt_and_unwritable(tmp_path):
    r = _child({"DGARRAY_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str((np.arange(6.0) * 3 + 1).tolist())
    files = [f for f in os.listdir(tmp_path) if f.startswith("ukernel-")]
    assert len(files) == 1
    mtime = os.path.getmtime(tmp_path / files[0])
    r = _child({"DGARRAY_CACHE_DIR": str(tmp_path)})  # loaded from disk, not rewritten
    assert r.returncode == 0 and os.path.getmtime(tmp_path / files[0]) == mtime
    (tmp_path / files[0]).write_bytes(b"not a shared library")
    r = _child({"DGARRAY_CACHE_DIR": str(tmp_path)})  # corrupt: compiled again
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str((np.arange(6.0) * 3 + 1).tolist())
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        r = _child({"DGARRAY_CACHE_DIR": str(ro / "sub")})  # no cache: still runs
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str((np.arange(6.0) * 3 + 1).tolist())
    finally:
        ro.chmod(0o700)


@cpu_only
def test_missing_compiler_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("DGARRAY_CC", str(tmp_path / "no-such-cc"))
    k = dg.ElementwiseKernel("T x", "T y", "y = x + 0.125", "needs_cc")
    with pytest.raises(dg.CompilerNotFoundError, match="DGARRAY_CC"):
        k(dg.arange(3.0))
    with pytest.raises(dg.CompilerNotFoundError, match="not installed"):
        dg.RawKernel(ADD, "my_add")((1,), (1,), (dg.zeros(3, np.float32),) * 3)


# ---- GPUs --------------------------------------------------------------------------------

rtc = pytest.mark.skipif(not dg._core._rtc_available()[0], reason="NVRTC cannot be loaded here")


@rtc
@pytest.mark.parametrize("dt", ["bool", "int8", "uint16", "int32", "int64", "float32", "float64"])
def test_gpu_source_compiles_with_nvrtc(dt):
    """The CUDA source of an elementwise kernel (memory, scalar and raw
    inputs, two outputs, `i`, `_ind.size()`, a preamble) compiles for sm_90,
    on any backend where NVRTC loads."""
    k = dg.ElementwiseKernel("T x, raw T r, float32 c", "T y, int64 j",
                             "y = (T)(x * c + twice(r[_ind.size() - i - 1])); j = i", "nv",
                             preamble="__device__ double twice(double v) { return 2 * v; }")
    types = {"T": np.dtype(dt)}
    in_dt = {"x": np.dtype(dt), "r": np.dtype(dt), "c": np.dtype("float64")}
    for ndim in (0, 1, 3):
        src, nmem, xkinds = k._cuda_source(types, in_dt, {"x", "r"}, ndim)
        assert (nmem, xkinds) == (3, ["raw", "scalar"])
        code, _ = dg._core._rtc_compile(src, 90)
        assert len(code) > 0


# The GPU path run on the host: the CUDA sources compiled by the C++ compiler
# with stand-ins for CUDA's built-ins (one thread of one block walking every
# element), "launched" by a stand-in driver on the CPU backend's memory.
_PRELUDE = """#include <math.h>
#include <stdint.h>
#include <algorithm>
using std::max;
struct dg_u3 { unsigned x, y, z; };
static dg_u3 blockIdx, blockDim = {1, 1, 1}, gridDim = {1, 1, 1}, threadIdx;
#define __global__
#define __device__
#define __forceinline__
#define __shared__ static
#define __launch_bounds__(x)
static inline void __syncthreads(void) {}
"""


class _HostDriver:
    def __init__(self, tmp_path):
        self.tmp, self.libs, self.launches = tmp_path, {}, 0

    def function(self, src, name, gpu):
        if src not in self.libs:
            k = len(self.libs)
            cpp, so = self.tmp / f"k{k}.cpp", self.tmp / f"k{k}.so"
            import dgarray._ukernel_cuda as cu
            cpp.write_text(_PRELUDE + src.replace(cu.HEADER, ""))  # the host has <stdint.h>
            r = subprocess.run([CXX, "-std=c++17", "-O1", "-shared", "-fPIC", str(cpp), "-o",
                                str(so)], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr + src
            import ctypes
            self.libs[src] = ctypes.CDLL(str(so))
        return getattr(self.libs[src], name)

    def launch(self, f, gpu, grid, block, params, shared_mem=0):
        self.launches += 1
        f(*params)

    def synchronize(self, gpus):
        pass


CXX = shutil.which("g++") or shutil.which("c++")


@pytest.fixture
def host_gpu(monkeypatch, tmp_path):
    """The GPU path of dgarray/_user_kernels.py with _HostDriver."""
    if not CPU or CXX is None:
        pytest.skip("runs the GPU path on the CPU backend's memory with a C++ compiler")
    import dgarray._ukernel_cuda as cu
    import dgarray._user_kernels as uk

    class Core:
        def __getattr__(self, name):
            return getattr(dg._core, name)

        def backend(self):
            return "cuda"
    drv = _HostDriver(tmp_path)
    monkeypatch.setattr(uk, "_core", Core())
    monkeypatch.setattr(cu, "driver", lambda: drv)
    monkeypatch.setattr(cu, "gpu_of", lambda dev: dev)
    return drv


def test_gpu_path_on_the_host(ndev, host_gpu):
    sq = dg.ElementwiseKernel(**GENERIC)
    gi = dg.ElementwiseKernel("T x, raw T r, float32 c", "int64 j, T y",
                              "j = i; y = x * c + r[_ind.size() - i - 1]", "gi")
    l2 = dg.ReductionKernel("T x, T c", "T y", "x * x * c", "a + b", "y = sqrt(a)", "0", "l2")
    mx = dg.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mx")
    h = np.arange(60.0).reshape(12, 5) - 17
    row = np.arange(5.0)
    for m in layouts(h.shape, ndev):
        x = dist(h, m)
        np.testing.assert_array_equal(sq(x, dg.asarray(row)).get(), (h - row) ** 2)
        np.testing.assert_array_equal(sq(x[1::3, ::2], 1.0).get(), (h[1::3, ::2] - 1) ** 2)
        j, y = gi(x, x, 2.5)
        np.testing.assert_array_equal(j.get(), np.arange(60).reshape(12, 5))
        np.testing.assert_array_equal(y.get(), h * 2.5 + h.ravel()[::-1].reshape(12, 5))
        for axis in (None, 0, 1):
            np.testing.assert_allclose(l2(x, 2.0, axis=axis).get(),
                                       np.sqrt((h * h * 2).sum(axis=axis)), rtol=1e-13)
            np.testing.assert_array_equal(mx(x, axis=axis, keepdims=True).get(),
                                          h.max(axis=axis, keepdims=True))
    with pytest.raises(ValueError, match="no identity"):
        mx(dg.zeros((0, 3)), axis=0)
    np.testing.assert_array_equal(l2(dg.zeros((0, 3)), 1.0, axis=0).get(), np.zeros(3))
    add = dg.RawKernel("""
extern "C" __global__ void my_add(const double *x, double *y, long long n, const long long *box)
{
    long long rows = (box[1] - box[0] + box[2] - 1) / box[2];
    long long cols = (box[4] - box[3] + box[5] - 1) / box[5];
    for (long long k = 0; k < rows * cols; k++)
        y[k] += x[k] * n;
}""", "my_add")
    for m in layouts(h.shape, ndev):
        out = dist(np.ones((12, 5)), layouts(h.shape, ndev)[0])
        add((1,), (1,), (dist(h, m)[:, :], out, 3))
        np.testing.assert_array_equal(out.get(), h * 3 + 1)
    assert host_gpu.launches > 0


_GPU_CHILD = r'''
import dgarray as dg, numpy as np
sq = dg.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sq")
h = np.arange(70, dtype=np.float32).reshape(14, 5)
row = np.arange(5, dtype=np.float32)
for m in [None, {0: slice(0, 3), 1: slice(3, 14)}, {0: slice(None), 1: slice(None)},
          {d: slice(d, None, 2) for d in range(2)}]:
    if m is not None and dg._core._ndevices() < 2:
        m = {0: slice(None)}
    x = dg.asarray(h) if m is None else dg.distributed_array(h, m)
    assert np.array_equal(sq(x, dg.asarray(row)).get(), (h - row) ** 2), m
    assert np.array_equal(sq(x, 5).get(), (h - np.float32(5)) ** 2), m
    v = x[1::3, ::2]
    assert np.array_equal(sq(v, 1).get(), (h[1::3, ::2] - 1) ** 2), m
gi = dg.ElementwiseKernel("T x, raw T r", "int64 j, T y", "j = i; y = r[_ind.size() - i - 1]",
                          "gi")
a = dg.asarray(np.arange(11.0))
j, y = gi(a, a)
assert np.array_equal(j.get(), np.arange(11)) and np.array_equal(y.get(), np.arange(11.0)[::-1])
add = dg.RawKernel("""
extern "C" __global__ void my_add(const float *x1, const float *x2, float *y, long long n,
                                  const long long *box)
{
    long long m = (box[1] - box[0] + box[2] - 1) / box[2];
    for (long long k = blockIdx.x * blockDim.x + threadIdx.x; k < m; k += blockDim.x * gridDim.x)
        y[k] = x1[k] + x2[k];
}""", "my_add")
x1 = dg.asarray(np.arange(25, dtype=np.float32))
x2 = dg.arange(25, dtype=np.float32)
out = dg.zeros(25, dtype=np.float32)
add((4,), (32,), (x1, x2, out, 25))
assert np.array_equal(out.get(), np.arange(25, dtype=np.float32) * 2)
l2 = dg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
mx = dg.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mx")
big = np.random.default_rng(0).random((300, 2000))
bx = dg.asarray(big)
for axis in (None, 0, 1):
    assert np.allclose(l2(bx, axis=axis).get(), np.sqrt((big * big).sum(axis=axis)),
                       rtol=1e-12), axis
    assert np.array_equal(mx(bx, axis=axis).get(), big.max(axis=axis)), axis
print("ok")
'''


@gpu_only
def test_gpu_user_kernels():
    """ElementwiseKernel, ReductionKernel and RawKernel on GPUs against
    NumPy, in a child process (a fault in a user's kernel must not end the
    test session)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(dg.__file__))]
                                        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                           if p])
    r = subprocess.run([sys.executable, "-c", _GPU_CHILD], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
