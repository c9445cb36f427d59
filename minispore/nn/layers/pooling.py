"""Pooling Cells beyond MaxPool2d/AvgPool2d: nn.MaxPool1d, nn.AvgPool1d, nn.MaxPool3d,
nn.AvgPool3d, the power-average pools nn.LPPool1d/2d, nn.MaxUnpool1d/2d/3d and the adaptive
pools nn.AdaptiveAvgPool1d/2d/3d, nn.AdaptiveMaxPool1d/2d/3d
(MindSpore 2.x names, arguments, defaults and rules).

As in MindSpore, a 1-D pool with pad_mode 'valid' or 'same' is the 2-D pool of a (N, C, 1, L)
view ('same' averages only the real elements of a window), and with 'pad' (or, for AvgPool1d,
any padding, ceil_mode or count_include_pad=False) the 3-D pool's rules apply: explicit zero /
-inf padding on both sides, count_include_pad, ceil_mode, and for MaxPool1d dilation and
return_indices. A 3-D pool with pad_mode 'same' pads like the 2-D one, and AvgPool3d then
counts that padding unless count_include_pad=False; AvgPool3d also applies ceil_mode with
'valid' (the tail windows average what they cover). Indices are flat positions in the unpadded
pooled volume (int64; AdaptiveMaxPool3d's int32). Inputs may omit the batch axis.
"""
from __future__ import annotations

import numbers

from ...core.ops import array as _a
from ...core.ops import conv as _cv
from ...ops import pooling_norm as _pf
from ..cell import Cell

__all__ = ["MaxPool1d", "AvgPool1d", "MaxPool3d", "AvgPool3d", "LPPool1d", "LPPool2d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


def _pad_mode(who, pad_mode):
    if not isinstance(pad_mode, str) or pad_mode.upper() not in ("VALID", "SAME", "PAD"):
        raise ValueError(f"{who}: pad_mode must be 'valid', 'same' or 'pad' (either case), got "
                         f"{pad_mode!r}")
    return pad_mode.lower()


def _int(who, what, v, minimum=1):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{who}: '{what}' must be an int, got {v!r}")
    if v < minimum:
        raise ValueError(f"{who}: '{what}' must be an int >= {minimum}, got {v!r}")
    return int(v)


def _unbatched(x, rank, fn):
    """fn over x, with a batch axis added (and removed from every output) when x has rank - 1
    dims."""
    if len(x.shape) != rank - 1:
        return fn(x)
    out = fn(_a.expand_dims(x, 0))
    if isinstance(out, tuple):
        return tuple(_a.squeeze(o, 0) for o in out)
    return _a.squeeze(out, 0)


class _Pool1d(Cell):
    """kernel_size and stride ints (AvgPool1d, as MindSpore's, also takes 1-tuples); input
    (N, C, L) or (C, L)."""
    who = "Pool1d"
    one_tuples = False

    def __init__(self, kernel_size, stride, pad_mode):
        super().__init__()
        if self.one_tuples:
            kernel_size, stride = (v[0] if isinstance(v, tuple) and len(v) == 1 else v
                                   for v in (kernel_size, stride))
        self.kernel_size = _int(self.who, "kernel_size", kernel_size)
        self.stride = _int(self.who, "stride", stride)
        self.pad_mode = _pad_mode(self.who, pad_mode)

    def construct(self, x):
        _pf.check_rank(self.who, x, (2, 3), "(N, C, L) or (C, L)")
        return _unbatched(x, 3, self._pool)

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode.upper()}")


class MaxPool1d(_Pool1d):
    """The maximum of each window of L. padding, dilation, return_indices and ceil_mode need
    pad_mode='pad' (as MindSpore); return_indices gives (output, int64 indices into L)."""
    who = "MaxPool1d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode)
        who = self.who
        (p,) = _pf.ints(who, "padding", padding, 1, 0)
        (self.dilation,) = _pf.ints(who, "dilation", dilation, 1)
        self.return_indices = _pf.check_bool(who, "return_indices", return_indices)
        self.ceil_mode = _pf.check_bool(who, "ceil_mode", ceil_mode)
        if self.pad_mode != "pad" and (p or self.dilation != 1 or return_indices or ceil_mode):
            raise ValueError(f"{who}: padding, dilation, return_indices and ceil_mode need "
                             f"pad_mode='pad' (MindSpore's rule), got pad_mode={pad_mode!r} "
                             f"with padding={padding!r}, dilation={dilation!r}, "
                             f"return_indices={return_indices!r}, ceil_mode={ceil_mode!r}")
        if 2 * p > self.kernel_size:
            raise ValueError(f"{who}: padding={padding!r} must be at most half of kernel_size="
                             f"{kernel_size!r}")
        self.padding = p

    def _pool(self, x):
        if self.pad_mode != "pad":
            y = _cv.max_pool2d(_a.expand_dims(x, 2), (1, self.kernel_size), (1, self.stride), 0,
                               pad_mode=self.pad_mode)
            return _a.squeeze(y, 2)
        return _pf.max_pool_window(self.who, x, 1, (self.kernel_size,), (self.stride,), "pad",
                                   (self.padding,) * 2, (self.dilation,), self.ceil_mode,
                                   self.return_indices)


