"""A modelled cluster in one process: `modelled_world(p)` makes this process rank 0 of a world
of p simulated devices whose other ranks are not run but assumed to pass what rank 0 passes.

What it is for: data-parallel scaling beyond the ranks the machine can run (the bench's
dp-mlp/dp-cnn rows past `--mpi-ranks`). In weak scaling every rank runs the same program on
same-shaped data, so rank 0's simulated timeline, with each collective costed for p devices by
the interconnect model (collectives.py), is the step time of the p-device job. The numbers the
collectives return are those of p identical contributions (a sum is p times the input), so a
modelled run's losses are not those of a real p-rank job; only its simulated times are meant.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...core import communicator as _comm

__all__ = ["ModelledCommunicator", "modelled_world"]


class ModelledCommunicator(_comm.Communicator):
    """Rank 0 of `size` ranks that all pass this rank's arrays (module docstring)."""

    def __init__(self, size: int, name: str = "hccl_world_group"):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"modelled_world: the number of ranks must be an int >= 1, but "
                             f"got {size!r}")
        self.name, self.rank, self.size = name, 0, size
        self.world_ranks = tuple(range(size))

    def _reduce(self, x, op):
        x = np.asarray(x)
        if op == "sum":
            return x * x.dtype.type(self.size)
        if op == "prod":
            return x ** self.size
        return np.array(x)                              # max, min of equal values

    def all_reduce(self, x, op):
        return np.ascontiguousarray(self._reduce(x, op))

    def all_gather(self, x):
        return np.concatenate([x] * self.size, axis=0)

    def reduce_scatter(self, x, op):
        return np.ascontiguousarray(np.split(self._reduce(x, op), self.size, axis=0)[0])

    def broadcast(self, x, root):
        return np.array(x)

    def all_to_all(self, x, split_count, split_dim, concat_dim):
        part = np.split(x, split_count, axis=split_dim)[0]     # what every rank sends rank 0
        return np.concatenate([part] * split_count, axis=concat_dim)

    def barrier(self):
        pass


@contextlib.contextmanager
def modelled_world(size: int):
    """The world group is a ModelledCommunicator of `size` ranks inside the block (the
    process's own world, MPI's or the single process's, is restored after)."""
    from ...communication.management import GlobalComm
    if GlobalComm.INITED and _comm._Groups.world.size > 1:
        raise RuntimeError(f"modelled_world({size}): this process is a rank of a "
                           f"{_comm._Groups.world.size}-rank job; model a cluster in a single "
                           f"process (without init())")
    prev, inited = _comm._Groups.world, GlobalComm.INITED
    _comm._Groups.world = ModelledCommunicator(size)
    GlobalComm.INITED = True                # get_group_size() reads the modelled world
    try:
        yield _comm._Groups.world
    finally:
        _comm._Groups.world, GlobalComm.INITED = prev, inited
