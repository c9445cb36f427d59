"""minispore.nn: Cells, layers, losses, optimizers, training wrappers and metrics (MindSpore
names)."""
from .cell import Cell, CellList, SequentialCell
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layers
from .loss import (BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss,
                   SoftmaxCrossEntropyWithLogits)
from .metrics import *  # noqa: F401,F403  (MindSpore 2.10's nn still exports the metrics)
from .metrics import __all__ as _metrics
from .optim import SGD, Adam, AdamWeightDecay, LearningRateSchedule, Momentum, Optimizer
from .wrap import DistributedGradReducer, TrainOneStepCell, WithEvalCell, WithLossCell
from .wrap import (DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,
                   TrainOneStepWithLossScaleCell)

__all__ = ["Cell", "CellList", "SequentialCell", *_layers, "LossBase", "MSELoss", "L1Loss",
           "CrossEntropyLoss", "NLLLoss", "SoftmaxCrossEntropyWithLogits", "BCEWithLogitsLoss",
           "Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "LearningRateSchedule",
           "WithLossCell", "WithEvalCell", "TrainOneStepCell", "DistributedGradReducer",
           "TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell",
           "FixedLossScaleUpdateCell", *_metrics]
