"""Rank script of benchmarks/data_parallel.py, the peer: the same weak-scaling training step as
train_step.py written with torch, ``DistributedDataParallel`` over ``torch.distributed``'s gloo
backend (CPU), one process per rank started by the driver (not under MPI).

Model: MLP --widths (ReLU), ``CrossEntropyLoss`` (mean), ``SGD(lr=0.01, momentum=0.9)`` (torch's
own initialisers: the rows compare speed, not losses). Every rank cycles through 4 batches of its
own data; every step is synchronised (``loss.item()``) and timed, the first --warmup left out;
a step's time is the slowest rank's. Rank 0 writes the JSON to --out.

Usage: torch_ddp.py RANK WORLD INIT_FILE --out F [--steps N --widths ... --batch B]"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_timing import write_json  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rank", type=int)
    ap.add_argument("world", type=int)
    ap.add_argument("init_file")
    ap.add_argument("--widths", default="64,1024,1024,10")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo", init_method="file://" + args.init_file, rank=args.rank,
                            world_size=args.world)
    torch.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(100 + args.rank)
    batches = [(torch.randn(args.batch, widths[0], generator=gen),
                torch.randint(0, widths[-1], (args.batch,), generator=gen)) for _ in range(4)]
    times, losses = [], []
    dist.barrier()
    for k in range(args.warmup + args.steps):
        x, y = batches[k % len(batches)]
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - t0)
    slowest = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    timed = slowest[args.warmup:].tolist()
    if args.rank == 0:
        write_json(args.out, {"ranks": args.world, "widths": widths, "batch": args.batch,
                              "modes": {"ddp": {"first_step_s": float(slowest[0]),
                                                "step_s": timed,
                                                "median": statistics.median(timed),
                                                "min": min(timed), "max": max(timed),
                                                "losses": losses}},
                              "versions": {"torch": torch.__version__}})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
