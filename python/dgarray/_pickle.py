"""Pickling and copying DistributedArrays, as NumPy arrays pickle and copy.

``pickle.dumps(a, protocol=5, buffer_callback=...)`` hands each chunk's
values to the callback as one out-of-band buffer: a chunk is copied once,
from its device into a host array, and NumPy's own reduction of that array
gives the buffer without another copy (protocol 5, PEP 574); protocols 2 to
4 carry the same arrays in the pickle's bytes.  A pickle holds the shape,
the dtype, the mode, the layout (the chunks' devices and boxes) and the
values of each chunk (a chunk whose box an earlier one of a ``replica``
array holds too refers to that one's values, so replicated data is carried
once).

Unpickling rebuilds the same layout and mode where the devices it names
exist, each chunk filled from its own buffer.  In a process with fewer
devices (another machine, a worker started with fewer virtual devices) the
chunks are first placed on the devices that exist (device d on d modulo
their number, which keeps the values of every mode) and the array is then
laid out as dgarray lays out a new array of its shape (the default layout).

``copy.copy`` and ``copy.deepcopy`` copy the values, as they do for a NumPy
array: the copy has the same layout and mode, and writing to either leaves
the other as it was.
"""
from . import _core
from ._creation import mode_number

# The version of what _rebuild takes; a later layout of the arguments gets a
# new number, and _rebuild keeps reading the old ones.
_FORMAT = 1


def reduce_ex(a, protocol=2):
    """DistributedArray.__reduce_ex__: (_rebuild, (format, shape, dtype, mode,
    layout, refs, *arrays)), arrays[refs[i]] holding chunk i's values."""
    mode = a.mode
    chunks = _core._chunk_layout(a)
    logical = a._layout()
    arrays, refs, seen = [], [], {}
    if mode == "replica" and logical != chunks:
        # chunks that are pieces of the layout asked for: pickle that layout,
        # each of its boxes gathered from wherever it is held
        layout = logical
        for dev, box in layout:
            if box not in seen:
                seen[box] = len(arrays)
                arrays.append(a._gather_region(box))
            refs.append(seen[box])
    else:
        layout = chunks
        for i, (dev, box) in enumerate(layout):
            if mode != "replica" or box not in seen:
                seen[box] = len(arrays)
                arrays.append(_core._chunk_get(a, i))
            refs.append(seen[box])
    return (_rebuild, (_FORMAT, a.shape, a.dtype, mode, layout, refs) + tuple(arrays))


def _rebuild(fmt, shape, dtype, mode, layout, refs, *arrays):
    """A DistributedArray from what reduce_ex gave (see the module's text)."""
    if fmt != _FORMAT:
        raise ValueError(f"this pickle of a DistributedArray has format {fmt}; this "
                         f"dgarray reads format {_FORMAT}: unpickle it with a newer dgarray")
    ndev = _core._ndevices()
    placed = [(dev % ndev, box) for dev, box in layout]
    a = _core._empty(shape, dtype, placed, mode_number(mode))
    for i, r in enumerate(refs):
        _core._chunk_put(a, i, arrays[r])
    if placed != layout:
        a = a._reshard_layout(_core._default_layout(shape, dtype))
    return a


def copy(a):
    """DistributedArray.__copy__: a copy of the values (NumPy's copy.copy)."""
    return a.copy()


def deepcopy(a, memo=None):
    """DistributedArray.__deepcopy__: a copy of the values (copy.deepcopy
    keeps it in memo)."""
    return a.copy()
