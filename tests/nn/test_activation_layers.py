"""The activation Cells, ops functions and Primitive classes against MindSpore 2.10: outputs,
dtypes, the signs of zeros and the gradients AT the kinks in both modes (values from
MindSpore 2.10 in activation_expected.py), PReLU's Parameter and its weight gradient, the
arguments and dtypes MindSpore refuses (the kind of error), get_activation's names, and
mint's PyTorch variants of the same declarations (gradient 0 at hardtanh's bounds, the slope
at leaky_relu's 0, ...), which differ from ops' on purpose."""
import re

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, mint, nn, ops
from minispore.mint.nn import functional as MF
from activation_expected import CASES, MS_VALUES
from helpers import graph_runs, in_mode

TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float16": dict(rtol=2e-3, atol=1e-3)}


def _with_args(f, *args):
    """x -> f(x, *args), defined here so graph mode can read its source (an eval'd lambda has
    none)."""
    def call(x):
        return f(x, *args)
    return call


def _fn(expr):
    """The case's callable: "lambda x: ops.f(x, a, b)" becomes _with_args(ops.f, a, b)."""
    m = re.fullmatch(r"lambda x: (ops\.\w+)\(x, (.*)\)", expr)
    if m:
        expr = f"_with_args({m.group(1)}, {m.group(2)})"
    return eval(expr, {"nn": nn, "ops": ops, "_with_args": _with_args})


def _call(fn, x):
    return fn(x) if isinstance(fn, nn.Cell) else in_mode(fn, x)


def _sum_of(fn):
    def loss(t):
        return fn(t).sum()
    return loss


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_kink_gradients_match_mindspore(case, mode):
    expr, points, dtype, check_grad = CASES[case]
    fn = _fn(expr)
    want = MS_VALUES[case]
    x = Tensor(np.array(points, dtype=dtype))
    with graph_runs(case):
        y = _call(fn, x)
    assert str(y.dtype) == want["dtype"], f"{case}: dtype {y.dtype}, MindSpore {want['dtype']}"
    expected = np.array(want["y"])
    got = y.asnumpy()
    if np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, expected, err_msg=case)
    else:
        np.testing.assert_allclose(got, expected, **TOL[dtype if dtype in TOL else "float32"],
                                   err_msg=case)
        zeros = expected == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]),
                                      err_msg=f"{case}: the signs of the zeros")
    if check_grad:
        with graph_runs(f"{case} gradient"):
            g = ms.grad(_sum_of(fn))(x)
        np.testing.assert_allclose(g.asnumpy(), np.array(want["g"]),
                                   **TOL[dtype if dtype in TOL else "float32"],
                                   err_msg=f"{case}: gradient")


def test_prelu_parameter_broadcast_and_weight_gradient(mode):
    """Values from MindSpore 2.10: Parameter 'a' of shape (channel,) filled with w, broadcast
    over axis 1 of NCHW; the gradient at +-0 is w, the weight's sums x over x <= 0."""
    net = nn.PReLU(3, 0.1)
    params = list(net.get_parameters())
    assert [(p.name, tuple(p.shape), str(p.dtype)) for p in params] == [("a", (3,), "Float32")]
    np.testing.assert_allclose(net.w.asnumpy(), [0.1, 0.1, 0.1], rtol=1e-7)
    want = MS_VALUES["nn.PReLU(3, 0.1) NCHW"]
    x = Tensor(np.array([[[-1.0, 0.0], [-0.0, 2.0]], [[-2.0, 1.0], [0.5, -0.5]],
                         [[0.0, -3.0], [3.0, -0.0]]], np.float32)[None])
    with graph_runs("PReLU"):
        y = net(x)
    np.testing.assert_allclose(y.asnumpy(), np.array(want["y"]), rtol=1e-6, atol=1e-7)
    with graph_runs("PReLU gradients"):
        gx, gw = ms.grad(_sum_of(net), grad_position=0, weights=net.trainable_params())(x)
    np.testing.assert_allclose(gx.asnumpy(), np.array(want["g"]), rtol=1e-6)
    np.testing.assert_allclose(gw[0].asnumpy(), np.array(want["gw"][0]), rtol=1e-6)


