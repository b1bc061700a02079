"""Sphinx configuration of dgarray's user guide and API reference.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are
errors).  The reference documents the dgarray that Python imports: a source
tree built in place (``python/dgarray/_core*.so``) comes first, else the
installed package.
"""
import glob
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_SRC = os.path.join(os.path.dirname(_HERE), "python")
if glob.glob(os.path.join(_SRC, "dgarray", "_core*.so")) and _SRC not in sys.path:
    sys.path.insert(0, _SRC)
sys.path.insert(0, _HERE)

import dgarray  # noqa: E402

import numpy_names  # noqa: E402  (docs/numpy_names.py)

project = "dgarray"
author = "the dgarray authors"
copyright = "2026, the dgarray authors"
release = version = dgarray.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autosummary_generate = False
default_role = "literal"          # `x` in the package's docstrings is code
master_doc = "index"
exclude_patterns = ["_build", "*.md", "*.ipynb", "**/.ipynb_checkpoints"]
html_theme = "alabaster"
html_theme_options = {"description": "NumPy's arrays, sharded over every GPU of a host",
                      "fixed_sidebar": True, "page_width": "1100px"}
html_static_path = []
html_extra_path = ["tour.ipynb"]  # the notebook, downloadable beside the pages
nitpicky = False


def _write_numpy_names(app):
    """reference/numpy_names.rst: NumPy's names dgarray offers as NumPy's own
    objects or through NEP 18 / the fallback, generated from the package."""
    text = numpy_names.rst()
    path = os.path.join(app.srcdir, "reference", "numpy_names.rst")
    old = open(path).read() if os.path.exists(path) else None
    if old != text:
        with open(path, "w") as f:
            f.write(text)


# The binding's methods start their docstrings with their signature and a
# phrase, "name(args): what it does" (C functions carry no signature of their
# own, and Sphinx 9 cannot take one from the process-signature event where
# it found none): the signature line is shown as code.
_SIG_LINE = re.compile(r"^(\w+)\((.*?)\)(?:\s*->\s*([\w.]+))?(?::\s*(.*))?$")


def _literal_safe(line):
    """A line of the package's prose docstrings with lone '*' (products,
    "x * 10^d", "*args") escaped, so that docutils reads no emphasis."""
    parts = re.split(r"(``.*?``)", line)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"(?<![*\\])\*(?!\*)", r"\\*", parts[i])
    return "".join(parts)


def _process_docstring(app, what, name, obj, options, lines):
    if lines and what == "method":
        m = _SIG_LINE.match(lines[0].strip())
        if m and m.group(1) == name.rsplit(".", 1)[-1]:
            sig = f"{m.group(1)}({m.group(2)})" + (f" -> {m.group(3)}" if m.group(3) else "")
            lines[0] = f"``{sig}``" + (f": {m.group(4)}" if m.group(4) else "")
            lines[1:] = [_literal_safe(line) for line in lines[1:]]
            return
    lines[:] = [_literal_safe(line) for line in lines]


def setup(app):
    app.connect("builder-inited", _write_numpy_names)
    app.connect("autodoc-process-docstring", _process_docstring)
