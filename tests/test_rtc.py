"""The run-time kernel compiler (src/core/dg_rtc.c): NVRTC through dlopen,
its memory and disk caches (concurrent processes, a corrupt file, a
directory that cannot be written), and the CUDA source generated for fused
chains (src/core/dg_fused_src.c) compiled for every kind of loop.  These run
wherever the CUDA toolkit's NVRTC is installed, GPU or not; skipped with the
reason where it is not."""
import os
import subprocess
import sys

import pytest

import dgarray as dg

core = dg._core
OK, WHY = core._rtc_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no NVRTC: {WHY}")

# a small kernel that compiles fast (the cache does not look inside sources)
SMALL = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] += %s; }\n'


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("DGARRAY_CACHE_DIR", str(d))
    core._rtc_forget()
    yield d
    core._rtc_forget()


def test_cache_dir_default(monkeypatch, tmp_path):
    monkeypatch.delenv("DGARRAY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert core._rtc_cache_dir() == str(tmp_path / "dgarray")
    monkeypatch.setenv("DGARRAY_CACHE_DIR", str(tmp_path / "x"))
    assert core._rtc_cache_dir() == str(tmp_path / "x")


def test_memory_then_disk(cache_dir):
    src = SMALL % "1.0f"
    code, frm = core._rtc_compile(src, 90)
    assert frm == "compiled" and code[:4] == b"\x7fELF"
    files = [f for f in os.listdir(cache_dir) if f.endswith(".cubin")]
    assert len(files) == 1 and not [f for f in os.listdir(cache_dir) if f.startswith(".tmp")]
    assert core._rtc_compile(src, 90) == (code, "memory")
    core._rtc_forget()
    assert core._rtc_compile(src, 90) == (code, "disk")
    # another architecture, driver or source is another kernel
    assert core._rtc_compile(src, 80)[1] == "compiled"
    assert core._rtc_compile(src, 90, 13000)[1] == "compiled"
    assert len(os.listdir(cache_dir)) == 3


def test_corrupt_file(cache_dir):
    src = SMALL % "2.0f"
    code, _ = core._rtc_compile(src, 90)
    (path,) = [cache_dir / f for f in os.listdir(cache_dir)]
    for bad in (b"", b"garbage", path.read_bytes()[:-7], path.read_bytes()[:40] + b"x" * 300):
        path.write_bytes(bad)
        core._rtc_forget()
        assert core._rtc_compile(src, 90) == (code, "compiled")
        core._rtc_forget()
        assert core._rtc_compile(src, 90) == (code, "disk"), "the corrupt file was rewritten"


def test_unwritable_directory(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("DGARRAY_CACHE_DIR", str(blocker / "cache"))
    core._rtc_forget()
    src = SMALL % "3.0f"
    code, frm = core._rtc_compile(src, 90)
    assert frm == "compiled" and code
    core._rtc_forget()
    assert core._rtc_compile(src, 90)[1] == "compiled"  # nothing could be kept on disk
    core._rtc_forget()


def test_concurrent_processes(cache_dir):
    child = ("import sys, dgarray\n"
             "code, frm = dgarray._core._rtc_compile(sys.argv[1], 90)\n"
             "print(len(code), frm)\n")
    src = SMALL % "4.0f"
    env = dict(os.environ, DGARRAY_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", child, src], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len({o[0] for o in outs}) == 1
    assert sorted(os.listdir(cache_dir)) == [f for f in os.listdir(cache_dir)
                                             if f.endswith(".cubin")]
    code, frm = core._rtc_compile(src, 90)
    assert frm == "disk" and str(len(code)) == outs[0][0]


def test_compile_error_is_reported(cache_dir):
    with pytest.raises(RuntimeError, match="could not compile"):
        core._rtc_compile("this is not CUDA", 90)


@pytest.mark.parametrize("first,count,ndim", [
    (0, 16, 1),                           # casts, bool and integer sources
    (200, 16, 2),                         # casts to float16 and complex
    (None, 12, 3),                        # power, divmod (two outputs), complex
])
@pytest.mark.parametrize("check_fpe", [0, 1, 2], ids=["plain", "checked", "checked_under"])
def test_generated_sources_compile(cache_dir, first, count, ndim, check_fpe):
    """... and their checked kernels (errstate watches something: each
    step's results classified by kernels/dg_scalar.h's rule, the kinds
    published at the end)."""
    if first is None:  # the loops of power and divmod, whatever their ids
        first = _first_loop_of_two_output()
    src, nwords = core._fused_loops_source(first, count, ndim, check_fpe)
    assert "dg_fused" in src and nwords > 1
    assert ("dg_fpe_publish" in src) == (check_fpe > 0)
    code, frm = core._rtc_compile(src, 90)
    assert code[:4] == b"\x7fELF"


def _first_loop_of_two_output():
    """The id of the first loop with two outputs (divmod's), found by
    asking the generator: a step's call with two outputs names both."""
    for i in range(180, 1400, 4):
        try:
            src, _ = core._fused_loops_source(i, 4, 1)
        except ValueError:
            break
        if "dg_divmod" in src:
            return max(0, i - 4)
    return 180


def test_every_choice_of_scalar_parts_compiles(cache_dir):
    """kernels/dg_scalar.h with any DG_SCALAR_PARTS (the parts a generated
    kernel asks for) compiles with NVRTC on its own: no part calls into one it
    may be without."""
    for parts in range(16):
        src = (f'#define DG_SCALAR_PARTS {parts}\n#include "dg_scalar.h"\n'
               'extern "C" __global__ void k(float *x) { x[threadIdx.x] = dg_sin_f4(x[0]); }\n')
        code, _ = core._rtc_compile(src, 90)
        assert code[:4] == b"\x7fELF"


def test_contiguous_kernel_compiles(cache_dir):
    """The contiguous kernel of a one-axis chain over dense aligned memory
    (16-byte packs: 4 float32 in, a bool and a float32 out; 2 float64; 8
    int8) compiles with NVRTC; tests/test_fused_kernel_host.py runs it."""
    import numpy as np
    IN, SCALAR, TEMP, OUT = 0, 1, 2, 3
    f4, f8, i1, b1 = 10, 11, 1, 0
    x = np.zeros(64, np.float32)
    o = np.zeros(64, np.float32)
    m = np.zeros(64, np.bool_)
    cases = [
        ([(IN, f4, x.ctypes.data, (4,), b""), (IN, f4, x.ctypes.data, (4,), b""),
          (OUT, f4, o.ctypes.data, (4,), b""), (OUT, b1, m.ctypes.data, (1,), b"")],
         [("hypot", (0, 1, 2)), ("greater", (2, 1, 3))]),
        ([(IN, f8, x.ctypes.data, (8,), b""), (SCALAR, f8, 0, (0,), np.float64(2).tobytes()),
          (OUT, f8, o.ctypes.data, (8,), b"")], [("multiply", (0, 1, 2))]),
        ([(IN, i1, m.ctypes.data, (1,), b""), (SCALAR, i1, 0, (0,), np.int8(2).tobytes()),
          (OUT, i1, m.ctypes.data, (1,), b"")], [("add", (0, 1, 2))]),
    ]
    for vals, steps in cases:
        src, _, _ = core._fused_source_of((16,), vals, steps)
        assert "dg_fpack" in src, src
        code, _ = core._rtc_compile(src, 90)
        assert code[:4] == b"\x7fELF"


def test_checked_kernels_of_every_rule_compile(cache_dir):
    """The checked kernels (floating-point errors noted by kernels/
    dg_scalar.h's rule) compile with NVRTC for each class of the rule: float
    poles and overflow (float16, float32, complex), integer division and
    reciprocal, a float -> integer cast, underflow-watched multiply, spacing;
    contiguous and general kernels.  tests/test_fused_kernel_host.py runs one."""
    import numpy as np
    IN, OUT, TEMP = 0, 3, 2
    f2, f4, f8, c8, i4, i8, u1 = 9, 10, 11, 12, 5, 7, 2
    x = np.zeros(64, np.float64)
    chains = [
        ([(IN, f4, x.ctypes.data, (4,), b""), (IN, f4, x.ctypes.data, (4,), b""),
          (TEMP, f4, 0, (0,), b""), (OUT, i4, x.ctypes.data, (4,), b"")],
         [("divide", (0, 1, 2)), ("cast", (2, 3))]),
        ([(IN, i8, x.ctypes.data, (8,), b""), (IN, i8, x.ctypes.data, (16,), b""),
          (OUT, i8, x.ctypes.data, (8,), b""), (OUT, i8, x.ctypes.data, (8,), b"")],
         [("floor_divide", (0, 1, 2)), ("reciprocal", (2, 3))]),
        ([(IN, f2, x.ctypes.data, (2,), b""), (OUT, f2, x.ctypes.data, (2,), b""),
          (OUT, f2, x.ctypes.data, (2,), b"")], [("log", (0, 1)), ("spacing", (1, 2))]),
        ([(IN, c8, x.ctypes.data, (8,), b""), (IN, c8, x.ctypes.data, (8,), b""),
          (OUT, c8, x.ctypes.data, (8,), b"")], [("multiply", (0, 1, 2))]),
        ([(IN, u1, x.ctypes.data, (1,), b""), (IN, u1, x.ctypes.data, (1,), b""),
          (OUT, u1, x.ctypes.data, (1,), b"")], [("remainder", (0, 1, 2))]),
        ([(IN, f8, x.ctypes.data, (8,), b""), (IN, f8, x.ctypes.data, (8,), b""),
          (OUT, f8, x.ctypes.data, (8,), b"")], [("multiply", (0, 1, 2))]),
    ]
    for vals, steps in chains:
        for check in (1, 2):  # underflow not watched, watched
            src = core._fused_source_of((8,), vals, steps, check)[0]
            assert "dg_fpe_rule_of" in src and f"const int fpu = {check - 1};" in src, steps
            code, _ = core._rtc_compile(src, 90)
            assert code[:4] == b"\x7fELF"
