"""Pooling and padding of mint.nn.functional (PyTorch's signatures and rules) over the pooling
op declarations, slicing, concat and gather: max_pool2d, avg_pool2d, avg_pool1d, adaptive
average/max pooling and pad ('constant', 'reflect', 'replicate', 'circular'). Pooling with
dilation, ceil_mode or return_indices is the window-pool composites of core/ops/pool_nd.py
(PyTorch's ceil_mode window and divisor rules are theirs); without, it is the 2-D pooling op.
The adaptive pools are pool_nd's adaptive composites (PyTorch's bins are MindSpore's); pad is
core/ops/resample.py's pad composite, which ops.pad and nn.Pad run too."""
from __future__ import annotations

import numbers

from ...core.ops import array as _a
from ...core.ops import conv as _cv
from ...core.ops import pool_nd as _pn
from ...core.ops import resample as _rs


def _no(who, what, value, default):
    if value is not default and value != default:
        raise NotImplementedError(f"{who}: {what}={value!r} is not supported by minispore; use "
                                  f"the default {what}={default!r}")


def _as4d(who, x, fn):
    """fn over a 4-D (N, C, H, W) view of x, which may also be (C, H, W)."""
    if len(x.shape) == 3:
        return _a.squeeze(fn(_a.expand_dims(x, 0)), 0)
    if len(x.shape) != 4:
        raise ValueError(f"{who}: the input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape "
                         f"{tuple(x.shape)}")
    return fn(x)


def _pads(who, padding, k):
    if isinstance(padding, (tuple, list)) and len(padding) != 2:
        raise TypeError(f"{who}: padding must be an int or a pair of ints, got {padding!r}")
    p = _cv.pad4(who, padding)
    if p[0] * 2 > k[0] or p[2] * 2 > k[1]:
        raise ValueError(f"{who}: padding={padding!r} must be at most half of kernel_size={k}")
    return p


