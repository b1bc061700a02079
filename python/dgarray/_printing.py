"""repr and str of a DistributedArray: NumPy's text for the same values,
gathering only the corners NumPy's summary shows."""
import itertools

import numpy


def _summary_array(a):
    """A small ndarray that NumPy prints exactly as it would print all of a.

    Long axes (more than 2 * edgeitems) keep their leading and trailing
    edgeitems and one unused element between them, so NumPy's summary shows
    the same values, formatted from the same elements; only those corners are
    gathered from the devices.
    """
    opts = numpy.get_printoptions()
    e = opts["edgeitems"]
    if a.size <= opts["threshold"]:
        return a.get(), False
    shape = a.shape
    out_shape = tuple(2 * e + 1 if n > 2 * e else n for n in shape)
    out = numpy.zeros(out_shape, dtype=a.dtype)
    parts = []
    for n in shape:
        if n > 2 * e:
            parts.append([((0, e, 1), slice(0, e)),
                          ((n - e, n, 1), slice(e + 1, 2 * e + 1))])
        else:
            parts.append([((0, n, 1), slice(0, n))])
    for combo in itertools.product(*parts):
        region = tuple(c[0] for c in combo)
        dst = tuple(c[1] for c in combo)
        out[dst] = a._gather_region(region)
    return out, True


def _dtype_suffix(dtype):
    """NumPy's dtype=... text for a repr, or None when the dtype is implied."""
    try:
        from numpy._core.arrayprint import dtype_is_implied, dtype_short_repr
    except ImportError:  # older layouts of NumPy's private modules
        from numpy.core.arrayprint import dtype_is_implied, dtype_short_repr
    return None if dtype_is_implied(dtype) else f"dtype={dtype_short_repr(dtype)}"


def array_repr(a):
    """repr(a) as NumPy writes it for the same values: only the summary's
    corners are gathered; the shape it names and the line it breaks at are
    those of the whole array."""
    data, summarised = _summary_array(a)
    if not summarised:
        return numpy.array_repr(data)
    opts = numpy.get_printoptions()
    prefix = "array("
    with numpy.printoptions(threshold=0):
        body = numpy.array2string(data, separator=", ", prefix=prefix, suffix=")")
    extras = []
    legacy = opts.get("legacy", False)
    if legacy is False or float(legacy) > 2.1:
        extras.append(f"shape={a.shape}")
    dt = _dtype_suffix(data.dtype)
    if dt:
        extras.append(dt)
    if not extras:
        return prefix + body + ")"
    head = prefix + body + ","
    tail = ", ".join(extras) + ")"
    last_line = len(head) - (head.rfind("\n") + 1)
    spacer = " " if last_line + 1 + len(tail) <= opts["linewidth"] else \
        "\n" + " " * len(prefix)
    return head + spacer + tail


def array_str(a):
    data, summarised = _summary_array(a)
    if summarised:
        with numpy.printoptions(threshold=0):
            return numpy.array_str(data)
    return numpy.array_str(data)
