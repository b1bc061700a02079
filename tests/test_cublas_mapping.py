"""The CUDA backend's cuBLAS calls checked on any machine with the CUDA
headers: tests/cuda_mock/gemm_mapping.c links src/backend/cuda/cuda_gemm.c
with host stand-ins for cuBLAS and cuBLASLt (column-major, as documented)
and compares thousands of random products with the CPU backend's loops."""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


@pytest.mark.skipif(not os.path.exists(os.path.join(CUDA, "include", "cublas_v2.h"))
                    or shutil.which("gcc") is None,
                    reason="needs gcc and the CUDA headers")
def test_cublas_calls_match_the_cpu_products(tmp_path):
    exe = str(tmp_path / "gemm_mapping")
    src = [os.path.join(ROOT, p) for p in (
        "tests/cuda_mock/gemm_mapping.c", "src/backend/cuda/cuda_gemm.c",
        "src/backend/cpu/cpu_gemm.c", "src/core/dg_status.c")]
    inc = [f"-I{os.path.join(ROOT, d)}" for d in ("src/core", "src/backend/cuda",
                                                   "src/backend/cpu", "kernels")]
    # products of m n k >= 64 (not 2^30) take the cuBLASLt path
    cmd = (["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
            "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-DCU_LT_MIN_MNK=64.0"] + inc +
           [f"-I{os.path.join(CUDA, 'include')}"] + src + ["-lpthread", "-lm", "-o", exe])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert r.stdout.strip().endswith("0 failed"), r.stdout[-2000:]
