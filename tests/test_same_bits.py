"""kernels/dg_same_bits.h: the CUDA build compiles no kernels of a loop that
computes the same bytes as another loop of the same operand sizes (int32 add
is uint32 add; fmax of integers is maximum; bool add is logical_or; casts
between integers that only truncate or reinterpret), and runs that loop's
instead.  tests/c/same_bits.cpp checks each such pair on the host: both
loops' scalar functions (kernels/dg_scalar.h, which the kernels inline) on
every input of up to 2 bytes, else on edge and pseudo-random values, give
the same output bytes; and pairs that do differ (right_shift, maximum and
floor_divide of int vs uint, a widening cast, float fmax vs maximum) are
told apart.  The kernels themselves run in the GPU suite (test_ufuncs,
test_reductions, test_scan_shapes on the CUDA backend)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")


@pytest.fixture(scope="module")
def same_bits(tmp_path_factory):
    exe = str(tmp_path_factory.mktemp("same_bits") / "same_bits")
    subprocess.run([CXX, "-std=c++17", "-O1", "-ffp-contract=off", "-Wall", "-Wextra",
                    "-Werror", "-I" + os.path.join(ROOT, "src", "core"),
                    "-I" + os.path.join(ROOT, "kernels"),
                    os.path.join(ROOT, "tests", "c", "same_bits.cpp"), "-o", exe],
                   check=True, capture_output=True, text=True)
    return exe


def test_loops_sharing_kernels_compute_the_same_bytes(same_bits):
    r = subprocess.run([same_bits], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    pairs = int(r.stdout.split("pairs ")[1].split()[0])
    assert pairs > 100, r.stdout  # the rules still apply to the list


def test_the_check_tells_unlike_loops_apart(same_bits):
    r = subprocess.run([same_bits, "--unlike"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
