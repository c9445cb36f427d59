"""Convolution and pooling Cells: nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.MaxPool2d, nn.AvgPool2d
(MindSpore 2.x names, arguments, defaults and default initializations), and the parameter and
argument helpers the transposed convolutions (conv_transpose.py) share.

The numbers come from the functional ops in minispore/core/ops/conv.py (conv2d is a Cube op on the
simulated Ascend); this module owns the argument checking, the Parameters and their defaults:
Conv2d's weight (C_out, C_in / group, kh, kw) starts HeUniform(negative_slope=sqrt(5)) and its bias
(has_bias=False by default, as in MindSpore) Uniform(1 / sqrt(fan_in)), fan_in = C_in / group *
kh * kw. Pooling defaults are MindSpore's: kernel_size=1, stride=1 (not kernel_size), 'valid'.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...common.initializer import HeUniform, Uniform
from ...core import dtype as dt
from ...core.ops import array as _a
from ...core.ops import conv as _cv
from ...core.ops import conv_nd as _cnd
from ...core.tensor import Tensor
from ..cell import Cell
from ...core.arg_checks import check_bool
from .basic import check_positive_int, init_param

_PAD_MODES = ("valid", "same", "pad")


def _pad_mode(who: str, pad_mode, padding) -> str:
    if not isinstance(pad_mode, str) or pad_mode.lower() not in _PAD_MODES:
        raise ValueError(f"{who}: pad_mode must be one of 'valid', 'same', 'pad', got "
                         f"{pad_mode!r}")
    mode = pad_mode.lower()
    if mode != "pad" and any(_cv.pad4(who, padding)):
        raise ValueError(f"{who}: padding={padding!r} needs pad_mode='pad', got pad_mode="
                         f"{pad_mode!r}; pass pad_mode='pad' to pad explicitly, or padding=0")
    return mode


def _nchw_only(who: str, data_format) -> None:
    if data_format != "NCHW":
        raise ValueError(f"{who}: data_format={data_format!r} is not supported (MindSpore has "
                         f"NHWC on GPU only); use data_format='NCHW' and transpose the input with "
                         f"ops.transpose(x, (0, 3, 1, 2))")


def _unsupported(who: str, what: str, value, default) -> None:
    if value != default:
        raise NotImplementedError(f"{who}: {what}={value!r} is not supported by minispore; use "
                                  f"the default {default!r}")


def conv_params(who, shape, weight_init, bias_init, has_bias, out_channels, dtype):
    """The (weight, bias) Parameters of a convolution Cell with MindSpore's defaults: weight
    HeUniform(negative_slope=sqrt(5)) (bound 1 / sqrt(fan_in)), bias Uniform(1 / sqrt(fan_in)),
    fan_in = shape[1] * prod(kernel) of the weight's own shape (so a transposed convolution's
    fan_in counts its C_out / group); bias None without has_bias."""
    dtype = dt.to_dtype(dtype)
    if weight_init is None:
        weight_init = HeUniform(math.sqrt(5))
    weight = init_param(who, "weight_init", weight_init, shape, dtype, "weight")
    if not has_bias:
        return weight, None
    if bias_init is None:
        fan_in = math.prod(shape[1:])
        bias_init = Uniform(1 / math.sqrt(fan_in)) if fan_in else "zeros"
    return weight, init_param(who, "bias_init", bias_init, (out_channels,), dtype, "bias")


def check_groups(who, in_channels, out_channels, group):
    if in_channels % group or out_channels % group:
        raise ValueError(f"{who}: in_channels={in_channels} and out_channels={out_channels} "
                         f"must both be divisible by group={group}; choose a group that "
                         f"divides both (group=1 is an ordinary convolution)")


def int_arg(who, name, value, low=1):
    """MindSpore's 1-D Cells take plain ints for kernel_size, stride, padding and dilation."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {value!r} ({type(value).__name__})")
    if value < low:
        raise ValueError(f"{who}: {name} must be >= {low}, got {value}")
    return int(value)


def weight_1d(who, weight_init):
    """A 3-D Tensor/array weight_init of a 1-D Cell gets the unit height axis of its
    (C, C', 1, K) weight, as MindSpore's Conv1d does."""
    if isinstance(weight_init, (Tensor, np.ndarray)):
        if len(weight_init.shape) != 3:
            raise ValueError(f"{who}: a Tensor weight_init must be 3-D (C, C', kernel_size), got "
                             f"shape {tuple(weight_init.shape)}")
        arr = weight_init.asnumpy() if isinstance(weight_init, Tensor) else weight_init
        return Tensor(np.expand_dims(arr, 2))
    return weight_init


