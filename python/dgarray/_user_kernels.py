"""Users' kernels in CuPy's form, run on every chunk where it lives ([fusion]
item 3): ElementwiseKernel, ReductionKernel and RawKernel.

The CPU backend compiles the kernel's text as C with the compiler that built
dgarray (_ccompile.py) and calls it once per chunk on the chunk's memory
(lent by _core._chunk_lend after the chunk's pending writes), the chunks of
an array on several virtual devices in parallel threads.

What a call does, as a ufunc call does it:

- Array arguments broadcast together (and with given outputs); the output
  takes the first array input's layout (broadcast to the result's shape), or
  keeps its own when given.  Each input's part under an output chunk is read
  where it lies when that chunk's device holds all of it, else copied there
  first (a view of it when it is already there: no copy).
- `i` is the element's index in the whole (C-order) output and
  `_ind.size()` the output's size, on every chunk, as on one device.
- A `raw` argument is the whole array gathered into one C-order block on
  each device (read-only: a raw output is refused), indexed by a flat index
  `x[k]`.
- Arrays with partial values (mode SUM, PROD, MAX, MIN) are reduced to
  REPLICA first.

On GPUs (_ukernel_cuda.py) the kernels are CUDA C++ compiled by NVRTC and
launched once per chunk on the chunk's GPU; a reduction's partial rows are
copied to the first chunk's device and combined there by one more kernel.
"""
import ctypes
import os
from concurrent.futures import ThreadPoolExecutor

import numpy

from . import _ccompile, _core
from . import _ukernel_cuda as _cuda
from . import _ukernel_params as _params
from ._creation import asarray, empty, empty_like
from ._reductions import normalize_axes
from ._shape import broadcast_to

_DA = _core.DistributedArray
_pool = None

_HEADER = ("#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n"
           "#include <math.h>\n#include <complex.h>\n#undef I\n")

# the loop every generated function runs: an odometer over the chunk's
# box, stepping each memory pointer p[k] by its byte strides and `i`, the
# element's global index, by the box's steps
_LOOP = """
    int64_t _idx[64] = {0}, _outer = 1, _inner = shape[ndim - 1], i0 = 0, _di, _j;
    char *_b[%(narr)d + 1], *p[%(narr)d + 1];
    int64_t _st[%(narr)d + 1];
    int _ax, _k;
    for (_ax = 0; _ax < ndim; _ax++)
        i0 += gstart[_ax] * gmul[_ax];
    for (_ax = 0; _ax < ndim - 1; _ax++)
        _outer *= shape[_ax];
    for (_k = 0; _k < %(narr)d; _k++) {
        _b[_k] = ptrs[_k];
        _st[_k] = strides[_k * ndim + ndim - 1];
    }
    _di = gstep[ndim - 1] * gmul[ndim - 1];
%(setup)s
    for (int64_t _o = 0; _o < _outer; _o++) {
        for (_j = 0; _j < _inner; _j++) {
            const int64_t i = i0 + _j * _di;
            for (_k = 0; _k < %(narr)d; _k++)
                p[_k] = _b[_k] + _j * _st[_k];
            {
%(body)s
            }
        }
        for (_ax = ndim - 2; _ax >= 0; _ax--) {
            if (++_idx[_ax] < shape[_ax]) {
                for (_k = 0; _k < %(narr)d; _k++)
                    _b[_k] += strides[_k * ndim + _ax];
                i0 += gstep[_ax] * gmul[_ax];
                break;
            }
            for (_k = 0; _k < %(narr)d; _k++)
                _b[_k] -= strides[_k * ndim + _ax] * (shape[_ax] - 1);
            i0 -= gstep[_ax] * gmul[_ax] * (shape[_ax] - 1);
            _idx[_ax] = 0;
        }
    }
"""

_SIG = ("int ndim, const int64_t *shape, const int64_t *gstart, const int64_t *gstep, "
        "const int64_t *gmul, int64_t _ind_size, char *const *ptrs, const int64_t *strides")
_I64P = ctypes.POINTER(ctypes.c_int64)
_ARGTYPES = [ctypes.c_int, _I64P, _I64P, _I64P, _I64P, ctypes.c_int64,
             ctypes.POINTER(ctypes.c_void_p), _I64P]


def _quiesce():
    """Runs the pending fused chain and waits for all queued work: a user's
    kernel writes memory directly, so nothing queued may still read (or
    write) what it is about to write."""
    _core._fusion_flush()
    _core._sync_all()


def _operation_text(op):
    """CuPy's CUDA-only index object in the C the host compiles."""
    return op.replace("_ind.size()", "_ind_size")


def _typedefs(types):
    return "".join(f"typedef {_params.c_type(dt)} {name};\n" for name, dt in types.items())


def _i64(values):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def _run_parallel(calls):
    """Runs calls (functions of no argument that release the GIL in ctypes)
    on threads, one per chunk up to the number of devices; the first error
    is raised after all have ended."""
    global _pool
    if len(calls) <= 1:
        for c in calls:
            c()
        return
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(1, min(_core._ndevices(), os.cpu_count() or 1)),
                                   thread_name_prefix="dgarray-ukernel")
    for f in [_pool.submit(c) for c in calls]:
        f.result()


# ---- arguments -----------------------------------------------------------------------

def _as_array(x):
    if isinstance(x, _DA):
        return x if x.mode == "replica" else x.change_mode("replica")
    if isinstance(x, numpy.ndarray) and x.ndim > 0:
        return asarray(x)
    return None


