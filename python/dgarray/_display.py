"""Pictures of a DistributedArray's layout: which device holds which block.

``DistributedArray._repr_html_`` (Jupyter) shows the values as ``repr``
prints them (NumPy's formatting, only the printed corners gathered) beside an
SVG picture of the layout: a lane per device for 1-d arrays, the array's
rectangle with each chunk's block for 2-d ones, a table of boxes otherwise.
``dgarray.show_layout(a)`` shows the same picture: as HTML in a Jupyter
kernel, as text in a terminal.  Nothing here reads the array's values but
``repr``; the layout is the one ``index_map`` reports.  In a job of several
processes the text is printed once, as ``print(a)`` is (dgarray.distributed).
"""
import html
import sys

from . import distributed
from ._core import DistributedArray, backend
from ._devices import devices
from ._fallback import _nbytes_text

# one colour per device (cycled past 10)
_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
            "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
_DEV_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _colour(dev):
    return _COLOURS[dev % len(_COLOURS)]


def _dev_char(dev):
    return _DEV_CHARS[dev] if dev < len(_DEV_CHARS) else "#"


def _chunks(a):
    """[(device, ((start, stop, step), ...)), ...] of a's index map, in
    device order."""
    out = []
    for dev, keys in sorted(a.index_map.items()):
        for key in keys:
            out.append((dev, tuple(s.indices(n) for s, n in zip(key, a.shape))))
    return out


def _count(r):
    start, stop, step = r
    return max(0, (stop - start + step - 1) // step)


def _box_text(box):
    def one(r):
        start, stop, step = r
        return f"{start}:{stop}" + (f":{step}" if step != 1 else "")
    return "[" + ", ".join(one(r) for r in box) + "]"


def _device_names():
    try:
        return {d.id: d.name for d in devices()}
    except Exception:  # a broken device must not break printing
        return {}


def _summary(a):
    ndev = len({dev for dev, _ in _chunks(a)})
    return (f"DistributedArray {a.shape} {a.dtype}, mode {a.mode}, {len(_chunks(a))} "
            f"chunk{'s' if len(_chunks(a)) != 1 else ''} on {ndev} "
            f"{backend()} device{'s' if ndev != 1 else ''}")


def _rows(a):
    """One row per chunk: (device, device name, box text, shape, bytes)."""
    names = _device_names()
    rows = []
    for dev, box in _chunks(a):
        shape = tuple(_count(r) for r in box)
        n = 1
        for k in shape:
            n *= k
        rows.append((dev, names.get(dev, str(dev)), _box_text(box), shape,
                     n * a.dtype.itemsize))
    return rows


def _bytes_text(n):
    return _nbytes_text(n)


def _holds(r, c0, c1):
    """Whether range r = (start, stop, step) holds an index in [c0, c1)."""
    start, stop, step = r
    lo = max(start, c0)
    first = start + -(-(lo - start) // step) * step
    return first < min(stop, c1)


# ---- text -------------------------------------------------------------------------------

def layout_text(a, width=48, height=16):
    """The layout as text: a map of cells (a character per device holding
    them: 0-9, a-z; '*' several devices; '.' none) for 1-d and 2-d arrays,
    then a line per chunk."""
    lines = [_summary(a)]
    chunks = _chunks(a)

    def cell(cells):
        devs = {dev for dev, box in chunks
                if all(_holds(r, c0, c1) for r, (c0, c1) in zip(box, cells))}
        return "." if not devs else "*" if len(devs) > 1 else _dev_char(devs.pop())

    def cuts(n, k):
        k = max(1, min(n, k))
        return [(i * n // k, (i + 1) * n // k) for i in range(k)]

    if a.ndim in (1, 2) and a.size > 0:
        if a.ndim == 1:
            lines.append("|" + "".join(cell([c]) for c in cuts(a.shape[0], width)) + "|")
        else:
            cols = cuts(a.shape[1], width)
            for r in cuts(a.shape[0], height):
                lines.append("|" + "".join(cell([r, c]) for c in cols) + "|")
    for dev, name, box, shape, nbytes in _rows(a):
        lines.append(f"  {_dev_char(dev)}  {name:<14} {box:<28} {str(shape):<14} "
                     f"{_bytes_text(nbytes)}")
    return "\n".join(lines)


# ---- SVG ----------------------------------------------------------------------------------

def _svg_box(x, y, w, h, dev, title, strided, overlap):
    fill = f"url(#dg-hatch-{dev})" if strided else _colour(dev)
    extra = ' stroke-dasharray="3,2"' if overlap else ""
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 1):.1f}" '
            f'height="{max(h, 1):.1f}" fill="{fill}" fill-opacity="{0.55 if overlap else 0.85}"'
            f' stroke="#333" stroke-width="0.6"{extra}><title>{html.escape(title)}</title>'
            "</rect>")


def _svg_patterns(devs):
    out = ["<defs>"]
    for dev in devs:
        out.append(f'<pattern id="dg-hatch-{dev}" width="6" height="6" '
                   'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
                   f'<rect width="3" height="6" fill="{_colour(dev)}"/></pattern>')
    out.append("</defs>")
    return "".join(out)


def layout_svg(a):
    """An SVG picture of a 1-d or 2-d layout (None for other arrays): a lane
    per device over the index range for 1-d, the array's rectangle with each
    chunk's block for 2-d; strided chunks hatched, overlapping ones dashed."""
    if a.ndim not in (1, 2) or a.size == 0:
        return None
    chunks = _chunks(a)
    names = _device_names()
    devs = sorted({dev for dev, _ in chunks})
    held = 0
    for _, box in chunks:
        k = 1
        for r in box:
            k *= _count(r)
        held += k
    overlap = held > a.size  # replicated or overlapping chunks
    parts = []
    if a.ndim == 1:
        n = a.shape[0]
        lane, width, left = 18, 360, 70
        height = lane * len(devs) + 20
        for i, dev in enumerate(devs):
            y = 4 + i * lane
            parts.append(f'<text x="{left - 6}" y="{y + 12}" font-size="11" '
                         f'text-anchor="end">{html.escape(names.get(dev, str(dev)))}</text>')
            parts.append(f'<rect x="{left}" y="{y}" width="{width}" height="{lane - 4}" '
                         'fill="#f4f4f4" stroke="#ccc" stroke-width="0.5"/>')
            for d, box in chunks:
                if d != dev:
                    continue
                (start, stop, step), = box
                parts.append(_svg_box(left + start / n * width, y, (stop - start) / n * width,
                                      lane - 4, dev, f"{names.get(dev, dev)} {_box_text(box)}",
                                      step != 1, overlap))
        parts.append(f'<text x="{left}" y="{height - 4}" font-size="10">0</text>')
        parts.append(f'<text x="{left + width}" y="{height - 4}" font-size="10" '
                     f'text-anchor="end">{n}</text>')
        total_w = left + width + 10
    else:
        rows, cols = a.shape
        scale = 300 / max(rows, cols)
        h, w = max(rows * scale, 24), max(cols * scale, 24)
        sy, sx = h / rows, w / cols
        parts.append(f'<rect x="4" y="4" width="{w:.1f}" height="{h:.1f}" fill="#f4f4f4" '
                     'stroke="#999"/>')
        for dev, box in chunks:
            (r0, r1, rs), (c0, c1, cs) = box
            parts.append(_svg_box(4 + c0 * sx, 4 + r0 * sy, (c1 - c0) * sx, (r1 - r0) * sy,
                                  dev, f"{names.get(dev, dev)} {_box_text(box)}",
                                  rs != 1 or cs != 1, overlap))
        y = 16
        for dev in devs:
            parts.append(f'<rect x="{w + 16:.1f}" y="{y - 10}" width="12" height="12" '
                         f'fill="{_colour(dev)}"/><text x="{w + 32:.1f}" y="{y}" '
                         f'font-size="11">{html.escape(names.get(dev, str(dev)))}</text>')
            y += 16
        height = max(h + 8, y)
        total_w = w + 120
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" '
            f'height="{height:.0f}" font-family="sans-serif">{_svg_patterns(devs)}'
            + "".join(parts) + "</svg>")


