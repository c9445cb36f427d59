"""mindspore.mint.nn.functional: PyTorch-style functional layers (torch.nn.functional's
signatures and defaults) over the op declarations. Every function is a composition of existing
ops, so it differentiates and compiles (GRAPH_MODE) like any op sequence; the activations call
the declarations of core/ops/activation.py (with PyTorch's variants where they differ).

Arguments minispore does not implement (in-place updates, ceil_mode, dilation of max pooling,
max_norm of embedding, ...) raise NotImplementedError naming the argument; none is ignored.
The losses live in `_losses.py`, the padding and pooling in `_pooling.py`, resampling,
patches, conv1d/conv_transpose2d and dropout2d in `_resample.py`, conv3d and avg_pool3d
(composed from the 2-D ops) in `_conv3d.py`, grid_sample in `_grid.py`."""
from __future__ import annotations

import numbers

from ...core import dtype as _dt
from ...core.ops import activation as _act
from ...core.ops import array as _a
from ...core.ops import conv as _cv
from ...core.ops import index_ops as _ix
from ...core.ops import linalg as _la
from ...core.ops import math as _m
from ...core.ops import nn as _nn
from ...core.ops import norm as _nm
from ...core.ops import pool_nd as _pn
from ...core.ops import random as _rnd
from ...core.ops import reduce as _r
from ._losses import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                      cosine_embedding_loss, cross_entropy, kl_div, l1_loss, mse_loss, nll_loss,
                      smooth_l1_loss, soft_margin_loss)
from ._pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d,  # noqa: F401
                       adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d,
                       avg_pool2d, max_pool2d, max_unpool2d, pad)
from ._conv3d import avg_pool3d, conv3d  # noqa: F401
from ._grid import grid_sample  # noqa: F401
from ._resample import (conv1d, conv_transpose2d, dropout2d, fold,  # noqa: F401
                        interpolate, pixel_shuffle, unfold, upsample)


def _not_supported(who: str, what: str, value, default):
    """NotImplementedError when `value` differs from the only value minispore implements."""
    if value is not default and value != default:
        raise NotImplementedError(f"{who}: {what}={value!r} is not supported by minispore; use "
                                  f"the default {what}={default!r}")


def _no_inplace(who, inplace):
    _not_supported(who, "inplace", inplace, False)


