"""The C unit tests of src/core (box algebra, the planner, the view maps, layouts,
the enqueue helper and the backend dispatch, the semantics of a ufunc call on
the CPU backend, the memo of fused kernels by key) and of the random generator
(kernels/dg_random.h), built with the sanitizers and run from pytest so that
the one test command runs them too."""
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler on this machine")
def test_c_unit_tests():
    env = dict(os.environ)
    if shutil.which("cc") is None:
        env["CC"] = "gcc"
    r = subprocess.run(["make", "-s", "-C", os.path.join(HERE, "c")], capture_output=True,
                       text=True, env=env, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    counts = [ln for ln in out.splitlines() if "passed" in ln]
    # test_plan, test_viewmap, test_layout, test_random, test_enqueue, test_ufunc_call,
    # test_fused_memo
    assert len(counts) == 7, out
    assert all(ln.strip().endswith(" 0 failed") for ln in counts), out
