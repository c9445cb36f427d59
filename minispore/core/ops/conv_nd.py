"""Convolutions other than conv2d, as composites over the conv2d declarations of conv.py, so no
backend needs a kernel for them (the simulated Ascend runs their parts as Cube ops):

- conv1d(x, w; stride, pad_mode, pad, dilation, group): (N, C, L) with (O, C / group, K), a
  conv2d over (N, C, 1, L) with a unit-height kernel.
- conv3d(x, w; ...): (N, C, D, H, W) with (O, C / group, kd, kh, kw). The depth padding is
  written into a zero tensor, each depth tap i reads the strided depth slice i * dilation ...
  of it, folds that depth into the batch and runs one conv2d with the tap's (kh, kw) kernel;
  the taps' results are summed.
- conv3d_backprop_input(dy, w; input_shape, ...): the adjoint of conv3d with respect to its
  input, i.e. the 3-D transposed convolution. Each depth tap runs conv2d_backprop_input and its
  result is scattered (strided_slice_grad) onto the depth positions that tap read.

pad_mode follows MindSpore: 'valid' no padding; 'same' output ceil(in / stride) with the odd
padding element at the end (tail/bottom/right); 'pad' explicit. conv3d's pad is (head, tail,
top, bottom, left, right), conv1d's (left, right). Gradients come from the parts (strided
slices, reshapes, transposes and the closed conv2d family), so every order differentiates.

The functions at the end are MindSpore's functional forms over these and conv2d_backprop_input
(conv1d, conv3d, conv3d_transpose) and the transposed-convolution geometry the nn Cells share.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import ShapeError
from ..primitive import Meta, apply, defop
from . import array as _a
from .conv import (CONV2D, CONV2D_BACKPROP_INPUT, PAD_MODES, _float, pads_for)
from .declare import ref_array_dtype
from .index_ops import STRIDED_SLICE, STRIDED_SLICE_GRAD


# ---------------------------------------------------------------- geometry -----------------------
def _rank(name, what, m, n, layout):
    if len(m.shape) != n:
        raise ShapeError(f"{name}: '{what}' must be {n}-D {layout}, got shape {tuple(m.shape)}")


def conv_nd_geometry(name, x_shape, w_shape, stride, pad_mode, pad, dilation, group):
    """(pads, output spatial shape) of an N-d convolution, validating channels and groups; pads
    are (before, after) per spatial axis, flattened."""
    C, O = x_shape[1], w_shape[0]
    if not isinstance(group, int) or isinstance(group, bool) or group < 1:
        raise ValueError(f"{name}: group must be a positive int, got {group!r}")
    if O % group or w_shape[1] * group != C:
        raise ShapeError(f"{name}: 'weight' of shape {tuple(w_shape)} with group={group} expects "
                         f"{w_shape[1] * group} input channels (weight.shape[1] * group) and "
                         f"C_out divisible by group, but 'input' of shape {tuple(x_shape)} has "
                         f"{C} channels; make weight (C_out, C_in / group, *kernel)")
    k, sp = tuple(w_shape[2:]), tuple(x_shape[2:])
    if len(pad) != 2 * len(sp):
        raise ValueError(f"{name}: pad must have {2 * len(sp)} values (before, after per spatial "
                         f"axis), got {tuple(pad)}")
    pads = pads_for(name, pad_mode, pad, sp, k, stride, dilation)
    if pad_mode == "valid":
        pads = (0,) * (2 * len(sp))
    out = []
    for a, (n, kk, s, d) in enumerate(zip(sp, k, stride, dilation)):
        full, ext = n + pads[2 * a] + pads[2 * a + 1], d * (kk - 1) + 1
        if ext > full:
            raise ShapeError(f"{name}: the kernel {k} (dilated extent {ext} on spatial axis {a})"
                             f" is larger than the padded input ({full}) of 'input' of shape "
                             f"{tuple(x_shape)}; use a smaller kernel, pad_mode='same', or a "
                             f"larger input")
        out.append((full - ext) // s + 1)
    return tuple(pads), tuple(out)


def int_tuple(name, what, v, n, low=1):
    """An int or a tuple of n ints (MindSpore also accepts 5-tuples (1, 1, d, h, w) for 3-D)."""
    ok = isinstance(v, (int, np.integer)) and not isinstance(v, bool)
    if ok:
        t = (int(v),) * n
    elif isinstance(v, (tuple, list)) and len(v) in (n, n + 2) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in v):
        t = tuple(int(a) for a in v[-n:])
    else:
        raise TypeError(f"{name}: '{what}' must be an int or a tuple of {n} ints, got {v!r}")
    if min(t) < low:
        raise ValueError(f"{name}: '{what}' must be >= {low}, got {v!r}")
    return t


def explicit_pads(name, pad_mode, padding, n):
    """Explicit (before, after) pads of n spatial axes from MindSpore's padding: an int (all),
    n ints (symmetric per axis) or 2 * n ints (before/after per axis)."""
    if not isinstance(pad_mode, str) or pad_mode.lower() not in PAD_MODES:
        raise ValueError(f"{name}: pad_mode must be one of 'valid', 'same', 'pad', got "
                         f"{pad_mode!r}")
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        t = (int(padding),) * (2 * n)
    elif isinstance(padding, (tuple, list)) and len(padding) in (n, 2 * n) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in padding):
        t = tuple(int(a) for a in padding)
        if len(t) == n:
            t = tuple(v for a in t for v in (a, a))
    else:
        raise TypeError(f"{name}: 'padding' must be an int or a tuple of {n} or {2 * n} ints, "
                        f"got {padding!r}")
    if min(t) < 0:
        raise ValueError(f"{name}: 'padding' must be non-negative, got {padding!r}")
    if pad_mode.lower() != "pad" and any(t):
        raise ValueError(f"{name}: padding={padding!r} needs pad_mode='pad', got pad_mode="
                         f"{pad_mode!r}; pass pad_mode='pad' or padding=0")
    return t


# ---------------------------------------------------------------- numpy references ---------------
def _ref_dtype(*arrays):
    out = dt.to_dtype(arrays[0].dtype)
    for a in arrays[1:]:
        out = dt.promote(out, dt.to_dtype(a.dtype))
    c = ref_array_dtype(out)
    return out, [np.asarray(a).astype(c) for a in arrays]


def _taps(k):
    return np.ndindex(*k)


def _window(xp, tap, d, s, o):
    sl = tuple(slice(t * dd, t * dd + ss * (oo - 1) + 1, ss) for t, dd, ss, oo in
               zip(tap, d, s, o))
    return xp[(slice(None), slice(None)) + sl]


def conv_nd_ref(x, w, stride, pad_mode, pad, dilation, group, name="conv_nd"):
    """N-d convolution by direct accumulation over the kernel taps (an algorithm independent of
    the composites' depth/height folding)."""
    out, (x, w) = _ref_dtype(x, w)
    pads, o = conv_nd_geometry(name, x.shape, w.shape, stride, pad_mode, pad, dilation, group)
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(zip(pads[::2], pads[1::2])))
    cg, og = x.shape[1] // group, w.shape[0] // group
    r = np.zeros((x.shape[0], w.shape[0]) + o, x.dtype)
    for g in range(group):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og]
        for tap in _taps(w.shape[2:]):
            r[:, g * og:(g + 1) * og] += np.einsum(
                "nc...,oc->no...", _window(xs, tap, dilation, stride, o),
                ws[(slice(None), slice(None)) + tap])
    return r.astype(out.np)


