"""ms.export(net, *inputs, file_name=, file_format="ONNX") (train/onnx_export.py): the exported
model passes onnx.checker and, run by onnxruntime on the same inputs, gives minispore's outputs
(and MindSpore 2.10's for a fixed-weight MLP); export works from either mode of the caller;
unsupported nodes, formats and options raise naming them; the file name and mode follow
MindSpore's."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core.primitive import REGISTRY, apply, primitives

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _det(shape, k):
    """Deterministic small values (the same formula fed MindSpore for the reference)."""
    return ((np.arange(int(np.prod(shape))).reshape(shape) * k % 11 - 5) / 10).astype(np.float32)


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 6, activation="relu")
        self.fc2 = nn.Dense(6, 3)
        self.sm = nn.Softmax()

    def construct(self, x):
        return self.sm(self.fc2(self.fc1(x)))


class LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 3, pad_mode="same")
        self.apool = nn.AvgPool2d(2, 2)
        self.flat = nn.Flatten()
        self.drop = nn.Dropout(p=0.5)
        self.fc = nn.Dense(8 * 2 * 2, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.bn(self.conv1(x))))
        x = self.apool(self.relu(self.conv2(x)))
        return self.fc(self.drop(self.flat(x)))


class Residual(nn.Cell):
    """A ResNet basic block with a strided, grouped projection and a dilated convolution."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, stride=2, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, pad_mode="same", dilation=2, group=2)
        self.bn2 = nn.BatchNorm2d(8)
        self.down = nn.Conv2d(4, 8, 1, stride=2, has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(3, 1, pad_mode="same")

    def construct(self, x):
        h = self.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return self.pool(self.relu(h + self.down(x)))


class OpZoo(nn.Cell):
    """Most mapped primitives once, each as a separate output."""

    def __init__(self):
        super().__init__()
        self.gelu = nn.GELU(approximate=False)
        self.gelu_tanh = nn.GELU()
        self.ln = nn.LayerNorm((6,))
        self.idx = ms.Tensor(np.array([0, 2, -1], np.int32))
        self.w = ms.Parameter(ms.Tensor(_det((2, 5, 6), 3)), name="w")

    def construct(self, x):
        xi = (x * 4).astype(ms.int32)
        ax = ops.abs(x) + 0.5
        s1, s2 = ops.split(x, (2, 4), axis=1)
        return (self.gelu(x), self.gelu_tanh(x), self.ln(x), ops.log_softmax(x, 0),
                ops.softmax(x, 1), ops.expand_dims(x, 1) * 2, ops.squeeze(x[:1], 0),
                ops.pow(ax, 1.5) + ops.exp(x) - ops.log(ax) * ops.sqrt(ax) / -x,
                ops.rsqrt(ax), ops.log1p(x * 1e-4), ops.sigmoid(x), ops.tanh(x),
                xi % 3, xi // 3, x % 0.3, x // 0.3, ops.floor(x), ops.ceil(x), ops.round(x * 3),
                ops.sign(x), ops.maximum(x, 0.1), ops.minimum(x, 0.1), ops.softplus(x * 30),
                ops.erf(x), ops.sin(x), ops.cos(x),
                xi.astype(ms.float32), (x > 0).astype(ms.float32), ops.where(x > 0, x, xi),
                ops.logical_and(x > 0, x < 0.5), x != xi, x >= 0.2, x <= 0.2,
                x.sum(axis=1, keepdims=True), x.mean(), x.max(axis=0), x.min(axis=1),
                x.prod(axis=1), (x > 0).sum(), ops.logsumexp(x * 50, 1),
                ops.argmax(x, 1), ops.argmin(x), ops.cumsum(x, 1), ops.concat((s2, s1), 1),
                x[:, 1:5:2], x[::-1, ::-2], ops.gather(x, self.idx, 1), ops.tile(x, (2, 1, 1)),
                ops.broadcast_to(x[:1], (3, 4, 6)), ops.transpose(x, (1, 0)),
                ops.one_hot(xi[0] % 4, 4, ms.Tensor(1.0), ms.Tensor(0.0)),
                ops.matmul(self.w, x.T), ops.matmul(x, x.T), ops.pad(x, (1, 2)))


def _export(net, *xs, tmp_path, name="net"):
    ms.export(net, *[ms.Tensor(x) for x in xs], file_name=str(tmp_path / name),
              file_format="ONNX")
    path = tmp_path / f"{name}.onnx"
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    return model, path


def _run_onnx(path, *xs):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})


