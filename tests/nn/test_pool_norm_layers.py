"""The 1-D/3-D and adaptive pooling Cells, BatchNorm3d, GroupNorm and the InstanceNorms, and the
matching ops functions and Primitive classes, against MindSpore 2.10: outputs, indices (values
and dtype) and input gradients in both modes (values from MindSpore 2.10 in
pool_norm_expected.py), BatchNorm3d's moving statistics and Parameter names, InstanceNorm's
instance statistics in training and eval with untouched moving statistics, and the arguments
MindSpore refuses."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from helpers import graph_runs, in_mode
from pool_norm_expected import CASES, MS_VALUES

TOL = dict(rtol=1e-5, atol=1e-5)


def _grid(shape):
    """The inputs the MindSpore values were computed on: distinct values (no max ties)."""
    n = int(np.prod(shape))
    k = next(k for k in (7, 11, 13, 17, 19) if np.gcd(k, n) == 1)
    return ((np.arange(n) * k % n).astype(np.float32) * 0.5 - n / 4).reshape(shape)


def _weights(shape):
    n = int(np.prod(shape))
    return ((np.arange(n) % 5) - 1.5).astype(np.float32).reshape(shape)


# the functional cases as functions with source (GRAPH_MODE parses them); each is the
# expression CASES gives for it
def _ops_max_pool3d(x):
    return ops.max_pool3d(x, 2, 1, 1, return_indices=True)


def _ops_avg_pool1d(x):
    return ops.avg_pool1d(x, 3, 2, 1, count_include_pad=False)


def _ops_adaptive_max_pool2d(x):
    return ops.adaptive_max_pool2d(x, (3, None))


def _ops_group_norm(x):
    return ops.group_norm(x, 1)


def _ops_lp_pool1d(x):
    return ops.lp_pool1d(x, 2, 2, 2, True)


def _ops_max_unpool1d_roundtrip(x):
    return ops.max_unpool1d(*_MAX_POOL_1D_INDICES(x), 2, output_size=(7,))


def _ops_max_unpool2d_roundtrip(x):
    return ops.max_unpool2d(*_MAX_POOL_ARGMAX_2(x), 2, output_size=(5, 5))


def _ops_max_unpool3d_roundtrip(x):
    return ops.max_unpool3d(*ops.max_pool3d(x, 2, 2, return_indices=True), 2)


def _MaxUnpool2d_roundtrip(x):
    return _MAX_UNPOOL_2D(*_MAX_POOL_ARGMAX_1(x))


_MAX_POOL_1D_INDICES = nn.MaxPool1d(2, 2, pad_mode="pad", return_indices=True)
_MAX_POOL_ARGMAX_2 = ops.MaxPoolWithArgmaxV2(2, 2)
_MAX_POOL_ARGMAX_1 = ops.MaxPoolWithArgmaxV2(2, 1)
_MAX_UNPOOL_2D = nn.MaxUnpool2d(2, 1)
_ADAPTIVE_MAX_POOL_2D = ops.AdaptiveMaxPool2D((2, 3))
_MAX_POOL_ARGMAX_V2 = ops.MaxPoolWithArgmaxV2(3, 2, 1, (1, 1), True)
_MAX_POOL_3D_ARGMAX = ops.MaxPool3DWithArgmax((2, 2, 3), (1, 2, 1), (1, 1, 1), (1, 1, 1), True,
                                              argmax_type=ms.int32)
_AVG_POOL_SAME = ops.AvgPool(3, 2, "same")
_MAX_POOL_3D_PAD = ops.MaxPool3D(2, 2, "pad", (1, 0, 0, 1, 1, 0))
_AVG_POOL_3D_PAD = ops.AvgPool3D(2, 2, "pad", (1, 0, 0, 1, 1, 0), count_include_pad=False)
_AVG_POOL_3D_PAD_ONLY_WINDOW = ops.AvgPool3D(2, 1, "pad", (2, 0, 0, 0, 0, 0))


def _ops_AdaptiveMaxPool2D(x):
    return _ADAPTIVE_MAX_POOL_2D(x)


def _ops_AvgPool_same(x):
    return _AVG_POOL_SAME(x)


def _ops_MaxPool3D_pad(x):
    return _MAX_POOL_3D_PAD(x)


def _ops_AvgPool3D_pad(x):
    return _AVG_POOL_3D_PAD(x)


def _ops_MaxPoolWithArgmaxV2(x):
    return _MAX_POOL_ARGMAX_V2(x)


def _ops_MaxPool3DWithArgmax(x):
    return _MAX_POOL_3D_ARGMAX(x)


def _ops_AvgPool3D_pad_only_window(x):
    return _AVG_POOL_3D_PAD_ONLY_WINDOW(x)


FUNCTIONS = {name: globals()["_" + name] for name in CASES
             if name.startswith("ops_") or name.endswith("_roundtrip")}


# one loss function per case: its graph compiles once per case, by design
@pytest.mark.filterwarnings("ignore:graph 'grad_loss' has been compiled")
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients_match_mindspore(case, mode):
    expr, shape = CASES[case]
    fn = FUNCTIONS[case] if case in FUNCTIONS else eval(expr, {"nn": nn, "ops": ops})
    want = MS_VALUES[case]
    x = Tensor(_grid(shape))
    with graph_runs(case):
        out = fn(x) if isinstance(fn, ms.nn.Cell) else in_mode(fn, x)
    if "idx" in want:
        assert isinstance(out, tuple) and len(out) == 2, f"{case}: expected (output, indices)"
        y, idx = out
        assert str(idx.dtype) == want["idx_dtype"], f"{case}: indices dtype {idx.dtype}"
        np.testing.assert_array_equal(idx.asnumpy(), np.array(want["idx"]), err_msg=case)
    else:
        assert not isinstance(out, tuple), f"{case}: MindSpore returns one tensor"
        y = out
    np.testing.assert_allclose(y.asnumpy(), np.array(want["y"]), **TOL, err_msg=case)
    if "dx" not in want:
        return      # MindSpore could not compute it (pool_norm_expected.py's docstring)
    w = Tensor(_weights(tuple(y.shape)))

    def loss(a):
        o = fn(a)
        return ((o[0] if isinstance(o, tuple) else o) * w).sum()
    with graph_runs(f"{case} gradient"):
        dx = ms.grad(loss)(x)
    np.testing.assert_allclose(dx.asnumpy(), np.array(want["dx"]), **TOL, err_msg=case)


# ---------------------------------------------------------------- normalisation ------------------
def test_batchnorm3d_is_mindspores_bn2d_child(mode):
    # values from MindSpore 2.10: nn.BatchNorm3d(2), one training step on this input
    x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 2, 3, 1, 2) * 0.5)
    bn = nn.BatchNorm3d(2)
    assert [p.name for p in bn.get_parameters()] == [
        "bn2d.moving_mean", "bn2d.moving_variance", "bn2d.gamma", "bn2d.beta"]
    bn.set_train(True)
    with graph_runs("BatchNorm3d"):
        y = bn(x)
    a = x.asnumpy().astype(np.float64)
    mu, var = a.mean((0, 2, 3, 4)), a.var((0, 2, 3, 4))
    np.testing.assert_allclose(y.asnumpy(), (a - mu.reshape(1, 2, 1, 1, 1)) /
                               np.sqrt(var.reshape(1, 2, 1, 1, 1) + 1e-5), **TOL)
    np.testing.assert_allclose(y.asnumpy().ravel()[:4],
                               [-1.362545, -1.2022457, -1.0419462, -0.8816468], **TOL)
    # MindSpore's momentum weighs the old value; the unbiased batch variance enters
    np.testing.assert_allclose(bn.bn2d.moving_mean.asnumpy(), [0.425, 0.725], **TOL)
    np.testing.assert_allclose(bn.bn2d.moving_variance.asnumpy(), [1.9613637, 1.9613637],
                               **TOL)
    bn.set_train(False)
    np.testing.assert_allclose(bn(x).asnumpy().ravel()[:4],
                               [-0.3034651, 0.05355265, 0.4105704, 0.7675882], **TOL)
    with pytest.raises(ValueError, match="5-D"):
        bn(Tensor(np.ones((2, 2, 3, 3), np.float32)))


@pytest.mark.parametrize("cls,shape", [(nn.InstanceNorm1d, (2, 3, 5)),
                                       (nn.InstanceNorm2d, (2, 3, 2, 3)),
                                       (nn.InstanceNorm3d, (1, 3, 2, 2, 2))])
def test_instance_norm_uses_instance_statistics_in_train_and_eval(cls, shape, mode):
    net = cls(3, gamma_init=Tensor(np.array([1.0, 2.0, -1.0], np.float32)), beta_init=0.5)
    assert [(p.name, p.requires_grad) for p in net.get_parameters()] == [
        ("mean", False), ("variance", False), ("gamma", True), ("beta", True)]
    x = _grid(shape)
    axes = tuple(range(2, len(shape)))
    mu, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    g = np.array([1.0, 2.0, -1.0]).reshape((1, 3) + (1,) * len(axes))
    want = (x - mu) / np.sqrt(var + 1e-5) * g + 0.5
    for training in (True, False):
        net.set_train(training)
        with graph_runs(cls.__name__):
            y = net(Tensor(x))
        np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    # MindSpore's InstanceNorm kernel updates copies: the Parameters keep their initial values
    np.testing.assert_array_equal(net.moving_mean.asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(net.moving_variance.asnumpy(), np.ones(3))
    assert net.momentum == 0.1
    with pytest.raises(ValueError, match="channels"):
        net(Tensor(np.ones((2, 4) + shape[2:], np.float32)))
    with pytest.raises(ValueError, match=f"{len(shape)}-D"):
        net(Tensor(np.ones(shape + (1,), np.float32)))


def test_instance_norm_gradient_is_group_norm_with_one_channel_per_group(mode):
    x = Tensor(_grid((2, 3, 4)))
    net = nn.InstanceNorm1d(3, affine=False)
    assert not any(p.requires_grad for p in net.get_parameters())
    w = Tensor(_weights((2, 3, 4)))
    with graph_runs("InstanceNorm1d gradient"):
        dx = ms.grad(lambda a: (net(a) * w).sum())(x)
    ref = ms.grad(lambda a: (ops.group_norm(a, 3) * w).sum())(x)
    np.testing.assert_allclose(dx.asnumpy(), ref.asnumpy(), rtol=1e-6, atol=1e-6)


def test_group_norm_parameters_and_weight_gradients(mode):
    net = nn.GroupNorm(2, 4, affine=False)
    assert [(p.name, p.shape, p.requires_grad) for p in net.get_parameters()] == [
        ("gamma", (4,), False), ("beta", (4,), False)]
    net = nn.GroupNorm(2, 4)
    x = Tensor(_grid((2, 4, 3)))
    w = Tensor(_weights((2, 4, 3)))
    with graph_runs("GroupNorm weight gradients"):
        _, (dg, db) = ms.value_and_grad(lambda a: (net(a) * w).sum(), None,
                                        net.trainable_params())(x)
    xn = ops.group_norm(x, 2).asnumpy()
    np.testing.assert_allclose(dg.asnumpy(), (xn * w.asnumpy()).sum((0, 2)), **TOL)
    np.testing.assert_allclose(db.asnumpy(), w.asnumpy().sum((0, 2)), **TOL)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="num_channels"):
        net(Tensor(np.ones((2, 6, 3), np.float32)))


# ---------------------------------------------------------------- what MindSpore refuses --------
@pytest.mark.parametrize("build,err,match", [
    (lambda: nn.MaxPool1d(3, 1, padding=1), ValueError, "pad_mode='pad'"),
    (lambda: nn.MaxPool1d(3, 1, return_indices=True), ValueError, "pad_mode='pad'"),
    (lambda: nn.MaxPool1d(3, 1, pad_mode="pad", padding=2), ValueError, "half"),
    (lambda: nn.MaxPool1d((3,), 1), TypeError, "kernel_size"),
    (lambda: nn.MaxPool3d(2, dilation=2), ValueError, "pad_mode='pad'"),
    (lambda: nn.MaxPool3d(2, pad_mode="full"), ValueError, "pad_mode"),
    (lambda: nn.AvgPool1d(3, 1, padding=1), ValueError, "pad_mode='pad'"),
    (lambda: nn.AvgPool3d(2, divisor_override=0), ValueError, "divisor_override"),
    (lambda: nn.AdaptiveAvgPool1d(0), ValueError, "output_size"),
    (lambda: nn.AdaptiveAvgPool1d(1.5), TypeError, "output_size"),
    (lambda: nn.InstanceNorm2d(3, momentum=1.5), ValueError, "momentum"),
    (lambda: nn.InstanceNorm2d(3, gamma_init=Tensor(np.ones(3, np.float64))), TypeError,
     "float32"),
    (lambda: ops.AdaptiveMaxPool2D((None, 2)), TypeError, "output_size"),
])
def test_refused_arguments_name_themselves(build, err, match):
    with pytest.raises(err, match=match):
        build()


def test_refused_inputs():
    x6 = Tensor(_grid((1, 2, 6)))
    with pytest.raises(ValueError, match="divisible"):
        ops.adaptive_avg_pool1d(x6, 4)      # MindSpore: L must be divisible by output_size
    with pytest.raises(ValueError, match="divisible"):
        nn.AdaptiveMaxPool1d(4)(x6)
    with pytest.raises(ValueError, match="3-D"):
        ops.adaptive_max_pool1d(Tensor(_grid((2, 6))), 3)
    with pytest.raises(ValueError, match="5-D"):
        ops.max_pool3d(Tensor(_grid((1, 4, 5, 5))), 2)
    with pytest.raises(ValueError, match="5-D"):
        ops.avg_pool3d(Tensor(_grid((1, 4, 5, 5))), 2)
    with pytest.raises(ValueError, match="half"):
        ops.max_pool3d(Tensor(_grid((1, 1, 4, 5, 5))), 2, 1, 2)
    with pytest.raises(ValueError, match="3-D"):
        ops.avg_pool1d(Tensor(_grid((2, 7))), 2)
    # MindSpore's MaxUnpool: output_size within one stride of (in - 1) * stride + kernel
    y, idx = ops.MaxPoolWithArgmaxV2(2, 2)(Tensor(_grid((1, 1, 4, 4))))
    assert ops.max_unpool2d(y, idx, 2, output_size=(5, 5)).shape == (1, 1, 5, 5)
    with pytest.raises(ValueError, match="within one stride"):
        ops.max_unpool2d(y, idx, 2, output_size=(1, 1, 6, 4))
    with pytest.raises(ValueError, match="shape of x"):
        ops.max_unpool2d(y, idx[..., :1], 2)


def test_pool_in_a_user_cell_graph(mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pool = nn.MaxPool3d(2, 1)
            self.adapt = nn.AdaptiveAvgPool2d((2, 1))
            self.norm = nn.GroupNorm(1, 1)

        def construct(self, x):
            y = self.pool(x)
            return self.norm(self.adapt(y.reshape(y.shape[0], y.shape[1], -1, y.shape[4])))

    x = Tensor(_grid((2, 1, 3, 3, 4)))
    net = Net()
    with graph_runs("the user Cell"):
        y = net(x)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(y.asnumpy(), Net()(x).asnumpy(), rtol=1e-6, atol=1e-6)


_LAYER_NORM_LAST = ops.LayerNorm(-1, -1)


def _layer_norm_last(x, g, b):
    return _LAYER_NORM_LAST(x, g, b)


class _BatchNormTrainNet(nn.Cell):
    """The moving statistics as the Cell's Parameters, as a network holds them."""

    def __init__(self):
        super().__init__()
        self.m = ms.Parameter(Tensor(np.zeros(3, np.float32)), name="m")
        self.v = ms.Parameter(Tensor(np.ones(3, np.float32)), name="v")
        self.bn = ops.BatchNorm(is_training=True, momentum=0.1)

    def construct(self, x, s, b):
        return self.bn(x, s, b, self.m, self.v)