def conv_nd_backprop_input_ref(dy, w, input_shape, stride, pad_mode, pad, dilation, group,
                               name="conv_nd_backprop_input"):
    out, (dy, w) = _ref_dtype(dy, w)
    pads, o = conv_nd_geometry(name, input_shape, w.shape, stride, pad_mode, pad, dilation, group)
    full = tuple(n + pads[2 * a] + pads[2 * a + 1] for a, n in enumerate(input_shape[2:]))
    dxp = np.zeros(tuple(input_shape[:2]) + full, dy.dtype)
    cg, og = input_shape[1] // group, w.shape[0] // group
    for g in range(group):
        xs, ws, ds = dxp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], dy[:, g * og:(g + 1) * og]
        for tap in _taps(w.shape[2:]):
            _window(xs, tap, dilation, stride, o)[...] += np.einsum(
                "no...,oc->nc...", ds, ws[(slice(None), slice(None)) + tap])
    crop = tuple(slice(pads[2 * a], pads[2 * a] + n) for a, n in enumerate(input_shape[2:]))
    return np.ascontiguousarray(dxp[(slice(None), slice(None)) + crop]).astype(out.np)


def _check_dout(name, dy, input_shape, w_shape, o):
    want = (input_shape[0], w_shape[0]) + tuple(o)
    if tuple(dy.shape) != want:
        raise ShapeError(f"{name}: 'dout' has shape {tuple(dy.shape)} but the convolution of an "
                         f"input of shape {tuple(input_shape)} with 'weight' of shape "
                         f"{tuple(w_shape)} gives {want}")


