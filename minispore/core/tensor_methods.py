"""Tensor operators and methods, attached to Tensor once the ops exist. Each is a thin call of a
functional op, so every operator goes through the same primitives (and the same executor) as
`ops.*`. Binary operators between two Tensors take the executor's `binary` fast path.

Methods with several MindSpore 2.x signatures (transpose, max/min, flatten, sum, mean, ...) are
`core.overloads.overloaded`: resolved as MindSpore 2.10's PyNative mode resolves them, in both
modes. (MindSpore 2.10's own GRAPH mode still gives the legacy meaning of some of them: there
`x.transpose(0, 1)` permutes and `x.max(1)` returns only the values; minispore's modes agree
with each other and with the documented 2.x signatures.)"""
from __future__ import annotations

import numbers

from . import dtype as dt
from .indexing import getitem, setitem
from .ops import array as A
from .ops import linalg
from .ops import math as M
from .ops import nn as N
from .ops import reduce as R
from .ops import rounding
from .overloads import is_axis, is_bool, is_int, overloaded, variant
from .errors import ShapeError
from .primitive import executor
from .tensor import Tensor


def _op(op, reflected=False):
    if reflected:
        def f(self, other):
            return executor.current.binary(op, other, self)
    else:
        def f(self, other):
            return executor.current.binary(op, self, other)
    f.__name__ = f"__{'r' if reflected else ''}{op.name}__"
    return f


_BINARY = {
    "add": M.ADD, "sub": M.SUB, "mul": M.MUL, "truediv": M.DIV, "floordiv": M.FLOOR_DIV,
    "mod": M.MOD, "pow": M.POW, "and": None, "or": None, "xor": None,
    "lshift": M.LEFT_SHIFT, "rshift": M.RIGHT_SHIFT,
}
for _name, _p in _BINARY.items():
    if _p is not None:
        setattr(Tensor, f"__{_name}__", _op(_p))
        setattr(Tensor, f"__r{_name}__", _op(_p, reflected=True))
for _name, _p in (("lt", M.LESS), ("le", M.LESS_EQUAL), ("gt", M.GREATER),
                  ("ge", M.GREATER_EQUAL), ("eq", M.EQUAL), ("ne", M.NOT_EQUAL)):
    setattr(Tensor, f"__{_name}__", _op(_p))


def _logic(bool_op, int_op):
    def f(self, other):
        is_bool = self.dtype is dt.bool_ and (
            isinstance(other, bool) or getattr(other, "dtype", None) is dt.bool_)
        return executor.current.apply(bool_op if is_bool else int_op, (self, other), ())

    def r(self, other):
        return f(self, other)
    return f, r


Tensor.__and__, Tensor.__rand__ = _logic(M.LOGICAL_AND, M.BITWISE_AND)
Tensor.__or__, Tensor.__ror__ = _logic(M.LOGICAL_OR, M.BITWISE_OR)
Tensor.__xor__, Tensor.__rxor__ = _logic(M.NOT_EQUAL, M.BITWISE_XOR)
Tensor.__hash__ = object.__hash__          # __eq__ is elementwise, as in MindSpore


def _matmul(self, other):
    return linalg.matmul(self, other if isinstance(other, Tensor) else Tensor(other))


def _rmatmul(self, other):
    return linalg.matmul(Tensor(other), self)


Tensor.__matmul__, Tensor.__rmatmul__ = _matmul, _rmatmul
Tensor.__neg__ = lambda self: M.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: M.abs(self)
Tensor.__invert__ = lambda self: M.logical_not(self) if self.dtype is dt.bool_ \
    else M.bitwise_not(self)
Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem


# ---------------------------------------------------------------- methods -----------------------
def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def reshape(self, *shape):
    return A.reshape(self, _shape_args(shape))


def _permute(self, *axes):
    """Permute the axes (none given: reverse them)."""
    axes = _shape_args(axes)
    return A.transpose(self, axes if axes else tuple(range(self.ndim))[::-1])


def _swap(self, dim0, dim1):
    """Swap the two axes dim0 and dim1."""
    perm = list(range(self.ndim))
    i, j = (A.normalize_axis("Tensor.transpose", d, self.ndim) for d in (dim0, dim1))
    perm[i], perm[j] = perm[j], perm[i]
    return A.transpose(self, tuple(perm))


transpose = overloaded(
    "Tensor", "transpose",
    variant(_swap, lambda a: is_int(a["dim0"]) and is_int(a["dim1"])),
    variant(_permute))


def _flatten_dims(self, start_dim=0, end_dim=-1):
    """Merge the axes start_dim..end_dim (default: all)."""
    return A.flatten(self, "C", start_dim=start_dim, end_dim=end_dim)


