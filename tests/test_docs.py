"""The user's documentation stays true: the Sphinx site builds with warnings as
errors, the reference has an entry for every public name, the guide's
examples and the package's docstring examples run as doctests, and the
notebook tour runs top to bottom in a Jupyter kernel.

The guide's examples and the tour run in child processes (a fresh dgarray:
the examples assume the defaults, four virtual devices on the CPU backend,
where this test session sets DGARRAY_MIN_SPLIT_BYTES=0)."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

import dgarray
import dgarray.coverage  # noqa: F401  (a public submodule, python -m dgarray.coverage: always counted)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
# where the dgarray these tests import lives: the children import the same one
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(dgarray.__file__)))


def _env(cpu=True):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [PKG_PARENT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("DGARRAY_MIN_SPLIT_BYTES", None)
    if cpu:
        env["DGARRAY_BACKEND"] = "cpu"
        env["DGARRAY_CPU_DEVICES"] = "4"
    return env


def _run(code, env, timeout=600):
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, timeout=timeout,
                          capture_output=True, text=True)


# ---- the Sphinx build -------------------------------------------------------------------------

def test_sphinx_build(tmp_path):
    """The README's command, into a temporary directory: no warning."""
    pytest.importorskip("sphinx.cmd.build")  # python -m sphinx (a partial install lacks it)
    out = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                        "html", DOCS, str(out)], cwd=ROOT, env=_env(cpu=False),
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"sphinx build failed:\n{r.stdout}\n{r.stderr}"
    index = (out / "index.html").read_text()
    assert "User guide" in index and "reference/index.html" in index
    functions = (out / "reference" / "functions.html").read_text()
    assert 'id="dgarray.distributed_array"' in functions
    assert 'id="dgarray.DistributedArray.reshard"' in (out / "reference" / "array.html").read_text()
    names = (out / "reference" / "numpy_names.html").read_text()
    assert "NumPy functions through the host fallback" in names
    assert (out / "tour.ipynb").exists() and (out / "_images" / "modes.svg").exists()


# ---- every public name in the reference -------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*\.\. (?:auto|py:)(?:function|class|exception|data|attribute|"
                        r"method|module)::\s+(\S+)", re.M)


def _documented():
    """The dotted names the reference's pages document, by hand-written directives."""
    names = set()
    ref = os.path.join(DOCS, "reference")
    for fn in sorted(os.listdir(ref)):
        if fn.endswith(".rst") and fn != "numpy_names.rst":
            with open(os.path.join(ref, fn)) as f:
                text = f.read()
            for name in _DIRECTIVE.findall(text):
                names.add(name if name.startswith("dgarray") else f"dgarray.{name}")
    return names


def _public(obj):
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _expected():
    """The dotted names of dgarray's own public surface: the module's own names,
    DistributedArray's methods and attributes, config's settings, the
    functions dgarray.linalg and dgarray.fft implement, dgarray.random's names
    and the Generator's methods."""
    sys.path.insert(0, DOCS)
    try:
        import numpy_names
    finally:
        sys.path.remove(DOCS)
    want = {f"dgarray.{n}" for n in numpy_names.own_names()}
    want |= {f"dgarray.DistributedArray.{n}" for n in _public(dgarray.DistributedArray)}
    want |= {f"dgarray.config.{n}" for n in _public(type(dgarray.config))}
    for ns in ("linalg", "fft"):
        want |= {f"dgarray.{ns}.{n}" for n in vars(getattr(dgarray, ns))
                 if not n.startswith("_")}
    want |= {f"dgarray.random.{n}" for n, v in vars(dgarray.random).items()
             if not n.startswith("_") and type(v).__name__ != "module"}
    want |= {f"dgarray.random.Generator.{n}" for n in vars(dgarray.random.Generator)
             if not n.startswith("_")}
    want |= {f"dgarray.MemoryPool.{n}" for n in vars(dgarray.MemoryPool) if not n.startswith("_")}
    return want, numpy_names


def test_reference_has_every_public_name():
    """A public name without an entry in docs/reference/*.rst fails here (add a
    directive for it); an entry for a name that no longer exists too."""
    want, numpy_names = _expected()
    have = _documented()
    modules = {"dgarray", "dgarray.linalg", "dgarray.fft", "dgarray.random"}
    missing = sorted(want - have)
    assert not missing, ("public names without a reference entry (add them to "
                         "docs/reference/*.rst):\n" + "\n".join(
                             f".. autofunction:: {n}" for n in missing))
    stale = sorted(have - want - modules)
    assert not stale, f"reference entries for names that do not exist: {stale}"
    # NumPy's names (the generated page) and dgarray's own cover dir(dgarray)
    groups = numpy_names.numpy_groups()
    listed = set(numpy_names.own_names()).union(*groups.values())
    assert set(numpy_names.public_names()) <= listed


