"""python -m dgarray: the backend, the devices, and a short checked demo."""
import sys
import time

import numpy

import dgarray as dg


def main():
    devs = dg.devices()
    print(f"dgarray {dg.__version__}: backend {dg.backend()}, {len(devs)} device(s)")
    for d in devs:
        print(f"  device {d.id}: {d.name}, {d.total_memory / 2**30:.1f} GiB")
    n = 1 << 22
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(n).astype(numpy.float32)
    y = rng.standard_normal(n).astype(numpy.float32)
    t0 = time.perf_counter()
    a = dg.asarray(x)
    b = dg.asarray(y)
    t1 = time.perf_counter()
    c = dg.sqrt(a * a + b * b) + dg.sin(a) * 2 - b / 3
    c._sync()
    t2 = time.perf_counter()
    got = c.get()
    t3 = time.perf_counter()
    want = numpy.sqrt(x * x + y * y) + numpy.sin(x) * 2 - y / 3
    ok = numpy.allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"sqrt(a*a + b*b) + 2 sin(a) - b/3 on {n:,} float32 values split as "
          f"{ {d: len(v) for d, v in a.index_map.items()} }")
    print(f"  to devices {1e3 * (t1 - t0):.1f} ms, compute {1e3 * (t2 - t1):.1f} ms, "
          f"to host {1e3 * (t3 - t2):.1f} ms")
    print(f"  matches NumPy: {ok}")
    t0 = time.perf_counter()
    total, top, spread = float(c.sum()), int(c.argmax()), float(c.std())
    t1 = time.perf_counter()
    w64 = want.astype(numpy.float64)
    red_ok = (abs(total - w64.sum()) <= 1e-4 * numpy.abs(w64).sum() and top == want.argmax()
              and abs(spread - w64.std()) <= 1e-4 * w64.std())
    print(f"sum {total:.6g}, argmax {top}, std {spread:.6g} in {1e3 * (t1 - t0):.1f} ms "
          f"(each reduced where its data lives)")
    print(f"  matches NumPy: {red_ok}")
    return 0 if ok and red_ok else 1


if __name__ == "__main__":
    sys.exit(main())