def _tensors(x):
    return tuple(_tensors(a) for a in x) if isinstance(x, tuple) else ms.Tensor(x)


def _expected(net, *xs):
    net.set_train(False)
    out = net(*[_tensors(x) for x in xs])
    return [o.asnumpy() for o in (out if isinstance(out, tuple) else (out,))]


def _randomize_bn(net, seed=0):
    rng = np.random.default_rng(seed)
    for _, c in net.cells_and_names():
        if isinstance(c, nn.BatchNorm2d):
            n = c.moving_mean.shape[0]
            c.moving_mean.set_data(ms.Tensor(rng.normal(size=n).astype(np.float32)))
            c.moving_variance.set_data(ms.Tensor(rng.uniform(0.5, 2, n).astype(np.float32)))
            c.gamma.set_data(ms.Tensor(rng.uniform(0.5, 1.5, n).astype(np.float32)))
            c.beta.set_data(ms.Tensor(rng.normal(size=n).astype(np.float32)))
    return net


@pytest.fixture(params=["graph", "pynative"])
def caller_mode(request):
    saved = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE if request.param == "graph" else ms.PYNATIVE_MODE)
    yield request.param
    ms.set_context(mode=saved)


def test_mlp_gives_mindspores_numbers(tmp_path, caller_mode):
    net = MLP()
    for i, p in enumerate(net.trainable_params()):
        p.set_data(ms.Tensor(_det(p.shape, 3 + i)))
    x = _det((2, 4), 7)
    model, path = _export(net, x, tmp_path=tmp_path)
    got = _run_onnx(path, x)[0]
    # values from MindSpore 2.10 (the same weights and input)
    want = np.array([[0.25815722, 0.36016768, 0.3816751],
                     [0.29735082, 0.4485021, 0.25414708]], np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, _expected(net, x)[0], rtol=1e-6, atol=1e-6)
    # as MindSpore names them: the input after construct's argument, initializers after the
    # Parameters, static shapes
    g = model.graph
    assert [i.name for i in g.input] == ["x"]
    assert [i.name for i in g.initializer][:4] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                   "fc2.bias"]
    assert [d.dim_value for d in g.input[0].type.tensor_type.shape.dim] == [2, 4]
    assert [d.dim_value for d in g.output[0].type.tensor_type.shape.dim] == [2, 3]
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 18)]
    # nn.Dense as MindSpore 2.10 writes it: one Gemm with the bias; relu as where(x > 0, x, 0)
    # (ONNX Relu keeps a NaN, MindSpore's relu gives 0)
    assert [n.op_type for n in g.node] == ["Gemm", "Greater", "Where", "Gemm", "Softmax"]
    assert list(g.node[0].input) == ["x", "fc1.weight", "fc1.bias"]


class SmallCNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(2)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.apool = nn.AvgPool2d(2, 2)
        self.flat = nn.Flatten()
        self.fc = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc(self.flat(self.apool(self.pool(self.relu(self.bn(self.conv(x)))))))


