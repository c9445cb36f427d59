"""MindSpore 2.10's point-to-point and uneven all-to-all functions of
`mindspore.communication.comm_func`: send, recv, isend, irecv, P2POp, batch_isend_irecv,
all_to_all_with_output_shape, all_to_all_single_with_output_shape, all_to_all_v_c.

They run over the group's MPI communicator (core/communicator.py's MPICommunicator `comm`),
on the host, in PyNative only, as in MindSpore ("Only support PyNative mode, Graph mode is not
currently supported"): in a graph they raise NotImplementedError. Point-to-point needs init()
(a world of one process has no peer); the all-to-alls before init() keep the input.

Return structures are MindSpore's: send -> None, recv -> Tensor, isend -> CommHandle,
irecv -> (Tensor, CommHandle) whose tensor holds the message once handle.wait() returned,
batch_isend_irecv -> a tuple with, per P2POp, a 0-d zero tensor for an isend and the received
tensor for an irecv; all_to_all_with_output_shape -> (tuple of tensors, handle or None),
all_to_all_single_with_output_shape -> (Tensor, handle or None), all_to_all_v_c -> handle
or None (the result written into `output`). Ranks and peers are world ranks, as in MindSpore.
These functions have no gradient (MindSpore's comm_func ones return None or fresh tensors)."""
from __future__ import annotations

import numpy as np

from ..core import communicator as _comm
from ..core.tensor import Tensor, wrap
from .management import GlobalComm, get_group_rank_from_world_rank

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv",
           "all_to_all_with_output_shape", "all_to_all_single_with_output_shape",
           "all_to_all_v_c"]

_WORLD = GlobalComm.WORLD_COMM_GROUP


def _pynative_only(who):
    from ..core.primitive import executor
    from ..core.pynative import EAGER
    if executor.current is not EAGER:
        raise NotImplementedError(f"For {who}: it runs in PyNative mode only, as in MindSpore "
                                  f"(Graph mode is not supported); call it outside the graph "
                                  f"(ms.jit / a GRAPH_MODE construct)")


def _mpi(who, group):
    """The MPI communicator of `group` (point-to-point needs init())."""
    comm = _comm.lookup(who, group)
    if not hasattr(comm, "comm"):
        raise RuntimeError(f"For {who}: point-to-point communication needs a peer: call "
                           f"mindspore.communication.init() in a job of several ranks "
                           f"(python -m minispore run -n 2 script.py)")
    return comm


def _tensor(who, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"For {who}, the input tensor must be tensor")


def _rank_arg(who, name, rank):
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError(f"For {who}, the {name} must be int")


def _peer(who, name, rank, group):
    _rank_arg(who, name, rank)
    return get_group_rank_from_world_rank(rank, group)


def _tag(who, tag):
    if not isinstance(tag, int) or isinstance(tag, bool) or tag < 0:
        raise TypeError(f"For {who}, the tag must be a non-negative int, but got {tag!r}")
    return tag


