"""minispore.nn.optim.momentum: MindSpore's `mindspore.nn.optim.momentum` (Momentum; its update
is in minispore.nn.optim.sgd)."""
from .optimizer import Optimizer
from .sgd import Momentum

__all__ = ["Momentum", "Optimizer"]
