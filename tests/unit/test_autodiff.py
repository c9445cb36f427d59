"""ms.grad / ms.value_and_grad / GradOperation return structures (notes/mindspore.md section 5),
stop_gradient, requires_grad, grad of grad, and the tape's hygiene."""
import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, ParameterTuple, Tensor, nn, ops
from minispore.core.pynative import TAPE


@pytest.fixture(autouse=True)
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    yield
    assert TAPE.depth == 0


W = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w")


def f(x, y):
    return (x * y * W).sum()


X = Tensor(np.array([1.0, 2.0], np.float32))
Y = Tensor(np.array([3.0, 4.0], np.float32))


def test_grad_position_structures():
    g = ms.grad(f)(X, Y)
    assert isinstance(g, Tensor)
    np.testing.assert_allclose(g.asnumpy(), [6.0, 12.0])
    assert isinstance(ms.grad(f, (0,))(X, Y), Tensor)
    gx, gy = ms.grad(f, (0, 1))(X, Y)
    np.testing.assert_allclose(gy.asnumpy(), [2.0, 6.0])


def test_weights_structures():
    gw = ms.grad(f, None, [W])(X, Y)
    assert isinstance(gw, tuple) and len(gw) == 1
    np.testing.assert_allclose(gw[0].asnumpy(), [3.0, 8.0])
    assert isinstance(ms.grad(f, None, W)(X, Y), Tensor)
    gx, (gw2,) = ms.grad(f, 0, ParameterTuple([W]))(X, Y)
    np.testing.assert_allclose(gx.asnumpy(), [6.0, 12.0])
    with pytest.raises(ValueError, match="can not be None at the same time"):
        ms.grad(f, None, None)


def test_has_aux_and_value_and_grad():
    def g(x):
        return (x * x).sum(), x + 1, x * 2
    grads, aux = ms.grad(g, has_aux=True)(X)
    assert isinstance(aux, tuple) and len(aux) == 2
    np.testing.assert_allclose(grads.asnumpy(), [2.0, 4.0])
    (loss, a1, a2), grads = ms.value_and_grad(g, has_aux=True)(X)
    np.testing.assert_allclose(loss.asnumpy(), 5.0)
    value, gx = ms.value_and_grad(f)(X, Y)
    np.testing.assert_allclose(value.asnumpy(), 1 * 3 * 2 + 2 * 4 * 3)
    assert value._node is None and gx._node is None        # nothing keeps the tape alive


def test_return_ids_and_sens_param():
    (p0, g0), (p1, g1) = ms.grad(f, (0, 1), return_ids=True)(X, Y)
    assert (p0, p1) == (0, 1)
    gx, ((name, gw),) = ms.grad(f, 0, [W], return_ids=True)(X, Y)
    assert name == "w"
    h = ms.grad(lambda x: x * 3, sens_param=True)(X, Tensor([1.0, 10.0]))
    np.testing.assert_allclose(h.asnumpy(), [3.0, 30.0])


def test_non_tensor_input_and_unused_input():
    g = ms.grad(lambda x, s: x * s, (0, 1))(X, 2.0)     # the scalar is left out
    assert isinstance(g, Tensor)
    np.testing.assert_array_equal(g.asnumpy(), [2.0, 2.0])
    assert ms.grad(lambda x, s: x * s, 1)(X, 2.0) == ()
    gy = ms.grad(lambda x, y: x * 2, 1)(X, Y)
    np.testing.assert_array_equal(gy.asnumpy(), [0.0, 0.0])


def test_grad_operation_structures():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor([2.0]), name="w")

        def construct(self, x, y):
            return x * y * self.w

    net = Net()
    params = ParameterTuple(net.trainable_params())
    x, y = Tensor([1.0]), Tensor([5.0])
    assert isinstance(ops.GradOperation()(net)(x, y), Tensor)
    all_ = ops.GradOperation(get_all=True)(net)(x, y)
    assert isinstance(all_, tuple) and len(all_) == 2
    by_list = ops.GradOperation(get_by_list=True)(net, params)(x, y)
    assert isinstance(by_list, tuple) and by_list[0].asnumpy()[0] == 5.0
    (dx, dy), (dw,) = ops.GradOperation(get_all=True, get_by_list=True)(net, params)(x, y)
    assert dx.asnumpy()[0] == 10.0 and dy.asnumpy()[0] == 2.0
    gs = ops.GradOperation(sens_param=True)(net)(x, y, Tensor([3.0]))
    assert gs.asnumpy()[0] == 30.0


def test_stop_gradient_and_requires_grad():
    g = ms.grad(lambda x: (x * ops.stop_gradient(x)).sum())(X)
    np.testing.assert_allclose(g.asnumpy(), X.asnumpy())
    p = Parameter(Tensor([1.0]), name="p", requires_grad=False)

    class N(nn.Cell):
        def __init__(self):
            super().__init__()
            self.p = p
            self.q = Parameter(Tensor([1.0]), name="q")

        def construct(self, x):
            return x * self.p * self.q
    assert [q.name for q in N().trainable_params()] == ["q"]


def test_grad_of_grad():
    def cube(x):
        return x * x * x
    np.testing.assert_allclose(ms.grad(ms.grad(cube))(Tensor([2.0])).asnumpy(), [12.0])
    np.testing.assert_allclose(ms.grad(ms.grad(ms.grad(cube)))(Tensor([2.0])).asnumpy(), [6.0])
    # mixed: d/dy of (d/dx x*y*y) = 2y
    h = ms.grad(lambda x, y: ms.grad(lambda a, b: (a * b * b).sum(), 0)(x, y).sum(), 1)
    np.testing.assert_allclose(h(X, Y).asnumpy(), 2 * Y.asnumpy())


def test_setitem_under_autodiff_keeps_earlier_values():
    def fn(x):
        y = x * x               # the backward of this must see the old x
        x[0] = 5.0
        return (y + x).sum()
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    g = ms.grad(fn)(x)
    np.testing.assert_allclose(g.asnumpy(), [2.0, 5.0, 7.0])


def test_error_inside_grad_leaves_no_state():
    def bad(x):
        return x @ Tensor(np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="matmul"):
        ms.grad(bad)(X)
    assert TAPE.depth == 0 and X._node is None
    np.testing.assert_allclose(ms.grad(lambda x: (x * x).sum())(X).asnumpy(), [2.0, 4.0])
