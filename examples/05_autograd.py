"""Autograd: ms.grad over chosen inputs, has_aux, stop_gradient, value_and_grad over a Cell's
weights, ops.GradOperation and a second derivative; every gradient checked against the formula.

Nothing minispore-specific: replace `import minispore as ms` / `from minispore ...` with
`mindspore` to run it on MindSpore.

    python examples/05_autograd.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np

import minispore as ms
from minispore import Parameter, ParameterTuple, Tensor, nn, ops

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
rng = np.random.default_rng(0)

x = ops.ones(5, ms.float32)
y = ops.zeros(3, ms.float32)
w = Parameter(Tensor(rng.standard_normal((5, 3)), ms.float32), name="w")
b = Parameter(Tensor(rng.standard_normal(3), ms.float32), name="b")


def function(x, y, w, b):
    z = ops.matmul(x, w) + b
    return ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))


# d(mean BCE)/dz = (sigmoid(z) - y) / 3; dz/dw = outer(x, .), dz/db = 1
z_np = np.ones(5) @ w.asnumpy() + b.asnumpy()
dz = (1 / (1 + np.exp(-z_np)) - 0) / 3
grad_fn = ms.grad(function, (2, 3))
grads = grad_fn(x, y, w, b)
print("dw:\n", grads[0], "\ndb:", grads[1])
assert isinstance(grads, tuple) and len(grads) == 2
assert np.allclose(grads[0].asnumpy(), np.outer(np.ones(5), dz), atol=1e-6)
assert np.allclose(grads[1].asnumpy(), dz, atol=1e-6)


def function_with_logits(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss, z


grads, (z,) = ms.grad(function_with_logits, (2, 3), has_aux=True)(x, y, w, b)
assert np.allclose(grads[1].asnumpy(), dz, atol=1e-6) and np.allclose(z.asnumpy(), z_np, 1e-5)


def function_stop_gradient(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss, ops.stop_gradient(z)


grads = ms.grad(function_stop_gradient, (2, 3))(x, y, w, b)     # z adds nothing: stopped
assert np.allclose(grads[1].asnumpy(), dz, atol=1e-6)


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = w
        self.b = b

    def construct(self, x):
        return ops.matmul(x, self.w) + self.b


model = Network()
loss_fn = nn.BCEWithLogitsLoss()


def forward_fn(x, y):
    return loss_fn(model(x), y)


grad_fn = ms.value_and_grad(forward_fn, None, weights=model.trainable_params())
loss, grads = grad_fn(x, y)
print("loss:", loss, "grads:", [g.shape for g in grads])
assert np.isclose(loss.asnumpy(), np.mean(np.log1p(np.exp(z_np))), atol=1e-5)
assert np.allclose(grads[0].asnumpy(), np.outer(np.ones(5), dz), atol=1e-6)

# -- the older GradOperation interface, and a derivative of a derivative
grad_by_list = ops.GradOperation(get_by_list=True)
(gw, gb) = grad_by_list(model, ParameterTuple(model.trainable_params()))(x)
assert np.allclose(gb.asnumpy(), np.ones(3)) and np.allclose(gw.asnumpy(), np.ones((5, 3)))


def cube(t):
    return t * t * t


second = ms.grad(ms.grad(cube))(Tensor([2.0], ms.float32))
print("d2/dx2 x^3 at 2:", second)
assert np.allclose(second.asnumpy(), [12.0])
print(f"autograd OK ({MODE})")
