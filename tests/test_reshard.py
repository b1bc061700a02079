"""Reshard and change_mode between every pair of a set of index maps, in every
mode, compared with NumPy, and what moves between devices to do it.

Every element must reach each device once (no duplicate transfers), data
already in place must stay in place (views, kept apart by copy on write),
and the same results must come from every path data can take: read in place
on a peer device, moved by exchange groups, combined by all-reduce or by
loops (config.peer_read_bytes picks between them).
"""
import gc

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

MODES = ["replica", "sum", "prod", "max", "min"]
SHAPE = (12, 6)


def all_maps(shape, ndev):
    """The named layouts of _maps plus: everything on one (the last) device,
    int-indexed keys (an int keeps its axis), and a mix of uneven,
    overlapping and replicated blocks."""
    out = [(n, m) for n, m in maps_for(shape, ndev) if m is not None]
    last = ndev - 1
    n = shape[0]
    out.append(("one_device", {last: slice(None)}))
    if last == 0:
        ints = {0: [0, slice(1, n - 1), n - 1]}
    else:
        ints = {0: [0, slice(1, n - 1)], last: [n - 1]}
    out.append(("int_indexed", ints))
    mix = {0: [slice(0, 7), (slice(9, None), slice(None, None, 2)),
               (slice(9, None), slice(1, None, 2))]}
    mix.setdefault(1 % ndev, []).append(slice(3, 10))
    if ndev > 2:
        mix[2] = slice(None)
    out.append(("mixed", mix))
    return out


def data(shape=SHAPE, dtype=np.int64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-5, 6, shape).astype(dtype)


@pytest.fixture(params=[0, 1 << 20], ids=["moved", "peer_read"])
def peer_bytes(request):
    """Both ways a device gets another's data: small regions read in place
    on the peer, or everything moved by exchange groups."""
    old = dg.config.peer_read_bytes
    dg.config.peer_read_bytes = request.param
    yield request.param
    dg.config.peer_read_bytes = old


@pytest.mark.parametrize("mode", MODES)
def test_reshard_every_pair_every_mode(mode, ndev, peer_bytes):
    x = data()
    maps = all_maps(x.shape, ndev)
    for sname, sm in maps:
        src = dg.distributed_array(x, sm).change_mode(mode)
        before = src.index_map
        for dname, dm in maps:
            what = f"{sname} -> {dname} in {mode}"
            r = src.reshard(dm)
            assert r.mode == mode, what
            assert r.index_map == dg.distributed_array(x, dm).index_map, what
            np.testing.assert_array_equal(r.get(), x, err_msg=what)
            np.testing.assert_array_equal(r.change_mode("replica").get(), x, err_msg=what)
        # the source is unchanged
        assert src.index_map == before
        assert src.mode == mode
        np.testing.assert_array_equal(src.get(), x)


@pytest.mark.parametrize("mode", MODES[1:])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint64, np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_change_mode_combines_like_numpy(mode, dtype, ndev, peer_bytes):
    """Chunks made in an op mode from host data (CuPy's rule: the first chunk
    holding an element has its value, the others the op's identity) combine
    to x, whichever way they are combined (all-reduce for chunks of the same
    box on every device, loops otherwise)."""
    x = data((7, 3), dtype, seed=3)
    same = {d: slice(None) for d in range(ndev)}
    parts = {0: slice(0, 5), ndev - 1: slice(2, None)} if ndev > 1 else \
        {0: [slice(0, 5), slice(2, None)]}
    for m in (same, parts):
        d = dg.distributed_array(x, m, mode=mode)
        want = x.copy()
        got = d.change_mode("replica")
        if np.dtype(dtype).kind in "fc":
            np.testing.assert_allclose(got.get(), want, rtol=1e-2 if dtype == np.float16
                                       else 1e-6)
        else:
            np.testing.assert_array_equal(got.get(), want)


def moved(f):
    """Bytes f() moves between devices (by moves and by reads in place)."""
    dg._core._sync_all()
    dg._core._move_stats(True)
    out = f()
    between, _, peer, groups = dg._core._move_stats(True)
    return out, between + peer, groups


def test_no_element_reaches_a_device_twice(peer_bytes):
    if dg._core._ndevices() < 2:
        pytest.skip("needs 2 devices")
    x = data((16, 4), np.float64)
    src = dg.distributed_array(x, {1: slice(None)})
    # two overlapping chunks on device 0: rows 4..11 are needed twice
    r, nbytes, _ = moved(lambda: src.reshard({0: [slice(0, 12), slice(4, 16)]}))
    np.testing.assert_array_equal(r.get(), x)
    assert nbytes == x.nbytes
    # a replicated target: each device gets every element once
    r, nbytes, _ = moved(lambda: src.reshard({0: [slice(0, 10), slice(6, 16)],
                                             1: slice(None)}))
    np.testing.assert_array_equal(r.get(), x)
    assert nbytes == x.nbytes


