"""The devices arrays live on, and the memory dgarray holds on them."""
import builtins as _builtins
import collections as _collections

from . import _core

Device = _collections.namedtuple("Device", "id backend name total_memory free_memory")


def devices():
    """The devices arrays live on: a list of Device(id, backend, name, ...)."""
    return [Device(*t) for t in _core._devices_info()]


class MemoryPool:
    """The device memory dgarray holds, summed over its devices: CuPy's
    ``MemoryPool`` calls for it.  Released memory stays in the pools for
    reuse (the CUDA backend keeps freed blocks, and recent large ones for
    allocations of the same size); ``free_all_blocks()`` hands it back to the
    devices, for another library or process."""

    def used_bytes(self):
        """Bytes allocated to live arrays and temporaries (after all work)."""
        return _builtins.sum(_core._bytes_in_use())

    def total_bytes(self):
        """Bytes the pools hold: allocated, or kept for reuse."""
        return _builtins.max(_builtins.sum(_core._bytes_held()), self.used_bytes())

    def free_bytes(self):
        """Bytes the pools hold that nothing uses."""
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self, stream=None):
        """Waits for all work, then hands every unused block back to its
        device.  Arrays keep their memory and values."""
        if stream is not None:
            raise ValueError("dgarray's pools are not per stream: call free_all_blocks() "
                             "without one")
        _core._trim()

    def __repr__(self):
        return (f"<dgarray.MemoryPool: {self.used_bytes()} bytes used, "
                f"{self.total_bytes()} held>")


_memory_pool = MemoryPool()


def get_default_memory_pool():
    """The pool of device memory over all devices (as CuPy's function of the
    same name, whose pool is one device's)."""
    return _memory_pool