# ---------------------------------------------------------------- conv1d -------------------------
CONV1D_ATTRS = {"stride": 1, "pad_mode": "valid", "pad": (0, 0), "dilation": 1, "group": 1}


def _conv1d_infer(x, w, stride, pad_mode, pad, dilation, group):
    _rank("conv1d", "input", x, 3, "(N, C, L)")
    _rank("conv1d", "weight", w, 3, "(C_out, C_in / group, K)")
    _float("conv1d", ("input", x), ("weight", w))
    _, (lo,) = conv_nd_geometry("conv1d", x.shape, w.shape, (stride,), pad_mode, pad,
                                (dilation,), group)
    return Meta((x.shape[0], w.shape[0], lo), dt.promote(x.dtype, w.dtype))


def _conv1d(x, w, stride, pad_mode, pad, dilation, group):
    y = apply(CONV2D, _a.expand_dims(x, 2), _a.expand_dims(w, 2), stride=(1, stride),
              pad_mode=pad_mode, pad=(0, 0) + tuple(pad), dilation=(1, dilation), group=group)
    return _a.squeeze(y, 2)


CONV1D = defop("conv1d", infer=_conv1d_infer,
               ref=lambda x, w, stride, pad_mode, pad, dilation, group: conv_nd_ref(
                   x, w, (stride,), pad_mode, pad, (dilation,), group, "conv1d"),
               attrs=CONV1D_ATTRS, arity=2, composite=_conv1d)


# ---------------------------------------------------------------- conv3d -------------------------
CONV3D_ATTRS = {"stride": (1, 1, 1), "pad_mode": "valid", "pad": (0,) * 6,
                "dilation": (1, 1, 1), "group": 1}


def _conv3d_infer(x, w, stride, pad_mode, pad, dilation, group):
    _rank("conv3d", "input", x, 5, "(N, C, D, H, W)")
    _rank("conv3d", "weight", w, 5, "(C_out, C_in / group, kd, kh, kw)")
    _float("conv3d", ("input", x), ("weight", w))
    _, o = conv_nd_geometry("conv3d", x.shape, w.shape, stride, pad_mode, pad, dilation, group)
    return Meta((x.shape[0], w.shape[0]) + o, dt.promote(x.dtype, w.dtype))


def _slice(x, begin, end, strides):
    return apply(STRIDED_SLICE, x, begin=tuple(begin), end=tuple(end), strides=tuple(strides))


def _embed(x, shape, begin, strides):
    """A zero tensor of `shape` holding x at begin::strides (strided_slice's adjoint)."""
    end = tuple(b + s * (n - 1) + 1 for b, s, n in zip(begin, strides, x.shape))
    return apply(STRIDED_SLICE_GRAD, x, shape=tuple(shape), begin=tuple(begin), end=end,
                 strides=tuple(strides))


