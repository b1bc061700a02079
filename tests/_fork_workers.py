"""Functions the worker processes of tests/test_fork.py run: in a module of
their own, so that a child started by 'spawn' or 'forkserver' imports them
(and dgarray) without the test module."""
import numpy as np

import dgarray as dg


def combine(pair):
    """(a, b) DistributedArrays in, a new DistributedArray and a sum out:
    computed in the worker, pickled back."""
    a, b = pair
    c = a * 2 + b
    return c, float(c.sum()), c.index_map == a.index_map


def describe(a):
    """What the worker sees of an array it was sent."""
    return a.shape, str(a.dtype), a.mode, a.index_map, a.get()


def fresh(n):
    """An array made in the worker, returned to the parent."""
    return dg.arange(n, dtype=np.float64) ** 2
