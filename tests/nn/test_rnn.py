"""nn.RNN, nn.GRU, nn.LSTM and nn.RNNCell, nn.GRUCell, nn.LSTMCell against MindSpore 2.10:
outputs, final states and gradients (input, initial state, weights) for multi-layer,
bidirectional, batch_first and seq_length cases in both modes (values from MindSpore 2.10 in
rnn_expected.py), the numpy-seeded initial weights, Parameter names and order, argument
errors as MindSpore raises them, dropout between layers in training only, PyNative against
GRAPH_MODE on a longer sequence, and an LSTM inside a user Cell in a graph."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn
from helpers import graph_runs
from rnn_expected import EXPECTED, INIT_SEED0

F32 = np.float32
TOL = dict(rtol=2e-5, atol=2e-6)


def _check(got, expected, what):
    for name, value in expected.items():
        np.testing.assert_allclose(np.asarray(got[name], np.float64), value, **TOL,
                                   err_msg=f"{what}: {name}")


# ---------------------------------------------------------------- the MindSpore cases -------------
def layer_case(cls, kw, seq, hx, wnames):
    """The layer of `cls(2, 2, **kw)` after np.random.seed(5) (so its weights are MindSpore's),
    on x, h0, c0 from RandomState(1); loss = sum(out^2) + sum(out) + sum(s^2), s = h_n (LSTM:
    h_n + 2 c_n). Returns the outputs, the loss and its gradients."""
    np.random.seed(5)
    net = cls(2, 2, **kw)
    n_state = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (2, 3, 2) if kw.get("batch_first") else (3, 2, 2)).astype(F32)
    h0 = rng.uniform(-1, 1, (n_state, 2, 2)).astype(F32)
    c0 = rng.uniform(-1, 1, (n_state, 2, 2)).astype(F32)
    lstm = cls is nn.LSTM
    lengths = None if seq is None else Tensor(np.array(seq, np.int32))
    params = {p.name: p for p in net.trainable_params()}
    weights = [params[n] for n in wnames]

    def loss(x, h0, c0):
        state = ((h0, c0) if lstm else h0) if hx else None
        out, h_n = net(x, state, lengths)
        s = h_n[0] + 2 * h_n[1] if lstm else h_n
        return (out * out).sum() + out.sum() + (s * s).sum()

    state = ((Tensor(h0), Tensor(c0)) if lstm else Tensor(h0)) if hx else None
    with graph_runs("the layer"):
        out, h_n = net(Tensor(x), state, lengths)
    got = {"out": out.asnumpy(), "h_n": (h_n[0] if lstm else h_n).asnumpy()}
    if lstm:
        got["c_n"] = h_n[1].asnumpy()
    with graph_runs("the gradient"):
        value, (g_in, g_w) = ms.value_and_grad(loss, grad_position=(0, 1, 2), weights=weights)(
            Tensor(x), Tensor(h0), Tensor(c0))
    got["loss"] = value.asnumpy()
    got["grad_x"] = g_in[0].asnumpy()
    if hx:
        got["grad_h0"] = g_in[1].asnumpy()
        if lstm:
            got["grad_c0"] = g_in[2].asnumpy()
    else:       # an unused initial state gets a zero gradient
        assert not g_in[1].asnumpy().any() and not g_in[2].asnumpy().any()
    got.update({"grad_" + n: g.asnumpy() for n, g in zip(wnames, g_w)})
    return got


LAYER_CASES = {
    "lstm": (nn.LSTM, dict(num_layers=2, bidirectional=True, batch_first=True), [3, 1], True,
             ["weight_hh_l0_reverse", "bias_ih_l1"]),
    "gru": (nn.GRU, dict(num_layers=2, bidirectional=True), [2, 3], False, ["weight_ih_l0"]),
    "rnn_relu": (nn.RNN, dict(nonlinearity="relu", bidirectional=True), None, True,
                 ["weight_hh_l0"]),
    "rnn_tanh": (nn.RNN, dict(has_bias=False), [1, 3], False, ["weight_ih_l0"]),
}


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_layer_matches_mindspore(case, mode):
    _check(layer_case(*LAYER_CASES[case]), EXPECTED[case], case)


def cell_case(cls, kw, lstm):
    """cls(2, 3, **kw) with its Parameters set from RandomState(2) in trainable_params order,
    then x (2, 2), h, c (2, 3); loss = sum(h'^2) + sum(h') (LSTM: sum(h'^2) + sum(h' c'))."""
    net = cls(2, 3, **kw)
    rng = np.random.RandomState(2)
    for p in net.trainable_params():
        p.set_data(Tensor(rng.uniform(-1, 1, p.shape).astype(F32)))
    x, h, c = (rng.uniform(-1, 1, s).astype(F32) for s in ((2, 2), (2, 3), (2, 3)))

    def loss(x, h, c):
        if lstm:
            hy, cy = net(x, (h, c))
            return (hy * hy).sum() + (hy * cy).sum()
        hy = net(x, h)
        return (hy * hy).sum() + hy.sum()

    with graph_runs("the cell"):
        out = net(Tensor(x), (Tensor(h), Tensor(c))) if lstm else net(Tensor(x), Tensor(h))
    got = {"h": (out[0] if lstm else out).asnumpy()}
    if lstm:
        got["c"] = out[1].asnumpy()
    _, (g_in, g_w) = ms.value_and_grad(loss, grad_position=(0, 1, 2),
                                       weights=net.trainable_params())(
        Tensor(x), Tensor(h), Tensor(c))
    got.update(grad_x=g_in[0].asnumpy(), grad_h=g_in[1].asnumpy(),
               grad_weight_hh=g_w[1].asnumpy())
    if lstm:
        got["grad_c"] = g_in[2].asnumpy()
    return got


CELL_CASES = {"rnn_cell": (nn.RNNCell, {}, False),
              "rnn_cell_relu": (nn.RNNCell, dict(nonlinearity="relu"), False),
              "gru_cell": (nn.GRUCell, {}, False), "lstm_cell": (nn.LSTMCell, {}, True)}


@pytest.mark.parametrize("case", list(CELL_CASES))
def test_cell_matches_mindspore(case, mode):
    _check(cell_case(*CELL_CASES[case]), EXPECTED[case], case)


# ---------------------------------------------------------------- Parameters ----------------------
def test_initial_weights_follow_numpys_seed_as_mindspore():
    np.random.seed(0)
    net = nn.RNN(2, 2, bidirectional=True)
    for name, value in INIT_SEED0.items():      # values from MindSpore 2.10
        np.testing.assert_array_equal(getattr(net, name).asnumpy(), value.astype(F32))


def test_parameter_names_order_and_shapes():
    net = nn.LSTM(3, 4, 2, bidirectional=True)
    names = [n for n, _ in net.parameters_and_names()]
    # MindSpore 2.10's order: every weight_ih, then weight_hh, bias_ih, bias_hh
    expected = [f"{kind}_l{layer}{suffix}" for kind in ("weight_ih", "weight_hh", "bias_ih",
                                                         "bias_hh")
                for layer in (0, 1) for suffix in ("", "_reverse")]
    assert names == expected == [p.name for p in net.trainable_params()]
    assert net.weight_ih_l0.shape == (16, 3) and net.weight_ih_l1_reverse.shape == (16, 8)
    assert net.weight_hh_l1.shape == (16, 4) and net.bias_hh_l0.shape == (16,)
    assert net.w_ih_list[1] is net.weight_ih_l0_reverse and len(net.b_hh_list) == 4
    assert [p.name for p in nn.GRU(3, 4, has_bias=False).trainable_params()] == \
        ["weight_ih_l0", "weight_hh_l0"]

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(3, 4)
    assert [p.name for p in Outer().trainable_params()] == \
        ["rnn.weight_ih_l0", "rnn.weight_hh_l0", "rnn.bias_ih_l0", "rnn.bias_hh_l0"]
    cell = nn.GRUCell(3, 5)
    assert [(p.name, p.shape) for p in cell.trainable_params()] == [
        ("weight_ih", (15, 3)), ("weight_hh", (15, 5)), ("bias_ih", (15,)), ("bias_hh", (15,))]
    bound = 1 / np.sqrt(5)
    assert all(np.abs(p.asnumpy()).max() <= bound for p in cell.trainable_params())


def test_dtype_argument_and_float64_inputs():
    net = nn.GRU(3, 4, dtype=ms.float16)
    assert net.weight_ih_l0.dtype == ms.float16
    x = Tensor(np.random.randn(5, 2, 3))                  # float64: the weights are cast to it
    out, h_n = nn.GRU(3, 4)(x)
    assert out.dtype == ms.float64 and h_n.dtype == ms.float64
    with pytest.raises(TypeError, match="hx"):          # MindSpore checks hx's dtype only
        nn.GRU(3, 4)(x, Tensor(np.zeros((1, 2, 4))))


# ---------------------------------------------------------------- errors --------------------------
@pytest.mark.parametrize("build, exc, pattern", [
    (lambda: nn.LSTM(3, 4, dropout=0), TypeError, "dropout must be a float"),
    (lambda: nn.LSTM(3, 4, dropout=1.0), ValueError, r"dropout must be in \[0, 1\)"),
    (lambda: nn.RNN(3, 4, nonlinearity="gelu"), ValueError, "nonlinearity"),
    (lambda: nn.RNN(3, 4, 1, True, False, 0.0, False, ms.float32, "relu"), TypeError,
     "positional arguments"),
    (lambda: nn.GRU(3, 4, 0), ValueError, "num_layers"),
    (lambda: nn.GRU(3, 4, has_bias=1), TypeError, "has_bias"),
    (lambda: nn.LSTM(3, 4, batch_first=1), TypeError, "batch_first"),
    (lambda: nn.LSTM(3, 4.0), TypeError, "hidden_size"),
    (lambda: nn.GRU(3, 4, proj_size=2), TypeError, "proj_size"),
    (lambda: nn.RNNCell(3, 4, nonlinearity="sigmoid"), ValueError, "nonlinearity"),
    (lambda: nn.RNNCell(3, 0), ValueError, "hidden_size"),
    (lambda: nn.LSTMCell(3, 4, batch_size=2), TypeError, "batch_size"),
])
def test_constructor_errors(build, exc, pattern):
    with pytest.raises(exc, match=pattern):
        build()


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="num_layers=1"):
        nn.LSTM(3, 4, dropout=0.5)


Z = np.zeros


@pytest.mark.parametrize("call, exc, pattern", [
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 3), F32))), ValueError, r"expected \(seq_len, batch"),
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 2, 3), np.int32))), TypeError, "float Tensor"),
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 2, 6), F32))), ValueError, "input_size=3"),
    (lambda: nn.LSTM(3, 4)(Tensor(Z((5, 2, 3), F32)), Tensor(Z((1, 2, 4), F32))), TypeError,
     "tuple"),
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 2, 3), F32)), (Tensor(Z((1, 2, 4), F32)),)), TypeError,
     "hx must be a Tensor"),
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 2, 3), F32)), Tensor(Z((2, 2, 4), F32))), ValueError,
     r"expected \(1, 2, 4\)"),
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 2, 3), F32)), None, Tensor(np.array([1., 2.], F32))),
     TypeError, "seq_length"),
    (lambda: nn.GRU(3, 4)(Tensor(Z((5, 2, 3), F32)), None, Tensor(np.array([1, 2, 3], np.int32))),
     ValueError, "seq_length"),
    (lambda: nn.GRUCell(3, 4)(Tensor(Z((2, 3), F32))), TypeError, "hx"),
    (lambda: nn.GRUCell(3, 4)(Tensor(Z(3, F32)), Tensor(Z(4, F32))), ValueError, "batch_size"),
    (lambda: nn.GRUCell(3, 4)(Tensor(Z((2, 3))), Tensor(Z((2, 4)))), TypeError, "float32"),
    (lambda: nn.GRUCell(3, 4)(Tensor(Z((2, 3), F32)), Tensor(Z((2, 4), np.float16))), TypeError,
     "one dtype"),
    (lambda: nn.LSTMCell(3, 4)(Tensor(Z((2, 3), F32)), [Tensor(Z((2, 4), F32))] * 2), TypeError,
     "tuple"),
])
def test_call_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_seq_length_of_zero_keeps_the_initial_state():
    np.random.seed(3)
    net = nn.GRU(3, 4, bidirectional=True)
    x = Tensor(np.random.randn(5, 2, 3).astype(F32))
    out, h_n = net(x, None, Tensor(np.array([0, 2], np.int32)))
    assert not out.asnumpy()[:, 0].any() and not h_n.asnumpy()[:, 0].any()
    assert not out.asnumpy()[2:, 1].any() and out.asnumpy()[:2, 1].all()


