"""Checkpoints: ``.npy`` files and Zarr arrays, written and read chunk by chunk.

``save(path, a)`` (and ``numpy.save(path, a)``, which comes here through
``__array_function__``) writes NumPy's ``.npy`` format, header from NumPy's
own writer (version 1.0, or 2.0 where the header needs it, as
``numpy.save`` chooses), the data in C order.  Each piece of a chunk goes
from its device to one host buffer of a piece (``_core._piece_bytes``, 512
MiB) and from there to its offset in the file (``_core._npy_write``), so the
host never holds more than a piece of the array; progress and Ctrl-C as for
other long host copies (``dgarray.config.progress``).  The file is written
under a temporary name in the same directory, synced and renamed: under the
final name there is either the old file or the whole new one.

``load(path)`` reads the header with NumPy's reader (so a bad magic string,
a bad header or a bad version raise NumPy's errors), checks that the file
holds all the data the header announces, and fills each chunk of the new
array (the default layout, or ``index_map``) from its elements' offsets,
piece by piece (``_core._npy_read``); C and Fortran order, either byte
order.  Like NumPy's ``mmap_mode``, nothing reads the whole file into host
memory; the result lives on the devices (not a view of the file: writing to
it does not change the file).

File objects (``io.BytesIO``, sockets) are written and read in file order,
one piece at a time.

``to_zarr`` / ``from_zarr`` do the same with a Zarr array (the optional
``zarr`` package, as dask and xarray use it): each chunk's pieces are
written to and read from the Zarr array's region that the chunk holds.
"""
import itertools
import math
import os
import tempfile

import numpy
from numpy.lib import format as _format

from . import _core
from ._core import DistributedArray
from ._creation import asarray, empty

try:  # NumPy's own header writer and reader (all versions), where it has them
    from numpy.lib import _format_impl as _format_impl
except ImportError:  # pragma: no cover - older NumPy
    _format_impl = _format

_MMAP_MODES = (None, "r", "r+", "c", "readonly", "readwrite", "copyonwrite")


# ---- headers ---------------------------------------------------------------------------

def _header(dtype, shape):
    return {"descr": _format.dtype_to_descr(numpy.dtype(dtype)), "fortran_order": False,
            "shape": tuple(shape)}


def _write_header(f, dtype, shape):
    """NumPy's header for (dtype, shape) in C order, the version numpy.save
    would choose."""
    d = _header(dtype, shape)
    write = getattr(_format_impl, "_write_array_header", None)
    if write is not None:
        write(f, d, None)
        return
    try:  # pragma: no cover - older NumPy
        _format.write_array_header_1_0(f, d)
    except ValueError:  # pragma: no cover
        _format.write_array_header_2_0(f, d)


def _read_header(fp, max_header_size):
    """(shape, fortran_order, dtype) of the .npy file at fp's position,
    NumPy's errors for bad files; fp is left at the data."""
    version = _format.read_magic(fp)
    check = getattr(_format_impl, "_check_version", None)
    if check is not None:
        check(version)
    read = getattr(_format_impl, "_read_array_header", None)
    if read is not None:
        return read(fp, version, max_header_size=max_header_size)
    if version == (1, 0):  # pragma: no cover - older NumPy
        return _format.read_array_header_1_0(fp, max_header_size=max_header_size)
    return _format.read_array_header_2_0(fp, max_header_size=max_header_size)  # pragma: no cover


def _check_dtype(dtype, allow_pickle, what):
    """The native dtype dgarray holds the file's elements in; NumPy's error
    for object arrays, TypeError for what dgarray cannot hold."""
    if dtype.hasobject:
        if not allow_pickle:
            raise ValueError("Object arrays cannot be loaded when allow_pickle=False")
        raise TypeError(f"{what} holds Python objects, which a DistributedArray cannot "
                        "hold: load it with numpy.load")
    native = dtype.newbyteorder("=")
    if native.names is not None or native.subdtype is not None or \
            native.kind not in "biufc" or native.itemsize > 16:
        raise TypeError(f"{what} holds elements of dtype {dtype}, which a DistributedArray "
                        "cannot hold (bool, integers, floats and complex numbers only): load "
                        "it with numpy.load")
    return native


