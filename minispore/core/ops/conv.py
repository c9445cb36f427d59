"""2-D convolution and pooling over NCHW tensors, and their functional API.

Primitives (MindSpore's pad_mode semantics: 'valid' no padding; 'same' output ceil(in/stride) with
the extra padding row/column at the bottom/right; 'pad' explicit (top, bottom, left, right)):

- conv2d(x, w; stride, pad_mode, pad, dilation, group) and its two adjoints
  conv2d_backprop_input(dy, w; input_shape, ...) and conv2d_backprop_filter(x, dy; filter_shape,
  ...). Each one's bprop is written with the other two (and conv2d), so the family is closed under
  differentiation: grads of grads of any order work.
- max_pool2d(x; kernel_size, stride, pad_mode, pad), its gradient max_pool2d_grad(x, dy) (routes
  dy to the first maximum of each window) and max_pool2d_gather(x, g) (reads g at those maxima,
  the adjoint of max_pool2d_grad). Also closed: twice differentiable (the routing is piecewise
  constant in x, so the x-derivative of the gradient is zero, as in every framework).
- avg_pool2d(x; kernel_size, stride, pad_mode, pad, count_include_pad) and avg_pool2d_grad(dy;
  input_shape, ...), each the other's adjoint.

References shift and accumulate one kernel tap at a time (a different algorithm from the CPU
kernels' im2col + BLAS in backends/cpu/kernels_nn.py, so the two check each other).
"""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop, tracked
from .declare import ref_array_dtype

PAD_MODES = ("valid", "same", "pad")


# ---------------------------------------------------------------- geometry -----------------------
def pair(name: str, what: str, v) -> tuple:
    """An int or a pair of ints as (h, w); MindSpore also accepts a 4-tuple (1, 1, h, w)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        t = (int(v), int(v))
    elif isinstance(v, (tuple, list)) and len(v) in (2, 4) and \
            all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in v):
        t = (int(v[-2]), int(v[-1]))
    else:
        raise TypeError(f"{name}: '{what}' must be an int or a tuple of 2 ints, got {v!r}")
    if min(t) < 1:
        raise ValueError(f"{name}: '{what}' must be positive, got {v!r}")
    return t


def pad4(name: str, v) -> tuple:
    """padding as (top, bottom, left, right): an int, (h, w) or a 4-tuple."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        t = (int(v),) * 4
    elif isinstance(v, (tuple, list)) and len(v) == 2:
        t = (int(v[0]), int(v[0]), int(v[1]), int(v[1]))
    elif isinstance(v, (tuple, list)) and len(v) == 4:
        t = tuple(int(a) for a in v)
    else:
        raise TypeError(f"{name}: 'padding' must be an int or a tuple of 2 or 4 ints, got {v!r}")
    if min(t) < 0:
        raise ValueError(f"{name}: 'padding' must be non-negative, got {v!r}")
    return t


