"""ms.export(file_format="ONNX") op by op: the primitives' converters (onnx_ops.py,
onnx_ops_nn.py) over many layers, dtypes, updates, sorting and NaN inputs; each exported model
passes onnx.checker and, run by onnxruntime, gives minispore's outputs (or MindSpore 2.10's
where stated)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core.primitive import REGISTRY, apply
from onnx_export_helpers import (caller_mode, det, expected, export_and_load,  # noqa: F401
                                 f32, onnx, run_onnx)


class OpZoo(nn.Cell):
    """Most mapped primitives once, each as a separate output."""

    def __init__(self):
        super().__init__()
        self.gelu = nn.GELU(approximate=False)
        self.gelu_tanh = nn.GELU()
        self.ln = nn.LayerNorm((6,))
        self.idx = ms.Tensor(np.array([0, 2, -1], np.int32))
        self.w = ms.Parameter(ms.Tensor(det((2, 5, 6), 3)), name="w")

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


def test_op_zoo_matches_minispore(tmp_path, caller_mode):
    net = OpZoo()
    x = np.random.default_rng(2).uniform(-1, 1, (4, 6)).astype(np.float32)
    _, path = export_and_load(net, x, tmp_path=tmp_path)
    got, want = run_onnx(path, x), expected(net, x)
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
    net, x = make(), f32(*shape)
    _, path = export_and_load(net, x, tmp_path=tmp_path)
    for a, b in zip(run_onnx(path, x), expected(net, x)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_embedding_takes_integer_input(tmp_path):
    net, ids = nn.Embedding(10, 4), np.array([[1, 2], [9, 0]], np.int32)
    model, path = export_and_load(net, ids, tmp_path=tmp_path)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT32
    np.testing.assert_array_equal(run_onnx(path, ids)[0], expected(net, ids)[0])


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
    x, u = f32(4, 4), f32(4, 2, 2)
    _, path = export_and_load(Updates(), x, u, tmp_path=tmp_path)
    for a, b in zip(run_onnx(path, x, u), expected(Updates(), x, u)):
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
    _, path = export_and_load(Dtypes(), x, i, tmp_path=tmp_path)
    tol = 2e-3 if fdt == np.float16 else 1e-5
    with np.errstate(over="ignore"):
        want = expected(Dtypes(), x, i)
    for k, (a, b) in enumerate(zip(run_onnx(path, x, i), want)):
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
    _, path = export_and_load(Logic(), i, b, tmp_path=tmp_path)
    for k, (x, y) in enumerate(zip(run_onnx(path, i, b), expected(Logic(), i, b))):
        assert x.dtype == y.dtype, k
        np.testing.assert_array_equal(x, y, err_msg=f"output {k}")


class TwoInputs(nn.Cell):
    def construct(self, x, pair, half):
        a, b = pair
        return x + a * b, half * 2 + half.astype(ms.float32).astype(ms.float16), x


def test_input_names_tuples_half_and_passthrough_outputs(tmp_path):
    x = det((2, 3), 3)
    a, b = det((2, 3), 5), det((1, 3), 7)
    h = det((3,), 2).astype(np.float16)
    ms.export(TwoInputs(), ms.Tensor(x), (ms.Tensor(a), ms.Tensor(b)), ms.Tensor(h),
              file_name=str(tmp_path / "two"), file_format="ONNX")
    model = onnx.load(str(tmp_path / "two.onnx"))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["x", "pair_0", "pair_1", "half"]
    got = run_onnx(tmp_path / "two.onnx", x, a, b, h)
    want = expected(TwoInputs(), x, (a, b), h)
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
    _, path = export_and_load(Sorts(), x, tmp_path=tmp_path)
    for a, b in zip(run_onnx(path, x), expected(Sorts(), x)):
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
    _, path = export_and_load(NaNs(), y, tmp_path=tmp_path)
    for got, w in zip(run_onnx(path, y), want):
        np.testing.assert_array_equal(got, np.array(w, got.dtype))




class WideUnsigned(nn.Cell):
    """The ops whose ONNX kernels take no UInt16/UInt32 (reductions, CumSum, MatMul, Pow,
    Max/Min, Relu), computed in int64 (onnx_ops.wide_int), beside ones that take them."""

    def construct(self, i):
        small = i % 7 + 1
        return (i.sum(), i.sum(1), i.max(), i.min(axis=0), i.mean(1), small.prod(1),
                ops.cumsum(i, 1), ops.matmul(small, small.T), ops.maximum(i, i[::-1]),
                ops.minimum(i, i[::-1]), ops.relu(i), ops.pow(small, small % 3), i + i,
                i // small, i % small, i < i[::-1])


@pytest.mark.parametrize("udt", [np.uint16, np.uint32])
def test_wide_unsigned_ints_compute_in_int64_as_the_small_ints(tmp_path, udt):
    top = int(np.iinfo(udt).max)
    i = np.array([[1, 5, top, top // 2 + 3], [top // 2, 2, 7, 0], [3, top - 1, 4, top // 2 + 1]],
                 udt)
    _, path = export_and_load(WideUnsigned(), i, tmp_path=tmp_path)
    with np.errstate(over="ignore"):
        want = expected(WideUnsigned(), i)
    for k, (a, b) in enumerate(zip(run_onnx(path, i), want)):
        assert a.dtype == b.dtype and a.shape == b.shape, (k, a.dtype, b.dtype)
        np.testing.assert_array_equal(a, b, err_msg=f"output {k}")
