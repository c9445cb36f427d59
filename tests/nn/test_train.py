"""Training wrappers and metrics: WithLossCell, WithEvalCell, TrainOneStepCell (one step equals
the hand-computed SGD step; a tiny MLP's loss falls; PyNative and GRAPH_MODE give the same loss
curve; sens and return_grad; the simulated Ascend tracks the CPU), Accuracy and MAE."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

F32 = np.float32
R = np.random.default_rng(5)
XS = R.standard_normal((16, 4)).astype(F32)
YS = (XS[:, 0] + XS[:, 1] > 0).astype(np.int32) + (XS[:, 2] > 0.5).astype(np.int32)


def _mlp(seed=0):
    np.random.seed(seed)          # initializers draw from numpy (ms.set_seed seeds it too)
    return nn.SequentialCell(nn.Dense(4, 8, activation="relu"), nn.Dense(8, 3))


def _curve(mode, opt_fn, steps=12, target="CPU"):
    ms.set_context(mode=mode, device_target=target)
    net = _mlp()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               opt_fn(net.trainable_params()))
    step.set_train()
    x, y = Tensor(XS), Tensor(YS)
    return np.array([float(step(x, y).asnumpy()) for _ in range(steps)])


@pytest.mark.parametrize("opt_fn", [
    lambda p: nn.SGD(p, 0.2, momentum=0.9),
    lambda p: nn.Momentum(p, 0.1, 0.9, use_nesterov=True),
    lambda p: nn.Adam(p, 0.02),
    lambda p: nn.AdamWeightDecay(p, 0.02, weight_decay=0.01),
], ids=["sgd", "momentum", "adam", "adamw"])
def test_mlp_loss_falls_and_modes_agree(opt_fn):
    eager = _curve(ms.PYNATIVE_MODE, opt_fn)
    graph = _curve(ms.GRAPH_MODE, opt_fn)
    assert eager[-1] < 0.8 * eager[0], eager
    np.testing.assert_allclose(graph, eager, rtol=1e-5, atol=1e-6)


def test_ascend_training_tracks_cpu():
    opt_fn = lambda p: nn.Adam(p, 0.02)      # noqa: E731
    cpu = _curve(ms.GRAPH_MODE, opt_fn, steps=6)
    ascend = _curve(ms.GRAPH_MODE, opt_fn, steps=6, target="Ascend")
    np.testing.assert_allclose(ascend, cpu, rtol=1e-2, atol=1e-2)


def test_one_step_equals_manual_sgd(mode):
    net = _mlp()
    w0 = [p.asnumpy().copy() for p in net.trainable_params()]
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    x, y = Tensor(XS[:4]), Tensor(R.standard_normal((4, 3)).astype(F32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ref_loss, grads = ms.value_and_grad(loss_net, None, net.trainable_params())(x, y)
    grads = [g.asnumpy() for g in grads]
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    step = nn.TrainOneStepCell(loss_net, nn.SGD(net.trainable_params(), 0.5), sens=2.0,
                               return_grad=True)
    loss, got = step(x, y)
    np.testing.assert_allclose(loss.asnumpy(), ref_loss.asnumpy(), rtol=1e-6)
    for p, w, g, gg in zip(net.trainable_params(), w0, grads, got):
        np.testing.assert_allclose(gg.asnumpy(), 2.0 * g, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(p.asnumpy(), w - 0.5 * 2.0 * g, rtol=1e-5, atol=1e-7)
    # wrappers do not rename the network's parameters (auto_prefix=False)
    assert [p.name for p in step.optimizer.parameters] == ["0.weight", "0.bias", "1.weight",
                                                           "1.bias"]


def test_one_step_runs_the_forward_once(mode):
    """BatchNorm's running mean moves once per step (momentum 0.9: 0.1 of the batch mean), as
    one forward of the network does; a second forward for the gradient would move it twice."""
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    np.random.seed(0)
    net = nn.SequentialCell(nn.Dense(4, 3), nn.BatchNorm1d(3, momentum=0.9))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.SGD(net.trainable_params(), 0.0))
    step.set_train()
    x = Tensor(XS)
    h = net[0](x).asnumpy()
    step(x, Tensor(np.zeros((16, 3), F32)))
    np.testing.assert_allclose(net[1].moving_mean.asnumpy(), 0.1 * h.mean(0), rtol=1e-5,
                               atol=1e-6)


def test_with_eval_cell(mode):
    net = _mlp()
    ev = nn.WithEvalCell(net, nn.CrossEntropyLoss())
    loss, out, label = ev(Tensor(XS), Tensor(YS))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(out.asnumpy(), net(Tensor(XS)).asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(loss.asnumpy(), nn.CrossEntropyLoss()(out, Tensor(YS)).asnumpy(),
                               rtol=1e-6)
    np.testing.assert_array_equal(label.asnumpy(), YS)
    assert nn.WithLossCell(net, nn.MSELoss()).backbone_network is net


@pytest.mark.parametrize("label_dtype,want", [
    (np.int32, ms.int32), (np.int64, ms.int64), (np.uint8, ms.uint8), (np.bool_, ms.bool_),
    (np.float16, ms.float32), (np.float64, ms.float32)])
def test_with_eval_cell_add_cast_fp32_casts_only_float_labels(label_dtype, want, mode):
    """MindSpore 2.10's WithEvalCell(add_cast_fp32=True) (mixed_precision_cast): a floating
    label becomes float32, an integer or bool label keeps its dtype; the outputs are float32."""
    ev = nn.WithEvalCell(nn.Dense(4, 3), _LabelDtype(), add_cast_fp32=True)
    label = YS.astype(label_dtype)
    loss, out, got = ev(Tensor(XS), Tensor(label))
    assert got.dtype == want and out.dtype == ms.float32
    np.testing.assert_array_equal(got.asnumpy(), label.astype(got.asnumpy().dtype))
    with pytest.raises(TypeError, match="the type of 'add_cast_fp32' should be 'bool', but got "
                                        "type 'int'"):
        nn.WithEvalCell(nn.Dense(4, 2), nn.MSELoss(), add_cast_fp32=1)


class _LabelDtype(nn.Cell):
    """A loss that takes a label of any dtype: the outputs' mean."""

    def construct(self, logits, label):
        return ops.mean(logits)


