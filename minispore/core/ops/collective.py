"""Collective communication ops: all_reduce, all_gather, reduce_scatter, collective_broadcast,
all_to_all (MindSpore's AllReduce, AllGather, ReduceScatter, Broadcast, AlltoAll).

Each is a composite whose one part is a host-callback op (the mechanism of ops.Custom pyfunc,
core/custom_op.py): its kernel copies the input to the host, runs the collective on the group's
communicator (core/communicator.py: MPI after init(), the world of one process before), and
moves the result back. So no backend has or needs a kernel for them, PyNative runs them at the
call, and in a graph each is an ordinary node that every backend's program calls at its place
(the CPU native sink through a callback address), never folded nor merged with another call:
ranks run the same graph, so they meet in each collective in the same order.

The group's communicator is looked up when the op's shape is inferred (AllGather's output has
the group's size in it) and again when it runs. Every rank must pass one shape and dtype; the
MPI communicator checks that before each collective and raises on every rank, naming the op
and each rank's shape, instead of hanging.

The asynchronous all-reduce is a pair of host ops: `all_reduce_start(x)` submits x to the
group's communication stream (core/communicator.py) and returns an int64 ticket;
`all_reduce_wait(ticket, like=x's meta)` gives the result. Between them the caller keeps
computing. In a graph, the scheduling pass (graph/passes/schedule.py) places each start as soon
as its input exists and each wait as late as its first use allows, so data parallel's gradient
buckets travel while the rest of the backward runs. They are not differentiable (the gradient
reducer uses them after the gradients are taken).

ReduceOp.AVG (AllReduce and ReduceScatter, floating point): the sum divided by the group size.

Gradients, as MindSpore's (ops/_grad_experimental/grad_comm_ops.py): AllReduce(sum) ->
AllReduce(sum) of the sensitivity; AllReduce(avg) -> AllReduce(avg); max/min -> that sum where x equals the result; prod -> the
sum of dout * out, divided by x; AllGather -> ReduceScatter(sum); ReduceScatter(sum) ->
AllGather (other reductions have no gradient, as in MindSpore); Broadcast -> the sensitivity
unchanged; AlltoAll -> AlltoAll with split_dim and concat_dim exchanged."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, OpDef, apply, defop

__all__ = ["ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "COLLECTIVE_BROADCAST", "ALL_TO_ALL",
           "all_reduce", "all_gather", "reduce_scatter", "collective_broadcast", "all_to_all",
           "ALL_REDUCE_START", "ALL_REDUCE_WAIT", "all_reduce_start", "all_reduce_wait"]

_WORLD = "hccl_world_group"


def _group(who, group):
    from .. import communicator
    return communicator.lookup(who, group)


_AVERAGING = ("all_reduce", "reduce_scatter", "AllReduce", "ReduceScatter")


def _check_op(who, op):
    from ..communicator import REDUCE_OPS
    if not isinstance(op, str):
        raise TypeError(f"For '{who}', the argument 'op' must be a str (ReduceOp.SUM, MAX, MIN "
                        f"or PROD), but got {type(op).__name__} {op!r}")
    if op == "avg":
        if who not in _AVERAGING:
            raise NotImplementedError(f"For '{who}', op='avg' (ReduceOp.AVG) is supported by "
                                      f"AllReduce and ReduceScatter only; reduce with "
                                      f"ReduceOp.SUM and divide by the group size")
        return
    if op not in REDUCE_OPS:
        raise ValueError(f"For '{who}', the argument 'op' must be one of 'sum', 'max', 'min', "
                         f"'prod', but got {op!r}")


def _no_bool(who, x):
    if x.dtype is dt.bool_:
        raise DTypeError(f"For '{who}', a bool tensor cannot be reduced; cast it, e.g. "
                         f"x.astype(ms.int32)")


def _int_attr(who, name, v):
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"For '{who}', the argument '{name}' must be an int, but got "
                        f"{type(v).__name__} {v!r}")
    return v


def _dim(who, name, d, rank):
    _int_attr(who, name, d)
    if not -rank <= d < rank:
        raise ValueError(f"For '{who}', '{name}' must be in [{-rank}, {rank}) for a rank-{rank} "
                         f"input, but got {d}")
    return d % rank


# ------------------------------------------------------------------ shape rules ------------------
def _float_for_avg(who, x, reduce_op):
    if reduce_op == "avg" and not x.dtype.is_float:
        raise DTypeError(f"For '{who}', op='avg' (ReduceOp.AVG) needs a floating-point tensor "
                         f"(the sum divided by the group size), but got {x.dtype}; cast it, "
                         f"e.g. x.astype(ms.float32)")


def _all_reduce_meta(who, x, reduce_op, group):
    _check_op(who, reduce_op)
    _no_bool(who, x)
    _float_for_avg(who, x, reduce_op)
    _group(who, group)
    return Meta(tuple(x.shape), x.dtype)


def _all_gather_meta(who, x, group):
    size = _group(who, group).size
    if not x.shape:
        raise ShapeError(f"For '{who}', the input must have at least one dimension (ranks' "
                         f"tensors are concatenated along axis 0), but got a 0-d tensor")
    return Meta((x.shape[0] * size,) + tuple(x.shape[1:]), x.dtype)


def _reduce_scatter_meta(who, x, reduce_op, group):
    _check_op(who, reduce_op)
    _no_bool(who, x)
    _float_for_avg(who, x, reduce_op)
    size = _group(who, group).size
    if not x.shape or x.shape[0] % size:
        raise ShapeError(f"For '{who}', the input's first dimension must divide by the group "
                         f"size {size}, but got shape {list(x.shape)}")
    return Meta((x.shape[0] // size,) + tuple(x.shape[1:]), x.dtype)


def _broadcast_meta(who, x, root_rank, group):
    size = _group(who, group).size
    _int_attr(who, "root_rank", root_rank)
    if not 0 <= root_rank < size:
        raise ValueError(f"For '{who}', 'root_rank' must be a rank of group {group!r} in "
                         f"[0, {size}), but got {root_rank}")
    return Meta(tuple(x.shape), x.dtype)


def _all_to_all_meta(who, x, split_count, split_dim, concat_dim, group):
    size = _group(who, group).size
    _int_attr(who, "split_count", split_count)
    if split_count != size:
        raise ValueError(f"For '{who}', 'split_count' must equal the group size {size}, but got "
                         f"{split_count}")
    rank = len(x.shape)
    if not rank:
        raise ShapeError(f"For '{who}', the input must have at least one dimension")
    sd, cd = _dim(who, "split_dim", split_dim, rank), _dim(who, "concat_dim", concat_dim, rank)
    if x.shape[sd] % split_count:
        raise ShapeError(f"For '{who}', the input's dimension split_dim={split_dim} "
                         f"({x.shape[sd]}) must divide by split_count {split_count}, but got "
                         f"shape {list(x.shape)}")
    shape = list(x.shape)
    shape[sd] //= split_count
    shape[cd] *= split_count
    return Meta(tuple(shape), x.dtype)


# ------------------------------------------------------------------ host collectives -------------
def _averaged(comm, x, reduce, reduce_op):
    """reduce(x, op) for the MPI reductions; ReduceOp.AVG as the sum divided by the group
    size, in float32 for the half types (rounded once)."""
    if reduce_op != "avg":
        return reduce(x, reduce_op)
    wide = x.astype(np.float32) if x.dtype.itemsize == 2 else x
    total = reduce(wide, "sum")
    return (total / np.asarray(comm.size, total.dtype)).astype(x.dtype)


def _run_all_reduce(comm, x, reduce_op, group):
    return _averaged(comm, x, comm.all_reduce, reduce_op)


def _run_all_gather(comm, x, group):
    return comm.all_gather(x)


def _run_reduce_scatter(comm, x, reduce_op, group):
    return _averaged(comm, x, comm.reduce_scatter, reduce_op)


def _run_broadcast(comm, x, root_rank, group):
    return comm.broadcast(x, root_rank)


def _run_all_to_all(comm, x, split_count, split_dim, concat_dim, group):
    return comm.all_to_all(x, split_count, split_dim % x.ndim, concat_dim % x.ndim)


def run_on_device(backend, who, buf, run, comm, phase):
    """Run the host function `run` (numpy array -> numpy array) of collective `who` on a
    backend's buffer. A backend that models its own interconnect defines
    `run_collective(who, buf, run, comm, phase)` (the simulated Ascend: HCCL time on a
    communication stream, no PCIe copies); phase is "sync" (a whole collective), "start" (run
    submits it and returns its ticket) or "wait" (buf is the ticket; run returns the result).
    Every other backend copies to the host and back; no copy of the input is made, as every
    collective writes a new array (MPI's receive buffer)."""
    custom = getattr(backend, "run_collective", None)
    if custom is not None:
        return custom(who, buf, run, comm, phase)
    return backend.to_device(run(backend.to_host(buf)))


def _host_op(who, attrs, meta, run, check_same_shape=True) -> OpDef:
    """The host-callback op of one collective (unregistered, as a Custom pyfunc's: the
    composite `who` is what the registry and the op database know); `check_same_shape` runs
    the cross-rank shape check first (off for an op whose inputs differ by rank on purpose)."""

    def collective(x, **kw):
        comm = _group(who, kw["group"])
        a = np.asarray(x, order="C")
        if check_same_shape:
            comm.check_same_shape(who, a)
        return np.asarray(run(comm, a, **kw), order="C")

    def host_kernel(backend, in_metas, kw, out_meta):
        def kernel(buf):
            comm = _group(who, kw["group"])
            return run_on_device(backend, who, buf, lambda a: collective(a, **kw), comm, "sync")
        kernel.host = True                  # a CUDA-graph capture leaves it on the host
        return kernel

    op = OpDef(f"{who}.host", infer=lambda x, **kw: meta(who, x, **kw),
               ref=collective, attrs=dict(attrs), arity=1, differentiable=False)
    op.host_kernel = host_kernel
    op.collective = True                    # a device with its own interconnect takes it over
    from ..graph.passes import NONDETERMINISTIC
    NONDETERMINISTIC.add(op.name)           # a collective runs at every step: never folded
    return op


def _declare(name, attrs, meta, run, bprop):
    host = _host_op(name, attrs, meta, run)
    return defop(name, infer=lambda x, **kw: meta(name, x, **kw), ref=host.ref, attrs=attrs,
                 arity=1, bprop=bprop, composite=lambda x, **kw: apply(host, x, **kw))


# ------------------------------------------------------------------ gradients --------------------
def _all_reduce_bprop(i, out, dout, reduce_op="sum", group=_WORLD):
    from . import math as _m
    x = i[0]
    if reduce_op == "prod":
        return (_m.div(all_reduce(_m.mul(dout, out), "sum", group), x),)
    if reduce_op == "avg":                  # y = (1/n) sum_r x_r on every rank
        return (all_reduce(dout, "avg", group),)
    dx = all_reduce(dout, "sum", group)
    if reduce_op == "sum":
        return (dx,)
    return (_m.mul(dx, _m.cast(_m.eq(x, out), dx.dtype)),)


def _all_gather_bprop(i, out, dout, group=_WORLD):
    return (reduce_scatter(dout, "sum", group),)


def _reduce_scatter_bprop(i, out, dout, reduce_op="sum", group=_WORLD):
    if reduce_op != "sum":
        raise RuntimeError(f"For 'ReduceScatter', the gradient is defined for ReduceOp.SUM "
                           f"only, but got op={reduce_op!r} (as in MindSpore)")
    return (all_gather(dout, group),)


def _broadcast_bprop(i, out, dout, root_rank=0, group=_WORLD):
    return (dout,)                          # MindSpore's Broadcast gradient: dout as it is


def _all_to_all_bprop(i, out, dout, split_count=1, split_dim=0, concat_dim=0, group=_WORLD):
    return (all_to_all(dout, split_count, concat_dim, split_dim, group),)


ALL_REDUCE = _declare("all_reduce", {"reduce_op": "sum", "group": _WORLD}, _all_reduce_meta,
                      _run_all_reduce, _all_reduce_bprop)
ALL_GATHER = _declare("all_gather", {"group": _WORLD}, _all_gather_meta, _run_all_gather,
                      _all_gather_bprop)
REDUCE_SCATTER = _declare("reduce_scatter", {"reduce_op": "sum", "group": _WORLD},
                          _reduce_scatter_meta, _run_reduce_scatter, _reduce_scatter_bprop)
COLLECTIVE_BROADCAST = _declare("collective_broadcast", {"root_rank": 0, "group": _WORLD},
                                _broadcast_meta, _run_broadcast, _broadcast_bprop)
ALL_TO_ALL = _declare("all_to_all", {"split_count": 1, "split_dim": 0, "concat_dim": 0,
                                     "group": _WORLD},
                      _all_to_all_meta, _run_all_to_all, _all_to_all_bprop)


def all_reduce(x, op="sum", group=_WORLD):
    """The elementwise reduction (sum, max, min, prod) of every rank's x, on every rank."""
    return apply(ALL_REDUCE, x, reduce_op=op, group=group)


def all_gather(x, group=_WORLD):
    """Every rank's x concatenated along axis 0, in rank order."""
    return apply(ALL_GATHER, x, group=group)


def reduce_scatter(x, op="sum", group=_WORLD):
    """The reduction of every rank's x, split along axis 0: this rank's part."""
    return apply(REDUCE_SCATTER, x, reduce_op=op, group=group)


def collective_broadcast(x, root_rank=0, group=_WORLD):
    """Group rank root_rank's x, on every rank."""
    return apply(COLLECTIVE_BROADCAST, x, root_rank=root_rank, group=group)


def all_to_all(x, split_count, split_dim, concat_dim, group=_WORLD):
    """x split along split_dim, part j to rank j; the parts received concatenated along
    concat_dim."""
    return apply(ALL_TO_ALL, x, split_count=split_count, split_dim=split_dim,
                 concat_dim=concat_dim, group=group)


# ------------------------------------------------------------------ asynchronous all-reduce ------
def _start_meta(x, reduce_op, group):
    _check_op("all_reduce_async", reduce_op)
    _no_bool("all_reduce_async", x)
    _group("all_reduce_async", group)
    return Meta((), dt.int64)


def _wait_meta(ticket, shape, dtype, group):
    return Meta(tuple(shape), dtype)


def _start(x, reduce_op, group):
    comm = _group("all_reduce_async", group)
    ticket = comm.start_all_reduce(np.asarray(x), reduce_op, "all_reduce_async")
    return np.asarray(ticket, np.int64)


def _wait(ticket, shape, dtype, group):
    return np.asarray(_group("all_reduce_async", group).finish(int(ticket)), order="C")


def _async_host_op(name, infer, run, attrs, schedule) -> OpDef:
    def host_kernel(backend, in_metas, kw, out_meta):
        def kernel(buf):
            comm = _group("all_reduce_async", kw["group"])
            return run_on_device(backend, "all_reduce_async", buf, lambda a: run(a, **kw),
                                 comm, "start" if schedule == "early" else "wait")
        kernel.host = True
        return kernel
    op = OpDef(name, infer=infer, ref=run, attrs=attrs, arity=1, differentiable=False)
    op.host_kernel = host_kernel
    op.collective = True
    op.schedule = schedule          # graph/passes/schedule.py: "early" starts, "late" waits
    from ..graph.passes import NONDETERMINISTIC
    NONDETERMINISTIC.add(name)
    return op


ALL_REDUCE_START = _async_host_op("all_reduce_start", _start_meta, _start,
                                  {"reduce_op": "sum", "group": _WORLD}, "early")
ALL_REDUCE_WAIT = _async_host_op("all_reduce_wait", _wait_meta, _wait,
                                 {"shape": (), "dtype": dt.float32, "group": _WORLD}, "late")


def all_reduce_start(x, op="sum", group=_WORLD):
    """Submit the all-reduce of x to the group's communication stream: its ticket."""
    return apply(ALL_REDUCE_START, x, reduce_op=op, group=group)


def all_reduce_wait(ticket, like, group=_WORLD):
    """The result of the all-reduce `ticket` of a tensor shaped like `like`."""
    return apply(ALL_REDUCE_WAIT, ticket, shape=tuple(like.shape), dtype=like.dtype,
                 group=group)
