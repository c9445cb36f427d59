"""Data parallel on the simulated Ascend over 2 real MPI ranks (rank_scripts/ascend_sim_dp.py):
the gradients' all-reduces are HCCL tasks on each rank's communication stream (stream 2), named
for 2 devices and timed by the interconnect model, while the numbers are MPI's: the losses and
weights equal the CPU's, in both modes. And the bench's data-parallel rows: a real 2-rank job
gives the simulated step time that the modelled 2-device world gives."""
from __future__ import annotations

import numpy as np
import pytest

from dist_job import HERE, launch, need_mpi, results
from dp_model import STEPS
from minispore.backends.ascend_sim.collectives import collective_time
from minispore.backends.ascend_sim.profile import ASCEND_910B


def test_data_parallel_on_the_simulated_ascend_equals_the_cpu_with_hccl_tasks():
    n = 2
    job = launch("ascend_sim_dp.py", n, HERE)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == list(range(n)), job.stdout
    for r in range(n):
        by = {(o["mode"], o["target"]): o for o in got[r]}
        assert sorted(by) == [("graph", "Ascend"), ("graph", "CPU"), ("pynative", "Ascend"),
                              ("pynative", "CPU")]
        for mode in ("pynative", "graph"):
            cpu, npu = by[(mode, "CPU")], by[(mode, "Ascend")]
            np.testing.assert_allclose(npu["losses"], cpu["losses"], rtol=1e-5, err_msg=mode)
            for name, w in cpu["weights"].items():
                np.testing.assert_allclose(np.array(npu["weights"][name], np.float32),
                                           np.array(w, np.float32), rtol=1e-5, atol=1e-6,
                                           err_msg=f"{mode} {name}")
            # two buckets a step: (Dense 5-8) 48 floats, (Dense 8-3) 27 floats, float32
            names = sorted({c[0] for c in npu["comm"]})
            assert names == ["hcclAllReduce 108 B x2", "hcclAllReduce 192 B x2"], names
            assert len(npu["comm"]) == 2 * STEPS
            want = max(collective_time("all_reduce", 192, 2, ASCEND_910B),
                       ASCEND_910B.kernel_min_duration)
            assert any(c[2] == pytest.approx(want) for c in npu["comm"])
            assert cpu["comm"] == [] and npu["sim_s"] > 0
    # the ranks do the same work: their simulated clocks agree
    for k in range(4):
        assert got[0][k]["sim_s"] == pytest.approx(got[1][k]["sim_s"], rel=1e-9)


def test_bench_mpi_ranks_give_the_modelled_step_time():
    need_mpi()
    from minispore.bench import data_parallel as D
    cases = [("dp-mlp", "graph")]
    rows = D.mpi_job(2, cases, 1, 1, timeout=120)
    for w, m in cases:
        row = rows[(w, m)]
        assert row["status"] == "ok" and row["source"] == "MPI (2 ranks)", row
        model = D.modelled(w, m, 2, 1, 1)
        assert row["sim_step_s"] == pytest.approx(model["sim_step_s"], rel=1e-9), (w, m)
        assert row["sim_comm_s"] == pytest.approx(model["sim_comm_s"], rel=1e-9), (w, m)
