"""mint.optim (Adam, AdamW, SGD) against numpy implementations of the update rules MindSpore
2.10 documents (PyTorch's), and one training step of a small mint.nn network in both modes.

MindSpore 2.10's CPU build cannot give reference numbers here: its mint.optim.AdamW has no CPU
kernel (AdamW "unregistered"), and its Adam and SGD leave the Parameters unchanged on the CPU
(observed with ~/.venvs/mindspore/bin/python), so the references are the documented formulas."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, mint

F32 = np.float32
W0 = np.array([[0.5, -1.0], [2.0, 0.1]], F32)
B0 = np.array([0.3, -0.2], F32)
GRADS = [np.array([[0.1, -0.2], [0.3, 0.05]], F32), np.array([1.0, -0.5], F32)]


def _adam_ref(ps, gs, steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, wd=0.0, amsgrad=False,
              maximize=False, decoupled=False):
    ps = [p.astype(np.float64) for p in ps]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    vmax = [np.zeros_like(p) for p in ps]
    b1, b2 = betas
    for t in range(1, steps + 1):
        for i, g in enumerate(gs):
            g = -g if maximize else g.astype(np.float64)
            if decoupled:
                ps[i] = ps[i] * (1 - lr * wd)
            elif wd:
                g = g + wd * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vv = v[i]
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                vv = vmax[i]
            denom = np.sqrt(vv) / np.sqrt(1 - b2 ** t) + eps
            ps[i] = ps[i] - lr / (1 - b1 ** t) * m[i] / denom
    return ps


def _sgd_ref(ps, gs, steps, lr, momentum=0.0, dampening=0.0, wd=0.0, nesterov=False,
             maximize=False):
    ps = [p.astype(np.float64) for p in ps]
    buf = [None] * len(ps)
    for _ in range(steps):
        for i, g in enumerate(gs):
            g = -g if maximize else g.astype(np.float64)
            g = g + wd * ps[i]
            d = g
            if momentum:
                buf[i] = g if buf[i] is None else momentum * buf[i] + (1 - dampening) * g
                d = g + momentum * buf[i] if nesterov else buf[i]
            ps[i] = ps[i] - lr * d
    return ps


def _run(cls, steps, **kw):
    w, b = Parameter(Tensor(W0), name="w"), Parameter(Tensor(B0), name="b")
    opt = cls([w, b], **kw)
    for _ in range(steps):
        opt(tuple(Tensor(g) for g in GRADS))
    return [w.asnumpy(), b.asnumpy()], opt


@pytest.mark.parametrize("kw", [{}, {"lr": 0.1, "weight_decay": 0.1, "amsgrad": True},
                                {"lr": 0.05, "betas": (0.5, 0.9), "eps": 1e-3,
                                 "maximize": True}])
@pytest.mark.parametrize("cls", [mint.optim.AdamW, mint.optim.FusedAdamW])
def test_adamw_is_decoupled_adam(kw, cls):
    got, opt = _run(cls, 3, **kw)
    ref_kw = {("wd" if k == "weight_decay" else k): v for k, v in kw.items()}
    ref_kw.setdefault("wd", 0.01)                        # AdamW's default weight_decay
    for g, r in zip(got, _adam_ref([W0, B0], GRADS, 3, decoupled=True, **ref_kw)):
        # float32 rounding: 1 - beta2 ** t is computed in float32, as MindSpore's
        # beta2 ** state_step (a float32 Parameter) is
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    assert opt.param_groups[0]["lr"].name == "learning_rate_group_0"


@pytest.mark.parametrize("kw", [{}, {"lr": 0.1, "weight_decay": 0.1},
                                {"lr": 0.1, "amsgrad": True, "maximize": True}])
def test_adam_adds_l2_to_the_gradient(kw):
    got, _ = _run(mint.optim.Adam, 3, **kw)
    ref_kw = {("wd" if k == "weight_decay" else k): v for k, v in kw.items()}
    for g, r in zip(got, _adam_ref([W0, B0], GRADS, 3, **ref_kw)):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"lr": 0.1, "momentum": 0.9, "dampening": 0.1,
                                              "weight_decay": 0.01},
                                {"lr": 0.1, "momentum": 0.9, "nesterov": True,
                                 "maximize": True}])
def test_sgd(kw):
    got, _ = _run(mint.optim.SGD, 3, **kw)
    ref_kw = {("wd" if k == "weight_decay" else k): v for k, v in kw.items()}
    for g, r in zip(got, _sgd_ref([W0, B0], GRADS, 3, **ref_kw)):
        np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-7)


def test_parameter_groups_and_lr_changes():
    w, b = Parameter(Tensor(W0), name="w"), Parameter(Tensor(B0), name="b")
    opt = mint.optim.SGD([{"params": [w], "lr": 0.5}, {"params": [b], "momentum": 0.9}], lr=0.1)
    grads = tuple(Tensor(g) for g in GRADS)
    opt(grads)
    np.testing.assert_allclose(w.asnumpy(), W0 - 0.5 * GRADS[0], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), B0 - 0.1 * GRADS[1], rtol=1e-6)
    ms.ops.assign(opt.param_groups[0]["lr"], Tensor(np.float32(0.0)))
    w_before = w.asnumpy().copy()
    opt(grads)
    np.testing.assert_array_equal(w.asnumpy(), w_before)
    with pytest.raises(ValueError, match="unknown key"):
        mint.optim.SGD([{"params": [w], "betas": (0.9, 0.9)}], lr=0.1)
    with pytest.raises(ValueError, match="more than one"):
        mint.optim.Adam([{"params": [w]}, {"params": [w]}])
    with pytest.raises(ValueError, match="nesterov"):
        mint.optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta"):
        mint.optim.AdamW([w], betas=(1.0, 0.9))


class _Tiny(mint.nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mint.nn.Linear(3, 2)

    def construct(self, x):
        return self.fc(x)


def _train_once(graph):
    ms.set_seed(7)
    net = _Tiny()
    w0, b0 = net.fc.weight.asnumpy().copy(), net.fc.bias.asnumpy().copy()
    loss_fn = mint.nn.MSELoss()
    opt = mint.optim.AdamW(net.trainable_params(), lr=0.01, weight_decay=0.1)
    x = Tensor(np.array([[1., 2., 3.], [-1., 0.5, 2.]], F32))
    y = Tensor(np.array([[0.5, -1.], [1., 0.]], F32))
    grad_fn = ms.value_and_grad(lambda a, t: loss_fn(net(a), t), None, opt.parameters)

    def step(a, t):
        loss, grads = grad_fn(a, t)
        opt(grads)
        return loss
    if graph:
        step = ms.jit(step)
    net.set_train(True)
    loss = step(x, y)
    return loss.asnumpy(), net.fc.weight.asnumpy(), net.fc.bias.asnumpy(), (w0, b0, x, y)


def test_one_training_step_of_a_mint_network_in_both_modes():
    loss_p, w_p, b_p, (w0, b0, x, y) = _train_once(False)
    ms.set_context(mode=ms.GRAPH_MODE)
    loss_g, w_g, b_g, _ = _train_once(True)
    np.testing.assert_allclose(loss_g, loss_p, rtol=1e-6)
    np.testing.assert_allclose(w_g, w_p, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(b_g, b_p, rtol=1e-6, atol=1e-7)
    xa, ya = x.asnumpy().astype(np.float64), y.asnumpy().astype(np.float64)
    out = xa @ w0.T + b0
    np.testing.assert_allclose(loss_p, ((out - ya) ** 2).mean(), rtol=1e-5)
    dout = 2 * (out - ya) / out.size
    ref = _adam_ref([w0, b0], [dout.T @ xa, dout.sum(0)], 1, lr=0.01, wd=0.1, decoupled=True)
    np.testing.assert_allclose(w_p, ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b_p, ref[1], rtol=1e-5, atol=1e-6)


def test_a_conv_network_trains_the_same_in_both_modes():
    def run(graph):
        ms.set_seed(11)
        layers = [mint.nn.Conv2d(2, 4, 3, padding=1), mint.nn.BatchNorm2d(4), mint.nn.ReLU(),
                  mint.nn.MaxPool2d(2), mint.nn.Flatten(), mint.nn.Dropout(0.1),
                  mint.nn.Linear(16, 3)]
        seq = ms.nn.SequentialCell(layers)
        loss_fn = mint.nn.CrossEntropyLoss()
        opt = mint.optim.Adam(seq.trainable_params(), lr=0.01)
        x = Tensor(np.random.RandomState(0).randn(2, 2, 4, 4).astype(F32))
        lab = Tensor(np.array([0, 2], np.int32))
        grad_fn = ms.value_and_grad(lambda a, t: loss_fn(seq(a), t), None, opt.parameters)

        def step(a, t):
            loss, grads = grad_fn(a, t)
            opt(grads)
            return loss
        if graph:
            ms.set_context(mode=ms.GRAPH_MODE)
            step = ms.jit(step)
        seq.set_train(True)
        losses = [float(step(x, lab).asnumpy()) for _ in range(3)]
        return losses, [p.asnumpy() for p in seq.get_parameters()]
    lp, pp = run(False)
    lg, pg = run(True)
    np.testing.assert_allclose(lg, lp, rtol=1e-5)
    assert lp[2] < lp[0]
    for a, b in zip(pg, pp):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