def test_reshard_moves_only_what_changes_device(peer_bytes):
    ndev = min(4, dg._core._ndevices())
    if ndev < 2:
        pytest.skip("needs 2 devices")
    n = 1 << 12
    x = np.arange(n, dtype=np.float32)
    rows = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    shift = n // 16
    shifted = {d: slice(max(0, n * d // ndev - shift), n * (d + 1) // ndev - shift
                        if d < ndev - 1 else n) for d in range(ndev)}
    a = dg.distributed_array(x, rows)
    c = dg.distributed_array(x * 2, shifted)
    r, nbytes, _ = moved(lambda: c.reshard(a.index_map))
    assert r.index_map == a.index_map
    np.testing.assert_array_equal(r.get(), x * 2)
    assert nbytes == (ndev - 1) * shift * 4
    # the same for an elementwise op on the two layouts, and a + c.reshard(a's map)
    s, nbytes, groups = moved(lambda: a + c)
    np.testing.assert_array_equal(s.get(), x * 3)
    assert nbytes == (ndev - 1) * shift * 4
    assert groups <= 1
    s, nbytes, _ = moved(lambda: a + c.reshard(a.index_map))
    np.testing.assert_array_equal(s.get(), x * 3)
    assert nbytes == (ndev - 1) * shift * 4


def test_copy_on_write_keeps_resharded_arrays_apart(ndev):
    x = data((10, 4), np.float64)
    m = {0: slice(0, 6), ndev - 1: slice(4, None)} if ndev > 1 else {0: slice(None)}
    c = dg.distributed_array(x, m)
    halves = {0: [slice(0, 5)]}
    halves.setdefault(ndev - 1, []).append(slice(5, None))
    d = c.reshard(halves)  # views where the data is in place
    e = c.copy()
    c += 1
    np.testing.assert_array_equal(c.get(), x + 1)
    np.testing.assert_array_equal(d.get(), x)
    np.testing.assert_array_equal(e.get(), x)
    d *= 2
    np.testing.assert_array_equal(d.get(), x * 2)
    np.testing.assert_array_equal(c.get(), x + 1)
    np.multiply(e, 3, out=e)
    np.testing.assert_array_equal(e.get(), x * 3)
    np.testing.assert_array_equal(c.get(), x + 1)


def test_reshard_leaks_nothing(ndev, peer_bytes):
    x = data((64, 8), np.float64)
    maps = [m for _, m in all_maps(x.shape, ndev)]
    gc.collect()
    base = dg._core._bytes_in_use()
    for _ in range(5):
        for i, sm in enumerate(maps):
            a = dg.distributed_array(x, sm)
            b = a.reshard(maps[(i + 1) % len(maps)]).change_mode("sum")
            c = (a + b.reshard(sm)).change_mode("max")
            a += 1
            float(c.sum())
            del a, b, c
    gc.collect()
    dg._core._sync_all()
    assert dg._core._bytes_in_use() == base


def test_elementwise_pieces_match_numpy(ndev, peer_bytes):
    """Operands on different layouts: every pair of layouts, and broadcasting."""
    x = data((12, 6), np.int64, seed=5)
    y = data((12, 6), np.int64, seed=6)
    row = data((6,), np.int64, seed=7)
    maps = all_maps(x.shape, ndev)
    for an, am in maps:
        a = dg.distributed_array(x, am)
        for bn, bm in maps:
            b = dg.distributed_array(y, bm)
            np.testing.assert_array_equal((a * b + a).get(), x * y + x,
                                          err_msg=f"{an} with {bn}")
            np.testing.assert_array_equal(np.maximum(a, b, where=b > 0, out=a.copy()).get(),
                                          np.maximum(x, y, where=y > 0, out=x.copy()))
        r = dg.distributed_array(row, {ndev - 1: slice(None)})
        np.testing.assert_array_equal((a - r).get(), x - row)


def test_arrays_held_in_pieces_work_everywhere(ndev, peer_bytes):
    """A reshard that keeps most of each chunk in place holds it as views plus
    moved pieces: every operation must see the layout asked for."""
    n = 64
    x = data((n, 5), np.float64, seed=9)
    rows = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    shifted = {d: slice(max(0, n * d // ndev - 3), n * (d + 1) // ndev - 3
                        if d < ndev - 1 else n) for d in range(ndev)}
    c = dg.distributed_array(x, shifted)
    d = c.reshard(rows)
    assert d.index_map == dg.distributed_array(x, rows).index_map
    np.testing.assert_array_equal(d.get(), x)
    np.testing.assert_allclose(d.sum(axis=0).get(), x.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(float(d.sum()), x.sum(), rtol=1e-12)
    assert int(d.argmax()) == x.argmax()
    np.testing.assert_allclose(d.cumsum(axis=0).get(), x.cumsum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(np.cumsum(d).get(), np.cumsum(x), rtol=1e-12)
    np.testing.assert_array_equal(d.astype(np.float32).get(), x.astype(np.float32))
    np.testing.assert_array_equal((d * 2 - c).get(), x)
    e = d.copy()
    assert e.index_map == d.index_map
    s = d.change_mode("sum")
    assert s.index_map == d.index_map
    np.testing.assert_array_equal(s.get(), x)
    np.testing.assert_array_equal(s.reshard(shifted).get(), x)
    d += 1
    np.testing.assert_array_equal(d.get(), x + 1)
    # a reshard to the layout an array already has is that array (CuPy's rule)
    np.testing.assert_array_equal(c.get(), x + 1 if d is c else x)
    np.testing.assert_array_equal(e.get(), x)
