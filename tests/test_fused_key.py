"""The key of a fused kernel (dg_fused_key_of, src/core/dg_fused_src.c): what
the CUDA backend memoizes a compiled kernel by (cuda_fused.c), so that a
chain's piece on a second GPU, or the chain called again, computes only its
argument words.  Pieces that differ only in their addresses (at the same
alignment), extents within one kernel's class, or scalar values must have one
key and one source, byte for byte, and different argument words; pieces
whose source must differ (alignment, kernel, dtype, check, the streaming
kernel's families) must have different keys."""
import numpy as np
import pytest

import dgarray as dg

core = dg._core
IN, SCALAR, TEMP, OUT = 0, 1, 2, 3
F4, F8 = 10, 11  # dg_dtype of float32, float64


def chain(n, base=0, bbase=0, obase=0, two=2.0, three=3.0, dt=F4, isz=4):
    """sqrt(a*a + b*b) + 2*sin(a) - b/3 over n elements, its memory at the
    given byte offsets from arbitrary bases (no memory is touched)."""
    a, b, o = 1 << 30, 1 << 31, 3 << 30
    t = (TEMP, dt, 0, (0,), b"")
    sc = np.float32 if dt == F4 else np.float64
    vals = [(IN, dt, a + base, (isz,), b""), (IN, dt, b + bbase, (isz,), b""),
            (SCALAR, dt, 0, (0,), sc(two).tobytes()),
            (SCALAR, dt, 0, (0,), sc(three).tobytes())] + [t] * 8 + [
                (OUT, dt, o + obase, (isz,), b"")]
    steps = [("multiply", (0, 0, 4)), ("multiply", (1, 1, 5)), ("add", (4, 5, 6)),
             ("sqrt", (6, 7)), ("sin", (0, 8)), ("multiply", (2, 8, 9)), ("add", (7, 9, 10)),
             ("divide", (1, 3, 11)), ("subtract", (10, 11, 12))]
    return (n,), vals, steps


def jacobi(rows, cols, base=0, ld=None, south=1):
    """0.2 * (c + n + s + w + e) of a float32 grid's shifted slices: rows x cols
    interior, the grid's rows ld elements apart, at base; s `south` rows below c."""
    ld = ld or cols + 2
    g, t = (1 << 32) + base, (1 << 33) + base
    at = {"c": g + 4 * (ld + 1), "n": g + 4, "s": g + 4 * ((1 + south) * ld + 1), "w": g + 4 * ld,
          "e": g + 4 * (ld + 2)}
    vals = [(IN, F4, at[k], (4 * ld, 4), b"") for k in "cnswe"] + [
        (TEMP, F4, 0, (0, 0), b"")] * 4 + [
        (SCALAR, F4, 0, (0, 0), np.float32(0.2).tobytes()), (OUT, F4, t, (4 * cols, 4), b"")]
    steps = [("add", (0, 1, 5)), ("add", (5, 3, 6)), ("add", (6, 4, 7)), ("add", (7, 2, 8)),
             ("multiply", (9, 8, 10))]
    return (rows, cols), vals, steps


def strided(shape, step, base=0):
    """a * b + 1 of float64 views of every step-th element of each row (the
    row kernel where the last axis is long, the general one where not)."""
    nd = len(shape)
    st = [8 * step] * nd
    for ax in range(nd - 2, -1, -1):
        st[ax] = st[ax + 1] * shape[ax + 1] * 2
    st = tuple(st)
    dense = [8] * nd
    for ax in range(nd - 2, -1, -1):
        dense[ax] = dense[ax + 1] * shape[ax + 1]
    vals = [(IN, F8, (1 << 30) + base, st, b""), (IN, F8, (1 << 31) + base, st, b""),
            (SCALAR, F8, 0, (0,) * nd, np.float64(1).tobytes()), (TEMP, F8, 0, (0,) * nd, b""),
            (OUT, F8, (3 << 30) + base, tuple(dense), b"")]
    steps = [("multiply", (0, 1, 3)), ("add", (3, 2, 4))]
    return tuple(shape), vals, steps


