"""Rank script: data-parallel training of a small MLP, each rank on its shard of a 12-row batch,
with set_auto_parallel_context(parallel_mode=DATA_PARALLEL, gradients_mean=True): TrainOneStepCell
inserts the DistributedGradReducer (one gradient bucket in PyNative, two in GRAPH_MODE). Prints,
per mode, the local losses and the final weights (tests/distributed/test_dist_data_parallel.py
compares them with one process on the full batch)."""
import json
import sys

import minispore as ms
from minispore import nn
from minispore.communication import get_group_size, get_rank, init

sys.path.insert(0, sys.argv[1])             # tests/distributed: the shared model and data
from dp_model import STEPS, batch, make_train_step  # noqa: E402

init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
rank, n = get_rank(), get_group_size()
x, y = batch()
rows = len(x) // n
shard = slice(rank * rows, (rank + 1) * rows)
for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    ms.set_context(mode=mode)
    if label == "graph":                     # two gradient buckets: parameters [0, 2), [2, 4)
        ms.set_auto_parallel_context(all_reduce_fusion_config=[2])
    net, step = make_train_step()
    assert step.grad_reducer.split_indices == ([(0, 4)] if label == "pynative" else
                                               [(0, 2), (2, 4)])
    assert isinstance(step.grad_reducer, nn.DistributedGradReducer)
    losses = [float(step(ms.Tensor(x[shard]), ms.Tensor(y[shard])).asnumpy())
              for _ in range(STEPS)]
    weights = {p.name: p.asnumpy().tolist() for p in net.trainable_params()}
    print("RESULT " + json.dumps({"mode": label, "losses": losses, "weights": weights}),
          flush=True)