# ---------------------------------------------------------------- modes and training --------------
def _grads(net, x, lengths):
    def loss(x):
        out, (h, c) = net(x, None, lengths)
        return (out * out).sum() + (h * c).sum()
    value, (gx, gw) = ms.value_and_grad(loss, 0, net.trainable_params())(x)
    return [value.asnumpy(), gx.asnumpy()] + [g.asnumpy() for g in gw]


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
def test_graph_gradients_equal_pynative(level):
    np.random.seed(4)
    net = nn.LSTM(5, 6, 2, bidirectional=True)
    x = Tensor(np.random.randn(9, 3, 5).astype(F32))
    lengths = Tensor(np.array([9, 4, 7], np.int64))
    eager = _grads(net, x, lengths)
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    with graph_runs("the gradient"):
        graph = _grads(net, x, lengths)
    for a, b in zip(graph, eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_dropout_between_layers_only_in_training(mode):
    np.random.seed(6)
    net = nn.GRU(3, 8, 2, dropout=0.5)
    np.random.seed(6)
    plain = nn.GRU(3, 8, 2)
    x = Tensor(np.random.randn(4, 2, 3).astype(F32))
    np.testing.assert_array_equal(net(x)[0].asnumpy(), plain(x)[0].asnumpy())
    net.set_train()
    assert not np.allclose(net(x)[0].asnumpy(), plain(x)[0].asnumpy())
    net.set_train(False)
    np.testing.assert_array_equal(net(x)[0].asnumpy(), plain(x)[0].asnumpy())


class Tagger(nn.Cell):
    """An LSTM inside a user Cell: hx as a tuple, seq_length and batch_first."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
        self.fc = nn.Dense(8, 2)

    def construct(self, x, h, c, lengths):
        out, (h_n, c_n) = self.lstm(x, (h, c), lengths)
        return self.fc(out).sum() + h_n.sum() * c_n.mean()


def test_lstm_in_a_user_cell_both_modes_and_training():
    np.random.seed(8)
    net = Tagger()
    rng = np.random.RandomState(0)
    args = [Tensor(rng.randn(*s).astype(F32)) for s in ((2, 5, 3), (2, 2, 4), (2, 2, 4))]
    args.append(Tensor(np.array([5, 3], np.int32)))
    eager = net(*args).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    with graph_runs("the user Cell"):
        graph = net(*args).asnumpy()
    np.testing.assert_allclose(graph, eager, rtol=1e-6)
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1))
    losses = [float(step(*args).asnumpy()) for _ in range(5)]
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("layer_cls, cell_cls", [(nn.LSTM, nn.LSTMCell), (nn.GRU, nn.GRUCell),
                                                 (nn.RNN, nn.RNNCell)])
@pytest.mark.parametrize("steps", [1, 4])
def test_layer_equals_its_cell_stepped_by_hand(layer_cls, cell_cls, steps, mode):
    """One layer, one direction, batch 1: the layer's output is its cell's, step by step (the
    single-step, single-state paths included)."""
    np.random.seed(9)
    layer, cell = layer_cls(3, 5), cell_cls(3, 5)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(cell, name).set_data(getattr(layer, name + "_l0"))
    x = np.random.randn(steps, 1, 3).astype(F32)
    out, state = layer(Tensor(x))
    lstm = layer_cls is nn.LSTM
    h = c = Tensor(np.zeros((1, 5), F32))
    for t in range(steps):
        if lstm:
            h, c = cell(Tensor(x[t]), (h, c))
        else:
            h = cell(Tensor(x[t]), h)
        np.testing.assert_allclose(out.asnumpy()[t], h.asnumpy(), rtol=1e-6, atol=1e-7)
    h_n = state[0] if lstm else state
    np.testing.assert_allclose(h_n.asnumpy()[0], h.asnumpy(), rtol=1e-6, atol=1e-7)
    if lstm:
        np.testing.assert_allclose(state[1].asnumpy()[0], c.asnumpy(), rtol=1e-6, atol=1e-7)


def test_float16_input_runs_in_float16(mode):
    np.random.seed(10)
    net = nn.LSTM(3, 4, bidirectional=True)
    x = np.random.randn(5, 2, 3).astype(np.float16)
    out, (h, c) = net(Tensor(x))
    assert out.dtype == h.dtype == c.dtype == ms.float16
    ref, _ = net(Tensor(x.astype(F32)))
    np.testing.assert_allclose(out.asnumpy().astype(F32), ref.asnumpy(), atol=5e-3)
