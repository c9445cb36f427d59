"""minispore.nn.loss: MindSpore's `mindspore.nn.loss` (the loss Cells live in
`minispore.nn.loss.loss`, as MindSpore's do)."""
from .loss import (BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss,
                   SoftmaxCrossEntropyWithLogits)

__all__ = ["LossBase", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss",
           "SoftmaxCrossEntropyWithLogits", "BCEWithLogitsLoss"]
