"""The Jacobi row's two kernels under settings of the fused row kernel.

One step of benchmarks/run.py's Jacobi (`center[:] = 0.2 * (c + n + e + w +
s)` on the shifted slices of one float32 grid split by rows) is a fused
kernel that writes a temporary, then the copy of the temporary into the
interior.  For each setting of DGARRAY_FUSED_ROWS ("items,blocks": elements
per thread, least resident blocks per SM; "items,blocks,per_sm": and
blocks per SM in the launch, 16 by default; "items,blocks,per_sm,rr": the
streaming kernel's rows a step (1, or 2 by default; 0: the streaming kernel
off, so that Jacobi's chain takes the row kernel);
"default" unset), prints the
whole step (10 steps, best of 5, GB/s counted as run.py counts), the fused
expression alone (its result a new array), the copy alone (the ahead-of-time
strided kernel) and a copy of the same bytes between two dense arrays of one
layout (the contiguous kernel: what a copy can reach), then the fused
expression written into, and the copy read from, the interior of a second
grid (rows of the interior's own pitch and 16-byte phase, where the
temporary's rows are dense and their phase alternates), in GB/s of the bytes
each moves at least (2 x 4 bytes per interior element).  A setting "peer0" is the default with dgarray.config.peer_read_bytes
= 0 (the rows a piece needs from the neighbour copied, not read in place);
"ignore" the default under numpy.errstate(all='ignore') (the others run
under NumPy's default errstate: the kernels check their results).

    python benchmarks/fused_rows.py [--n 16384] [--settings "default 8,0 8,0,64 peer0"]
"""
import argparse
import os
import sys

import numpy as np

import dgarray as dg
from _timing import best_of
from run import jacobi_step, jacobi_views


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--settings", default="default 4,0 8,0 8,4",
                    help="space-separated settings (see above)")
    args = ap.parse_args()
    settings = args.settings.split()
    n, iters = args.n, args.iters
    ndev = len(dg.devices())
    rows = {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}
    x = np.random.default_rng(6).standard_normal((n, n), dtype=np.float32)
    g = dg.distributed_array(x, rows)
    c, no, so, we, ea = views = jacobi_views(g)
    interior = (n - 2) * (n - 2) * 4
    counted = (4 * 3 + 2 + 2) * interior + 2 * (ndev - 1) * (n - 2) * 4
    tmp = 0.2 * (c + no + ea + we + so)
    tmp._sync()
    print(f"dgarray on {dg.backend()}, {ndev} device(s), {n} x {n} float32")
    tmp2 = dg.empty_like(tmp)
    twin = dg.empty_like(g)
    ph = twin[1:-1, 1:-1]  # the interior's layout and phase, not aliasing g
    ph[...] = tmp
    print("| DGARRAY_FUSED_ROWS | step GB/s (run.py's count) | fused alone GB/s | copy alone GB/s "
          "| dense copy GB/s | fused into the interior's phase GB/s | copy from it GB/s |")
    print("|---|---|---|---|---|---|---|")
    peer = dg.config.peer_read_bytes
    for s in settings:
        dg.config.peer_read_bytes = 0 if s == "peer0" else peer
        if s in ("default", "peer0", "ignore"):
            os.environ.pop("DGARRAY_FUSED_ROWS", None)
        else:
            os.environ["DGARRAY_FUSED_ROWS"] = s

        def steps():
            for _ in range(iters):
                jacobi_step(*views)
            g._sync()

        def fused():
            (0.2 * (c + no + ea + we + so))._sync()

        def copy():
            c[...] = tmp
            g._sync()

        def copy_dense():
            tmp2[...] = tmp
            tmp2._sync()

        def fused_phase():
            ph[...] = 0.2 * (c + no + ea + we + so)
            twin._sync()

        def copy_phase():
            c[...] = ph
            g._sync()
        with np.errstate(all="ignore" if s == "ignore" else "warn", under="ignore"):
            t_step = best_of(steps, 5, 1) / iters
            t_fused = best_of(fused, 5, 1)
            t_copy = best_of(copy, 5, 1)
            t_cf = best_of(copy_dense, 5, 1)
            t_fp = best_of(fused_phase, 5, 1)
            t_cp = best_of(copy_phase, 5, 1)
        print(f"| {s} | {counted / t_step / 1e9:,.0f} | {2 * interior / t_fused / 1e9:,.0f} | "
              f"{2 * interior / t_copy / 1e9:,.0f} | {2 * interior / t_cf / 1e9:,.0f} | "
              f"{2 * interior / t_fp / 1e9:,.0f} | {2 * interior / t_cp / 1e9:,.0f} |")
        sys.stdout.flush()
    os.environ.pop("DGARRAY_FUSED_ROWS", None)
    dg.config.peer_read_bytes = peer


if __name__ == "__main__":
    main()