def pads_for(name: str, pad_mode: str, pad: tuple, hw: tuple, k: tuple, stride: tuple,
             dilation: tuple = (1, 1)) -> tuple:
    """(top, bottom, left, right) padding of a window op on an (H, W) image."""
    if pad_mode not in PAD_MODES:
        raise ValueError(f"{name}: pad_mode must be one of 'valid', 'same', 'pad', got "
                         f"{pad_mode!r}")
    if pad_mode == "pad":
        return tuple(pad)
    if any(pad):
        raise ValueError(f"{name}: padding {tuple(pad)} needs pad_mode='pad', got pad_mode="
                         f"{pad_mode!r}; pass pad_mode='pad' or padding=0")
    if pad_mode == "valid":
        return (0, 0, 0, 0)
    out = []
    for n, kk, s, d in zip(hw, k, stride, dilation):
        o = -(-n // s)
        need = max(0, (o - 1) * s + d * (kk - 1) + 1 - n)
        out += [need // 2, need - need // 2]
    return tuple(out)


def out_hw(name: str, x_shape: tuple, k: tuple, stride: tuple, pads: tuple,
           dilation: tuple = (1, 1)) -> tuple:
    H, W = x_shape[2] + pads[0] + pads[1], x_shape[3] + pads[2] + pads[3]
    eh, ew = dilation[0] * (k[0] - 1) + 1, dilation[1] * (k[1] - 1) + 1
    if eh > H or ew > W:
        raise ShapeError(f"{name}: the window {k} (dilated extent ({eh}, {ew})) is larger than "
                         f"the padded input ({H}, {W}) of 'input' of shape {tuple(x_shape)}; use "
                         f"a smaller kernel, pad_mode='same', or a larger image")
    return ((H - eh) // stride[0] + 1, (W - ew) // stride[1] + 1)


def _rank4(name, what, m):
    if len(m.shape) != 4:
        raise ShapeError(f"{name}: '{what}' must be 4-D (N, C, H, W), got shape {tuple(m.shape)};"
                         f" reshape it (a single image: x.reshape(1, *x.shape))")


def _float(name, *ms_):
    for what, m in ms_:
        if not m.dtype.is_float:
            raise DTypeError(f"{name}: '{what}' has dtype {m.dtype}; use a float dtype "
                             f"(x.astype(ms.float32))")


def window(xp, i, j, d, s, o):
    """The (N, C, Ho, Wo) view of padded `xp` read by kernel tap (i, j)."""
    return xp[:, :, i * d[0]: i * d[0] + s[0] * (o[0] - 1) + 1: s[0],
              j * d[1]: j * d[1] + s[1] * (o[1] - 1) + 1: s[1]]


def _padded(x, pads, value=0.0):
    return np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])),
                  constant_values=value)


# ---------------------------------------------------------------- conv2d -------------------------
CONV_ATTRS = {"stride": (1, 1), "pad_mode": "valid", "pad": (0, 0, 0, 0), "dilation": (1, 1),
              "group": 1}


def conv_geometry(name, x_shape, w_shape, stride, pad_mode, pad, dilation, group):
    """(pads, (Ho, Wo)) of a convolution, validating channels and groups."""
    C, O = x_shape[1], w_shape[0]
    if not isinstance(group, int) or group < 1:
        raise ValueError(f"{name}: group must be a positive int, got {group!r}")
    if C % group or O % group or w_shape[1] * group != C:
        raise ShapeError(f"{name}: 'weight' of shape {tuple(w_shape)} with group={group} expects "
                         f"{w_shape[1] * group} input channels (weight.shape[1] * group) and "
                         f"C_out divisible by group, but 'input' of shape {tuple(x_shape)} has "
                         f"{C} channels; make weight (C_out, C_in / group, kh, kw)")
    k = tuple(w_shape[2:])
    pads = pads_for(name, pad_mode, pad, x_shape[2:], k, stride, dilation)
    return pads, out_hw(name, x_shape, k, stride, pads, dilation)


def _conv_infer(x, w, stride, pad_mode, pad, dilation, group):
    _rank4("conv2d", "input", x)
    _rank4("conv2d", "weight", w)
    _float("conv2d", ("input", x), ("weight", w))
    _, (ho, wo) = conv_geometry("conv2d", x.shape, w.shape, stride, pad_mode, pad, dilation,
                                group)
    return Meta((x.shape[0], w.shape[0], ho, wo), dt.promote(x.dtype, w.dtype))


def _c(*arrays):
    out = dt.to_dtype(arrays[0].dtype)
    for a in arrays[1:]:
        out = dt.promote(out, dt.to_dtype(a.dtype))
    c = ref_array_dtype(out)
    return out, [a.astype(c) for a in arrays]


