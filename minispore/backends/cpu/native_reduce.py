"""Reductions in the native sink: sum/mean/prod/max/min nodes (float64 accumulators in memory
order, as the eager kernels' np.add.reduce(dtype=float64) sums and np.maximum.reduce picks) and
the fused reductions of FUSED nodes (fused_reduce.loop_lines in IR: LANES register chains over
an innermost reduced axis, else float64 accumulators in memory order).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.graph import ir
from ...core.primitive import attrs_dict
from ...core.shape import broadcast_strides, c_strides, normalize_axes, size_of
from .native_emit import F64, FLOAT, HALF, I1, I8, I64, Emitter, NativeUnsupported, const
from .native_lower import compute_dtype, elementwise
from .native_registry import register

LANES = 4                   # independent accumulators, as fused_reduce.LANES


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
        # a half tensor: its values exactly in float64, the result rounded once from float64
        # (sum/mean: the eager np.add.reduce(dtype=float64) and division; max/min pick a value,
        # exact in any float). prod's eager kernel rounds every partial product to the half
        # dtype (numpy's float16 multiply): not this loop
        halves = kind != "prod" and x.dtype in HALF and out.dtype is x.dtype
        if not (x.dtype in FLOAT and out.dtype in FLOAT) and not counts and not halves:
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


def fused_reduce(e: Emitter, n: ir.Node, red: ir.Reduction):
    """fused_reduce.loop_lines in IR: each value rounded to the output dtype, accumulated in
    float64 (sum/mean) or the value dtype (max/min); reduced axes innermost -> LANES register
    chains over the last axis, else float64 accumulators in memory order (arena scratch)."""
    out, b = n.outputs[0], e.b
    kind = red.kind
    if kind not in ("sum", "mean", "max", "min") or out.dtype not in FLOAT:
        raise NativeUnsupported(f"fused {kind} into {out.dtype}")
    T = FLOAT[out.dtype]
    cdt = compute_dtype(n)
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


def fused_scratch(n: ir.Node) -> int:
    """A fused reduction's float64 accumulators (one per kept element)."""
    red = n.attr("reduce")
    shape = tuple(red.shape) or (1,)
    kept = [d for k, d in enumerate(shape) if k not in red.axes]
    return size_of(kept) * 8


def _reduction_scratch(n: ir.Node) -> int | None:
    """A reduction's float64 accumulators (one per kept element); a 0-d input needs none."""
    x = n.inputs[0]
    if not x.shape:
        return None
    axes = normalize_axes(n.op.name, attrs_dict(n.attrs)["axis"], len(x.shape))
    return size_of([1 if k in axes else d for k, d in enumerate(x.shape)]) * 8


for _kind in ("sum", "mean", "prod", "max", "min"):
    register(_kind, _reduction(_kind), _reduction_scratch)
