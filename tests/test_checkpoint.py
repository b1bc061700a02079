""".npy checkpoints and Zarr, chunk by chunk (dgarray/_checkpoint.py):
files that NumPy writes and reads byte for byte the same, every dtype and
layout on 1 and 4 devices, C and Fortran order and both byte orders, header
versions 1 to 3, NumPy's errors for bad files, nothing half written under
the final name, pieces of a small size (and the host memory that takes),
file objects, and Zarr where the optional package is installed."""
import io
import os
import sys
import warnings

import numpy as np
import pytest
from numpy.lib import format as npformat

import dgarray as dg
from _maps import maps_for
from _values import sample

DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]


def leftovers(d):
    return sorted(p for p in os.listdir(d) if p.endswith(".tmp"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_same_bytes_as_numpy(dtype, ndev, tmp_path, no_leak):
    """dgarray.save writes the file numpy.save writes, for every layout;
    numpy.load and dgarray.load read it back."""
    x = sample((13, 6), dtype)
    ref = tmp_path / "ref.npy"
    np.save(ref, x)
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        p = tmp_path / f"{name}.npy"
        dg.save(p, a)
        assert p.read_bytes() == ref.read_bytes(), name
        np.testing.assert_array_equal(np.load(p), x, err_msg=name)
        b = dg.load(p, index_map=m)
        assert b.dtype == x.dtype and b.index_map == a.index_map, name
        np.testing.assert_array_equal(b.get(), x, err_msg=name)
        del a, b
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("shape", [(), (0,), (4, 0, 3), (1,), (7, 1, 5), (3, 4, 5, 2)], ids=str)
def test_shapes(shape, ndev, tmp_path, no_leak):
    x = sample(shape, "f8")
    for name, m in maps_for(shape, ndev):
        a = dg.distributed_array(x, m)
        p = tmp_path / "a.npy"
        dg.save(p, a)
        ref = tmp_path / "ref.npy"
        np.save(ref, x)
        assert p.read_bytes() == ref.read_bytes(), name
        b = dg.load(p)
        assert b.shape == x.shape
        np.testing.assert_array_equal(b.get(), x, err_msg=name)
        del a, b


def test_numpy_save_comes_here(ndev, tmp_path, monkeypatch):
    """numpy.save(path, a) writes through dgarray.save (no host fallback,
    no FallbackWarning), adding .npy as numpy.save does."""
    x = sample((40, 3), "i4")
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})
    calls = []
    real = dg._core._npy_write
    monkeypatch.setattr(dg._core, "_npy_write", lambda *args: calls.append(1) or real(*args))
    old = dg.config.fallback
    dg.config.fallback = "raise"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.save(tmp_path / "n", a)
            np.save(str(tmp_path / "s.npy"), a)
    finally:
        dg.config.fallback = old
    assert calls == [1, 1]
    np.testing.assert_array_equal(np.load(tmp_path / "n.npy"), x)
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), x)


def test_modes_are_combined(ndev, tmp_path):
    x = sample((6, 4), "f8")
    for mode in ("sum", "max"):
        a = dg.distributed_array(x, {d: slice(None) for d in range(ndev)}, mode=mode)
        dg.save(tmp_path / "m.npy", a)
        np.testing.assert_array_equal(np.load(tmp_path / "m.npy"),
                                      a.change_mode("replica").get())


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("byteorder", ["<", ">"])
@pytest.mark.parametrize("dtype", ["i2", "f8", "c8", "u8", "?"])
def test_load_numpy_files(order, byteorder, dtype, ndev, tmp_path, pieces, no_leak):
    """Files NumPy wrote in either order and byte order load as NumPy loads
    them, into any layout, in pieces of a few elements too."""
    x = sample((9, 7, 3), dtype)
    y = np.asarray(x, dtype=x.dtype.newbyteorder(byteorder), order=order)
    p = tmp_path / "x.npy"
    np.save(p, y)
    want = np.load(p)
    for piece in (1 << 20, 40):
        pieces(piece)
        for name, m in maps_for(x.shape, ndev):
            b = dg.load(p, index_map=m)
            assert b.dtype == x.dtype.newbyteorder("=")
            np.testing.assert_array_equal(b.get(), want, err_msg=name)
            del b


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_header_versions(version, tmp_path):
    x = sample((5, 3), "f4")
    p = tmp_path / "v.npy"
    with open(p, "wb") as f:
        npformat.write_array(f, x, version=version)
    np.testing.assert_array_equal(dg.load(p).get(), np.load(p))


