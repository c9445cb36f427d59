"""minispore.nn.wrap: MindSpore's `mindspore.nn.wrap` (the training wrappers live in
`minispore.nn.wrap.cell_wrapper`, as MindSpore's do)."""
from . import grad_reducer
from .cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell
from .grad_reducer import DistributedGradReducer

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "DistributedGradReducer"]