def test_wrapper_errors():
    net = _mlp()
    with pytest.raises(TypeError, match="optimizer must be an nn.Optimizer"):
        nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), object())
    with pytest.raises(TypeError, match="loss_fn must be a Cell"):
        nn.WithLossCell(net, ops.mse_loss)
    with pytest.raises(TypeError, match="sens"):
        nn.TrainOneStepCell(net, nn.SGD(net.trainable_params()), sens="1")


def test_accuracy_and_mae():
    acc = nn.Accuracy()
    acc.update(Tensor(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], F32)),
               Tensor(np.array([1, 1, 1], np.int32)))
    assert acc.eval() == pytest.approx(2 / 3)
    acc.update(np.array([[0.6, 0.4]]), np.array([[1, 0]]))            # one-hot labels
    assert acc.eval() == pytest.approx(3 / 4)
    acc.clear()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        acc.eval()
    ml = nn.Accuracy("multilabel")
    ml.update(np.array([[1, 0], [1, 1]]), np.array([[1, 0], [1, 0]]))
    assert ml.eval() == 0.5 and type(ml.eval()) is np.float64     # MindSpore 2.10's type
    # MindSpore 2.10 does not round scores: any value other than 0 and 1 is its ValueError
    with pytest.raises(ValueError, match=r"In multilabel case, all elements in y_pred \(predicted "
                                         r"value\) and y \(true value\) should be 0 or 1"):
        nn.Accuracy("multilabel").update(np.array([[0.9, 0.2], [0.7, 0.6]]),
                                         np.array([[1, 0], [1, 0]]))
    with pytest.raises(ValueError, match=r"In multilabel case, the shape of y_pred \(predicted "
                                         r"value\) should equal to the shape of y \(true value\), "
                                         r"but got y_pred shape: \(2, 2\) and y shape: \(2, 3\)"):
        nn.Accuracy("multilabel").update(np.array([[1, 0], [1, 0]]),
                                         np.array([[1, 0, 1], [1, 0, 0]]))
    with pytest.raises(ValueError, match="eval_type"):
        nn.Accuracy("top5")
    mae = nn.MAE()
    mae.update(Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], F32)), np.array([[1.5, 2.0], [1.0, 4.0]]))
    assert mae.eval() == pytest.approx((0.5 + 2.0) / 2)
    mae.clear()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        mae.eval()


