"""Where the time of run.py's take_f32_2p26 row goes: `dg.take(a, i)` whole,
the bounds check alone (the minimum and maximum of the indices, read on the
host), and the keyed row copy alone (`_core._take_rows` on indices known to
be in range), each in a fresh process per setting of DGARRAY_L2_FETCH_BYTES
(unset: the driver's L2 fetch size; 32: a miss fetches one sector, which
suits random 4-byte reads), with CuPy's take in the same process.

    python benchmarks/take_ab.py [--rounds 2] [--settings default,32]

Each line: one process, its setting, ms (best of 10) and the row's GB/s
(16 bytes an element: the index, the element read, the result written).
"""
import argparse
import os
import subprocess
import sys


def rows(n=1 << 26):
    import numpy as np
    import dgarray as dg
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _timing import best_of
    rng = np.random.default_rng(8)
    x = rng.standard_normal(n, dtype=np.float32)
    idx = rng.integers(0, n, n)
    a, i = dg.asarray(x), dg.asarray(idx)
    out = []
    t = best_of(lambda: dg.take(a, i)._sync(), 10)
    out.append(f"take {1e3 * t:.3f} ms ({16 * n / t / 1e9:.0f} GB/s)")
    t = best_of(lambda: (int(dg.min(i)), int(dg.max(i))), 10)
    out.append(f"bounds {1e3 * t:.3f}")
    t = best_of(lambda: dg._core._take_rows(a, i)._sync(), 10)
    out.append(f"rows {1e3 * t:.3f}")
    assert np.array_equal(dg.take(a, i).get(), x[idx])
    try:
        import cupy as cp
        ga, gi = cp.asarray(x), cp.asarray(idx)

        def f():
            cp.take(ga, gi)
            cp.cuda.Device().synchronize()
        t = best_of(f, 10)
        out.append(f"cupy {1e3 * t:.3f} ({16 * n / t / 1e9:.0f} GB/s)")
    except Exception as e:  # noqa: BLE001 - CuPy is optional
        out.append(f"cupy - ({type(e).__name__})")
    print("  ".join(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--settings", default="default,32")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        rows()
        return
    for r in range(args.rounds):
        for s in args.settings.split(","):
            env = dict(os.environ)
            env.pop("DGARRAY_L2_FETCH_BYTES", None)
            if s != "default":
                env["DGARRAY_L2_FETCH_BYTES"] = s
            p = subprocess.run([sys.executable, __file__, "--child"], env=env,
                               capture_output=True, text=True, timeout=300)
            out = p.stdout.strip() or p.stderr.strip().splitlines()[-1:]
            print(f"round {r} l2_fetch={s}: {out}", flush=True)


if __name__ == "__main__":
    main()