def _scalar(x, name):
    if isinstance(x, (bool, int, float, complex, numpy.generic)) or (
            isinstance(x, numpy.ndarray) and x.ndim == 0):
        return numpy.asarray(x)
    raise TypeError(f"argument {name!r} of a user kernel must be a DistributedArray or a scalar, "
                    f"not {type(x).__name__}")


def _slices(box):
    return tuple(slice(a, b, s) for a, b, s in box)


def _box_len(r):
    return len(range(*r))


def _piece(x, shape, box, dev, keep, writable=False):
    """(address, byte strides, copy) of x (broadcast to shape) under `box`,
    on device dev: x's own memory where a chunk on dev holds all of that
    part (copy None), else a copy made there (kept alive in `keep`), which a
    writer copies back into x.  A writer of an array holding some elements
    twice (replicated, overlapping) always gets a copy, so that the copy
    back reaches every chunk."""
    src = x if x.shape == tuple(shape) else broadcast_to(x, shape)
    view = src[_slices(box)]
    size = _box_size(box)
    if not (writable and _holds_twice(x)):
        for d, b, addr, strides in _core._chunk_lend(view, writable):
            if d == dev and _box_size(b) == size:
                keep.append(view)
                return addr, strides, None
    moved = _one_chunk(view, dev)
    keep.append(moved)
    d, b, addr, strides = _core._chunk_lend(moved, writable)[0]
    return addr, strides, moved


def _inputs_under(ins, shape, box, dev, keep):
    """[address], [byte strides] of each input under box on dev (_piece)."""
    ptrs, strs = [], []
    for a in ins:
        ad, st, _ = _piece(a, shape, box, dev, keep)
        ptrs.append(ad)
        strs.append(st)
    return ptrs, strs


def _holds_twice(x):
    return sum(_box_size(b) for _, b in _core._chunk_layout(x)) > x.size


def _box_size(box):
    return int(numpy.prod([_box_len(r) for r in box]))


def _one_chunk(view, dev):
    """A copy of view in one chunk on device dev."""
    moved = empty(view.shape, dtype=view.dtype, index_map={dev: (slice(None),) * view.ndim})
    moved[...] = view
    return moved


def _raw_host(x, keep):
    """A raw argument: the whole array in one C-order block the host's
    kernels can index (the CPU backend's devices share the host's memory)."""
    h = numpy.ascontiguousarray(x.get())
    keep.append(h)
    return h.ctypes.data


def _gmul(shape):
    m, acc = [0] * len(shape), 1
    for ax in range(len(shape) - 1, -1, -1):
        m[ax] = acc
        acc *= shape[ax]
    return m


def _launch(fn, box, shape, ptrs, strides, extra_ptrs=()):
    """Calls fn on one chunk's box of the result's shape: ptrs / strides of
    its memory arguments, then extra_ptrs (scalars, raw arrays)."""
    cshape = [_box_len(r) for r in box]
    gmul = _gmul(shape)
    if not shape:  # one element: the loop's one axis of length 1
        cshape, box, gmul, strides = [1], [(0, 1, 1)], [1], [(0,) for _ in strides]
    nd = len(cshape)
    allp = list(ptrs) + list(extra_ptrs)
    flat = [s for st in strides for s in st]
    args = (nd, _i64(cshape), _i64([r[0] for r in box]), _i64([r[2] for r in box]),
            _i64(gmul), int(numpy.prod(shape, dtype=numpy.int64)),
            (ctypes.c_void_p * max(len(allp), 1))(*allp), _i64(flat))
    return lambda: fn(*args)


# ---- ElementwiseKernel ---------------------------------------------------------------

