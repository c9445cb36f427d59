"""Padding, resampling, triangle and norm Cells: nn.Pad, nn.ZeroPad2d, nn.ConstantPad1d/2d/3d,
nn.ReflectionPad1d/2d/3d, nn.ReplicationPad1d/2d/3d, nn.Upsample, nn.Tril, nn.Triu and nn.Norm
(MindSpore 2.10's arguments), over the pad, resize and tril/triu composites
(core/ops/resample.py, core/ops/array_nd.py) and ops.interpolate."""
from __future__ import annotations

import numbers

from ...core import dtype as dt
from ...core.ops import array_nd as _nd
from ...core.ops import math as _m
from ...core.ops import reduce as _r
from ...core.ops import resample as _rs
from ..cell import Cell

__all__ = ["Pad", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "Upsample", "Tril", "Triu", "Norm"]


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


class Pad(Cell):
    """`nn.Pad(paddings, mode='CONSTANT')`: paddings a tuple of (before, after) pairs, one per
    axis of the input, first axis first, all >= 0; 'CONSTANT' pads zeros, 'REFLECT' mirrors
    without the edge (pads < the axis size), 'SYMMETRIC' with it (pads <= the axis size)."""

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'Pad', the 'mode' must be str and must be in '['CONSTANT', "
                             f"'REFLECT', 'SYMMETRIC']', but got {mode!r}.")
        if not isinstance(paddings, tuple):
            raise TypeError(f"For 'Pad', the type of 'paddings' must be tuple, but got "
                            f"{type(paddings).__name__}.")
        for k, p in enumerate(paddings):
            if not (isinstance(p, tuple) and len(p) == 2 and all(_is_int(v) for v in p)):
                raise ValueError(f"For 'Pad', paddings[{k}] must be a tuple of two ints, got "
                                 f"{p!r}")
            if p[0] < 0 or p[1] < 0:
                raise ValueError(f"For 'Pad', all elements of 'paddings' must be >= 0, but got "
                                 f"paddings[{k}][0] = {p[0]}, paddings[{k}][1] = {p[1]}")
        self.paddings, self.mode = paddings, mode
        self._flat = tuple(int(v) for pair in reversed(paddings) for v in pair)

    def construct(self, x):
        if len(self.paddings) != len(x.shape):
            raise ValueError(f"For 'Pad', the length of 'paddings' must be equal to the rank of "
                             f"'input_x', but got {len(self.paddings)} vs {len(x.shape)}")
        return _rs.pad_nd(x, self._flat, self.mode.lower(), 0)


def _padding(who, padding, n):
    """An int (every side) or a tuple of 2n ints (left, right of the last axis, then of the
    one before, ...) as the flat padding."""
    if _is_int(padding):
        return (int(padding),) * (2 * n)
    if isinstance(padding, tuple) and len(padding) == 2 * n and all(_is_int(v) for v in padding):
        return tuple(int(v) for v in padding)
    raise TypeError(f"For '{who}', padding must be an int or a tuple of {2 * n} ints, got "
                    f"{padding!r}")


class _PadNd(Cell):
    """The fixed-border padding Cells: the last n axes padded by a flat padding."""
    _n, _mode = 1, "constant"

    def __init__(self, padding, value=0):
        super().__init__()
        who = type(self).__name__
        self.padding = _padding(who, padding, self._n)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"For '{who}', value must be a number, got {value!r}")
        if self._mode == "reflect" and min(self.padding) < 0:
            raise ValueError(f"For '{who}', padding must be >= 0, got {padding!r}")
        self.value = value

    def construct(self, x):
        who, rank, n = type(self).__name__, len(x.shape), self._n
        if self._mode == "replicate" and rank not in (n + 1, n + 2):
            # MindSpore pads the edge modes with PadV3, which needs (C, *) or (N, C, *)
            raise ValueError(f"For '{who}', the input must have rank {n + 1} or {n + 2}, got "
                             f"shape {tuple(x.shape)}")
        if rank < n:
            raise ValueError(f"For '{who}', the input must have rank >= {n}, got shape "
                             f"{tuple(x.shape)}")
        return _rs.pad_nd(x, self.padding, self._mode, self.value)


