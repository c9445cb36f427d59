"""More Tensor methods of MindSpore 2.10, each a thin composition of functional ops (attached
to Tensor by core.tensor_methods): shape-taking forms (view_as, reshape_as, expand, type_as, t),
sizes (numel, nelement, dim, ndimension), comparisons and logic as methods, mm/bmm/addmm/outer,
splitting (chunk, split, unbind, narrow, index_select), masking (masked_fill, where, tril, triu,
clamp), the float tests (isnan, isinf, isfinite), flip, std/var (both MindSpore signatures),
trunc/frac, fmod, nan_to_num, trace, count_nonzero, repeat_interleave, addcmul, the bitwise methods and MindSpore's
longer spellings (multiply, greater, absolute, ...)."""
from __future__ import annotations

from . import dtype as dt
from . import hooks
import numpy as np

from .errors import ShapeError
from .ops import array as A
from .ops import array_nd as ND
from .ops import linalg
from .ops import index_ops as I
from .ops import math as M
from .ops import reduce as R
from .ops import rounding
from .overloads import is_bool, is_int, overloaded, variant
from .tensor import Tensor


def _tensor_arg(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"Tensor.{name}: other must be a Tensor, got {type(other).__name__}")
    return other


def _view_as(self, other):
    """Reshape to the shape of the Tensor `other` (its dtype is not taken)."""
    return A.reshape(self, tuple(_tensor_arg("view_as", other).shape))


def _reshape_as(self, other):
    """Reshape to the shape of the Tensor `other` (its dtype is not taken)."""
    return A.reshape(self, tuple(_tensor_arg("reshape_as", other).shape))


def _expand(self, *size):
    """Broadcast to `size` (ints, or one tuple/list/1-D Tensor of them); -1 keeps a dim."""
    if len(size) == 1 and isinstance(size[0], Tensor):
        size = tuple(int(s) for s in size[0].asnumpy().reshape(-1))
    elif len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return A.broadcast_to(self, tuple(size))


def _type_as(self, other):
    """A cast to the dtype of the Tensor `other`."""
    return M.cast(self, _tensor_arg("type_as", other).dtype)


def _t(self):
    """The transpose of a 2-D tensor; a 0-D or 1-D tensor as it is."""
    if self.ndim > 2:
        raise ShapeError(f"Tensor.t: the tensor must be 0-D, 1-D or 2-D, got rank {self.ndim}; "
                         f"use transpose(dim0, dim1) or swapaxes")
    return A.transpose(self, (1, 0)) if self.ndim == 2 else A.reshape(self, tuple(self.shape))


def _mm(self, mat2):
    """The matrix product of two 2-D tensors."""
    if self.ndim != 2 or getattr(mat2, "ndim", None) != 2:
        raise ShapeError(f"Tensor.mm: both inputs must be 2-D, got ranks {self.ndim} and "
                         f"{getattr(mat2, 'ndim', type(mat2).__name__)}; use matmul for others")
    return linalg.matmul(self, mat2)


def _bmm(self, mat2):
    """The batched matrix product of two 3-D tensors."""
    if self.ndim != 3 or getattr(mat2, "ndim", None) != 3:
        raise ShapeError(f"Tensor.bmm: both inputs must be 3-D, got ranks {self.ndim} and "
                         f"{getattr(mat2, 'ndim', type(mat2).__name__)}; use matmul for others")
    return linalg.bmm(self, mat2)


def _size(self):
    n = 1
    for d in self.shape:
        n *= int(d)
    return n


def _cmp(fn):
    return lambda self, other: fn(self, other)


def _logical_and(self, other):
    return M.logical_and(M.cast(self, dt.bool_), other if not isinstance(other, Tensor)
                         else M.cast(other, dt.bool_))


def _masked_fill(self, mask, value):
    """value (cast to this dtype) where mask is true, else this tensor's elements: the
    masked_fill composite."""
    value = M.cast(value, self.dtype) if isinstance(value, Tensor) else \
        Tensor(np.asarray(value).astype(self.dtype.np))
    return ND.masked_fill(self, mask, value)


