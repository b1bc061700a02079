"""Print the inputs where dgarray's elementwise results differ from NumPy's
(a diagnostic for the GPU suite: python benchmarks/diag_ulp.py name:dtype ...)."""
import sys
import warnings

import numpy as np

sys.path.insert(0, "tests")
import dgarray as dg  # noqa: E402
import test_ufuncs as T  # noqa: E402


def ulps(g, r):
    g = np.asarray(g, dtype=r.dtype)
    with np.errstate(all="ignore"):
        d = np.abs(g.astype(np.float64) - r.astype(np.float64))
        sp = np.spacing(np.abs(r)).astype(np.float64)
        return np.where((np.isnan(g) & np.isnan(r)) | (g == r), 0, d / sp)


def report(name, dtype, xs, got, ref):
    for k, (g, r) in enumerate(zip(T._as_tuple(got), T._as_tuple(ref))):
        g = T._host(g)
        parts = [("re", g.real, r.real), ("im", g.imag, r.imag)] if r.dtype.kind == "c" \
            else [("", g, r)]
        for p, gg, rr in parts:
            u = ulps(gg, rr)
            bad = np.argwhere(~(u <= 4))
            print(f"{name}[{dtype}] out{k}{p}: {len(bad)} bad of {u.size}")
            for idx in bad[:8]:
                idx = tuple(idx)
                ins = ", ".join(repr(x[idx]) for x in xs)
                print(f"   f({ins}) = {gg[idx]!r}  numpy {rr[idx]!r}  ulp {u[idx]:.3g}")


def main():
    cases = sys.argv[1:] or ["power:c8", "power:c16", "float_power:c8", "log1p:c8",
                             "hypot:f8", "nextafter:f2", "hypot:f4", "absolute:c8"]
    for c in cases:
        name, dt = c.split(":")
        xs = T.inputs_for(name, np.dtype(dt))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(np, name)(*xs)
            ds = [dg.asarray(x) for x in xs]
            got = getattr(np, name)(*ds)
        report(name, dt, xs, got, ref)
        for layout in T.LAYOUTS:
            nd = min(2, dg._core._ndevices())
            d = [T.distribute(x, layout, nd) for x in xs]
            try:
                T.check_call(getattr(np, name), xs, d, name)
            except AssertionError as e:
                print(f"  {layout}: {str(e)[:1500]}")
    # a float array ** python scalar, and the scalar-exponent power of complex64
    for dt in ("f4", "f8", "c8"):
        x = T.specials(dt)
        for s in (2, 0.5, -1, 2.5, 1.5 - 2j):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ref = np.power(x, s)
                except Exception:
                    continue
                got = np.power(dg.asarray(x), s)
            report(f"power(x, {s!r})", dt, [x], got, ref)


main()
