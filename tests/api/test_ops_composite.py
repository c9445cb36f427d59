"""mindspore.ops.composite (C): MultitypeFuncGraph, HyperMap, Map, ops.Partial, and ops.grad /
ops.value_and_grad (the functions: test_ops_composite_functions.py). Expected values were
observed running MindSpore 2.10 (CPU)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops, Tensor
from minispore.ops import composite as C
from minispore.ops import functional as F


def _add():
    add = C.MultitypeFuncGraph("add")

    @add.register("Number", "Number")
    def _nn(x, y):
        return x + y

    @add.register("Tensor", "Tensor")
    def _tt(x, y):
        return ops.add(x, y)

    @add.register("Tensor", "Number")
    def _tn(x, y):
        return x * y
    return add


def _np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_np(v) for v in x)
    return x.asnumpy().tolist() if isinstance(x, Tensor) else x


def test_exported_at_ops_like_mindspore():
    # MindSpore: C.HyperMap is ops.HyperMap, ops.grad is ms.grad, ... (all True)
    assert C.HyperMap is ops.HyperMap and C.Map is ops.Map
    assert C.MultitypeFuncGraph is ops.MultitypeFuncGraph
    assert C.GradOperation is ops.GradOperation
    assert ops.grad is ms.grad and ops.value_and_grad is ms.value_and_grad


def test_multitype_dispatch_pynative():
    add = _add()
    # MindSpore: 3, [4. 6.], [3. 6.]; a bool is a Number (add(True, 1) == 2)
    assert add(1, 2) == 3
    assert add(Tensor([1., 2.]), Tensor([3., 4.])).asnumpy().tolist() == [4., 6.]
    assert add(Tensor([1., 2.]), 3).asnumpy().tolist() == [3., 6.]
    assert add(True, 1) == 2


def test_multitype_no_match_error():
    add = _add()
    # MindSpore raises ValueError "cannot find fn match given args"
    with pytest.raises(ValueError, match=r"cannot find fn match.*String, Int64.*"
                                         r"\(Number, Number\), \(Tensor, Tensor\)"):
        add("a", 1)
    with pytest.raises(TypeError):
        add(1, Tensor([1.]))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        add(np.ones(2), 1)


def test_multitype_type_names():
    # MindSpore: "Float32" matches no Python value (3.0 is Float64), "Int64" matches 3,
    # "Tensor[Float32]" a float32 Tensor or Parameter but not an int64 Tensor
    m = C.MultitypeFuncGraph("m")
    m.register("Float32")(lambda x: 1)
    m.register("Int64")(lambda x: 2)
    m.register("Tensor[Float32]")(lambda x: 3)
    m.register("Tuple")(lambda x: "tuple")
    m.register("List")(lambda x: "list")
    m.register("String")(lambda x: "str")
    m.register("None")(lambda x: "none")
    m.register("Function")(lambda x: "fn")
    assert m(3) == 2
    assert m(Tensor([1.])) == 3 and m(ms.Parameter(Tensor([1.]), name="p")) == 3
    assert (m((1,)), m([1]), m("s"), m(None), m(lambda x: x), m(nn.ReLU())) == \
        ("tuple", "list", "str", "none", "fn", "fn")
    with pytest.raises(ValueError):
        m(3.0)
    with pytest.raises(ValueError):
        m(Tensor([1]))
    with pytest.raises(RuntimeError, match="unsupported type name"):
        m.register("Scalar")


def test_single_registration_skips_type_check():
    # MindSpore calls the only registered function without matching the types
    one = C.MultitypeFuncGraph("one")
    one.register("Tensor")(lambda x: x * 2)
    assert one(3) == 6


def test_hypermap_map_pynative():
    add = _add()
    hm = C.HyperMap()
    # MindSpore (PyNative): nested tuples recurse; a list gives a tuple; Map is one level
    r = hm(add, (Tensor([1.]), (Tensor([2.]), 3)), (Tensor([1.]), (Tensor([2.]), 4)))
    assert _np(r) == ([2.], ([4.], 7))
    r = hm(add, [Tensor([1.]), 2], [Tensor([1.]), 3])
    assert isinstance(r, tuple) and _np(r) == ([2.], 5)
    assert C.Map()(add, (1, 2), (3, 4)) == (4, 6)
    assert C.Map()(add, [1, 2], [3, 4]) == (4, 6)
    assert C.HyperMap(add)((1, 2), (3, 4)) == (4, 6)
    assert C.HyperMap(add)((1, 2), [3, 4]) == (4, 6)
    assert C.HyperMap(add)(1, 2) == 3
    assert hm(F.partial(add, 1), (1, 2)) == (2, 3)
    assert hm(lambda x: x * 2, (1, 2)) == (2, 4)
    assert C.HyperMap(add, reverse=True)((1, 2), (3, 4)) == (4, 6)
    with pytest.raises(ValueError):             # Map does not recurse: add(tuple, tuple)
        C.Map()(add, (1, (2,)), (3, (4,)))
    with pytest.raises(RuntimeError, match="same length"):     # MindSpore (graph mode)
        C.HyperMap(add)((1, 2), (3,))
    with pytest.raises(TypeError, match="MultitypeFuncGraph"):
        C.HyperMap(F.partial(add, 1))


def test_hypermap_graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    add = _add()
    hm, hma, mp = C.HyperMap(), C.HyperMap(add), C.Map()

    @ms.jit
    def f(a, b):
        return (hm(add, [a, 2], [b, 3]), hm(add, (a, (b, 1)), (b, (a, 2))),
                mp(add, (a, b), (2, 3)), hma(a, b), add(a, 2))
    r = f(Tensor([1.]), Tensor([2.]))
    # MindSpore (GRAPH_MODE): a list stays a list there
    assert isinstance(r[0], list)
    assert _np(r) == ([[3.], 5], ([3.], ([3.], 3)), ([2.], [6.]), [3.], [2.])


def test_multitype_graph_parses_registered_function():
    # the registered function has a tensor `if`: it compiles (parsed, not run as Python)
    ms.set_context(mode=ms.GRAPH_MODE)
    add, hm = _add(), C.HyperMap()
    m = C.MultitypeFuncGraph("m")

    @m.register("Tensor")
    def _t(x):
        if x.sum() > 0:
            return x * 2
        return x

    @ms.jit
    def f(a):
        return hm(m, (a, -a)), hm(F.partial(add, a), (3.0, a))
    # MindSpore: ([2, 4], [-1, -2]) for the first part
    assert _np(f(Tensor([1., 2.]))) == (([2., 4.], [-1., -2.]), ([3., 6.], [2., 4.]))

    @ms.jit
    def g(a):
        return add("s", a)
    with pytest.raises(TypeError, match=r"String, Tensor\[Float32\]"):
        g(Tensor([1.]))


_CLIP = C.MultitypeFuncGraph("clip_grad")


@_CLIP.register("Number", "Number", "Tensor")
def _clip_grad(clip_type, clip_value, grad):
    dt = F.dtype(grad)
    if clip_type == 0:
        return ops.clip_by_value(grad, F.cast(F.tuple_to_array((-clip_value,)), dt),
                                 F.cast(F.tuple_to_array((clip_value,)), dt))
    return grad * clip_value


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
        self.fc = nn.Dense(4, 3, weight_init=Tensor(w), bias_init="zeros")

    def construct(self, x, y):
        return ((self.fc(x) - y) ** 2).mean()


class _Step(nn.Cell):
    def __init__(self, net, opt):
        super().__init__()
        self.net, self.opt = net, opt
        self.weights = opt.parameters
        self.grad = C.GradOperation(get_by_list=True)
        self.hyper_map = C.HyperMap()

    def construct(self, x, y):
        loss = self.net(x, y)
        grads = self.grad(self.net, self.weights)(x, y)
        grads = self.hyper_map(F.partial(_CLIP, 0, 0.1), grads)
        self.opt(grads)
        return loss


def test_hypermap_gradient_clipping_train_step(mode):
    net = _Net()
    step = _Step(net, nn.SGD(net.trainable_params(), learning_rate=0.5))
    x = Tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    y = Tensor(np.array([[1, 0, 0], [0, 1, 0]], np.float32))
    losses = [float(step(x, y).asnumpy()) for _ in range(3)]
    # MindSpore 2.10, both modes: losses and the parameters after 3 steps
    np.testing.assert_allclose(losses, [2.091428518295288, 1.7912206649780273,
                                        1.5225683450698853], rtol=1e-6)
    np.testing.assert_allclose(net.fc.weight.asnumpy(), np.arange(12).reshape(3, 4) / 10 - 0.15,
                               atol=1e-6)
    np.testing.assert_allclose(net.fc.bias.asnumpy(), [0.15, 0.15, -0.10052910447120667],
                               rtol=1e-6)


def test_ops_grad_value_and_grad(mode):
    def f(x):
        return (x * x).sum()
    x = Tensor([1., 2.])
    assert ops.grad(f)(x).asnumpy().tolist() == [2., 4.]
    v, g = ops.value_and_grad(f)(x)
    assert float(v.asnumpy()) == 5.0 and g.asnumpy().tolist() == [2., 4.]


_MOMENTUM = C.MultitypeFuncGraph("momentum_opt")


@_MOMENTUM.register("Tensor", "Tensor", "Tensor", "Tensor", "Tensor")
def _momentum_run(lr, momentum, gradient, weight, moment):
    new_m = moment * momentum + gradient
    F.assign(moment, new_m)
    F.assign(weight, weight - lr * new_m)
    return True


class _Momentum(nn.Cell):
    """An optimizer written the MindSpore way: hyper_map of a registered update."""

    def __init__(self, params, lr, momentum):
        super().__init__()
        self.params = ms.ParameterTuple(params)
        self.moments = ms.ParameterTuple([ms.Parameter(Tensor(np.zeros(p.shape, np.float32)),
                                                       name="m_" + p.name) for p in params])
        self.lr = Tensor(np.array(lr, np.float32))
        self.momentum = Tensor(np.array(momentum, np.float32))
        self.hyper_map = C.HyperMap()

    def construct(self, grads):
        return self.hyper_map(F.partial(_MOMENTUM, self.lr, self.momentum), grads, self.params,
                              self.moments)


class _GradStep(nn.Cell):
    def __init__(self, net, opt):
        super().__init__()
        self.net, self.opt, self.weights = net, opt, opt.params
        self.grad = C.GradOperation(get_by_list=True)

    def construct(self, x, y):
        loss = self.net(x, y)
        self.opt(self.grad(self.net, self.weights)(x, y))
        return loss


def test_hypermap_optimizer_assigns_parameters(mode):
    net = _Net()
    step = _GradStep(net, _Momentum(net.trainable_params(), 0.1, 0.9))
    x = Tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    y = Tensor(np.array([[1, 0, 0], [0, 1, 0]], np.float32))
    losses = [float(step(x, y).asnumpy()) for _ in range(4)]
    # MindSpore 2.10, both modes
    np.testing.assert_allclose(losses, [2.091428518295288, 1.7419277429580688,
                                        1.1898380517959595, 0.6231696605682373], rtol=1e-6)
    np.testing.assert_allclose(net.fc.bias.asnumpy(), [0.18592602014541626, 0.18592603504657745,
                                                       -0.07437042146921158], rtol=1e-6)


_GRAD_SCALE = C.MultitypeFuncGraph("grad_scale")
_RECIPROCAL = ops.operations.Reciprocal()


@_GRAD_SCALE.register("Tensor", "Tensor")
def _tensor_grad_scale(scale, grad):
    return grad * F.cast(_RECIPROCAL(scale), F.dtype(grad))


@_GRAD_SCALE.register("Tensor", "RowTensor")
def _row_tensor_grad_scale(scale, grad):
    return grad


_APPLY_DECAY = C.MultitypeFuncGraph("apply_decay")


@_APPLY_DECAY.register("Number", "Bool", "Tensor", "Tensor")
def _tensor_apply_decay(weight_decay, if_apply, weight, gradient):
    if if_apply:
        return gradient + weight * weight_decay
    return gradient


class _ScaleDecay(nn.Cell):
    """Loss-scale and weight-decay passes as MindSpore's optimizers write them."""

    def __init__(self):
        super().__init__()
        self.hyper_map = C.HyperMap()
        self.map_ = C.Map()
        self.w = ms.ParameterTuple([ms.Parameter(Tensor(np.ones((2,), np.float32)), name="a"),
                                    ms.Parameter(Tensor(np.full((3,), 2, np.float32)), name="b")])
        self.flags = (True, False)
        self.partial = ops.operations.Partial()

    def construct(self, g1, g2, s):
        grads = self.hyper_map(F.partial(_GRAD_SCALE, s), (g1, g2))
        grads = self.map_(F.partial(_APPLY_DECAY, 0.5), self.flags, self.w, grads)
        return grads, self.hyper_map(self.partial(_GRAD_SCALE, s), grads)


