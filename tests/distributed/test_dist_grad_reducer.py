"""DistributedGradReducer over 2 ranks (rank_scripts/grad_reducer.py): parameter_broadcast,
the warning for replicas that differ, layerwise_parallel and float16 gradients as MindSpore
treats them, bit-identical results whatever the gradient fusion in both modes, and the
compiled graph starting each bucket's all-reduce before the backward has finished."""
from __future__ import annotations

from dist_job import launch, results


def test_grad_reducer_across_two_ranks():
    job = launch("grad_reducer.py", 2)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == [0, 1], job.stdout
    for r in (0, 1):
        by = {}
        for item in got[r]:
            by.setdefault(item["what"], []).append(item)
        (bcast,) = by["broadcast"]
        assert bcast["warned"] and bcast["equal"], bcast
        (filt,) = by["filters"]
        assert filt["own"] == [r, r + 10]                     # each rank's own gradient
        assert filt["h"] == [60000.0, 0.5] and filt["h_dtype"] == "Float16"
        fusion = by["fusion"]
        assert [f["buckets"] for f in fusion[:3]] == [[[0, 6]], [[k, k + 1] for k in range(6)],
                                                      [[0, 2], [2, 3], [3, 6]]]
        digests = {f["digest"] == fusion[0]["digest"] for f in fusion}
        assert digests == {True}, fusion                     # same bits: fusion, mode
        names = by["order"][0]["names"]
        starts = [i for i, n in enumerate(names) if n == "all_reduce_start"]
        matmuls = [i for i, n in enumerate(names) if n == "matmul"]
        assert len(starts) == 3 and starts[0] < matmuls[-1], names
    assert got[0][-4]["digest"] == got[1][-4]["digest"]       # the ranks agree
