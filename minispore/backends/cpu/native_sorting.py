"""sort, topk, cumsum and cumprod in the native sink: the eager kernels' results
(kernels_sorting.py) as loops in LLVM IR over the (outer, n, inner) view of the sorted or
scanned axis.

sort is a bottom-up merge sort of each line, stable (a tie takes the left run's element first),
with NaN after every number ascending and before them descending, as core/ops/sorting.py's order
rule: since that rule fixes the output, the merge sort and numpy's stable sort give the same
bits. Each line is copied into the node's arena scratch (values and int64 positions, two
ping-pong copies of each); every merge pass runs over run-time pair indices with static run
widths, its step branch-free (both heads loaded at clamped positions, one selected). Half
tensors sort as their float32 twin (a half value and its float32 order alike, and convert back
exactly).

cumsum (cumprod) adds (multiplies) left to right (right to left with reverse) in the tensor's
dtype, as numpy's add/multiply.accumulate: the first result is the first element itself (a
-0.0 stays -0.0), an integer result wraps, a half one is formed in float32 and rounded to the
half dtype at every step (numpy's half loop).

topk calls MindSpore's selection compiled by numba (kernels_sorting.select_cfunc), the function
the eager kernel runs, so both modes order ties alike. Registered in native_registry.py.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core.shape import normalize_axis, size_of
from .native_emit import I8, I64, INTS, UNSIGNED, Emitter, NativeUnsupported, const, storage
from .native_half import HALF
from .native_registry import register


def line_view(shape, axis: int):
    """(outer, n, inner) of `shape` around `axis`."""
    return size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:])


def _sort_scratch(n) -> int:
    x = n.inputs[0]
    length = x.shape[normalize_axis("sort", n.attr("axis"), len(x.shape))]
    return 2 * length * (_itemsize(x.dtype) + 8)


def _itemsize(d: dt.DType) -> int:
    return 1 if d is dt.bool_ else d.itemsize


def _before(e: Emitter, p, q, d: dt.DType, descending: bool):
    """i1: p comes strictly before q (ascending: p < q, a number before NaN; descending: p > q,
    NaN before a number)."""
    b = e.b
    if d in INTS:
        cmp = b.icmp_unsigned if d in UNSIGNED else b.icmp_signed
        return cmp(">" if descending else "<", p, q)
    if descending:
        return b.or_(b.fcmp_ordered(">", p, q),
                     b.and_(b.fcmp_unordered("uno", p, p), b.fcmp_ordered("ord", q, q)))
    return b.or_(b.fcmp_ordered("<", p, q),
                 b.and_(b.fcmp_ordered("ord", p, p), b.fcmp_unordered("uno", q, q)))


def _merge(e: Emitter, src, dst, lo, w_left: int, w_right: int, d, descending):
    """dst[lo, lo + w_left + w_right) = the stable merge of the sorted runs src[lo, lo + w_left)
    and src[lo + w_left, lo + w_left + w_right); src and dst are (values, positions) pointers."""
    b = e.b
    (sv, si), (dv, di) = src, dst
    mid = b.add(lo, const(w_left))
    end = b.add(mid, const(w_right))
    ip, jp = e.alloca(I64), e.alloca(I64)
    b.store(lo, ip)
    b.store(mid, jp)
    with e.loop(w_left + w_right) as k:
        i, j = b.load(ip), b.load(jp)
        left_in = b.icmp_signed("<", i, mid)
        right_in = b.icmp_signed("<", j, end)
        ic = b.select(left_in, i, b.sub(mid, const(1)))
        jc = b.select(right_in, j, b.sub(end, const(1)))
        a, c = b.load(b.gep(sv, [ic])), b.load(b.gep(sv, [jc]))
        take_right = b.and_(right_in, b.or_(b.not_(left_in), _before(e, c, a, d, descending)))
        at = b.add(lo, k)
        b.store(b.select(take_right, c, a), b.gep(dv, [at]))
        b.store(b.select(take_right, b.load(b.gep(si, [jc])), b.load(b.gep(si, [ic]))),
                b.gep(di, [at]))
        step = b.zext(take_right, I64)
        b.store(b.add(j, step), jp)
        b.store(b.add(i, b.sub(const(1), step)), ip)


def _copy_run(e: Emitter, src, dst, lo: int, count: int):
    b = e.b
    with e.loop(count) as k:
        at = b.add(const(lo), k)
        for s, t in zip(src, dst):
            b.store(b.load(b.gep(s, [at])), b.gep(t, [at]))


def _sort(e: Emitter, n, a):
    x = n.inputs[0]
    vals, idxs = n.outputs
    d = x.dtype
    if d in HALF or not (d.is_float or d in INTS):
        raise NativeUnsupported(f"sort of {d}")
    b = e.b
    axis = normalize_axis("sort", a["axis"], len(x.shape))
    outer, length, inner = line_view(x.shape, axis)
    if not size_of(x.shape):
        return
    ty, item = storage(d), _itemsize(d)
    base = e.scratch(n, I8)

    def buf(offset, t):
        return b.bitcast(b.gep(base, [const(offset)]), t.as_pointer())
    bufs = [(buf(16 * length, ty), buf(0, I64)),             # the positions first: aligned
            (buf((16 + item) * length, ty), buf(8 * length, I64))]
    with e.loop(outer) as o, e.loop(inner) as c:
        start = b.add(b.mul(o, const(length * inner)), c)

        def at(k):
            return b.add(start, b.mul(k, const(inner)))
        with e.loop(length) as k:
            b.store(e.load(x, at(k)), b.gep(bufs[0][0], [k]))
            b.store(k, b.gep(bufs[0][1], [k]))
        cur, w = 0, 1
        while w < length:
            src, dst = bufs[cur], bufs[1 - cur]
            pairs, rest = divmod(length, 2 * w)
            if pairs:
                with e.loop(pairs) as p:
                    _merge(e, src, dst, b.mul(p, const(2 * w)), w, w, d, a["descending"])
            lo = pairs * 2 * w
            if rest > w:
                _merge(e, src, dst, const(lo), w, rest - w, d, a["descending"])
            elif rest:
                _copy_run(e, src, dst, lo, rest)
            cur, w = 1 - cur, 2 * w
        with e.loop(length) as k:
            e.store(b.load(b.gep(bufs[cur][0], [k])), vals, at(k))
            e.store(e.convert(b.load(b.gep(bufs[cur][1], [k])), dt.int64, idxs.dtype), idxs,
                    at(k))


def _topk_scratch(n) -> int:
    x, (vals, _) = n.inputs[0], n.outputs
    return 8 * (size_of(x.shape) + size_of(vals.shape))


def _topk(e: Emitter, n, a):
    """MindSpore's TopK selection (core/ops/topk_select.py) through its numba C function
    (kernels_sorting.select_cfunc, bound as the symbol minispore_topk_select_<kind>): the rows
    converted to its keys (float64, int64 for integers) in scratch, the positions it writes
    there, then the values gathered and the positions stored as int32."""
    from llvmlite import binding as llvm

    from .kernels_sorting import select_cfunc
    x = n.inputs[0]
    vals, idxs = n.outputs
    d = x.dtype
    if not (d.is_float or d in INTS) or d is dt.uint64:   # uint64 keys do not fit int64's
        raise NativeUnsupported(f"topk of {d}")
    if not size_of(vals.shape):
        return
    b = e.b
    kind = "i64" if d in INTS else "f64"
    key_dt, key_ty = (dt.int64, I64) if kind == "i64" else (dt.float64, L.DoubleType())
    length, k = x.shape[-1], a["k"]
    rows = size_of(x.shape) // length
    name = f"minispore_topk_select_{kind}"
    llvm.add_symbol(name, select_cfunc(kind).address)
    fn = e.m.globals.get(name) or L.Function(
        e.m, L.FunctionType(L.VoidType(), [key_ty.as_pointer(), I64, I64, I64, I64,
                                           I64.as_pointer()]), name)
    base = e.scratch(n, I8)
    pos = b.bitcast(base, I64.as_pointer())
    keys = b.bitcast(b.gep(base, [const(8 * rows * k)]), key_ty.as_pointer())
    with e.loop(size_of(x.shape)) as i:
        b.store(e.convert(e.load(x, i), d, key_dt), b.gep(keys, [i]))
    b.call(fn, [keys, const(rows), const(length), const(k), const(int(a["sorted"])), pos])
    with e.loop(rows) as r, e.loop(k) as j:
        at = b.add(b.mul(r, const(k)), j)
        p = b.load(b.gep(pos, [at]))
        e.store(e.load(x, b.add(b.mul(r, const(length)), p)), vals, at)
        e.store(e.convert(p, dt.int64, idxs.dtype), idxs, at)


def _scan(product: bool):
    op = "cumprod" if product else "cumsum"

    def lower(e: Emitter, n, a):
        x, out = n.inputs[0], n.outputs[0]
        d = x.dtype
        if not (d.is_float or d in INTS):
            raise NativeUnsupported(f"{op} of {d}")
        b = e.b
        axis = normalize_axis(op, a["axis"], len(x.shape))
        outer, length, inner = line_view(x.shape, axis)
        if not size_of(x.shape):
            return
        half = d in HALF
        wide = dt.float32 if half else d
        acc_ty = storage(wide)
        unit = L.Constant(acc_ty, (1.0 if product else 0.0) if wide.is_float else int(product))
        acc = e.alloca(acc_ty)
        with e.loop(outer) as o, e.loop(inner) as c:
            start = b.add(b.mul(o, const(length * inner)), c)
            b.store(unit, acc)
            with e.loop(length) as k:
                pos = b.sub(const(length - 1), k) if a["reverse"] else k
                at = b.add(start, b.mul(pos, const(inner)))
                v = e.convert(e.load(x, at), d, wide) if half else e.load(x, at)
                prev = b.load(acc)
                if wide.is_float:
                    s = b.fmul(prev, v) if product else b.fadd(prev, v)
                else:
                    s = b.mul(prev, v) if product else b.add(prev, v)
                s = b.select(b.icmp_signed("==", k, const(0)), v, s)   # the first is x's own
                if half:                 # every partial result rounded to the half dtype
                    s = e.convert(e.convert(s, wide, d), d, wide)
                b.store(s, acc)
                shown = prev if a["exclusive"] else s
                e.store(e.convert(shown, wide, d) if half else shown, out, at)
    return lower


register("sort", _sort, scratch=_sort_scratch, half_as_float32=True)
register("topk", _topk, scratch=_topk_scratch)
register("cumsum", _scan(False))
register("cumprod", _scan(True))
