"""Rank script of benchmarks/data_parallel.py, the MindSpore peer: the training step of
train_step.py with MindSpore itself (the same model, loss, optimizer and data-parallel context),
one process per rank started by MindSpore's own launcher, msrun (its CPU collectives need it).

Every step is synchronised (the loss read back) and timed, in PYNATIVE_MODE and GRAPH_MODE; a
step's time is the slowest rank's (the times AllGather'ed at the end: MindSpore's CPU
AllReduce sums only). Rank 0 writes the JSON to --out, in train_step.py's form.

Usage (under msrun): mindspore_train.py --modes pynative,graph --steps 10 --out F"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import mindspore as ms
from mindspore import nn, ops
from mindspore.communication import get_group_size, get_rank, init

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_timing import write_json  # noqa: E402


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
    return nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="pynative,graph")
    ap.add_argument("--widths", default="64,1024,1024,10")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True)
    rank, size = get_rank(), get_group_size()
    rng = np.random.default_rng(100 + rank)
    batches = [(ms.Tensor(rng.standard_normal((args.batch, widths[0])).astype(np.float32)),
                ms.Tensor(rng.integers(0, widths[-1], args.batch).astype(np.int32)))
               for _ in range(4)]
    results = {}
    for mode in args.modes.split(","):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        step = build(widths)
        times = []
        for k in range(args.warmup + args.steps):
            x, y = batches[k % len(batches)]
            t0 = time.perf_counter()
            float(step(x, y).asnumpy())
            times.append(time.perf_counter() - t0)
        results[mode] = times
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for mode, times in results.items():
        slowest = times
        if size > 1:           # MindSpore's CPU AllReduce sums only: gather, then the max
            every = ops.AllGather()(ms.Tensor(np.array(times, np.float32))).asnumpy()
            slowest = every.reshape(size, -1).max(0).astype(float).tolist()
        timed = slowest[args.warmup:]
        results[mode] = {"first_step_s": slowest[0], "step_s": timed,
                         "median": statistics.median(timed), "min": min(timed),
                         "max": max(timed)}
    if rank == 0:
        write_json(args.out, {"ranks": size, "widths": widths, "batch": args.batch,
                              "modes": results, "versions": {"mindspore": ms.__version__}})


if __name__ == "__main__":
    main()
