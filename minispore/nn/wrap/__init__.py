"""minispore.nn.wrap: MindSpore's `mindspore.nn.wrap` (the training wrappers live in
`minispore.nn.wrap.cell_wrapper`, as MindSpore's do)."""
from .cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell"]
