"""Transposed convolution Cells: nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose
(MindSpore 2.x arguments, defaults, weight shapes and output shapes).

A transposed convolution is the gradient of a convolution with respect to its input: the 1-D
and 2-D Cells run conv2d_backprop_input (core/ops/conv.py), the 3-D one the conv3d_backprop_input
composite (core/ops/conv_nd.py), so their gradients come from those declarations. The weight is
(C_in, C_out / group, *kernel) (the forward convolution's (C_out, C_in / group, ...) with the
roles swapped); the default initialisers are HeUniform(sqrt(5)) and Uniform(1 / sqrt(fan_in))
with fan_in = C_out / group * prod(kernel), from the weight's own shape, as MindSpore computes it.

Output lengths are MindSpore's (nn.Conv2dTranspose's _deconv_output_length): 'same' in * stride;
'valid' in * stride + max(dilation * (k - 1) + 1 - stride, 0); 'pad' (in - 1) * stride +
dilation * (k - 1) + 1 - pad_before - pad_after. Conv2dTranspose's output_padding (pad_mode='pad'
only) then appends that many ZERO rows/columns at the bottom/right, after the bias (MindSpore pads
the result with ops.Pad); Conv3dTranspose's output_padding instead extends the transposed
convolution itself (ops.Conv3DTranspose), so those planes hold real outputs plus the bias.
"""
from __future__ import annotations

import numbers

from ...core import dtype as dt
from ...core.ops import array as _a
from ...core.ops import conv as _cv
from ...core.ops import conv_nd as _cnd
from ...core.arg_checks import check_bool
from ...core.ops.index_ops import STRIDED_SLICE_GRAD
from ...core.primitive import apply
from ..cell import Cell
from .basic import check_positive_int
from .conv import (_pad_mode, check_groups, conv_params, int_arg, mode_3d, ncdhw_only, pad6,
                   triple, weight_1d)


def _pad4_strict(who, padding):
    if isinstance(padding, tuple) and len(padding) != 4:
        raise ValueError(f"{who}: padding must be an int or a tuple of 4 ints (top, bottom, "
                         f"left, right), got {padding!r}")
    return _cv.pad4(who, padding)


def _output_padding_2d(who, output_padding):
    if isinstance(output_padding, numbers.Integral) and not isinstance(output_padding, bool):
        return (int(output_padding),) * 2
    if isinstance(output_padding, tuple) and len(output_padding) == 2 and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in output_padding):
        return tuple(int(v) for v in output_padding)
    raise TypeError(f"{who}: output_padding must be an int or a tuple of 2 ints, got "
                    f"{output_padding!r}")


class _ConvTranspose(Cell):
    """The Parameters and the shared checks of the transposed convolutions."""

    def _setup(self, who, in_channels, out_channels, kernel_size, group, has_bias, weight_init,
               bias_init, dtype):
        self.in_channels = check_positive_int(who, "in_channels", in_channels)
        self.out_channels = check_positive_int(who, "out_channels", out_channels)
        self.group = check_positive_int(who, "group", group)
        check_groups(who, self.in_channels, self.out_channels, self.group)
        self.has_bias = check_bool(who, "has_bias", has_bias)
        shape = (self.in_channels, self.out_channels // self.group) + tuple(kernel_size)
        self.weight, self.bias = conv_params(who, shape, weight_init, bias_init, self.has_bias,
                                             self.out_channels, dtype)

    def _out_hw(self, spatial, pads):
        dims = zip(spatial, self.kernel_size, self.stride, self.dilation)
        return tuple(_cnd.transposed_length(self.pad_mode, n, k, s, d,
                                            pads[2 * a] + pads[2 * a + 1])
                     for a, (n, k, s, d) in enumerate(dims))

    def _transpose2d(self, x, pads):
        """conv2d_backprop_input of the (N, C_in, H, W) input, plus the bias."""
        shape = (x.shape[0], self.out_channels) + self._out_hw(x.shape[2:], pads)
        y = apply(_cv.CONV2D_BACKPROP_INPUT, x, self.weight, input_shape=shape,
                  stride=self.stride, pad_mode=self.pad_mode, pad=pads, dilation=self.dilation,
                  group=self.group)
        if self.bias is not None:
            y = y + _a.reshape(self.bias, (1, -1, 1, 1))
        return y

    def _check_rank(self, x, n, layout):
        if len(x.shape) != n:
            raise ValueError(f"{type(self).__name__}: the input must be {n}-D {layout}, got "
                             f"shape {tuple(x.shape)}")

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}")


