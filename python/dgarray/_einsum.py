"""einsum and einsum_path with NumPy's semantics, planned into dgarray's
own operations: each operand's repeated labels become diagonals (views
where the layout allows), labels no later term needs are summed away where
the data lives, and every pair of operands is one contraction of the
matrix-product planner (``_core._contract``: output, batch and contracted
axes mapped directly, no transpose or reshape materialised), in the order
NumPy's einsum_path chooses.  NumPy itself checks the subscripts, shapes,
dtypes and casting on zero-memory stand-ins, so its errors are NumPy's.
"""
import string

import numpy

from . import _core
from ._compose import asdist, standin
from . import _linalg
from ._compose import view
from ._elementwise import copyto
from ._linalg import _contract
from ._matrix import diagonal
from ._reductions import sum as sum_
from ._shape import transpose

_DA = _core.DistributedArray
_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _sublist_letters(sub):
    """An interleaved-format subscript list as a string ('...' for Ellipsis)."""
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        else:
            k = int(s)
            if not 0 <= k < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            out.append(_LETTERS[k])
    return "".join(out)


def _split_args(args):
    """(subscripts string, operands) from either calling convention."""
    if isinstance(args[0], str):
        return args[0].replace(" ", ""), list(args[1:])
    ops, subs = [], []
    rest = list(args)
    while len(rest) >= 2:
        ops.append(rest.pop(0))
        subs.append(_sublist_letters(rest.pop(0)))
    text = ",".join(subs)
    if rest:
        text += "->" + _sublist_letters(rest[0])
    return text, ops


def _parse(subscripts, shapes):
    """(input label lists, output label list) with every ellipsis replaced
    by labels of its own (right-aligned across operands)."""
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    used = set(subscripts) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    ell_n = 0
    for t, shp in zip(terms, shapes):
        if "..." in t:
            ell_n = max(ell_n, len(shp) - (len(t) - 3))
    ell = spare[:ell_n]
    labels = []
    for t, shp in zip(terms, shapes):
        if "..." in t:
            k = len(shp) - (len(t) - 3)
            head, tail = t.split("...")
            labels.append(list(head) + ell[ell_n - k:] + list(tail))
        else:
            labels.append(list(t))
    if out is None:
        counts = {}
        for ls in labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        outl = [c for c in ell] + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    else:
        if "..." in out:
            head, tail = out.split("...")
            outl = list(head) + ell + list(tail)
        else:
            outl = list(out)
    return labels, outl


def _diagonals(x, labels):
    """x with each label repeated among its axes reduced to one axis (the
    diagonal, moved last)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        for i, c in enumerate(labels):
            j = labels.index(c, i + 1) if labels.count(c) > 1 else -1
            if j > 0:
                x = diagonal(x, 0, i, j)
                labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [c]
                break
    return x, labels


def _sum_labels(x, labels, drop, dt):
    """x summed over the axes of the labels in drop (in dtype dt)."""
    axes = tuple(i for i, c in enumerate(labels) if c in drop)
    if not axes:
        return x, labels
    return sum_(x, axis=axes, dtype=dt), [c for c in labels if c not in drop]


def _squeeze_labels(x, labels, drop):
    """x without the (length-1) axes of the labels in drop: a view."""
    if not any(c in drop for c in labels):
        return x, labels
    key = tuple(0 if c in drop else slice(None) for c in labels)
    return view(x, key), [c for c in labels if c not in drop]


def _pair(a, la, b, lb, keep, dt, allow_tf32):
    """The contraction of a (labels la) and b (labels lb), keeping the labels
    in keep: one product of the planner."""
    a, la = _sum_labels(a, la, {c for c in la if c not in keep and c not in lb}, dt)
    b, lb = _sum_labels(b, lb, {c for c in lb if c not in keep and c not in la}, dt)
    # a contracted label of length 1 on one side only: that side is constant
    # along it, the other side is summed
    size_a = dict(zip(la, a.shape))
    size_b = dict(zip(lb, b.shape))
    shared = [c for c in la if c in lb and c not in keep]
    one_a = {c for c in shared if size_a[c] == 1 and size_b[c] != 1}
    one_b = {c for c in shared if size_b[c] == 1 and size_a[c] != 1}
    a, la = _squeeze_labels(a, la, one_a)
    b, lb = _squeeze_labels(b, lb, one_b)
    a, la = _sum_labels(a, la, one_b, dt)
    b, lb = _sum_labels(b, lb, one_a, dt)
    size = dict(zip(la, a.shape))
    for c, n in zip(lb, b.shape):
        size[c] = max(size.get(c, 1), n)
    res = [c for c in la if c in keep] + [c for c in lb if c in keep and c not in la]
    ks = [c for c in la if c in lb and c not in keep]
    pos = {c: i for i, c in enumerate(res)}
    pos.update({c: len(res) + q for q, c in enumerate(ks)})
    out = _contract(a, b, [pos[c] for c in la], [pos[c] for c in lb],
                    tuple(size[c] for c in res), tuple(size[c] for c in ks), dt)
    return out, res


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """The Einstein summation of the operands, planned into contractions,
    diagonals and sums on the devices."""
    if not operands:
        raise ValueError("No input operands")
    text, ops = _split_args(operands)
    xs = [asdist(o) for o in ops]
    stand = [standin(x.shape, x.dtype) for x in xs]
    kw = {} if dtype is None else {"dtype": dtype}
    # NumPy's checks: subscripts and shapes (einsum_path reads no data), then
    # dtypes and casting on one-element operands
    path, _ = numpy.einsum_path(text, *stand, optimize=optimize if optimize else "greedy")
    probe = numpy.einsum(text, *[numpy.zeros((1,) * x.ndim, x.dtype) for x in xs],
                         casting=casting, **kw)
    dt = numpy.asarray(probe).dtype
    labels, outl = _parse(text, [x.shape for x in xs])
    terms = []
    for x, ls in zip(xs, labels):
        x, ls = _diagonals(x, ls)
        terms.append((x if x.dtype == dt else x.astype(dt), ls))
    allow = _linalg.settings.allow_tf32
    for step in path[1:]:
        picked = [terms[i] for i in step]
        terms = [t for i, t in enumerate(terms) if i not in step]
        later = set(outl)
        for _, ls in terms:
            later.update(ls)
        x, lx = picked[0]
        if len(picked) == 1:
            x, lx = _sum_labels(x, lx, {c for c in lx if c not in later}, dt)
        for y, ly in picked[1:]:
            rest = set(later)
            x, lx = _pair(x, lx, y, ly, rest, dt, allow)
        terms.append((x, lx))
    x, lx = terms[0]
    x, lx = _sum_labels(x, lx, {c for c in lx if c not in outl}, dt)
    perm = [lx.index(c) for c in outl]
    if perm != list(range(len(perm))):
        x = transpose(x, perm)
    if x.mode != "replica":
        x = x.change_mode("replica")
    if out is not None:
        if tuple(out.shape) != x.shape:
            raise ValueError(f"output has shape {tuple(out.shape)}, the result {x.shape}")
        copyto(out, x, casting=casting)
        return out
    return x


def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction order and its report, from the shapes alone."""
    text, ops = _split_args(operands)
    xs = [o if isinstance(o, _DA) else numpy.asarray(o) for o in ops]
    return numpy.einsum_path(text, *[standin(x.shape, x.dtype) for x in xs],
                             optimize=optimize, einsum_call=einsum_call)


FUNCTIONS = {"einsum": einsum, "einsum_path": einsum_path}
