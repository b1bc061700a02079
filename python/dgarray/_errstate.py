"""numpy.errstate for device work ([surface] item 3; src/core/dg_fpe.h).

The binding asks `actions` for the action word of NumPy's errstate (cached
while NumPy's errstate context variable holds the same object) and hands the
word to the work a call enqueues; the CPU backend notes the floating-point
errors its loops raised under that word (its status, or under
DGARRAY_FPE=soft the GPU kernels' software rule), the CUDA backend those
its kernels classified; the binding hands what was noted to
`report`, which does what numpy.errstate says, as NumPy's ufunc machinery
does after its loops: kinds in NumPy's order (divide, overflow, underflow,
invalid), NumPy's messages, its exception, warning, callback and log.
"""
import sys
import warnings

import numpy
from numpy._core import umath as _umath

# NumPy's kinds and modes in dg_fpe.h's order.
_KINDS = ("divide", "over", "under", "invalid")
_WORDS = ("divide by zero", "overflow", "underflow", "invalid value")
_MODES = ("ignore", "warn", "raise", "call", "print", "log")

# NumPy's errstate lives in this context variable (NumPy 2): the binding
# reads it to see whether errstate changed since the last call.
CONTEXTVAR = getattr(_umath, "_extobj_contextvar", None)


def actions():
    """The action word of the errstate in force: 4 bits per kind."""
    state = numpy.geterr()
    word = 0
    for k, kind in enumerate(_KINDS):
        word |= _MODES.index(state[kind]) << (4 * k)
    return word


def report(noted, name):
    """Reports the noted word (bit kind * 8 + mode for each kind raised) of
    the work of ufunc `name`, as NumPy reports its loops' errors."""
    status = sum(1 << k for k in range(4) if (noted >> (8 * k)) & 0xFF)
    for k in range(4):
        byte = (noted >> (8 * k)) & 0xFF
        for mode in range(1, 6):
            if byte & (1 << mode):
                _one(k, mode, name, status)


def _one(k, mode, name, status):
    """One kind's report; status: NumPy's flag bits of every kind raised
    (what its callback is given)."""
    word = _WORDS[k]
    msg = f"{word} encountered in {name}"
    if mode == 1:
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    elif mode == 2:
        raise FloatingPointError(msg)
    elif mode == 3:
        call = numpy.geterrcall()
        if call is None or not callable(call):
            raise NameError(f"python callback specified for {word} (in  {name}) "
                            "but no function found.")
        call(word, status)
    elif mode == 4:
        sys.stderr.write(f"Warning: {msg}\n")
    elif mode == 5:
        log = numpy.geterrcall()
        if log is None or not hasattr(log, "write"):
            raise NameError(f"log specified for {word} (in {name}) "
                            "but no object with write method found.")
        log.write(f"Warning: {msg}\n")
