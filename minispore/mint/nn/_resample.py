"""Resampling and patch functions of mint.nn.functional (PyTorch's rules), over gather,
slicing, reshape/transpose, conv2d and conv2d_backprop_input: interpolate/upsample ('nearest',
'linear', 'bilinear', 'bicubic', 'trilinear'), pixel_shuffle, unfold, fold, conv1d (PyTorch's
arguments onto the conv1d composite), conv_transpose2d (core/ops/conv_nd.py's) and dropout2d."""
from __future__ import annotations

import numbers

import numpy as np

from ...core.ops import array as _a
from ...core.ops import conv_nd as _cnd
from ...core.ops.conv_nd import conv_transpose2d  # noqa: F401  (mint.nn.functional's)
from ...core.ops import random as _rnd
from ...core.ops import resample as _rs


def _ints(who, name, v, n, low=1):
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        t = (int(v),) * n
    elif isinstance(v, (tuple, list)) and len(v) == n and all(
            isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in v):
        t = tuple(int(a) for a in v)
    else:
        raise TypeError(f"{who}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    if min(t) < low:
        raise ValueError(f"{who}: {name} must be >= {low}, got {v!r}")
    return t


# ---------------------------------------------------------------- interpolate -------------------
_MODES = {"nearest": None, "linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
_CORE_MODES = {"nearest": "nearest", "linear": "linear", "bilinear": "linear",
               "trilinear": "linear", "bicubic": "cubic"}


def _sizes(who, input, size, scale_factor, recompute_scale_factor):
    """(output sizes, PyTorch's source scales) of the spatial axes."""
    n = len(input.shape) - 2
    ins = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{who}: exactly one of size and scale_factor must be given")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(f"{who}: recompute_scale_factor=True needs scale_factor, not size")
        outs = _ints(who, "size", size, n)
        return outs, tuple(i / o for i, o in zip(ins, outs))
    sf = (scale_factor,) * n if isinstance(scale_factor, numbers.Real) else tuple(scale_factor)
    if len(sf) != n or any(isinstance(s, bool) or not isinstance(s, numbers.Real) or s <= 0
                           for s in sf):
        raise ValueError(f"{who}: scale_factor must be a positive number or a tuple of {n}, "
                         f"got {scale_factor!r}")
    outs = tuple(int(np.floor(i * float(s))) for i, s in zip(ins, sf))
    if recompute_scale_factor:
        return outs, tuple(i / o for i, o in zip(ins, outs))
    return outs, tuple(1.0 / float(s) for s in sf)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None):
    """Resize the spatial axes of (N, C, *spatial): 'nearest' (3-5-D, source index
    floor(i * scale)), 'linear' (3-D), 'bilinear' (4-D), 'trilinear' (5-D) and 'bicubic'
    (4-D), align_corners as PyTorch (axis after axis: the kernels are separable)."""
    who = "interpolate"
    if mode not in _MODES:
        raise NotImplementedError(f"{who}: mode={mode!r} is not supported by minispore; use "
                                  f"one of {sorted(_MODES)}")
    if mode == "nearest":
        if align_corners is not None:
            raise ValueError(f"{who}: align_corners can only be set with the interpolating "
                             f"modes linear | bilinear | bicubic | trilinear")
        if len(input.shape) not in (3, 4, 5):
            raise ValueError(f"{who}: 'nearest' needs a 3-D, 4-D or 5-D input, got shape "
                             f"{tuple(input.shape)}")
    elif len(input.shape) != _MODES[mode]:
        raise ValueError(f"{who}: mode={mode!r} needs a {_MODES[mode]}-D input, got shape "
                         f"{tuple(input.shape)}")
    outs, scales = _sizes(who, input, size, scale_factor, recompute_scale_factor)
    return _rs.resize(input, outs, _CORE_MODES[mode],
                      "align_corners" if align_corners else "half_pixel", scales)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


# ---------------------------------------------------------------- patches ------------------------
def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    r = _ints("pixel_shuffle", "upscale_factor", upscale_factor, 1)[0]
    shape = tuple(input.shape)
    if len(shape) < 3 or shape[-3] % (r * r):
        raise ValueError(f"pixel_shuffle: the channels (dim -3) of shape {shape} must be "
                         f"divisible by upscale_factor^2 = {r * r}")
    *lead, c, h, w = shape
    nl = len(lead)
    y = _a.reshape(input, tuple(lead) + (c // (r * r), r, r, h, w))
    perm = tuple(range(nl)) + (nl, nl + 3, nl + 1, nl + 4, nl + 2)
    y = _a.transpose(y, perm)
    return _a.reshape(y, tuple(lead) + (c // (r * r), h * r, w * r))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L), the blocks in row-major order."""
    who = "unfold"
    if len(input.shape) != 4:
        raise ValueError(f"{who}: the input must be 4-D (N, C, H, W), got shape "
                         f"{tuple(input.shape)}")
    k = _ints(who, "kernel_size", kernel_size, 2)
    d = _ints(who, "dilation", dilation, 2)
    p = _ints(who, "padding", padding, 2, low=0)
    s = _ints(who, "stride", stride, 2)
    n, c, h, w = input.shape
    x = input
    if any(p):
        from ._pooling import pad
        x = pad(input, (p[1], p[1], p[0], p[0]))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{who}: the blocks of kernel_size {k} do not fit the input of shape "
                         f"{tuple(input.shape)} with padding {p}")
    blocks = []
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * d[0], j * d[1]
            blocks.append(x[:, :, r0:r0 + s[0] * (oh - 1) + 1:s[0],
                            c0:c0 + s[1] * (ow - 1) + 1:s[1]])
    y = _a.stack(blocks, 2)
    return _a.reshape(y, (n, c * k[0] * k[1], oh * ow))


def _spread(x, axis, s):
    """x with s - 1 zeros between its entries along axis: n -> (n - 1) * s + 1."""
    if s == 1:
        return x
    n = x.shape[axis]
    y = _a.stack([x] + [x * 0.0] * (s - 1), axis + 1)
    shape = tuple(x.shape)
    y = _a.reshape(y, shape[:axis] + (n * s,) + shape[axis + 1:])
    key = (slice(None),) * axis + (slice(0, (n - 1) * s + 1),)
    return y[key]


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: (N, C * kh * kw, L) or (C * kh * kw, L) -> (N, C, H, W), the
    overlapping block entries summed."""
    who = "fold"
    if len(input.shape) == 2:
        return _a.squeeze(fold(_a.expand_dims(input, 0), output_size, kernel_size, dilation,
                               padding, stride), 0)
    if len(input.shape) != 3:
        raise ValueError(f"{who}: the input must be 2-D or 3-D, got shape {tuple(input.shape)}")
    out = _ints(who, "output_size", output_size, 2)
    k = _ints(who, "kernel_size", kernel_size, 2)
    d = _ints(who, "dilation", dilation, 2)
    p = _ints(who, "padding", padding, 2, low=0)
    s = _ints(who, "stride", stride, 2)
    n, ck, length = input.shape
    if ck % (k[0] * k[1]):
        raise ValueError(f"{who}: dim 1 of the input ({ck}) must be divisible by the kernel "
                         f"size {k[0] * k[1]}")
    c = ck // (k[0] * k[1])
    oh = (out[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (out[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh * ow != length:
        raise ValueError(f"{who}: output_size {out}, kernel_size {k}, dilation {d}, padding "
                         f"{p} and stride {s} give {oh} * {ow} blocks, the input has {length}")
    hp, wp = out[0] + 2 * p[0], out[1] + 2 * p[1]
    x = _a.reshape(input, (n, c, k[0], k[1], oh, ow))
    from ._pooling import pad
    total = None
    for i in range(k[0]):
        for j in range(k[1]):
            block = _spread(_spread(x[:, :, i, j], 2, s[0]), 3, s[1])
            r0, c0 = i * d[0], j * d[1]
            placed = pad(block, (c0, wp - c0 - block.shape[3], r0, hp - r0 - block.shape[2]))
            total = placed if total is None else total + placed
    return total[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1]]


# ---------------------------------------------------------------- convolutions ------------------
def _torch_padding(who, padding, stride, n):
    """PyTorch's padding argument as (pad_mode, (before, after) * n): 'valid', 'same' (stride 1
    only; the odd element at the end, as MindSpore's 'same'), an int or n ints."""
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{who}: padding must be 'valid', 'same', an int or a tuple of {n} "
                             f"ints, got {padding!r}")
        if padding == "same" and stride != (1,) * n:
            raise ValueError(f"{who}: padding='same' needs stride=1 (as PyTorch), got stride "
                             f"{stride}")
        return padding, (0,) * (2 * n)
    p = _ints(who, "padding", padding, n, low=0)
    return "pad", tuple(v for a in p for v in (a, a))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C_in, L) or (C_in, L) with weight (C_out, C_in / groups, K): the
    conv1d composite (core/ops/conv_nd.py)."""
    who = "conv1d"
    if len(input.shape) == 2:
        return _a.squeeze(conv1d(_a.expand_dims(input, 0), weight, bias, stride, padding,
                                 dilation, groups), 0)
    s = _ints(who, "stride", stride, 1)
    mode, pads = _torch_padding(who, padding, s, 1)
    return _cnd.conv1d(input, weight, bias, s, mode, pads, _ints(who, "dilation", dilation, 1),
                       groups)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (each (H, W) map of (N, C, H, W)) with probability p, scale the
    others by 1 / (1 - p) (training only)."""
    from .functional import _not_supported
    _not_supported("dropout2d", "inplace", inplace, False)
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout2d: p must be in [0, 1], got {p!r}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0.0
    if len(input.shape) not in (3, 4):
        raise ValueError(f"dropout2d: the input must be 3-D or 4-D, got shape "
                         f"{tuple(input.shape)}")
    mask_shape = tuple(input.shape[:-2]) + (1, 1)
    mask = _rnd.dropout(_a.ones(mask_shape, input.dtype), float(p), True)
    return input * mask
