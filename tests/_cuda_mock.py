"""Builds and runs a harness of tests/cuda_mock: a file of the CUDA backend
linked with host stand-ins for its CUDA libraries (mock_backend.c and the
harness's own), compiled against the real CUDA headers under
AddressSanitizer, so that its calls are checked on a machine without a GPU."""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def needs(header):
    """pytest's skip mark where gcc or the CUDA header is missing."""
    return pytest.mark.skipif(not os.path.exists(os.path.join(CUDA, "include", header))
                              or shutil.which("gcc") is None,
                              reason="needs gcc and the CUDA headers")


def build_and_run(tmp_path, harness, sources, args=(), flags=(), libs=()):
    """Compiles tests/cuda_mock/<harness>.c with mock_backend.c, the
    repository files `sources` and src/core/dg_status.c, runs it with
    `args` and returns its stdout; asserts that both succeed."""
    exe = str(tmp_path / harness)
    src = [os.path.join(ROOT, p) for p in
           (f"tests/cuda_mock/{harness}.c", "tests/cuda_mock/mock_backend.c",
            "src/core/dg_status.c", *sources)]
    inc = [f"-I{os.path.join(ROOT, d)}" for d in ("src/core", "src/backend/cuda",
                                                   "src/backend/cpu", "kernels")]
    cmd = (["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
            "-fsanitize=address,undefined", "-fno-sanitize-recover=all", *flags] + inc +
           [f"-I{os.path.join(CUDA, 'include')}"] + src + ["-lpthread", "-lm", *libs, "-o", exe])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return r.stdout
