"""The census of NumPy's functions in dgarray: ``python -m dgarray.coverage``.

Every public function of NumPy's main namespace, ``numpy.linalg``,
``numpy.fft`` and ``numpy.random`` is called through dgarray (``dgarray.<name>``,
``dgarray.linalg.<name>``, ...) with small DistributedArrays spread over every
device, under ``dgarray.config.fallback = "raise"``, and gets one status:

- native: runs on the devices, on a device operation of its own (ufunc
  loops, reductions, sorts, products, gathers, fills, ...);
- composed: runs on the devices, built from dgarray's other operations;
- host: goes through NumPy on gathered data (dgarray's fallback), or returns
  NumPy arrays;
- unsupported: raises for arguments NumPy takes;
- n/a: reads no array data (dtypes, settings, text, files, dates): counted
  apart, in no percentage.

Calls are tried in turn from a list of argument recipes (``_RECIPES``, a
default list for the others) until one runs or meets the fallback; native
against composed is declared (``NATIVE``), since a call cannot tell them
apart.  ``--markdown PATH`` writes the table (docs/coverage.md is made so).
"""
import argparse
import contextlib
import io
import sys
import warnings

import numpy

import dgarray as dg

# Functions reading no array data (their inputs are dtypes, settings, text,
# file names, dates or Python callables): n/a, in no count.
NOT_APPLICABLE = frozenset({
    "base_repr", "binary_repr", "busday_count", "busday_offset", "can_cast", "common_type",
    "datetime_as_string", "datetime_data", "format_float_positional",
    "format_float_scientific", "frompyfunc", "get_include", "get_printoptions",
    "getbufsize", "geterr", "geterrcall", "info", "is_busday", "isdtype", "isscalar",
    "issubdtype", "iterable", "min_scalar_type", "mintypecode", "printoptions",
    "promote_types", "result_type", "set_printoptions", "setbufsize", "seterr",
    "seterrcall", "show_config", "show_runtime", "test", "typename", "broadcast_shapes",
    "nested_iters", "load", "loadtxt", "genfromtxt", "fromregex", "fromfile", "fromstring",
    "frombuffer", "save", "savetxt", "savez", "savez_compressed", "array2string",
    "array_repr", "array_str", "isnat", "asmatrix", "bmat", "fromiter", "set_state",
    "get_state", "seed", "get_bit_generator", "set_bit_generator", "bytes",
})

# Implemented on a device operation of their own (the others that run on the
# devices are compositions of dgarray's operations).
NATIVE = frozenset({
    "sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nansum", "nanprod",
    "nanmax", "nanmin", "matmul", "dot", "vdot", "inner", "outer", "tensordot", "vecdot",
    "matvec", "vecmat", "sort", "argsort", "take", "put", "nonzero", "argwhere",
    "flatnonzero", "compress", "extract", "zeros", "ones", "empty", "full", "arange", "eye",
    "identity", "array", "asarray", "asanyarray", "ascontiguousarray", "copy", "copyto",
    "zeros_like", "ones_like", "empty_like", "full_like", "reshape", "ravel", "transpose",
    "permute_dims", "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze",
    "broadcast_to", "matrix_transpose", "bincount", "histogram", "histogram2d",
    "histogramdd", "searchsorted", "digitize", "median", "percentile", "quantile",
    "nanmedian", "nanpercentile", "nanquantile", "partition", "argpartition",
    "shape", "ndim", "size", "astype", "iscomplexobj", "isrealobj", "multi_dot", "interp",
    "random", "standard_normal", "normal", "uniform", "integers", "rand", "randn",
    "randint", "random_sample", "ranf", "sample", "random_integers", "default_rng",
    # norms: the sum of squares (the count slot) or the reductions in one pass
    "norm", "vector_norm", "matrix_norm",
    # the dense slot: one batch of factorisations per chunk
    "cholesky", "solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "eig", "eigvals", "svd",
    "svdvals", "qr", "lstsq",
    # the fft slot
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "fftn", "ifftn", "rfftn", "irfftn",
})

_NS = {"main": (numpy, lambda: dg), "linalg": (numpy.linalg, lambda: dg.linalg),
       "fft": (numpy.fft, lambda: dg.fft), "random": (numpy.random, lambda: dg.random)}


