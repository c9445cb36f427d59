"""Optimizers against hand-written numpy update rules, step by step for 3 steps, in PyNative and
GRAPH_MODE (the update runs inside the compiled graph there): SGD (momentum, dampening, nesterov,
weight decay), Momentum (nesterov), Adam (bias correction, nesterov, L2), AdamWeightDecay (decay
filter), learning rates as floats, Tensors, per-step lists and schedules, loss_scale, errors."""
import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, nn, ops

F32 = np.float32
W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], F32)
B0 = np.array([0.1, -0.2], F32)
# one gradient pair per step
GRADS = [(np.array([[0.3, -0.1, 0.2], [0.05, 0.4, -0.6]], F32), np.array([0.2, -0.3], F32)),
         (np.array([[-0.2, 0.1, 0.5], [0.3, -0.2, 0.1]], F32), np.array([-0.1, 0.4], F32)),
         (np.array([[0.1, 0.2, -0.3], [-0.4, 0.3, 0.2]], F32), np.array([0.3, 0.1], F32))]


def _params():
    return [Parameter(Tensor(W0.copy()), name="fc.weight"),
            Parameter(Tensor(B0.copy()), name="fc.bias")]


def _run(make_opt, steps=3):
    """Params after each of `steps` calls of opt(grads), in the current mode."""
    params = _params()
    opt = make_opt(params)
    out = []
    for s in range(steps):
        opt(tuple(Tensor(g) for g in GRADS[s]))
        out.append([p.asnumpy().copy() for p in params])
    return out, opt


