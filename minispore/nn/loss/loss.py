"""Loss Cells (MindSpore 2.x names, arguments and defaults): MSELoss, L1Loss, CrossEntropyLoss,
NLLLoss, SoftmaxCrossEntropyWithLogits, BCEWithLogitsLoss and the LossBase they share. The maths
is in minispore.ops.losses (the functional API), so a Cell and its function give the same
numbers."""
from __future__ import annotations

from ...core.arg_checks import check_bool
from ...core.tensor import Tensor
from ...ops import losses as F
from ..cell import Cell


class LossBase(Cell):
    """Holds `reduction` ('mean', 'sum' or 'none'; checked here) and applies it."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = F.check_reduction(type(self).__name__, reduction)

    def get_loss(self, x, weights=1.0):
        if not (isinstance(weights, float) and weights == 1.0):
            x = x * weights
        return F._reduce(x, self.reduction)

    def extend_repr(self):
        return f"reduction={self.reduction!r}"


def _check_tensor_or_none(who, name, value):
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{who}: {name} must be a Tensor or None, got {type(value).__name__}; "
                        f"wrap it with ms.Tensor(...)")
    return value


class MSELoss(LossBase):
    """(logits - labels)^2 (broadcasting), reduced."""

    def construct(self, logits, labels):
        return F.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    """|logits - labels| (broadcasting), reduced."""

    def construct(self, logits, labels):
        return F.l1_loss(logits, labels, self.reduction)


class CrossEntropyLoss(LossBase):
    """ops.cross_entropy as a Cell: logits (N, C, *d), class indices or probabilities."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight = _check_tensor_or_none("CrossEntropyLoss", "weight", weight)
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise TypeError(f"CrossEntropyLoss: ignore_index must be an int, got "
                            f"{ignore_index!r}")
        self.ignore_index = ignore_index
        self.label_smoothing = F._check_smoothing("CrossEntropyLoss", label_smoothing)

    def construct(self, logits, labels):
        return F.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class NLLLoss(LossBase):
    """ops.nll_loss as a Cell: log-probabilities (N, C, *d) at class indices."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight = _check_tensor_or_none("NLLLoss", "weight", weight)
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise TypeError(f"NLLLoss: ignore_index must be an int, got {ignore_index!r}")
        self.ignore_index = ignore_index

    def construct(self, logits, labels):
        return F.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """-sum(labels * log_softmax(logits, -1), -1) per sample; `sparse=True` takes class indices.
    MindSpore's default reduction here is 'none'."""

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        check_bool("SoftmaxCrossEntropyWithLogits", "sparse", sparse)
        self.sparse = sparse

    def construct(self, logits, labels):
        return F._reduce(F.softmax_cross_entropy(logits, labels, self.sparse), self.reduction)

    def extend_repr(self):
        return f"sparse={self.sparse}, reduction={self.reduction!r}"


class BCEWithLogitsLoss(LossBase):
    """ops.binary_cross_entropy_with_logits as a Cell, with optional weight and pos_weight."""

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight = _check_tensor_or_none("BCEWithLogitsLoss", "weight", weight)
        self.pos_weight = _check_tensor_or_none("BCEWithLogitsLoss", "pos_weight", pos_weight)

    def construct(self, logits, labels):
        return F.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight,
                                                  self.reduction)