def _arrays():
    """The operands recipes name: small arrays over every device."""
    n = dg._core._ndevices()
    rng = numpy.random.default_rng(0)

    def spread(x):
        if x.ndim == 0 or x.shape[0] < 2:
            return dg.asarray(x)
        k = min(n, x.shape[0])
        cuts = [x.shape[0] * d // k for d in range(k + 1)]
        return dg.distributed_array(x, {d: slice(cuts[d], cuts[d + 1]) for d in range(k)})
    a = rng.standard_normal((4, 4))
    host = {
        "V": rng.standard_normal(8), "A": a, "SPD": a @ a.T + 4 * numpy.eye(4),
        "A3": rng.standard_normal((2, 3, 4)), "C": rng.standard_normal(8) + 1j,
        "I": numpy.array([0, 3, 1, 2, 3, 0, 1, 2]), "B": rng.standard_normal(8) > 0,
        "S": numpy.sort(rng.standard_normal(8)), "P": numpy.array([1.0, -2.0, 3.0]),
        "U8": numpy.arange(8, dtype=numpy.uint8), "D": numpy.abs(rng.standard_normal(8)) + .5,
        "X3": rng.standard_normal((5, 3)), "AI": numpy.arange(16).reshape(4, 4) % 4,
        "Y": rng.standard_normal(4),
    }
    return {k: spread(v) for k, v in host.items()}


def _sub(obj, arrays):
    """A recipe's arguments with its "@NAME" tokens replaced by arrays."""
    if isinstance(obj, str) and obj.startswith("@"):
        return arrays[obj[1:]]
    if isinstance(obj, tuple):
        return tuple(_sub(o, arrays) for o in obj)
    if isinstance(obj, list):
        return [_sub(o, arrays) for o in obj]
    if isinstance(obj, dict):
        return {k: _sub(v, arrays) for k, v in obj.items()}
    return obj


def _r(*args, **kwargs):
    return (args, kwargs)


_DEFAULT = [_r("@V"), _r("@A"), _r("@V", "@V"), _r("@A", "@A"), _r("@I"), _r("@B"),
            _r("@I", "@I"), _r("@B", "@B"), _r("@V", "@V", "@V")]

# Arguments for the functions the default list does not fit.
_RECIPES = {
    "main": {
        "apply_along_axis": [_r(numpy.sum, 0, "@A")],
        "apply_over_axes": [_r(numpy.sum, "@A3", [0, 1])],
        "arange": [_r(5)], "empty": [_r((3, 2))], "zeros": [_r((3, 2))], "ones": [_r((3, 2))],
        "full": [_r((3, 2), 1.5)], "eye": [_r(3)], "identity": [_r(3)], "tri": [_r(3)],
        "linspace": [_r(0, 1, 5)], "logspace": [_r(0, 1, 5)], "geomspace": [_r(1, 8, 4)],
        "indices": [_r((3, 2))], "fromfunction": [_r(lambda i, j: i + j, (3, 2))],
        "bartlett": [_r(5)], "blackman": [_r(5)], "hamming": [_r(5)], "hanning": [_r(5)],
        "kaiser": [_r(5, 2.0)], "diag_indices": [_r(3)], "tril_indices": [_r(3)],
        "triu_indices": [_r(3)], "mask_indices": [_r(3, numpy.triu)],
        "array": [_r("@V")], "asarray": [_r("@V")], "choose": [_r("@I", ["@V", "@V", "@V", "@V"])],
        "select": [_r(["@B", "@B"], ["@V", "@V"])], "piecewise": [_r("@V", ["@B"], [1.0, 2.0])],
        "place": [_r("@V", "@B", [1.0])], "putmask": [_r("@V", "@B", "@V")],
        "put": [_r("@V", "@I", "@V")], "copyto": [_r("@V", "@V")],
        "fill_diagonal": [_r("@A", 0.0)], "put_along_axis": [_r("@A", "@AI", "@A", 1)],
        "take_along_axis": [_r("@A", "@AI", 1)], "take": [_r("@V", "@I")],
        "einsum": [_r("ij,jk->ik", "@A", "@A")], "einsum_path": [_r("ij,jk->ik", "@A", "@A")],
        "insert": [_r("@V", 1, 5.0)], "delete": [_r("@V", 1)], "append": [_r("@V", "@V")],
        "histogram2d": [_r("@V", "@V")], "histogramdd": [_r("@X3")],
        "interp": [_r("@V", "@S", "@V")], "searchsorted": [_r("@S", "@V")],
        "digitize": [_r("@V", "@S")], "pad": [_r("@V", 2)], "partition": [_r("@V", 3)],
        "argpartition": [_r("@V", 3)], "resize": [_r("@V", (3, 3))], "tile": [_r("@V", 2)],
        "repeat": [_r("@V", 2)], "roll": [_r("@V", 1)], "rot90": [_r("@A")],
        "ravel_multi_index": [_r(("@I", "@I"), (4, 4))], "unravel_index": [_r("@I", (4, 4))],
        "split": [_r("@V", 2)], "array_split": [_r("@V", 3)], "hsplit": [_r("@V", 2)],
        "vsplit": [_r("@A", 2)], "dsplit": [_r("@A3", 2)], "reshape": [_r("@V", (2, 4))],
        "concatenate": [_r(["@V", "@V"])], "concat": [_r(["@V", "@V"])],
        "stack": [_r(["@V", "@V"])], "hstack": [_r(["@V", "@V"])], "vstack": [_r(["@V", "@V"])],
        "dstack": [_r(["@V", "@V"])], "column_stack": [_r(["@V", "@V"])],
        "row_stack": [_r(["@V", "@V"])], "block": [_r(["@V", "@V"])], "unstack": [_r("@A")],
        "broadcast_to": [_r("@V", (2, 8))], "expand_dims": [_r("@V", 0)],
        "moveaxis": [_r("@A", 0, 1)], "swapaxes": [_r("@A", 0, 1)], "rollaxis": [_r("@A", 1)],
        "permute_dims": [_r("@A", (1, 0))], "full_like": [_r("@V", 2.0)],
        "lexsort": [_r(("@V", "@V"))], "polyfit": [_r("@V", "@V", 2)],
        "polyval": [_r("@P", "@V")], "polyder": [_r("@P")], "polyint": [_r("@P")],
        "polyadd": [_r("@P", "@P")], "polysub": [_r("@P", "@P")], "polymul": [_r("@P", "@P")],
        "polydiv": [_r("@P", "@P")], "roots": [_r("@P")], "poly": [_r("@P")],
        "convolve": [_r("@V", "@P")], "correlate": [_r("@V", "@P")],
        "gradient": [_r("@V")], "trapezoid": [_r("@V")], "cross": [_r("@X3", "@X3")],
        "kron": [_r("@A", "@A")], "vander": [_r("@V")], "tensordot": [_r("@A", "@A")],
        "around": [_r("@V", 1)], "round": [_r("@V", 1)], "clip": [_r("@V", -0.5, 0.5)],
        "trim_zeros": [_r("@I")], "cov": [_r("@A")], "corrcoef": [_r("@A")],
        "unwrap": [_r("@V")], "sinc": [_r("@V")], "i0": [_r("@V")],
        "nan_to_num": [_r("@V")], "real_if_close": [_r("@C")], "sort_complex": [_r("@C")],
        "isin": [_r("@I", "@I")], "packbits": [_r("@B")], "unpackbits": [_r("@U8")],
        "astype": [_r("@V", numpy.float32)], "require": [_r("@V")],
        "from_dlpack": [_r(numpy.arange(3.0))], "quantile": [_r("@V", 0.5)],
        "percentile": [_r("@V", 50)], "nanquantile": [_r("@V", 0.5)],
        "nanpercentile": [_r("@V", 50)], "where": [_r("@B", "@V", "@V")],
        "asarray_chkfinite": [_r("@V")], "may_share_memory": [_r("@V", "@V")],
        "shares_memory": [_r("@V", "@V")], "ix_": [_r("@I", "@I")],
        "diag_indices_from": [_r("@A")], "tril_indices_from": [_r("@A")],
        "triu_indices_from": [_r("@A")], "matrix_transpose": [_r("@A")],
        "compress": [_r("@B", "@V")], "extract": [_r("@B", "@V")],
        "average": [_r("@V")], "bincount": [_r("@I")], "histogram": [_r("@V")],
        "histogram_bin_edges": [_r("@V")], "ediff1d": [_r("@V")], "setdiff1d": [_r("@I", "@I")],
        "outer": [_r("@V", "@V")], "vecdot": [_r("@V", "@V")], "matvec": [_r("@A", "@Y")],
        "vecmat": [_r("@Y", "@A")], "ldexp": [_r("@V", "@I")],
    },
    "linalg": {
        "cholesky": [_r("@SPD")], "eigh": [_r("@SPD")], "eigvalsh": [_r("@SPD")],
        "solve": [_r("@SPD", "@Y")], "lstsq": [_r("@A", "@Y")], "matrix_power": [_r("@A", 3)],
        "multi_dot": [_r(["@A", "@A", "@A"])], "tensorinv": [_r("@SPD", 1)],
        "tensorsolve": [_r("@SPD", "@Y")], "cross": [_r("@X3", "@X3")],
        "matmul": [_r("@A", "@A")], "outer": [_r("@V", "@V")], "vecdot": [_r("@V", "@V")],
        "tensordot": [_r("@A", "@A")], "trace": [_r("@A")], "diagonal": [_r("@A")],
    },
    "fft": {"fftfreq": [_r(8)], "rfftfreq": [_r(8)], "fft2": [_r("@A")], "ifft2": [_r("@A")],
            "rfft2": [_r("@A")], "irfft2": [_r("@A")], "fftn": [_r("@A")],
            "ifftn": [_r("@A")], "rfftn": [_r("@A")], "irfftn": [_r("@A")]},
    "random": {
        "beta": [_r(1.0, 2.0, 4)], "binomial": [_r(5, 0.5, 4)], "chisquare": [_r(2.0, 4)],
        "choice": [_r(5, 3)], "dirichlet": [_r([1.0, 2.0], 4)], "exponential": [_r(1.0, 4)],
        "f": [_r(2.0, 3.0, 4)], "gamma": [_r(2.0, 1.0, 4)], "geometric": [_r(0.5, 4)],
        "gumbel": [_r(0.0, 1.0, 4)], "hypergeometric": [_r(5, 5, 3, 4)],
        "laplace": [_r(0.0, 1.0, 4)], "logistic": [_r(0.0, 1.0, 4)],
        "lognormal": [_r(0.0, 1.0, 4)], "logseries": [_r(0.5, 4)],
        "multinomial": [_r(5, [0.5, 0.5], 4)],
        "multivariate_normal": [_r([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], 4)],
        "negative_binomial": [_r(5, 0.5, 4)], "noncentral_chisquare": [_r(2.0, 1.0, 4)],
        "noncentral_f": [_r(2.0, 3.0, 1.0, 4)], "normal": [_r(0.0, 1.0, 4)],
        "pareto": [_r(2.0, 4)], "permutation": [_r(5)], "poisson": [_r(2.0, 4)],
        "power": [_r(2.0, 4)], "rand": [_r(4)], "randint": [_r(0, 5, 4)], "randn": [_r(4)],
        "random": [_r(4)], "random_integers": [_r(1, 5, 4)], "random_sample": [_r(4)],
        "ranf": [_r(4)], "rayleigh": [_r(1.0, 4)], "sample": [_r(4)],
        "shuffle": [_r("@V")], "standard_cauchy": [_r(4)], "standard_exponential": [_r(4)],
        "standard_gamma": [_r(2.0, 4)], "standard_normal": [_r(4)], "standard_t": [_r(3.0, 4)],
        "triangular": [_r(0.0, 1.0, 2.0, 4)], "uniform": [_r(0.0, 1.0, 4)],
        "vonmises": [_r(0.0, 1.0, 4)], "wald": [_r(1.0, 1.0, 4)], "weibull": [_r(2.0, 4)],
        "zipf": [_r(2.0, 4)], "default_rng": [_r(0)],
    },
}

_FALLBACK_TEXT = "(dgarray.config.fallback is 'raise')"


def _public_functions(module):
    out = []
    for name in dir(module):
        if name.startswith("_") or name == "test":
            continue
        obj = getattr(module, name)
        if isinstance(obj, type) or not callable(obj):
            continue
        out.append(name)
    return out


def _holds_numpy_arrays(res):
    """True if a result holds numeric NumPy arrays (left on the host)."""
    if isinstance(res, dg.DistributedArray):
        return False
    if isinstance(res, numpy.ndarray):
        return res.dtype.kind in "biufc"
    if isinstance(res, (tuple, list)):
        return any(_holds_numpy_arrays(r) for r in res)
    return False


def _ufunc_recipes(uf):
    return [_r(*(["@V"] * uf.nin)), _r(*(["@I"] * uf.nin)), _r(*(["@B"] * uf.nin))]


def status_of(ns, name, arrays):
    """(status, note) of dgarray's ns.<name>: native, composed, host,
    unsupported or n/a."""
    if name in NOT_APPLICABLE:
        return "n/a", ""
    np_mod, dg_mod = _NS[ns]
    np_obj = getattr(np_mod, name)
    try:
        f = getattr(dg_mod(), name)
    except AttributeError:
        return "unsupported", "no such name in dgarray"
    recipes = _RECIPES.get(ns, {}).get(name, []) + (
        _ufunc_recipes(np_obj) if isinstance(np_obj, numpy.ufunc) else _DEFAULT)
    first_error = None
    for args, kwargs in recipes:
        try:
            with warnings.catch_warnings(), numpy.errstate(all="ignore"), \
                    contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                warnings.simplefilter("error", dg.FallbackWarning)
                res = f(*_sub(args, arrays), **_sub(kwargs, arrays))
                if hasattr(res, "__next__"):
                    res = list(res)
        except dg.FallbackWarning:
            return "host", "through NumPy's fallback"
        except TypeError as e:
            if _FALLBACK_TEXT in str(e):
                return "host", "through NumPy's fallback"
            first_error = first_error or e
            continue
        except Exception as e:  # noqa: BLE001 - any failure is the next recipe's turn
            first_error = first_error or e
            continue
        if _holds_numpy_arrays(res):
            return "host", "returns NumPy arrays"
        return ("native" if name in NATIVE or isinstance(np_obj, numpy.ufunc) else
                "composed"), ""
    text = f"{type(first_error).__name__}: {first_error}".splitlines()[0][:90]
    return "unsupported", text


def census():
    """{namespace: [(name, status, note)]} over NumPy's public functions."""
    old = dg.config.fallback
    dg.config.fallback = "raise"
    try:
        out = {}
        for ns, (np_mod, _) in _NS.items():
            rows = []
            for name in _public_functions(np_mod):
                arrays = _arrays()  # fresh: some functions write into their arguments
                st, note = status_of(ns, name, arrays)
                rows.append((name, st, note))
            out[ns] = rows
        return out
    finally:
        dg.config.fallback = old


_ORDER = ("native", "composed", "host", "unsupported", "n/a")


def summary(table):
    """{namespace or 'all': {status: count}}."""
    out = {}
    for ns, rows in list(table.items()) + [("all", [r for v in table.values() for r in v])]:
        counts = {s: 0 for s in _ORDER}
        for _, st, _ in rows:
            counts[st] += 1
        out[ns] = counts
    return out


def _percent(c):
    numeric = c["native"] + c["composed"] + c["host"] + c["unsupported"]
    return 100.0 * (c["native"] + c["composed"]) / numeric if numeric else 100.0


def markdown(table):
    s = summary(table)
    lines = ["# NumPy's functions in dgarray", "",
             "Generated by `python -m dgarray.coverage --markdown docs/coverage.md` "
             f"(NumPy {numpy.__version__}, dgarray {dg.__version__}, {dg.backend()} backend). "
             "Each function is called through dgarray with small DistributedArrays over every "
             "device under `dgarray.config.fallback = \"raise\"` (dgarray/coverage.py says how).",
             "", "- **native**: runs on the devices on a device operation of its own;",
             "- **composed**: runs on the devices, built from dgarray's operations;",
             "- **host**: runs through NumPy on data gathered to the host (a FallbackWarning);",
             "- **unsupported**: raises for arguments NumPy takes;",
             "- **n/a**: reads no array data (dtypes, settings, text, files, dates).", "",
             "| namespace | native | composed | host | unsupported | n/a | on the devices |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for ns, c in s.items():
        lines.append(f"| {ns} | " + " | ".join(str(c[k]) for k in _ORDER) +
                     f" | {_percent(c):.1f}% |")
    for ns, rows in table.items():
        lines += ["", f"## {'numpy' if ns == 'main' else 'numpy.' + ns}", "",
                  "| function | status | note |", "| --- | --- | --- |"]
        for name, st, note in rows:
            lines.append(f"| `{name}` | {st} | {note.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m dgarray.coverage", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("--markdown", metavar="PATH", help="write the table as Markdown")
    p.add_argument("--list", metavar="STATUS", help="print the functions of one status")
    args = p.parse_args(argv)
    table = census()
    for ns, c in summary(table).items():
        print(f"{ns:7s} " + "  ".join(f"{k} {c[k]:3d}" for k in _ORDER) +
              f"   on the devices {_percent(c):5.1f}%")
    if args.list:
        for ns, rows in table.items():
            for name, st, note in rows:
                if st == args.list:
                    print(f"  {ns}.{name}  {note}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
