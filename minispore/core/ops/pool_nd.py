"""Pooling composites beyond the 2-D pools: window pools over the trailing n axes (1-D and 3-D
pools, with dilation, ceil_mode and indices). The adaptive pools (core/ops/adaptive_pool.py)
and the group normalisation composite (core/ops/group_norm.py; instance normalisation is
group normalisation with one channel per group) are re-exported here.

Both ops are composites, so no backend needs a kernel for them. Undilated windows whose pads
are smaller than the kernel run as the 2-D pool primitives axis by axis (`_by_2d_pools`: a box
window's maximum and mean separate); the others stack the window taps (strided slices of the
padded input) and reduce them:

- max_pool_nd(x; kernel_size, stride, dilation, pads): the maximum of each window; `pads` is
  (before, after) per pooled axis, filled with -inf (callers turn pad_mode / padding /
  ceil_mode into it: `window_geometry`). The gradient goes to the FIRST maximum of each window
  in row-major order (a one-hot mask over the taps), as MindSpore's MaxPool3DWithArgmax's.
  max_pool_nd_argmax gives the flat index of that maximum in the unpadded pooled volume
  (int64, MindSpore's argmax layout).
- avg_pool_nd(x; kernel_size, stride, pads, counted, count_include_pad, divisor_override): the
  zero-padded window sum divided by divisor_override, else by the window's element count: with
  count_include_pad the elements inside [-counted_before, size + counted_after) (the explicit
  padding counts, the extra ceil_mode tail does not), without it the real elements only.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from .declare import ref_array_dtype

__all__ = ["window_geometry", "max_pool_nd", "max_pool_nd_argmax", "avg_pool_nd",
           "adaptive_avg_pool_nd", "adaptive_max_pool_nd", "adaptive_max_pool_nd_argmax",
           "max_unpool_nd", "resolve_output_size", "group_norm"]


# ---------------------------------------------------------------- geometry -----------------------
def window_geometry(who, sizes, kernel_size, stride, dilation, pad_mode, padding, ceil_mode):
    """(pads, counted) of a window pool over axes of `sizes`: `pads` the (before, after) zero /
    -inf padding per axis, `counted` the part of it count_include_pad counts. pad_mode 'valid'
    pads nothing (with ceil_mode: 'pad' with zero padding, as MindSpore's AvgPool3D), 'same'
    gives ceil(size / stride) outputs with the odd padding element after, 'pad' pads
    `padding` ((before, after) per axis) and with ceil_mode adds what the last window (which
    must start inside the input or its before-padding) needs."""
    pads, counted = [], []
    for i, (n, k, s, d) in enumerate(zip(sizes, kernel_size, stride, dilation)):
        ext = d * (k - 1) + 1
        if pad_mode == "valid" and not ceil_mode:
            lo = hi = chi = 0
        elif pad_mode == "same":
            o = -(-n // s)
            need = max(0, (o - 1) * s + ext - n)
            lo, hi = need // 2, need - need // 2
            chi = hi
        else:                               # 'pad' ('valid' with ceil_mode: zero padding)
            lo, chi = (0, 0) if pad_mode == "valid" else (padding[2 * i], padding[2 * i + 1])
            span = n + lo + chi - ext
            o = (span + (s - 1 if ceil_mode else 0)) // s + 1
            if ceil_mode and (o - 1) * s >= n + lo:
                o -= 1
            hi = max((o - 1) * s + ext - n - lo, chi)
        if n + lo + hi < ext:
            raise ShapeError(f"{who}: the window {tuple(kernel_size)} (dilation "
                             f"{tuple(dilation)}) is larger than the padded input of spatial "
                             f"shape {tuple(sizes)}; use a smaller kernel, more padding or "
                             f"pad_mode='same'")
        pads += [lo, hi]
        counted += [lo, chi]
    return tuple(pads), tuple(counted)


def _outs(sizes, kernel_size, stride, dilation, pads):
    return tuple((n + pads[2 * i] + pads[2 * i + 1] - dilation[i] * (kernel_size[i] - 1) - 1)
                 // stride[i] + 1 for i, n in enumerate(sizes))


def _check_x(who, x, n, ints=False):
    """x has the n pooled axes; a float dtype (the max pools also take integers, as
    MindSpore's MaxPool3DWithArgmax and AdaptiveMaxPool3D do)."""
    if len(x.shape) < n:
        raise ShapeError(f"{who}: 'input' must have at least {n} dims (the pooled axes last), got "
                         f"shape {tuple(x.shape)}")
    if not (x.dtype.is_float or (ints and x.dtype.is_int)):
        raise DTypeError(f"{who}: 'input' has dtype {x.dtype}; use a float dtype "
                         f"(x.astype(ms.float32))")


def lowest(d):
    """The max pools' padding value: -inf, or an integer dtype's minimum."""
    return float("-inf") if d.is_float else int(np.iinfo(d.np).min)


def _window_infer(who):
    def infer(x, kernel_size, stride, pads, dilation=None, **_):
        n = len(kernel_size)
        _check_x(who, x, n, ints=who.startswith("max"))
        dilation = dilation or (1,) * n
        if not (len(stride) == len(dilation) == n and len(pads) == 2 * n):
            raise ValueError(f"{who}: kernel_size {kernel_size}, stride {stride}, dilation "
                             f"{dilation} and pads {pads} must describe the same number of axes")
        sizes = tuple(x.shape[len(x.shape) - n:])
        outs = _outs(sizes, kernel_size, stride, dilation, pads)
        if min(outs, default=1) < 1:
            raise ShapeError(f"{who}: the window {tuple(kernel_size)} (dilation "
                             f"{tuple(dilation)}) is larger than the padded input of spatial "
                             f"shape {sizes} (pads {tuple(pads)})")
        return Meta(tuple(x.shape[:len(x.shape) - n]) + outs,
                    dt.int64 if who.endswith("argmax") else x.dtype)
    return infer


# ---------------------------------------------------------------- window pools -------------------
def _pad_trailing(x, n, pads, fill):
    """x padded with `fill` before/after each of its last n axes."""
    from .array import concat, full
    y = x
    nd = len(x.shape)
    for i in range(n):
        axis = nd - n + i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if not lo and not hi:
            continue
        shape = tuple(y.shape)
        parts = []
        if lo:
            parts.append(full(shape[:axis] + (lo,) + shape[axis + 1:], fill, dtype=x.dtype))
        parts.append(y)
        if hi:
            parts.append(full(shape[:axis] + (hi,) + shape[axis + 1:], fill, dtype=x.dtype))
        y = concat(parts, axis)
    return y


def _taps(x, kernel_size, stride, dilation, pads, fill):
    """The window taps of x's last n axes stacked on a new axis before them:
    shape x.shape[:-n] + (prod(kernel_size),) + outs."""
    from .array import stack
    n = len(kernel_size)
    lead = len(x.shape) - n
    outs = _outs(tuple(x.shape[lead:]), kernel_size, stride, dilation, pads)
    xp = _pad_trailing(x, n, pads, fill)
    taps = []
    for t in np.ndindex(*kernel_size):
        key = (slice(None),) * lead + tuple(
            slice(ti * d, ti * d + s * (o - 1) + 1, s)
            for ti, d, s, o in zip(t, dilation, stride, outs))
        taps.append(xp[key])
    return stack(taps, lead), lead, outs


def _first_max_mask(taps, axis):
    from .array import one_hot
    from .math import equal
    from .reduce import argmax
    return equal(one_hot(argmax(taps, axis), taps.shape[axis], 1, 0, axis), 1)


def _separable(kernel_size, dilation, pads):
    """Whether a pool can run as the 2-D pool kernels: no dilation, each pad smaller than its
    kernel (the 2-D pools' rule)."""
    return all(d == 1 for d in dilation) and all(
        pads[2 * i] < k and pads[2 * i + 1] < k for i, k in enumerate(kernel_size))


def _by_2d_pools(x, kernel_size, stride, pads, pool2d):
    """A pool of x's last n (1 to 3) axes as 2-D pools `pool2d(t, k, s, (top, bottom, left,
    right))` of (P, C', H', W') views, P the leading axes' size: a 1-D pool is the 2-D pool of
    (P, 1, 1, L), a 3-D pool the 2-D pool of (P, D, H, W) followed by the (kd, 1) pool of
    (P, 1, D, Ho * Wo). A box window's maximum (and a product-separable mean) is the same
    taken axis by axis; the first maximum of the (d, h, w) window in row-major order is
    where the two stages' gradients route (each routes to its window's first maximum)."""
    from .array import reshape
    n = len(kernel_size)
    shape = tuple(x.shape)
    lead = shape[:len(shape) - n]
    P = int(np.prod(lead, dtype=np.int64))
    if n == 1:
        y = pool2d(reshape(x, (P, 1, 1, shape[-1])), (1, kernel_size[0]), (1, stride[0]),
                   (0, 0) + tuple(pads))
        return reshape(y, lead + (y.shape[-1],))
    if n == 2:
        y = pool2d(reshape(x, (P, 1) + shape[-2:]), kernel_size, stride, tuple(pads))
        return reshape(y, lead + tuple(y.shape[-2:]))
    D = shape[-3]
    y = pool2d(reshape(x, (P, D) + shape[-2:]), kernel_size[1:], stride[1:], tuple(pads[2:]))
    ho, wo = y.shape[-2:]
    y = pool2d(reshape(y, (P, 1, D, ho * wo)), (kernel_size[0], 1), (stride[0], 1),
               tuple(pads[:2]) + (0, 0))
    return reshape(y, lead + (y.shape[-2], ho, wo))


def _max_pool_nd(x, kernel_size, stride, dilation, pads):
    from .array import zeros_like
    from .conv import MAX_POOL2D
    from .math import where
    from .reduce import sum as _sum
    if x.dtype.is_float and len(kernel_size) <= 3 and _separable(kernel_size, dilation, pads):
        return _by_2d_pools(x, kernel_size, stride, pads, lambda t, k, s, p: apply(
            MAX_POOL2D, t, kernel_size=tuple(k), stride=tuple(s), pad_mode="pad", pad=p))
    taps, lead, _ = _taps(x, kernel_size, stride, dilation, pads, lowest(x.dtype))
    return _sum(where(_first_max_mask(taps, lead), taps, zeros_like(taps)), lead)


def _tap_index_table(sizes, kernel_size, stride, dilation, pads, outs):
    """(prod(kernel_size),) + outs int64: the flat index in the unpadded volume each tap reads
    (padding positions never hold a window's first maximum, so their value does not matter)."""
    n = len(sizes)
    table = np.zeros((int(np.prod(kernel_size)),) + outs, np.int64)
    for j, t in enumerate(np.ndindex(*kernel_size)):
        coords = np.meshgrid(*[np.arange(o) * s - pads[2 * i] + t[i] * d
                               for i, (o, s, d) in enumerate(zip(outs, stride, dilation))],
                             indexing="ij")
        flat = np.zeros(outs, np.int64)
        for i in range(n):
            flat = flat * sizes[i] + np.clip(coords[i], 0, sizes[i] - 1)
        table[j] = flat
    return table


def _max_pool_nd_argmax(x, kernel_size, stride, dilation, pads):
    from ..tensor import Tensor
    from .array import reshape, zeros_like
    from .math import where
    from .reduce import sum as _sum
    taps, lead, outs = _taps(x, kernel_size, stride, dilation, pads, lowest(x.dtype))
    sizes = tuple(x.shape[lead:])
    table = _tap_index_table(sizes, kernel_size, stride, dilation, pads, outs)
    t = reshape(Tensor(table), (1,) * lead + table.shape)
    mask = _first_max_mask(taps, lead)
    return _sum(where(mask, t, zeros_like(mask, dt.int64)), lead)


def _np_taps(x, kernel_size, stride, dilation, pads, fill):
    n = len(kernel_size)
    lead = x.ndim - n
    outs = _outs(x.shape[lead:], kernel_size, stride, dilation, pads)
    xp = np.pad(x, [(0, 0)] * lead + [(pads[2 * i], pads[2 * i + 1]) for i in range(n)],
                constant_values=fill)
    taps = []
    for t in np.ndindex(*kernel_size):
        key = (Ellipsis,) + tuple(slice(ti * d, ti * d + s * (o - 1) + 1, s)
                                  for ti, d, s, o in zip(t, dilation, stride, outs))
        taps.append(xp[key])
    return np.stack(taps, lead), lead, outs


def _max_pool_nd_ref(x, kernel_size, stride, dilation, pads):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    taps, lead, _ = _np_taps(x.astype(c), kernel_size, stride, dilation, pads,
                             lowest(dt.to_dtype(x.dtype)))
    return taps.max(axis=lead).astype(x.dtype)


def _max_pool_nd_argmax_ref(x, kernel_size, stride, dilation, pads):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    taps, lead, outs = _np_taps(x.astype(c), kernel_size, stride, dilation, pads,
                                lowest(dt.to_dtype(x.dtype)))
    arg = np.expand_dims(taps.argmax(axis=lead), lead)
    table = _tap_index_table(x.shape[lead:], kernel_size, stride, dilation, pads, outs)
    table = np.broadcast_to(table.reshape((1,) * lead + table.shape), taps.shape)
    return np.take_along_axis(table, arg, lead).squeeze(lead).astype(np.int64)


MAX_ATTRS = {"kernel_size": (1,), "stride": (1,), "dilation": (1,), "pads": (0, 0)}

MAX_POOL_ND = defop("max_pool_nd", infer=_window_infer("max_pool_nd"), ref=_max_pool_nd_ref,
                    attrs=MAX_ATTRS, arity=1, composite=_max_pool_nd)
MAX_POOL_ND_ARGMAX = defop("max_pool_nd_argmax", infer=_window_infer("max_pool_nd_argmax"),
                           ref=_max_pool_nd_argmax_ref, attrs=MAX_ATTRS, arity=1,
                           differentiable=False, composite=_max_pool_nd_argmax)


def _avg_divisor(sizes, kernel_size, stride, pads, counted, count_include_pad, outs):
    """outs-shaped float64 element counts of the windows (see the module docstring)."""
    div = np.ones(outs)
    for i, (n, k, s, o) in enumerate(zip(sizes, kernel_size, stride, outs)):
        start = np.arange(o) * s - pads[2 * i]
        lo, hi = ((-counted[2 * i], n + counted[2 * i + 1]) if count_include_pad else (0, n))
        # a window over padding only (MindSpore allows before + after pads up to the kernel)
        # sums to 0: dividing it by 1 gives MindSpore's 0
        cnt = np.maximum(np.minimum(start + k, hi) - np.maximum(start, lo), 1)
        shape = [1] * len(outs)
        shape[i] = o
        div = div * cnt.reshape(shape)
    return div


def _avg_pool_nd(x, kernel_size, stride, pads, counted, count_include_pad, divisor_override):
    from ..tensor import Tensor
    from .conv import AVG_POOL2D
    from .math import div, mul
    from .reduce import sum as _sum
    n = len(kernel_size)
    # the 2-D average pool divides by the whole window (count_include_pad) or its real
    # elements: this op's divisor when every pad counts (or none does); a divisor_override
    # rescales the whole-window mean
    if n <= 3 and _separable(kernel_size, (1,) * n, pads) and (
            divisor_override or not count_include_pad or tuple(pads) == tuple(counted)):
        whole = bool(count_include_pad or divisor_override)
        y = _by_2d_pools(x, kernel_size, stride, pads, lambda t, k, s, p: apply(
            AVG_POOL2D, t, kernel_size=tuple(k), stride=tuple(s), pad_mode="pad", pad=p,
            count_include_pad=whole))
        if divisor_override:
            return mul(y, float(np.prod(kernel_size)) / float(divisor_override))
        return y
    taps, lead, outs = _taps(x, kernel_size, stride, (1,) * n, pads, 0.0)
    total = _sum(taps, lead)
    if divisor_override:
        return div(total, float(divisor_override))
    d = _avg_divisor(tuple(x.shape[lead:]), kernel_size, stride, pads, counted,
                     count_include_pad, outs)
    return div(total, Tensor(d.astype(x.dtype.np)))


def _avg_pool_nd_ref(x, kernel_size, stride, pads, counted, count_include_pad,
                     divisor_override):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    n = len(kernel_size)
    taps, lead, outs = _np_taps(x.astype(c), kernel_size, stride, (1,) * n, pads, 0.0)
    total = taps.sum(axis=lead)
    if divisor_override:
        return (total / c.type(divisor_override)).astype(x.dtype)
    d = _avg_divisor(x.shape[lead:], kernel_size, stride, pads, counted, count_include_pad,
                     outs)
    return (total / d.astype(c)).astype(x.dtype)


AVG_POOL_ND = defop("avg_pool_nd", infer=_window_infer("avg_pool_nd"), ref=_avg_pool_nd_ref,
                    attrs={"kernel_size": (1,), "stride": (1,), "pads": (0, 0),
                           "counted": (0, 0), "count_include_pad": True,
                           "divisor_override": 0},
                    arity=1, composite=_avg_pool_nd)


def max_pool_nd(x, kernel_size, stride, dilation, pads, return_indices=False):
    """Max pooling of x's last len(kernel_size) axes with explicit (before, after) pads; with
    return_indices also the flat int64 index of each window's first maximum."""
    a = {"kernel_size": tuple(kernel_size), "stride": tuple(stride),
         "dilation": tuple(dilation), "pads": tuple(pads)}
    y = apply(MAX_POOL_ND, x, **a)
    return (y, apply(MAX_POOL_ND_ARGMAX, x, **a)) if return_indices else y


def max_pool_nd_argmax(x, kernel_size, stride, dilation, pads):
    return apply(MAX_POOL_ND_ARGMAX, x, kernel_size=tuple(kernel_size), stride=tuple(stride),
                 dilation=tuple(dilation), pads=tuple(pads))


def avg_pool_nd(x, kernel_size, stride, pads, counted, count_include_pad=True,
                divisor_override=0):
    return apply(AVG_POOL_ND, x, kernel_size=tuple(kernel_size), stride=tuple(stride),
                 pads=tuple(pads), counted=tuple(counted),
                 count_include_pad=bool(count_include_pad),
                 divisor_override=int(divisor_override or 0))


# ---------------------------------------------------------------- max unpooling ------------------
def max_unpool_nd(x, indices, out_sizes):
    """Zeros of shape x.shape[:-n] + out_sizes with each value of x written at its flat index
    (row-major over the n trailing axes, as the max pools' indices) in its own plane: one
    scatter_update into the flattened output (its gradient reads the indices back)."""
    from ..tensor import Tensor
    from .array import reshape, zeros
    from .index_ops import SCATTER_UPDATE
    from .math import add, cast
    n = len(out_sizes)
    lead = tuple(x.shape[:len(x.shape) - n])
    planes = int(np.prod(lead, dtype=np.int64))
    plane = int(np.prod(out_sizes, dtype=np.int64))
    offsets = Tensor((np.arange(planes, dtype=np.int64) * plane).reshape(lead + (1,) * n))
    flat = reshape(add(cast(indices, dt.int64), offsets), (-1,))
    y = apply(SCATTER_UPDATE, zeros((planes * plane,), x.dtype), flat, reshape(x, (-1,)),
              axis=0)
    return reshape(y, lead + tuple(out_sizes))


# the adaptive pools and group normalisation live in modules of their own; imported here so
# that declaring the pooling family declares them too (core/ops/__init__.py imports this
# module) and _pn.adaptive_* / _pn.group_norm work
from .adaptive_pool import (adaptive_avg_pool_nd, adaptive_max_pool_nd,  # noqa: E402
                            adaptive_max_pool_nd_argmax, resolve_output_size)
from .group_norm import group_norm  # noqa: E402
