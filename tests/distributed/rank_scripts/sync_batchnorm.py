"""Rank script: nn.BatchNorm2d and nn.SyncBatchNorm under DATA_PARALLEL, each rank on its own
shard of one batch, in PyNative and GRAPH_MODE: one training step of a Conv2d + norm net
(TrainOneStepCell with the gradient reducer) and the input gradient of the norm alone.
Prints, per mode, each layer's moving statistics, output and input gradient (the test
compares them with one process on the whole batch: BatchNorm2d's must be the shard's own,
SyncBatchNorm's the whole batch's). With 3 ranks it also runs SyncBatchNorm with
process_groups=[[0, 2], [1]]."""
import json

import numpy as np

import minispore as ms
from minispore import nn
from minispore.communication import get_group_size, get_rank, init
from minispore.nn.layers.sync_batchnorm import SyncBatchNorm

init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
rank, n = get_rank(), get_group_size()
ROWS = 2


def whole_batch(n):
    """The whole batch (n * ROWS, 3, 2, 2) and the loss weights (the test builds the same)."""
    k = np.arange(n * ROWS * 12, dtype=np.float64).reshape(n * ROWS, 3, 2, 2)
    x = np.sin(k * 0.7) * 2 + np.cos(k * 0.3) + k / 50
    w = np.cos(k * 1.1)
    return x.astype(np.float32), w.astype(np.float32)


x_all, w_all = whole_batch(n)
x = ms.Tensor(x_all[rank * ROWS:(rank + 1) * ROWS])
w = ms.Tensor(w_all[rank * ROWS:(rank + 1) * ROWS])


def layer_run(norm):
    norm.set_train()

    def loss(x):
        return (norm(x) * w).sum()
    out = norm(x).asnumpy().tolist()          # one forward: the moving statistics move once
    grad = ms.grad(loss)(x).asnumpy().tolist()  # and once more here
    return {"out": out, "grad": grad, "mean": norm.moving_mean.asnumpy().tolist(),
            "var": norm.moving_variance.asnumpy().tolist()}


for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    ms.set_context(mode=mode)
    out = {"mode": label, "bn": layer_run(nn.BatchNorm2d(3)),
           "sync": layer_run(SyncBatchNorm(3, momentum=0.8))}
    # one data-parallel training step through a Conv2d: the moving mean is taken in forward
    net = nn.SequentialCell([nn.Conv2d(3, 3, 1, weight_init="ones", has_bias=False),
                             SyncBatchNorm(3)])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(),
                                                                          0.1))
    step.set_train()
    step(x, ms.Tensor(np.zeros((ROWS, 3, 2, 2), np.float32)))
    out["step_mean"] = net[1].moving_mean.asnumpy().tolist()
    if n == 3:
        grouped = SyncBatchNorm(3, process_groups=[[0, 2], [1]])
        out["grouped"] = layer_run(grouped)
        out["grouped_name"] = grouped.group_name
    print("RESULT " + json.dumps(out), flush=True)
