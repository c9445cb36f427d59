"""Sink lowerings of the data-movement and indexing primitives (concat, split, slicing and its
gradient, slice/scatter updates, gather, scatter_add, one_hot, argmax/argmin, arange) as
generated loops over static shapes, so graphs that index, split or one-hot their data still sink
into one numba function. Index values are checked at run time (numba does no bounds checks):
an out-of-range index raises the eager kernels' IndexError (core/index_check.py: the op, the
axis, the index, the valid range) with the node's source line."""
from __future__ import annotations

from ...core import dtype as dt
from ...core.index_check import MARKER, IndexCheck
from ...core.shape import normalize_axis, size_of


def _np(d):
    from .sink import _np as np_name
    return np_name(d)


def _loops(e, shape, ind, prefix="i"):
    """Open nested loops over `shape`; returns (index variable names, inner indent)."""
    idx = [f"{prefix}{k}" for k in range(len(shape))]
    for k, d in enumerate(shape):
        e.line(ind + k, f"for {idx[k]} in range({d}):")
    return idx, ind + len(shape)


def _sub(idx) -> str:
    return ", ".join(idx) if idx else "()"


def _alloc(e, v, ind) -> str:
    o = e.out(v)
    e.line(ind, f"{o} = np.empty({v.shape!r}, {_np(v.dtype)})")
    return o


def _copy(e, src_name, v, ind) -> str:
    """A fresh copy of `src_name` (shape and dtype of `v`) as v's output."""
    o = _alloc(e, v, ind)
    idx, inner = _loops(e, v.shape, ind)
    e.line(inner, f"{o}[{_sub(idx)}] = {src_name}[{_sub(idx)}]")
    return o


def concat(e, n, a, ind):
    out = n.outputs[0]
    axis = normalize_axis("concat", a["axis"], len(out.shape))
    o = _alloc(e, out, ind)
    offset = 0
    for x in n.inputs:
        idx, inner = _loops(e, x.shape, ind)
        dst = list(idx)
        dst[axis] = f"{offset} + {idx[axis]}"
        e.line(inner, f"{o}[{_sub(dst)}] = {e.name(x)}[{_sub(idx)}]")
        offset += x.shape[axis]


def split(e, n, a, ind):
    x = n.inputs[0]
    axis = a["axis"]
    offset = 0
    for out in n.outputs:
        o = _alloc(e, out, ind)
        idx, inner = _loops(e, out.shape, ind)
        src = list(idx)
        src[axis] = f"{offset} + {idx[axis]}"
        e.line(inner, f"{o}[{_sub(idx)}] = {e.name(x)}[{_sub(src)}]")
        offset += out.shape[axis]


def _strided(idx, begin, strides):
    return [f"{b} + {s} * {i}" for i, b, s in zip(idx, begin, strides)]


def strided_slice(e, n, a, ind):
    x, out = n.inputs[0], n.outputs[0]
    o = _alloc(e, out, ind)
    idx, inner = _loops(e, out.shape, ind)
    e.line(inner, f"{o}[{_sub(idx)}] = "
                  f"{e.name(x)}[{_sub(_strided(idx, a['begin'], a['strides']))}]")


def strided_slice_grad(e, n, a, ind):
    g, out = n.inputs[0], n.outputs[0]
    e.fill(e.out(out), out.shape, out.dtype, f"{_np(out.dtype)}(0)", ind)
    idx, inner = _loops(e, g.shape, ind)
    e.line(inner, f"{e.name(out)}[{_sub(_strided(idx, a['begin'], a['strides']))}] = "
                  f"{e.name(g)}[{_sub(idx)}]")


def slice_update(e, n, a, ind):
    from .sink import _index
    x, v = n.inputs
    out = n.outputs[0]
    o = _copy(e, e.name(x), out, ind)
    region = tuple(len(range(b, en, s)) for b, en, s in zip(a["begin"], a["end"], a["strides"]))
    idx, inner = _loops(e, region, ind, "r")
    e.line(inner, f"{o}[{_sub(_strided(idx, a['begin'], a['strides']))}] = "
                  f"{e.name(v)}[{_index(v.shape, region, idx)}]")


def _checked_index(e, name, sub, site, inner) -> str:
    """Read an index value, wrap negatives (when the IndexCheck `site` allows them), raise
    IndexError(MARKER, k, value) when out of range: the program raises site.error(value)."""
    k = e.check_site(site)
    j, size = e.fresh("j"), site.size
    e.line(inner, f"{j} = {name}[{sub}]")
    if site.negative:
        e.line(inner, f"if {j} < 0:")
        e.line(inner + 1, f"{j} += {size}")
    e.line(inner, f"if {j} < 0 or {j} >= {size}:")
    e.line(inner + 1, f'raise IndexError("{MARKER}", {k}, {name}[{sub}])')
    return j


