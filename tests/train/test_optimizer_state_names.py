"""The optimizers' Parameters carry MindSpore's names, shapes and dtypes: a Model training saves
the checkpoint entries MindSpore 2.10 saves (names, order, values), `train_network.
parameters_and_names()` gives MindSpore's paths, parameter groups name their rates
'learning_rate_group_<group index>', SGD keeps `momentum`, `accum.*` and `stat.*`, and setting
the `momentum` Parameter changes the update, as in MindSpore. Every expected value was printed
by MindSpore 2.10 (CPU) on the same data."""
import os

import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds
from minispore import Tensor, nn
from minispore.train import CheckpointConfig, Model, ModelCheckpoint

F32 = np.float32
X = np.arange(24, dtype=F32).reshape(8, 3) / 10
Y = (X @ np.array([[1., -1.], [0.5, 0.2], [-0.3, 0.4]], F32)).astype(F32)
W = np.array([[0.1, -0.2, 0.3], [0.05, 0.15, -0.25]], F32)
B = np.array([0.01, -0.02], F32)


def _dense():
    return nn.Dense(3, 2, weight_init=Tensor(W), bias_init=Tensor(B))


# MindSpore 2.10: Model(Dense(3, 2), MSELoss(), opt).train(1, 8 rows in batches of 4) with
# ModelCheckpoint(save_checkpoint_steps=2): load_checkpoint(...) items in file order
MS_CKPT = {
    "momentum": [
        ("weight", (2, 3), [0.3923263, 0.11352177, 0.6347172, -0.02763541, 0.06830857,
                            -0.33574742]),
        ("bias", (2,), [0.2219545, -0.06056013]),
        ("global_step", (1,), [2]),
        ("learning_rate", (), [0.1]),
        ("momentum", (), [0.9]),
        ("moments.weight", (2, 3), [-2.635263, -2.8082175, -2.9811718, 0.73585415, 0.7761643,
                                    0.8164744]),
        ("moments.bias", (2,), [-1.729545, 0.40310124]),
    ],
    "adam": [
        ("weight", (2, 3), [0.11812631, -0.18182774, 0.31821296, 0.03214441, 0.13216361,
                            -0.2678191]),
        ("bias", (2,), [0.02886709, -0.0374864]),
        ("global_step", (1,), [2]),
        ("learning_rate", (), [0.01]),
        ("beta1_power", (), [0.80999994]),
        ("beta2_power", (), [0.99800104]),
        ("moment1.weight", (2, 3), [-0.28887007, -0.30765507, -0.32644007, 0.06664528,
                                    0.0702678, 0.07389031]),
        ("moment1.bias", (2,), [-0.18785003, 0.03622517]),
        ("moment2.weight", (2, 3), [0.00699704, 0.00784764, 0.00874793, 0.00039854, 0.00044521,
                                    0.00049448]),
        ("moment2.bias", (2,), [0.00248517, 0.00012961]),
    ],
}
MAKE = {"momentum": lambda p: nn.Momentum(p, 0.1, 0.9), "adam": lambda p: nn.Adam(p, 0.01)}


@pytest.mark.parametrize("opt", ["momentum", "adam"])
def test_model_training_saves_mindspores_checkpoint_entries(opt, mode, tmp_path):
    net = _dense()
    model = Model(net, nn.MSELoss(), MAKE[opt](net.trainable_params()))
    data = ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(4)
    cb = ModelCheckpoint(prefix=opt, directory=str(tmp_path),
                         config=CheckpointConfig(save_checkpoint_steps=2))
    model.train(1, data, callbacks=[cb], dataset_sink_mode=False)
    got = ms.load_checkpoint(os.path.join(str(tmp_path), f"{opt}-1_2.ckpt"))
    assert list(got) == [n for n, _, _ in MS_CKPT[opt]]
    for name, shape, values in MS_CKPT[opt]:
        v = got[name]
        assert tuple(v.shape) == shape, name
        assert v.dtype == (ms.int32 if name == "global_step" else ms.float32), name
        np.testing.assert_allclose(v.asnumpy().ravel(), values, rtol=2e-5, atol=2e-7,
                                   err_msg=name)
    # MindSpore 2.10's train_network.parameters_and_names(): the updated Parameters under
    # their own names (TrainOneStepCell's `weights` attribute), then the optimizer's
    assert [n for n, _ in model.train_network.parameters_and_names()] == \
        ["weight", "bias"] + [f"optimizer.{n}" for n, _, _ in MS_CKPT[opt][2:]]


