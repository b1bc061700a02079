"""Small programs tests/test_multihost.py runs as MPI jobs ([multihost]):
``python _mpi_scripts.py NAME``.  Each prints what the test reads."""
import io
import os
import signal
import sys
import time

import numpy as np

import dgarray as dg
from dgarray import distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cg import cg_solve  # noqa: E402


def cg():
    """The CG solver of tests/_cg.py, a single-process program unchanged,
    on a fixed system: its solution's digits (the same in one process as
    in a job of several over as many devices)."""
    rng = np.random.default_rng(0)
    m = rng.standard_normal((96, 96))
    A = dg.asarray(m @ m.T + 96 * np.eye(96))
    b = dg.asarray(rng.standard_normal(96))
    x = cg_solve(A, b)
    dist.print("solution", repr(np.asarray(x).tolist()))
    dist.print("residual", repr(float(dg.linalg.norm(A @ x - b))))


def alone():
    """DGARRAY_DISTRIBUTED=0 under a launcher: every process on its own."""
    print("alone", dist.process_count(), len(dg.devices()), len(dg.local_devices()), flush=True)


def explicit():
    """DGARRAY_DISTRIBUTED=0, then initialize() with explicit arguments."""
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
    dist.initialize(num_processes=int(sys.argv[2]), process_id=rank)
    x = np.arange(40.0).reshape(8, 5)
    a = dg.asarray(x)
    n = len(dg.devices())
    b = a.reshard({d: (slice(None), slice(5 * d // n, 5 * (d + 1) // n)) for d in range(n)
                   if 5 * (d + 1) // n > 5 * d // n})
    ok = np.array_equal(np.asarray(b + 1), x + 1)
    print("explicit", dist.process_index(), dist.process_count(), n, ok, flush=True)


def fault():
    """Process 1 dies (SIGKILL) with a reshard half done; process 0 must
    raise dgarray.DeviceError, not hang."""
    n = len(dg.devices())
    x = np.arange(1 << 20, dtype=np.float64).reshape(1024, 1024)
    a = dg.asarray(x)
    cols = {d: (slice(None), slice(1024 * d // n, 1024 * (d + 1) // n)) for d in range(n)}
    t0 = time.monotonic()
    if dist.process_index() == 1:
        a.reshard(cols)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.5)
    try:
        b = a.reshard(cols)
        print("no error", float(b.sum()), flush=True)
    except dg.DeviceError as e:
        print(f"DeviceError after {time.monotonic() - t0:.1f} s: {e}", flush=True)
    os._exit(0)  # MPI's finalize would wait for the dead process


def exit_with_work():
    """The program ends with transfers still queued (a result never read):
    the job ends cleanly (every process drains before MPI finalizes)."""
    x = np.arange(1 << 18, dtype=np.float64).reshape(512, 512)
    n = len(dg.devices())
    b = dg.asarray(x).reshard({d: (slice(None), slice(512 * d // n, 512 * (d + 1) // n))
                               for d in range(n)})
    b * 2  # noqa: B018 (never read)
    dist.print("ended")


def late_barrier():
    """Process 1 comes to the barrier three times the job's timeout late:
    process 0's barrier raises DeviceError instead of waiting for it."""
    t0 = time.monotonic()
    if dist.process_index() == 1:
        time.sleep(3 * float(os.environ["DGARRAY_DISTRIBUTED_TIMEOUT"]))
    try:
        dist.barrier()
        print(f"rank {dist.process_index()} no error", flush=True)
    except dg.DeviceError as e:
        print(f"rank {dist.process_index()} DeviceError after {time.monotonic() - t0:.1f} s: "
              f"{e}", flush=True)
    os._exit(0)  # MPI's finalize would wait for the other process


def printing():
    """What a job prints: print(...) with an array among its arguments,
    show_layout and a long copy's progress once (on process 0), everything
    else on every process."""
    x = np.arange(12.0).reshape(3, 4)
    a = dg.asarray(x)
    r = dist.process_index()
    print("array", a)
    print("total", a.sum(), "of", a, file=sys.stderr)
    dg.show_layout(a)
    print(f"rank {r} plain")
    text = repr(a)
    print("text", all(t == text for t in dist.allgather(text)), text == repr(x))
    buf = io.StringIO()
    print("mine", a, file=buf)
    print("captured", buf.getvalue() == f"mine {x}\n")
    dist.print("once", a)
    # a long copy's progress: on process 0 only (a line after each of 4 pieces)
    dg.config.progress = "always"
    old = dg._core._piece_bytes(1024)
    big = np.arange(512.0)
    eq = np.array_equal(dg.asarray(big).get(), big)
    dg._core._piece_bytes(old)
    dg.config.progress = True
    # every process made the reads of the prints above: the job goes on
    print("after", float(a.sum()), np.array_equal(np.asarray(a), x) and eq, flush=True)


if __name__ == "__main__":
    {"cg": cg, "alone": alone, "explicit": explicit, "fault": fault,
     "exit_with_work": exit_with_work, "printing": printing,
     "late_barrier": late_barrier}[sys.argv[1]]()
