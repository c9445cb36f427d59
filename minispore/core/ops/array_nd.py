"""N-d indexing and masking composites: gather_nd, scatter_nd, tensor_scatter_add/update,
masked_fill, tril, triu, einsum (and, by importing core/ops/resample.py, the pad and resize
composites).

gather_nd and scatter_nd flatten the leading indexed axes into one and call gather /
scatter_add; an index outside its axis (negative ones too, as MindSpore refuses them) is mapped
past the flattened axis so gather's or scatter_add's range check refuses it. masked_fill, tril
and triu are `where` over a mask; einsum contracts its operands pairwise with matmul. All are
differentiated through their parts.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from ..shape import broadcast_shapes
from . import array as _a
from . import index_ops as _ix
from . import linalg as _la
from . import math as _m
from . import reduce as _r
from . import resample  # noqa: F401  (registers pad and resize)

__all__ = ["GATHER_ND", "SCATTER_ND", "TENSOR_SCATTER_ADD", "TENSOR_SCATTER_UPDATE",
           "MASKED_FILL", "TRIL", "TRIU", "EINSUM", "gather_nd", "scatter_nd",
           "tensor_scatter_add", "tensor_scatter_update", "masked_fill", "tril", "triu",
           "einsum"]


def _prod(xs) -> int:
    p = 1
    for v in xs:
        p *= int(v)
    return p


# ---------------------------------------------------------------- gather_nd / scatter_nd --------
def _check_nd_indices(who, indices, rank):
    if indices.dtype not in (dt.int32, dt.int64):
        raise DTypeError(f"{who}: indices must be an int32 or int64 tensor, got "
                         f"{indices.dtype}; cast with .astype(ms.int32)")
    if not indices.shape:
        raise ShapeError(f"{who}: indices must have rank >= 1, got a 0-D tensor")
    k = indices.shape[-1]
    if not 1 <= k <= rank:
        raise ShapeError(f"{who}: the last axis of indices ({k}) must be between 1 and the rank "
                         f"of the indexed tensor ({rank})")
    return k


def _flat_index(indices, shape):
    """The index tuples in the last axis of `indices` as one index into shape[:k] flattened; a
    tuple with a component outside [0, dim) becomes prod(shape[:k]), which is out of range."""
    k = indices.shape[-1]
    total = _prod(shape[:k])
    flat, bad, stride = None, None, 1
    for j in range(k - 1, -1, -1):
        col = indices[..., j]
        out = _m.logical_or(_m.less(col, 0), _m.greater_equal(col, shape[j]))
        bad = out if bad is None else _m.logical_or(bad, out)
        term = col if stride == 1 else _m.mul(col, stride)
        flat = term if flat is None else _m.add(flat, term)
        stride *= int(shape[j])
    return _m.where(bad, _a.full((), total, dtype=indices.dtype), flat)


def _gather_nd_infer(x, indices):
    k = _check_nd_indices("gather_nd", indices, len(x.shape))
    return Meta(tuple(indices.shape[:-1]) + tuple(x.shape[k:]), x.dtype)


def _gather_nd_impl(x, indices):
    k = indices.shape[-1]
    shape = tuple(x.shape)
    flat_x = _a.reshape(x, (_prod(shape[:k]),) + shape[k:])
    return _ix.gather(flat_x, _flat_index(indices, shape), 0)


def _nd_tuple_check(who, idx, shape):
    k = idx.shape[-1]
    tuples = idx.reshape(-1, k)
    for t in tuples:
        if any(v < 0 or v >= shape[j] for j, v in enumerate(t)):
            raise IndexError(f"{who}: the index {tuple(int(v) for v in t)} does not index into "
                             f"shape {tuple(shape)}")
    return tuple(tuples.T)


def _gather_nd_ref(x, indices):
    x, idx = np.asarray(x), np.asarray(indices)
    k = idx.shape[-1]
    cols = _nd_tuple_check("gather_nd", idx, x.shape)
    return x[cols].reshape(idx.shape[:-1] + x.shape[k:])


# the slices of x at the index tuples in the last axis of indices (MindSpore's GatherNd)
GATHER_ND = defop("gather_nd", infer=_gather_nd_infer, ref=_gather_nd_ref, arity=2,
                  composite=_gather_nd_impl)


def _scatter_nd_infer(indices, updates, shape):
    who = "scatter_nd"
    if not shape or any(not isinstance(s, int) or s <= 0 for s in shape):
        raise ValueError(f"{who}: shape must be a non-empty tuple of positive ints, got {shape!r}")
    k = _check_nd_indices(who, indices, len(shape))
    want = tuple(indices.shape[:-1]) + tuple(shape[k:])
    if tuple(updates.shape) != want:
        raise ShapeError(f"{who}: with indices of shape {tuple(indices.shape)} and shape "
                         f"{tuple(shape)}, updates must have shape indices.shape[:-1] + "
                         f"shape[{k}:] = {want}, got {tuple(updates.shape)}")
    return Meta(tuple(shape), updates.dtype)


def _scatter_nd_impl(indices, updates, shape):
    k = indices.shape[-1]
    flat_shape = (_prod(shape[:k]),) + tuple(shape[k:])
    flat_idx = _flat_index(indices, shape)
    if updates.dtype is dt.bool_:       # summed as counts: true where any update is true
        counts = _ix.scatter_add(_a.zeros(flat_shape, dt.int32), flat_idx,
                                 _m.cast(updates, dt.int32), 0)
        return _a.reshape(_m.not_equal(counts, 0), tuple(shape))
    out = _ix.scatter_add(_a.zeros(flat_shape, updates.dtype), flat_idx, updates, 0)
    return _a.reshape(out, tuple(shape))


def _scatter_nd_ref(indices, updates, shape):
    idx, upd = np.asarray(indices), np.asarray(updates)
    k = idx.shape[-1]
    cols = _nd_tuple_check("scatter_nd", idx, shape)
    out = np.zeros(shape, np.int64 if upd.dtype == np.bool_ else upd.dtype)
    np.add.at(out, cols, upd.reshape((-1,) + tuple(shape[k:])))
    return (out != 0) if upd.dtype == np.bool_ else out


# zeros of `shape` with updates added at the index tuples of indices (duplicates summed, as
# MindSpore's ScatterNd; bool updates: true where any of them is)
SCATTER_ND = defop("scatter_nd", infer=_scatter_nd_infer, ref=_scatter_nd_ref, arity=2,
                   composite=_scatter_nd_impl, attrs={"shape": ()})


def gather_nd(input_x, indices):
    """The slices of input_x at the index tuples of indices (composite 'gather_nd')."""
    return apply(GATHER_ND, input_x, indices)


def scatter_nd(indices, updates, shape):
    """A tensor of `shape`, zero but for updates summed at indices (composite 'scatter_nd')."""
    return apply(SCATTER_ND, indices, updates, shape=tuple(shape))


def _tensor_scatter(name):
    """(infer, impl, ref) of tensor_scatter_add / tensor_scatter_update: x with updates added
    at (or written to) the index tuples of indices."""
    def infer(x, indices, updates):
        k = _check_nd_indices(name, indices, len(x.shape))
        want = tuple(indices.shape[:-1]) + tuple(x.shape[k:])
        if tuple(updates.shape) != want:
            raise ShapeError(f"{name}: with indices of shape {tuple(indices.shape)} and an input "
                             f"of shape {tuple(x.shape)}, updates must have shape "
                             f"indices.shape[:-1] + input.shape[{k}:] = {want}, got "
                             f"{tuple(updates.shape)}")
        if updates.dtype is not x.dtype:
            raise DTypeError(f"{name}: updates ({updates.dtype}) must have the input's dtype "
                             f"{x.dtype}; cast them with .astype()")
        return Meta(tuple(x.shape), x.dtype)

    def impl(x, indices, updates):
        k = indices.shape[-1]
        shape = tuple(x.shape)
        flat_x = _a.reshape(x, (_prod(shape[:k]),) + shape[k:])
        flat_idx = _flat_index(indices, shape)
        if name == "tensor_scatter_add":
            out = _ix.scatter_add(flat_x, flat_idx, updates, 0)
        else:
            out = apply(_ix.SCATTER_UPDATE, flat_x, flat_idx, updates, axis=0)
        return _a.reshape(out, shape)

    def ref(x, indices, updates):
        x, idx, upd = np.asarray(x), np.asarray(indices), np.asarray(updates)
        cols = _nd_tuple_check(name, idx, x.shape)
        out = np.array(x, copy=True)
        flat_upd = upd.reshape((-1,) + x.shape[idx.shape[-1]:])
        if name == "tensor_scatter_add":
            np.add.at(out, cols, flat_upd)
        else:
            for j in range(flat_upd.shape[0]):        # in order: a repeated tuple's last wins
                out[tuple(c[j] for c in cols)] = flat_upd[j]
        return out
    return infer, impl, ref


_tsa = _tensor_scatter("tensor_scatter_add")
_tsu = _tensor_scatter("tensor_scatter_update")
# input_x with updates added at the index tuples of indices (repeated tuples sum), as
# MindSpore's TensorScatterAdd; differentiated through scatter_add
TENSOR_SCATTER_ADD = defop("tensor_scatter_add", infer=_tsa[0], ref=_tsa[2], arity=3,
                           composite=_tsa[1])
# input_x with updates written at the index tuples of indices (a repeated tuple: the last
# update), as MindSpore's TensorScatterUpdate; every update's gradient is the output gradient at
# its tuple, as MindSpore's bprop gives
TENSOR_SCATTER_UPDATE = defop("tensor_scatter_update", infer=_tsu[0], ref=_tsu[2], arity=3,
                              composite=_tsu[1])


def tensor_scatter_add(input_x, indices, updates):
    """input_x plus updates at indices (composite 'tensor_scatter_add')."""
    return apply(TENSOR_SCATTER_ADD, input_x, indices, updates)


def tensor_scatter_update(input_x, indices, updates):
    """input_x with updates written at indices (composite 'tensor_scatter_update')."""
    return apply(TENSOR_SCATTER_UPDATE, input_x, indices, updates)


# ---------------------------------------------------------------- masked_fill -------------------
def _masked_fill_infer(x, mask, value):
    who = "masked_fill"
    if mask.dtype is not dt.bool_:
        raise DTypeError(f"{who}: mask must be a bool tensor, got {mask.dtype}; compare it "
                         f"(e.g. mask != 0) or cast with .astype(ms.bool_)")
    if value.shape != ():
        raise ShapeError(f"{who}: value must be a 0-D tensor or a number, got a tensor of shape "
                         f"{tuple(value.shape)}")
    return Meta(broadcast_shapes(who, x.shape, mask.shape), x.dtype)


def _masked_fill_impl(x, mask, value):
    v = value if value.dtype is x.dtype else _m.cast(value, x.dtype)
    return _m.where(mask, v, x)


def _masked_fill_ref(x, mask, value):
    x = np.asarray(x)
    return np.where(mask, np.asarray(value).astype(x.dtype), x).astype(x.dtype)


# x with `value` (a 0-D tensor, cast to x's dtype) where mask is true; the output has the
# broadcast shape of x and mask
MASKED_FILL = defop("masked_fill", infer=_masked_fill_infer, ref=_masked_fill_ref, arity=3,
                    composite=_masked_fill_impl)


def masked_fill(input_x, mask, value):
    """input_x with value where mask is true (composite 'masked_fill'; value a 0-D tensor)."""
    return apply(MASKED_FILL, input_x, mask, value)


# ---------------------------------------------------------------- tril / triu -------------------
def _triangle(name):
    def infer(x, diagonal):
        if len(x.shape) < 2:
            raise ShapeError(f"{name}: the input must have rank >= 2, got shape "
                             f"{tuple(x.shape)}")
        if isinstance(diagonal, bool) or not isinstance(diagonal, int):
            raise TypeError(f"{name}: diagonal must be an int, got {diagonal!r}")
        return Meta(tuple(x.shape), x.dtype)

    def keep(rows, cols, diagonal):
        r = np.arange(rows)[:, None]
        c = np.arange(cols)[None, :]
        return (c - r <= diagonal) if name == "tril" else (c - r >= diagonal)

    def impl(x, diagonal):
        from ..tensor import Tensor
        mask = Tensor(keep(x.shape[-2], x.shape[-1], diagonal))
        return _m.where(mask, x, _a.zeros((), x.dtype))

    def ref(x, diagonal):
        x = np.asarray(x)
        return np.where(keep(x.shape[-2], x.shape[-1], diagonal), x,
                        np.zeros((), x.dtype)).astype(x.dtype)
    return infer, impl, ref


_tril = _triangle("tril")
_triu = _triangle("triu")
# the lower (tril: column - row <= diagonal) or upper (triu: >= diagonal) triangle of the last
# two axes, the rest zero
TRIL = defop("tril", infer=_tril[0], ref=_tril[2], arity=1, composite=_tril[1],
             attrs={"diagonal": 0})
TRIU = defop("triu", infer=_triu[0], ref=_triu[2], arity=1, composite=_triu[1],
             attrs={"diagonal": 0})


def tril(input, diagonal=0):
    """The lower triangle of the last two axes (composite 'tril')."""
    return apply(TRIL, input, diagonal=diagonal)


def triu(input, diagonal=0):
    """The upper triangle of the last two axes (composite 'triu')."""
    return apply(TRIU, input, diagonal=diagonal)


# ---------------------------------------------------------------- einsum ------------------------
from .einsum_plan import einsum_plan  # noqa: E402


def _einsum_infer(*xs, equation):
    who = "einsum"
    if not xs:
        raise ValueError(f"{who}: needs at least one operand")
    d0 = xs[0].dtype
    for x in xs:
        if x.dtype not in (dt.float16, dt.float32, dt.float64):
            raise DTypeError(f"{who}: the operands must be float16, float32 or float64, got "
                             f"{x.dtype}; cast them with .astype(ms.float32)")
        if x.dtype is not d0:
            raise DTypeError(f"{who}: the operands must share one dtype, got {d0} and "
                             f"{x.dtype}; cast them to one")
    plan = einsum_plan(equation, tuple(tuple(x.shape) for x in xs))
    return Meta(plan.out_shape, d0)


def _diagonal(x, labels):
    """x with each repeated label of `labels` reduced to its diagonal: (x, unique labels)."""
    from ..tensor import Tensor
    labels = list(labels)
    while True:
        seen = {}
        dup = None
        for i, lab in enumerate(labels):
            if lab in seen:
                dup = (seen[lab], i)
                break
            seen[lab] = i
        if dup is None:
            return x, labels
        a, b = dup
        n = x.shape[a]
        rest = [i for i in range(len(labels)) if i not in (a, b)]
        x = _a.transpose(x, tuple(rest) + (a, b))
        x = _a.reshape(x, tuple(x.shape[:-2]) + (n * n,))
        x = _ix.gather(x, Tensor(np.arange(n, dtype=np.int32) * (n + 1)), len(rest))
        labels = [labels[i] for i in rest] + [labels[a]]


def _sum_labels(x, labels, drop):
    axes = tuple(i for i, lab in enumerate(labels) if lab in drop)
    if not axes:
        return x, labels
    return _r.sum(x, axes), [lab for lab in labels if lab not in drop]


def _contract(x, xl, y, yl, keep):
    """x (labels xl) and y (labels yl) contracted over their shared labels not in `keep`, as one
    batched matmul: (labels, result)."""
    sizes = dict(zip(xl, x.shape))
    sizes.update(zip(yl, y.shape))
    batch = [lab for lab in xl if lab in yl and lab in keep]
    inner = [lab for lab in xl if lab in yl and lab not in keep]
    left = [lab for lab in xl if lab not in yl]
    right = [lab for lab in yl if lab not in xl]
    xp = _a.transpose(x, tuple(xl.index(lab) for lab in batch + left + inner))
    yp = _a.transpose(y, tuple(yl.index(lab) for lab in batch + inner + right))
    b = tuple(sizes[lab] for lab in batch)
    m, k, n = (_prod(sizes[lab] for lab in g) for g in (left, inner, right))
    xp = _a.reshape(xp, b + (m, k))
    yp = _a.reshape(yp, b + (k, n))
    out = _la.matmul(xp, yp)
    out = _a.reshape(out, b + tuple(sizes[lab] for lab in left + right))
    return out, batch + left + right


def _broadcast_labels(x, labels, sizes):
    """x broadcast to sizes[label] on its size-1 axes (ellipsis dims that broadcast)."""
    want = tuple(sizes[lab] for lab in labels)
    return x if tuple(x.shape) == want else _a.broadcast_to(x, want)


def _einsum_impl(*xs, equation):
    plan = einsum_plan(equation, tuple(tuple(x.shape) for x in xs))
    ops = []
    for x, labels in zip(xs, plan.inputs):
        x = _broadcast_labels(x, labels, plan.sizes)
        x, labels = _diagonal(x, labels)
        ops.append((x, labels))
    out_labels = plan.output
    # sum out the labels only one operand has and the output lacks, then contract left to right
    for i, (x, labels) in enumerate(ops):
        others = set().union(*(set(lb) for j, (_, lb) in enumerate(ops) if j != i))
        ops[i] = _sum_labels(x, labels, {lab for lab in labels
                                         if lab not in others and lab not in out_labels})
    x, labels = ops[0]
    for j in range(1, len(ops)):
        y, yl = ops[j]
        later = set(out_labels).union(*(set(lb) for _, lb in ops[j + 1:]))
        x, labels = _contract(x, labels, y, yl, later)
    x, labels = _sum_labels(x, labels, {lab for lab in labels if lab not in out_labels})
    if labels != list(out_labels):
        x = _a.transpose(x, tuple(labels.index(lab) for lab in out_labels))
    return x


def _einsum_ref(*xs, equation):
    plan = einsum_plan(equation, tuple(np.shape(x) for x in xs))
    dtype = np.asarray(xs[0]).dtype
    args = [np.asarray(x).astype(np.float64) for x in xs]
    return np.einsum(plan.numpy_equation, *args).astype(dtype)


# Einstein summation over the operands (an implicit output lists the '...' dims, then the labels
# that occur once in alphabetical order; '...' broadcasts, and an explicit output without it sums
# those dims; a repeated label in one operand takes its diagonal); contracted pairwise with
# batched matmul
EINSUM = defop("einsum", infer=_einsum_infer, ref=_einsum_ref, arity=None,
               composite=_einsum_impl, attrs={"equation": ""})


def einsum(equation, *operands):
    """Einstein summation (composite 'einsum'); operands may also be one tuple or list."""
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str, got {type(equation).__name__}")
    return apply(EINSUM, *operands, equation=equation)
