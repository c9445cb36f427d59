"""Rank script: faults in a data-parallel job (tests/distributed/test_dist_faults.py), chosen
by argv[1], in the mode argv[2] ("pynative" or "graph"; mismatch runs both):
  kill      rank 1 kills itself (SIGKILL) at the third training step; rank 0 goes on into
            the gradient all-reduce, where it would wait forever: the job must end.
  raise     rank 1's batch has the wrong width, so its train step raises (in a graph: while
            compiling) while rank 0 waits in the all-reduce: the job must end.
  mismatch  every rank all-reduces a tensor of a different shape, then of a different dtype,
            inside a jitted function / Cell: every rank gets the ValueError naming each rank's
            shape, and the job goes on to a correct all-reduce."""
import json
import os
import signal
import sys

import numpy as np

import minispore as ms
from minispore import nn, ops
from minispore.communication import get_group_size, get_rank, init

init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
fault, mode = sys.argv[1], sys.argv[2]
ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
rank, n = get_rank(), get_group_size()


def train_step():
    ms.set_seed(1)
    net = nn.Dense(4, 2)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.SGD(net.trainable_params(), 0.1))


if fault == "kill":
    step = train_step()
    x, y = ms.Tensor(np.ones((2, 4), np.float32)), ms.Tensor(np.zeros((2, 2), np.float32))
    for i in range(6):
        if i == 2 and rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        step(x, y)
        print(f"step {i} done", flush=True)
    print("finished training", flush=True)
elif fault == "raise":
    step = train_step()
    width = 5 if rank == 1 else 4
    step(ms.Tensor(np.ones((2, width), np.float32)), ms.Tensor(np.zeros((2, 2), np.float32)))
    print("finished training", flush=True)
elif fault == "mismatch":
    class Reduce(nn.Cell):
        def __init__(self):
            super().__init__()
            self.all_reduce = ops.AllReduce()

        def construct(self, x):
            return self.all_reduce(x)
    for label, m in (("pynative", ms.PYNATIVE_MODE), ("graph", ms.GRAPH_MODE)):
        ms.set_context(mode=m)
        out = {"rank": rank, "mode": label}
        for name, value in (("shape", np.zeros(rank + 1, np.float32)),
                            ("dtype", np.zeros(2, np.float32 if rank == 0 else np.int32))):
            try:
                Reduce()(ms.Tensor(value))
                out[name] = "no error"
            except ValueError as e:
                out[name] = str(e).splitlines()[0]
        out["after"] = Reduce()(ms.Tensor(np.full(2, rank + 1.0, np.float32))).asnumpy().tolist()
        print("RESULT " + json.dumps(out), flush=True)
