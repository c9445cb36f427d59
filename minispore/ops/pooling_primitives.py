"""mindspore.ops' pooling Primitive classes: AvgPool, MaxPool, AvgPool3D, MaxPool3D,
MaxPoolWithArgmaxV2, MaxPool3DWithArgmax, MaxUnpool2D/3D, AdaptiveAvgPool2D/3D and
AdaptiveMaxPool2D/3D, views of ops/pooling_norm.py's functions and core/ops/pool_nd.py's
composites (ops/pooling_norm.py re-exports them, so `ops.AvgPool3D` finds them)."""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.ops import conv as _cv
from ..core.ops import math as _m
from ..core.primitive import Primitive
from .pooling_norm import (_half_kernel, _unpool, adaptive_avg_pool2d, adaptive_avg_pool3d,
                           adaptive_max_pool2d, adaptive_max_pool3d, avg_pool_window,
                           check_bool, check_pad_sums, check_rank, ints, max_pool_window,
                           pads3d, _divisor)

__all__ = ["AdaptiveAvgPool2D", "AdaptiveAvgPool3D", "AdaptiveMaxPool2D", "AdaptiveMaxPool3D",
           "AvgPool", "MaxPool", "AvgPool3D", "MaxPool3D", "MaxPoolWithArgmaxV2",
           "MaxPool3DWithArgmax", "MaxUnpool2D", "MaxUnpool3D"]


class _Prim(Primitive):
    """A MindSpore Primitive class over a function of this module."""

    def __repr__(self) -> str:
        return f"Prim[{self.name}]"


def _pad_mode(who, pad_mode, allowed=("VALID", "SAME", "PAD")):
    if not isinstance(pad_mode, str) or pad_mode.upper() not in allowed:
        raise ValueError(f"{who}: pad_mode must be one of {allowed} (either case), got "
                         f"{pad_mode!r}")
    return pad_mode.lower()


def _nchw(who, data_format, want="NCHW"):
    if data_format != want:
        raise ValueError(f"{who}: data_format={data_format!r} is not supported; use {want!r}")


class AvgPool(_Prim):
    """`AvgPool(kernel_size, strides, pad_mode)(x)` on (N, C, H, W); with 'same' each window
    averages its real (unpadded) elements."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", data_format="NCHW"):
        self.name = "AvgPool"
        self.kernel_size = _cv.pair(self.name, "kernel_size", kernel_size)
        self.strides = _cv.pair(self.name, "strides", strides)
        self.pad_mode = _pad_mode(self.name, pad_mode, ("VALID", "SAME"))
        _nchw(self.name, data_format)

    def __call__(self, x):
        return _cv.avg_pool2d(x, self.kernel_size, self.strides, 0, count_include_pad=False,
                              pad_mode=self.pad_mode)


class MaxPool(_Prim):
    """`MaxPool(kernel_size, strides, pad_mode)(x)` on (N, C, H, W)."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        self.name = "MaxPool"
        self.kernel_size = _cv.pair(self.name, "kernel_size", kernel_size)
        self.strides = _cv.pair(self.name, "strides", strides)
        self.pad_mode = _pad_mode(self.name, pad_mode, ("VALID", "SAME"))
        _nchw(self.name, data_format)

    def __call__(self, x):
        return _cv.max_pool2d(x, self.kernel_size, self.strides, 0, pad_mode=self.pad_mode)


def _kernel3d(who, what, v):
    """An int, a 3-tuple or MindSpore's 5-tuple (1, 1, d, h, w)."""
    if isinstance(v, (tuple, list)) and len(v) == 5:
        v = tuple(v[2:])
    return ints(who, what, v, 3)


