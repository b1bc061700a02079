"""The CUDA kernels generated for fused chains (src/core/dg_fused_src.c) run
on the host: the generated source is compiled by the C++ compiler with a
prelude standing in for CUDA's built-ins (one thread walking every element),
run over NumPy arrays, and compared with NumPy.  What this checks without a
GPU: the argument words, the byte offsets over strided and broadcast axes,
the order of steps, values passed between them, scalars, two-output loops,
power's scalar-exponent path and an input and an output of the same memory.
What it cannot check is NVRTC's code and the launch (tests/test_rtc.py
compiles the same sources with NVRTC)."""
import ctypes
import os
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import dgarray as dg

core = dg._core
CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IN, SCALAR, TEMP, OUT = 0, 1, 2, 3
DT = {np.dtype(t): i for i, t in enumerate(
    [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
     np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128])}

PRELUDE = """#include <cstdint>
#include <cstring>
#include <cmath>
struct dg_u3 { unsigned x, y, z; };
static dg_u3 blockIdx, blockDim = {1, 1, 1}, gridDim = {1, 1, 1}, threadIdx;
#define __global__
#define __launch_bounds__(x)
#define __grid_constant__
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
"""
RUNNER = """
extern "C" void dg_host_run(const unsigned long long *w, unsigned threads, unsigned gx,
                            unsigned gy)
{
    dg_fused_args b;
    std::memcpy(&b, w, sizeof b);
    /* a grid of gx x gy blocks of `threads`, every thread run one after another */
    blockDim.x = threads;
    gridDim.x = gx;
    gridDim.y = gy;
    for (unsigned y = 0; y < gy; y++)
        for (unsigned x = 0; x < gx; x++)
            for (unsigned t = 0; t < threads; t++) {
                blockIdx.x = x;
                blockIdx.y = y;
                threadIdx.x = t;
                dg_fused(b);
            }
}
"""


def mem(a):
    return (IN, DT[a.dtype], a.ctypes.data, tuple(a.strides), b"")


def out(a):
    return (OUT, DT[a.dtype], a.ctypes.data, tuple(a.strides), b"")


def scalar(v, dtype, ndim):
    return (SCALAR, DT[np.dtype(dtype)], 0, (0,) * ndim, np.array(v, dtype).tobytes())


def temp(dtype, ndim):
    return (TEMP, DT[np.dtype(dtype)], 0, (0,) * ndim, b"")


