"""Shape, data-movement and creation primitives and their functional API: reshape, transpose,
expand_dims, squeeze, concat, stack, split, broadcast_to, tile, fill, arange, zeros/ones(_like),
one_hot, stop_gradient. (Slicing, gather and scatter live in index_ops.py.)"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtype as dt
from ..errors import ShapeError
from ..primitive import Meta, apply, defop
from ..shape import broadcast_shapes, normalize_axis, size_of
from .declare import sum_to


def _shape_arg(op, shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be an int or a tuple of ints, got {shape!r}") from None


# ---------------------------------------------------------------- reshape & co ------------------
def _reshape_infer(x, shape):
    n = size_of(x.shape)
    shape = tuple(shape)
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise ShapeError(f"reshape: target shape {shape} may contain at most one -1 and no other "
                         f"negative size")
    if -1 in shape:
        rest = size_of(tuple(d for d in shape if d != -1))
        if rest == 0 or n % rest:
            raise ShapeError(f"reshape: cannot reshape a tensor of shape {x.shape} ({n} elements) "
                             f"into {shape}; the -1 cannot be resolved")
        shape = tuple(n // rest if d == -1 else d for d in shape)
    if size_of(shape) != n:
        raise ShapeError(f"reshape: cannot reshape a tensor of shape {x.shape} ({n} elements) "
                         f"into {shape} ({size_of(shape)} elements); the element counts must match")
    return Meta(shape, x.dtype)


RESHAPE = defop("reshape", infer=_reshape_infer, ref=lambda x, shape: x.reshape(shape),
                bprop=lambda i, o, g, shape: (reshape(g, i[0].shape),), attrs={"shape": ()},
                arity=1)


def _transpose_infer(x, perm):
    if sorted(perm) != list(range(len(x.shape))):
        raise ShapeError(f"transpose: perm {tuple(perm)} is not a permutation of the "
                         f"{len(x.shape)} axes of shape {x.shape}")
    return Meta(tuple(x.shape[p] for p in perm), x.dtype)


TRANSPOSE = defop("transpose", infer=_transpose_infer,
                  ref=lambda x, perm: np.transpose(x, perm),
                  bprop=lambda i, o, g, perm: (transpose(g, tuple(np.argsort(perm).tolist())),),
                  attrs={"perm": ()}, arity=1)


def _concat_infer(*xs, axis):
    if not xs:
        raise ValueError("concat: needs at least one tensor")
    r = len(xs[0].shape)
    a = normalize_axis("concat", axis, r)
    for k, x in enumerate(xs):
        if len(x.shape) != r or any(x.shape[d] != xs[0].shape[d] for d in range(r) if d != a):
            raise ShapeError(f"concat: tensor {k} has shape {x.shape}, incompatible with "
                             f"{xs[0].shape} along axis {axis}; all dims except the axis must "
                             f"match")
    c = xs[0].dtype
    for x in xs[1:]:
        c = dt.promote(c, x.dtype)
    shape = list(xs[0].shape)
    shape[a] = builtins.sum(x.shape[a] for x in xs)
    return Meta(tuple(shape), c)


def _concat_ref(*xs, axis):
    out = _concat_infer(*[Meta(x.shape, dt.to_dtype(x.dtype)) for x in xs], axis=axis)
    return np.concatenate([x.astype(out.dtype.np) for x in xs], axis=axis)


def _concat_bprop(i, o, g, axis):
    a = normalize_axis("concat", axis, len(o.shape))
    sizes = tuple(x.shape[a] for x in i)
    return split(g, sizes, a) if len(i) > 1 else (g,)


CONCAT = defop("concat", infer=_concat_infer, ref=_concat_ref, bprop=_concat_bprop,
               attrs={"axis": 0}, arity=None)


def _split_infer(x, sizes, axis):
    a = normalize_axis("split", axis, len(x.shape))
    if builtins.sum(sizes) != x.shape[a] or any(s < 0 for s in sizes):
        raise ShapeError(f"split: sizes {tuple(sizes)} do not add up to {x.shape[a]}, the length "
                         f"of axis {axis} of shape {x.shape}")
    return tuple(Meta(x.shape[:a] + (s,) + x.shape[a + 1:], x.dtype) for s in sizes)


def _split_ref(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _split_bprop(i, o, g, sizes, axis):
    if not isinstance(g, tuple):         # the tape hands a one-chunk split its gradient bare
        g, o = (g,), (o,)
    gs = [gi if gi is not None else zeros(oi.shape, oi.dtype) for gi, oi in zip(g, o)]
    return (concat(gs, axis),)


SPLIT = defop("split", infer=_split_infer, ref=_split_ref, bprop=_split_bprop,
              attrs={"sizes": (), "axis": 0}, arity=1)


# ---------------------------------------------------------------- broadcast, tile ---------------
def _bt_infer(x, shape):
    shape = tuple(shape)
    if len(shape) < len(x.shape) or broadcast_shapes("broadcast_to", x.shape, shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}; each dim "
                         f"must equal the target or be 1")
    return Meta(shape, x.dtype)


BROADCAST_TO = defop("broadcast_to", infer=_bt_infer,
                     ref=lambda x, shape: np.broadcast_to(x, shape).copy(),
                     bprop=lambda i, o, g, shape: (sum_to(g, i[0].shape),),
                     attrs={"shape": ()}, arity=1)


def _tile_infer(x, reps):
    reps = tuple(reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions {reps} must be >= 0")
    nd = builtins.max(len(reps), len(x.shape))
    s = (1,) * (nd - len(x.shape)) + tuple(x.shape)
    r = (1,) * (nd - len(reps)) + reps
    return Meta(tuple(a * b for a, b in zip(s, r)), x.dtype)


def _tile_bprop(i, o, g, reps):
    x = i[0]
    nd = len(o.shape)
    s = (1,) * (nd - len(x.shape)) + tuple(x.shape)
    r = (1,) * (nd - len(reps)) + tuple(reps)
    inter = builtins.sum(((rr, ss) for rr, ss in zip(r, s)), ())
    from .reduce import sum as _sum
    gs = _sum(reshape(g, inter), tuple(range(0, 2 * nd, 2)))
    return (reshape(gs, x.shape),)


# tile stays primitive for speed: as reshape, broadcast_to and reshape it ran ~3x slower eagerly
# on small inputs (three dispatches; broadcast_to's kernel is slower than np.tile)
TILE = defop("tile", infer=_tile_infer, ref=lambda x, reps: np.tile(x, reps), bprop=_tile_bprop,
             attrs={"reps": ()}, arity=1)


# ---------------------------------------------------------------- creation ----------------------
def _fill_infer(shape, value, dtype):
    return Meta(tuple(shape), dt.to_dtype(dtype))


FILL = defop("fill", infer=_fill_infer,
             ref=lambda shape, value, dtype: np.full(shape, value, dt.to_dtype(dtype).np),
             attrs={"shape": (), "value": 0, "dtype": dt.float32}, arity=0, differentiable=False)


def _arange_infer(start, stop, step, dtype):
    if step == 0:
        raise ValueError("arange: step must not be zero")
    return Meta((len(range(0, _ceil_div(stop - start, step))),), dt.to_dtype(dtype))


def _ceil_div(a, b):
    return int(np.ceil(a / b)) if (a / b) > 0 else 0


ARANGE = defop("arange", infer=_arange_infer,
               ref=lambda start, stop, step, dtype: np.arange(start, stop, step).astype(
                   dt.to_dtype(dtype).np),
               attrs={"start": 0, "stop": 1, "step": 1, "dtype": dt.int64}, arity=0,
               differentiable=False)


def _like_infer(x, value, dtype):
    return Meta(tuple(x.shape), dt.to_dtype(dtype) if dtype is not None else x.dtype)


# fill_like stays primitive: as fill (no input) it would fold into a constant baked into each graph
FILL_LIKE = defop("fill_like", infer=_like_infer,
                  ref=lambda x, value, dtype: np.full(
                      x.shape, value, (dt.to_dtype(dtype).np if dtype is not None else x.dtype)),
                  attrs={"value": 0, "dtype": None}, arity=1, differentiable=False)


def _one_hot_infer(idx, depth, on_value, off_value, axis):
    from .index_ops import _check_index
    _check_index("one_hot", idx)
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, got {depth}")
    r = len(idx.shape) + 1
    a = normalize_axis("one_hot", axis, r)
    s = list(idx.shape)
    s.insert(a, depth)
    return Meta(tuple(s), _one_hot_dtype(on_value, off_value))


def _one_hot_dtype(on, off):
    return dt.float32 if isinstance(on, float) or isinstance(off, float) else dt.int64


def _one_hot_ref(idx, depth, on_value, off_value, axis):
    eye = (np.arange(depth) == idx[..., None])
    out = np.where(eye, on_value, off_value).astype(_one_hot_dtype(on_value, off_value).np)
    return np.moveaxis(out, -1, axis)


ONE_HOT = defop("one_hot", infer=_one_hot_infer, ref=_one_hot_ref,
                attrs={"depth": 1, "on_value": 1.0, "off_value": 0.0, "axis": -1}, arity=1,
                differentiable=False)

STOP_GRADIENT = defop("stop_gradient", infer=lambda x: Meta(tuple(x.shape), x.dtype),
                      ref=lambda x: x, bprop=lambda i, o, g: (None,), arity=1)


# ---------------------------------------------------------------- functional API ----------------
def reshape(input, shape):
    """A tensor with the same elements in `shape` (one -1 is inferred)."""
    return apply(RESHAPE, input, shape=_shape_arg("reshape", shape))


def transpose(input, dims):
    """Permute the axes (MindSpore 2.x's ops.transpose(input, dims))."""
    perm = tuple(int(p) for p in dims)
    n = len(perm)
    perm = tuple(p % n if -n <= p < n else p for p in perm)
    return apply(TRANSPOSE, input, perm=perm)


def permute(input, axis):
    """MindSpore's ops.permute(input, axis): transpose by the permutation `axis`."""
    return transpose(input, axis)


def expand_dims(input_x, axis):
    """Insert a size-1 axis at `axis`."""
    input = input_x
    shape = tuple(input.shape)
    a = normalize_axis("expand_dims", axis, len(shape) + 1)
    return reshape(input, shape[:a] + (1,) + shape[a:])


def unsqueeze(input, dim):
    """MindSpore's ops.unsqueeze(input, dim): a size-1 axis inserted at `dim`."""
    return expand_dims(input, dim)


def squeeze(input, axis=None):
    """Remove size-1 axes (all of them, or those in `axis`)."""
    shape = tuple(input.shape)
    if axis is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = {normalize_axis("squeeze", a, len(shape))
                for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        bad = [a for a in axes if shape[a] != 1]
        if bad:
            raise ShapeError(f"squeeze: axis {bad[0]} of shape {shape} has size {shape[bad[0]]}, "
                             f"not 1; only size-1 axes can be squeezed")
    return reshape(input, tuple(d for i, d in enumerate(shape) if i not in axes))


def flatten(input, order="C", *, start_dim=1, end_dim=-1):
    """MindSpore's ops.flatten: merge dims start_dim..end_dim (default: keep the batch dim).
    order='F' flattens column-major: the axes are reversed first, as MindSpore does."""
    if order not in ("C", "F"):
        raise ValueError(f"flatten: order must be 'C' or 'F', got {order!r}")
    for n, v in (("start_dim", start_dim), ("end_dim", end_dim)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"flatten: {n} must be an int, got {type(v).__name__} {v!r}")
    if order == "F" and len(input.shape) > 1:
        input = transpose(input, tuple(range(len(input.shape)))[::-1])
    shape = tuple(input.shape)
    if not shape or (len(shape) == 1 and (start_dim, end_dim) == (1, -1)):
        return reshape(input, (-1,))           # MindSpore: a 0-d or 1-d input gives 1-d
    s = normalize_axis("flatten", start_dim, len(shape))
    e = normalize_axis("flatten", end_dim, len(shape))
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for a "
                         f"{len(shape)}-d input of shape {shape}")
    return reshape(input, shape[:s] + (size_of(shape[s:e + 1]),) + shape[e + 1:])


def concat(tensors, axis=0):
    """Join tensors along an existing axis."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"concat: expects a tuple or list of tensors, got {type(tensors).__name__}")
    return apply(CONCAT, *tensors, axis=axis)


cat = concat


def stack(tensors, axis=0):
    """Join tensors along a new axis (composite: expand_dims + concat)."""
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
    a = normalize_axis("stack", axis, len(tensors[0].shape) + 1)
    return concat([expand_dims(t, a) for t in tensors], a)


def split(tensor, split_size_or_sections, axis=0):
    """Split into chunks of `split_size_or_sections` (an int chunk size or a list of sizes)."""
    a = normalize_axis("split", axis, len(tensor.shape))
    n = tensor.shape[a]
    if isinstance(split_size_or_sections, (int, np.integer)):
        k = int(split_size_or_sections)
        if k <= 0:
            raise ValueError(f"split: chunk size must be > 0, got {k}")
        sizes = tuple([k] * (n // k) + ([n % k] if n % k else []))
    else:
        sizes = tuple(int(s) for s in split_size_or_sections)
    return apply(SPLIT, tensor, sizes=sizes, axis=a)


def broadcast_to(input, shape):
    shape = _shape_arg("broadcast_to", shape)
    if -1 in shape:
        lead = len(shape) - len(input.shape)
        bad = [i for i, d in enumerate(shape) if d == -1 and i < lead]
        if bad:     # a -1 there has no input dim to keep (indexing from the end would wrap)
            raise ShapeError(
                f"broadcast_to: -1 in shape {shape} at index {bad[0]} has no matching dim in the "
                f"input of shape {tuple(input.shape)}; -1 keeps an input dim, so it can only be "
                f"at index {lead} onwards (give that dim's size instead)")
        shape = tuple(input.shape[i - lead] if d == -1 else d for i, d in enumerate(shape))
    return apply(BROADCAST_TO, input, shape=shape)


def tile(input, dims):
    return apply(TILE, input, reps=_shape_arg("tile", dims))


def fill(type, shape, value):
    """MindSpore's ops.fill(type, shape, value)."""
    return apply(FILL, shape=_shape_arg("fill", shape), value=value, dtype=dt.to_dtype(type))


def full(size, fill_value, *, dtype=None):
    if dtype is None:
        dtype = dt.scalar_dtype(fill_value)
    return apply(FILL, shape=_shape_arg("full", size), value=fill_value, dtype=dt.to_dtype(dtype))


def zeros(size, dtype=None):
    return apply(FILL, shape=_shape_arg("zeros", size), value=0,
                 dtype=dt.to_dtype(dtype) if dtype is not None else dt.float32)


def ones(shape, dtype=None):
    return apply(FILL, shape=_shape_arg("ones", shape), value=1,
                 dtype=dt.to_dtype(dtype) if dtype is not None else dt.float32)


def zeros_like(input, dtype=None):
    return apply(FILL_LIKE, input, value=0, dtype=dt.to_dtype(dtype) if dtype is not None else None)


def ones_like(input, dtype=None):
    return apply(FILL_LIKE, input, value=1, dtype=dt.to_dtype(dtype) if dtype is not None else None)


def full_like(input, fill_value, *, dtype=None):
    return apply(FILL_LIKE, input, value=fill_value,
                 dtype=dt.to_dtype(dtype) if dtype is not None else None)


def arange(start=0, end=None, step=1, *, dtype=None):
    """Evenly spaced values in [start, end); int64 for int arguments, float32 otherwise."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = dt.int64 if all(isinstance(v, (int, np.integer)) for v in (start, end, step)) \
            else dt.float32
    return apply(ARANGE, start=start, stop=end, step=step, dtype=dt.to_dtype(dtype))


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """One-hot encoding of integer `indices`: a new axis of length `depth` at `axis`."""
    def scalar(v):
        return v.item() if hasattr(v, "item") and not isinstance(v, (int, float)) else v
    return apply(ONE_HOT, indices, depth=int(depth), on_value=scalar(on_value),
                 off_value=scalar(off_value), axis=axis)


def stop_gradient(value):
    """The same values, with no gradient flowing back through them."""
    return apply(STOP_GRADIENT, value)
