"""Builds dgarray's extensions.

dgarray._core  (always): src/core, src/backend/cpu and src/py, C11, against
               NumPy's C-API.
dgarray._cuda  (when nvcc is found): src/backend/cuda and kernels/, linked with
               cudart, cuBLAS, cuSOLVER, cuFFT and NCCL.  DGARRAY_CUDA=0 skips it, DGARRAY_CUDA=1
               makes a missing nvcc an error; DGARRAY_CUDA_ARCHS chooses the
               targets ("80;90" by default).
"""
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from glob import glob

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

C_FLAGS = ["-std=c11", "-O3", "-Wall", "-Wextra", "-fvisibility=hidden",
           "-ffp-contract=off", "-fno-math-errno", "-pthread"]

core = Extension(
    "dgarray._core",
    sources=sorted(glob("src/core/*.c") + glob("src/backend/cpu/*.c") + glob("src/py/*.c")),
    include_dirs=["src/core", "src/backend/cpu", "src/py", "kernels", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
    extra_compile_args=C_FLAGS,
    extra_link_args=["-pthread", "-lm"],
)


def find_cuda_home():
    """The CUDA toolkit's root: CUDA_HOME / CUDA_PATH, else nvcc on PATH."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
            return home
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda"
    return None


def cuda_wanted():
    """None: skip CUDA; else the toolkit root.  Raises if DGARRAY_CUDA=1 and none."""
    flag = os.environ.get("DGARRAY_CUDA", "auto").strip().lower()
    if flag in ("0", "no", "off", "false"):
        return None
    home = find_cuda_home()
    if home is None and flag in ("1", "yes", "on", "true"):
        raise RuntimeError("DGARRAY_CUDA=1 but nvcc was not found: set CUDA_HOME "
                           "or put nvcc on PATH")
    return home


def local_includes(src, include_dirs):
    """src and every file it includes with #include "...", found beside the
    including file or in include_dirs, recursively: what a rebuild of src
    depends on."""
    seen, todo = set(), [src]
    pat = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        with open(f, encoding="utf-8", errors="replace") as fh:
            names = pat.findall(fh.read())
        for name in names:
            for d in [os.path.dirname(f)] + list(include_dirs):
                cand = os.path.normpath(os.path.join(d, name))
                if os.path.exists(cand):
                    todo.append(cand)
                    break
    return seen


class BuildExt(build_ext):
    """Compiles .cu sources of an extension with nvcc, in parallel."""

    def build_extension(self, ext):
        cu = [s for s in ext.sources if s.endswith(".cu")]
        if not cu:
            return super().build_extension(ext)
        home = ext.cuda_home
        nvcc = os.path.join(home, "bin", "nvcc")
        archs = os.environ.get("DGARRAY_CUDA_ARCHS", "80;90").replace(",", ";").split(";")
        gencode = []
        for a in (x.strip() for x in archs if x.strip()):
            gencode += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
        objdir = os.path.join(self.build_temp, "cuda")
        os.makedirs(objdir, exist_ok=True)
        incs = [f"-I{d}" for d in ext.include_dirs]

        def compile_one(src):
            obj = os.path.join(objdir, src.replace("/", "_") + ".o")
            if (os.path.exists(obj) and os.path.getmtime(obj) >= max(
                    os.path.getmtime(p) for p in local_includes(src, ext.include_dirs))):
                return obj
            cmd = [nvcc, "-c", src, "-o", obj, "-O3", "-std=c++17",
                   "-Xcompiler", "-fPIC,-fvisibility=hidden", "--fmad=false",
                   "-DNDEBUG"] + gencode + incs
            print(" ".join(cmd), flush=True)
            subprocess.check_call(cmd)
            return obj

        jobs = int(os.environ.get("DGARRAY_BUILD_JOBS", os.cpu_count() or 2))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            objs = list(pool.map(compile_one, cu))
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        ext.extra_objects = list(ext.extra_objects or []) + objs
        super().build_extension(ext)


def cuda_extension(home):
    """dgarray._cuda: the CUDA backend, or None if its sources are absent.

    Its C files (src/backend/cuda) are compiled by the C compiler like _core's;
    its kernels (kernels/*.cu, templates in kernels/*.cuh) by nvcc.  It also
    needs the core's status records and loop tables (src/core), linked in its
    own copy so that the two extensions share no symbols."""
    sources = sorted(glob("src/backend/cuda/*.c") + glob("src/backend/cuda/*.cu")
                     + glob("kernels/*.cu"))
    if not sources:
        return None
    sources += [f for f in ("src/core/dg_status.c", "src/core/dg_ufunc.c")
                if os.path.exists(f)]
    libdirs = [os.path.join(home, d) for d in ("lib64", "lib", "targets/x86_64-linux/lib")]
    nccl_home = os.environ.get("NCCL_HOME")
    if nccl_home:
        libdirs = [os.path.join(nccl_home, "lib")] + libdirs
    libdirs = [d for d in libdirs if os.path.isdir(d)]
    incdirs = [os.path.join(home, "include")]
    if nccl_home:
        incdirs.append(os.path.join(nccl_home, "include"))

    def link_flag(name):
        """-l<name>, or -l:lib<name>.so.N where only the versioned library is
        installed (NCCL from a runtime package has no lib<name>.so)."""
        sysdirs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]
        for d in libdirs + sysdirs:
            if os.path.exists(os.path.join(d, f"lib{name}.so")):
                return f"-l{name}"
        for d in libdirs + sysdirs:
            versioned = sorted(glob(os.path.join(d, f"lib{name}.so.[0-9]*")), key=len)
            if versioned:
                return "-l:" + os.path.basename(versioned[0])
        return f"-l{name}"

    ext = Extension(
        "dgarray._cuda",
        sources=sources,
        include_dirs=["src/core", "src/backend/cuda", "kernels"] + incdirs,
        library_dirs=libdirs,
        runtime_library_dirs=libdirs,
        extra_compile_args=C_FLAGS,
        # the nvcc objects are C++: their runtime (exception personality) too
        extra_link_args=["-pthread"] + [link_flag(n) for n in ("cudart", "cublas", "cublasLt", "cusolver", "cufft",
                                                  "nccl")]
        + ["-lstdc++"],
    )
    ext.cuda_home = home
    return ext


ext_modules = [core]
_home = cuda_wanted()
if _home is not None:
    _cu = cuda_extension(_home)
    if _cu is not None:
        ext_modules.append(_cu)

setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildExt})
