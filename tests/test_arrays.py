"""Creation, gathering, properties, index maps, modes, reshard and printing,
compared with NumPy on 1 and 4 devices and on every layout of _maps."""
import gc
import re
import sys

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for
from _values import sample

SHAPES = [(7,), (10, 3), (5, 4, 3), (1,), (9, 1)]
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
          np.int64, np.uint64, np.float16, np.float32, np.float64, np.complex64,
          np.complex128]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_roundtrip_every_layout(shape, dtype, ndev):
    x = sample(shape, dtype)
    for name, m in maps_for(shape, ndev):
        d = dg.distributed_array(x, m)
        assert d.shape == x.shape and d.dtype == x.dtype, name
        got = d.get()
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, x, err_msg=name)
        np.testing.assert_array_equal(np.asarray(d), x)
        np.testing.assert_array_equal(dg.asnumpy(d), x)


def test_large_reads_again_and_again_stay_exact(ndev, no_leak):
    """Arrays of 16 MiB and more are read into host blocks kept for reuse
    (on GPUs page-locked from their second use, then copied by one DMA):
    repeated reads, uploads from those arrays, strided reads and writes
    through them come back exact, on every layout."""
    x = np.arange(5 << 20, dtype=np.float32).reshape(1 << 12, 1280)  # 20 MiB
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        for _ in range(3):
            y = a.get()
            np.testing.assert_array_equal(y, x, err_msg=name)
            np.testing.assert_array_equal(dg.asarray(y).get(), x, err_msg=name)
            np.testing.assert_array_equal(a[::3, 1::2].get(), x[::3, 1::2], err_msg=name)
            y[::2] += 1
            np.testing.assert_array_equal(dg.asarray(y[::2]).get(), x[::2] + 1, err_msg=name)
            del y


