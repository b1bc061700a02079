"""setup.py's table of compile times, by which the build orders its compiles
(the longest first, so that both cores of a small machine stay busy to the
end): it names files that exist, and every kernel file, whose cost the
included bytes misjudge (sort.cu's CUB headers are not counted)."""
import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compile_seconds():
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "COMPILE_SECONDS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no COMPILE_SECONDS")


def test_compile_seconds_names_existing_files():
    table = compile_seconds()
    missing = [p for p in table if not os.path.exists(os.path.join(ROOT, p))]
    assert missing == [], f"COMPILE_SECONDS names files that are gone: {missing}"
    assert all(isinstance(v, (int, float)) and v > 0 for v in table.values())


def test_every_kernel_file_has_a_measured_time():
    table = compile_seconds()
    kernels = sorted(os.path.relpath(p, ROOT).replace(os.sep, "/")
                     for p in glob.glob(os.path.join(ROOT, "kernels", "*.cu")))
    assert kernels
    unlisted = [k for k in kernels if k not in table]
    assert unlisted == [], (
        f"{unlisted}: add their CPU seconds to setup.py's COMPILE_SECONDS "
        "(DGARRAY_BUILD_TIMES=1 pip install -v . prints them)")
