"""The communicator abstraction under mindspore.communication: one object per communication
group that runs the collectives on host numpy arrays, and the table of groups by name. It lives
in core because the collective ops (core/ops/collective.py) call it; `communication.init()`
installs the MPI world here.

`Communicator` is what every collective op's host kernel calls (core/ops/collective.py);
`MPICommunicator` runs it over an mpi4py communicator (Open MPI or any MPI), and
`SingleProcessCommunicator` is the world of one process that a script sees before init():
each collective over one rank gives what MPI gives for one rank (the reduction of one
contribution is that contribution, a gather of one is its input). Another transport (NCCL
through CuPy, a simulated interconnect) is one more subclass.

Asynchronous collectives (the gradient buckets of data parallel): `start_all_reduce` hands the
array to the group's communication stream and returns a ticket at once; `finish(ticket)` waits
for that result. The stream is one background thread per group that runs its collectives in
submission order on a duplicate of the group's MPI communicator, so they progress while the
caller computes (the compute kernels release the GIL), never match a blocking collective of the
caller's thread, and meet the other ranks' in the same order (every rank submits in program
order). Without MPI_THREAD_MULTIPLE the collective runs at submission instead. They carry the
gradient buckets, whose shapes are fixed by the parameters: the cross-rank shape check runs
the first time a signature (shape, dtype, op) is submitted, not at every step as for the
blocking collectives a script calls.

Group names: the three world names (hccl/nccl/mccl_world_group) all mean the world, as
MindSpore maps its default 'hccl_world_group' to the backend's world group."""
from __future__ import annotations

import itertools
import threading

import numpy as np

__all__ = ["Communicator", "MPICommunicator", "SingleProcessCommunicator", "WORLD_NAMES",
           "lookup", "world", "REDUCE_OPS"]

WORLD_NAMES = ("hccl_world_group", "nccl_world_group", "mccl_world_group")
REDUCE_OPS = ("sum", "max", "min", "prod")

_MAX_CHECKED_RANK = 14     # tensors of higher rank skip the cross-rank shape check


class Communicator:
    """A communication group: its size, this process's rank in it, the world ranks of its
    members, and the collectives on contiguous numpy arrays (every rank passes arrays of one
    shape and dtype, except where a collective says otherwise)."""

    name: str
    rank: int
    size: int
    world_ranks: tuple

    def all_reduce(self, x: np.ndarray, op: str, in_place: bool = False) -> np.ndarray:
        """The reduction of the ranks' x; in_place: x (the caller's own C-contiguous array)
        may be overwritten with it."""
        raise NotImplementedError

    def all_gather(self, x: np.ndarray) -> np.ndarray:
        """The ranks' arrays concatenated along axis 0, in rank order."""
        raise NotImplementedError

    def reduce_scatter(self, x: np.ndarray, op: str) -> np.ndarray:
        """The reduction of the ranks' arrays, split along axis 0 into `size` parts: this
        rank's part."""
        raise NotImplementedError

    def broadcast(self, x: np.ndarray, root: int) -> np.ndarray:
        """Rank `root`'s array (a group rank), on every rank."""
        raise NotImplementedError

    def all_to_all(self, x: np.ndarray, split_count: int, split_dim: int,
                   concat_dim: int) -> np.ndarray:
        """x split along split_dim into split_count parts, part j sent to rank j; the parts
        received, in rank order, concatenated along concat_dim."""
        raise NotImplementedError

    def barrier(self) -> None:
        raise NotImplementedError

    def start_all_reduce(self, x: np.ndarray, op: str, who: str = "all_reduce") -> int:
        """Submit an all-reduce of a copy of `x` to the communication stream; a ticket for
        `finish`. (Base: run at once.)"""
        self.check_same_shape(who, x)
        return _Tickets.put(self.all_reduce(np.array(x), op))

    def finish(self, ticket: int) -> np.ndarray:
        """The result of the collective `ticket`, waiting for it; its error re-raised here."""
        return _Tickets.take(ticket)

    def free(self) -> None:
        """Release the group's resources (its MPI communicators and stream)."""

    def check_same_shape(self, who: str, x: np.ndarray) -> None:
        """Raise on every rank, naming `who` and each rank's shape and dtype, when the ranks
        pass arrays of different shapes or dtypes (a collective on them would hang or mix
        bytes)."""


