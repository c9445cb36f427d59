"""mint's reductions with PyTorch's `dim`/`keepdim` (dim None: all axes) and return structures:
`max(input, dim)` and `min(input, dim)` give (values, indices), integer sums and products give
int64, std/var take `correction` (1 by default: the sample statistic), norm takes `p`."""
from __future__ import annotations

import builtins as _builtins

from ..core import dtype as _dt
from ..core import tensor_methods_extra as _X
from ..core.ops import array as _A
from ..core.ops import math as _M
from ..core.ops import nn as _NN
from ..core.ops import reduce as _R
from ..core.overloads import is_int, overloaded, variant
from ..core.tensor import Tensor

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
           "std", "var", "std_mean", "var_mean", "logsumexp", "norm", "count_nonzero", "nansum",
           "softmax"]


def _dims(dim):
    """None (all axes) or an int or a tuple of ints."""
    if dim is None or dim == () or dim == []:
        return None
    if isinstance(dim, list):
        return tuple(dim)
    if is_int(dim) or (isinstance(dim, tuple) and _builtins.all(is_int(d) for d in dim)):
        return dim
    raise TypeError(f"mint: dim must be None, an int or a tuple of ints, got {dim!r}")


def _wide_int(x, dtype):
    """x cast to dtype when given; an integer or bool x without dtype to int64 (PyTorch's
    sum and prod of integers)."""
    if dtype is not None:
        return _M.cast(x, _dt.to_dtype(dtype))
    if not x.dtype.is_float:
        return _M.cast(x, _dt.int64)
    return x


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over dim (None: all axes); integers and bools sum in int64 unless dtype."""
    return _R.sum(_wide_int(input, dtype), _dims(dim), bool(keepdim))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over dim with NaNs taken as 0."""
    x = input
    if x.dtype.is_float:
        x = _M.where(_M.not_equal(x, x), _M.zeros_like(x), x)
    return sum(x, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean over dim (None: all axes), in dtype if given. An integer input without dtype
    gives its own dtype, the quotient rounded towards zero (MindSpore's; PyTorch refuses
    integers); a bool input is refused."""
    x = input if dtype is None else _M.cast(input, _dt.to_dtype(dtype))
    if x.dtype.is_float:
        return _R.mean(x, _dims(dim), bool(keepdim))
    if x.dtype is _dt.bool_:
        raise TypeError("mint.mean: a bool input is not supported (MindSpore's ReduceMean "
                        "refuses bool); cast it first or pass dtype=")
    from ..core.ops.rounding import truncate_div
    d = _dims(dim)
    axes = range(x.ndim) if d is None else ((d,) if is_int(d) else d)
    n = 1
    for a in axes:
        n *= x.shape[_A.normalize_axis("mint.mean", a, x.ndim)]
    total = _R.sum(_M.cast(x, _dt.int64), d, bool(keepdim))
    return _M.cast(truncate_div(total, _A.full((), _builtins.max(n, 1), dtype=_dt.int64)),
                   x.dtype)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product over dim (None: all axes); integers and bools multiply in int64."""
    return _R.prod(_wide_int(input, dtype), _dims(dim), bool(keepdim))


def amax(input, dim=(), keepdim=False):
    """The maximum values over dim (() or None: all axes)."""
    return _R.amax(input, _dims(dim), bool(keepdim))


def amin(input, dim=(), keepdim=False):
    """The minimum values over dim (() or None: all axes)."""
    return _R.amin(input, _dims(dim), bool(keepdim))


def _axis_int(name, dim, ndim):
    if not is_int(dim):
        raise TypeError(f"mint.{name}: dim must be an int, got {dim!r}")
    return _A.normalize_axis(f"mint.{name}", dim, ndim)


def _max_all(input):
    """The largest element (a 0-d tensor)."""
    return _R.amax(input, None, False)


def _max_dim(input, dim, keepdim=False):
    """(values, indices) of the maxima along dim (indices int64: the first maximum)."""
    d = _axis_int("max", dim, input.ndim)
    return _R.amax(input, d, bool(keepdim)), _R.argmax(input, d, bool(keepdim))


def _max_other(input, other):
    """The elementwise maximum of input and the tensor other."""
    return _M.maximum(input, other)


def _min_all(input):
    """The smallest element (a 0-d tensor)."""
    return _R.amin(input, None, False)


def _min_dim(input, dim, keepdim=False):
    """(values, indices) of the minima along dim (indices int64: the first minimum)."""
    d = _axis_int("min", dim, input.ndim)
    return _R.amin(input, d, bool(keepdim)), _R.argmin(input, d, bool(keepdim))


def _min_other(input, other):
    """The elementwise minimum of input and the tensor other."""
    return _M.minimum(input, other)


def _is_tensor_other(a):
    return isinstance(a["other"], Tensor)


max = overloaded("mint", "max", variant(_max_all), variant(_max_dim, lambda a: is_int(a["dim"])),
                 variant(_max_other, _is_tensor_other))
min = overloaded("mint", "min", variant(_min_all), variant(_min_dim, lambda a: is_int(a["dim"])),
                 variant(_min_other, _is_tensor_other))


def argmax(input, dim=None, keepdim=False):
    """The int64 index of the first maximum along dim (None: of the flattened input)."""
    if dim is None:
        return _R.argmax(_A.reshape(input, (-1,)), 0, False) if not keepdim else \
            _A.reshape(_R.argmax(_A.reshape(input, (-1,)), 0, False), (1,) * input.ndim)
    return _R.argmax(input, _axis_int("argmax", dim, input.ndim), bool(keepdim))


def argmin(input, dim=None, keepdim=False):
    """The int64 index of the first minimum along dim (None: of the flattened input)."""
    if dim is None:
        r = _R.argmin(_A.reshape(input, (-1,)), 0, False)
        return _A.reshape(r, (1,) * input.ndim) if keepdim else r
    return _R.argmin(input, _axis_int("argmin", dim, input.ndim), bool(keepdim))


def _truth(x):
    return x if x.dtype is _dt.bool_ else _M.not_equal(x, 0)


def all(input, dim=None, keepdim=False):
    """Whether every element along dim (None: all axes) is nonzero (a bool tensor)."""
    return _R.amin(_truth(input), _dims(dim), bool(keepdim))


def _any_all(input):
    """Whether any element is nonzero (a 0-d bool tensor)."""
    return _R.amax(_truth(input), None, False)


def _any_dim(input, dim, keepdim=False):
    """Whether any element along dim is nonzero."""
    return _R.amax(_truth(input), _dims(dim), bool(keepdim))


any = overloaded("mint", "any", variant(_any_all), variant(_any_dim))


def _moment(name, input, dim, correction, keepdim):
    if not input.dtype.is_float:
        raise TypeError(f"mint.{name}: input must be a float tensor, got {input.dtype}")
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"mint.{name}: correction must be a number, got {correction!r}")
    return _X._variance(input, _dims(dim), correction, bool(keepdim))