def source(piece, check=0):
    return core._fused_source_of(*piece, check)


def key(piece, check=0):
    return core._fused_key_of(*piece, check)


def kernel_of(piece):
    """'contig', 'stream', 'rows' or 'general', from the launch's shape."""
    src, _, (items, _, _, band) = source(piece)
    if band > 0:
        return "stream"
    if items > 0:
        return "rows"
    return "contig" if "dg_fpack" in src else "general"


# pieces of one chain that differ only in addresses (same alignment),
# extents within the kernel's class, or scalar values
SAME = {
    "chain": (chain(1 << 20), chain(1 << 20, 1 << 24, 4096, 1 << 28),
              chain((1 << 20) + 8, 16, 32, 48), chain(1 << 27, two=5.0, three=-1.0)),
    "jacobi": (jacobi(512, 1024), jacobi(512, 1024, base=1 << 26), jacobi(9, 1024),
               jacobi(4096, 4096, base=64), jacobi(100, 1000, ld=1030)),
    "rows": (strided((64, 512), 2), strided((64, 512), 2, base=8),
             strided((3, 5000), 2, base=1 << 20)),
    "general": (strided((4, 5, 6), 2), strided((4, 5, 6), 2, base=8),
                strided((40, 3, 100), 3, base=24)),
}


@pytest.mark.parametrize("name", sorted(SAME))
@pytest.mark.parametrize("check", [0, 1, 2])
def test_pieces_share_source(name, check):
    """Pieces differing only in addresses, extents and scalars: one key, one
    source byte for byte; their argument words differ (addresses there)."""
    pieces = SAME[name]
    kinds = {kernel_of(p) for p in pieces}
    assert kinds == {{"chain": "contig", "jacobi": "stream"}.get(name, name)}
    srcs = [source(p, check) for p in pieces]
    keys = [key(p, check) for p in pieces]
    for p, s, k in zip(pieces[1:], srcs[1:], keys[1:]):
        assert s[0] == srcs[0][0]
        assert k == keys[0]
        assert s[1] != srcs[0][1]  # the words carry what differs
    # and the words hold the addresses, the source none of them
    for p, (src, words, _) in zip(pieces, srcs):
        w = np.frombuffer(words, np.uint64)
        for v in p[1]:
            if v[0] in (IN, OUT):
                assert v[2] in w
                assert str(v[2]) not in src and hex(v[2]) not in src


def test_different_sources_have_different_keys():
    """Whatever changes the source changes the key: alignment (the vector
    width), dtype, the check, the kernel's class, the families' rows."""
    pieces = [chain(1 << 20), chain(1 << 20, base=4), chain(1 << 20, base=8),
              chain(1 << 20, dt=F8, isz=8), jacobi(512, 1024), jacobi(512, 1024, south=2),
              jacobi(4, 1024), strided((64, 512), 2), strided((64, 100), 2),
              strided((4, 5, 6), 2)]
    seen = {}
    for i, p in enumerate(pieces):
        for check in (0, 1, 2):
            s, k = source(p, check)[0], key(p, check)
            if s in seen:
                assert seen[s] == k, (i, check)
            seen[s] = k
    # every piece here has a source of its own, and so a key of its own
    assert len(seen) == len(pieces) * 3
    assert len(set(seen.values())) == len(seen)


def test_key_is_deterministic():
    """The key is the same bytes each time (no stray padding): a memo that
    compares keys whole finds a repeat."""
    for p in (chain(1 << 20), jacobi(512, 1024), strided((4, 5, 6), 2)):
        assert len({key(p, c) for c in (1, 1, 1)}) == 1
        assert key(p, 0) != key(p, 1) != key(p, 2)


def test_host_cost_paths_agree():
    """_fused_host_cost's two paths run, each finding at every repeat
    the kernel compiled first (the memo by key, the long way in the
    compiler's memory cache; NVRTC needed)."""
    ok, why = core._rtc_available()
    if not ok:
        pytest.skip(why)
    p = chain(1 << 20)
    for memo in (0, 1):
        sec, found = core._fused_host_cost(*p, 0, 3, memo)
        assert sec > 0 and found == 3
