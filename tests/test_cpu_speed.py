"""The CPU backend at NumPy's speed (issue [cpu-speed]): what it promises.

- Elementwise work runs through NumPy's own inner loops, handed over at import
  (src/py/npy.c -> src/backend/cpu/cpu_ext.c): every ufunc on every dtype
  gives NumPy's bits, not only NumPy's values within ulps, on long arrays
  (SIMD bodies and tails), strided views, broadcast scalars and where= masks,
  on 1 and 4 devices.  Two loops are not handed: float16 nextafter (dgarray
  follows C99 and NumPy 2.5) and signed integer power (NumPy's raises from
  inside the loop).
- Reductions through NumPy's loops in reduce form: on one device a sum, a
  product, a max ... of a contiguous block, whole or along its last axis, or
  along the first axis of a C-ordered 2-d array, is NumPy's bit for bit
  (NumPy's pairwise summation, started from the identity).  Split over
  devices, each device's chunk is summed as NumPy sums that chunk and the
  partials are added in device order: a split sum is that, bit for bit, not
  NumPy's sum of the whole (which pairs elements across the chunk borders).
- Scans (cumsum, cumprod) call NumPy's loop as NumPy's accumulate does: on
  one device NumPy's bits.
- argmax / argmin through NumPy's own functions agree with NumPy.
- Products: the BLAS's thread count is shared out while devices multiply
  and given back after.
- Worker threads are named, placed within the process's affinity mask when
  DGARRAY_CPU_PIN=1, and the default device count follows that mask.
Only on the CPU backend with NumPy's loops (DGARRAY_CPU_LOOPS unset or numpy).
"""
import ctypes
import functools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dgarray as dg
from test_ufuncs import DTYPES, NIN, UFUNC_NAMES, specials

pytestmark = pytest.mark.skipif(
    dg.backend() != "cpu" or os.environ.get("DGARRAY_CPU_LOOPS", "numpy") != "numpy",
    reason="the CPU backend with NumPy's loops")

# dgarray's own loop runs these (see the module docstring)
NOT_HANDED = {("nextafter", "f2")} | {("power", c) for c in ("i1", "i2", "i4", "i8")}


def same_bits(got, ref):
    """Same dtype, shape and bytes (NaN payloads and signs of zero included)."""
    got, ref = np.asarray(got), np.asarray(ref)
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return False
    return np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                          np.ascontiguousarray(ref).view(np.uint8))


