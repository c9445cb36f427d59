"""Data movement and indexing in the native sink: the numpy references' semantics (the eager
kernels of these ops) as loops in LLVM IR.

gather, scatter_add, scatter_update, one_hot and check_class_labels are loops/index.py's
definitions rendered by render/llvm.py (kernels_index.py renders the same definitions as their
eager numba kernels); concat (each part converted to the promoted dtype, as its astype), split,
strided_slice (+ its gradient), slice_update, argmax/argmin, arange and tile are written here as
loops over static shapes (concat's parts of the output's dtype and split's parts are block
copies: llvm.memcpy per contiguous block). Index values read at run time are wrapped (negative counts from the end) and
checked before anything is assigned: an out-of-range index makes the program store it and
return an error code (Emitter.fail_index), and NativeProgram raises the eager kernels' IndexError
(core/index_check.py: op, axis, index, valid range) with the node's source line. Values move as
their bits (half dtypes too); scatter_add on a half tensor adds in float32 and rounds each sum,
as np.add.at's half loop does. Registered in native_registry.py.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ...core import dtype as dt
from ...core.index_check import IndexCheck
from ...core.shape import broadcast_strides, c_strides, normalize_axis, size_of
from .native_emit import F64, HALF, I64, INTS, UNSIGNED, Emitter, NativeUnsupported, const, storage
from .native_half import bits
from .native_registry import register
from .loops import index
from .render.llvm import emit


def _at(e: Emitter, idx, shape, offsets=None):
    """Flat index of idx (+ per-axis constant offsets) in a C-contiguous array of `shape`."""
    b, st = e.b, c_strides(shape)
    flat = e.flat_index(idx, st)
    extra = sum(o * s for o, s in zip(offsets or (), st))
    return b.add(flat, const(extra)) if extra else flat


def _lin(e: Emitter, k, scale: int, plus: int):
    """k * scale + plus, k an IR or Python int."""
    if not isinstance(k, L.Value):
        return k * scale + plus
    v = e.b.mul(k, const(scale)) if scale != 1 else k
    return e.b.add(v, const(plus)) if plus else v


def _concat(e: Emitter, n, a):
    out = n.outputs[0]
    axis = normalize_axis("concat", a["axis"], len(out.shape))
    outer = size_of(out.shape[:axis])
    row = size_of(out.shape[axis + 1:])          # elements per index along the axis
    offset = 0
    for x in n.inputs:            # each part converted to the promoted dtype (astype)
        if x.dtype is out.dtype and x.id not in e.scalars:     # its bits: block copies
            inner = x.shape[axis] * row
            e.copy_blocks(x, lambda k, inner=inner: _lin(e, k, inner, 0), out,
                          lambda k, o=offset: _lin(e, k, out.shape[axis] * row, o * row),
                          outer, inner)
            offset += x.shape[axis]
            continue
        with e.nest(x.shape) as idx:
            off = [0] * len(out.shape)
            off[axis] = offset
            v = e.convert(e.load(x, _at(e, idx, x.shape)), x.dtype, out.dtype)
            e.store(v, out, _at(e, idx, out.shape, off))
        offset += x.shape[axis]


def _split(e: Emitter, n, a):
    x = n.inputs[0]
    axis = normalize_axis("split", a["axis"], len(x.shape))
    outer = size_of(x.shape[:axis])
    row = size_of(x.shape[axis + 1:])
    offset = 0
    for out in n.outputs:                        # the parts' bits: block copies
        inner = out.shape[axis] * row
        e.copy_blocks(x, lambda k, o=offset: _lin(e, k, x.shape[axis] * row, o * row), out,
                      lambda k, inner=inner: _lin(e, k, inner, 0), outer, inner)
        offset += out.shape[axis]


def _strided_at(e: Emitter, idx, shape, begin, strides):
    """Flat index of begin + strides * idx in a C-contiguous array of `shape`."""
    st = c_strides(shape)
    flat = e.flat_index(idx, [s * k for s, k in zip(strides, st)])
    extra = sum(b0 * k for b0, k in zip(begin, st))
    return e.b.add(flat, const(extra)) if extra else flat


def _strided_slice(e: Emitter, n, a):
    x, out = n.inputs[0], n.outputs[0]
    with e.nest(out.shape) as idx:
        e.store(e.load(x, _strided_at(e, idx, x.shape, a["begin"], a["strides"])), out,
                _at(e, idx, out.shape))


def _zero_of(v):
    return _constant(v.dtype, 0)


def _constant(d: dt.DType, value):
    """`value` in dtype d's storage, rounded as numpy rounds it into d (a half: its bits)."""
    ty = storage(d)
    if d in HALF:
        return L.Constant(ty, bits(d, value))
    return L.Constant(ty, float(value) if d.is_float else int(value))


