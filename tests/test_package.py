"""The package's structure: its modules import one another downward (no
cycles, tests/_import_graph.py), and the binding's calls into Python go
through one table, checked whole when `import dgarray` hands it over."""
import _import_graph


def test_the_cycle_finder_finds_cycles():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert _import_graph.cycles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert _import_graph.cycles({"a": {"b"}, "b": set()}) == []


def test_no_cycle_among_module_level_imports():
    _, edges, _ = _import_graph.import_graph()
    assert "_indexing" in edges and "__init__" in edges
    assert _import_graph.cycles(edges) == []

