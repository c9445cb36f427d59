"""minispore.communication.management: MindSpore's `mindspore.communication.management` for
one process. Without init() MindSpore reports rank 0 of a group of 1 for any group name, and so
does minispore; init() (a distributed job started by mpirun or msrun) raises RuntimeError, and
the group functions that need an initialised job raise NotImplementedError: data parallelism
across processes is not implemented."""
from __future__ import annotations

__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP",
           "MCCL_WORLD_COMM_GROUP", "init", "release", "get_rank", "get_group_size",
           "get_local_rank", "get_local_rank_size", "create_group", "destroy_group",
           "get_comm_name", "get_group_rank_from_world_rank", "get_world_rank_from_group_rank",
           "get_process_group_ranks"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"

_NOT_DISTRIBUTED = ("minispore runs one process on one device; a distributed job "
                    "(mindspore.communication.init under mpirun or msrun) is not supported, "
                    "data parallelism across processes is not implemented")


class GlobalComm:
    """MindSpore's communication globals, as they read in a process that did not call init()."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


def _check_group(who, group):
    if not isinstance(group, str):
        raise TypeError(f"For '{who}', the argument 'group' must be type of string, but got "
                        f"'group' type : {type(group)}.")


def init(backend_name=None):
    """Initialise a distributed job: not supported in one process (MindSpore raises
    RuntimeError too when the process was not started by mpirun or msrun)."""
    raise RuntimeError(f"init(backend_name={backend_name!r}): {_NOT_DISTRIBUTED}")


def release():
    """Release the distributed resources: nothing was initialised, so nothing to release."""
    return None


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank in `group`: 0."""
    _check_group("get_rank", group)
    return 0


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of ranks in `group`: 1."""
    _check_group("get_group_size", group)
    return 1


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank on its node: 0."""
    _check_group("get_local_rank", group)
    return 0


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of ranks on this node: 1."""
    _check_group("get_local_rank_size", group)
    return 1


def _needs_job(who):
    raise NotImplementedError(f"{who}: {_NOT_DISTRIBUTED}")


def create_group(group, rank_ids, options=None):
    _needs_job("create_group")


def destroy_group(group):
    _needs_job("destroy_group")


def get_comm_name(group=GlobalComm.WORLD_COMM_GROUP):
    _needs_job("get_comm_name")


def get_group_rank_from_world_rank(world_rank_id, group):
    _needs_job("get_group_rank_from_world_rank")


def get_world_rank_from_group_rank(group, group_rank_id):
    _needs_job("get_world_rank_from_group_rank")


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP):
    _needs_job("get_process_group_ranks")
