"""DistributedArray.chunks(): every chunk of an array where it lives, lent
to other libraries without a copy (DLPack, the CUDA array interface on
GPUs, NumPy's array interface on the CPU backend).

A Chunk holds the array and the chunk's number; each protocol call lends
the chunk's memory afresh through the same C code as the array's own
__dlpack__ (_core._dlpack, _core._chunk_lend: dg_array_lend_chunk), after
the array's pending writes and, for a writable array, a copy on write of
memory it shares, so that the address handed over is the chunk's at that
moment and writes through it reach this array alone.
"""
import numpy

from . import _core
from ._arrayapi import device_dlpack, export
from ._creation import DL_CPU, device_kind


def chunks(a):
    """a.chunks(): [(device, index, chunk), ...], every physical chunk of
    the array in the array's chunk order (a chunk per device for replicated
    or overlapping layouts; in a job of several processes, this process's
    chunks only).  ``device`` is the device number, ``index`` the tuple of
    slices of the array the chunk holds (as ``index_map`` writes them), and
    ``chunk`` lends the chunk's memory without a copy:
    ``numpy.from_dlpack(chunk)`` / ``numpy.asarray(chunk)`` on the CPU
    backend, ``cupy.from_dlpack(chunk)`` / ``cupy.asarray(chunk)`` /
    ``torch.from_dlpack(chunk)`` / ``jax.dlpack.from_dlpack(chunk)`` on GPUs.
    In op modes (SUM, ...) a chunk holds its partial values."""
    first, n = _core._dist_range()
    out = []
    for i, (dev, box) in enumerate(_core._chunk_layout(a)):
        if first <= dev < first + n:
            index = tuple(slice(*r) for r in box)
            out.append((dev, index, Chunk(a, i, dev, index)))
    return out


class Chunk:
    """One chunk of a DistributedArray, lent without a copy: DLPack
    (``__dlpack__``, ``__dlpack_device__``), ``__cuda_array_interface__``
    (version 3) on the CUDA backend, ``__array_interface__`` (version 3) on
    the CPU backend; ``shape``, ``dtype``, ``strides`` (bytes) and ``device``
    (the device number).  The memory is the array's: each call waits for the
    array's pending writes, and a writable array's memory is made its own
    first (copy on write), so that writes through the chunk reach this
    array alone (and, in a replicated layout, this one copy of the
    elements).  A read-only array's chunks are read-only (DLPack 1.0's
    flag; the legacy capsule refuses them, as NumPy's).  A consumer's own
    writes must be complete (its stream synchronised) before dgarray uses
    the array again.  What a consumer makes of the chunk keeps the array
    alive."""

    __slots__ = ("_array", "_i", "device", "index", "shape", "dtype")

    def __init__(self, a, i, device, index):
        self._array = a
        self._i = i
        self.device = device
        self.index = index
        self.shape = tuple(len(range(s.start, s.stop, s.step)) for s in index)
        self.dtype = a.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def strides(self):
        """The chunk's byte strides (those of memory made the array's own)."""
        return self._lend()[3]

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the chunk's memory, as the array's
        __dlpack__ (the same rules: stream, max_version, dl_device, copy)."""
        self._check()
        return export(self._array, self._i, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(2, the GPU) on the CUDA backend (kDLCUDA), (1, 0) on the CPU
        backend (kDLCPU)."""
        return device_dlpack(self.device)

    @property
    def __cuda_array_interface__(self):
        """The CUDA array interface (version 3) of the chunk, CUDA backend
        only.  The array's pending writes are complete when it returns, so
        its stream is None (no synchronisation needed)."""
        if device_kind() == DL_CPU:
            raise AttributeError("the CPU backend's chunks are host memory: "
                                 "__array_interface__, not __cuda_array_interface__")
        return self._interface(version=3, stream=None)

    @property
    def __array_interface__(self):
        """NumPy's array interface (version 3) of the chunk, CPU backend only."""
        if device_kind() != DL_CPU:
            raise AttributeError("the chunks are GPU memory: __cuda_array_interface__ or "
                                 "DLPack, not __array_interface__")
        return self._interface(version=3)

    def __array__(self, dtype=None, copy=None):
        """numpy.asarray(chunk): the chunk in place on the CPU backend (its
        array interface); TypeError for a GPU's chunk, as CuPy's arrays
        (read it with cupy, or the array's values with a.get())."""
        if device_kind() != DL_CPU:
            raise TypeError("a chunk on a GPU is not host memory: read it in place with "
                            "cupy.asarray(chunk) / torch.from_dlpack(chunk), or copy the "
                            "array's values to the host with a.get()")
        return numpy.asarray(numpy.from_dlpack(self), dtype=dtype, copy=copy)

    def _check(self):
        """BufferError where the array's chunk is no longer this one (an
        in-place change of the array's shape, resize)."""
        layout = _core._chunk_layout(self._array)
        if self._i >= len(layout) or layout[self._i] != (
                self.device, tuple((s.start, s.stop, s.step) for s in self.index)):
            raise BufferError("the array's chunks changed since chunks() listed this one: "
                              "call chunks() again")

    def _lend(self):
        """(device, box, address, byte_strides) of the chunk lent now."""
        self._check()
        writable = not _core._readonly(self._array)
        return _core._chunk_lend(self._array, writable, self._i)[0]

    def _interface(self, **extra):
        readonly = bool(_core._readonly(self._array))
        _, _, address, strides = self._lend()
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (address, readonly),
                "strides": strides, **extra}

    def __repr__(self):
        return (f"<dgarray chunk of device {self.device}: {self.shape} {self.dtype} at "
                f"{self.index}>")


METHODS = {"chunks": chunks}
