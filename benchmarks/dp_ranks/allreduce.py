"""Rank script of benchmarks/data_parallel.py: the sum all-reduce of float32 buffers of several
sizes, over the job's world, three ways on the same numpy data:

- ``mpi4py``: raw ``MPI.COMM_WORLD.Allreduce(x, out, op=MPI.SUM)`` into a preallocated buffer;
- ``pynative``: minispore ``ops.AllReduce()(tensor)`` in PYNATIVE_MODE;
- ``graph``: the same op inside a GRAPH_MODE ``@ms.jit`` function.

Each size's three ways are calibrated once (the loop count agreed by all ranks, see
sync_timing.py), then sampled in turn, round after round, so that a burst of load on the shared
machine hits all three alike. Every minispore result is checked against mpi4py's once. Rank 0
writes ``{"sizes": {bytes: {way: summary}}, ...}`` to the --out JSON file.

Usage (under mpiexec): allreduce.py --sizes 4096,262144 --target-s 0.1 --repeats 5 --out F
[--ways mpi4py,pynative,graph]"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from mpi4py import MPI

import minispore as ms
from minispore import ops
from minispore.communication import get_group_size, get_rank, init

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_timing import calibrate, sample, summary, write_json  # noqa: E402

WAYS = ("mpi4py", "pynative", "graph")
_all_reduce = ops.AllReduce()


@ms.jit
def graph_all_reduce(x):
    return _all_reduce(x)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", required=True, help="buffer sizes in bytes, comma-separated")
    ap.add_argument("--target-s", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ways", default=",".join(WAYS), help="a subset of " + ",".join(WAYS))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    ways = args.ways.split(",")
    init()
    comm = MPI.COMM_WORLD
    rank, size = get_rank(), get_group_size()

    def reduce_max(t):
        return comm.allreduce(t, op=MPI.MAX)

    results = {}
    for nbytes in (int(s) for s in args.sizes.split(",")):
        x = np.random.default_rng(rank).standard_normal(nbytes // 4).astype(np.float32)
        out = np.empty_like(x)
        tensor = ms.Tensor(x)
        comm.Allreduce(x, out, op=MPI.SUM)
        expected = out.copy()

        def raw(n):
            for _ in range(n):
                comm.Allreduce(x, out, op=MPI.SUM)

        def pynative(n):
            for _ in range(n):
                r = _all_reduce(tensor)
            r.asnumpy()

        def graph(n):
            for _ in range(n):
                r = graph_all_reduce(tensor)
            r.asnumpy()

        runs = {"mpi4py": (ms.PYNATIVE_MODE, raw), "pynative": (ms.PYNATIVE_MODE, pynative),
                "graph": (ms.GRAPH_MODE, graph)}
        runs = {way: runs[way] for way in ways}
        checks = {}
        for way, (mode, _) in runs.items():
            if way == "mpi4py":
                continue
            ms.set_context(mode=mode)
            got = (_all_reduce(tensor) if way == "pynative" else graph_all_reduce(tensor))
            checks[way] = bool(np.allclose(got.asnumpy(), expected, rtol=1e-6, atol=1e-6))
        counts = {}
        for way, (mode, run) in runs.items():
            ms.set_context(mode=mode)
            counts[way] = calibrate(run, reduce_max, args.target_s)
        samples = {way: [] for way in runs}
        for _ in range(args.repeats):
            for way, (mode, run) in runs.items():
                ms.set_context(mode=mode)
                samples[way].append(sample(run, counts[way], reduce_max, comm.Barrier))
        results[str(nbytes)] = {way: dict(summary(s), n=counts[way], matches_mpi4py=checks.get(way))
                                for way, s in samples.items()}
    if rank == 0:
        write_json(args.out, {"ranks": size, "sizes": results,
                              "versions": {"mpi4py": __import__("mpi4py").__version__,
                                           "mpi": MPI.Get_library_version().splitlines()[0]}})


if __name__ == "__main__":
    main()