def run(tmp_path, shape, vals, steps, contiguous=None, threads=1, rows=None, grid_rows=None,
        stream=None, fpe=None):
    """Compiles and runs the kernel of the chain, as `threads` threads of one
    block (each thread's elements a grid stride apart), or for the row and
    streaming kernels a grid of tiles of each row and `grid_rows` blocks down
    the rows or bands (each block's a grid stride apart; default all);
    `contiguous`: whether the source must be the contiguous kernel's
    (vectors of several elements), `rows` whether the row kernel's or the
    streaming kernel's, `stream` whether the streaming kernel's; fpe: the
    kernel that checks floating-point errors, its last four argument words
    these (action word | generation << 32, gate, record, where)."""
    # the checked source: 2 where the action word watches underflow (bits 8-11)
    check = 0 if fpe is None else 2 if (fpe[0] >> 8) & 15 else 1
    src, words, (items, nrows, cols, band) = core._fused_source_of(
        tuple(shape), vals, steps, check)
    if fpe is not None:
        assert "dg_fpe_publish" in src
        w = np.frombuffer(words, np.uint64).copy()
        w[-4:] = fpe
        words = w.tobytes()
    if contiguous is not None:
        assert ("dg_fpack" in src) == contiguous, src
    if rows is not None:
        assert (items > 0) == rows, src
    if stream is not None:
        assert (band > 0) == stream, src
    gx = gy = 1
    if items > 0:
        gx = -(-cols // (items * threads))
        down = -(-nrows // band) if band else nrows
        gy = max(1, min(down, grid_rows or down))
    # a new name each time: dlopen of a path it loaded before returns that library
    run.count = getattr(run, "count", 0) + 1
    cpp = tmp_path / f"k{run.count}.cpp"
    so = tmp_path / f"k{run.count}.so"
    cpp.write_text(PRELUDE + src + RUNNER)
    subprocess.run([CXX, "-std=c++17", "-O1", "-ffp-contract=off", "-shared", "-fPIC",
                    "-I" + os.path.join(ROOT, "kernels"), "-I" + os.path.join(ROOT, "src", "core"),
                    str(cpp), "-o", str(so)], check=True, capture_output=True)
    lib = ctypes.CDLL(str(so))
    buf = ctypes.create_string_buffer(words, len(words))
    lib.dg_host_run(buf, ctypes.c_uint(threads), ctypes.c_uint(gx), ctypes.c_uint(gy))


def test_strided_scalars_temps(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((6, 14))
    a = base[:, ::2]                      # strided rows
    b = rng.standard_normal((6, 7)).T.copy().T  # column-major
    row = rng.standard_normal(7)
    rb = np.broadcast_to(row, (6, 7))     # stride 0 on axis 0
    o = np.zeros((6, 7))
    vals = [mem(a), mem(b), mem(rb), scalar(2.5, np.float64, 2), temp(np.float64, 2),
            temp(np.float64, 2), out(o)]
    steps = [("multiply", (0, 1, 4)), ("add", (4, 3, 5)), ("hypot", (5, 2, 4)),
             ("sqrt", (4, 6))]
    run(tmp_path, (6, 7), vals, steps)
    np.testing.assert_array_equal(o, np.sqrt(np.hypot(a * b + 2.5, rb)))


def test_power_scalar_exponent_and_cast(tmp_path):
    a = np.linspace(0.5, 4, 24, dtype=np.float32).reshape(4, 6)
    o = np.zeros((4, 6), np.int32)
    f = np.zeros((4, 6), np.float32)
    vals = [mem(a), scalar(0.5, np.float32, 2), out(f), out(o)]
    steps = [("power", (0, 1, 2)), ("cast", (2, 3))]
    run(tmp_path, (4, 6), vals, steps)
    np.testing.assert_array_equal(f, np.power(a, np.float32(0.5)))
    np.testing.assert_array_equal(o, np.power(a, np.float32(0.5)).astype(np.int32))


def test_two_outputs_and_in_place(tmp_path):
    a = np.arange(-10, 14, dtype=np.int64).reshape(2, 3, 4)
    a0 = a.copy()
    q = np.zeros_like(a)
    vals = [mem(a), scalar(3, np.int64, 3), out(q), temp(np.int64, 3), out(a)]
    # q, r = divmod(a, 3); a = r (the output is a's own memory, read before)
    steps = [("divmod", (0, 1, 2, 3)), ("positive", (3, 4))]
    run(tmp_path, (2, 3, 4), vals, steps)
    np.testing.assert_array_equal(q, a0 // 3)
    np.testing.assert_array_equal(a, a0 % 3)


def test_complex_and_bool(tmp_path):
    rng = np.random.default_rng(1)
    z = (rng.standard_normal(10) + 1j * rng.standard_normal(10)).astype(np.complex128)
    o = np.zeros(10, np.complex128)
    m = np.zeros(10, np.bool_)
    vals = [mem(z), scalar(1 - 2j, np.complex128, 1), out(o), temp(np.float64, 1),
            scalar(1.0, np.float64, 1), out(m)]
    steps = [("multiply", (0, 1, 2)), ("absolute", (2, 3)), ("greater", (3, 4, 5))]
    run(tmp_path, (10,), vals, steps)
    np.testing.assert_allclose(o, z * (1 - 2j), rtol=1e-15)
    np.testing.assert_array_equal(m, np.abs(z * (1 - 2j)) > 1.0)


def _header_functions(parts):
    """The dg_* functions kernels/dg_scalar.h defines for device code when
    DG_SCALAR_PARTS is `parts` (the preprocessor's text, checked to compile)."""
    src = f'#define DG_SCALAR_PARTS {parts}\n#include "dg_scalar.h"\n'
    inc = ["-I" + os.path.join(ROOT, "kernels"), "-I" + os.path.join(ROOT, "src", "core")]
    subprocess.run([CXX, "-std=c++17", "-fsyntax-only", "-x", "c++", "-"] + inc, input=src,
                   text=True, check=True, capture_output=True)
    pp = subprocess.run([CXX, "-E", "-P", "-x", "c++", "-D__CUDACC__", "-D__CUDA_ARCH__=900", "-"]
                        + inc, input=src, text=True, check=True, capture_output=True).stdout
    return set(re.findall(r"\b(dg_\w+)\s*\(", pp))


def test_every_loop_finds_its_functions_in_the_parts_it_asks_for():
    """A generated source includes only the parts of dg_scalar.h its loops
    need (DG_SCALAR_PARTS): every loop, alone in a chain, calls functions that
    those parts define (and every choice of parts compiles on its own)."""
    defined = {}
    n = 0
    while True:
        try:
            src, _ = core._fused_loops_source(n, 1, 1)
        except ValueError:
            break
        parts = int(re.search(r"#define DG_SCALAR_PARTS (\d+)\n", src).group(1))
        if parts not in defined:
            defined[parts] = _header_functions(parts)
        calls = set(re.findall(r"\b(dg_\w+)\(", src.split("dg_fused(", 1)[1]))
        assert calls and calls <= defined[parts], (n, parts, calls - defined[parts])
        n += 1
    assert n > 0 and len(defined) >= 5  # casts, none, integers, float16, complex at least


def test_contiguous_kernel_vectors_tails_and_alignment(tmp_path):
    """A one-axis chain over dense memory runs as the contiguous kernel
    (16-byte packs of 4 float32, 2 float64, 8 int8 elements a thread; outputs
    of another size, a bool, packed alike), its last n % V elements one by
    one; an input of stride 0 is read once; an address off the pack's
    alignment (a[1:]) takes the general kernel.  Every length from 0 to 19."""
    rng = np.random.default_rng(2)
    for n in range(0, 20):
        a = rng.standard_normal(n + 1).astype(np.float32)
        b = rng.standard_normal(n + 1).astype(np.float32)
        one = np.full(1, 3.0, np.float32)
        for off, contig in ((0, n > 0), (1, False)):
            x, y = a[off:off + n], b[off:off + n]
            o = np.zeros(n + 1, np.float32)[off:off + n]
            m = np.zeros(n + 1, np.bool_)[off:off + n]
            c = np.broadcast_to(one, (n,))
            vals = [mem(x), mem(y), mem(c), temp(np.float32, 1), temp(np.float32, 1),
                    out(o), out(m)]
            steps = [("multiply", (0, 0, 3)), ("multiply", (1, 1, 4)), ("add", (3, 4, 3)),
                     ("sqrt", (3, 4)), ("subtract", (4, 2, 5)), ("greater", (5, 1, 6))]
            if n == 0:
                continue
            run(tmp_path, (n,), vals, steps, contiguous=contig)
            want = np.sqrt(x * x + y * y) - np.float32(3.0)
            np.testing.assert_array_equal(o, want)
            np.testing.assert_array_equal(m, want > y)
    for dt, steps_name in ((np.float64, "multiply"), (np.int8, "add")):
        x = (np.arange(19) % 7 - 3).astype(dt)
        o = np.zeros(19, dt)
        vals = [mem(x), scalar(2, dt, 1), out(o)]
        run(tmp_path, (19,), vals, [(steps_name, (0, 1, 2))], contiguous=True)
        np.testing.assert_array_equal(o, x * 2 if steps_name == "multiply" else x + 2)


def test_contiguous_kernel_in_place(tmp_path):
    """An output that is an input's own memory (a = a * 2 + 1): each pack is
    read whole before the steps and stored after them."""
    a = np.arange(23, dtype=np.float32)
    a0 = a.copy()
    vals = [mem(a), scalar(2.0, np.float32, 1), temp(np.float32, 1), scalar(1.0, np.float32, 1),
            out(a)]
    run(tmp_path, (23,), vals, [("multiply", (0, 1, 2)), ("add", (2, 3, 4))], contiguous=True)
    np.testing.assert_array_equal(a, a0 * 2 + 1)


@pytest.mark.parametrize("threads", [1, 3, 7, 64])
def test_general_kernel_grid_strides(tmp_path, threads):
    """The general kernel steps each thread's coordinates by the grid's stride
    with carries (no division per element): 2-d and 3-d strided, transposed
    and broadcast operands, the stride smaller and larger than the inner
    extents, every element once."""
    rng = np.random.default_rng(4)
    for shape in [(5, 7), (3, 4, 5), (2, 1, 9), (11, 2)]:
        base = rng.standard_normal(tuple(2 * e for e in shape))
        a = base[tuple(slice(None, None, 2) for _ in shape)]          # strided
        b = rng.standard_normal(shape[::-1]).T                        # transposed
        row = rng.standard_normal(shape[-1])
        r = np.broadcast_to(row, shape)                               # stride 0
        o = np.full(shape, np.nan)
        vals = [mem(a), mem(b), mem(r), temp(np.float64, len(shape)), out(o)]
        steps = [("multiply", (0, 1, 3)), ("add", (3, 2, 4))]
        run(tmp_path, shape, vals, steps, contiguous=False, threads=threads)
        np.testing.assert_array_equal(o, a * b + r)


@pytest.mark.parametrize("threads,grid_rows", [(1, None), (5, 2), (64, 3)])
def test_row_kernel_tiles_and_rows(tmp_path, threads, grid_rows):
    """The row kernel (a long last axis, memory not dense and aligned):
    Jacobi's step on shifted slices of one grid into a temporary, a 3-d
    space of strided, transposed and broadcast operands, and a 1-d view one
    element off alignment; tiles of several elements per thread that end
    inside a row, rows a grid stride apart; every element once (the output
    starts as NaN)."""
    rng = np.random.default_rng(9)
    # Jacobi: 0.2 * (c + n + s + w + e) of a 7 x 300 grid, 300 >= the row kernel's least
    g = rng.standard_normal((7, 300)).astype(np.float32)
    views = [g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]]
    o = np.full((5, 298), np.nan, np.float32)
    t = [temp(np.float32, 2) for _ in range(4)]
    vals = [mem(v) for v in views] + t + [scalar(0.2, np.float32, 2), out(o)]
    steps = [("add", (0, 1, 5)), ("add", (5, 2, 6)), ("add", (6, 3, 7)), ("add", (7, 4, 8)),
             ("multiply", (9, 8, 10))]
    run(tmp_path, o.shape, vals, steps, rows=True, threads=threads, grid_rows=grid_rows,
        stream=False)
    want = np.float32(0.2) * ((((views[0] + views[1]) + views[2]) + views[3]) + views[4])
    np.testing.assert_array_equal(o, want)
    # 3-d: strided, transposed and broadcast operands (leading coordinates by division)
    shape = (3, 2, 260)
    a = rng.standard_normal(tuple(2 * e for e in shape))[::2, ::2, ::2]
    b = rng.standard_normal(shape[::-1]).T
    r = np.broadcast_to(rng.standard_normal(shape[-1]), shape)
    o3 = np.full(shape, np.nan)
    run(tmp_path, shape, [mem(a), mem(b), mem(r), temp(np.float64, 3), out(o3)],
        [("multiply", (0, 1, 3)), ("add", (3, 2, 4))], rows=True, threads=threads,
        grid_rows=grid_rows)
    np.testing.assert_array_equal(o3, a * b + r)
    # 1-d, one float32 off 16-byte alignment: not the contiguous kernel's
    x = rng.standard_normal(1001).astype(np.float32)
    o1 = np.full(1000, np.nan, np.float32)
    run(tmp_path, (1000,), [mem(x[1:]), scalar(3.0, np.float32, 1), out(o1)],
        [("multiply", (0, 1, 2))], contiguous=False, rows=True, threads=threads)
    np.testing.assert_array_equal(o1, x[1:] * np.float32(3))


def jacobi_vals(views, o, dtype=np.float32):
    """The values and steps of 0.2 * (v0 + v1 + ... ) into o."""
    k = len(views)
    t = [temp(dtype, 2) for _ in range(k - 1)]
    vals = [mem(v) for v in views] + t + [scalar(0.2, dtype, 2), out(o)]
    steps = [("add", (0, 1, k))] + [("add", (k + i - 1, i + 1, k + i)) for i in range(1, k - 1)]
    steps.append(("multiply", (2 * k - 1, 2 * k - 2, 2 * k)))
    return vals, steps


def jacobi_want(views, dtype=np.float32):
    acc = views[0] + views[1]
    for v in views[2:]:
        acc = acc + v
    return dtype(0.2) * acc


@pytest.mark.parametrize("rows_a_step", [1, 2])
@pytest.mark.parametrize("threads,grid_rows", [(1, None), (5, 1), (64, 2)])
def test_streaming_kernel_families(tmp_path, monkeypatch, threads, grid_rows, rows_a_step):
    """The streaming kernel (inputs that are rows of one memory a few rows
    apart, a thread walking down a band with them in registers): Jacobi's
    step over 75 rows (bands of 32 end inside the space; a grid of one or two
    blocks down walks several bands), views 2 rows apart (rows of the window
    no view reads), a grid walked upwards (negative row stride), two
    families with a broadcast row and another array beside them; every
    element once (outputs start as NaN); one row a step and two (the
    default: a band of 32 rows over 75 ends on an odd row)."""
    monkeypatch.setenv("DGARRAY_FUSED_ROWS", f"0,0,16,{rows_a_step}")
    rng = np.random.default_rng(11)
    g = rng.standard_normal((77, 300)).astype(np.float32)
    views = [g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]]
    o = np.full((75, 298), np.nan, np.float32)
    vals, steps = jacobi_vals(views, o)
    run(tmp_path, o.shape, vals, steps, threads=threads, grid_rows=grid_rows, stream=True)
    np.testing.assert_array_equal(o, jacobi_want(views))
    # 2 rows apart: the window holds rows r - 2 .. r + 2, of which r +- 1 no view reads
    views = [g[2:-2, 3:], g[:-4, 3:], g[4:, 3:]]
    o = np.full((73, 297), np.nan, np.float32)
    vals, steps = jacobi_vals(views, o)
    run(tmp_path, o.shape, vals, steps, threads=threads, grid_rows=grid_rows, stream=True)
    np.testing.assert_array_equal(o, jacobi_want(views))
    # upwards: the row stride is negative
    u = g[::-1]
    views = [u[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1]]
    o = np.full((75, 298), np.nan, np.float32)
    vals, steps = jacobi_vals(views, o)
    run(tmp_path, o.shape, vals, steps, threads=threads, grid_rows=grid_rows, stream=True)
    np.testing.assert_array_equal(o, jacobi_want(views))
    # two families (float64: h's rows, g's rows), a broadcast row, another array
    h = rng.standard_normal((40, 260))
    g2 = rng.standard_normal((40, 260))
    other = rng.standard_normal((60, 600))[::2, 1:521:2]         # 30 x 260, strided
    row = np.broadcast_to(rng.standard_normal(260), (30, 260))   # row stride 0
    views = [h[5:35], h[4:34], h[8:38], g2[0:30], g2[2:32], row, other]
    o = np.full((30, 260), np.nan)
    vals, steps = jacobi_vals(views, o, np.float64)
    run(tmp_path, o.shape, vals, steps, threads=threads, grid_rows=grid_rows, stream=True)
    np.testing.assert_array_equal(o, jacobi_want(views, np.float64))


def test_streaming_kernel_not_taken(tmp_path):
    """Inputs of one memory further apart than the window, of other strides,
    or too few rows: the row kernel, not the streaming one."""
    rng = np.random.default_rng(12)
    g = rng.standard_normal((40, 300)).astype(np.float32)
    o = np.full((30, 300), np.nan, np.float32)
    for views in ([g[0:30], g[10:40]],                     # 10 rows apart
                  [g[0:30], g[::-1][0:30]]):               # another row stride
        vals, steps = jacobi_vals(views, o)
        run(tmp_path, o.shape, vals, steps, rows=True, stream=False)
        np.testing.assert_array_equal(o, jacobi_want(views))
    views = [g[1:5], g[0:4]]                              # 4 rows: fewer than 2 windows
    o4 = np.full((4, 300), np.nan, np.float32)
    vals, steps = jacobi_vals(views, o4)
    run(tmp_path, o4.shape, vals, steps, rows=True, stream=False)
    np.testing.assert_array_equal(o4, jacobi_want(views))
KINDS = ("divide by zero", "overflow", "underflow", "invalid value")


@pytest.mark.parametrize("kernel", ["contiguous", "general", "rows"])
def test_checked_kernel_notes_numpy_kinds(tmp_path, kernel):
    """The checked kernel of a chain (its errstate watches something) notes
    the kinds NumPy's loops raise on the same values, by the software rule
    (kernels/dg_scalar.h), in the record the CUDA backend reads: each kind
    raised counted once per generation, `where` and the gate set; the
    unchecked kernel of the same chain has no check at all.  The contiguous,
    general and row kernels."""
    a0 = np.array([1.0, 0.0, 1e308, 2.0, -1.0, 0.5, 3.0, 4.0])
    b0 = np.array([0.0, 0.0, 1e-10, 1.0, 1.0, 2.0, 1.0, 1.0])
    shape = (8,)
    if kernel == "general":
        a, b = np.repeat(a0, 2)[::2], np.repeat(b0, 2)[::2]
    elif kernel == "rows":  # two strided rows of 320: the row kernel
        shape = (2, 320)
        a = np.tile(a0, 160).reshape(2, 640)[:, ::2]
        b = np.tile(b0, 160).reshape(2, 640)[:, ::2]
    else:
        a, b = a0, b0
    o = np.zeros(shape)
    vals = [mem(a), mem(b), temp(np.float64, len(shape)), out(o)]
    steps = [("divide", (0, 1, 2)), ("log", (2, 3))]
    src = core._fused_source_of(shape, vals, steps)[0]
    assert "dg_fpe" not in src
    gate = np.zeros(1, np.uint64)
    rec = np.zeros(34, np.uint32)
    actions = 0x1111  # warn for every kind (dg_fpe.h: 4 bits per kind)
    gen = 5
    kw = {"contiguous": kernel == "contiguous", "rows": kernel == "rows"}
    run(tmp_path, shape, vals, steps, **kw,
        fpe=(actions | gen << 32, gate.ctypes.data, rec.ctypes.data, 77))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o, np.log(a / b))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            np.log(np.divide(a, b))
    exp = {k for k in range(4) if any(str(x.message).startswith(KINDS[k]) for x in w)}
    got = {k for k in range(4) if rec[2 + k * 8 + 1]}
    assert got == exp == {0, 1, 3}
    assert rec[0] == 1 and rec[1] == 77  # one publication, by `where`
    assert sum(rec[2:]) == len(exp)
    assert int(gate[0]) >> 32 == gen
    # a later thread of the same generation raising the same kinds writes nothing
    run(tmp_path, shape, vals, steps, **kw,
        fpe=(actions | gen << 32, gate.ctypes.data, rec.ctypes.data, 78))
    assert rec[0] == 1 and rec[1] == 77
    # a new generation publishes again; ignore (action 0) notes nothing
    run(tmp_path, shape, vals, steps, **kw,
        fpe=(0x1101 | (gen + 1) << 32, gate.ctypes.data, rec.ctypes.data, 79))
    assert rec[0] == 2 and rec[1] == 79
    assert rec[2 + 0 * 8 + 1] == 2 and rec[2 + 3 * 8 + 1] == 2 and rec[2 + 1 * 8 + 1] == 1


def test_checked_streaming_kernel(tmp_path, monkeypatch):
    """The checked streaming kernel (Jacobi's step over a grid where two
    neighbours' sum overflows float32): the kinds NumPy's loops raise on the
    same values, noted once; the values as the unchecked kernel's."""
    monkeypatch.setenv("DGARRAY_FUSED_ROWS", "0,0,16,2")
    g = np.random.default_rng(13).standard_normal((77, 300)).astype(np.float32)
    g[40, 100] = g[41, 100] = np.float32(3e38)
    views = [g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]]
    o = np.full((75, 298), np.nan, np.float32)
    vals, steps = jacobi_vals(views, o)
    gate = np.zeros(1, np.uint64)
    rec = np.zeros(34, np.uint32)
    run(tmp_path, o.shape, vals, steps, threads=64, stream=True,
        fpe=(0x1111 | 3 << 32, gate.ctypes.data, rec.ctypes.data, 5))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            want = jacobi_want(views)
    np.testing.assert_array_equal(o, want)
    exp = {k for k in range(4) if any(str(x.message).startswith(KINDS[k]) for x in w)}
    got = {k for k in range(4) if rec[2 + k * 8 + 1]}
    assert got == exp == {1}
    assert rec[0] == 1 and rec[1] == 5