def test_long_header_uses_version_2(tmp_path):
    """A header too long for version 1.0 gets 2.0, as numpy.save writes it."""
    x = np.zeros((1,) * 32, dtype="i1")  # 32 axes
    x = np.broadcast_to(x, (2,) * 10 + (1,) * 22).copy()
    a = dg.asarray(x)
    dg.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", x)
    assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()


def raises_like_numpy(path, **kw):
    """dgarray.load raises what numpy.load raises for the file (same type)."""
    with pytest.raises(Exception) as np_err:
        np.load(path, **kw)
    with pytest.raises(np_err.type) as dg_err:
        dg.load(path, **kw)
    return np_err.value, dg_err.value


def test_bad_files(tmp_path):
    x = sample((10, 4), "f8")
    good = tmp_path / "good.npy"
    np.save(good, x)
    data = good.read_bytes()
    header_len = len(data) - x.nbytes
    # truncated in the data: ValueError, as numpy.load
    p = tmp_path / "trunc.npy"
    p.write_bytes(data[:-9])
    e_np, e_dg = raises_like_numpy(p)
    assert "Failed to read all data" in str(e_dg) and "not fully written" in str(e_dg)
    # truncated in the header
    p.write_bytes(data[:header_len // 2])
    raises_like_numpy(p)
    # wrong magic
    p = tmp_path / "magic.npy"
    p.write_bytes(b"\x93NUMPZ" + data[6:])
    with pytest.raises(ValueError, match="magic string is not correct"):
        dg.load(p)
    # an unknown version
    p.write_bytes(data[:6] + b"\x09\x00" + data[8:])
    with pytest.raises(ValueError):
        np.load(p)
    with pytest.raises(ValueError):
        dg.load(p)
    # a header that is not a dict, a bad descr, a bad shape
    for bad in (b"[1, 2, 3]", b"{'descr': 'zz9', 'fortran_order': False, 'shape': (3,)}",
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (3.5,)}",
                b"{'descr': '<f8', 'fortran_order': 'no', 'shape': (3,)}",
                b"{'descr': '<f8', 'shape': (3,)}"):
        p = tmp_path / "hdr.npy"
        with open(p, "wb") as f:
            hdr = bad + b" " * (118 - len(bad)) + b"\n"
            f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr)
            f.write(np.zeros(3).tobytes())
        raises_like_numpy(p)
    # object arrays: NumPy's ValueError without allow_pickle
    p = tmp_path / "obj.npy"
    np.save(p, np.array([1, "a"], dtype=object))
    e_np, e_dg = raises_like_numpy(p)
    assert str(e_np) == str(e_dg)
    with pytest.raises(TypeError, match="Python objects"):
        dg.load(p, allow_pickle=True)
    # dtypes a DistributedArray cannot hold
    for arr in (np.array(["ab", "c"]), np.zeros(3, dtype=[("a", "i4"), ("b", "f8")]),
                np.arange(3).astype("datetime64[s]")):
        np.save(p, arr)
        with pytest.raises(TypeError, match="cannot hold"):
            dg.load(p)
    # mmap modes: the reading ones are taken, a creating one is refused
    for mode in ("r", "r+", "c"):
        np.testing.assert_array_equal(dg.load(good, mmap_mode=mode).get(), x)
    with pytest.raises(ValueError):
        dg.load(good, mmap_mode="w+")