def test_layer_norm_and_batch_norm_primitives_return_mindspores_tuples(mode):
    # values from MindSpore 2.10 (CPU): the first elements of each output, inputs drawn in this
    # order from RandomState(0)
    r = np.random.RandomState(0)
    x, g, b = (Tensor(r.randn(*s).astype(np.float32)) for s in ((2, 3, 4), (4,), (4,)))
    y, mean, var = in_mode(_layer_norm_last, x, g, b)
    assert mean.shape == var.shape == (2, 3, 1)
    np.testing.assert_allclose(y.asnumpy().ravel()[:4], [2.87311, 3.41219, 0.13121, 0.14156],
                               atol=1e-4)
    np.testing.assert_allclose(mean.asnumpy().ravel()[:3], [1.34596, 0.42225, 0.47642],
                               atol=1e-4)
    np.testing.assert_allclose(var.asnumpy().ravel()[:3], [0.50128, 1.16381, 0.35175],
                               atol=1e-4)     # the biased variance, not its inverse root
    g2, b2 = (Tensor(r.randn(3, 4).astype(np.float32)) for _ in range(2))
    y, mean, var = ops.LayerNorm(1, 1, 1e-5)(x, g2, b2)
    np.testing.assert_allclose(y.asnumpy().ravel()[:3], [-1.48702, 0.30909, -1.33971],
                               atol=1e-4)
    np.testing.assert_allclose(var.asnumpy().ravel(), [0.85142, 1.01784], atol=1e-4)
    xb = Tensor(r.randn(4, 3).astype(np.float32))
    s3, z3 = Tensor(np.ones(3, np.float32)), Tensor(np.zeros(3, np.float32))
    m = ms.Parameter(Tensor(np.zeros(3, np.float32)), name="m")
    v = ms.Parameter(Tensor(np.ones(3, np.float32)), name="v")
    out = ops.BatchNorm()(xb, s3, z3, m, v)
    assert len(out) == 5 and all(o.shape == (3,) for o in out[1:])
    np.testing.assert_allclose(out[0].asnumpy().ravel()[:3], [0.06652, 0.30247, -0.63432],
                               atol=1e-4)
    assert not any(o.asnumpy().any() for o in out[1:])
    net = _BatchNormTrainNet()
    with graph_runs("BatchNorm in a Cell"):
        out = net(xb, s3, z3)
    np.testing.assert_allclose(out[0].asnumpy().ravel()[:3], [1.42697, 1.4994, -1.26404],
                               atol=1e-4)
    assert not out[1].asnumpy().any() and not out[2].asnumpy().any()
    np.testing.assert_allclose(out[3].asnumpy(), [-0.37779, -0.93162, -0.08842], atol=1e-4)
    np.testing.assert_allclose(out[4].asnumpy(), [0.09694, 0.67741, 0.18651], atol=1e-4)
    # the moving statistics: momentum weighs the batch, whose unbiased variance enters
    np.testing.assert_allclose(net.m.asnumpy(), [-0.03777878, -0.09316174, -0.00884167],
                               atol=1e-5)
    np.testing.assert_allclose(net.v.asnumpy(), [0.9129248, 0.9903215, 0.92486733], atol=1e-5)


