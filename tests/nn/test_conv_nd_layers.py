"""nn.Conv1d, nn.Conv3d, nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose and the ops
convolutions beyond conv2d (ops.conv1d/conv3d/conv3d_transpose/conv_transpose2d, ops.Conv2D,
Conv2DBackpropInput, Conv2DTranspose, Conv3D, Conv3DTranspose) against MindSpore 2.10's numbers
(tests/nn/conv_nd_expected.py: forward values and the gradients of the input, weight and bias,
every pad_mode, stride 2, dilation 2, group 2, output_padding 1), in PyNative and GRAPH_MODE;
MindSpore's weight shapes, default initialisers, parameter names and argument errors; mint's
convolutions on the same composites; the simulated Ascend."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minispore as ms
from minispore import mint, nn, ops
from minispore.core.tensor import Tensor

from conv_nd_expected import (CONFIGS, EXPECTED, OPS_EXPECTED, TORCH_EXPECTED, det,
                              fingerprint)
from helpers import graph_runs, in_mode

MODES = ["pynative", "graph"]


def _weight_shape(cls, kw):
    nd = {"Conv1d": 1, "Conv1dTranspose": 1, "Conv2dTranspose": 2, "Conv3d": 3,
          "Conv3dTranspose": 3}[cls]
    k = kw["kernel_size"]
    k = (k,) * nd if isinstance(k, int) else tuple(k)
    g = kw.get("group", 1)
    if "Transpose" in cls:
        return (kw["in_channels"], kw["out_channels"] // g) + k
    return (kw["out_channels"], kw["in_channels"] // g) + k


def _close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=5e-5, err_msg=what)


# ---------------------------------------------------------------- layers against MindSpore -------
# each configuration compiles its own gradient graph of the same function: the recompile
# warning counts them, which is what this test means to do
@pytest.mark.filterwarnings("ignore:graph 'grad_loss' has been compiled")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,cls,kw,xs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_layer_forward_and_grads_match_mindspore(mode, name, cls, kw, xs):
    x = det(xs, 0.37, 0.1)
    w = det(_weight_shape(cls, kw), 0.23, 0.4, 0.5)
    b = det((kw["out_channels"],), 0.9, 0.2, 0.3)
    net = getattr(nn, cls)(**kw, weight_init=Tensor(w),
                           bias_init=Tensor(b) if kw.get("has_bias") else None)
    want = EXPECTED[name]
    with graph_runs(f"{cls} forward"):
        out = net(Tensor(x)).asnumpy()
    assert out.shape == want["shape"]
    _close(out.ravel()[:4], want["head"], f"{name} out[:4]")
    _close(fingerprint(out), want["out"], f"{name} out")
    cot = Tensor(det(out.shape, 0.71, 0.5))

    def loss(t):
        return (net(t) * cot).sum()

    with graph_runs(f"{cls} gradient"):
        dx, dws = ms.grad(loss, grad_position=0, weights=net.trainable_params())(Tensor(x))
    _close(fingerprint(dx.asnumpy()), want["dx"], f"{name} d input")
    _close(fingerprint(dws[0].asnumpy()), want["dw"], f"{name} d weight")
    if kw.get("has_bias"):
        _close(fingerprint(dws[1].asnumpy()), want["db"], f"{name} d bias")


def test_conv2d_transpose_output_padding_appends_zeros_after_the_bias():
    """MindSpore's nn.Conv2dTranspose pads its result with ops.Pad: the output_padding row and
    column hold zeros, not the convolution's values plus the bias (values from MindSpore 2.10:
    t2_pad_op1's last row and column are exactly 0)."""
    name, cls, kw, xs = next(c for c in CONFIGS if c[0] == "t2_pad_op1")
    net = nn.Conv2dTranspose(**kw, bias_init="ones")
    out = net(Tensor(det(xs, 0.37, 0.1))).asnumpy()
    assert out.shape == EXPECTED[name]["shape"]
    assert np.all(out[:, :, -1, :] == 0) and np.all(out[:, :, :, -1] == 0)
    assert np.all(out[:, :, :-1, :-1] != 0)


def test_conv3d_transpose_output_padding_holds_real_outputs():
    """Conv3dTranspose (ops.Conv3DTranspose) extends the transposed convolution itself: its
    output_padding planes are outputs plus the bias (values from MindSpore 2.10 differ from 0
    there), unlike Conv2dTranspose's."""
    name, cls, kw, xs = next(c for c in CONFIGS if c[0] == "t3_pad_op1_g2")
    net = nn.Conv3dTranspose(**kw, weight_init=Tensor(det(_weight_shape(cls, kw), 0.23, 0.4,
                                                          0.5)), bias_init="zeros")
    out = net(Tensor(det(xs, 0.37, 0.1))).asnumpy()
    assert out.shape == EXPECTED[name]["shape"]
    assert np.abs(out[:, :, -1]).max() > 0.1 and np.abs(out[..., -1]).max() > 0.1