def test_nothing_half_written(ndev, tmp_path, monkeypatch, pieces):
    """A save that fails part way leaves the old file whole under the final
    name and no temporary file behind."""
    x = sample((64, 8), "f8")
    p = tmp_path / "ck.npy"
    np.save(p, np.arange(5))
    before = p.read_bytes()
    a = dg.distributed_array(x, {d: slice(d, None, ndev) for d in range(ndev)})
    real = dg._core._npy_write

    def failing(arr, fd, offset):
        real(arr, fd, offset)  # the data is written, then something fails
        raise KeyboardInterrupt
    monkeypatch.setattr(dg._core, "_npy_write", failing)
    with pytest.raises(KeyboardInterrupt):
        dg.save(p, a)
    assert p.read_bytes() == before
    assert leftovers(tmp_path) == []
    monkeypatch.setattr(dg._core, "_npy_write", real)
    # a directory that cannot be written: the OSError, nothing written
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if not os.access(ro, os.W_OK):  # (root writes anywhere)
            with pytest.raises(OSError):
                dg.save(ro / "x.npy", a)
            assert os.listdir(ro) == []
    finally:
        os.chmod(ro, 0o700)
    dg.save(p, a)
    np.testing.assert_array_equal(np.load(p), x)


def test_file_mode_follows_umask(tmp_path):
    """The file gets the permissions numpy.save's would (0666 less umask),
    not the temporary file's 0600."""
    dg.save(tmp_path / "a.npy", dg.arange(4))
    np.save(tmp_path / "b.npy", np.arange(4))
    assert os.stat(tmp_path / "a.npy").st_mode == os.stat(tmp_path / "b.npy").st_mode


def test_small_pieces_and_progress(ndev, tmp_path, pieces, progress, capsys, no_leak):
    """Pieces of a few hundred bytes: every layout's chunks go piece by piece
    (a progress line each with progress="always"), and the file is NumPy's."""
    x = sample((50, 30), "f8")
    dg.config.progress = "always"
    pieces(8 * 30 * 2 + 8)  # two rows and an element
    ref = tmp_path / "ref.npy"
    np.save(ref, x)
    for name, m in maps_for(x.shape, ndev):
        a = dg.distributed_array(x, m)
        capsys.readouterr()
        dg.save(tmp_path / "a.npy", a)
        err = capsys.readouterr().err
        lines = [s for s in err.split("\r") if s.startswith("dgarray: devices to file:")]
        assert len(lines) >= x.nbytes // (8 * 30 * 2 + 8), (name, err)
        assert lines[-1].rstrip().endswith("done")
        assert (tmp_path / "a.npy").read_bytes() == ref.read_bytes(), name
        b = dg.load(tmp_path / "a.npy", index_map=m)
        err = capsys.readouterr().err
        assert "dgarray: file to" in err and err.rstrip().endswith("done"), name
        np.testing.assert_array_equal(b.get(), x, err_msg=name)
        del a, b


def _vm_hwm_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise OSError("no VmHWM")


def _reset_hwm():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


@pytest.mark.skipif(dg.backend() != "cpu", reason="measures host memory on the CPU backend, "
                    "whose device memory is host memory")