def var(input, dim=None, *, correction=1, keepdim=False):
    """sum((x - mean)^2) / (N - correction) over dim (None: all axes)."""
    return _moment("var", input, dim, correction, keepdim)


def std(input, dim=None, *, correction=1, keepdim=False):
    """The square root of mint.var."""
    return _M.sqrt(_moment("std", input, dim, correction, keepdim))


def var_mean(input, dim=None, *, correction=1, keepdim=False):
    """(var, mean) over dim."""
    return var(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim)


def std_mean(input, dim=None, *, correction=1, keepdim=False):
    """(std, mean) over dim."""
    return std(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over dim, computed stably."""
    return _R.logsumexp(input, _dims(dim), bool(keepdim))


_INF = float("inf")


def _root(s, p):
    """s ** (1 / p) with PyTorch's gradient 0 where s is 0 (the root's slope is infinite
    there, times the zero slope of s would give NaN)."""
    zero = _M.equal(s, 0)
    safe = _M.where(zero, _M.add(_M.zeros_like(s), 1.0), s)
    r = _M.sqrt(safe) if p == 2 else _M.pow(safe, 1.0 / float(p))
    return _M.where(zero, _M.zeros_like(s), r)


def _vector_norm(x, p, dim, keepdim):
    if p == 2:
        return _root(_R.sum(_M.square(x), dim, keepdim), 2)
    ax = _M.abs(x)
    if p == _INF:
        return _R.amax(ax, dim, keepdim)
    if p == -_INF:
        return _R.amin(ax, dim, keepdim)
    if p == 0:
        return _R.sum(_M.cast(_M.not_equal(x, 0), x.dtype), dim, keepdim)
    if p == 1:
        return _R.sum(ax, dim, keepdim)
    return _root(_R.sum(_M.pow(ax, float(p)), dim, keepdim), p)


def norm(input, p="fro", dim=None, keepdim=False, *, dtype=None):
    """PyTorch's norm: p 'fro' is the 2-norm over dim (None: all elements, whatever the rank),
    a number p the vector p-norm over dim (None: all elements); 'nuc' is not supported.
    Integers give float32; dtype casts the input first."""
    x = input
    if dtype is not None:
        x = _M.cast(x, _dt.to_dtype(dtype))
    elif not x.dtype.is_float:
        x = _M.cast(x, _dt.float32)
    if isinstance(p, str):
        if p != "fro":
            raise NotImplementedError(f"mint.norm: p={p!r} is not supported by minispore "
                                      f"(singular values); use 'fro' or a number")
        d = _dims(dim)
        if isinstance(d, tuple) and len(d) > 2:
            raise ValueError(f"mint.norm: p='fro' takes at most 2 dims, got {dim!r}")
        p = 2
    elif isinstance(p, bool):
        p = int(p)                       # MindSpore takes a bool p as the number
    elif not isinstance(p, (int, float)):
        raise TypeError(f"mint.norm: p must be 'fro' or a number, got {p!r}")
    return _vector_norm(x, p, _dims(dim), bool(keepdim))


def count_nonzero(input, dim=None):
    """The number of nonzero elements over dim (None: all axes), int64."""
    return _R.sum(_M.cast(_M.not_equal(input, 0), _dt.int64), _dims(dim), False)


def softmax(input, dim, *, dtype=None):
    """exp(input) / sum(exp(input)) along dim, in dtype if given."""
    x = input if dtype is None else _M.cast(input, _dt.to_dtype(dtype))
    return _NN.softmax(x, dim)
