"""Per-node lowerings of the native sink: one function per op family, emitting its loops.

Every lowering follows the numba sink's (sink.py, sink_nn.py, fused_reduce.py) or the eager
kernel's (kernels_row.py) algorithm operation by operation, so the three give the same numbers:
elementwise and fused nodes, fused reductions (LANES register chains over an innermost reduced
axis, else float64 accumulators in memory order), sum/mean/prod/max/min (float64 accumulators),
matmul through the CBLAS routine numpy.matmul picks, broadcast_to/cast (converting copies),
transpose, fill, reshape/stop_gradient (aliases, or a copy when the result is handed out) and
tensor If/While. The other op families live in native_rows.py (softmax, cross-entropy,
logsumexp), native_windows.py, native_norms.py, native_random.py and native_index.py, whose
LOWER/SCRATCH tables join these. `check` rejects a graph with any other node before anything is
emitted (NativeUnsupported names it); `scratch_bytes` is what a node needs in the arena while it
runs.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.graph import ir
from ...core.graph.memplan import aligned
from ...core.primitive import OpDef, attrs_dict
from ...core.shape import broadcast_strides, c_strides, normalize_axes, size_of
from . import native_jit
from . import elementwise as _ew
from .native_emit import (F64, FLOAT, I1, I8, I32, I64, STORAGE, Emitter, NativeUnsupported,
                          const, storage)

LANES = 4                   # independent accumulators, as fused_reduce.LANES
INTERLEAVE = 4              # vector iterations side by side in a transcendental's loop
# A flat elementwise loop of at least this many elements is split over threads. Native pthreads
# cost ~40 us a loop (create + join); measured on 2 cores (graph_vs_eager's chains): the
# arithmetic chain (b) at 4 Mi elements 1.8 -> 1.0-1.2 ms, at 256 Ki 0.12 -> 0.20 ms (worse);
# the tanh*sigmoid chain (a) at 1 Mi 1.32 -> 0.88 ms, at 256 Ki 0.39 -> 0.33 ms. (The O1 numba
# kernels' prange thresholds, 8 Mi / 2 Mi, are higher: numba's pool costs more.)
# MINISPORE_CPU_PARALLEL_MIN overrides both, as it does for O1.
PARALLEL_MIN_CHEAP = int(_ew._PAR_ENV or 1 << 21)
PARALLEL_MIN_TRANSCENDENTAL = int(_ew._PAR_ENV or 1 << 18)
ALIASES = ("reshape", "stop_gradient")

INTS = (dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8)


def _compute_dtype(n: ir.Node, casts=None):
    """The dtype a node's expression computes in (as sink.py picks it): the first float among
    the cast targets, the inputs and the output; else the integer type every non-bool input
    has (integer expressions: the Parameters' step counters)."""
    floats = [c for c in (casts or []) if c is not None and c.is_float]
    floats += [v.dtype for v in n.inputs if v.dtype.is_float] + [n.outputs[0].dtype]
    cdt = next((d for d in floats if d.is_float), None)
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
    heavy = expr.op != "arg" and _ew._has_transcendental(expr)
    # a transcendental's loop runs INTERLEAVE vector iterations side by side (Emitter.loop):
    # 1.41 -> 1.15-1.2 ns per element for tanh(x*1.5+0.3)*sigmoid(x) - x*x/3 on one thread
    ilv = INTERLEAVE if heavy else 0
    if flat and shape and expr.op != "arg" and threads > 1:
        if size >= (PARALLEL_MIN_TRANSCENDENTAL if heavy else PARALLEL_MIN_CHEAP):
            return e.parallel(f"chunk_{n.outputs[0].id}", size, threads,
                              lambda ce, lo, hi: _elementwise_loop(ce, n, expr, casts, (lo, hi),
                                                                   ilv))
    _elementwise_loop(e, n, expr, casts, None, ilv)


def _elementwise_loop(e: Emitter, n: ir.Node, expr, casts, span, ilv: int):
    """The loops of elementwise; `span` = (lo, hi): only flat elements lo..hi-1; `ilv`: the
    innermost loop's interleave count."""
    out = n.outputs[0]
    shape = out.shape
    cdt = _compute_dtype(n, casts) if expr.op != "arg" else None
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
        want = casts[i] if casts is not None and casts[i] is not None else src
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
            y = e.scalar(expr, xs, T, cdt is not dt.uint8)
            y = e.convert(y, cdt if y.type != I1 else dt.bool_, out.dtype)
        dst = idx[0] if flat and shape else e.flat_index(idx, c_strides(shape))
        e.store(y, out, dst)


def _op_elementwise(e: Emitter, n: ir.Node, a: dict):
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


def _matmul(e: Emitter, n: ir.Node, a: dict):
    x, y = n.inputs
    out = n.outputs[0]
    if out.dtype not in FLOAT or x.dtype is not y.dtype or x.dtype is not out.dtype:
        raise NativeUnsupported(f"matmul of {x.dtype} and {y.dtype}")
    T = FLOAT[out.dtype]
    ta, tb = a["transpose_a"], a["transpose_b"]
    M, N = out.shape[-2:]
    K = x.shape[-2] if ta else x.shape[-1]
    b = e.b
    if M == 0 or N == 0:
        return
    batch = out.shape[:-2]
    if K == 0:
        zero = L.Constant(T, 0.0)
        with e.loop(size_of(out.shape)) as i:
            e.store(zero, out, i)
        return
    with e.nest(batch) as bidx:
        def at(v, mat):
            st = broadcast_strides(v.shape[:-2], batch)
            off = b.mul(e.flat_index(bidx, st), const(mat)) if batch else const(0)
            return b.gep(e.ptr(v), [off])
        _numpy_matmul(e, T, ta, tb, M, N, K, at(x, x.shape[-1] * x.shape[-2]), x.shape[-1],
                      at(y, y.shape[-1] * y.shape[-2]), y.shape[-1], at(out, M * N),
                      same=x is y)


def _numpy_matmul(e: Emitter, T, ta, tb, M, N, K, A, lda, B, ldb, C, same):
    """One C = op(A) @ op(B) with the routine numpy.matmul picks for these shapes (PyNative's
    matmul is numpy's, so the two stay bit-identical; each choice checked against np.matmul):
    K = 1: its loop, 0 + a*b; M = N = 1: ?dot; M = 1: ?gemv over B; N = 1: ?gemv over A; a
    matrix times its own transpose: ?syrk and the upper triangle mirrored; else ?gemm."""
    b = e.b
    one, zero = L.Constant(T, 1.0), L.Constant(T, 0.0)
    if K == 1:
        with e.loop(M) as m, e.loop(N) as p:
            v = b.fadd(zero, b.fmul(b.load(b.gep(A, [m])), b.load(b.gep(B, [p]))))
            b.store(v, b.gep(C, [b.add(b.mul(m, const(N)), p)]))
        return
    if M == 1 or N == 1:
        fn, IT = e.blas(T, "dot" if M == N else "gemv")
        i1 = const(1, IT)
        if M == N:
            b.store(b.call(fn, [const(K, IT), A, i1, B, i1]), C)
            return
        if M == 1:        # vector @ matrix: y = op(B)^T x
            rows, cols, mat, trans = (N, K, B, 111) if tb else (K, N, B, 112)
            x = A
        else:             # matrix @ vector: y = op(A) x
            rows, cols, mat, trans = (K, M, A, 112) if ta else (M, K, A, 111)
            x = B
        b.call(fn, [const(101, I32), const(trans, I32), const(rows, IT), const(cols, IT), one,
                    mat, const(cols, IT), x, i1, zero, C, i1])
        return
    if same and ta != tb and M == N:
        fn, IT = e.blas(T, "syrk")
        b.call(fn, [const(101, I32), const(121, I32), const(112 if ta else 111, I32),
                    const(M, IT), const(K, IT), one, A, const(lda, IT), zero, C, const(M, IT)])
        with e.loop(M) as i, e.loop(M, start=b.add(i, const(1))) as j:
            src = b.load(b.gep(C, [b.add(b.mul(i, const(M)), j)]))
            b.store(src, b.gep(C, [b.add(b.mul(j, const(M)), i)]))
        return
    e.gemm(T, ta, tb, M, N, K, A, lda, B, ldb, C, N)


def _acc_init(kind: str, ty):
    return L.Constant(ty, {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": float("-inf"),
                           "min": float("inf")}[kind])


def _combine(e: Emitter, kind: str, acc, v):
    """acc (op) v; max/min: NaN wins, as numpy (`if v > acc or v != v: acc = v`)."""
    b = e.b
    if kind in ("sum", "mean"):
        return b.fadd(acc, v)
    if kind == "prod":
        return b.fmul(acc, v)
    take = b.or_(b.fcmp_ordered(">" if kind == "max" else "<", v, acc),
                 b.fcmp_unordered("uno", v, v))
    return b.select(take, v, acc)


def _reduction(kind):
    def lower(e: Emitter, n: ir.Node, a: dict):
        x, out = n.inputs[0], n.outputs[0]
        if not x.shape:
            return elementwise(e, n, E.arg(0))
        # a count of bools (sum into int64) is exact in the float64 accumulator below 2**53
        counts = kind == "sum" and x.dtype is dt.bool_ and out.dtype is dt.int64
        if not (x.dtype in FLOAT and out.dtype in FLOAT) and not counts:
            raise NativeUnsupported(f"{kind} over {x.dtype}")
        b = e.b
        axes = normalize_axes(kind, a["axis"], len(x.shape))
        keep = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
        nk = size_of(keep)
        count = size_of(x.shape) // max(nk, 1)
        accp = e.scratch(n, F64)
        init = _acc_init(kind, F64)
        with e.loop(nk) as q:
            b.store(init, b.gep(accp, [q]))
        kst = broadcast_strides(keep, x.shape)
        with e.nest(x.shape) as idx:
            v = e.convert(e.load(x, e.flat_index(idx, c_strides(x.shape))), x.dtype,
                          dt.float64)
            slot = b.gep(accp, [e.flat_index(idx, kst)])
            b.store(_combine(e, kind, b.load(slot), v), slot)
        with e.loop(nk) as q:
            r = b.load(b.gep(accp, [q]))
            if kind == "mean":
                r = b.fdiv(r, L.Constant(F64, float(count)))
            e.store(e.convert(r, dt.float64, out.dtype), out, q)
    return lower


def _fused_reduce(e: Emitter, n: ir.Node, red: ir.Reduction):
    """fused_reduce.loop_lines in IR: each value rounded to the output dtype, accumulated in
    float64 (sum/mean) or the value dtype (max/min); reduced axes innermost -> LANES register
    chains over the last axis, else float64 accumulators in memory order (arena scratch)."""
    out, b = n.outputs[0], e.b
    kind = red.kind
    if kind not in ("sum", "mean", "max", "min") or out.dtype not in FLOAT:
        raise NativeUnsupported(f"fused {kind} into {out.dtype}")
    T = FLOAT[out.dtype]
    cdt = _compute_dtype(n)
    if cdt not in FLOAT:
        raise NativeUnsupported(f"fused {kind} computing in {cdt}")
    CT = FLOAT[cdt]
    shape = tuple(red.shape) or (1,)
    r = len(shape)
    axes = tuple(red.axes)
    kept = [k for k in range(r) if k not in axes]
    count = size_of([shape[k] for k in axes])
    acc_ty, acc_dt = (T, out.dtype) if kind in ("max", "min") else (F64, dt.float64)
    expr = n.attr("expr")
    in_shapes = [(1,) * (r - len(v.shape)) + tuple(v.shape) for v in n.inputs]
    sts = [broadcast_strides(s, shape) for s in in_shapes]

    def value(idx):
        xs = []
        for v, st in zip(n.inputs, sts):
            x = e.load(v, e.flat_index(idx, st))
            xs.append(e.b.icmp_unsigned("!=", x, const(0, I8)) if v.dtype is dt.bool_ else
                      e.convert(x, v.dtype, cdt))
        y = e.scalar(expr, xs, CT)
        y = e.convert(y, cdt if y.type != I1 else dt.bool_, out.dtype)   # rounded, as stored
        return e.convert(y, out.dtype, acc_dt)

    def result(acc):
        if kind == "mean":
            acc = b.fdiv(acc, L.Constant(acc_ty, float(count)))
        return e.convert(acc, acc_dt, out.dtype)
    if all(k < ax for k in kept for ax in axes):          # reduced axes innermost: registers
        q = e.alloca(I64)
        b.store(const(0), q)
        with e.nest([shape[k] for k in kept]) as kidx:
            idx = [None] * r
            for k, i in zip(kept, kidx):
                idx[k] = i
            lanes = [e.alloca(acc_ty) for _ in range(LANES if axes else 1)]
            for p in lanes:
                b.store(_acc_init(kind, acc_ty), p)
            if not axes:
                b.store(_combine(e, kind, b.load(lanes[0]), value(idx)), lanes[0])
            else:
                with e.nest([shape[k] for k in axes[:-1]]) as ridx:
                    for k, i in zip(axes[:-1], ridx):
                        idx[k] = i
                    last, dlast = axes[-1], shape[axes[-1]]
                    with e.loop(dlast - dlast % LANES, step=LANES) as j:
                        for u, p in enumerate(lanes):
                            idx[last] = b.add(j, const(u))
                            b.store(_combine(e, kind, b.load(p), value(idx)), p)
                    with e.loop(dlast, start=dlast - dlast % LANES) as j:
                        idx[last] = j
                        b.store(_combine(e, kind, b.load(lanes[0]), value(idx)), lanes[0])
                for p in lanes[1:]:
                    b.store(_combine(e, kind, b.load(lanes[0]), b.load(p)), lanes[0])
            qi = b.load(q)
            e.store(result(b.load(lanes[0])), out, qi)
            b.store(b.add(qi, const(1)), q)
        return
    n_out = size_of([shape[k] for k in kept])
    accp = e.scratch(n, acc_ty)
    with e.loop(n_out) as q:
        b.store(_acc_init(kind, acc_ty), b.gep(accp, [q]))
    kst = [0] * r
    acc = 1
    for k in reversed(kept):
        kst[k] = acc
        acc *= shape[k]
    with e.nest(shape) as idx:
        slot = b.gep(accp, [e.flat_index(idx, kst)])
        b.store(_combine(e, kind, b.load(slot), value(idx)), slot)
    with e.loop(n_out) as q:
        e.store(result(b.load(b.gep(accp, [q]))), out, q)


def _alias_copy(e: Emitter, n: ir.Node, a: dict):
    """reshape / stop_gradient: nothing to do when aliased; a copy when handed out."""
    if n.outputs[0].id not in e.alias:
        e.copy(n.inputs[0], n.outputs[0])


LOWER = {
    "matmul": _matmul,
    "sum": _reduction("sum"), "mean": _reduction("mean"), "prod": _reduction("prod"),
    "max": _reduction("max"), "min": _reduction("min"),
    "broadcast_to": _copy, "cast": _copy, "transpose": _transpose,
    "fill": _fill, "fill_like": _fill,
    "reshape": _alias_copy, "stop_gradient": _alias_copy,
}
SCRATCH: dict = {}          # op name -> node -> arena bytes, for lowerings added from elsewhere
_SCRATCH = {"sum", "mean", "prod", "max", "min"}      # float64 accumulators in the arena


def check(g: ir.Graph, nested: bool = False):
    """NativeUnsupported naming the first node (or dtype) without a lowering."""
    for n in g.nodes:
        for v in n.inputs + n.outputs:
            try:
                storage(v.dtype)
            except NativeUnsupported as e:
                raise NativeUnsupported(f"node '{n.name}': {e}") from None
        if n.op == ir.CONST or (n.op == ir.ASSIGN and not nested):
            continue
        if n.op in (ir.IF, ir.WHILE):
            for sg in n.subgraphs:
                check(sg, nested=True)
            continue
        if n.op == ir.FUSED:
            continue
        if n.op == ir.PRINT:
            if n.attr("file") is not None:
                raise NativeUnsupported("print(file=...)")
            continue
        if isinstance(n.op, OpDef) and (n.op.name in LOWER or (
                n.op.kind == "elementwise" and n.op.scalar is not None)):
            continue
        raise NativeUnsupported(f"node '{n.name}'" + (" inside control flow" if nested else ""))


def scratch_bytes(n: ir.Node) -> int | None:
    """Bytes of arena a node needs while it runs (None: no scratch): float64 accumulators, a
    While's copies of its next state, or what SCRATCH[op name](node) says (the window ops'
    column matrices)."""
    if n.op == ir.WHILE:
        return sum(_padded(v) for v in n.outputs)
    if isinstance(n.op, OpDef) and n.op.name in SCRATCH:
        return SCRATCH[n.op.name](n)
    if n.op == ir.FUSED and n.attr("reduce") is not None:
        red = n.attr("reduce")
        shape = tuple(red.shape) or (1,)
        kept = [d for k, d in enumerate(shape) if k not in red.axes]
        return size_of(kept) * 8
    if isinstance(n.op, OpDef) and n.op.name in _SCRATCH and n.inputs[0].shape:
        x = n.inputs[0]
        axes = normalize_axes(n.op.name, attrs_dict(n.attrs)["axis"], len(x.shape))
        return size_of([1 if k in axes else d for k, d in enumerate(x.shape)]) * 8
    return None


def _padded(v: ir.Value) -> int:
    return aligned(max(size_of(v.shape) * v.dtype.itemsize, 1))


def _graph_body(e: Emitter, g: ir.Graph):
    for m in g.nodes:
        lower_node(e, m)


def _truth_of(e: Emitter, v: ir.Value):
    x = e.load(v, const(0))
    return e.b.icmp_unsigned("!=", x, const(0, I8)) if v.dtype is dt.bool_ else e.truth(x)


def _if(e: Emitter, n: ir.Node):
    """Both branches in place; each copies its results into the If's outputs."""
    then, other = n.subgraphs
    with e.b.if_else(_truth_of(e, n.inputs[0])) as (on_then, on_else):
        for sg, arm in ((then, on_then), (other, on_else)):
            with arm:
                _graph_body(e, sg)
                for src, dst in zip(sg.outputs, n.outputs):
                    e.copy(src, dst)


def _while(e: Emitter, n: ir.Node):
    """The While's outputs hold the carried state (cond and body read them, see NativeProgram's
    aliases): initial values copied in; each iteration runs cond, then body, copies body's
    results to scratch and from there into the state (a result may be another slot's state)."""
    cond, body = n.subgraphs
    b = e.b
    for src, dst in zip(n.inputs, n.outputs):
        e.copy(src, dst)
    temps, off = [], 0
    for v in n.outputs:
        temps.append((v, off))
        off += _padded(v)
    base = e.scratch(n, I8) if n.outputs else None
    head, loop_body, done = (b.append_basic_block(s) for s in ("while", "wbody", "wdone"))
    b.branch(head)
    b.position_at_end(head)
    _graph_body(e, cond)
    b.cbranch(_truth_of(e, cond.outputs[0]), loop_body, done)
    b.position_at_end(loop_body)
    _graph_body(e, body)
    tmp_ptrs = [b.bitcast(b.gep(base, [const(o)]), storage(v.dtype).as_pointer())
                for v, o in temps]
    for src, (v, _), p in zip(body.outputs, temps, tmp_ptrs):
        e.copy(src, v, dst_ptr=p)
    for (v, _), p in zip(temps, tmp_ptrs):
        e.copy(v, v, src_ptr=p)
    b.branch(head)
    b.position_at_end(done)


def _print(e: Emitter, n: ir.Node):
    """A Print node: the program calls back into Python (native_sink.printer, whose address is in
    the buffer table, so the IR and its disk cache stay the same in every process) with the
    addresses of the printed values; the callback prints the same text as O0."""
    b = e.b
    fn = b.bitcast(e.slot_value(("print", n)),
                   L.FunctionType(L.VoidType(), [I8.as_pointer().as_pointer()]).as_pointer())
    ptrs = e.alloca(L.ArrayType(I8.as_pointer(), max(len(n.inputs), 1)))
    for k, v in enumerate(n.inputs):
        b.store(b.bitcast(e.ptr(v), I8.as_pointer()), b.gep(ptrs, [const(0, I32), const(k, I32)]))
    b.call(fn, [b.bitcast(ptrs, I8.as_pointer().as_pointer())])


def lower_node(e: Emitter, n: ir.Node):
    if n.op in (ir.CONST, ir.ASSIGN):
        return
    if n.op == ir.IF:
        return _if(e, n)
    if n.op == ir.WHILE:
        return _while(e, n)
    if n.op == ir.PRINT:
        return _print(e, n)
    if n.op == ir.FUSED:
        red = n.attr("reduce")
        if red is not None:
            return _fused_reduce(e, n, red)
        return elementwise(e, n, n.attr("expr"))
    lower = LOWER.get(n.op.name)
    if lower is None:
        return _op_elementwise(e, n, attrs_dict(n.attrs))
    lower(e, n, attrs_dict(n.attrs))


from . import (native_index, native_norms, native_random, native_rows,  # noqa: E402
               native_windows)

for _m in (native_rows, native_index, native_windows, native_norms, native_random):
    LOWER.update(_m.LOWER)                 # the other files' lowerings join the tables above
    SCRATCH.update(getattr(_m, "SCRATCH", {}))
