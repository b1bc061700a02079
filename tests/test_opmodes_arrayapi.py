"""CuPy's op-mode rule for arrays made from host data (dgarray/_creation.py:
the first chunk holding an element keeps its value, the others the mode's
identity, so that overlapping chunks are not counted twice or squared), and
the array API's device model (dgarray/_arrayapi.py): x.device, to_device,
device= on the creation functions, __array_namespace_info__."""
import numpy as np
import pytest

import dgarray as dg
from _maps import on_devices
from _numpy_check import DTYPES, no_fallback, same, values  # noqa: F401

MODES = [dg.SUM, dg.PROD, dg.MAX, dg.MIN]


def overlapping_maps(n, ndev):
    """Layouts of n rows whose chunks overlap: two halves sharing rows, one
    chunk inside another, every row on every device, a strided overlap."""
    h = n // 2
    return [on_devices([(0, slice(0, h + 2)), (1, slice(h - 1, n))], ndev),
            on_devices([(0, slice(0, n)), (1, slice(1, n - 1)), (2, slice(2, 4))], ndev),
            on_devices([(d, slice(None)) for d in range(4)], ndev),
            on_devices([(0, slice(0, n, 2)), (1, slice(0, n)), (3, slice(1, n, 3))], ndev)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_modes_hold_the_values(mode, dtype, ndev, no_leak):
    x = values(dtype, (9, 3), low=1, high=4)
    for m in overlapping_maps(9, ndev):
        d = dg.distributed_array(x, m, mode=mode)
        assert d.mode == mode
        same(d, x, f"{mode} {m}")
        same(d.change_mode(dg.REPLICA), x)
        if mode == dg.SUM and x.dtype.kind in "iuf":
            same(d.sum(axis=0), x.sum(axis=0), rtol=1e-3)
        r = dg.distributed_array(x, m)
        same(d + 0 if dtype != "?" else d, x if dtype != "?" else x)
        del r


def test_identities():
    from dgarray._creation import mode_identity as identity
    assert identity(1, np.float32) == 0 and identity(2, np.int8) == 1
    assert identity(3, np.float64) == -np.inf and identity(4, np.uint16) == 65535
    assert identity(3, np.int32) == np.iinfo(np.int32).min and identity(4, bool)


def test_device_model(ndev):
    info = dg.__array_namespace_info__()
    assert info.default_device() == dg.DeviceSet(range(dg._core._ndevices()))
    assert info.default_device() in info.devices()
    assert info.capabilities()["max dimensions"] == 32
    assert info.default_dtypes()["integral"] == np.int64
    assert set(info.dtypes()) == set(np.__array_namespace_info__().dtypes())
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    x = dg.zeros((8, 3), device=dg.DeviceSet(range(ndev)))
    assert x.device == dg.DeviceSet(range(ndev))
    y = dg.ones(5, device=0)
    assert y.device == dg.DeviceSet(0)
    z = y.to_device(dg.DeviceSet(range(ndev)))
    assert z.device == dg.DeviceSet(range(ndev)) and z.index_map != {} and float(z.sum()) == 5
    assert z.to_device(z.device) is z
    for f, args in [(dg.asarray, ([1.0, 2.0],)), (dg.full, ((3,), 2)), (dg.arange, (6,)),
                    (dg.linspace, (0, 1, 5)), (dg.eye, (3,)), (dg.empty_like, (x,)),
                    (dg.zeros_like, (x,))]:
        r = f(*args, device=0)
        assert r.device == dg.DeviceSet(0), f.__name__
    same(dg.arange(6, device=0), np.arange(6))
    with pytest.raises(ValueError):
        dg.zeros(3, device="gpu")
    with pytest.raises(ValueError):
        dg.DeviceSet(99)
    with pytest.raises(ValueError):
        x.to_device(0, stream=1)
    xp = x.__array_namespace__()
    assert xp.__array_namespace_info__().default_device() == info.default_device()
    a, b = values("f8", (4, 3), 1), values("f8", (4, 3), 2)
    same(xp.vecdot(dg.asarray(a), dg.asarray(b)), np.vecdot(a, b), rtol=1e-12)
    same(dg.asarray(a).mT, a.mT)
