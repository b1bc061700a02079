"""One program over several processes ([multihost]; docs/multihost.md).

SPMD, as JAX's multi-controller runtime and Heat: every process of a job runs
the same script.  A process started by an MPI launcher (``mpirun``,
``mpiexec``, Slurm's ``srun``: their environment variables say how many
processes there are) joins the job when dgarray is imported, through
mpi4py's ``COMM_WORLD``; ``DGARRAY_DISTRIBUTED=0`` keeps each process on its
own, and a process started alone is one process, as always.  ``initialize``
joins with explicit arguments instead (before any array is made).

The devices of every process are numbered together, process by process:
``dgarray.devices()`` lists all of them, ``dgarray.local_devices()`` this
process's, and index maps name the job's devices.  Each process holds only
its own devices' chunks; every process computes the same plans and runs its
part of them, and data moves between processes by MPI messages (CPU
backend) or NCCL (GPUs).  Host data: ``asarray(x)`` with the same ``x`` on
every process, or ``make_array_from_process_local_data`` from each
process's own rows; reading an array (``get()``, ``numpy.asarray``,
``float``, ``bool``, ``item``, ``repr``) gives every process the same value.

Printing (as Heat's global printing): in a job, ``print(a, ...)`` with a
DistributedArray among its arguments prints once, on process 0, when it
writes to the process's own stdout or stderr (what the launcher gathers from
every process into one); every process still formats the arguments (reading
an array is a step of every process).  ``str(a)``, ``repr(a)`` and f-strings
give the same text on every process, and print of them prints on every
process, as print does in any MPI program: ``dgarray.distributed.print``
prints anything once.  Printing to another file (a StringIO, a log of one's
own, stdout redirected) writes on every process.
"""
import atexit as _atexit
import builtins as _builtins
import importlib as _importlib
import functools as _functools
import os as _os
import sys as _sys
import warnings as _warnings

import numpy as _numpy

from . import _core

_job = {"rank": 0, "size": 1, "comms": None}

# The variables of the launchers dgarray recognises: how many processes the
# launcher started (the job joins where it is more than 1).
_SIZE_VARIABLES = (
    "OMPI_COMM_WORLD_SIZE",  # Open MPI's mpirun / mpiexec
    "PMI_SIZE",              # MPICH's and Intel MPI's Hydra
    "PMIX_SIZE",             # PMIx launchers
    "SLURM_STEP_NUM_TASKS",  # srun (a job step)
    "WORLD_SIZE",            # torchrun's variables (with MPI's COMM_WORLD)
)


def _launched_size():
    """How many processes the launcher says the job has (1: none said)."""
    env = _os.environ
    for var in _SIZE_VARIABLES:
        value = env.get(var, "").strip()
        if value.isdigit() and int(value) > 1:
            if var == "SLURM_STEP_NUM_TASKS" and "SLURM_PROCID" not in env:
                continue
            return int(value)
    return 1


