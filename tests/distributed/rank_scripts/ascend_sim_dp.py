"""Rank script: data-parallel training (tests/distributed/dp_model.py, each rank on its shard)
on the simulated Ascend (Cube in float32) and on the CPU, in PyNative and GRAPH_MODE, with two
gradient buckets.
Prints per mode and target the losses, the final weights, and (Ascend) the communication
stream's tasks of the run (tests/distributed/test_dist_ascend_sim.py compares them)."""
import json
import sys

import minispore as ms
from minispore.backends import ascend_sim
from minispore.communication import get_group_size, get_rank, init

sys.path.insert(0, sys.argv[1])             # tests/distributed: the shared model and data
from dp_model import STEPS, batch, make_train_step  # noqa: E402

init()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                             all_reduce_fusion_config=[2])
rank, n = get_rank(), get_group_size()
x, y = batch()
rows = len(x) // n
shard = slice(rank * rows, (rank + 1) * rows)
for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    for target in ("CPU", "Ascend"):
        # the Cube in float32 (must_keep_origin_dtype): the numbers can then equal the CPU's
        ms.set_context(mode=mode, device_target=target,
                       ascend_config={"precision_mode": "must_keep_origin_dtype"})
        net, step = make_train_step()
        dev = ascend_sim.device()
        since = len(dev.records())
        t0 = dev.now()
        losses = [float(step(ms.Tensor(x[shard]), ms.Tensor(y[shard])).asnumpy())
                  for _ in range(STEPS)]
        comm = [r for r in dev.records()[since:] if r["track"] == 2] if target == "Ascend" \
            else []
        print("RESULT " + json.dumps({
            "mode": label, "target": target, "losses": losses,
            "weights": {p.name: p.asnumpy().tolist() for p in net.trainable_params()},
            "comm": [[r["name"], r["start_s"], r["duration_s"]] for r in comm],
            "sim_s": dev.now() - t0}), flush=True)
