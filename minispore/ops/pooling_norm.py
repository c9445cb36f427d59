"""mindspore.ops' pooling and normalisation functions and Primitive classes beyond
max_pool2d/avg_pool2d/batch_norm/layer_norm, over core/ops/pool_nd.py: the 1-D and 3-D pools,
the adaptive pools, the power-average pools lp_pool1d/2d, max_unpool1d/2d/3d and group_norm;
the Primitive classes (AvgPool, MaxPool, AvgPool3D, MaxPool3D, MaxPoolWithArgmaxV2,
MaxPool3DWithArgmax, AdaptiveAvgPool2D/3D, AdaptiveMaxPool2D/3D) are ops/pooling_primitives.py's
and LayerNorm/BatchNorm ops/norm_primitives.py's, re-exported here (ops star-imports this
module).

MindSpore's rules are kept, including where it refuses: the 1-D adaptive pools take only
(N, C, L) inputs whose L is divisible by output_size (MindSpore pools them with one window
size); avg_pool1d takes (N, C, L) and the 3-D pools (N, C, D, H, W); max_pool3d's padding is
at most half the kernel. Indices are flat positions in the pooled (unpadded) volume: int64,
except AdaptiveMaxPool3D/adaptive_max_pool3d's int32.
"""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.ops import math as _m
from ..core.ops import pool_nd as _pn
from ..core.ops.pool_nd import group_norm

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d",
           "avg_pool3d", "max_pool3d", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "group_norm", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D",
           "AdaptiveMaxPool2D", "AdaptiveMaxPool3D", "AvgPool", "MaxPool", "AvgPool3D",
           "MaxPool3D", "MaxPoolWithArgmaxV2", "MaxPool3DWithArgmax", "MaxUnpool2D",
           "MaxUnpool3D", "LayerNorm", "BatchNorm", "L2Normalize"]


# ---------------------------------------------------------------- argument checks ----------------
def ints(who, what, v, n, minimum=1):
    """An int or a tuple of 1 or n ints as an n-tuple (each >= minimum)."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        t = (int(v),) * n
    elif isinstance(v, (tuple, list)) and len(v) in (1, n) and all(
            isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in v):
        t = tuple(int(a) for a in v) * (n if len(v) == 1 else 1)
    else:
        raise TypeError(f"{who}: '{what}' must be an int or a tuple of {n} ints, got {v!r}")
    if min(t) < minimum:
        raise ValueError(f"{who}: '{what}' must be >= {minimum}, got {v!r}")
    return t


def pads3d(who, padding):
    """padding of a 3-D pool: an int, (d, h, w) or (front, back, top, bottom, left, right), as
    the 6-tuple of (before, after) per axis."""
    if isinstance(padding, (tuple, list)) and len(padding) == 6:
        p = ints(who, "padding", padding[:3], 3, 0) + ints(who, "padding", padding[3:], 3, 0)
        return p
    d, h, w = ints(who, "padding", padding, 3, 0)
    return (d, d, h, h, w, w)


def check_rank(who, x, ranks, layout):
    if len(x.shape) not in ranks:
        want = " or ".join(f"{r}-D" for r in ranks)
        raise ValueError(f"{who}: the input must be {want} {layout}, got shape "
                         f"{tuple(x.shape)}")


def _half_kernel(who, pads, kernel_size):
    for i, k in enumerate(kernel_size):
        if max(pads[2 * i], pads[2 * i + 1]) * 2 > k:
            raise ValueError(f"{who}: padding {pads} must be at most half of kernel_size "
                             f"{tuple(kernel_size)}; use less padding or a larger kernel")


def check_pad_sums(who, pads, kernel_size):
    """MindSpore's AvgPool3D/MaxPool3D rule: before + after padding at most the kernel."""
    for i, k in enumerate(kernel_size):
        if pads[2 * i] + pads[2 * i + 1] > k:
            raise ValueError(f"{who}: the padding before and after an axis must sum to at most "
                             f"its kernel size, got pads {tuple(pads)} for kernel_size "
                             f"{tuple(kernel_size)}")


