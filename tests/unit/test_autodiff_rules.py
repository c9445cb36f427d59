"""MindSpore's rules for what a gradient covers, in both modes: integer inputs, Python scalars
in grad_position, one Parameter or a frozen one in `weights`, dict outputs, a Cell's own bprop,
control flow after an assign; and broadcast_to's -1 (which keeps an input dim) with its
gradient."""
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
    v, _ = ms.value_and_grad(DictOut(), (0, 1))(X, X + 1)
    assert sorted(v) == ["a", "b"]
    np.testing.assert_array_equal(v["b"].asnumpy(), [2.0, 6.0])
    gx, gy = ms.grad(DictOut(), (0, 1), sens_param=True)(X, X + 1, {"a": X, "b": X * 10})
    np.testing.assert_array_equal(gx.asnumpy(), [22.0, 64.0])
    np.testing.assert_array_equal(gy.asnumpy(), [10.0, 40.0])


def add3(x, y, z):
    return x + y + z


def mul(x, y):
    return x * y


def cube(x):
    return x * x * x


def cast_scaled(x):
    return x.astype(ms.float32) * 1.5


def test_integer_inputs_get_gradients(mode):
    a, b, c = (Tensor(np.array(v, np.int64)) for v in ([1, 2], [3, 4], [5, 6]))
    for g in ms.grad(add3, (0, 1, 2))(a, b, c):
        assert g.dtype == ms.int64
        np.testing.assert_array_equal(g.asnumpy(), [1, 1])
    ga, gb = ms.grad(mul, (0, 1))(a, b)
    np.testing.assert_array_equal(ga.asnumpy(), [3, 4])
    np.testing.assert_array_equal(gb.asnumpy(), [1, 2])
    ga, gf = ms.grad(mul, (0, 1))(a, Tensor(np.array([3.0, 4.0], np.float32)))
    assert ga.dtype == ms.int64 and gf.dtype == ms.float32
    np.testing.assert_array_equal(ga.asnumpy(), [3, 4])
    i32 = Tensor(np.array([2, 3], np.int32))
    g = ms.grad(cube)(i32)
    assert g.dtype == ms.int32
    np.testing.assert_array_equal(g.asnumpy(), [12, 27])
    # the float gradient is cast back to the input's dtype (1.5 -> 1), as MindSpore's Cast bprop
    np.testing.assert_array_equal(ms.grad(cast_scaled)(i32).asnumpy(), [1, 1])


class PowerLoop(nn.Cell):
    def construct(self, x, y):
        i = Tensor(0, ms.int32)
        while i < 3:
            x = x * y
            i = i + 1
        return x


class AssignThenWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(Tensor(1, ms.int32), name="p")

    def construct(self, x):
        ops.assign(self.p, x + 1)
        y = x
        while y < 10:
            y = y * 3 + self.p
        return y


def test_integer_gradient_through_while(mode):
    gx, gy = ops.GradOperation(get_all=True)(PowerLoop())(Tensor(2, ms.int32),
                                                          Tensor(3, ms.int32))
    assert gx.dtype == ms.int32
    assert (int(gx.asnumpy()), int(gy.asnumpy())) == (27, 54)
    # y: 1 -> 5 -> 17 with p = x + 1 read as the Parameter (no gradient through the assign)
    (g,) = ops.GradOperation(get_all=True)(AssignThenWhile())(Tensor(1, ms.int32))
    assert int(g.asnumpy()) == 9


