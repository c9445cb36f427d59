"""minispore.common: MindSpore's `mindspore.common` (dtype as mstype, Tensor, Parameter, the
seed functions)."""
from ..core.ops.random import get_seed, set_seed
from ..core.tensor import Parameter, ParameterTuple, Tensor
from . import dtype, initializer, parameter, tensor
from ..core.tensor import tensor  # noqa: F811  (as in MindSpore, common.tensor is the function;
#                                 `from minispore.common.tensor import Tensor` still finds the module)
from .dtype import (bfloat16, bool_, dtype_to_nptype, float16, float32, float64, int8, int16,
                    int32, int64, pytype_to_dtype, uint8, uint16, uint32, uint64)

__all__ = ["dtype", "initializer", "parameter", "tensor", "Parameter", "ParameterTuple", "Tensor",
           "get_seed", "set_seed", "bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16",
           "bfloat16", "float32", "float64", "dtype_to_nptype", "pytype_to_dtype"]
