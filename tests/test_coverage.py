"""The census of NumPy's functions (python -m dgarray.coverage): every public
function of NumPy's main namespace, linalg, fft and random gets one status,
found by calling it through dgarray under config.fallback = "raise"."""
import numpy as np

import dgarray as dg
from dgarray import coverage


def test_census_lists_every_public_function():
    table = coverage.census()
    assert set(table) == {"main", "linalg", "fft", "random"}
    for ns, module in (("main", np), ("linalg", np.linalg), ("fft", np.fft),
                       ("random", np.random)):
        names = [n for n, _, _ in table[ns]]
        assert names == coverage._public_functions(module)
        for _, st, _ in table[ns]:
            assert st in ("native", "composed", "host", "unsupported", "n/a")
    assert dg.config.fallback == "warn"  # restored


def test_status_is_found_by_calling():
    arrays = coverage._arrays()
    assert coverage.status_of("main", "sum", arrays)[0] == "native"
    assert coverage.status_of("main", "sin", arrays)[0] == "native"
    assert coverage.status_of("main", "vstack", arrays)[0] == "composed"
    assert coverage.status_of("main", "typename", arrays)[0] == "n/a"
    assert coverage.status_of("fft", "fft", arrays)[0] == (
        "native" if dg._core._has_slot("fft") else "host")
    if dg._core._has_slot("dense"):
        assert coverage.status_of("linalg", "eig", arrays)[0] == "native"
        assert coverage.status_of("linalg", "eigvals", arrays)[0] == "native"
        assert coverage.status_of("main", "roots", arrays)[0] == "composed"


def test_host_status(monkeypatch):
    """A function that takes NumPy's fallback is "host": roots where the
    backend has no dense linear algebra (faked here)."""
    from dgarray import _dense
    monkeypatch.setattr(_dense, "available", lambda: False)
    assert coverage.status_of("main", "roots", coverage._arrays()) == (
        "host", "through NumPy's fallback")


def test_markdown_counts_match_the_rows(tmp_path):
    table = coverage.census()
    text = coverage.markdown(table)
    s = coverage.summary(table)
    assert s["all"]["native"] == sum(st == "native" for v in table.values() for _, st, _ in v)
    assert f"| all | {s['all']['native']} | {s['all']['composed']} |" in text
    assert coverage.main(["--markdown", str(tmp_path / "c.md")]) == 0
    assert (tmp_path / "c.md").read_text().startswith("# NumPy's functions in dgarray")