def _flatten_order(self, order="C", *, start_dim=0, end_dim=-1):
    """Flatten in `order` ('C' row-major, 'F' column-major)."""
    return A.flatten(self, order, start_dim=start_dim, end_dim=end_dim)


flatten = overloaded(
    "Tensor", "flatten",
    variant(_flatten_dims, lambda a: is_int(a["start_dim"]) and is_int(a["end_dim"])),
    variant(_flatten_order))


def _sum_dim(self, dim=None, keepdim=False, *, dtype=None):
    return R.sum(self, dim, keepdim, dtype=dtype)


def _sum_axis(self, axis=None, dtype=None, keepdims=False, initial=None):
    r = R.sum(self, axis, keepdims, dtype=dtype)
    return r + initial if initial is not None else r


tensor_sum = overloaded(
    "Tensor", "sum",
    variant(_sum_dim, lambda a: is_axis(a["dim"]) and is_bool(a["keepdim"])),
    variant(_sum_axis))


def _mean_dim(self, dim=None, keepdim=False, *, dtype=None):
    return R.mean(self if dtype is None else M.cast(self, dtype), dim, keepdim)


def _mean_axis(self, axis=None, keep_dims=False):
    return R.mean(self, axis, keep_dims)


tensor_mean = overloaded(
    "Tensor", "mean",
    variant(_mean_dim, lambda a: is_axis(a["dim"]) and is_bool(a["keepdim"])),
    variant(_mean_axis))


def _extreme(name, values, indices):
    def full(self):
        """The extreme of all elements."""
        return values(self, None, False)

    def along(self, dim, keepdim=False):
        """(values, indices) along dim; the indices are int64."""
        return values(self, dim, keepdim), indices(self, dim, keepdim)

    def legacy(self, axis=None, keepdims=False, *, initial=None, where=True,
               return_indices=False):
        """The values along axis; with return_indices, (values, indices)."""
        if return_indices and (initial is not None or not (where is True or where is None)):
            raise ValueError(f"Tensor.{name}: return_indices=True does not combine with "
                             f"initial= or where=; drop one of them")
        r = values(self, axis, keepdims, initial=initial, where=where)
        return (r, indices(self, axis, keepdims)) if return_indices else r

    return overloaded(
        "Tensor", name, variant(full),
        variant(along, lambda a: is_int(a["dim"]) and is_bool(a["keepdim"])),
        variant(legacy))


tensor_max = _extreme("max", R.amax, R.argmax)
tensor_min = _extreme("min", R.amin, R.argmin)


def _arg(name, fn):
    return overloaded(
        "Tensor", name,
        variant(lambda self, axis=None, keepdims=False: fn(self, axis, keepdims),
                lambda a: a["axis"] is None or is_int(a["axis"])),
        variant(lambda self, dim=None, keepdim=False: fn(self, dim, keepdim)))


def _argmin_int32(x, axis, keep):
    """MindSpore 2.10's Tensor.argmin gives int32 indices (its argmax, int64)."""
    return M.cast(R.argmin(x, axis, keep), dt.int32)


def _bool_reduce(name, fn):
    """all/any: (axis, keep_dims) and MindSpore 2.x's (dim, keepdim) spellings."""
    def f(x, axis, keep):
        return fn(M.cast(x, dt.bool_), axis, keep)
    return overloaded(
        "Tensor", name,
        variant(lambda self, axis=None, keep_dims=False: f(self, axis, keep_dims),
                lambda a: is_axis(a["axis"]) and is_bool(a["keep_dims"])),
        variant(lambda self, dim=None, keepdim=False: f(self, dim, keepdim)))


def _prod(x, axis, keep, dtype):
    return R.prod(x if dtype is None else M.cast(x, dtype), axis, keep)


tensor_prod = overloaded(
    "Tensor", "prod",
    variant(lambda self, dim=None, keepdim=False, dtype=None: _prod(self, dim, keepdim, dtype),
            lambda a: is_axis(a["dim"]) and is_bool(a["keepdim"])),
    variant(lambda self, axis=None, keep_dims=False, dtype=None:
            _prod(self, axis, keep_dims, dtype)))


def _scaled(other, alpha):
    return other if alpha == 1 else M.mul(other, alpha)


tensor_sub = overloaded(
    "Tensor", "sub",
    variant(lambda self, other, *, alpha=1: M.sub(self, _scaled(other, alpha))),
    variant(lambda self, y: M.sub(self, y)))


def _div(self, other, *, rounding_mode=None):
    """True division; rounding_mode 'floor' rounds the quotient down, 'trunc' towards zero."""
    return rounding.div(self, other, rounding_mode=rounding_mode)


