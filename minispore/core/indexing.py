"""Tensor subscripting: `x[key]` and `x[key] = value`, built from primitives so that both are
differentiable and run on every backend.

Basic keys (int, slice, None, Ellipsis, tuples of them) become one strided_slice plus a reshape;
one integer tensor (or list) index becomes a gather; a bool tensor mask becomes a gather at the
mask's nonzero positions (its output shape depends on the data, so eager mode only). Assignment
builds the updated tensor with slice_update / scatter_update / where and rebinds the tensor to it
(see tensor.py: buffers are immutable)."""
from __future__ import annotations

import numpy as np

from . import dtype as dt
from .errors import ShapeError
from .ops import array as A
from .ops import index_ops as X
from .ops import math as M
from .tensor import Tensor, to_numpy


class _Plan:
    """A normalised key: begin/end/strides over x's dims, the reshape after slicing, and at most
    one advanced index (axis in the sliced-and-reshaped result, index tensor, is_mask)."""

    def __init__(self, x_shape, key):
        if not isinstance(key, tuple):
            key = (key,)
        key = tuple(_to_index(k) for k in key)
        used = sum(_consumes(k) for k in key if k is not Ellipsis and k is not None)
        n_ell = sum(1 for k in key if k is Ellipsis)
        if n_ell > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if used > len(x_shape):
            raise IndexError(f"too many indices for a tensor of shape {x_shape}: the key uses "
                             f"{used} dims")
        expanded = []
        for k in key:
            if k is Ellipsis:
                expanded.extend([slice(None)] * (len(x_shape) - used))
            else:
                expanded.append(k)
        if not n_ell:
            expanded.extend([slice(None)] * (len(x_shape) - used))
        self.begin, self.end, self.strides = [], [], []
        self.out_shape = []            # shape after int dims dropped and None dims added
        self.region = []               # shape of the sliced region (int dims kept as 1)
        self.adv = None                # (axis in out_shape, Tensor, is_mask, mask ndim)
        d = 0
        for k in expanded:
            if k is None:
                self.out_shape.append(1)
                continue
            if isinstance(k, Tensor):
                if self.adv is not None:
                    raise IndexError("only one tensor index per subscript is supported; index "
                                     "in two steps, e.g. x[i][:, j]")
                nd = k.ndim if k.dtype is dt.bool_ else 1
                self.adv = (len(self.out_shape), k, k.dtype is dt.bool_, nd)
                for j in range(nd):
                    self._full(x_shape[d + j])
                    self.out_shape.append(x_shape[d + j])
                if k.dtype is dt.bool_ and tuple(k.shape) != tuple(x_shape[d:d + nd]):
                    raise IndexError(f"boolean index of shape {k.shape} does not match the "
                                     f"indexed dims {x_shape[d:d + nd]} of shape {x_shape}")
                d += nd
                continue
            n = x_shape[d]
            if isinstance(k, slice):
                b, e, s = k.indices(n)
                if not len(range(b, e, s)):
                    # empty: slice.indices may give begin -1 (a negative step starting before
                    # index 0), which strided_slice would read as the last element
                    b, e = 0, 0
                self.begin.append(b)
                self.end.append(e)
                self.strides.append(s)
                ln = len(range(b, e, s))
                self.region.append(ln)
                self.out_shape.append(ln)
            else:
                i = int(k)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                i %= n
                self.begin.append(i)
                self.end.append(i + 1)
                self.strides.append(1)
                self.region.append(1)
            d += 1
        self.x_shape = tuple(x_shape)
        self.out_shape = tuple(self.out_shape)
        self.region = tuple(self.region)

    def _full(self, n):
        self.begin.append(0)
        self.end.append(n)
        self.strides.append(1)
        self.region.append(n)

    def is_full_slice(self) -> bool:
        return self.region == self.x_shape and all(s == 1 for s in self.strides)

    def basic(self, x):
        y = x
        if not self.is_full_slice():
            y = X.apply(X.STRIDED_SLICE, x, begin=tuple(self.begin), end=tuple(self.end),
                        strides=tuple(self.strides))
        if tuple(y.shape) != self.out_shape:
            y = A.reshape(y, self.out_shape)
        return y


