"""mint's order-based functions over the sort and scan declarations: sort/argsort/topk with
int64 indices, cumsum/cumprod (integers accumulate in int64), median and kthvalue, searchsorted,
and the data-dependent unique, unique_consecutive and bincount (their sizes come from the
values, so PyNative only), histc."""
from __future__ import annotations

import builtins as _builtins

from ..core import dtype as _dt
from ..core.ops import array as _A
from ..core.ops import index_ops as _I
from ..core.ops import math as _M
from ..core.ops import reduce as _R
from ..core.ops import sorting as _S
from ..core.overloads import is_int
from ..core.tensor import Tensor

__all__ = ["sort", "argsort", "topk", "cumsum", "cumprod", "cummax", "cummin", "median", "kthvalue",
           "searchsorted", "unique", "unique_consecutive", "bincount", "histc"]


def _i64(t):
    return _M.cast(t, _dt.int64)


def _bool_arg(name, what, v):
    if not isinstance(v, bool):
        raise TypeError(f"mint.{name}: {what} must be a bool, got {v!r}")
    return v


def sort(input, *, dim=-1, descending=False, stable=False):
    """(values, int64 indices) of input sorted along dim; the sort is always stable (ties keep
    their order), NaN last ascending and first descending."""
    _bool_arg("sort", "stable", stable)
    v, i = _S.sort(input, dim, _bool_arg("sort", "descending", descending))
    return v, _i64(i)


def argsort(input, dim=-1, descending=False, stable=False):
    """The int64 indices that sort input along dim (stable)."""
    _bool_arg("argsort", "stable", stable)
    return _i64(_S.sort(input, dim, _bool_arg("argsort", "descending", descending))[1])


def topk(input, k, dim=-1, largest=True, sorted=True):
    """(values, int64 indices) of the k largest (largest=False: smallest) elements along dim,
    in order (a tie keeps the lower index first)."""
    v, i = _S.topk(input, k, dim, largest, sorted)
    return v, _i64(i)


def _scan_input(x, dtype):
    if dtype is not None:
        return _M.cast(x, _dt.to_dtype(dtype))
    if not x.dtype.is_float:
        return _M.cast(x, _dt.int64)
    return x


def cumsum(input, dim, dtype=None):
    """The running sum along dim (integers and bools in int64 unless dtype)."""
    return _S.cumsum_scan(_scan_input(input, dtype), dim)


def cumprod(input, dim, dtype=None):
    """The running product along dim (integers and bools in int64 unless dtype)."""
    return _S.cumprod_scan(_scan_input(input, dtype), dim)


def _kth(name, input, k, dim, keepdim):
    """(values, int64 indices) of the k-th smallest (0-based k) along dim."""
    d = _A.normalize_axis(f"mint.{name}", dim, input.ndim)
    x = input if input.ndim else _A.reshape(input, (1,))
    v, i = _S.sort(x, d, False)
    sl = (slice(None),) * d + (slice(k, k + 1),)
    vk, ik = v[sl], _i64(i[sl])
    if keepdim and input.ndim:
        return vk, ik
    return _A.squeeze(vk, d), _A.squeeze(ik, d)


