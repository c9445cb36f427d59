"""ms.export(net, *inputs, file_name=, file_format="ONNX") (train/onnx_export.py): the exported
model passes onnx.checker and, run by onnxruntime on the same inputs, gives minispore's outputs
(and MindSpore 2.10's for fixed-weight nets); export works from either mode of the caller;
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
from minispore.core.primitive import primitives
from onnx_export_helpers import (caller_mode, det, expected, export_and_load,  # noqa: F401
                                 onnx, randomize_bn, run_onnx)


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


def test_mlp_gives_mindspores_numbers(tmp_path, caller_mode):
    net = MLP()
    for i, p in enumerate(net.trainable_params()):
        p.set_data(ms.Tensor(det(p.shape, 3 + i)))
    x = det((2, 4), 7)
    model, path = export_and_load(net, x, tmp_path=tmp_path)
    got = run_onnx(path, x)[0]
    # values from MindSpore 2.10 (the same weights and input)
    want = np.array([[0.25815722, 0.36016768, 0.3816751],
                     [0.29735082, 0.4485021, 0.25414708]], np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, expected(net, x)[0], rtol=1e-6, atol=1e-6)
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
        v = det(p.shape, 3 + k)
        p.set_data(ms.Tensor(np.abs(v) + 0.5 if "variance" in p.name or "beta" in p.name
                             else v))
    x = det((1, 1, 8, 8), 7)
    _, path = export_and_load(net, x, tmp_path=tmp_path)
    # values from MindSpore 2.10 (the same parameters and input)
    want = np.array([[0.48764533, -0.29026368, -0.53881174]], np.float32)
    np.testing.assert_allclose(run_onnx(path, x)[0], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make, shape", [(LeNet, (2, 1, 10, 10)), (Residual, (2, 4, 9, 9))])
def test_conv_nets_match_minispore(tmp_path, caller_mode, make, shape):
    net = randomize_bn(make())
    net.set_train(True)
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    model, path = export_and_load(net, x, tmp_path=tmp_path)
    assert net.training, "export restores the Cell's training flag"
    ops_used = {n.op_type for n in model.graph.node}
    assert "Dropout" not in ops_used and "BatchNormalization" in ops_used
    got = run_onnx(path, x)[0]
    np.testing.assert_allclose(got, expected(net, x)[0], rtol=1e-5, atol=1e-5)


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
    x, n = np.abs(det((2, 3), 3)) * scale + 0.01, np.array(3, np.int32)
    model, path = export_and_load(net, x, n, tmp_path=tmp_path)
    assert [n.op_type for n in model.graph.node].count("Loop") == 2
    for a, b in zip(run_onnx(path, x, n), expected(net, x, n)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sign", [1, -1])
def test_tensor_if_becomes_onnx_if(tmp_path, caller_mode, sign):
    net = Branchy()
    x = np.abs(det((2, 3), 3)) * sign + 0.05 * sign
    model, path = export_and_load(net, x, tmp_path=tmp_path)
    assert [n.op_type for n in model.graph.node].count("If") == 1
    np.testing.assert_allclose(run_onnx(path, x)[0], expected(net, x)[0], rtol=1e-6,
                               atol=1e-6)


def test_unsupported_nodes_name_themselves_and_their_line(tmp_path):
    x = ms.Tensor(det((2, 3), 3))
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
    x = ms.Tensor(det((2, 4), 3))
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
    x = ms.Tensor(det((2, 4), 3))
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
        ms.export(MLP(), ms.Tensor(det((2, 4), 3)), file_name=str(tmp_path / "m"),
                  file_format="ONNX")


class Pair(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)

    def construct(self, x, y):
        return self.fc(x) + y, x * 2


def test_mindspore_onnx_export_names_and_parameter_options(tmp_path):
    import minispore.onnx as ms_onnx
    net, x, y = Pair(), det((2, 3), 3), det((2, 2), 5)
    want = expected(net, x, y)
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
    for got, ref in zip(run_onnx(tmp_path / "bare.onnx", x, y, w, b), want):
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