def _bytes(a):
    """A contiguous array's bytes as a flat uint8 array (any dtype, bfloat16 too)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


class _Requests:
    """Pending MPI requests, with the buffers they read or write kept alive until wait()."""

    def __init__(self, requests, buffers):
        self.requests, self.buffers = list(requests), buffers

    def wait(self):
        if self.requests:
            from mpi4py import MPI
            MPI.Request.Waitall(self.requests)
            self.requests = []


def _handle(pending):
    from .comm_func import CommHandle
    return CommHandle(pending)


def _empty_like_spec(shape, dtype):
    from ..core import dtype as dt
    return np.zeros(tuple(shape), dt.to_dtype(dtype).np)


# ------------------------------------------------------------------ point to point ---------------
def send(tensor, dst=0, group=_WORLD, tag=0):
    """Send `tensor` to world rank `dst`; returns None once it is sent."""
    _tensor("send", tensor)
    _pynative_only("send")
    _rank_arg("send", "dst", dst)
    comm, peer = _mpi("send", group), _peer("send", "dst", dst, group)
    comm.comm.Send(_bytes(tensor.asnumpy()), dest=peer, tag=_tag("send", tag))


def recv(tensor, src=0, group=_WORLD, tag=0):
    """A tensor of `tensor`'s shape and dtype received from world rank `src` (the input's
    values are not used)."""
    _tensor("recv", tensor)
    _pynative_only("recv")
    _rank_arg("recv", "src", src)
    comm, peer = _mpi("recv", group), _peer("recv", "src", src, group)
    out = _empty_like_spec(tensor.shape, tensor.dtype)
    comm.comm.Recv(_bytes(out), source=peer, tag=_tag("recv", tag))
    return Tensor(out)


def isend(tensor, dst=0, group=_WORLD, tag=0):
    """Start sending `tensor` to world rank `dst`; returns the CommHandle to wait on."""
    _tensor("isend", tensor)
    _pynative_only("isend")
    _rank_arg("isend", "dst", dst)
    comm, peer = _mpi("isend", group), _peer("isend", "dst", dst, group)
    buf = _bytes(tensor.asnumpy())
    return _handle(_Requests([comm.comm.Isend(buf, dest=peer, tag=_tag("isend", tag))], buf))


def irecv(tensor, src=0, group=_WORLD, tag=0):
    """(tensor, CommHandle): the tensor, of `tensor`'s shape and dtype, holds the message from
    world rank `src` once handle.wait() has returned."""
    _tensor("irecv", tensor)
    _pynative_only("irecv")
    _rank_arg("irecv", "src", src)
    comm, peer = _mpi("irecv", group), _peer("irecv", "src", src, group)
    out = _empty_like_spec(tensor.shape, tensor.dtype)
    req = comm.comm.Irecv(_bytes(out), source=peer, tag=_tag("irecv", tag))
    return wrap(out), _handle(_Requests([req], out))


class P2POp:
    """One isend or irecv of batch_isend_irecv: `op` is "isend"/"irecv" (or the functions
    isend/irecv), `tensor` the tensor to send, or for irecv a tensor or a shape tuple (then
    `recv_dtype` is needed), `peer` a world rank. tag must be 0 (as in MindSpore)."""

    def __new__(cls, op, tensor, peer, group=None, tag=0, recv_dtype=None):
        if not (isinstance(op, str) or callable(op)):
            raise TypeError(f"op must be type of string or function, but got type of {type(op)}")
        op_name = op if isinstance(op, str) else op.__name__
        if op_name not in ("isend", "irecv"):
            raise ValueError(f"Expected ``op`` to be of type ``isend`` or `irecv``, but got "
                             f"{op_name}")
        if not isinstance(tensor, (Tensor, tuple)):
            raise TypeError(f"Expected ``tensor`` to be type of tuple or Tensor, but got "
                            f"{type(tensor)}.")
        if tag != 0:
            raise NotImplementedError("``tag`` not support yet.")
        return object.__new__(cls)

    def __init__(self, op, tensor, peer, group=None, tag=0, *, recv_dtype=None):
        from ..core import dtype as dt
        if not isinstance(peer, int) or isinstance(peer, bool):
            raise TypeError(f"peer must be type of int, but got type of {type(peer)}")
        if recv_dtype is not None and not isinstance(recv_dtype, dt.DType):
            raise TypeError(f"recv_dtype must be type of mindspore dtype, but got type of "
                            f"{type(recv_dtype)}")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.recv_dtype = recv_dtype


def batch_isend_irecv(p2p_op_list):
    """Run every P2POp of the list at once; a tuple with, per op, a 0-d zero tensor (isend,
    of the sent dtype) or the received tensor (irecv)."""
    if not isinstance(p2p_op_list, list):
        raise TypeError(f"p2p_op_list must be type of list, but got type of {p2p_op_list}.")
    if not p2p_op_list:
        raise TypeError("p2p_op_list can not be empty list.")
    _pynative_only("batch_isend_irecv")
    group = p2p_op_list[0].group or _WORLD
    comm = _mpi("batch_isend_irecv", group)
    requests, outputs, buffers = [], [], []
    for i, p in enumerate(p2p_op_list):
        if not isinstance(p, P2POp):
            raise TypeError("must be type of P2POp")
        if (p.group or _WORLD) != group:
            raise ValueError(f"For batch_isend_irecv, every P2POp must use one group, but op 0 "
                             f"uses {group!r} and op {i} {p.group or _WORLD!r}")
        peer = _peer("batch_isend_irecv", "peer", p.peer, group)
        kind = p.op if isinstance(p.op, str) else p.op.__name__
        if kind == "isend":
            if not isinstance(p.tensor, Tensor):
                raise TypeError(f"For batch_isend_irecv, the tensor of isend op {i} must be a "
                                f"Tensor, but got {type(p.tensor).__name__}")
            buf = _bytes(p.tensor.asnumpy())
            requests.append(comm.comm.Isend(buf, dest=peer))
            outputs.append(Tensor(np.zeros((), p.tensor.dtype.np)))
        else:
            if isinstance(p.tensor, Tensor):
                shape, dtype = p.tensor.shape, p.tensor.dtype
            else:
                if p.recv_dtype is None:
                    raise ValueError(f"'recv_dtype' of {i}th P2POp in p2p_op_list is None but "
                                     f"op_types is'irecv' and P2POp.tensor is a tuple type.")
                shape, dtype = p.tensor, p.recv_dtype
            out = _empty_like_spec(shape, dtype)
            buf = _bytes(out)
            requests.append(comm.comm.Irecv(buf, source=peer))
            outputs.append(wrap(out))
        buffers.append(buf)
    _Requests(requests, buffers).wait()
    return tuple(outputs)


# ------------------------------------------------------------------ uneven all-to-all -----------
def _all_to_all_v(who, group, flat, send_numel, recv_numel):
    """The flat array `flat` cut into parts of send_numel (part j to group rank j); the parts
    received (recv_numel[j] elements from rank j) concatenated, flat."""
    comm = _comm.lookup(who, group)
    size = comm.size
    if len(send_numel) != size or len(recv_numel) != size:
        raise ValueError(f"For {who}, there must be one split per rank of group {group!r} "
                         f"({size}), but got {len(send_numel)} to send and {len(recv_numel)} "
                         f"to receive")
    if sum(send_numel) != flat.size:
        raise ValueError(f"For {who}, the parts to send hold {sum(send_numel)} elements in all, "
                         f"but the input has {flat.size}")
    out = np.zeros(sum(recv_numel), flat.dtype)
    if not hasattr(comm, "comm"):           # the world of one process: its part to itself
        out[:] = flat[:recv_numel[0]]
        return out
    item = flat.dtype.itemsize
    scounts = [n * item for n in send_numel]
    rcounts = [n * item for n in recv_numel]
    sdispl = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(int).tolist()
    rdispl = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(int).tolist()
    from mpi4py import MPI
    comm.comm.Alltoallv([_bytes(flat), scounts, sdispl, MPI.BYTE],
                        [out.view(np.uint8), rcounts, rdispl, MPI.BYTE])
    return out


def _async(who, async_op):
    if not isinstance(async_op, bool):
        raise TypeError(f"The argument 'async_op' must be a bool, but got {type(async_op)}.")
    return _handle(None) if async_op else None


def _group_arg(group):
    group = _WORLD if group is None else group
    if not isinstance(group, str):
        raise TypeError(f"The argument 'group' must be type of string, but got 'group' type : "
                        f"{type(group)}.")
    return group


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def all_to_all_with_output_shape(output_shape_list, input_tensor_list, group=None,
                                 async_op=False):
    """input_tensor_list[j] sent to group rank j; the tensors received from each rank j, of
    shape output_shape_list[j] (a shape or a tensor whose shape is used): (tuple, handle)."""
    who = "all_to_all_with_output_shape"
    if not isinstance(input_tensor_list, (list, tuple)) or \
            not all(isinstance(t, Tensor) for t in input_tensor_list):
        raise TypeError("Expected input_tensor_list to be a list or tuple of Tensors")
    if not isinstance(output_shape_list, (list, tuple)) or \
            not all(isinstance(t, (Tensor, tuple)) for t in output_shape_list):
        raise TypeError("Expected output_shape_list to be a list or tuple of Tensors or shapes")
    dtypes = {t.dtype for t in input_tensor_list}
    if len(dtypes) > 1:
        raise TypeError(f"For {who}, every input tensor must have one dtype, but got "
                        f"{sorted(str(d) for d in dtypes)}")
    _pynative_only(who)
    group = _group_arg(group)
    handle = _async(who, async_op)
    shapes = [tuple(t.shape) if isinstance(t, Tensor) else tuple(t) for t in output_shape_list]
    arrays = [t.asnumpy().reshape(-1) for t in input_tensor_list]
    dtype = input_tensor_list[0].dtype.np if input_tensor_list else np.float32
    flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype)
    out = _all_to_all_v(who, group, flat, [a.size for a in arrays], [_numel(s) for s in shapes])
    result, offset = [], 0
    for s in shapes:
        n = _numel(s)
        result.append(Tensor(out[offset:offset + n].reshape(s)))
        offset += n
    return tuple(result), handle


def all_to_all_single_with_output_shape(output_shape, tensor, output_split_sizes=None,
                                        input_split_sizes=None, group=None, async_op=False):
    """`tensor` split along axis 0 by input_split_sizes (default: evenly), part j to group
    rank j; the parts received, of output_split_sizes rows, concatenated along axis 0 into
    `output_shape`'s trailing shape: (Tensor, handle). A result of no element is 0-d, as in
    MindSpore. As in MindSpore, the default splits are computed from output_shape's shape
    (MindSpore uses it for the input's too), so the input must have as many elements per row."""
    who = "all_to_all_single_with_output_shape"
    if not isinstance(tensor, Tensor):
        raise TypeError("Expected tensor to be a Tensor")
    if not isinstance(output_shape, (Tensor, tuple)):
        raise TypeError("Expected output_shape to be a Tensor or a tuple of ints")
    _pynative_only(who)
    group = _group_arg(group)
    handle = _async(who, async_op)
    size = _comm.lookup(who, group).size
    oshape = tuple(output_shape.shape) if isinstance(output_shape, Tensor) else output_shape
    if not input_split_sizes:
        if oshape[0] % size:
            raise ValueError(f"input shape at dim 0 must be divided by world_size, but got "
                             f"{oshape[0]} and {size}.")
        input_split_sizes = (oshape[0] // size,) * size
    if not output_split_sizes:
        if oshape[0] % size:
            raise ValueError(f"output shape at dim 0 must be divided by world_size, but got "
                             f"{oshape[0]} and {size}.")
        output_split_sizes = (oshape[0] // size,) * size
    row = _numel(oshape[1:])
    send_numel = [int(s) * row for s in input_split_sizes]
    recv_numel = [int(s) * row for s in output_split_sizes]
    out = _all_to_all_v(who, group, tensor.asnumpy().reshape(-1), send_numel, recv_numel)
    if any(recv_numel):
        return Tensor(out.reshape((-1,) + tuple(oshape[1:]))), handle
    return Tensor(np.zeros((), out.dtype)), handle


def all_to_all_v_c(output, input, send_count_matrix, group=None, async_op=False):
    """input's rows sent by send_count_matrix (entry i*size + j: rows rank i sends to rank j);
    the rows received, in rank order, written into `output`. Returns the handle or None."""
    who = "all_to_all_v_c"
    for t in (input, output):
        if not isinstance(t, Tensor):
            raise TypeError("Expected input and output to be Tensors")
    group = _group_arg(group)
    handle = _async(who, async_op)
    if not isinstance(send_count_matrix, list):
        raise TypeError(f"send_count_matrix must be list, but got {type(send_count_matrix)}")
    if not all(isinstance(x, int) for x in send_count_matrix):
        raise TypeError("send_count_matrix elements must be of type int")
    _pynative_only(who)
    comm = _comm.lookup(who, group)
    size, rank = comm.size, comm.rank
    if size * size != len(send_count_matrix):
        raise TypeError(f"send_count_matrix must be square matrix, but got "
                        f"{len(send_count_matrix)}.")
    send_row, recv_row = _numel(input.shape[1:]), _numel(output.shape[1:])
    if send_row != recv_row:
        raise ValueError(f"The input and output dimensions except 0 must be of equal size, but "
                         f"got {send_row} and {recv_row}.")
    m = np.asarray(send_count_matrix, np.int64).reshape(size, size) * send_row
    got = _all_to_all_v(who, group, input.asnumpy().reshape(-1), m[rank].tolist(),
                        m[:, rank].tolist())
    if got.size != _numel(output.shape):
        raise ValueError(f"For {who}, this rank receives {got.size} elements, but output has "
                         f"shape {list(output.shape)} ({_numel(output.shape)} elements)")
    output._buf = got.reshape(output.shape).astype(output.dtype.np, copy=False)
    return handle
