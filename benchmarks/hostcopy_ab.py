"""Host copies of 1 GiB (run.py's h2d_1GiB and d2h_1GiB rows) under each
setting of the host copies, in alternating rounds, each in a fresh process
(the settings are read once): DGARRAY_HOST_CACHE_BYTES (default: the blocks
of arrays read from the devices are kept for the next read of their size, so
`a.get()` again reads into touched memory; 0: every read into fresh memory),
DGARRAY_D2H_TOUCH (1: a device-to-host copy faults its fresh destination in
beside the DMAs; 0, the default: inside the unpack), DGARRAY_COPY_THREADS
(threads sharing a copy; default one a core, at most 16) and DGARRAY_HOST_PIN
(default 1: a kept block taken again is page-locked, and reads into it are one
DMA; 0: kept blocks stay pageable and reads go through the staging buffers).

    python benchmarks/hostcopy_ab.py [--rounds 2] [--mib 1024]

Each line: one process, its settings, h2d and d2h in ms (best of 5, after 2
unmeasured, each `a.get()` a new array).
"""
import argparse
import os
import subprocess
import sys

# (DGARRAY_HOST_CACHE_BYTES or None for the default, touch, threads, pin)
SETTINGS = [(None, "0", "16", "1"), (None, "0", "16", "0"), (None, "1", "16", "0"),
            ("0", "0", "16", "1"), ("0", "0", "8", "1"), ("0", "1", "16", "1")]


def rows(mib):
    import numpy as np
    import dgarray as dg
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _timing import best_of
    x = np.random.default_rng(0).standard_normal((mib << 20) // 4, dtype=np.float32)
    t_h2d = best_of(lambda: dg.asarray(x)._sync(), 5)
    a = dg.asarray(x)
    t_d2h = best_of(lambda: a.get(), 5)
    assert np.array_equal(a.get(), x)
    print(f"h2d {1e3 * t_h2d:.2f} ms  d2h {1e3 * t_d2h:.2f} ms", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        rows(args.mib)
        return
    for r in range(args.rounds):
        for cache, touch, threads, pin in SETTINGS:
            env = dict(os.environ, DGARRAY_D2H_TOUCH=touch, DGARRAY_COPY_THREADS=threads,
                       DGARRAY_HOST_PIN=pin)
            if cache is not None:
                env["DGARRAY_HOST_CACHE_BYTES"] = cache
            p = subprocess.run([sys.executable, __file__, "--child", "--mib", str(args.mib)],
                               env=env, capture_output=True, text=True, timeout=300)
            out = p.stdout.strip() or p.stderr.strip().splitlines()[-1:]
            print(f"round {r} cache={cache or 'default'} touch={touch} threads={threads:>2} "
                  f"pin={pin}: {out}", flush=True)


if __name__ == "__main__":
    main()