class ZeroPad2d(_PadNd):
    """`nn.ZeroPad2d(padding)`: the last two axes padded with zeros; padding an int or
    (left, right, top, bottom); negative values crop."""
    _n = 2

    def __init__(self, padding):
        super().__init__(padding, 0)


def _constant_pad(name, n):
    def __init__(self, padding, value):
        _PadNd.__init__(self, padding, value)
    doc = (f"`nn.{name}(padding, value)`: the last {n} axes padded with value; padding an int or "
           f"a tuple of {2 * n} ints, the last axis first; negative values crop.")
    return type(name, (_PadNd,), {"_n": n, "__init__": __init__, "__doc__": doc})


def _border_pad(name, n, mode, what):
    def __init__(self, padding):
        _PadNd.__init__(self, padding, 0)
    doc = (f"`nn.{name}(padding)`: the last {n} axes padded by {what}; padding an int or a "
           f"tuple of {2 * n} ints, the last axis first (negative values crop, but for "
           f"ReflectionPad).")
    return type(name, (_PadNd,), {"_n": n, "_mode": mode, "__init__": __init__, "__doc__": doc})


ConstantPad1d = _constant_pad("ConstantPad1d", 1)
ConstantPad2d = _constant_pad("ConstantPad2d", 2)
ConstantPad3d = _constant_pad("ConstantPad3d", 3)
ReflectionPad1d = _border_pad("ReflectionPad1d", 1, "reflect", "mirroring without the edge")
ReflectionPad2d = _border_pad("ReflectionPad2d", 2, "reflect", "mirroring without the edge")
ReflectionPad3d = _border_pad("ReflectionPad3d", 3, "reflect", "mirroring without the edge")
ReplicationPad1d = _border_pad("ReplicationPad1d", 1, "replicate", "repeating the edge")
ReplicationPad2d = _border_pad("ReplicationPad2d", 2, "replicate", "repeating the edge")
ReplicationPad3d = _border_pad("ReplicationPad3d", 3, "replicate", "repeating the edge")
for _cls in (ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
             ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d):
    _cls.__module__ = __name__


class Upsample(Cell):
    """`nn.Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None)`: ops.interpolate with these arguments."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        from ...ops.shape_sampling import interpolate
        return interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)


class Tril(Cell):
    """`nn.Tril()(x, k=0)`: the lower triangle of the last two axes (column - row <= k)."""

    def construct(self, x, k=0):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"For 'Tril', k must be an int, got {k!r}")
        return _nd.tril(x, int(k))


class Triu(Cell):
    """`nn.Triu()(x, k=0)`: the upper triangle of the last two axes (column - row >= k)."""

    def construct(self, x, k=0):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"For 'Triu', k must be an int, got {k!r}")
        return _nd.triu(x, int(k))


class Norm(Cell):
    """`nn.Norm(axis=(), keep_dims=False)`: sqrt(sum(x ** 2)) over axis (an int or a tuple;
    () is every axis); an integer input gives float32."""

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        if _is_int(axis):
            axis = (int(axis),)
        if not isinstance(axis, tuple) or not all(_is_int(a) for a in axis):
            raise TypeError(f"For 'Norm', axis must be an int or a tuple of ints, got {axis!r}")
        if not isinstance(keep_dims, bool):
            raise TypeError(f"For 'Norm', keep_dims must be a bool, got {keep_dims!r}")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x):
        if not x.dtype.is_float:
            x = _m.cast(x, dt.float32)
        return _m.sqrt(_r.sum(_m.square(x), self.axis, self.keep_dims))

    def extend_repr(self):
        return f"axis={self.axis}, keep_dims={self.keep_dims}"
