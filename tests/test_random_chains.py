"""Randomised chains of reshard, change_mode, elementwise ops and axis
reductions on int64 arrays, every intermediate state checked against NumPy.

int64 arithmetic wraps the same way in NumPy and dgarray, so every check is
exact however large the values grow.  (CuPy's own version of this test races:
cupy/cupy#9727; here every step's result is read back and compared.)
"""
import numpy as np
import pytest

import dgarray as dg
from _maps import maps_for

SHAPE = (9, 7)
MODES = ["replica", "sum", "prod", "max", "min"]


def random_map(rng, shape, ndev):
    """A random index map covering every element: a named layout, random
    uneven blocks on either axis, or blocks grown into each other."""
    kind = rng.integers(0, 4)
    if kind == 0:
        maps = maps_for(shape, ndev)[1:]  # the named layouts but "default" (no map)
        return maps[rng.integers(0, len(maps))][1]
    ax = int(rng.integers(0, len(shape)))
    n = shape[ax]
    k = int(rng.integers(1, min(ndev, n) + 1))
    cuts = sorted(rng.choice(np.arange(1, n), size=k - 1, replace=False)) if k > 1 else []
    edges = [0] + [int(c) for c in cuts] + [n]
    out = {}
    for d, (a, b) in enumerate(zip(edges, edges[1:])):
        if kind == 3:  # overlapping: grow each block a little
            a, b = max(0, a - int(rng.integers(0, 2))), min(n, b + int(rng.integers(0, 2)))
        key = [slice(None)] * len(shape)
        key[ax] = slice(a, b)
        dev = int(rng.permutation(ndev)[0]) if kind == 2 else d
        out.setdefault(dev, []).append(tuple(key))
    return out


def check(d, ref, what):
    got = d.get()
    assert got.dtype == ref.dtype and got.shape == ref.shape, what
    np.testing.assert_array_equal(got, ref, err_msg=what)


@pytest.fixture
def peer_bytes_by_seed(request):
    """Odd seeds move every region between devices by exchange groups; even
    seeds read small ones in place on the peer."""
    old = dg.config.peer_read_bytes
    dg.config.peer_read_bytes = 0 if request.node.callspec.params["seed"] % 2 else 1 << 20
    yield
    dg.config.peer_read_bytes = old


@pytest.mark.parametrize("seed,nsteps", [(s, 30) for s in range(100)] +
                         [(1000 + s, 300) for s in range(8)])
def test_random_chain(seed, nsteps, peer_bytes_by_seed):
    ndev = min(4, dg._core._ndevices())
    rng = np.random.default_rng(seed)
    ref = rng.integers(-9, 10, SHAPE).astype(np.int64)
    d = dg.distributed_array(ref, random_map(rng, SHAPE, ndev))
    steps = []
    for step in range(nsteps):
        op = rng.integers(0, 6)
        if op == 0:
            m = random_map(rng, SHAPE, ndev)
            d = d.reshard(m)
            steps.append(f"reshard({m})")
        elif op == 1:
            mode = MODES[rng.integers(0, len(MODES))]
            d = d.change_mode(mode)
            steps.append(f"change_mode({mode})")
        elif op in (2, 3, 4):
            f = (np.add, np.multiply, np.maximum)[op - 2]
            o = rng.integers(-3, 4, SHAPE).astype(np.int64)
            od = dg.distributed_array(o, random_map(rng, SHAPE, ndev))
            d, ref = f(d, od), f(ref, o)
            steps.append(f.__name__)
        else:
            ax = int(rng.integers(0, 2))
            red = (np.sum, np.max, np.min)[rng.integers(0, 3)]
            r = red(d, axis=ax, keepdims=True)
            check(r, red(ref, axis=ax, keepdims=True),
                  f"seed {seed}: {steps[-5:]} {red.__name__}")
            d, ref = d - r, ref - red(ref, axis=ax, keepdims=True)
            steps.append(f"- {red.__name__}(axis={ax})")
        check(d, ref, f"seed {seed} after step {step}: {steps[-5:]}")
