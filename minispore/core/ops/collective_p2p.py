"""Rooted collective ops: reduce, collective_gather, collective_scatter (MindSpore's Reduce,
CollectiveGather, CollectiveScatter), whose result lives on one rank (the root) or comes from
it, so their shapes differ by rank.

They follow core/ops/collective.py: each is a composite whose one part is a host-callback op
that runs the collective on the group's communicator (core/communicator.py) through
`run_on_device`, so every backend runs them in PyNative and in graphs. As in MindSpore, the
ranks other than the root get a tensor of shape [1] (zeros) from reduce and
collective_gather: "a tensor with shape [1], which has no mathematical meaning".

Gradients, as MindSpore's (ops/_grad_experimental/grad_comm_ops.py): Reduce -> Broadcast of
the root's sensitivity; CollectiveGather -> Broadcast of the root's sensitivity, this rank's
part of it; CollectiveScatter -> CollectiveGather of the sensitivities to the root, zeros on
the other ranks. The broadcasts of a gradient carry the root's shape, which the other ranks
know from the forward input, so they are host ops of their own (`_broadcast_from_root`)
without the same-shape check of the other collectives."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..primitive import Meta, apply
from .collective import _WORLD, _check_op, _declare, _group, _host_op, _int_attr, _no_bool

__all__ = ["REDUCE", "COLLECTIVE_GATHER", "COLLECTIVE_SCATTER", "reduce", "collective_gather",
           "collective_scatter"]


def _root(who, name, root, group):
    comm = _group(who, group)
    _int_attr(who, name, root)
    if not 0 <= root < comm.size:
        raise ValueError(f"For '{who}', '{name}' must be a rank of group {group!r} in "
                         f"[0, {comm.size}), but got {root}")
    return comm


def _at_least_1d(who, x):
    if not x.shape:
        raise ShapeError(f"For '{who}', the input must have at least one dimension (it is split "
                         f"or concatenated along axis 0), but got a 0-d tensor; reshape it to [1]")


# ------------------------------------------------------------------ shape rules ------------------
def _reduce_meta(who, x, dest_rank, reduce_op, group):
    _check_op(who, reduce_op)
    _no_bool(who, x)
    comm = _root(who, "dest_rank", dest_rank, group)
    return Meta(tuple(x.shape) if comm.rank == dest_rank else (1,), x.dtype)


def _gather_meta(who, x, dest_rank, group):
    comm = _root(who, "dest_rank", dest_rank, group)
    _at_least_1d(who, x)
    if comm.rank != dest_rank:
        return Meta((1,), x.dtype)
    return Meta((x.shape[0] * comm.size,) + tuple(x.shape[1:]), x.dtype)


def _scatter_meta(who, x, src_rank, group):
    comm = _root(who, "src_rank", src_rank, group)
    _at_least_1d(who, x)
    if x.shape[0] % comm.size:
        raise ShapeError(f"For '{who}', the input's first dimension must divide by the group "
                         f"size {comm.size}, but got shape {list(x.shape)}")
    return Meta((x.shape[0] // comm.size,) + tuple(x.shape[1:]), x.dtype)


# ------------------------------------------------------------------ host collectives -------------
def _placeholder(x):
    return np.zeros((1,), x.dtype)


def _run_reduce(comm, x, dest_rank, reduce_op, group):
    out = comm.all_reduce(x, reduce_op)      # every dtype the all-reduce handles (f16, bf16)
    return out if comm.rank == dest_rank else _placeholder(x)


def _run_gather(comm, x, dest_rank, group):
    out = comm.all_gather(x)
    return out if comm.rank == dest_rank else _placeholder(x)


def _run_scatter(comm, x, src_rank, group):
    full = comm.broadcast(x, src_rank)
    part = x.shape[0] // comm.size
    return np.array(full[comm.rank * part:(comm.rank + 1) * part])


# ------------------------------------------------------------------ gradients --------------------
def _from_root_meta(who, x, root, shape, group):
    return Meta(tuple(shape), x.dtype)


def _run_from_root(comm, x, root, shape, group):
    buf = x if comm.rank == root else np.zeros(tuple(shape), x.dtype)
    return comm.broadcast(np.ascontiguousarray(buf), root)


_BROADCAST_FROM_ROOT = _host_op("broadcast_from_root", {"root": 0, "shape": (), "group": _WORLD},
                                _from_root_meta, _run_from_root, False)


def _broadcast_from_root(x, root, shape, group):
    """The root's x (of shape `shape`) on every rank; the other ranks' x is not read."""
    return apply(_BROADCAST_FROM_ROOT, x, root=root, shape=tuple(shape), group=group)


def _reduce_bprop(i, out, dout, dest_rank=0, reduce_op="sum", group=_WORLD):
    return (_broadcast_from_root(dout, dest_rank, i[0].shape, group),)


def _gather_bprop(i, out, dout, dest_rank=0, group=_WORLD):
    from . import array as _a
    x = i[0]
    comm = _group("collective_gather", group)
    full = _broadcast_from_root(dout, dest_rank, (x.shape[0] * comm.size,) + tuple(x.shape[1:]),
                                group)
    if comm.size == 1:
        return (full,)
    return (_a.split(full, x.shape[0], 0)[comm.rank],)


def _scatter_bprop(i, out, dout, src_rank=0, group=_WORLD):
    from . import array as _a, math as _m
    gathered = collective_gather(dout, src_rank, group)
    if _group("collective_scatter", group).rank == src_rank:
        return (gathered,)
    # the other ranks' result of the gather is zeros of shape [1]: adding it to zeros like x
    # keeps the gather in the gradient's program (MindSpore: depend(zeros_like(x), gather))
    return (_m.add(_a.zeros_like(i[0]), gathered),)


REDUCE = _declare("reduce", {"dest_rank": 0, "reduce_op": "sum", "group": _WORLD},
                  _reduce_meta, _run_reduce, _reduce_bprop)
COLLECTIVE_GATHER = _declare("collective_gather", {"dest_rank": 0, "group": _WORLD},
                             _gather_meta, _run_gather, _gather_bprop)
COLLECTIVE_SCATTER = _declare("collective_scatter", {"src_rank": 0, "group": _WORLD},
                              _scatter_meta, _run_scatter, _scatter_bprop)


def reduce(x, dest_rank=0, op="sum", group=_WORLD):
    """The reduction of every rank's x on group rank dest_rank; zeros of shape [1] elsewhere."""
    return apply(REDUCE, x, dest_rank=dest_rank, reduce_op=op, group=group)


def collective_gather(x, dest_rank=0, group=_WORLD):
    """Every rank's x concatenated along axis 0 on group rank dest_rank; zeros of shape [1]
    elsewhere."""
    return apply(COLLECTIVE_GATHER, x, dest_rank=dest_rank, group=group)


def collective_scatter(x, src_rank=0, group=_WORLD):
    """Group rank src_rank's x split along axis 0 into the group's size: this rank's part."""
    return apply(COLLECTIVE_SCATTER, x, src_rank=src_rank, group=group)