def test_prelu_weight_forms():
    """MindSpore 2.10: w a float, a list of `channel` floats or a (channel,) float Tensor;
    a 1-D input has one channel; a one-element weight broadcasts over any channels."""
    assert nn.PReLU(2, [0.1, 0.3]).w.asnumpy().tolist() == pytest.approx([0.1, 0.3])
    t = nn.PReLU(2, Tensor(np.array([0.1, 0.3], np.float16)))
    assert str(t.w.dtype) == "Float16"
    x = Tensor(np.array([[-1.0, 2.0, -3.0], [-1.0, -1.0, -1.0]], np.float32))
    np.testing.assert_allclose(nn.PReLU(3, 0.1)(x).asnumpy(),
                               [[-0.1, 2.0, -0.3], [-0.1, -0.1, -0.1]], rtol=1e-6)
    np.testing.assert_allclose(nn.PReLU()(Tensor(np.float32(-1.0))).asnumpy(), -0.25)
    w1 = Tensor(np.array([0.1], np.float32))
    np.testing.assert_allclose(ops.prelu(x, w1).asnumpy(),
                               [[-0.1, 2.0, -0.3], [-0.1, -0.1, -0.1]], rtol=1e-6)
    # weight cast to the input's dtype: a float16 input gives float16 (MindSpore's dtype)
    y = ops.prelu(Tensor(np.array([-1.0, 2.0], np.float16)), w1)
    assert str(y.dtype) == "Float16"
    y = ops.PReLU()(Tensor(np.array([-1.0, 2.0], np.float32)),
                    Tensor(np.array([0.1], np.float16)))
    assert str(y.dtype) == "Float32"
    np.testing.assert_allclose(y.asnumpy(), [-0.0999755859375, 2.0], rtol=1e-6)


def test_selu_gradient_is_the_derivative():
    """SeLU's gradient below 0 is scale * alpha * exp(x), its derivative (PyTorch's and
    MindSpore's documented SeLU). MindSpore 2.10's CPU SeLUGrad instead gives
    scale * (y + 1) there (-0.11697533 at x = -1, -0.79653573 as x -> -inf): minispore keeps
    the derivative; at 0 both give scale (1.0507010)."""
    x = Tensor(np.array([-1.0, -20.0, 0.0], np.float32))
    g = ms.grad(_sum_of(ops.selu))(x).asnumpy()
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    np.testing.assert_allclose(g, [scale * alpha * np.exp(-1.0), scale * alpha * np.exp(-20.0),
                                   scale], rtol=1e-6)


F32 = Tensor(np.array([-1.0, 0.5], np.float32))
F64 = Tensor(np.array([-1.0, 0.5], np.float64))
I32 = Tensor(np.array([-1, 2], np.int32))