def _fold_depth(t):
    """(N, C, D, H, W) -> (N * D, C, H, W)."""
    n, c, d, h, w = t.shape
    return _a.reshape(_a.transpose(t, (0, 2, 1, 3, 4)), (n * d, c, h, w))


def _unfold_depth(t, n):
    """(N * D, C, H, W) -> (N, C, D, H, W)."""
    nd, c, h, w = t.shape
    return _a.transpose(_a.reshape(t, (n, nd // n, c, h, w)), (0, 2, 1, 3, 4))


def _tap_weight(w, i):
    """w[:, :, i] of (O, C, kd, kh, kw): the (O, C, kh, kw) kernel of depth tap i."""
    o, c, _, kh, kw = w.shape
    return _a.reshape(_slice(w, (0, 0, i, 0, 0), (o, c, i + 1, kh, kw), (1,) * 5),
                      (o, c, kh, kw))


def _conv3d(x, w, stride, pad_mode, pad, dilation, group):
    pads, o = conv_nd_geometry("conv3d", x.shape, w.shape, stride, pad_mode, pad, dilation,
                               group)
    n, c, d, h, wd = x.shape
    dp = d + pads[0] + pads[1]
    if pads[0] or pads[1]:
        x = _embed(x, (n, c, dp, h, wd), (0, 0, pads[0], 0, 0), (1,) * 5)
    sd, dd = stride[0], dilation[0]
    hw = {"stride": tuple(stride[1:]), "pad_mode": "pad", "pad": tuple(pads[2:]),
          "dilation": tuple(dilation[1:]), "group": group}
    total = None
    for i in range(w.shape[2]):
        tap = _slice(x, (0, 0, i * dd, 0, 0), (n, c, i * dd + sd * (o[0] - 1) + 1, h, wd),
                     (1, 1, sd, 1, 1))
        y = apply(CONV2D, _fold_depth(tap), _tap_weight(w, i), **hw)
        total = y if total is None else total + y
    return _unfold_depth(total, n)


CONV3D = defop("conv3d", infer=_conv3d_infer,
               ref=lambda x, w, **a: conv_nd_ref(x, w, name="conv3d", **a),
               attrs=CONV3D_ATTRS, arity=2, composite=_conv3d)


def _c3bpi_infer(dy, w, input_shape, stride, pad_mode, pad, dilation, group):
    name = "conv3d_backprop_input"
    _rank(name, "dout", dy, 5, "(N, C_out, D, H, W)")
    _rank(name, "weight", w, 5, "(C_out, C_in / group, kd, kh, kw)")
    _float(name, ("dout", dy), ("weight", w))
    if len(input_shape) != 5:
        raise ShapeError(f"{name}: input_shape must have 5 dims, got {tuple(input_shape)}")
    _, o = conv_nd_geometry(name, input_shape, w.shape, stride, pad_mode, pad, dilation, group)
    _check_dout(name, dy, input_shape, w.shape, o)
    return Meta(tuple(input_shape), dt.promote(dy.dtype, w.dtype))


def _conv3d_backprop_input(dy, w, input_shape, stride, pad_mode, pad, dilation, group):
    pads, o = conv_nd_geometry("conv3d_backprop_input", input_shape, w.shape, stride, pad_mode,
                               pad, dilation, group)
    n, c, d, h, wd = input_shape
    dp = d + pads[0] + pads[1]
    sd, dd = stride[0], dilation[0]
    hw = {"stride": tuple(stride[1:]), "pad_mode": "pad", "pad": tuple(pads[2:]),
          "dilation": tuple(dilation[1:]), "group": group}
    folded = _fold_depth(dy)
    total = None
    for i in range(w.shape[2]):
        y = apply(CONV2D_BACKPROP_INPUT, folded, _tap_weight(w, i),
                  input_shape=(n * o[0], c, h, wd), **hw)
        y = _embed(_unfold_depth(y, n), (n, c, dp, h, wd), (0, 0, i * dd, 0, 0),
                   (1, 1, sd, 1, 1))
        total = y if total is None else total + y
    if pads[0] or pads[1]:
        total = _slice(total, (0, 0, pads[0], 0, 0), (n, c, pads[0] + d, h, wd), (1,) * 5)
    return total


CONV3D_BACKPROP_INPUT = defop(
    "conv3d_backprop_input", infer=_c3bpi_infer,
    ref=lambda dy, w, **a: conv_nd_backprop_input_ref(dy, w, name="conv3d_backprop_input", **a),
    attrs={"input_shape": (1,) * 5, **CONV3D_ATTRS}, arity=2, composite=_conv3d_backprop_input)


# ---------------------------------------------------------------- functional forms ---------------
def _bias(out, bias, who):
    if bias is None:
        return out
    if len(bias.shape) != 1 or bias.shape[0] != out.shape[1]:
        raise ValueError(f"{who}: 'bias' must be 1-D of length {out.shape[1]} (C_out), got shape "
                         f"{tuple(bias.shape)}")
    return out + _a.reshape(bias, (1, -1) + (1,) * (len(out.shape) - 2))


def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """MindSpore's ops.conv1d: input (N, C_in, L), weight (C_out, C_in / groups, K), bias
    (C_out,); padding an int or a 1-tuple (both sides), or (left, right)."""
    who = "conv1d"
    (s,), (d,) = int_tuple(who, "stride", stride, 1), int_tuple(who, "dilation", dilation, 1)
    pads = explicit_pads(who, pad_mode, padding, 1)
    out = apply(CONV1D, input, weight, stride=s, pad_mode=pad_mode.lower(), pad=pads,
                dilation=d, group=groups)
    return _bias(out, bias, who)


def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """MindSpore's ops.conv3d: input (N, C_in, D, H, W), weight (C_out, C_in / groups, kd, kh,
    kw); padding an int, (d, h, w) (both sides) or (head, tail, top, bottom, left, right)."""
    who = "conv3d"
    out = apply(CONV3D, input, weight, stride=int_tuple(who, "stride", stride, 3),
                pad_mode=_mode(who, pad_mode), pad=explicit_pads(who, pad_mode, padding, 3),
                dilation=int_tuple(who, "dilation", dilation, 3), group=groups)
    return _bias(out, bias, who)


def _mode(who, pad_mode):
    if not isinstance(pad_mode, str) or pad_mode.lower() not in PAD_MODES:
        raise ValueError(f"{who}: pad_mode must be one of 'valid', 'same', 'pad', got "
                         f"{pad_mode!r}")
    return pad_mode.lower()


def transposed_length(pad_mode, n, k, stride, dilation, pad_total):
    """MindSpore's transposed-convolution output length (nn.Conv*Transpose): 'same' n * stride;
    'valid' n * stride + max(dilated k - stride, 0); 'pad' n * stride - pad_total + dilated k -
    stride (the `input_size` its Conv2DBackpropInput is given)."""
    ext = dilation * (k - 1) + 1
    if pad_mode == "same":
        return n * stride
    if pad_mode == "valid":
        return n * stride + max(ext - stride, 0)
    return n * stride - pad_total + ext - stride


def check_output_padding(who, output_padding, stride, dilation, pad_mode):
    """MindSpore's rule: each output_padding < max(stride, dilation) and nonzero only with
    pad_mode='pad'."""
    for o, s, d in zip(output_padding, stride, dilation):
        if o < 0 or o >= max(s, d):
            raise ValueError(f"{who}: output_padding {tuple(output_padding)} must be in [0, "
                             f"max(stride, dilation)) per axis (stride {tuple(stride)}, dilation "
                             f"{tuple(dilation)}); use a smaller output_padding")
    if pad_mode != "pad" and any(output_padding):
        raise ValueError(f"{who}: output_padding={tuple(output_padding)} needs pad_mode='pad', "
                         f"got pad_mode={pad_mode!r}")


def conv3d_transpose(inputs, weight, pad_mode="valid", padding=0, stride=1, dilation=1, group=1,
                     output_padding=0):
    """MindSpore's ops.conv3d_transpose (ops.Conv3DTranspose): inputs (N, C_in, D, H, W), weight
    (C_in, C_out / group, kd, kh, kw); output lengths as transposed_length (MindSpore's
    Conv3DTranspose gives 'valid' in * stride + max(dilated k - stride, 0) too, not the
    (in - 1) * stride + dilated k its documentation states) plus output_padding ('pad' only),
    whose planes are real outputs (the adjoint of a convolution of that larger input)."""
    who = "conv3d_transpose"
    mode = _mode(who, pad_mode)
    pads = explicit_pads(who, pad_mode, padding, 3)
    s, d = int_tuple(who, "stride", stride, 3), int_tuple(who, "dilation", dilation, 3)
    op = int_tuple(who, "output_padding", output_padding, 3, low=0)
    check_output_padding(who, op, s, d, mode)
    if len(inputs.shape) != 5 or len(weight.shape) != 5:
        raise ShapeError(f"{who}: 'inputs' and 'weight' must be 5-D, got {tuple(inputs.shape)} "
                         f"and {tuple(weight.shape)}")
    if not isinstance(group, int) or isinstance(group, bool) or group < 1:
        raise ValueError(f"{who}: group must be a positive int, got {group!r}")
    k = tuple(weight.shape[2:])
    out = tuple(transposed_length(mode, inputs.shape[2 + a], k[a], s[a], d[a],
                                  pads[2 * a] + pads[2 * a + 1]) + op[a] for a in range(3))
    shape = (inputs.shape[0], weight.shape[1] * group) + tuple(out)
    return apply(CONV3D_BACKPROP_INPUT, inputs, weight, input_shape=shape, stride=s,
                 pad_mode=mode, pad=pads, dilation=d, group=group)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """ops.conv_transpose2d / mint.nn.functional.conv_transpose2d (PyTorch's rules, as
    MindSpore documents them): input (N, C_in, H, W) or (C_in, H, W), weight (C_in, C_out /
    groups, kh, kw); padding an int or (h, w) on both sides; output per axis (in - 1) * stride
    - 2 * padding + dilation * (k - 1) + output_padding + 1, the output_padding rows being real
    outputs (unlike nn.Conv2dTranspose, which appends zeros)."""
    who = "conv_transpose2d"
    if len(input.shape) == 3:
        return _a.squeeze(conv_transpose2d(_a.expand_dims(input, 0), weight, bias, stride,
                                           padding, output_padding, groups, dilation), 0)
    if len(input.shape) != 4 or len(weight.shape) != 4:
        raise ShapeError(f"{who}: 'input' must be 3-D or 4-D and 'weight' 4-D, got "
                         f"{tuple(input.shape)} and {tuple(weight.shape)}")
    s, d = int_tuple(who, "stride", stride, 2), int_tuple(who, "dilation", dilation, 2)
    p = int_tuple(who, "padding", padding, 2, low=0)
    op = int_tuple(who, "output_padding", output_padding, 2, low=0)
    if any(o >= max(ss, dd) for o, ss, dd in zip(op, s, d)):
        raise ValueError(f"{who}: output_padding {op} must be smaller than max(stride, "
                         f"dilation) per axis (stride {s}, dilation {d})")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{who}: groups must be a positive int, got {groups!r}")
    k = tuple(weight.shape[2:])
    out = tuple((n - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1
                for n, ss, pp, dd, kk, oo in zip(input.shape[2:], s, p, d, k, op))
    shape = (input.shape[0], weight.shape[1] * groups) + out
    y = apply(CONV2D_BACKPROP_INPUT, input, weight, input_shape=shape, stride=s, pad_mode="pad",
              pad=(p[0], p[0], p[1], p[1]), dilation=d, group=groups)
    return _bias(y, bias, who)


__all__ = ["conv1d", "conv3d", "conv3d_transpose", "conv_transpose2d", "int_tuple",
           "transposed_length", "check_output_padding", "explicit_pads", "conv_nd_geometry"]