def _conv_ref(x, w, stride, pad_mode, pad, dilation, group):
    out, (x, w) = _c(x, w)
    pads, o = conv_geometry("conv2d", x.shape, w.shape, stride, pad_mode, pad, dilation, group)
    xp = _padded(x, pads)
    cg, og = x.shape[1] // group, w.shape[0] // group
    r = np.zeros((x.shape[0], w.shape[0]) + o, x.dtype)
    for g in range(group):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og]
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                r[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", window(xs, i, j, dilation, stride, o), ws[:, :, i, j])
    return r.astype(out.np)


def _explicit(attrs_, x_shape, w_shape):
    """The same convolution with pad_mode='pad' and explicit pads (what the adjoints take)."""
    pads, _ = conv_geometry("conv2d", x_shape, w_shape, attrs_["stride"], attrs_["pad_mode"],
                            attrs_["pad"], attrs_["dilation"], attrs_["group"])
    return {"stride": attrs_["stride"], "pad_mode": "pad", "pad": pads,
            "dilation": attrs_["dilation"], "group": attrs_["group"]}


def _conv_bprop(i, o, g, **a):
    x, w = i
    e = _explicit(a, x.shape, w.shape)
    return (apply(CONV2D_BACKPROP_INPUT, g, w, input_shape=tuple(x.shape), **e)
            if tracked(x) else None,
            apply(CONV2D_BACKPROP_FILTER, x, g, filter_shape=tuple(w.shape), **e)
            if tracked(w) else None)


CONV2D = defop("conv2d", infer=_conv_infer, ref=_conv_ref, bprop=_conv_bprop, attrs=CONV_ATTRS,
               arity=2)


def _bpi_infer(dy, w, input_shape, stride, pad_mode, pad, dilation, group):
    name = "conv2d_backprop_input"
    _rank4(name, "dout", dy)
    _rank4(name, "weight", w)
    _float(name, ("dout", dy), ("weight", w))
    if len(input_shape) != 4:
        raise ShapeError(f"{name}: input_shape must have 4 dims, got {tuple(input_shape)}")
    _, o = conv_geometry(name, input_shape, w.shape, stride, pad_mode, pad, dilation, group)
    want = (input_shape[0], w.shape[0]) + o
    if tuple(dy.shape) != want:
        raise ShapeError(f"{name}: 'dout' has shape {tuple(dy.shape)} but the convolution of an "
                         f"input of shape {tuple(input_shape)} with 'weight' of shape "
                         f"{tuple(w.shape)} gives {want}")
    return Meta(tuple(input_shape), dt.promote(dy.dtype, w.dtype))


def _bpi_ref(dy, w, input_shape, stride, pad_mode, pad, dilation, group):
    out, (dy, w) = _c(dy, w)
    pads, o = conv_geometry("conv2d_backprop_input", input_shape, w.shape, stride, pad_mode, pad,
                            dilation, group)
    N, C, H, W = input_shape
    dxp = np.zeros((N, C, H + pads[0] + pads[1], W + pads[2] + pads[3]), dy.dtype)
    cg, og = C // group, w.shape[0] // group
    for g in range(group):
        xs, ws, ds = dxp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], dy[:, g * og:(g + 1) * og]
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                window(xs, i, j, dilation, stride, o)[...] += np.einsum(
                    "nohw,oc->nchw", ds, ws[:, :, i, j])
    return np.ascontiguousarray(dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W]
                                ).astype(out.np)


def _bpi_bprop(i, o, g, input_shape, **a):
    dy, w = i
    return (apply(CONV2D, g, w, **a),
            apply(CONV2D_BACKPROP_FILTER, g, dy, filter_shape=tuple(w.shape), **a))


CONV2D_BACKPROP_INPUT = defop("conv2d_backprop_input", infer=_bpi_infer, ref=_bpi_ref,
                              bprop=_bpi_bprop, attrs={"input_shape": (1, 1, 1, 1), **CONV_ATTRS},
                              arity=2)


def _bpf_infer(x, dy, filter_shape, stride, pad_mode, pad, dilation, group):
    name = "conv2d_backprop_filter"
    _rank4(name, "input", x)
    _rank4(name, "dout", dy)
    _float(name, ("input", x), ("dout", dy))
    if len(filter_shape) != 4:
        raise ShapeError(f"{name}: filter_shape must have 4 dims, got {tuple(filter_shape)}")
    _, o = conv_geometry(name, x.shape, filter_shape, stride, pad_mode, pad, dilation, group)
    want = (x.shape[0], filter_shape[0]) + o
    if tuple(dy.shape) != want:
        raise ShapeError(f"{name}: 'dout' has shape {tuple(dy.shape)} but the convolution of "
                         f"'input' of shape {tuple(x.shape)} with a filter of shape "
                         f"{tuple(filter_shape)} gives {want}")
    return Meta(tuple(filter_shape), dt.promote(x.dtype, dy.dtype))