def test_peak_host_memory_is_one_piece(tmp_path, pieces):
    """With 1 MiB pieces, saving and loading a 64 MiB array raise the peak
    resident memory by about a piece, not by the array (the arrays' own
    device memory, host memory here, is counted apart)."""
    try:
        _reset_hwm()
        _vm_hwm_kib()
    except OSError:
        pytest.skip("needs Linux's /proc/self/clear_refs and VmHWM")
    n = 64 << 20
    a = dg.arange(n // 8, dtype=np.float64).reshape(-1, 1024)
    a = a.reshard({d: slice(d, None, dg._core._ndevices()) for d in
                   range(dg._core._ndevices())})
    a._sync()
    pieces(1 << 20)
    p = tmp_path / "big.npy"
    _reset_hwm()
    base = _vm_hwm_kib()
    dg.save(p, a)
    saved = _vm_hwm_kib() - base
    b = dg.empty(a.shape, a.dtype)  # the devices' memory, allocated before
    b += 0
    b._sync()
    _reset_hwm()
    base = _vm_hwm_kib()
    dg._core._npy_read(b, os.open(p, os.O_RDONLY), os.path.getsize(p) - n, False, False)
    loaded = _vm_hwm_kib() - base
    assert saved < 16 * 1024, f"save raised the peak by {saved} KiB"
    assert loaded < 16 * 1024, f"load raised the peak by {loaded} KiB"
    np.testing.assert_array_equal(b[::997].get(), np.arange(n // 8, dtype=np.float64)
                                  .reshape(-1, 1024)[::997])


def test_file_objects(ndev, pieces):
    """A file object (BytesIO) is written and read in file order."""
    x = sample((21, 5), "c16")
    a = dg.distributed_array(x, {d: (slice(None), slice(d, None, ndev)) for d in range(ndev)})
    ref = io.BytesIO()
    np.save(ref, x)
    for piece in (1 << 20, 3 * 5 * 16 + 16):
        pieces(piece)
        f = io.BytesIO()
        np.save(f, a)
        assert f.getvalue() == ref.getvalue()
        f.seek(0)
        np.testing.assert_array_equal(dg.load(f).get(), x)
        g = io.BytesIO()
        np.save(g, np.asfortranarray(x))
        g.seek(0)
        b = dg.load(g, index_map={0: slice(None)})
        np.testing.assert_array_equal(b.get(), x)
        assert b.index_map == {0: [(slice(0, 21, 1), slice(0, 5, 1))]}
    f = io.BytesIO(ref.getvalue()[:-5])
    with pytest.raises(ValueError, match="Failed to read all data"):
        dg.load(f)


# ---- Zarr ------------------------------------------------------------------------------

def test_zarr_missing_names_it(monkeypatch, tmp_path):
    """Without the optional package the functions raise ImportError naming it."""
    monkeypatch.setitem(sys.modules, "zarr", None)
    with pytest.raises(ImportError, match="'zarr'"):
        dg.to_zarr(dg.arange(3), str(tmp_path / "z"))
    with pytest.raises(ImportError, match="'zarr'"):
        dg.from_zarr(str(tmp_path / "z"))


@pytest.mark.parametrize("dtype", ["?", "i8", "u2", "f4", "c16"])
def test_zarr_roundtrip(dtype, ndev, tmp_path, pieces, no_leak):
    zarr = pytest.importorskip("zarr", reason="zarr (optional) is not installed")
    x = sample((17, 6), dtype)
    for piece in (1 << 20, 100):
        pieces(piece)
        for name, m in maps_for(x.shape, ndev):
            a = dg.distributed_array(x, m)
            store = str(tmp_path / f"{name}-{piece}.zarr")
            z = dg.to_zarr(a, store)
            np.testing.assert_array_equal(zarr.open_array(store, mode="r")[...], x,
                                          err_msg=name)
            for target in (None, m):
                b = dg.from_zarr(store, index_map=target)
                np.testing.assert_array_equal(b.get(), x, err_msg=name)
                if target is not None:
                    assert b.index_map == a.index_map
            np.testing.assert_array_equal(dg.from_zarr(z).get(), x)
            del a, b


def test_zarr_written_by_zarr(ndev, tmp_path):
    """A Zarr array made by zarr itself, chunked its own way, 0-d and empty."""
    zarr = pytest.importorskip("zarr", reason="zarr (optional) is not installed")
    x = sample((30, 7, 2), "f8")
    z = zarr.open_array(str(tmp_path / "z.zarr"), mode="w", shape=x.shape, chunks=(4, 3, 1),
                        dtype=x.dtype)
    z[...] = x
    for name, m in maps_for(x.shape, ndev):
        np.testing.assert_array_equal(dg.from_zarr(z, index_map=m).get(), x, err_msg=name)
    for shape in ((), (0, 3)):
        y = sample(shape, "i4")
        store = str(tmp_path / f"s{len(shape)}.zarr")
        dg.to_zarr(dg.asarray(y), store)
        np.testing.assert_array_equal(np.asarray(zarr.open_array(store, mode="r")[...]), y)
        got = dg.from_zarr(store)
        assert got.shape == y.shape
        np.testing.assert_array_equal(got.get(), y)