def check_bool(who, what, v):
    if not isinstance(v, bool):
        raise TypeError(f"{who}: '{what}' must be a bool, got {v!r}")
    return v


# ---------------------------------------------------------------- window pools -------------------
def max_pool_window(who, x, n, kernel_size, stride, pad_mode, padding, dilation, ceil_mode,
                    return_indices):
    """Max pooling of x's last n axes (padding: (before, after) per axis, with 'pad')."""
    pads, _ = _pn.window_geometry(who, tuple(x.shape[len(x.shape) - n:]), kernel_size, stride,
                                  dilation, pad_mode, padding, ceil_mode)
    return _pn.max_pool_nd(x, kernel_size, stride, dilation, pads, return_indices)


def avg_pool_window(who, x, n, kernel_size, stride, pad_mode, padding, ceil_mode,
                    count_include_pad, divisor_override=0):
    """Average pooling of x's last n axes (padding: (before, after) per axis, with 'pad')."""
    pads, counted = _pn.window_geometry(who, tuple(x.shape[len(x.shape) - n:]), kernel_size,
                                        stride, (1,) * n, pad_mode, padding, ceil_mode)
    return _pn.avg_pool_nd(x, kernel_size, stride, pads, counted, count_include_pad,
                           divisor_override)


def avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Average pooling of (N, C, L) over L (padding pads zeros on both sides; with
    count_include_pad they count in each window's divisor)."""
    who = "avg_pool1d"
    check_rank(who, input_x, (3,), "(N, C, L)")
    k = ints(who, "kernel_size", kernel_size, 1)
    s = ints(who, "stride", stride, 1)
    (p,) = ints(who, "padding", padding, 1, 0)
    check_pad_sums(who, (p, p), k)
    check_bool(who, "ceil_mode", ceil_mode)
    check_bool(who, "count_include_pad", count_include_pad)
    return avg_pool_window(who, input_x, 1, k, s, "pad", (p, p), ceil_mode, count_include_pad)


def avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=0):
    """Average pooling of (N, C, D, H, W); divisor_override (0: none) divides every window's
    sum."""
    who = "avg_pool3d"
    check_rank(who, input_x, (5,), "(N, C, D, H, W)")
    k = ints(who, "kernel_size", kernel_size, 3)
    s = ints(who, "stride", stride, 3)
    check_bool(who, "ceil_mode", ceil_mode)
    check_bool(who, "count_include_pad", count_include_pad)
    div = _divisor(who, divisor_override)
    p = pads3d(who, padding)
    check_pad_sums(who, p, k)
    return avg_pool_window(who, input_x, 3, k, s, "pad", p, ceil_mode, count_include_pad, div)


