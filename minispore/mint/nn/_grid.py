"""mint.nn.functional.grid_sample (PyTorch's rules) over gather: the 4-D input sampled at the
grid's normalized (x, y) locations, 'bilinear' or 'nearest', padding 'zeros', 'border' or
'reflection'. Gradients reach the input (through gather) and, for 'bilinear', the grid."""
from __future__ import annotations

import numpy as np

from ...core import dtype as _dt
from ...core.ops import array as _a
from ...core.ops import index_ops as _ix
from ...core.ops import math as _m
from ...core.tensor import Tensor


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1.0) * (0.5 * (size - 1))
    return ((coord + 1.0) * size - 1.0) * 0.5


def _reflect(coord, lo2, hi2):
    """PyTorch's reflect_coordinates over [lo2 / 2, hi2 / 2]."""
    if lo2 == hi2:
        return coord * 0.0
    lo, span = lo2 / 2.0, (hi2 - lo2) / 2.0
    c = _m.abs(coord - lo)
    flips = _m.floor(c / span)
    extra = c - flips * span
    even = _m.equal(_m.floor(flips * 0.5) * 2.0, flips)
    return _m.where(even, extra + lo, span - extra + lo)


def _source(coord, size, padding_mode, align_corners):
    c = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        c = _m.clamp(c, 0.0, float(size - 1))
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = _m.clamp(c, 0.0, float(size - 1))
    return c


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W), grid (N, H_out, W_out, 2) of (x, y) in [-1, 1] -> (N, C, H_out,
    W_out); align_corners=None is False."""
    who = "grid_sample"
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"{who}: mode={mode!r} is not supported by minispore; use "
                                  f"'bilinear' or 'nearest'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"{who}: padding_mode must be 'zeros', 'border' or 'reflection', got "
                         f"{padding_mode!r}")
    if len(input.shape) != 4 or len(grid.shape) != 4 or grid.shape[-1] != 2 \
            or grid.shape[0] != input.shape[0]:
        raise ValueError(f"{who}: needs a 4-D input (N, C, H, W) and a grid (N, H_out, W_out, "
                         f"2), got {tuple(input.shape)} and {tuple(grid.shape)}")
    ac = bool(align_corners)
    n, c, h, w = input.shape
    _, ho, wo, _ = grid.shape
    gx, gy = _a.split(_m.cast(grid, input.dtype), 1, 3)
    ix = _source(_a.reshape(gx, (n, ho * wo)), w, padding_mode, ac)
    iy = _source(_a.reshape(gy, (n, ho * wo)), h, padding_mode, ac)
    table = _a.reshape(_a.transpose(input, (0, 2, 3, 1)), (n * h * w, c))
    base = Tensor((np.arange(n, dtype=np.int32) * (h * w)).reshape(n, 1))

    def tap(xi, yi):
        """input at integer (xi, yi) (float tensors), 0 outside: (N, HoWo, C)."""
        inside = _m.logical_and(_m.logical_and(xi >= 0.0, xi <= float(w - 1)),
                                _m.logical_and(yi >= 0.0, yi <= float(h - 1)))
        xs = _m.cast(_m.clamp(xi, 0.0, float(w - 1)), _dt.int32)
        ys = _m.cast(_m.clamp(yi, 0.0, float(h - 1)), _dt.int32)
        flat = _a.reshape(ys * w + xs + base, (-1,))
        vals = _a.reshape(_ix.gather(table, flat, 0), (n, ho * wo, c))
        return _m.where(_a.expand_dims(inside, -1), vals, _m.zeros_like(vals))

    if mode == "nearest":
        out = tap(_m.round(ix), _m.round(iy))
    else:
        x0, y0 = _m.floor(ix), _m.floor(iy)
        x1, y1 = x0 + 1.0, y0 + 1.0
        wx1, wy1 = _a.expand_dims(ix - x0, -1), _a.expand_dims(iy - y0, -1)
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1
        out = (tap(x0, y0) * (wx0 * wy0) + tap(x1, y0) * (wx1 * wy0)
               + tap(x0, y1) * (wx0 * wy1) + tap(x1, y1) * (wx1 * wy1))
    return _a.transpose(_a.reshape(out, (n, ho, wo, c)), (0, 3, 1, 2))
