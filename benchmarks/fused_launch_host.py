"""The host's cost of a fused kernel's launch, less the CUDA calls, without
a GPU: the chain sqrt(a*a + b*b) + 2*sin(a) - b/3 of float32 (a piece of
2^27 elements: 2^28 over two GPUs), the long way cuda_fused.c took for each
piece before its memo (a 64 KiB buffer, the source and argument words, the
run-time compiler's key, hash and memory cache) against the memoized way
(the kernel's key, its hash, the memo's lookup, the argument words)
(dgarray._core._fused_host_cost; NVRTC compiles the kernel once first).
Not counted either way: the CUDA calls (the long way also asked the compute
capability and the driver's version each time; the launch itself).

    python benchmarks/fused_launch_host.py [--reps N] [--rounds R]

Prints microseconds per launch, best and median of R rounds of N launches,
with the load average and the process's CPU time."""
import argparse
import os
import resource
import statistics
import sys

import dgarray as dg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from test_fused_key import chain  # noqa: E402

core = dg._core


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    ok, why = core._rtc_available()
    if not ok:
        sys.exit(f"NVRTC is needed: {why}")
    piece = chain(1 << 27)
    print(f"load {os.getloadavg()[0]:.2f}   (us per launch, {a.rounds} rounds of {a.reps})")
    print(f"{'check':>5} {'path':>8} {'best':>8} {'median':>8} {'cpu':>8}")
    for check in (0, 1):
        for memo, name in ((0, "long"), (1, "memo")):
            reps = a.reps if memo else max(a.reps // 10, 1)
            times = []
            core._fused_host_cost(*piece, check, 1, memo)  # NVRTC's compile, not timed
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            for _ in range(a.rounds):
                sec, hits = core._fused_host_cost(*piece, check, reps, memo)
                assert hits == reps
                times.append(sec * 1e6)
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            cpu = ((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)) * 1e6 / (
                reps * a.rounds)
            print(f"{check:>5} {name:>8} {min(times):8.2f} {statistics.median(times):8.2f} "
                  f"{cpu:8.2f}")


if __name__ == "__main__":
    main()