def _to_device(device):
    from .context import get_context
    if device is not None and str(device).split(":")[0].lower() != \
            str(get_context("device_target")).lower():
        raise ValueError(f"Tensor.to: device {device!r} is not the context's device_target "
                         f"{get_context('device_target')!r}; minispore keeps every tensor on "
                         f"that device: use ms.set_context(device_target=...)")


def _to_dtype(self, dtype=None, non_blocking=False, copy=False):
    """A cast to dtype (None: the same dtype); non_blocking and copy change nothing here
    (copies are synchronous and buffers immutable)."""
    return self if dtype is None else M.cast(self, dtype)


def _to_device_dtype(self, device=None, dtype=None, non_blocking=False, copy=False):
    _to_device(device)
    return _to_dtype(self, dtype)


tensor_to = overloaded(
    "Tensor", "to",
    variant(_to_dtype, lambda a: a["dtype"] is None or isinstance(a["dtype"], dt.DType)),
    variant(_to_device_dtype, lambda a: a["device"] is None or isinstance(a["device"], str)),
    variant(lambda self, other, non_blocking=False, copy=False: M.cast(self, other.dtype),
            lambda a: isinstance(a["other"], Tensor)))


def _view_dtype(self, dtype):
    raise NotImplementedError(f"Tensor.view({dtype}): reinterpreting the bytes as another dtype "
                              f"is not supported by minispore; use astype({dtype}) to convert "
                              f"the values")


tensor_view = overloaded(
    "Tensor", "view",
    variant(reshape, lambda a: not (len(a["shape"]) == 1 and isinstance(a["shape"][0], dt.DType))),
    variant(_view_dtype))


def _round(self, decimals=0):
    """Round half to even, at `decimals` digits after the point."""
    return rounding.round(self, decimals=decimals)


def _squeeze(self, *axis):
    axis = _shape_args(axis)
    return A.squeeze(self, axis if axis else None)


def _softmax(self, axis, dtype=None):
    return N.softmax(self if dtype is None else M.cast(self, dtype), axis)


def _expand_as(self, other):
    """Broadcast to the shape of the Tensor `other` (its dtype is not taken)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"Tensor.expand_as: other must be a Tensor, got {type(other).__name__}; "
                        f"use broadcast_to(shape) for a shape")
    return A.broadcast_to(self, tuple(other.shape))


tensor_expand_as = overloaded(
    "Tensor", "expand_as", variant(_expand_as),
    variant(lambda self, x: _expand_as(self, x)))


def _swapaxes(self, axis0, axis1):
    """Swap the axes axis0 and axis1 (ints; a bool counts as 0/1, as in MindSpore)."""
    for a in (axis0, axis1):
        if not isinstance(a, numbers.Integral):
            raise TypeError(f"Tensor.swapaxes: the axes must be ints, got "
                            f"{type(a).__name__} {a!r}")
    return _swap(self, *(A.normalize_axis("Tensor.swapaxes", int(a), self.ndim)
                         for a in (axis0, axis1)))


def _diff_edge(x, edge, name, axis):
    if not isinstance(edge, Tensor):
        raise TypeError(f"Tensor.diff: {name} must be a Tensor, got {type(edge).__name__}")
    if edge.dtype is not x.dtype:
        raise TypeError(f"Tensor.diff: {name} has dtype {edge.dtype}, the tensor {x.dtype}; "
                        f"cast {name} to {x.dtype}")
    if edge.ndim != x.ndim or any(e != s for i, (e, s) in enumerate(zip(edge.shape, x.shape))
                                  if i != axis):
        raise ShapeError(f"Tensor.diff: {name} of shape {tuple(edge.shape)} must match the "
                         f"tensor's shape {tuple(x.shape)} except along axis {axis}")
    return edge


def _diff(self, n=1, axis=-1, prepend=None, append=None):
    """x[1:] - x[:-1] along axis (bool: x[1:] != x[:-1]), after joining prepend and append
    (Tensors of the same dtype and rank) on each side. MindSpore 2.10 takes only n=1."""
    if not is_int(n):
        raise TypeError(f"Tensor.diff: n must be an int, got {type(n).__name__}")
    if n != 1:
        raise ValueError(f"Tensor.diff: n must be 1 (MindSpore 2.10's Tensor.diff), got {n}; "
                         f"apply diff() n times")
    if self.ndim < 1:
        raise TypeError("Tensor.diff: the tensor must have at least 1 dimension, got 0")
    ax = A.normalize_axis("Tensor.diff", axis, self.ndim)
    parts = [_diff_edge(self, prepend, "prepend", ax)] if prepend is not None else []
    parts.append(self)
    if append is not None:
        parts.append(_diff_edge(self, append, "append", ax))
    x = A.concat(parts, ax) if len(parts) > 1 else self
    length = x.shape[ax]
    if length <= 1:
        return _empty_along(x, ax)
    head, _ = A.split(x, [length - 1, 1], ax)
    _, tail = A.split(x, [1, length - 1], ax)
    return M.not_equal(tail, head) if x.dtype is dt.bool_ else M.sub(tail, head)


def _empty_along(x, ax):
    """A tensor of x's dtype and shape with the axis ax emptied."""
    shape = list(x.shape)
    shape[ax] = 0
    return A.zeros(tuple(shape), x.dtype)


