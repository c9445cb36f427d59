"""The three examples of MindSpore's mode documentation, run in PyNative mode on the CPU
(`python -m minispore demo --examples`; the main job is digits_demo.py). Each example is a
function returning its results, so tests check the same numbers the demo prints."""
from __future__ import annotations

import numpy as np

import minispore as ms
from minispore import Parameter, ParameterTuple, Tensor, nn, ops


class MyNet(nn.Cell):
    """Example 1: f(x, y) = x * y."""

    def construct(self, x, y):
        return x * y


class Net(nn.Cell):
    """Example 2: multiply x by a fixed Parameter z, then matmul with y."""

    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = Parameter(Tensor(np.array([1.0], np.float32)), name="z")

    def construct(self, x, y):
        x = x * self.z
        return self.matmul(x, y)


class GradNetWrtXY(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation(get_all=True)

    def construct(self, x, y):
        return self.grad_op(self.net)(x, y)


class GradNetWrtZ(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.params = ParameterTuple(net.trainable_params())
        self.grad_op = ops.GradOperation(get_by_list=True)

    def construct(self, x, y):
        return self.grad_op(self.net, self.params)(x, y)


class LoopNet(nn.Cell):
    """Example 3: a Python `for` loop in construct; autodiff goes through every iteration."""

    def __init__(self, n=3):
        super().__init__()
        self.n = n
        self.w = Parameter(Tensor(np.array([2.0], np.float32)), name="w")

    def construct(self, x):
        for i in range(self.n):
            x = x * self.w + i
        return x


def example_inputs():
    x = Tensor([[0.8, 0.6, 0.2], [1.8, 1.3, 1.1]], dtype=ms.float32)
    y = Tensor([[0.11, 3.3, 1.1], [1.1, 0.2, 1.4], [1.1, 2.2, 0.3]], dtype=ms.float32)
    return x, y


def example_1():
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    y = Tensor(np.array([4.0, 5.0, 6.0], np.float32))
    return MyNet()(x, y)


def example_2():
    x, y = example_inputs()
    net = Net()
    dxdy = GradNetWrtXY(net)(x, y)
    dz = GradNetWrtZ(net)(x, y)
    via_grad = ms.grad(net, grad_position=(0, 1))(x, y)
    value, wgrads = ms.value_and_grad(net, grad_position=None, weights=net.trainable_params())(x, y)
    return {"GradOperation(get_all=True)": dxdy, "GradOperation(get_by_list=True)": dz,
            "ms.grad(grad_position=(0, 1))": via_grad,
            "ms.value_and_grad(weights=...) value": value,
            "ms.value_and_grad(weights=...) grads": wgrads}


def example_3():
    net = LoopNet()
    x = Tensor(np.array([1.0], np.float32))
    out = net(x)
    dx, (dw,) = ms.grad(net, grad_position=0, weights=net.trainable_params())(x)
    return {"out": out, "d/dx": dx, "d/dw": dw}


def run() -> None:
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    print("minispore demo: MindSpore's mode-documentation examples, PyNative mode, CPU\n")
    print("1. MyNet: f(x, y) = x * y")
    print("  ", example_1())
    print("\n2. out = matmul(x * z, y); gradients")
    for k, v in example_2().items():
        print(f"  {k}:")
        for t in (v if isinstance(v, tuple) else (v,)):
            print("    " + str(t).replace("\n", "\n    "))
    print("\n3. for i in range(3): x = x * w + i   (x = 1, w = 2)")
    for k, v in example_3().items():
        print(f"  {k}: {v}")
