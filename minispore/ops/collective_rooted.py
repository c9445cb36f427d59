"""MindSpore's rooted communication Primitive classes (`ops.Reduce`, `ops.CollectiveGather`,
`ops.CollectiveScatter`): views of the ops of core/ops/collective_p2p.py with MindSpore
2.10's signatures. Their ranks are group ranks (comm_func.reduce and friends take world ranks
and translate them); the ranks other than the root get zeros of shape [1] from Reduce and
CollectiveGather, as in MindSpore. They run in PyNative and in graphs."""
from __future__ import annotations

from ..core.ops import collective as _C
from ..core.ops import collective_p2p as _R
from ..core.primitive import Primitive
from .collective import _WORLD, ReduceOp, _bind, _checked, _str

__all__ = ["Reduce", "CollectiveGather", "CollectiveScatter"]


class Reduce(Primitive):
    """`Reduce(dest_rank, op=ReduceOp.SUM, group)(x)`: the reduction of every rank's x on
    group rank dest_rank."""

    def __init__(self, dest_rank, op=ReduceOp.SUM, group=_WORLD):
        _C._int_attr("Reduce", "dest_rank", dest_rank)
        _checked("Reduce", op, {"op": _str("Reduce", "op", op),
                                "group": _str("Reduce", "group", group)})
        _R._root("Reduce", "dest_rank", dest_rank, group)
        _bind(self, _R.REDUCE, dest_rank=dest_rank, reduce_op=op, group=group)
        self.name, self.dest_rank, self.op_name, self.group = "Reduce", dest_rank, op, group


class CollectiveGather(Primitive):
    """`CollectiveGather(dest_rank, group)(x)`: every rank's x concatenated along axis 0 on
    group rank dest_rank."""

    def __init__(self, dest_rank, group=_WORLD):
        _C._int_attr("CollectiveGather", "dest_rank", dest_rank)
        _checked("CollectiveGather", None, {"group": _str("CollectiveGather", "group", group)})
        comm = _R._root("CollectiveGather", "dest_rank", dest_rank, group)
        _bind(self, _R.COLLECTIVE_GATHER, dest_rank=dest_rank, group=group)
        self.name, self.dest_rank, self.group = "CollectiveGather", dest_rank, group
        self.rank_size = comm.size


class CollectiveScatter(Primitive):
    """`CollectiveScatter(src_rank=0, group)(x)`: group rank src_rank's x split evenly along
    axis 0: this rank's part."""

    def __init__(self, src_rank=0, group=_WORLD):
        _C._int_attr("CollectiveScatter", "src_rank", src_rank)
        _checked("CollectiveScatter", None, {"group": _str("CollectiveScatter", "group", group)})
        comm = _R._root("CollectiveScatter", "src_rank", src_rank, group)
        _bind(self, _R.COLLECTIVE_SCATTER, src_rank=src_rank, group=group)
        self.name, self.src_rank, self.group = "CollectiveScatter", src_rank, group
        self.rank_size = comm.size
