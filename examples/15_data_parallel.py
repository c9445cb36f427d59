"""Data-parallel training of the digits, the way MindSpore's distributed tutorial does it: every
process (rank) builds the same network, reads its own shard of each global batch
(`num_shards=get_group_size(), shard_id=get_rank()`), and `set_auto_parallel_context(
parallel_mode=DATA_PARALLEL, gradients_mean=True)` makes `Model` all-reduce and average the
gradients, so the ranks stay identical and train as one process would on the global batch.

Launch it on N ranks (Open MPI underneath; N=1 is one process):

    python -m minispore run -n 2 examples/15_data_parallel.py --mode graph|pynative \\
        [--device CPU|Ascend] [--net mlp|cnn] [--epochs 4]

(`mpirun -n 2 python examples/15_data_parallel.py` works too.) Rank 0 prints the global
loss (the mean of the ranks' losses) and the test accuracy; with the same global batch they
equal one process's, whatever the number of ranks. Each rank saves checkpoints into its own
directory, as MindSpore's tutorials do.

Replace `minispore` with `mindspore` to run it on MindSpore (launched by its msrun).
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.communication import get_group_size, get_rank, init
from minispore.communication.comm_func import all_reduce
from minispore.train import CheckpointConfig, Model, ModelCheckpoint
from minispore.train.callback import Callback


def _arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


MODE = _arg("--mode", os.environ.get("EXAMPLE_MODE", "graph"))
DEVICE = _arg("--device", "CPU")
NET = _arg("--net", "mlp")
EPOCHS, GLOBAL_BATCH = int(_arg("--epochs", 4)), 64

ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE,
               device_target=DEVICE)
init()
rank, ranks = get_rank(), get_group_size()
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
ms.set_seed(1)                      # the same initial weights on every rank
if GLOBAL_BATCH % ranks:
    raise SystemExit(f"the global batch {GLOBAL_BATCH} must divide by the {ranks} ranks")


def datasets():
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)
    x = x.reshape(-1, 1, 8, 8) if NET == "cnn" else x.reshape(-1, 64)
    y = digits.target.astype(np.int32)
    train = ds.NumpySlicesDataset({"image": x[:1400], "label": y[:1400]}, shuffle=True,
                                  num_shards=ranks, shard_id=rank)
    test = ds.NumpySlicesDataset({"image": x[1400:], "label": y[1400:]}, shuffle=False)
    return (train.batch(GLOBAL_BATCH // ranks, drop_remainder=True), test.batch(128))


def network():
    if NET == "cnn":
        return nn.SequentialCell(
            nn.Conv2d(1, 16, 3, pad_mode="same"), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, pad_mode="same"), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Dense(32 * 2 * 2, 10))
    return nn.SequentialCell(nn.Dense(64, 128), nn.ReLU(), nn.Dense(128, 64), nn.ReLU(),
                             nn.Dense(64, 10))


class GlobalLoss(Callback):
    """The mean of the ranks' step losses: the loss of the global batch."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_step_end(self, run_context):
        loss = run_context.original_args().net_outputs
        total, _ = all_reduce(loss)
        self.losses.append(float(total.asnumpy()) / ranks)


train, test = datasets()
net = network()
loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
model = Model(net, loss_fn, opt, metrics={"accuracy"})
ckpt_dir = os.path.join(tempfile.mkdtemp(prefix="dp-digits-"), f"rank_{rank}")
ckpt = ModelCheckpoint(prefix="digits", directory=ckpt_dir,
                       config=CheckpointConfig(save_checkpoint_steps=train.get_dataset_size()))
curve = GlobalLoss()
model.train(EPOCHS, train, callbacks=[curve, ckpt], dataset_sink_mode=False)
acc = model.eval(test, dataset_sink_mode=False)["accuracy"]
if rank == 0:
    print(f"steps: {len(curve.losses)}, first loss: {curve.losses[0]:.6f}")
    print(f"checkpoints of rank 0: {sorted(os.listdir(ckpt_dir))}")
    print(f"final loss: {curve.losses[-1]:.6f}")
    print(f"test accuracy: {acc:.4f}")
    print(f"OK data parallel: ranks={ranks} mode={MODE} device={DEVICE} net={NET}")
shutil.rmtree(os.path.dirname(ckpt_dir), ignore_errors=True)
