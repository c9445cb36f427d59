"""MindSpore's array Primitive classes that compose several core ops: Flatten, BiasAdd,
ArgMaxWithValue/ArgMinWithValue, Slice, StridedSlice, Pad and GatherNd."""
from __future__ import annotations

import numpy as _np

from ..core import dtype as _dt
from ..core.ops import array as A
from ..core.ops import index_ops as X
from ..core.ops import math as M
from ..core.ops import reduce as R
from ..core.primitive import Primitive
from ..core.primitive import apply as _apply
from ..core.tensor import Tensor as _tensor
from .primitives import _Call


class Flatten(_Call):
    """`Flatten()(x)`: x as (x.shape[0], the product of the other axes); a 1-D x becomes
    (n, 1) and a 0-D x is refused, as MindSpore's."""

    def __call__(self, x):
        shape = tuple(x.shape)
        if not shape:
            raise ValueError("For 'Flatten', the input shape should not be empty (0-D)")
        rest = 1
        for d in shape[1:]:
            rest *= d
        return A.reshape(x, (shape[0], rest))


class BiasAdd(Primitive):
    """`BiasAdd(data_format='NCHW')(x, bias)`: x plus the 1-D bias along the channel axis (1 for
    'NCHW' and 'NCDHW', the last for 'NHWC'); x has rank 2 to 5."""

    def __init__(self, data_format="NCHW"):
        if data_format not in ("NCHW", "NHWC", "NCDHW"):
            raise ValueError(f"For 'BiasAdd', data_format must be 'NCHW', 'NHWC' or 'NCDHW', "
                             f"got {data_format!r}")
        self.data_format, self.name = data_format, "BiasAdd"

    def __call__(self, input_x, bias):
        rank = len(input_x.shape)
        if not 2 <= rank <= 5:
            raise ValueError(f"For primitive[BiasAdd], the rank of input_x must be in [2,5], "
                             f"but got {rank}")
        if self.data_format == "NCDHW" and rank != 5:
            raise ValueError(f"For 'BiasAdd', data_format 'NCDHW' needs a 5-D input_x, got "
                             f"rank {rank}")
        axis = rank - 1 if self.data_format == "NHWC" else 1
        if len(bias.shape) != 1 or bias.shape[0] != input_x.shape[axis]:
            raise ValueError(f"For 'BiasAdd', bias must be 1-D of length {input_x.shape[axis]} "
                             f"(input_x's channels), got shape {tuple(bias.shape)}")
        if axis != rank - 1:
            bias = A.reshape(bias, (bias.shape[0],) + (1,) * (rank - 2))
        return M.add(input_x, bias)


class ArgMaxWithValue(Primitive):
    """`ArgMaxWithValue(axis=0, keep_dims=False)(x)`: (the indices of the maxima along axis,
    int64 as MindSpore 2.10's; the maxima), the first index among equal maxima."""
    _index = staticmethod(R.argmax)

    def __init__(self, axis=0, keep_dims=False):
        self.axis, self.keep_dims, self.name = axis, keep_dims, type(self).__name__

    def __call__(self, x):
        shape = tuple(x.shape)
        if not shape:
            raise ValueError(f"For '{self.name}', the input must have rank >= 1")
        axis = self.axis + len(shape) if self.axis < 0 else self.axis
        if not 0 <= axis < len(shape):
            raise ValueError(f"For '{self.name}', axis {self.axis} is out of range for rank "
                             f"{len(shape)}")
        i = self._index(x, axis, False)
        if i.dtype is not _dt.int64:
            i = M.cast(i, _dt.int64)
        # the values are x at those indices (so the gradient goes to that one element, as in
        # MindSpore, not shared among equal extrema): x with the axis last, flattened, gathered
        n, rest = shape[axis], shape[:axis] + shape[axis + 1:]
        count = 1
        for d in rest:
            count *= d
        perm = tuple(k for k in range(len(shape)) if k != axis) + (axis,)
        flat = A.reshape(A.transpose(x, perm), (count * n,))
        base = _tensor(_np.arange(count, dtype=_np.int64) * n)
        v = A.reshape(X.gather(flat, M.add(base, A.reshape(i, (count,))), 0), rest)
        if self.keep_dims:
            i, v = A.expand_dims(i, axis), A.expand_dims(v, axis)
        return i, v


class ArgMinWithValue(ArgMaxWithValue):
    """`ArgMinWithValue(axis=0, keep_dims=False)(x)`: (the indices of the minima, int64; the
    minima)."""
    _index = staticmethod(R.argmin)


class Slice(_Call):
    """`Slice()(x, begin, size)`: the block of x from `begin` of extent `size` (-1: to the end
    of that axis)."""

    def __call__(self, input_x, begin, size):
        shape = tuple(input_x.shape)
        begin, size = tuple(int(b) for b in begin), tuple(int(s) for s in size)
        if not len(begin) == len(size) == len(shape):
            raise ValueError(f"For Slice, begin and size must each have {len(shape)} entries "
                             f"(the rank of input_x), got {begin} and {size}")
        end = []
        for k, (b, s, d) in enumerate(zip(begin, size, shape)):
            s = d - b if s == -1 else s
            if b < 0 or s < 0 or b + s > d:
                raise ValueError(f"For Slice, the sum of begin_shape[{k}] and size_shape[{k}] "
                                 f"must be no greater than input_x_shape[{k}] (begin {b}, size "
                                 f"{s}, dim {d}), and both non-negative")
            end.append(b + s)
        return _apply(X.STRIDED_SLICE, input_x, begin=begin, end=tuple(end),
                      strides=(1,) * len(shape))


