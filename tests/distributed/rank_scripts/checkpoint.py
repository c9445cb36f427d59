"""Rank script: ModelCheckpoint under DATA_PARALLEL (Model.train on each rank's shard), into a
per-rank directory (MindSpore's tutorial layout) and into one directory all ranks share; then
every rank saves one path many times while the others load it. Prints, per rank, what each
directory holds and what loads (tests/distributed/test_dist_checkpoint.py checks it)."""
import json
import os
import sys

import numpy as np

import minispore as ms
from minispore import dataset as ds
from minispore import nn
from minispore.communication import get_group_size, get_rank, init
from minispore.communication import comm_func as cf
from minispore.train import CheckpointConfig, Model, ModelCheckpoint

init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
rank, n = get_rank(), get_group_size()
root = sys.argv[1]
rng = np.random.default_rng(5)
x = rng.normal(size=(8 * n, 4)).astype(np.float32)
y = rng.normal(size=(8 * n, 2)).astype(np.float32)


def train(directory, prefix):
    ms.set_seed(1)
    net = nn.Dense(4, 2)
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1))
    data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False, num_shards=n,
                                 shard_id=rank).batch(4)
    config = CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=3)
    cb = ModelCheckpoint(prefix, directory, config)
    model.train(2, data, callbacks=[cb], dataset_sink_mode=False)
    return net, cb


out = {"rank": rank}
net, cb = train(os.path.join(root, f"ckpt_{rank}"), "dp")
out["own_dir"] = sorted(os.listdir(os.path.join(root, f"ckpt_{rank}")))
out["latest"] = os.path.basename(cb.latest_ckpt_file_name)
loaded = ms.load_checkpoint(cb.latest_ckpt_file_name)
out["loaded_weight"] = loaded["weight"].asnumpy().tolist()
out["weight"] = net.weight.asnumpy().tolist()

cf.barrier()
shared = os.path.join(root, "shared")
net, cb = train(shared, "dp")
cf.barrier()
out["shared_ok"] = {}
for name in sorted(os.listdir(shared)):      # every file there loads, whichever rank wrote it
    out["shared_ok"][name] = sorted(ms.load_checkpoint(os.path.join(shared, name)))

# one path, written by every rank in turn with different values, read meanwhile
cf.barrier()
path = os.path.join(root, "race.ckpt")
sizes, bad = set(), []
for i in range(25):
    values = {"w": ms.Tensor(np.full((64, 64), rank * 100 + i, np.float32))}
    ms.save_checkpoint([{"name": k, "data": v} for k, v in values.items()], path)
    try:
        w = ms.load_checkpoint(path)["w"].asnumpy()
        if len(set(w.ravel().tolist())) != 1:
            bad.append(f"mixed values at {i}")
        sizes.add(w.shape)
    except Exception as e:                     # noqa: BLE001  (a corrupt file is the failure)
        bad.append(f"{type(e).__name__}: {e}")
cf.barrier()
out["race_bad"] = bad
out["race_files"] = sorted(f for f in os.listdir(root) if f.startswith("race"))
# a new line first: the launcher gives ranks a terminal, where Model.train's progress bar
# leaves its last cursor codes without a line end
print("\nRESULT " + json.dumps(out), flush=True)
