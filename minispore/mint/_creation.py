"""mint's tensor creation: zeros/ones/full (and their _like forms, dtype keyword-only), arange,
linspace and eye, with PyTorch's dtype rules (an int fill gives int64, a float one float32)."""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.ops import array as _A
from ..core.ops import math as _M
from ..core.tensor import Tensor

__all__ = ["zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "arange",
           "linspace", "eye"]


def _size(name, size):
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        return (int(size),)
    if isinstance(size, Tensor):
        size = tuple(int(v) for v in size.asnumpy().reshape(-1))
    if isinstance(size, (tuple, list)) and all(isinstance(v, numbers.Integral) and
                                               not isinstance(v, bool) for v in size):
        return tuple(int(v) for v in size)
    raise TypeError(f"mint.{name}: size must be an int or a tuple/list of ints, got {size!r}")


def _dtype(dtype, default):
    return default if dtype is None else _dt.to_dtype(dtype)


def zeros(size, *, dtype=None):
    """A tensor of zeros of shape size (float32 unless dtype)."""
    return _A.zeros(_size("zeros", size), _dtype(dtype, _dt.float32))


def ones(size, *, dtype=None):
    """A tensor of ones of shape size (float32 unless dtype)."""
    return _A.ones(_size("ones", size), _dtype(dtype, _dt.float32))


def _fill_dtype(fill_value):
    if isinstance(fill_value, Tensor):
        return fill_value.dtype
    if isinstance(fill_value, bool):
        return _dt.bool_
    if isinstance(fill_value, numbers.Integral):
        return _dt.int64
    return _dt.float32


def _scalar(v):
    return v.item() if isinstance(v, Tensor) else v


def full(size, fill_value, *, dtype=None):
    """A tensor of shape size filled with fill_value (int64 for an int, bool for a bool,
    float32 for a float, unless dtype)."""
    d = _dtype(dtype, _fill_dtype(fill_value))
    return _A.full(_size("full", size), _scalar(fill_value), dtype=d)


def zeros_like(input, *, dtype=None):
    """Zeros of input's shape, in input's dtype unless dtype."""
    return _A.zeros_like(input, dtype)


def ones_like(input, *, dtype=None):
    """Ones of input's shape, in input's dtype unless dtype."""
    return _A.ones_like(input, dtype)


def full_like(input, fill_value, *, dtype=None):
    """fill_value in input's shape, in input's dtype unless dtype."""
    return _A.full_like(input, _scalar(fill_value), dtype=dtype)


def arange(start=0, end=None, step=1, *, dtype=None):
    """Values from start (0 with one argument) to end, exclusive, by step: int64 when all are
    ints, float32 otherwise, unless dtype."""
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if step == 0:
        raise ValueError("mint.arange: step must not be zero")
    return _A.arange(start, end, step, dtype=dtype)


def linspace(start, end, steps, *, dtype=None):
    """steps values evenly spaced from start to end, both included (float32 unless dtype),
    computed as PyTorch does: from start in the first half, back from end in the second."""
    start, end = _scalar(start), _scalar(end)
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError(f"mint.linspace: steps must be a non-negative int, got {steps!r}")
    d = _dtype(dtype, _dt.float32)
    cd = _dt.float64 if d is _dt.float64 else _dt.float32
    if steps <= 1:
        return _A.full((int(steps),), start, dtype=d)
    step = (end - start) / (steps - 1)
    i = _A.arange(0, steps, 1, dtype=cd)
    head = _M.add(_M.mul(i, step), float(start))
    tail = _M.sub(float(end), _M.mul(_M.sub(float(steps - 1), i), step))
    out = _M.where(_M.less(i, steps // 2), head, tail)
    return out if d is cd else _M.cast(out, d)


def eye(n, m=None, dtype=None):
    """An n x m (m None: n x n) tensor with ones on the diagonal (float32 unless dtype)."""
    for name, v in (("n", n), ("m", m)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
            raise TypeError(f"mint.eye: {name} must be an int, got {v!r}")
    m = n if m is None else m
    rows = _A.reshape(_A.arange(0, n, 1, dtype=_dt.int32), (n, 1))
    cols = _A.reshape(_A.arange(0, m, 1, dtype=_dt.int32), (1, m))
    return _M.cast(_M.equal(rows, cols), _dtype(dtype, _dt.float32))
