"""Data-parallel training over 2 ranks (rank_scripts/data_parallel.py): under
parallel_mode=DATA_PARALLEL with gradients_mean=True, TrainOneStepCell all-reduces and averages
the gradients, so every rank ends with the same weights, and the loss curve (the mean of the
ranks' shard losses) and the weights equal one process training on the full batch (float32
rounding apart: the shards' mean gradients are summed in another order), in both modes."""
from __future__ import annotations

import numpy as np

import minispore as ms
from dist_job import HERE, launch, results
from dp_model import STEPS, batch, make_train_step


def _full_batch(mode):
    ms.set_context(mode=mode)
    net, step = make_train_step()
    x, y = batch()
    losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy()) for _ in range(STEPS)]
    return losses, {p.name: p.asnumpy() for p in net.trainable_params()}


def test_data_parallel_equals_full_batch_training():
    n = 2
    job = launch("data_parallel.py", n, HERE)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == list(range(n)), job.stdout
    for k, (mode, label) in enumerate(((ms.PYNATIVE_MODE, "pynative"),
                                       (ms.GRAPH_MODE, "graph"))):
        ref_losses, ref_w = _full_batch(mode)
        outs = [got[r][k] for r in range(n)]
        assert all(o["mode"] == label for o in outs)
        curve = np.mean([o["losses"] for o in outs], axis=0)
        np.testing.assert_allclose(curve, ref_losses, rtol=1e-5, err_msg=label)
        assert ref_losses[-1] < ref_losses[0]                     # it trains
        for name, w in ref_w.items():
            first = np.array(outs[0]["weights"][name], np.float32)
            for o in outs[1:]:                                    # identical on every rank
                np.testing.assert_array_equal(np.array(o["weights"][name], np.float32), first)
            np.testing.assert_allclose(first, w, rtol=1e-5, atol=1e-6, err_msg=f"{label} {name}")
