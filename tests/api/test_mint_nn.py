"""mint.nn.functional against MindSpore 2.10 and PyTorch's semantics.

MS_EXPECTED holds the outputs MindSpore 2.10 (CPU) printed for the same calls (run with
~/.venvs/mindspore/bin/python). MindSpore's CPU build has no kernel for most mint functions
(GeluExt, EluExt, SeLUExt, ConstantPadND, AvgPool2D, MSELossExt, ...: "kernel unregistered"),
so those are checked against numpy references of the PyTorch formulas MindSpore documents."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import erf

import minispore as ms
from minispore import Tensor
import minispore.mint.nn.functional as F
from helpers import in_mode

F32 = np.float32
X = np.linspace(-3, 3, 12).reshape(3, 4).astype(F32)
IMG = (np.arange(2 * 2 * 5 * 5).reshape(2, 2, 5, 5) % 7).astype(F32) - 3
LOGITS = np.array([[1., 2., 0.5], [0.1, 0.2, 3.]], F32)
LABELS = np.array([1, 2], np.int32)
TARGET = np.array([[0., 1., 0.5], [1., 0., 1.]], F32)

CASES = {
    "relu": lambda x: F.relu(x),
    "silu": lambda x: F.silu(x),
    "sigmoid": lambda x: F.sigmoid(x),
    "tanh": lambda x: F.tanh(x),
    "hardsigmoid": lambda x: F.hardsigmoid(x),
    "hardswish": lambda x: F.hardswish(x),
    "softplus": lambda x: F.softplus(x, 2, 3),
    "hardshrink": lambda x: F.hardshrink(x, 1.0),
    "softshrink": lambda x: F.softshrink(x, 1.0),
    "glu": lambda x: F.glu(x),
    "prelu": lambda x: F.prelu(x, Tensor(np.array([0.1, 0.2, 0.3, 0.4], F32))),
    "softmax_none": lambda x: F.softmax(x),
    "softmax0": lambda x: F.softmax(x, 0),
    "linear": lambda x: F.linear(x, Tensor(np.arange(8).reshape(2, 4).astype(F32) / 10),
                                 Tensor(np.array([1., -1.], F32))),
}

# MindSpore 2.10's outputs (CPU) for CASES on X, rounded to 6 decimals
MS_EXPECTED = {
    "relu": ((3, 4), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.272727, 0.818182, 1.363636, 1.909091,
                      2.454545, 3.0]),
    "silu": ((3, 4), [-0.142278, -0.194171, -0.246431, -0.277704, -0.250486, -0.117883,
                      0.154844, 0.567696, 1.085932, 1.66266, 2.260375, 2.857722]),
    "sigmoid": ((3, 4), [0.047426, 0.079107, 0.129083, 0.20365, 0.30615, 0.432238, 0.567762,
                         0.69385, 0.79635, 0.870917, 0.920893, 0.952574]),
    "tanh": ((3, 4), [-0.995056, -0.98535, -0.957009, -0.877234, -0.674079, -0.266161,
                      0.266161, 0.674079, 0.877234, 0.957009, 0.98535, 0.995056]),
    "hardsigmoid": ((3, 4), [0.0, 0.090909, 0.181818, 0.272727, 0.363636, 0.454545, 0.545455,
                             0.636364, 0.727273, 0.818182, 0.909091, 1.0]),
    "hardswish": ((3, 4), [0.0, -0.22314, -0.347107, -0.371901, -0.297521, -0.123967,
                           0.14876, 0.520661, 0.991736, 1.561983, 2.231405, 3.0]),
    "softplus": ((3, 4), [0.001238, 0.003676, 0.010865, 0.031674, 0.088942, 0.228579,
                          0.501306, 0.907124, 1.39531, 1.909091, 2.454545, 3.0]),
    "hardshrink": ((3, 4), [-3.0, -2.454545, -1.909091, -1.363636, 0.0, 0.0, 0.0, 0.0,
                            1.363636, 1.909091, 2.454545, 3.0]),
    "softshrink": ((3, 4), [-2.0, -1.454545, -0.909091, -0.363636, 0.0, 0.0, 0.0, 0.0,
                            0.363636, 0.909091, 1.454545, 2.0]),
    "glu": ((3, 2), [-0.387249, -0.499868, -0.464533, -0.189232, 1.255764, 1.818551]),
    "prelu": ((3, 4), [-0.3, -0.490909, -0.572727, -0.545455, -0.081818, -0.054545, 0.272727,
                       0.818182, 1.363636, 1.909091, 2.454545, 3.0]),
    "softmax_none": ((3, 4), [0.092261, 0.159186, 0.274659, 0.473894] * 3),
    "softmax0": ((3, 4), [0.011312] * 4 + [0.100248] * 4 + [0.88844] * 4),
    "linear": ((3, 2), [-0.036364, -5.527273, 1.272727, -0.727273, 2.581818, 4.072727]),
}


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_mindspore_outputs(name, mode):
    out = in_mode(CASES[name], Tensor(X))
    shape, values = MS_EXPECTED[name]
    assert out.shape == shape and out.dtype == ms.float32
    np.testing.assert_allclose(out.asnumpy().ravel(), values, rtol=1e-5, atol=2e-6)


def test_losses_match_mindspore_outputs():
    lg, tg = Tensor(LOGITS), Tensor(TARGET)
    # MindSpore 2.10 (CPU): 0.606584, 0.609232 and the 'none' smooth L1 loss with beta=0.5
    out = F.binary_cross_entropy_with_logits(lg, tg, pos_weight=Tensor(np.array([1., 2., .5],
                                                                                 F32)))
    np.testing.assert_allclose(out.asnumpy(), 0.606584, rtol=1e-5)
    np.testing.assert_allclose(F.binary_cross_entropy(F.sigmoid(lg), tg).asnumpy(), 0.609232,
                               rtol=1e-5)
    np.testing.assert_allclose(F.smooth_l1_loss(lg, tg, "none", 0.5).asnumpy().ravel(),
                               [0.75, 0.75, 0.0, 0.65, 0.04, 1.75], rtol=1e-5, atol=1e-6)


def _gn_ref(x, g, w, b, eps=1e-5):
    n, c = x.shape[:2]
    y = x.reshape(n, g, -1)
    y = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + eps)
    shp = (1, c) + (1,) * (x.ndim - 2)
    return y.reshape(x.shape) * w.reshape(shp) + b.reshape(shp)


def test_group_norm_and_circular_pad():
    # MindSpore 2.10 (CPU) ran both calls; its outputs equal these numpy references
    w, b = np.array([1., 2.], F32), np.array([0.5, 0.], F32)
    out = F.group_norm(Tensor(IMG), 2, Tensor(w), Tensor(b))
    np.testing.assert_allclose(out.asnumpy(), _gn_ref(IMG, 2, w, b), rtol=1e-5, atol=1e-5)
    out = F.pad(Tensor(IMG), (2, 1, 1, 2), mode="circular")
    np.testing.assert_array_equal(out.asnumpy(), np.pad(IMG, ((0, 0), (0, 0), (1, 2), (2, 1)),
                                                        mode="wrap"))


def _np_act(name, x):
    sp = np.logaddexp(0, x)
    return {
        "gelu": 0.5 * x * (1 + erf(x / np.sqrt(2))),
        "gelu_tanh": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
        "mish": x * np.tanh(sp),
        "selu": 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        "logsigmoid": -np.logaddexp(0, -x),
        "elu": np.where(x > 0, x, 0.7 * np.expm1(x)),
        "leaky_relu": np.where(x > 0, x, 0.2 * x),
        "relu6": np.clip(x * 3, 0, 6),
        "hardtanh": np.clip(x, -0.5, 2.0),
        "threshold": np.where(x > 0.5, x, -2.0),
    }[name]


ACTS = {
    "gelu": lambda x: F.gelu(x), "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "mish": lambda x: F.mish(x), "selu": lambda x: F.selu(x),
    "logsigmoid": lambda x: F.logsigmoid(x), "elu": lambda x: F.elu(x, 0.7),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "relu6": lambda x: F.relu6(x * 3),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 2.0),
    "threshold": lambda x: F.threshold(x, 0.5, -2.0),
}


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activations_follow_pytorch_formulas(name, mode):
    out = in_mode(ACTS[name], Tensor(X))
    np.testing.assert_allclose(out.asnumpy(), _np_act(name, X.astype(np.float64)), rtol=2e-6,
                               atol=2e-6)


def test_elu_and_selu_keep_precision_near_zero():
    x = np.array([-1e-4, -1e-6, -3e-8], F32)
    np.testing.assert_allclose(F.elu(Tensor(x)).asnumpy(), np.expm1(x.astype(np.float64)),
                               rtol=1e-6)


def test_softmax_dims_dtype_and_normalize():
    x3 = np.random.RandomState(0).randn(2, 3, 4).astype(F32)
    e = np.exp(x3 - x3.max(0))
    np.testing.assert_allclose(F.softmax(Tensor(x3)).asnumpy(), e / e.sum(0), rtol=1e-6)
    ls = F.log_softmax(Tensor(X), dtype=ms.float16)
    assert ls.dtype == ms.float16
    ref = X - np.log(np.exp(X).sum(1, keepdims=True))
    np.testing.assert_allclose(F.log_softmax(Tensor(X)).asnumpy(), ref, rtol=1e-6, atol=1e-6)
    n = np.sqrt((X ** 2).sum(1, keepdims=True))
    np.testing.assert_allclose(F.normalize(Tensor(X)).asnumpy(), X / n, rtol=1e-6)
    n1 = np.abs(X).sum(0, keepdims=True)
    np.testing.assert_allclose(F.normalize(Tensor(X), 1.0, 0).asnumpy(), X / n1, rtol=1e-6)


def test_one_hot_flatten_embedding():
    oh = F.one_hot(Tensor(np.array([0, 2, 1]), ms.int64))
    assert oh.dtype == ms.int64
    np.testing.assert_array_equal(oh.asnumpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(Tensor(np.array([1]), ms.int32), 4).shape == (1, 4)
    for bad in ([4], [-1]):
        with pytest.raises(IndexError, match="one_hot"):
            F.one_hot(Tensor(np.array(bad), ms.int32), 4).asnumpy()
    assert F.flatten(Tensor(IMG)).shape == (100,)              # start_dim=0
    w = np.arange(12).reshape(4, 3).astype(F32)
    ids = np.array([[1, 0], [3, 1]], np.int32)
    np.testing.assert_array_equal(F.embedding(Tensor(ids), Tensor(w)).asnumpy(), w[ids])
    g = ms.grad(lambda t: F.embedding(Tensor(ids), t, padding_idx=1).sum())(Tensor(w))
    np.testing.assert_array_equal(g.asnumpy()[:, 0], [1, 0, 0, 1])     # no gradient at row 1
    with pytest.raises(NotImplementedError, match="max_norm"):     # in place: a Parameter only
        F.embedding(Tensor(ids), Tensor(w), max_norm=1.0)


def test_pad_modes():
    x = Tensor(IMG)
    np.testing.assert_array_equal(F.pad(Tensor(X), (1, 2), value=5.0).asnumpy(),
                                  np.pad(X, ((0, 0), (1, 2)), constant_values=5.0))
    np.testing.assert_array_equal(F.pad(Tensor(X), (-1, 1, 1, 0)).asnumpy(),
                                  np.pad(X, ((1, 0), (0, 1)))[:, 1:])
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge")):
        np.testing.assert_array_equal(F.pad(x, (2, 1, 1, 2), mode=mode).asnumpy(),
                                      np.pad(IMG, ((0, 0), (0, 0), (1, 2), (2, 1)), np_mode))
    with pytest.raises(ValueError, match="reflect"):
        F.pad(Tensor(X), (4, 0), mode="reflect")


def _pool_ref(x, k, s, p, op, count_include_pad=True, fill=0.0):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), p)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if op == "max":
                out[:, :, i, j] = win.max((2, 3))
            else:
                cnt = k * k if count_include_pad else ones[i * s:i * s + k, j * s:j * s + k].sum()
                out[:, :, i, j] = win.sum((2, 3)) / cnt
    return out


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_pooling(mode):
    x = Tensor(IMG)
    got = in_mode(lambda t: F.max_pool2d(t, 3, 2, 1), x)
    np.testing.assert_allclose(got.asnumpy(), _pool_ref(IMG, 3, 2, 1, "max", fill=-np.inf))
    got = in_mode(lambda t: F.avg_pool2d(t, 3, 2, 1), x)
    np.testing.assert_allclose(got.asnumpy(), _pool_ref(IMG, 3, 2, 1, "avg"), rtol=1e-6)
    got = in_mode(lambda t: F.avg_pool2d(t, 3, 2, 1, count_include_pad=False), x)
    np.testing.assert_allclose(got.asnumpy(), _pool_ref(IMG, 3, 2, 1, "avg", False), rtol=1e-6)
    got = in_mode(lambda t: F.avg_pool2d(t, 2, divisor_override=3), x)
    np.testing.assert_allclose(got.asnumpy(), _pool_ref(IMG, 2, 2, 0, "avg") * 4 / 3, rtol=1e-6)
    got = in_mode(lambda t: F.adaptive_avg_pool2d(t, (3, 2)), x)
    bins_h, bins_w = [(0, 2), (1, 4), (3, 5)], [(0, 3), (2, 5)]
    ref = np.stack([np.stack([IMG[:, :, a:b, c:d].mean((2, 3)) for c, d in bins_w], -1)
                    for a, b in bins_h], -2)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-6)
    got = in_mode(lambda t: F.adaptive_avg_pool1d(t, 2), Tensor(X))
    np.testing.assert_allclose(got.asnumpy(), X.reshape(3, 2, 2).mean(-1), rtol=1e-6)
    got = in_mode(lambda t: F.avg_pool1d(t, 3, 1, 1), Tensor(X[None]))
    ref = np.stack([np.pad(X, ((0, 0), (1, 1)))[:, i:i + 3].sum(1) / 3 for i in range(4)], -1)
    np.testing.assert_allclose(got.asnumpy()[0], ref, rtol=1e-6, atol=1e-7)


def _conv_ref(x, w, b, s, p):
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[1]), (p[2], p[3])))
    co, _, kh, kw = w.shape
    oh, ow = (xp.shape[2] - kh) // s + 1, (xp.shape[3] - kw) // s + 1
    out = np.zeros((x.shape[0], co, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + kh, j * s:j * s + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", win, w)
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def test_conv2d_padding_forms():
    w = np.arange(3 * 2 * 3 * 3).reshape(3, 2, 3, 3).astype(F32) / 50
    b = np.array([1., 0., -1.], F32)
    got = F.conv2d(Tensor(IMG), Tensor(w), Tensor(b), 2, 1)
    np.testing.assert_allclose(got.asnumpy(), _conv_ref(IMG, w, b, 2, (1,) * 4), rtol=1e-5,
                               atol=1e-5)
    w2 = np.arange(16).reshape(2, 2, 2, 2).astype(F32) / 50
    got = F.conv2d(Tensor(IMG), Tensor(w2), None, 1, "same")        # extra row/column after
    np.testing.assert_allclose(got.asnumpy(), _conv_ref(IMG, w2, None, 1, (0, 1, 0, 1)),
                               rtol=1e-5, atol=1e-5)
    assert F.conv2d(Tensor(IMG), Tensor(w2), padding="valid").shape == (2, 2, 4, 4)
    assert F.conv2d(Tensor(IMG[0]), Tensor(w2), padding=(1, 0)).shape == (2, 6, 4)


def test_norms_and_batch_norm_running_stats():
    x = np.random.RandomState(1).randn(4, 3, 2, 2).astype(F32)
    g = np.array([1., 2., 3.], F32)
    out = F.layer_norm(Tensor(x), (2, 2), None, None, 1e-5)
    flat = x.reshape(4, 3, 4)
    ref = (flat - flat.mean(-1, keepdims=True)) / np.sqrt(flat.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.asnumpy(), ref.reshape(x.shape), rtol=1e-4, atol=1e-5)
    rm = ms.Parameter(Tensor(np.zeros(3, F32)), name="rm")
    rv = ms.Parameter(Tensor(np.ones(3, F32)), name="rv")
    out = F.batch_norm(Tensor(x), rm, rv, Tensor(g), None, True, 0.2)
    mu, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    ref = (x - mu.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5) * \
        g.reshape(1, 3, 1, 1)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rm.asnumpy(), 0.2 * mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.asnumpy(), 0.8 + 0.2 * x.var((0, 2, 3), ddof=1), rtol=1e-5)
    out = F.batch_norm(Tensor(x), rm, rv)                          # eval: the running stats
    ref = (x - rm.asnumpy().reshape(1, 3, 1, 1)) / np.sqrt(rv.asnumpy().reshape(1, 3, 1, 1)
                                                            + 1e-5)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)


def test_dropout():
    ms.set_seed(3)
    x = Tensor(np.ones((200, 100), F32))
    y = F.dropout(x, p=0.2).asnumpy()
    assert abs((y == 0).mean() - 0.2) < 0.02            # p is the drop probability
    np.testing.assert_allclose(np.unique(y[y != 0]), [1.25])
    assert F.dropout(x, 0.9, training=False) is x
    assert (F.dropout(x, 1.0).asnumpy() == 0).all()
    with pytest.raises(NotImplementedError, match="inplace"):
        F.dropout(x, inplace=True)


def _np_losses():
    x, t, lab = LOGITS.astype(np.float64), TARGET.astype(np.float64), LABELS
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    nll = -logp[np.arange(2), lab]
    w = np.array([1., 2., 3.])
    smooth = 0.9 * nll.mean() + 0.1 / 3 * (-logp.sum(1)).mean()
    p = np.exp(t) / np.exp(t).sum(1, keepdims=True)
    kl = (t * (np.log(np.where(t > 0, t, 1)) - logp)).sum() / 2
    y = np.array([1, -1])
    cos = (x * t).sum(1) / np.sqrt(((x * x).sum(1) + 1e-12) * ((t * t).sum(1) + 1e-12))
    cel = np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.1)).mean()
    return {"cross_entropy": nll.mean(), "ce_ls": smooth,
            "ce_w": (nll * w[lab]).sum() / w[lab].sum(), "ce_prob": (-(p * logp).sum(1)).mean(),
            "nll": nll.mean(), "mse": ((x - t) ** 2).mean(), "l1": np.abs(x - t).sum(),
            "kl_div": kl, "soft_margin": np.log1p(np.exp(-(2 * t - 1) * x)).mean(),
            "cos_emb": cel}


LOSSES = {
    "cross_entropy": lambda x, t, lab: F.cross_entropy(x, lab),
    "ce_ls": lambda x, t, lab: F.cross_entropy(x, lab, label_smoothing=0.1),
    "ce_w": lambda x, t, lab: F.cross_entropy(x, lab, Tensor(np.array([1., 2., 3.], F32))),
    "ce_prob": lambda x, t, lab: F.cross_entropy(x, F.softmax(t, 1)),
    "nll": lambda x, t, lab: F.nll_loss(F.log_softmax(x, 1), lab),
    "mse": lambda x, t, lab: F.mse_loss(x, t),
    "l1": lambda x, t, lab: F.l1_loss(x, t, "sum"),
    "kl_div": lambda x, t, lab: F.kl_div(F.log_softmax(x, 1), t, "batchmean"),
    "soft_margin": lambda x, t, lab: F.soft_margin_loss(x, t * 2 - 1),
    "cos_emb": lambda x, t, lab: F.cosine_embedding_loss(x, t, Tensor(np.array([1, -1],
                                                                                np.int32)), 0.1),
}


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_follow_pytorch_formulas(name, mode):
    out = in_mode(LOSSES[name], Tensor(LOGITS), Tensor(TARGET), Tensor(LABELS))
    assert out.shape == ()
    np.testing.assert_allclose(out.asnumpy(), _np_losses()[name], rtol=1e-5, atol=1e-6)


def test_refused_arguments_name_themselves():
    x = Tensor(X)
    for call, word in ((lambda: F.relu(x, inplace=True), "inplace"),
                       (lambda: F.silu(x, inplace=True), "inplace"),
                       (lambda: F.grid_sample(Tensor(IMG), Tensor(np.zeros((2, 1, 1, 2), F32)),
                                              "bicubic"), "bicubic")):
        with pytest.raises(NotImplementedError, match=word):
            call()
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate=True)


def _torch_pool_len(n, k, s, p, d, ceil):
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


def _max_pool_ref(x, k, s, p, d, ceil):
    """PyTorch's max_pool2d loop: the first maximum of each window and its index h * W + w."""
    n, c, h, w = x.shape
    oh, ow = (_torch_pool_len(h, k[0], s[0], p[0], d[0], ceil),
              _torch_pool_len(w, k[1], s[1], p[1], d[1], ceil))
    out, idx = np.full((n, c, oh, ow), -np.inf), np.zeros((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[0]):
                for b in range(k[1]):
                    r, q = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + b * d[1]
                    if 0 <= r < h and 0 <= q < w:
                        better = x[:, :, r, q] > out[:, :, i, j]
                        out[:, :, i, j] = np.where(better, x[:, :, r, q], out[:, :, i, j])
                        idx[:, :, i, j] = np.where(better, r * w + q, idx[:, :, i, j])
    return out, idx


def _avg_pool_ref(x, k, s, p, ceil, count_include_pad, divisor_override=None):
    """PyTorch's avg_pool2d loop (ceil_mode windows clipped at H + padding)."""
    n, c, h, w = x.shape
    oh, ow = (_torch_pool_len(h, k[0], s[0], p[0], 1, ceil),
              _torch_pool_len(w, k[1], s[1], p[1], 1, ceil))
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s[0] - p[0], j * s[1] - p[1]
            he, we = min(hs + k[0], h + p[0]), min(ws + k[1], w + p[1])
            size = (he - hs) * (we - ws)
            h0, w0, h1, w1 = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
            if not count_include_pad:
                size = (h1 - h0) * (w1 - w0)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].sum((2, 3)) / (divisor_override or size)
    return out


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("k,s,p,d,ceil", [((3, 3), (2, 2), (1, 1), (1, 1), True),
                                          ((2, 3), (2, 2), (0, 1), (2, 1), False),
                                          ((3, 2), (3, 2), (1, 1), (1, 2), True)])
