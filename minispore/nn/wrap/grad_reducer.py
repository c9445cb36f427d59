"""DistributedGradReducer (MindSpore's `mindspore.nn.wrap.grad_reducer`): the gradients'
all-reduce over the data-parallel group.

As MindSpore's: each gradient is all-reduced (summed) over the group, and with `mean` multiplied
by 1/`degree` (a float32 1/degree cast to the gradient's dtype); `degree` defaults to the
group's size and `mean` to the auto-parallel context's gradients_mean. The gradients are fused
into buckets, as MindSpore's all_reduce_fusion_config splits them: the parameters between two
split indices (all of them without a config) form one bucket, and each bucket's gradients of
one dtype travel as one flat buffer in one all-reduce, then are split back. On a group of one
rank the all-reduce is skipped (it would return each gradient as it is)."""
from __future__ import annotations

from ...communication.management import GlobalComm, get_group_size
from ...core import dtype as _dt
from ...core.auto_parallel import get_auto_parallel_context
from ...core.ops import array as _a
from ...core.ops import collective as _c
from ...core.ops import math as _m
from ...core.tensor import Tensor
from ..cell import Cell

__all__ = ["DistributedGradReducer"]


class DistributedGradReducer(Cell):
    """The gradients' all-reduce (and mean) over the data-parallel group."""

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1,
                 group=GlobalComm.WORLD_COMM_GROUP):
        super().__init__(auto_prefix=False)
        if not isinstance(group, str):
            raise TypeError(f"DistributedGradReducer: group must be a str, got {type(group)}")
        if degree is None:
            degree = get_group_size(group)
        elif not isinstance(degree, int) or isinstance(degree, bool) or degree <= 0:
            raise ValueError(f"For 'DistributedGradReducer', parameter 'degree' in "
                             f"DistributedGradReducer should large than 0 and be int, degree: "
                             f"{degree}.")
        if mean is None:
            mean = get_auto_parallel_context("gradients_mean")
        if not isinstance(mean, bool):
            raise TypeError(f"DistributedGradReducer: mean must be a bool, got {type(mean)}")
        if not isinstance(fusion_type, int) or isinstance(fusion_type, bool):
            raise TypeError(f"DistributedGradReducer: fusion_type must be an int, got "
                            f"{type(fusion_type)}")
        self.mean = mean
        self.group = group
        self._degree = degree
        self.degree = Tensor(1.0 / degree, _dt.float32)         # MindSpore's attribute
        self.num_parameters = len(list(parameters))
        self.group_size = get_group_size(group)
        self.split_indices = self._buckets(get_auto_parallel_context("all_reduce_fusion_config"))

    def _buckets(self, config):
        n = self.num_parameters
        cuts = [0] + [i for i in config if 0 < i < n] + [n]
        return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]

    def _reduce_bucket(self, grads):
        """One all-reduce per dtype of the bucket's gradients, as one flat buffer."""
        out = list(grads)
        by_dtype: dict = {}
        for k, g in enumerate(grads):
            by_dtype.setdefault(g.dtype, []).append(k)
        for ks in by_dtype.values():
            if len(ks) == 1:
                out[ks[0]] = _c.all_reduce(grads[ks[0]], "sum", self.group)
                continue
            flat = _a.concat([_a.reshape(grads[k], (-1,)) for k in ks], 0)
            total = _c.all_reduce(flat, "sum", self.group)
            sizes = [int(grads[k].size) for k in ks]
            for k, part in zip(ks, _a.split(total, sizes, 0)):
                out[k] = _a.reshape(part, tuple(grads[k].shape))
        return out

    def construct(self, grads):
        grads = tuple(grads)
        if len(grads) != self.num_parameters:
            raise ValueError(f"DistributedGradReducer: got {len(grads)} gradients for "
                             f"{self.num_parameters} parameters")
        out = list(grads)
        if self.group_size > 1:
            for a, b in self.split_indices:
                out[a:b] = self._reduce_bucket(grads[a:b])
        if self.mean and self._degree != 1:
            out = [_m.mul(g, _m.cast(self.degree, g.dtype)) for g in out]
        return tuple(out)
