"""nn.Conv2d, MaxPool2d, AvgPool2d, BatchNorm1d/2d, LayerNorm, Dropout: numbers against
hand-written numpy (explicit loops on tiny shapes), MindSpore's defaults, PyNative vs GRAPH_MODE,
the simulated Ascend vs CPU (conv is a Cube op with fp16 operands: 1e-2), set_train switching
(the compile cache keys on the `training` flags), a LeNet-like net that trains, and argument
errors naming the argument, the value and a fix."""
import math

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.core.graph import compile as graph_compile

F32 = np.float32
R = np.random.default_rng(3)


def _both_modes(cell, *args, tol=1e-5):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = cell(*args).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = cell(*args).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph, eager, rtol=tol, atol=tol)
    return eager


# ---------------------------------------------------------------- numpy references ---------------
def _pads(mode, pad, hw, k, s, d):
    if mode == "pad":
        return pad
    if mode == "valid":
        return (0, 0, 0, 0)
    out = []
    for n, kk, ss, dd in zip(hw, k, s, d):
        need = max(0, (-(-n // ss) - 1) * ss + dd * (kk - 1) + 1 - n)
        out += [need // 2, need - need // 2]
    return tuple(out)


def conv_loops(x, w, b, stride, mode, pad, dil, group):
    N, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    t, bt, l, r = _pads(mode, pad, (H, W), (kh, kw), stride, dil)
    xp = np.zeros((N, C, H + t + bt, W + l + r))
    xp[:, :, t:t + H, l:l + W] = x
    Ho = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    Wo = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((N, O, Ho, Wo))
    og = O // group
    for n in range(N):
        for o in range(O):
            g = o // og
            for i in range(Ho):
                for j in range(Wo):
                    acc = 0.0 if b is None else float(b[o])
                    for c in range(Cg):
                        for p in range(kh):
                            for q in range(kw):
                                acc += xp[n, g * Cg + c, i * stride[0] + p * dil[0],
                                          j * stride[1] + q * dil[1]] * w[o, c, p, q]
                    out[n, o, i, j] = acc
    return out


def pool_loops(x, k, s, mode, kind):
    N, C, H, W = x.shape
    t, bt, l, r = _pads(mode, (0, 0, 0, 0), (H, W), (k, k), (s, s), (1, 1))
    Ho, Wo = (H + t + bt - k) // s + 1, (W + l + r - k) // s + 1
    out = np.zeros((N, C, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            r0, c0 = i * s - t, j * s - l
            win = x[:, :, max(r0, 0):min(r0 + k, H), max(c0, 0):min(c0 + k, W)]
            out[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return out


# ---------------------------------------------------------------- Conv2d -------------------------
@pytest.mark.parametrize("kw", [
    dict(),                                                          # same, stride 1, no bias
    dict(pad_mode="valid", has_bias=True),
    dict(pad_mode="pad", padding=(1, 0, 2, 1), stride=2, has_bias=True),
    dict(pad_mode="same", stride=2, dilation=2),
    dict(pad_mode="valid", group=2, kernel_size=(2, 3)),
], ids=["same", "valid_bias", "pad4_stride", "same_dilated", "groups"])
def test_conv2d_numbers(kw):
    kw = {"kernel_size": 3, **kw}
    np.random.seed(0)
    net = nn.Conv2d(4, 6, **kw)
    x = R.standard_normal((2, 4, 6, 7)).astype(F32)
    got = _both_modes(net, Tensor(x))
    b = net.bias.asnumpy() if net.bias is not None else None
    ref = conv_loops(x, net.weight.asnumpy(), b, net.stride, net.pad_mode, net.padding,
                     net.dilation, net.group)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_defaults_follow_mindspore():
    np.random.seed(1)
    c = nn.Conv2d(3, 64, 3)
    assert (c.stride, c.pad_mode, c.padding, c.dilation, c.group, c.has_bias) == \
        ((1, 1), "same", (0, 0, 0, 0), (1, 1), 1, False)
    assert c.bias is None and c.weight.shape == (64, 3, 3, 3) and c.weight.name == "weight"
    w = c.weight.asnumpy()
    bound = 1 / math.sqrt(27)            # HeUniform(sqrt(5)): sqrt(3)*sqrt(2/6)/sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    cb = nn.Conv2d(4, 64, (1, 2), group=2, has_bias=True)
    assert cb.weight.shape == (64, 2, 1, 2)
    bb = cb.bias.asnumpy()                # Uniform(1 / sqrt(fan_in)), fan_in = 2 * 1 * 2
    assert np.abs(bb).max() <= 0.5 and np.abs(bb).max() > 0.4
    c2 = nn.Conv2d(1, 2, 3, weight_init="ones", bias_init="zeros", has_bias=True)
    out = c2(Tensor(np.ones((1, 1, 3, 3), F32))).asnumpy()
    np.testing.assert_array_equal(out[0, 0], [[4, 6, 4], [6, 9, 6], [4, 6, 4]])
    assert nn.Conv2d(1, 2, 3)(Tensor(np.ones((1, 1, 5, 5), F32))).shape == (1, 2, 5, 5)
    assert nn.Conv2d(1, 2, 3, stride=2)(Tensor(np.ones((1, 1, 5, 5), F32))).shape == (1, 2, 3, 3)


# ---------------------------------------------------------------- pooling ------------------------
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k,s,mode", [(2, 2, "valid"), (3, 1, "valid"), (3, 2, "same"),
                                      (2, 1, "same")])
def test_pool_numbers(kind, k, s, mode):
    cls = nn.MaxPool2d if kind == "max" else nn.AvgPool2d
    x = R.standard_normal((2, 3, 5, 6)).astype(F32)
    got = _both_modes(cls(kernel_size=k, stride=s, pad_mode=mode), Tensor(x))
    np.testing.assert_allclose(got, pool_loops(x, k, s, mode, kind), rtol=1e-6, atol=1e-6)


def test_pool_defaults_padding_and_3d_input():
    x = R.standard_normal((3, 4, 4)).astype(F32)
    np.testing.assert_array_equal(nn.MaxPool2d()(Tensor(x)).asnumpy(), x)   # kernel 1, stride 1
    mp = nn.MaxPool2d(kernel_size=2, stride=2)
    np.testing.assert_allclose(mp(Tensor(x)).asnumpy(), pool_loops(x[None], 2, 2, "valid",
                                                                     "max")[0], rtol=1e-6)
    ap = nn.AvgPool2d(kernel_size=3, stride=1, pad_mode="pad", padding=1)  # counts the zeros
    x4 = np.ones((1, 1, 3, 3), F32)
    np.testing.assert_allclose(ap(Tensor(x4)).asnumpy()[0, 0],
                               [[4 / 9, 6 / 9, 4 / 9], [6 / 9, 1, 6 / 9], [4 / 9, 6 / 9, 4 / 9]],
                               rtol=1e-6)
    ap2 = nn.AvgPool2d(3, 1, pad_mode="pad", padding=1, count_include_pad=False)
    np.testing.assert_allclose(ap2(Tensor(x4)).asnumpy(), x4, rtol=1e-6)


# ---------------------------------------------------------------- BatchNorm ----------------------
def _bn_ref(x, axes, mean, var, gamma, beta, momentum, eps, training):
    shp = [1] * x.ndim
    shp[1] = -1
    if training:
        mu, v = x.mean(axis=axes), x.var(axis=axes)
        m = x.size // x.shape[1]
        mean = momentum * mean + (1 - momentum) * mu
        var = momentum * var + (1 - momentum) * v * m / (m - 1)
    else:
        mu, v = mean, var
    y = (x - mu.reshape(shp)) / np.sqrt(v.reshape(shp) + eps) * gamma.reshape(shp) + \
        beta.reshape(shp)
    return y, mean, var


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm2d, (4, 3, 2, 3)), (nn.BatchNorm1d, (5, 3)),
                                       (nn.BatchNorm1d, (4, 3, 2))])
def test_batchnorm_train_two_steps_then_eval(mode, cls, shape):
    ms.set_context(mode=mode)
    gamma, beta = R.uniform(0.5, 1.5, 3).astype(F32), R.standard_normal(3).astype(F32)
    bn = cls(3, momentum=0.8, eps=1e-3, gamma_init=Tensor(gamma), beta_init=Tensor(beta))
    assert [p.name for p in bn.get_parameters()] == ["moving_mean", "moving_variance", "gamma",
                                                     "beta"]
    assert [p.name for p in bn.trainable_params()] == ["gamma", "beta"]
    axes = (0,) + tuple(range(2, len(shape)))
    mean, var = np.zeros(3), np.ones(3)
    bn.set_train(True)
    for _ in range(2):
        x = R.standard_normal(shape).astype(F32) * 2 + 1
        y, mean, var = _bn_ref(x, axes, mean, var, gamma, beta, 0.8, 1e-3, True)
        np.testing.assert_allclose(bn(Tensor(x)).asnumpy(), y, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(bn.moving_mean.asnumpy(), mean, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(bn.moving_variance.asnumpy(), var, rtol=1e-5, atol=1e-5)
    bn.set_train(False)
    x = R.standard_normal(shape).astype(F32)
    y, _, _ = _bn_ref(x, axes, mean, var, gamma, beta, 0.8, 1e-3, False)
    np.testing.assert_allclose(bn(Tensor(x)).asnumpy(), y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), mean, rtol=1e-5, atol=1e-5)  # unchanged


def test_batchnorm_defaults_and_use_batch_statistics():
    bn = nn.BatchNorm2d(2)
    # the momentum attribute holds 1 - momentum, as MindSpore's BatchNorm does
    assert (bn.eps, bn.momentum, bn.affine, bn.use_batch_statistics) == \
        (1e-5, 1.0 - 0.9, True, None)
    np.testing.assert_array_equal(bn.moving_variance.asnumpy(), [1, 1])
    assert not nn.BatchNorm1d(2, affine=False).trainable_params()
    x = R.standard_normal((3, 2, 2, 2)).astype(F32)
    always = nn.BatchNorm2d(2, use_batch_statistics=True)      # batch stats even in eval
    y = always(Tensor(x)).asnumpy()
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    assert abs(always.moving_mean.asnumpy() - 0.1 * x.mean(axis=(0, 2, 3))).max() < 1e-5
    never = nn.BatchNorm2d(2, use_batch_statistics=False).set_train(True)
    np.testing.assert_allclose(never(Tensor(x)).asnumpy(), x / np.sqrt(1 + 1e-5), rtol=1e-5)


# ---------------------------------------------------------------- LayerNorm ----------------------
@pytest.mark.parametrize("shape,ns,bna,bpa", [((2, 3, 4), (4,), -1, -1),
                                              ((2, 3, 4), (3, 4), 1, 1),
                                              ((2, 3, 4), (4,), 1, -1)])
def test_layernorm_numbers(shape, ns, bna, bpa):
    x = R.standard_normal(shape).astype(F32)
    g, b = R.standard_normal(ns).astype(F32), R.standard_normal(ns).astype(F32)
    ln = nn.LayerNorm(ns, bna, bpa, gamma_init=Tensor(g), beta_init=Tensor(b))
    axes = tuple(range(bna % len(shape), len(shape)))
    mu, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-7) * g + b
    np.testing.assert_allclose(_both_modes(ln, Tensor(x)), ref, rtol=1e-5, atol=1e-5)
    assert nn.LayerNorm((4,)).epsilon == 1e-7


# ---------------------------------------------------------------- Dropout ------------------------
def test_dropout_seeded_scaled_and_identity_in_eval():
    x = Tensor(np.ones((40, 50), F32))
    d = nn.Dropout(p=0.25).set_train(True)
    outs = []
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        ms.set_seed(11)
        a, b = d(x).asnumpy(), d(x).asnumpy()
        outs.append((a, b))
        assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
        assert abs((a == 0).mean() - 0.25) < 0.05 and not np.array_equal(a, b)
    np.testing.assert_array_equal(outs[0][0], outs[1][0])     # same seed, same mask, both modes
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    d.set_train(False)
    np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())  # GRAPH_MODE, eval
    assert nn.Dropout().p == 0.5
    with pytest.warns(DeprecationWarning, match="keep_prob"):
        assert nn.Dropout(keep_prob=0.8).p == pytest.approx(0.2)


# ---------------------------------------------------------------- set_train switching ------------
class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(2, momentum=0.5)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(self.bn(x))


def test_set_train_switch_after_graph_call_selects_the_other_graph():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _Net()
    x = Tensor(np.array([[1.0, 2.0], [3.0, 6.0]], F32))
    c0 = graph_compile.stats["compiles"]
    net.set_train(True)
    net(x)
    mm = net.bn.moving_mean.asnumpy().copy()
    np.testing.assert_allclose(mm, [1.0, 2.0])                    # 0.5 * 0 + 0.5 * batch
    net.set_train(False)
    out = net(x).asnumpy()                                        # moving stats, no dropout
    np.testing.assert_array_equal(net.bn.moving_mean.asnumpy(), mm)
    ref = (x.asnumpy() - mm) / np.sqrt(net.bn.moving_variance.asnumpy() + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert graph_compile.stats["compiles"] == c0 + 2
    net.set_train(True)
    net(x)
    net.set_train(False)
    out = net(x).asnumpy()
    assert graph_compile.stats["compiles"] == c0 + 2                         # both phases stay cached
    net.drop.set_train(True)                                      # one sub-Cell alone
    net.bn.set_train(False)
    dropped = net(x).asnumpy()                 # moving stats, dropout on: 0 or 2x each element
    assert np.all(np.isclose(dropped, 0) | np.isclose(dropped, 2 * out, rtol=1e-5))
    assert graph_compile.stats["compiles"] == c0 + 3


def test_set_train_switch_reaches_jit_functions_and_grads():
    ms.set_context(mode=ms.GRAPH_MODE)
    bn = nn.BatchNorm1d(2)
    x = Tensor(np.array([[1.0, 2.0], [3.0, 6.0]], F32))

    @ms.jit
    def f(t):
        return bn(t)
    bn.set_train(True)
    np.testing.assert_allclose(f(x).asnumpy(), [[-1, -1], [1, 1]], atol=1e-3)
    bn.set_train(False)
    np.testing.assert_allclose(f(x).asnumpy(), x.asnumpy() / np.sqrt(
        bn.moving_variance.asnumpy() + 1e-5) - bn.moving_mean.asnumpy() / np.sqrt(
        bn.moving_variance.asnumpy() + 1e-5), rtol=1e-5)
    g = ms.grad(lambda t: bn(t).sum())
    bn.set_train(False)
    np.testing.assert_allclose(g(x).asnumpy(), np.broadcast_to(
        1 / np.sqrt(bn.moving_variance.asnumpy() + 1e-5), (2, 2)), rtol=1e-5)
    bn.set_train(True)
    np.testing.assert_allclose(g(x).asnumpy(), 0, atol=1e-4)     # batch stats: d/dx sum = 0


# ---------------------------------------------------------------- Ascend, training ---------------
class _LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="same", has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, pad_mode="valid")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.avg = nn.AvgPool2d(kernel_size=2, stride=1, pad_mode="same")
        self.flatten = nn.Flatten()
        self.drop = nn.Dropout(p=0.1)
        self.fc = nn.Dense(6 * 2 * 2, 3)
        self.ln = nn.LayerNorm((3,))

    def construct(self, x):
        x = self.pool(self.relu(self.bn(self.conv1(x))))
        x = self.avg(self.relu(self.conv2(x)))
        return self.ln(self.fc(self.drop(self.flatten(x))))


XS = R.standard_normal((12, 1, 8, 8)).astype(F32)
YS = (XS[:, 0, :4].sum(axis=(1, 2)) > 0).astype(np.int32) + \
    (XS[:, 0, :, :4].sum(axis=(1, 2)) > 0).astype(np.int32)


def _train(mode, target="CPU", steps=10):
    ms.set_context(mode=mode, device_target=target)
    ms.set_seed(4)
    net = _LeNet()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.Momentum(net.trainable_params(), 0.03, 0.9))
    step.set_train()
    losses = [float(step(Tensor(XS), Tensor(YS)).asnumpy()) for _ in range(steps)]
    net.set_train(False)
    return np.array(losses), net(Tensor(XS)).asnumpy()


