"""Functional losses (MindSpore's ops.cross_entropy, ops.nll_loss, ops.binary_cross_entropy_with_logits,
ops.mse_loss, ops.l1_loss), composed from declared primitives so they differentiate and compile
like any other op sequence. nn.loss wraps them in Cells.

Class-index targets with `weight`, `ignore_index` and `label_smoothing` follow PyTorch's rules
(which MindSpore 2.x documents): the 'mean' of a weighted loss divides by the sum of the weights of
the non-ignored targets; label smoothing mixes (1 - ls) * nll with ls / C * (the loss against a
uniform target). A class label outside [0, C) that is not ignore_index raises IndexError naming
the loss, the label and the valid range (core/ops/nn.py check_class_labels), as MindSpore's
gather of the target does."""
from __future__ import annotations

import numbers

from ..core import dtype as dt
from ..core.ops import array as A
from ..core.ops import index_ops as X
from ..core.ops import math as M
from ..core.ops import nn as N
from ..core.ops import reduce as R

_REDUCTIONS = ("mean", "sum", "none")


def check_reduction(who: str, reduction) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{who}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    return loss


def _check_smoothing(who, label_smoothing):
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, numbers.Real) \
            or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{who}: label_smoothing must be a float in [0.0, 1.0], got "
                         f"{label_smoothing!r}")
    return float(label_smoothing)


def _class_weight_shape(ndim, class_dim, c):
    return tuple(c if i == class_dim else 1 for i in range(ndim))


def _nll(who, logp, target, weight, ignore_index, reduction, label_smoothing):
    """NLL of log-probabilities `logp` (N, C, *d) or (C,) at integer `target` (N, *d) or ()."""
    class_dim = 1 if len(logp.shape) >= 2 else 0
    c = logp.shape[class_dim]
    expect = tuple(logp.shape[:class_dim]) + tuple(logp.shape[class_dim + 1:])
    if tuple(target.shape) != expect:
        from ..core.errors import ShapeError
        raise ShapeError(f"{who}: input has shape {tuple(logp.shape)} (classes on axis "
                         f"{class_dim}) so class-index target must have shape {expect}, got "
                         f"{tuple(target.shape)}")
    # a label outside [0, C) other than ignore_index raises IndexError (at run time in a graph)
    target = N.check_class_labels(target, c, who, ignore_index)
    maskf = M.cast(M.ne(target, ignore_index), logp.dtype)
    safe = target * M.cast(M.ne(target, ignore_index), target.dtype)
    onehot = M.cast(A.one_hot(safe, c, 1.0, 0.0, class_dim), logp.dtype)
    if weight is None:
        wy = maskf
    else:
        wy = X.gather(M.cast(weight, logp.dtype), safe, 0) * maskf
    loss = -R.sum(logp * onehot, class_dim) * wy
    smooth = None
    if label_smoothing > 0.0:
        lw = logp if weight is None else logp * A.reshape(
            M.cast(weight, logp.dtype), _class_weight_shape(len(logp.shape), class_dim, c))
        smooth = -R.sum(lw, class_dim) * maskf
    if reduction == "mean":
        denom = R.sum(wy)
        loss = R.sum(loss) / denom
        if smooth is not None:
            smooth = R.sum(smooth) / denom
    elif reduction == "sum":
        loss = R.sum(loss)
        if smooth is not None:
            smooth = R.sum(smooth)
    if smooth is None:
        return loss
    return (1.0 - label_smoothing) * loss + (label_smoothing / c) * smooth


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean",
             label_smoothing=0.0):
    """Negative log-likelihood of log-probabilities `inputs` (N, C, *d) at class indices."""
    check_reduction("nll_loss", reduction)
    ls = _check_smoothing("nll_loss", label_smoothing)
    if target.dtype.np.kind not in "iu":
        raise TypeError(f"nll_loss: target must hold integer class indices, got {target.dtype}; "
                        f"cast it with .astype(ms.int32)")
    return _nll("nll_loss", inputs, target, weight, ignore_index, reduction, ls)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits `input` (N, C, *d) or (C,) against class indices (integer target of
    shape (N, *d)) or class probabilities (float target of input's shape)."""
    check_reduction("cross_entropy", reduction)
    ls = _check_smoothing("cross_entropy", label_smoothing)
    class_dim = 1 if len(input.shape) >= 2 else 0
    logp = N.log_softmax(input, class_dim)
    if target.dtype.np.kind in "iu":
        return _nll("cross_entropy", logp, target, weight, ignore_index, reduction, ls)
    if tuple(target.shape) != tuple(input.shape):
        from ..core.errors import ShapeError
        raise ShapeError(f"cross_entropy: a probability (float) target must have the input's "
                         f"shape {tuple(input.shape)}, got {tuple(target.shape)}; for class "
                         f"indices pass an integer target")
    c = input.shape[class_dim]
    target = M.cast(target, logp.dtype)
    if ls > 0.0:
        target = target * (1.0 - ls) + ls / c
    if weight is not None:
        logp = logp * A.reshape(M.cast(weight, logp.dtype),
                                _class_weight_shape(len(input.shape), class_dim, c))
    return _reduce(-R.sum(logp * target, class_dim), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction="mean"):
    """-[pw * t * log(sigmoid(x)) + (1 - t) * log(1 - sigmoid(x))] * weight, computed stably as
    (1 - t) * x + (1 + (pw - 1) * t) * (log1p(exp(-|x|)) + max(-x, 0))."""
    check_reduction("binary_cross_entropy_with_logits", reduction)
    if tuple(target.shape) != tuple(input.shape):
        from ..core.errors import ShapeError
        raise ShapeError(f"binary_cross_entropy_with_logits: target shape {tuple(target.shape)} "
                         f"must equal the logits' shape {tuple(input.shape)}")
    target = M.cast(target, input.dtype)
    neg_log_sig = M.softplus(-M.abs(input)) + M.relu(-input)
    if pos_weight is None:
        loss = (1.0 - target) * input + neg_log_sig
    else:
        pw = M.cast(pos_weight, input.dtype)
        loss = (1.0 - target) * input + (1.0 + (pw - 1.0) * target) * neg_log_sig
    if weight is not None:
        loss = loss * M.cast(weight, input.dtype)
    return _reduce(loss, reduction)


def mse_loss(input, target, reduction="mean"):
    check_reduction("mse_loss", reduction)
    return _reduce(M.square(input - target), reduction)


def l1_loss(input, target, reduction="mean"):
    check_reduction("l1_loss", reduction)
    return _reduce(M.abs(input - target), reduction)


def softmax_cross_entropy(logits, labels, sparse=False):
    """Per-sample -sum(labels * log_softmax(logits, -1), -1); sparse labels are class indices
    (one primitive then, core/ops/nn.py)."""
    if sparse:
        return N.sparse_softmax_cross_entropy(logits, labels)
    logp = N.log_softmax(logits, -1)
    return -R.sum(logp * M.cast(labels, logp.dtype), -1)


_ = dt  # dtypes are reached through Tensor.dtype; kept for annotations in callers
