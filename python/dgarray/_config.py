"""dgarray.config: the process-wide settings."""
import operator as _operator

from . import _core, _fallback, _linalg


class _Config:
    """Process-wide settings.

    min_split_bytes: arrays smaller than this live on one device when no
    index map is given (default 1 MiB; DGARRAY_MIN_SPLIT_BYTES sets it at start).

    peer_read_bytes: an operand region of at most this many bytes held on
    another device that the computing device can address (NVLink peers; the
    CPU backend's virtual devices) is read there in place instead of being
    moved (default 256 KiB; DGARRAY_PEER_READ_BYTES sets it at start).  A
    reduction's partials up to this many bytes (or 1/16 of the bytes
    reduced) are stacked on one device and folded at once.

    allow_tf32: float32 matrix products may use TF32 tensor cores (default off).

    progress: copies between host arrays and the devices larger than a
    piece (512 MiB) run piece by piece, Ctrl-C stopping them between pieces;
    True (default): one that has run for a second shows how far it is on
    sys.stderr, a line rewritten in place; False: never; "always": a line
    after every piece.  In a job of several processes, on process 0 only.

    fusion: elementwise calls (ufuncs, operators, casts, `out=` and
    `a[...] = b`) are recorded and run later as one pass per chunk over the
    whole chain, when a result is needed (default True; DGARRAY_FUSION=0 sets
    it off at start).  Shapes, dtypes and errors are still those of each
    call, raised at that call.  Turning it off runs the pending chain.  Calls
    of fewer than 65,536 elements (DGARRAY_FUSION_MIN_ELEMS at start) run at
    once.

    fallback: what a NumPy function dgarray does not implement does: "warn"
    (default: it runs through NumPy on the gathered data, with a
    dgarray.FallbackWarning naming it, and returns DistributedArrays),
    "silent" (the same without the warning) or "raise" (TypeError).
    """

    @property
    def min_split_bytes(self):
        return _core._get_min_split_bytes()

    @min_split_bytes.setter
    def min_split_bytes(self, value):
        _core._set_min_split_bytes(_operator.index(value))

    @property
    def peer_read_bytes(self):
        return _core._get_peer_read_bytes()

    @peer_read_bytes.setter
    def peer_read_bytes(self, value):
        _core._set_peer_read_bytes(_operator.index(value))

    @property
    def allow_tf32(self):
        """float32 matrix products may use TF32 tensor cores (faster, 10-bit
        mantissa products); off by default."""
        return _linalg.settings.allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        _linalg.settings.set_allow_tf32(value)

    @property
    def progress(self):
        return _core._get_progress()

    @progress.setter
    def progress(self, value):
        _core._set_progress(value)

    @property
    def fusion(self):
        return _core._get_fusion()

    @fusion.setter
    def fusion(self, value):
        _core._set_fusion(bool(value))

    @property
    def fallback(self):
        return _fallback.mode()

    @fallback.setter
    def fallback(self, value):
        _fallback.set_mode(value)

    def __repr__(self):
        return (f"dgarray.config(min_split_bytes={self.min_split_bytes}, "
                f"peer_read_bytes={self.peer_read_bytes}, allow_tf32={self.allow_tf32}, "
                f"progress={self.progress!r}, fallback={self.fallback!r}, fusion={self.fusion})")


config = _Config()
