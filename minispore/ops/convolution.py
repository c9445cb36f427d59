"""mindspore.ops' convolutions beyond conv2d: the functions conv1d, conv3d, conv3d_transpose and
conv_transpose2d (core/ops/conv_nd.py), and the Primitive classes Conv2D, Conv2DBackpropInput,
Conv2DTranspose, Conv3D and Conv3DTranspose over the conv2d family (core/ops/conv.py) and the
conv3d composites, with MindSpore 2.10's __init__ and call arguments."""
from __future__ import annotations

import numbers

from ..core.ops import conv as _cv
from ..core.ops import conv_nd as _cnd
from ..core.ops.conv_nd import conv1d, conv3d, conv3d_transpose, conv_transpose2d
from ..core.primitive import Primitive
from ..core.primitive import apply as _apply


def _positive(who, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ValueError(f"For '{who}', '{name}' must be a positive int, got {v!r}")
    return int(v)


def _mode_one(who, mode):
    if mode != 1:
        raise ValueError(f"For '{who}', 'mode' must be 1 (the only convolution mode MindSpore "
                         f"has), got {mode!r}")


def _pad_mode(who, pad_mode, pads):
    if not isinstance(pad_mode, str) or pad_mode.lower() not in _cv.PAD_MODES:
        raise ValueError(f"For '{who}', 'pad_mode' must be one of 'valid', 'same', 'pad', got "
                         f"{pad_mode!r}")
    if pad_mode.lower() != "pad" and any(pads):
        raise ValueError(f"For '{who}', 'pad' must be zero when 'pad_mode' is not 'pad', got "
                         f"pad={pads} with pad_mode={pad_mode!r}; pass pad_mode='pad'")
    return pad_mode.lower()


def _format(who, data_format, want):
    if data_format != want:
        raise ValueError(f"For '{who}', data_format {data_format!r} is not supported by "
                         f"minispore; use {want!r}")


def _pad6(who, pad):
    if isinstance(pad, numbers.Integral) and not isinstance(pad, bool):
        t = (int(pad),) * 6
    elif isinstance(pad, tuple) and len(pad) == 6:
        t = tuple(int(v) for v in pad)
    else:
        raise ValueError(f"For '{who}', 'pad' must be an int or a tuple of 6 ints (head, tail, "
                         f"top, bottom, left, right), got {pad!r}")
    if min(t) < 0:
        raise ValueError(f"For '{who}', 'pad' must be non-negative, got {pad!r}")
    return t


def _check_weight(who, weight, out_channel, kernel_size):
    if weight.shape[0] != out_channel:
        raise ValueError(f"For '{who}', 'w_shape[0]' must be equal to 'out_channel', but got "
                         f"'w_shape[0]': {weight.shape[0]}, 'out_channel': {out_channel}.")
    if tuple(weight.shape[2:]) != tuple(kernel_size):
        raise ValueError(f"For '{who}', the weight's kernel {tuple(weight.shape[2:])} must be "
                         f"equal to 'kernel_size' {tuple(kernel_size)}")


class Conv2D(Primitive):
    """`Conv2D(out_channel, kernel_size, mode=1, pad_mode='valid', pad=0, stride=1, dilation=1,
    group=1, data_format='NCHW')(x, weight)`: the 2-D convolution of (N, C, H, W) with weight
    (out_channel, C / group, *kernel_size); pad an int or (top, bottom, left, right)."""

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        who = self.name = "Conv2D"
        self.out_channel = _positive(who, "out_channel", out_channel)
        self.kernel_size = _cv.pair(who, "kernel_size", kernel_size)
        _mode_one(who, mode)
        self.pad = _cv.pad4(who, pad)
        self.pad_mode = _pad_mode(who, pad_mode, self.pad)
        self.stride = _cv.pair(who, "stride", stride)
        self.dilation = _cv.pair(who, "dilation", dilation)
        self.group = _positive(who, "group", group)
        _format(who, data_format, "NCHW")

    def __call__(self, x, weight):
        _check_weight(self.name, weight, self.out_channel, self.kernel_size)
        return _apply(_cv.CONV2D, x, weight, stride=self.stride, pad_mode=self.pad_mode,
                      pad=self.pad, dilation=self.dilation, group=self.group)


class Conv2DBackpropInput(Primitive):
    """`Conv2DBackpropInput(out_channel, kernel_size, pad_mode='valid', pad=0, pad_list=None,
    mode=1, stride=1, dilation=1, group=1, data_format='NCHW')(dout, weight, input_size)`: the
    gradient of Conv2D with respect to its input of shape input_size (a tuple of 4 ints);
    weight (C_out, C_in / group, kh, kw). out_channel is not checked against the weight
    (MindSpore does not check it either)."""

    def __init__(self, out_channel, kernel_size, pad_mode="valid", pad=0, pad_list=None, mode=1,
                 stride=1, dilation=1, group=1, data_format="NCHW"):
        who = self.name = type(self).__name__
        self.out_channel = _positive(who, "out_channel", out_channel)
        self.kernel_size = _cv.pair(who, "kernel_size", kernel_size)
        self.pad = _cv.pad4(who, pad)
        self.pad_mode = _pad_mode(who, pad_mode, self.pad)
        if pad_list is not None:
            raise NotImplementedError(f"For '{who}', pad_list={pad_list!r} is not supported by "
                                      f"minispore; pass the padding as pad with pad_mode='pad'")
        _mode_one(who, mode)
        self.stride = _cv.pair(who, "stride", stride)
        self.dilation = _cv.pair(who, "dilation", dilation)
        self.group = _positive(who, "group", group)
        _format(who, data_format, "NCHW")

    def __call__(self, dout, weight, input_size):
        if not (isinstance(input_size, (tuple, list)) and len(input_size) == 4 and all(
                isinstance(v, numbers.Integral) for v in input_size)):
            raise TypeError(f"For '{self.name}', 'input_size' must be a tuple of 4 ints (N, C, "
                            f"H, W), got {input_size!r}")
        if tuple(weight.shape[2:]) != self.kernel_size:
            raise ValueError(f"For '{self.name}', the weight's kernel {tuple(weight.shape[2:])} "
                             f"must be equal to 'kernel_size' {self.kernel_size}")
        return _apply(_cv.CONV2D_BACKPROP_INPUT, dout, weight,
                      input_shape=tuple(int(v) for v in input_size), stride=self.stride,
                      pad_mode=self.pad_mode, pad=self.pad, dilation=self.dilation,
                      group=self.group)


class Conv2DTranspose(Conv2DBackpropInput):
    """`Conv2DTranspose(...)(dout, weight, input_size)`: Conv2DBackpropInput under its
    transposed-convolution name (the same arguments)."""


class Conv3D(Primitive):
    """`Conv3D(out_channel, kernel_size, mode=1, pad_mode='valid', pad=0, stride=1, dilation=1,
    group=1, data_format='NCDHW')(x, weight)`: the 3-D convolution of (N, C, D, H, W); pad an
    int or (head, tail, top, bottom, left, right)."""

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCDHW"):
        who = self.name = "Conv3D"
        self.out_channel = _positive(who, "out_channel", out_channel)
        self.kernel_size = _cnd.int_tuple(who, "kernel_size", kernel_size, 3)
        _mode_one(who, mode)
        self.pad = _pad6(who, pad)
        self.pad_mode = _pad_mode(who, pad_mode, self.pad)
        self.stride = _cnd.int_tuple(who, "stride", stride, 3)
        self.dilation = _cnd.int_tuple(who, "dilation", dilation, 3)
        self.group = _positive(who, "group", group)
        _format(who, data_format, "NCDHW")

    def __call__(self, x, weight):
        _check_weight(self.name, weight, self.out_channel, self.kernel_size)
        return _apply(_cnd.CONV3D, x, weight, stride=self.stride, pad_mode=self.pad_mode,
                      pad=self.pad, dilation=self.dilation, group=self.group)


class Conv3DTranspose(Primitive):
    """`Conv3DTranspose(in_channel, out_channel, kernel_size, mode=1, pad_mode='valid', pad=0,
    stride=1, dilation=1, group=1, output_padding=0, data_format='NCDHW')(dout, weight)`: the
    3-D transposed convolution (ops.conv3d_transpose); weight (C_in, C_out / group, kd, kh,
    kw). in_channel is not checked against the input (MindSpore does not check it either)."""

    def __init__(self, in_channel, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0,
                 stride=1, dilation=1, group=1, output_padding=0, data_format="NCDHW"):
        who = self.name = "Conv3DTranspose"
        self.in_channel = _positive(who, "in_channel", in_channel)
        self.out_channel = _positive(who, "out_channel", out_channel)
        self.kernel_size = _cnd.int_tuple(who, "kernel_size", kernel_size, 3)
        _mode_one(who, mode)
        self.pad = _pad6(who, pad)
        self.pad_mode = _pad_mode(who, pad_mode, self.pad)
        self.stride = _cnd.int_tuple(who, "stride", stride, 3)
        self.dilation = _cnd.int_tuple(who, "dilation", dilation, 3)
        self.group = _positive(who, "group", group)
        if self.out_channel % self.group or self.group > self.out_channel:
            raise ValueError(f"For '{who}', 'group' {group} must divide 'out_channel' "
                             f"{out_channel}")
        self.output_padding = _cnd.int_tuple(who, "output_padding", output_padding, 3, low=0)
        _cnd.check_output_padding(who, self.output_padding, self.stride, self.dilation,
                                  self.pad_mode)
        _format(who, data_format, "NCDHW")

    def __call__(self, dout, weight):
        if tuple(weight.shape[2:]) != self.kernel_size:
            raise ValueError(f"For '{self.name}', the weight's kernel {tuple(weight.shape[2:])} "
                             f"must be equal to 'kernel_size' {self.kernel_size}")
        return conv3d_transpose(dout, weight, self.pad_mode, self.pad, self.stride,
                                self.dilation, self.group, self.output_padding)


__all__ = ["conv1d", "conv3d", "conv3d_transpose", "conv_transpose2d", "Conv2D",
           "Conv2DBackpropInput", "Conv2DTranspose", "Conv3D", "Conv3DTranspose"]