def test_max_unpool_and_l2_normalize_primitives(mode):
    # values from MindSpore 2.10: strides=0 means ksize; output_shape the full shape
    x4 = Tensor(np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32))
    i4 = Tensor(np.array([[[[0, 3], [9, 14]]]], np.int64))
    want = np.zeros(16, np.float32)
    want[[0, 3, 9, 14]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(ops.MaxUnpool2D(2)(x4, i4).asnumpy().ravel(), want)
    y = ops.MaxUnpool2D(2, 2, output_shape=(1, 1, 5, 4))(x4, i4)
    np.testing.assert_array_equal(y.asnumpy().ravel(), np.concatenate([want, np.zeros(4)]))
    y = ops.MaxUnpool2D(3, 2, 1)(x4, Tensor(np.array([[[[0, 2], [3, 8]]]], np.int64)))
    np.testing.assert_array_equal(y.asnumpy().ravel(), [1, 0, 2, 3, 0, 0, 0, 0, 4])
    y = ops.MaxUnpool3D((1, 2, 2))(x4.reshape(1, 1, 1, 2, 2), i4.reshape(1, 1, 1, 2, 2))
    np.testing.assert_array_equal(y.asnumpy().ravel(), want)
    xl = Tensor(np.random.RandomState(0).randn(2, 3).astype(np.float32))
    np.testing.assert_allclose(ops.L2Normalize()(xl).asnumpy().ravel(),
                               [0.61855, 0.20951, 0.70763, 0.78575, 0.97781, -0.70658], atol=1e-4)
    np.testing.assert_allclose(ops.L2Normalize(axis=1)(xl).asnumpy().ravel(),
                               [0.85772, 0.19456, 0.47588, 0.72841, 0.60705, -0.31767], atol=1e-4)
    small = Tensor(np.array([[0.1, 0.2, 0.0]], np.float32))     # sum of squares below epsilon
    np.testing.assert_allclose(ops.L2Normalize(1, 0.5)(small).asnumpy().ravel(),
                               [0.14142, 0.28284, 0.0], atol=1e-4)
    with pytest.raises(TypeError, match="one axis"):
        ops.L2Normalize(axis=(0, 1))
