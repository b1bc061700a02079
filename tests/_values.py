"""Values for tests: the same random sample of any shape and dtype."""
import numpy as np


def sample(shape, dtype, seed=0):
    """Random values of `shape` in `dtype` (about +-100; complex parts both
    random; bool about half True), the same for the same seed."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 50
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(x > 0)
    return np.asarray(x).astype(dtype)