def test_max_pool2d_dilation_ceil_mode_and_indices(k, s, p, d, ceil, mode):
    x = np.random.RandomState(0).randn(2, 3, 7, 8).astype(F32)
    y, idx = in_mode(lambda t: F.max_pool2d(t, k, s, p, d, ceil, True), Tensor(x))
    ry, ri = _max_pool_ref(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(y.asnumpy(), ry)
    assert idx.dtype == ms.int64
    np.testing.assert_array_equal(idx.asnumpy(), ri)
    cell = ms.mint.nn.MaxPool2d(k, s, p, d, ceil_mode=ceil)
    np.testing.assert_array_equal(cell(Tensor(x)).asnumpy(), ry)


def test_max_pool2d_gradient_goes_to_the_first_maximum():
    x = np.zeros((1, 1, 4, 4), F32)                  # all ties
    x[0, 0, 3, 3] = 5.0
    g = ms.grad(lambda t: F.max_pool2d(t, 3, 1, 1, ceil_mode=True).sum())(Tensor(x)).asnumpy()
    _, idx = _max_pool_ref(x, (3, 3), (1, 1), (1, 1), (1, 1), True)
    want = np.zeros(16)
    np.add.at(want, idx.ravel(), 1.0)
    np.testing.assert_array_equal(g.ravel(), want)


@pytest.mark.parametrize("k,s,p,ceil,cip,dv", [((3, 3), (2, 2), (1, 1), True, True, None),
                                               ((3, 3), (2, 2), (1, 1), True, False, None),
                                               ((2, 3), (3, 2), (1, 1), True, True, 5),
                                               ((3, 3), (2, 2), (1, 1), False, False, None)])
def test_avg_pool2d_ceil_mode(k, s, p, ceil, cip, dv):
    x = np.random.RandomState(1).randn(2, 3, 7, 8).astype(F32)
    got = F.avg_pool2d(Tensor(x), k, s, p, ceil, cip, dv)
    np.testing.assert_allclose(got.asnumpy(), _avg_pool_ref(x, k, s, p, ceil, cip, dv),
                               rtol=1e-5, atol=1e-6)
    x1 = x[0, :, 0]                                                 # (C, L)
    got = ms.mint.nn.AvgPool1d(3, 2, 1, ceil_mode=True)(Tensor(x1))
    want = _avg_pool_ref(x1[None, :, None], (1, 3), (1, 2), (0, 1), True, True)[0, :, 0]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_max_unpool2d_inverts_max_pool2d(mode):
    x = np.random.RandomState(3).randn(2, 3, 6, 7).astype(F32)

    def roundtrip(t):
        y, idx = F.max_pool2d(t, 2, 2, return_indices=True)
        return F.max_unpool2d(y, idx, 2, output_size=(6, 7)), y, idx
    out, y, idx = in_mode(roundtrip, Tensor(x))
    want = np.zeros((2, 3, 42), F32)
    np.put_along_axis(want, idx.asnumpy().reshape(2, 3, -1), y.asnumpy().reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(out.asnumpy(), want.reshape(2, 3, 6, 7))
    with pytest.raises(IndexError):                 # a 7-wide plane's index in a 6-wide one
        F.max_unpool2d(y, idx, 2).asnumpy()             # default size (H - 1) * 2 + 2 = 6
    y6, idx6 = F.max_pool2d(Tensor(x[..., :6]), 2, return_indices=True)
    assert F.max_unpool2d(y6, idx6, 2).shape == (2, 3, 6, 6)
    cell = ms.mint.nn.MaxUnpool2d(2)
    assert cell(y[0], idx[0], (6, 7)).shape == (3, 6, 7)


def test_gradients_at_the_kinks_are_pytorchs():
    """PyTorch's backward formulas at the break points (hardtanh/relu6/hardsigmoid: 0 at the
    bounds; hardswish: (x / 3 + 0.5) on [-3, 3]; elu/leaky_relu/threshold/shrinks)."""
    x = Tensor(np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], F32))
    cases = {
        "relu6": (lambda t: F.relu6(t), [0, 0, 0, 1, 1, 0]),
        "hardtanh": (lambda t: F.hardtanh(t), [0, 0, 1, 0, 0, 0]),
        "hardsigmoid": (lambda t: F.hardsigmoid(t), [0, 1 / 6, 1 / 6, 1 / 6, 0, 0]),
        "hardswish": (lambda t: F.hardswish(t), [-0.5, 1 / 6, 0.5, 5 / 6, 1.5, 1]),
        "elu": (lambda t: F.elu(t, 0.5), [0.5 * np.exp(-3), 0.5 * np.exp(-1), 0.5, 1, 1, 1]),
        "leaky_relu": (lambda t: F.leaky_relu(t, 0.1), [0.1, 0.1, 0.1, 1, 1, 1]),
        "threshold": (lambda t: F.threshold(t, 1.0, 0.0), [0, 0, 0, 0, 1, 1]),
        "hardshrink": (lambda t: F.hardshrink(t, 1.0), [1, 0, 0, 0, 1, 1]),
        "softshrink": (lambda t: F.softshrink(t, 1.0), [1, 0, 0, 0, 1, 1]),
    }
    for name, (fn, want) in cases.items():
        g = ms.grad(lambda t: fn(t).sum())(x)
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6, atol=1e-7, err_msg=name)
