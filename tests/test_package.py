"""The package's structure: its modules import one another downward (no
cycles, tests/_import_graph.py), and the binding's calls into Python go
through one table, checked whole when `import dgarray` hands it over."""
import numpy as np
import pytest

import dgarray as dg
from dgarray import _core, _methods

import _import_graph


def test_the_cycle_finder_finds_cycles():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert _import_graph.cycles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert _import_graph.cycles({"a": {"b"}, "b": set()}) == []


def test_no_cycle_among_module_level_imports():
    _, edges, _ = _import_graph.import_graph()
    assert "_indexing" in edges and "__init__" in edges
    assert _import_graph.cycles(edges) == []


def test_no_cycle_hidden_in_function_local_imports():
    """An import inside a function is no way around the order: the graph
    with them is acyclic too."""
    _, edges, local = _import_graph.import_graph()
    for mod, _, targets in local:
        edges[mod] = edges[mod] | set(targets)
    assert _import_graph.cycles(edges) == []


def test_creation_is_at_the_bottom():
    """The creation functions' module imports nothing of the package but the
    binding and the index maps (which import only the binding)."""
    _, edges, _ = _import_graph.import_graph()
    assert edges["_creation"] <= {"_core", "_index_map"}
    assert edges["_index_map"] <= {"_core"}


@pytest.mark.parametrize("change, words", [
    (lambda t: {}, "lacks 'getitem'"),
    (lambda t: {k: v for k, v in t.items() if k != "sum"}, "lacks 'sum'"),
    (lambda t: dict(t, sum=3), "no callable for 'sum'"),
    (lambda t: dict(t, not_called_by_c=len), "names 'not_called_by_c'"),
])
def test_a_wrong_table_of_python_calls_is_an_import_error(change, words):
    with pytest.raises(ImportError, match=words):
        _core._bind_python(change(dict(_methods.CALLS)))
    with pytest.raises(TypeError, match="dict"):
        _core._bind_python(list(_methods.CALLS))
    # nothing of a refused table is bound: the one bound at import still answers
    x = np.arange(6.0)
    a = dg.asarray(x)
    assert a.sum() == x.sum() and a[2].item() == 2.0
    np.testing.assert_array_equal((a @ a).get(), x @ x)

