"""Index maps for tests: the layouts every operation is checked on."""


def row_blocks(n, parts, uneven=False):
    """Boundaries splitting n rows into `parts` blocks (uneven: skewed sizes)."""
    if parts == 1 or n < parts:
        return [(0, n)]
    if uneven:
        cuts = sorted({max(1, min(n - 1, (n * (k * k)) // (parts * parts)))
                       for k in range(1, parts)})
    else:
        cuts = [n * k // parts for k in range(1, parts)]
    edges = [0] + cuts + [n]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def maps_for(shape, ndev):
    """[(name, index_map or None)] for an array of `shape` on devices 0..ndev-1:
    the default layout, even and uneven row splits, a strided (interleaved)
    split, a replicated layout, overlapping blocks, and a column split."""
    out = [("default", None)]
    if not shape or 0 in shape:
        return out
    n = shape[0]
    out.append(("rows", {d: slice(a, b) for d, (a, b) in
                         enumerate(row_blocks(n, ndev))}))
    ub = row_blocks(n, ndev, uneven=True)
    out.append(("uneven", {d: slice(a, b) for d, (a, b) in enumerate(ub)}))
    k = min(ndev, n)
    out.append(("strided", {d: slice(d, None, k) for d in range(k)}))
    out.append(("replicated", {d: slice(None) for d in range(ndev)}))
    if n >= 2:
        half = n // 2
        over = {0: slice(0, half + 1)}
        if ndev > 1:
            over[ndev - 1] = slice(max(0, half - 1), None)
        else:
            over[0] = [slice(0, half + 1), slice(max(0, half - 1), None)]
        out.append(("overlap", over))
    if len(shape) >= 2 and shape[1] >= 1:
        cb = row_blocks(shape[1], ndev)
        out.append(("cols", {d: (slice(None), slice(a, b)) for d, (a, b) in
                             enumerate(cb)}))
    return out


def on_devices(pairs, ndev):
    """An index map from (device, key) pairs with the devices taken modulo
    ndev (the keys that land on one device in a list), so that a layout
    written for several devices also runs on fewer."""
    out = {}
    for dev, key in pairs:
        out.setdefault(dev % ndev, []).append(key)
    return out