def test_properties(ndev):
    x = np.arange(60, dtype=np.float32).reshape(10, 6)
    m = {d: slice(d, None, ndev) for d in range(ndev)}
    d = dg.distributed_array(x, m)
    assert d.shape == (10, 6)
    assert d.ndim == 2 and d.size == 60 and d.itemsize == 4 and d.nbytes == 240
    assert d.dtype == np.float32
    assert d.mode == "replica" == dg.REPLICA
    assert d.devices == list(range(ndev))
    assert len(d) == 10
    im = d.index_map
    assert sorted(im) == list(range(ndev))
    for dev, keys in im.items():
        assert keys == [(slice(dev, dev + (9 - dev) // ndev * ndev + 1, ndev), slice(0, 6, 1))]


def test_index_map_forms(ndev):
    x = np.arange(24).reshape(4, 6)
    last = ndev - 1
    m = {0: [(slice(None, 2), slice(None, 3)), slice(None, None, 2)],
         last: [(slice(1, None), 2), (-1,), (slice(0, 4), slice(-3, None))]}
    if ndev == 1:
        m = {0: m[0] + m[last]}
    m.setdefault(0, [])
    # the rest of the elements: the whole array once more, on device 0
    m[0] = list(m[0]) + [(slice(None),)]
    d = dg.distributed_array(x, m)
    np.testing.assert_array_equal(d.get(), x)
    # an int keeps its axis
    d2 = dg.distributed_array(x, {0: [(1,), (0,), (2,), (3,)]})
    assert d2.index_map[0][0] == (slice(0, 1, 1), slice(0, 6, 1))
    np.testing.assert_array_equal(d2.get(), x)


def test_index_map_keys_select_what_python_selects(ndev):
    """Random ints and slices (bounds absent, negative, beyond the axis) as
    one device's key, the whole array on device 0 beside it: the chunk holds
    what Python's own indexing of range(n) selects, or the key is refused
    (empty slices and steps that are not positive: ValueError; ints out of
    range: IndexError), as CuPy's rules say."""
    rng = np.random.default_rng(11)
    n = 7
    x = np.arange(3 * n).reshape(n, 3)
    dev = ndev - 1
    for _ in range(150):
        if rng.random() < 0.3:
            key = int(rng.integers(-n - 2, n + 2))
            try:
                i = range(n)[key]  # Python's own int indexing
                want = range(i, i + 1)
            except IndexError:
                want = None
        else:
            bound = [None if rng.random() < 0.25 else int(rng.integers(-2 * n, 2 * n))
                     for _ in range(2)]
            step = None if rng.random() < 0.3 else int(rng.integers(-1, n + 2))
            key = slice(bound[0], bound[1], step)
            want = range(n)[key] if step is None or step > 0 else None
            want = want if want else None
        m = {0: [(slice(None),)], dev: [(key,)]} if dev else {0: [(slice(None),), (key,)]}
        if want is None:
            with pytest.raises((ValueError, IndexError)) as info:
                dg.distributed_array(x, m)
            assert info.type is (IndexError if isinstance(key, int) else ValueError)
            continue
        d = dg.distributed_array(x, m)
        held = [range(s.start, s.stop, s.step) for s, _ in d.index_map[dev]]
        assert want in held, (key, held)
        np.testing.assert_array_equal(d.get(), x)


@pytest.mark.parametrize("bad, exc, words", [
    ({0: slice(None, None, -1)}, ValueError, "positive"),
    ({0: slice(None, None, 0)}, ValueError, "positive"),
    ({0: slice(3, 3)}, ValueError, "empty"),
    ({0: (0, 0, 0)}, IndexError, "too many indices"),
    ({0: 9}, IndexError, "out of bounds"),
    ({0: -10}, IndexError, "out of bounds"),
    ({0: "a"}, ValueError, "invalid index"),
    ({0: slice(0, 2)}, ValueError, "element (2,"),
    ({99: slice(None)}, ValueError, "device 99 does not exist"),
    ([slice(None)], ValueError, "dict"),
    ({}, ValueError, "names no chunk"),
    ({"0": slice(None)}, ValueError, "device numbers"),
    ({True: slice(None)}, ValueError, "device numbers"),
    ({0: [slice(None), (slice(1, 1),)]}, ValueError, "index_map[0][1]"),
    ({0: slice("a", None)}, TypeError, "slice indices must be integers"),
])
def test_bad_index_maps(bad, exc, words):
    x = np.arange(12).reshape(4, 3)
    with pytest.raises(exc) as info:
        dg.distributed_array(x, bad)
    assert words in str(info.value)


@pytest.mark.parametrize("hole", [None, "missing", "overlap"])
def test_index_map_cover_of_many_chunks(hole, ndev):
    """The cover check of a layout of 1,000 chunks dealt round robin: chunks
    that do not overlap and hold as many elements as the array pass without
    the planner's walk; one chunk left out, or one moved onto its neighbour
    (as many elements held, one of them twice, one by no chunk), fails
    naming the element no chunk holds, when created and when resharded to."""
    n, per = 1000, 3
    x = np.arange(n * per * 2).reshape(n * per, 2)
    boxes = [slice(per * i, per * (i + 1)) for i in range(n)]
    if hole == "missing":
        boxes[500] = None
    elif hole == "overlap":
        boxes[500] = slice(per * 500 - 1, per * 501 - 1)
    imap = {d: [b for b in boxes[d::ndev] if b is not None] for d in range(ndev)}
    if hole is None:
        d = dg.distributed_array(x, imap)
        np.testing.assert_array_equal(d.get(), x)
        np.testing.assert_array_equal(dg.asarray(x).reshard(imap).get(), x)
        return
    first = per * 500 if hole == "missing" else per * 501 - 1
    missing = f"element ({first}, 0)"
    with pytest.raises(ValueError, match=re.escape(missing)):
        dg.distributed_array(x, imap)
    with pytest.raises(ValueError, match=re.escape(missing)):
        dg.asarray(x).reshard(imap)


@pytest.mark.parametrize("dtype", [object, "U3", "S2", "M8[s]"])
def test_bad_dtypes(dtype):
    x = np.zeros(3, dtype=dtype)
    with pytest.raises(TypeError, match="dgarray does not support dtype"):
        dg.asarray(x)
    with pytest.raises(TypeError, match="dgarray does not support dtype"):
        dg.zeros(3, dtype=dtype)


def test_creation_functions(ndev):
    m = {d: slice(d, None, ndev) for d in range(ndev)}
    for dt in [np.int32, np.float32, np.complex64, np.bool_, np.float16]:
        np.testing.assert_array_equal(dg.zeros((5, 2), dt, index_map=m).get(),
                                      np.zeros((5, 2), dt))
        np.testing.assert_array_equal(dg.ones((5, 2), dt).get(), np.ones((5, 2), dt))
        np.testing.assert_array_equal(dg.full((5, 2), 3, dt).get(), np.full((5, 2), 3, dt))
        assert dg.empty((5, 2), dt).dtype == np.dtype(dt)
    assert dg.zeros(4).dtype == np.float64
    assert dg.full(3, 2.5).dtype == np.full(3, 2.5).dtype
    assert dg.full(3, 7).dtype == np.full(3, 7).dtype
    a = dg.distributed_array(np.arange(12.0).reshape(6, 2), m)
    for f, g in [(dg.zeros_like, np.zeros_like), (dg.ones_like, np.ones_like)]:
        r = f(a)
        assert r.index_map == a.index_map
        np.testing.assert_array_equal(r.get(), g(a.get()))
    r = dg.full_like(a, 4, dtype=np.int16)
    np.testing.assert_array_equal(r.get(), np.full_like(a.get(), 4, dtype=np.int16))
    assert dg.empty_like(a).shape == a.shape
    c = dg.copy(a)
    assert c is not a and c.index_map == a.index_map
    np.testing.assert_array_equal(c.get(), a.get())


@pytest.mark.parametrize("args", [(10,), (2, 11), (0, 1, 0.1), (5, -7, -3), (-2.5, 4.25, 0.5),
                                  (0,), (3, 3), (1, 2**40, 2**37)])
@pytest.mark.parametrize("dtype", [None, np.float32, np.int16, np.float64, np.uint8,
                                   np.complex64, np.float16])
def test_arange(args, dtype, ndev):
    try:
        want = np.arange(*args, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            dg.arange(*args, dtype=dtype)
        return
    m = None
    if want.size >= ndev > 1:
        m = {d: slice(d, None, ndev) for d in range(ndev)}
    got = dg.arange(*args, dtype=dtype, index_map=m)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("args", [(0, 1, 5), (-3.5, 10, 7), (2, 2, 3), (0, 1, 1), (0, 1, 0),
                                  (1, 100, 50), (0, 10, 6)])
@pytest.mark.parametrize("kw", [{}, {"endpoint": False}, {"dtype": np.float32},
                                {"dtype": np.int32}, {"retstep": True}])
def test_linspace(args, kw):
    want = np.linspace(*args, **kw)
    got = dg.linspace(*args, **kw)
    if kw.get("retstep"):
        assert got[1] == want[1] or (np.isnan(got[1]) and np.isnan(want[1]))
        got, want = got[0], want[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("args", [(4,), (3, 5), (5, 3, 1), (4, 4, -2), (4, 6, 7)])
def test_eye(args, ndev):
    k = min(ndev, args[0])
    m = {d: slice(d, None, k) for d in range(k)}
    want = np.eye(*args, dtype=np.int32)
    np.testing.assert_array_equal(dg.eye(*args, dtype=np.int32, index_map=m).get(), want)
    np.testing.assert_array_equal(dg.eye(*args).get(), np.eye(*args))


def test_asarray_and_array():
    x = np.arange(6.0)
    a = dg.asarray(x)
    assert dg.asarray(a) is a
    b = dg.asarray(a, dtype=np.float32)
    assert b.dtype == np.float32
    c = dg.array(a)
    assert c is not a
    np.testing.assert_array_equal(c.get(), x)
    np.testing.assert_array_equal(dg.array([[1, 2], [3, 4]]).get(), np.array([[1, 2], [3, 4]]))
    assert dg.asarray(3.5).shape == ()
    assert dg.asarray(3.5).item() == 3.5


@pytest.mark.parametrize("mode", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.uint8, np.complex128, np.float16])
def test_modes(mode, dtype, ndev):
    x = sample((8, 3), dtype, seed=1)
    last = ndev - 1
    m = {0: [slice(0, 6)], last: [slice(2, None)]}
    if ndev == 1:
        m = {0: [slice(0, 6), slice(2, None)]}
    if ndev > 2:
        m[1] = slice(None)
    # CuPy's rule: created in an op mode from host data, the first chunk
    # holding an element gets its value and the others the mode's identity,
    # so that the array holds x however its chunks overlap
    d = dg.distributed_array(x, m, mode=mode)
    assert d.mode == mode
    want = x.copy()
    np.testing.assert_array_equal(d.get(), want)
    r = d.change_mode(dg.REPLICA)
    assert r.mode == "replica"
    np.testing.assert_array_equal(r.get(), want)
    # replica -> op mode keeps the values
    rep = dg.distributed_array(x, m)
    o = rep.change_mode(mode.upper())
    assert o.mode == mode
    np.testing.assert_array_equal(o.get(), x)
    np.testing.assert_array_equal(rep.get(), x)          # the source is unchanged
    other = "sum" if mode != "sum" else "max"
    np.testing.assert_array_equal(o.change_mode(other).get(), x)
    assert rep.change_mode("replica") is rep


def test_bad_mode():
    a = dg.arange(4)
    with pytest.raises(ValueError, match="unknown mode"):
        a.change_mode("mean")
    with pytest.raises(ValueError, match="unknown mode"):
        dg.distributed_array(np.arange(3), None, mode="avg")


def test_reshard_pairs(ndev):
    x = np.arange(10 * 4, dtype=np.int64).reshape(10, 4)
    maps = maps_for(x.shape, ndev)
    for sname, sm in maps:
        src = dg.distributed_array(x, sm)
        before = src.index_map
        for dname, dm in maps:
            if dm is None:
                continue
            r = src.reshard(dm)
            np.testing.assert_array_equal(r.get(), x, err_msg=f"{sname}->{dname}")
            assert r.index_map == dg.distributed_array(x, dm).index_map
        assert src.index_map == before
        np.testing.assert_array_equal(src.get(), x)


def test_reshard_op_mode_keeps_values(ndev):
    x = np.arange(12.0)
    m = {0: slice(0, 8), ndev - 1: slice(4, None)} if ndev > 1 else \
        {0: [slice(0, 8), slice(4, None)]}
    d = dg.distributed_array(x, m).change_mode("sum")
    r = d.reshard({0: slice(None)})
    assert r.mode == "sum"
    np.testing.assert_array_equal(r.get(), x)


def test_scalars_and_conversions():
    a = dg.asarray(np.array(2.5))
    assert float(a) == 2.5 and int(dg.asarray(np.array(7))) == 7
    assert complex(dg.asarray(np.array(1 + 2j))) == 1 + 2j
    assert bool(dg.asarray(np.array([1]))) is True
    for conv in (float, int, complex):
        # 1-element arrays of 1 or more dimensions convert as NumPy converts them
        try:
            want = conv(np.array([3]))
        except TypeError:
            with pytest.raises(TypeError):
                conv(dg.asarray(np.array([3])))
        else:
            assert conv(dg.asarray(np.array([3]))) == want
    with pytest.raises(ValueError, match="ambiguous"):
        bool(dg.arange(3))
    with pytest.raises(TypeError, match="unsized"):
        len(dg.asarray(3.0))
    x = np.arange(12).reshape(3, 4)
    d = dg.asarray(x)
    assert d.item(5) == x.item(5) and d.item(-1) == x.item(-1)
    assert d.item((2, 1)) == x.item((2, 1)) and d.item(1, -1) == x.item(1, -1)
    with pytest.raises(IndexError):
        d.item(12)
    with pytest.raises(ValueError):
        d.item()
    assert d.tolist() == x.tolist()
    assert dg.asarray(np.float32(1.5)).item() == 1.5


@pytest.mark.parametrize("shape", [(5,), (2000,), (40, 40), (3, 400, 3), (), (0,), (0, 3),
                                   (1001,), (7, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.complex64, np.bool_, np.float16])
def test_repr_and_str_match_numpy(shape, dtype, ndev):
    x = sample(shape, dtype, seed=3)
    m = {d: slice(d, None, ndev) for d in range(ndev)} if shape and shape[0] >= ndev else None
    d = dg.distributed_array(x, m)
    assert repr(d) == repr(x)
    assert str(d) == str(x)


def test_devices():
    devs = dg.devices()
    assert len(devs) == dg._core._ndevices() >= 1
    assert [d.id for d in devs] == list(range(len(devs)))
    assert all(d.backend == dg.backend() for d in devs)


def test_no_leaks_over_many_cycles():
    """10,000 create/compute/free cycles leave device memory and refcounts
    where they were."""
    x = np.arange(64, dtype=np.float64)
    refs_x = sys.getrefcount(x)
    gc.collect()
    base = dg._core._bytes_in_use()
    imap = {}  # overlapping chunks on the first and the last device (one device: both)
    for d, key in ((0, slice(0, 40)), (dg._core._ndevices() - 1, slice(30, None))):
        imap.setdefault(d, []).append(key)
    for i in range(10_000):
        a = dg.distributed_array(x, imap)
        b = a * 2.0 + 1
        c = np.sin(b) if i % 100 == 0 else b
        del a, b, c
    gc.collect()
    assert dg._core._bytes_in_use() == base
    assert sys.getrefcount(x) == refs_x