class Conv2d(Cell):
    """2-D convolution over (N, C_in, H, W): out = conv(x, weight) + bias.

    pad_mode 'same' (the default) keeps H, W / stride with the extra row/column at the bottom/right;
    'valid' pads nothing; 'pad' pads `padding` (an int, or (top, bottom, left, right))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCHW", dtype=dt.float32):
        super().__init__()
        who = "Conv2d"
        self.in_channels = check_positive_int(who, "in_channels", in_channels)
        self.out_channels = check_positive_int(who, "out_channels", out_channels)
        self.kernel_size = _cv.pair(who, "kernel_size", kernel_size)
        self.stride = _cv.pair(who, "stride", stride)
        self.dilation = _cv.pair(who, "dilation", dilation)
        self.group = check_positive_int(who, "group", group)
        check_groups(who, self.in_channels, self.out_channels, self.group)
        self.padding = _cv.pad4(who, padding)
        self.pad_mode = _pad_mode(who, pad_mode, padding)
        self.has_bias = check_bool(who, "has_bias", has_bias)
        _nchw_only(who, data_format)
        self.data_format = data_format
        shape = (self.out_channels, self.in_channels // self.group) + self.kernel_size
        self.weight, self.bias = conv_params(who, shape, weight_init, bias_init, self.has_bias,
                                             self.out_channels, dtype)

    def construct(self, x):
        return _cv.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                          self.dilation, self.group)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}, format={self.data_format}")


class Conv1d(Cell):
    """1-D convolution over (N, C_in, L), as MindSpore: a 2-D convolution of (N, C_in, 1, L)
    with a weight of shape (C_out, C_in / group, 1, kernel_size). kernel_size, stride, padding
    (both ends) and dilation are ints; pad_mode 'same' (default), 'valid' or 'pad'."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, dtype=dt.float32):
        super().__init__()
        who = "Conv1d"
        self.in_channels = check_positive_int(who, "in_channels", in_channels)
        self.out_channels = check_positive_int(who, "out_channels", out_channels)
        self.kernel_size = (1, int_arg(who, "kernel_size", kernel_size))
        self.stride = (1, int_arg(who, "stride", stride))
        p = int_arg(who, "padding", padding, low=0)
        self.dilation = (1, int_arg(who, "dilation", dilation))
        self.group = check_positive_int(who, "group", group)
        check_groups(who, self.in_channels, self.out_channels, self.group)
        self.pad_mode = _pad_mode(who, pad_mode, p)
        self.padding = (0, 0, p, p)
        self.has_bias = check_bool(who, "has_bias", has_bias)
        shape = (self.out_channels, self.in_channels // self.group) + self.kernel_size
        self.weight, self.bias = conv_params(who, shape, weight_1d(who, weight_init), bias_init,
                                             self.has_bias, self.out_channels, dtype)

    def construct(self, x):
        if len(x.shape) != 3:
            raise ValueError(f"Conv1d: the input must be 3-D (N, C_in, L), got shape "
                             f"{tuple(x.shape)}")
        return _cnd.conv1d(x, _a.squeeze(self.weight, 2), self.bias, self.stride[1],
                           self.pad_mode, self.padding[2:], self.dilation[1], self.group)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}")


def triple(who, name, value, low=1):
    """An int or a tuple of 3 ints (depth, height, width)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        t = (int(value),) * 3
    elif isinstance(value, tuple) and len(value) == 3 and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        t = tuple(int(v) for v in value)
    else:
        raise TypeError(f"{who}: {name} must be an int or a tuple of 3 ints, got {value!r}")
    if min(t) < low:
        raise ValueError(f"{who}: {name} must be >= {low}, got {value!r}")
    return t


def pad6(who, padding):
    """MindSpore's 3-D padding: an int (all sides) or (head, tail, top, bottom, left, right)."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        t = (int(padding),) * 6
    elif isinstance(padding, tuple) and len(padding) != 6:
        raise ValueError(f"{who}: a padding tuple must have 6 ints (head, tail, top, bottom, "
                         f"left, right), got {padding!r}")
    elif isinstance(padding, tuple) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in padding):
        t = tuple(int(v) for v in padding)
    else:
        raise TypeError(f"{who}: padding must be an int or a tuple of 6 ints (head, tail, top, "
                        f"bottom, left, right), got {padding!r}")
    if min(t) < 0:
        raise ValueError(f"{who}: padding must be non-negative, got {padding!r}")
    return t


def mode_3d(who, pad_mode, pads):
    if not isinstance(pad_mode, str) or pad_mode.lower() not in _PAD_MODES:
        raise ValueError(f"{who}: pad_mode must be one of 'valid', 'same', 'pad', got "
                         f"{pad_mode!r}")
    if pad_mode.lower() != "pad" and any(pads):
        raise ValueError(f"{who}: padding={pads!r} needs pad_mode='pad', got pad_mode="
                         f"{pad_mode!r}; pass pad_mode='pad' to pad explicitly, or padding=0")
    return pad_mode.lower()


