"""Weak and strong scaling of dgarray over the GPUs it sees.

Run once per GPU count (fewer GPUs by CUDA_VISIBLE_DEVICES on the largest
machine lent), each run appending its rows to a JSON file; then `--plot`
turns the file into a Markdown table of efficiencies and a PNG.

    CUDA_VISIBLE_DEVICES=0 python benchmarks/scaling.py --out results/scaling.json
    python benchmarks/scaling.py --out results/scaling.json      # all GPUs
    python benchmarks/scaling.py --out results/scaling.json --plot results/scaling

Weak scaling keeps the work per GPU fixed (efficiency: rate(n) / (n rate(1)));
strong scaling keeps the total fixed (efficiency: t(1) / (n t(n))).  Rows:
elementwise add and a full sum (2^27 float32 per GPU, or 2^28 in all), a
reshard moving 128 MiB per GPU to the next GPU (its rate against NCCL's
all-to-all of the same bytes in the same run), and float64 matmul (4096^2 per
GPU weak, 8192^2 strong; 16384^2 per GPU when --big) where dgarray has it.
"""
import argparse
import json
import os
import sys

import numpy as np

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import dgarray as dg  # noqa: E402
from _timing import best_of  # noqa: E402




def rows_map(n, ndev):
    return {d: slice(n * d // ndev, n * (d + 1) // ndev) for d in range(ndev)}


def elementwise(n, ndev):
    a = dg.ones(n, np.float32, index_map=rows_map(n, ndev))
    b = dg.ones(n, np.float32, index_map=rows_map(n, ndev))
    t = best_of(lambda: (a + b)._sync(), 10)
    return 3 * 4 * n / t / 1e9, "GB/s"


def reduction(n, ndev):
    a = dg.ones(n, np.float32, index_map=rows_map(n, ndev))
    assert float(a.sum()) == n
    t = best_of(lambda: a.sum()._sync(), 10)
    return 4 * n / t / 1e9, "GB/s"


def reshard(n, ndev):
    """Every GPU's block to the next GPU (a ring shift of whole blocks)."""
    if ndev < 2:
        return None, "GB/s"
    m = rows_map(n, ndev)
    shifted = {(d + 1) % ndev: m[d] for d in range(ndev)}
    a = dg.ones(n, np.float32, index_map=m)
    t = best_of(lambda: a.reshard(shifted)._sync(), 5)
    per_dev = 4 * n // ndev
    return per_dev / t / 1e9, "GB/s per GPU"


def matmul(side, ndev):
    if not hasattr(dg, "matmul"):
        return None, "TFLOP/s"
    a = dg.ones((side, side), np.float64, index_map=rows_map(side, ndev))
    b = dg.ones((side, side), np.float64, index_map=rows_map(side, ndev))
    c = a @ b
    assert float(c.sum()) == float(side) ** 3, "matmul differs"
    t = best_of(lambda: (a @ b)._sync(), 3, 1)
    return 2 * side ** 3 / t / 1e12, "TFLOP/s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--plot")
    ap.add_argument("--big", action="store_true")
    args = ap.parse_args()
    if args.plot:
        return plot(args.out, args.plot)
    ndev = len(dg.devices())
    per = 1 << 27
    mm_weak = 16384 if args.big else 4096
    cases = [
        ("add_f32", "weak", lambda: elementwise(per * ndev, ndev)),
        ("add_f32", "strong", lambda: elementwise(1 << 28, ndev)),
        ("sum_f32", "weak", lambda: reduction(per * ndev, ndev)),
        ("sum_f32", "strong", lambda: reduction(1 << 28, ndev)),
        ("reshard_ring", "weak", lambda: reshard((32 << 20) * ndev, ndev)),
        ("matmul_f64", "weak", lambda: matmul(int(round(mm_weak * ndev ** (1 / 3))), ndev)),
        ("matmul_f64", "strong", lambda: matmul(8192, ndev)),
    ]
    rows = []
    for name, kind, f in cases:
        try:
            v, unit = f()
        except Exception as e:  # noqa: BLE001 - a row that cannot run is recorded as such
            print(f"{name} {kind}: failed: {e}", file=sys.stderr)
            v, unit = None, "-"
        rows.append({"workload": name, "scaling": kind, "gpus": ndev, "value": v, "unit": unit,
                     "backend": dg.backend()})
        print(f"{ndev} device(s) {name:14} {kind:6} {v if v is None else round(v, 1)} {unit}",
              flush=True)
    if ndev > 1:  # the all-to-all the reshard rows are set against
        blk = (32 << 20) * 4 // ndev
        pairs = [(i, j) for i in range(ndev) for j in range(ndev) if i != j]
        tn = dg._core._bench_exchange(pairs, blk, 5)
        rows.append({"workload": "nccl_alltoall", "scaling": "weak", "gpus": ndev,
                     "value": blk * (ndev - 1) / tn / 1e9, "unit": "GB/s per GPU",
                     "backend": dg.backend()})
    old = []
    if os.path.exists(args.out):
        with open(args.out) as fh:
            old = [r for r in json.load(fh) if r["gpus"] != ndev]
    with open(args.out, "w") as fh:
        json.dump(old + rows, fh, indent=1)


def plot(path, stem):
    """Markdown table of efficiencies and a PNG of them from the JSON rows."""
    with open(path) as fh:
        rows = json.load(fh)
    keys = sorted({(r["workload"], r["scaling"]) for r in rows})
    counts = sorted({r["gpus"] for r in rows})
    val = {(r["workload"], r["scaling"], r["gpus"]): r["value"] for r in rows}
    lines = ["| workload | scaling | " + " | ".join(f"{n} GPU" for n in counts) +
             " | efficiency at the most GPUs |", "|---|---|" + "---|" * (len(counts) + 1)]
    eff = {}
    for w, k in keys:
        vs = [val.get((w, k, n)) for n in counts]
        base = val.get((w, k, 1))
        top = counts[-1]
        e = None
        if base and val.get((w, k, top)):
            e = val[(w, k, top)] / (top * base) if w != "reshard_ring" and \
                w != "nccl_alltoall" else val[(w, k, top)] / base
        eff[(w, k)] = e
        cells = ["-" if v is None else f"{v:,.1f}" for v in vs]
        lines.append(f"| {w} | {k} | " + " | ".join(cells) + " | " +
                     ("-" if e is None else f"{100 * e:.0f}%") + " |")
    with open(stem + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        for w, k in keys:
            xs = [n for n in counts if val.get((w, k, n)) is not None]
            if not xs or val.get((w, k, 1)) in (None, 0):
                continue
            b = val[(w, k, 1)]
            ys = [val[(w, k, n)] / (n * b) for n in xs]
            ax.plot(xs, ys, marker="o", label=f"{w} ({k})")
        ax.set_xlabel("GPUs")
        ax.set_ylabel("efficiency (1 = linear)")
        ax.set_ylim(0, 1.2)
        ax.set_xticks(counts)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(stem + ".png", dpi=120)
    except Exception as e:  # noqa: BLE001 - the table stands without the picture
        print(f"no plot: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
