"""nn.SyncBatchNorm: batch normalisation whose batch statistics are those of the batches of
every rank of a group (MindSpore 2.10's nn.SyncBatchNorm, mindspore/nn/layer/normalization.py).

As MindSpore's: 2-D (N, C) or 4-D (N, C, H, W) inputs; `process_groups` None synchronises over
the world when there are several ranks; a list of lists of world ranks makes one group per
list (created with communication.create_group under MindSpore's name, the list's length, '_'
and the sha256 of the ranks joined by '_', once per list in the process), and this rank
synchronises with the list it is in when that list has more than one rank; a rank in no list,
a one-rank list, one process, or process_groups=0 normalises with its own batch, as
nn.BatchNorm does. The rank ids must be ints in [0, world size) without repeats (ValueError,
as MindSpore's, which also raises ValueError for a process_groups that is not a list).
Parameters, defaults, momentum convention and eval behaviour are nn.BatchNorm's
(nn/layers/normalization.py).

In training with batch statistics the per-channel mean is the all-reduced sum over the
all-reduced element count, then the (biased) variance the all-reduced sum of squared
deviations over that count: two collectives over the group, exact as one batch's statistics
(not E[x^2] - E[x]^2). The moving variance takes the unbiased global variance (count / (count
- 1)), as BatchNorm's. Gradients flow through the all-reduces (AllReduce(sum)'s gradient is
AllReduce(sum)), which is the synchronised batch norm's backward."""
from __future__ import annotations

import hashlib
import itertools

from ...core import dtype as dt
from ...core.ops import array as _a
from ...core.ops import collective as _coll
from ...core.ops import math as _m
from ...core.ops import norm as _nm
from ...core.ops import reduce as _r
from ...core.ops.state import assign
from .normalization import _BatchNorm, _check_bn_input

__all__ = ["SyncBatchNorm"]

_GROUPS: dict = {}          # '_'-joined rank list -> the group name made for it


def _sync_group_name(ranks) -> str:
    """MindSpore's name for the SyncBatchNorm group of world ranks `ranks` (created once)."""
    from ...communication import management
    key = "_".join(str(r) for r in ranks)
    if key not in _GROUPS:
        name = f"{len(ranks)}_{hashlib.sha256(key.encode('utf-8')).hexdigest()}"
        management.create_group(name, list(ranks))
        _GROUPS[key] = name
    return _GROUPS[key]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over the batches of every rank of a group (see the module
    docstring)."""
    who = "SyncBatchNorm"
    ranks = (2, 4)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, process_groups=None, dtype=dt.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init,
                         moving_mean_init, moving_var_init, use_batch_statistics, "NCHW", dtype)
        self.process_groups = process_groups
        self.is_global, self.group_name, self.group_device_num = False, None, 1
        if isinstance(process_groups, int) and not isinstance(process_groups, bool) and \
                process_groups == 0:
            return                              # MindSpore: process_groups=0 never syncs
        from ...communication import management
        self.rank_id, self.rank_size = management.get_rank(), management.get_group_size()
        if process_groups is not None:
            if not isinstance(process_groups, list):
                raise ValueError(f"The parameter 'process_groups' must be isinstance of <class "
                                 f"'list'>, but got {process_groups!r}: a list of lists of "
                                 f"world rank ids, e.g. [[0, 1], [2, 3]]")
            self._check_rank_ids(process_groups, self.rank_size)
            for sub_group in process_groups:
                if self.rank_id in sub_group and len(sub_group) > 1:
                    self.is_global, self.group_device_num = True, len(sub_group)
                    self.group_name = _sync_group_name(sub_group)
        elif self.rank_size > 1:
            self.is_global, self.group_device_num = True, self.rank_size
            self.group_name = management.GlobalComm.WORLD_COMM_GROUP

    def _check_rank_ids(self, process_groups, rank_size):
        for sub_group in process_groups:
            if not isinstance(sub_group, list):
                raise ValueError(f"The parameter 'sub group' must be isinstance of <class "
                                 f"'list'>, but got {sub_group!r} in process_groups "
                                 f"{process_groups}")
        seen = set()
        for rid in itertools.chain(*process_groups):
            if not isinstance(rid, int) or isinstance(rid, bool):
                raise TypeError(f"SyncBatchNorm: rank id in process_groups must be an int, got "
                                f"{rid!r}")
            if not 0 <= rid < rank_size:
                raise ValueError(f"For 'SyncBatchNorm', the 'rank id in process_groups' must be "
                                 f"in range of [0, {rank_size}), but got {rid} (the world has "
                                 f"{rank_size} ranks)")
            if rid in seen:
                raise ValueError(f"For 'SyncBatchNorm', rank id in 'process_groups' must not be "
                                 f"duplicated, but got {process_groups}.")
            seen.add(rid)

    def construct(self, x):
        if len(x.shape) not in (2, 4):
            raise ValueError(f"For 'SyncBatchNorm', the input must have 2 dims or 4 dims, but got "
                             f"{len(x.shape)} (shape {tuple(x.shape)}); reshape it to (N, C) or "
                             f"(N, C, H, W)")
        _check_bn_input(self.who, x.shape, self.ranks, self.num_features)
        batch_stats = self.training if self.use_batch_statistics is None else \
            self.use_batch_statistics
        if not (self.is_global and batch_stats):
            return super().construct(x)
        return self._synchronised(x)

    def _synchronised(self, x):
        ndim, group = len(x.shape), self.group_name
        axes = _nm.bn_axes(ndim)
        xf = _m.cast(x, dt.float32) if x.dtype in (dt.float16, dt.bfloat16) else x
        local = 1
        for k in axes:
            local *= x.shape[k]
        count = _coll.all_reduce(_a.full((1,), float(local), dtype=xf.dtype), "sum", group)
        mean = _m.div(_coll.all_reduce(_r.sum(xf, axes), "sum", group), count)
        centred = _m.sub(xf, _nm.reshape_c(mean, ndim))
        var = _m.div(_coll.all_reduce(_r.sum(_m.mul(centred, centred), axes), "sum", group),
                     count)
        inv = _m.rsqrt(_m.add(var, self.eps))
        y = _m.mul(centred, _nm.reshape_c(_m.mul(inv, _m.cast(self.gamma, xf.dtype)), ndim))
        y = _m.add(y, _nm.reshape_c(_m.cast(self.beta, xf.dtype), ndim))
        momentum = self._op_momentum
        unbiased = _m.mul(var, _m.div(count, _m.maximum(_m.sub(count, 1.0), 1.0)))
        for p, batch in ((self.moving_mean, mean), (self.moving_variance, unbiased)):
            stat = _a.stop_gradient(_m.cast(batch, p.dtype))
            assign(p, _m.add(_m.mul(p, 1.0 - momentum), _m.mul(stat, momentum)))
        return _m.cast(y, x.dtype)

    def extend_repr(self):
        return super().extend_repr() + f", process_groups={self.process_groups}"
