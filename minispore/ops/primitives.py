"""MindSpore's Primitive classes as thin views of the declarations in core/ops: attributes go to
`__init__`, tensors (and MindSpore's call-time arguments such as `axis` or `shape`) to `__call__`."""
from __future__ import annotations

import numpy as _np

from ..core import dtype as _dt
from ..core.tensor import Tensor as _tensor
from ..core.ops import array as A
from ..core.ops import index_ops as X
from ..core.ops import linalg
from ..core.ops import math as M
from ..core.ops import nn as N
from ..core.ops import reduce as R
from ..core.ops import rounding
from ..core.primitive import Primitive
from ..core.primitive import apply as _apply
from . import functional_namespace as _FN


def _simple(cls_name, op):
    """A Primitive class with no attributes: `Cls()(*tensors)`."""
    def __init__(self):
        Primitive.__init__(self, op)
    return type(cls_name, (Primitive,), {"__init__": __init__,
                                        "__doc__": f"MindSpore's {cls_name}: primitive "
                                                   f"'{op.name}'."})


_SIMPLE = {
    "Add": M.ADD, "Sub": M.SUB, "Mul": M.MUL, "Div": M.DIV,
    "FloorDiv": M.FLOOR_DIV, "FloorMod": M.MOD, "Pow": M.POW, "Maximum": M.MAXIMUM,
    "Minimum": M.MINIMUM, "Equal": M.EQUAL, "NotEqual": M.NOT_EQUAL, "Less": M.LESS,
    "LessEqual": M.LESS_EQUAL, "Greater": M.GREATER, "GreaterEqual": M.GREATER_EQUAL,
    "LogicalAnd": M.LOGICAL_AND, "LogicalOr": M.LOGICAL_OR, "LogicalNot": M.LOGICAL_NOT,
    "Neg": M.NEG, "Abs": M.ABS, "Exp": M.EXP, "Log": M.LOG, "Log1p": M.LOG1P, "Sqrt": M.SQRT,
    "Rsqrt": M.RSQRT, "Square": M.SQUARE, "Reciprocal": M.RECIPROCAL, "Sin": M.SIN, "Cos": M.COS,
    "Tanh": M.TANH, "Sigmoid": M.SIGMOID, "ReLU": M.RELU, "Erf": M.ERF, "Softplus": M.SOFTPLUS,
    "Sign": M.SIGN, "Floor": M.FLOOR, "Ceil": M.CEIL, "Round": M.ROUND, "Select": M.WHERE,
    "StopGradient": A.STOP_GRADIENT, "TruncateDiv": rounding.TRUNCATE_DIV,
}
globals().update({name: _simple(name, op) for name, op in _SIMPLE.items()})


def _operand_kind(v):
    if isinstance(v, bool) or (hasattr(v, "dtype") and v.dtype is _dt.bool_):
        return "b"
    if isinstance(v, int) or (hasattr(v, "dtype") and _dt.to_dtype(v.dtype).is_int):
        return "i"
    return "f"


class RealDiv(Primitive):
    """`RealDiv()(x, y)`: x / y. Between integers (integer tensors, Python ints) the quotient
    is rounded towards zero and stays an integer, as MindSpore's primitive gives it (ops.div
    gives a float); bool operands are refused, as MindSpore's."""

    def __init__(self):
        self.name = "RealDiv"

    def __call__(self, x, y):
        kinds = (_operand_kind(x), _operand_kind(y))
        if "b" in kinds:
            raise TypeError("For primitive[RealDiv], the inputs must be numeric tensors or "
                            "numbers, not bool")
        if kinds == ("i", "i"):
            return rounding.truncate_div(x, y)
        return M.div(x, y)


class MatMul(Primitive):
    """`MatMul(transpose_a=False, transpose_b=False)(a, b)`."""

    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__(linalg.MATMUL, transpose_a=transpose_a, transpose_b=transpose_b)


class BatchMatMul(MatMul):
    pass


class GeLU(Primitive):
    def __init__(self, approximate="tanh"):
        super().__init__(M.GELU, approximate=approximate)


class _Reduce(Primitive):
    _fn = None

    def __init__(self, keep_dims=False):
        self.keep_dims = keep_dims
        self.name = type(self).__name__

    def __call__(self, x, axis=()):
        return type(self)._fn(x, axis, self.keep_dims)


class ReduceSum(_Reduce):
    """`ReduceSum(keep_dims=False, skip_mode=False)(x, axis=())`; with skip_mode an empty axis
    leaves x as it is instead of summing every axis."""
    _fn = staticmethod(R.sum)

    def __init__(self, keep_dims=False, skip_mode=False):
        super().__init__(keep_dims)
        self.skip_mode = bool(skip_mode)

    def __call__(self, x, axis=()):
        if self.skip_mode and isinstance(axis, (tuple, list)) and not axis:
            return x
        return super().__call__(x, axis)


class ReduceMean(_Reduce):
    _fn = staticmethod(R.mean)


class ReduceMax(_Reduce):
    _fn = staticmethod(R.amax)


class ReduceMin(_Reduce):
    _fn = staticmethod(R.amin)


class ReduceProd(_Reduce):
    _fn = staticmethod(R.prod)


