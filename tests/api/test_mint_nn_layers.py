"""mint.nn Cells: MindSpore 2.10's Parameters (names, shapes, trainability), PyTorch's default
inits and defaults, forward against MindSpore's outputs (where its CPU build runs them) or
numpy references, and a small network trained in both modes.

The MindSpore facts below were printed by MindSpore 2.10 (CPU, ~/.venvs/mindspore/bin/python)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, mint

F32 = np.float32
X = np.linspace(-2, 2, 24).reshape(2, 3, 4).astype(F32)


def _params(cell):
    return [(p.name, tuple(p.shape), p.dtype, p.requires_grad) for p in cell.get_parameters()]


def test_parameters_match_mindspore():
    f, i64 = ms.float32, ms.int64
    # MindSpore 2.10's get_parameters() for the same constructions
    expected = [
        (mint.nn.Linear(3, 2), [("weight", (2, 3), f, True), ("bias", (2,), f, True)]),
        (mint.nn.Linear(3, 2, bias=False), [("weight", (2, 3), f, True)]),
        (mint.nn.Conv2d(4, 6, (3, 2), groups=2), [("weight", (6, 2, 3, 2), f, True),
                                                  ("bias", (6,), f, True)]),
        (mint.nn.Conv1d(4, 6, 3), [("weight", (6, 4, 3), f, True), ("bias", (6,), f, True)]),
        (mint.nn.BatchNorm2d(3), [("weight", (3,), f, True), ("bias", (3,), f, True),
                                  ("running_mean", (3,), f, False),
                                  ("running_var", (3,), f, False),
                                  ("num_batches_tracked", (), i64, False)]),
        (mint.nn.BatchNorm1d(3, affine=False, track_running_stats=False), []),
        (mint.nn.LayerNorm((2, 3)), [("weight", (2, 3), f, True), ("bias", (2, 3), f, True)]),
        (mint.nn.LayerNorm(3, bias=False), [("weight", (3,), f, True)]),
        (mint.nn.LayerNorm(3, elementwise_affine=False), []),
        (mint.nn.GroupNorm(2, 4), [("weight", (4,), f, True), ("bias", (4,), f, True)]),
        (mint.nn.GroupNorm(2, 4, affine=False), [("weight", (4,), f, False),
                                                 ("bias", (4,), f, False)]),
        (mint.nn.PReLU(3, 0.1), [("weight", (3,), f, True)]),
        (mint.nn.Embedding(5, 2), [("weight", (5, 2), f, True)]),
    ]
    for cell, want in expected:
        assert _params(cell) == want, type(cell).__name__


def test_default_inits_are_pytorchs():
    ms.set_seed(0)
    lin = mint.nn.Linear(1000, 300)
    w, b = lin.weight.asnumpy(), lin.bias.asnumpy()
    bound = 1 / np.sqrt(1000)          # MindSpore: |w| <= 0.0316227, |b| <= 0.0316227
    assert np.abs(w).max() <= bound + 1e-7 and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 1e-3          # uniform: std = bound / sqrt(3)
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    conv = mint.nn.Conv2d(50, 64, 3)
    bound = 1 / np.sqrt(450)           # MindSpore: |w| <= 0.0471404 (fan_in 50 * 3 * 3)
    assert np.abs(conv.weight.asnumpy()).max() <= bound + 1e-7
    assert np.abs(conv.weight.asnumpy()).max() > 0.99 * bound
    assert np.abs(conv.bias.asnumpy()).max() <= bound
    emb = mint.nn.Embedding(1000, 64, padding_idx=3).weight.asnumpy()
    assert abs(emb.std() - 1.0) < 0.02 and abs(emb.mean()) < 0.02   # Normal(0, 1)
    assert (emb[3] == 0).all()
    bn = mint.nn.BatchNorm2d(3)
    assert (bn.momentum, bn.eps) == (0.1, 1e-5)
    np.testing.assert_array_equal(bn.weight.asnumpy(), np.ones(3))
    assert mint.nn.Dropout().p == 0.5 and mint.nn.GELU().approximate == "none"


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_forward_matches_mindspore(mode):
    x = Tensor(X)
    lin = mint.nn.Linear(4, 2, weight_init="ones", bias_init="zeros")
    # MindSpore 2.10's outputs (first four values) for the same Cells on X
    for cell, first in ((lin, [-6.956522, -6.956522, -4.173913, -4.173913]),
                        (mint.nn.Softmax(), [0.11037105] * 4),
                        (mint.nn.PReLU(3, 0.1), [-0.2, -0.18260871, -0.16521738, -0.14782609]),
                        (mint.nn.GroupNorm(1, 3), [-1.5932329, -1.3035543, -1.0138754,
                                                   -0.7241968])):
        np.testing.assert_allclose(cell(x).asnumpy().ravel()[:4], first, rtol=1e-5, atol=1e-6)
    assert mint.nn.Identity(1, a=2)(x).shape == (2, 3, 4)
    assert mint.nn.Flatten()(x).shape == (2, 12)


def _bn_ref(x, rm, rv, m):
    axes = (0,) + tuple(range(2, x.ndim))
    shp = (1, -1) + (1,) * (x.ndim - 2)
    mu, var = x.mean(axes), x.var(axes)
    y = (x - mu.reshape(shp)) / np.sqrt(var.reshape(shp) + 1e-5)
    return y, (1 - m) * rm + m * mu, (1 - m) * rv + m * x.var(axes, ddof=1)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("cls,shape", [(mint.nn.BatchNorm2d, (4, 3, 2, 3)),
                                       (mint.nn.BatchNorm1d, (5, 3)),
                                       (mint.nn.BatchNorm3d, (2, 3, 2, 2, 2))])
def test_batchnorm_momentum_is_pytorchs(cls, shape, mode):
    bn = cls(3, momentum=0.3)
    rng = np.random.RandomState(0)
    rm, rv = np.zeros(3), np.ones(3)
    bn.set_train(True)
    for step in range(2):
        x = (rng.randn(*shape) * 2 + 1).astype(F32)
        y, rm, rv = _bn_ref(x.astype(np.float64), rm, rv, 0.3)
        np.testing.assert_allclose(bn(Tensor(x)).asnumpy(), y, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(bn.running_mean.asnumpy(), rm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bn.running_var.asnumpy(), rv, rtol=1e-5, atol=1e-6)
        assert int(bn.num_batches_tracked.asnumpy()) == step + 1
    bn.set_train(False)
    x = rng.randn(*shape).astype(F32)
    shp = (1, -1) + (1,) * (len(shape) - 2)
    want = (x - rm.reshape(shp)) / np.sqrt(rv.reshape(shp) + 1e-5)
    np.testing.assert_allclose(bn(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="num_features"):
        bn(Tensor(np.zeros((2, 4) + tuple(shape[2:]), F32)))


def test_batchnorm_cumulative_average_and_no_running_stats():
    bn = mint.nn.BatchNorm1d(2, momentum=None)
    bn.set_train(True)
    xs = [np.random.RandomState(k).randn(6, 2).astype(F32) for k in range(3)]
    for x in xs:
        bn(Tensor(x))
    np.testing.assert_allclose(bn.running_mean.asnumpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-5, atol=1e-6)
    bn = mint.nn.BatchNorm1d(2, track_running_stats=False)
    bn.set_train(False)                                  # batch statistics even in eval
    x = xs[0]
    np.testing.assert_allclose(bn(Tensor(x)).asnumpy(),
                               (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-4, atol=1e-5)


def test_conv_padding_modes_and_conv1d():
    x = np.random.RandomState(2).randn(1, 2, 5, 6).astype(F32)
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        conv = mint.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode, bias=False)
        ref = mint.nn.Conv2d(2, 3, 3, bias=False)
        ms.ops.assign(ref.weight, conv.weight)
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), np_mode)
        np.testing.assert_allclose(conv(Tensor(x)).asnumpy(), ref(Tensor(xp)).asnumpy(),
                                   rtol=1e-5, atol=1e-6)
    c1 = mint.nn.Conv1d(2, 3, 3, padding=1)
    x1 = np.random.RandomState(3).randn(2, 2, 7).astype(F32)
    w, b = c1.weight.asnumpy(), c1.bias.asnumpy()
    xp = np.pad(x1, ((0, 0), (0, 0), (1, 1)))
    ref = np.stack([np.einsum("ncl,ocl->no", xp[:, :, i:i + 3], w) for i in range(7)], -1)
    np.testing.assert_allclose(c1(Tensor(x1)).asnumpy(), ref + b.reshape(1, -1, 1), rtol=1e-5,
                               atol=1e-5)
    assert mint.nn.Conv2d(2, 4, 3, padding="same")(Tensor(x)).shape == (1, 4, 5, 6)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_losses_pools_pads_and_activations_cells(mode):
    lg = Tensor(np.array([[1., 2., 0.5], [0.1, 0.2, 3.]], F32))
    lab = Tensor(np.array([1, 2], np.int32))
    tg = Tensor(np.array([[0., 1., 0.5], [1., 0., 1.]], F32))
    F = mint.nn.functional
    pairs = [(mint.nn.CrossEntropyLoss(label_smoothing=0.1)(lg, lab),
              F.cross_entropy(lg, lab, label_smoothing=0.1)),
             (mint.nn.NLLLoss(reduction="sum")(lg, lab), F.nll_loss(lg, lab, reduction="sum")),
             (mint.nn.MSELoss()(lg, tg), F.mse_loss(lg, tg)),
             (mint.nn.L1Loss("none")(lg, tg), F.l1_loss(lg, tg, "none")),
             (mint.nn.SmoothL1Loss(beta=0.5)(lg, tg), F.smooth_l1_loss(lg, tg, beta=0.5)),
             (mint.nn.BCEWithLogitsLoss()(lg, tg), F.binary_cross_entropy_with_logits(lg, tg)),
             (mint.nn.BCELoss()(F.sigmoid(lg), tg), F.binary_cross_entropy(F.sigmoid(lg), tg)),
             (mint.nn.KLDivLoss("batchmean")(lg, tg), F.kl_div(lg, tg, "batchmean")),
             (mint.nn.SoftMarginLoss()(lg, tg), F.soft_margin_loss(lg, tg))]
    img = Tensor(np.random.RandomState(4).randn(2, 3, 6, 6).astype(F32))
    pairs += [(mint.nn.MaxPool2d(2)(img), F.max_pool2d(img, 2)),
              (mint.nn.AvgPool2d(3, 1, 1)(img), F.avg_pool2d(img, 3, 1, 1)),
              (mint.nn.AdaptiveAvgPool2d(1)(img), img.mean((2, 3), keep_dims=True)),
              (mint.nn.ZeroPad2d(1)(img), F.pad(img, (1, 1, 1, 1))),
              (mint.nn.ReflectionPad1d((2, 1))(img), F.pad(img, (2, 1), "reflect")),
              (mint.nn.ConstantPad2d((1, 0, 2, 1), 3.5)(img), F.pad(img, (1, 0, 2, 1),
                                                                   value=3.5))]
    x = Tensor(X)
    for cell, fn in ((mint.nn.ReLU6(), F.relu6), (mint.nn.SiLU(), F.silu),
                     (mint.nn.Mish(), F.mish), (mint.nn.SELU(), F.selu),
                     (mint.nn.ELU(0.5), lambda t: F.elu(t, 0.5)),
                     (mint.nn.Hardtanh(-2.0, 0.5), lambda t: F.hardtanh(t, -2.0, 0.5)),
                     (mint.nn.LogSoftmax(1), lambda t: F.log_softmax(t, 1)),
                     (mint.nn.GLU(2), lambda t: F.glu(t, 2)),
                     (mint.nn.Threshold(0.1, 20.0), lambda t: F.threshold(t, 0.1, 20.0)),
                     (mint.nn.GELU("tanh"), lambda t: F.gelu(t, approximate="tanh"))):
        pairs.append((cell(x), fn(x)))
    for got, want in pairs:
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)


def test_dropout_cell_drops_p_in_training_only():
    ms.set_seed(5)
    d = mint.nn.Dropout(0.2)
    x = Tensor(np.ones((100, 100), F32))
    d.set_train(True)
    assert abs((d(x).asnumpy() == 0).mean() - 0.2) < 0.02
    d.set_train(False)
    np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())


def test_refused_arguments():
    for make, word in ((lambda: mint.nn.Dropout(0.5, inplace=True), "inplace"),
                       (lambda: mint.nn.Embedding(4, 2, sparse=True), "sparse"),
                       (lambda: mint.nn.SiLU(inplace=True), "inplace")):
        with pytest.raises(NotImplementedError, match=word):
            make()
    with pytest.raises(ValueError, match="padding_mode"):
        mint.nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="divisible"):
        mint.nn.GroupNorm(3, 4)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_sync_batchnorm_in_one_process_is_batchnorm(mode):
    x = Tensor(np.random.RandomState(0).randn(4, 3, 2, 5).astype(F32))
    sync, bn = mint.nn.SyncBatchNorm(3, momentum=0.2), mint.nn.BatchNorm2d(3, momentum=0.2)
    assert [p.name for p in sync.get_parameters()] == [p.name for p in bn.get_parameters()]
    sync.set_train(True)
    bn.set_train(True)
    np.testing.assert_allclose(sync(x).asnumpy(), bn(x).asnumpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sync.running_var.asnumpy(), bn.running_var.asnumpy(), rtol=1e-6)
    assert sync(Tensor(np.ones((4, 3, 2), F32))).shape == (4, 3, 2)     # any rank >= 2


class _Mixed(mint.nn.Cell):
    """Layers whose construct paths the other tests run eagerly only."""

    def __init__(self):
        super().__init__()
        self.ln = mint.nn.LayerNorm(6, elementwise_affine=False)
        self.emb = mint.nn.Embedding(5, 6, padding_idx=0)
        self.conv1 = mint.nn.Conv1d(2, 3, 3, padding="same")
        self.up = mint.nn.Upsample(scale_factor=2.0, mode="nearest")
        self.unfold, self.fold = mint.nn.Unfold(2), mint.nn.Fold((4, 4), 2)
        self.shuffle = mint.nn.PixelShuffle(2)
        self.drop2d = mint.nn.Dropout2d(0.5)

    def construct(self, x, ids, seq, img):
        a = self.ln(x) + self.emb(ids)
        b = self.conv1(seq)
        c = self.fold(self.unfold(self.up(img)))
        d = self.shuffle(self.drop2d(c))
        e = mint.nn.functional.one_hot(ids, 5)
        return a, b, c, d, e


def test_a_mixed_network_gives_the_same_in_both_modes():
    ms.set_seed(4)
    net = _Mixed()
    rng = np.random.RandomState(0)
    args = (Tensor(rng.randn(2, 6).astype(F32)), Tensor(np.array([0, 3], np.int32)),
            Tensor(rng.randn(2, 2, 5).astype(F32)), Tensor(rng.randn(1, 4, 2, 2).astype(F32)))
    eager = [t.asnumpy() for t in net(*args)]
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = [t.asnumpy() for t in net(*args)]
    for a, b in zip(eager, graph):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert eager[1].shape == (2, 3, 5) and eager[3].shape == (1, 1, 8, 8)
    np.testing.assert_array_equal(eager[4], np.eye(5, dtype=np.int64)[[0, 3]])
    with pytest.raises(ValueError, match="num_classes"):
        ms.jit(lambda t: mint.nn.functional.one_hot(t))(args[1])


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_embedding_max_norm_renormalizes_the_looked_up_rows(mode):
    w0 = np.arange(12).reshape(4, 3).astype(F32) / 2
    emb = mint.nn.Embedding(4, 3, max_norm=2.0, _weight=Tensor(w0))
    ids = np.array([[1, 3], [1, 0]], np.int32)
    out = emb(Tensor(ids)).asnumpy()
    want = w0.copy()
    for i in (0, 1, 3):                     # PyTorch's embedding_renorm_ on the used rows
        n = np.linalg.norm(want[i])
        if n > 2.0:
            want[i] *= 2.0 / (n + 1e-7)
    np.testing.assert_allclose(out, want[ids], rtol=1e-6)
    np.testing.assert_array_equal(out, emb.weight.asnumpy()[ids])        # the stored rows
    np.testing.assert_allclose(emb.weight.asnumpy(), want, rtol=1e-6)    # row 2 untouched
    g = ms.grad(lambda t: (emb(t) * 2).sum(), None, emb.trainable_params())(Tensor(ids))
    np.testing.assert_array_equal(g[0].asnumpy()[:, 0], [2, 4, 0, 2])    # a lookup's gradient


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_embedding_scale_grad_by_freq(mode):
    emb = mint.nn.Embedding(5, 2, scale_grad_by_freq=True)
    ids = Tensor(np.array([[1, 3, 1], [1, 0, 3]], np.int32))
    out = emb(ids)
    np.testing.assert_array_equal(out.asnumpy(), emb.weight.asnumpy()[ids.asnumpy()])
    g = ms.grad(lambda t: emb(t).sum(), None, emb.trainable_params())(ids)
    # PyTorch: each row's summed gradient divided by its index's count (1: 3 of 3, 3: 2 of 2)
    np.testing.assert_allclose(g[0].asnumpy()[:, 0], [1, 1, 0, 1, 0], rtol=1e-6)