def _bpf_ref(x, dy, filter_shape, stride, pad_mode, pad, dilation, group):
    out, (x, dy) = _c(x, dy)
    pads, o = conv_geometry("conv2d_backprop_filter", x.shape, filter_shape, stride, pad_mode,
                            pad, dilation, group)
    xp = _padded(x, pads)
    O, cg, kh, kw = filter_shape
    og = O // group
    dw = np.zeros(tuple(filter_shape), x.dtype)
    for g in range(group):
        xs, ds = xp[:, g * cg:(g + 1) * cg], dy[:, g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                dw[g * og:(g + 1) * og, :, i, j] = np.einsum(
                    "nohw,nchw->oc", ds, window(xs, i, j, dilation, stride, o))
    return dw.astype(out.np)


def _bpf_bprop(i, o, g, filter_shape, **a):
    x, dy = i
    return (apply(CONV2D_BACKPROP_INPUT, dy, g, input_shape=tuple(x.shape), **a),
            apply(CONV2D, x, g, **a))


CONV2D_BACKPROP_FILTER = defop("conv2d_backprop_filter", infer=_bpf_infer, ref=_bpf_ref,
                               bprop=_bpf_bprop,
                               attrs={"filter_shape": (1, 1, 1, 1), **CONV_ATTRS}, arity=2)


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """MindSpore's ops.conv2d (NCHW): weight (C_out, C_in / groups, kh, kw), bias (C_out,)."""
    out = apply(CONV2D, input, weight, stride=pair("conv2d", "stride", stride),
                pad_mode=pad_mode, pad=pad4("conv2d", padding),
                dilation=pair("conv2d", "dilation", dilation), group=groups)
    if bias is not None:
        from .array import reshape
        from .math import add
        out = add(out, reshape(bias, (1, -1, 1, 1)))
    return out


# ---------------------------------------------------------------- pooling ------------------------
POOL_ATTRS = {"kernel_size": (1, 1), "stride": (1, 1), "pad_mode": "valid", "pad": (0, 0, 0, 0)}


def pool_geometry(name, x_shape, kernel_size, stride, pad_mode, pad):
    pads = pads_for(name, pad_mode, pad, x_shape[2:], kernel_size, stride)
    if max(pads[:2]) >= kernel_size[0] or max(pads[2:]) >= kernel_size[1]:
        raise ValueError(f"{name}: padding {pads} must be smaller than the kernel size "
                         f"{tuple(kernel_size)} (a window would read only padding); use less "
                         f"padding or a larger kernel")
    return pads, out_hw(name, x_shape, kernel_size, stride, pads)


def _pool_infer(name):
    def infer(x, kernel_size, stride, pad_mode, pad, **_):
        _rank4(name, "input", x)
        _float(name, ("input", x))
        _, o = pool_geometry(name, x.shape, kernel_size, stride, pad_mode, pad)
        return Meta(tuple(x.shape[:2]) + o, x.dtype)
    return infer


def _argmax_taps(x, kernel_size, stride, pad_mode, pad):
    """For each output position, the flat (i * kw + j) tap holding the window's first maximum
    (NaN counts as the maximum), with the padded input."""
    pads, o = pool_geometry("max_pool2d", x.shape, kernel_size, stride, pad_mode, pad)
    xp = _padded(x, pads, -np.inf)
    best = np.full(x.shape[:2] + o, -np.inf, x.dtype)
    arg = np.zeros(x.shape[:2] + o, np.int64)
    kh, kw = kernel_size
    for i in range(kh):
        for j in range(kw):
            v = window(xp, i, j, (1, 1), stride, o)
            take = (v > best) | (np.isnan(v) & ~np.isnan(best))
            best = np.where(take, v, best)
            arg = np.where(take, i * kw + j, arg)
    return pads, o, best, arg


def _maxpool_ref(x, kernel_size, stride, pad_mode, pad):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    best = _argmax_taps(x.astype(c), kernel_size, stride, pad_mode, pad)[2]
    return best.astype(x.dtype)


def _maxpool_bprop(i, o, g, **a):
    return (apply(MAX_POOL2D_GRAD, i[0], g, **a),)


MAX_POOL2D = defop("max_pool2d", infer=_pool_infer("max_pool2d"), ref=_maxpool_ref,
                   bprop=_maxpool_bprop, attrs=POOL_ATTRS, arity=1)


def _mpg_infer(x, dy, **a):
    o = _pool_infer("max_pool2d_grad")(x, **a)
    _float("max_pool2d_grad", ("dout", dy))
    if tuple(dy.shape) != o.shape:
        raise ShapeError(f"max_pool2d_grad: 'dout' has shape {tuple(dy.shape)}; max pooling "
                         f"'input' of shape {tuple(x.shape)} gives {o.shape}")
    return Meta(tuple(x.shape), dy.dtype)


def _mpg_ref(x, dy, kernel_size, stride, pad_mode, pad):
    c = ref_array_dtype(dt.to_dtype(dy.dtype))
    pads, o, _, arg = _argmax_taps(x.astype(c), kernel_size, stride, pad_mode, pad)
    dxp = np.zeros(x.shape[:2] + (x.shape[2] + pads[0] + pads[1], x.shape[3] + pads[2] + pads[3]),
                   c)
    kh, kw = kernel_size
    for i in range(kh):
        for j in range(kw):
            window(dxp, i, j, (1, 1), stride, o)[...] += np.where(arg == i * kw + j, dy, 0)
    H, W = x.shape[2:]
    return np.ascontiguousarray(dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W]
                                ).astype(dy.dtype)