def _clamp(self, min=None, max=None):
    """Elements limited to [min, max]; at least one bound is needed."""
    if min is None and max is None:
        raise ValueError("Tensor.clamp: at least one of 'min' or 'max' must not be None")
    return M.clamp(self, min, max)


def _float_test(name, on_float, on_int):
    def f(self):
        if self.dtype.is_float:
            return on_float(self)
        return A.full(tuple(self.shape), on_int, dtype=dt.bool_)
    f.__name__ = name
    return f


def _isinf(x):
    return M.equal(M.abs(x), float("inf"))


def _isfinite(x):
    return M.logical_and(M.equal(x, x), M.not_equal(M.abs(x), float("inf")))


def _lerp(self, end, weight):
    """self + weight * (end - self)."""
    return M.add(self, M.mul(weight, M.sub(end, self)))


def _outer(self, vec2):
    """The outer product of two 1-D tensors."""
    if self.ndim != 1 or getattr(vec2, "ndim", None) != 1:
        raise ShapeError(f"Tensor.outer: both inputs must be 1-D, got ranks {self.ndim} and "
                         f"{getattr(vec2, 'ndim', type(vec2).__name__)}")
    return M.mul(A.reshape(self, (-1, 1)), A.reshape(vec2, (1, -1)))


def _addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2)."""
    prod = _mm(mat1, mat2)
    prod = prod if alpha == 1 else M.mul(prod, alpha)
    return M.add(self if beta == 1 else M.mul(self, beta), prod)


def _new(name, value):
    def f(self, size, dtype=None):
        return A.full(size if isinstance(size, (tuple, list)) else (size,), value,
                      dtype=self.dtype if dtype is None else dtype)
    f.__name__ = name
    f.__doc__ = f"A tensor of {value}s of shape size, of dtype (None: this tensor's)."
    return f


def _logical_or(self, other):
    return M.logical_or(M.cast(self, dt.bool_), other if not isinstance(other, Tensor)
                        else M.cast(other, dt.bool_))


def _chunk(self, chunks, axis):
    """Pieces of ceil(length / chunks) along axis (the last may be shorter; fewer may come)."""
    if not is_int(chunks) or chunks <= 0:
        raise ValueError(f"Tensor.chunk: chunks must be a positive int, got {chunks!r}")
    n = self.shape[A.normalize_axis("Tensor.chunk", axis, self.ndim)]
    return tuple(A.split(self, max(-(-n // chunks), 1), axis))


def _split(self, sizes, axis):
    return tuple(A.split(self, sizes, axis))


def _unbind(self, dim=0):
    """The slices along dim, each without that axis."""
    d = A.normalize_axis("Tensor.unbind", dim, self.ndim)
    return tuple(A.squeeze(p, d) for p in A.split(self, 1, d))


def _narrow(self, dim, start, length):
    """The `length` elements from `start` along dim."""
    d = A.normalize_axis("Tensor.narrow", dim, self.ndim)
    n = self.shape[d]
    if not (is_int(start) and is_int(length)):
        raise TypeError("Tensor.narrow: start and length must be ints")
    s = start + n if start < 0 else start
    if not (0 <= s <= n and 0 <= length <= n - s):
        raise ValueError(f"Tensor.narrow: start {start} and length {length} do not fit the "
                         f"axis {dim} of length {n}")
    return self[(slice(None),) * d + (slice(s, s + length),)]


def _index_select(self, axis, index):
    """The elements at the 1-D int Tensor `index` along axis."""
    if not isinstance(index, Tensor) or index.ndim != 1 or not index.dtype.is_int:
        raise TypeError("Tensor.index_select: index must be a 1-D int Tensor")
    return I.gather(self, index, A.normalize_axis("Tensor.index_select", axis, self.ndim))


def _triangle(name, composite):
    def f(self, diagonal=0):
        if self.ndim < 2:
            raise ShapeError(f"Tensor.{name}: the tensor must be at least 2-D, got rank "
                             f"{self.ndim}")
        if not is_int(diagonal):
            raise TypeError(f"Tensor.{name}: diagonal must be an int, got {diagonal!r}")
        return composite(self, int(diagonal))
    f.__name__ = name
    return f


def _extreme(fn):
    def f(self, axis=None, keepdims=False, *, initial=None, where=None):
        return fn(self, axis, keepdims, initial=initial, where=where)
    return f


def _flip(self, dims):
    """The elements in reverse order along each axis in dims (a tuple or list of ints)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"Tensor.flip: dims must be a tuple or list of ints, got "
                        f"{type(dims).__name__}")
    x = self
    for d in dims:
        a = A.normalize_axis("Tensor.flip", d, self.ndim)
        n = self.shape[a]
        x = I.gather(x, Tensor(np.arange(n - 1, -1, -1, dtype=np.int32)), a)
    return x if dims else A.reshape(x, tuple(x.shape))


