"""Errors that come from the devices: out of device memory and the state the
arrays are left in; the CUDA backend's own checks (skipped without a GPU)."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import dgarray as dg

cuda_only = pytest.mark.skipif(dg.backend() != "cuda",
                               reason="needs the CUDA backend (no GPU on this machine)")


def test_out_of_device_memory_is_a_clear_error_and_leaves_arrays_intact():
    x = np.arange(100.0)
    a = dg.asarray(x)
    before = dg._core._bytes_in_use()
    with pytest.raises(dg.OutOfDeviceMemoryError) as info:
        dg.empty((1 << 47,), dtype=np.uint8, index_map={0: slice(None)})
    e = info.value
    assert isinstance(e, MemoryError)
    assert e.device == 0 and e.bytes >= 1 << 47
    assert "device" in str(e) and str(1 << 47) in str(e)
    assert dg._core._bytes_in_use() == before
    np.testing.assert_array_equal((a + 1).get(), x + 1)


def test_large_blocks_taken_again_hold_their_own_values():
    """Released blocks larger than the small classes are kept for the next
    allocation of the same size (the CUDA backend): arrays made, dropped and
    made again in a random order, each written while the others live, keep
    their own values, and the bytes in use come back to where they were."""
    gc.collect()  # arrays of earlier tests in reference cycles
    before = dg._core._bytes_in_use()
    n = (3 << 20) // 8 * len(dg.devices())  # 3 MiB of float64 per device
    rng = np.random.default_rng(7)
    live, want = {}, {}
    for _ in range(60):
        k = int(rng.integers(0, 6))
        if k in live and rng.random() < 0.5:
            del live[k], want[k]
        else:
            x = rng.standard_normal(n + (k % 3) * 4096)  # three sizes
            live[k] = dg.asarray(x) * 2.0  # a temporary of the same size dies here
            want[k] = x * 2.0
        for j in live:
            np.testing.assert_array_equal(live[j].get(), want[j])
    del live
    assert dg._core._bytes_in_use() == before


def test_memory_pool_hands_back_kept_blocks_and_keeps_arrays():
    """get_default_memory_pool() as CuPy's: used bytes follow the arrays,
    the pools hold at least that, and free_all_blocks() hands back what the
    dropped arrays left (the CUDA backend keeps it) without touching the
    arrays still alive or the bytes they use."""
    pool = dg.get_default_memory_pool()
    assert pool is dg.get_default_memory_pool()
    gc.collect()
    pool.free_all_blocks()
    rng = np.random.default_rng(11)
    n = (5 << 20) // 8 * len(dg.devices())  # 5 MiB of float64 per device
    x = rng.standard_normal(n)
    keep = dg.asarray(x)
    used = pool.used_bytes()
    assert used >= x.nbytes
    for k in range(4):  # large and small blocks, dropped at once
        y = dg.asarray(rng.standard_normal(n + k * 4096)) * 3.0
        z = dg.asarray(np.arange(100.0 + k)) + 1.0
        assert pool.used_bytes() > used
        del y, z
    assert pool.used_bytes() == used
    assert pool.total_bytes() >= used and pool.free_bytes() == pool.total_bytes() - used
    held = pool.free_bytes()
    pool.free_all_blocks()
    assert pool.used_bytes() == used
    assert 0 <= pool.free_bytes() <= held
    if dg.backend() == "cuda":  # the dropped 5 MiB blocks were kept, then handed back
        assert held > n * 8 // len(dg.devices()) and pool.free_bytes() < held
    np.testing.assert_array_equal((keep * 2.0).get(), x * 2.0)
    with pytest.raises(ValueError, match="not per stream"):
        pool.free_all_blocks(stream=1)
    assert "bytes used" in repr(pool)


def test_backend_can_be_forced_to_cpu():
    code = "import dgarray as d; print(d.backend(), len(d.devices()))"
    env = dict(os.environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_DEVICES="3")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu", "3"]


@pytest.mark.parametrize("env, words", [({"DGARRAY_BACKEND": "tpu"}, "must be 'cpu' or 'cuda'"),
                                        ({"DGARRAY_CPU_DEVICES": "zero"}, "DGARRAY_CPU_DEVICES")])
def test_bad_settings_are_named(env, words):
    r = subprocess.run([sys.executable, "-c", "import dgarray"],
                       env={**os.environ, "DGARRAY_BACKEND": "cpu", **env},
                       capture_output=True, text=True)
    assert r.returncode != 0 and words in r.stderr


def test_forcing_cuda_without_gpu_fails_clearly():
    if dg.backend() == "cuda":
        pytest.skip("this machine has a GPU")
    r = subprocess.run([sys.executable, "-c", "import dgarray"],
                       env=dict(os.environ, DGARRAY_BACKEND="cuda"),
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "DGARRAY_BACKEND=cuda" in r.stderr


def test_exit_with_work_queued_does_not_crash():
    code = ("import numpy as np, dgarray as d\n"
            "a = d.asarray(np.ones(1 << 22))\n"
            "for _ in range(50): a = a * 1.0001 + 1\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


@cuda_only
def test_cuda_devices_are_gpus():
    devs = dg.devices()
    assert all(d.backend == "cuda" for d in devs)
    assert all(d.total_memory > 1 << 30 for d in devs)


@cuda_only
def test_peer_copies_between_gpus():
    if len(dg.devices()) < 2:
        pytest.skip("needs 2 GPUs")
    x = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
    a = dg.distributed_array(x, {0: slice(None)})
    b = a.reshard({1: slice(None)})
    c = a.reshard({0: slice(0, 512), 1: slice(512, None)})
    np.testing.assert_array_equal(b.get(), x)
    np.testing.assert_array_equal((a + c).get(), x + x)


@cuda_only
@pytest.mark.parametrize("value, ok", [("0", True), ("1048576", True), ("lots", False),
                                       ("-5", False)])
def test_large_cache_setting(value, ok):
    """DGARRAY_LARGE_CACHE_BYTES: with 0 (no large block kept) or a size the
    products are still right; a bad value is refused with its name."""
    code = ("import numpy as np, dgarray as d\n"
            "x = np.arange(1 << 21, dtype=np.float64)\n"
            "for _ in range(3):\n"
            "    assert (d.asarray(x) * 2.0).get().tolist() == (x * 2).tolist()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "DGARRAY_LARGE_CACHE_BYTES": value}, timeout=120)
    if ok:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode != 0 and "DGARRAY_LARGE_CACHE_BYTES" in r.stderr