def _mpg_bprop(i, o, g, **a):
    return None, apply(MAX_POOL2D_GATHER, i[0], g, **a)


MAX_POOL2D_GRAD = defop("max_pool2d_grad", infer=_mpg_infer, ref=_mpg_ref, bprop=_mpg_bprop,
                        attrs=POOL_ATTRS, arity=2)


def _mpgather_infer(x, g, **a):
    o = _pool_infer("max_pool2d_gather")(x, **a)
    _float("max_pool2d_gather", ("values", g))
    if tuple(g.shape) != tuple(x.shape):
        raise ShapeError(f"max_pool2d_gather: 'values' has shape {tuple(g.shape)}; it must have "
                         f"the shape of 'input' {tuple(x.shape)}")
    return Meta(o.shape, g.dtype)


def _mpgather_ref(x, g, kernel_size, stride, pad_mode, pad):
    c = ref_array_dtype(dt.to_dtype(g.dtype))
    pads, o, _, arg = _argmax_taps(x.astype(c), kernel_size, stride, pad_mode, pad)
    gp = _padded(g.astype(c), pads)
    r = np.zeros(arg.shape, c)
    kh, kw = kernel_size
    for i in range(kh):
        for j in range(kw):
            r = np.where(arg == i * kw + j, window(gp, i, j, (1, 1), stride, o), r)
    return r.astype(g.dtype)


def _mpgather_bprop(i, o, g, **a):
    return None, apply(MAX_POOL2D_GRAD, i[0], g, **a)


MAX_POOL2D_GATHER = defop("max_pool2d_gather", infer=_mpgather_infer, ref=_mpgather_ref,
                          bprop=_mpgather_bprop, attrs=POOL_ATTRS, arity=2)

AVG_ATTRS = {**POOL_ATTRS, "count_include_pad": True}


def avg_divisor(x_shape, kernel_size, stride, pad_mode, pad, count_include_pad):
    """(pads, (Ho, Wo), divisor of shape (Ho, Wo)): the window size, or with
    count_include_pad=False the number of real (unpadded) elements in each window."""
    pads, o = pool_geometry("avg_pool2d", x_shape, kernel_size, stride, pad_mode, pad)
    if count_include_pad:
        return pads, o, np.full(o, float(kernel_size[0] * kernel_size[1]))
    ones = _padded(np.ones((1, 1) + tuple(x_shape[2:])), pads)
    cnt = sum(window(ones, i, j, (1, 1), stride, o)[0, 0]
              for i in range(kernel_size[0]) for j in range(kernel_size[1]))
    return pads, o, cnt


