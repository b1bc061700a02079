"""Timing shared by the benchmark scripts."""
import time


def times(f, reps=5, warm=2):
    """Seconds of `reps` calls of f after `warm` unmeasured ones."""
    for _ in range(warm):
        f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return ts


def best_of(f, reps=5, warm=2):
    """The fastest of `reps` timed calls of f (after `warm` untimed ones)."""
    return min(times(f, reps, warm))


def done(r):
    """Waits until a dgarray result (or a tuple of them) is complete and
    readable: a result left in an op mode is combined first, and the time
    counts that too."""
    if isinstance(r, tuple):
        for x in r:
            done(x)
        return
    if r.mode != "replica":
        r = r.change_mode("replica")
    r._sync()
