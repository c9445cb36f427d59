"""minispore.communication: MindSpore's `mindspore.communication` over MPI (mpi4py): init, the
rank and group queries and groups (management.py), the functional collectives (comm_func.py)."""
from . import comm_func, management
from .management import (HCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP,
                         GlobalComm, create_group, destroy_group, get_comm_name,
                         get_group_rank_from_world_rank, get_group_size, get_local_rank,
                         get_local_rank_size, get_process_group_ranks, get_rank,
                         get_world_rank_from_group_rank, init, release)

__all__ = ["management", "comm_func", *management.__all__]