def test_grad_scale_and_decay_passes(mode):
    r = _ScaleDecay()(Tensor(np.array([1., 2.], np.float32)),
                      Tensor(np.array([3., 4., 5.], np.float32)), Tensor(np.array(2., np.float32)))
    # MindSpore 2.10, both modes
    assert _np(r) == (([1., 1.5], [1.5, 2., 2.5]), ([0.5, 0.75], [0.75, 1., 1.25]))
    assert ops.Partial is ops.operations.Partial


def test_multitype_overlapping_registrations(mode):
    m = C.MultitypeFuncGraph("m")
    m.register("Number", "Tensor")(lambda x, y: y * 0 + 1)
    m.register("Int64", "Tensor")(lambda x, y: y * 0 + 2)
    m.register("Tensor", "Tensor")(lambda x, y: y * 0 + 3)
    m.register("Tensor[Float32]", "Tensor")(lambda x, y: y * 0 + 4)

    class Net(nn.Cell):
        def construct(self, t):
            return m(1, t), m(1.0, t), m(t, t), m(True, t)
    got = [float(v.asnumpy()[0]) for v in Net()(Tensor([1.]))]
    # MindSpore: PyNative takes the first registration that fits, its graph compiler the
    # more exact one
    assert got == ([2., 1., 4., 1.] if mode == "graph" else [1., 1., 3., 1.])