def test_mindspore_checkpoint_loads_into_a_momentum_training_without_leftovers():
    """Every entry of MindSpore's checkpoint has a Parameter to go to (the momentum one too),
    and none of the train network's Parameters is left out."""
    net = _dense()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                nn.Momentum(net.trainable_params(), 0.1, 0.9))
    ckpt = {n: ms.Parameter(Tensor(np.array(v, np.int32 if n == "global_step" else F32)
                                   .reshape(s)), name=n)
            for n, s, v in MS_CKPT["momentum"]}
    not_loaded, ckpt_not_loaded = ms.load_param_into_net(train, ckpt)
    assert not_loaded == [] and ckpt_not_loaded == []
    np.testing.assert_allclose(train.optimizer.moments[1].asnumpy(), [-1.729545, 0.40310124])


def _opt_names(opt):
    return [(p.name, tuple(p.shape)) for p in opt.get_parameters()]


def _two_dense():
    np.random.seed(0)
    return nn.SequentialCell(nn.Dense(3, 2), nn.Dense(2, 2)).trainable_params()


NET = [("0.weight", (2, 3)), ("0.bias", (2,)), ("1.weight", (2, 2)), ("1.bias", (2,))]


def _state(prefix, order=(0, 1, 2, 3)):
    return [(f"{prefix}.{NET[i][0]}", NET[i][1]) for i in order]


def test_optimizer_parameter_names_and_order_as_mindspore():
    """MindSpore 2.10's optimizer.parameters_and_names(): global_step, the rates (in the order
    the Parameters first use them), the updated Parameters, the optimizer's state."""
    p = _two_dense()
    head = [("global_step", (1,)), ("learning_rate", ())]
    assert _opt_names(nn.Momentum(p, 0.1, 0.9)) == \
        head + NET + [("momentum", ())] + _state("moments")
    assert _opt_names(nn.SGD(p)) == \
        head + NET + [("momentum", ())] + _state("accum") + _state("stat")
    assert _opt_names(nn.Adam(p)) == head + NET + [("beta1_power", ()), ("beta2_power", ())] + \
        _state("moment1") + _state("moment2")
    assert _opt_names(nn.AdamWeightDecay(p)) == head + NET + _state("adam_m") + \
        _state("adam_v")


@pytest.mark.parametrize("groups,rates", [
    # (the groups given to Momentum(groups, 0.1, 0.9); MindSpore 2.10's rate Parameters)
    (lambda p: [{"params": p[:1], "lr": 0.5}, {"params": p[1:2], "lr": 0.3}, {"params": p[2:]}],
     [("learning_rate_group_0", ()), ("learning_rate_group_1", ()), ("learning_rate", ())]),
    (lambda p: [{"params": p[:1]}, {"params": p[1:2], "lr": 0.3}, {"params": p[2:], "lr": 0.3}],
     [("learning_rate", ()), ("learning_rate_group_1", ()), ("learning_rate_group_2", ())]),
    (lambda p: [{"params": p[:1], "lr": 0.5}, {"params": p[1:], "lr": 0.3}],
     [("learning_rate_group_0", ()), ("learning_rate_group_1", ())]),
    (lambda p: [{"params": p[:1], "weight_decay": 0.1}, {"params": p[1:]}],
     [("learning_rate", ())]),
], ids=["two_lr_groups", "shared_value", "every_group", "no_lr_group"])
def test_group_learning_rates_named_by_group_index(groups, rates):
    p = _two_dense()
    names = _opt_names(nn.Momentum(groups(p), 0.1, 0.9))
    assert names == [("global_step", (1,))] + rates + NET + [("momentum", ())] + \
        _state("moments")


def test_group_rates_with_order_params_and_per_step_lists():
    """order_params counts as a group (its index is skipped) and orders the Parameters and
    their state; per-step lists are tables of their length (MindSpore 2.10's names and shapes;
    it lists a per-step table after the state, minispore with the other rates)."""
    p = _two_dense()
    opt = nn.Momentum([{"params": p[:1]}, {"order_params": p[::-1]},
                       {"params": p[1:], "lr": 0.3}], 0.1, 0.9)
    rev = [3, 2, 1, 0]
    assert _opt_names(opt) == [("global_step", (1,)), ("learning_rate_group_2", ()),
                               ("learning_rate", ())] + [NET[i] for i in rev] + \
        [("momentum", ())] + _state("moments", rev)
    opt = nn.Momentum([{"params": p[:1], "lr": [0.5, 0.1]}, {"params": p[1:], "lr": 0.3}],
                      0.1, 0.9)
    assert set(_opt_names(opt)) >= {("learning_rate_group_0", (2,)),
                                    ("learning_rate_group_1", ())}
    assert "learning_rate" not in [n for n, _ in _opt_names(opt)]
    opt = nn.Momentum([{"params": p[:1], "lr": 0.5}, {"params": p[1:]}], [0.1, 0.2, 0.3], 0.9)
    assert set(_opt_names(opt)) >= {("learning_rate_group_0", ()), ("learning_rate", (3,))}