class StridedSlice(Primitive):
    """`StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
    shrink_axis_mask=0)(x, begin, end, strides)`: x[key] with the key built from the masks as
    MindSpore's (bit k of begin_mask/end_mask: slice k starts/ends at the edge; of
    shrink_axis_mask: the integer index begin[k]). Positive strides only; ellipsis_mask and
    new_axis_mask are refused."""

    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                 shrink_axis_mask=0):
        for name, v in (("begin_mask", begin_mask), ("end_mask", end_mask),
                        ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
                        ("shrink_axis_mask", shrink_axis_mask)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise TypeError(f"For 'StridedSlice', {name} must be a non-negative int, "
                                f"got {v!r}")
        for name, v in (("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask)):
            if v:
                raise NotImplementedError(
                    f"StridedSlice: {name}={v} is not supported by minispore (MindSpore 2.10's "
                    f"CPU kernel gives inconsistent results for it); index the tensor instead "
                    f"(x[..., a:b], x[None])")
        self.begin_mask, self.end_mask, self.ellipsis_mask = begin_mask, end_mask, ellipsis_mask
        self.new_axis_mask, self.shrink_axis_mask = new_axis_mask, shrink_axis_mask
        self.name = "StridedSlice"

    def __call__(self, input_x, begin, end, strides):
        from ..core.indexing import getitem
        begin, end, strides = (tuple(int(v) for v in t) for t in (begin, end, strides))
        if not len(begin) == len(end) == len(strides):
            raise ValueError(f"For 'StridedSlice', begin, end and strides must have the same "
                             f"length, got {begin}, {end}, {strides}")
        if any(s == 0 for s in strides):
            raise ValueError("For 'StridedSlice', the strides must not be 0")
        if any(s < 0 for s in strides):
            raise NotImplementedError(
                f"StridedSlice: negative strides {strides} are not supported by minispore "
                f"(MindSpore 2.10 does not reverse them as Python slicing does); use "
                f"ops.flip or x[::-1]")
        key = []
        for k, (b, e, s) in enumerate(zip(begin, end, strides)):
            bit = 1 << k
            if self.shrink_axis_mask & bit:
                key.append(b)
            else:
                key.append(slice(None if self.begin_mask & bit else b,
                                 None if self.end_mask & bit else e, s))
        return getitem(input_x, tuple(key))


class Pad(Primitive):
    """`Pad(paddings)(x)`: x with zeros around it, paddings[k] = (before, after) for axis k (a
    tuple of pairs of non-negative ints, one pair per axis)."""

    def __init__(self, paddings):
        if not isinstance(paddings, tuple):
            raise TypeError(f"For 'Pad', the type of 'paddings' should be 'tuple', but got type "
                            f"'{type(paddings).__name__}'.")
        pairs = []
        for k, p in enumerate(paddings):
            if not (isinstance(p, tuple) and len(p) == 2 and all(isinstance(v, int) for v in p)):
                raise TypeError(f"For 'Pad', paddings[{k}] must be a tuple of two ints, got {p!r}")
            if p[0] < 0 or p[1] < 0:
                raise ValueError(f"For 'Pad', all elements of 'paddings' must be >= 0, but got "
                                 f"paddings[{k}][0] = {p[0]}, paddings[{k}][1] = {p[1]}")
            pairs.append((int(p[0]), int(p[1])))
        self.paddings, self.name = tuple(pairs), "Pad"

    def __call__(self, input_x):
        if len(self.paddings) != len(input_x.shape):
            raise ValueError(f"For 'Pad', the length of 'paddings' must be equal to the rank of "
                             f"'input_x', but got {len(self.paddings)} vs {len(input_x.shape)}")
        y = input_x
        for axis, (before, after) in enumerate(self.paddings):
            parts = []
            for n in (before, None, after):
                if n is None:
                    parts.append(y)
                elif n:
                    shape = tuple(y.shape)
                    parts.append(A.zeros(shape[:axis] + (n,) + shape[axis + 1:], y.dtype))
            if len(parts) > 1:
                y = A.concat(parts, axis)
        return y


class GatherNd(_Call):
    """`GatherNd()(input_x, indices)`: the slices of input_x at the index tuples in the last
    axis of indices (its length k <= rank); each index must lie in [0, dim), a negative or too
    large one is an IndexError, as MindSpore's."""

    def __call__(self, input_x, indices):
        from ..core.indexing import getitem
        from ..core.tensor import Tensor
        if not isinstance(indices, Tensor):
            indices = _tensor(_np.asarray(indices))
        shape, ishape = tuple(input_x.shape), tuple(indices.shape)
        if not ishape or indices.dtype not in (_dt.int32, _dt.int64):
            raise TypeError(f"For 'GatherNd', indices must be an int32 or int64 tensor of rank "
                            f">= 1, got {indices.dtype} of shape {ishape}")
        k = ishape[-1]
        if not 1 <= k <= len(shape):
            raise ValueError(f"For 'GatherNd', the last axis of indices ({k}) must be between 1 "
                             f"and the rank of input_x ({len(shape)})")
        idx = M.cast(indices, _dt.int64)
        flat, stride = None, 1
        for j in range(k - 1, -1, -1):
            col = getitem(idx, (Ellipsis, j))
            # a negative index is mapped past the end, so gather's range check refuses it
            col = M.where(M.less(col, 0), shape[j], col)
            col = X.gather(_tensor(_np.arange(shape[j], dtype=_np.int64)), col, 0)
            term = col if stride == 1 else M.mul(col, stride)
            flat = term if flat is None else M.add(flat, term)
            stride *= shape[j]
        data = A.reshape(input_x, (stride,) + shape[k:])
        return X.gather(data, flat, 0)


class SigmoidCrossEntropyWithLogits(_Call):
    """`SigmoidCrossEntropyWithLogits()(logits, label)`: the elementwise loss
    max(x, 0) - x * y + log1p(exp(-|x|)) (MindSpore's formula, so exp(-30)-sized losses are kept);
    its gradient is sigmoid(x) - y for the logits and zero for the label, as MindSpore's."""

    def __call__(self, logits, label):
        if tuple(logits.shape) != tuple(label.shape):
            raise ValueError(f"For SigmoidCrossEntropyWithLogits, 'label' shape "
                             f"{tuple(label.shape)} must be consistent with 'logits' shape "
                             f"{tuple(logits.shape)}")
        if logits.dtype is not label.dtype:
            raise TypeError(f"For primitive[SigmoidCrossEntropyWithLogits], the input type must "
                            f"be same, got {logits.dtype} and {label.dtype}")
        y = A.stop_gradient(label)
        x_const = A.stop_gradient(logits)
        loss = M.add(M.sub(M.relu(x_const), M.mul(x_const, y)),
                     M.log1p(M.exp(M.neg(M.abs(x_const)))))
        # softplus(x) - x * y has the gradient sigmoid(x) - y; its value is taken back out
        g = M.sub(M.softplus(logits), M.mul(logits, y))
        return M.add(loss, M.sub(g, A.stop_gradient(g)))


def _nearest_index(n_in, n_out, align_corners):
    """The source row of each output row, as MindSpore's CPU kernel computes it: a float32
    scale, floor (or round half away from zero with align_corners), clamped to n_in - 1."""
    if align_corners and n_out > 1:
        scale = _np.float32(n_in - 1) / _np.float32(n_out - 1)
    elif align_corners:
        scale = _np.float32(0)
    else:
        scale = _np.float32(n_in) / _np.float32(n_out)
    pos = _np.arange(n_out, dtype=_np.float32) * scale
    idx = _np.floor(pos + _np.float32(0.5)) if align_corners else _np.floor(pos)
    return _np.minimum(idx.astype(_np.int64), n_in - 1)


class ResizeNearestNeighbor(Primitive):
    """`ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(x)`: the
    4-D (N, C, H, W) x resized to size = (new_height, new_width) by nearest-neighbour sampling.
    half_pixel_centers=True is refused: MindSpore 2.10's CPU kernel gives the same numbers as
    False while its documentation describes half-pixel centres, so either choice would diverge
    somewhere silently."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        if not (isinstance(size, (tuple, list)) and len(size) == 2
                and all(isinstance(v, int) and v > 0 for v in size)):
            raise ValueError(f"For 'ResizeNearestNeighbor', size must be a tuple of two "
                             f"positive ints, got {size!r}")
        if half_pixel_centers and align_corners:
            raise ValueError("For ResizeNearestNeighbor, the half_pixel_centers must be false "
                             "when align_corners is true, but half_pixel_centers got True.")
        if half_pixel_centers:
            raise NotImplementedError(
                "ResizeNearestNeighbor: half_pixel_centers=True is not supported (MindSpore "
                "2.10's CPU kernel ignores it, its documentation describes half-pixel centres); "
                "use half_pixel_centers=False, or mint.nn.functional.interpolate(mode='nearest')")
        self.size, self.align_corners = tuple(size), bool(align_corners)
        self.name = "ResizeNearestNeighbor"

    def __call__(self, input_x):
        if len(input_x.shape) != 4:
            raise ValueError(f"For 'ResizeNearestNeighbor', input_x must be 4-D (N, C, H, W), "
                             f"got shape {tuple(input_x.shape)}")
        y = input_x
        for axis, n_out in ((2, self.size[0]), (3, self.size[1])):
            n_in = input_x.shape[axis]
            idx = _nearest_index(n_in, n_out, self.align_corners)
            if n_in != n_out or (idx != _np.arange(n_out)).any():
                y = X.gather(y, _tensor(idx), axis)
        return y
