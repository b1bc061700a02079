"""The CUDA backend's cuFFT calls checked on any machine with the CUDA
headers: tests/cuda_mock/fft_mapping.c links src/backend/cuda/cuda_fft.c
with host stand-ins for cuFFT (its advanced data layout and its rules:
pointers aligned to the complex type, embeds, work areas, a C2R's input
overwritten) and compares 2000 random transforms (every kind,
strided and offset views, rank 1 to 3) with a direct DFT."""
from _cuda_mock import build_and_run, needs


@needs("cufft.h")
def test_cufft_calls_match_a_direct_dft(tmp_path):
    out = build_and_run(tmp_path, "fft_mapping",
                        ["src/backend/cuda/cuda_fft.c", "src/backend/cuda/cuda_dims.c"],
                        args=["2000"])
    assert out.strip().endswith(" 0 failed"), out[-2000:]
    assert " 0 misaligned calls refused" in out, out[-2000:]