def _to_index(k):
    if isinstance(k, (list, np.ndarray)):
        arr = np.asarray(k)
        return Tensor(arr if arr.dtype == np.bool_ else arr.astype(np.int64))
    if isinstance(k, Tensor):
        if k.dtype is not dt.bool_ and k.dtype.kind not in "iu":
            raise IndexError(f"tensor indices must be integer or bool tensors, got {k.dtype}")
        if k.ndim == 0 and k.dtype is not dt.bool_:
            return int(k.item())
        return k
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, (bool, np.bool_)):
        raise IndexError("a Python bool is not a valid index; use a bool Tensor mask")
    if isinstance(k, (int, np.integer)):
        return int(k)
    raise IndexError(f"invalid index of type {type(k).__name__}: only integers, slices, None, "
                     f"Ellipsis and integer/bool tensors are valid indices")


def _consumes(k) -> int:
    if isinstance(k, Tensor) and k.dtype is dt.bool_:
        return k.ndim
    return 1


def _flat_mask(y, axis, mask, nd):
    """y with the mask's dims merged into one, and the int64 positions where mask is true."""
    shape = tuple(y.shape)
    y = A.reshape(y, shape[:axis] + (-1,) + shape[axis + nd:])
    idx = np.flatnonzero(mask.asnumpy().reshape(-1)).astype(np.int64)
    return y, Tensor(idx)


def getitem(x: Tensor, key):
    p = _Plan(tuple(x.shape), key)
    y = p.basic(x)
    if p.adv is None:
        return y
    axis, idx, is_mask, nd = p.adv
    if is_mask:
        y, idx = _flat_mask(y, axis, idx, nd)
    return X.gather(y, idx, axis)


def setitem(x: Tensor, key, value) -> None:
    """x[key] = value: compute the updated tensor and rebind x to it."""
    if not isinstance(value, Tensor):
        value = Tensor(to_numpy(value, x.dtype))
    elif value.dtype is not x.dtype:
        value = M.cast(value, x.dtype)
    p = _Plan(tuple(x.shape), key)
    if p.adv is None:
        v = _fit("setitem", value, p.out_shape)
        if tuple(v.shape) != p.region:
            v = A.reshape(v, p.region)
        new = X.apply(X.SLICE_UPDATE, x, v, begin=tuple(p.begin), end=tuple(p.end),
                      strides=tuple(p.strides))
    else:
        axis, idx, is_mask, nd = p.adv
        if not p.is_full_slice() or len(p.out_shape) != len(p.x_shape):
            raise IndexError("assignment with a tensor index supports only keys like x[idx], "
                             "x[:, idx] or x[mask]; combine it with slices in two steps")
        target = x
        if is_mask:                      # merge the mask's dims, index the true positions
            target, idx = _flat_mask(x, axis, idx, nd)
        want = tuple(target.shape[:axis]) + tuple(idx.shape) + tuple(target.shape[axis + 1:])
        new = X.apply(X.SCATTER_UPDATE, target, idx, _fit("setitem", value, want), axis=axis)
        if is_mask:
            new = A.reshape(new, x.shape)
    x._buf, x._node = new._buf, new._node


def _broadcastable(v_shape, shape) -> bool:
    try:
        return np.broadcast_shapes(tuple(v_shape), tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def _fit(op, value, shape):
    if tuple(value.shape) == tuple(shape):
        return value
    if not _broadcastable(value.shape, shape):
        raise ShapeError(f"{op}: value of shape {tuple(value.shape)} cannot be broadcast to the "
                         f"indexed region of shape {tuple(shape)}")
    return A.broadcast_to(value, shape)
