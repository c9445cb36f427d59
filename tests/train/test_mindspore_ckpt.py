"""MindSpore's own checkpoint files: files written by MindSpore 2.10.0 (tests/fixtures/
mindspore_ckpt, see its README) load into the same network built with minispore and give
MindSpore's output, and minispore writes the same bytes MindSpore writes."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import minispore as ms
from minispore import nn
from helpers import graph_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mindspore_ckpt"


class LeNet(nn.Cell):
    """The network of the fixtures' make_fixtures.py."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.bn = nn.BatchNorm2d(6)
        self.fc = nn.Dense(6 * 4 * 4, 10)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flat = nn.Flatten()

    def construct(self, x):
        return self.fc(self.flat(self.pool(self.relu(self.bn(self.conv1(x))))))


def _expected():
    return dict(np.load(FIXTURES / "lenet_params.npz"))


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors"])
def test_a_mindspore_checkpoint_reproduces_mindspores_output(fmt, mode):
    params = ms.load_checkpoint(str(FIXTURES / f"lenet.{fmt}"), format=fmt)
    expected = _expected()
    assert sorted(params) == sorted(expected)
    for name, a in expected.items():
        assert isinstance(params[name], ms.Parameter) and params[name].name == name
        np.testing.assert_array_equal(params[name].asnumpy(), a)
    net = LeNet()
    assert ms.load_param_into_net(net, params) == ([], [])
    net.set_train(False)
    x = ms.Tensor(np.load(FIXTURES / "lenet_input.npy"))
    with graph_runs("the loaded LeNet"):
        y = net(x).asnumpy()
    # the eval output MindSpore 2.10 computed with these weights (lenet_output_eval.npy)
    np.testing.assert_allclose(y, np.load(FIXTURES / "lenet_output_eval.npy"), rtol=1e-5,
                               atol=1e-6)


