"""Test set-up: 4 virtual CPU devices unless the environment says otherwise,
and small arrays split by default so that sharding is exercised.  On the CUDA
backend the devices are the GPUs, or the logical devices DGARRAY_CUDA_DEVICES
lists ("0,0,0,0": four on GPU 0, moving data by device copies), so that the
multi-device tests run where one GPU is present."""
import os

os.environ.setdefault("DGARRAY_CPU_DEVICES", "4")
os.environ.setdefault("DGARRAY_MIN_SPLIT_BYTES", "0")
# small elementwise calls are fused too, so that fusion is exercised everywhere
os.environ.setdefault("DGARRAY_FUSION_MIN_ELEMS", "0")

import gc  # noqa: E402

import pytest  # noqa: E402

import dgarray  # noqa: E402

NDEV_TOTAL = dgarray._core._ndevices()
NDEVS = sorted({1, min(4, NDEV_TOTAL)})


@pytest.fixture(params=NDEVS, ids=lambda n: f"{n}dev")
def ndev(request):
    """How many devices a test's index maps may use: 1 and up to 4."""
    return request.param


def pytest_report_header(config):
    logical = os.environ.get("DGARRAY_CUDA_DEVICES") if dgarray.backend() == "cuda" else None
    return (f"dgarray backend: {dgarray.backend()}, {NDEV_TOTAL} device(s)"
            f"{f' (DGARRAY_CUDA_DEVICES={logical})' if logical else ''}; tests use {NDEVS}")


def pytest_collection_finish(session):
    """What collection made (every test item: tens of thousands) and the
    modules are moved out of the garbage collector's sight: no_leak's
    collections then visit what the tests make, not the whole session."""
    gc.collect()
    gc.freeze()


def _live_arrays():
    """{id: (array, holder type names)} of the DistributedArrays that objects
    the garbage collector tracks refer to (DistributedArray itself is not
    tracked): where memory still in use is held from Python."""
    found = {}
    gc.unfreeze()  # the objects frozen after collection too (a module's list)
    try:
        for o in gc.get_objects():
            for r in gc.get_referents(o):
                if isinstance(r, dgarray.DistributedArray):
                    found.setdefault(id(r), (r, set()))[1].add(type(o).__name__)
    finally:
        gc.freeze()
    return found


@pytest.fixture
def no_leak():
    """Device memory in use returns to where it was when the test ends; if
    not, the message names the arrays Python still holds (none: the memory is
    held below Python)."""
    gc.collect()
    dgarray._core._sync_all()
    base = dgarray._core._bytes_in_use()
    yield
    gc.collect()
    dgarray._core._sync_all()
    now = dgarray._core._bytes_in_use()
    if now != base:
        held = [f"{r.shape} {r.dtype} held by {sorted(h)}"
                for r, h in _live_arrays().values()]
        assert now == base, f"bytes in use per device {base} -> {now}; arrays still " \
            f"held: {held or 'none'}"


@pytest.fixture
def pieces():
    """Host copies cut into pieces of at most `n` bytes for the test
    (dgarray._core._piece_bytes), restored after it."""
    olds = []

    def set_bytes(n):
        olds.append(dgarray._core._piece_bytes(n))
    yield set_bytes
    if olds:
        dgarray._core._piece_bytes(olds[0])


@pytest.fixture
def progress():
    """dgarray.config.progress, restored after the test."""
    old = dgarray.config.progress
    yield
    dgarray.config.progress = old
