"""Rank script of benchmarks/data_parallel.py: minispore's data-parallel training step, weak
scaling (every rank trains on its own batch of --batch rows), in PYNATIVE_MODE and GRAPH_MODE.

Model: MLP --widths (default 64-1024-1024-10, ReLU), softmax cross-entropy (sparse, mean),
Momentum(0.01, 0.9), nn.TrainOneStepCell under
``set_auto_parallel_context(parallel_mode=DATA_PARALLEL, gradients_mean=True)``, which inserts the
DistributedGradReducer (one fused all-reduce of every gradient per step; skipped on one rank).
Each rank cycles through 4 batches of its own data. Every step is synchronised (the loss read
back) and timed; the first --warmup steps are left out (the first is reported apart: GRAPH_MODE
compiles there), and a step's time is the slowest rank's. The time spent inside the MPI calls of
the gradients' all-reduce (the communicator's all_reduce and its shape check, timed by wrapping
them from outside) is reported beside it. Mode ``graph_alone`` is GRAPH_MODE with
parallel_mode STAND_ALONE (no gradient all-reduce: every rank trains alone), which separates
what the ranks' sharing the machine costs from what the all-reduce costs. Mode ``graph_buckets``
is GRAPH_MODE with ``all_reduce_fusion_config=[2, 4]``: a bucket per Dense layer, the last
layers' buckets started while the backward computes the first layers (overlap), instead of the
one bucket of the default 64 MB fusion size. The MPI time is the time inside those calls, on
the communication thread where a bucket runs asynchronously (so it may overlap the step).
Rank 0 writes the JSON to --out.

Usage (under mpiexec): train_step.py --modes pynative,graph[,graph_alone,graph_buckets]
--steps 10 --out F"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

import minispore as ms
from minispore import nn
from minispore.communication import get_group_size, get_rank, init
from minispore.core import communicator as C

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_timing import write_json  # noqa: E402

COMM_TIME = {"all_reduce": 0.0, "check_same_shape": 0.0, "calls": 0}


def _timed(name, fn):
    def wrapper(self, *a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(self, *a, **kw)
        finally:
            COMM_TIME[name] += time.perf_counter() - t0
            COMM_TIME["calls"] += name == "all_reduce"
    return wrapper


C.MPICommunicator.all_reduce = _timed("all_reduce", C.MPICommunicator.all_reduce)
C.MPICommunicator.check_same_shape = _timed("check_same_shape",
                                            C.MPICommunicator.check_same_shape)


def build(widths):
    ms.set_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        layers.append(nn.Dense(a, b))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    net = nn.SequentialCell(*layers)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="pynative,graph")
    ap.add_argument("--widths", default="64,1024,1024,10")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per mode")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    init()
    comm = MPI.COMM_WORLD
    rank, size = get_rank(), get_group_size()
    rng = np.random.default_rng(100 + rank)
    batches = [(ms.Tensor(rng.standard_normal((args.batch, widths[0])).astype(np.float32)),
                ms.Tensor(rng.integers(0, widths[-1], args.batch).astype(np.int32)))
               for _ in range(4)]
    results = {}
    for mode in args.modes.split(","):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        ms.set_auto_parallel_context(
            parallel_mode=ms.ParallelMode.STAND_ALONE if mode == "graph_alone" else
            ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
            all_reduce_fusion_config=[2, 4] if mode == "graph_buckets" else [])
        net, step = build(widths)
        if size > 1:
            assert isinstance(step.grad_reducer, nn.DistributedGradReducer) == \
                (mode != "graph_alone"), step.grad_reducer
        times, losses = [], []
        comm.Barrier()
        for k in range(args.warmup + args.steps):
            if k == args.warmup:
                COMM_TIME.update(all_reduce=0.0, check_same_shape=0.0, calls=0)
            x, y = batches[k % len(batches)]
            t0 = time.perf_counter()
            loss = float(step(x, y).asnumpy())
            times.append(time.perf_counter() - t0)
            losses.append(loss)
        slowest = np.empty(len(times))
        comm.Allreduce(np.array(times), slowest, op=MPI.MAX)
        timed = slowest[args.warmup:].tolist()
        results[mode] = {"first_step_s": float(slowest[0]), "step_s": timed,
                         "median": statistics.median(timed), "min": min(timed),
                         "max": max(timed), "losses": losses,
                         "comm_per_step_s": {k: COMM_TIME[k] / args.steps
                                             for k in ("all_reduce", "check_same_shape")},
                         "all_reduce_calls_per_step": COMM_TIME["calls"] / args.steps}
    if rank == 0:
        params = sum(a * b + b for a, b in zip(widths, widths[1:]))
        write_json(args.out, {"ranks": size, "widths": widths, "batch": args.batch,
                              "parameters": params, "modes": results,
                              "versions": {"minispore": ms.__version__}})


if __name__ == "__main__":
    main()
