"""mindspore.amp: auto_mixed_precision at each level (the network's structure, its Cells'
precision, the dtypes and values of its outputs, float32 Parameters and gradients),
custom_mixed_precision, Cell.to_float, the white/black lists, StaticLossScaler,
DynamicLossScaler and all_finite (also inside an ms.jit training step), and the simulated
Ascend's float16 Cube time. Expected values from MindSpore 2.10 (CPU) runs."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, amp, nn, ops

X3 = Tensor(np.array([[0.1, 0.2, 0.3333333]], np.float32))


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 4, weight_init="ones", bias_init="zeros")
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc2(self.relu(self.bn(self.fc(x))))


# values from MindSpore 2.10: the output (float32 at every level), the wrapper's class, and
# each Cell's precision flag (cells_and_names order)
LEVELS = {
    "O0": (2.5333207, "_Net", [None, None, None, None, None]),
    "O1": (2.5332031, "_Net", [None, ms.float16, None, ms.float16, ms.float16]),
    "O2": (2.5332031, "_OutputTo32", [None, ms.float16, ms.float16, None, ms.float32,
                                      ms.float16, ms.float16]),
    "O3": (2.5332031, "_OutputTo32", [None, ms.float16, ms.float16, ms.float16, ms.float16,
                                      ms.float16]),
}


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_auto_mixed_precision_levels_as_mindspore(mode, level):
    value, cls, flags = LEVELS[level]
    net = _Net()
    net.set_train(False)
    out_net = amp.auto_mixed_precision(net, level)
    assert type(out_net).__name__ == cls
    out = out_net(X3)
    assert out.dtype is ms.float32
    np.testing.assert_allclose(out.asnumpy(), [[value, value]], rtol=1e-7)
    assert [c.__dict__.get("_mixed_precision") for _, c in out_net.cells_and_names()] == flags
    assert {p.dtype for p in out_net.get_parameters()} == {ms.float32}
    if level in ("O2", "O3"):
        assert out_net._backbone is net and out_net._amp_level == level


class _PrimNet(nn.Cell):
    """A white-list Primitive instance, an op outside the lists and a black-list LayerNorm."""

    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(Tensor(np.array([[0.1, 0.2], [0.3, 0.4444444]], np.float32)),
                              name="w")
        self.matmul = ops.MatMul()
        self.fc = nn.Dense(2, 2, weight_init=Tensor(np.array([[1.0, 2.0], [3.0, -1.0]],
                                                             np.float32)), bias_init="zeros")
        self.ln = nn.LayerNorm((2,))

    def construct(self, x):
        y = self.matmul(x, self.w)
        z = y * 1.0000001
        return self.ln(self.fc(z)), y, z


X2 = Tensor(np.array([[1.0, 3.3333333]], np.float32))
Y16 = [1.1005859375, 1.681640625]                 # the matmul computed in float16
# values from MindSpore 2.10: (y, z) of _PrimNet; the LayerNorm output is [1, -1] throughout
PRIM_LEVELS = {"O1": (Y16, [1.1005860567092896, 1.681640863418579]),
               "O2": (Y16, Y16), "O3": (Y16, Y16)}


@pytest.mark.parametrize("level", sorted(PRIM_LEVELS))
def test_white_list_primitives_and_the_rest(mode, level):
    y_want, z_want = PRIM_LEVELS[level]
    outs = amp.auto_mixed_precision(_PrimNet(), level)(X2)
    assert [o.dtype for o in outs] == [ms.float32] * 3
    np.testing.assert_allclose(outs[1].asnumpy(), [y_want], rtol=1e-7)
    np.testing.assert_allclose(outs[2].asnumpy(), [z_want], rtol=1e-7)
    np.testing.assert_allclose(outs[0].asnumpy(), [[1.0, -1.0]], atol=2e-3)


def test_custom_mixed_precision_as_mindspore(mode):
    outs = amp.custom_mixed_precision(_PrimNet(), white_list=[nn.Dense])(X2)
    # values from MindSpore 2.10: only Dense in float16, the matmul stays float32
    np.testing.assert_allclose(outs[1].asnumpy(), [[1.100000023841858, 1.6814812421798706]],
                               rtol=1e-7)
    net = amp.custom_mixed_precision(_PrimNet(), black_list=[nn.LayerNorm, nn.Dense])
    assert type(net).__name__ == "_OutputTo32"
    assert net._backbone.fc._backbone.__dict__["_mixed_precision"] is ms.float32
    np.testing.assert_allclose(net(X2)[1].asnumpy(), [Y16], rtol=1e-7)


def test_errors_as_mindspore():
    net = _PrimNet()
    cases = [
        (dict(), ValueError, "one of white_list and black_list must be provided"),
        (dict(white_list=[nn.Dense], black_list=[nn.Dense]), ValueError,
         "cannot be provided at the same time"),
        (dict(white_list=(nn.Dense,)), TypeError, "The type of white_list should be list"),
        (dict(white_list=[nn.Dense], dtype=ms.float32), ValueError,
         r"dtype should be one of \(mstype.float16, mstype.bfloat16\)"),
        (dict(black_list=[ops.MatMul]), TypeError,
         "element in black_list should be one of 'Cell'"),
        (dict(white_list=[3]), TypeError, "element in white_list should be a class"),
    ]
    for kw, err, msg in cases:
        with pytest.raises(err, match=msg):
            amp.custom_mixed_precision(net, **kw)
    with pytest.raises(ValueError, match="The amp level O4 is not supported"):
        amp.auto_mixed_precision(_PrimNet(), "O4")
    with pytest.raises(TypeError, match="For amp_level 'O2', the network type should be Cell"):
        amp.auto_mixed_precision(lambda x: x, "O2")
    with pytest.raises(NotImplementedError, match="amp_level='auto'"):
        amp.auto_mixed_precision(_PrimNet(), "auto")
    with pytest.raises(ValueError, match="'dst_type' must be mstype.float32, mstype.float16"):
        nn.Dense(2, 2).to_float(ms.int32)


def test_to_float_casts_at_use_and_gradients_stay_float32(mode):
    w = Tensor(np.array([[0.3, -0.7], [1.1, 0.2]], np.float32))
    net = amp.auto_mixed_precision(nn.Dense(2, 2, weight_init=w, bias_init="zeros"), "O3")
    x = Tensor([[0.3333333, 1.7]], ms.float32)

    def total(x):
        return net(x).sum()
    grads = ms.grad(total, None, net.trainable_params())(x)
    # values from MindSpore 2.10: float32 gradients of the float32 Parameters, through the
    # casts (the input was rounded to float16)
    assert [g.dtype for g in grads] == [ms.float32, ms.float32]
    np.testing.assert_allclose(grads[0].asnumpy(), [[0.333251953125, 1.7001953125]] * 2)
    np.testing.assert_allclose(grads[1].asnumpy(), [1.0, 1.0])
    dense = nn.Dense(2, 2)
    assert dense.to_float(ms.float16) is dense and dense.fp16 and not dense.fp32
    assert dense.to_float(ms.float32).fp32 and not dense.fp16        # a later call overwrites


def test_lists_are_mindspores():
    assert amp.get_white_list()[:10] == [nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Conv1dTranspose,
                                         nn.Conv2dTranspose, nn.Conv3dTranspose, nn.Dense,
                                         nn.LSTMCell, nn.RNNCell, nn.GRUCell]
    assert amp.get_white_list()[10:] == [ops.Conv2D, ops.Conv3D, ops.Conv2DTranspose,
                                         ops.Conv3DTranspose, ops.Conv2DBackpropInput,
                                         ops.MatMul, ops.BatchMatMul, ops.PReLU, ops.ReLU]
    assert amp.get_black_list() == [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
                                     nn.LayerNorm]
    lst = amp.get_white_list()
    lst.append(nn.Flatten)
    assert nn.Flatten not in amp.get_white_list()                    # a copy
    assert amp.DynamicLossScaleManager is ms.train.DynamicLossScaleManager


def test_static_and_dynamic_loss_scalers_as_mindspore():
    s = amp.StaticLossScaler(scale_value=2 ** 10)
    assert s.scale(Tensor([1.0], ms.float32)).asnumpy().tolist() == [1024.0]
    un = s.unscale((Tensor(np.array([1.5, 1.0]), ms.float16),
                    Tensor(np.array([1.2]), ms.float16)))
    # values from MindSpore 2.10 (float16 kept)
    assert [u.dtype for u in un] == [ms.float16, ms.float16]
    np.testing.assert_array_equal(un[0].asnumpy(), np.array([1.4648e-03, 9.7656e-04],
                                                            np.float16))
    np.testing.assert_array_equal(un[1].asnumpy(), np.array([1.1721e-03], np.float16))
    assert s.adjust(Tensor(True)) is False
    d = amp.DynamicLossScaler(scale_value=3, scale_factor=2, scale_window=2)
    seq = []
    for f in [True, True, True, False, True, True, True, True, False, False, False, True]:
        assert d.adjust(Tensor(f)) is True
        seq.append((float(d.scale_value.asnumpy()), int(d.counter.asnumpy())))
    # values from MindSpore 2.10: (scale_value, counter) after each adjust
    assert seq == [(3.0, 1), (6.0, 0), (6.0, 1), (3.0, 0), (3.0, 1), (6.0, 0), (6.0, 1),
                   (12.0, 0), (6.0, 0), (3.0, 0), (1.5, 0), (1.5, 1)]
    np.testing.assert_allclose(d.unscale(Tensor([3.0, 1.0], ms.float32)).asnumpy(),
                               [2.0, 0.6666667], rtol=1e-7)
    assert d.scale(Tensor([3.0], ms.float16)).dtype is ms.float16
    big = amp.DynamicLossScaler(scale_value=2.0 ** 127, scale_factor=2, scale_window=1)
    big.adjust(Tensor(True))                      # 2**128 is not finite: the scale stays
    assert float(big.scale_value.asnumpy()) == 2.0 ** 127
    with pytest.raises(ValueError, match="'scale_value' must be > 1, but got 0.5"):
        amp.StaticLossScaler(0.5)
    with pytest.raises(TypeError, match=r"'scale_value' should be one of '\['float', 'int'\]'"):
        amp.StaticLossScaler("a")
    with pytest.raises(ValueError, match="'scale_factor' must be int and must > 0"):
        amp.DynamicLossScaler(4, 0, 2)
    with pytest.raises(TypeError, match="'scale_window' must be int, but got 'float'"):
        amp.DynamicLossScaler(4, 2, 1.5)


def test_all_finite_as_mindspore():
    with np.errstate(all="ignore"):
        bad = Tensor(np.array([np.log(-1), 1, np.log(0)]))
    assert amp.all_finite((bad, Tensor(np.array([1.0])))).asnumpy().item() is False
    ok = amp.all_finite([Tensor(np.array([1.0, 2.0], np.float32)),
                         Tensor(np.array([3], np.float16))])
    assert ok.dtype is ms.bool_ and ok.shape == () and bool(ok.asnumpy())
    assert not bool(amp.all_finite([Tensor(np.array([1.0, np.inf], np.float16))]).asnumpy())


def test_loss_scaler_in_a_jit_training_step(mode):
    net = nn.Dense(2, 1, weight_init="ones", bias_init="zeros")
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    scaler = amp.DynamicLossScaler(1024, 2, 2)
    loss_fn = nn.MSELoss()

    def forward(x, y):
        return scaler.scale(loss_fn(net(x), y))
    grad_fn = ms.value_and_grad(forward, None, net.trainable_params())

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        loss = scaler.unscale(loss)
        grads = scaler.unscale(grads)
        finite = amp.all_finite(grads)
        scaler.adjust(finite)
        if finite:
            opt(grads)
        return loss, finite
    got = []
    for x in ([1.0, 2.0], [np.nan, 1.0], [0.5, -1.0], [1.0, 1.0], [0.2, 0.1]):
        loss, finite = step(Tensor([x], ms.float32), Tensor([[1.0]], ms.float32))
        got.append((bool(finite.asnumpy()), float(scaler.scale_value.asnumpy()),
                    int(scaler.counter.asnumpy())))
    # values from MindSpore 2.10 (the MindSpore tutorial's loop)
    assert got == [(True, 1024.0, 1), (False, 512.0, 0), (True, 512.0, 1), (True, 1024.0, 0),
                   (True, 1024.0, 1)]
    np.testing.assert_allclose(float(loss.asnumpy()), 0.7705328464508057, rtol=1e-6)
    np.testing.assert_allclose(net.weight.asnumpy(), [[0.859112024307251, 0.05155600234866142]],
                               rtol=1e-6)


def test_float16_network_is_faster_on_the_simulated_ascend(mode):
    from minispore.backends import ascend_sim
    ms.set_context(device_target="Ascend")
    x = Tensor(np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32))

    def measure(level):
        ms.set_seed(1)
        net = amp.auto_mixed_precision(nn.SequentialCell(nn.Dense(1024, 1024), nn.ReLU(),
                                                         nn.Dense(1024, 1024)), level)
        net(x).asnumpy()                                  # compile, upload the weights
        d = ascend_sim.device()
        d.synchronize()
        d.reset_counters()
        first = len(d.records())
        out = net(x).asnumpy()
        d.synchronize()
        mm = [r["duration_s"] for r in d.records()[first:] if r["unit"] == "Cube"]
        return d.busy, mm, out
    busy32, mm32, out32 = measure("O0")
    busy16, mm16, out16 = measure("O3")
    assert len(mm32) == len(mm16) == 2
    assert max(mm16) < min(mm32)            # the Cube's float16 rate: no fp32 slowdown
    assert busy16 < busy32
    np.testing.assert_allclose(out16, out32, rtol=5e-2, atol=5e-2)


class _Recurrent(nn.Cell):
    def __init__(self):
        super().__init__()
        rng = np.random.RandomState(5)
        self.gru = nn.GRUCell(4, 3)
        self.rnn = nn.RNNCell(4, 3)
        self.rnnr = nn.RNNCell(4, 3, nonlinearity="relu")
        for p in self.get_parameters():
            p.set_data(Tensor(rng.randn(*p.shape).astype(np.float32) * 0.5))

    def construct(self, x, h):
        return self.gru(x, h), self.rnn(x, h), self.rnnr(x, h)


def test_o1_recurrent_cells_cast_as_mindspores_rewrite(mode):
    rng = np.random.RandomState(3)
    x = Tensor(rng.randn(2, 4).astype(np.float32))
    h = Tensor(rng.randn(2, 3).astype(np.float32) / 2)
    net = amp.auto_mixed_precision(_Recurrent(), "O1")
    assert type(net.gru).__name__ == "GRUCellOpt" and isinstance(net.gru, nn.GRUCell)
    gru, rnn, rnnr = net(x, h)
    assert {gru.dtype, rnn.dtype, rnnr.dtype} == {ms.float32}
    # values from MindSpore 2.10: the MatMuls and activations in float16, the gate arithmetic
    # in float32 (RNNCell bit for bit; GRUCell within MindSpore's CPU float16 sigmoid, which is
    # 1 ulp off the correctly rounded value for about a third of its inputs)
    np.testing.assert_array_equal(rnn.asnumpy().ravel(), [-0.755859375, 0.85791015625,
                                                          0.7685546875, -0.689453125,
                                                          0.123779296875, 0.94775390625])
    np.testing.assert_array_equal(rnnr.asnumpy().ravel(), [0.0, 1.505859375, 1.7568359375,
                                                           0.43505859375, 0.0, 0.0])
    np.testing.assert_allclose(gru.asnumpy().ravel(),
                               [0.44861164689064026, -0.32149964570999146, 0.5293771624565125,
                                0.3389822244644165, 0.06677836179733276, 0.8333813548088074],
                               atol=3e-4)
    lstm = amp.auto_mixed_precision(nn.LSTMCell(4, 3), "O1")
    hy, cy = lstm(x, (h, h))
    assert type(lstm).__name__ == "LSTMCellOpt" and hy.dtype is cy.dtype is ms.float32
    grads = ms.grad(lambda a: lstm(a, (h, h))[0].sum(), None, lstm.trainable_params())(x)
    assert [g.dtype for g in grads] == [ms.float32] * 4


def test_a_cells_float_tensor_constants_are_cast_too(mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.c = Tensor(np.array([0.3333333, 1.1], np.float32))
            self.fc = nn.Dense(2, 2, weight_init="ones", bias_init="zeros")

        def construct(self, x):
            y = x * self.c
            return self.fc(y), y
    net = Net()
    out, y = amp.auto_mixed_precision(net, "O3")(Tensor(np.array([[1.0, 0.7777777]],
                                                                 np.float32)))
    # values from MindSpore 2.10: x * c computed in float16 (c cast with the Cell's inputs)
    np.testing.assert_array_equal(y.asnumpy(), [[0.333251953125, 0.85546875]])
    np.testing.assert_array_equal(out.asnumpy(), [[1.1884765625, 1.1884765625]])
    assert net.c.dtype is ms.float32                     # the attribute itself is restored


def test_o1_relu_cells_compute_in_float16(mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.relu, self.prelu, self.relu6 = nn.ReLU(), nn.PReLU(), nn.ReLU6()

        def construct(self, x):
            return self.relu(x), self.prelu(x), self.relu6(x)
    x = Tensor(np.array([[0.3333333, 1.1111111]], np.float32))
    relu, prelu, relu6 = amp.auto_mixed_precision(Net(), "O1")(x)
    # values from MindSpore 2.10: nn.ReLU and nn.PReLU are one white-list Primitive call there
    # (rounded to float16, returned as float32); ReLU6 is not on the list
    np.testing.assert_array_equal(relu.asnumpy(), [[0.333251953125, 1.111328125]])
    np.testing.assert_array_equal(prelu.asnumpy(), [[0.333251953125, 1.111328125]])
    np.testing.assert_array_equal(relu6.asnumpy(), x.asnumpy())
    assert relu.dtype is prelu.dtype is ms.float32


def test_mindspores_module_paths():
    import minispore.train.amp as train_amp
    from minispore.nn.wrap import loss_scale
    assert train_amp.build_train_network is amp.build_train_network
    assert train_amp.get_black_list is amp.get_black_list
    assert loss_scale.TrainOneStepWithLossScaleCell is nn.TrainOneStepWithLossScaleCell