def _mpi_library():
    """The path of the MPI library mpi4py loaded (from this process's maps)."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            base = _os.path.basename(path)
            if base.startswith(("libmpi.so", "libmpich.so", "libmpi_")):
                return path
    raise RuntimeError("mpi4py is loaded but no MPI library (libmpi.so) was found in this "
                       "process")


def _timeout():
    value = _os.environ.get("DGARRAY_DISTRIBUTED_TIMEOUT", "300")
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError("DGARRAY_DISTRIBUTED_TIMEOUT must be a number of seconds > 0, "
                         f"not {value!r}")
    return seconds


def _join(comm):
    """Joins the job of the mpi4py communicator comm (every process at once)."""
    mpi = _importlib.import_module("mpi4py.MPI")
    if _job["comms"] is not None:
        raise RuntimeError("this process already joined a job of "
                           f"{_job['size']} processes")
    if comm.Get_size() == 1:
        return
    if mpi.Query_thread() != mpi.THREAD_MULTIPLE:
        raise RuntimeError("dgarray's devices send and receive from their own threads: MPI must "
                           "be initialised with MPI_THREAD_MULTIPLE (mpi4py's default; "
                           "mpi4py.rc.thread_level was changed)")
    if _builtins.any(_core._bytes_in_use()):
        raise RuntimeError("dgarray.distributed.initialize must run before any array is "
                           "made")
    xfer, coll = comm.Dup(), comm.Dup()
    names, totals, access = _core._dist_local_info()
    every = coll.allgather((names, totals, access))
    ndev_of = [len(n) for n, _, _ in every]
    ngdev = _builtins.sum(ndev_of)
    table = _numpy.zeros((ngdev, ngdev), dtype=_numpy.uint8)
    first = 0
    for n, (_, _, acc) in zip(ndev_of, every):
        table[first:first + n, first:first + n] = _numpy.frombuffer(acc, _numpy.uint8).reshape(n, n)
        first += n
    all_names = [f"{name} (process {p})" for p, (ns, _, _) in enumerate(every) for name in ns]
    all_totals = [t for _, ts, _ in every for t in ts]
    _core._dist_join(_mpi_library(), mpi._handleof(xfer), mpi._handleof(coll),
                     mpi._handleof(mpi.BYTE), comm.Get_rank(), comm.Get_size(), _timeout(),
                     ndev_of, all_names, all_totals, table.tobytes())
    _job.update(rank=comm.Get_rank(), size=comm.Get_size(), comms=(xfer, coll))
    _atexit.register(_drain)
    _install_print_once()


def _drain():
    """At exit, before mpi4py finalizes MPI (its handler runs after Python's):
    this process's devices finish the transfers they queued, so that no
    worker calls MPI after the end (bounded by the job's timeout)."""
    try:
        _core._sync_all()
    except Exception:  # noqa: BLE001 (a failed job's error was raised already)
        pass


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, *, comm=None):
    """Joins a job of several processes, as ``jax.distributed.initialize``.

    ``comm``: an mpi4py communicator whose processes form the job (default
    ``MPI.COMM_WORLD``).  ``num_processes`` and ``process_id``, when given,
    must be that communicator's size and this process's rank (the job's
    processes are started by an MPI launcher: mpirun, mpiexec, srun;
    ``coordinator_address``, torchrun's ``MASTER_ADDR:MASTER_PORT``, is where
    the NCCL id goes on GPUs and is checked only for its form here).
    ``local_device_ids``: this process's devices, which must be all the
    devices it has (choose them before import with ``DGARRAY_CPU_DEVICES``
    or ``DGARRAY_CUDA_DEVICES``).  Must run on every process, before any
    array is made; a process that already joined raises RuntimeError."""
    if coordinator_address is not None and not (isinstance(coordinator_address, str)
                                                and ":" in coordinator_address):
        raise ValueError("coordinator_address must be 'host:port', not "
                         f"{coordinator_address!r}")
    if comm is None:
        comm = _mpi().COMM_WORLD
    if num_processes is not None and num_processes != comm.Get_size():
        raise ValueError(f"num_processes={num_processes}, but the MPI communicator has "
                         f"{comm.Get_size()} processes: start the job with an MPI launcher "
                         f"(mpirun -n {num_processes} ...)")
    if process_id is not None and process_id != comm.Get_rank():
        raise ValueError(f"process_id={process_id}, but this process is rank "
                         f"{comm.Get_rank()} of the MPI communicator")
    if local_device_ids is not None:
        have = list(range(_core._dist_range()[1]))
        if sorted(local_device_ids) != have:
            raise ValueError(f"local_device_ids={list(local_device_ids)}: this process "
                             f"has devices {have}; choose them before import with "
                             "DGARRAY_CPU_DEVICES or DGARRAY_CUDA_DEVICES")
    _join(comm)


def is_initialized():
    """True where this process is one of a job of several."""
    return _job["comms"] is not None


def process_index():
    """This process's number in the job (0 alone)."""
    return _job["rank"]


def process_count():
    """How many processes the job has (1 alone)."""
    return _job["size"]


def local_device_range():
    """range of the job's device numbers that this process holds."""
    first, n = _core._dist_range()
    return range(first, first + n)


def barrier():
    """Waits for this process's devices, then until every process of the job
    got here (bounded by DGARRAY_DISTRIBUTED_TIMEOUT: a dead process raises
    dgarray.DeviceError).  What a timing of a step of the whole job ends
    with; alone, the wait for the devices only."""
    _core._dist_barrier()


def print(*args, **kwargs):  # noqa: A001
    """builtins.print on process 0 only (every process evaluates the
    arguments: reading an array is a step of every process)."""
    text = [str(a) for a in args]
    if _job["rank"] == 0:
        _builtins.print(*text, **kwargs)


def _left_to_process_0(file):
    """True where a print to `file` (None: sys.stdout) is left to process 0:
    this process is another of a job, and file is its stdout or stderr as
    started (the launcher gathers every process's into one)."""
    if _job["rank"] == 0:
        return False
    f = _sys.stdout if file is None else file
    return f is not None and (f is _sys.__stdout__ or f is _sys.__stderr__)


def _install_print_once():
    """In a job: builtins.print prints a call that has a DistributedArray
    among its arguments on process 0 only (module docstring), once every
    process has formatted them.  Every other call is the print that was in
    place, unchanged."""
    plain = _builtins.print

    @_functools.wraps(plain)
    def print_once(*args, **kwargs):
        if _left_to_process_0(kwargs.get("file")) and \
                _builtins.any(isinstance(a, _core.DistributedArray) for a in args):
            for a in args:  # the reads process 0's print makes
                str(a)
            return
        plain(*args, **kwargs)

    _builtins.print = print_once


def allgather(obj):
    """obj of every process, as a list in process order (a Python object per
    process; [obj] alone)."""
    if _job["comms"] is None:
        return [obj]
    return _job["comms"][1].allgather(obj)


def make_array_from_process_local_data(local_data, global_shape=None):
    """A DistributedArray whose rows are the processes' local_data in process
    order (as ``jax.make_array_from_process_local_data`` and Heat's
    ``is_split=0``): every process passes its own rows (the same shape but
    for the first axis), and they stay on that process's devices, split
    among them by rows.  ``global_shape`` (optional) is checked."""
    local = _numpy.asarray(local_data)
    if local.ndim == 0:
        raise ValueError("make_array_from_process_local_data needs at least one axis")
    shapes = allgather((local.shape, local.dtype.str))
    if _builtins.any(s[1:] != shapes[0][0][1:] or d != shapes[0][1] for s, d in shapes):
        raise ValueError("the processes' local data differ in shape beyond the first axis or "
                         f"in dtype: {[(s, d) for s, d in shapes]}")
    rows = [s[0] for s, _ in shapes]
    shape = (_builtins.sum(rows),) + tuple(local.shape[1:])
    if global_shape is not None and tuple(global_shape) != shape:
        raise ValueError(f"global_shape {tuple(global_shape)} does not match the processes' "
                         f"data, of shape {shape}")
    ndev_of = allgather(_core._dist_range()[1])
    layout, mine = [], []
    start, dev = 0, 0
    rest = tuple((0, n, 1) for n in shape[1:])
    for p, (nrows, ndev) in enumerate(zip(rows, ndev_of)):
        for k in range(ndev):
            lo = start + nrows * k // ndev
            hi = start + nrows * (k + 1) // ndev
            if hi > lo or (nrows == 0 and k == 0 and shape[0] == 0):
                if p == _job["rank"]:
                    mine.append((len(layout), lo - start, hi - start))
                layout.append((dev + k, ((lo, hi, 1),) + rest))
        start += nrows
        dev += ndev
    if not layout:
        layout.append((0, ((0, 0, 1),) + rest))
    a = _core._empty(shape, local.dtype, layout, 0)
    for i, lo, hi in mine:
        _core._chunk_put(a, i, _numpy.ascontiguousarray(local[lo:hi]))
    return a


def _mpi():
    """mpi4py.MPI (MPI initialised), or ImportError saying what to do."""
    try:
        return _importlib.import_module("mpi4py.MPI")
    except ImportError as e:
        raise ImportError(f"dgarray was started as one of {_launched_size()} processes and "
                          "needs mpi4py to join them (pip install mpi4py), or "
                          "DGARRAY_DISTRIBUTED=0 to run each process on its own") from e


def _auto_join():
    """At import: join where a launcher started several processes.  torchrun's
    variables alone (no MPI launcher: MPI's world is this process) leave the
    process on its own, with a warning: every process then computes the whole
    program, with the same results."""
    if _os.environ.get("DGARRAY_DISTRIBUTED", "").strip().lower() in ("0", "no", "off",
                                                                       "false"):
        return
    size = _launched_size()
    if size > 1:
        comm = _mpi().COMM_WORLD
        if comm.Get_size() != size:
            msg = (f"the launcher started {size} processes but MPI's COMM_WORLD has "
                   f"{comm.Get_size()}: dgarray joins jobs started by mpirun, mpiexec or srun "
                   "(torchrun's variables need an MPI launcher too); set "
                   "DGARRAY_DISTRIBUTED=0 to run each process on its own")
            if comm.Get_size() == 1 and not _os.environ.get("OMPI_COMM_WORLD_SIZE") and \
                    not _os.environ.get("PMI_SIZE"):
                _warnings.warn(msg + " (this process runs alone)", RuntimeWarning, stacklevel=2)
                return
            raise RuntimeError(msg)
        _join(comm)


_auto_join()