def ncdhw_only(who, data_format):
    if data_format != "NCDHW":
        raise ValueError(f"{who}: data_format must be 'NCDHW' (the only 3-D format MindSpore "
                         f"has), got {data_format!r}")


class Conv3d(Cell):
    """3-D convolution over (N, C_in, D, H, W), weight (C_out, C_in / group, kd, kh, kw).
    padding an int or (head, tail, top, bottom, left, right) with pad_mode='pad'; 'same' (the
    default) puts the odd padding element at the tail/bottom/right."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCDHW", dtype=dt.float32):
        super().__init__()
        who = "Conv3d"
        self.in_channels = check_positive_int(who, "in_channels", in_channels)
        self.out_channels = check_positive_int(who, "out_channels", out_channels)
        self.kernel_size = triple(who, "kernel_size", kernel_size)
        self.stride = triple(who, "stride", stride)
        self.dilation = triple(who, "dilation", dilation)
        self.group = check_positive_int(who, "group", group)
        check_groups(who, self.in_channels, self.out_channels, self.group)
        self.padding = padding
        self._pads = pad6(who, padding)
        self.pad_mode = mode_3d(who, pad_mode, self._pads)
        self.has_bias = check_bool(who, "has_bias", has_bias)
        ncdhw_only(who, data_format)
        self.data_format = data_format
        shape = (self.out_channels, self.in_channels // self.group) + self.kernel_size
        self.weight, self.bias = conv_params(who, shape, weight_init, bias_init, self.has_bias,
                                             self.out_channels, dtype)

    def construct(self, x):
        return _cnd.conv3d(x, self.weight, self.bias, self.stride, self.pad_mode, self._pads,
                           self.dilation, self.group)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}, format={self.data_format}")


class _Pool2d(Cell):
    """Shared checks of the pooling Cells; inputs (N, C, H, W) or (C, H, W)."""
    who = "Pool2d"

    def __init__(self, kernel_size, stride, pad_mode, padding, data_format):
        super().__init__()
        who = self.who
        self.kernel_size = _cv.pair(who, "kernel_size", kernel_size)
        self.stride = _cv.pair(who, "stride", stride)
        self.padding = _cv.pad4(who, padding)
        self.pad_mode = _pad_mode(who, pad_mode, padding)
        if self.pad_mode == "pad" and (max(self.padding[:2]) * 2 > self.kernel_size[0] or
                                       max(self.padding[2:]) * 2 > self.kernel_size[1]):
            raise ValueError(f"{who}: padding={padding!r} must be at most half of kernel_size="
                             f"{kernel_size!r}; use less padding or a larger kernel")
        _nchw_only(who, data_format)
        self.data_format = data_format

    def construct(self, x):
        if len(x.shape) == 3:
            return _a.squeeze(self._pool(_a.expand_dims(x, 0)), 0)
        _check_rank4(self.who, x.shape)
        return self._pool(x)

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}")


def _check_rank4(who, shape):
    if len(shape) != 4:
        raise ValueError(f"{who}: the input must be 4-D (N, C, H, W) or 3-D (C, H, W), got shape "
                         f"{tuple(shape)}")


class MaxPool2d(_Pool2d):
    """The maximum of each kernel_size window, moved by stride (MindSpore defaults: kernel_size=1,
    stride=1, pad_mode='valid')."""
    who = "MaxPool2d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        _unsupported("MaxPool2d", "dilation", dilation, 1)
        _unsupported("MaxPool2d", "return_indices", return_indices, False)
        _unsupported("MaxPool2d", "ceil_mode", ceil_mode, False)
        super().__init__(kernel_size, stride, pad_mode, padding, data_format)

    def _pool(self, x):
        return _cv.max_pool2d(x, self.kernel_size, self.stride, self.padding,
                              pad_mode=self.pad_mode)


class AvgPool2d(_Pool2d):
    """The mean of each kernel_size window, moved by stride. With pad_mode='same' the padding is
    not counted (each window averages its real elements, as MindSpore's AvgPool); with 'pad' it is
    unless count_include_pad=False."""
    who = "AvgPool2d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        _unsupported("AvgPool2d", "ceil_mode", ceil_mode, False)
        _unsupported("AvgPool2d", "divisor_override", divisor_override, None)
        super().__init__(kernel_size, stride, pad_mode, padding, data_format)
        if not isinstance(count_include_pad, (bool, numbers.Integral)):
            raise TypeError(f"AvgPool2d: count_include_pad must be a bool, got "
                            f"{count_include_pad!r}")
        self.count_include_pad = bool(count_include_pad) and self.pad_mode == "pad"

    def _pool(self, x):
        return _cv.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                              count_include_pad=self.count_include_pad, pad_mode=self.pad_mode)


__all__ = ["Conv1d", "Conv2d", "Conv3d", "MaxPool2d", "AvgPool2d"]
