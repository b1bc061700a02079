"""[multihost] Jobs of several processes: the MPI cases (tests/_mpi_cases.py)
under ``mpiexec -n 2`` and ``-n 4``, a single-process program unchanged in
a job, the launcher's variables, and a process killed in a reshard.

Each job's processes have 2 virtual CPU devices each.  The tests need
mpi4py and an MPI launcher (the ``test`` extra installs both from PyPI) and
are skipped without them."""
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dgarray as dg
from dgarray import distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))


def _mpiexec():
    """[mpiexec, options...] or None where there is no MPI here."""
    if importlib.util.find_spec("mpi4py") is None:
        return None
    exe = shutil.which("mpiexec") or os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(exe):
        return None
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    if "Open MPI" in version.stdout + version.stderr or "prte" in version.stdout.lower():
        return [exe, "--oversubscribe"]  # more processes than this machine's cores
    return [exe]


MPIEXEC = _mpiexec()
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="mpi4py or mpiexec is not installed")


def run_job(n, args, timeout=300, env=None, launcher_options=()):
    """Runs `python args` as an MPI job of n processes; (returncode, output)."""
    e = dict(os.environ)
    e.update({
        "DGARRAY_BACKEND": "cpu",
        "DGARRAY_CPU_DEVICES": "2",
        "DGARRAY_MIN_SPLIT_BYTES": "0",
        "DGARRAY_DISTRIBUTED_TIMEOUT": "60",
        "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(dg.__file__)),
                                       e.get("PYTHONPATH", "")]),
        "OMPI_ALLOW_RUN_AS_ROOT": "1",  # CI containers run as root
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    })
    e.pop("PYTEST_XDIST_WORKER", None)
    # every process writes to one pipe: unbuffered, the pieces of one print
    # from two processes can share a line; buffered, a flush writes whole lines
    e.pop("PYTHONUNBUFFERED", None)
    e.update(env or {})
    cmd = MPIEXEC + list(launcher_options) + ["-n", str(n), sys.executable] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, cwd=HERE)
    return p.returncode, p.stdout + p.stderr


def check_cases(n, quick, env=None):
    rc, out = run_job(n, [os.path.join(HERE, "_mpi_cases.py")] + (["--quick"] if quick else []),
                      env=env)
    verdicts = [line for line in out.splitlines() if line.startswith("RANK ") and
                " passed, " in line]
    assert len(verdicts) == n, out[-6000:]
    assert all(" 0 failed" in v for v in verdicts), out[-6000:]
    assert rc == 0, out[-6000:]


def test_cases_on_two_processes():
    check_cases(2, quick=False)


def test_cases_on_four_processes():
    check_cases(4, quick=True)


@pytest.mark.parametrize("n", [2, 4])
def test_cases_with_all_reduces_device_to_device(n):
    """The quick cases with every all-reduce of the job device to device
    (DGARRAY_JOB_ALLREDUCE=device: the GPUs' way, through NCCL; the CPU
    backend's own way is through the host, which the other jobs test)."""
    check_cases(n, quick=True, env={"DGARRAY_JOB_ALLREDUCE": "device"})


def test_single_process_program_unchanged_in_a_job():
    """tests/_cg.py's solver: one process on 4 devices, and 2 processes of 2
    devices each, print the same digits."""
    script = os.path.join(HERE, "_mpi_scripts.py")
    env = dict(os.environ, DGARRAY_BACKEND="cpu", DGARRAY_CPU_DEVICES="4", DGARRAY_MIN_SPLIT_BYTES="0",
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(dg.__file__)),
                                           os.environ.get("PYTHONPATH", "")]))
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "WORLD_SIZE"):
        env.pop(var, None)
    one = subprocess.run([sys.executable, script, "cg"], capture_output=True, text=True,
                         timeout=300, env=env)
    assert one.returncode == 0, one.stderr[-3000:]
    rc, two = run_job(2, [script, "cg"])
    assert rc == 0, two[-3000:]
    lines = [ln for ln in two.splitlines() if ln.startswith(("solution", "residual"))]
    assert lines == one.stdout.splitlines(), (lines, one.stdout)  # printed once, the same


@pytest.mark.parametrize("module", ["test_reshard.py", "test_random_chains.py",
                                    "test_arrays.py", "test_shape.py", "test_fusion.py"])
def test_existing_test_modules_pass_unchanged_in_a_job(module):
    """Existing single-process test modules, unchanged, run by pytest in each
    process of a job of 2 (4 devices in all): every test compares with
    NumPy, every process runs the same tests in the same order (SPMD)."""
    rc, out = run_job(2, ["-m", "pytest", os.path.join(HERE, module), "-q",
                          "-p", "no:cacheprovider", "-p", "no:xdist", "--color=no"],
                      timeout=600)
    summaries = [ln for ln in out.splitlines() if " passed" in ln and " in " in ln]
    assert len(summaries) == 2 and not any("failed" in ln or "error" in ln
                                           for ln in summaries), out[-6000:]
    assert rc == 0, out[-6000:]


def test_demo_runs_in_a_job():
    rc, out = run_job(2, ["-m", "dgarray"])
    assert rc == 0, out[-3000:]
    assert "4 device(s)" in out, out[-3000:]


def test_distributed_0_keeps_processes_alone():
    rc, out = run_job(2, [os.path.join(HERE, "_mpi_scripts.py"), "alone"],
                      env={"DGARRAY_DISTRIBUTED": "0"})
    assert rc == 0, out[-3000:]
    assert out.count("alone 1 2 2") == 2, out[-3000:]