def _check_real(who, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a number, got {v!r} ({type(v).__name__})")
    return float(v)


def _check_int(who, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {v!r} ({type(v).__name__})")
    return int(v)


# ---------------------------------------------------------------- activations -------------------
# The formulas are the declarations in core/ops/activation.py, called with PyTorch's variants
# where mint's differ from MindSpore's ops: hardtanh/relu6 with gradient 0 at the bounds,
# leaky_relu as x where x > 0 (the slope at 0), elu/selu with x = 0 in the exponential branch
# and expm1, logsigmoid as -softplus(-x).
def relu(input, inplace=False):
    _no_inplace("relu", inplace)
    return _m.relu(input)


def relu6(input, inplace=False):
    _no_inplace("relu6", inplace)
    return _act.hardtanh(input, 0.0, 6.0, "zero")


def gelu(input, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _m.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    _no_inplace("silu", inplace)
    return _act.silu(input)


def sigmoid(input):
    return _m.sigmoid(input)


def tanh(input):
    return _m.tanh(input)


def mish(input):
    """x * tanh(softplus(x))."""
    return _act.mish(input)


def logsigmoid(input):
    """log(sigmoid(x)) as -softplus(-x) (no underflow for x << 0)."""
    return _act.logsigmoid(input, "softplus")


def hardsigmoid(input):
    """relu6(x + 3) / 6 (gradient 1/6 strictly inside (-3, 3))."""
    return _act.hardsigmoid(input)


def hardswish(input):
    """x * relu6(x + 3) / 6 (gradient (2x + 3) / 6 on [-3, 3])."""
    return _act.hardswish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    _no_inplace("hardtanh", inplace)
    lo, hi = _check_real("hardtanh", "min_val", min_val), _check_real("hardtanh", "max_val",
                                                                       max_val)
    if lo > hi:
        raise ValueError(f"hardtanh: min_val={min_val} must be <= max_val={max_val}")
    return _act.hardtanh(input, lo, hi, "zero")


def leaky_relu(input, negative_slope=0.01):
    s = _check_real("leaky_relu", "negative_slope", negative_slope)
    return _act.leaky_relu(input, s, "select")


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    _no_inplace("elu", inplace)
    a = _check_real("elu", "alpha", alpha)
    return _act.elu(input, a, exact=True)


def selu(input):
    """scale * (x where x > 0, alpha * (exp(x) - 1) elsewhere), PyTorch's constants."""
    return _act.selu(input, positive_at_zero=False)


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta * x)) / beta, and x where beta * x > threshold."""
    b = _check_real("softplus", "beta", beta)
    t = _check_real("softplus", "threshold", threshold)
    bx = input * b if b != 1.0 else input
    soft = _m.softplus(bx) if b == 1.0 else _m.softplus(bx) / b
    return _m.where(bx > t, input, soft)


def hardshrink(input, lambd=0.5):
    return _act.hardshrink(input, _check_real("hardshrink", "lambd", lambd))


def softshrink(input, lambd=0.5):
    lam = _check_real("softshrink", "lambd", lambd)
    if lam < 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    return _act.softshrink(input, lam)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, value elsewhere."""
    _no_inplace("threshold", inplace)
    t = _check_real("threshold", "threshold", threshold)
    v = _check_real("threshold", "value", value)
    return _act.threshold(input, t, v)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of `input` along dim."""
    return _act.glu(input, _check_int("glu", "dim", dim))


def prelu(input, weight):
    """x where x > 0, weight * x elsewhere; weight (1,) or (C,), C = input.shape[1]."""
    return _act.prelu(input, weight)


def _implicit_dim(ndim):
    """PyTorch's dim for softmax(dim=None): 0 for 0-, 1- and 3-d inputs, else 1."""
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = _m.cast(input, dtype)
    d = _implicit_dim(len(input.shape)) if dim is None else _check_int("softmax", "dim", dim)
    if len(input.shape) == 0:
        return _a.ones_like(input)
    return _nn.softmax(input, d)


def log_softmax(input, dim=None, *, dtype=None):
    if dtype is not None:
        input = _m.cast(input, dtype)
    d = _implicit_dim(len(input.shape)) if dim is None else _check_int("log_softmax", "dim", dim)
    if len(input.shape) == 0:
        return _a.zeros_like(input)
    return _nn.log_softmax(input, d)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """x / max(||x||_p over dim, eps)."""
    pv = _check_real("normalize", "p", p)
    d = _check_int("normalize", "dim", dim)
    if pv == 2.0:
        n = _m.sqrt(_r.sum(_m.square(input), d, True))
    elif pv == 1.0:
        n = _r.sum(_m.abs(input), d, True)
    elif pv == float("inf"):
        n = _r.amax(_m.abs(input), d, True)
    elif pv > 0:
        n = _m.pow(_r.sum(_m.pow(_m.abs(input), pv), d, True), 1.0 / pv)
    else:
        raise ValueError(f"normalize: p must be > 0, got {p}")
    return input / _m.maximum(n, _check_real("normalize", "eps", eps))


# ---------------------------------------------------------------- layers ------------------------
def linear(input, weight, bias=None):
    """input @ weight.T + bias; weight (out_features, in_features)."""
    if len(weight.shape) == 1:
        out = _r.sum(input * weight, -1)
    elif len(input.shape) == 2:
        out = _la.matmul(input, weight, transpose_b=True)
    else:
        shape = tuple(input.shape)
        out = _la.matmul(_a.reshape(input, (-1, shape[-1])), weight, transpose_b=True)
        out = _a.reshape(out, shape[:-1] + (weight.shape[0],))
    return out if bias is None else out + bias


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p, scale the rest by 1 / (1 - p) (training only)."""
    _no_inplace("dropout", inplace)
    pv = _check_real("dropout", "p", p)
    if not 0.0 <= pv <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or pv == 0.0:
        return input
    if pv == 1.0:
        return input * 0.0
    return _rnd.dropout(input, pv, True)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (N, C_in, H, W) or (C_in, H, W); padding an int, a pair, 'valid' or
    'same' (stride 1; the odd extra row/column after, as PyTorch)."""
    if len(input.shape) == 3:
        return _a.squeeze(conv2d(_a.expand_dims(input, 0), weight, bias, stride, padding,
                                 dilation, groups), 0)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"conv2d: padding must be 'valid', 'same', an int or a pair, got "
                             f"{padding!r}")
        if padding == "same" and _cv.pair("conv2d", "stride", stride) != (1, 1):
            raise ValueError("conv2d: padding='same' needs stride=1 (as PyTorch)")
        if padding == "same":
            k = tuple(weight.shape[2:])
            dl = _cv.pair("conv2d", "dilation", dilation)
            pads = []
            for kk, dd in zip(k, dl):
                total = dd * (kk - 1)
                pads += [total // 2, total - total // 2]
            return _cv.conv2d(input, weight, bias, stride, "pad", tuple(pads), dilation, groups)
        return _cv.conv2d(input, weight, bias, stride, "valid", 0, dilation, groups)
    if isinstance(padding, (tuple, list)) and len(padding) != 2:
        raise TypeError(f"conv2d: padding must be an int, a pair of ints, 'valid' or 'same', got "
                        f"{padding!r}")
    return _cv.conv2d(input, weight, bias, stride, "pad", _cv.pad4("conv2d", padding), dilation,
                      groups)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    return _nm.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalise over every axis but 1 with the batch statistics (training) or running_mean /
    running_var; in training, Parameters running_* become (1 - momentum) * running + momentum *
    batch (the batch variance unbiased), PyTorch's rule."""
    c = input.shape[1]
    if weight is None:
        weight = _a.ones((c,), input.dtype)
    if bias is None:
        bias = _a.zeros((c,), input.dtype)
    if running_mean is None or running_var is None:
        if not training:
            raise ValueError("batch_norm: running_mean and running_var are needed when "
                             "training=False")
        running_mean = _a.zeros((c,), input.dtype) if running_mean is None else running_mean
        running_var = _a.ones((c,), input.dtype) if running_var is None else running_var
    return _nm.batch_norm(input, running_mean, running_var, weight, bias, bool(training),
                          _check_real("batch_norm", "momentum", momentum), eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise (N, C, *) over each group of C / num_groups channels and the spatial axes."""
    g = _check_int("group_norm", "num_groups", num_groups)
    c = tuple(input.shape)[1]
    if g <= 0 or c % g:
        raise ValueError(f"group_norm: num_groups={num_groups} must divide the channels {c}")
    return _pn.group_norm(input, g, weight, bias, float(eps))


def _renorm_rows(input, weight, max_norm, norm_type):
    """PyTorch's embedding_renorm_: each looked-up row of norm (norm_type) above max_norm is
    scaled to max_norm / (norm + 1e-7), in the Parameter `weight` (ops.assign), and the
    looked-up rows as the output (the gradient flows to weight as a plain lookup's)."""
    from ...core.ops.state import assign, depend
    from ...core.tensor import Parameter
    if not isinstance(weight, Parameter):
        raise NotImplementedError("embedding: max_norm renormalizes the rows of weight in "
                                  "place, which minispore does for a Parameter weight only")
    flat = _a.reshape(input, (-1,))
    rows = _ix.gather(weight, flat, 0)
    p = float(norm_type)
    mag = _m.abs(rows)
    if p == float("inf"):
        norms = _r.amax(mag, -1, True)
    elif p == 1.0:
        norms = _r.sum(mag, -1, True)
    else:
        norms = _m.pow(_r.sum(_m.pow(mag, p), -1, True), 1.0 / p)
    scale = _m.where(norms > max_norm, max_norm / (norms + 1e-7), _m.zeros_like(norms) + 1.0)
    renormed = _a.stop_gradient(rows * scale)
    from ...core.primitive import apply
    new_weight = apply(_ix.SCATTER_UPDATE, _a.stop_gradient(weight), flat, renormed, axis=0)
    out = renormed + (rows - _a.stop_gradient(rows))      # renormed's value, a lookup's grad
    out = _a.reshape(out, tuple(input.shape) + (weight.shape[1],))
    return depend(out, assign(weight, new_weight))


def _by_freq(out, input, num):
    """out with its gradient divided by how often each index occurs in input (PyTorch's
    scale_grad_by_freq); the value unchanged."""
    flat = _a.reshape(_m.cast(input, _dt.int32), (-1,))
    ones = _a.ones(tuple(flat.shape), out.dtype)
    counts = _ix.gather(_ix.scatter_add(_a.zeros((num,), out.dtype), flat, ones), flat, 0)
    inv = _a.reshape(1.0 / counts, tuple(input.shape) + (1,))
    fixed = _a.stop_gradient(out)
    return fixed + (out - fixed) * inv              # the value exactly out's


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False):
    """Rows of `weight` at the indices `input`; the padding_idx rows get no gradient; with
    max_norm, the looked-up rows of norm above it are renormalized (in weight too); with
    scale_grad_by_freq, each row's gradient is divided by its index's count in input."""
    _check_real("embedding", "norm_type", norm_type)
    if not isinstance(scale_grad_by_freq, bool):
        raise TypeError(f"embedding: scale_grad_by_freq must be a bool, got "
                        f"{scale_grad_by_freq!r}")
    if max_norm is not None:
        out = _renorm_rows(input, weight, _check_real("embedding", "max_norm", max_norm),
                           norm_type)
    else:
        out = _ix.gather(weight, input, 0)
    if scale_grad_by_freq:
        out = _by_freq(out, input, weight.shape[0])
    if padding_idx is None:
        return out
    p = _check_int("embedding", "padding_idx", padding_idx)
    num = weight.shape[0]
    if not -num <= p < num:
        raise ValueError(f"embedding: padding_idx must be in [{-num}, {num}), got {p}")
    pad = _a.expand_dims(_m.equal(input, p % num), -1)
    return _m.where(pad, _a.stop_gradient(out), out)


def flatten(input, start_dim=0, end_dim=-1):
    return _a.flatten(input, start_dim=start_dim, end_dim=end_dim)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot of the integer `tensor`, classes on a new last axis; num_classes=-1 takes
    max(tensor) + 1 (PyNative only: the value decides the shape)."""
    n = _check_int("one_hot", "num_classes", num_classes)
    if tensor.dtype.np.kind not in "iu":
        raise TypeError(f"one_hot: tensor must hold integer class indices, got {tensor.dtype}")
    if n == -1:
        from ...core.graph.builder import is_symbolic
        if is_symbolic(tensor):
            raise ValueError("one_hot: num_classes=-1 (from the data) cannot be used in "
                             "GRAPH_MODE; pass num_classes")
        n = int(tensor.asnumpy().max()) + 1 if tensor.size else 0
    tensor = _nn.check_class_labels(tensor, n, "one_hot")    # [0, num_classes), as PyTorch
    out = _a.one_hot(tensor, n, 1, 0, -1)
    return out if out.dtype is _dt.int64 else _m.cast(out, _dt.int64)


__all__ = ["relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "mish", "logsigmoid",
           "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "elu", "selu", "softplus",
           "hardshrink", "softshrink", "threshold", "glu", "prelu", "softmax", "log_softmax",
           "normalize", "linear", "dropout", "conv2d", "layer_norm", "batch_norm", "group_norm",
           "embedding", "flatten", "one_hot", "max_pool2d", "avg_pool2d", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "pad", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
           "cosine_embedding_loss", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "conv1d", "conv_transpose2d", "dropout2d", "interpolate",
           "pixel_shuffle", "unfold", "fold", "upsample", "max_unpool2d", "conv3d",
           "avg_pool3d", "grid_sample"]
