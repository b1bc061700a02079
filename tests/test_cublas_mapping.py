"""The CUDA backend's cuBLAS calls checked on any machine with the CUDA
headers: tests/cuda_mock/gemm_mapping.c links src/backend/cuda/cuda_gemm.c
with host stand-ins for cuBLAS and cuBLASLt (column-major, as documented)
and compares thousands of random products with the CPU backend's loops."""
from _cuda_mock import build_and_run, needs


@needs("cublas_v2.h")
def test_cublas_calls_match_the_cpu_products(tmp_path):
    # products of m n k >= 64 (not 2^30) take the cuBLASLt path
    out = build_and_run(tmp_path, "gemm_mapping",
                        ["src/backend/cuda/cuda_gemm.c", "src/backend/cpu/cpu_gemm.c"],
                        flags=["-DCU_LT_MIN_MNK=64.0"])
    assert out.strip().endswith("0 failed"), out[-2000:]