def test_initialize_with_explicit_arguments():
    rc, out = run_job(2, [os.path.join(HERE, "_mpi_scripts.py"), "explicit", "2"],
                      env={"DGARRAY_DISTRIBUTED": "0"})
    assert rc == 0, out[-3000:]
    assert "explicit 0 2 4 True" in out and "explicit 1 2 4 True" in out, out[-3000:]


def test_a_job_ends_cleanly_with_work_queued():
    rc, out = run_job(2, [os.path.join(HERE, "_mpi_scripts.py"), "exit_with_work"], timeout=120)
    assert rc == 0 and out.count("ended") == 1, out[-3000:]


def test_a_killed_process_makes_the_other_raise():
    """Process 1 is killed during a reshard; process 0 raises DeviceError
    (within DGARRAY_DISTRIBUTED_TIMEOUT, here 10 s) instead of hanging.  Open
    MPI's launcher would end the job at the first death: --enable-recovery
    lets the survivor go on to see it."""
    opts = ["--enable-recovery"] if "--oversubscribe" in MPIEXEC else []
    rc, out = run_job(2, [os.path.join(HERE, "_mpi_scripts.py"), "fault"], timeout=60,
                      env={"DGARRAY_DISTRIBUTED_TIMEOUT": "10"}, launcher_options=opts)
    if opts:
        assert "DeviceError after" in out, out[-3000:]
    assert "no error" not in out, out[-3000:]


def test_a_late_process_makes_the_barrier_raise():
    """A barrier waits for every process within DGARRAY_DISTRIBUTED_TIMEOUT
    (3 s here), then raises DeviceError on the process that waited."""
    opts = ["--enable-recovery"] if "--oversubscribe" in MPIEXEC else []
    rc, out = run_job(2, [os.path.join(HERE, "_mpi_scripts.py"), "late_barrier"], timeout=120,
                      env={"DGARRAY_DISTRIBUTED_TIMEOUT": "3"}, launcher_options=opts)
    assert "rank 0 DeviceError after" in out and "waited 3 s" in out, out[-3000:]
    assert "rank 0 no error" not in out, out[-3000:]


@pytest.mark.parametrize("n", [2, 4])
def test_a_job_prints_arrays_once(n):
    """print(...) with an array among its arguments (to stdout or stderr),
    show_layout and a long copy's progress print one copy in a job, as
    Heat's global printing;
    strings, f-strings and prints to a file of the process's own come from
    every process; every process's text of an array is the same."""
    rc, out = run_job(n, [os.path.join(HERE, "_mpi_scripts.py"), "printing"])
    assert rc == 0, out[-3000:]
    x = np.arange(12.0).reshape(3, 4)
    lines = out.splitlines()
    assert out.count(f"array {x}") == 1, out[-3000:]
    assert out.count(f"total 66.0 of {x}") == 1, out[-3000:]
    assert len([ln for ln in lines if ln.startswith("DistributedArray (3, 4) float64")]) == 1, \
        out[-3000:]
    assert out.count(f"once {x}") == 1, out[-3000:]
    # the progress of 4 pieces (to the host, and to the devices): 3 lines and the last
    assert out.count("dgarray: devices to host array:") == 4, out[-3000:]
    assert out.count("dgarray: host array to") == 4, out[-3000:]
    for r in range(n):
        assert lines.count(f"rank {r} plain") == 1, out[-3000:]
    assert lines.count("text True True") == n, out[-3000:]
    assert lines.count("captured True") == n, out[-3000:]
    assert lines.count("after 66.0 True") == n, out[-3000:]


def test_torchrun_variables_without_mpi_launcher_run_alone():
    """torchrun's variables but no MPI launcher: a warning, and the process
    runs alone (MPI cannot join singletons)."""
    env = dict(os.environ, WORLD_SIZE="2", RANK="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT="29511", DGARRAY_BACKEND="cpu", DGARRAY_CPU_DEVICES="2",
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(dg.__file__)),
                                           os.environ.get("PYTHONPATH", "")]))
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "DGARRAY_DISTRIBUTED"):
        env.pop(var, None)
    p = subprocess.run([sys.executable, "-W", "always", "-c",
                        "import dgarray as dg; print('n', dg.process_count(), len(dg.devices()))"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "n 1 2" in p.stdout and "RuntimeWarning" in p.stderr and "mpirun" in p.stderr


def test_one_process_alone():
    assert dist.process_count() == 1 and dist.process_index() == 0
    assert not dist.is_initialized()
    assert dg.local_devices() == dg.devices()
    assert list(dist.local_device_range()) == [d.id for d in dg.devices()]
    assert dist.allgather(3) == [3]


@pytest.mark.parametrize("nloc,rank,ngpu,want", [
    (2, 0, 8, "0,1,2,3"), (2, 1, 8, "4,5,6,7"), (8, 5, 8, "5"), (3, 2, 8, "5,6,7"),
    (4, 3, 1, "0"), (4, 1, 2, "1"), (1, 0, 8, None)])
def test_processes_of_a_host_share_its_gpus(monkeypatch, nloc, rank, ngpu, want):
    """Where a launcher starts several processes on a host and
    DGARRAY_CUDA_DEVICES is unset, each takes its share of the GPUs."""
    for var in ("DGARRAY_CUDA_DEVICES", "DGARRAY_DISTRIBUTED", "OMPI_COMM_WORLD_LOCAL_SIZE",
                "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALNRANKS", "MPI_LOCALRANKID",
                "SLURM_LOCALID"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(nloc))
    monkeypatch.setenv("LOCAL_RANK", str(rank))
    assert dg._core._dist_gpu_share(ngpu) == want
    monkeypatch.setenv("DGARRAY_CUDA_DEVICES", "0,0")
    assert dg._core._dist_gpu_share(ngpu) is None
