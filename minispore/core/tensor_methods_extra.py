"""More Tensor methods of MindSpore 2.10, each a thin composition of functional ops (attached
to Tensor by core.tensor_methods): shape-taking forms (view_as, reshape_as, expand, type_as, t),
sizes (numel, nelement, dim, ndimension), comparisons and logic as methods, and mm/bmm."""
from __future__ import annotations

from . import dtype as dt
from .errors import ShapeError
from .ops import array as A
from .ops import linalg
from .ops import math as M
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
}
for _n, _f in METHODS.items():
    setattr(Tensor, _n, _f)
