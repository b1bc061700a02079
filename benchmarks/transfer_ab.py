"""The rows that move data between GPUs, under each transfer setting on the
same machine: DGARRAY_TRANSFER=nccl against =copy (peer copies, the
default where the GPUs are peers), in alternating rounds, each in a fresh process (the setting is read
when the backend starts).  dgarray alone, timed as benchmarks/run.py times
its rows; no peers.

    python benchmarks/transfer_ab.py [--rounds 3] [--transfers nccl,copy]

Each line: one process, its setting and its rows (TFLOP/s for the products,
GB/s for the moves, ms per iteration for CG).  Needs 2 GPUs; on the CPU
backend the sizes shrink (DGARRAY_AB_SMALL=1 is set for it) so that the
script itself can be checked.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows():
    """One process's rows, printed on one line."""
    import numpy as np
    import dgarray as dg
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from _timing import best_of, done
    import _cg

    small = os.environ.get("DGARRAY_AB_SMALL") == "1"
    ndev = len(dg.devices())
    n, big, ncg = (128, 1 << 12, 256) if small else (8192, 1 << 28, 32768)
    rng = np.random.default_rng(3)
    out = []

    x = rng.standard_normal((n, n)).astype(np.float32)
    y = rng.standard_normal((n, n)).astype(np.float32)
    for dtype, tf32, name, reps in ((np.float32, True, "tf32", 20), (np.float32, False, "f32", 8),
                                    (np.float64, False, "f64", 5)):
        a, b = dg.asarray(x.astype(dtype)), dg.asarray(y.astype(dtype))
        dg.config.allow_tf32 = tf32
        try:
            out.append(f"{name} {2.0 * n ** 3 / best_of(lambda: done(a @ b), reps, 1) / 1e12:.1f}")
        finally:
            dg.config.allow_tf32 = False
        del a, b

    # a + c.reshard(a.index_map), 1/8 of c elsewhere (run.py's shifted map)
    xx = rng.standard_normal(big, dtype=np.float32)
    yy = rng.standard_normal(big, dtype=np.float32)
    s = big // (8 * ndev)
    amap = {d: slice(big * d // ndev, big * (d + 1) // ndev) for d in range(ndev)}
    cmap = {d: slice(big * d // ndev + s, big * (d + 1) // ndev + s) for d in range(ndev - 1)}
    cmap[ndev - 1] = [slice(big * (ndev - 1) // ndev + s, big), slice(0, s)]
    a, c = dg.distributed_array(xx, amap), dg.distributed_array(yy, cmap)
    t = best_of(lambda: (a + c.reshard(a.index_map))._sync(), 20)
    out.append(f"add_reshard {12 * big / t / 1e9:.0f}")
    del a, c

    nb = (128 << 20) if not small else 4 * big
    a = dg.distributed_array(xx[: nb // 4], {0: slice(None)})
    to = {ndev - 1: slice(None)}
    out.append(f"reshard {nb / best_of(lambda: a.reshard(to)._sync(), 20) / 1e9:.1f}")
    del a

    _cg.np = dg
    m = dg.asarray(np.random.default_rng(5).standard_normal((ncg, 64)) / 8.0)
    A = dg.tensordot(m, m, axes=([1], [1])) + dg.eye(ncg) * ncg
    A = A.reshard({d: slice(ncg * d // ndev, ncg * (d + 1) // ndev) for d in range(ndev)})
    b = dg.asarray(np.random.default_rng(6).standard_normal(ncg))
    t = [best_of(lambda: float(_cg.cg_solve(A, b, 0.0, k).sum()), 3, 1) for k in (5, 45)]
    out.append(f"cg {1e3 * (t[1] - t[0]) / 40:.4f}")
    print(" ".join(out), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from _ab import cli
    sys.exit(cli(__file__, "DGARRAY_TRANSFER", "--transfers", "nccl,copy", rows, __doc__,
                 rounds=3))