class SingleProcessCommunicator(Communicator):
    """The world of one process (no init(), or a launcher that started one rank without MPI)."""

    def __init__(self, name="hccl_world_group"):
        self.name, self.rank, self.size, self.world_ranks = name, 0, 1, (0,)

    def all_reduce(self, x, op, in_place=False):
        return x if in_place else np.array(x)

    def all_gather(self, x):
        return np.array(x)

    def reduce_scatter(self, x, op):
        return np.array(x)

    def broadcast(self, x, root):
        return np.array(x)

    def all_to_all(self, x, split_count, split_dim, concat_dim):
        return np.array(x)                      # split_count is the group size: 1

    def barrier(self):
        return None


class _Tickets:
    """Results (or errors) of submitted collectives by ticket; a ticket is taken once."""
    _ids = itertools.count(1)
    _lock = threading.Lock()
    _done: dict = {}

    @classmethod
    def put(cls, value) -> int:
        t = next(cls._ids)
        cls._done[t] = value
        return t

    @classmethod
    def future(cls, fut) -> int:
        t = next(cls._ids)
        cls._done[t] = fut
        return t

    @classmethod
    def take(cls, ticket: int):
        try:
            value = cls._done.pop(int(ticket))
        except KeyError:
            raise RuntimeError(f"collective ticket {ticket} is unknown or was waited for "
                               f"already") from None
        if hasattr(value, "result"):
            value = value.result()         # re-raises the collective's error on this thread
        return value


