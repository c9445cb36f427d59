"""minispore.nn.optim: Optimizer, SGD, Momentum, Adam, AdamWeightDecay, LearningRateSchedule."""
from . import momentum  # noqa: F401  (MindSpore's module path of Momentum)
from .adam import Adam, AdamWeightDecay
from .optimizer import LearningRateSchedule, Optimizer
from .sgd import SGD, Momentum

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "LearningRateSchedule"]