def test_cnn_with_batchnorm_gives_mindspores_numbers(tmp_path):
    net = SmallCNN()
    for k, p in enumerate(sorted(net.get_parameters(), key=lambda p: p.name)):
        v = _det(p.shape, 3 + k)
        p.set_data(ms.Tensor(np.abs(v) + 0.5 if "variance" in p.name or "beta" in p.name
                             else v))
    x = _det((1, 1, 8, 8), 7)
    _, path = _export(net, x, tmp_path=tmp_path)
    # values from MindSpore 2.10 (the same parameters and input)
    want = np.array([[0.48764533, -0.29026368, -0.53881174]], np.float32)
    np.testing.assert_allclose(_run_onnx(path, x)[0], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make, shape", [(LeNet, (2, 1, 10, 10)), (Residual, (2, 4, 9, 9))])
def test_conv_nets_match_minispore(tmp_path, caller_mode, make, shape):
    net = _randomize_bn(make())
    net.set_train(True)
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    model, path = _export(net, x, tmp_path=tmp_path)
    assert net.training, "export restores the Cell's training flag"
    ops_used = {n.op_type for n in model.graph.node}
    assert "Dropout" not in ops_used and "BatchNormalization" in ops_used
    got = _run_onnx(path, x)[0]
    np.testing.assert_allclose(got, _expected(net, x)[0], rtol=1e-5, atol=1e-5)


def test_op_zoo_matches_minispore(tmp_path, caller_mode):
    net = OpZoo()
    x = np.random.default_rng(2).uniform(-1, 1, (4, 6)).astype(np.float32)
    _, path = _export(net, x, tmp_path=tmp_path)
    got, want = _run_onnx(path, x), _expected(net, x)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype and a.shape == b.shape, (k, a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6, err_msg=f"output {k}")


class LSTMOut(nn.Cell):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, batch_first=True, num_layers=2, bidirectional=True)

    def construct(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


def _f32(*shape):
    return np.random.default_rng(3).standard_normal(shape).astype(np.float32)


LAYERS = {
    "conv_transpose_same": (lambda: nn.Conv2dTranspose(2, 3, 3, stride=2), (1, 2, 4, 4)),
    "conv_transpose_valid_group": (
        lambda: nn.Conv2dTranspose(2, 4, 3, stride=2, pad_mode="valid", group=2), (1, 2, 4, 5)),
    "conv_transpose_pad_dilation": (
        lambda: nn.Conv2dTranspose(2, 3, 4, stride=3, pad_mode="pad", padding=1, dilation=2),
        (1, 2, 4, 5)),
    "conv1d": (lambda: nn.Conv1d(2, 3, 3, pad_mode="same"), (2, 2, 9)),
    "conv3d": (lambda: nn.Conv3d(2, 3, 2, pad_mode="pad", padding=1), (1, 2, 3, 4, 3)),
    "avg_pool_pad_exclude": (
        lambda: nn.AvgPool2d(3, 2, pad_mode="pad", padding=1, count_include_pad=False),
        (1, 2, 7, 6)),
    "adaptive_avg_pool": (lambda: nn.AdaptiveAvgPool2d((2, 2)), (1, 3, 6, 6)),
    "layer_norm_params_axis": (
        lambda: nn.LayerNorm((4,), begin_norm_axis=1, begin_params_axis=2), (2, 3, 4)),
    "group_norm": (lambda: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    "bilinear": (lambda: nn.Upsample(size=(6, 5), mode="bilinear", align_corners=False),
                 (1, 2, 3, 3)),
    "lstm_unrolled": (LSTMOut, (2, 3, 4)),
    "transformer_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), (3, 2, 8)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_more_layers_match_minispore(tmp_path, name):
    make, shape = LAYERS[name]
    net, x = make(), _f32(*shape)
    _, path = _export(net, x, tmp_path=tmp_path)
    for a, b in zip(_run_onnx(path, x), _expected(net, x)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_embedding_takes_integer_input(tmp_path):
    net, ids = nn.Embedding(10, 4), np.array([[1, 2], [9, 0]], np.int32)
    model, path = _export(net, ids, tmp_path=tmp_path)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT32
    np.testing.assert_array_equal(_run_onnx(path, ids)[0], _expected(net, ids)[0])


class Updates(nn.Cell):
    """Tensor.__setitem__ (slice_update), ops.tensor_scatter_add and the scatter primitives
    with repeated and negative indices."""

    def __init__(self):
        super().__init__()
        self.idx = ms.Tensor(np.array([[0, 2], [2, -1]], np.int32))
        self.nd = ms.Tensor(np.array([[0, 1], [3, 3], [0, 1]], np.int32))

    def construct(self, x, u):
        y = x * 1
        y[1:3, ::2] = 5.0
        z = x * 1
        z[::-1, 1] = x[0, :]
        return (y, z, ops.tensor_scatter_add(x, self.nd, u[:3, 0, 0]),
                apply(REGISTRY["scatter_add"], x, self.idx, u, axis=1),
                apply(REGISTRY["scatter_update"], x, self.idx[0], u[:, 0], axis=1),
                apply(REGISTRY["scatter_add"], x, self.idx, u.transpose(1, 2, 0), axis=0))


def test_updates_and_scatters_match_minispore(tmp_path):
    x, u = _f32(4, 4), _f32(4, 2, 2)
    _, path = _export(Updates(), x, u, tmp_path=tmp_path)
    for a, b in zip(_run_onnx(path, x, u), _expected(Updates(), x, u)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


class Dtypes(nn.Cell):
    """Float and integer arithmetic, reductions, scans and matmuls over one float and one
    integer input (ONNX lacks some of them for small integers and unsigned types)."""

    def construct(self, x, i):
        return (ops.exp(x) + ops.sigmoid(x) * ops.tanh(x), x.sum(0), x.mean(1, keep_dims=True),
                ops.softmax(x), ops.relu(x), x % 0.7, x // 0.7, ops.logsumexp(x, 0),
                ops.cumsum(x, 0), ops.argmax(x, 0), i * 3 + 1, i % 4, i // 3,
                ops.maximum(i, 2), i.sum(), i.max(), (i > 2).sum(), ops.cumsum(i, 1),
                i.astype(ms.float32) / 3, ops.abs(i), ops.neg(i), ops.sign(i), i * x,
                ops.matmul(x, x.T), ops.matmul(i, i.T), ops.pow(i, 2), ops.floor(x),
                x.prod(1), i.prod(1), ops.relu(i), ops.round(x * 4))


@pytest.mark.parametrize("fdt, idt", [(np.float64, np.int64), (np.float16, np.int32),
                                      (np.float32, np.uint8), (np.float32, np.int8),
                                      (np.float32, np.int16)])
def test_dtypes_match_minispore(tmp_path, fdt, idt):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4)).astype(fdt)
    i = rng.integers(0 if idt == np.uint8 else -5, 6, (3, 4)).astype(idt)
    _, path = _export(Dtypes(), x, i, tmp_path=tmp_path)
    tol = 2e-3 if fdt == np.float16 else 1e-5
    with np.errstate(over="ignore"):
        want = _expected(Dtypes(), x, i)
    for k, (a, b) in enumerate(zip(_run_onnx(path, x, i), want)):
        assert a.dtype == b.dtype and a.shape == b.shape, (k, a.dtype, b.dtype)
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol,
                                   atol=tol, err_msg=f"output {k}")


class Logic(nn.Cell):
    def construct(self, i, b):
        return (ops.bitwise_and(i, 6), ops.bitwise_or(i, 3), ops.bitwise_xor(i, i * 2),
                ops.logical_and(i, b), ops.logical_or(b, i > 0), ops.logical_not(b), i == 2,
                b + b, b * b, ops.where(b, i, 0.5), ops.square(i), ops.fill(ms.float32, (2,), 3.0),
                ops.arange(5), ops.zeros_like(i), ops.ones((2, 2)))


def test_bitwise_logical_and_constant_ops_match_minispore(tmp_path):
    i = np.random.default_rng(5).integers(-4, 5, (3, 4)).astype(np.int32)
    b = i % 2 == 0
    _, path = _export(Logic(), i, b, tmp_path=tmp_path)
    for k, (x, y) in enumerate(zip(_run_onnx(path, i, b), _expected(Logic(), i, b))):
        assert x.dtype == y.dtype, k
        np.testing.assert_array_equal(x, y, err_msg=f"output {k}")


class TwoInputs(nn.Cell):
    def construct(self, x, pair, half):
        a, b = pair
        return x + a * b, half * 2 + half.astype(ms.float32).astype(ms.float16), x


def test_input_names_tuples_half_and_passthrough_outputs(tmp_path):
    x = _det((2, 3), 3)
    a, b = _det((2, 3), 5), _det((1, 3), 7)
    h = _det((3,), 2).astype(np.float16)
    ms.export(TwoInputs(), ms.Tensor(x), (ms.Tensor(a), ms.Tensor(b)), ms.Tensor(h),
              file_name=str(tmp_path / "two"), file_format="ONNX")
    model = onnx.load(str(tmp_path / "two.onnx"))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["x", "pair_0", "pair_1", "half"]
    got = _run_onnx(tmp_path / "two.onnx", x, a, b, h)
    want = _expected(TwoInputs(), x, (a, b), h)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=1e-6)


class Sorts(nn.Cell):
    def construct(self, x):
        a, i = ops.sort(x, 1)
        b, j = ops.sort(x, 0, descending=True)
        return a, i, b, j


def test_sort_keeps_minispores_tie_and_nan_order(tmp_path):
    x = np.array([[1, 3, 1, np.nan, 2, 3, 1], [0, 0, -1, 5, 5, np.nan, np.nan],
                  [2, 2, 2, 2, 2, 2, 2]], np.float32)
    _, path = _export(Sorts(), x, tmp_path=tmp_path)
    for a, b in zip(_run_onnx(path, x), _expected(Sorts(), x)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


class NaNs(nn.Cell):
    def construct(self, y):
        return ops.argmax(y, 0), ops.argmin(y, 0), ops.relu(y), y.max(axis=0), y.min(axis=0)


@pytest.mark.parametrize("y, want", [
    # values from MindSpore 2.10 (CPU): a NaN is skipped by argmax/argmin and max/min unless it
    # comes first; relu gives 0
    ([0, np.nan, 1, np.nan, -1], [2, 4, [0, 0, 1, 0, 0], 1, -1]),
    ([np.nan, 3, 1], [0, 0, [0, 3, 1], np.nan, np.nan]),
    ([2, 3, np.nan], [1, 0, [2, 3, 0], 3, 2])])
def test_nan_inputs_give_mindspores_values(tmp_path, y, want):
    y = np.array(y, np.float32)
    _, path = _export(NaNs(), y, tmp_path=tmp_path)
    for got, w in zip(_run_onnx(path, y), want):
        np.testing.assert_array_equal(got, np.array(w, got.dtype))


class TopK(nn.Cell):
    def construct(self, x):
        return ops.topk(x, 2)[0] + 1


class Assigns(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = ms.Parameter(ms.Tensor(np.zeros((2, 3), np.float32)), name="p")

    def construct(self, x):
        ops.assign(self.p, x)
        return x + 1


class Branchy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x):
        if x.sum() > 0:                 # a tensor condition: an If node, ONNX If
            x = self.fc(x) * 2
        else:
            x = x - 1.5
        return x + 1


class Loopy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x, n):
        i = ms.Tensor(0, ms.int32)
        while x.sum() < 10:             # a While node, ONNX Loop (break included)
            x = x * 2 + 0.1
            if i > 3:
                break
            i = i + 1
        for _ in range(n):              # a tensor trip count: a While too
            x = self.fc(x)
        return x, i


@pytest.mark.parametrize("scale", [0.01, 100.0])
def test_tensor_while_becomes_onnx_loop(tmp_path, caller_mode, scale):
    net = Loopy()
    x, n = np.abs(_det((2, 3), 3)) * scale + 0.01, np.array(3, np.int32)
    model, path = _export(net, x, n, tmp_path=tmp_path)
    assert [n.op_type for n in model.graph.node].count("Loop") == 2
    for a, b in zip(_run_onnx(path, x, n), _expected(net, x, n)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sign", [1, -1])
def test_tensor_if_becomes_onnx_if(tmp_path, caller_mode, sign):
    net = Branchy()
    x = np.abs(_det((2, 3), 3)) * sign + 0.05 * sign
    model, path = _export(net, x, tmp_path=tmp_path)
    assert [n.op_type for n in model.graph.node].count("If") == 1
    np.testing.assert_allclose(_run_onnx(path, x)[0], _expected(net, x)[0], rtol=1e-6,
                               atol=1e-6)


def test_unsupported_nodes_name_themselves_and_their_line(tmp_path):
    x = ms.Tensor(_det((2, 3), 3))
    with pytest.raises(NotImplementedError, match=r"'topk'.*test_onnx_export\.py:\d+(.|\n)*"
                                                   r"ops\.topk\(x, 2\)(.|\n)*tie order"
                                                   r"(.|\n)*does not support"):
        ms.export(TopK(), x, file_name=str(tmp_path / "s"), file_format="ONNX")
    with pytest.raises(NotImplementedError, match=r"'Assign' node(.|\n)*ops\.assign"):
        ms.export(Assigns(), x, file_name=str(tmp_path / "s"), file_format="ONNX")
    assert not os.path.exists(tmp_path / "s.onnx")


def test_every_primitive_is_mapped_or_refused_with_a_reason():
    from minispore.train import onnx_ops, onnx_ops_nn  # noqa: F401
    names = {op.name for op in primitives()}
    mapped, refused = set(onnx_ops.CONVERTERS), set(onnx_ops.UNSUPPORTED)
    assert not mapped & refused
    assert names == mapped | refused, sorted(names ^ (mapped | refused))


def test_formats_options_and_net_type(tmp_path):
    assert ms.train.export is ms.export
    x = ms.Tensor(_det((2, 4), 3))
    f = str(tmp_path / "m")
    for fmt in ("MINDIR", "AIR"):
        with pytest.raises(NotImplementedError, match="file_format='ONNX'"):
            ms.export(MLP(), x, file_name=f, file_format=fmt)
    with pytest.raises(ValueError, match=r"must be one of \['AIR', 'ONNX', 'MINDIR'\]"):
        ms.export(MLP(), x, file_name=f, file_format="onnx")
    with pytest.raises(NotImplementedError, match="incremental"):
        ms.export(MLP(), x, file_name=f, file_format="ONNX", incremental=True)
    with pytest.raises(ValueError, match="custom_func"):
        ms.export(MLP(), x, file_name=f, file_format="ONNX", custom_func=print)
    with pytest.raises(ValueError, match="customized encryption"):
        ms.export(MLP(), x, file_name=f, file_format="ONNX", enc_key=b"0" * 16,
                  enc_mode="AES-GCM")
    with pytest.raises(ValueError, match="only support nn.Cell"):
        ms.export(lambda v: v, x, file_name=f, file_format="ONNX")
    with pytest.raises(ValueError, match="illegal"):
        ms.export(MLP(), x, file_name=str(tmp_path / "a b"), file_format="ONNX")
    # MindSpore's customized encryption: enc_mode(model bytes, enc_key) is what is written
    ms.export(MLP(), x, file_name=f, file_format="ONNX", enc_key=b"k" * 16,
              enc_mode=lambda data, key: key + data[::-1])
    data = (tmp_path / "m.onnx").read_bytes()
    assert data[:16] == b"k" * 16
    onnx.checker.check_model(onnx.load_from_string(data[16:][::-1]))


def test_file_name_suffix_and_mode(tmp_path):
    x = ms.Tensor(_det((2, 4), 3))
    # as MindSpore 2.10: ".onnx" appended unless the name ends with it, missing folders made,
    # the file left read-only for its owner (and overwritten by a second export)
    for given, written in (("plain", "plain.onnx"), ("two.x", "two.x.onnx"),
                           ("sub/dir/m.onnx", "sub/dir/m.onnx")):
        ms.export(MLP(), x, file_name=str(tmp_path / given), file_format="ONNX")
        path = tmp_path / written
        assert path.exists(), written
        assert stat.S_IMODE(os.stat(path).st_mode) == stat.S_IRUSR
    ms.export(MLP(), x, file_name=str(tmp_path / "plain"), file_format="ONNX")
    onnx.checker.check_model(onnx.load(str(tmp_path / "plain.onnx")))


def test_onnx_is_imported_only_by_export(tmp_path, monkeypatch):
    code = "import sys, minispore; print('onnx' in sys.modules or 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert out.stdout.strip() == "False", out.stderr
    monkeypatch.setitem(sys.modules, "onnx", None)          # as if it were not installed
    with pytest.raises(ImportError, match=r'pip install "minispore\[onnx\]"'):
        ms.export(MLP(), ms.Tensor(_det((2, 4), 3)), file_name=str(tmp_path / "m"),
                  file_format="ONNX")


class Pair(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)

    def construct(self, x, y):
        return self.fc(x) + y, x * 2


def test_mindspore_onnx_export_names_and_parameter_options(tmp_path):
    import minispore.onnx as ms_onnx
    net, x, y = Pair(), _det((2, 3), 3), _det((2, 2), 5)
    want = _expected(net, x, y)
    # as MindSpore 2.10's mindspore.onnx.export: the given names first, defaults after
    ms_onnx.export(net, ms.Tensor(x), ms.Tensor(y), file_name=str(tmp_path / "named"),
                   input_names=["a"], output_names=["p", "q"])
    g = onnx.load(str(tmp_path / "named.onnx")).graph
    assert [i.name for i in g.input] == ["a", "y"] and [o.name for o in g.output] == ["p", "q"]
    assert [i.name for i in g.initializer][:2] == ["fc.weight", "fc.bias"]
    # export_params=False: the Parameters are inputs after the data; keep_initializers_as_inputs:
    # inputs and initializers both
    ms_onnx.export(net, ms.Tensor(x), ms.Tensor(y), file_name=str(tmp_path / "bare"),
                   export_params=False)
    g = onnx.load(str(tmp_path / "bare.onnx")).graph
    assert [i.name for i in g.input] == ["x", "y", "fc.weight", "fc.bias"]
    assert not [i.name for i in g.initializer if i.name.startswith("fc.")]
    w, b = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
    for got, ref in zip(_run_onnx(tmp_path / "bare.onnx", x, y, w, b), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)
    ms_onnx.export(net, ms.Tensor(x), ms.Tensor(y), file_name=str(tmp_path / "both.onnx"),
                   keep_initializers_as_inputs=True)
    model = onnx.load(str(tmp_path / "both.onnx"))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["x", "y", "fc.weight", "fc.bias"]
    assert [i.name for i in model.graph.initializer][:2] == ["fc.weight", "fc.bias"]
    for bad, err in ((dict(input_names="a"), ValueError), (dict(dynamic_axes=[0]), ValueError),
                     (dict(dynamic_axes={"x": {0: "batch"}}), NotImplementedError),
                     (dict(input_names=["a", "b", "c"]), ValueError),
                     (dict(output_names=["x"]), ValueError)):
        with pytest.raises(err, match=next(iter(bad))):
            ms_onnx.export(net, ms.Tensor(x), ms.Tensor(y), file_name=str(tmp_path / "e"),
                           **bad)
