"""The CUDA backend's cuSOLVER and cuBLAS calls of its dense slot checked on
any machine with the CUDA headers: tests/cuda_mock/dense_mapping.c links
src/backend/cuda/cuda_dense.c with host stand-ins that check each call as
the library documents it (and gesvdj as it behaves: it uses U and V even
without vectors) and do its work with the LAPACK of NumPy's wheel, and
compares 2000 random batches of every op (single, batched and
gesvdj paths) byte for byte with the CPU backend's slot on the same
descriptors."""
import glob
import os

import numpy
import pytest

from _cuda_mock import build_and_run, needs


def _numpy_openblas():
    here = os.path.dirname(numpy.__file__)
    found = sorted(glob.glob(os.path.join(here + ".libs", "*openblas*")) +
                   glob.glob(os.path.join(here, ".dylibs", "*openblas*")))
    return found[0] if found else None


@needs("cusolverDn.h")
@pytest.mark.skipif(_numpy_openblas() is None, reason="needs the LAPACK of NumPy's wheel")
def test_cusolver_calls_match_the_cpu_slot(tmp_path):
    out = build_and_run(tmp_path, "dense_mapping",
                        ["src/backend/cuda/cuda_dense.c", "src/backend/cpu/cpu_dense.c"],
                        args=[_numpy_openblas(), "2000"], libs=["-ldl"])
    assert out.strip().endswith(" 0 broken rules, 0 failed"), out[-2000:]