class AvgPool3D(_Prim):
    """`AvgPool3D(kernel_size, strides, pad_mode, pad, ceil_mode, count_include_pad,
    divisor_override)(x)` on (N, C, D, H, W); pad: an int or (front, back, top, bottom, left,
    right), with pad_mode 'pad'; ceil_mode applies with 'valid' too ('same' ignores it)."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", pad=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=0, data_format="NCDHW"):
        who = self.name = "AvgPool3D"
        self.kernel_size = _kernel3d(who, "kernel_size", kernel_size)
        self.strides = _kernel3d(who, "strides", strides)
        self.pad_mode = _pad_mode(who, pad_mode)
        self.pad = pads3d(who, pad)
        if self.pad_mode != "pad" and any(self.pad):
            raise ValueError(f"{who}: pad={pad!r} needs pad_mode='pad', got {pad_mode!r}")
        check_pad_sums(who, self.pad, self.kernel_size)
        self.ceil_mode = check_bool(who, "ceil_mode", ceil_mode)
        self.count_include_pad = check_bool(who, "count_include_pad", count_include_pad)
        self.divisor_override = _divisor(who, divisor_override)
        _nchw(who, data_format, "NCDHW")

    def __call__(self, x):
        check_rank(self.name, x, (5,), "(N, C, D, H, W)")
        return avg_pool_window(self.name, x, 3, self.kernel_size, self.strides, self.pad_mode,
                               self.pad, self.ceil_mode, self.count_include_pad,
                               self.divisor_override)


class MaxPool3D(_Prim):
    """`MaxPool3D(kernel_size, strides, pad_mode, pad_list, ceil_mode)(x)` on (N, C, D, H, W);
    pad_list: an int or (front, back, top, bottom, left, right), with pad_mode 'pad'."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", pad_list=0, ceil_mode=None,
                 data_format="NCDHW"):
        who = self.name = "MaxPool3D"
        self.kernel_size = _kernel3d(who, "kernel_size", kernel_size)
        self.strides = _kernel3d(who, "strides", strides)
        self.pad_mode = _pad_mode(who, pad_mode)
        self.pad_list = pads3d(who, pad_list)
        if self.pad_mode != "pad" and any(self.pad_list):
            raise ValueError(f"{who}: pad_list={pad_list!r} needs pad_mode='pad', got "
                             f"{pad_mode!r}")
        check_pad_sums(who, self.pad_list, self.kernel_size)
        if ceil_mode is not None:
            check_bool(who, "ceil_mode", ceil_mode)
            if self.pad_mode != "pad":
                raise ValueError(f"{who}: ceil_mode={ceil_mode!r} needs pad_mode='pad'; with "
                                 f"'valid' or 'same' MindSpore takes only ceil_mode=None")
        self.ceil_mode = bool(ceil_mode)
        _nchw(who, data_format, "NCDHW")

    def __call__(self, x):
        check_rank(self.name, x, (5,), "(N, C, D, H, W)")
        return max_pool_window(self.name, x, 3, self.kernel_size, self.strides, self.pad_mode,
                               self.pad_list, (1, 1, 1), self.ceil_mode, False)


def _argmax_dtype(who, argmax_type):
    d = _dt.to_dtype(argmax_type)
    if d not in (_dt.int32, _dt.int64):
        raise TypeError(f"{who}: argmax_type must be mindspore.int32 or mindspore.int64, got "
                        f"{argmax_type!r}")
    return d


class MaxPoolWithArgmaxV2(_Prim):
    """`MaxPoolWithArgmaxV2(kernel_size, strides, pads, dilation, ceil_mode, argmax_type)(x)`
    on (N, C, H, W) -> (y, argmax): pads (both sides, at most half the kernel) of -inf,
    argmax the flat index h * W + w of each window's first maximum."""

    def __init__(self, kernel_size, strides=None, pads=0, dilation=(1, 1), ceil_mode=False,
                 argmax_type=_dt.int64):
        who = self.name = "MaxPoolWithArgmaxV2"
        self.kernel_size = ints(who, "kernel_size", kernel_size, 2)
        self.strides = self.kernel_size if strides is None else ints(who, "strides", strides, 2)
        ph, pw = ints(who, "pads", pads, 2, 0)
        self.pads = (ph, ph, pw, pw)
        _half_kernel(who, self.pads, self.kernel_size)
        self.dilation = ints(who, "dilation", dilation, 2)
        self.ceil_mode = check_bool(who, "ceil_mode", ceil_mode)
        self.argmax_type = _argmax_dtype(who, argmax_type)

    def __call__(self, x):
        check_rank(self.name, x, (4,), "(N, C, H, W)")
        y, i = max_pool_window(self.name, x, 2, self.kernel_size, self.strides, "pad",
                               self.pads, self.dilation, self.ceil_mode, True)
        return y, _m.cast(i, self.argmax_type)