def test_load_checkpoint_with_net_loads_and_gives_mindspores_gradients(mode):
    net = LeNet()
    params = ms.load_checkpoint(str(FIXTURES / "lenet.ckpt"), net=net)
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), _expected()["fc.weight"])
    assert params["fc.weight"].requires_grad
    net.set_train(False)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    loss_net.set_train(False)
    weights = net.trainable_params()
    assert [p.name for p in weights] == ["conv1.weight", "bn.gamma", "bn.beta", "fc.weight",
                                         "fc.bias"]
    x = ms.Tensor(np.load(FIXTURES / "lenet_input.npy"))
    with graph_runs("the gradient of the loaded LeNet"):
        g = ms.grad(loss_net, grad_position=None, weights=weights)(
            x, ms.Tensor(np.zeros((2, 10), np.float32)))
    # values from MindSpore 2.10 (the same net, checkpoint, input and loss)
    np.testing.assert_allclose(g[2].asnumpy(), [0.088645615, 0.038724795, -0.039422326,
                                                0.05601771, 0.1534984, 0.042130977],
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(g[4].asnumpy(), [0.059443712, -0.1037426, 0.016566414,
                                                0.018821636, 0.04530529, 0.04389213,
                                                0.15992612, -0.08290021, -0.036291715,
                                                0.054737758], rtol=1e-5, atol=1e-7)


def test_every_dtype_and_the_append_dict_of_a_mindspore_file():
    got = ms.load_checkpoint(str(FIXTURES / "dtypes.ckpt"))
    # what MindSpore 2.10's load_checkpoint returns for this file (make_fixtures.py)
    expected = {"f16": (ms.float16, (2, 3)), "i32": (ms.int32, (3,)), "i64": (ms.int64, (1, 1)),
                "bf16": (ms.bfloat16, (2,)), "b": (ms.bool_, (2,)), "scalar": (ms.float32, ()),
                "epoch_num": (ms.int64, ()), "step_num": (ms.int64, ())}
    assert list(got) == list(expected)
    for name, (dtype, shape) in expected.items():
        assert isinstance(got[name], ms.Parameter), name        # appended scalars too
        assert got[name].dtype is dtype and got[name].shape == shape, name
    assert got["f16"].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert got["i32"].asnumpy().tolist() == [1, -2, 3]
    assert got["bf16"].astype(ms.float32).asnumpy().tolist() == [1.5, -2.25]
    assert got["b"].asnumpy().tolist() == [True, False]
    assert float(got["scalar"].asnumpy()) == 3.5
    assert int(got["epoch_num"].asnumpy()) == 3 and int(got["step_num"].asnumpy()) == 42


def test_minispore_writes_the_bytes_mindspore_writes(tmp_path):
    params = ms.load_checkpoint(str(FIXTURES / "lenet.ckpt"))
    ms.save_checkpoint(params, str(tmp_path / "lenet.ckpt"))
    assert (tmp_path / "lenet.ckpt").read_bytes() == (FIXTURES / "lenet.ckpt").read_bytes()
    net = LeNet()
    ms.load_param_into_net(net, params)
    ms.save_checkpoint(net, str(tmp_path / "net.ckpt"))
    assert (tmp_path / "net.ckpt").read_bytes() == (FIXTURES / "lenet.ckpt").read_bytes()
    ms.save_checkpoint(params, str(tmp_path / "crc.ckpt"), crc_check=True)
    assert (tmp_path / "crc.ckpt").read_bytes() == (FIXTURES / "lenet_crc.ckpt").read_bytes()

    d = ms.load_checkpoint(str(FIXTURES / "dtypes.ckpt"))
    items = [{"name": k, "data": v} for k, v in d.items() if not k.endswith("_num")]
    ms.save_checkpoint(items, str(tmp_path / "dtypes.ckpt"),
                       append_dict={"epoch_num": 3, "step_num": 42})
    assert (tmp_path / "dtypes.ckpt").read_bytes() == (FIXTURES / "dtypes.ckpt").read_bytes()


def test_minispore_safetensors_hold_what_mindspores_hold(tmp_path):
    from safetensors import safe_open
    params = ms.load_checkpoint(str(FIXTURES / "lenet.safetensors"), format="safetensors")
    ms.save_checkpoint(params, str(tmp_path / "lenet"), format="safetensors")
    with safe_open(str(FIXTURES / "lenet.safetensors"), "numpy") as theirs, \
            safe_open(str(tmp_path / "lenet.safetensors"), "numpy") as ours:
        assert ours.metadata() == theirs.metadata() == {"format": "ms"}
        assert sorted(ours.keys()) == sorted(theirs.keys())
        for k in theirs.keys():
            np.testing.assert_array_equal(ours.get_tensor(k), theirs.get_tensor(k))


def test_mindspores_crc_is_checked(tmp_path):
    assert len(ms.load_checkpoint(str(FIXTURES / "lenet_crc.ckpt"), crc_check=True)) == 7
    damaged = bytearray((FIXTURES / "lenet_crc.ckpt").read_bytes())
    damaged[200] ^= 0x01                               # a bit of conv1.weight's content
    (tmp_path / "d.ckpt").write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match=r"CRC32 check of .*d\.ckpt.* failed"):
        ms.load_checkpoint(str(tmp_path / "d.ckpt"), crc_check=True)
    assert len(ms.load_checkpoint(str(tmp_path / "d.ckpt"))) == 7    # unchecked: loads


def test_choice_func_and_prefixes_on_a_mindspore_file():
    path = str(FIXTURES / "lenet.ckpt")
    assert list(ms.load_checkpoint(path, choice_func=lambda n: n.startswith("bn."))) == \
        ["bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta"]
    assert list(ms.load_checkpoint(path, specify_prefix=["fc", "conv"])) == \
        ["conv1.weight", "fc.weight", "fc.bias"]
    assert list(ms.load_checkpoint(path, filter_prefix=("bn", "fc.b"))) == \
        ["conv1.weight", "fc.weight"]


def test_a_mindspore_file_under_a_wrong_format_or_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"must end with format='ckpt'.*'safetensors' format"):
        ms.load_checkpoint(str(FIXTURES / "lenet.safetensors"))
    with pytest.raises(ValueError, match=r"must end with format='safetensors'.*'ckpt' format"):
        ms.load_checkpoint(str(FIXTURES / "lenet.ckpt"), format="safetensors")
    shutil.copy(FIXTURES / "lenet.safetensors", tmp_path / "st.ckpt")
    shutil.copy(FIXTURES / "lenet.ckpt", tmp_path / "pb.safetensors")
    with pytest.raises(ValueError, match=r"st\.ckpt' is a safetensors file.*format='safetensors'"):
        ms.load_checkpoint(str(tmp_path / "st.ckpt"))
    with pytest.raises(ValueError, match=r"pb\.safetensors' is not a safetensors file: it looks "
                                         r"like MindSpore's protobuf \.ckpt"):
        ms.load_checkpoint(str(tmp_path / "pb.safetensors"), format="safetensors")
