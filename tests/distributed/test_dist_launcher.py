"""`python -m minispore run -n N` (MindSpore's msrun) and plain mpirun: output comes back with a
rank prefix, the job's exit code is a failing rank's, a rank that raises stops the job (MPI
abort) instead of hanging it, and a script started by `mpiexec -n 3 python script.py` joins the
world, makes a group of some ranks and runs collectives in it."""
from __future__ import annotations

import time

from dist_job import launch, results


def test_launcher_prefixes_each_rank_and_returns_a_failing_ranks_code():
    job = launch("exit_code.py", 2, "3")
    assert job.returncode == 3, job.stdout + job.stderr
    lines = job.stdout.splitlines()
    assert "[rank 0] hello from 0" in lines and "[rank 1] hello from 1" in lines, job.stdout
    err = job.stderr.splitlines()
    assert "[rank 0] note from 0" in err and "[rank 1] note from 1" in err, job.stderr


def test_a_rank_that_raises_stops_the_job():
    start = time.monotonic()
    job = launch("raises.py", 2)
    assert job.returncode != 0
    assert time.monotonic() - start < 60
    assert "[rank 1] ValueError: rank 1 fails on purpose" in job.stderr.splitlines(), job.stderr
    assert "got past" not in job.stdout


def test_plain_mpirun_groups_and_rank_mappings():
    job = launch("groups.py", 3, plain=True)
    assert job.returncode == 0, job.stdout + job.stderr
    got = results(job.stdout)
    assert sorted(got) == [0, 1, 2], job.stdout
    for rank, (out,) in got.items():
        assert out["rank"] == rank and out["size"] == 3 and out["hccl_name_size"] == 3
        assert out["local"] == [rank, 3]
        assert (out["world"], out["backend"], out["inited"]) == ("mccl_world_group", "mccl", True)
        if rank == 1:
            assert "group" not in out
            continue
        assert out["group"] == [rank // 2, 2, [0, 2], 1, 2]
        assert out["group_sum"] == [4.0, 4.0]
        assert out["group_gather"] == [1.0, 1.0, 3.0, 3.0]
        assert "the communication group 'g02' does not exist" in out["destroyed"]
