"""The data-parallel test's model, data and training step (used by the rank script and by the
single-process reference in test_dist_data_parallel.py)."""
import numpy as np

import minispore as ms
from minispore import nn

STEPS = 4


def batch():
    rng = np.random.default_rng(7)
    return rng.normal(size=(12, 5)).astype(np.float32), rng.integers(0, 3, 12).astype(np.int32)


def make_train_step():
    ms.set_seed(3)
    net = nn.SequentialCell(nn.Dense(5, 8), nn.ReLU(), nn.Dense(8, 3))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.2, momentum=0.9)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