def test_sum_and_mean_round_like_the_sink():
    """A bias gradient (sum over the batch) and a mean loss are bit-identical in PyNative and in
    the O2 sink: both accumulate float32 in float64 and round once (float32 accumulation in the
    eager kernels made long training runs drift apart between the modes)."""
    x = Tensor(np.random.default_rng(3).standard_normal((32, 64)).astype(F32) * 1e3)

    def f(t):
        return ops.sum(t, 0), ops.mean(t), ops.mean(t, 1)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = [o.asnumpy() for o in f(x)]
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    graph = [o.asnumpy() for o in ms.jit(f)(x)]
    for e, g in zip(eager, graph):
        np.testing.assert_array_equal(e, g)
    x64 = x.asnumpy().astype(np.float64)
    np.testing.assert_array_equal(eager[0], x64.sum(0).astype(F32))


class _PlainSGD(nn.Cell):
    """An optimizer written as MindSpore's docs write one: a Cell with `parameters`, updating
    each with F.assign through a hyper_map of a registered function."""

    def __init__(self, params, lr):
        super().__init__()
        from minispore.ops import composite as C
        self.parameters = ms.ParameterTuple(params)
        self.lr = lr
        self.hyper_map = C.HyperMap()
        self.update = C.MultitypeFuncGraph("update")

        @self.update.register("Number", "Tensor", "Tensor")
        def _update(lr, p, g):
            return ops.assign(p, p - lr * g)

    def construct(self, grads):
        return self.hyper_map(ops.functional.partial(self.update, self.lr), self.parameters,
                              grads)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_train_one_step_cell_takes_an_optimizer_cell_with_parameters(mode):
    """Any Cell with a `parameters` tuple is an optimizer to TrainOneStepCell (MindSpore's
    rule); its step equals nn.SGD's."""
    ms.set_context(mode=mode)
    results = []
    for make in (lambda p: _PlainSGD(p, 0.1), lambda p: nn.SGD(p, learning_rate=0.1)):
        ms.set_seed(3)
        net = nn.Dense(3, 2)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), make(net.trainable_params()))
        x = ms.Tensor(np.ones((4, 3), np.float32))
        y = ms.Tensor(np.zeros((4, 2), np.float32))
        losses = [float(step(x, y).asnumpy()) for _ in range(3)]
        results.append((losses, net.weight.asnumpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_top_k_categorical_accuracies_as_mindspore():
    """MindSpore 2.10 on these scores: TopK(3) 0.667, Top1 0.0, Top5 1.0; ties rank the earlier
    class first (Top1 0.0, TopK(2) 0.5); one-hot labels read as indices; its errors."""
    x = Tensor(np.array([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.],
                         [0.9, 0.6, 0.2, 0.01, 0.3]], np.float32))
    y = Tensor(np.array([2, 0, 1], np.float32))
    got = []
    for m in (nn.TopKCategoricalAccuracy(3), nn.Top1CategoricalAccuracy(),
              nn.Top5CategoricalAccuracy()):
        m.clear()
        m.update(x, y)
        got.append(m.eval())
    np.testing.assert_allclose(got, [2 / 3, 0.0, 1.0])
    xt = Tensor(np.array([[0.5, 0.5, 0.1], [0.3, 0.3, 0.3]], np.float32))
    yt = Tensor(np.array([1, 2], np.int32))
    assert nn.Top1CategoricalAccuracy()(xt, yt) == 0.0
    assert nn.TopKCategoricalAccuracy(2)(xt, yt) == 0.5
    assert nn.Top1CategoricalAccuracy()(x, np.eye(5)[[2, 0, 1]]) == 0.0
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        nn.Top1CategoricalAccuracy().eval()
    with pytest.raises(ValueError, match="must be at least 1"):
        nn.TopKCategoricalAccuracy(0)
    with pytest.raises(TypeError, match="should be int"):
        nn.TopKCategoricalAccuracy(1.5)
    with pytest.raises(ValueError, match="needs 2 inputs"):
        nn.Top5CategoricalAccuracy().update(x)
    from minispore.train import Top1CategoricalAccuracy
    assert Top1CategoricalAccuracy is nn.Top1CategoricalAccuracy
