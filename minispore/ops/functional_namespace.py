"""Functions of MindSpore's `mindspore.ops.functional` (also in `mindspore.ops`) composed of core
ops: shape queries that give Python values (constants in a graph, as MindSpore's), the
conversion of Python scalars and tuples to tensors, the tensor_* aliases MindSpore keeps there,
select, clip_by_value, clip_by_global_norm and norm."""
from __future__ import annotations

import functools

from ..core import dtype as _dt
from ..core.ops import array as _A
from ..core.ops import math as _M
from ..core.ops.array import reshape, stop_gradient  # noqa: F401
from ..core.ops.math import cast  # noqa: F401
from ..core.ops.state import assign, depend  # noqa: F401
from ..core.tensor import Tensor

partial = functools.partial


def _tensor_arg(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{fn}', the input must be a Tensor, but got {type(x).__name__}")
    return x


def shape(input_x):
    """The shape of input_x as a tuple of Python ints (a constant in a graph)."""
    return tuple(int(d) for d in _tensor_arg("shape", input_x).shape)


def dtype(x):
    """The dtype object of x (mindspore.float32, ...)."""
    return _tensor_arg("dtype", x).dtype


def rank(input_x):
    """The number of dimensions of input_x, a Python int."""
    return len(_tensor_arg("rank", input_x).shape)


def size(input_x):
    """The number of elements of input_x, a Python int."""
    return shape_mul(tuple(_tensor_arg("size", input_x).shape))


def shape_mul(input_data):
    """The product of a tuple of ints (1 for an empty tuple), a Python int."""
    if not isinstance(input_data, tuple):
        raise ValueError(f"For primitive [shape_mul], input must be tuple, got "
                         f"{type(input_data).__name__}")
    out = 1
    for d in input_data:
        out *= int(d)
    return out


def _is_number(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, Tensor)


def tuple_to_array(input_x):
    """A 1-D tensor from a tuple of Python numbers: int32 for ints (and bools), float32 for
    floats, as MindSpore's. A tuple whose first element is an int but holds a float is refused
    (MindSpore's PyNative truncates the floats, its graph mode refuses it); lists and nested
    tuples are refused."""
    if not isinstance(input_x, tuple):
        raise TypeError(f"For 'tuple_to_array', the input must be a tuple, got "
                        f"{type(input_x).__name__}")
    if not input_x:
        raise ValueError("For 'tuple_to_array', the input tuple must not be empty")
    if not all(_is_number(v) for v in input_x):
        raise TypeError(f"For 'tuple_to_array', the elements must be Python bool, int or float "
                        f"scalars (nested tuples are not supported by minispore), got {input_x!r}")
    first_float = isinstance(input_x[0], float)
    if not first_float and any(isinstance(v, float) for v in input_x):
        raise TypeError(f"For 'tuple_to_array', the elements must have one type: the first is "
                        f"an int and a later one a float in {input_x!r}; write the ints as floats")
    if first_float:
        return Tensor([float(v) for v in input_x], _dt.float32)
    return Tensor([int(v) for v in input_x], _dt.int32)


def scalar_to_tensor(input_x, dtype=_dt.float32):
    """A 0-D tensor of `dtype` (float32 by default, also for ints and bools) from a Python
    bool, int or float (in a graph, also a variable scalar: an ms.mutable input or float(t))."""
    from ..core.mutable import SymScalar, tensor_of
    if isinstance(input_x, SymScalar):
        return tensor_of(input_x, dtype)
    if not _is_number(input_x):
        raise TypeError(f"For 'ScalarToTensor', the type of 'x' should be one of ['bool', "
                        f"'int', 'float'], but got type '{type(input_x).__name__}'")
    return Tensor(input_x, _dt.to_dtype(dtype))


def identity(x):
    """x itself, whatever it is (MindSpore's ops.identity returns its input object; the
    Primitive ops.Identity()(x) makes a new tensor)."""
    return x


def copy_tensor(x):
    """A new tensor with x's value (differentiable): ops.Identity()(x)."""
    return _A.reshape(_tensor_arg("Identity", x), tuple(x.shape))


def tensor_add(input, other):
    """input + other (MindSpore's old name for ops.add)."""
    return _M.add(input, other)


# MindSpore's ops.functional keeps these names of the primitives' instances
def tensor_mul(input, other):
    """input * other (P.Mul)."""
    return _M.mul(input, other)


def tensor_sub(input, other):
    """input - other (P.Sub)."""
    return _M.sub(input, other)


def tensor_div(x, y):
    """P.RealDiv()(x, y): x / y, rounded towards zero (and integer) between integers."""
    from .primitives import RealDiv
    return RealDiv()(x, y)


def tensor_pow(input, exponent):
    """input ** exponent (P.Pow)."""
    return _M.pow(input, exponent)


def tensor_gt(input, other):
    """input > other."""
    return _M.greater(input, other)


def tensor_ge(input, other):
    """input >= other."""
    return _M.greater_equal(input, other)


def tensor_lt(input, other):
    """input < other."""
    return _M.less(input, other)


def tensor_le(input, other):
    """input <= other."""
    return _M.less_equal(input, other)


def tensor_floordiv(input, other):
    """x / y rounded down (P.FloorDiv)."""
    return _M.floor_div(input, other)


def tensor_mod(x, y):
    """x - floor_div(x, y) * y, the sign of y (P.FloorMod)."""
    return _M.mod(x, y)


def tensor_exp(input):
    """e ** input (P.Exp)."""
    return _M.exp(input)


def _bound(v, like):
    if isinstance(v, Tensor):
        return v if v.dtype is like.dtype else _M.cast(v, like.dtype)
    return Tensor(v, like.dtype)


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """x limited to [clip_value_min, clip_value_max] as minimum(maximum(x, min), max) (so min >
    max gives max everywhere); the bounds take x's dtype (float bounds of an integer x are
    truncated); a list or tuple of tensors gives a tuple, each clipped."""
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("For 'clip_by_value', at least one of 'clip_value_min' or "
                         "'clip_value_max' must not be None")
    if isinstance(x, (list, tuple)):
        return tuple(clip_by_value(t, clip_value_min, clip_value_max) for t in x)
    y = x
    if clip_value_min is not None:
        y = _M.maximum(y, _bound(clip_value_min, x))
    if clip_value_max is not None:
        y = _M.minimum(y, _bound(clip_value_max, x))
    return y


def select(condition, input, other):
    """input where condition is True, else other (broadcast); condition is a bool tensor. A
    Python number takes part in type promotion as in ops.where (an int tensor with a float
    number gives float32); two Python numbers give int64 when both are ints, else float32."""
    if not isinstance(condition, Tensor) or condition.dtype is not _dt.bool_:
        raise TypeError(f"For 'select', the condition must be a bool Tensor, got "
                        f"{getattr(condition, 'dtype', type(condition).__name__)}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        if not all(_is_number(v) and not isinstance(v, bool) for v in (input, other)):
            raise TypeError(f"For 'select', input and other must be Tensors or int/float "
                            f"numbers, got {type(input).__name__} and {type(other).__name__}")
        both_int = isinstance(input, int) and isinstance(other, int)
        input = Tensor(input, _dt.int64 if both_int else _dt.float32)
    return _M.where(condition, input, other)


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """The tensors of x scaled by clip_norm / max(global_norm, clip_norm), global_norm the L2
    norm of all of them together, in MindSpore's order of operations: float32 square sums of
    shape (1,), their sum, its square root, then x * clip_norm / global_norm cast back to each
    tensor's dtype. Returns a tuple (a Tensor for one Tensor x, as MindSpore)."""
    if use_norm is not None:
        raise ValueError(f"For 'clip_by_global_norm', input 'use_norm' only supports None "
                         f"currently, but got 'use_norm': {use_norm}")
    if isinstance(clip_norm, bool) or not isinstance(clip_norm, (int, float)) or clip_norm <= 0:
        raise ValueError(f"For 'clip_by_global_norm', clip_norm must be a number > 0, got "
                         f"{clip_norm!r}")
    if isinstance(x, Tensor):            # one tensor: clipped by its own norm, a tensor back
        return clip_by_global_norm((x,), clip_norm, use_norm)[0]
    if not isinstance(x, (tuple, list)) or not all(isinstance(t, Tensor) for t in x):
        raise TypeError("For 'clip_by_global_norm', x must be a Tensor or a tuple or list of "
                        "Tensors")
    from ..core.ops import reduce as _R
    clip = Tensor([clip_norm], _dt.float32)
    total = None
    for t in x:
        s = _A.expand_dims(_M.cast(_R.sum(_M.square(t), ()), _dt.float32), 0)
        total = s if total is None else _M.add(total, s)
    norm = _M.sqrt(total)
    norm = _M.where(_M.greater_equal(norm, clip), norm, clip)
    return tuple(_M.cast(_M.div(_M.mul(t, clip), norm), t.dtype) for t in x)


_INF = float("inf")


def _vector_norm(x, ord, dim, keepdim):
    from ..core.ops import reduce as _R
    if ord is None or ord == 2:
        return _M.sqrt(_R.sum(_M.square(x), dim, keepdim))
    ax = _M.abs(x)
    if ord == _INF:
        return _R.amax(ax, dim, keepdim)
    if ord == -_INF:
        return _R.amin(ax, dim, keepdim)
    if ord == 0:
        return _R.sum(_M.cast(_M.not_equal(x, 0), x.dtype), dim, keepdim)
    if ord == 1:
        return _R.sum(ax, dim, keepdim)
    return _M.pow(_R.sum(_M.pow(ax, float(ord)), dim, keepdim), 1.0 / float(ord))


def _matrix_norm(x, ord, dims, keepdim):
    from ..core.ops import reduce as _R
    d0, d1 = dims
    if ord is None or ord == "fro":
        return _M.sqrt(_R.sum(_M.square(x), dims, keepdim))
    if ord not in (2, -2, 1, -1, _INF, -_INF, "nuc"):
        raise ValueError(f"For norm, the ord mode must be in [2, -2, 1, -1, float('inf'), "
                         f"-float('inf'), 'fro', 'nuc', None] for matrices, but got {ord}.")
    if ord in (1, -1, _INF, -_INF):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = _R.sum(_M.abs(x), inner, True)
        r = (_R.amax if ord in (1, _INF) else _R.amin)(s, outer, True)
        return r if keepdim else _A.squeeze(r, tuple(sorted((d0, d1))))
    raise NotImplementedError(f"norm: the matrix norm ord={ord!r} (singular values) is not "
                              f"supported by minispore; supported: None, 'fro', 1, -1, inf, -inf")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """The vector or matrix norm of A (MindSpore's ops.norm): with dim None and ord None the
    2-norm of all of A; ord with dim None is a vector norm of a 1-D A and a matrix norm of a
    2-D A; an int dim gives vector norms along it, a pair of dims matrix norms. Integer inputs
    give float32; `dtype` casts A first."""
    if not isinstance(A, Tensor):
        raise TypeError(f"For 'norm', A must be a Tensor, got {type(A).__name__}")
    x = A
    if dtype is not None:
        x = _M.cast(x, _dt.to_dtype(dtype))
    elif not x.dtype.is_float:
        x = _M.cast(x, _dt.float32)
    rank = len(x.shape)
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        raise ValueError(f"For 'norm', ord must be a number, 'fro' or 'nuc', got {ord!r}")
    if dim is None:
        if ord is None:
            return _vector_norm(_A.reshape(x, (-1,)) if rank != 1 else x, None, 0, False) \
                if not keepdim else _M.sqrt(_sum_all_keep(x))
        if rank == 1:
            if isinstance(ord, str):
                raise TypeError(f"For norm, ord mode can not be str for vectors, but got {ord}.")
            return _vector_norm(x, ord, 0, keepdim)
        if rank == 2:
            return _matrix_norm(x, ord, (0, 1), keepdim)
        raise ValueError(f"For 'norm', with ord={ord!r} and dim None, A must be 1-D or 2-D, "
                         f"got rank {rank}")
    if isinstance(dim, int):
        if isinstance(ord, str):
            raise TypeError(f"For norm, ord mode can not be str for vectors, but got {ord}.")
        return _vector_norm(x, ord, dim, keepdim)
    dims = tuple(int(d) % rank for d in dim)
    if len(dims) == 1:
        if isinstance(ord, str):
            raise TypeError(f"For norm, ord mode can not be str for vectors, but got {ord}.")
        return _vector_norm(x, ord, dims[0], keepdim)
    if len(dims) != 2:
        raise ValueError(f"For 'norm', dim must be an int or a tuple of 1 or 2 ints, got {dim!r}")
    return _matrix_norm(x, ord, dims, keepdim)


def _sum_all_keep(x):
    from ..core.ops import reduce as _R
    return _R.sum(_M.square(x), tuple(range(len(x.shape))), True)