def _divisor(who, v):
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
        raise ValueError(f"{who}: divisor_override must be a non-negative int (0: divide by the "
                         f"window's element count), got {v!r}")
    return int(v)


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max pooling of (N, C, D, H, W) (stride defaults to kernel_size; padding pads -inf and is
    at most half the kernel); return_indices also gives each maximum's flat index
    d * H * W + h * W + w (int64)."""
    who = "max_pool3d"
    check_rank(who, x, (5,), "(N, C, D, H, W)")
    k = ints(who, "kernel_size", kernel_size, 3)
    s = k if stride is None else ints(who, "stride", stride, 3)
    p = pads3d(who, padding)
    _half_kernel(who, p, k)
    d = ints(who, "dilation", dilation, 3)
    check_bool(who, "ceil_mode", ceil_mode)
    check_bool(who, "return_indices", return_indices)
    return max_pool_window(who, x, 3, k, s, "pad", p, d, ceil_mode, return_indices)


def _lp_pool(who, x, norm_type, n, kernel_size, stride, ceil_mode):
    """MindSpore's lp_pool: the window mean of x ** p (ceil_mode windows past the input
    averaging what they cover) times the FULL window size, then ** (1 / p)."""
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise TypeError(f"{who}: norm_type must be a float or an int, got {norm_type!r}")
    p = float(norm_type)
    if p == 0:
        raise ValueError(f"{who}: norm_type can not be 0")
    k = ints(who, "kernel_size", kernel_size, n)
    s = k if stride is None else ints(who, "stride", stride, n)
    check_bool(who, "ceil_mode", ceil_mode)
    xp = _m.pow(x, p)
    y = avg_pool_window(who, xp, n, k, s, "pad", (0,) * (2 * n), ceil_mode, True)
    y = _m.mul(_m.mul(_m.sign(y), _m.relu(_m.abs(y))), float(_prod(k)))
    return _m.pow(y, 1.0 / p)


def _prod(t):
    out = 1
    for v in t:
        out *= v
    return out


def lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of L of x ** norm_type) ** (1 / norm_type), as MindSpore
    computes it (see _lp_pool); x (N, C, L) or (C, L)."""
    check_rank("lp_pool1d", x, (2, 3), "(N, C, L) or (C, L)")
    return _lp_pool("lp_pool1d", x, norm_type, 1, kernel_size, stride, ceil_mode)


def lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each (h, w) window of x ** norm_type) ** (1 / norm_type), as MindSpore
    computes it (see _lp_pool); x (N, C, H, W)."""
    check_rank("lp_pool2d", x, (4,), "(N, C, H, W)")
    return _lp_pool("lp_pool2d", x, norm_type, 2, kernel_size, stride, ceil_mode)


# ---------------------------------------------------------------- adaptive pools -----------------
def _adaptive_1d(who, x, output_size):
    check_rank(who, x, (3,), "(N, C, L)")
    if isinstance(output_size, bool) or not isinstance(output_size, numbers.Integral) or \
            output_size < 1:
        raise TypeError(f"{who}: output_size must be a positive int, got {output_size!r}")
    L = x.shape[2]
    if L < output_size or L % output_size:
        raise ValueError(f"{who}: the input's last dimension {L} must be divisible by "
                         f"output_size {output_size} (and at least as large), as MindSpore "
                         f"requires; use an output_size dividing {L}")
    return (int(output_size),)


def adaptive_avg_pool1d(input, output_size):
    """Means over output_size equal windows of L of (N, C, L)."""
    return _pn.adaptive_avg_pool_nd(input, _adaptive_1d("adaptive_avg_pool1d", input,
                                                        output_size))


def adaptive_max_pool1d(input, output_size):
    """Maxima over output_size equal windows of L of (N, C, L)."""
    return _pn.adaptive_max_pool_nd(input, _adaptive_1d("adaptive_max_pool1d", input,
                                                        output_size))


def adaptive_avg_pool2d(input, output_size):
    """Means over the adaptive bins of the last two axes of (C, H, W) or (N, C, H, W);
    output_size an int or (h, w) with None keeping an axis."""
    who = "adaptive_avg_pool2d"
    check_rank(who, input, (3, 4), "(C, H, W) or (N, C, H, W)")
    return _pn.adaptive_avg_pool_nd(input, _pn.resolve_output_size(who, output_size,
                                                                   input.shape, 2))


def adaptive_avg_pool3d(input, output_size):
    """Means over the adaptive bins of the last three axes of 4-D or 5-D input."""
    who = "adaptive_avg_pool3d"
    check_rank(who, input, (4, 5), "(C, D, H, W) or (N, C, D, H, W)")
    return _pn.adaptive_avg_pool_nd(input, _pn.resolve_output_size(who, output_size,
                                                                   input.shape, 3))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maxima over the adaptive bins of the last two axes; with return_indices also their
    flat indices h * W + w (int64)."""
    who = "adaptive_max_pool2d"
    check_rank(who, input, (3, 4), "(C, H, W) or (N, C, H, W)")
    check_bool(who, "return_indices", return_indices)
    return _pn.adaptive_max_pool_nd(input, _pn.resolve_output_size(who, output_size,
                                                                   input.shape, 2),
                                    return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Maxima over the adaptive bins of the last three axes; with return_indices also their
    flat indices d * H * W + h * W + w (int32, as MindSpore's AdaptiveMaxPool3D)."""
    who = "adaptive_max_pool3d"
    check_rank(who, input, (4, 5), "(C, D, H, W) or (N, C, D, H, W)")
    check_bool(who, "return_indices", return_indices)
    sizes = _pn.resolve_output_size(who, output_size, input.shape, 3)
    y = _pn.adaptive_max_pool_nd(input, sizes)
    if not return_indices:
        return y
    return y, _m.cast(_pn.adaptive_max_pool_nd_argmax(input, sizes), _dt.int32)


# ---------------------------------------------------------------- max unpooling ------------------
def _unpool(who, x, indices, n, kernel_size, stride, padding, output_size):
    """zeros of the unpooled size with each value of x at its flat index into its plane: the
    size (in - 1) * stride - 2 * padding + kernel_size per axis, or output_size's last n
    entries (MindSpore's bound: within one stride of that)."""
    check_rank(who, x, (n + 1, n + 2), f"({'N, ' if n else ''}C, {n}-D spatial)")
    if tuple(indices.shape) != tuple(x.shape):
        raise ValueError(f"{who}: indices of shape {tuple(indices.shape)} must have the shape "
                         f"of x {tuple(x.shape)}")
    if indices.dtype not in (_dt.int32, _dt.int64):
        raise TypeError(f"{who}: indices must be int32 or int64, got {indices.dtype}")
    k = ints(who, "kernel_size", kernel_size, n)
    s = k if stride is None else ints(who, "stride", stride, n)
    p = ints(who, "padding", padding, n, 0)
    sizes = tuple(x.shape[len(x.shape) - n:])
    default = tuple((i - 1) * ss - 2 * pp + kk for i, ss, pp, kk in zip(sizes, s, p, k))
    if output_size is None or output_size == ():
        out = default
    else:
        if not isinstance(output_size, (tuple, list)) or len(output_size) < n:
            raise ValueError(f"{who}: output_size must be a tuple ending in the {n} output "
                             f"sizes, got {output_size!r}")
        out = tuple(int(v) for v in tuple(output_size)[-n:])
        for o, d, ss in zip(out, default, s):
            if not d - ss < o < d + ss:
                raise ValueError(f"{who}: output_size {tuple(output_size)} must be within one "
                                 f"stride of the default size {default} (strides {s})")
    if min(out) < 1:
        raise ValueError(f"{who}: the output size {out} must be positive; check kernel_size, "
                         f"stride and padding")
    return _pn.max_unpool_nd(x, indices, out)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool1d's partial inverse on (N, C, L) or (C, L) (indices into L)."""
    return _unpool("max_unpool1d", x, indices, 1, kernel_size, stride, padding, output_size)


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool2d's partial inverse on (N, C, H, W) or (C, H, W) (indices h * W + w)."""
    return _unpool("max_unpool2d", x, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool3d's partial inverse on (N, C, D, H, W) or (C, D, H, W)."""
    return _unpool("max_unpool3d", x, indices, 3, kernel_size, stride, padding, output_size)


from .pooling_primitives import (AdaptiveAvgPool2D, AdaptiveAvgPool3D,  # noqa: E402
                                 AdaptiveMaxPool2D, AdaptiveMaxPool3D, AvgPool, AvgPool3D,
                                 MaxPool, MaxPool3D, MaxPool3DWithArgmax, MaxPoolWithArgmaxV2,
                                 MaxUnpool2D, MaxUnpool3D)
from .norm_primitives import BatchNorm, L2Normalize, LayerNorm  # noqa: E402