class MaxPool3DWithArgmax(_Prim):
    """`MaxPool3DWithArgmax(ksize, strides, pads, dilation, ceil_mode, argmax_type)(x)` on
    (N, C, D, H, W) -> (y, argmax): ops.max_pool3d with indices d * H * W + h * W + w."""

    def __init__(self, ksize, strides, pads, dilation=(1, 1, 1), ceil_mode=False,
                 data_format="NCDHW", argmax_type=_dt.int64):
        who = self.name = "MaxPool3DWithArgmax"
        self.ksize = _kernel3d(who, "ksize", ksize)
        self.strides = _kernel3d(who, "strides", strides)
        self.pads = pads3d(who, pads)
        _half_kernel(who, self.pads, self.ksize)
        self.dilation = _kernel3d(who, "dilation", dilation)
        self.ceil_mode = check_bool(who, "ceil_mode", ceil_mode)
        _nchw(who, data_format, "NCDHW")
        self.argmax_type = _argmax_dtype(who, argmax_type)

    def __call__(self, x):
        check_rank(self.name, x, (5,), "(N, C, D, H, W)")
        y, i = max_pool_window(self.name, x, 3, self.ksize, self.strides, "pad", self.pads,
                               self.dilation, self.ceil_mode, True)
        return y, _m.cast(i, self.argmax_type)


class AdaptiveAvgPool2D(_Prim):
    """`AdaptiveAvgPool2D(output_size)(x)`: ops.adaptive_avg_pool2d."""

    def __init__(self, output_size):
        self.name = "AdaptiveAvgPool2D"
        self.output_size = output_size

    def __call__(self, x):
        return adaptive_avg_pool2d(x, self.output_size)


class AdaptiveAvgPool3D(_Prim):
    """`AdaptiveAvgPool3D(output_size)(x)`: ops.adaptive_avg_pool3d."""

    def __init__(self, output_size):
        self.name = "AdaptiveAvgPool3D"
        self.output_size = output_size

    def __call__(self, x):
        return adaptive_avg_pool3d(x, self.output_size)


class AdaptiveMaxPool2D(_Prim):
    """`AdaptiveMaxPool2D(output_size)(x)` -> (y, argmax int64), as MindSpore's: both
    outputs always; output_size entries must be ints (MindSpore's primitive refuses None)."""

    def __init__(self, output_size):
        self.name = "AdaptiveMaxPool2D"
        sizes = (output_size,) * 2 if isinstance(output_size, numbers.Integral) else output_size
        if not isinstance(sizes, (tuple, list)) or len(sizes) != 2 or any(
                isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in sizes):
            raise TypeError(f"AdaptiveMaxPool2D: output_size must be an int or a tuple of 2 "
                            f"ints, got {output_size!r}; ops.adaptive_max_pool2d accepts None")
        self.output_size = tuple(int(v) for v in sizes)

    def __call__(self, x):
        return adaptive_max_pool2d(x, self.output_size, True)


class AdaptiveMaxPool3D(_Prim):
    """`AdaptiveMaxPool3D()(x, output_size)` -> (y, argmax int32); output_size a tuple or a
    Tensor of 3 ints, as MindSpore's."""

    def __init__(self):
        self.name = "AdaptiveMaxPool3D"

    def __call__(self, x, output_size):
        if hasattr(output_size, "asnumpy"):
            output_size = tuple(int(v) for v in output_size.asnumpy().reshape(-1))
        return adaptive_max_pool3d(x, output_size, True)


class _MaxUnpool(_Prim):
    """`MaxUnpool{n}D(ksize, strides=0, pads=0, output_shape=())(x, argmax)`: strides 0 means
    ksize; output_shape () the default size, else the full output shape."""
    n = 2
    layout = "NCHW"

    def __init__(self, ksize, strides=0, pads=0, output_shape=(), data_format=None):
        who = self.name = type(self).__name__
        self.ksize = ints(who, "ksize", ksize, self.n)
        self.strides = self.ksize if strides in (0, (0,) * self.n) else \
            ints(who, "strides", strides, self.n)
        self.pads = ints(who, "pads", pads, self.n, 0)
        self.output_shape = tuple(output_shape)
        _nchw(who, data_format or self.layout, self.layout)

    def __call__(self, x, argmax):
        check_rank(self.name, x, (self.n + 2,), f"({self.layout})")
        return _unpool(self.name, x, argmax, self.n, self.ksize, self.strides, self.pads,
                       self.output_shape or None)


class MaxUnpool2D(_MaxUnpool):
    __doc__ = _MaxUnpool.__doc__.replace("{n}", "2")

    def __init__(self, ksize, strides=0, pads=0, output_shape=(), data_format="NCHW"):
        super().__init__(ksize, strides, pads, output_shape, data_format)


class MaxUnpool3D(_MaxUnpool):
    __doc__ = _MaxUnpool.__doc__.replace("{n}", "3")
    n = 3
    layout = "NCDHW"

    def __init__(self, ksize, strides=0, pads=0, output_shape=(), data_format="NCDHW"):
        super().__init__(ksize, strides, pads, output_shape, data_format)
