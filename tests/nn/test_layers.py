"""nn layers and mindspore.common.initializer: numbers against numpy, MindSpore's defaults and
argument forms, graph vs PyNative, the simulated Ascend vs CPU (fp16 Cube operands: 1e-2), and
error messages naming the argument, the value and a fix."""
import math

import numpy as np
import pytest
from scipy.special import erf

import minispore as ms
from minispore import Parameter, Tensor, nn
from minispore.common import initializer as init

F32 = np.float32
R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(F32)


def _both_modes(cell, *args):
    """cell(*args) in PyNative and in GRAPH_MODE: equal (float tolerance); the PyNative value."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = cell(*args).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = cell(*args).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-6, atol=1e-6)
    return eager


# ---------------------------------------------------------------- initializers -----------------
def test_initializer_forms_and_distributions():
    np.random.seed(1)
    big = (200, 300)
    u = init.initializer(init.Uniform(0.5), big).asnumpy()
    assert u.dtype == F32 and u.shape == big and u.min() >= -0.5 and u.max() <= 0.5
    n = init.initializer("normal", big).asnumpy()
    assert abs(n.std() - 0.01) < 1e-3 and abs(n.mean()) < 1e-3
    t = init.initializer(init.TruncatedNormal(sigma=1.0, a=-1.0, b=1.5), big).asnumpy()
    assert t.min() >= -1.0 and t.max() <= 1.5
    xb = math.sqrt(6 / (200 + 300))
    x = init.initializer("xavier_uniform", big).asnumpy()
    assert x.min() >= -xb and x.max() <= xb and x.max() > 0.9 * xb
    hb = math.sqrt(3) * math.sqrt(2 / (1 + 5)) / math.sqrt(300)       # HeUniform(sqrt(5))
    h = init.initializer(init.HeUniform(math.sqrt(5)), big).asnumpy()
    assert h.min() >= -hb and h.max() <= hb and h.max() > 0.9 * hb
    conv = init.initializer(init.HeUniform(), (4, 3, 2, 2)).asnumpy()   # fan_in = 3*2*2
    assert np.abs(conv).max() <= math.sqrt(3) * math.sqrt(2) / math.sqrt(12)
    np.testing.assert_array_equal(init.initializer("zeros", (2,), ms.float16).asnumpy(),
                                  np.zeros(2, np.float16))
    np.testing.assert_array_equal(init.initializer(init.One(), 3).asnumpy(), np.ones(3, F32))
    np.testing.assert_array_equal(init.initializer(2.5, (2,)).asnumpy(), [2.5, 2.5])
    arr = np.arange(6, dtype=np.float64).reshape(2, 3)
    np.testing.assert_array_equal(init.initializer(arr, (2, 3)).asnumpy(), arr.astype(F32))
    np.testing.assert_array_equal(init.initializer(Tensor(arr)).asnumpy(), arr.astype(F32))


def test_initializer_is_seeded_by_numpy_seed():
    np.random.seed(7)               # MindSpore's initializers draw from numpy's global state
    a = nn.Dense(3, 2).weight.asnumpy()
    np.random.seed(7)
    b = nn.Dense(3, 2).weight.asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, nn.Dense(3, 2).weight.asnumpy())


@pytest.mark.parametrize("call,err,words", [
    (lambda: init.initializer("glorot", (2, 2)), ValueError, ["'glorot'", "xavier_uniform"]),
    (lambda: init.initializer(np.ones((2, 2)), (3, 2)), ValueError, ["(2, 2)", "(3, 2)"]),
    (lambda: init.initializer("normal"), ValueError, ["shape is required"]),
    (lambda: init.initializer(object(), (2,)), TypeError, ["object"]),
    (lambda: init.initializer("xavier_uniform", (5,)), ValueError, ["fewer than 2", "(5,)"]),
    (lambda: init.initializer(init.HeUniform(mode="fan"), (2, 2)), ValueError, ["'fan'"]),
])
def test_initializer_errors(call, err, words):
    with pytest.raises(err) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ---------------------------------------------------------------- Dense ------------------------
def test_dense_defaults_follow_mindspore():
    np.random.seed(3)
    d = nn.Dense(16, 5)
    w, b = d.weight.asnumpy(), d.bias.asnumpy()
    assert w.shape == (5, 16) and b.shape == (5,) and w.dtype == F32
    bound = math.sqrt(3) * math.sqrt(2 / 6) / 4          # HeUniform(sqrt(5)), fan_in 16
    assert np.abs(w).max() <= bound and np.abs(b).max() <= 1 / 4
    assert [p.name for p in d.trainable_params()] == ["weight", "bias"]
    assert "input_channels=16, output_channels=5, has_bias=True" in repr(d)


@pytest.mark.parametrize("has_bias,act", [(True, None), (True, "relu"), (False, "tanh"),
                                          (True, nn.Sigmoid())])
def test_dense_numbers(has_bias, act):
    w = R.standard_normal((2, 4)).astype(F32)
    b = R.standard_normal(2).astype(F32)
    d = nn.Dense(4, 2, weight_init=Tensor(w), bias_init=b, has_bias=has_bias, activation=act)
    ref = X @ w.T + (b if has_bias else 0)
    ref = {None: ref, "relu": np.maximum(ref, 0), "tanh": np.tanh(ref)}.get(
        act, 1 / (1 + np.exp(-ref)) if not isinstance(act, str) and act is not None else ref)
    np.testing.assert_allclose(_both_modes(d, Tensor(X)), ref, rtol=1e-5, atol=1e-6)
    x3 = R.standard_normal((2, 3, 4)).astype(F32)             # rank 3: flattened and back
    out3 = _both_modes(d, Tensor(x3))
    assert out3.shape == (2, 3, 2)
    np.testing.assert_allclose(out3[1], d(Tensor(x3[1])).asnumpy(), rtol=1e-6)


def test_dense_ascend_matches_cpu():
    d = nn.Dense(4, 3, activation="relu")
    cpu = d(Tensor(X)).asnumpy()
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(device_target="Ascend", mode=mode)
        np.testing.assert_allclose(d(Tensor(X)).asnumpy(), cpu, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("kw,err,words", [
    (dict(in_channels=0, out_channels=2), ValueError, ["in_channels", "0"]),
    (dict(in_channels=3.0, out_channels=2), TypeError, ["in_channels", "3.0"]),
    (dict(in_channels=3, out_channels=2, weight_init=np.ones((3, 2))), ValueError,
     ["weight_init", "(3, 2)", "(2, 3)"]),
    (dict(in_channels=3, out_channels=2, bias_init=np.ones(3)), ValueError, ["bias_init", "(3,)"]),
    (dict(in_channels=3, out_channels=2, activation="swishy"), KeyError, ["'swishy'", "relu"]),
    (dict(in_channels=3, out_channels=2, has_bias="yes"), TypeError, ["has_bias", "'yes'"]),
    (dict(in_channels=3, out_channels=2, weight_init=[1, 2]), TypeError, ["weight_init",
                                                                          "list"]),
])
def test_dense_argument_errors(kw, err, words):
    with pytest.raises(err) as e:
        nn.Dense(**kw)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_dense_input_shape_error_names_shapes():
    d = nn.Dense(4, 2)
    with pytest.raises(ValueError, match=r"matmul|shape"):
        d(Tensor(np.ones((3, 5), F32)))


class _Wrapper(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        return self.fc(x * 2)                        # the line the error must point at


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_dense_input_width_error_points_at_the_users_line(mode):
    ms.set_context(mode=mode)
    x = Tensor(np.ones((3, 5), F32))
    with pytest.raises(ValueError) as e:
        nn.Dense(4, 2)(x)                            # the top-level call site
    msg = str(e.value)
    assert "Dense: the input has shape (3, 5), whose last dim 5 must equal in_channels=4" in msg
    assert f'"{__file__}"' in msg and "nn.Dense(4, 2)(x)" in msg and "basic.py" not in msg
    with pytest.raises(ValueError) as e:
        _Wrapper()(x)
    assert "self.fc(x * 2)" in str(e.value) and "basic.py" not in str(e.value)
    caret = str(e.value).splitlines()[-2:]
    assert caret[1].index("^") == caret[0].index("self.fc")


# ---------------------------------------------------------------- activations, Flatten ... -----
def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("cell,ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.GELU(), _gelu_tanh),                                  # MindSpore: approximate=True
    (nn.GELU(approximate=False), lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    (nn.Softmax(), _softmax),
    (nn.Softmax(axis=0), lambda x: _softmax(x, 0)),
    (nn.LogSoftmax(), lambda x: np.log(_softmax(x))),
    (nn.Identity(), lambda x: x),
    (nn.Flatten(), lambda x: x),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Cell) else "")
def test_activation_numbers(cell, ref):
    np.testing.assert_allclose(_both_modes(cell, Tensor(X)), ref(X.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


def test_flatten_dims():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    assert _both_modes(nn.Flatten(), Tensor(x)).shape == (2, 12)
    assert _both_modes(nn.Flatten(0, 1), Tensor(x)).shape == (6, 4)
    with pytest.raises(TypeError, match="start_dim"):
        nn.Flatten(start_dim=1.5)
    with pytest.raises(TypeError, match="approximate"):
        nn.GELU(approximate="tanh")


# ---------------------------------------------------------------- Embedding ---------------------
@pytest.mark.parametrize("one_hot", [False, True])
def test_embedding(one_hot):
    table = R.standard_normal((6, 3)).astype(F32)
    emb = nn.Embedding(6, 3, use_one_hot=one_hot, embedding_table=Tensor(table))
    ids = np.array([[0, 5], [2, 2]], np.int32)
    np.testing.assert_allclose(_both_modes(emb, Tensor(ids)), table[ids], rtol=1e-6)
    g = ms.grad(lambda i: emb(i).sum(), None, emb.trainable_params())(Tensor(ids))[0]
    np.testing.assert_allclose(g.asnumpy()[:, 0], [1, 0, 2, 0, 0, 1])


def test_embedding_defaults_and_errors():
    np.random.seed(0)
    e = nn.Embedding(50, 40, padding_idx=3)
    t = e.embedding_table.asnumpy()
    assert abs(t.std() - 0.01) < 2e-3 and np.all(t[3] == 0)
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(TypeError, match="number type"):
        nn.Embedding(5, 2, dtype=ms.bool_)
    with pytest.raises(ValueError, match="vocab_size"):
        nn.Embedding(0, 2)


# ---------------------------------------------------------------- SequentialCell -----------------
def test_sequential_mlp_numbers_and_names():
    w1 = R.standard_normal((5, 4)).astype(F32)
    w2 = R.standard_normal((2, 5)).astype(F32)
    net = nn.SequentialCell(nn.Dense(4, 5, Tensor(w1), "zeros"), nn.ReLU(),
                            nn.Dense(5, 2, Tensor(w2), "ones"), nn.Softmax())
    ref = _softmax(np.maximum(X @ w1.T, 0) @ w2.T + 1)
    np.testing.assert_allclose(_both_modes(net, Tensor(X)), ref, rtol=1e-5, atol=1e-6)
    assert [p.name for p in net.trainable_params()] == ["0.weight", "0.bias", "2.weight",
                                                        "2.bias"]
    assert isinstance(net.trainable_params()[0], Parameter)
