"""Graph-mode features MindSpore's docs teach, each run the same way in both modes:

- control flow on tensors: a while loop with break, a Parameter assigned under a tensor if;
- ms.mutable: a tuple input that stays a run-time input (one compile for every value);
- ops.composite: gradient clipping with MultitypeFuncGraph + HyperMap inside a train step;
- ops.Custom(func_type="pyfunc"): a numpy function as an op, with its own bprop;
- Cell.register_forward_hook replacing an output, and ms.check_modes comparing the two modes.

Replace `minispore` with `mindspore` to run it on MindSpore (check_modes is minispore's own).

    python examples/09_graph_features.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np

import minispore as ms
from minispore import Parameter, Tensor, nn, ops
from minispore.ops import composite as C
from minispore.ops import functional as F

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(0)


# -- control flow on tensor values
class Halve(nn.Cell):
    """Halve x until its sum drops under a limit (at most 10 times); count the calls that had
    to halve at all in a Parameter."""

    def __init__(self):
        super().__init__()
        self.calls = Parameter(Tensor(0, ms.int32), name="calls")

    def construct(self, x, limit):
        steps = Tensor(0, ms.int32)
        while steps < 10:
            if x.sum() < limit:
                break
            x = x / 2
            steps = steps + 1
        if steps > 0:
            self.calls = self.calls + 1
        return x, steps


halve = Halve()
out, steps = halve(Tensor(np.full(4, 8.0, np.float32)), Tensor(3.0))
print("halved:", out.asnumpy().tolist(), "steps:", int(steps.asnumpy()))
halve(Tensor(np.ones(4, np.float32)), Tensor(100.0))
print("calls that halved:", int(halve.calls.asnumpy()))
assert out.asnumpy().tolist() == [0.5] * 4 and int(steps.asnumpy()) == 4
assert int(halve.calls.asnumpy()) == 1


# -- ms.mutable: the tuple is an input of the graph, not a constant baked into it
@ms.jit
def weighted(x, weights):
    return x * weights[0] + weights[1]


x = Tensor(np.arange(3, dtype=np.float32))
print("mutable:", [weighted(x, ms.mutable((w, 1.0))).asnumpy().tolist() for w in (1.0, 2.0)])


# -- gradient clipping with MultitypeFuncGraph and HyperMap, as MindSpore's model zoo writes it
clip_grad = C.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Tensor")
def _clip_grad(clip_value, grad):
    return ops.clip_by_value(grad, -clip_value, clip_value)


net = nn.Dense(4, 3)
loss_fn = nn.MSELoss()
optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
hyper_map = C.HyperMap()


def forward(data, label):
    return loss_fn(net(data), label)


grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)


@ms.jit
def train_step(data, label):
    loss, grads = grad_fn(data, label)
    grads = hyper_map(F.partial(clip_grad, 0.05), grads)
    optimizer(grads)
    return loss, grads


data = Tensor(np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32))
label = Tensor(np.zeros((8, 3), np.float32))
loss, grads = train_step(data, label)
print(f"loss {float(loss.asnumpy()):.4f}, largest clipped grad "
      f"{max(float(np.abs(g.asnumpy()).max()) for g in grads):.3f}")
assert all(np.abs(g.asnumpy()).max() <= np.float32(0.05) for g in grads)


# -- a numpy function as an op, with its gradient given as another pyfunc op
def _cube(x):
    return x ** 3


def _cube_grad(x, out, dout):
    return 3 * x * x * dout


cube_grad = ops.Custom(_cube_grad, out_shape=lambda x, o, d: x, out_dtype=lambda x, o, d: x,
                       func_type="pyfunc")
cube = ops.Custom(_cube, out_shape=lambda x: x, out_dtype=lambda x: x, func_type="pyfunc",
                  bprop=lambda x, out, dout: (cube_grad(x, out, dout),))


class CubeSum(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cube = cube

    def construct(self, x):
        return self.cube(x).sum()


cube_net = CubeSum()
x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
print("custom:", float(cube_net(x).asnumpy()), ms.grad(cube_net)(x).asnumpy().tolist())
assert ms.grad(cube_net)(x).asnumpy().tolist() == [3.0, 12.0, 27.0]


# -- a forward hook may replace a Cell's output (it runs in both modes)
plain = net(data)
handle = net.register_forward_hook(lambda cell, inputs, output: output * 2)
hooked = net(data)
handle.remove()
print("forward hook doubled the output:", np.allclose(hooked.asnumpy(), 2 * plain.asnumpy()))
assert np.allclose(hooked.asnumpy(), 2 * plain.asnumpy())
assert np.allclose(net(data).asnumpy(), plain.asnumpy())

# -- the same computation in both modes, compared value by value and gradient by gradient
report = ms.check_modes(forward, data, label)
print(report)
assert report.ok
print(f"graph features OK ({MODE})")
