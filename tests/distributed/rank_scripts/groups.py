"""Rank script for 3 ranks (started by plain mpirun): the world queries, a group of world ranks
0 and 2 made by create_group on its members, collectives within it, the rank mappings, and
destroy_group; prints one `RESULT <json>` line (through the launcher's `[rank r]` prefix or
mpiexec's bare output)."""
import json

import numpy as np

import minispore as ms
from minispore import ops
from minispore.communication import (GlobalComm, create_group, destroy_group,
                                     get_group_rank_from_world_rank, get_group_size,
                                     get_local_rank, get_local_rank_size,
                                     get_process_group_ranks, get_rank,
                                     get_world_rank_from_group_rank, init, release)

ms.set_context(mode=ms.PYNATIVE_MODE)
init()
init()                                       # twice is harmless
rank = get_rank()
out = {"rank": rank, "size": get_group_size(), "local": [get_local_rank(), get_local_rank_size()],
       "world": GlobalComm.WORLD_COMM_GROUP, "backend": GlobalComm.BACKEND,
       "inited": GlobalComm.INITED, "hccl_name_size": get_group_size("hccl_world_group")}
if rank in (0, 2):
    create_group("g02", [0, 2])
    x = ms.Tensor(np.full((2,), rank + 1.0, np.float32))
    out["group"] = [get_rank("g02"), get_group_size("g02"), get_process_group_ranks("g02"),
                    get_group_rank_from_world_rank(2, "g02"),
                    get_world_rank_from_group_rank("g02", 1)]
    out["group_sum"] = ops.AllReduce(group="g02")(x).asnumpy().tolist()
    out["group_gather"] = ops.AllGather("g02")(x).asnumpy().tolist()
    destroy_group("g02")
    try:
        get_rank("g02")
    except ValueError as e:
        out["destroyed"] = str(e)
release()
print(f"[rank {rank}] RESULT " + json.dumps(out), flush=True)
