"""Indexing primitives and their functional API: strided_slice (+ its gradient), gather,
scatter_add, and the slice/scatter updates that Tensor.__setitem__ is built from."""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, ShapeError
from ..index_check import IndexCheck
from ..primitive import Meta, apply, defop
from ..shape import broadcast_shapes, normalize_axis
from .declare import sum_to
from .array import zeros


# ---------------------------------------------------------------- slicing & gather --------------
def _slice_meta(op, shape, begin, end, strides):
    if not (len(begin) == len(end) == len(strides) == len(shape)):
        raise ShapeError(f"{op}: begin/end/strides must each have {len(shape)} entries (one per "
                         f"axis of shape {shape})")
    if any(s == 0 for s in strides):
        raise ValueError(f"{op}: slice step cannot be zero")
    return tuple(len(range(b, e, s)) for b, e, s in zip(begin, end, strides))


def _py_slices(begin, end, strides):
    # begin/end are already normalised to [0, dim] (or -1 as the end of a negative step)
    return tuple(slice(b, (None if e == -1 else e), s) for b, e, s in zip(begin, end, strides))


def _ss_infer(x, begin, end, strides):
    return Meta(_slice_meta("strided_slice", x.shape, begin, end, strides), x.dtype)


STRIDED_SLICE = defop(
    "strided_slice", infer=_ss_infer,
    ref=lambda x, begin, end, strides: x[_py_slices(begin, end, strides)],
    bprop=lambda i, o, g, begin, end, strides: (
        apply(STRIDED_SLICE_GRAD, g, shape=i[0].shape, begin=begin, end=end, strides=strides),),
    attrs={"begin": (), "end": (), "strides": ()}, arity=1)


def _ssg_infer(g, shape, begin, end, strides):
    want = _slice_meta("strided_slice_grad", tuple(shape), begin, end, strides)
    if tuple(g.shape) != want:
        raise ShapeError(f"strided_slice_grad: gradient shape {g.shape} != slice shape {want}")
    return Meta(tuple(shape), g.dtype)


def _ssg_ref(g, shape, begin, end, strides):
    out = np.zeros(shape, g.dtype)
    out[_py_slices(begin, end, strides)] = g
    return out


STRIDED_SLICE_GRAD = defop(
    "strided_slice_grad", infer=_ssg_infer, ref=_ssg_ref,
    bprop=lambda i, o, g, shape, begin, end, strides: (
        apply(STRIDED_SLICE, g, begin=begin, end=end, strides=strides),),
    attrs={"shape": (), "begin": (), "end": (), "strides": ()}, arity=1)


def _check_index(op, idx):
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"{op}: indices must be an integer tensor, got {idx.dtype}; cast with "
                         f".astype(ms.int32)")


def _gather_infer(x, idx, axis):
    _check_index("gather", idx)
    a = normalize_axis("gather", axis, len(x.shape))
    return Meta(x.shape[:a] + tuple(idx.shape) + x.shape[a + 1:], x.dtype)


def _gather_ref(x, idx, axis):
    a = axis % x.ndim
    IndexCheck("gather", x.shape[a], a).check(idx)
    return np.take(x, idx, axis=a)


GATHER = defop("gather", infer=_gather_infer, ref=_gather_ref,
               bprop=lambda i, o, g, axis: (
                   scatter_add(zeros(i[0].shape, g.dtype), i[1], g, axis), None),
               attrs={"axis": 0}, arity=2)


def _scatter_infer(op):
    def infer(x, idx, upd, axis):
        _check_index(op, idx)
        a = normalize_axis(op, axis, len(x.shape))
        want = x.shape[:a] + tuple(idx.shape) + x.shape[a + 1:]
        try:
            broadcast_shapes(op, upd.shape, want)
        except ShapeError:
            raise ShapeError(f"{op}: updates of shape {upd.shape} do not fit the indexed region "
                             f"{want} of a tensor of shape {x.shape}") from None
        return Meta(tuple(x.shape), x.dtype)
    return infer


def _scatter_add_ref(x, idx, upd, axis):
    a = axis % x.ndim
    IndexCheck("scatter_add", x.shape[a], a).check(idx)
    out = np.array(x, copy=True)
    want = x.shape[:a] + idx.shape + x.shape[a + 1:]
    u = np.broadcast_to(upd, want).astype(x.dtype)
    ix = (slice(None),) * a + (idx,)
    np.add.at(out, ix, u)
    return out


def _scatter_update_ref(x, idx, upd, axis):
    a = axis % x.ndim
    IndexCheck("scatter_update", x.shape[a], a).check(idx)
    out = np.array(x, copy=True)
    want = x.shape[:a] + idx.shape + x.shape[a + 1:]
    out[(slice(None),) * a + (idx,)] = np.broadcast_to(upd, want).astype(x.dtype)
    return out


SCATTER_ADD = defop("scatter_add", infer=_scatter_infer("scatter_add"), ref=_scatter_add_ref,
                    bprop=lambda i, o, g, axis: (g, None, sum_to(gather(g, i[1], axis),
                                                                 i[2].shape)),
                    attrs={"axis": 0}, arity=3)


def _scatter_update_bprop(i, o, g, axis):
    x, idx, upd = i
    gx = apply(SCATTER_UPDATE, g, idx, zeros((), g.dtype), axis=axis)
    return gx, None, sum_to(gather(g, idx, axis), upd.shape)


SCATTER_UPDATE = defop("scatter_update", infer=_scatter_infer("scatter_update"),
                       ref=_scatter_update_ref, bprop=_scatter_update_bprop,
                       attrs={"axis": 0}, arity=3)


def _slice_update_infer(x, v, begin, end, strides):
    region = _slice_meta("setitem", x.shape, begin, end, strides)
    try:
        broadcast_shapes("setitem", v.shape, region)
    except ShapeError:
        raise ShapeError(f"setitem: value of shape {v.shape} cannot be broadcast to the indexed "
                         f"region {region} of a tensor of shape {x.shape}") from None
    if len(broadcast_shapes("setitem", v.shape, region)) > len(region):
        raise ShapeError(f"setitem: value of shape {v.shape} has more dims than the region "
                         f"{region}")
    return Meta(tuple(x.shape), x.dtype)


def _slice_update_ref(x, v, begin, end, strides):
    out = np.array(x, copy=True)
    out[_py_slices(begin, end, strides)] = v.astype(x.dtype)
    return out


def _slice_update_bprop(i, o, g, begin, end, strides):
    x, v = i
    gx = apply(SLICE_UPDATE, g, zeros((), g.dtype), begin=begin, end=end, strides=strides)
    gv = apply(STRIDED_SLICE, g, begin=begin, end=end, strides=strides)
    return gx, sum_to(gv, v.shape)


SLICE_UPDATE = defop("slice_update", infer=_slice_update_infer, ref=_slice_update_ref,
                     bprop=_slice_update_bprop,
                     attrs={"begin": (), "end": (), "strides": ()}, arity=2)



# ---------------------------------------------------------------- functional API ----------------
def gather(input_params, input_indices, axis=0):
    """Elements of `input_params` at `input_indices` along `axis` (MindSpore's ops.gather)."""
    from ..tensor import Tensor, to_numpy
    if not isinstance(input_indices, Tensor):
        input_indices = Tensor(to_numpy(input_indices))
    return apply(GATHER, input_params, input_indices, axis=axis)


def scatter_add(input_x, indices, updates, axis=0):
    """input_x with `updates` added at `indices` along `axis` (repeated indices accumulate)."""
    return apply(SCATTER_ADD, input_x, indices, updates, axis=axis)
