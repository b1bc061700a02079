"""Ctrl-C during long work: a SIGINT sent from a thread stops a host wait
(get() of an array whose computation is still queued) within a wait slice,
raises KeyboardInterrupt, and leaves the arrays and devices usable; the same
for a long Python loop of operations."""
import signal
import threading
import time

import numpy as np
import pytest

import dgarray as dg


@pytest.fixture
def sigint():
    """A function that sends SIGINT to this (main) thread after `delay`
    seconds, with Python's default handler installed for the test."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timers = []

    def send(delay):
        main = threading.main_thread().ident
        t = threading.Timer(delay, signal.pthread_kill, (main, signal.SIGINT))
        t.start()
        timers.append(t)
    yield send
    for t in timers:
        t.cancel()
        t.join()
    signal.signal(signal.SIGINT, old)


def chain(x, k):
    """k elementwise ops queued on the devices."""
    for _ in range(k):
        x = np.sin(x) + 0.5
    return x


def ops_for(x, seconds):
    """How many chain steps on x take about `seconds` on this machine."""
    chain(x, 1)._sync()
    t = time.perf_counter()
    chain(x, 4)._sync()
    per_op = (time.perf_counter() - t) / 4
    return max(4, min(2000, int(seconds / max(per_op, 1e-4))))


def test_interrupting_get_of_queued_work(sigint):
    n = 4_000_000
    host = np.random.default_rng(0).random(n)
    x = dg.asarray(host)
    k = ops_for(x, 2.0)                            # about two seconds of work
    t0 = time.perf_counter()
    y = chain(x, k)
    sigint(0.3)
    with pytest.raises(KeyboardInterrupt):
        y.get()
    t_int = time.perf_counter()
    got = y.get()                                 # the work went on; read again
    t_done = time.perf_counter()
    assert t_done - t_int > 0.25, (t_int - t0, t_done - t0)  # stopped well before the end
    want = chain(host[:1000], k)
    np.testing.assert_allclose(got[:1000], want, rtol=1e-12)
    # the devices still work
    z = (y * 2).sum()
    np.testing.assert_allclose(float(z), got.sum() * 2, rtol=1e-9)
    assert float(dg.random.default_rng(1).random(10).sum()) > 0


def test_interrupting_a_loop_of_operations(sigint):
    x = np.arange(1000.0)
    a = dg.asarray(x)
    sigint(0.3)
    count = 0
    with pytest.raises(KeyboardInterrupt):
        for _ in range(10 ** 8):
            a += 1
            count += 1
    d = (a - dg.asarray(x)).get()
    assert (d == d[0]).all() and count <= d[0] <= count + 1
    np.testing.assert_array_equal((a * 0).get(), np.zeros(1000))


def test_interrupting_sync_all(sigint):
    x = dg.asarray(np.random.default_rng(1).random(4_000_000))
    y = chain(x, ops_for(x, 1.5))
    sigint(0.3)
    t = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        dg._core._sync_all()
    t_int = time.perf_counter()
    dg._core._sync_all()
    assert time.perf_counter() - t_int > 0.2, t_int - t
    assert np.isfinite(y.get()).all()
