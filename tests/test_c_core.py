"""The C unit tests of src/core (box algebra and the planner), built with the
sanitizers and run from pytest so that the one test command runs them too."""
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
                       text=True, env=env, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    last = [ln for ln in out.splitlines() if "passed" in ln][-1]
    assert last.strip().endswith("0 failed"), out
