"""How long does allocating a 2^28-float32 array take, on an idle machine and
right after an exchange or a loop was launched?  In the add_reshard
benchmark the result's allocation took 283-1,138 us on every call, right
after the NCCL launch, against 1-14 us for `a + a` (session 4's results).
This separates pool growth from contention with a transfer in flight.

    python benchmarks/alloc_probe.py [--reps 6]
"""
import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dgarray as dg  # noqa: E402
from dgarray import _core  # noqa: E402
from run import cda_rows_map, shifted_map  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--n", type=int, default=1 << 28)
    args = ap.parse_args()
    n, ndev = args.n, len(dg.devices())
    x = np.ones(n, np.float32)
    a = dg.distributed_array(x, cda_rows_map(n, ndev))
    c = dg.distributed_array(x, shifted_map(n, ndev) if ndev > 1 else cda_rows_map(n, ndev))
    _core._sync_all()
    def pause():
        time.sleep(0.002)

    before = {
        "idle": (lambda: None, None),
        "after a reshard's launch": (lambda: c.reshard(a.index_map), None),
        "2 ms after a reshard's": (lambda: c.reshard(a.index_map), pause),
        "after a + a's launch": (lambda: a + a, None),
        "after a + c's launch": (lambda: a + c, None),
        "idle again": (lambda: None, None),
    }
    sizes = [("full", n), ("second", n), ("1/8", n // 8), ("3 MiB", 3 << 18)]
    print(f"dgarray on {dg.backend()}, {ndev} device(s); dg.empty(size, float32) in us, "
          f"one after the other ({', '.join(f'{k}={v}' for k, v in sizes)})")
    for label, (launch, wait) in before.items():
        rows = {k: [] for k, _ in sizes}
        for _ in range(args.reps):
            pending = launch()
            if wait is not None:
                wait()
            held = []
            for k, m in sizes:
                t0 = time.perf_counter()
                held.append(dg.empty(m, np.float32))
                rows[k].append((time.perf_counter() - t0) * 1e6)
            _core._sync_all()
            del held, pending
        for k, ts in rows.items():
            print(f"  {label:26s} {k:7s}" + " ".join(f"{t:8.1f}" for t in ts))


if __name__ == "__main__":
    main()