class Conv1dTranspose(_ConvTranspose):
    """1-D transposed convolution over (N, C_in, L); weight (C_in, C_out / group, 1,
    kernel_size). kernel_size, stride, padding (both ends) and dilation are ints."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, dtype=dt.float32):
        super().__init__()
        who = "Conv1dTranspose"
        self.kernel_size = (1, int_arg(who, "kernel_size", kernel_size))
        self.stride = (1, int_arg(who, "stride", stride))
        p = int_arg(who, "padding", padding, low=0)
        self.dilation = (1, int_arg(who, "dilation", dilation))
        self.pad_mode = _pad_mode(who, pad_mode, p)
        self.padding = (0, 0, p, p)
        self._setup(who, in_channels, out_channels, self.kernel_size, group, has_bias,
                    weight_1d(who, weight_init), bias_init, dtype)

    def construct(self, x):
        self._check_rank(x, 3, "(N, C_in, L)")
        return _a.squeeze(self._transpose2d(_a.expand_dims(x, 2), self.padding), 2)


class Conv2dTranspose(_ConvTranspose):
    """2-D transposed convolution over (N, C_in, H, W); weight (C_in, C_out / group, kh, kw).
    padding an int or (top, bottom, left, right) with pad_mode='pad'; output_padding (an int or
    (bottom, right), each < max(stride, dilation), pad_mode='pad' only) appends zero rows and
    columns to the result, as MindSpore does."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, output_padding=0, dilation=1, group=1, has_bias=False,
                 weight_init=None, bias_init=None, dtype=dt.float32):
        super().__init__()
        who = "Conv2dTranspose"
        self.kernel_size = _cv.pair(who, "kernel_size", kernel_size)
        self.stride = _cv.pair(who, "stride", stride)
        self.dilation = _cv.pair(who, "dilation", dilation)
        self._pads = _pad4_strict(who, padding)
        self.padding = padding
        self.pad_mode = _pad_mode(who, pad_mode, padding)
        self.output_padding = output_padding
        self._output_padding = _output_padding_2d(who, output_padding)
        _cnd.check_output_padding(who, self._output_padding, self.stride, self.dilation,
                                  self.pad_mode)
        self._setup(who, in_channels, out_channels, self.kernel_size, group, has_bias,
                    weight_init, bias_init, dtype)

    def construct(self, x):
        self._check_rank(x, 4, "(N, C_in, H, W)")
        y = self._transpose2d(x, self._pads)
        bottom, right = self._output_padding
        if bottom or right:
            n, c, h, w = y.shape
            y = apply(STRIDED_SLICE_GRAD, y, shape=(n, c, h + bottom, w + right),
                      begin=(0, 0, 0, 0), end=(n, c, h, w), strides=(1, 1, 1, 1))
        return y


class Conv3dTranspose(_ConvTranspose):
    """3-D transposed convolution over (N, C_in, D, H, W); weight (C_in, C_out / group, kd, kh,
    kw). padding an int or (head, tail, top, bottom, left, right) with pad_mode='pad';
    output_padding (an int or a triple, each < max(stride, dilation), pad_mode='pad' only)
    extends the output at the far end of each axis with real outputs (ops.Conv3DTranspose)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, output_padding=0, has_bias=False,
                 weight_init=None, bias_init=None, data_format="NCDHW", dtype=dt.float32):
        super().__init__()
        who = "Conv3dTranspose"
        self.kernel_size = triple(who, "kernel_size", kernel_size)
        self.stride = triple(who, "stride", stride)
        self.dilation = triple(who, "dilation", dilation)
        self.padding = padding
        self._pads = pad6(who, padding)
        self.pad_mode = mode_3d(who, pad_mode, self._pads)
        self.output_padding = triple(who, "output_padding", output_padding, low=0)
        _cnd.check_output_padding(who, self.output_padding, self.stride, self.dilation,
                                  self.pad_mode)
        ncdhw_only(who, data_format)
        self.data_format = data_format
        self._setup(who, in_channels, out_channels, self.kernel_size, group, has_bias,
                    weight_init, bias_init, dtype)

    def construct(self, x):
        self._check_rank(x, 5, "(N, C_in, D, H, W)")
        y = _cnd.conv3d_transpose(x, self.weight, self.pad_mode, self._pads, self.stride,
                                  self.dilation, self.group, self.output_padding)
        if self.bias is not None:
            y = y + _a.reshape(self.bias, (1, -1, 1, 1, 1))
        return y

    def extend_repr(self):
        return super().extend_repr() + f", format={self.data_format}"


__all__ = ["Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose"]
