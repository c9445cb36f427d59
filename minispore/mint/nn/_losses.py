"""The losses of mint.nn.functional (PyTorch's signatures and rules), over ops.losses and the op
declarations. reduction is 'mean' (over every element), 'sum' or 'none'; kl_div also takes
'batchmean' (the sum divided by the batch size)."""
from __future__ import annotations

from ...core.ops import math as _m
from ...core.ops import reduce as _r
from ...ops import losses as _l


def _reduce(who, loss, reduction):
    _l.check_reduction(who, reduction)
    if reduction == "mean":
        return _r.mean(loss)
    if reduction == "sum":
        return _r.sum(loss)
    return loss


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits (N, C, *d) or (C,) against class indices (an integer target) or
    class probabilities (a float target of the input's shape)."""
    return _l.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """-input[target] (log-probabilities (N, C, *d)), weighted; 'mean' divides by the weights of
    the non-ignored targets."""
    return _l.nll_loss(input, target, weight, ignore_index, reduction)


def mse_loss(input, target, reduction="mean"):
    return _reduce("mse_loss", _m.square(input - target), reduction)


def l1_loss(input, target, reduction="mean"):
    return _reduce("l1_loss", _m.abs(input - target), reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """0.5 * d^2 / beta where d = |input - target| < beta, d - 0.5 * beta elsewhere (beta=0:
    the L1 loss)."""
    b = float(beta)
    if b < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    d = _m.abs(input - target)
    if b == 0.0:
        return _reduce("smooth_l1_loss", d, reduction)
    loss = _m.where(d < b, _m.square(d) * (0.5 / b), d - 0.5 * b)
    return _reduce("smooth_l1_loss", loss, reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(t * log(x) + (1 - t) * log(1 - x)) * weight, each log clamped at -100 (PyTorch)."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"binary_cross_entropy: target shape {tuple(target.shape)} must equal "
                         f"the input's shape {tuple(input.shape)}")
    log_x = _m.maximum(_m.log(input), -100.0)
    log_1mx = _m.maximum(_m.log(1.0 - input), -100.0)
    loss = -(target * log_x + (1.0 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce("binary_cross_entropy", loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    return _l.binary_cross_entropy_with_logits(input, target, weight=weight,
                                               pos_weight=pos_weight, reduction=reduction)


def kl_div(input, target, reduction="mean", log_target=False):
    """target * (log(target) - input) (0 where target is 0), or exp(target) * (target - input)
    with log_target; 'batchmean' divides the sum by input.shape[0]."""
    if log_target:
        loss = _m.exp(target) * (target - input)
    else:
        zero = target == 0                  # xlogy(target, target): 0 where target is 0
        safe = _m.where(zero, _m.zeros_like(target) + 1.0, target)
        loss = _m.where(zero, _m.zeros_like(target), target * _m.log(safe)) - target * input
    if reduction == "batchmean":
        s = _r.sum(loss)
        return s / input.shape[0] if len(input.shape) else s
    return _reduce("kl_div", loss, reduction)


def soft_margin_loss(input, target, reduction="mean"):
    """log(1 + exp(-target * input))."""
    return _reduce("soft_margin_loss", _m.softplus(-(target * input)), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1; cos over
    the last axis with 1e-12 added to each squared norm (PyTorch)."""
    dim = len(input1.shape) - 1
    prod = _r.sum(input1 * input2, dim)
    m1 = _r.sum(_m.square(input1), dim) + 1e-12
    m2 = _r.sum(_m.square(input2), dim) + 1e-12
    cos = prod / _m.sqrt(m1 * m2)
    zeros = _m.zeros_like(cos)
    pos = _m.where(target == 1, 1.0 - cos, zeros)
    over = cos - float(margin)                      # clamp_min(0): gradient 1 at 0 too
    neg = _m.where(target == -1, _m.where(over >= 0, over, zeros), zeros)
    return _reduce("cosine_embedding_loss", pos + neg, reduction)
