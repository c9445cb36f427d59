"""mint.nn loss Cells (PyTorch's names, arguments and defaults), each over the mint.nn.functional
loss of the same name; construct(input, target)."""
from __future__ import annotations

from ...nn.cell import Cell
from ...ops import losses as _l
from . import functional as F


class _Loss(Cell):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _l.check_reduction(type(self).__name__, reduction)


class L1Loss(_Loss):
    def construct(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class MSELoss(_Loss):
    def construct(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class SoftMarginLoss(_Loss):
    def construct(self, input, target):
        return F.soft_margin_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = F._check_real("SmoothL1Loss", "beta", beta)
        if self.beta < 0:
            raise ValueError(f"SmoothL1Loss: beta must be >= 0, got {beta}")

    def construct(self, input, target):
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class KLDivLoss(Cell):
    def __init__(self, reduction="mean", log_target=False):
        super().__init__()
        if reduction not in ("mean", "sum", "none", "batchmean"):
            raise ValueError(f"KLDivLoss: reduction must be 'mean', 'sum', 'none' or "
                             f"'batchmean', got {reduction!r}")
        if not isinstance(log_target, bool):
            raise TypeError(f"KLDivLoss: log_target must be a bool, got {log_target!r}")
        self.reduction, self.log_target = reduction, log_target

    def construct(self, input, target):
        return F.kl_div(input, target, self.reduction, self.log_target)


class BCELoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def construct(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                  self.pos_weight)


class NLLLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = F._check_int("NLLLoss", "ignore_index", ignore_index)

    def construct(self, input, target):
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits against class indices or class probabilities (PyTorch's
    CrossEntropyLoss: weight, ignore_index, label_smoothing)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = F._check_int("CrossEntropyLoss", "ignore_index", ignore_index)
        self.label_smoothing = F._check_real("CrossEntropyLoss", "label_smoothing",
                                             label_smoothing)
        if not 0.0 <= self.label_smoothing <= 1.0:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got "
                             f"{label_smoothing}")

    def construct(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class CosineEmbeddingLoss(_Loss):
    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = F._check_real("CosineEmbeddingLoss", "margin", margin)

    def construct(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)