def _strided_slice_grad(e: Emitter, n, a):
    g, out = n.inputs[0], n.outputs[0]
    zero = _zero_of(out)
    with e.loop(size_of(out.shape)) as i:
        e.store(zero, out, i)
    with e.nest(g.shape) as idx:
        e.store(e.load(g, _at(e, idx, g.shape)), out,
                _strided_at(e, idx, out.shape, a["begin"], a["strides"]))


def _slice_update(e: Emitter, n, a):
    x, v = n.inputs
    out = n.outputs[0]
    e.copy(x, out)
    region = tuple(len(range(b0, en, s)) for b0, en, s in zip(a["begin"], a["end"], a["strides"]))
    with e.nest(region) as idx:
        src = e.flat_index(idx, broadcast_strides(v.shape, region))
        e.store(e.load(v, src), out, _strided_at(e, idx, out.shape, a["begin"], a["strides"]))


def _checked(e: Emitter, ind, at, site: IndexCheck):
    """The index ind[at], wrapped (when the IndexCheck `site` allows negatives) and
    bounds-checked: out of range, the program returns site's error code with the value."""
    b, size = e.b, site.size
    raw = e.convert(e.load(ind, at), ind.dtype, dt.int64)
    j = b.select(b.icmp_signed("<", raw, const(0)), b.add(raw, const(size)), raw) \
        if site.negative else raw
    bad = b.or_(b.icmp_signed("<", j, const(0)), b.icmp_signed(">=", j, const(size)))
    e.fail_index(bad, site, raw)
    return j


def _gather(e: Emitter, n, a):
    """loops/index.py's gather over the (outer, size, inner) view of x."""
    x, ind = n.inputs
    out = n.outputs[0]
    axis = normalize_axis("gather", a["axis"], len(x.shape))
    x_view, ind_view, out_view = index.gather_view(x.shape, axis, ind.shape)
    emit(e, index.gather, {}, {"x": (x, x_view), "ind": (ind, ind_view), "out": (out, out_view)},
         n, sites={"index": IndexCheck("gather", x.shape[axis], axis, loc=n.loc)})


def _scatter(accumulate: bool):
    """loops/index.py's scatter (its add for scatter_add) over the collapsed views of
    index.scatter_view; a half scatter_add is _scatter_add_half."""
    op = "scatter_add" if accumulate else "scatter_update"

    def lower(e: Emitter, n, a):
        x, ind, u = n.inputs
        out = n.outputs[0]
        axis = normalize_axis(op, a["axis"], len(x.shape))
        if accumulate and x.dtype in HALF:
            return _scatter_add_half(e, n, axis)
        if accumulate and x.dtype is dt.bool_:
            raise NativeUnsupported("scatter_add of bool")     # np.add.at's logical or
        if len(u.shape) > len(x.shape) - 1 + len(ind.shape):
            raise NativeUnsupported(f"{op}: updates {u.shape} of a higher rank than the region")
        groups, x_view, ind_view, u_view = index.scatter_view(x.shape, axis, ind.shape, u.shape)
        emit(e, index.scatter, {"accumulate": accumulate, "groups": groups},
             {"x": (x, x_view), "ind": (ind, ind_view), "upd": (u, u_view),
              "out": (out, x_view)},
             n, sites={"index": IndexCheck(op, x.shape[axis], axis, loc=n.loc)})
    return lower


def _scatter_add_half(e: Emitter, n, axis: int):
    """scatter_add of a half tensor as np.add.at's half loop: each sum in float32, rounded
    (the eager kernel is np.add.at itself: numba has no float16 arithmetic to render
    loops/index.py's scatter with)."""
    x, ind, u = n.inputs
    out = n.outputs[0]
    b = e.b
    e.copy(x, out)
    region = x.shape[:axis] + ind.shape + x.shape[axis + 1:]
    k = len(ind.shape)
    site = IndexCheck("scatter_add", x.shape[axis], axis, loc=n.loc)
    with e.loop(size_of(ind.shape)) as q:              # every index checked first
        _checked(e, ind, q, site)
    with e.nest(region) as idx:
        j = _checked(e, ind, _at(e, idx[axis:axis + k], ind.shape), site)
        dst = _at(e, idx[:axis] + [j] + idx[axis + k:], out.shape)
        v = e.load(u, e.flat_index(idx, broadcast_strides(u.shape, region)))
        v = e.convert(v, u.dtype, out.dtype)              # the reference's astype(x.dtype)
        old = e.convert(e.load(out, dst), out.dtype, dt.float32)
        v = e.convert(b.fadd(old, e.convert(v, out.dtype, dt.float32)), dt.float32, out.dtype)
        e.store(v, out, dst)


