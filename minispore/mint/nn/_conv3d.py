"""3-D convolution and average pooling of mint.nn.functional (PyTorch's rules). conv3d maps
PyTorch's arguments onto the conv3d composite (core/ops/conv_nd.py); avg_pool3d is composed from
the 2-D ops: a 3-D window is a sum over its depth taps (strided depth slices) of 2-D windows,
the depth folded into the batch."""
from __future__ import annotations

import numpy as np

from ...core.ops import array as _a
from ...core.ops import conv_nd as _cnd
from ...core.tensor import Tensor
from ._pooling import _out_len, avg_pool2d, pad
from ._resample import _ints, _torch_padding


def _depth_taps(x, k, s, d, out):
    """The k depth taps of (N, C, D, H, W): k tensors (N, C, out, H, W), strided by s."""
    return [x[:, :, i * d:i * d + s * (out - 1) + 1:s] for i in range(k)]


def _fold_depth(t):
    """(N, C, D, H, W) -> (N * D, C, H, W)."""
    n, c, dd, h, w = t.shape
    return _a.reshape(_a.transpose(t, (0, 2, 1, 3, 4)), (n * dd, c, h, w))


def _unfold_depth(t, n):
    """(N * D, C, H, W) -> (N, C, D, H, W)."""
    nd, c, h, w = t.shape
    return _a.transpose(_a.reshape(t, (n, nd // n, c, h, w)), (0, 2, 1, 3, 4))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_out, C_in / groups,
    kd, kh, kw); padding an int, a triple, 'valid' or 'same' (stride 1): the conv3d composite
    (core/ops/conv_nd.py)."""
    who = "conv3d"
    if len(input.shape) == 4:
        return _a.squeeze(conv3d(_a.expand_dims(input, 0), weight, bias, stride, padding,
                                 dilation, groups), 0)
    s = _ints(who, "stride", stride, 3)
    mode, pads = _torch_padding(who, padding, s, 3)
    return _cnd.conv3d(input, weight, bias, s, mode, pads, _ints(who, "dilation", dilation, 3),
                       groups)


def _axis_divisors(n, k, s, p, out, count_include_pad):
    lo = np.arange(out) * s - p
    hi = np.minimum(lo + k, n + p)
    if count_include_pad:
        return (hi - lo).astype(np.float64)
    return (np.minimum(hi, n) - np.maximum(lo, 0)).astype(np.float64)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each 3-D window of (N, C, D, H, W) or (C, D, H, W), PyTorch's rules
    (stride defaults to kernel_size; count_include_pad, ceil_mode, divisor_override)."""
    who = "avg_pool3d"
    if len(input.shape) == 4:
        return _a.squeeze(avg_pool3d(_a.expand_dims(input, 0), kernel_size, stride, padding,
                                     ceil_mode, count_include_pad, divisor_override), 0)
    if len(input.shape) != 5:
        raise ValueError(f"{who}: the input must be 4-D or 5-D, got shape {tuple(input.shape)}")
    k = _ints(who, "kernel_size", kernel_size, 3)
    s = k if stride is None else _ints(who, "stride", stride, 3)
    p = _ints(who, "padding", padding, 3, low=0)
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise ValueError(f"{who}: padding={padding!r} must be at most half of kernel_size={k}")
    if divisor_override is not None and (isinstance(divisor_override, bool) or
                                         not isinstance(divisor_override, int) or
                                         divisor_override == 0):
        raise ValueError(f"{who}: divisor_override must be a non-zero int or None, got "
                         f"{divisor_override!r}")
    n, c, d, h, w = input.shape
    outs = [_out_len(who, m, kk, ss, pp, 1, bool(ceil_mode))
            for m, kk, ss, pp in zip((d, h, w), k, s, p)]
    after = max((outs[0] - 1) * s[0] + k[0] - d - p[0], 0)
    x = pad(input, (0, 0, 0, 0, p[0], after)) if p[0] or after else input
    depth = None
    for tap in _depth_taps(x, k[0], s[0], 1, outs[0]):
        depth = tap if depth is None else depth + tap
    sums = avg_pool2d(_fold_depth(depth), k[1:], s[1:], p[1:], bool(ceil_mode), True, 1)
    total = _unfold_depth(sums, n)
    if divisor_override is not None:
        return total / float(divisor_override)
    divs = [_axis_divisors(m, kk, ss, pp, o, bool(count_include_pad))
            for m, kk, ss, pp, o in zip((d, h, w), k, s, p, outs)]
    table = divs[0][:, None, None] * divs[1][None, :, None] * divs[2][None, None, :]
    return total / Tensor(table.astype(input.dtype.np))
