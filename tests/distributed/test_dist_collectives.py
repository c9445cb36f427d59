"""Collectives over real MPI jobs of 2 and 3 ranks (rank_scripts/collectives.py): every
Primitive (AllReduce sum/max/min/prod, AllGather, ReduceScatter, Broadcast, AlltoAll) and
comm_func form, in PyNative and GRAPH_MODE, and their gradients, against numpy computed here
for every rank; a collective whose ranks pass different shapes raises on every rank, naming
the op and each rank's shape."""
from __future__ import annotations

import numpy as np
import pytest

from dist_job import launch, results


def data(r, shape, scale=1.0):
    k = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return ((np.sin(k * 1.7 + r * 2.3) * 3 + r + 0.25) * scale).astype(np.float32)


def expected(rank, n):
    """What rank `rank` of n must get (the rank script's inputs, rebuilt)."""
    xs = np.stack([data(r, (2 * n, 3)) for r in range(n)])
    xps = np.stack([data(r, (2 * n, 3), 0.3) for r in range(n)])
    ws = np.stack([data(r + 10, (2 * n, 3)) for r in range(n)])
    wgs = np.stack([data(r + 20, (2 * n * n, 3)) for r in range(n)])
    vs = [data(r + 30, (2, 3)) for r in range(n)]
    us = [data(r + 40, (2, 3 * n)) for r in range(n)]
    x, total = xs[rank], xs.sum(0)
    part = slice(2 * rank, 2 * rank + 2)

    def a2a(arrays, r, split_dim, concat_dim):
        return np.concatenate([np.split(a, n, split_dim)[r] for a in arrays], concat_dim)
    e = {
        "sum": total, "max": xs.max(0), "min": xs.min(0), "prod": xps.prod(0),
        "gather": np.concatenate(list(xs)), "scatter": total[part],
        "scatter_max": xs.max(0)[part], "bcast": xs[1], "a2a": a2a(xs, rank, 0, 1),
        "avg": total / n, "scatter_avg": total[part] / n,           # ReduceOp.AVG
        # gradients of each rank's own loss, through MindSpore's bprops
        "g_sum": ws.sum(0),
        "g_avg": ws.sum(0) / n,
        "g_max": ws.sum(0) * (x == xs.max(0)),
        "g_prod": ws.sum(0) * xps.prod(0) / xps[rank],
        "g_gather": wgs.sum(0)[2 * n * rank:2 * n * (rank + 1)],
        "g_scatter": np.concatenate(vs),
        "g_bcast": ws[rank],
        "g_a2a": a2a(us, rank, 1, 0),
        "cf_all_reduce_max": xs.max(0), "cf_all_gather": np.concatenate(list(xs)),
        "cf_reduce_scatter": total[part], "cf_broadcast": xs[n - 1],
    }
    return e


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_and_its_gradient_on_every_rank(n):
    job = launch("collectives.py", n)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == list(range(n)), job.stdout[-3000:]
    for rank, outs in got.items():
        assert [o["mode"] for o in outs] == ["pynative", "graph"]
        e = expected(rank, n)
        for out in outs:
            assert out["rank"] == rank and out["size"] == n
            for name, want in e.items():
                if name.startswith("cf_") and out["mode"] == "graph":
                    continue
                np.testing.assert_allclose(np.array(out[name], np.float32), want, rtol=2e-6,
                                           atol=2e-6, err_msg=f"{name} rank {rank} of {n} "
                                                              f"({out['mode']})")
        py = outs[0]
        assert py["cf_all_reduce"][1] is True        # (tensor, None) without async_op
        np.testing.assert_allclose(py["cf_all_reduce"][0], e["sum"], rtol=2e-6, atol=2e-6)
        assert py["cf_barrier"] is None
        shapes = ", ".join(f"rank {r}: shape [{r + 1}] float32" for r in range(n))
        assert py["mismatch"] == (f"For 'all_reduce' over group 'mccl_world_group', every "
                                  f"rank must pass a tensor of one shape and dtype, but got "
                                  f"{shapes}")
