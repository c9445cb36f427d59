"""Elementwise lowerings of the native sink, and the data-layout ops built on them.

`elementwise` emits an elementwise or FUSED node's scalar expression as one flat loop (split over
pthreads when long) or a loop nest over the output's shape, converting each input to the
expression's compute dtype and the result to the output's dtype, as the eager kernels of
elementwise.py do (their plan's casts, one compute dtype, one rounding on store); the same loops
are broadcast_to/cast (converting copies). Also fill, transpose, and reshape/stop_gradient
(aliases of their input, or a copy when the result is handed out). Registered in
native_registry.py.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.graph import ir
from ...core.shape import broadcast_strides, c_strides, size_of
from . import native_jit
from . import elementwise as eager_elementwise
from .native_emit import (FLOAT, HALF, I1, I8, INTS, STORAGE, UNSIGNED, Emitter, NativeUnsupported,
                          const, storage)
from .native_emit import compute_dtype as emit_compute
from .native_half import bits
from .native_registry import register

INTERLEAVE = 4              # vector iterations side by side in a transcendental's loop
# A flat elementwise loop of at least this many elements is split over threads. Native pthreads
# cost ~40 us a loop (create + join); measured on 2 cores (graph_vs_eager's chains): the
# arithmetic chain (b) at 4 Mi elements 1.8 -> 1.0-1.2 ms, at 256 Ki 0.12 -> 0.20 ms (worse);
# the tanh*sigmoid chain (a) at 1 Mi 1.32 -> 0.88 ms, at 256 Ki 0.39 -> 0.33 ms. (The O1 numba
# kernels' prange thresholds, 8 Mi / 2 Mi, are higher: numba's pool costs more.)
# MINISPORE_CPU_PARALLEL_MIN overrides both, as it does for O1.
PARALLEL_MIN_CHEAP = int(eager_elementwise._PAR_ENV or 1 << 21)
PARALLEL_MIN_TRANSCENDENTAL = int(eager_elementwise._PAR_ENV or 1 << 18)
ALIASES = ("reshape", "stop_gradient")


def compute_dtype(n: ir.Node, casts=None):
    """The dtype a node's expression computes in: the first float among the cast targets, the
    inputs and the output (float32 for a half dtype, as the eager kernels' cpu_np); else the
    integer type every non-bool input has (integer expressions: the Parameters' step
    counters)."""
    floats = [c for c in (casts or []) if c is not None and c.is_float]
    floats += [v.dtype for v in n.inputs if v.dtype.is_float] + [n.outputs[0].dtype]
    cdt = next((emit_compute(d) for d in floats if d.is_float), None)   # half: float32
    if cdt is None:
        ints = {(c or v.dtype) for c, v in zip(casts or [None] * len(n.inputs), n.inputs)
                if (c or v.dtype) is not dt.bool_}
        out = n.outputs[0].dtype
        if len(ints) == 1 and next(iter(ints)) in INTS and out in INTS + (dt.bool_,):
            return next(iter(ints))
        if not ints and out is dt.bool_:          # logic on bools (computed as i1)
            return dt.bool_
    if cdt not in FLOAT:
        raise NativeUnsupported(f"'{n.name}' computes in {cdt or n.outputs[0].dtype}")
    return cdt


def elementwise(e: Emitter, n: ir.Node, expr, casts=None):
    """An elementwise or fused node: one flat loop when no input broadcasts, else a loop nest
    over the output's shape. A flat loop of PARALLEL_MIN_* elements or more is split over
    threads (Emitter.parallel: pthreads taking chunks)."""
    shape = n.outputs[0].shape
    flat = all(v.shape in (shape, ()) for v in n.inputs)
    size = size_of(shape)
    threads = native_jit.threads()
    heavy = expr.op != "arg" and eager_elementwise._has_transcendental(expr)
    # a transcendental's loop runs INTERLEAVE vector iterations side by side (Emitter.loop):
    # 1.41 -> 1.15-1.2 ns per element for tanh(x*1.5+0.3)*sigmoid(x) - x*x/3 on one thread
    ilv = INTERLEAVE if heavy else 0
    if flat and shape and expr.op != "arg" and threads > 1:
        if size >= (PARALLEL_MIN_TRANSCENDENTAL if heavy else PARALLEL_MIN_CHEAP):
            return e.parallel(e.fresh_name("chunk"), size, threads,
                              lambda ce, lo, hi: _elementwise_loop(ce, n, expr, casts, (lo, hi),
                                                                   ilv))
    _elementwise_loop(e, n, expr, casts, None, ilv)


def _elementwise_loop(e: Emitter, n: ir.Node, expr, casts, span, ilv: int):
    """The loops of elementwise; `span` = (lo, hi): only flat elements lo..hi-1; `ilv`: the
    innermost loop's interleave count."""
    out = n.outputs[0]
    shape = out.shape
    cdt = compute_dtype(n, casts) if expr.op != "arg" else None
    T = None if cdt is None else I1 if cdt is dt.bool_ else STORAGE[cdt]
    flat = all(v.shape in (shape, ()) for v in n.inputs)
    hoisted = {}

    def value(v, idx):
        off = idx[0] if flat else e.flat_index(idx, broadcast_strides(v.shape, shape))
        return e.load(v, off)

    def prep(i, v, x):
        src = v.dtype
        if expr.op == "arg":
            return x
        want = emit_compute(casts[i] if casts is not None and casts[i] is not None else src)
        if src in HALF:               # the eager kernel's astype(float32): exact
            x, src = e.convert(x, src, dt.float32), dt.float32
        if want is dt.bool_ or (src is dt.bool_ and want is dt.bool_):
            return e.b.icmp_unsigned("!=", x, const(0, I8)) if src is dt.bool_ else \
                e.truth(x)
        if want is cdt or (want.is_float and cdt.is_float):
            y = e.convert(x, src, want)
            if y.type != T:
                raise NativeUnsupported(f"'{n.name}' mixes {want} with {cdt}")
            return y
        raise NativeUnsupported(f"'{n.name}' reads {src} as {want}")
    for i, v in enumerate(n.inputs):          # 0-d inputs: loaded once, before the loops
        if not v.shape:
            hoisted[i] = prep(i, v, e.load(v, const(0)))
    if span is not None:
        loops = e.loop(span[1], start=span[0], interleave=ilv)
    else:
        loops = e.nest([size_of(shape)] if flat and shape else list(shape), interleave=ilv)
    with loops as idx:
        idx = [idx] if span is not None else idx
        xs = [hoisted[i] if not v.shape else prep(i, v, value(v, idx))
              for i, v in enumerate(n.inputs)]
        if expr.op == "arg":
            y = e.convert(xs[expr.args[0]], n.inputs[expr.args[0]].dtype, out.dtype)
        else:
            y = e.scalar(expr, xs, T, cdt not in UNSIGNED)
            y = e.convert(y, cdt if y.type != I1 else dt.bool_, out.dtype)
        dst = idx[0] if flat and shape else e.flat_index(idx, c_strides(shape))
        e.store(y, out, dst)


def op_elementwise(e: Emitter, n: ir.Node, a: dict):
    cdts, _ = n.op.compute(tuple(v.dtype for v in n.inputs))
    casts = [None if c is v.dtype else c for c, v in zip(cdts, n.inputs)]
    expr = E.build(lambda *xs: n.op.scalar(*xs, **a), len(n.inputs))
    elementwise(e, n, expr, casts)


def _copy(e: Emitter, n: ir.Node, a: dict):
    """broadcast_to, cast, and a reshape whose result is handed out: a converting copy."""
    elementwise(e, n, E.arg(0))


def _fill(e: Emitter, n: ir.Node, a: dict):
    out = n.outputs[0]
    v = a["value"]
    to = storage(out.dtype)
    if out.dtype in HALF:             # np.full's rounding of the value
        c = L.Constant(to, bits(out.dtype, v))
    else:
        c = L.Constant(to, float(v)) if out.dtype.is_float else L.Constant(to, int(v))
    with e.loop(size_of(out.shape)) as i:
        e.store(c, out, i)


def _transpose(e: Emitter, n: ir.Node, a: dict):
    x, out = n.inputs[0], n.outputs[0]
    perm = tuple(a["perm"])
    xs = c_strides(x.shape)
    src = [xs[p] for p in perm]                   # out axis k walks input axis perm[k]
    with e.nest(out.shape) as idx:
        e.store(e.load(x, e.flat_index(idx, src)), out,
                e.flat_index(idx, c_strides(out.shape)))


def _alias_copy(e: Emitter, n: ir.Node, a: dict):
    """reshape / stop_gradient: nothing to do when aliased; a copy when handed out."""
    if n.outputs[0].id not in e.alias:
        e.copy(n.inputs[0], n.outputs[0])


register(("broadcast_to", "cast"), _copy)
register(("fill", "fill_like"), _fill)
register("transpose", _transpose)
register(ALIASES, _alias_copy)