def test_lenet_trains_and_modes_agree():
    eager, e_out = _train(ms.PYNATIVE_MODE)
    graph, g_out = _train(ms.GRAPH_MODE)
    assert eager[-1] < 0.7 * eager[0], eager
    np.testing.assert_allclose(graph, eager, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_out, e_out, rtol=1e-4, atol=1e-4)


def test_ascend_matches_cpu():
    np.random.seed(2)
    net = nn.SequentialCell(nn.Conv2d(2, 3, 3, has_bias=True), nn.BatchNorm2d(3), nn.ReLU(),
                            nn.MaxPool2d(2, 2), nn.AvgPool2d(2, 1, "same"))
    x = Tensor(R.standard_normal((2, 2, 6, 6)).astype(F32))
    cpu = net(x).asnumpy()
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(device_target="Ascend", mode=mode)
        np.testing.assert_allclose(net(x).asnumpy(), cpu, rtol=1e-2, atol=1e-2)
    ascend, _ = _train(ms.GRAPH_MODE, "Ascend", steps=4)
    cpu_l, _ = _train(ms.GRAPH_MODE, "CPU", steps=4)
    np.testing.assert_allclose(ascend, cpu_l, rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------- argument errors ----------------
@pytest.mark.parametrize("make,err,words", [
    (lambda: nn.Conv2d(0, 2, 3), ValueError, ["in_channels", "0"]),
    (lambda: nn.Conv2d(3, 2, 0), ValueError, ["kernel_size", "0"]),
    (lambda: nn.Conv2d(3, 2, 3, pad_mode="full"), ValueError, ["pad_mode", "'full'", "'pad'"]),
    (lambda: nn.Conv2d(3, 2, 3, padding=1), ValueError, ["padding=1", "pad_mode='pad'"]),
    (lambda: nn.Conv2d(3, 4, 3, group=2), ValueError, ["in_channels=3", "group=2", "divisible"]),
    (lambda: nn.Conv2d(3, 4, 3, weight_init=np.ones((4, 3, 2, 2))), ValueError,
     ["weight_init", "(4, 3, 2, 2)", "(4, 3, 3, 3)"]),
    (lambda: nn.Conv2d(3, 4, 3, data_format="NHWC"), ValueError, ["NHWC", "NCHW", "transpose"]),
    (lambda: nn.Conv2d(3, 4, 3, has_bias=1), TypeError, ["has_bias", "1"]),
    (lambda: nn.MaxPool2d(2, pad_mode="pad", padding=2), ValueError, ["padding=2", "kernel"]),
    (lambda: nn.MaxPool2d(2, ceil_mode=True), NotImplementedError, ["ceil_mode", "False"]),
    (lambda: nn.AvgPool2d(2, stride=0), ValueError, ["stride", "0"]),
    (lambda: nn.BatchNorm2d(3, momentum=1.5), ValueError, ["momentum", "1.5", "0.9"]),
    (lambda: nn.BatchNorm2d(3, eps=0), ValueError, ["eps", "0"]),
    (lambda: nn.BatchNorm1d(0), ValueError, ["num_features", "0"]),
    (lambda: nn.BatchNorm2d(3, use_batch_statistics="yes"), TypeError,
     ["use_batch_statistics", "'yes'"]),
    (lambda: nn.LayerNorm(4), TypeError, ["normalized_shape", "4", "(64,)"]),
    (lambda: nn.Dropout(p=1.0), ValueError, ["p", "1.0", "[0.0, 1.0)"]),
    (lambda: nn.Dropout(p="0.5"), TypeError, ["p", "'0.5'"]),
])
def test_argument_errors(make, err, words):
    with pytest.raises(err) as e:
        make()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def test_input_errors_name_shapes(mode):
    ms.set_context(mode=mode)
    with pytest.raises(ValueError, match=r"BatchNorm2d.*\(2, 3\).*BatchNorm1d"):
        nn.BatchNorm2d(3)(Tensor(np.ones((2, 3), F32)))
    with pytest.raises(ValueError, match=r"4 channels.*num_features=3.*num_features=4"):
        nn.BatchNorm1d(3)(Tensor(np.ones((2, 4), F32)))
    with pytest.raises(Exception, match=r"input channels|channels"):
        nn.Conv2d(3, 2, 3)(Tensor(np.ones((1, 2, 5, 5), F32)))
    with pytest.raises(ValueError, match=r"MaxPool2d.*4-D.*\(5, 5\)"):
        nn.MaxPool2d(2)(Tensor(np.ones((5, 5), F32)))
    x = ops.ones((1, 1, 2, 2), ms.float32)
    assert nn.AvgPool2d(2, 2)(x).shape == (1, 1, 1, 1)