def values(dt, n=1500, seed=0):
    """The specials of dt, then random values: long enough for SIMD bodies
    and an odd tail."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(seed + dt.num)
    s = specials(dt)
    if dt.kind == "b":
        r = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        r = np.concatenate([rng.integers(info.min, info.max, n // 2, dtype=dt, endpoint=True),
                            rng.integers(max(info.min, -50), 50, n - n // 2).astype(dt)])
    elif dt.kind == "f":
        r = np.concatenate([rng.standard_normal(n // 2) * 4, rng.uniform(-1.2, 1.2, n - n // 2)])
        r = r.astype(dt)
    else:
        r = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    return np.concatenate([s, r])


def split(x, ndev):
    """x split by rows over devices 0..ndev-1 (uneven sizes)."""
    n = len(x)
    cuts = [0] + [n * k * k // (ndev * ndev) for k in range(1, ndev)] + [n]
    return dg.distributed_array(x, {d: slice(cuts[d], cuts[d + 1]) for d in range(ndev)})


def quiet(f, *a, **k):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


def numpy_ref(f, *args, **kw):
    try:
        return quiet(f, *args, **kw)
    except (TypeError, ValueError, OverflowError):
        return None


def check_bits(name, got, ref):
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for k, (g, r) in enumerate(zip(got, ref)):
            check_bits(f"{name} output {k}", g, r)
        return
    g = got.get() if isinstance(got, dg.DistributedArray) else got
    assert same_bits(g, ref), (
        f"{name}: not NumPy's bits at {np.flatnonzero(np.asarray(g) != ref)[:8]}: "
        f"{np.asarray(g).ravel()[:4]} against {np.asarray(ref).ravel()[:4]}")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.str[1:])
@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_ufunc_is_numpys_bit_for_bit(name, dt, ndev):
    if (name, dt.str[1:]) in NOT_HANDED:
        pytest.skip("dgarray's own loop (module docstring)")
    f = getattr(np, name)
    x = values(dt)
    args = [x] if NIN[name] == 1 else [x, np.random.default_rng(1).permutation(x)]
    if name == "power" and dt.kind == "u":
        args[1] = args[1] % 7
    if name in ("left_shift", "right_shift") and dt.kind in "iu":
        args[1] = (args[1] % (8 * dt.itemsize + 2)).astype(dt)
    ref = numpy_ref(f, *args)
    if ref is None:
        pytest.skip("NumPy has no loop for these dtypes")
    dargs = [split(a, ndev) for a in args]
    check_bits(f"{name} {dt}", quiet(f, *dargs), ref)
    # a strided view, and a broadcast scalar second operand
    check_bits(f"{name} {dt} strided", quiet(f, *[a[1::3] for a in dargs]),
               quiet(f, *[a[1::3] for a in args]))
    if NIN[name] == 2:
        s = args[1][len(args[1]) // 2]
        check_bits(f"{name} {dt} scalar", quiet(f, dargs[0], s), quiet(f, args[0], s))
    # where=: only the masked elements written, in runs as NumPy's masked loops
    if getattr(f, "nout", 1) == 1:
        mask = np.random.default_rng(2).integers(0, 3, len(x)) > 0
        out_np = np.zeros_like(ref)
        out_dg = split(out_np.copy(), ndev)
        quiet(f, *args, out=out_np, where=mask)
        quiet(f, *dargs, out=out_dg, where=split(mask, ndev))
        check_bits(f"{name} {dt} where", out_dg, out_np)


SUM_DTYPES = ["f2", "f4", "f8", "c8", "c16"]


@pytest.mark.parametrize("dt", SUM_DTYPES)
@pytest.mark.parametrize("n", [1, 7, 8, 9, 127, 128, 129, 1000, 8191, 8193, 100003])
def test_sum_on_one_device_is_numpys(dt, n):
    x = values(dt, n)[-n:]
    a = dg.distributed_array(x, {0: slice(None)})
    check_bits(f"sum of {n} {dt}", a.sum(), x.sum())


@pytest.mark.parametrize("dt", SUM_DTYPES + ["i4", "u8"])
def test_reductions_of_2d_on_one_device_are_numpys(dt):
    x = values(dt, 300 * 1001)[-300 * 1001:].reshape(300, 1001)
    if np.dtype(dt).kind in "fc":
        x = x / 8  # keep products finite for a while
    a = dg.distributed_array(x, {0: (slice(None), slice(None))})
    for axis in (None, 1) if dt == "f2" else (None, 1, 0):
        # (float16 along axis 0: NumPy rounds to float16 at every step; dgarray
        # sums float16 in float32, as NumPy does along a contiguous axis)
        check_bits(f"sum axis {axis}", a.sum(axis=axis), x.sum(axis=axis))
        if np.dtype(dt).kind != "c":
            check_bits(f"max axis {axis}", a.max(axis=axis), x.max(axis=axis))
            check_bits(f"min axis {axis}", a.min(axis=axis), x.min(axis=axis))
    check_bits("prod axis 1", quiet(a.prod, axis=1), quiet(x.prod, axis=1))
    if np.dtype(dt).kind in "iu":
        for u in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.logical_or):
            check_bits(u.__name__, u.reduce(a, axis=1), u.reduce(x, axis=1))


@pytest.mark.parametrize("dt", ["f4", "f8", "c16", "i8", "u1"])
def test_scans_on_one_device_are_numpys(dt):
    """cumsum / cumprod through NumPy's loop called as NumPy's accumulate does."""
    x = values(dt, 200 * 301)[-200 * 301:].reshape(200, 301)
    if np.dtype(dt).kind in "fc":
        x = x / 8 + 1
    a = dg.distributed_array(x, {0: (slice(None), slice(None))})
    for axis in (None, 0, 1):
        check_bits(f"cumsum axis {axis}", dg.cumsum(a, axis=axis), np.cumsum(x, axis=axis))
        check_bits(f"cumprod axis {axis}", quiet(dg.cumprod, a, axis=axis),
                   quiet(np.cumprod, x, axis=axis))


def test_sum_of_signed_zeros_starts_from_the_identity():
    """NumPy starts a sum from 0.0: the sum of -0.0 is +0.0; a max keeps -0.0."""
    x = np.array([-0.0, -0.0, -0.0])
    a = dg.distributed_array(x, {0: slice(None)})
    check_bits("sum", a.sum(), x.sum())
    check_bits("max", a.max(), x.max())


@pytest.mark.parametrize("dt", ["f4", "f8", "c16"])
def test_split_sum_is_numpys_per_chunk(dt):
    """Over 4 devices: NumPy's sum of each chunk, then added in device order."""
    if dg._core._ndevices() < 4:
        pytest.skip("needs 4 devices")
    n = 100003
    x = values(dt, n)[-n:]
    a = split(x, 4)
    cuts = [0] + [n * k * k // 16 for k in range(1, 4)] + [n]
    parts = [x[cuts[d]:cuts[d + 1]].sum() for d in range(4)]
    check_bits("split sum", a.sum(), functools.reduce(lambda p, q: p + q, parts))


@pytest.mark.parametrize("dt", ["?", "i1", "u2", "i8", "f2", "f4", "f8", "c8", "c16"])
def test_argmax_argmin_through_numpys_functions(dt, ndev):
    x = values(dt, 20011)
    if np.dtype(dt).kind == "f":
        x[[5000, 15000]] = np.nan  # the first NaN wins, whichever chunk holds it
    a = split(x, ndev)
    for f in ("argmax", "argmin"):
        assert int(getattr(a, f)()) == getattr(x, f)(), f
        x2 = x[:20000].reshape(40, 500)
        a2 = dg.distributed_array(x2, {d: slice(10 * d, 10 * (d + 1)) for d in range(ndev)}
                                  if ndev == 4 else None)
        np.testing.assert_array_equal(getattr(a2, f)(axis=1).get(), getattr(x2, f)(axis=1))


def _blas_threads():
    """get() and set(n) of the BLAS's thread count, as the binding found them."""
    from dgarray import _linalg
    fns = _linalg._numpy_blas()
    if not fns or len(fns) < 6 or not fns[4]:
        pytest.skip("no BLAS thread-count functions found")
    get = ctypes.CFUNCTYPE(ctypes.c_int)(fns[5])
    set_ = ctypes.CFUNCTYPE(None, ctypes.c_int)(fns[4])
    return get, set_


def test_blas_thread_count_given_back_after_products(ndev):
    get, set_ = _blas_threads()
    before = get()
    try:
        set_(3)
        m = np.random.default_rng(0).standard_normal((256, 256))
        a = dg.distributed_array(m, {d: slice(64 * d, 64 * (d + 1)) for d in range(ndev)}
                                 if ndev == 4 else {0: slice(None)})
        r = (a @ a).get()
        np.testing.assert_allclose(r, m @ m, rtol=1e-12, atol=1e-10)
        dg._core._sync_all()
        assert get() == 3
    finally:
        set_(before)


CHILD = r"""
import os, json
mask = sorted(os.sched_getaffinity(0))
import dgarray as dg
dg._core._sync_all()
threads = {}
for t in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{t}/comm") as f:
        name = f.read().strip()
    if name.startswith("dg-cpu:"):
        threads[name] = sorted(os.sched_getaffinity(int(t)))
print(json.dumps({"mask": mask, "ndev": dg._core._ndevices(), "threads": threads}))
"""


def _child(env, cpus=None):
    e = dict(os.environ, DGARRAY_BACKEND="cpu", **env)
    for k in [k for k, v in env.items() if v is None]:
        e.pop(k, None)
    pre = None
    if cpus is not None:
        pre = functools.partial(os.sched_setaffinity, 0, cpus)
    r = subprocess.run([sys.executable, "-c", CHILD], env=e, capture_output=True, text=True,
                       preexec_fn=pre, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_workers_named_and_left_unpinned_by_default():
    r = _child({"DGARRAY_CPU_DEVICES": "3", "DGARRAY_CPU_PIN": None})
    assert sorted(r["threads"]) == ["dg-cpu:0", "dg-cpu:1", "dg-cpu:2"]
    for cpus in r["threads"].values():
        assert cpus == r["mask"]


@pytest.mark.parametrize("ndev", [1, 2, 3, 5])
def test_pinned_workers_share_the_mask(ndev):
    r = _child({"DGARRAY_CPU_DEVICES": str(ndev), "DGARRAY_CPU_PIN": "1"})
    mask = r["mask"]
    n = len(mask)
    for d in range(ndev):
        got = r["threads"][f"dg-cpu:{d}"]
        assert set(got) <= set(mask)
        if ndev >= n:
            assert got == [mask[d % n]]
        else:
            assert got == mask[d * n // ndev:(d + 1) * n // ndev]


def test_pinning_never_leaves_a_narrow_mask():
    one = sorted(os.sched_getaffinity(0))[-1:]
    r = _child({"DGARRAY_CPU_DEVICES": "2", "DGARRAY_CPU_PIN": "1"}, cpus=one)
    assert r["mask"] == one
    assert all(c == one for c in r["threads"].values())


def test_default_device_count_follows_the_affinity_mask():
    one = sorted(os.sched_getaffinity(0))[:1]
    assert _child({"DGARRAY_CPU_DEVICES": None}, cpus=one)["ndev"] == 1
    r = _child({"DGARRAY_CPU_DEVICES": None})
    assert r["ndev"] == min(16, len(r["mask"]))


def test_own_loops_setting():
    code = "import numpy as np, dgarray as dg; x = np.linspace(0, 3, 1001); " \
           "np.testing.assert_allclose(dg.sin(dg.asarray(x)).get(), np.sin(x), rtol=1e-15)"
    e = dict(os.environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_LOOPS="own")
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    e["DGARRAY_CPU_LOOPS"] = "simd"
    r = subprocess.run([sys.executable, "-c", "import dgarray"], env=e, capture_output=True,
                       text=True)
    assert r.returncode != 0 and "DGARRAY_CPU_LOOPS must be 'numpy'" in r.stderr