def _truncated(shape, count, got):
    return ValueError(f"Failed to read all data for array. Expected {shape} = {count} "
                      f"elements, could only read {got} elements. (file seems not fully "
                      "written?)")


# ---- slabs of the whole array in C order (file objects) ----------------------------------

def _c_slabs(shape, itemsize, piece):
    """Boxes ((start, stop, 1), ...) that tile `shape` in C order, each at
    most `piece` bytes (but one element) and consecutive in a C-order file."""
    nd = len(shape)
    if nd == 0:
        yield ()
        return
    if 0 in shape:
        return
    inner, ax = itemsize, nd - 1
    while ax > 0 and inner * shape[ax] <= piece:
        inner *= shape[ax]
        ax -= 1
    rows = max(1, min(shape[ax], piece // inner))
    for outer in numpy.ndindex(*shape[:ax]):
        for lo in range(0, shape[ax], rows):
            hi = min(shape[ax], lo + rows)
            yield tuple((i, i + 1, 1) for i in outer) + ((lo, hi, 1),) + \
                tuple((0, n, 1) for n in shape[ax + 1:])


def _box_shape(box):
    return tuple(len(range(*r)) for r in box)


def _key(box):
    return tuple(slice(*r) for r in box)


# ---- .npy ------------------------------------------------------------------------------

def save(file, arr, allow_pickle=True):
    """numpy.save for a DistributedArray: NumPy's ``.npy`` format, each chunk
    written at its offset, one piece at a time (see the module's text).  A
    path without the ``.npy`` suffix gets it, as with numpy.save."""
    if not isinstance(arr, DistributedArray):
        return numpy.save(file, arr, allow_pickle=allow_pickle)
    a = arr if arr.mode == "replica" else arr.change_mode("replica")
    if hasattr(file, "write"):
        _save_stream(file, a)
        return None
    path = os.fspath(file)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path.endswith(".npy"):
        path = path + ".npy"
    _save_path(path, a)
    return None


def _umask():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:  # pragma: no cover - not Linux
        pass
    mask = os.umask(0o22)  # pragma: no cover
    os.umask(mask)  # pragma: no cover
    return mask  # pragma: no cover


def _sized_with_header(fd, a):
    """NumPy's header for a written at the start of file fd, the file sized
    for a's data after it; the data's offset."""
    with os.fdopen(fd, "wb", closefd=False) as f:
        _write_header(f, a.dtype, a.shape)
        f.flush()
        offset = f.tell()
    os.ftruncate(fd, offset + a.size * a.itemsize)
    return offset


def _job():
    """dgarray.distributed where this process is one of a job, else None."""
    from . import distributed
    return distributed if distributed.process_count() > 1 else None


def _agree(job, failure, what):
    """Every process's failure (an exception or None) gathered: raises on
    every process where any failed (the failed process its own exception,
    the others OSError naming it), so that all take the same path."""
    every = job.allgather(None if failure is None else f"{type(failure).__name__}: {failure}")
    if failure is not None:
        raise failure
    bad = [(p, why) for p, why in enumerate(every) if why is not None]
    if bad:
        p, why = bad[0]
        raise OSError(f"{what} failed on process {p} of the job ({why}); nothing was written "
                      "under the final name")


def _save_path_job(path, a, job):
    """save in a job ([multihost]): process 0 creates the temporary file,
    writes the header and sizes it; every process writes its own chunks at
    their offsets and syncs; after every process is done (a barrier: the
    gather of their outcomes), process 0 renames.  The processes must share
    the file system of path's directory."""
    d, name = os.path.split(os.path.abspath(path))
    failure, made = None, None
    if job.process_index() == 0:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=d)
            try:
                offset = _sized_with_header(fd, a)
                os.fchmod(fd, 0o666 & ~_umask())
            finally:
                os.close(fd)
            made = (tmp, offset)
        except BaseException as e:  # noqa: BLE001 (raised on every process below)
            failure = e
    tmp, offset = job.allgather(made)[0] or (None, 0)
    _agree(job, failure, f"creating the file {path!r}")
    try:
        fd = os.open(tmp, os.O_WRONLY)
    except OSError as e:
        failure = OSError(f"{tmp!r}, made by process 0 of the job, cannot be opened here "
                          f"({e.strerror}): dgarray.save in a job needs a directory every "
                          "process shares")
    else:
        try:
            _core._npy_write(a, fd, offset)
            os.fsync(fd)
        except BaseException as e:  # noqa: BLE001 (raised on every process below)
            failure = e
        finally:
            os.close(fd)
    try:
        _agree(job, failure, f"writing {path!r}")
    except BaseException:
        if job.process_index() == 0:
            os.unlink(tmp)
        raise
    failure = None
    if job.process_index() == 0:
        try:
            os.replace(tmp, path)
            _sync_dir(d)
        except BaseException as e:  # noqa: BLE001
            failure = e
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _agree(job, failure, f"renaming the file to {path!r}")


def _sync_dir(d):
    """The rename in directory d made durable (where the file system can)."""
    try:
        dfd = os.open(d, os.O_RDONLY)
    except OSError:  # pragma: no cover - a directory that cannot be opened
        return
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover - file systems that refuse it
        pass
    finally:
        os.close(dfd)


def _save_path(path, a):
    """Writes under a temporary name in path's directory, syncs, renames."""
    job = _job()
    if job is not None:
        _save_path_job(path, a, job)
        return
    d, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=d)
    try:
        offset = _sized_with_header(fd, a)
        _core._npy_write(a, fd, offset)
        os.fchmod(fd, 0o666 & ~_umask())
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)
        raise
    _sync_dir(d)  # the rename itself durable