# ---- doctests ---------------------------------------------------------------------------------

_GUIDE = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(DOCS) if "_build" not in dp
                for f in fs if f.endswith(".rst"))
_PAGES = [p for p in _GUIDE if ">>>" in open(p).read()]

_DOCTEST_FILE = textwrap.dedent("""
    import doctest, sys
    r = doctest.testfile(sys.argv[1], module_relative=False, report=True,
                         optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    print(f"{r.attempted} examples, {r.failed} failed")
    sys.exit(1 if r.failed or not r.attempted else 0)
""")


@pytest.mark.parametrize("page", _PAGES, ids=lambda p: os.path.relpath(p, DOCS))
def test_guide_examples(page):
    """Each page's >>> examples, as a doctest, on 4 virtual CPU devices."""
    r = subprocess.run([sys.executable, "-c", _DOCTEST_FILE, page], cwd=ROOT, env=_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_guide_has_examples():
    assert len(_PAGES) >= 10, [os.path.relpath(p, DOCS) for p in _PAGES]


def test_cupy_jax_page_dgarray_program():
    """The dgarray program of the CuPy / JAX page runs as written."""
    text = open(os.path.join(DOCS, "guide", "cupy_jax.rst")).read()
    block = text.split(".. code-block:: python", 1)[1].split("\n\n", 1)[1]
    code = textwrap.dedent(block.split("\nCuPy (", 1)[0])
    assert "np.distributed_array" in code
    r = _run(code, _env())
    assert r.returncode == 0, r.stderr
    assert "4 chunks on 4 cpu devices" in r.stdout


def test_readme_example():
    """The README's ten lines run as written (no host fallback in them)."""
    text = open(os.path.join(ROOT, "README.md")).read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    r = _run("import warnings, dgarray\nwarnings.simplefilter('error', dgarray.FallbackWarning)\n"
             + code, _env())
    assert r.returncode == 0, r.stderr
    assert "4 chunks on 4 cpu devices" in r.stdout and "|01230123|" in r.stdout


_DOCSTRINGS = textwrap.dedent("""
    import doctest, importlib, pkgutil, sys
    import dgarray
    failed = attempted = 0
    for m in sorted(pkgutil.iter_modules(dgarray.__path__), key=lambda m: m.name):
        if m.name in ("__main__", "coverage"):
            continue
        mod = importlib.import_module("dgarray." + m.name)
        for t in doctest.DocTestFinder().find(mod, mod.__name__):
            r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            res = r.run(t)
            failed += res.failed
            attempted += res.attempted
    print(f"{attempted} examples, {failed} failed")
    sys.exit(1 if failed else 0)
""")


def test_docstring_examples():
    """Every >>> example in the package's docstrings, as a doctest."""
    r = _run(_DOCSTRINGS, _env())
    assert r.returncode == 0, r.stdout + r.stderr


# ---- the notebook tour ------------------------------------------------------------------------

def test_tour_notebook():
    """docs/tour.ipynb top to bottom in a real Jupyter kernel, on the backend the
    machine has (GPUs where present, else 4 virtual CPU devices): no error,
    every check prints True, and the layout picture is an SVG naming the
    devices."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(os.path.join(DOCS, "tour.ipynb"), as_version=4)
    env = _env(cpu=False)
    env.setdefault("DGARRAY_CPU_DEVICES", "4")
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": DOCS}})
    client.execute(env=env)
    texts, htmls = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                texts.append(out.text)
            data = out.get("data", {})
            if "text/html" in data:
                htmls.append(data["text/html"])
    first = texts[0]
    backend = re.search(r"backend: (\w+)", first).group(1)
    names = re.findall(r"device \d+: (.+)", first)
    assert backend in ("cpu", "cuda") and names
    pictures = [h for h in htmls if "<svg" in h]
    assert len(pictures) >= 2, "the layout pictures are missing"
    for name in names:
        assert name.strip() in pictures[0], f"the layout picture does not name {name}"
    checks = re.findall(r"\b(True|False)\b", "".join(texts[1:]))
    assert len(checks) >= 8 and set(checks) == {"True"}, "".join(texts)