def _out_len(who, n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length (ceil_mode: the last window starts inside the input or
    its left padding)."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    if out <= 0:
        raise ValueError(f"{who}: the window (kernel {k}, dilation {d}) does not fit an input "
                         f"of size {n} with padding {p}")
    return out


def _max_window(x, k, s, p, d, ceil_mode, return_indices):
    """max pooling with dilation / ceil_mode / indices: pool_nd's window max (the first maximum
    of each window, its gradient there only, as PyTorch's), with its flat index h * W + w."""
    h, w = x.shape[2], x.shape[3]
    for n, kk, ss, pp, dd in ((h, k[0], s[0], p[0], d[0]), (w, k[1], s[1], p[1], d[1])):
        _out_len("max_pool2d", n, kk, ss, pp, dd, ceil_mode)      # PyTorch's size check
    pads, _ = _pn.window_geometry("max_pool2d", (h, w), k, s, d, "pad",
                                  (p[0], p[0], p[1], p[1]), ceil_mode)
    return _pn.max_pool_nd(x, k, s, d, pads, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum of each window (stride defaults to kernel_size; padding pads -inf);
    return_indices also gives each maximum's flat index h * W + w (int64), as PyTorch."""
    k = _cv.pair("max_pool2d", "kernel_size", kernel_size)
    s = k if stride is None else _cv.pair("max_pool2d", "stride", stride)
    p = _pads("max_pool2d", padding, k)
    dl = _cv.pair("max_pool2d", "dilation", dilation)
    if not isinstance(ceil_mode, bool) or not isinstance(return_indices, bool):
        raise TypeError("max_pool2d: ceil_mode and return_indices must be bools")
    if dl == (1, 1) and not ceil_mode and not return_indices:
        return _as4d("max_pool2d", input, lambda x: _cv.max_pool2d(x, k, s, p, pad_mode="pad"))
    pp = (p[0], p[2])
    if not return_indices:
        return _as4d("max_pool2d", input, lambda x: _max_window(x, k, s, pp, dl, ceil_mode, False))
    if len(input.shape) == 3:
        y, i = _max_window(_a.expand_dims(input, 0), k, s, pp, dl, ceil_mode, True)
        return _a.squeeze(y, 0), _a.squeeze(i, 0)
    _as4d("max_pool2d", input, lambda x: x)                # the rank check
    return _max_window(input, k, s, pp, dl, ceil_mode, True)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool2d's partial inverse: zeros of the output size with each input value at its
    index (h * W + w, as max_pool2d(return_indices=True) gives) in its (n, c) plane. The output
    size is (H - 1) * stride - 2 * padding + kernel_size, or output_size's last two dims."""
    who = "max_unpool2d"
    if len(input.shape) not in (3, 4) or tuple(indices.shape) != tuple(input.shape):
        raise ValueError(f"{who}: input must be 3-D or 4-D and indices of its shape, got "
                         f"{tuple(input.shape)} and {tuple(indices.shape)}")
    k = _cv.pair(who, "kernel_size", kernel_size)
    s = k if stride is None else _cv.pair(who, "stride", stride)
    p = _cv.pad4(who, padding)
    h, w = input.shape[-2:]
    if output_size is None:
        out = ((h - 1) * s[0] - 2 * p[0] + k[0], (w - 1) * s[1] - 2 * p[2] + k[1])
    else:
        out = tuple(int(v) for v in tuple(output_size)[-2:])
    return _pn.max_unpool_nd(input, indices, out)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window (stride defaults to kernel_size); with padding, the padded zeros
    count unless count_include_pad=False; divisor_override divides each window's sum by it;
    ceil_mode windows past the padded input average what they cover, as PyTorch."""
    k = _cv.pair("avg_pool2d", "kernel_size", kernel_size)
    s = k if stride is None else _cv.pair("avg_pool2d", "stride", stride)
    p = _pads("avg_pool2d", padding, k)
    if not isinstance(ceil_mode, bool):
        raise TypeError(f"avg_pool2d: ceil_mode must be a bool, got {ceil_mode!r}")
    if divisor_override is not None and (
            isinstance(divisor_override, bool) or
            not isinstance(divisor_override, numbers.Integral) or divisor_override == 0):
        raise ValueError(f"avg_pool2d: divisor_override must be a non-zero int or None, got "
                         f"{divisor_override!r}")
    if ceil_mode:
        return _as4d("avg_pool2d", input, lambda x: _avg_ceil(
            x, k, s, (p[0], p[2]), bool(count_include_pad), divisor_override))
    if divisor_override is not None:
        scale = k[0] * k[1] / float(divisor_override)
        return _as4d("avg_pool2d", input, lambda x: _cv.avg_pool2d(
            x, k, s, p, count_include_pad=True, pad_mode="pad") * scale)
    return _as4d("avg_pool2d", input, lambda x: _cv.avg_pool2d(
        x, k, s, p, count_include_pad=bool(count_include_pad), pad_mode="pad"))


def _avg_ceil(x, k, s, p, count_include_pad, divisor_override):
    """ceil_mode average pooling: pool_nd's window average, whose counted padding stops at
    H + p as PyTorch's divisor does (the ceil tail is not counted)."""
    h, w = x.shape[2], x.shape[3]
    for n, kk, ss, pp in ((h, k[0], s[0], p[0]), (w, k[1], s[1], p[1])):
        _out_len("avg_pool2d", n, kk, ss, pp, 1, True)            # PyTorch's size check
    pads, counted = _pn.window_geometry("avg_pool2d", (h, w), k, s, (1, 1), "pad",
                                        (p[0], p[0], p[1], p[1]), True)
    return _pn.avg_pool_nd(x, k, s, pads, counted, count_include_pad,
                           0 if divisor_override is None else int(divisor_override))


def _one(who, what, v):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise TypeError(f"{who}: {what} must be an int or a 1-tuple, got {v!r}")
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{who}: {what} must be an int or a 1-tuple, got {v!r}")
    return int(v)


def _as1d(who, x, fn):
    """fn over a (N, C, 1, L) view of x, which is (N, C, L) or (C, L)."""
    if len(x.shape) not in (2, 3):
        raise ValueError(f"{who}: the input must be 2-D (C, L) or 3-D (N, C, L), got shape "
                         f"{tuple(x.shape)}")
    return _a.squeeze(fn(_a.expand_dims(x, -2)), -2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """avg_pool2d over a (N, C, 1, L) view of (N, C, L) or (C, L)."""
    k = _one("avg_pool1d", "kernel_size", kernel_size)
    s = k if stride is None else _one("avg_pool1d", "stride", stride)
    p = _one("avg_pool1d", "padding", padding)
    if p * 2 > k:
        raise ValueError(f"avg_pool1d: padding={padding!r} must be at most half of kernel_size="
                         f"{k}")
    return _as1d("avg_pool1d", input, lambda x: avg_pool2d(
        x, (1, k), (1, s), (0, p), ceil_mode, bool(count_include_pad)))


def _adaptive_max_nd(who, input, output_size, n, return_indices):
    """Adaptive max pooling of the last n (1 or 2) axes (pool_nd's: each bin's first maximum in
    row-major order, PyTorch's); with return_indices, each maximum's flat index h * W + w
    (int64) in the input plane."""
    if not isinstance(return_indices, bool):
        raise TypeError(f"{who}: return_indices must be a bool, got {return_indices!r}")
    if len(input.shape) not in (n + 1, n + 2):
        raise ValueError(f"{who}: the input must be {n + 1}-D or {n + 2}-D, got shape "
                         f"{tuple(input.shape)}")
    return _pn.adaptive_max_pool_nd(input, _sizes(who, input, output_size, n), return_indices)


def _sizes(who, input, output_size, n):
    """output_size as n ints, None keeping the input's size."""
    dims = tuple(input.shape[len(input.shape) - n:])
    return tuple(d if o is None else o for o, d in zip(_out_size(who, output_size, n), dims))


def _out_size(who, output_size, n):
    out = []
    sizes = (output_size,) * n if isinstance(output_size, numbers.Integral) else output_size
    if not isinstance(sizes, (tuple, list)) or len(sizes) != n:
        raise TypeError(f"{who}: output_size must be an int or a tuple of {n}, got "
                        f"{output_size!r}")
    for v in sizes:
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)
                              or v <= 0):
            raise ValueError(f"{who}: output_size entries must be positive ints or None, got "
                             f"{output_size!r}")
        out.append(v)
    return out


def adaptive_avg_pool2d(input, output_size):
    """Means over PyTorch's adaptive bins of the last two axes (None keeps an axis's size)."""
    return _adaptive_nd("adaptive_avg_pool2d", input, output_size, 2)


def _adaptive_nd(who, input, output_size, n):
    if len(input.shape) not in (n + 1, n + 2):
        raise ValueError(f"{who}: the input must be {n + 1}-D or {n + 2}-D, got shape "
                         f"{tuple(input.shape)}")
    return _pn.adaptive_avg_pool_nd(input, _sizes(who, input, output_size, n))


def adaptive_avg_pool3d(input, output_size):
    """Means over PyTorch's adaptive bins of the last three axes (None keeps an axis)."""
    return _adaptive_nd("adaptive_avg_pool3d", input, output_size, 3)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maxima over PyTorch's adaptive bins of the last two axes (None keeps an axis); with
    return_indices also their flat indices h * W + w (int64)."""
    return _adaptive_max_nd("adaptive_max_pool2d", input, output_size, 2, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max_nd("adaptive_max_pool1d", input, output_size, 1, return_indices)


def adaptive_avg_pool1d(input, output_size):
    if len(input.shape) not in (2, 3):
        raise ValueError(f"adaptive_avg_pool1d: the input must be 2-D or 3-D, got shape "
                         f"{tuple(input.shape)}")
    return _adaptive_nd("adaptive_avg_pool1d", input, output_size, 1)


_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """PyTorch's F.pad: `pad` = (left, right) of the last axis, then of the one before, ...;
    'constant' fills with value (0 by default; negative pads crop), 'reflect' mirrors without
    the edge, 'replicate' repeats the edge, 'circular' wraps around."""
    if not isinstance(pad, (tuple, list)) or len(pad) % 2 or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in pad):
        raise TypeError(f"pad: pad must be a tuple of an even number of ints, got {pad!r}")
    nd = len(input.shape)
    if len(pad) // 2 > nd:
        raise ValueError(f"pad: {len(pad) // 2} padded dims for an input of rank {nd}")
    if mode not in _MODES:
        raise ValueError(f"pad: mode must be one of {_MODES}, got {mode!r}")
    if mode != "constant" and value is not None:
        raise ValueError(f"pad: value={value!r} is only used with mode='constant'")
    fill = 0 if value is None else value
    if mode != "constant" and min(pad, default=0) < 0:
        raise ValueError(f"pad: mode={mode!r} needs non-negative pads, got {pad!r}")
    return _rs.pad_nd(input, tuple(pad), mode, fill)