# ---------------------------------------------------------------- ops against MindSpore ----------
def _ops_calls():
    x1, w1, b1 = det((2, 4, 7), 0.37, 0.1), det((2, 2, 3), 0.23, 0.4, 0.5), det((2,), 0.9, 0.2,
                                                                                0.3)
    x2, w2 = det((1, 2, 5, 5), 0.37, 0.1), det((3, 2, 3, 2), 0.23, 0.4, 0.5)
    x3, w3 = det((1, 2, 4, 5, 4), 0.37, 0.1), det((4, 1, 2, 3, 2), 0.23, 0.4, 0.5)
    b4 = det((4,), 0.9, 0.2, 0.3)
    dy2a, dy2b = det((1, 3, 3, 3), 0.3, 0.2), det((1, 3, 3, 4), 0.3, 0.2)
    dy3, w3t = det((1, 4, 2, 3, 2), 0.3, 0.2), det((4, 2, 2, 3, 2), 0.23, 0.4, 0.5)
    return {
        "ops.conv1d": (lambda x, w, b: ops.conv1d(x, w, b, stride=2, pad_mode="pad", padding=1,
                                                  dilation=2, groups=2), (x1, w1, b1)),
        "ops.conv1d_same": (lambda x, w: ops.conv1d(x, w, None, stride=2, pad_mode="same",
                                                    groups=2), (x1, w1)),
        "ops.conv3d": (lambda x, w, b: ops.conv3d(x, w, b, stride=(2, 1, 2), pad_mode="pad",
                                                  padding=(1, 0, 1), groups=2), (x3, w3, b4)),
        "ops.conv3d_same": (lambda x, w: ops.conv3d(x, w, None, stride=2, pad_mode="same",
                                                    dilation=(1, 2, 1), groups=2), (x3, w3)),
        "Conv2D": (lambda x, w: ops.Conv2D(3, (3, 2), pad_mode="pad", pad=(1, 0, 0, 1),
                                           stride=2)(x, w), (x2, w2)),
        "Conv2DBackpropInput": (lambda d, w: ops.Conv2DBackpropInput(
            3, (3, 2), pad_mode="same", stride=2)(d, w, (1, 2, 5, 6)), (dy2a, w2)),
        "Conv2DTranspose": (lambda d, w: ops.Conv2DTranspose(
            3, (3, 2), pad_mode="pad", pad=1, dilation=2)(d, w, (1, 2, 5, 4)), (dy2b, w2)),
        "Conv3D": (lambda x, w: ops.Conv3D(4, (2, 3, 2), pad_mode="same", stride=(1, 2, 1),
                                           group=2)(x, w), (x3, w3)),
        "Conv3DTranspose": (lambda d, w: ops.Conv3DTranspose(
            4, 2, (2, 3, 2), pad_mode="pad", pad=(1, 0, 1, 1, 0, 0), stride=2, group=2,
            output_padding=(1, 0, 1))(d, w), (dy3, w3)),
        "ops.conv3d_transpose": (lambda d, w: ops.conv3d_transpose(
            d, w, pad_mode="same", stride=(2, 1, 2)), (dy3, w3t)),
    }


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(OPS_EXPECTED))
def test_ops_match_mindspore(mode, name):
    fn, args = _ops_calls()[name]
    out = in_mode(fn, *[Tensor(a) for a in args]).asnumpy()
    shape, fp = OPS_EXPECTED[name]
    assert out.shape == shape
    _close(fingerprint(out), fp, name)


@pytest.mark.parametrize("mode", MODES)
def test_ops_conv_transpose2d_matches_pytorch(mode):
    """MindSpore 2.10 has no CPU kernel for ops.conv_transpose2d; it documents PyTorch's rules
    (output_padding rows are real outputs), so the values are PyTorch's."""
    x, w = det((1, 4, 3, 3), 0.3, 0.2), det((4, 1, 3, 2), 0.23, 0.4, 0.5)
    b = det((2,), 0.9, 0.2, 0.3)
    out = in_mode(lambda x, w, b: ops.conv_transpose2d(x, w, b, stride=2, padding=(1, 0),
                                                       output_padding=1, groups=2,
                                                       dilation=(1, 2)),
                  Tensor(x), Tensor(w), Tensor(b)).asnumpy()
    shape, fp = TORCH_EXPECTED["conv_transpose2d"]
    assert out.shape == shape
    _close(fingerprint(out), fp, "conv_transpose2d")
    out = ops.conv_transpose2d(Tensor(x[0]), Tensor(w), None, stride=(1, 2), padding=1)
    shape, fp = TORCH_EXPECTED["conv_transpose2d_unbatched"]
    assert out.shape == shape
    _close(fingerprint(out.asnumpy()), fp, "conv_transpose2d unbatched")
    np.testing.assert_allclose(
        mint.nn.functional.conv_transpose2d(Tensor(x[0]), Tensor(w), None, (1, 2), 1).asnumpy(),
        out.asnumpy(), rtol=0, atol=0)