_METHODS = {
    "reshape": reshape,
    "view": tensor_view,
    "transpose": transpose,
    "permute": _permute,
    "flatten": flatten,
    "ravel": lambda self: A.reshape(self, (-1,)),
    "squeeze": _squeeze,
    "expand_dims": lambda self, axis: A.expand_dims(self, axis),
    "unsqueeze": lambda self, dim: A.expand_dims(self, dim),
    "astype": lambda self, dtype, copy=True: M.cast(self, dtype),
    "to": tensor_to,
    "value": lambda self: A.reshape(self, tuple(self.shape)),
    "expand_as": tensor_expand_as,
    "swapaxes": _swapaxes,
    "diff": _diff,
    "float": lambda self: M.cast(self, dt.float32),
    "half": lambda self: M.cast(self, dt.float16),
    "double": lambda self: M.cast(self, dt.float64),
    "int": lambda self: M.cast(self, dt.int32),
    "long": lambda self: M.cast(self, dt.int64),
    "bool": lambda self: M.cast(self, dt.bool_),
    "sum": tensor_sum,
    "mean": tensor_mean,
    "prod": tensor_prod,
    "max": tensor_max,
    "min": tensor_min,
    "argmax": _arg("argmax", R.argmax),
    "argmin": _arg("argmin", _argmin_int32),
    "logsumexp": lambda self, dim, keepdim=False: R.logsumexp(self, dim, keepdim),
    "all": _bool_reduce("all", R.amin),
    "any": _bool_reduce("any", R.amax),
    "abs": lambda self: M.abs(self),
    "neg": lambda self: M.neg(self),
    "exp": lambda self: M.exp(self),
    "log": lambda self: M.log(self),
    "sqrt": lambda self: M.sqrt(self),
    "rsqrt": lambda self: M.rsqrt(self),
    "square": lambda self: M.square(self),
    "sin": lambda self: M.sin(self),
    "cos": lambda self: M.cos(self),
    "tanh": lambda self: M.tanh(self),
    "sigmoid": lambda self: M.sigmoid(self),
    "relu": lambda self: M.relu(self),
    "floor": lambda self: M.floor(self),
    "ceil": lambda self: M.ceil(self),
    "round": _round,
    "sign": lambda self: M.sign(self),
    "pow": lambda self, exponent: M.pow(self, exponent),
    "add": lambda self, other, *, alpha=1: M.add(self, _scaled(other, alpha)),
    "sub": tensor_sub,
    "mul": lambda self, other: M.mul(self, other),
    "div": _div,
    "matmul": lambda self, tensor2: linalg.matmul(self, tensor2),
    "softmax": _softmax,
    "clip": lambda self, min=None, max=None: _clip(self, min, max),
    "tile": overloaded("Tensor", "tile", variant(lambda self, dims: A.tile(self, dims)),
                       variant(lambda self, reps: A.tile(self, reps))),
    "broadcast_to": lambda self, *shape: A.broadcast_to(self, _shape_args(shape)),
    "copy": lambda self: _copy(self),
    "clone": lambda self: _copy(self),
    "stop_gradient": lambda self: A.stop_gradient(self),
}


def _clip(x, lo, hi):
    if lo is None and hi is None:
        raise ValueError("Tensor.clip: at least one of 'min' or 'max' must not be None")
    return M.clamp(x, lo, hi)


def _copy(x):
    """A new tensor with the same value (differentiable; buffers are immutable, so shared)."""
    return A.reshape(x, tuple(x.shape)) if x._node is not None else _fresh(x)


def _fresh(x):
    t = Tensor.__new__(Tensor)
    t._buf, t.shape, t.dtype, t._node = x._buf, x.shape, x.dtype, None
    return t


for _n, _f in _METHODS.items():
    setattr(Tensor, _n, _f)
Tensor.T = property(lambda self: _permute(self))

from . import tensor_methods_extra as _extra  # noqa: E402,F401  (attaches the methods it holds)