@pytest.mark.parametrize("read_value", [False, True])
def test_multitype_read_value_assigns_alike(mode, read_value):
    upd = C.MultitypeFuncGraph("upd", read_value=read_value)

    @upd.register("Tensor", "Tensor")
    def _u(w, g):
        F.assign(w, w - g)
        return w * 1

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.p = ms.ParameterTuple([ms.Parameter(Tensor(np.ones(2, np.float32)), name="p")])
            self.hm = C.HyperMap()

        def construct(self, g):
            return self.hm(upd, self.p, (g,))
    net = Net()
    r = net(Tensor(np.array([0.5, 0.25], np.float32)))
    # MindSpore, both modes, either read_value: ([0.5, 0.75],) and the Parameter updated
    assert _np(r) == ([0.5, 0.75],) and net.p[0].asnumpy().tolist() == [0.5, 0.75]


def test_multitype_mutable_scalar_is_a_number():
    ms.set_context(mode=ms.GRAPH_MODE)
    m = C.MultitypeFuncGraph("m")
    m.register("Number", "Tensor")(lambda x, y: y * x)
    m.register("Tensor", "Tensor")(lambda x, y: y + x)

    @ms.jit
    def f(s, t):
        return m(s, t)
    # MindSpore: [3.] and [4.] (a mutable int dispatches as a Number, one graph for both)
    assert f(ms.mutable(3), Tensor([1.])).asnumpy().tolist() == [3.]
    assert f(ms.mutable(4), Tensor([1.])).asnumpy().tolist() == [4.]


