"""Property tests of the reshard planner through dgarray._core._plan: on random
uneven, strided and overlapping layouts, the copies build every destination
chunk exactly once, each from a chunk that holds it, locally where possible;
checked against NumPy slicing."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dgarray import _core


@st.composite
def layouts(draw, shape, ndev):
    """A random layout covering `shape`: a cover (blocks or interleaved rows)
    plus random extra boxes, on devices 0..ndev-1."""
    chunks = []
    kind = draw(st.sampled_from(["blocks", "strided", "grid"]))
    n0 = shape[0]
    if kind == "blocks":
        cuts = sorted(draw(st.sets(st.integers(1, max(1, n0 - 1)), max_size=3)))
        edges = [0] + [c for c in cuts if 0 < c < n0] + [n0]
        for a, b in zip(edges, edges[1:]):
            box = ((a, b, 1),) + tuple((0, n, 1) for n in shape[1:])
            chunks.append((draw(st.integers(0, ndev - 1)), box))
    elif kind == "strided":
        k = draw(st.integers(1, min(4, n0)))
        for r in range(k):
            box = ((r, n0, k),) + tuple((0, n, 1) for n in shape[1:])
            chunks.append((draw(st.integers(0, ndev - 1)), box))
    else:
        h0 = (n0 + 1) // 2
        row_parts = [(0, h0, 1), (h0, n0, 1)]
        col_parts = [None]
        if len(shape) > 1:
            h1 = (shape[1] + 1) // 2
            col_parts = [(0, h1, 1), (h1, shape[1], 1)]
        for rows in row_parts:
            for cols in col_parts:
                box = (rows,) if cols is None else (rows, cols)
                box = box + tuple((0, n, 1) for n in shape[len(box):])
                if all(r[0] < r[1] for r in box):
                    chunks.append((draw(st.integers(0, ndev - 1)), box))
    for _ in range(draw(st.integers(0, 3))):
        box = []
        for n in shape:
            a = draw(st.integers(0, n - 1))
            b = draw(st.integers(a + 1, n))
            s = draw(st.integers(1, 3))
            box.append((a, b, s))
        chunks.append((draw(st.integers(0, ndev - 1)), tuple(box)))
    return chunks


def sl(box):
    return tuple(slice(*r) for r in box)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_plan_builds_every_destination_once(data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 7)) for _ in range(ndim))
    ndev = 4
    src = data.draw(layouts(shape, ndev))
    dst = data.draw(layouts(shape, ndev))
    check_plan(src, dst, shape)


@st.composite
def cyclic(draw, shape, ndev):
    """A block-cyclic layout of many chunks: blocks of a few rows (and, in 2-d,
    of a few columns) dealt round robin over the devices, maybe with a few
    overlapping strided chunks on top."""
    b0 = draw(st.integers(1, 4))
    b1 = draw(st.integers(1, 3)) if len(shape) > 1 and draw(st.booleans()) else None
    first = draw(st.integers(0, ndev - 1))
    chunks = []
    if len(shape) == 1:
        cols = [None]
    elif b1 is None:
        cols = [(0, shape[1], 1)]
    else:
        cols = [(j, min(shape[1], j + b1), 1) for j in range(0, shape[1], b1)]
    for i in range(0, shape[0], b0):
        for c in cols:
            box = ((i, min(shape[0], i + b0), 1),) + ((c,) if c else ()) + \
                tuple((0, n, 1) for n in shape[2:])
            chunks.append(((first + len(chunks)) % ndev, box))
    for _ in range(draw(st.integers(0, 2))):
        a = draw(st.integers(0, shape[0] - 1))
        box = ((a, shape[0], draw(st.integers(1, 4))),) + tuple((0, n, 1) for n in shape[1:])
        chunks.append((draw(st.integers(0, ndev - 1)), box))
    return chunks


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_plan_many_chunks(data):
    """Hundreds of chunks (the planner's index of boxes): block-cyclic
    layouts to block-cyclic ones of other block sizes, to the host, and to
    few big blocks; every destination built once, locally where possible."""
    ndim = data.draw(st.integers(1, 2))
    shape = (data.draw(st.integers(60, 400)),) + \
        tuple(data.draw(st.integers(1, 6)) for _ in range(ndim - 1))
    ndev = 4
    src = data.draw(cyclic(shape, ndev))
    kind = data.draw(st.sampled_from(["cyclic", "host", "blocks"]))
    if kind == "cyclic":
        dst = data.draw(cyclic(shape, ndev))
    elif kind == "host":
        dst = [(-1, tuple((0, n, 1) for n in shape))]
    else:
        dst = data.draw(layouts(shape, ndev))
    check_plan(src, dst, shape)


def check_plan(src, dst, shape):
    """The plan from src to dst, checked against NumPy slicing."""
    ndim = len(shape)
    plan = _core._plan(src, dst, ndim)
    x = np.arange(int(np.prod(shape))).reshape(shape)
    hits = [np.zeros(shape, int) for _ in dst]
    built = [np.full(shape, -1) for _ in dst]
    for s, d, box in plan:
        idx = sl(box)
        sbox = sl(src[s][1])
        # the copied box lies inside the source chunk and the destination chunk
        inside = np.zeros(shape, bool)
        inside[sbox] = True
        assert inside[idx].all()
        inside = np.zeros(shape, bool)
        inside[sl(dst[d][1])] = True
        assert inside[idx].all()
        hits[d][idx] += 1
        built[d][idx] = x[idx]
    for j, (dev, box) in enumerate(dst):
        mask = np.zeros(shape, bool)
        mask[sl(box)] = True
        assert (hits[j][mask] == 1).all()            # every element exactly once
        assert (hits[j][~mask] == 0).all()
        np.testing.assert_array_equal(built[j][sl(box)], x[sl(box)])
    # nothing crosses devices that is already on the destination's device
    local = {}
    for dev, b in src:
        local.setdefault(dev, np.zeros(shape, bool))[sl(b)] = True
    for s, d, box in plan:
        if src[s][0] != dst[d][0]:
            assert not local.get(dst[d][0], np.zeros(shape, bool))[sl(box)].any()


def test_plan_reports_uncovered_element():
    with pytest.raises(ValueError, match=r"\(3,\)"):
        _core._plan([(0, ((0, 3, 1),))], [(1, ((0, 5, 1),))], 1)
