"""DistributedGradReducer (MindSpore's `mindspore.nn.wrap.grad_reducer`): the gradients'
all-reduce over the data-parallel group.

As MindSpore's: each gradient is cast to float32, all-reduced (summed) over the group, with
`mean` multiplied by 1/`degree` (a float32), and cast back to its dtype; `degree` defaults to
the group's size and `mean` to the auto-parallel context's gradients_mean. A parameter made
with `layerwise_parallel=True` is each rank's own: its gradient is left as it is.

Buckets: the gradients travel fused into flat buffers. With all_reduce_fusion_config (or
comm_fusion {"allreduce": {"mode": "index"}}) the parameters between two split indices form a
bucket; otherwise buckets fill up to the fusion threshold (comm_fusion's "size" in MB, 64 MB
under "auto", as MindSpore's), from the last parameter back, since the backward produces the
last layers' gradients first. Each bucket is all-reduced asynchronously: started on the
group's communication stream (core/communicator.py) as soon as it is built, waited for only
when its gradients are needed; in a graph the scheduling pass (core/graph/passes/schedule.py)
starts each bucket as soon as its gradients exist, so communication overlaps the rest of the
backward. On a group of one rank the all-reduce is skipped (it would return each gradient as
it is).

At construction, with parameter_broadcast set (set_auto_parallel_context), rank 0's values of
the parameters are broadcast to every rank, as MindSpore does before training; without it the
ranks' parameters are compared once and a warning names the fix when they differ (each rank
would train its own replica)."""
from __future__ import annotations

import warnings

import numpy as np

from ...communication.management import GlobalComm, get_group_size
from ...core import communicator as _comm
from ...core import dtype as _dt
from ...core.auto_parallel import allreduce_fusion_rule, get_auto_parallel_context
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
        parameters = list(parameters)
        self.mean = mean
        self.group = group
        self._degree = degree
        self.degree = Tensor(1.0 / degree, _dt.float32)         # MindSpore's attribute
        self.num_parameters = len(parameters)
        self.group_size = get_group_size(group)
        self.allreduce_filter = tuple(not getattr(p, "layerwise_parallel", False)
                                      for p in parameters)
        self.split_indices = self._buckets(parameters)
        if self.group_size > 1:
            _sync_replicas(parameters, group)

    def _buckets(self, parameters):
        """[(start, end)] index ranges of the parameters, one per fused all-reduce."""
        n = len(parameters)
        mode, config = allreduce_fusion_rule()
        if mode == "index":
            cuts = [0] + sorted({i for i in config if 0 < i < n}) + [n]
            return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
        limit = config * 1024 * 1024
        buckets, end, size = [], n, 0
        for k in range(n - 1, -1, -1):
            nbytes = 4 * int(np.prod(parameters[k].shape, dtype=np.int64))   # sent as float32
            if size and size + nbytes > limit:
                buckets.append((k + 1, end))
                end, size = k + 1, 0
            size += nbytes
        if end > 0:
            buckets.append((0, end))
        return sorted(buckets)

    def _start_bucket(self, grads, ks):
        """Start the all-reduce of gradients `ks` as one flat float32 buffer: its ticket."""
        if len(ks) == 1:
            flat = _a.reshape(grads[ks[0]], (-1,))
        else:
            flat = _a.concat([_a.reshape(grads[k], (-1,)) for k in ks], 0)
        return _c.all_reduce_start(flat, "sum", self.group), flat

    def _finish_bucket(self, grads, ks, ticket, flat, out):
        total = _c.all_reduce_wait(ticket, flat, self.group)
        if self.mean:
            total = _m.mul(total, self.degree)
        parts = [total] if len(ks) == 1 else _a.split(total, [int(grads[k].size) for k in ks], 0)
        for k, part in zip(ks, parts):
            out[k] = _a.reshape(part, tuple(grads[k].shape))

    def construct(self, grads):
        grads = tuple(grads)
        if len(grads) != self.num_parameters:
            raise ValueError(f"DistributedGradReducer: got {len(grads)} gradients for "
                             f"{self.num_parameters} parameters")
        dtypes = [g.dtype for g in grads]
        grads = [_m.cast(g, _dt.float32) if g.dtype is not _dt.float32 else g for g in grads]
        out = list(grads)
        if self.group_size > 1:
            started = []
            for a, b in reversed(self.split_indices):      # the last layers' gradients first
                ks = [k for k in range(a, b) if self.allreduce_filter[k]]
                if ks:
                    started.append((ks,) + self._start_bucket(grads, ks))
            for ks, ticket, flat in started:
                self._finish_bucket(grads, ks, ticket, flat, out)
        elif self.mean:
            out = [_m.mul(g, self.degree) if keep else g
                   for g, keep in zip(out, self.allreduce_filter)]
        return tuple(_m.cast(g, d) if g.dtype is not d else g for g, d in zip(out, dtypes))


def _sync_replicas(parameters, group):
    """Broadcast rank 0's parameter values (parameter_broadcast), or warn when the ranks'
    values differ; layerwise-parallel parameters are each rank's own and left out."""
    params = [p for p in parameters if not getattr(p, "layerwise_parallel", False)]
    if not params:
        return
    comm = _comm.lookup("DistributedGradReducer", group)
    if get_auto_parallel_context("parameter_broadcast"):
        for p in params:
            p.set_data(comm.broadcast(np.ascontiguousarray(p.asnumpy()), 0))
        return
    # one fingerprint per rank: the float64 sums of every parameter's values and squares
    sig = np.array([[float(np.sum(p.asnumpy(), dtype=np.float64)),
                     float(np.sum(np.square(p.asnumpy(), dtype=np.float64)))]
                    for p in params]).reshape(-1)
    every = comm.all_gather(sig[None, :])
    if not (every == every[0]).all():
        warnings.warn("DistributedGradReducer: the parameters differ between the ranks of "
                      f"group {group!r}, so each rank trains its own replica; call "
                      "ms.set_seed(<same seed>) on every rank before building the network, or "
                      "ms.set_auto_parallel_context(parameter_broadcast=True) to start from "
                      "rank 0's values", RuntimeWarning, stacklevel=3)
