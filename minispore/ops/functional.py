"""ops functions whose MindSpore 2.x signature takes more than the core op: division with
`rounding_mode`, subtraction with `alpha`, rounding at `decimals`, softplus with `beta` and
`threshold`, relu's `inplace` and gather's `batch_dims`; those whose MindSpore parameter names
differ from the core op's (floor_div(x, y), floor_mod(x, y), sqrt(x)); and argmin, whose
indices are int32 in MindSpore. Each composes core ops (so PyNative, graph mode and autodiff
share them) and refuses, by name, what minispore cannot do."""
from __future__ import annotations

import numbers

from ..core.ops import index_ops as X
from ..core.ops import math as M
from ..core.ops import reduce as R


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


divide = div


def subtract(input, other, *, alpha=1):
    """input - alpha * other."""
    return M.sub(input, other if alpha == 1 else M.mul(other, alpha))


def round(input, *, decimals=0):
    """Round half to even, at `decimals` digits after the point (negative: before it)."""
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    if decimals == 0 or not input.dtype.is_float:
        return M.round(input)
    scale = 10.0 ** decimals
    return M.div(M.round(M.mul(input, scale)), scale)


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    if beta == 1 and threshold == 20:
        bx = input
        sp = M.softplus(input)
    else:
        bx = M.mul(input, beta)
        sp = M.div(M.softplus(bx), beta)
    return M.where(M.greater(bx, threshold), input, sp)


def relu(input, inplace=False):
    """max(x, 0), +0.0 for every non-positive input."""
    if inplace:
        raise NotImplementedError("relu: inplace=True is not supported by minispore (tensors "
                                  "are values); use y = ops.relu(x)")
    return M.relu(input)


def gather(input_params, input_indices, axis=0, batch_dims=0):
    """input_params indexed by input_indices along axis."""
    if batch_dims != 0:
        raise NotImplementedError(f"gather: batch_dims={batch_dims!r} is not supported by "
                                  f"minispore; use batch_dims=0")
    return X.gather(input_params, input_indices, axis)


def floor_div(x, y):
    """x / y rounded down (MindSpore's ops.floor_div(x, y))."""
    return M.floor_div(x, y)


def floor_mod(x, y):
    """x - floor_div(x, y) * y, the sign of y (MindSpore's ops.floor_mod(x, y))."""
    return M.mod(x, y)


def sqrt(x):
    """The square root (MindSpore's ops.sqrt(x))."""
    return M.sqrt(x)


def argmin(input, axis=None, keepdims=False):
    """Indices of the minima along `axis` (None: of the flattened input), int32 as MindSpore
    2.10's ops.argmin and Tensor.argmin give (its argmax, and the indices of ops.min, are
    int64)."""
    from ..core import dtype as dt
    return M.cast(R.argmin(input, axis, keepdims), dt.int32)