def _one_hot(e: Emitter, n, a):
    """loops/index.py's one_hot over the (outer, depth, inner) view of the output."""
    ind, out = n.inputs[0], n.outputs[0]
    axis = normalize_axis("one_hot", a["axis"], len(out.shape))
    outer, depth, inner = index.one_hot_view(out.shape, axis)
    emit(e, index.one_hot, {"dtype": np.dtype(out.dtype.np).name},
         {"ind": (ind, (outer, inner)), "out": (out, (outer, depth, inner))}, n,
         scalars={"depth": depth, "on": a["on_value"], "off": a["off_value"]})


def _arg(kind: str):
    def lower(e: Emitter, n, a):
        x, out = n.inputs[0], n.outputs[0]
        b = e.b
        if not (x.dtype.is_float or x.dtype in INTS):
            raise NativeUnsupported(f"{kind} of {x.dtype}")
        if not x.shape:
            e.store(const(0), out, const(0))
            return
        shape = x.shape if a["axis"] is not None else (size_of(x.shape),)
        axis = normalize_axis(kind, a["axis"], len(shape)) if a["axis"] is not None else 0
        outer = shape[:axis] + shape[axis + 1:]
        bp, ip = e.alloca(_zero_of(x).type), e.alloca(I64)
        with e.nest(outer) as idx:
            def at(t):
                return _at(e, idx[:axis] + [t] + idx[axis:], shape)
            b.store(e.load(x, at(const(0))), bp)
            b.store(const(0), ip)
            with e.loop(shape[axis], start=1) as t:
                xv, best = e.load(x, at(t)), b.load(bp)
                op = ">" if kind == "argmax" else "<"
                if x.dtype in INTS:      # strict: the first index of the extreme
                    cmp = b.icmp_unsigned if x.dtype in UNSIGNED else b.icmp_signed
                    take = cmp(op, xv, best)
                else:                    # a NaN is the extreme (the first one)
                    take = b.or_(b.fcmp_ordered(op, xv, best),
                                 b.and_(b.fcmp_unordered("uno", xv, xv),
                                        b.fcmp_ordered("ord", best, best)))
                b.store(b.select(take, xv, best), bp)
                b.store(b.select(take, t, b.load(ip)), ip)
            e.store(e.convert(b.load(ip), dt.int64, out.dtype), out, _at(e, idx, outer))
    return lower


def _arange(e: Emitter, n, a):
    out = n.outputs[0]
    b = e.b
    start, step = a["start"], a["step"]
    floats = isinstance(start, float) or isinstance(step, float)
    with e.loop(out.shape[0]) as q:
        if floats:
            v = b.fadd(L.Constant(F64, float(start)), b.fmul(b.sitofp(q, F64),
                                                             L.Constant(F64, float(step))))
            y = e.convert(v, dt.float64, out.dtype)
        else:
            y = e.convert(b.add(const(int(start)), b.mul(q, const(int(step)))), dt.int64,
                          out.dtype)
        e.store(y, out, q)


def _tile(e: Emitter, n, a):
    x, out = n.inputs[0], n.outputs[0]
    b = e.b
    lead = len(out.shape) - len(x.shape)
    with e.nest(out.shape) as idx:
        src = [b.urem(idx[lead + k], const(d)) for k, d in enumerate(x.shape)]
        e.store(e.load(x, _at(e, src, x.shape)), out, _at(e, idx, out.shape))


def _check_class_labels(e: Emitter, n, a):
    """loops/index.py's check_labels: the labels' range check (core/ops/nn.py
    check_class_labels), then a copy of them."""
    from dataclasses import replace

    from ...core.ops.nn import label_check
    lab, out = n.inputs[0], n.outputs[0]
    site = replace(label_check(a["classes"], a["ignore_index"], a["caller"]), loc=n.loc)
    size = (size_of(lab.shape),)
    scalars = {"classes": a["classes"]}
    if a["ignore_index"] is not None:
        scalars["ignore"] = a["ignore_index"]
    emit(e, index.check_labels, {"ignore": a["ignore_index"] is not None},
         {"labels": (lab, size), "out": (out, size)}, n, scalars=scalars, sites={"label": site})


register("check_class_labels", _check_class_labels)
register("concat", _concat)
register("split", _split)
register("strided_slice", _strided_slice)
register("strided_slice_grad", _strided_slice_grad)
register("slice_update", _slice_update)
register("gather", _gather)
register("scatter_add", _scatter(True))
register("scatter_update", _scatter(False))
register("one_hot", _one_hot)
# a half value and its float32 compare alike: argmax/argmin of a half tensor are its float32's
register("argmax", _arg("argmax"), half_as_float32=True)
register("argmin", _arg("argmin"), half_as_float32=True)
register("arange", _arange)
register("tile", _tile)
