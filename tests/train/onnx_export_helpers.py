"""Shared pieces of the ONNX export tests (test_onnx_export.py, test_onnx_export_ops.py):
deterministic inputs, export-and-load, running the model with onnxruntime, minispore's own
outputs for the same inputs, and the caller-mode fixture."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def det(shape, k):
    """Deterministic small values (the same formula fed MindSpore for the reference)."""
    return ((np.arange(int(np.prod(shape))).reshape(shape) * k % 11 - 5) / 10).astype(np.float32)


def f32(*shape):
    """Standard normal float32 values, the same for every call with one shape."""
    return np.random.default_rng(3).standard_normal(shape).astype(np.float32)


def export_and_load(net, *xs, tmp_path, name="net"):
    """ms.export to tmp_path/name.onnx, loaded and checked: (model, path)."""
    ms.export(net, *[ms.Tensor(x) for x in xs], file_name=str(tmp_path / name),
              file_format="ONNX")
    path = tmp_path / f"{name}.onnx"
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    return model, path


def run_onnx(path, *xs):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})


def tensors(x):
    return tuple(tensors(a) for a in x) if isinstance(x, tuple) else ms.Tensor(x)


def expected(net, *xs):
    """minispore's outputs of the net in inference mode, as a list of arrays."""
    net.set_train(False)
    out = net(*[tensors(x) for x in xs])
    return [o.asnumpy() for o in (out if isinstance(out, tuple) else (out,))]


def randomize_bn(net, seed=0):
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

