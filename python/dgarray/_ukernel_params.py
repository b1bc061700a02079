"""Parameter lists of users' kernels in CuPy's form ("T x, raw float64 y"),
the dtypes their type placeholders take at a call, and the C names of those
dtypes ([fusion]; used by _user_kernels.py).

A parameter is `[raw] TYPE NAME`.  TYPE is a NumPy dtype name written in
lower case ("float32", "int64", "bool", "complex128") or a placeholder (any
other identifier: "T", "U", "Tout"), which takes the dtype of the arrays
given for it.  `i`, `n` and names starting with an underscore are reserved,
as in CuPy."""
import re
from dataclasses import dataclass

import numpy

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# the C type of each dtype a kernel compiled by the host's C compiler can use
C_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float32": "float", "float64": "double",
    "complex64": "float _Complex", "complex128": "double _Complex",
}


@dataclass(frozen=True)
class Param:
    raw: bool
    ctype: str  # a placeholder or a dtype name
    name: str
    dtype: numpy.dtype = None  # None for a placeholder

    @property
    def placeholder(self):
        return self.dtype is None


def _fixed_dtype(t):
    """The dtype a lower-case type name means, or None for a placeholder."""
    if not t[0].islower():
        return None
    try:
        return numpy.dtype(t)
    except TypeError:
        return None


def parse(text, what):
    """The parameters of a CuPy-style list `text` (what: 'in_params' or
    'out_params', for messages).  ValueError where it is malformed."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str such as 'T x, raw float64 y', not "
                        f"{type(text).__name__}")
    params = []
    if not text.strip():
        return params
    for item in text.split(","):
        words = item.split()
        raw = bool(words) and words[0] == "raw"
        if raw:
            words = words[1:]
        if len(words) != 2 or not all(_IDENT.match(w) for w in words):
            raise ValueError(f"syntax error in {what}: {item.strip()!r} is not "
                             f"'[raw] TYPE NAME' (e.g. 'T x' or 'raw float32 y')")
        t, name = words
        if name in ("i", "n") or name.startswith("_"):
            raise ValueError(f"{what}: the name {name!r} is reserved (i, n and names starting "
                             f"with '_' are the kernel's own)")
        params.append(Param(raw, t, name, _fixed_dtype(t)))
    return params


def check_names(params):
    seen = set()
    for p in params:
        if p.name in seen:
            raise ValueError(f"the parameter name {p.name!r} is used twice")
        seen.add(p.name)


def bind(types, p, dtype):
    """Binds p's placeholder to dtype in `types`; TypeError where it was
    bound to another dtype by an earlier argument."""
    if not p.placeholder:
        return
    bound = types.setdefault(p.ctype, dtype)
    if bound != dtype:
        raise TypeError(f"Type is mismatched: {p.name} is {dtype} but its type {p.ctype} is "
                        f"already {bound}")


def resolve(types, p):
    """The dtype p has once every argument bound the placeholders."""
    if not p.placeholder:
        return p.dtype
    if p.ctype not in types:
        raise TypeError(f"Cannot determine the type of {p.name}: no argument gives its "
                        f"type {p.ctype} (pass an output array, or use a dtype name)")
    return types[p.ctype]


def c_type(dtype):
    """The C type of dtype; TypeError where the host's kernels have none."""
    name = numpy.dtype(dtype).name
    if name not in C_TYPES:
        raise TypeError(f"user kernels on the CPU backend have no C type for {name} "
                        f"(supported: {', '.join(C_TYPES)})")
    return C_TYPES[name]