def _steps(make, hook=None, steps=3):
    net = _dense()
    opt = make(net.trainable_params())
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    losses = []
    for i in range(steps):
        if hook is not None:
            hook(i, opt)
        losses.append(float(step(Tensor(X[:4]), Tensor(Y[:4])).asnumpy()))
    return np.array(losses, F32), {p.name: p.asnumpy() for p in step.get_parameters()}


def test_sgd_accumulates_through_stat_as_mindspore(mode):
    """SGD(momentum=0.9, dampening=0.1), 3 steps: MindSpore 2.10's losses, weights, accum and
    stat (0 after the first step)."""
    losses, got = _steps(lambda p: nn.SGD(p, 0.1, momentum=0.9, dampening=0.1))
    np.testing.assert_allclose(losses, [0.13919373, 0.09606925, 0.04734508], rtol=1e-5)
    np.testing.assert_allclose(got["weight"].ravel(), [0.23160125, -0.05145465, 0.46548948,
                                                       0.03029261, 0.13044208, -0.26940846],
                               rtol=1e-5)
    np.testing.assert_allclose(got["accum.weight"].ravel(), [-0.55750775, -0.62618494,
                                                             -0.6948622, 0.08773809,
                                                             0.08617151, 0.08460492], rtol=1e-5)
    np.testing.assert_array_equal(got["stat.bias"], [0.0, 0.0])
    np.testing.assert_array_equal(got["stat.weight"], np.zeros((2, 3), F32))


@pytest.mark.parametrize("make", [lambda p: nn.Momentum(p, 0.1, 0.9),
                                  lambda p: nn.SGD(p, 0.1, momentum=0.9)],
                         ids=["momentum", "sgd"])
def test_setting_the_momentum_parameter_changes_the_update(make, mode):
    """momentum.set_data(0.5) before the second step: MindSpore 2.10 GRAPH_MODE's numbers
    (its PyNative kept using 0.9, a stale value of its compiled optimizer)."""
    def halve(i, opt):
        if i == 1:
            opt.momentum.set_data(Tensor(np.float32(0.5)))
    losses, got = _steps(make, halve)
    np.testing.assert_allclose(losses, [0.13919373, 0.09606925, 0.05495147], rtol=1e-5)
    np.testing.assert_allclose(got["bias"], [0.14024484, -0.01842821], rtol=1e-5)
    assert got["momentum"].dtype == F32 and got["momentum"].shape == ()


def test_momentum_argument_checks_as_mindspore():
    p = _two_dense()
    with pytest.raises(TypeError, match="the type of 'momentum' should be 'float', but got "
                                        "type 'int'"):
        nn.Momentum(p, 0.1, 1)
    assert isinstance(nn.Momentum(p, 0.1, 0.9).momentum, ms.Parameter)
    assert float(nn.SGD(p, momentum=1).momentum.asnumpy()) == 1.0     # SGD takes an int


def test_optimizer_parameters_are_trainable_as_mindspore():
    """MindSpore 2.10: the optimizer's own Parameters keep requires_grad=True and a state clone
    keeps its Parameter's, so a frozen bias's moments are not trainable (7 trainable Parameters
    in this Adam training, the frozen bias and its two moments left out)."""
    net = _dense()
    net.bias.requires_grad = False
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                nn.Adam(list(net.get_parameters()), 0.1))
    assert [(p.name, p.requires_grad) for p in train.get_parameters()] == [
        ("weight", True), ("bias", False), ("global_step", True), ("learning_rate", True),
        ("beta1_power", True), ("beta2_power", True), ("moment1.weight", True),
        ("moment1.bias", False), ("moment2.weight", True), ("moment2.bias", False)]
    assert len(train.trainable_params()) == 7 and len(train.optimizer.trainable_params()) == 7