class ElementwiseKernel:
    """A user's elementwise kernel in CuPy's form, run on every chunk of the
    output where it lives (see the module's text for layouts, `i`, raw
    arguments).  On the CPU backend `operation` is C (C11, <math.h> and
    <complex.h> included; complex dtypes are C's `float _Complex` and
    `double _Complex`); on GPUs it is CUDA C++ (compiled by NVRTC).
    `_ind.size()` and `i` are CuPy's.  Called as `k(x, y, ..., [outs...],
    size=None)`: size= gives the length of a call without array
    arguments.  A raw argument is the whole array gathered on each device,
    indexed by a flat index; raw outputs are refused."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="",
                 after_loop="", **kwargs):
        self.in_params = _params.parse(in_params, "in_params")
        self.out_params = _params.parse(out_params, "out_params")
        _params.check_names(self.in_params + self.out_params)
        if not self.out_params:
            raise ValueError("out_params must name at least one output")
        for p in self.out_params:
            if p.raw:
                raise ValueError(f"raw output {p.name!r}: a raw argument is the whole array "
                                 f"gathered to each device, which a kernel cannot write; "
                                 f"write it elementwise")
        if not isinstance(operation, str):
            raise TypeError("operation must be a str")
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self.operation, self.name, self.preamble = operation, name, preamble
        self.loop_prep, self.after_loop = loop_prep, after_loop
        self.reduce_dims, self.no_return, self.return_tuple = reduce_dims, no_return, return_tuple
        self.options = tuple(kwargs.get("options", ()))
        self._fns = {}

    def __repr__(self):
        return f"<dgarray.ElementwiseKernel {self.name}>"

    def _decls(self, types, in_dt, memory, ctype):
        """(setup lines, body lines, memory values, extra kinds) of the
        kernel: memory inputs then outputs are p[k]; scalars and raw
        inputs are _xp[j] (kinds 'scalar', 'raw')."""
        slots = {}
        for p in self.in_params:
            if p.name in memory and not p.raw:
                slots[p.name] = len(slots)
        for p in self.out_params:
            slots[p.name] = len(slots)
        body, setup, xkinds = [], [], []
        for p in self.in_params:
            t = p.ctype if p.placeholder else ctype(p.dtype)
            src = ctype(in_dt[p.name])
            if p.name in slots:
                body.append(f"const {t} {p.name} = ({t})*(const {src} *)p[{slots[p.name]}];")
            elif p.raw:
                setup.append(f"    const {t} *const {p.name} = (const {t} *)_xp[{len(xkinds)}];")
                xkinds.append("raw")
            else:
                setup.append(f"    const {t} {p.name} = ({t})*(const {src} *)_xp[{len(xkinds)}];")
                xkinds.append("scalar")
        for p in self.out_params:
            t = p.ctype if p.placeholder else ctype(p.dtype)
            body.append(f"#define {p.name} (*({t} *)p[{slots[p.name]}])")
        body.append(self.operation + ";")
        body += [f"#undef {p.name}" for p in self.out_params]
        return "\n".join(setup), "\n".join(body), len(slots), xkinds

    def _source(self, types, in_dt, memory):
        setup, body, nmem, _ = self._decls(types, in_dt, memory, _params.c_type)
        setup = f"    char *const *_xp = ptrs + {nmem};\n" + setup
        loop = _LOOP % {"narr": nmem, "setup": setup + "\n" + self.loop_prep,
                        "body": _operation_text(body)}
        return (_HEADER + _typedefs(types) + self.preamble + "\n"
                + f"void dg_ukernel({_SIG})\n{{{loop}{self.after_loop}\n}}\n")

    def _function(self, types, in_dt, memory):
        key = (tuple(types.items()), tuple(in_dt.items()), tuple(sorted(memory)))
        fn = self._fns.get(key)
        if fn is None:
            lib = _ccompile.load(self._source(types, in_dt, memory))
            fn = lib.dg_ukernel
            fn.argtypes, fn.restype = _ARGTYPES, None
            self._fns[key] = fn
        return fn

    def __call__(self, *args, size=None, block_size=None, **kwargs):
        if kwargs:
            raise TypeError(f"Wrong arguments {', '.join(kwargs)}")
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(f"Wrong number of arguments for {self.name!r}: {self.nin} or "
                            f"{self.nargs} expected, {len(args)} given")
        gpu = _core.backend() != "cpu"
        ctype = _cuda.cu_type if gpu else _params.c_type
        ins, outs = args[:self.nin], args[self.nin:]
        types, arrays, scalars = {}, {}, {}
        for p, x in zip(self.in_params, ins):
            a = _as_array(x)
            if a is not None:
                arrays[p.name] = a
                _params.bind(types, p, a.dtype)
            elif p.raw:
                raise TypeError(f"raw argument {p.name!r} must be an array")
        out_arrays = []
        for p, o in zip(self.out_params, outs):
            if not isinstance(o, _DA):
                raise TypeError(f"output {p.name!r} must be a DistributedArray, not "
                                f"{type(o).__name__}")
            if _core._readonly(o):
                raise ValueError(f"output {p.name!r} is read-only")
            _params.bind(types, p, o.dtype)
            out_arrays.append(o)
        for p, x in zip(self.in_params, ins):
            if p.name not in arrays:
                s = _scalar(x, p.name)
                if p.placeholder and p.ctype not in types:
                    _params.bind(types, p, s.dtype)
                scalars[p.name] = s
        out_dt = {p.name: _params.resolve(types, p) for p in self.out_params}
        for p, o in zip(self.out_params, out_arrays):
            if o.dtype != out_dt[p.name]:
                raise TypeError(f"Type is mismatched: output {p.name} is {o.dtype}, the kernel "
                                f"writes {out_dt[p.name]}")
        in_dt = {}
        for p in self.in_params:
            in_dt[p.name] = (arrays[p.name].dtype if p.name in arrays
                             else _params.resolve(types, p))
        for dt in list(types.values()) + list(in_dt.values()):
            ctype(dt)
        elem = [arrays[p.name] for p in self.in_params if p.name in arrays and not p.raw]
        if elem:
            if size is not None:
                raise ValueError("size= is for kernels without array arguments; this call's "
                                 "size is its arrays' broadcast shape")
            shape = numpy.broadcast_shapes(*[a.shape for a in elem])
        elif out_arrays:
            shape = out_arrays[0].shape
        elif size is not None:
            shape = (int(size),)
        else:
            raise ValueError(f"Loop size is undecided: {self.name!r} has no array argument "
                             f"to take it from; pass size=")
        for p, o in zip(self.out_params, out_arrays):
            try:
                full = numpy.broadcast_shapes(shape, o.shape)
            except ValueError:
                full = None
            if full != o.shape:
                raise ValueError(f"non-broadcastable output operand {p.name!r} with shape "
                                 f"{o.shape} doesn't match the broadcast shape {shape}")
            shape = o.shape
        shape = tuple(shape)
        if not out_arrays:
            for p in self.out_params:
                if elem:
                    base = elem[0] if elem[0].shape == shape else broadcast_to(elem[0], shape)
                    out_arrays.append(empty_like(base, dtype=out_dt[p.name]))
                else:
                    out_arrays.append(empty(shape, dtype=out_dt[p.name]))
        ins = [arrays[p.name] for p in self.in_params if p.name in arrays and not p.raw]
        keep = []
        if gpu:
            launch, finish = self._gpu_launcher(types, in_dt, arrays, scalars, shape,
                                                block_size, keep)
        else:
            fn = self._function(types, in_dt, set(arrays))
            extra = []
            for p in self.in_params:
                if p.name in arrays and p.raw:
                    extra.append(_raw_host(arrays[p.name], keep))
                elif p.name in scalars:
                    extra.append(_scalar_value(scalars[p.name], in_dt[p.name], keep))
            calls = []

            def launch(dev, box, ptrs, strs):
                calls.append(_launch(fn, box, shape, ptrs, strs, extra))

            def finish():
                _run_parallel(calls)
        self._run(launch, finish, shape, ins, out_arrays, keep)
        if self.no_return:
            return None
        if self.nout == 1 and not self.return_tuple:
            return out_arrays[0]
        return tuple(out_arrays)

    def _cuda_source(self, types, in_dt, memory, ndim):
        """(CUDA source, memory values, extra kinds) of the call on GPUs."""
        setup, body, nmem, xkinds = self._decls(types, in_dt, memory, _cuda.cu_type)
        head = "".join(f"typedef {_cuda.cu_type(dt)} {n};\n" for n, dt in types.items())
        return (_cuda.elementwise_source(head + self.preamble + "\n", ndim, nmem, xkinds, setup,
                                         body, self.loop_prep, self.after_loop), nmem, xkinds)

    def _gpu_launcher(self, types, in_dt, arrays, scalars, shape, block_size, keep):
        """(launch, finish) of the call on GPUs: one grid-stride kernel per
        output chunk, on that chunk's GPU."""
        src, nmem, xkinds = self._cuda_source(types, in_dt, set(arrays), len(shape))
        drv = _cuda.driver()
        Args = _cuda.args_struct(len(shape), nmem, xkinds.count("raw"), xkinds.count("scalar"))
        raws = [arrays[p.name] for p in self.in_params if p.name in arrays and p.raw]
        scs = [_scalar_value(scalars[p.name], in_dt[p.name], keep)
               for p in self.in_params if p.name in scalars]
        bs = int(block_size or 256)
        gpus = []

        def launch(dev, box, ptrs, strs):
            gpu = _cuda.gpu_of(dev)
            fn = drv.function(src, "dg_ukernel", gpu)
            a = Args()
            cshape = [_box_len(r) for r in box]
            for ax, m in enumerate(_gmul(shape)):
                a.shape[ax], a.gstart[ax], a.gstep[ax], a.gmul[ax] = (
                    cshape[ax], box[ax][0], box[ax][2], m)
            for k, (ad, st) in enumerate(zip(ptrs, strs)):
                a.ptr[k] = ad
                for ax, v in enumerate(st):
                    a.strides[k][ax] = v
            for k, x in enumerate(raws):
                whole = _one_chunk(x, dev)
                keep.append(whole)
                a.raw[k] = _core._chunk_lend(whole, False)[0][2]
            for k, addr in enumerate(scs):
                ctypes.memmove(ctypes.addressof(a.sc) + 16 * k, addr, 16)
            a.n = _box_size(box)
            a.ind_size = int(numpy.prod(shape, dtype=numpy.int64))
            keep.append(a)
            drv.launch(fn, gpu, (min(-(-a.n // bs), 1 << 20),), (bs,), [a])
            gpus.append(gpu)

        def finish():
            drv.synchronize(gpus)
        return launch, finish

    @staticmethod
    def _run(launch, finish, shape, ins, outs, keep):
        """launch(dev, box, addresses, strides) for each output chunk: the
        inputs' parts under it, then the outputs'; finish() runs them; then
        the outputs' parts that had to be copied are copied back."""
        if 0 in shape:
            return
        _quiesce()
        writeback = []
        for dev, box, addr, strides in _core._chunk_lend(outs[0], True):
            if any(_box_len(r) == 0 for r in box):
                continue
            ptrs, strs = _inputs_under(ins, shape, box, dev, keep)
            ptrs.append(addr)
            strs.append(strides)
            for o in outs[1:]:
                ad, st, moved = _piece(o, shape, box, dev, keep, writable=True)
                ptrs.append(ad)
                strs.append(st)
                if moved is not None:
                    writeback.append((o, _slices(box), moved))
            launch(dev, box, ptrs, strs)
        finish()
        for o, sl, piece in writeback:
            o[sl] = piece


def _scalar_value(s, dtype, keep):
    """The address of scalar s as dtype, in 16 bytes kept alive in keep."""
    v = numpy.zeros(16, numpy.uint8)
    v[:numpy.dtype(dtype).itemsize] = numpy.frombuffer(
        numpy.ascontiguousarray(s.astype(dtype)).tobytes(), numpy.uint8)
    keep.append(v)
    return v.ctypes.data


# ---- ReductionKernel -----------------------------------------------------------------

class ReductionKernel:
    """A user's reduction in CuPy's form: map_expr on each element (of
    reduce_type, by default the first output's type), combined two by two
    by reduce_expr (`a`, `b`), then post_map_expr (`a`, the outputs) once
    per output element.  Each chunk is reduced where it lives; the chunks'
    partial values are combined with reduce_expr, then post-mapped.  With
    identity None an empty reduction is a ValueError, as NumPy's."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr="",
                 identity=None, name="reduce_kernel", reduce_type=None, reduce_dims=True,
                 preamble="", options=()):
        self.in_params = _params.parse(in_params, "in_params")
        self.out_params = _params.parse(out_params, "out_params")
        _params.check_names(self.in_params + self.out_params)
        if not self.out_params:
            raise ValueError("out_params must name at least one output")
        if any(p.raw for p in self.in_params + self.out_params):
            raise ValueError("a ReductionKernel takes no raw argument")
        for what, v in (("map_expr", map_expr), ("reduce_expr", reduce_expr),
                        ("post_map_expr", post_map_expr)):
            if not isinstance(v, str):
                raise TypeError(f"{what} must be a str")
        self.map_expr, self.reduce_expr = map_expr, reduce_expr
        self.post_map_expr = post_map_expr or f"{self.out_params[0].name} = a"
        self.identity = None if identity is None else str(identity)
        self.name, self.preamble, self.options = name, preamble, tuple(options)
        self.reduce_type = reduce_type
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self._libs = {}

    def __repr__(self):
        return f"<dgarray.ReductionKernel {self.name}>"

    def _reduce_dtype(self, types):
        rt = self.reduce_type
        if rt is None:
            return _params.resolve(types, self.out_params[0])
        if isinstance(rt, str) and rt in types:
            return types[rt]
        return numpy.dtype(rt)

    def _map_decls(self, in_dt, memory, ctype):
        """(setup lines, body lines ending in _m, the mapped value; memory
        inputs p[k]; scalars _xp[j]; memory values, scalars)."""
        slots = {p.name: k for k, p in enumerate(q for q in self.in_params if q.name in memory)}
        body, setup, nsc = [], [], 0
        for p in self.in_params:
            t = p.ctype if p.placeholder else ctype(p.dtype)
            src = ctype(in_dt[p.name])
            if p.name in slots:
                body.append(f"const {t} {p.name} = ({t})*(const {src} *)p[{slots[p.name]}];")
            else:
                setup.append(f"    const {t} {p.name} = ({t})*(const {src} *)_xp[{nsc}];")
                nsc += 1
        body.append(f"_type_reduce _m = (_type_reduce)({self.map_expr});")
        return "\n".join(setup), "\n".join(body), len(slots), nsc

    def _post_defs(self, ctype):
        defs = "\n".join(
            f"#define {p.name} (*({p.ctype if p.placeholder else ctype(p.dtype)} *)"
            f"(_outs[{k}] + _e * _osize[{k}]))" for k, p in enumerate(self.out_params))
        return defs, "\n".join(f"#undef {p.name}" for p in self.out_params)

    def _source(self, types, in_dt, rdt, memory):
        rt = _params.c_type(rdt)
        setup, decl, nmem, _ = self._map_decls(in_dt, memory, _params.c_type)
        setup = f"    char *const *_xp = ptrs + {nmem + 2};\n" + setup
        body = [_operation_text(decl)]
        body.append(f"_type_reduce *_acc = (_type_reduce *)p[{nmem}];")
        if self.identity is not None:  # partials start at the identity: no flag to test
            body.append("*_acc = dg_ureduce(*_acc, _m);")
        else:
            body.append(f"if (*p[{nmem + 1}]) *_acc = dg_ureduce(*_acc, _m); "
                        f"else {{ *_acc = _m; *p[{nmem + 1}] = 1; }}")
        loop = _LOOP % {"narr": nmem + 2, "setup": setup, "body": "\n".join(body)}
        post_defs, post_undefs = self._post_defs(_params.c_type)
        init = ("for (int64_t _e = 0; _e < n; _e++) { acc[_e] = (_type_reduce)(%s); "
                "seen[_e] = 1; }" % self.identity) if self.identity is not None else "(void)acc;"
        return (_HEADER + _typedefs(types) + f"typedef {rt} _type_reduce;\n" + self.preamble
                + "\nstatic inline _type_reduce dg_ureduce(_type_reduce a, _type_reduce b)\n"
                f"{{\n    return ({_operation_text(self.reduce_expr)});\n}}\n"
                f"void dg_ureduce_map({_SIG})\n{{{loop}}}\n"
                "void dg_ureduce_init(int64_t n, _type_reduce *acc, unsigned char *seen)\n"
                f"{{\n    {init}\n    (void)seen;\n}}\n"
                "void dg_ureduce_combine(int64_t n, _type_reduce *acc, unsigned char *seen, "
                "const _type_reduce *src, const unsigned char *sseen)\n{\n"
                "    for (int64_t _e = 0; _e < n; _e++) {\n"
                "        if (!sseen[_e]) continue;\n"
                "        acc[_e] = seen[_e] ? dg_ureduce(acc[_e], src[_e]) : src[_e];\n"
                "        seen[_e] = 1;\n    }\n}\n"
                "void dg_ureduce_post(int64_t n, const _type_reduce *accs, char *const *_outs, "
                "const int64_t *_osize)\n{\n"
                "    for (int64_t _e = 0; _e < n; _e++) {\n"
                "        _type_reduce a = accs[_e];\n"
                f"{post_defs}\n{_operation_text(self.post_map_expr)};\n{post_undefs}\n"
                "    }\n}\n")

    def _lib(self, types, in_dt, rdt, memory):
        key = (tuple(types.items()), tuple(in_dt.items()), rdt, tuple(sorted(memory)))
        lib = self._libs.get(key)
        if lib is None:
            lib = _ccompile.load(self._source(types, in_dt, rdt, memory))
            lib.dg_ureduce_map.argtypes = _ARGTYPES
            for f in ("dg_ureduce_map", "dg_ureduce_init", "dg_ureduce_combine",
                      "dg_ureduce_post"):
                getattr(lib, f).restype = None
            self._libs[key] = lib
        return lib

    def _cuda_source(self, types, in_dt, rdt, memory, ndim):
        """(CUDA source, memory values, scalars) of the call on GPUs."""
        setup, decl, nmem, nsc = self._map_decls(in_dt, memory, _cuda.cu_type)
        head = "".join(f"typedef {_cuda.cu_type(dt)} {n};\n" for n, dt in types.items())
        head += f"typedef {_cuda.cu_type(rdt)} _type_reduce;\n" + self.preamble + "\n"
        defs, undefs = self._post_defs(_cuda.cu_type)
        defs = ("char *const *_outs = F.out;\nconst long long *_osize = F.osize;\n" + defs)
        return (_cuda.reduction_source(head, ndim, nmem, nsc, setup, decl, self.reduce_expr, defs,
                                       self.post_map_expr, undefs, self.identity), nmem, nsc)

    def _gpu_reduce(self, types, in_dt, rdt, out_dt, arrays, scalars, elem, shape, axes, kshape):
        """The outputs (kshape, on the first chunk's device) of the call on
        GPUs: each chunk of a disjoint cover reduced on its GPU into partial
        rows, the rows copied to one device and combined there, then
        post-mapped."""
        src, nmem, nsc = self._cuda_source(types, in_dt, rdt, set(arrays), len(shape))
        drv = _cuda.driver()
        Args = _cuda.reduce_struct(len(shape), nmem, nsc)
        keep = []
        scs = [_scalar_value(scalars[p.name], in_dt[p.name], keep)
               for p in self.in_params if p.name in scalars]
        first = elem[0] if elem[0].shape == shape else broadcast_to(elem[0], shape)
        layout = _core._chunk_layout(first)
        cover = [(layout[ci][0], box) for ci, box in _core._chunk_cover(first)
                 if 0 not in shape and all(_box_len(r) for r in box)]
        dev0 = cover[0][0] if cover else layout[0][0]
        nout = int(numpy.prod(kshape, dtype=numpy.int64))
        bs = _cuda.BLOCK_REDUCE
        plans, rows = [], 0
        for dev, box in cover:
            nkept = int(numpy.prod([1 if ax in axes else _box_len(r)
                                    for ax, r in enumerate(box)], dtype=numpy.int64))
            nred = _box_size(box) // max(nkept, 1)
            groups = max(1, min(1024, nred // (8 * bs), 65536 // max(nkept, 1)))
            plans.append((dev, box, nkept, nred, groups, rows))
            rows += groups
        whole = {dev0: (slice(None),) * (len(kshape) + 1)}
        pall = empty((max(rows, 1),) + kshape, dtype=rdt, index_map=whole)
        sall = empty((max(rows, 1),) + kshape, dtype=numpy.uint8, index_map=whole)
        sall[...] = 0
        gpus, parts = [], []
        for dev, box, nkept, nred, groups, row in plans:
            pshape = tuple(1 if ax in axes else _box_len(r) for ax, r in enumerate(box))
            one = {dev: (slice(None),) * (len(pshape) + 1)}
            pacc = empty((groups,) + pshape, dtype=rdt, index_map=one)
            pseen = empty((groups,) + pshape, dtype=numpy.uint8, index_map=one)
            ptrs, strs = _inputs_under(elem, shape, box, dev, keep)
            a = Args()
            for ax, m in enumerate(_gmul(shape)):
                n = _box_len(box[ax])
                a.kshape[ax], a.rshape[ax] = (1, n) if ax in axes else (n, 1)
                a.gstart[ax], a.gstep[ax], a.gmul[ax] = box[ax][0], box[ax][2], m
            for k, (ad, st) in enumerate(zip(ptrs, strs)):
                a.ptr[k] = ad
                for ax, v in enumerate(st):
                    a.strides[k][ax] = v
            for k, addr in enumerate(scs):
                ctypes.memmove(ctypes.addressof(a.sc) + 16 * k, addr, 16)
            a.pacc = _core._chunk_lend(pacc, True)[0][2]
            a.pseen = _core._chunk_lend(pseen, True)[0][2]
            a.nkept, a.nred, a.groups = nkept, nred, groups
            keep.append(a)
            parts.append((pacc, pseen))
            gpu = _cuda.gpu_of(dev)
            drv.launch(drv.function(src, "dg_ureduce_map", gpu), gpu,
                       (min(nkept * groups, 1 << 20),), (bs,), [a])
            gpus.append(gpu)
        drv.synchronize(gpus)
        for (dev, box, nkept, nred, groups, row), (pacc, pseen) in zip(plans, parts):
            region = (slice(row, row + groups),) + tuple(
                slice(0, 1) if ax in axes else slice(*r) for ax, r in enumerate(box))
            pall[region] = pacc
            sall[region] = pseen
        outs = [empty(kshape, dtype=out_dt[p.name], index_map={dev0: (slice(None),) * len(kshape)})
                for p in self.out_params]
        fseen = empty(kshape, dtype=numpy.uint8, index_map={dev0: (slice(None),) * len(kshape)})
        if nout:
            F = _cuda.final_struct(len(outs))()
            F.acc = _core._chunk_lend(pall, False)[0][2]
            F.seen = _core._chunk_lend(sall, False)[0][2]
            F.rows, F.n = rows, nout
            for k, o in enumerate(outs):
                F.out[k] = _core._chunk_lend(o, True)[0][2]
                F.osize[k] = o.itemsize
            F.fseen = _core._chunk_lend(fseen, True)[0][2]
            gpu = _cuda.gpu_of(dev0)
            drv.launch(drv.function(src, "dg_ureduce_final", gpu), gpu,
                       (min(-(-nout // 256), 1 << 20),), (256,), [F])
            drv.synchronize([gpu])
            if not fseen.get().all():
                raise ValueError(f"zero-size array to reduction operation {self.name} which has "
                                 f"no identity")
        return outs

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        if len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(f"Wrong number of arguments for {self.name!r}: {self.nin} or "
                            f"{self.nin + self.nout} expected, {len(args)} given")
        gpu = _core.backend() != "cpu"
        ctype = _cuda.cu_type if gpu else _params.c_type
        outs = list(args[self.nin:])
        if out is not None:
            if outs:
                raise TypeError("output given both as an argument and as out=")
            outs = [out]
            if self.nout != 1:
                raise TypeError(f"out= names one output; {self.name!r} has {self.nout}")
        types, arrays, scalars = {}, {}, {}
        for p, x in zip(self.in_params, args[:self.nin]):
            a = _as_array(x)
            if a is not None:
                arrays[p.name] = a
                _params.bind(types, p, a.dtype)
        for p, o in zip(self.out_params, outs):
            if not isinstance(o, _DA):
                raise TypeError(f"output {p.name!r} must be a DistributedArray")
            _params.bind(types, p, o.dtype)
        for p, x in zip(self.in_params, args[:self.nin]):
            if p.name not in arrays:
                s = _scalar(x, p.name)
                if p.placeholder and p.ctype not in types:
                    _params.bind(types, p, s.dtype)
                scalars[p.name] = s
        if not arrays:
            raise ValueError(f"{self.name!r} reduces arrays: give at least one array argument")
        in_dt = {p.name: (arrays[p.name].dtype if p.name in arrays else _params.resolve(types, p))
                 for p in self.in_params}
        out_dt = {p.name: _params.resolve(types, p) for p in self.out_params}
        for p, o in zip(self.out_params, outs):
            if o.dtype != out_dt[p.name]:
                raise TypeError(f"Type is mismatched: output {p.name} is {o.dtype}, the kernel "
                                f"writes {out_dt[p.name]}")
        rdt = self._reduce_dtype(types)
        for dt in list(types.values()) + list(in_dt.values()) + [rdt]:
            ctype(dt)
        elem = [arrays[p.name] for p in self.in_params if p.name in arrays]
        shape = tuple(numpy.broadcast_shapes(*[a.shape for a in elem]))
        axes = normalize_axes(axis, len(shape))
        kshape = tuple(1 if ax in axes else n for ax, n in enumerate(shape))
        rshape = kshape if keepdims else tuple(n for ax, n in enumerate(shape) if ax not in axes)
        for p, o in zip(self.out_params, outs):
            if o.shape != rshape:
                raise ValueError(f"output {p.name!r} has shape {o.shape}; the reduction's is "
                                 f"{rshape}")
        _quiesce()
        if gpu:
            res = self._gpu_reduce(types, in_dt, rdt, out_dt, arrays, scalars, elem, shape, axes,
                                   kshape)
            res = [r.reshape(rshape) for r in res]
            for k, o in enumerate(outs):
                o[...] = res[k]
                res[k] = o
            return res[0] if self.nout == 1 else tuple(res)
        lib = self._lib(types, in_dt, rdt, set(arrays))
        acc = numpy.empty(kshape, dtype=rdt)
        seen = numpy.zeros(kshape, dtype=numpy.uint8)
        n = acc.size
        lib.dg_ureduce_init(ctypes.c_int64(n), ctypes.c_void_p(acc.ctypes.data),
                            ctypes.c_void_p(seen.ctypes.data))
        keep, extra = [], []
        for p in self.in_params:
            if p.name in scalars:
                extra.append(_scalar_value(scalars[p.name], in_dt[p.name], keep))
        first = elem[0] if elem[0].shape == shape else broadcast_to(elem[0], shape)
        layout = _core._chunk_layout(first)
        calls, parts = [], []
        if 0 not in shape:
            for ci, box in _core._chunk_cover(first):
                dev = layout[ci][0]
                if any(_box_len(r) == 0 for r in box):
                    continue
                ptrs, strs = _inputs_under(elem, shape, box, dev, keep)
                pshape = [1 if ax in axes else _box_len(r) for ax, r in enumerate(box)]
                pacc = numpy.empty(pshape, dtype=rdt)
                pseen = numpy.zeros(pshape, dtype=numpy.uint8)
                lib.dg_ureduce_init(ctypes.c_int64(pacc.size), ctypes.c_void_p(pacc.ctypes.data),
                                    ctypes.c_void_p(pseen.ctypes.data))
                ptrs += [pacc.ctypes.data, pseen.ctypes.data]
                strs += [tuple(0 if ax in axes else s for ax, s in enumerate(pacc.strides)),
                         tuple(0 if ax in axes else s for ax, s in enumerate(pseen.strides))]
                parts.append((box, pacc, pseen))
                calls.append(_launch(lib.dg_ureduce_map, box, shape, ptrs, strs, extra))
        _run_parallel(calls)
        for box, pacc, pseen in parts:
            region = tuple(slice(0, 1) if ax in axes else slice(*r) for ax, r in enumerate(box))
            a, s = numpy.ascontiguousarray(acc[region]), numpy.ascontiguousarray(seen[region])
            lib.dg_ureduce_combine(ctypes.c_int64(a.size), ctypes.c_void_p(a.ctypes.data),
                                   ctypes.c_void_p(s.ctypes.data),
                                   ctypes.c_void_p(pacc.ctypes.data),
                                   ctypes.c_void_p(pseen.ctypes.data))
            acc[region], seen[region] = a, s
        if n and not seen.all():
            raise ValueError(f"zero-size array to reduction operation {self.name} which has no "
                             f"identity")
        hosts = [numpy.empty(kshape, dtype=out_dt[p.name]) for p in self.out_params]
        optrs = (ctypes.c_void_p * len(hosts))(*[h.ctypes.data for h in hosts])
        lib.dg_ureduce_post(ctypes.c_int64(n), ctypes.c_void_p(acc.ctypes.data), optrs,
                            _i64([h.itemsize for h in hosts]))
        res = []
        for k, h in enumerate(hosts):
            h = h.reshape(rshape)
            if k < len(outs):
                outs[k][...] = h
                res.append(outs[k])
            else:
                res.append(asarray(h))
        return res[0] if self.nout == 1 else tuple(res)


# ---- RawKernel -----------------------------------------------------------------------

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
    "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
}


def _raw_scalar(x):
    """A RawKernel's scalar argument as its C type: a NumPy scalar as its
    dtype, a Python bool, int or float as bool, int64_t or double."""
    if isinstance(x, bool):
        return ctypes.c_bool(x)
    if isinstance(x, int):
        return ctypes.c_int64(x)
    if isinstance(x, float):
        return ctypes.c_double(x)
    if isinstance(x, numpy.generic) and x.dtype.name in _SCALAR_CTYPES:
        return _SCALAR_CTYPES[x.dtype.name](x.item())
    raise TypeError(f"a RawKernel's argument must be a DistributedArray, a bool, an int, a float "
                    f"or a NumPy scalar of {', '.join(_SCALAR_CTYPES)}, not {type(x).__name__}")


class RawKernel:
    """A user's kernel of its own making, run on every chunk ([fusion]).

    `k(grid, block, args, shared_mem=0)` as CuPy's, where the first
    DistributedArray in `args` decides the chunks: the kernel runs once for
    each of its chunks (each copy of a replicated one), where the chunk
    lives.  Every array argument must have that array's shape; the kernel
    gets, for each, a pointer to its elements under the chunk's box (dense,
    C order), and, after the arguments given, one more: a pointer to 3 *
    ndim int64 values, the box's (start, stop, step) on each axis in the
    first array's coordinates.  Writes reach the first array, and the others
    (copied back where their part had to be moved or made dense).

    On GPUs `code` is CUDA C++ with an `extern "C" __global__` function
    `name`, compiled by NVRTC for each GPU, launched once per chunk on that
    chunk's GPU with `grid`, `block` and `shared_mem` (the box is in that
    GPU's memory).  On the CPU backend `code` is C: `name` is a function
    `void name(..., const int64_t *box)` called once per chunk (grid, block,
    shared_mem and options are not used).  Scalars pass as their C types (a
    Python int as int64_t, a float as double)."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False):
        if not isinstance(code, str) or not isinstance(name, str):
            raise TypeError("RawKernel(code, name): code and name must be str")
        self.code, self.name, self.options = code, name, tuple(options)
        self._fn = None

    def __repr__(self):
        return f"<dgarray.RawKernel {self.name}>"

    def _function(self):
        if self._fn is None:
            lib = _ccompile.load(_HEADER + self.code)
            try:
                self._fn = getattr(lib, self.name)
            except AttributeError:
                raise AttributeError(f"the RawKernel's code defines no function {self.name!r} "
                                     f"(a non-static C function of that name)") from None
            self._fn.restype = None
        return self._fn

    def __call__(self, grid, block, args, *, shared_mem=0):
        args = tuple(args)
        arrays = [k for k, a in enumerate(args) if isinstance(a, _DA)]
        if not arrays:
            raise ValueError("a RawKernel runs on the chunks of its first DistributedArray "
                             "argument: give at least one")
        for k, a in enumerate(args):
            if not isinstance(a, _DA):
                args = args[:k] + (_raw_scalar(a),) + args[k + 1:]
            elif a.mode != "replica":
                raise ValueError(f"argument {k} holds partial values (mode {a.mode}): make it "
                                 f"REPLICA first (a.change_mode('replica'))")
        first = args[arrays[0]]
        for k in arrays[1:]:
            if args[k].shape != first.shape:
                raise ValueError(f"argument {k} has shape {args[k].shape}; a RawKernel's arrays "
                                 f"all have its first array's shape {first.shape}")
        gpu = _core.backend() != "cpu"
        fn = None if gpu else self._function()
        drv = _cuda.driver() if gpu else None
        calls, after, keep, gpus = [], [], [], []
        _quiesce()
        for dev, box, addr, strides in _core._chunk_lend(first, not _core._readonly(first)):
            if any(_box_len(r) == 0 for r in box):
                continue
            cargs = list(args)
            for k in arrays:
                a = args[k]
                writes = not _core._readonly(a)
                if k == arrays[0]:
                    ad, st, moved = addr, strides, None
                else:
                    ad, st, moved = _piece(a, a.shape, box, dev, keep, writable=writes)
                if not _dense(box, st, a.itemsize):
                    moved = _one_chunk(a[_slices(box)], dev)
                    keep.append(moved)
                    ad = _core._chunk_lend(moved, True)[0][2]
                if moved is not None and writes:
                    after.append((a, _slices(box), moved))
                cargs[k] = ctypes.c_void_p(ad)
            b = asarray(numpy.array([v for r in box for v in r], numpy.int64),
                        index_map={dev: slice(None)})
            keep.append(b)
            cargs.append(ctypes.c_void_p(_core._chunk_lend(b, False)[0][2]))
            if gpu:
                g = _cuda.gpu_of(dev)
                drv.launch(drv.function(self.code, self.name, g), g, grid, block, cargs,
                           shared_mem)
                gpus.append(g)
            else:
                calls.append(lambda c=tuple(cargs): fn(*c))
        if gpu:
            drv.synchronize(gpus)
        else:
            _run_parallel(calls)
        for a, sl, moved in after:
            a[sl] = moved


def _dense(box, strides, itemsize):
    """Whether memory with these byte strides over box is dense in C order."""
    want = itemsize
    for r, st in zip(box[::-1], strides[::-1]):
        n = _box_len(r)
        if n > 1 and st != want:
            return False
        want *= n
    return True
