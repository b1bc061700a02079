"""NCCL's point-to-point speed between two GPUs under the settings that
change it, through dgarray's own exchange (the backend's send/recv group on
raw buffers): which configuration a reshard can expect.

Each setting runs in a fresh process (NCCL reads its environment when the
communicator is made).  Prints one row per setting: GB/s of a 128 MiB and a
1 GiB send from GPU 0 to GPU 1, and of both directions at once (2 x 1 GiB).

    python benchmarks/nccl_sweep.py
"""
import os
import subprocess
import sys

SETTINGS = [
    {},
    {"NCCL_P2P_NVL_CHUNKSIZE": str(2 << 20)},
    {"NCCL_P2P_NVL_CHUNKSIZE": str(4 << 20), "NCCL_BUFFSIZE": str(16 << 20)},
    {"NCCL_MIN_P2P_NCHANNELS": "32", "NCCL_MAX_P2P_NCHANNELS": "32"},
    {"NCCL_NCHANNELS_PER_NET_PEER": "16", "NCCL_MIN_P2P_NCHANNELS": "16"},
    {"NCCL_P2P_USE_CUDA_MEMCPY": "1"},
    {"NCCL_PROTO": "Simple"},
    {"DGARRAY_TRANSFER": "copy"},
]

CHILD = r"""
import dgarray as dg
b = dg._core._bench_exchange
row = []
for nb in (128 << 20, 1 << 30):
    row.append(nb / b([(0, 1)], nb, 10) / 1e9)
row.append(2 * (1 << 30) / b([(0, 1), (1, 0)], 1 << 30, 5) / 1e9)
print(" ".join(f"{v:.1f}" for v in row))
"""


def main():
    env0 = dict(os.environ, NCCL_NVLS_ENABLE="0", DGARRAY_BACKEND="cuda")
    print("| setting | 128 MiB 0->1 | 1 GiB 0->1 | 2 x 1 GiB both ways |")
    print("|---|---|---|---|")
    for extra in SETTINGS:
        env = dict(env0, **extra)
        name = " ".join(f"{k}={v}" for k, v in extra.items()) or "NCCL defaults"
        try:
            r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                               text=True, timeout=120)
            vals = r.stdout.split() if r.returncode == 0 else \
                ["failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:60]] * 3
        except subprocess.TimeoutExpired:
            vals = ["timeout"] * 3
        print(f"| {name} | " + " | ".join(vals) + " |", flush=True)


if __name__ == "__main__":
    main()
