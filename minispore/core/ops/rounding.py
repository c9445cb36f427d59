"""The composite rounding forms of division and rounding that Tensor methods and
`minispore.ops` share: `div(input, other, rounding_mode=...)` and `round(input, decimals=...)`,
and the composite op `truncate_div` (MindSpore's TruncateDiv) that div's 'trunc' mode is.
They compose core ops (so PyNative, graph mode and autodiff share them) and live in core so
that Tensor's methods (core/tensor_methods.py) need nothing above core; `minispore.ops`
re-exports them."""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtype as dt
from ..primitive import Meta, apply, defop
from ..shape import broadcast_shapes
from . import math as M


def _quotient_dtype(x: dt.DType, y: dt.DType) -> dt.DType:
    """MindSpore's TruncateDiv: the operands' promoted dtype (two integers give an integer, an
    integer and a float the float, as div's)."""
    if x.is_float or y.is_float:
        return M.DIV.compute((x, y))[1]
    return dt.promote(x, y)


def _truncate_div(input, other):
    out = _quotient_dtype(input.dtype, other.dtype)
    if out.is_float:
        q = M.div(input, other)
        return M.where(M.less(q, 0), M.ceil(q), M.floor(q))
    # integers exactly (a float quotient loses digits past 2**24): the floor quotient, one up
    # where the division is inexact and the operands' signs differ
    x, y = M.cast(input, out), M.cast(other, out)
    inexact = M.logical_and(M.not_equal(M.mod(x, y), 0), M.not_equal(M.less(x, 0), M.less(y, 0)))
    return M.add(M.floor_div(x, y), M.cast(inexact, out))


def _truncate_div_infer(x, y):
    shape = broadcast_shapes("truncate_div", x.shape, y.shape)
    return Meta(shape, _quotient_dtype(x.dtype, y.dtype))


def _truncate_div_ref(x, y):
    metas = (Meta(np.shape(a), dt.to_dtype(np.asarray(a).dtype)) for a in (x, y))
    out = _truncate_div_infer(*metas).dtype
    with np.errstate(all="ignore"):
        if out.is_float:
            return np.trunc(M.DIV.ref(x, y)).astype(out.np)
        x, y = np.asarray(x).astype(out.np), np.asarray(y).astype(out.np)
        q = M.FLOOR_DIV.ref(x, y)
        inexact = (M.MOD.ref(x, y) != 0) & ((x < 0) != (y < 0))
        return (q + inexact).astype(out.np)


# the quotient rounded towards zero; an integer dividend keeps its dtype. Differentiated
# through its parts (zero almost everywhere, as floor and ceil).
TRUNCATE_DIV = defop("truncate_div", kind="elementwise", infer=_truncate_div_infer,
                     ref=_truncate_div_ref, compute=M.DIV.compute, arity=2,
                     composite=_truncate_div)


def truncate_div(input, other):
    """input / other rounded towards zero (MindSpore's TruncateDiv; composite 'truncate_div')."""
    return apply(TRUNCATE_DIV, input, other)


def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode 'floor' rounds the quotient down, 'trunc' towards zero
    (an integer input then gives its own integer dtype, as MindSpore)."""
    if rounding_mode is None:
        return M.div(input, other)
    if rounding_mode == "floor":
        return M.floor_div(input, other)
    if rounding_mode == "trunc":
        return truncate_div(input, other)
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
