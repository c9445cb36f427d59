"""MindSpore's communication Primitive classes (`ops.AllReduce`, `AllGather`, `ReduceScatter`,
`Broadcast`, `AlltoAll`) and `ops.ReduceOp`: views of the collective ops declared in
core/ops/collective.py, with MindSpore 2.10's signatures and argument checks. They run in
PyNative and in graphs on every device target (host callbacks over the group's communicator);
before init() the group is the world of this one process."""
from __future__ import annotations

from ..core.ops import collective as _C
from ..core.primitive import Primitive, normalize_attrs
from ..core.tensor import Tensor

__all__ = ["ReduceOp", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "AlltoAll"]

_WORLD = "hccl_world_group"


class ReduceOp:
    """MindSpore's reduction names for the collectives."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"


def _str(cls, name, v):
    if not isinstance(v, str):
        raise TypeError(f"For '{cls}', the argument '{name}' must be a str, but got "
                        f"{type(v).__name__} {v!r}")
    return v


def _bind(prim, opdef, **attrs):
    """prim's op and attributes (Primitive.__init__'s work; its own argument is named `op`,
    which is AllReduce's reduction attribute)."""
    prim.op, prim.attrs = opdef, normalize_attrs(opdef, attrs)


def _checked(cls, op, attrs):
    """Check the attributes as the op's shape rule does, when the Primitive is made: the
    reduction must be known and the group exist."""
    if "op" in attrs:
        _C._check_op(cls, attrs["op"])
    _C._group(cls, attrs["group"])


class AllReduce(Primitive):
    """`AllReduce(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(x)`: the reduction of
    every rank's x, on every rank."""

    def __init__(self, op=ReduceOp.SUM, group=_WORLD):
        _checked("AllReduce", op, {"op": _str("AllReduce", "op", op),
                                   "group": _str("AllReduce", "group", group)})
        _bind(self, _C.ALL_REDUCE, reduce_op=op, group=group)
        self.name, self.op_name, self.group = "AllReduce", op, group


class AllGather(Primitive):
    """`AllGather(group)(x)`: every rank's x concatenated along axis 0, in rank order."""

    def __init__(self, group=_WORLD):
        _checked("AllGather", None, {"group": _str("AllGather", "group", group)})
        _bind(self, _C.ALL_GATHER, group=group)
        self.name, self.group = "AllGather", group
        self.rank_size = _C._group("AllGather", group).size


class ReduceScatter(Primitive):
    """`ReduceScatter(op=ReduceOp.SUM, group)(x)`: the reduction of every rank's x, split
    along axis 0 into the group's size: this rank's part."""

    def __init__(self, op=ReduceOp.SUM, group=_WORLD):
        _checked("ReduceScatter", op, {"op": _str("ReduceScatter", "op", op),
                                       "group": _str("ReduceScatter", "group", group)})
        _bind(self, _C.REDUCE_SCATTER, reduce_op=op, group=group)
        self.name, self.op_name, self.group = "ReduceScatter", op, group
        self.rank_size = _C._group("ReduceScatter", group).size


class Broadcast(Primitive):
    """`Broadcast(root_rank, group)((x, ...))`: a tuple of the group rank root_rank's tensors,
    on every rank (MindSpore's Broadcast takes and returns a tuple)."""

    def __init__(self, root_rank, group=_WORLD):
        _C._int_attr("Broadcast", "root_rank", root_rank)
        _checked("Broadcast", None, {"group": _str("Broadcast", "group", group)})
        _bind(self, _C.COLLECTIVE_BROADCAST, root_rank=root_rank, group=group)
        self.name, self.root_rank, self.group = "Broadcast", root_rank, group

    def __call__(self, input_x):
        if isinstance(input_x, Tensor) or not isinstance(input_x, (tuple, list)):
            raise TypeError(f"For 'Broadcast', the input must be a tuple of tensors, got "
                            f"{type(input_x).__name__}; pass (x,) and take [0] of the result")
        return tuple(super(Broadcast, self).__call__(x) for x in input_x)


class AlltoAll(Primitive):
    """`AlltoAll(split_count, split_dim, concat_dim, group)(x)`: x split along split_dim into
    split_count (the group size) parts, part j sent to rank j; the parts received concatenated
    along concat_dim in rank order."""

    def __init__(self, split_count, split_dim, concat_dim, group=_WORLD):
        for n, v in (("split_count", split_count), ("split_dim", split_dim),
                     ("concat_dim", concat_dim)):
            _C._int_attr("AlltoAll", n, v)
        _checked("AlltoAll", None, {"group": _str("AlltoAll", "group", group)})
        _bind(self, _C.ALL_TO_ALL, split_count=split_count, split_dim=split_dim,
                         concat_dim=concat_dim, group=group)
        self.name, self.group = "AlltoAll", group
        self.split_count, self.split_dim, self.concat_dim = split_count, split_dim, concat_dim
