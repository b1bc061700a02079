"""Matrix products against NumPy: matmul (@, numpy.matmul, dgarray.matmul),
dot, vdot, inner, outer, tensordot, vecdot / matvec / vecmat, on every dtype
and on a fixed set of layout pairs; the planner's choices; the CG solver of
the cuNumeric talk.

Integer and bool results must equal NumPy's exactly; float and complex ones
within a tolerance scaled by k and the magnitudes (the order of the sums
differs from NumPy's BLAS).
"""
import gc
import re

import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for
from _numpy_check import numpy_result

DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
LAYOUTS = ["default", "rows", "uneven", "strided", "cols", "replicated", "overlap", "blocks",
           "sum_mode"]


def data(dtype, shape, seed=0):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed + 31 * dt.num + len(shape))
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -9, 10, shape).astype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def blocks_map(shape, ndev):
    """A 2-d block layout (make_2d_index_map) over up to 4 devices."""
    m, n = shape[-2:] if len(shape) >= 2 else (1, shape[0])
    if len(shape) != 2 or m < 2 or n < 2:
        return None
    devs = [[{0}, {min(1, ndev - 1)}], [{min(2, ndev - 1)}, {min(3, ndev - 1)}]]
    return dg.make_2d_index_map([0, m // 2, m], [0, n // 3, n], devs)


def distribute(x, layout, ndev):
    if layout == "sum_mode":
        return dg.distributed_array(x, {d: slice(None) for d in range(ndev)}).change_mode("sum")
    if layout == "blocks":
        m = blocks_map(x.shape, ndev)
        return dg.distributed_array(x, m) if m else dg.asarray(x)
    return dg.distributed_array(x, dict(maps_for(x.shape, ndev)).get(layout))


def check(got, want, k=1, r=None):
    """got (a DistributedArray) equals want (NumPy's result): same dtype and
    shape; exact for bool and integers; within rounding for the others.
    k: the terms summed per element.  r (for long sums): per element the
    root of the sum of the terms' squared magnitudes, which the rounding of
    k terms in any order scales with (a random walk), instead of the worst
    case k (|want| + 1), which for float16 exceeds any result."""
    assert isinstance(got, dg.DistributedArray)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    g = got.get()
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want)
        return
    eps = np.finfo(want.dtype).eps
    scale = np.abs(want.astype(np.complex128)) + 1
    if r is None:
        tol = 8 * eps * (k + 2) * scale * 4
    else:  # float16 sums in float32, as NumPy's
        acc = np.finfo(np.float32).eps if want.dtype == np.float16 else eps
        tol = 16 * eps * (scale + 4 * r) + 8 * acc * np.sqrt(k + 2) * r
    assert np.all(np.abs(g.astype(np.complex128) - want) <= tol), np.abs(g - want).max()


def term_root(f, a, b):
    """r of check for f(a, b), f bilinear (dot, vdot, inner, ...)."""
    return np.sqrt(np.abs(f(np.abs(a).astype(np.float64) ** 2,
                            np.abs(b).astype(np.float64) ** 2)))


# ---- matmul: dtypes, layouts, shapes -----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_every_dtype(dtype, ndev):
    a, b = data(dtype, (7, 5)), data(dtype, (5, 6), 1)
    A = distribute(a, "rows", ndev)
    B = distribute(b, "rows", ndev)
    check(A @ B, a @ b, 5)
    check(dg.matmul(A, B), np.matmul(a, b), 5)
    check(np.matmul(A, B), np.matmul(a, b), 5)


@pytest.mark.parametrize("dt1, dt2", [("i1", "u1"), ("?", "i4"), ("i8", "f4"), ("f2", "i1"),
                                      ("f4", "c16"), ("u8", "i8"), ("?", "f2")])
def test_matmul_mixed_dtypes_promote_as_numpy(dt1, dt2, ndev):
    a, b = data(dt1, (4, 6)), data(dt2, (6, 3), 2)
    check(dg.asarray(a) @ distribute(b, "rows", ndev), a @ b, 6)


@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("dtype", ["f8", "i8"])
def test_matmul_layout_pairs(la, lb, dtype, ndev):
    a, b = data(dtype, (13, 11)), data(dtype, (11, 9), 3)
    A, B = distribute(a, la, ndev), distribute(b, lb, ndev)
    check(A @ B, a @ b, 11)


@pytest.mark.parametrize("sa, sb", [((7,), (7,)), ((7,), (7, 5)), ((6, 7), (7,)),
                                    ((3, 6, 7), (7,)), ((7,), (2, 7, 5)),
                                    ((2, 3, 6, 7), (3, 7, 5)), ((4, 6, 7), (7, 5)),
                                    ((6, 7), (4, 7, 5)), ((1, 6, 7), (4, 7, 5)),
                                    ((4, 1, 6, 7), (3, 7, 5)), ((1000, 4), (4, 3)),
                                    ((3, 1000), (1000, 2)), ((1, 1), (1, 1)),
                                    ((9, 1), (1, 10)), ((0, 5), (5, 3)), ((4, 0), (0, 3)),
                                    ((2, 0, 5), (5, 3))])
@pytest.mark.parametrize("layout", ["default", "rows", "cols", "replicated"])
def test_matmul_shapes(sa, sb, layout, ndev):
    a, b = data("f8", sa), data("f8", sb, 4)
    A, B = distribute(a, layout, ndev), distribute(b, layout, ndev)
    k = a.shape[-1] if a.ndim else 1
    check(A @ B, a @ b, k)
    ai, bi = data("i4", sa), data("i4", sb, 4)
    check(distribute(ai, layout, ndev) @ distribute(bi, "rows", ndev), ai @ bi)


@pytest.mark.parametrize("layout", ["rows", "cols", "replicated", "strided"])
def test_batched_layouts_split_the_batch_axis(layout, ndev):
    a, b = data("c16", (5, 4, 6)), data("c16", (5, 6, 3), 5)
    A, B = distribute(a, layout, ndev), distribute(b, "rows", ndev)
    check(A @ B, a @ b, 6)
    check(B @ distribute(data("c16", (3, 2), 6), layout, ndev), b @ data("c16", (3, 2), 6), 3)


def test_k_split_leaves_partial_sums_in_sum_mode(ndev):
    if ndev < 2:
        pytest.skip("needs 2 devices")
    a, b = data("f8", (8, 40)), data("f8", (40, 6), 6)
    A = dg.distributed_array(a, {0: (slice(None), slice(0, 20)), 1: (slice(None), slice(20, None))})
    B = dg.distributed_array(b, {0: slice(0, 20), 1: slice(20, None)})
    C = A @ B
    assert C.mode == "sum"  # each device holds its partial product, as CuPy's matmul leaves it
    assert sorted(d for d, _ in C._layout()) == [0, 1]
    check(C, a @ b, 40)
    check(C + 1, a @ b + 1, 40)


def test_cupy_doc_example_2d_blocks(ndev):
    """cupyx.distributed.array.matmul's docstring example, where CuPy raises
    'no device that can perform multiplication' for other layouts."""
    if ndev < 3:
        pytest.skip("needs 3 devices")
    a = np.arange(6).reshape(2, 3)
    b = np.arange(12).reshape(3, 4)
    A = dg.distributed_array(a, dg.make_2d_index_map([0, 2], [0, 1, 3], [[{0}, {1, 2}]]))
    B = dg.distributed_array(b, dg.make_2d_index_map([0, 1, 3], [0, 2, 4],
                                                     [[{0}, {0}], [{1}, {2}]]))
    check(A @ B, a @ b)
    # blocks that meet on no device: CuPy raises, dgarray moves one
    B2 = dg.distributed_array(b, dg.make_2d_index_map([0, 1, 3], [0, 2, 4],
                                                      [[{2}, {1}], [{0}, {0}]]))
    check(A @ B2, a @ b)


def test_make_2d_index_map_as_cupy():
    m = dg.make_2d_index_map([0, 2, 4], [0, 3, 5], [[{0}, {1}], [{2}, {0, 1}]])
    assert m == {0: [(slice(0, 2), slice(0, 3)), (slice(2, 4), slice(3, 5))],
                 1: [(slice(0, 2), slice(3, 5)), (slice(2, 4), slice(3, 5))],
                 2: [(slice(2, 4), slice(0, 3))]}
    with pytest.raises(ValueError):
        dg.make_2d_index_map([1, 2], [0, 3], [[{0}]])
    with pytest.raises(ValueError):
        dg.make_2d_index_map([0, 2], [0, 3], [[{0}, {1}]])


# ---- operators, protocols, out= ----------------------------------------------------------------

def test_operators_and_protocols(ndev):
    a, b = data("f8", (6, 4)), data("f8", (4, 5), 7)
    A, B = distribute(a, "rows", ndev), distribute(b, "cols", ndev)
    check(A @ B, a @ b, 4)
    check(a @ B, a @ b, 4)           # ndarray @ DistributedArray: __array_ufunc__
    check(A @ b, a @ b, 4)
    check(a.tolist() @ B, a @ b, 4)  # reflected
    check(A.dot(B), a.dot(b), 4)
    check(np.dot(A, B), np.dot(a, b), 4)
    with pytest.raises(TypeError):
        A @ "x"
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        A @ 3


def test_inplace_matmul(ndev):
    a, b = data("f8", (6, 6)), data("f8", (6, 6), 8)
    A = distribute(a, "rows", ndev)
    A_id = id(A)
    A @= distribute(b, "cols", ndev)
    assert id(A) == A_id
    check(A, a @ b, 6)
    I = distribute(data("i8", (6, 6)), "rows", ndev)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'matmul' output"):
        I @= dg.asarray(b)
    with pytest.raises(ValueError, match="mismatch in its core dimension 1"):
        A @= dg.asarray(data("f8", (6, 4)))


def test_out_dtype_casting(ndev):
    a, b = data("i2", (5, 4)), data("i2", (4, 3), 9)
    A, B = distribute(a, "rows", ndev), distribute(b, "rows", ndev)
    out = dg.zeros((5, 3), dtype="f8")
    r = dg.matmul(A, B, out=out)
    assert r is out
    check(out, np.matmul(a, b).astype("f8"))
    check(dg.matmul(A, B, dtype="f4"), np.matmul(a, b, dtype="f4"), 4)
    host = np.zeros((5, 3), dtype="i8")
    np.matmul(A, B, out=host)
    np.testing.assert_array_equal(host, a @ b)
    with pytest.raises(TypeError):
        dg.matmul(dg.asarray(data("f8", (5, 4))), B, out=dg.zeros((5, 3), dtype="i4"))
    with pytest.raises(ValueError):
        dg.matmul(A, B, out=dg.zeros((5, 4)))
    with pytest.raises(ValueError, match="not acceptable"):
        dg.dot(A, B, out=dg.zeros((5, 3), dtype="f8"))
    o = dg.zeros((5, 3), dtype="i2")
    assert dg.dot(A, B, out=o) is o
    check(o, a.dot(b))


@pytest.mark.parametrize("sa, sb", [((3, 4), (5, 6)), ((3,), (4,)), ((2, 3, 4), (3, 4, 5)),
                                    ((3, 4), (3,)), ((5,), (3, 4))])
def test_matmul_shape_errors_are_numpys(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    with pytest.raises(ValueError) as want:
        a @ b
    with pytest.raises(ValueError) as got:
        dg.asarray(a) @ dg.asarray(b)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("f, sa, sb", [("dot", (3, 4), (5, 6)), ("dot", (3,), (4,)),
                                       ("dot", (5, 6, 7), (3, 4, 2)), ("inner", (3, 4), (6, 5)),
                                       ("inner", (3, 4), (5, 6, 7)), ("vdot", (3, 4), (5, 6)),
                                       ("tensordot", (3, 4), (5, 6))])
def test_dot_family_errors_are_numpys(f, sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    with pytest.raises(ValueError) as want:
        getattr(np, f)(a, b)
    with pytest.raises(ValueError) as got:
        getattr(dg, f)(dg.asarray(a), dg.asarray(b))
    assert str(got.value) == str(want.value)


# ---- dot, vdot, inner, outer, tensordot, vecdot ---------------------------------------------

@pytest.mark.parametrize("sa, sb", [((7,), (7,)), ((5, 7), (7,)), ((7,), (7, 4)),
                                    ((5, 7), (7, 4)), ((2, 5, 7), (3, 7, 4)), ((2, 5, 7), (7,)),
                                    ((), (3, 4)), ((3, 4), ())])
@pytest.mark.parametrize("dtype", ["f8", "i4", "c8", "?"])
def test_dot(sa, sb, dtype, ndev):
    a, b = data(dtype, sa), data(dtype, sb, 2)
    A = distribute(a, "rows", ndev) if a.ndim else a
    B = distribute(b, "rows", ndev) if b.ndim else b
    check(dg.dot(A, B), np.asarray(np.dot(a, b)), 7)
    if a.ndim:
        check(A.dot(B), np.asarray(a.dot(b)), 7)


@pytest.mark.parametrize("layout", ["rows", "uneven", "strided", "replicated", "overlap"])
@pytest.mark.parametrize("dtype", ["f4", "f8", "c8", "c16", "f2"])
def test_long_dots(dtype, layout, ndev):
    """1-d dots long enough to be cut over the devices (the pieces after the
    first add into the result): on the GPU they run as the backend's
    multiply and sum loops.  The tolerance scales with the root of the sum
    of the squared terms (check's r), so that a piece lost or counted twice
    fails for every dtype, float16 included."""
    n = 50_003
    a, b = data(dtype, (n,)), data(dtype, (n,), 5)
    A, B = distribute(a, layout, ndev), distribute(b, "uneven", ndev)
    check(A.dot(B), np.asarray(a.dot(b)), n, term_root(np.dot, a, b))
    check(dg.vdot(A, B), np.asarray(np.vdot(a, b)), n, term_root(np.vdot, a, b))
    check(dg.inner(B, A), np.asarray(np.inner(b, a)), n, term_root(np.inner, b, a))


@pytest.mark.parametrize("tf32", [False, True])
@pytest.mark.parametrize("la, lb", [("rows", "rows"), ("default", "replicated"),
                                    ("cols", "rows")])
def test_large_float32_products(la, lb, tf32, ndev):
    """Float32 products big enough (m n k >= 2^30 on one GPU) for the CUDA
    backend's cuBLASLt path: the first product of a shape also times the
    algorithms on the side, the second uses the fastest; rows x rows runs the
    local GEMMs while the other halves are fetched (share_sms).  Each result
    against NumPy in float64 (TF32 rounds the inputs to 10 bits)."""
    a, b = data("f4", (2048, 2048)), data("f4", (2048, 1024), 7)
    A, B = distribute(a, la, ndev), distribute(b, lb, ndev)
    want = a.astype(np.float64) @ b.astype(np.float64)
    dg.config.allow_tf32 = tf32
    try:
        for _ in range(2):
            got = (A @ B).get()
            assert got.dtype == np.float32 and got.shape == want.shape
            err = np.abs(got - want).max() / np.abs(want).max()
            # float32 sums of 2048 products: about sqrt(k) * 2^-24 of the
            # largest entry, 2e-6 seen on one GPU (one GEMM over all of k);
            # TF32 inputs err by about 1e-3, a hundred times the float32 bound
            assert err < (2e-3 if tf32 else 1e-5), err
    finally:
        dg.config.allow_tf32 = False


@pytest.mark.parametrize("dtype", ["f8", "c16", "i8", "f2"])
def test_vdot_inner_outer(dtype, ndev):
    a, b = data(dtype, (4, 6)), data(dtype, (4, 6), 3)
    A, B = distribute(a, "rows", ndev), distribute(b, "cols", ndev)
    check(dg.vdot(A, B), np.asarray(np.vdot(a, b)), 24)
    check(dg.inner(A, B), np.inner(a, b), 6)
    check(dg.outer(A, B), np.outer(a, b))
    c = data(dtype, (5, 3, 6), 4)
    check(dg.inner(A, distribute(c, "rows", ndev)), np.inner(a, c), 6)
    check(np.vdot(A, B), np.asarray(np.vdot(a, b)), 24)
    check(np.inner(A, B), np.inner(a, b), 6)
    check(np.outer(A, B), np.outer(a, b))


@pytest.mark.parametrize("sa, sb, axes", [((3, 4, 5), (4, 5, 6), 2), ((3, 4, 5), (5, 6), 1),
                                          ((3, 4), (5, 6), 0), ((4, 3, 5), (5, 4, 2),
                                                                ([0, 2], [1, 0])),
                                          ((6, 4), (6, 5), ([0], [0])),
                                          ((6, 4), (5, 6), (0, -1)), ((3,), (3,), 1),
                                          ((2, 3, 4), (4, 3, 2), ([1, 2], [1, 0])),
                                          ((2, 3), (3, 2), -1)])
@pytest.mark.parametrize("layout", ["rows", "cols", "strided"])
def test_tensordot(sa, sb, axes, layout, ndev):
    a, b = data("f8", sa), data("f8", sb, 5)
    A, B = distribute(a, layout, ndev), distribute(b, "rows", ndev)
    check(dg.tensordot(A, B, axes), np.tensordot(a, b, axes), 30)
    check(np.tensordot(A, B, axes), np.tensordot(a, b, axes), 30)
    ai, bi = data("i8", sa), data("i8", sb, 5)
    check(dg.tensordot(distribute(ai, layout, ndev), dg.asarray(bi), axes),
          np.tensordot(ai, bi, axes))


@pytest.mark.skipif(not hasattr(np, "vecdot"), reason="NumPy without vecdot")
def test_vecdot_matvec_vecmat(ndev):
    a, v = data("c16", (3, 5, 4)), data("c16", (4,), 2)
    A, V = distribute(a, "rows", ndev), dg.asarray(v)
    check(np.vecdot(A, V), np.vecdot(a, v), 4)
    check(np.matvec(A, V), np.matvec(a, v), 4)
    w = data("c16", (5,), 3)
    check(np.vecmat(dg.asarray(w), A), np.vecmat(w, a), 5)
    check(dg.vecdot(A, V), np.vecdot(a, v), 4)
    # axes= / axis= name each operand's vector axis (moved last)
    b = data("c16", (5, 3, 4), 4)
    B = distribute(b, "rows", ndev)
    for kw in ({"axes": [(1,), (0,), ()]}, {"axes": [(1,), (0,)]}, {"axes": [1, 0]}):
        check(np.vecdot(A, B, **kw), np.vecdot(a, b, **kw), 4)
    for kw in ({"axes": [(0, 1), (0,), ()]}, {"axes": [(1,)]}, {"axes": [5, 0]},
               {"axis": 1, "axes": [(1,), (0,)]}):
        _, e = numpy_result(lambda: np.vecdot(a, b, **kw))
        with pytest.raises(type(e), match=re.escape(str(e))):
            np.vecdot(A, B, **kw)


# ---- the planner ------------------------------------------------------------------------------

def plan(la, sa, lb, sb, ndev=4, cost=None, itemsize=8):
    """The planner's answer for a (m, k) @ (k, n) product of these layouts."""
    (m, k), (k2, n) = sa, sb
    return dg._core._matmul_plan(la, sa, lb, sb, (0, 2), (2, 1), (m, n), (k,), ndev, itemsize,
                                 cost)


def rows(n, parts, ncols, ndev=None):
    return [(d % (ndev or parts), ((n * d // parts, n * (d + 1) // parts, 1), (0, ncols, 1)))
            for d in range(parts)]


def test_plan_rows_times_replicated_moves_nothing():
    la = rows(1000, 4, 300)
    lb = [(d, ((0, 300, 1), (0, 200, 1))) for d in range(4)]
    mode, fallback, chunks, tasks = plan(la, (1000, 300), lb, (300, 200))
    assert mode == "replica" and not fallback
    assert [c[0] for c in chunks] == [0, 1, 2, 3]
    assert all(t[3] and t[4] for t in tasks)  # every block in place
    assert [c[1][0] for c in chunks] == [b[1][0] for b in la]


def test_plan_rows_times_rows_computes_where_the_rows_are():
    """Default layouts of two square matrices: each device computes its rows
    of the result, its own block of b first while the others arrive."""
    n = 8192
    la, lb = rows(n, 2, n), rows(n, 2, n)
    mode, fallback, chunks, tasks = plan(la, (n, n), lb, (n, n), ndev=2)
    assert mode == "replica"
    assert chunks == [(0, ((0, 4096, 1), (0, n, 1))), (1, ((4096, n, 1), (0, n, 1)))]
    for dev in (0, 1):
        mine = [t for t in tasks if t[0] == dev]
        assert len(mine) == 2 and mine[0][2] and mine[0][3] and mine[0][4]  # local first
        assert not mine[1][4] and mine[1][3]  # b's other block comes to it


def test_plan_matching_k_split_stays_partial():
    la = [(0, ((0, 64, 1), (0, 32, 1))), (1, ((0, 64, 1), (32, 64, 1)))]
    lb = [(0, ((0, 32, 1), (0, 16, 1))), (1, ((32, 64, 1), (0, 16, 1)))]
    mode, _, chunks, tasks = plan(la, (64, 64), lb, (64, 16), ndev=2)
    assert mode == "sum" and len(chunks) == 2
    assert all(t[3] and t[4] for t in tasks)


def test_plan_small_operand_moves():
    """rows x rows with a small b: b's blocks move, a's rows stay."""
    la, lb = rows(4096, 4, 4096), rows(4096, 4, 8)
    _, _, chunks, tasks = plan(la, (4096, 4096), lb, (4096, 8))
    assert all(t[3] for t in tasks)  # a never moves
    assert [c[0] for c in chunks] == [0, 1, 2, 3]


def test_plan_splits_one_big_block_among_devices():
    one = [(0, ((0, 4096, 1), (0, 4096, 1))), (1, ((0, 4096, 1), (0, 4096, 1)))]
    _, _, chunks, tasks = plan(one, (4096, 4096), one, (4096, 4096), ndev=2)
    assert sorted(c[0] for c in chunks) == [0, 1]
    assert all(t[3] and t[4] for t in tasks)
    # below the split threshold it stays whole
    _, _, chunks, _ = plan(one, (4096, 4096), one, (4096, 4096), ndev=2,
                           cost=(50e12, 200e9, 10e-6, 1e12))
    assert len(chunks) == 1


def test_plan_strided_layouts_fall_back():
    la = [(d, ((d, 100, 4), (0, 50, 1))) for d in range(4)]
    mode, fallback, chunks, tasks = plan(la, (100, 50), rows(50, 4, 20), (50, 20))
    assert fallback and mode == "replica"
    assert len(tasks) == len(chunks)


def test_products_leak_nothing(ndev):
    a, b = data("f8", (40, 30)), data("f8", (30, 20), 1)
    A, B = distribute(a, "rows", ndev), distribute(b, "cols", ndev)
    (A @ B).get()
    gc.collect()
    before = dg._core._bytes_in_use()
    for la, lb in [("rows", "rows"), ("cols", "rows"), ("strided", "overlap"),
                   ("blocks", "sum_mode")]:
        X, Y = distribute(a, la, ndev), distribute(b, lb, ndev)
        (X @ Y).get()
        dg.tensordot(X, Y, 1).get()
        del X, Y
    gc.collect()
    assert dg._core._bytes_in_use() == before


def test_out_of_device_memory_leaves_operands_intact():
    x = np.arange(1 << 20, dtype=np.float64)
    a = dg.asarray(x)
    gc.collect()
    before = dg._core._bytes_in_use()
    with pytest.raises(dg.OutOfDeviceMemoryError):
        dg.outer(a, a)  # 8 TiB
    gc.collect()
    assert dg._core._bytes_in_use() == before
    check(a.dot(a), np.asarray(x.dot(x)), 1 << 20)


def test_allow_tf32_setting():
    assert dg.config.allow_tf32 is False
    try:
        dg.config.allow_tf32 = True
        assert dg.config.allow_tf32 is True
        a, b = data("f4", (8, 8)), data("f4", (8, 8), 1)
        got = (dg.asarray(a) @ dg.asarray(b)).get()
        tol = 1e-2 if dg.backend() == "cuda" else 1e-5  # TF32: 10-bit mantissa products
        np.testing.assert_allclose(got, a @ b, rtol=tol, atol=tol * 8)
    finally:
        dg.config.allow_tf32 = False


# ---- the CG solver of the cuNumeric talk ----------------------------------------------------

@pytest.mark.parametrize("n", [50, 130])
def test_cg_solver_matches_numpy_solve(n, ndev):
    from _cg import cg_solve
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, n))
    a = m @ m.T + n * np.eye(n)
    b = rng.standard_normal(n)
    A = dg.distributed_array(a, dict(maps_for(a.shape, ndev))["rows"])
    x = cg_solve(A, dg.asarray(b), tol=1e-10)
    assert isinstance(x, dg.DistributedArray)
    np.testing.assert_allclose(x.get(), np.linalg.solve(a, b), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", ["f4", "f8", "c8", "c16"])
def test_cpu_loops_without_blas_match_numpy(dtype, ndev):
    """The CPU backend's own loops for the dtypes NumPy's BLAS usually takes."""
    if dg.backend() != "cpu":
        pytest.skip("the CPU backend's loops")
    a, b = data(dtype, (9, 7)), data(dtype, (7, 5), 1)
    try:
        dg._linalg.use_numpy_blas(False)
        check(distribute(a, "cols", ndev) @ distribute(b, "rows", ndev), a @ b, 7)
        check(dg.tensordot(distribute(a, "rows", ndev), dg.asarray(a), ([0], [0])),
              np.tensordot(a, a, ([0], [0])), 9)
    finally:
        dg._linalg.use_numpy_blas(True)


# ---- the CPU backend: one BLAS call over the whole machine ------------------------------------

# matrices of at least 2^21 multiply-adds (dg_matmul.c's MM_WIDE_MIN_MNK): on
# the CPU backend with NumPy's BLAS, one call over every core
WIDE_A, WIDE_B = (160, 96), (96, 144)


@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", ["default", "rows", "cols", "replicated", "strided", "blocks"])
@pytest.mark.parametrize("dtype", ["f4", "f8", "c8", "c16"])
def test_products_of_whole_machine_size(la, lb, dtype, ndev):
    """Products big enough to run as one call over the machine where the
    devices share one memory (issue [cpu-speed]), on every layout: operands
    read in place or assembled from their chunks, the result copied into its
    chunks."""
    a, b = data(dtype, WIDE_A), data(dtype, WIDE_B, 3)
    A, B = distribute(a, la, ndev), distribute(b, lb, ndev)
    check(A @ B, a @ b, WIDE_A[1])
    check(A @ A.T, a @ a.T, WIDE_A[1])


@pytest.mark.parametrize("layout", ["rows", "cols", "replicated", "strided"])
def test_batched_and_tensordot_of_whole_machine_size(layout, ndev):
    a, b = data("f8", (3, 130, 128)), data("f8", (3, 128, 130), 5)
    A, B = distribute(a, layout, ndev), distribute(b, "rows", ndev)
    check(A @ B, a @ b, 128)
    check(A @ distribute(b[0], layout, ndev), a @ b[0], 128)  # b broadcast
    check(dg.tensordot(A, B, ([0, 2], [0, 1])), np.tensordot(a, b, ([0, 2], [0, 1])), 3 * 128)
    c = data("c16", (130, 128), 6)
    check(distribute(c, layout, ndev) @ distribute(c.T.copy(), "rows", ndev), c @ c.T, 128)


def test_out_and_ints_of_whole_machine_size(ndev):
    a, b = data("f8", WIDE_A), data("f8", WIDE_B, 1)
    A, B = distribute(a, "rows", ndev), distribute(b, "cols", ndev)
    out = dg.asarray(np.zeros((WIDE_A[0], WIDE_B[1])))
    r = dg.matmul(A, B, out=out)
    assert r is out
    check(out, a @ b, WIDE_A[1])
    ai, bi = data("i8", WIDE_A), data("i8", WIDE_B, 1)  # no BLAS: on the devices
    check(distribute(ai, "rows", ndev) @ distribute(bi, "cols", ndev), ai @ bi)


def test_k_split_of_whole_machine_size(ndev):
    """Operands split along k: the devices' products leave partial sums (SUM
    mode); one call over the machine leaves the whole result."""
    if ndev < 2:
        pytest.skip("needs 2 devices")
    a, b = data("f8", (160, 200)), data("f8", (200, 144), 6)
    A = dg.distributed_array(a, {0: (slice(None), slice(0, 100)),
                                 1: (slice(None), slice(100, None))})
    B = dg.distributed_array(b, {0: slice(0, 100), 1: slice(100, None)})
    C = A @ B
    shared = dg.backend() == "cpu" and dg._linalg.use_numpy_blas(True)
    assert C.mode == ("replica" if shared else "sum")
    check(C, a @ b, 200)


def test_products_of_whole_machine_size_leak_nothing(ndev):
    a, b = data("f8", WIDE_A), data("f8", WIDE_B, 1)
    (distribute(a, "rows", ndev) @ distribute(b, "rows", ndev)).get()
    gc.collect()
    before = dg._core._bytes_in_use()
    for la, lb in [("rows", "rows"), ("cols", "rows"), ("strided", "overlap"),
                   ("blocks", "sum_mode"), ("replicated", "replicated")]:
        X, Y = distribute(a, la, ndev), distribute(b, lb, ndev)
        (X @ Y).get()
        del X, Y
    gc.collect()
    assert dg._core._bytes_in_use() == before