def layout_table_html(a):
    """The chunks as an HTML table (device, box, shape, bytes)."""
    rows = "".join(
        f'<tr><td><span style="color:{_colour(dev)}">&#9632;</span> {html.escape(name)}</td>'
        f"<td>{html.escape(box)}</td><td>{shape}</td><td>{_bytes_text(nbytes)}</td></tr>"
        for dev, name, box, shape, nbytes in _rows(a))
    return ('<table style="font-size:11px"><tr><th>device</th><th>box</th><th>shape</th>'
            f"<th>bytes</th></tr>{rows}</table>")


def layout_html(a):
    """The layout as HTML: the summary, the SVG picture (1-d, 2-d) and the
    table of chunks."""
    svg = layout_svg(a)
    return (f'<div style="font-size:12px">{html.escape(_summary(a))}</div>'
            + (svg or "") + layout_table_html(a))


def repr_html(a):
    """Jupyter's view of a: the values as repr prints them and the layout."""
    return (f'<div class="dgarray"><pre>{html.escape(repr(a))}</pre>'
            f"{layout_html(a)}</div>")


def _in_notebook():
    ipy = sys.modules.get("IPython")
    if ipy is None:
        return False
    try:
        shell = ipy.get_ipython()
    except Exception:
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def show_layout(a, file=None):
    """Shows which device holds which block of a: as HTML (an SVG picture and
    a table) in a Jupyter kernel, else as text printed to `file` (default
    stdout)."""
    if not isinstance(a, DistributedArray):
        raise TypeError(f"show_layout needs a DistributedArray, not {type(a).__name__}")
    if file is None and _in_notebook():
        from IPython.display import HTML, display
        display(HTML(layout_html(a)))
        return
    text = layout_text(a)
    if not distributed._left_to_process_0(file):  # a job's processes show it once
        print(text, file=file if file is not None else sys.stdout)