def _variance(x, axis, ddof, keepdims):
    """sum((x - mean)^2) / (n - ddof) over axis (None: all)."""
    axes = tuple(range(x.ndim)) if axis is None else \
        tuple(A.normalize_axis("Tensor.var", a, x.ndim)
              for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    n = 1
    for a in axes:
        n *= x.shape[a]
    dev = M.sub(x, R.mean(x, axes, True))
    return M.div(R.sum(M.mul(dev, dev), axes, keepdims), float(n - ddof))


def _moment(name, root):
    def finish(v):
        return M.sqrt(v) if root else v

    def legacy(self, axis=None, ddof=0, keepdims=False):
        """ddof delta degrees of freedom (default 0: the population statistic)."""
        return finish(_variance(self, axis, ddof, keepdims))

    def modern(self, dim=None, *, correction=1, keepdim=False):
        """correction delta degrees of freedom (default 1: the sample statistic)."""
        return finish(_variance(self, dim, correction, keepdim))

    return overloaded("Tensor", name,
                      variant(legacy, lambda a: is_int(a["ddof"]) and is_bool(a["keepdims"])),
                      variant(modern))


def _trunc(self):
    """Rounded towards zero."""
    if not self.dtype.is_float:
        return A.reshape(self, tuple(self.shape))
    return M.where(M.less(self, 0), M.ceil(self), M.floor(self))


def _addcmul(self, tensor1, tensor2, value=1):
    """self + value * tensor1 * tensor2."""
    prod = M.mul(tensor1, tensor2)
    return M.add(self, prod if value == 1 else M.mul(prod, value))


def _logical_xor(self, other):
    return M.not_equal(M.cast(self, dt.bool_), M.cast(other, dt.bool_)
                       if isinstance(other, Tensor) else bool(other))


def _fmod(self, other):
    """The remainder of truncated division: the sign of self (C's fmod)."""
    r = M.mod(M.abs(self), M.abs(other))
    return M.where(M.less(self, 0), M.neg(r), r)


def _nan_to_num(self, nan=None, posinf=None, neginf=None):
    """NaN -> nan (None: 0), +inf -> posinf (None: the dtype's largest finite value),
    -inf -> neginf (None: the dtype's lowest); integer tensors come back unchanged."""
    if not self.dtype.is_float:
        return A.reshape(self, tuple(self.shape))
    info = np.finfo(self.dtype.np)

    def const(v, default):
        return Tensor(np.asarray(default if v is None else v, self.dtype.np))
    x = M.where(M.not_equal(self, self), const(nan, 0.0), self)
    x = M.where(M.equal(self, float("inf")), const(posinf, info.max), x)
    return M.where(M.equal(self, float("-inf")), const(neginf, info.min), x)


def _trace(self, offset=0, axis1=0, axis2=1, dtype=None):
    """The sum of the diagonal `offset` of the axes axis1, axis2 (integer tensors give int64)."""
    a1, a2 = (A.normalize_axis("Tensor.trace", a, self.ndim) for a in (axis1, axis2))
    if a1 == a2:
        raise ValueError("Tensor.trace: axis1 and axis2 must differ")
    shape = [1] * self.ndim
    shape[a1], shape[a2] = self.shape[a1], self.shape[a2]
    eye = np.eye(self.shape[a1], self.shape[a2], k=offset, dtype=np.bool_)
    mask = Tensor(eye if a1 < a2 else eye.T).reshape(tuple(shape))
    r = R.sum(M.where(mask, self, A.zeros_like(self)), (a1, a2), False)
    if dtype is not None:
        return M.cast(r, dtype)
    return r if self.dtype.is_float else M.cast(r, dt.int64)


def _count_nonzero(self, axis=(), keep_dims=False, dtype=None):
    """The number of nonzero elements along axis (() or None: all), int32 unless dtype."""
    axes = None if axis is None or axis == () else axis
    r = R.sum(M.cast(M.not_equal(self, 0), dt.int32), axes, keep_dims)
    return r if dtype is None else M.cast(r, dtype)


def _count_nonzero_dim(self, dim=None):
    raise NotImplementedError("Tensor.count_nonzero(dim=...): pass the axis positionally or as "
                              "axis= (MindSpore 2.10's (axis, keep_dims, dtype) form)")


def _repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """Each element along dim (None: of the flattened tensor) repeated `repeats` times (a
    positive int, or one count per element as a list, tuple or concrete Tensor)."""
    x = A.reshape(self, (-1,)) if dim is None else self
    d = 0 if dim is None else A.normalize_axis("Tensor.repeat_interleave", dim, self.ndim)
    n = x.shape[d]
    if isinstance(repeats, Tensor):
        repeats = repeats.asnumpy().reshape(-1).tolist() if repeats.ndim else int(repeats)
    if is_int(repeats):
        if repeats <= 0:
            raise ValueError(f"Tensor.repeat_interleave: repeats must be positive, got {repeats}")
        counts = [int(repeats)] * n
    elif isinstance(repeats, (list, tuple)) and all(is_int(r) and r >= 0 for r in repeats):
        counts = [int(r) for r in repeats]
        if len(counts) != n:
            raise ValueError(f"Tensor.repeat_interleave: {len(counts)} repeats for an axis of "
                             f"length {n}; give one count per element")
    else:
        raise TypeError(f"Tensor.repeat_interleave: repeats must be a positive int or a "
                        f"sequence of counts, got {repeats!r}")
    index = np.repeat(np.arange(n, dtype=np.int32), counts)
    if output_size is not None and output_size != index.size:
        raise ValueError(f"Tensor.repeat_interleave: output_size={output_size} but the result "
                         f"has {index.size} elements along the axis")
    return I.gather(x, Tensor(index), d)


METHODS = {
    "view_as": _view_as,
    "reshape_as": _reshape_as,
    "expand": _expand,
    "type_as": _type_as,
    "t": _t,
    "numel": _size,
    "nelement": _size,
    "dim": lambda self: len(self.shape),
    "ndimension": lambda self: len(self.shape),
    "eq": _cmp(M.equal),
    "ne": _cmp(M.not_equal),
    "gt": _cmp(M.greater),
    "lt": _cmp(M.less),
    "ge": _cmp(M.greater_equal),
    "le": _cmp(M.less_equal),
    "minimum": _cmp(M.minimum),
    "maximum": _cmp(M.maximum),
    "logical_and": _logical_and,
    "logical_not": lambda self: M.logical_not(M.cast(self, dt.bool_)),
    "reciprocal": lambda self: M.reciprocal(self if self.dtype.is_float
                                            else M.cast(self, dt.float32)),
    "true_divide": _cmp(M.true_divide),
    "mm": _mm,
    "bmm": _bmm,
    "addmm": _addmm,
    "outer": _outer,
    "masked_fill": _masked_fill,
    "where": lambda self, condition, y: M.where(condition, self, y),
    "clamp": _clamp,
    "isnan": _float_test("isnan", lambda x: M.not_equal(x, x), False),
    "isinf": _float_test("isinf", _isinf, False),
    "isfinite": _float_test("isfinite", _isfinite, True),
    "log1p": lambda self: M.log1p(self),
    "erf": lambda self: M.erf(self),
    "lerp": _lerp,
    "new_zeros": _new("new_zeros", 0),
    "new_ones": _new("new_ones", 1),
    "logical_or": _logical_or,
    "floor_divide": _cmp(M.floor_div),
    "remainder": overloaded("Tensor", "remainder",
                            variant(lambda self, other: M.mod(self, other)),
                            variant(lambda self, divisor: M.mod(self, divisor))),
    "chunk": overloaded("Tensor", "chunk",
                        variant(lambda self, chunks, dim=0: _chunk(self, chunks, dim)),
                        variant(lambda self, chunks, axis=0: _chunk(self, chunks, axis))),
    "split": overloaded("Tensor", "split",
                        variant(lambda self, split_size, dim=0: _split(self, split_size, dim)),
                        variant(lambda self, split_size_or_sections, axis=0:
                                _split(self, split_size_or_sections, axis))),
    "unbind": _unbind,
    "narrow": _narrow,
    "index_select": overloaded(
        "Tensor", "index_select",
        variant(lambda self, axis, index: _index_select(self, axis, index)),
        variant(lambda self, dim, index: _index_select(self, dim, index))),
    "tril": _triangle("tril", ND.tril),
    "triu": _triangle("triu", ND.triu),
    "gather_nd": lambda self, indices: ND.gather_nd(self, indices),
    "amax": _extreme(R.amax),
    "amin": _extreme(R.amin),
    "flip": _flip,
    "std": _moment("std", True),
    "var": _moment("var", False),
    "trunc": _trunc,
    "frac": lambda self: M.sub(self, _trunc(self)),
    "addcmul": _addcmul,
    "logical_xor": _logical_xor,
    "is_floating_point": lambda self: self.dtype.is_float,
    "byte": lambda self: M.cast(self, dt.uint8),
    "short": lambda self: M.cast(self, dt.int16),
    "multiply": lambda self, value: M.mul(self, value),
    "divide": lambda self, other, *, rounding_mode=None:
        rounding.div(self, other, rounding_mode=rounding_mode),
    "subtract": lambda self, other, *, alpha=1:
        M.sub(self, other if alpha == 1 else M.mul(other, alpha)),
    "absolute": lambda self: M.abs(self),
    "negative": lambda self: M.neg(self),
    "greater": _cmp(M.greater),
    "less": _cmp(M.less),
    "equal": _cmp(M.equal),
    "not_equal": _cmp(M.not_equal),
    "greater_equal": _cmp(M.greater_equal),
    "less_equal": _cmp(M.less_equal),
    "fmod": _fmod,
    "nan_to_num": _nan_to_num,
    "trace": _trace,
    "count_nonzero": overloaded("Tensor", "count_nonzero", variant(_count_nonzero),
                                variant(_count_nonzero_dim)),
    "bitwise_and": _cmp(M.bitwise_and),
    "bitwise_or": _cmp(M.bitwise_or),
    "bitwise_xor": _cmp(M.bitwise_xor),
    "is_signed": lambda self: self.dtype.kind in "if",
    "repeat_interleave": _repeat_interleave,
    "register_hook": lambda self, hook: hooks.register_tensor_hook(self, hook),
}
for _n, _f in METHODS.items():
    setattr(Tensor, _n, _f)
from . import tensor_methods_sorting  # noqa: E402,F401  (sort, argsort, topk, cumsum)
