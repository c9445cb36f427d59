"""minispore.nn.layers: basic layers, activations, convolution/pooling and normalisation/dropout."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, get_activation
from .basic import Dense, Embedding, Flatten, Identity
from .conv import AvgPool2d, Conv2d, MaxPool2d
from .normalization import BatchNorm1d, BatchNorm2d, Dropout, LayerNorm

__all__ = ["Dense", "Embedding", "Flatten", "Identity", "ReLU", "Sigmoid", "Tanh", "GELU",
           "Softmax", "LogSoftmax", "get_activation", "Conv2d", "MaxPool2d", "AvgPool2d",
           "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout"]
