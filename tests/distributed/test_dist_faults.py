"""Faults in a data-parallel MPI job of 2 ranks (rank_scripts/faults.py) end it, never hang
it: a rank killed by SIGKILL in the middle of training (PyNative and GRAPH_MODE) makes the job
exit non-zero within seconds, with Open MPI's message naming the killed rank or the lost peer;
a rank whose GRAPH_MODE train step raises (while the other waits in the gradient all-reduce)
aborts the job with its traceback (the PyNative case is test_dist_launcher.py's raises.py); a
collective whose ranks pass different shapes or dtypes inside a Cell raises a ValueError on
every rank in both modes, naming each rank's shape and dtype, and the job goes on."""
from __future__ import annotations

import time

import pytest

from dist_job import launch, results

LIMIT = 60                                   # seconds: far below the launch timeout


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_killed_rank_ends_the_job(mode):
    start = time.monotonic()
    job = launch("faults.py", 2, "kill", mode)
    assert job.returncode != 0, job.stdout + job.stderr
    assert time.monotonic() - start < LIMIT
    assert "finished training" not in job.stdout
    assert "[rank 1] step 2 done" not in job.stdout.splitlines()
    err = " ".join(job.stderr.split())
    assert ("process rank 1" in err and "signal 9 (Killed)" in err) or \
        "peer process has unexpectedly disconnected" in err, job.stderr[-3000:]


def test_a_rank_that_raises_in_a_graph_aborts_the_job():
    start = time.monotonic()
    job = launch("faults.py", 2, "raise", "graph")
    assert job.returncode != 0, job.stdout + job.stderr
    assert time.monotonic() - start < LIMIT
    assert "finished training" not in job.stdout
    lines = job.stderr.splitlines()
    assert any(line.startswith("[rank 1] minispore.core.errors.ShapeError: Dense: the input "
                               "has shape (2, 5)") for line in lines), job.stderr[-3000:]
    assert "[rank 1] MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD" in lines


def test_mismatched_collective_raises_on_every_rank_in_both_modes():
    job = launch("faults.py", 2, "mismatch", "both")
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    head = ("For 'all_reduce' over group 'mccl_world_group', every rank must pass a tensor of "
            "one shape and dtype, but got ")
    for rank, outs in got.items():
        assert [o["mode"] for o in outs] == ["pynative", "graph"]
        for out in outs:
            assert out["shape"] == head + "rank 0: shape [1] float32, rank 1: shape [2] float32"
            assert out["dtype"] == head + "rank 0: shape [2] float32, rank 1: shape [2] int32"
            assert out["after"] == [3.0, 3.0]
    assert sorted(got) == [0, 1]
