"""NCCL transfers cut into several sends (DGARRAY_NCCL_SPLIT): the reshard
rows and the raw exchange under each cut, one fresh process per setting.

    python benchmarks/nccl_split.py
"""
import os
import subprocess
import sys

CHILD = r"""
import time, numpy as np, dgarray as dg
def best(f, n=10):
    f(); f()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return min(ts)
b = dg._core._bench_exchange
one = 128 << 20
x1 = 64 << 20
N = 1 << 28
rows = {0: slice(0, N // 2), 1: slice(N // 2, N)}
s = N // 16
cmap = {0: slice(s, N // 2 + s), 1: [slice(N // 2 + s, N), slice(0, s)]}
a = dg.ones(N, np.float32, index_map=rows)
c = dg.ones(N, np.float32, index_map=cmap)
m = a.index_map
z = dg.ones(one // 4, np.float32, index_map={0: slice(None)})
r1 = one / b([(0, 1)], one, 10) / 1e9
r2 = 2 * x1 / b([(0, 1), (1, 0)], x1, 10) / 1e9
t3 = best(lambda: z.reshard({1: slice(None)})._sync())
t4 = best(lambda: (a + c.reshard(m))._sync())
assert float((a + c.reshard(m)).sum()) == 2.0 * N
print(f"{r1:.1f} {r2:.1f} {one / t3 / 1e9:.1f} {12 * N / t4 / 1e9:.1f}")
"""


def main():
    print("| DGARRAY_NCCL_SPLIT | exchange 128 MiB | exchange 2 x 64 MiB | reshard_128MiB | "
          "add_reshard_f32_2p28 |")
    print("|---|---|---|---|---|")
    for split in ("0", str(8 << 20), str(16 << 20), str(32 << 20)):
        env = dict(os.environ, NCCL_NVLS_ENABLE="0", DGARRAY_NCCL_SPLIT=split)
        r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                           text=True, timeout=120)
        vals = r.stdout.split() if r.returncode == 0 else [r.stderr.strip()[-80:]]
        print(f"| {split} | " + " | ".join(vals) + " |", flush=True)


if __name__ == "__main__":
    main()
