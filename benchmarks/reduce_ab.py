"""Full reductions under each setting of DGARRAY_RED_WAVES on the same
machine: `auto` (the default: up to 4 waves of blocks, a wave beyond the
first only while each thread keeps 128 loads) against fixed waves, in
alternating rounds, each in a fresh process (the setting is read when the
backend starts).  dgarray alone: a.sum() and a.argmax() of 2^27 and 2^28
float32 over all devices, each the best and the median of 60 calls (us).

    python benchmarks/reduce_ab.py [--rounds 4] [--waves auto,4]

On the CPU backend the sizes shrink (DGARRAY_AB_SMALL=1 is set for it) so
that the script itself can be checked; the setting means nothing there.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows():
    """One process's rows, printed on one line."""
    import numpy as np
    import dgarray as dg
    sys.path.insert(0, HERE)
    from _timing import done, times

    small = os.environ.get("DGARRAY_AB_SMALL") == "1"
    out = []
    for lg in ((12, 13) if small else (27, 28)):
        x = np.random.default_rng(1).standard_normal(1 << lg, dtype=np.float32)
        a = dg.asarray(x)
        if int(a.argmax()) != int(x.argmax()):
            raise SystemExit(f"argmax of 2^{lg} elements: {int(a.argmax())}, NumPy "
                             f"{int(x.argmax())}")
        for name in ("sum", "argmax"):
            ts = times(lambda: done(getattr(a, name)()), 60, 5)
            out.append(f"{name}_2^{lg} {min(ts) * 1e6:.1f}/{np.median(ts) * 1e6:.1f}")
        del a
    print(" ".join(out), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from _ab import cli
    sys.exit(cli(__file__, "DGARRAY_RED_WAVES", "--waves", "auto,4", rows, __doc__, rounds=4))
