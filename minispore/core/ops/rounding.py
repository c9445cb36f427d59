"""The composite rounding forms of division and rounding that Tensor methods and
`minispore.ops` share: `div(input, other, rounding_mode=...)` and `round(input, decimals=...)`.
They compose core ops (so PyNative, graph mode and autodiff share them) and live in core so
that Tensor's methods (core/tensor_methods.py) need nothing above core; `minispore.ops`
re-exports them."""
from __future__ import annotations

import numbers

from . import math as M


def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode 'floor' rounds the quotient down, 'trunc' towards zero
    (an integer input then gives its own integer dtype, as MindSpore)."""
    if rounding_mode is None:
        return M.div(input, other)
    if rounding_mode == "floor":
        return M.floor_div(input, other)
    if rounding_mode == "trunc":
        q = M.div(input, other)
        t = M.where(M.less(q, 0), M.ceil(q), M.floor(q))
        d = getattr(input, "dtype", None)
        return t if d is None or d.is_float else M.cast(t, d)
    raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got "
                     f"{rounding_mode!r}")


def round(input, *, decimals=0):
    """Round half to even, at `decimals` digits after the point (negative: before it)."""
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    if decimals == 0 or not input.dtype.is_float:
        return M.round(input)
    scale = 10.0 ** decimals
    return M.div(M.round(M.mul(input, scale)), scale)
