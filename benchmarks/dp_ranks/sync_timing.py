"""Timing loops that every rank of a job runs in step (this file owns them; the rank scripts of
benchmarks/data_parallel.py import it, under minispore/mpi4py and under torch.distributed).

A collective blocks until every rank reaches it, so the ranks must run the same number of calls:
the loop count is chosen from the SLOWEST rank's calibration time (``reduce_max``, one small
all-reduce of a float), and a sample is the slowest rank's time for the loop, started after a
barrier. Stdlib only, so any peer interpreter can import it."""
from __future__ import annotations

import json
import statistics
import time


def _elapsed(run, n: int) -> float:
    t0 = time.perf_counter()
    run(n)
    return time.perf_counter() - t0


def calibrate(run, reduce_max, target_s: float, max_n: int | None = None) -> int:
    """A loop count n, the same on every rank, for which run(n) lasts about target_s on the
    slowest rank. Three calls first (a first call compiles or fills caches), and the
    calibration calls, are warm-up."""
    run(3)
    n = 1
    elapsed = reduce_max(_elapsed(run, 1))
    while elapsed < target_s / 10 and (max_n is None or n < max_n):
        n = n * 10 if elapsed < target_s / 1000 else n * 4
        if max_n is not None:
            n = min(n, max_n)
        elapsed = reduce_max(_elapsed(run, n))
    n = max(1, int(n * target_s / max(elapsed, 1e-9)))
    return min(n, max_n) if max_n is not None else n


def sample(run, n: int, reduce_max, barrier) -> float:
    """Seconds per call of run(n), on the slowest rank, every rank starting together."""
    barrier()
    return reduce_max(_elapsed(run, n)) / n


def summary(samples: list[float]) -> dict:
    """The samples with their median, min and max (seconds)."""
    return {"samples": samples, "median": statistics.median(samples), "min": min(samples),
            "max": max(samples)}


def write_json(path: str, obj: dict) -> None:
    """Rank 0's results for the driver (a file: the launcher's output carries rank tags)."""
    with open(path, "w") as f:
        json.dump(obj, f)