# ---------------------------------------------------------------- parameters and defaults --------
@pytest.mark.parametrize("make,shape,fan_in", [
    (lambda: nn.Conv1d(4, 6, 3, has_bias=True), (6, 4, 1, 3), 12),
    (lambda: nn.Conv3d(4, 6, 3, has_bias=True), (6, 4, 3, 3, 3), 108),
    (lambda: nn.Conv1dTranspose(4, 6, 3, has_bias=True), (4, 6, 1, 3), 18),
    (lambda: nn.Conv2dTranspose(4, 6, 3, has_bias=True), (4, 6, 3, 3), 54),
    (lambda: nn.Conv2dTranspose(4, 6, 3, group=2, has_bias=True), (4, 3, 3, 3), 27),
    (lambda: nn.Conv3dTranspose(4, 6, 3, has_bias=True), (4, 6, 3, 3, 3), 162),
])
def test_weight_shapes_and_default_initialisers_are_mindspores(make, shape, fan_in):
    """Weight shapes from MindSpore 2.10 (Conv1d's and Conv1dTranspose's are 4-D with a unit
    height; a transposed weight is (C_in, C_out / group, ...)); HeUniform(sqrt(5)) and the bias
    Uniform(1 / sqrt(fan_in)) with fan_in from the weight's own shape (MindSpore 2.10's maxima
    0.288 for Conv1d, 0.0959 Conv3d, 0.233 Conv1dTranspose, 0.135 Conv2dTranspose, 0.191 with
    group 2, 0.0785 Conv3dTranspose)."""
    ms.set_seed(0)
    net = make()
    assert [p.name for p in net.get_parameters()] == ["weight", "bias"]
    assert tuple(net.weight.shape) == shape
    bound = 1 / math.sqrt(fan_in)
    w, b = np.abs(net.weight.asnumpy()), np.abs(net.bias.asnumpy())
    assert w.max() <= bound and w.max() > 0.8 * bound
    assert b.max() <= bound and net.bias.shape == (shape[0] if "Transpose" not in
                                                   type(net).__name__ else shape[1] *
                                                   net.group,)


@pytest.mark.parametrize("cls", ["Conv1d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose",
                                 "Conv3dTranspose"])
def test_has_bias_defaults_to_false_and_pad_mode_to_same(cls):
    net = getattr(nn, cls)(2, 2, 3)
    assert net.bias is None and net.has_bias is False and net.pad_mode == "same"
    assert [p.name for p in net.get_parameters()] == ["weight"]


def test_conv1d_takes_a_3d_tensor_weight_init_as_mindspore():
    w = det((3, 2, 2), 0.3, 0.1)
    net = nn.Conv1d(2, 3, 2, pad_mode="valid", weight_init=Tensor(w))
    assert net.weight.shape == (3, 2, 1, 2)
    np.testing.assert_array_equal(net.weight.asnumpy()[:, :, 0], w)
    x = det((1, 2, 4), 0.2, 0.3)
    want = np.stack([np.einsum("ck,ck->", x[0, :, i:i + 2], w[o]) for o in range(3)
                     for i in range(3)]).reshape(1, 3, 3)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_repr_names_the_geometry():
    r = repr(nn.Conv1d(4, 6, 3, stride=2))
    assert "kernel_size=(1, 3)" in r and "stride=(1, 2)" in r and "padding=(0, 0, 0, 0)" in r
    assert "output_channels=6" in repr(nn.Conv3dTranspose(4, 6, 3))