# (call, the error MindSpore 2.10 raises for it)
REFUSED = {
    "relu6 float64": (lambda: ops.relu6(F64), TypeError),
    "relu6 int32": (lambda: ops.ReLU6()(I32), TypeError),
    "fast_gelu float64": (lambda: ops.fast_gelu(F64), TypeError),
    "softshrink float64": (lambda: ops.softshrink(F64), TypeError),
    "hardshrink float64": (lambda: ops.HShrink()(F64), TypeError),
    "mish int32": (lambda: ops.mish(I32), TypeError),
    "softsign int32": (lambda: ops.softsign(I32), TypeError),
    "celu int32": (lambda: ops.celu(I32), TypeError),
    "elu int32": (lambda: ops.elu(I32), TypeError),
    "softmin int32": (lambda: ops.softmin(I32), TypeError),
    "prelu int32": (lambda: ops.prelu(I32, Tensor(np.array([1], np.int32))), TypeError),
    "prelu weight 0-d": (lambda: ops.prelu(F32, Tensor(np.float32(0.1))), ValueError),
    "prelu weight 2-D": (lambda: ops.prelu(F32, Tensor(np.ones((1, 1), np.float32))),
                         ValueError),
    "prelu weight length": (lambda: nn.PReLU(3)(Tensor(np.ones((1, 2, 2), np.float32))),
                            ValueError),
    "elu alpha 0.5": (lambda: ops.elu(F32, 0.5), ValueError),
    "nn.ELU alpha 0.5 runs": (lambda: nn.ELU(0.5)(F32), ValueError),
    "Elu alpha int": (lambda: ops.Elu(1)(F32), TypeError),
    "celu alpha 0": (lambda: ops.celu(F32, 0.0), ValueError),
    "CeLU alpha int": (lambda: ops.CeLU(2)(F32), TypeError),
    "softshrink lambd < 0": (lambda: ops.softshrink(F32, -1.0), RuntimeError),
    "nn.SoftShrink lambd < 0 runs": (lambda: nn.SoftShrink(-1.0)(F32), RuntimeError),
    "softshrink lambd str": (lambda: ops.softshrink(F32, "a"), TypeError),
    "nn.HShrink lambd str": (lambda: nn.HShrink("a"), TypeError),
    "leaky_relu alpha str": (lambda: ops.leaky_relu(F32, "a"), TypeError),
    "leaky_relu alpha bool": (lambda: ops.leaky_relu(F32, True), TypeError),
    "nn.LeakyReLU alpha str runs": (lambda: nn.LeakyReLU("a")(F32), TypeError),
    "hardtanh min_val str": (lambda: ops.hardtanh(F32, "a", 1), TypeError),
    "nn.Hardtanh min >= max": (lambda: nn.Hardtanh(1.0, 1.0), ValueError),
    "threshold thr str": (lambda: ops.threshold(F32, "a", 1), TypeError),
    "softmin axis float": (lambda: nn.Softmin(1.0)(F32), TypeError),
    "softmin 0-d": (lambda: ops.softmin(Tensor(np.float32(1.0))), ValueError),
    "glu odd": (lambda: ops.glu(Tensor(np.ones(3, np.float32))), ValueError),
    "glu 0-d": (lambda: ops.glu(Tensor(np.float32(1.0))), ValueError),
    "PReLU channel 0": (lambda: nn.PReLU(0), ValueError),
    "PReLU w int": (lambda: nn.PReLU(2, 1), TypeError),
    "PReLU w ndarray": (lambda: nn.PReLU(2, np.array([0.1, 0.3], np.float32)), TypeError),
    "PReLU w list length": (lambda: nn.PReLU(3, [0.1, 0.2]), ValueError),
    "PReLU w int32 tensor": (lambda: nn.PReLU(1, Tensor(np.array([1], np.int32))), ValueError),
    "RReLU lower > upper": (lambda: nn.RReLU(0.5, 0.1), ValueError),
    "rrelu upper str": (lambda: ops.rrelu(F32, 0.1, "a"), TypeError),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_as_mindspore_refuses(case):
    call, exc = REFUSED[case]
    with pytest.raises(exc):
        call()


def test_accepted_where_mindspore_accepts():
    """MindSpore 2.10 constructs these and runs them: ops.Elu(0.5) and nn.ELU(0.5) refuse only
    when called; ops.hardtanh takes min_val > max_val (max_val everywhere); hardshrink takes
    a negative lambd (every x kept)."""
    ops.Elu(0.5), nn.ELU(0.5), nn.CELU(0.0), nn.SoftShrink(-1.0), nn.LeakyReLU("a")
    np.testing.assert_array_equal(ops.hardtanh(F32, 2.0, 1.0).asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(ops.hardshrink(F32, -1.0).asnumpy(), [-1.0, 0.5])


# MindSpore 2.10's nn.get_activation table: name -> Cell class name
MS_ACTIVATIONS = {
    "softmin": "Softmin", "softmax": "Softmax", "logsoftmax": "LogSoftmax", "relu": "ReLU",
    "relu6": "ReLU6", "rrelu": "RReLU", "silu": "SiLU", "tanh": "Tanh",
    "tanhshrink": "Tanhshrink", "hardtanh": "Hardtanh", "gelu": "GELU", "fast_gelu": "FastGelu",
    "elu": "ELU", "sigmoid": "Sigmoid", "softsign": "Softsign", "prelu": "PReLU",
    "preluExt": "PReLUExt", "leakyrelu": "LeakyReLU", "hswish": "HSwish",
    "hsigmoid": "HSigmoid", "logsigmoid": "LogSigmoid", "softshrink": "SoftShrink",
    "hshrink": "HShrink", "mish": "Mish",
}


@pytest.mark.parametrize("name", sorted(MS_ACTIVATIONS))
def test_get_activation_knows_mindspores_names(name):
    cell = nn.get_activation(name)
    assert type(cell).__name__ == MS_ACTIVATIONS[name]


def test_get_activation_threshold_needs_its_arguments():
    """MindSpore's table holds Threshold, whose threshold and value have no default."""
    with pytest.raises(TypeError):
        nn.get_activation("threshold")


def test_rrelu_scales_negatives_by_a_draw_in_range(mode):
    x = Tensor(np.array([-1.0, -2.0, 0.0, 3.0] * 50, np.float32))
    y = nn.RReLU(0.1, 0.3)(x).asnumpy().reshape(50, 4)
    assert (y[:, 2] == 0).all() and (y[:, 3] == 3.0).all()
    ratio = y[:, :2] / np.array([-1.0, -2.0])
    assert ((ratio >= 0.1 - 1e-7) & (ratio <= 0.3 + 1e-7)).all()
    assert len(np.unique(ratio)) > 10, "one draw per element"


def test_mint_keeps_pytorchs_variants(mode):
    """mint.nn.functional calls the same declarations with PyTorch's variants (MindSpore 2.10's
    CPU has no kernel for these mint functions; the values are PyTorch's): hardtanh/relu6 with
    gradient 0 at the bounds, leaky_relu with the slope at 0, selu with scale * alpha at 0,
    elu with expm1 (-0.0 kept), logsigmoid without underflow."""
    x = Tensor(np.array([-1.0, 0.0, 1.0, 6.0], np.float32))
    g = ms.grad(_sum_of(MF.hardtanh))(x).asnumpy()
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(ms.grad(_sum_of(MF.relu6))(x).asnumpy(), [0.0, 0.0, 1.0, 0.0])
    z = Tensor(np.array([-0.0, 0.0], np.float32))
    np.testing.assert_allclose(ms.grad(_sum_of(MF.leaky_relu))(z).asnumpy(), [0.01, 0.01])
    np.testing.assert_allclose(ms.grad(_sum_of(MF.selu))(z).asnumpy(),
                               [1.7580993, 1.7580993], rtol=1e-6)
    e = MF.elu(Tensor(np.array([-0.0, -1e-4], np.float32))).asnumpy()
    assert np.signbit(e[0]) and e[1] == pytest.approx(np.expm1(-1e-4), rel=1e-6)
    ls = MF.logsigmoid(Tensor(np.array([-100.0], np.float32))).asnumpy()
    np.testing.assert_allclose(ls, [-100.0], rtol=1e-6)
    np.testing.assert_allclose(mint.nn.Hardswish()(Tensor(np.array([-3.0, 3.0], np.float32)))
                               .asnumpy(), [0.0, 3.0])


def test_softmax2d_over_the_channels(mode):
    """Values from MindSpore 2.10: softmax over axis -3; 3-D or 4-D inputs only."""
    x = Tensor((np.arange(8, dtype=np.float32) / 3).reshape(1, 2, 2, 2))
    w = Tensor(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
    net = nn.Softmax2d()
    with graph_runs("Softmax2d"):
        y = net(x)
    np.testing.assert_allclose(y.asnumpy()[0, :, 0, 0], [0.20860852, 0.79139149], rtol=1e-5)

    def loss(t):
        return (net(t) * w).sum()
    with graph_runs("Softmax2d gradient"):
        g = ms.grad(loss)(x)
    np.testing.assert_allclose(g.asnumpy()[0, :, 1, 1], [-0.66036421, 0.66036361], rtol=1e-5)
    with pytest.raises(ValueError):
        net(Tensor(np.ones((2, 2), np.float32)))


class _ActivationNet(nn.Cell):
    """A user Cell (parsed in GRAPH_MODE) mixing activation functions and Cells."""

    def __init__(self):
        super().__init__()
        self.prelu = nn.PReLU(2, 0.2)
        self.act = nn.get_activation("hswish")
        self.glu = nn.GLU(1)

    def construct(self, x):
        y = ops.leaky_relu(x, 0.3) + self.act(x) - ops.softsign(x) * ops.celu(x, 0.5)
        return self.glu(ops.hardtanh(self.prelu(y), -0.5, 0.5) + ops.mish(x))


def test_user_cell_output_and_gradients_match_mindspore(mode):
    """Values from MindSpore 2.10 (PyNative and GRAPH_MODE agree): the output, the input
    gradient and PReLU's weight gradient of _ActivationNet."""
    net = _ActivationNet()
    x = Tensor((np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2) - 7.5) / 3)
    with graph_runs("_ActivationNet"):
        y = net(x)
    np.testing.assert_allclose(y.asnumpy().ravel(), [
        -0.17359663546085358, -0.19319376349449158, -0.21716471016407013, -0.2443598359823227,
        0.2955445945262909, 0.7929140329360962, 1.1123627424240112, 1.466965913772583],
        rtol=1e-5, atol=1e-6)
    with graph_runs("_ActivationNet gradients"):
        gx, gw = ms.grad(net, grad_position=0, weights=net.trainable_params())(x)
    np.testing.assert_allclose(gx.asnumpy().ravel(), [
        -0.04055847227573395, -0.033340927213430405, -0.019748924300074577,
        0.008024550974369049, -0.01284322701394558, -0.03161345422267914,
        -0.058816902339458466, -0.08848950266838074, 1.7359675168991089, 0.8030415773391724,
        0.9422714710235596, 1.020755410194397, 0.04173259809613228, 0.08043413609266281,
        0.07987955957651138, 0.07443313300609589], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw[0].asnumpy(), [-2.0397701263427734, 0.26627981662750244],
                               rtol=1e-5)


def test_swiglu_and_gelu_spelling(mode):
    """ops.swiglu (Ascend-only in MindSpore 2.10; the values are its documentation's example):
    silu of the first half times the second; ops.Gelu is GeLU()."""
    x = Tensor(np.array([[-0.12, 0.123, 31.122], [2.1223, 4.1212121217, 0.3123]], np.float32))
    y = in_mode(_with_args(ops.swiglu, 0), x)
    np.testing.assert_allclose(y.asnumpy(), [[-0.11970687, 0.2690224, 9.7194]], rtol=1e-5)
    with pytest.raises(RuntimeError):
        ops.swiglu(x, -1)
    np.testing.assert_array_equal(ops.Gelu()(x).asnumpy(), ops.GeLU()(x).asnumpy())