def gather(e, n, a, ind):
    x, i = n.inputs
    out = n.outputs[0]
    axis = normalize_axis("gather", a["axis"], len(x.shape))
    o = _alloc(e, out, ind)
    idx, inner = _loops(e, out.shape, ind)
    k = len(i.shape)
    j = _checked_index(e, e.name(i), _sub(idx[axis:axis + k]),
                       IndexCheck("gather", x.shape[axis], axis, loc=n.loc), inner)
    src = idx[:axis] + [j] + idx[axis + k:]
    e.line(inner, f"{o}[{_sub(idx)}] = {e.name(x)}[{_sub(src)}]")


def _scatter(accumulate: bool):
    def lower(e, n, a, ind):
        from .sink import _index
        x, i, u = n.inputs
        out = n.outputs[0]
        axis = normalize_axis("scatter", a["axis"], len(x.shape))
        o = _copy(e, e.name(x), out, ind)
        region = x.shape[:axis] + i.shape + x.shape[axis + 1:]
        idx, inner = _loops(e, region, ind, "r")
        k = len(i.shape)
        op = "scatter_add" if accumulate else "scatter_update"
        j = _checked_index(e, e.name(i), _sub(idx[axis:axis + k]),
                           IndexCheck(op, x.shape[axis], axis, loc=n.loc), inner)
        dst = idx[:axis] + [j] + idx[axis + k:]
        e.line(inner, f"{o}[{_sub(dst)}] {'+=' if accumulate else '='} "
                      f"{e.name(u)}[{_index(u.shape, region, idx)}]")
    return lower


def one_hot(e, n, a, ind):
    i, out = n.inputs[0], n.outputs[0]
    axis = normalize_axis("one_hot", a["axis"], len(out.shape))
    o = _alloc(e, out, ind)
    idx, inner = _loops(e, out.shape, ind)
    src = idx[:axis] + idx[axis + 1:]
    on, off = (f"{_np(out.dtype)}({a[k]!r})" for k in ("on_value", "off_value"))
    e.line(inner, f"{o}[{_sub(idx)}] = {on} if {e.name(i)}[{_sub(src)}] == {idx[axis]} "
                  f"else {off}")


def _arg(kind):
    def lower(e, n, a, ind):
        x, out = n.inputs[0], n.outputs[0]
        if not x.shape:
            o = e.out(out)
            e.line(ind, f"{o} = np.zeros({out.shape!r}, np.int64)")
            return
        src = e.name(x)
        shape = x.shape
        if a["axis"] is None:                     # over the flattened input
            flat = e.fresh("fl")
            e.line(ind, f"{flat} = {src}.reshape(({size_of(shape)},))")
            src, shape, axis = flat, (size_of(shape),), 0
        else:
            axis = normalize_axis(kind, a["axis"], len(shape))
        outer = shape[:axis] + shape[axis + 1:]
        res = e.fresh("am")
        e.line(ind, f"{res} = np.empty({outer!r}, np.int64)")
        idx, inner = _loops(e, outer, ind)
        full = idx[:axis] + ["0"] + idx[axis:]
        e.line(inner, f"best = {src}[{_sub(full)}]")
        e.line(inner, "bi = 0")
        e.line(inner, f"for t in range(1, {shape[axis]}):")
        full[axis] = "t"
        cmp = ">" if kind == "argmax" else "<"
        e.line(inner + 1, f"xv = {src}[{_sub(full)}]")
        e.line(inner + 1, f"if (xv {cmp} best or (xv != xv and best == best)):")
        e.line(inner + 2, "best = xv")
        e.line(inner + 2, "bi = t")
        e.line(inner, f"{res}[{_sub(idx)}] = bi")
        e.line(ind, f"{e.out(out)} = {res}.reshape({out.shape!r})")
    return lower


def arange(e, n, a, ind):
    out = n.outputs[0]
    o = _alloc(e, out, ind)
    cast = "" if out.dtype is dt.float64 else _np(out.dtype)
    e.line(ind, f"for q in range({out.shape[0]}):")
    e.line(ind + 1, f"{o}[q] = {cast}({a['start']!r} + q * {a['step']!r})")


def check_class_labels(e, n, a, ind):
    """The labels' range check (core/ops/nn.py check_class_labels); the output is the labels."""
    from dataclasses import replace

    from ...core.ops.nn import label_check
    lab, out = n.inputs[0], n.outputs[0]
    site = replace(label_check(a["classes"], a["ignore_index"], a["caller"]), loc=n.loc)
    k = e.check_site(site)
    idx, inner = _loops(e, lab.shape, ind, "q")
    v = f"{e.name(lab)}[{_sub(idx)}]"
    cond = f"{v} < 0 or {v} >= {site.size}"
    if site.ignore is not None:
        cond = f"({cond}) and {v} != {site.ignore}"
    e.line(inner, f"if {cond}:")
    e.line(inner + 1, f'raise IndexError("{MARKER}", {k}, {v})')
    e.line(ind, f"{e.out(out)} = {e.name(lab)}")


LOWER = {
    "check_class_labels": check_class_labels,
    "concat": concat, "split": split, "strided_slice": strided_slice,
    "strided_slice_grad": strided_slice_grad, "slice_update": slice_update,
    "gather": gather, "scatter_add": _scatter(True), "scatter_update": _scatter(False),
    "one_hot": one_hot, "argmax": _arg("argmax"), "argmin": _arg("argmin"), "arange": arange,
}
