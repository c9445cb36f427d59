"""Rank script: what DistributedGradReducer does across ranks besides the sum.
- parameter_broadcast: ranks seeded differently start from rank 0's values; without it a
  warning names the fix;
- layerwise_parallel parameters keep each rank's own gradient;
- float16 gradients are reduced and averaged in float32 (60000 + 60000 overflows float16);
- the buckets' all-reduce gives the same bits whatever the fusion (one bucket, one per
  parameter, by size), in PyNative and GRAPH_MODE, and in a graph each bucket starts before
  the backward ends (the compiled graph's order, read from save_graphs).
Prints RESULT lines read by tests/distributed/test_dist_grad_reducer.py."""
import glob
import json
import os
import sys
import tempfile
import warnings

import numpy as np

import minispore as ms
from minispore import nn
from minispore.communication import get_rank, init

init()
rank = get_rank()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)


def report(**kw):
    print("RESULT " + json.dumps(kw), flush=True)


def mlp():
    return nn.SequentialCell(nn.Dense(64, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                             nn.Dense(512, 10))


# parameter_broadcast
ms.set_seed(100 + rank)
net = mlp()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nn.DistributedGradReducer(net.trainable_params())
warned = any("differ between the ranks" in str(w.message) for w in caught)
ms.set_auto_parallel_context(parameter_broadcast=True)
nn.DistributedGradReducer(net.trainable_params())
ms.set_auto_parallel_context(parameter_broadcast=False)
ms.set_seed(100)
rank0 = mlp()
report(what="broadcast", warned=warned,
       equal=all(np.array_equal(p.asnumpy(), q.asnumpy())
                 for p, q in zip(net.trainable_params(), rank0.trainable_params())))

# layerwise_parallel and float16
own = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="own", layerwise_parallel=True)
h = ms.Parameter(ms.Tensor(np.zeros(2, np.float16)), name="h")
red = nn.DistributedGradReducer([own, h], mean=True)
g_own, g_h = red((ms.Tensor(np.array([rank, rank + 10], np.float32)),
                  ms.Tensor(np.array([60000, rank], np.float16))))
report(what="filters", own=g_own.asnumpy().tolist(), h=g_h.asnumpy().astype(float).tolist(),
       h_dtype=str(g_h.dtype))

# the same bits whatever the fusion, in both modes; the graph's order
x = np.random.default_rng(rank).normal(size=(16, 64)).astype(np.float32)
y = (np.arange(16) % 10).astype(np.int32)
fusions = {"one": {"allreduce": {"mode": "auto", "config": None}},
           "each": {"openstate": False},
           "size": {"openstate": True, "allreduce": {"mode": "size", "config": 1}}}
graphs = tempfile.mkdtemp(prefix=f"grad_reducer_rank{rank}_")
for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    for fname, fusion in fusions.items():
        ms.reset_auto_parallel_context()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                     gradients_mean=True, comm_fusion=fusion)
        dump = label == "graph" and fname == "size"
        ms.set_context(mode=mode, save_graphs=dump, save_graphs_path=graphs)
        ms.set_seed(5)
        net = mlp()
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                                   nn.Momentum(net.trainable_params(), 0.1, 0.9))
        for _ in range(3):
            step(ms.Tensor(x), ms.Tensor(y))
        ms.set_context(save_graphs=False)
        digest = [p.asnumpy().view(np.uint32).astype(np.uint64).sum().item()
                  for p in net.trainable_params()]
        report(what="fusion", mode=label, fusion=fname,
               buckets=step.grad_reducer.split_indices, digest=digest)
ir_files = sorted(glob.glob(os.path.join(graphs, "**", "TrainOneStepCell*_schedule.ir"),
                            recursive=True))
names = []
for line in open(ir_files[0]).read().splitlines():
    if " = " in line and "param '" not in line:
        names.append(line.split(" = ", 1)[1].split("(")[0].strip())
report(what="order", names=names)
sys.stdout.flush()
