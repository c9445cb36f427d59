"""minispore.nn.optim: Optimizer, SGD, Momentum, Adam, AdamWeightDecay, LearningRateSchedule."""
from .adam import Adam, AdamWeightDecay
from .optimizer import LearningRateSchedule, Optimizer
from .sgd import SGD, Momentum

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "LearningRateSchedule"]