def _save_stream(f, a):
    """A file object: the header, then slabs of whole rows in C order."""
    _write_header(f, a.dtype, a.shape)
    for box in _c_slabs(a.shape, a.itemsize, _core._get_piece_bytes()):
        f.write(memoryview(numpy.ascontiguousarray(a._gather_region(box))).cast("B"))


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
         max_header_size=10000, index_map=None):
    """A DistributedArray of the ``.npy`` file's array, laid out as
    ``index_map`` says (else as a new array of its shape), each chunk read
    from its elements' offsets, one piece at a time (see the module's
    text).  ``mmap_mode`` ('r', 'r+', 'c') is accepted as numpy.load takes
    it: the file is never read whole into host memory; the array is on the
    devices, not a view of the file."""
    if mmap_mode not in _MMAP_MODES:
        raise ValueError(f"mmap_mode must be one of {_MMAP_MODES[1:]} or None, not "
                         f"{mmap_mode!r}: dgarray.load reads a file, it does not create one")
    if hasattr(file, "read"):
        return _load_stream(file, allow_pickle, max_header_size, index_map)
    path = os.fspath(file)
    job = _job()
    if job is not None:
        return _load_path_job(path, allow_pickle, max_header_size, index_map, job)
    with open(path, "rb") as fp:
        shape, fortran, dtype, native, offset = _open_npy(fp, path, allow_pickle,
                                                          max_header_size)
        a = _empty(shape, native, index_map)
        _core._npy_read(a, fp.fileno(), offset, bool(fortran), not dtype.isnative)
    return a