def test_hypermap_dict(mode):
    hm = C.HyperMap()

    class Net(nn.Cell):
        def construct(self, t):
            return hm(lambda x: x * 2, {"a": t, "b": t + 1})
    if mode == "graph":                 # MindSpore's graph mode maps the values
        r = Net()(Tensor([1.]))
        assert list(r) == ["a", "b"] and _np(list(r.values())) == [[2.], [4.]]
    else:                               # PyNative: the dict is a leaf (dict * 2: TypeError)
        with pytest.raises(TypeError):
            Net()(Tensor([1.]))


def test_map_lists_graph_mode(mode):
    mp, hm = C.Map(), C.HyperMap()

    class Net(nn.Cell):
        def construct(self, t):
            return mp(lambda x: x * 2, [t, t + 1]), hm(lambda x, y: x * y, [t, (t, t)],
                                                        [t, (t, 2)])

    class Mixed(nn.Cell):
        def construct(self, t):
            return hm(lambda x, y: x * y, (t, t), [t, 2])
    a, b = Net()(Tensor([1.]))
    # MindSpore: lists stay lists in graph mode (tuples in PyNative); a tuple with a list is a
    # RuntimeError in graph mode, mapped in PyNative
    assert isinstance(a, list if mode == "graph" else tuple)
    assert _np(a) == type(a)([[2.], [4.]]) and _np(b[1]) == ([1.], [2.])
    if mode == "graph":
        with pytest.raises(RuntimeError, match="all tuples or all lists"):
            Mixed()(Tensor([1.]))
    else:
        assert _np(Mixed()(Tensor([1.]))) == ([1.], [2.])
