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


CPU = dg.backend() == "cpu"
# On GPUs each queued operation must be long: a stream holds about a
# thousand launches, after which queueing itself waits for the devices, so
# a chain of short ops would be spent before the signal comes.  There the
# chain multiplies an 8192^2 matrix by the identity (exact, ~10 ms a step).
N = 4_000_000 if CPU else 1 << 26
_EYE = None


def chain(x, k):
    """k operations queued on the devices (on the host for NumPy arrays)."""
    global _EYE
    if CPU or isinstance(x, np.ndarray):
        for _ in range(k):
            x = np.sin(x) + 0.5
        return x
    if _EYE is None:
        _EYE = dg.eye(8192)
    for _ in range(k):
        x = x @ _EYE
    return x


def operand(host):
    """The array the chain runs on: host's values, an 8192^2 matrix on GPUs."""
    return dg.asarray(host if CPU else host.reshape(8192, 8192))


def expected(host, k):
    """The first 1000 values of chain(operand(host), k)."""
    return chain(host[:1000], k) if CPU else host[:1000]


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
    x = operand(host)
    k = ops_for(x, 1.5)
    y, scale, sent, raised, end = interrupted_wait(sigint, lambda s: chain(x, k * s),
                                                   lambda y: y.get())
    assert raised is not None, "the wait did not stop for the signal"
    assert raised - sent < 0.25 and end - raised > 0.25, (sent, raised, end)
    # the work went on to the end, and the devices still work
    got = y.get().ravel()
    np.testing.assert_allclose(got[:1000], expected(host, k * scale), rtol=1e-12)
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
    x = operand(np.random.default_rng(1).random(N))
    k = ops_for(x, 1.5)
    y, _, sent, raised, end = interrupted_wait(sigint, lambda s: chain(x, k * s),
                                               lambda y: dg._core._sync_all())
    assert raised is not None, "the wait did not stop for the signal"
    assert raised - sent < 0.25 and end - raised > 0.25, (sent, raised, end)
    assert np.isfinite(y.get()).all()
