"""minispore.nn.wrap: MindSpore's `mindspore.nn.wrap` (the training wrappers live in
`minispore.nn.wrap.cell_wrapper`, as MindSpore's do; the loss-scale cells in
`minispore.nn.wrap.loss_scale`)."""
from . import grad_reducer, mixed_precision  # noqa: F401  (mixed_precision: Cell.to_float)
from .cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell
from .grad_reducer import DistributedGradReducer
from .loss_scale import (DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,
                         TrainOneStepWithLossScaleCell)

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "DistributedGradReducer",
           "TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell",
           "FixedLossScaleUpdateCell"]