# ---------------------------------------------------------------- argument errors ----------------
@pytest.mark.parametrize("make,err,words", [
    (lambda: nn.Conv1d(2, 2, (3,)), TypeError, ["kernel_size", "int"]),
    (lambda: nn.Conv1d(2, 2, 3, padding=1), ValueError, ["padding=1", "pad_mode='pad'"]),
    (lambda: nn.Conv3d(2, 2, 3, pad_mode="pad", padding=(1, 1, 1)), ValueError,
     ["padding", "6"]),
    (lambda: nn.Conv3d(2, 2, 3, data_format="NDHWC"), ValueError, ["data_format", "NCDHW"]),
    (lambda: nn.Conv3d(3, 4, 3, group=2), ValueError, ["in_channels=3", "group=2"]),
    (lambda: nn.Conv2dTranspose(2, 2, 3, stride=2, output_padding=1), ValueError,
     ["output_padding", "pad_mode='pad'"]),
    (lambda: nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", output_padding=2),
     ValueError, ["output_padding", "max(stride, dilation)"]),
    (lambda: nn.Conv2dTranspose(2, 2, 3, pad_mode="pad", padding=(1, 1)), ValueError,
     ["padding", "4"]),
    (lambda: nn.Conv3dTranspose(2, 2, 3, stride=2, output_padding=1), ValueError,
     ["output_padding", "pad_mode='pad'"]),
    (lambda: ops.Conv2D(4, 3)(Tensor(np.ones((1, 2, 5, 5), np.float32)),
                              Tensor(np.ones((3, 2, 3, 3), np.float32))), ValueError,
     ["w_shape[0]", "out_channel"]),
    (lambda: ops.Conv2DBackpropInput(3, 3, pad_list=(1, 1, 1, 1)), NotImplementedError,
     ["pad_list"]),
    (lambda: ops.Conv3D(2, 2, mode=2), ValueError, ["mode"]),
    (lambda: ops.conv1d(Tensor(np.ones((1, 2, 5), np.float32)),
                        Tensor(np.ones((2, 2, 1, 3), np.float32))), ValueError,
     ["weight", "3-D"]),
    (lambda: nn.Conv1d(2, 2, 3)(Tensor(np.ones((2, 5), np.float32))), ValueError,
     ["Conv1d", "3-D"]),
])
def test_argument_errors_name_the_argument(make, err, words):
    with pytest.raises(err) as e:
        make()
    for w in words:
        assert w in str(e.value), f"{w!r} not in {e.value}"


# ---------------------------------------------------------------- mint and the simulated Ascend --
@pytest.mark.parametrize("mode", MODES)
def test_mint_convolutions_run_the_same_composites(mode):
    x1, w1 = det((2, 4, 7), 0.37, 0.1), det((2, 2, 3), 0.23, 0.4, 0.5)
    F = mint.nn.functional
    got = in_mode(lambda x, w: F.conv1d(x, w, None, 2, 1, 2, 2), Tensor(x1), Tensor(w1))
    want = _ops_calls()["ops.conv1d"]
    _close(got.asnumpy() + det((2,), 0.9, 0.2, 0.3)[None, :, None],
           ops.conv1d(*[Tensor(a) for a in want[1]], stride=2, pad_mode="pad", padding=1,
                      dilation=2, groups=2).asnumpy(), "mint conv1d")
    x3, w3 = det((1, 2, 4, 5, 4), 0.37, 0.1), det((4, 1, 2, 3, 2), 0.23, 0.4, 0.5)
    got = in_mode(lambda x, w: F.conv3d(x, w, None, (2, 1, 2), 0, 1, 2), Tensor(x3), Tensor(w3))
    _close(got.asnumpy(), ops.conv3d(Tensor(x3), Tensor(w3), stride=(2, 1, 2),
                                     groups=2).asnumpy(), "mint conv3d")
    same = F.conv3d(Tensor(x3[0]), Tensor(w3), None, 1, "same", (1, 2, 1), 2)
    assert same.shape == (4, 4, 5, 4)
    layer = mint.nn.Conv1d(4, 2, 3, padding=1, padding_mode="reflect", groups=2)
    assert layer(Tensor(x1)).shape == (2, 2, 7)


@pytest.mark.parametrize("mode", MODES)
def test_simulated_ascend_runs_them_close_to_the_cpu(mode):
    """The parts are conv2d family ops, Cube ops on the simulated Ascend (fp16 operands)."""
    name, cls, kw, xs = next(c for c in CONFIGS if c[0] == "t3_pad_op1_g2")
    net = nn.Conv3dTranspose(**kw)
    x = Tensor(det(xs, 0.37, 0.1))
    cpu = net(x).asnumpy()
    ms.set_context(device_target="Ascend")
    np.testing.assert_allclose(net(x).asnumpy(), cpu, rtol=1e-2, atol=1e-2)
    c3 = nn.Conv3d(2, 3, 2, stride=2, has_bias=True)
    x = Tensor(det((1, 2, 5, 4, 3), 0.37, 0.1))
    asc = c3(x).asnumpy()
    ms.set_context(device_target="CPU")
    np.testing.assert_allclose(asc, c3(x).asnumpy(), rtol=1e-2, atol=1e-2)
