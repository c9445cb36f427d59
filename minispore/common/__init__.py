"""minispore.common: MindSpore's `mindspore.common` (dtype as mstype, Tensor, Parameter)."""
from ..core import dtype
from ..core.tensor import Parameter, ParameterTuple, Tensor

__all__ = ["dtype", "Parameter", "ParameterTuple", "Tensor"]
