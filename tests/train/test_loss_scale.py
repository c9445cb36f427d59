"""Loss-scale training: nn.TrainOneStepWithLossScaleCell with the Dynamic/Fixed update Cells
(the loss, overflow and scale of every step, the skipped update on an overflow, the optimizer's
state), amp.build_train_network's O2 loss scaling, the managers' update Cells and Model's
amp_level. Expected values from MindSpore 2.10 (CPU) runs; MindSpore has no CPU kernel for its
overflow status, so those runs used its Ascend infnan check (`_ascend_grad_overflow` through
`_get_distributed_overflow_status_on_infnan_mode`), the check minispore computes."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, amp, nn
from minispore.train import DynamicLossScaleManager, FixedLossScaleManager, Model
from tests.helpers import graph_runs

XS = [[1.0, 2.0], [0.5, -1.0], [np.inf, 1.0], [1.0, 1.0], [2.0, 0.0], [1.0, -2.0], [0.1, 0.2]]
ONE = Tensor([[1.0]], ms.float32)


def _tiny(opt="sgd"):
    net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    make = {"sgd": lambda p: nn.SGD(p, learning_rate=0.1),
            "momentum": lambda p: nn.Momentum(p, learning_rate=0.1, momentum=0.9)}[opt]
    o = make(net.trainable_params())
    return net, o, nn.WithLossCell(net, nn.MSELoss())


@pytest.mark.parametrize("jit_level", ["O0", "O2"])
def test_dynamic_update_cell_sequence_as_mindspore(mode, jit_level, monkeypatch):
    if mode == "pynative" and jit_level != "O0":
        pytest.skip("jit_level is a GRAPH_MODE setting")
    ms.set_context(jit_level=jit_level)     # O2: the CPU's whole-graph native program
    from minispore.nn.wrap import loss_scale
    ifs = []
    real_if = loss_scale._graph_if
    monkeypatch.setattr(loss_scale, "_graph_if", lambda *a: ifs.append(1) or real_if(*a))
    net, opt, loss_net = _tiny()
    upd = nn.DynamicLossScaleUpdateCell(loss_scale_value=2 ** 4, scale_factor=2, scale_window=2)
    step = nn.TrainOneStepWithLossScaleCell(loss_net, opt, scale_sense=upd)
    got = []
    with graph_runs("TrainOneStepWithLossScaleCell"):
        for x in XS:
            loss, overflow, scale = step(Tensor([x], ms.float32), ONE)
            got.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                        float(scale.asnumpy()), int(upd.cur_iter.asnumpy()),
                        int(upd.last_overflow_iter.asnumpy())))
            assert overflow.dtype is ms.bool_ and overflow.shape == ()
    # values from MindSpore 2.10: (loss, overflow, scale after the update, cur_iter,
    # last_overflow_iter); the inf batch is skipped and halves the scale
    want = [(4.0, False, 16.0, 2, 0), (1.6899998188018799, False, 32.0, 3, 2),
            (np.inf, True, 16.0, 4, 3), (0.2209000289440155, False, 16.0, 5, 3),
            (0.3624039888381958, False, 32.0, 6, 5), (0.42406150698661804, False, 32.0, 7, 5),
            (1.0203263759613037, False, 64.0, 8, 7)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g[0], w[0], rtol=1e-6)
        assert g[1:] == w[1:]
    np.testing.assert_allclose(net.weight.asnumpy(), [[0.7336422204971313, -0.18607552349567413]],
                               rtol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), [0.16586241126060486], rtol=1e-6)
    # GRAPH_MODE compiled the step once, the optimizer under an If node; PyNative branches
    assert len(ifs) == (1 if mode == "graph" else 0)


def test_fixed_update_cell_skips_the_step_and_keeps_momentum(mode):
    net, opt, loss_net = _tiny("momentum")
    step = nn.TrainOneStepWithLossScaleCell(loss_net, opt,
                                            scale_sense=nn.FixedLossScaleUpdateCell(8))
    rows = []
    for x in ([1.0, 2.0], [np.nan, 1.0], [0.5, -1.0]):
        loss, overflow, scale = step(Tensor([x], ms.float32), ONE)
        rows.append((bool(overflow.asnumpy()), float(scale.asnumpy()),
                     net.weight.asnumpy().tolist(), opt.moments[0].asnumpy().tolist()))
    # values from MindSpore 2.10: the NaN step changes neither the weights nor the moments
    want = [(False, 8.0, [[0.6, 0.2]], [[4.0, 8.0]]), (True, 8.0, [[0.6, 0.2]], [[4.0, 8.0]]),
            (False, 8.0, [[0.37, -0.78]], [[2.3, 9.8]])]
    for g, w in zip(rows, want):
        assert g[:2] == w[:2]
        np.testing.assert_allclose(g[2], w[2], rtol=1e-6)
        np.testing.assert_allclose(g[3], w[3], rtol=1e-6)


def test_tensor_scale_sense_and_set_sense_scale(mode):
    net, opt, loss_net = _tiny()
    step = nn.TrainOneStepWithLossScaleCell(loss_net, opt, scale_sense=Tensor([4.0], ms.float32))
    out = []
    for i, x in enumerate(([1.0, 2.0], [np.nan, 1.0], [0.5, -1.0])):
        if i == 2:
            step.set_sense_scale(Tensor([2.0], ms.float32))
        loss, overflow, scale = step(Tensor([x], ms.float32), ONE)
        out.append((bool(overflow.asnumpy()), scale.asnumpy().tolist()))
    # values from MindSpore 2.10
    assert out == [(False, [4.0]), (True, [4.0]), (False, [2.0])]
    np.testing.assert_allclose(net.weight.asnumpy(), [[0.73, -0.06]], rtol=1e-6)


# (loss, overflow, scale) of a Dense-BatchNorm-ReLU-Dense net built by build_train_network at
# O2 with DynamicLossScaleManager(2**20, 2, 2): the float16 backward overflows at the large
# scales until the scale has come down; values from MindSpore 2.10 (PyNative)
O2_STEPS = [(1.0699831247329712, True, 524288.0), (1.8818864822387695, True, 262144.0),
            (1.842336654663086, True, 131072.0), (0.9512825608253479, True, 65536.0),
            (1.5265427827835083, False, 65536.0), (1.3287855386734009, False, 131072.0)]
O2_FC1 = [[0.47393, -0.244969, 0.103071, 1.016914], [0.797141, 0.451244, -0.482877, 0.245016],
          [-0.995357, 0.375223, 0.630685, -0.132966]]
O2_FC2 = [[0.531819, -0.92457, 0.202609], [0.912985, 0.63657, -0.439022]]
# level O3 (no loss scaling: TrainOneStepCell); MindSpore's float16 BatchNorm rounds its
# intermediates to float16, minispore's computes in float32 and rounds once: ~3e-4 apart
O3_LOSSES = [1.0699831247329712, 1.8206267356872559, 1.7095530033111572, 0.725051760673523,
             0.8732444047927856, 0.9537824392318726]


class _BNNet(nn.Cell):
    def __init__(self):
        super().__init__()
        w1 = np.array([[0.5, -0.25, 0.125, 1.0], [0.75, 0.5, -0.5, 0.25],
                       [-1.0, 0.375, 0.625, -0.125]], np.float32)
        w2 = np.array([[0.5, -1.0, 0.25], [1.0, 0.75, -0.5]], np.float32)
        self.fc1 = nn.Dense(4, 3, weight_init=Tensor(w1), bias_init="zeros")
        self.bn = nn.BatchNorm1d(3)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(3, 2, weight_init=Tensor(w2), bias_init="zeros")

    def construct(self, x):
        return self.fc2(self.relu(self.bn(self.fc1(x))))


def _batches():
    rng = np.random.RandomState(0)
    return rng.randn(6, 4, 4).astype(np.float32), rng.randn(6, 4, 2).astype(np.float32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_build_train_network_o2_loss_scaling_as_mindspore(mode):
    net = _BNNet()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = amp.build_train_network(net, opt, nn.MSELoss(), level="O2",
                                   loss_scale_manager=DynamicLossScaleManager(2 ** 20, 2, 2))
    assert isinstance(step, nn.TrainOneStepWithLossScaleCell)
    xs, ys = _batches()
    for i, (w_loss, w_over, w_scale) in enumerate(O2_STEPS):
        loss, overflow, scale = step(Tensor(xs[i]), Tensor(ys[i]))
        assert loss.dtype is ms.float32
        np.testing.assert_allclose(float(loss.asnumpy()), w_loss, rtol=1e-4)
        assert (bool(overflow.asnumpy()), float(scale.asnumpy())) == (w_over, w_scale)
    np.testing.assert_allclose(net.fc1.weight.asnumpy(), O2_FC1, atol=2e-6)
    np.testing.assert_allclose(net.fc2.weight.asnumpy(), O2_FC2, atol=2e-6)
    # the Parameters stay float32; BatchNorm is kept in float32 inside a float16 network
    assert {p.dtype for p in net.get_parameters()} == {ms.float32}
    assert type(net.bn).__name__ == "_OutputTo16"
    # one forward per step, overflowing steps included: MindSpore 2.10's moving statistics
    bn = net.bn._backbone
    np.testing.assert_allclose(bn.moving_mean.asnumpy(),
                               [0.0593939833343029, 0.03564649075269699, -0.03508131951093674],
                               rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(),
                               [1.068057656288147, 1.0752558708190918, 1.3124399185180664],
                               rtol=1e-5)


def test_build_train_network_o3_trains_in_float16(mode):
    net = _BNNet()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = amp.build_train_network(net, opt, nn.MSELoss(), level="O3")
    assert type(step) is nn.TrainOneStepCell
    xs, ys = _batches()
    losses = [float(step(Tensor(xs[i]), Tensor(ys[i])).asnumpy()) for i in range(6)]
    np.testing.assert_allclose(losses, O3_LOSSES, rtol=2e-3)


def test_managers_give_their_update_cells():
    d = DynamicLossScaleManager(init_loss_scale=64, scale_factor=4, scale_window=10)
    cell = d.get_update_cell()
    assert isinstance(cell, nn.DynamicLossScaleUpdateCell) and cell.get_loss_scale() == 64
    assert float(cell.scale_factor.asnumpy()) == 4.0 and int(cell.scale_window.asnumpy()) == 10
    f = FixedLossScaleManager(256).get_update_cell()
    assert isinstance(f, nn.FixedLossScaleUpdateCell) and f.get_loss_scale() == 256
    assert FixedLossScaleManager(256, drop_overflow_update=False).get_update_cell() is None
    # MindSpore 2.10's parameter names
    assert [p.name for p in cell.get_parameters()] == ["current_iterator_step",
                                                       "last_overflow_iterator_step"]


def test_errors_as_mindspore():
    net, opt, loss_net = _tiny()
    with pytest.raises(TypeError, match="'scale_sense' must be Cell or Tensor"):
        nn.TrainOneStepWithLossScaleCell(loss_net, opt, scale_sense=1024.0)
    with pytest.raises(ValueError, match=r"shape of 'scale_sense' must be \(1,\) or \(\)"):
        nn.TrainOneStepWithLossScaleCell(loss_net, opt, scale_sense=Tensor([1.0, 2.0]))
    step = nn.TrainOneStepWithLossScaleCell(loss_net, opt, scale_sense=Tensor(2.0))
    with pytest.raises(TypeError, match="the type of 'sens' must be Tensor"):
        step.set_sense_scale(3.0)
    with pytest.raises(ValueError, match="Unsupported arg 'loss_scale'"):
        amp.build_train_network(net, opt, level="O2", loss_scale=8)
    with pytest.raises(NotImplementedError, match="boost_level='O1'"):
        amp.build_train_network(net, opt, level="O2", boost_level="O1")
    with pytest.raises(ValueError, match="'level' must be in"):
        amp.build_train_network(net, opt, level="O5")


def test_model_builds_the_amp_train_network():
    def parts(**kw):
        net = _BNNet()
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
        return Model(net, nn.MSELoss(), opt, **kw)
    o2 = parts(amp_level="O2").train_network
    # MindSpore 2.10: O2 defaults to DynamicLossScaleManager() (2**24, factor 2, window 2000)
    assert isinstance(o2, nn.TrainOneStepWithLossScaleCell)
    assert float(o2.scale_sense.asnumpy()) == 2.0 ** 24
    assert int(o2.loss_scaling_manager.scale_window.asnumpy()) == 2000
    assert type(parts(amp_level="O3").train_network) is nn.TrainOneStepCell
    fixed = parts(amp_level="O2", loss_scale_manager=FixedLossScaleManager(1024.0, False))
    assert type(fixed.train_network) is nn.TrainOneStepCell
    assert fixed.train_network.sens == 1024.0
    assert type(parts(amp_level="O0").train_network) is nn.TrainOneStepCell
    with pytest.raises(ValueError, match="'optimizer' is None"):
        Model(_BNNet(), nn.MSELoss(), amp_level="O2")
    with pytest.raises(ValueError, match="should be 'loss_scale_manager' or"):
        Model(_BNNet(), nn.MSELoss(), cast_model_type=ms.float16)
    with pytest.raises(NotImplementedError, match="boost_level='O1'"):
        parts(boost_level="O1")


def test_model_o2_trains_with_its_loss_scale_manager(mode):
    import minispore.dataset as ds
    from minispore.train import Callback
    rng = np.random.RandomState(0)
    x, y = rng.randn(8, 4).astype(np.float32), rng.randn(8, 2).astype(np.float32)
    w1, w2 = rng.randn(3, 4).astype(np.float32), rng.randn(2, 3).astype(np.float32)
    data = ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(4)
    net = nn.SequentialCell(nn.Dense(4, 3, weight_init=Tensor(w1), bias_init="zeros"),
                            nn.ReLU(), nn.Dense(3, 2, weight_init=Tensor(w2), bias_init="zeros"))
    manager = DynamicLossScaleManager(2 ** 10, 2, 1)
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9),
                  metrics={"mae"}, amp_level="O2", loss_scale_manager=manager)
    seen = []

    class Record(Callback):
        def on_train_step_end(self, run_context):
            loss, overflow, scale = run_context.original_args().net_outputs
            seen.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                         float(scale.asnumpy())))
    model.train(2, data, callbacks=[Record()])
    # values from MindSpore 2.10 (PyNative; its GRAPH_MODE fuses float16 ops and differs
    # by ~1e-3): the loss per step, no overflow, the scale doubling every step (window 1)
    np.testing.assert_allclose([s[0] for s in seen], [1.4980924, 6.50089, 1.0704372, 1.2918272],
                               rtol=1e-3)
    assert [s[1:] for s in seen] == [(False, 2048.0), (False, 4096.0), (False, 8192.0),
                                     (False, 16384.0)]
    assert manager.get_loss_scale() == 16384          # the host-side manager followed
    np.testing.assert_allclose(model.eval(data)["mae"], 1.7121356129646301, rtol=1e-3)
    assert model.predict(Tensor(x[:2])).dtype is ms.float16   # the network itself is float16


def test_build_train_network_kwargs_override_the_level():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 4)
            self.bn = nn.BatchNorm1d(4)

        def construct(self, x):
            return self.bn(self.fc(x))

    def layout(level, **kw):
        net = Net()
        step = amp.build_train_network(net, nn.SGD(net.trainable_params()), nn.MSELoss(),
                                       level=level, loss_scale_manager=None, **kw)
        assert type(step) is nn.TrainOneStepCell
        return [(type(c).__name__, c.__dict__.get("_mixed_precision"))
                for _, c in step.network.cells_and_names()][1:-1]
    f16, f32 = ms.float16, ms.float32
    fp16_bn = [("Net", f16), ("Dense", f16), ("BatchNorm1d", f16)]
    fp32_bn = [("Net", f16), ("Dense", f16), ("_OutputTo16", None), ("BatchNorm1d", f32)]
    # MindSpore 2.10's layouts (its Cells' mixed_precision_type)
    cases = [("O2", {}, fp32_bn), ("O2", dict(keep_batchnorm_fp32=False), fp16_bn),
             ("O2", dict(cast_model_type=f32), [("Net", None), ("Dense", None),
                                               ("BatchNorm1d", None)]),
             ("O3", dict(keep_batchnorm_fp32=True), fp32_bn),
             ("O1", dict(cast_model_type=f16), fp16_bn),
             ("O0", dict(cast_model_type=f16, keep_batchnorm_fp32=False), fp16_bn)]
    for level, kw, want in cases:
        assert layout(level, **kw) == want, (level, kw)


def test_a_subclass_with_mindspores_documented_construct(mode):
    from minispore import ops
    grad_scale = ops.MultitypeFuncGraph("grad_scale")

    @grad_scale.register("Tensor", "Tensor")
    def _tensor_grad_scale(scale, grad):
        return grad * ops.cast(ops.Reciprocal()(scale), ops.dtype(grad))

    class MyTrain(nn.TrainOneStepWithLossScaleCell):
        def construct(self, x, y):
            weights = self.weights
            loss = self.network(x, y)
            scaling_sens = self.scale_sense
            status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
            scaling_sens_filled = ops.ones_like(loss) * ops.cast(scaling_sens, ops.dtype(loss))
            grads = self.grad(self.network, weights)(x, y, scaling_sens_filled)
            grads = self.hyper_map(ops.partial(grad_scale, scaling_sens), grads)
            grads = self.grad_reducer(grads)
            cond = self.get_overflow_status(status, grads)
            overflow = self.process_loss_scale(cond)
            if not overflow:
                self.optimizer(grads)
            return loss, cond, scaling_sens

    net, opt, loss_net = _tiny("momentum")
    step = MyTrain(loss_net, opt, nn.DynamicLossScaleUpdateCell(2 ** 4, 2, 2))
    rows = []
    for x in ([1.0, 2.0], [np.inf, 1.0], [0.5, -1.0], [1.0, 1.0]):
        loss, cond, scale = step(Tensor([x], ms.float32), ONE)
        rows.append((bool(cond.asnumpy()), float(scale.asnumpy())))
    # values from MindSpore 2.10 (both modes)
    assert rows == [(False, 16.0), (True, 8.0), (False, 8.0), (False, 16.0)]
    np.testing.assert_allclose(float(loss.asnumpy()), 3.648099899291992, rtol=1e-6)
    np.testing.assert_allclose(net.weight.asnumpy(), [[0.545, -1.28]], rtol=1e-6)
