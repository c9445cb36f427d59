"""DistributedGradReducer (MindSpore's `mindspore.nn.wrap.grad_reducer`) for one device.

MindSpore's reducer all-reduces each gradient over the `degree` devices of the group (and
divides by `degree` when `mean`). On one device (degree 1, what get_group_size() reports
without a distributed job) the all-reduce of a gradient is that gradient and the mean divides
by 1, so the reducer returns the gradients as they are. A degree above 1 needs a multi-device
job and raises NotImplementedError."""
from __future__ import annotations

from ...communication.management import GlobalComm, get_group_size
from ...core.auto_parallel import get_auto_parallel_context
from ..cell import Cell

__all__ = ["DistributedGradReducer"]


class DistributedGradReducer(Cell):
    """The gradients' all-reduce over the data-parallel group, for one device."""

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1,
                 group=GlobalComm.WORLD_COMM_GROUP):
        super().__init__(auto_prefix=False)
        if not isinstance(group, str):
            raise TypeError(f"DistributedGradReducer: group must be a str, got {type(group)}")
        if degree is None:
            degree = get_group_size(group)
        if not isinstance(degree, int) or isinstance(degree, bool) or degree < 1:
            raise ValueError(f"DistributedGradReducer: degree must be a positive int, got "
                             f"{degree!r}")
        if degree != 1:
            raise NotImplementedError(
                f"DistributedGradReducer: degree={degree} is not supported by minispore, which "
                f"runs one process on one device (degree 1); data parallelism across processes "
                f"is not implemented")
        if mean is None:
            mean = get_auto_parallel_context("gradients_mean")
        if not isinstance(mean, bool):
            raise TypeError(f"DistributedGradReducer: mean must be a bool, got {type(mean)}")
        if not isinstance(fusion_type, int) or isinstance(fusion_type, bool):
            raise TypeError(f"DistributedGradReducer: fusion_type must be an int, got "
                            f"{type(fusion_type)}")
        self.mean = mean
        self.degree = degree
        self.num_parameters = len(list(parameters))

    def construct(self, grads):
        return grads
