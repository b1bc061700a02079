"""Test set-up: 4 virtual CPU devices unless the environment says otherwise,
and small arrays split by default so that sharding is exercised."""
import os

os.environ.setdefault("DGARRAY_CPU_DEVICES", "4")
os.environ.setdefault("DGARRAY_MIN_SPLIT_BYTES", "0")

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
    return (f"dgarray backend: {dgarray.backend()}, {NDEV_TOTAL} device(s); "
            f"tests use {NDEVS}")


@pytest.fixture
def no_leak():
    """Device memory in use returns to where it was when the test ends."""
    gc.collect()
    dgarray._core._sync_all()
    base = dgarray._core._bytes_in_use()
    yield
    gc.collect()
    dgarray._core._sync_all()
    assert dgarray._core._bytes_in_use() == base


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
