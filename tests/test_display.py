"""Jupyter's view of a DistributedArray (_repr_html_: the values as repr
prints them and a picture of the layout) and dgarray.show_layout."""
import html
import io
import re

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for, on_devices

NDEV = dg._core._ndevices()


def chunks_of(a):
    return [(dev, key) for dev, keys in sorted(a.index_map.items()) for key in keys]


@pytest.mark.parametrize("shape", [(), (0,), (1,), (17,), (9, 7), (3, 4, 5), (2000, 3)],
                         ids=str)
def test_repr_html_holds_the_values_and_the_layout(shape, ndev):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    for name, m in maps_for(shape, ndev):
        d = dg.distributed_array(x, m)
        h = d._repr_html_()
        assert f"<pre>{html.escape(repr(d))}</pre>" in h, name
        assert repr(d) == repr(x) or x.size > 1000
        assert ("<svg" in h) == (len(shape) in (1, 2) and x.size > 0), name
        # one table row per chunk, naming its device
        assert h.count("<tr>") == 1 + len(chunks_of(d)), name
        for dev in d.index_map:
            assert html.escape(dg.devices()[dev].name) in h


def test_svg_shapes():
    x = np.zeros((8, 12))
    m = on_devices([(0, (slice(0, 4), slice(0, 6))), (1, (slice(0, 4), slice(6, 12))),
                    (2, (slice(4, 8), slice(None))), (3, (slice(4, 8), slice(0, 12, 2)))], NDEV)
    d = dg.distributed_array(x, m)
    svg = dg._display.layout_svg(d)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count("<title>") == len(chunks_of(d))
    assert "dg-hatch" in svg                                  # the strided chunk
    v = dg.arange(100, index_map=on_devices([(0, slice(0, 60)), (1, slice(40, 100))], NDEV))
    svg = dg._display.layout_svg(v)
    assert 'stroke-dasharray' in svg                          # overlapping chunks


def text_of(a):
    f = io.StringIO()
    dg.show_layout(a, file=f)
    return f.getvalue()


def test_show_layout_prints_text(capsys):
    n = dg._core._ndevices()
    d = dg.arange(40, index_map={k: slice(10 * k, 10 * k + 10) for k in range(min(n, 4))}
                  if n >= 4 else None)
    dg.show_layout(d)
    out = capsys.readouterr().out
    assert out == text_of(d)
    lines = out.splitlines()
    assert lines[0].startswith("DistributedArray (40,) int64, mode replica")
    if n >= 4:
        assert lines[1] == "|" + "".join(str(k) * 10 for k in range(4)) + "|"
        name = re.escape(dg.devices()[0].name)  # cpu:0, or the GPU's name
        assert re.match(rf"  0  {name} +\[0:10\] +\(10,\) +80 bytes", lines[2])
    assert len(lines) == 2 + len(chunks_of(d))


def test_show_layout_marks_shared_and_strided_cells():
    n = dg._core._ndevices()
    if n < 2:
        pytest.skip("needs 2 devices")
    d = dg.zeros((4, 6), index_map={0: slice(None), 1: (slice(None), slice(0, 6, 2))})
    t = text_of(d).splitlines()
    assert t[1] == "|*0*0*0|"
    s = dg.zeros(6, index_map={0: slice(0, 6, 2), 1: slice(1, 6, 2)})
    assert text_of(s).splitlines()[1] == "|010101|"
    z = dg.zeros((2, 3, 4))
    assert len(text_of(z).splitlines()) == 1 + len(chunks_of(z))   # no map past 2-d


def test_show_layout_of_other_modes_and_errors():
    d = dg.distributed_array(np.ones(10), mode="sum")
    assert "mode sum" in text_of(d)
    assert "mode sum" in d._repr_html_()
    with pytest.raises(TypeError):
        dg.show_layout(np.ones(3))


def test_show_layout_in_a_notebook(monkeypatch):
    """In a Jupyter kernel show_layout displays the HTML picture."""
    import sys
    import types
    shown = []
    ipy = types.ModuleType("IPython")
    disp = types.ModuleType("IPython.display")

    class Shell:
        kernel = object()

    class HTML:
        def __init__(self, data):
            self.data = data
    ipy.get_ipython = lambda: Shell()
    disp.HTML = HTML
    disp.display = shown.append
    monkeypatch.setitem(sys.modules, "IPython", ipy)
    monkeypatch.setitem(sys.modules, "IPython.display", disp)
    d = dg.arange(10)
    assert dg.show_layout(d) is None
    assert len(shown) == 1 and "<svg" in shown[0].data
