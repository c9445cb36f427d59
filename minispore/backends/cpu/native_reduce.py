"""Reductions in the native sink: sum/mean/prod/max/min nodes and the fused reductions of
FUSED nodes. A float sum or mean, fused or not, is loops/fused_reduce.py's definition rendered by
render/llvm.py (the definition the O1 kernel, fused_reduce.py, is the numba rendering of; an
unfused one is its identity template), so a sum adds its elements in one order whether or not
an elementwise producer was fused into it: the eager kernel (this lowering run eagerly), O1 and
O2 agree bit for bit in float64 too. prod/max/min, half sums and sums counting bools keep
float64 accumulators in memory order (numpy's np.multiply/maximum.reduce picks); an integer tensor has
wrapping int64 accumulators, as numpy's integer add/multiply reduce.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.graph import ir
from ...core.primitive import attrs_dict
from ...core.shape import broadcast_strides, c_strides, normalize_axes, size_of
from .native_emit import F64, FLOAT, HALF, I64, INTS, STORAGE, UNSIGNED, Emitter, NativeUnsupported
from .native_lower import compute_dtype, elementwise
from . import fused_reduce as o1_fused_reduce
from .loops import fused_reduce as loops_fused_reduce
from .native_registry import register
from .render.llvm import emit, scratch_bytes


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


def _int_reduction(e: Emitter, kind: str, n: ir.Node, axes):
    """An integer reduction with the eager kernels' bits. sum/prod/mean: numpy's add/multiply
    reduce accumulate a narrower integer in 64 bits and the kernel casts the result to the
    output dtype; the low bits of a wrapping 64-bit sum or product are those of the output
    dtype's own wrapping arithmetic, so the accumulator is an i64 truncated once. mean divides
    that int64 sum as float64 (numpy's int64 / int: both as float64) and rounds once. max/min
    pick a value in the input's own type (signed, or unsigned for the unsigned dtypes), starting
    from the dtype's extreme (an empty slice is a ShapeError at infer). A uint64 sum is an
    unsigned word: mean converts it to float64 unsigned."""
    b = e.b
    x, out = n.inputs[0], n.outputs[0]
    unsigned = x.dtype in UNSIGNED
    keep = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
    nk = size_of(keep)
    count = size_of(x.shape) // max(nk, 1)
    if kind in ("max", "min"):
        ty = STORAGE[x.dtype]
        info = np.iinfo(x.dtype.np)
        init = int(info.min if kind == "max" else info.max)
        init = L.Constant(ty, init - (1 << ty.width) if init >> (ty.width - 1) else init)
    else:
        ty, init = I64, L.Constant(I64, 1 if kind == "prod" else 0)
    accp = e.scratch(n, ty)
    with e.loop(nk) as q:
        b.store(init, b.gep(accp, [q]))
    kst = broadcast_strides(keep, x.shape)
    wide = dt.int64 if ty == I64 else x.dtype
    with e.nest(x.shape) as idx:
        v = e.convert(e.load(x, e.flat_index(idx, c_strides(x.shape))), x.dtype, wide)
        slot = b.gep(accp, [e.flat_index(idx, kst)])
        acc = b.load(slot)
        if kind in ("sum", "mean"):
            r = b.add(acc, v)
        elif kind == "prod":
            r = b.mul(acc, v)
        else:
            cmp = b.icmp_unsigned if unsigned else b.icmp_signed
            r = b.select(cmp(">" if kind == "max" else "<", v, acc), v, acc)
        b.store(r, slot)
    with e.loop(nk) as q:
        r = b.load(b.gep(accp, [q]))
        if kind == "mean":
            as_f64 = b.uitofp if x.dtype is dt.uint64 else b.sitofp
            r = b.fdiv(as_f64(r, F64), L.Constant(F64, float(count)))
            e.store(e.convert(r, dt.float64, out.dtype), out, q)
        else:
            e.store(e.convert(r, wide, out.dtype), out, q)


def _reduction(kind):
    def lower(e: Emitter, n: ir.Node, a: dict):
        x, out = n.inputs[0], n.outputs[0]
        if not x.shape:
            return elementwise(e, n, E.arg(0))
        if x.dtype in INTS:
            return _int_reduction(e, kind, n, normalize_axes(kind, a["axis"], len(x.shape)))
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
        if _as_definition(kind, x, out):
            params, buffers = _plain_buffers(kind, n, axes)
            return emit(e, loops_fused_reduce.fused_reduce, params, buffers, n)
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


def _as_definition(kind: str, x: ir.Value, out: ir.Value) -> bool:
    """A float32/float64 sum or mean into its own dtype runs the fused reductions' definition
    (a half one keeps the float64 accumulators: its values sum exactly there)."""
    return kind in ("sum", "mean") and x.dtype is out.dtype and x.dtype in FLOAT and \
        bool(x.shape)


def _plain_buffers(kind: str, n: ir.Node, axes: tuple):
    """(definition parameters, buffers) of an unfused float sum/mean: the identity template
    over its input, computed in its dtype."""
    x, out = n.inputs[0], n.outputs[0]
    red = ir.Reduction(kind, tuple(sorted(axes)), False, tuple(x.shape))
    params = o1_fused_reduce.definition_params(E.arg(0), [tuple(x.shape)], red, out.dtype.np,
                                               x.dtype.np)
    return params, {"a0": (x, tuple(x.shape)), "out": (out, (size_of(out.shape),))}


def _fused_buffers(n: ir.Node, red: ir.Reduction):
    """(definition parameters, {buffer name: (value, the shape the definition sees)}) of a
    fused reduction node, as o1_fused_reduce.fused_reduce_kernel binds them at O1."""
    out = n.outputs[0]
    if red.kind not in ("sum", "mean", "max", "min") or out.dtype not in FLOAT:
        raise NativeUnsupported(f"fused {red.kind} into {out.dtype}")
    cdt = compute_dtype(n)
    if cdt not in FLOAT:
        raise NativeUnsupported(f"fused {red.kind} computing in {cdt}")
    in_shapes = o1_fused_reduce.loop_shapes([v.shape for v in n.inputs], red)
    params = o1_fused_reduce.definition_params(n.attr("expr"), in_shapes, red,
                                               out.dtype.np, cdt.np)
    buffers = {f"a{i}": (v, s) for i, (v, s) in enumerate(zip(n.inputs, in_shapes))}
    buffers["out"] = (out, (size_of(out.shape),))
    return params, buffers


def fused_reduce(e: Emitter, n: ir.Node, red: ir.Reduction):
    """loops/fused_reduce.py's definition rendered into the native program (the definition
    o1_fused_reduce.fused_reduce_kernel renders as the O1 kernel)."""
    params, buffers = _fused_buffers(n, red)
    emit(e, loops_fused_reduce.fused_reduce, params, buffers, n)


def fused_scratch(n: ir.Node) -> int:
    """A fused reduction's arena: the definition's float64 accumulators (memory order), if any."""
    params, buffers = _fused_buffers(n, n.attr("reduce"))
    return scratch_bytes(loops_fused_reduce.fused_reduce, params,
                         {k: s for k, (_, s) in buffers.items() if k != "out"})


def _reduction_scratch(kind):
    def scratch(n: ir.Node) -> int | None:
        """A reduction's accumulators: the definition's, else float64 ones, one per kept
        element; a 0-d input needs none."""
        x = n.inputs[0]
        if not x.shape:
            return None
        axes = normalize_axes(kind, attrs_dict(n.attrs)["axis"], len(x.shape))
        if _as_definition(kind, x, n.outputs[0]):
            params, buffers = _plain_buffers(kind, n, axes)
            return scratch_bytes(loops_fused_reduce.fused_reduce, params,
                                 {k: s for k, (_, s) in buffers.items() if k != "out"})
        return size_of([1 if k in axes else d for k, d in enumerate(x.shape)]) * 8
    return scratch


for _kind in ("sum", "mean", "prod", "max", "min"):
    register(_kind, _reduction(_kind), _reduction_scratch(_kind))
