"""The adaptive pooling composites: adaptive_avg_pool_nd / adaptive_max_pool_nd(x;
output_size) over x's trailing len(output_size) axes, with MindSpore's (and PyTorch's) bins
[floor(i * L / out), ceil((i + 1) * L / out)) on each axis. A bin is a product of per-axis bins,
so the axes reduce one after the other: the mean exactly, the maximum the last axis first, so
the first maximum of a bin is its first in row-major order (where the gradient goes), whose
flat index h * W + w (int64) adaptive_max_pool_nd_argmax gives. Written with slicing,
reshape, concat, mean, argmax/one_hot and where: no kernel anywhere."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..primitive import Meta, apply, defop
from .declare import ref_array_dtype
from .pool_nd import _check_x, _first_max_mask

__all__ = ["adaptive_avg_pool_nd", "adaptive_max_pool_nd", "adaptive_max_pool_nd_argmax",
           "resolve_output_size"]


def _bins(n, out):
    return [(i * n // out, -(-(i + 1) * n // out)) for i in range(out)]


def _adaptive_infer(who):
    def infer(x, output_size):
        n = len(output_size)
        _check_x(who, x, n, ints="max" in who)
        if any(not isinstance(o, int) or o < 1 for o in output_size):
            raise ValueError(f"{who}: output_size entries must be positive ints, got "
                             f"{tuple(output_size)}")
        lead = len(x.shape) - n
        return Meta(tuple(x.shape[:lead]) + tuple(output_size),
                    dt.int64 if who.endswith("argmax") else x.dtype)
    return infer


def _bin_reduce(x, axis, out, reduce):
    """reduce(t, axis, keepdims) over each adaptive bin of `axis` (equal bins: one reshape)."""
    from .array import concat, reshape
    n = x.shape[axis]
    if out == n:
        return x
    if n % out == 0:
        shape = tuple(x.shape)
        return reduce(reshape(x, shape[:axis] + (out, n // out) + shape[axis + 1:]), axis + 1,
                      False)
    parts = [reduce(x[(slice(None),) * axis + (slice(lo, hi),)], axis, True)
             for lo, hi in _bins(n, out)]
    return concat(parts, axis)


def _adaptive_avg_pool_nd(x, output_size):
    from .reduce import mean
    y = x
    lead = len(x.shape) - len(output_size)
    for i, o in enumerate(output_size):
        y = _bin_reduce(y, lead + i, o, lambda t, a, k: mean(t, a, k))
    return y


def _adaptive_max_parts(x, output_size, with_index):
    """(maxima over the adaptive bins, their flat indices or None): each bin's first maximum,
    the index table carried along the same selections."""
    from ..tensor import Tensor
    from .array import reshape, zeros_like
    from .math import where
    from .reduce import sum as _sum
    n = len(output_size)
    lead = len(x.shape) - n
    carry = None
    if with_index:
        dims = tuple(x.shape[lead:])
        flat = np.arange(int(np.prod(dims)), dtype=np.int64).reshape((1,) * lead + dims)
        carry = zeros_like(x, dt.int64) + Tensor(flat)

    def pick(t, axis, keep, c):
        mask = _first_max_mask(t, axis)
        v = _sum(where(mask, t, zeros_like(t)), axis, keep)
        if c is None:
            return v, None
        return v, _sum(where(mask, c, zeros_like(c)), axis, keep)

    y = x
    for i in reversed(range(n)):
        axis, o = lead + i, output_size[i]
        size = y.shape[axis]
        if o == size:
            continue
        if size % o == 0:
            shape = tuple(y.shape)
            split = shape[:axis] + (o, size // o) + shape[axis + 1:]
            y, carry = pick(reshape(y, split), axis + 1, False,
                            None if carry is None else reshape(carry, split))
            continue
        vals, idx = [], []
        for lo, hi in _bins(size, o):
            key = (slice(None),) * axis + (slice(lo, hi),)
            v, c = pick(y[key], axis, True, None if carry is None else carry[key])
            vals.append(v)
            idx.append(c)
        from .array import concat
        y = concat(vals, axis)
        carry = None if carry is None else concat(idx, axis)
    return y, carry


def _adaptive_np(x, output_size, kind):
    n = len(output_size)
    sizes = x.shape[x.ndim - n:]
    lead = x.shape[:x.ndim - n]
    res = np.zeros(lead + tuple(output_size), x.dtype)
    idx = np.zeros(res.shape, np.int64)
    for o in np.ndindex(*output_size):
        sl = tuple(slice(a, b) for a, b in
                   (_bins(s, oo)[i] for i, s, oo in zip(o, sizes, output_size)))
        blk = x[(Ellipsis,) + sl]
        flat = blk.reshape(lead + (-1,))
        if kind == "avg":
            res[(Ellipsis,) + o] = flat.mean(-1) if flat.shape[-1] else np.nan
            continue
        a = flat.argmax(-1)
        res[(Ellipsis,) + o] = flat.max(-1)
        loc = np.unravel_index(a, blk.shape[x.ndim - n:])
        idx[(Ellipsis,) + o] = np.ravel_multi_index(
            [loc[j] + sl[j].start for j in range(n)], sizes)
    return res, idx


def _adaptive_avg_ref(x, output_size):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    return _adaptive_np(x.astype(c), tuple(output_size), "avg")[0].astype(x.dtype)


def _adaptive_max_ref(x, output_size):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    return _adaptive_np(x.astype(c), tuple(output_size), "max")[0].astype(x.dtype)


def _adaptive_argmax_ref(x, output_size):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    return _adaptive_np(x.astype(c), tuple(output_size), "max")[1]


ADAPTIVE_AVG_POOL_ND = defop("adaptive_avg_pool_nd", infer=_adaptive_infer(
    "adaptive_avg_pool_nd"), ref=_adaptive_avg_ref, attrs={"output_size": (1,)}, arity=1,
    composite=_adaptive_avg_pool_nd)
ADAPTIVE_MAX_POOL_ND = defop("adaptive_max_pool_nd", infer=_adaptive_infer(
    "adaptive_max_pool_nd"), ref=_adaptive_max_ref, attrs={"output_size": (1,)}, arity=1,
    composite=lambda x, output_size: _adaptive_max_parts(x, output_size, False)[0])
ADAPTIVE_MAX_POOL_ND_ARGMAX = defop("adaptive_max_pool_nd_argmax", infer=_adaptive_infer(
    "adaptive_max_pool_nd_argmax"), ref=_adaptive_argmax_ref, attrs={"output_size": (1,)},
    arity=1, differentiable=False,
    composite=lambda x, output_size: _adaptive_max_parts(x, output_size, True)[1])


def resolve_output_size(who, output_size, x_shape, n):
    """MindSpore's output_size (an int, or a tuple of n ints / None = keep that axis) as n ints
    for an input of shape x_shape (the pooled axes last)."""
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        sizes = (int(output_size),) * n
    elif isinstance(output_size, (tuple, list)) and len(output_size) == n:
        sizes = tuple(output_size)
    else:
        raise TypeError(f"{who}: output_size must be an int or a tuple of {n} ints (None keeps "
                        f"an axis), got {output_size!r}")
    if len(x_shape) < n:
        raise ValueError(f"{who}: 'input' of shape {tuple(x_shape)} has fewer than {n} dims")
    out = []
    for o, size in zip(sizes, tuple(x_shape)[len(x_shape) - n:]):
        if o is None or (isinstance(o, (int, np.integer)) and not isinstance(o, bool)
                         and o == -1):
            out.append(int(size))
        elif isinstance(o, (int, np.integer)) and not isinstance(o, bool) and o > 0:
            out.append(int(o))
        else:
            raise ValueError(f"{who}: output_size entries must be positive ints or None, got "
                             f"{output_size!r}")
    return tuple(out)


def adaptive_avg_pool_nd(x, output_size):
    return apply(ADAPTIVE_AVG_POOL_ND, x, output_size=tuple(output_size))


def adaptive_max_pool_nd(x, output_size, return_indices=False):
    y = apply(ADAPTIVE_MAX_POOL_ND, x, output_size=tuple(output_size))
    if not return_indices:
        return y
    return y, apply(ADAPTIVE_MAX_POOL_ND_ARGMAX, x, output_size=tuple(output_size))


def adaptive_max_pool_nd_argmax(x, output_size):
    return apply(ADAPTIVE_MAX_POOL_ND_ARGMAX, x, output_size=tuple(output_size))
