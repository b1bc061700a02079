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
    seconds (Python's default handler installed for the test); it returns
    the timer, whose `sent` attribute is when the signal went."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timers = []

    def send(delay):
        main = threading.main_thread().ident

        def fire():
            t.sent = time.perf_counter()
            signal.pthread_kill(main, signal.SIGINT)
        t = threading.Timer(delay, fire)
        t.sent = None
        t.start()
        timers.append(t)
        return t
    yield send
    for t in timers:
        t.cancel()
        t.join()
    signal.signal(signal.SIGINT, old)


# big enough for GPUs to be busy longer than the host takes to queue the work
N = 4_000_000 if dg.backend() == "cpu" else 1 << 25


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
    return max(4, min(20000, int(seconds / max(per_op, 1e-5))))


def interrupted_wait(sigint, queue, wait):
    """Queues work (queue() returns it), sends SIGINT 0.3 s later while
    wait(work) blocks, then waits again in full.  Retries with three times
    the work while the work ends before the signal (a loaded machine).
    Returns (work, its scale, signal sent, KeyboardInterrupt raised or None,
    end)."""
    for scale in (1, 3, 9, 27):
        t0 = time.perf_counter()
        work = queue(scale)
        timer = sigint(0.3)
        raised = None
        try:
            try:
                wait(work)
            except KeyboardInterrupt:
                raised = time.perf_counter()
            timer.join()
            time.sleep(0.05)       # a signal that came after the wait is raised here
        except KeyboardInterrupt:
            pass
        wait(work)
        end = time.perf_counter()
        if raised is not None and end - t0 > 1.0:
            break
    return work, scale, timer.sent, raised, end


def test_interrupting_get_of_queued_work(sigint):
    host = np.random.default_rng(0).random(N)
    x = dg.asarray(host)
    k = ops_for(x, 1.5)
    y, scale, sent, raised, end = interrupted_wait(sigint, lambda s: chain(x, k * s),
                                                   lambda y: y.get())
    assert raised is not None, "the wait did not stop for the signal"
    assert raised - sent < 0.25 and end - raised > 0.25, (sent, raised, end)
    # the work went on to the end, and the devices still work
    got = y.get()
    np.testing.assert_allclose(got[:1000], chain(host[:1000], k * scale), rtol=1e-12)
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
    x = dg.asarray(np.random.default_rng(1).random(N))
    k = ops_for(x, 1.5)
    y, _, sent, raised, end = interrupted_wait(sigint, lambda s: chain(x, k * s),
                                               lambda y: dg._core._sync_all())
    assert raised is not None, "the wait did not stop for the signal"
    assert raised - sent < 0.25 and end - raised > 0.25, (sent, raised, end)
    assert np.isfinite(y.get()).all()
