"""minispore.common.tensor: MindSpore's `mindspore.common.tensor` (Tensor)."""
from ..core.tensor import Tensor, tensor

__all__ = ["Tensor", "tensor"]
