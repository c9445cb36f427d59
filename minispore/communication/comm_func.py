"""minispore.communication.comm_func: MindSpore 2.10's functional collectives (all_reduce,
all_gather_into_tensor, reduce_scatter_tensor, broadcast, barrier, reduce, gather_into_tensor,
scatter_tensor) over the collective ops of core/ops/collective.py and collective_p2p.py, and
(from comm_p2p.py) the point-to-point and uneven all-to-all functions. As in MindSpore 2.10,
all_reduce, all_gather_into_tensor and reduce_scatter_tensor return (tensor, handle): handle
is None, or with async_op=True a CommHandle whose wait() returns at once (the collective has
completed when the call returns); broadcast, reduce, gather_into_tensor and scatter_tensor
return the tensor (reduce and gather_into_tensor: zeros of shape [1] on the ranks other than
dst, as in MindSpore); barrier returns None. `dst`/`src` are world ranks."""
from __future__ import annotations

from ..core.ops import collective as _C
from ..core.ops import collective_p2p as _R
from ..core.tensor import Tensor
from ..core import communicator as _comm
from .management import GlobalComm, get_group_rank_from_world_rank

__all__ = ["CommHandle", "all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
           "broadcast", "barrier", "reduce", "gather_into_tensor", "scatter_tensor", "send",
           "recv", "isend", "irecv", "P2POp", "batch_isend_irecv", "all_to_all_with_output_shape",
           "all_to_all_single_with_output_shape", "all_to_all_v_c"]

_WORLD = GlobalComm.WORLD_COMM_GROUP


class CommHandle:
    """The handle of an asynchronous communication: `handle` is None (the collective is
    complete already) or the pending point-to-point requests, which wait() completes."""

    def __init__(self, handle=None, exec_sync=False):
        self.handle, self.exec_sync = handle, exec_sync

    def wait(self):
        if self.handle:
            self.handle.wait()

    def __repr__(self):
        return "CommHandle(handle=None)"


def _tensor(who, tensor):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"For {who}, the input tensor must be tensor")


def _reduce_op(who, op):
    if not isinstance(op, str):
        raise TypeError(f"For {who}, the input op type must be str")
    if op not in ("sum", "prod", "min", "max"):
        raise TypeError(f"For {who}, the input op value must be one of sum, prod, min, max")


def _async(who, async_op):
    if not isinstance(async_op, bool):
        raise TypeError(f"For {who}, async_op must be a bool, but got {type(async_op).__name__}")
    return CommHandle() if async_op else None


def all_reduce(tensor, op="sum", group=_WORLD, async_op=False):
    """(the reduction of every rank's tensor, handle)."""
    _tensor("all_reduce", tensor)
    _reduce_op("all_reduce", op)
    handle = _async("all_reduce", async_op)
    return _C.all_reduce(tensor, op, group), handle


def all_gather_into_tensor(tensor, group=_WORLD, async_op=False):
    """(every rank's tensor concatenated along axis 0, handle)."""
    _tensor("all_gather_into_tensor", tensor)
    handle = _async("all_gather_into_tensor", async_op)
    return _C.all_gather(tensor, group), handle


def reduce_scatter_tensor(tensor, op="sum", group=_WORLD, async_op=False):
    """(this rank's part along axis 0 of the reduction of every rank's tensor, handle)."""
    _tensor("reduce_scatter_tensor", tensor)
    _reduce_op("reduce_scatter_tensor", op)
    handle = _async("reduce_scatter_tensor", async_op)
    return _C.reduce_scatter(tensor, op, group), handle


def broadcast(tensor, src=0, group=_WORLD):
    """The tensor of world rank `src`, on every rank of the group."""
    _tensor("broadcast", tensor)
    if not isinstance(src, int) or isinstance(src, bool):
        raise TypeError("For broadcast, the src must be int")
    if GlobalComm.INITED:
        src = get_group_rank_from_world_rank(src, group)
    return _C.collective_broadcast(tensor, src, group)


def _root(who, name, rank, group):
    """The group rank of world rank `rank` (before init(), the world of one process: 0)."""
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError(f"For {who}, the {name} must be int")
    if GlobalComm.INITED:
        return get_group_rank_from_world_rank(rank, group)
    return rank


def reduce(tensor, dst, op="sum", group=_WORLD):
    """The reduction of every rank's tensor on world rank `dst`; zeros of shape [1] elsewhere."""
    _tensor("reduce", tensor)
    _reduce_op("reduce", op)
    return _R.reduce(tensor, _root("reduce", "dst", dst, group), op, group)


def gather_into_tensor(tensor, dst=0, group=_WORLD):
    """Every rank's tensor concatenated along axis 0 on world rank `dst`; zeros of shape [1]
    elsewhere."""
    _tensor("gather_into_tensor", tensor)
    return _R.collective_gather(tensor, _root("gather_into_tensor", "dst", dst, group), group)


def scatter_tensor(tensor, src=0, group=_WORLD):
    """World rank `src`'s tensor split evenly along axis 0: this rank's part."""
    _tensor("scatter_tensor", tensor)
    return _R.collective_scatter(tensor, _root("scatter_tensor", "src", src, group), group)


def barrier(group=_WORLD):
    """Wait until every rank of the group reaches the barrier (PyNative: a graph has no tensor
    to order it by; call it outside the jitted function)."""
    if not isinstance(group, str):
        raise TypeError(f"group must be type of string, but got {type(group)}")
    from ..core.pynative import EAGER
    from ..core.primitive import executor
    if executor.current is not EAGER:
        raise NotImplementedError("barrier: comm_func.barrier runs in PyNative only (a graph "
                                  "orders its nodes by their tensors, and a barrier has none); "
                                  "call it outside the graph (ms.jit / GRAPH_MODE construct)")
    _comm.lookup("barrier", group).barrier()


from .comm_p2p import (P2POp, all_to_all_single_with_output_shape,  # noqa: E402
                       all_to_all_v_c, all_to_all_with_output_shape, batch_isend_irecv, irecv,
                       isend, recv, send)
