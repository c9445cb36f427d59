"""MindSpore's Primitive classes as thin views of the declarations in core/ops: attributes go to
`__init__`, tensors (and MindSpore's call-time arguments such as `axis` or `shape`) to `__call__`."""
from __future__ import annotations

from ..core import dtype as _dt
from ..core.ops import array as A
from ..core.ops import index_ops as X
from ..core.ops import linalg
from ..core.ops import math as M
from ..core.ops import nn as N
from ..core.ops import reduce as R
from ..core.ops import rounding
from ..core.primitive import Primitive
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



from .primitives_array import (  # noqa: E402,F401
    ArgMaxWithValue, ArgMinWithValue, BiasAdd, Flatten, GatherNd, Pad, ResizeNearestNeighbor,
    SigmoidCrossEntropyWithLogits, Slice, StridedSlice)
