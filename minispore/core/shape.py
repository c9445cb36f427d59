"""Pure shape arithmetic (no arrays): broadcasting and axis normalisation, raising ShapeError
messages that name the op, the shapes and a fix."""
from __future__ import annotations

from .errors import ShapeError


def broadcast_shapes(op: str, *shapes: tuple) -> tuple:
    """numpy broadcasting of `shapes`; raises ShapeError naming `op` and the shapes."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        d = 1
        for s in shapes:
            if len(s) >= -i:
                e = s[i]
                if e != 1:
                    if d != 1 and d != e:
                        raise ShapeError(
                            f"{op}: shapes {', '.join(str(tuple(s)) for s in shapes)} cannot be "
                            f"broadcast together (dim {i}: {d} vs {e}); make every dimension equal "
                            f"or 1, e.g. with reshape or expand_dims")
                    d = e
        out.append(d)
    return tuple(out)


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{op}: axis must be an int, got {type(axis).__name__} {axis!r}")
    n = max(ndim, 1)                 # a 0-d tensor accepts axis 0 and -1, as PyTorch's ops do
    if not -n <= axis < n:
        raise ShapeError(f"{op}: axis {axis} out of range for a tensor of rank {ndim}; "
                         f"use an axis in [{-n}, {n - 1}]")
    return axis % n


def normalize_axes(op: str, axis, ndim: int) -> tuple:
    """Reduction axes: None -> all; int or tuple/list -> sorted unique non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(normalize_axis(op, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{op}: repeated axis in {tuple(axis)}; list each axis once")
        return tuple(sorted(axes))
    return (normalize_axis(op, axis, ndim),)


def reduced_shape(shape: tuple, axes: tuple, keep_dims: bool) -> tuple:
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def size_of(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast_strides(in_shape: tuple, out_shape: tuple) -> list:
    """Element strides of a C-contiguous input broadcast against out_shape's loop indices."""
    lead = len(out_shape) - len(in_shape)
    st, acc = [0] * len(out_shape), 1
    for k in range(len(in_shape) - 1, -1, -1):
        d = in_shape[k]
        st[lead + k] = 0 if d == 1 else acc
        acc *= d
    return st


def c_strides(shape: tuple) -> list:
    """Element strides of a C-contiguous array of `shape`."""
    st, acc = [0] * len(shape), 1
    for k in range(len(shape) - 1, -1, -1):
        st[k] = acc
        acc *= shape[k]
    return st
