"""Rank script: rank 1 raises before the all-reduce that rank 0 waits in; the job must stop
(MPI abort) instead of hanging."""
import numpy as np

import minispore as ms
from minispore import ops
from minispore.communication import get_rank, init

init()
if get_rank() == 1:
    raise ValueError("rank 1 fails on purpose")
ops.AllReduce()(ms.Tensor(np.ones(3, np.float32)))
print("rank 0 got past the all-reduce", flush=True)