def _open_npy(fp, path, allow_pickle, max_header_size):
    """(shape, fortran, dtype, native dtype, data offset) of the .npy file fp,
    checked: NumPy's errors for bad or truncated files."""
    shape, fortran, dtype = _read_header(fp, max_header_size)
    native = _check_dtype(dtype, allow_pickle, path)
    offset = fp.tell()
    count = math.prod(shape)
    size = os.fstat(fp.fileno()).st_size
    if size < offset + count * dtype.itemsize:
        raise _truncated(shape, count, max(0, size - offset) // dtype.itemsize)
    return shape, fortran, dtype, native, offset


def _load_path_job(path, allow_pickle, max_header_size, index_map, job):
    """load in a job ([multihost]): every process reads and checks the
    header (a bad file raises on every process), makes the array, and reads
    its own chunks from their offsets."""
    failure, fp, head = None, None, None
    try:
        fp = open(path, "rb")
        head = _open_npy(fp, path, allow_pickle, max_header_size)
    except BaseException as e:  # noqa: BLE001 (raised on every process below)
        failure = e
    try:
        _agree(job, failure, f"reading the header of {path!r}")
        shape, fortran, dtype, native, offset = head
        heads = job.allgather((tuple(shape), bool(fortran), dtype.str, offset))
        if any(h != heads[0] for h in heads):
            raise ValueError(f"the processes of the job read different headers in {path!r} "
                             f"({heads}): dgarray.load in a job needs a file every process "
                             "shares")
        a = _empty(shape, native, index_map)
        try:
            _core._npy_read(a, fp.fileno(), offset, bool(fortran), not dtype.isnative)
        except BaseException as e:  # noqa: BLE001
            failure = e
        _agree(job, failure, f"reading {path!r}")
    finally:
        if fp is not None:
            fp.close()
    return a


def _empty(shape, dtype, index_map):
    return empty(shape, dtype, index_map=index_map)


def _load_stream(fp, allow_pickle, max_header_size, index_map):
    """A file object: slabs read in file order, each assigned where it goes."""
    shape, fortran, dtype = _read_header(fp, max_header_size)
    native = _check_dtype(dtype, allow_pickle, "the file")
    fshape = tuple(reversed(shape)) if fortran else tuple(shape)
    a = _empty(fshape, native, None if fortran else index_map)
    count = math.prod(shape)
    done = 0
    for box in _c_slabs(fshape, dtype.itemsize, _core._get_piece_bytes()):
        bshape = _box_shape(box)
        n = math.prod(bshape)
        data = fp.read(n * dtype.itemsize)
        if len(data) < n * dtype.itemsize:
            raise _truncated(shape, count, done + len(data) // dtype.itemsize)
        done += n
        a[_key(box)] = numpy.frombuffer(data, dtype=dtype).reshape(bshape).astype(native)
    if fortran:
        a = a.T
        if index_map is not None:
            a = a.reshard(index_map)
        else:
            a = a.copy()
    return a


# ---- Zarr ------------------------------------------------------------------------------

def _zarr():
    try:
        import zarr
    except ImportError as e:
        raise ImportError("dgarray.to_zarr and dgarray.from_zarr need the optional package "
                          "'zarr' (pip install zarr)") from e
    return zarr


def _slabs_of(box, itemsize, piece):
    """box cut into boxes of whole rows of at most `piece` bytes (at least
    one element each)."""
    shape = _box_shape(box)
    for sub in _c_slabs(shape, itemsize, piece):
        yield tuple(range(*r)[s0:s1] for r, (s0, s1, _) in zip(box, sub))


def _zarr_key(ranges):
    """A Zarr selection of the box given as ranges: slices where every step
    is 1, else an orthogonal selection (oindex) with index arrays."""
    if all(r.step == 1 or len(r) <= 1 for r in ranges):
        return False, tuple(slice(r.start, r.start + len(r)) for r in ranges)
    return True, tuple(numpy.arange(r.start, r.stop, r.step) if len(r) > 1 else
                       slice(r.start, r.start + len(r)) for r in ranges)


def _as_box(ranges):
    return tuple((r.start, r.start + (len(r) - 1) * r.step + 1 if len(r) else r.start,
                  r.step if len(r) > 1 else 1) for r in ranges)


def _default_zarr_chunks(a):
    """The Zarr chunk shape: on each axis the largest extent of a's chunks,
    so that a layout of equal blocks (the default layout's and most index
    maps') gives one Zarr chunk per chunk."""
    out = []
    for ax, n in enumerate(a.shape):
        ext = [len(range(*box[ax])) for _, box in _core._chunk_layout(a)]
        out.append(max(1, min(n, max(ext, default=n) or 1)))
    return tuple(out)


def to_zarr(a, store, *, chunks=None, overwrite=True, **kwargs):
    """Writes a into a new Zarr array at ``store`` (a path or a Zarr store)
    and returns that Zarr array.  Each device writes its own chunks, piece by
    piece (at most one host piece of each at a time).  ``chunks``: the Zarr
    chunk shape (default: the largest extent of a's chunks on each axis);
    other keyword arguments go to ``zarr.open_array``."""
    zarr = _zarr()
    if not isinstance(a, DistributedArray):
        a = asarray(a)
    if a.mode != "replica":
        a = a.change_mode("replica")
    chunks = chunks or _default_zarr_chunks(a)
    job = _job()
    if job is not None and isinstance(store, (str, os.PathLike)):
        return _to_zarr_job(a, store, chunks, overwrite, kwargs, job, zarr)
    z = zarr.open_array(store, mode="w" if overwrite else "w-", shape=a.shape,
                        dtype=a.dtype, chunks=chunks, **kwargs)
    if a.ndim == 0:
        z[()] = a.get()
        return z
    _write_zarr(a, z, lambda dev: True, True)
    return z


def _write_zarr(a, z, mine, writer, private=False):
    """Writes the pieces of a's chunks on devices where mine(device) into z
    (where `writer`: reading a chunk is a step of every process of a job,
    which only the writer stores; `private`: this process's own chunks,
    read by it alone)."""
    piece = _core._get_piece_bytes()
    devices = [dev for dev, _ in _core._chunk_layout(a)]
    for i, box in _core._chunk_cover(a):
        if not mine(devices[i]):
            continue
        for sub in _slabs_of(box, a.itemsize, piece):
            values = _core._chunk_get(a, i, _as_box(sub), private)
            if not writer:
                continue
            orth, key = _zarr_key(sub)
            if orth:
                z.oindex[key] = values
            else:
                z[key] = values


def _zarr_shared(a, chunks, job):
    """1 if a Zarr chunk of shape `chunks` would hold elements of two
    processes' chunks (so that their writes would meet in one object)."""
    first = {}
    devices = [dev for dev, _ in _core._chunk_layout(a)]
    owner = {}
    for p, n in enumerate(job.allgather(len(job.local_device_range()))):
        for k in range(n):
            owner[len(owner)] = p
    for i, box in _core._chunk_cover(a):
        spans = []
        for (lo, hi, step), c in zip(box, chunks):
            last = lo + (len(range(lo, hi, step)) - 1) * step
            spans.append(range(lo // c, last // c + 1))
        for key in itertools.product(*spans):
            if first.setdefault(key, owner[devices[i]]) != owner[devices[i]]:
                return True
    return False


def _to_zarr_job(a, store, chunks, overwrite, kwargs, job, zarr):
    """to_zarr in a job ([multihost]), `store` a path every process shares:
    process 0 creates the array; each process writes its own chunks'
    pieces, where no Zarr chunk holds two processes' elements (else every
    piece is read by every process and written by process 0); failures
    raise on every process."""
    failure = None
    if job.process_index() == 0:
        try:
            zarr.open_array(store, mode="w" if overwrite else "w-", shape=a.shape,
                            dtype=a.dtype, chunks=chunks, **kwargs)
        except BaseException as e:  # noqa: BLE001 (raised on every process below)
            failure = e
    _agree(job, failure, f"creating the Zarr array {store!r}")
    shared = a.ndim == 0 or _zarr_shared(a, chunks, job)
    first = job.local_device_range()
    z = None
    try:
        z = zarr.open_array(store, mode="r+")
        if a.ndim == 0:
            value = a.get()
            if job.process_index() == 0:
                z[()] = value
        elif shared:
            _write_zarr(a, z, lambda dev: True, job.process_index() == 0)
        else:
            _write_zarr(a, z, lambda dev: dev in first, True, True)
    except BaseException as e:  # noqa: BLE001
        failure = e
    _agree(job, failure, f"writing the Zarr array {store!r}")
    return z


def from_zarr(store, index_map=None, **kwargs):
    """A DistributedArray of the Zarr array at ``store`` (a path, a Zarr
    store or a Zarr array), laid out as ``index_map`` says (else as a new
    array of its shape); each chunk reads its own region of the Zarr array,
    piece by piece.  Keyword arguments go to ``zarr.open_array``."""
    zarr = _zarr()
    z = store if hasattr(store, "oindex") else zarr.open_array(store, mode="r", **kwargs)
    dtype = _check_dtype(numpy.dtype(z.dtype), False, "the Zarr array")
    a = _empty(z.shape, dtype, index_map)
    if a.ndim == 0:
        a[()] = numpy.asarray(z[()])
        return a
    piece = _core._get_piece_bytes()
    job = _job()
    mine = job.local_device_range() if job is not None else None
    for i, (dev, box) in enumerate(_core._chunk_layout(a)):
        if mine is not None and dev not in mine:
            continue  # another process reads it (a job's processes share the store)
        for sub in _slabs_of(box, a.itemsize, piece):
            orth, key = _zarr_key(sub)
            values = z.oindex[key] if orth else z[key]
            _core._chunk_put(a, i, numpy.asarray(values), _as_box(sub))
    return a


FUNCTIONS = {"save": save}