class IfAfterAssign(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(Tensor(2.0, ms.float32), name="p")

    def construct(self, x):
        ops.assign(self.p, x * 2)
        if self.p > 1:
            out = self.p * x * 3
        else:
            out = x
        return out


def test_if_after_assign_reads_the_parameter_not_the_assigned_expression(mode):
    # d/dx (p * x * 3) with p read as a Parameter (value 2x = 4): 3p = 12, not d/dx 6x^2 = 24
    (g,) = ops.GradOperation(get_all=True)(IfAfterAssign())(Tensor(2.0, ms.float32))
    assert float(g.asnumpy()) == 12.0
    net = IfAfterAssign()
    ops.GradOperation(get_all=True)(net)(Tensor(2.0, ms.float32))
    assert float(net.p.asnumpy()) == 4.0            # the assignment itself still happens


def broadcast_keep_last(x):
    return ops.broadcast_to(x, (2, -1, 3)) * 2


def broadcast_minus_one_first(x):
    return ops.broadcast_to(x, (-1, 2, 3))


def test_broadcast_to_minus_one(mode):
    x = Tensor(np.ones((1, 3), np.float32))
    g = ms.grad(broadcast_keep_last)(x)
    np.testing.assert_array_equal(g.asnumpy(), np.full((1, 3), 4.0, np.float32))
    # a -1 before the input's dims has no dim to keep: MindSpore raises ValueError
    with pytest.raises(ValueError, match=r"^broadcast_to: -1 in shape \(-1, 2, 3\) at index 0 "
                                         r"has no matching dim in the input of shape \(1, 3\)"):
        ms.jit(broadcast_minus_one_first)(x) if mode == "graph" else broadcast_minus_one_first(x)
    with pytest.raises(ValueError, match=r"-1 in shape \(-1, 3\) at index 0"):
        ops.BroadcastTo((-1, 3))(Tensor(np.ones((3,), np.float32)))


class MulAdd(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y

    def bprop(self, x, y, out, dout):
        return 2 * dout, 2 * y          # deliberately not the automatic gradient (1, 1) * 2


class InlineMulAdd(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mul_add = MulAdd()

    def construct(self, x, y):
        return self.mul_add(x, y) + x + 2 * y


def test_cell_bprop_replaces_the_automatic_gradient(mode):
    x, y = Tensor(1, ms.int32), Tensor(2, ms.int32)
    gx, gy = ops.GradOperation(get_all=True)(MulAdd())(x, y)
    assert (int(gx.asnumpy()), int(gy.asnumpy())) == (2, 4)
    gx, gy = ops.GradOperation(get_all=True)(InlineMulAdd())(x, y)
    assert (int(gx.asnumpy()), int(gy.asnumpy())) == (3, 6)


class TenTimes(nn.Cell):
    def construct(self, x):
        return x * x

    def bprop(self, x, out, dout):
        return (10 * x * dout,)


TEN_TIMES = TenTimes()


def grad_of_ten_times(x):
    return ms.grad(TEN_TIMES)(x)


def test_cell_bprop_first_and_second_order(mode):
    x = Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(ms.grad(TEN_TIMES)(x).asnumpy(), [10.0, 20.0])
    # the second order differentiates the user's bprop: d/dx (10 x) = 10
    np.testing.assert_array_equal(ms.grad(grad_of_ten_times)(x).asnumpy(), [10.0, 10.0])


class ScaledByParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([3.0], np.float32)), name="w")

    def construct(self, x):
        return x * self.w

    def bprop(self, x, out, dout):
        return (dout * 7,)


def test_cell_bprop_parameters_inside_get_zeros(mode):
    net = ScaledByParameter()
    (gx,), (gw,) = ops.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(
        Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_array_equal(gx.asnumpy(), [7.0, 7.0])
    np.testing.assert_array_equal(gw.asnumpy(), [0.0])
    # the same when only the Parameter is differentiated (the input is not tracked)
    gw = ms.grad(net, None, net.w)(Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_array_equal(gw.asnumpy(), [0.0])


class Relu2(nn.Cell):
    def construct(self, x, y):
        return ops.relu(x)


class GradInForward(nn.Cell):
    def __init__(self):
        super().__init__()
        self.f = Relu2()

    def construct(self, x, y):
        return self.f(x, y), ops.GradOperation(get_all=True)(self.f)(x, y)

    def bprop(self, x, y, out, dout):
        grads = ops.GradOperation(get_all=True)(self.f)(x, y)
        return out[1][0], grads[1]


class OuterBprop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.f = GradInForward()

    def construct(self, x, y):
        return self.f(x, y)

    def bprop(self, x, y, out, dout):
        return x + y + y + out[0], x + x + y + y + dout[0]


def test_cell_bprop_with_nested_outputs_and_gradients_inside(mode):
    x = Tensor(np.ones((2, 2), np.float32))
    y = Tensor(np.ones((2, 2), np.float32))
    gx, gy = ops.GradOperation(get_all=True)(OuterBprop())(x, y)
    np.testing.assert_array_equal(gx.asnumpy(), np.full((2, 2), 4.0))
    np.testing.assert_array_equal(gy.asnumpy(), np.full((2, 2), 5.0))


class Identity3(nn.Cell):
    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (3 * dout,)


IDENTITY3 = Identity3()


def times_identity(x):
    return (IDENTITY3(x) * x).sum()


def test_cell_bprop_forward_returning_its_input(mode):
    # d/dx (id(x) * x) = x * 3 (through the bprop) + x: the input keeps its own tape identity
    x = Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(ms.grad(times_identity)(x).asnumpy(), [4.0, 8.0])


class WrongCount(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y

    def bprop(self, x, y, out, dout):
        return (2 * dout,)


def test_cell_bprop_with_the_wrong_number_of_gradients_raises(mode):
    x = Tensor(np.ones(2, np.float32))
    for exc in (ValueError, RuntimeError):
        with pytest.raises(exc, match=r"^WrongCount\.bprop must return a tuple of one gradient "
                                      r"per input \(2: .*got 1 value"):
            ops.GradOperation(get_all=True)(WrongCount())(x, x + 1)