def _layout(kernel, *cols):
    """Each 1-d pattern of cols (8 values) laid out for the contiguous,
    general (every other element) or row (two strided rows of 320) kernel;
    -> (shape, arrays)."""
    if kernel == "general":
        return (8,), [np.repeat(c, 2)[::2] for c in cols]
    if kernel == "rows":
        return (2, 320), [np.tile(c, 160).reshape(2, 640)[:, ::2] for c in cols]
    return (8,), [np.array(c) for c in cols]


def _numpy_kinds(f):
    """The kinds NumPy raises computing f() under errstate(all='warn')."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            f()
    return {k for k in range(4) if any(str(x.message).startswith(KINDS[k]) for x in w)}


@pytest.mark.parametrize("kernel", ["contiguous", "general", "rows"])
def test_checked_kernel_kinds_of_untested_steps(tmp_path, kernel):
    """The checked kernels test the results of a step whose output only
    reaches steps that pass a non-finite value on (add, multiply, sqrt, ...)
    through the last step's test alone, and classify the whole element where
    it holds: kinds raised by such steps are noted, and by a step whose
    output goes where a non-finite value is lost (1 / inf), and underflow,
    which a later step can hide, where the word watches it (each step
    tested then); as NumPy raises them on the same values."""
    big, tiny = 1e200, 1e-200
    a0 = [big, 0.0, -1.0, 2.0, tiny, 0.5, 3.0, 1.0]
    b0 = [1.0, 1.0, 1.0, 1.0, tiny, 2.0, 1.0, 1.0]
    c0 = [1.0] * 8
    shape, (a, b, c) = _layout(kernel, a0, b0, c0)
    nd = len(shape)
    kw = {"contiguous": kernel == "contiguous", "rows": kernel == "rows"}
    chains = [
        # 1 / (a * a) + c: a * a overflows where 1 / inf hides it; 1 / 0
        ([mem(a), scalar(1.0, np.float64, nd), mem(c), temp(np.float64, nd),
          temp(np.float64, nd)],
         [("multiply", (0, 0, 3)), ("divide", (1, 3, 4)), ("add", (4, 2, 5))],
         lambda: 1.0 / (a * a) + c),
        # sqrt(a) * b - c: sqrt(-1) is invalid, tested through the last step only
        ([mem(a), mem(b), mem(c), temp(np.float64, nd), temp(np.float64, nd)],
         [("sqrt", (0, 3)), ("multiply", (3, 1, 4)), ("subtract", (4, 2, 5))],
         lambda: np.sqrt(a) * b - c),
        # a * b + c: tiny * tiny underflows, hidden by + 1
        ([mem(a), mem(b), mem(c), temp(np.float64, nd)],
         [("multiply", (0, 1, 3)), ("add", (3, 2, 4))],
         lambda: a * b + c),
    ]
    for vals, steps, want in chains:
        for actions in (0x1111, 0x1011):  # underflow watched, ignored
            o = np.full(shape, np.nan)
            gate = np.zeros(1, np.uint64)
            rec = np.zeros(34, np.uint32)
            run(tmp_path, shape, vals + [out(o)], steps, **kw,
                fpe=(actions | 3 << 32, gate.ctypes.data, rec.ctypes.data, 9))
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(o, want())
            exp = _numpy_kinds(want)
            if not actions >> 8 & 15:
                exp.discard(2)
            got = {k for k in range(4) if rec[2 + k * 8 + 1]}
            assert got == exp, (steps, hex(actions))
            assert exp or actions == 0x1011, steps  # each chain raises something
