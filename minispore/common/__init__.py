"""minispore.common: MindSpore's `mindspore.common` (dtype as mstype, Tensor, Parameter)."""
from ..core import dtype
from ..core.tensor import Parameter, ParameterTuple, Tensor
from . import initializer

__all__ = ["dtype", "initializer", "Parameter", "ParameterTuple", "Tensor"]