class AvgPool1d(_Pool1d):
    """The mean of each window of L (see the module docstring for which rule applies)."""
    who = "AvgPool1d"
    one_tuples = True

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(kernel_size, stride, pad_mode)
        who = self.who
        (self.padding,) = _pf.ints(who, "padding", padding, 1, 0)
        self.ceil_mode = _pf.check_bool(who, "ceil_mode", ceil_mode)
        self.count_include_pad = _pf.check_bool(who, "count_include_pad", count_include_pad)
        if self.padding and self.pad_mode != "pad":
            raise ValueError(f"{who}: padding={padding!r} needs pad_mode='pad', got "
                             f"pad_mode={pad_mode!r}")
        if 2 * self.padding > self.kernel_size:
            raise ValueError(f"{who}: padding={padding!r} must be at most half of kernel_size="
                             f"{kernel_size!r}")
        self._as_3d = (self.pad_mode == "pad" or self.ceil_mode or not self.count_include_pad)

    def _pool(self, x):
        if not self._as_3d:
            # the 2-D pool's rule: 'same' windows average their real elements only
            y = _cv.avg_pool2d(_a.expand_dims(x, 2), (1, self.kernel_size), (1, self.stride), 0,
                               count_include_pad=False, pad_mode=self.pad_mode)
            return _a.squeeze(y, 2)
        return _pf.avg_pool_window(self.who, x, 1, (self.kernel_size,), (self.stride,),
                                   self.pad_mode, (self.padding,) * 2, self.ceil_mode,
                                   self.count_include_pad)


class _Pool3d(Cell):
    """kernel_size and stride an int or 3 ints; input (N, C, D, H, W) or (C, D, H, W)."""
    who = "Pool3d"

    def __init__(self, kernel_size, stride, pad_mode):
        super().__init__()
        self.kernel_size = _pf.ints(self.who, "kernel_size", kernel_size, 3)
        self.stride = _pf.ints(self.who, "stride", stride, 3)
        self.pad_mode = _pad_mode(self.who, pad_mode)

    def construct(self, x):
        _pf.check_rank(self.who, x, (4, 5), "(N, C, D, H, W) or (C, D, H, W)")
        return _unbatched(x, 5, self._pool)

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode.upper()}")


def _padding3d(who, padding, pad_mode):
    p = _pf.pads3d(who, padding)
    if any(p) and pad_mode != "pad":
        raise ValueError(f"{who}: padding={padding!r} needs pad_mode='pad', got "
                         f"pad_mode={pad_mode!r}")
    return p


class MaxPool3d(_Pool3d):
    """The maximum of each (d, h, w) window; dilation and return_indices need pad_mode='pad'
    (as MindSpore); padding (an int or (d, h, w), both sides) at most half the kernel."""
    who = "MaxPool3d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode)
        who = self.who
        if isinstance(padding, (tuple, list)) and len(padding) == 6:
            raise ValueError(f"{who}: padding must be an int or a tuple of 1 or 3 ints, got "
                             f"{padding!r}")
        self.padding = _padding3d(who, padding, self.pad_mode)
        self.dilation = _pf.ints(who, "dilation", dilation, 3)
        self.return_indices = _pf.check_bool(who, "return_indices", return_indices)
        self.ceil_mode = _pf.check_bool(who, "ceil_mode", ceil_mode)
        if (self.dilation != (1, 1, 1) or return_indices) and self.pad_mode != "pad":
            raise ValueError(f"{who}: dilation and return_indices need pad_mode='pad' "
                             f"(MindSpore's rule), got pad_mode={pad_mode!r}")
        if ceil_mode and self.pad_mode != "pad":
            raise ValueError(f"{who}: ceil_mode needs pad_mode='pad', got pad_mode="
                             f"{pad_mode!r}")
        if self.pad_mode == "pad":
            for i, k in enumerate(self.kernel_size):
                if 2 * self.padding[2 * i] > k:
                    raise ValueError(f"{who}: padding={padding!r} must be at most half of "
                                     f"kernel_size={kernel_size!r}")

    def _pool(self, x):
        return _pf.max_pool_window(self.who, x, 3, self.kernel_size, self.stride, self.pad_mode,
                                   self.padding, self.dilation, self.ceil_mode,
                                   self.return_indices)


