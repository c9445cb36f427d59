"""Row-wise lowerings of the native sink: softmax/log_softmax, the sparse cross-entropy pair
and logsumexp, each accumulating a row (or the reduced axes) in float64 exactly as the numba
sink's loops (sink.py) and the eager row kernels (kernels_row.py) do, so the three agree bit for
bit. Merged into native_lower.LOWER like native_windows.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.primitive import attrs_dict
from ...core.shape import broadcast_strides, c_strides, normalize_axes, size_of
from .native_emit import F64, FLOAT, Emitter, NativeUnsupported, const
from .native_lower import INTS, elementwise
from .native_registry import register


def _softmax(log: bool):
    """sink.py's loops: max and sum of exp in float64 per row, then the row's outputs."""
    def lower(e: Emitter, n, a: dict):
        x, out = n.inputs[0], n.outputs[0]
        if x.dtype not in FLOAT or out.dtype not in FLOAT:
            raise NativeUnsupported(f"softmax of {x.dtype}")
        if not x.shape:
            c = L.Constant(FLOAT[out.dtype], 0.0 if log else 1.0)
            e.store(c, out, const(0))
            return
        from .llvm_math import math_fn
        b = e.b
        axis = a["axis"] % len(x.shape)
        outer, d, inner = size_of(x.shape[:axis]), x.shape[axis], size_of(x.shape[axis + 1:])
        exp64 = math_fn(e.m, "exp", F64)
        with e.loop(outer) as r, e.loop(inner) as c:
            base = b.add(b.mul(r, const(d * inner)), c)

            def at(k):
                return b.add(base, b.mul(k, const(inner)))

            def xv(k):
                return e.convert(e.load(x, at(k)), x.dtype, dt.float64)
            mp, sp = e.alloca(F64), e.alloca(F64)
            b.store(L.Constant(F64, float("-inf")), mp)
            with e.loop(d) as k:                   # numba's max(m, v): v > m ? v : m
                m0, v = b.load(mp), xv(k)
                b.store(b.select(b.fcmp_ordered(">", v, m0), v, m0), mp)
            b.store(L.Constant(F64, 0.0), sp)
            m = b.load(mp)
            with e.loop(d) as k:
                b.store(b.fadd(b.load(sp), b.call(exp64, [b.fsub(xv(k), m)])), sp)
            s = b.load(sp)
            if log:
                ls = b.call(math_fn(e.m, "log", F64), [s])
            with e.loop(d) as k:
                y = b.fsub(b.fsub(xv(k), m), ls) if log else \
                    b.fdiv(b.call(exp64, [b.fsub(xv(k), m)]), s)
                e.store(e.convert(y, dt.float64, out.dtype), out, at(k))
    return lower


def _sce(e: Emitter, n, a: dict):
    """The sparse softmax cross-entropy and its gradient: kernels_row.sce_rows / sce_grad_rows
    (the eager kernels) in IR, same float64 operations in the same order, with the row's exps in
    an arena row."""
    from .llvm_math import math_fn
    x, lab = n.inputs[:2]
    out, b = n.outputs[0], e.b
    if x.dtype not in FLOAT or out.dtype not in FLOAT or lab.dtype not in INTS:
        raise NativeUnsupported(f"{n.name} of {x.dtype} logits, {lab.dtype} labels")
    R, C = size_of(x.shape[:-1]), x.shape[-1]
    grad = n.op.name.endswith("_grad")
    exp64, log64 = math_fn(e.m, "exp", F64), math_fn(e.m, "log", F64)
    row = e.scratch(n, F64)
    mp, sp = e.alloca(F64), e.alloca(F64)
    zero = L.Constant(F64, 0.0)
    with e.loop(R) as r:
        base = b.mul(r, const(C))

        def xv(k):
            return e.convert(e.load(x, b.add(base, k)), x.dtype, dt.float64)
        b.store(L.Constant(F64, float("-inf")), mp)
        with e.loop(C) as k:                       # numba's max(m, v): v > m ? v : m
            m0, v = b.load(mp), xv(k)
            b.store(b.select(b.fcmp_ordered(">", v, m0), v, m0), mp)
        m = b.load(mp)
        with e.loop(C) as k:
            b.store(b.call(exp64, [b.fsub(xv(k), m)]), b.gep(row, [k]))
        b.store(zero, sp)
        with e.loop(C) as k:
            b.store(b.fadd(b.load(sp), b.load(b.gep(row, [k]))), sp)
        ls = b.call(log64, [b.load(sp)])
        lv = e.convert(e.load(lab, r), lab.dtype, dt.int64)
        valid = b.and_(b.icmp_signed(">=", lv, const(0)), b.icmp_signed("<", lv, const(C)))
        if not grad:
            safe = b.select(valid, lv, const(0))          # never read outside the row
            y = b.select(valid, b.fsub(b.fadd(ls, m), xv(safe)), zero)
            e.store(e.convert(y, dt.float64, out.dtype), out, r)
        else:
            d = e.convert(e.load(n.inputs[2], r), n.inputs[2].dtype, dt.float64)
            one = L.Constant(F64, 1.0)
            with e.loop(C) as k:
                p = b.select(valid, b.call(exp64, [b.fsub(b.fsub(xv(k), m), ls)]), zero)
                hot = b.select(b.icmp_signed("==", k, lv), one, zero)
                e.store(e.convert(b.fmul(b.fsub(p, hot), d), dt.float64, out.dtype), out,
                        b.add(base, k))


def _logsumexp(e: Emitter, n, a: dict):
    """sink.py's loops: the max over the axes (NaN wins) in float64, made 0 where it is not
    finite (the reference's shift s), then the sum of exp(x - s), then log(sum) + s: a +inf
    gives inf, a NaN NaN, a row of -inf (or an empty one) -inf."""
    from .llvm_math import math_fn
    x, out = n.inputs[0], n.outputs[0]
    if x.dtype not in FLOAT or out.dtype not in FLOAT:
        raise NativeUnsupported(f"logsumexp of {x.dtype}")
    if not x.shape:
        return elementwise(e, n, E.arg(0))
    b = e.b
    axes = normalize_axes("logsumexp", a["axis"], len(x.shape))
    keep = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
    nk = size_of(keep)
    mp = e.scratch(n, F64)
    sp = b.gep(mp, [const(nk)])
    ninf = L.Constant(F64, float("-inf"))
    with e.loop(nk) as q:
        b.store(ninf, b.gep(mp, [q]))
        b.store(L.Constant(F64, 0.0), b.gep(sp, [q]))
    kst = broadcast_strides(keep, x.shape)
    with e.nest(x.shape) as idx:
        v = e.convert(e.load(x, e.flat_index(idx, c_strides(x.shape))), x.dtype, dt.float64)
        slot = b.gep(mp, [e.flat_index(idx, kst)])
        m = b.load(slot)
        take = b.or_(b.fcmp_ordered(">", v, m), b.fcmp_unordered("uno", v, v))
        b.store(b.select(take, v, m), slot)
    exp64, log64 = math_fn(e.m, "exp", F64), math_fn(e.m, "log", F64)
    with e.loop(nk) as q:
        slot = b.gep(mp, [q])
        m = b.load(slot)
        finite = b.and_(b.fcmp_ordered(">", m, ninf),
                        b.fcmp_ordered("<", m, L.Constant(F64, float("inf"))))
        b.store(b.select(finite, m, L.Constant(F64, 0.0)), slot)
    with e.nest(x.shape) as idx:
        v = e.convert(e.load(x, e.flat_index(idx, c_strides(x.shape))), x.dtype, dt.float64)
        k = e.flat_index(idx, kst)
        m = b.load(b.gep(mp, [k]))
        slot = b.gep(sp, [k])
        b.store(b.fadd(b.load(slot), b.call(exp64, [b.fsub(v, m)])), slot)
    with e.loop(nk) as q:
        m = b.load(b.gep(mp, [q]))
        y = b.fadd(b.call(log64, [b.load(b.gep(sp, [q]))]), m)
        e.store(e.convert(y, dt.float64, out.dtype), out, q)


def _sce_scratch(n) -> int:
    return n.inputs[0].shape[-1] * 8                   # one row of exps


def _logsumexp_scratch(n) -> int:
    x = n.inputs[0]
    if not x.shape:
        return 0
    axes = normalize_axes("logsumexp", attrs_dict(n.attrs)["axis"], len(x.shape))
    return 2 * size_of([1 if k in axes else d for k, d in enumerate(x.shape)]) * 8


register("softmax", _softmax(False))
register("log_softmax", _softmax(True))
register("logsumexp", _logsumexp, _logsumexp_scratch)
register(("sparse_softmax_cross_entropy", "sparse_softmax_cross_entropy_grad"), _sce,
         _sce_scratch)
