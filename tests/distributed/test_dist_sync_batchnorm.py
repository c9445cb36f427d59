"""nn.SyncBatchNorm (nn/layers/sync_batchnorm.py) and nn.BatchNorm2d under DATA_PARALLEL over
MPI jobs of 2 and 3 ranks (rank_scripts/sync_batchnorm.py), in PyNative and GRAPH_MODE: as in
MindSpore, BatchNorm2d keeps each rank's LOCAL batch statistics (its moving mean differs by
rank), while SyncBatchNorm's output, input gradient and moving statistics are those of
BatchNorm2d over the whole batch in one process (the gradient of the sum of every rank's
loss); process_groups=[[0, 2], [1]] synchronises ranks 0 and 2 only, in a group named as
MindSpore names it. One-process checks: SyncBatchNorm is BatchNorm2d there, and its argument
errors are MindSpore's."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import minispore as ms
from minispore import nn
from minispore.nn.layers.sync_batchnorm import SyncBatchNorm

from dist_job import launch, results

ROWS = 2


def whole_batch(n):
    k = np.arange(n * ROWS * 12, dtype=np.float64).reshape(n * ROWS, 3, 2, 2)
    x = np.sin(k * 0.7) * 2 + np.cos(k * 0.3) + k / 50
    w = np.cos(k * 1.1)
    return x.astype(np.float32), w.astype(np.float32)


def reference(x, w, momentum, rows):
    """BatchNorm2d in one process on x (rows the slice of the result this rank sees)."""
    norm = nn.BatchNorm2d(3, momentum=momentum)
    norm.set_train()
    xt, wt = ms.Tensor(x), ms.Tensor(w)
    out = norm(xt).asnumpy()[rows]
    grad = ms.grad(lambda t: (norm(t) * wt).sum())(xt).asnumpy()[rows]
    return {"out": out, "grad": grad, "mean": norm.moving_mean.asnumpy(),
            "var": norm.moving_variance.asnumpy()}


def check(got, want, what):
    for k, v in want.items():
        np.testing.assert_allclose(np.array(got[k], np.float32), v, rtol=1e-5, atol=2e-5,
                                   err_msg=f"{what}: {k}")


@pytest.mark.parametrize("n", [3])
def test_batchnorm_is_local_and_sync_batchnorm_global_under_data_parallel(n):
    job = launch("sync_batchnorm.py", n)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == list(range(n)), job.stdout[-3000:]
    x, w = whole_batch(n)
    whole = reference(x, w, 0.8, slice(None))
    means = []
    for rank, outs in got.items():
        assert [o["mode"] for o in outs] == ["pynative", "graph"]
        mine = slice(rank * ROWS, (rank + 1) * ROWS)
        local = reference(x[mine], w[mine], 0.9, slice(None))
        synced = dict(whole, out=whole["out"][mine], grad=whole["grad"][mine])
        for out in outs:
            what = f"rank {rank} of {n} ({out['mode']})"
            check(out["bn"], local, "BatchNorm2d " + what)
            check(out["sync"], synced, "SyncBatchNorm " + what)
            np.testing.assert_allclose(out["step_mean"], [0.1 * x.sum(1).mean()] * 3,
                                       rtol=1e-5, err_msg="training step " + what)
            means.append(out["bn"]["mean"])
            if n == 3:
                if rank == 1:
                    check(out["grouped"], local_of(x, w, 1), "process_groups " + what)
                    assert out["grouped_name"] is None
                else:
                    both = np.r_[0:ROWS, 2 * ROWS:3 * ROWS]
                    ref = reference(x[both], w[both], 0.9, slice(None))
                    part = slice(0, ROWS) if rank == 0 else slice(ROWS, 2 * ROWS)
                    check(out["grouped"], dict(ref, out=ref["out"][part],
                                               grad=ref["grad"][part]), "process_groups " + what)
                    sha = hashlib.sha256(b"0_2").hexdigest()
                    assert out["grouped_name"] == f"2_{sha}"
    # the local moving means differ by rank: BatchNorm2d does not synchronise
    assert not np.allclose(means[0], means[-1])


def local_of(x, w, rank):
    mine = slice(rank * ROWS, (rank + 1) * ROWS)
    return reference(x[mine], w[mine], 0.9, slice(None))


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_sync_batchnorm_in_one_process_is_batchnorm(mode):
    ms.set_context(mode=mode)
    try:
        x = ms.Tensor(whole_batch(1)[0])
        a, b = SyncBatchNorm(3), nn.BatchNorm2d(3)
        for norm in (a, b):
            norm.set_train()
        np.testing.assert_array_equal(a(x).asnumpy(), b(x).asnumpy())
        np.testing.assert_array_equal(a.moving_mean.asnumpy(), b.moving_mean.asnumpy())
        a.set_train(False)
        b.set_train(False)
        np.testing.assert_array_equal(a(x).asnumpy(), b(x).asnumpy())
        assert not a.is_global and a.group_name is None
        flat = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
        np.testing.assert_array_equal(SyncBatchNorm(2)(flat).asnumpy(),
                                      nn.BatchNorm1d(2)(flat).asnumpy())
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_sync_batchnorm_arguments_as_mindspore():
    norm = SyncBatchNorm(3)
    assert (norm.eps, 1.0 - norm.momentum, norm.process_groups) == (1e-5, 0.9, None)
    net = nn.SequentialCell([SyncBatchNorm(3)])          # names as MindSpore 2.10's
    assert [p.name for p in net.get_parameters()] == [
        "0.moving_mean", "0.moving_variance", "0.gamma", "0.beta"]
    # messages and error types from MindSpore 2.10 (ValueError also for a non-list)
    with pytest.raises(ValueError, match="For 'SyncBatchNorm', the input must have 2 dims or 4 "
                                         "dims, but got 3"):
        norm(ms.Tensor(np.zeros((2, 3, 4), np.float32)))
    with pytest.raises(ValueError, match="'process_groups' must be isinstance of <class 'list'>"):
        SyncBatchNorm(3, process_groups=(0,))
    with pytest.raises(ValueError, match="'rank id in process_groups' must be in range of "
                                         "\\[0, 1\\), but got 1"):
        SyncBatchNorm(3, process_groups=[[0, 1]])
    with pytest.raises(ValueError, match="must not be duplicated"):
        SyncBatchNorm(3, process_groups=[[0], [0]])
    assert SyncBatchNorm(3, eps=1).eps == 1.0              # MindSpore accepts an int eps
    with pytest.raises(ValueError, match="momentum"):
        SyncBatchNorm(3, momentum=1.5)
    assert SyncBatchNorm(3, process_groups=0).is_global is False