def _check(make_opt, reference, mode_name):
    got, opt = _run(make_opt)
    ref = reference()
    for s in range(3):
        for i in range(2):
            np.testing.assert_allclose(got[s][i], ref[s][i], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{mode_name}: step {s} param {i}")
    np.testing.assert_array_equal(opt.global_step.asnumpy(), [3])
    return got


def _ref_loop(update):
    """numpy reference: update(step, i, p, g, state) -> new p; returns the params per step."""
    ps = [W0.astype(np.float64), B0.astype(np.float64)]
    state = [dict(), dict()]
    out = []
    for s in range(3):
        ps = [update(s, i, ps[i], GRADS[s][i].astype(np.float64), state[i]) for i in range(2)]
        out.append(ps)
    return out


def _sgd_ref(lr, momentum=0.0, dampening=0.0, wd=0.0, nesterov=False):
    def upd(s, i, p, g, st):
        g = g + wd * p
        if momentum > 0:
            st["b"] = g if s == 0 else momentum * st["b"] + (1 - dampening) * g
            g = g + momentum * st["b"] if nesterov else st["b"]
        return p - lr * g
    return lambda: _ref_loop(upd)


@pytest.mark.parametrize("kw", [dict(), dict(momentum=0.9), dict(momentum=0.9, dampening=0.3),
                                dict(momentum=0.8, nesterov=True, weight_decay=0.1),
                                dict(weight_decay=0.05)],
                         ids=["plain", "momentum", "dampening", "nesterov_wd", "wd"])
def test_sgd_rule(kw, mode):
    _check(lambda p: nn.SGD(p, 0.1, **kw),
           _sgd_ref(0.1, kw.get("momentum", 0.0), kw.get("dampening", 0.0),
                    kw.get("weight_decay", 0.0), kw.get("nesterov", False)), mode)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_rule(nesterov, mode):
    lr, mom, wd = 0.05, 0.9, 0.01

    def upd(s, i, p, g, st):
        g = g + wd * p
        st["a"] = mom * st.get("a", 0.0) + g
        return p - lr * (g + mom * st["a"]) if nesterov else p - lr * st["a"]
    _check(lambda p: nn.Momentum(p, lr, mom, weight_decay=wd, use_nesterov=nesterov),
           lambda: _ref_loop(upd), mode)


@pytest.mark.parametrize("kw", [dict(), dict(use_nesterov=True), dict(weight_decay=0.1)],
                         ids=["plain", "nesterov", "l2"])
def test_adam_rule_with_bias_correction(kw, mode):
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    wd, nest = kw.get("weight_decay", 0.0), kw.get("use_nesterov", False)

    def upd(s, i, p, g, st):
        t = s + 1
        g = g + wd * p
        st["m"] = b1 * st.get("m", 0.0) + (1 - b1) * g
        st["v"] = b2 * st.get("v", 0.0) + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = b1 * st["m"] + (1 - b1) * g if nest else st["m"]
        return p - lr_t * m / (np.sqrt(st["v"]) + eps)
    _check(lambda p: nn.Adam(p, lr, **kw), lambda: _ref_loop(upd), mode)


def test_adam_weight_decay_rule_and_filter(mode):
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.99, 1e-6, 0.5

    def upd(s, i, p, g, st):
        st["m"] = b1 * st.get("m", 0.0) + (1 - b1) * g
        st["v"] = b2 * st.get("v", 0.0) + (1 - b2) * g * g
        return p - lr * (st["m"] / (np.sqrt(st["v"]) + eps) + wd * p)
    _check(lambda p: nn.AdamWeightDecay(p, lr, b1, b2, eps, weight_decay=wd),
           lambda: _ref_loop(upd), mode)
    # names containing 'beta'/'gamma' (norm layers) are not decayed
    p = Parameter(Tensor(np.ones(2, F32)), name="ln.gamma")
    opt = nn.AdamWeightDecay([p], 0.1, weight_decay=10.0)
    opt((Tensor(np.zeros(2, F32)),))
    np.testing.assert_array_equal(p.asnumpy(), [1.0, 1.0])


class Halving(nn.LearningRateSchedule):
    def construct(self, global_step):
        return 0.2 * ops.pow(0.5, ops.cast(global_step, ms.float32))


@pytest.mark.parametrize("lr,per_step", [
    (Tensor(np.float32(0.1)), [0.1, 0.1, 0.1]),
    ([0.3, 0.2], [0.3, 0.2, 0.2]),                # past the end: the last value
    (Tensor(np.array([0.1, 0.05, 0.01], F32)), [0.1, 0.05, 0.01]),
    (Halving(), [0.2, 0.1, 0.05]),
], ids=["tensor", "list", "tensor1d", "schedule"])
def test_learning_rate_forms(lr, per_step, mode):
    def upd(s, i, p, g, st):
        return p - per_step[s] * g
    _check(lambda p: nn.SGD(p, lr), lambda: _ref_loop(upd), mode)


def test_loss_scale_divides_gradients(mode):
    def upd(s, i, p, g, st):
        return p - 0.1 * (g / 4.0 + 0.01 * p)
    _check(lambda p: nn.SGD(p, 0.1, weight_decay=0.01, loss_scale=4.0), lambda: _ref_loop(upd),
           mode)


def test_state_parameters_are_named_and_registered():
    params = _params()
    opt = nn.Adam(params)
    names = [n for n, _ in opt.parameters_and_names()]
    for n in ("moment1.fc.weight", "moment2.fc.bias", "global_step", "beta1_power"):
        assert n in names
    assert [p.name for p in opt.parameters] == ["fc.weight", "fc.bias"]
    assert isinstance(opt.parameters, ms.ParameterTuple)


@pytest.mark.parametrize("make,err,words", [
    (lambda p: nn.SGD(p, -0.1), ValueError, ["learning_rate", "-0.1"]),
    (lambda p: nn.SGD(p, "fast"), TypeError, ["learning_rate", "str"]),
    (lambda p: nn.SGD(p, 0.1, momentum=-1.0), ValueError, ["momentum", "-1.0"]),
    (lambda p: nn.SGD(p, 0.1, nesterov=True), ValueError, ["nesterov", "momentum"]),
    (lambda p: nn.SGD(p, 0.1, momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     ["dampening=0.0"]),
    (lambda p: nn.Adam(p, beta1=1.0), ValueError, ["beta1", "1.0"]),
    (lambda p: nn.Adam(p, eps=0.0), ValueError, ["eps", "0.0"]),
    (lambda p: nn.Momentum(p, 0.1, "0.9"), TypeError, ["momentum", "'0.9'"]),
    (lambda p: nn.SGD(p[0], 0.1), TypeError, ["params", "trainable_params"]),
    (lambda p: nn.SGD([], 0.1), ValueError, ["params", "empty"]),
    (lambda p: nn.SGD([{"params": [p[0]]}, p[1]], 0.1), TypeError, ["mixes", "group"]),
    (lambda p: nn.SGD([{"params": p, "momentum": 0.9}], 0.1), ValueError, ["'momentum'"]),
    (lambda p: nn.SGD([{"params": p, "grad_centralization": True}], 0.1), NotImplementedError,
     ["grad_centralization"]),
    (lambda p: nn.SGD([{"params": p, "lr": [0.1, 0.2]}], 0.1), TypeError, ["group's lr"]),
    (lambda p: nn.SGD([{"params": p}, {"order_params": [p[1]]}], 0.1), ValueError,
     ["order_params", "fc.weight"]),
    (lambda p: nn.SGD(p, 0.1, weight_decay=-1), ValueError, ["weight_decay", "-1"]),
])
def test_argument_errors(make, err, words):
    with pytest.raises(err) as e:
        make(_params())
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("make_opt", [
    lambda ps, lr, wd: nn.SGD(ps, lr, weight_decay=wd),
    lambda ps, lr, wd: nn.Momentum(ps, lr, 0.9, weight_decay=wd),
    lambda ps, lr, wd: nn.Adam(ps, lr, weight_decay=wd),
    lambda ps, lr, wd: nn.AdamWeightDecay(ps, lr, weight_decay=wd),
], ids=["sgd", "momentum", "adam", "adamw"])
def test_parameter_groups(make_opt, mode):
    """MindSpore's parameter groups: the bias group's own lr and weight decay, the weight group
    the optimizer's; order_params sets the order. Each Parameter's trajectory equals that of a
    plain optimizer (no groups) built for it alone with its group's settings."""
    def train(params, opt):
        for s in range(3):
            grads = {p.name: Tensor(GRADS[s][i]) for i, p in enumerate(params)}
            opt(tuple(grads[p.name] for p in opt.parameters))
        return {p.name: p.asnumpy() for p in params}

    ps = _params()
    opt = make_opt([{"params": [ps[1]], "lr": 0.02, "weight_decay": 0.0}, {"params": [ps[0]]},
                    {"order_params": [ps[0], ps[1]]}], 0.1, 0.5)
    got = train(ps, opt)
    assert [p.name for p in opt.parameters] == ["fc.weight", "fc.bias"]
    assert opt.weight_decays == (0.5, 0.0)
    for k, (lr, wd) in enumerate(((0.1, 0.5), (0.02, 0.0))):
        ps = _params()
        alone = train(ps, make_opt([ps[k]], lr, wd))
        name = ps[k].name
        np.testing.assert_allclose(got[name], alone[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_wrong_number_of_gradients():
    opt = nn.SGD(_params(), 0.1)
    with pytest.raises(ValueError, match="got 1 gradients for 2 parameters"):
        opt((Tensor(GRADS[0][0]),))
