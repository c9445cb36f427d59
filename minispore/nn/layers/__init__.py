"""minispore.nn.layers: basic layers and activations."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, get_activation
from .basic import Dense, Embedding, Flatten, Identity

__all__ = ["Dense", "Embedding", "Flatten", "Identity", "ReLU", "Sigmoid", "Tanh", "GELU",
           "Softmax", "LogSoftmax", "get_activation"]