class AvgPool3d(_Pool3d):
    """The mean of each (d, h, w) window; padding an int or (d, h, w) (both sides);
    divisor_override (None or > 0) divides every window's sum; ceil_mode also applies with
    pad_mode='valid' (MindSpore's AvgPool3D; 'same' ignores it)."""
    who = "AvgPool3d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size, stride, pad_mode)
        who = self.who
        if isinstance(padding, (tuple, list)) and len(padding) == 6:
            raise ValueError(f"{who}: padding must be an int or a tuple of 1 or 3 ints, got "
                             f"{padding!r}")
        self.padding = _padding3d(who, padding, self.pad_mode)
        self.ceil_mode = _pf.check_bool(who, "ceil_mode", ceil_mode)
        self.count_include_pad = _pf.check_bool(who, "count_include_pad", count_include_pad)
        if divisor_override is not None and (
                isinstance(divisor_override, bool) or
                not isinstance(divisor_override, numbers.Integral) or divisor_override <= 0):
            raise ValueError(f"{who}: divisor_override must be None or an int > 0, got "
                             f"{divisor_override!r}")
        self.divisor_override = divisor_override
        _pf.check_pad_sums(who, self.padding, self.kernel_size)

    def _pool(self, x):
        return _pf.avg_pool_window(self.who, x, 3, self.kernel_size, self.stride, self.pad_mode,
                                   self.padding, self.ceil_mode, self.count_include_pad,
                                   self.divisor_override or 0)


class LPPool1d(Cell):
    """ops.lp_pool1d: (sum over each window of x ** norm_type) ** (1 / norm_type)."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def construct(self, x):
        return _pf.lp_pool1d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extend_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool2d(LPPool1d):
    """ops.lp_pool2d: (sum over each (h, w) window of x ** norm_type) ** (1 / norm_type)."""

    def construct(self, x):
        return _pf.lp_pool2d(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpool(Cell):
    """ops.max_unpool{n}d: construct(x, indices, output_size=None)."""
    fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def construct(self, x, indices, output_size=None):
        return type(self).fn(x, indices, self.kernel_size, self.stride, self.padding,
                             output_size)

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class MaxUnpool1d(_MaxUnpool):
    """max_pool1d's partial inverse: the values at their indices into L, zeros elsewhere."""
    fn = staticmethod(_pf.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """max_pool2d's partial inverse: the values at their indices h * W + w."""
    fn = staticmethod(_pf.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    """max_pool3d's partial inverse: the values at their indices d * H * W + h * W + w."""
    fn = staticmethod(_pf.max_unpool3d)


class _Adaptive(Cell):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extend_repr(self):
        return f"output_size={self.output_size}"


def _check_1d_size(who, output_size):
    return _int(who, "output_size", output_size)


class AdaptiveAvgPool1d(_Adaptive):
    """Means over output_size equal windows of L of (N, C, L) (L divisible by output_size,
    as MindSpore requires)."""

    def __init__(self, output_size):
        super().__init__(_check_1d_size("AdaptiveAvgPool1d", output_size))

    def construct(self, input):
        return _pf.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool1d(_Adaptive):
    """Maxima over output_size equal windows of L of (N, C, L) (L divisible by output_size)."""

    def __init__(self, output_size):
        super().__init__(_check_1d_size("AdaptiveMaxPool1d", output_size))

    def construct(self, x):
        return _pf.adaptive_max_pool1d(x, self.output_size)


class AdaptiveAvgPool2d(_Adaptive):
    """Means over the adaptive bins of (H, W); output_size an int or (h, w), None keeping an
    axis."""

    def construct(self, input):
        return _pf.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_Adaptive):
    """Means over the adaptive bins of (D, H, W); None keeps an axis."""

    def construct(self, input):
        return _pf.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool2d(_Adaptive):
    """Maxima over the adaptive bins of (H, W); return_indices also gives their flat indices
    h * W + w (int64)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = _pf.check_bool("AdaptiveMaxPool2d", "return_indices",
                                             return_indices)

    def construct(self, input):
        return _pf.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_Adaptive):
    """Maxima over the adaptive bins of (D, H, W); return_indices also gives their flat indices
    (int32, as MindSpore)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = _pf.check_bool("AdaptiveMaxPool3d", "return_indices",
                                             return_indices)

    def construct(self, input):
        return _pf.adaptive_max_pool3d(input, self.output_size, self.return_indices)