def _avg_ref(x, kernel_size, stride, pad_mode, pad, count_include_pad):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    pads, o, div = avg_divisor(x.shape, kernel_size, stride, pad_mode, pad, count_include_pad)
    xp = _padded(x.astype(c), pads)
    s = sum(window(xp, i, j, (1, 1), stride, o)
            for i in range(kernel_size[0]) for j in range(kernel_size[1]))
    return (s / div.astype(c)).astype(x.dtype)


def _avg_bprop(i, o, g, **a):
    return (apply(AVG_POOL2D_GRAD, g, input_shape=tuple(i[0].shape), **a),)


AVG_POOL2D = defop("avg_pool2d", infer=_pool_infer("avg_pool2d"), ref=_avg_ref, bprop=_avg_bprop,
                   attrs=AVG_ATTRS, arity=1)


def _avgg_infer(dy, input_shape, **a):
    name = "avg_pool2d_grad"
    _float(name, ("dout", dy))
    if len(input_shape) != 4:
        raise ShapeError(f"{name}: input_shape must have 4 dims, got {tuple(input_shape)}")
    o = _pool_infer(name)(Meta(tuple(input_shape), dy.dtype), **a)
    if tuple(dy.shape) != o.shape:
        raise ShapeError(f"{name}: 'dout' has shape {tuple(dy.shape)}; average pooling an input "
                         f"of shape {tuple(input_shape)} gives {o.shape}")
    return Meta(tuple(input_shape), dy.dtype)


def _avgg_ref(dy, input_shape, kernel_size, stride, pad_mode, pad, count_include_pad):
    c = ref_array_dtype(dt.to_dtype(dy.dtype))
    pads, o, div = avg_divisor(input_shape, kernel_size, stride, pad_mode, pad, count_include_pad)
    N, C, H, W = input_shape
    dxp = np.zeros((N, C, H + pads[0] + pads[1], W + pads[2] + pads[3]), c)
    q = dy.astype(c) / div.astype(c)
    for i in range(kernel_size[0]):
        for j in range(kernel_size[1]):
            window(dxp, i, j, (1, 1), stride, o)[...] += q
    return np.ascontiguousarray(dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W]
                                ).astype(dy.dtype)


def _avgg_bprop(i, o, g, input_shape, **a):
    return (apply(AVG_POOL2D, g, **a),)


AVG_POOL2D_GRAD = defop("avg_pool2d_grad", infer=_avgg_infer, ref=_avgg_ref, bprop=_avgg_bprop,
                        attrs={"input_shape": (1, 1, 1, 1), **AVG_ATTRS}, arity=1)


def _pool_attrs(name, kernel_size, stride, pad_mode, padding):
    k = pair(name, "kernel_size", kernel_size)
    s = k if stride is None else pair(name, "stride", stride)
    return {"kernel_size": k, "stride": s, "pad_mode": pad_mode, "pad": pad4(name, padding)}


def _no(name, what, value, default):
    if value != default:
        raise NotImplementedError(f"{name}: {what}={value!r} is not supported by minispore; "
                                  f"use the default {default!r}")


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
               ceil_mode=False, *, pad_mode=None):
    """MindSpore 2.x ops.max_pool2d (stride defaults to kernel_size). minispore extension:
    pad_mode='valid'/'same'/'pad' as nn.MaxPool2d takes (default: 'pad' with `padding`)."""
    _no("max_pool2d", "dilation", dilation, 1)
    _no("max_pool2d", "return_indices", return_indices, False)
    _no("max_pool2d", "ceil_mode", ceil_mode, False)
    return apply(MAX_POOL2D, x, **_pool_attrs("max_pool2d", kernel_size, stride,
                                              pad_mode or "pad", padding))


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=0, *, pad_mode=None):
    """MindSpore 2.x ops.avg_pool2d (divisor_override 0, MindSpore's default, or None: divide by
    the window size). minispore extension: pad_mode='valid'/'same'/'pad' as nn.AvgPool2d takes
    (default: 'pad' with `padding`)."""
    _no("avg_pool2d", "ceil_mode", ceil_mode, False)
    _no("avg_pool2d", "divisor_override", divisor_override or 0, 0)
    return apply(AVG_POOL2D, input_x, count_include_pad=bool(count_include_pad),
                 **_pool_attrs("avg_pool2d", kernel_size, stride, pad_mode or "pad", padding))
