"""mint.nn resampling, patch and channel-dropout Cells (PyTorch's names and defaults):
Upsample, UpsamplingNearest2d, UpsamplingBilinear2d (align_corners=True), PixelShuffle,
Unfold, Fold, ConvTranspose2d, Dropout2d, AdaptiveMaxPool1d/2d and AdaptiveAvgPool3d, each over
a mint.nn.functional function."""
from __future__ import annotations

import math

import numpy as np

from ...common.initializer import HeUniform, Uniform, initializer
from ...core.tensor import Parameter
from ...nn.cell import Cell
from . import functional as F
from ._resample import _ints
from .layers import _check_bool, _dtype, _pos_int


class Upsample(Cell):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)


class UpsamplingNearest2d(Cell):
    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input):
        return F.interpolate(input, self.size, self.scale_factor, "nearest")


class UpsamplingBilinear2d(Cell):
    """Bilinear resizing with align_corners=True (as PyTorch's)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input):
        return F.interpolate(input, self.size, self.scale_factor, "bilinear", True)


class PixelShuffle(Cell):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = _pos_int("PixelShuffle", "upscale_factor", upscale_factor)

    def construct(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)


class Unfold(Cell):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def construct(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Cell):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def construct(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)


class Dropout2d(Cell):
    """Zero whole channels with probability p in training; the identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        F._not_supported("Dropout2d", "inplace", inplace, False)
        pv = F._check_real("Dropout2d", "p", p)
        if not 0.0 <= pv <= 1.0:
            raise ValueError(f"Dropout2d: p must be in [0, 1], got {p}")
        self.p = pv

    def construct(self, input):
        return F.dropout2d(input, self.p, self.training)


class AdaptiveMaxPool2d(Cell):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = _check_bool("AdaptiveMaxPool2d", "return_indices", return_indices)

    def construct(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(Cell):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = _check_bool("AdaptiveMaxPool1d", "return_indices", return_indices)

    def construct(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveAvgPool3d(Cell):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class ConvTranspose2d(Cell):
    """The transposed 2-D convolution; weight (in_channels, out_channels / groups, kh, kw)
    HeUniform(negative_slope=sqrt(5)), bias Uniform(1 / sqrt(fan_in)) with fan_in = (out_channels
    / groups) * kh * kw (PyTorch's, from the weight's dim 1). construct(input, output_size=None):
    output_size (the last two dims) picks the output_padding that gives it."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 dtype=None):
        super().__init__()
        who = "ConvTranspose2d"
        if padding_mode != "zeros":
            raise ValueError(f"{who}: only padding_mode='zeros' is supported (as MindSpore's), "
                             f"got {padding_mode!r}")
        self.in_channels = _pos_int(who, "in_channels", in_channels)
        self.out_channels = _pos_int(who, "out_channels", out_channels)
        self.groups = _pos_int(who, "groups", groups)
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"{who}: in_channels={in_channels} and out_channels={out_channels} "
                             f"must be divisible by groups={groups}")
        self.kernel_size = _ints(who, "kernel_size", kernel_size, 2)
        self.stride = _ints(who, "stride", stride, 2)
        self.padding = _ints(who, "padding", padding, 2, low=0)
        self.output_padding = _ints(who, "output_padding", output_padding, 2, low=0)
        self.dilation = _ints(who, "dilation", dilation, 2)
        self.padding_mode = padding_mode
        d = _dtype(dtype)
        shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        self.weight = Parameter(initializer(HeUniform(math.sqrt(5)), shape, d), name="weight")
        self.bias = None
        if _check_bool(who, "bias", bias):
            fan_in = shape[1] * int(np.prod(self.kernel_size))
            self.bias = Parameter(initializer(Uniform(1 / math.sqrt(fan_in)),
                                              (self.out_channels,), d), name="bias")

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        want = tuple(output_size)[-2:]
        op = []
        for k, (n, s, p, dl, kk) in enumerate(zip(input.shape[-2:], self.stride, self.padding,
                                                  self.dilation, self.kernel_size)):
            smallest = (n - 1) * s - 2 * p + dl * (kk - 1) + 1
            extra = want[k] - smallest
            if not 0 <= extra < max(s, dl):
                raise ValueError(f"ConvTranspose2d: output_size {tuple(output_size)} is not "
                                 f"reachable from the input of shape {tuple(input.shape)}")
            op.append(extra)
        return tuple(op)

    def construct(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)
