"""minispore.common.parameter: MindSpore's `mindspore.common.parameter` (Parameter,
ParameterTuple)."""
from ..core.tensor import Parameter, ParameterTuple, Tensor

__all__ = ["Parameter", "ParameterTuple", "Tensor"]
