"""Index maps (CuPy's ``{device: key or [key, ...]}``) and the layouts the
core keeps: an index map is read and checked by ``_core._index_map_layout``
(its rules and messages are in src/core/dg_layout.c); what an array's
``index_map`` shows and ``reshard`` are here."""
from . import _core


def layout_for(shape, index_map):
    """The layout argument of _core._from_host and _core._empty for index_map
    over shape: None (the default layout) or the map itself, read and checked
    there in C (no Python object per chunk for maps of many chunks); anything
    else is checked here, for its error."""
    if index_map is None or isinstance(index_map, dict):
        return index_map
    return _core._index_map_layout(shape, index_map)


def index_map_of(a):
    """The index map of an array, as CuPy gives it: {device: [slices, ...]}."""
    out = {}
    for dev, box in a._layout():
        out.setdefault(dev, []).append(tuple(slice(*r) for r in box))
    for dev in out:
        out[dev].sort(key=lambda t: tuple((s.start, s.stop, s.step) for s in t))
    return out


def reshard(a, index_map):
    """a.reshard(index_map): a itself where its layout is the one asked for
    (checked, compared and resharded in C: no Python object per chunk)."""
    return a._reshard_map(index_map)
