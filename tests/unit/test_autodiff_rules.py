"""MindSpore's rules for what a gradient covers, in both modes: integer inputs, Python scalars
in grad_position, one Parameter or a frozen one in `weights`, dict outputs, a Cell's own bprop,
control flow after an assign."""
import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, ParameterTuple, Tensor, nn, ops
from minispore.core.pynative import TAPE


@pytest.fixture(autouse=True)
def tape_is_left_clean():
    yield
    assert TAPE.depth == 0


X = Tensor(np.array([1.0, 2.0], np.float32))


def scaled_sum(x, s, y):
    return x * s + y


def test_python_scalar_in_grad_position_is_left_out(mode):
    gx, gy = ms.grad(scaled_sum, (0, 1, 2))(X, 3.0, X * 2)
    np.testing.assert_array_equal(gx.asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(gy.asnumpy(), [1.0, 1.0])
    g = ms.grad(scaled_sum, (1, 2))(X, 3.0, X * 2)       # one Tensor left: a bare Tensor
    assert isinstance(g, Tensor)
    np.testing.assert_array_equal(g.asnumpy(), [1.0, 1.0])
    assert ms.grad(scaled_sum, (1,))(X, 3.0, X * 2) == ()
    all_ = ops.GradOperation(get_all=True)(scaled_sum)(X, 3.0, X * 2)
    assert len(all_) == 2
    np.testing.assert_array_equal(all_[1].asnumpy(), [1.0, 1.0])


class WeightedSum(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w")
        self.v = Parameter(Tensor(np.array([4.0, 5.0], np.float32)), name="v",
                           requires_grad=False)

    def construct(self, x):
        return (x * self.w * self.v).sum()


def test_get_by_list_with_one_parameter_gives_its_gradient(mode):
    net = WeightedSum()
    g = ops.GradOperation(get_by_list=True)(net, net.w)(X)
    assert isinstance(g, Tensor) and g.shape == (2,)
    np.testing.assert_array_equal(g.asnumpy(), [4.0, 10.0])
    (gx,), gw = ops.GradOperation(get_all=True, get_by_list=True)(net, net.w)(X)
    np.testing.assert_array_equal(gw.asnumpy(), [4.0, 10.0])
    np.testing.assert_array_equal(gx.asnumpy(), [8.0, 15.0])


def test_parameter_without_requires_grad_gets_zeros(mode):
    net = WeightedSum()
    gw, gv = ops.GradOperation(get_by_list=True)(net, ParameterTuple([net.w, net.v]))(X)
    np.testing.assert_array_equal(gw.asnumpy(), [4.0, 10.0])
    np.testing.assert_array_equal(gv.asnumpy(), [0.0, 0.0])
    gw, gv = ms.grad(net, None, [net.w, net.v])(X)
    np.testing.assert_array_equal(gv.asnumpy(), [0.0, 0.0])
    np.testing.assert_array_equal(ms.grad(net, None, net.v)(X).asnumpy(), [0.0, 0.0])


class DictOut(nn.Cell):
    def construct(self, x, y):
        return {"a": x * 2, "b": y * x}


def test_dict_output_values_are_differentiated(mode):
    gx, gy = ops.GradOperation(get_all=True)(DictOut())(X, X + 1)
    np.testing.assert_array_equal(gx.asnumpy(), [4.0, 5.0])
    np.testing.assert_array_equal(gy.asnumpy(), [1.0, 2.0])
    gx, gy = ms.grad(DictOut(), (0, 1))(X, X + 1)
    np.testing.assert_array_equal(gx.asnumpy(), [4.0, 5.0])
