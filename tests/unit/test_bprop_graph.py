"""PyNative's compiled backward (core/bprop_graph.py): the tape of a repeated gradient becomes one
native program from its HOT-th occurrence at jit_level O2, with the eager walk's results bit for
bit; one-off gradients, grad of grad, O0/O1 and tapes the sink cannot lower keep the eager walk."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.core import bprop_graph

from helpers import train_small_mlp as _train


@pytest.fixture(autouse=True)
def _o2(monkeypatch):
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O2")
    bprop_graph.clear()
    monkeypatch.delenv("MINISPORE_BPROP_GRAPH", raising=False)


def _counts():
    return dict(bprop_graph.stats)


def _delta(before):
    return {k: bprop_graph.stats[k] - before[k] for k in before}



def test_a_training_loop_compiles_its_backward_once_with_the_eager_results_bit_for_bit(
        monkeypatch):
    before = _counts()
    losses, params = _train(6)
    assert _delta(before) == {"compiles": 1, "runs": 6 - (bprop_graph.HOT - 1)}
    monkeypatch.setenv("MINISPORE_BPROP_GRAPH", "0")
    before = _counts()
    eager_losses, eager_params = _train(6)
    assert _delta(before) == {"compiles": 0, "runs": 0}
    np.testing.assert_array_equal(losses, eager_losses)
    for a, b in zip(params, eager_params):
        np.testing.assert_array_equal(a, b)


def _train_lenet(steps):
    from minispore.digits_demo import LeNet
    ms.set_seed(1)
    net = LeNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    r = np.random.default_rng(3)
    losses = []
    for _ in range(steps):
        x = Tensor(r.random((16, 1, 8, 8)).astype(np.float32))
        y = Tensor(r.integers(0, 10, 16).astype(np.int32))
        losses.append(step(x, y).asnumpy())
    return np.array(losses), [p.asnumpy() for p in net.trainable_params()]


def test_lenet_training_compiles_its_backward_with_the_eager_results_bit_for_bit(monkeypatch):
    """The digits CNN (conv, pooling, dense): the compiled backward's steps equal the eager
    walk's exactly, losses and every parameter (README: bit-identical on the LeNet steps)."""
    before = _counts()
    losses, params = _train_lenet(4)
    assert _delta(before)["compiles"] == 1
    monkeypatch.setenv("MINISPORE_BPROP_GRAPH", "0")
    eager_losses, eager_params = _train_lenet(4)
    np.testing.assert_array_equal(losses, eager_losses)
    for a, b in zip(params, eager_params):
        np.testing.assert_array_equal(a, b)


def test_a_one_off_gradient_and_jit_levels_o0_o1_never_compile():
    f = ms.grad(lambda x: (x * x).sum())
    x = Tensor(np.arange(4, dtype=np.float32))
    before = _counts()
    f(x)
    f(x)
    assert _delta(before) == {"compiles": 0, "runs": 0}
    for level in ("O0", "O1"):
        ms.set_context(jit_level=level)
        for _ in range(4):
            np.testing.assert_array_equal(f(x).asnumpy(), 2 * x.asnumpy())
        assert _delta(before) == {"compiles": 0, "runs": 0}


def test_shared_inputs_repeated_targets_and_both_positions(monkeypatch):
    """x used twice by one op, the same tensor differentiated at two positions (both get the
    whole gradient), an input that needs no gradient, and a new shape (a new signature:
    compiled again): equal to the eager walk bit for bit."""
    def f(a, b, c):
        return (a * a + ops.tanh(b) * a - c).sum()
    g = ms.grad(f, grad_position=(0, 1))
    for n in (3, 5):
        r = np.random.default_rng(n)
        a = Tensor(r.standard_normal(n).astype(np.float32))
        c = Tensor(r.standard_normal(n).astype(np.float32))
        before = _counts()
        for _ in range(bprop_graph.HOT + 1):
            ga, gb = g(a, a, c)
        assert _delta(before) == {"compiles": 1, "runs": 2}
        monkeypatch.setenv("MINISPORE_BPROP_GRAPH", "0")
        ea, eb = g(a, a, c)
        monkeypatch.delenv("MINISPORE_BPROP_GRAPH")
        an = a.asnumpy()
        whole = 2 * an + np.tanh(an) + (1 - np.tanh(an) ** 2) * an
        for got, eager in ((ga, ea), (gb, eb)):
            np.testing.assert_array_equal(got.asnumpy(), eager.asnumpy())
            np.testing.assert_allclose(got.asnumpy(), whole, rtol=1e-5)


def test_value_and_grad_with_aux_and_sens_param():
    def f(x):
        y = x * 3
        return y.sum(), y
    vg = ms.value_and_grad(f, has_aux=True)
    x = Tensor(np.ones((2, 3), np.float32))
    for _ in range(bprop_graph.HOT + 1):
        (v, aux), gx = vg(x)
    assert float(v.asnumpy()) == 18.0
    np.testing.assert_array_equal(aux.asnumpy(), np.full((2, 3), 3, np.float32))
    np.testing.assert_array_equal(gx.asnumpy(), np.full((2, 3), 3, np.float32))
    gs = ms.grad(lambda x: x * x, sens_param=True)
    s = Tensor(np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    for _ in range(bprop_graph.HOT + 1):
        out = gs(x, s)
    np.testing.assert_array_equal(out.asnumpy(), 2 * s.asnumpy())
    assert bprop_graph.stats["runs"] >= 2


def test_grad_of_grad_keeps_the_inner_backward_on_the_tape():
    d2 = ms.grad(ms.grad(lambda x: (x * x * x).sum()))
    x = Tensor(np.array([1.0, 2.0, -3.0], np.float32))
    for _ in range(bprop_graph.HOT + 1):
        np.testing.assert_allclose(d2(x).asnumpy(), 6 * x.asnumpy(), rtol=1e-6)


def test_a_tape_the_native_sink_cannot_lower_stays_eager():
    """A float16 prod has no native lowering (eager rounds every partial product to half): the
    signature is remembered as not compilable."""
    g = ms.grad(lambda x: ms.ops.prod(x))
    x = Tensor(np.array([1.0, 2.0], np.float16))
    before = _counts()
    for _ in range(bprop_graph.HOT + 2):
        np.testing.assert_array_equal(g(x).asnumpy(), np.float16([2.0, 1.0]))
    assert _delta(before) == {"compiles": 0, "runs": 0}


def test_a_backward_that_fails_to_compile_warns_and_the_eager_walk_gives_the_gradients(
        monkeypatch):
    """A fault while building the compiled backward is not swallowed: one RuntimeWarning names
    it, and the eager walk's gradients are returned."""
    from minispore.core.graph import compile as graph_compile

    def broken_build(*a, **k):
        raise ValueError("replay broke")
    monkeypatch.setattr(graph_compile, "build", broken_build)
    monkeypatch.setattr(bprop_graph, "_WARNED", set())
    g = ms.grad(lambda x: (x * x).sum())
    x = Tensor(np.array([1.0, 2.0], np.float32))
    before = _counts()
    with pytest.warns(RuntimeWarning, match=r"could not be compiled \(ValueError: replay broke\)"):
        for _ in range(bprop_graph.HOT + 2):
            np.testing.assert_array_equal(g(x).asnumpy(), np.float32([2.0, 4.0]))
    assert _delta(before) == {"compiles": 0, "runs": 0}