class MPICommunicator(Communicator):
    """A group over an mpi4py communicator (`comm`), `world_ranks` its members' world ranks."""

    def __init__(self, name, comm, world_ranks):
        from mpi4py import MPI
        self._MPI = MPI
        self.name, self.comm = name, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.world_ranks = tuple(world_ranks)
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
        self._stream = None              # (executor, the stream's own communicator), on demand
        self._checked: set = set()       # signatures of asynchronous all-reduces checked once

    def _stream_comm(self):
        """This group's communication stream: a one-thread executor and a duplicate of the
        group's communicator (made on first use: MPI_Comm_dup is collective, and every rank
        reaches the first asynchronous collective at the same point of the program)."""
        if self._stream is None:
            from concurrent.futures import ThreadPoolExecutor
            if self._MPI.Query_thread() < self._MPI.THREAD_MULTIPLE:
                return None
            dup = MPICommunicator.__new__(MPICommunicator)
            dup.__dict__.update(self.__dict__)
            dup.comm = self.comm.Dup()
            pool = ThreadPoolExecutor(1, thread_name_prefix=f"comm-stream-{self.name}")
            self._stream = (pool, dup)
        return self._stream

    def start_all_reduce(self, x, op, who="all_reduce"):
        stream = self._stream_comm()
        if stream is None:                              # no thread support: run it now
            return super().start_all_reduce(x, op, who)
        pool, dup = stream
        copy = np.array(x, order="C")                   # the caller may reuse x's memory
        sig = (who, copy.shape, copy.dtype.str, op)
        check = sig not in self._checked
        self._checked.add(sig)

        def run():
            if check:
                dup.check_same_shape(who, copy)
            return dup.all_reduce(copy, op, in_place=True)
        return _Tickets.future(pool.submit(run))

    def free(self):
        if self._stream is not None:
            pool, dup = self._stream
            pool.shutdown(wait=True)
            dup.comm.Free()
            self._stream = None
        self.comm.Free()

    def check_same_shape(self, who, x):
        # each rank's (dtype, rank, dims...) as a fixed-size int64 row: one small Allgather
        if x.ndim > _MAX_CHECKED_RANK:
            return
        sig = np.full(_MAX_CHECKED_RANK + 2, -1, np.int64)
        sig[0], sig[1], sig[2:2 + x.ndim] = x.dtype.num, x.ndim, x.shape
        rows = np.empty((self.size, sig.size), np.int64)
        self.comm.Allgather(sig, rows)
        if (rows != sig).any():
            def describe(row):
                return f"shape {row[2:2 + row[1]].tolist()} {_dtype_name(int(row[0]))}"
            listed = ", ".join(f"rank {r}: {describe(row)}" for r, row in enumerate(rows))
            raise ValueError(f"For '{who}' over group '{self.name}', every rank must pass a "
                             f"tensor of one shape and dtype, but got {listed}")

    def all_reduce(self, x, op, in_place=False):
        """in_place: x is a C-contiguous array of the caller's own, reduced where it is."""
        x = np.asarray(x, order="C")
        if x.dtype == np.bool_:                  # MPI has no bool reduction: reduce as uint8
            return self.all_reduce(x.view(np.uint8), op).astype(np.bool_)
        if x.dtype.kind == "f" and x.dtype.itemsize == 2:
            # float16/bfloat16: no MPI datatype; reduce in float32 and round once
            return self.all_reduce(x.astype(np.float32), op).astype(x.dtype)
        # reduced in place in a copy: its pages are touched already (MPI writing into fresh
        # memory costs it the page faults) and the caller's array is left alone
        out = x if in_place else np.array(x, order="C")
        self.comm.Allreduce(self._MPI.IN_PLACE, out, op=self._ops[op])
        return out

    def all_gather(self, x):
        x = np.asarray(x, order="C")
        out = np.empty((self.size * x.shape[0],) + x.shape[1:], x.dtype)
        self.comm.Allgather(x.view(np.uint8).reshape(-1), out.view(np.uint8).reshape(-1))
        return out

    def reduce_scatter(self, x, op):
        x = np.asarray(x, order="C")
        if x.dtype == np.bool_ or (x.dtype.kind == "f" and x.dtype.itemsize == 2):
            full = self.all_reduce(x, op)        # no MPI datatype: via all_reduce (above)
            part = x.shape[0] // self.size
            return np.array(full[self.rank * part:(self.rank + 1) * part])
        out = np.empty((x.shape[0] // self.size,) + x.shape[1:], x.dtype)
        self.comm.Reduce_scatter_block(x, out, op=self._ops[op])
        return out

    def broadcast(self, x, root):
        out = np.array(np.asarray(x, order="C"))
        self.comm.Bcast(out.view(np.uint8).reshape(-1), root=root)
        return out

    def all_to_all(self, x, split_count, split_dim, concat_dim):
        parts = [np.asarray(p, order="C") for p in np.split(x, split_count, split_dim)]
        send = np.concatenate([p.view(np.uint8).reshape(-1) for p in parts])
        recv = np.empty_like(send)
        self.comm.Alltoall(send, recv)
        got = np.split(recv, split_count)
        return np.concatenate([g.view(x.dtype).reshape(parts[0].shape) for g in got], concat_dim)

    def barrier(self):
        self.comm.Barrier()


def _dtype_name(num: int) -> str:
    """The name of the numpy dtype whose `num` is `num` (bfloat16 and other added types too)."""
    for t in set(np.sctypeDict.values()):
        if np.dtype(t).num == num:
            return np.dtype(t).name
    try:
        import ml_dtypes
        for t in (ml_dtypes.bfloat16,):
            if np.dtype(t).num == num:
                return np.dtype(t).name
    except ImportError:
        pass
    return f"dtype number {num}"


class _Groups:
    """The groups of this process by name; `world` is the world group (a single process's
    until init() replaces it)."""
    world: Communicator = SingleProcessCommunicator()
    named: dict = {}


def world() -> Communicator:
    return _Groups.world


def lookup(who: str, group: str) -> Communicator:
    """The communicator of `group`, for the op or function `who`."""
    if not isinstance(group, str):
        raise TypeError(f"For '{who}', the argument 'group' must be type of string, but got "
                        f"'group' type : {type(group)}.")
    if group in WORLD_NAMES:
        return _Groups.world
    comm = _Groups.named.get(group)
    if comm is None:
        known = ", ".join(repr(g) for g in (*WORLD_NAMES, *_Groups.named))
        raise ValueError(f"For '{who}', the communication group {group!r} does not exist: create "
                         f"it with mindspore.communication.create_group after init(); known "
                         f"groups: {known}")
    return comm