class Argmax(Primitive):
    """Indices of the maxima along `axis`, of dtype `output_type` (int32 by default, as
    MindSpore's primitive; the functional ops.argmax gives int64)."""
    _reduce = staticmethod(R.argmax)

    def __init__(self, axis=-1, output_type=_dt.int32):
        self.name = type(self).__name__
        self.axis, self.output_type = axis, _dt.to_dtype(output_type)
        if self.output_type not in (_dt.int32, _dt.int64):
            raise TypeError(f"{self.name}: output_type must be mindspore.int32 or "
                            f"mindspore.int64, got {self.output_type}")

    def __call__(self, x):
        r = self._reduce(x, self.axis)
        return r if r.dtype is self.output_type else M.cast(r, self.output_type)


class Argmin(Argmax):
    """Indices of the minima along `axis`, of dtype `output_type` (int32 by default)."""
    _reduce = staticmethod(R.argmin)


class Softmax(Primitive):
    def __init__(self, axis=-1):
        if isinstance(axis, (tuple, list)):
            if len(axis) != 1:
                raise ValueError(f"Softmax: axis must be an int or a tuple of one int (as "
                                 f"MindSpore's CPU kernel), got {axis!r}; softmax over "
                                 f"several axes is not supported")
            axis = axis[0]
        super().__init__(N.SOFTMAX, axis=axis)


class LogSoftmax(Primitive):
    def __init__(self, axis=-1):
        super().__init__(N.LOG_SOFTMAX, axis=axis)


class _Call(Primitive):
    """A Primitive whose MindSpore call signature carries non-tensor arguments."""
    _fn = None

    def __init__(self):
        self.name = type(self).__name__

    def __call__(self, *args):
        return type(self)._fn(*args)


def _call_class(name, fn, doc):
    return type(name, (_Call,), {"_fn": staticmethod(fn), "__doc__": doc})


Reshape = _call_class("Reshape", A.reshape, "`Reshape()(x, shape)`")
Transpose = _call_class("Transpose", A.transpose, "`Transpose()(x, perm)`")
Cast = _call_class("Cast", M.cast, "`Cast()(x, dtype)`")
ExpandDims = _call_class("ExpandDims", A.expand_dims, "`ExpandDims()(x, axis)`")
Tile = _call_class("Tile", A.tile, "`Tile()(x, multiples)`")


class Gather(Primitive):
    """`Gather(batch_dims=0)(params, indices, axis)`: params indexed by indices along axis."""

    def __init__(self, batch_dims=0):
        if batch_dims != 0:
            raise NotImplementedError(f"Gather: batch_dims={batch_dims!r} is not supported by "
                                      f"minispore; use batch_dims=0")
        self.batch_dims, self.name = batch_dims, "Gather"

    def __call__(self, params, indices, axis):
        return X.gather(params, indices, axis)


OnesLike = _call_class("OnesLike", A.ones_like, "`OnesLike()(x)`")
ZerosLike = _call_class("ZerosLike", A.zeros_like, "`ZerosLike()(x)`")
Fill = _call_class("Fill", A.fill, "`Fill()(dtype, shape, value)`")
Zeros = _call_class("Zeros", lambda shape, dtype: A.zeros(shape, dtype), "`Zeros()(shape, dtype)`")
Ones = _call_class("Ones", lambda shape, dtype: A.ones(shape, dtype), "`Ones()(shape, dtype)`")


class Concat(Primitive):
    def __init__(self, axis=0):
        self.axis, self.name = axis, "Concat"

    def __call__(self, tensors):
        return A.concat(tensors, self.axis)


class Stack(Concat):
    def __call__(self, tensors):
        return A.stack(tensors, self.axis)


class Split(Primitive):
    def __init__(self, axis=0, output_num=1):
        self.axis, self.output_num, self.name = axis, output_num, "Split"

    def __call__(self, x):
        n = x.shape[self.axis]
        if n % self.output_num:
            raise ValueError(f"Split: axis {self.axis} of shape {x.shape} is not divisible into "
                             f"{self.output_num} equal parts")
        return A.split(x, n // self.output_num, self.axis)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        self.axis, self.name = axis, "Squeeze"

    def __call__(self, x):
        return A.squeeze(x, self.axis if self.axis != () else None)


class BroadcastTo(Primitive):
    def __init__(self, shape):
        self.shape, self.name = tuple(shape), "BroadcastTo"

    def __call__(self, x):
        return A.broadcast_to(x, self.shape)


class OneHot(Primitive):
    def __init__(self, axis=-1):
        self.axis, self.name = axis, "OneHot"

    def __call__(self, indices, depth, on_value, off_value):
        return A.one_hot(indices, depth, on_value, off_value, self.axis)



Shape = _call_class("Shape", _FN.shape, "`Shape()(x)`: x's shape, a tuple of Python ints")
DType = _call_class("DType", _FN.dtype, "`DType()(x)`: x's dtype")
Rank = _call_class("Rank", _FN.rank, "`Rank()(x)`: x's number of dimensions, a Python int")
Size = _call_class("Size", _FN.size, "`Size()(x)`: x's number of elements, a Python int")
TupleToArray = _call_class("TupleToArray", _FN.tuple_to_array,
                           "`TupleToArray()(tuple)`: a 1-D int32 or float32 tensor")
Identity = _call_class("Identity", _FN.copy_tensor, "`Identity()(x)`: a new tensor with x's value")
ScalarToTensor = _call_class("ScalarToTensor", _FN.scalar_to_tensor,
                             "`ScalarToTensor()(x, dtype=mindspore.float32)`: a 0-D tensor "
                             "from a Python scalar")


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