def median(input, dim=None, keepdim=False):
    """The lower median: with dim None, of all elements (a 0-d tensor); with dim, (values,
    int64 indices) along it."""
    if dim is None:
        if keepdim:
            raise ValueError("mint.median: keepdim needs a dim")
        flat = _A.reshape(input, (-1,))
        return _kth("median", flat, (flat.shape[0] - 1) // 2, 0, False)[0]
    d = _A.normalize_axis("mint.median", dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    return _kth("median", input, (n - 1) // 2, d, keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, int64 indices) of the k-th smallest element (k from 1) along dim."""
    if not is_int(k):
        raise TypeError(f"mint.kthvalue: k must be an int, got {k!r}")
    d = _A.normalize_axis("mint.kthvalue", dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise ValueError(f"mint.kthvalue: k must be in [1, {n}], got {k}")
    return _kth("kthvalue", input, k - 1, d, keepdim)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each of values, the index where it would go in the innermost axis of
    sorted_sequence to keep it sorted: before equal elements ('left'), or after them with
    right=True or side='right'. sorter gives the order of an unsorted sequence."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"mint.searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("mint.searchsorted: right=True and side='left' contradict")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        from ._shape import gather
        seq = gather(seq, seq.ndim - 1, _i64(sorter))
    scalar = not isinstance(values, Tensor)
    v = Tensor(values, seq.dtype) if scalar else values
    if seq.ndim == 1:
        s = _A.reshape(seq, (1,) * v.ndim + (seq.shape[0],))
    else:
        if tuple(seq.shape[:-1]) != tuple(v.shape[:-1]):
            raise ValueError(f"mint.searchsorted: the leading dims of sorted_sequence "
                             f"{tuple(seq.shape)} and values {tuple(v.shape)} must match")
        s = _A.expand_dims(seq, -2)
    below = (_M.less_equal if right else _M.less)(s, _A.expand_dims(v, -1))
    out = _R.sum(_M.cast(below, _dt.int64), -1, False)
    return _M.cast(out, _dt.int32) if out_int32 else out


def _runs(flat, sorted_first):
    """(run starts mask, order) of a 1-D tensor: order sorts it (None: kept as is); a run is
    a maximal block of equal elements."""
    order = None
    if sorted_first:
        flat, order = _S.sort(flat, 0, False)
    n = flat.shape[0]
    head = _A.full((1,), True, dtype=_dt.bool_)
    starts = _A.concat([head, _M.not_equal(flat[1:], flat[:n - 1])], 0) if n > 1 else \
        _A.full((n,), True, dtype=_dt.bool_)
    return flat, starts, order


def _unique_parts(name, input, sort_first, return_inverse, return_counts, dim):
    if dim is not None:
        raise NotImplementedError(f"mint.{name}: dim= (unique slices) is not supported by "
                                  f"minispore; pass dim=None (unique elements)")
    flat = _A.reshape(input, (-1,))
    n = flat.shape[0]
    if n == 0:
        out = [flat]
        if return_inverse:
            out.append(_A.zeros(tuple(input.shape), _dt.int64))
        if return_counts:
            out.append(_A.zeros((0,), _dt.int64))
        return out[0] if len(out) == 1 else tuple(out)
    vals, starts, order = _runs(flat, sort_first)
    out = [vals[starts]]
    if return_inverse:
        run = _M.sub(_S.cumsum_scan(_M.cast(starts, _dt.int64), 0), 1)
        if order is not None:
            inv = _I.apply(_I.SCATTER_UPDATE, _A.zeros((n,), _dt.int64), _i64(order), run,
                           axis=0)
        else:
            inv = run
        out.append(_A.reshape(inv, tuple(input.shape)))
    if return_counts:
        pos = _A.arange(0, n, 1, dtype=_dt.int64)[starts]
        out.append(_M.sub(_A.concat([pos[1:], _A.full((1,), n, dtype=_dt.int64)], 0), pos))
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of input, ascending (sorted=False gives them ascending too), with
    the int64 inverse indices (input's shape) and counts when asked. PyNative only."""
    _bool_arg("unique", "sorted", sorted)
    return _unique_parts("unique", input, True, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """input with each run of equal consecutive elements kept once, with the int64 inverse
    indices and run lengths when asked. PyNative only."""
    return _unique_parts("unique_consecutive", input, False, return_inverse, return_counts, dim)


def bincount(input, weights=None, minlength=0):
    """The number of times each value 0..max(input) occurs in the 1-D non-negative int input
    (the sum of weights at them, when given), at least minlength long. PyNative only."""
    if input.ndim != 1 or not input.dtype.is_int:
        raise ValueError(f"mint.bincount: input must be a 1-D int tensor, got "
                         f"{input.dtype} of shape {tuple(input.shape)}")
    if not is_int(minlength) or minlength < 0:
        raise ValueError(f"mint.bincount: minlength must be a non-negative int, got {minlength!r}")
    n = input.shape[0]
    if n and int(_R.amin(input).item()) < 0:
        raise ValueError("mint.bincount: input must be non-negative")
    length = _builtins.max(int(_R.amax(input).item()) + 1 if n else 0, minlength)
    if weights is None:
        upd, dtype = _A.ones((n,), _dt.int64), _dt.int64
    else:
        dtype = weights.dtype if weights.dtype.is_float else _dt.float32
        upd = _M.cast(weights, dtype)
    if n == 0:
        return _A.zeros((length,), dtype)
    return _I.scatter_add(_A.zeros((length,), dtype), _i64(input), upd, 0)


def histc(input, bins=100, min=0, max=0):
    """A histogram of input in bins equal bins over [min, max] (both 0: the data's min and
    max); elements outside are left out, max itself falls in the last bin."""
    if not is_int(bins) or bins <= 0:
        raise ValueError(f"mint.histc: bins must be a positive int, got {bins!r}")
    x = _A.reshape(input if input.dtype.is_float else _M.cast(input, _dt.float32), (-1,))
    lo, hi = float(min), float(max)
    if lo > hi:
        raise ValueError(f"mint.histc: max {max} must not be below min {min}")
    if lo == hi:
        if x.shape[0]:
            lo_t, hi_t = _R.amin(x), _R.amax(x)
        else:
            lo_t, hi_t = Tensor(lo, x.dtype), Tensor(hi, x.dtype)
        same = _M.equal(lo_t, hi_t)
        lo_t = _M.where(same, _M.sub(lo_t, 1.0), lo_t)
        hi_t = _M.where(same, _M.add(hi_t, 1.0), hi_t)
    else:
        lo_t, hi_t = Tensor(lo, x.dtype), Tensor(hi, x.dtype)
    inside = _M.logical_and(_M.greater_equal(x, lo_t), _M.less_equal(x, hi_t))
    pos = _M.floor(_M.div(_M.mul(_M.sub(x, lo_t), float(bins)), _M.sub(hi_t, lo_t)))
    idx = _M.cast(_M.clamp(pos, 0.0, float(bins - 1)), _dt.int64)
    upd = _M.cast(inside, x.dtype)
    return _I.scatter_add(_A.zeros((bins,), x.dtype), idx, upd, 0)


def _cumulative_extreme(name, input, dim, better):
    """(values, int64 indices) of the running maximum/minimum along dim by doubling: after
    step s each position holds the best of the 2^s elements ending at it (a tie goes to the
    later index, as PyTorch's)."""
    d = _A.normalize_axis(f"mint.{name}", dim, input.ndim)
    x = input if input.ndim else _A.reshape(input, (1,))
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    idx = _A.broadcast_to(_A.reshape(_A.arange(0, n, 1, dtype=_dt.int64), tuple(shape)),
                          tuple(x.shape))
    v, i = x, idx
    lo = (slice(None),) * d
    step = 1
    while step < n:
        pv = _A.concat([v[lo + (slice(0, step),)], v[lo + (slice(0, n - step),)]], d)
        pi = _A.concat([i[lo + (slice(0, step),)], i[lo + (slice(0, n - step),)]], d)
        take = better(pv, v)                     # the earlier block's best wins strictly
        if x.dtype.is_float:
            take = _M.logical_or(take, _M.logical_and(_M.not_equal(pv, pv),
                                                      _M.equal(v, v)))   # NaN propagates
        v, i = _M.where(take, pv, v), _M.where(take, pi, i)
        step *= 2
    if not input.ndim:
        return _A.reshape(v, ()), _A.reshape(i, ())
    return v, i


def cummax(input, dim):
    """(values, int64 indices) of the running maximum along dim."""
    return _cumulative_extreme("cummax", input, dim, _M.greater)


def cummin(input, dim):
    """(values, int64 indices) of the running minimum along dim."""
    return _cumulative_extreme("cummin", input, dim, _M.less)
