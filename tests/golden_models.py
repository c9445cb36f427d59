"""Small models shared by tests that need "the MLP training step", "the fused chain" or "the
while-if program": the graph-level tests (tests/graph/test_jit_levels.py, test_native_sink.py)
and the CUDA generator's golden graphs (tests/gpu/test_cuda_codegen.py)."""
from __future__ import annotations

import numpy as np

import minispore as ms
from minispore import Parameter, Tensor, nn, ops


class MLP(nn.Cell):
    def __init__(self, seed=0):
        super().__init__()
        r = np.random.default_rng(seed)
        self.w1 = Parameter(Tensor((r.standard_normal((6, 8)) * 0.3).astype(np.float32)))
        self.b1 = Parameter(Tensor(np.zeros(8, np.float32)))
        self.w2 = Parameter(Tensor((r.standard_normal((8, 3)) * 0.3).astype(np.float32)))

    def construct(self, x):
        return ops.matmul(ops.relu(ops.matmul(x, self.w1) + self.b1), self.w2)


class TrainStep(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.params = ms.ParameterTuple(net.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True)

    def loss(self, x, y):
        return -(ops.log_softmax(self.net(x), -1) * y).sum() / x.shape[0]

    def construct(self, x, y):
        loss = self.loss(x, y)
        grads = self.grad(self.loss, self.params)(x, y)
        for p, g in zip(self.params, grads):
            ops.assign(p, p - 0.5 * g)
        return loss


def chain(x):
    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3


def control(x, n):
    """A tensor while whose body holds a tensor if."""
    i = ops.zeros((), ms.int32)
    while i < n:
        if x.sum() > 0:
            x = x * 0.5 - 1
        else:
            x = ops.exp(x) + x
        i = i + 1
    return x, x.mean(axis=0)
