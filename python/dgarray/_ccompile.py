"""C source to a loaded shared library on the host, for users' kernels on
the CPU backend ([fusion]): compiled by the C compiler that built dgarray
(sysconfig's CC; DGARRAY_CC overrides it), cached in memory for the process
and on disk beside the run-time compiler's CUDA kernels (DGARRAY_CACHE_DIR,
else $XDG_CACHE_HOME/dgarray, else ~/.cache/dgarray).

A library's file is named by a hash of its key: the source, the compiler's
command and version, and the flags.  It is compiled in a temporary directory
and renamed into place, so processes sharing the cache never load a
part-written file; a cached file that cannot be loaded is compiled again, and
a cache directory that cannot be made or written only loses the disk cache:
the library is loaded from the temporary directory instead."""
import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import threading

from . import _core

# no FMA contraction, so that a*b + c rounds as NumPy's loops round it
FLAGS = ("-std=gnu11", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-strict-aliasing")

_lock = threading.Lock()
_loaded = {}    # key hash -> ctypes.CDLL
_versions = {}  # compiler command -> its --version text


class CompilerNotFoundError(RuntimeError):
    """No C compiler to build a user's kernel on the CPU backend."""


def compiler():
    """The compiler's command as a list: DGARRAY_CC, else the CC that built
    Python's extensions (sysconfig), else 'cc'."""
    cc = os.environ.get("DGARRAY_CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)


def _version(cmd):
    key = tuple(cmd)
    if key not in _versions:
        if shutil.which(cmd[0]) is None:
            raise CompilerNotFoundError(
                f"user kernels on the CPU backend are compiled with the C compiler that built "
                f"dgarray ({' '.join(cmd)!r}), which is not installed or not on PATH: install "
                f"it (e.g. apt-get install gcc) or name another with DGARRAY_CC")
        try:
            out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60)
            _versions[key] = out.stdout + out.stderr
        except OSError as e:
            raise CompilerNotFoundError(f"the C compiler {' '.join(cmd)!r} cannot be run: {e}") from e
    return _versions[key]


def _cache_dir():
    d = _core._rtc_cache_dir()
    if not d:
        return None
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return d if os.access(d, os.W_OK) else None


def load(source):
    """The ctypes.CDLL of `source` (C11 with GNU extensions), compiled once
    per key and kept for the life of the process.  CompilerNotFoundError
    where no compiler can be run; RuntimeError with the compiler's messages
    where the source does not compile."""
    cmd = compiler()
    key = "\0".join([source, " ".join(cmd), _version(cmd), " ".join(FLAGS)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    with _lock:
        lib = _loaded.get(digest)
        if lib is not None:
            return lib
        cache = _cache_dir()
        path = os.path.join(cache, f"ukernel-{digest}.so") if cache else None
        if path and os.path.exists(path):
            try:
                lib = _loaded[digest] = ctypes.CDLL(path)
                return lib
            except OSError:
                pass  # corrupt or foreign: compile afresh
        with tempfile.TemporaryDirectory(prefix="dgarray-ukernel-") as tmp:
            src, obj = os.path.join(tmp, "k.c"), os.path.join(tmp, "k.so")
            with open(src, "w") as f:
                f.write(source)
            try:
                res = subprocess.run([*cmd, *FLAGS, src, "-o", obj, "-lm"], capture_output=True,
                                     text=True, timeout=600)
            except OSError as e:
                raise CompilerNotFoundError(f"the C compiler {' '.join(cmd)!r} cannot be run: "
                                            f"{e}") from e
            if res.returncode != 0:
                raise RuntimeError(f"the user kernel does not compile with {' '.join(cmd)!r}:\n"
                                   f"{res.stderr.strip()}\n--- source ---\n{source}")
            if path:
                try:
                    part = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
                    shutil.copyfile(obj, part)
                    os.replace(part, path)
                    lib = ctypes.CDLL(path)
                except OSError:
                    lib = None
            if lib is None:
                lib = ctypes.CDLL(obj)  # stays mapped after the directory goes
        _loaded[digest] = lib
        return lib


def forget():
    """Forgets the memory cache (the libraries stay loaded); for tests of
    the disk cache."""
    with _lock:
        _loaded.clear()
