"""Optimizers against hand-written numpy update rules, step by step for 3 steps, in PyNative and
GRAPH_MODE (the update runs inside the compiled graph there): SGD (momentum, dampening, nesterov,
weight decay), Momentum (nesterov), Adam (bias correction, nesterov, L2), AdamWeightDecay (decay
filter), learning rates as floats, Tensors, per-step lists and schedules, loss_scale, errors;
parameter groups: their own float / per-step / schedule lr, weight decay, grad_centralization."""

import numpy as np
import pytest

import minispore as ms
from helpers import warnings_as_errors
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
    (lambda p: nn.SGD([{"params": p}, {"order_params": [p[1]]}], 0.1), ValueError,
     ["order_params", "fc.weight"]),
    (lambda p: nn.SGD(p, 0.1, weight_decay=-1), ValueError, ["weight_decay", "-1"]),
])
def test_argument_errors(make, err, words):
    with pytest.raises(err) as e:
        make(_params())
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def _train(params, opt):
    """Three steps of GRADS (each gradient matched to its Parameter by name, whatever order the
    optimizer holds them in); the Parameters' values after them."""
    for s in range(3):
        grads = {p.name: Tensor(GRADS[s][i]) for i, p in enumerate(params)}
        opt(tuple(grads[p.name] for p in opt.parameters))
    return {p.name: p.asnumpy() for p in params}


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
    ps = _params()
    opt = make_opt([{"params": [ps[1]], "lr": 0.02, "weight_decay": 0.0}, {"params": [ps[0]]},
                    {"order_params": [ps[0], ps[1]]}], 0.1, 0.5)
    got = _train(ps, opt)
    assert [p.name for p in opt.parameters] == ["fc.weight", "fc.bias"]
    assert opt.weight_decays == (0.5, 0.0)
    for k, (lr, wd) in enumerate(((0.1, 0.5), (0.02, 0.0))):
        ps = _params()
        alone = _train(ps, make_opt([ps[k]], lr, wd))
        name = ps[k].name
        np.testing.assert_allclose(got[name], alone[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_wrong_number_of_gradients():
    opt = nn.SGD(_params(), 0.1)
    with pytest.raises(ValueError, match="got 1 gradients for 2 parameters"):
        opt((Tensor(GRADS[0][0]),))


# -- groups with a dynamic lr ---------------------------------------------------------------------

@pytest.mark.parametrize("opt_lr,group_lr,w_steps,b_steps", [
    (0.1, [0.3, 0.2], [0.3, 0.2, 0.2], [0.1] * 3),                     # list past its end
    (0.1, Tensor(np.array([0.3, 0.2, 0.1], F32)), [0.3, 0.2, 0.1], [0.1] * 3),
    (0.1, Halving(), [0.2, 0.1, 0.05], [0.1] * 3),
    ([0.1, 0.05, 0.02], 0.3, [0.3] * 3, [0.1, 0.05, 0.02]),           # float group, list lr
    ([0.1, 0.05, 0.02], [0.3, 0.2, 0.1], [0.3, 0.2, 0.1], [0.1, 0.05, 0.02]),
    (Halving(), [0.3, 0.2], [0.3, 0.2, 0.2], [0.2, 0.1, 0.05]),
], ids=["list", "tensor1d", "schedule", "float_group_list_lr", "both_lists", "list_group_sched"])
def test_group_dynamic_lr_sgd(opt_lr, group_lr, w_steps, b_steps, mode):
    """The weight's group has its own lr; the bias takes the optimizer's. Both rates of a step
    are read at the same global step."""
    def upd(s, i, p, g, st):
        return p - (w_steps if i == 0 else b_steps)[s] * g
    _check(lambda p: nn.SGD([{"params": [p[0]], "lr": group_lr}, {"params": [p[1]]}], opt_lr),
           lambda: _ref_loop(upd), mode)


def test_group_dynamic_lr_get_lr():
    """get_lr(): a tuple with each Parameter's rate of this step (MindSpore's), then step + 1."""
    ps = _params()
    opt = nn.SGD([{"params": [ps[1]], "lr": Halving()}, {"params": [ps[0]], "lr": [0.3, 0.2]},
                  {"order_params": ps}], 0.1)
    assert opt.is_group_lr and opt.dynamic_lr
    for want in ([0.3, 0.2], [0.2, 0.1], [0.2, 0.05]):
        got = opt.param_lrs(opt.get_lr())
        np.testing.assert_allclose([float(r.asnumpy()) for r in got], want, rtol=1e-6)
    np.testing.assert_array_equal(opt.global_step.asnumpy(), [3])
    # sources numbered in the order_params order: the weight's list, then the bias's schedule
    assert [t.name for t in opt.group_lr_tables] == ["learning_rate_group_1"]
    assert opt.learning_rate_group_0 is opt.group_lr_schedules[0]      # the Cell is registered


@pytest.mark.parametrize("group_lr", [[0.02, 0.01, 0.005], Halving()], ids=["list", "schedule"])
@pytest.mark.parametrize("make_opt", [
    lambda ps, lr: nn.SGD(ps, lr, momentum=0.9),
    lambda ps, lr: nn.Momentum(ps, lr, 0.9),
    lambda ps, lr: nn.Adam(ps, lr),
    lambda ps, lr: nn.AdamWeightDecay(ps, lr, weight_decay=0.1),
], ids=["sgd", "momentum", "adam", "adamw"])
def test_group_dynamic_lr_every_optimizer(make_opt, group_lr, mode):
    """A group's dynamic lr gives its Parameter the trajectory of a plain optimizer built for it
    alone with that lr; the other Parameter keeps the optimizer's float rate."""
    ps = _params()
    got = _train(ps, make_opt([{"params": [ps[0]], "lr": group_lr}, {"params": [ps[1]]}], 0.1))
    for k, lr in enumerate((group_lr, 0.1)):
        ps = _params()
        alone = _train(ps, make_opt([ps[k]], lr))
        name = ps[k].name
        np.testing.assert_allclose(got[name], alone[name], rtol=1e-6, atol=1e-7, err_msg=name)


# -- grad_centralization -------------------------------------------------------------------------

GC_SHAPES = {"conv.weight": (2, 16, 2, 2), "fc.weight": (3, 16), "fc2.weight": (2, 3),
             "fc.bias": (3,)}
GC_APPLIES = {"conv.weight": True, "fc.weight": True, "fc2.weight": False, "fc.bias": False}
_rng = np.random.default_rng(0)
GC_INIT = {n: _rng.standard_normal(s).astype(F32) for n, s in GC_SHAPES.items()}
GC_GRADS = [{n: _rng.standard_normal(s).astype(F32) for n, s in GC_SHAPES.items()}
            for _ in range(3)]


def _centralize(name, g):
    """numpy: g minus its mean over every axis but 0 where MindSpore's rule applies."""
    if not GC_APPLIES[name]:
        return g
    return g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)


def _gc_sgd(lr, mom, wd, ls):      # MindSpore's SGD: centralize, then + wd * p in the kernel
    def upd(s, n, p, g, st):
        g = _centralize(n, g / ls) + wd * p
        st["b"] = g if s == 0 else mom * st["b"] + g
        return p - lr * st["b"]
    return upd


def _gc_momentum(lr, mom, wd, ls):     # Momentum: + wd * p, then centralize
    def upd(s, n, p, g, st):
        g = _centralize(n, g / ls + wd * p)
        st["a"] = mom * st.get("a", 0.0) + g
        return p - lr * st["a"]
    return upd


def _gc_adam(lr, b1, b2, eps, wd, ls):
    def upd(s, n, p, g, st):
        g = _centralize(n, g / ls + wd * p)
        st["m"] = b1 * st.get("m", 0.0) + (1 - b1) * g
        st["v"] = b2 * st.get("v", 0.0) + (1 - b2) * g * g
        t = s + 1
        return p - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * st["m"] / (np.sqrt(st["v"]) + eps)
    return upd


@pytest.mark.parametrize("make_opt,upd", [
    (lambda g: nn.SGD(g, 0.1, momentum=0.9, loss_scale=2.0), _gc_sgd(0.1, 0.9, 0.05, 2.0)),
    (lambda g: nn.Momentum(g, 0.1, 0.9, loss_scale=2.0), _gc_momentum(0.1, 0.9, 0.05, 2.0)),
    (lambda g: nn.Adam(g, 0.01, loss_scale=2.0), _gc_adam(0.01, 0.9, 0.999, 1e-8, 0.05, 2.0)),
], ids=["sgd", "momentum", "adam"])
def test_grad_centralization(make_opt, upd, mode):
    """A group with grad_centralization=True (and weight_decay 0.05): the conv-shaped and the
    (3, 16) Dense weight are centralized, the (2, 3) Dense weight (shape[1] % 16 != 0) and the
    bias are not (MindSpore's rule); the other group is not centralized at all."""
    params = {n: Parameter(Tensor(v.copy()), name=n) for n, v in GC_INIT.items()}
    names = list(GC_SHAPES)
    opt = make_opt([{"params": [params[n] for n in names], "grad_centralization": True,
                     "weight_decay": 0.05},
                    {"params": [Parameter(Tensor(np.ones((2, 16), F32)), name="other")]}])
    assert opt.grad_centralization_flags == (True,) * 4 + (False,)
    ref = {n: GC_INIT[n].astype(np.float64) for n in names}
    state = {n: {} for n in names}
    for s in range(3):
        grads = [Tensor(GC_GRADS[s][n]) for n in names] + [Tensor(np.ones((2, 16), F32))]
        opt(tuple(grads))
        for n in names:
            ref[n] = upd(s, n, ref[n], GC_GRADS[s][n].astype(np.float64), state[n])
            np.testing.assert_allclose(params[n].asnumpy(), ref[n], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{mode}: step {s} {n}")
    # the ungrouped Parameter moved by plain (not centralized) steps
    assert not np.allclose(opt.parameters[-1].asnumpy(), 1.0)


def test_grad_centralization_ignored_by_adam_weight_decay():
    """MindSpore's AdamWeightDecay does not centralize gradients: the same numbers as without the
    key, and a warning saying so."""
    def run(gc):
        p = Parameter(Tensor(GC_INIT["fc.weight"].copy()), name="fc.weight")
        opt = nn.AdamWeightDecay([{"params": [p], "grad_centralization": gc}], 0.01)
        opt((Tensor(GC_GRADS[0]["fc.weight"]),))
        return p.asnumpy()
    with pytest.warns(UserWarning, match="grad_centralization in a parameter group has no "
                                         "effect"):
        centralized = run(True)
    with warnings_as_errors():
        plain = run(False)
    np.testing.assert_array_equal(centralized, plain)


@pytest.mark.parametrize("make,err,msg", [
    (lambda p: nn.SGD([{"params": p, "lr": "fast"}], 0.1), TypeError,
     "SGD: a group's lr must be a float, a Tensor, a list of per-step values or a "
     "LearningRateSchedule, got str"),
    (lambda p: nn.SGD([{"params": p, "lr": -0.5}], 0.1), ValueError,
     "SGD: a group's lr must be >= 0, got -0.5"),
    (lambda p: nn.Adam([{"params": p, "lr": [0.1, -0.2]}], 0.1), ValueError,
     "Adam: a group's lr values must be >= 0, got -0.2"),
    (lambda p: nn.SGD([{"params": p, "lr": Tensor(np.ones((2, 2), F32))}], 0.1), ValueError,
     "SGD: a group's lr as a Tensor must be 0-d or 1-d, got shape (2, 2)"),
    (lambda p: nn.SGD([{"params": p, "lr": []}], 0.1), ValueError,
     "SGD: a group's lr given per step must be a non-empty 1-d list of numbers, got []"),
    (lambda p: nn.Momentum([{"params": [p[0]], "lr": [0.1, 0.2]}, {"params": [p[1]]}],
                           [0.1, 0.2, 0.3], 0.9), ValueError,
     "Momentum: every per-step learning rate (learning_rate and each group's lr) must have the "
     "same number of values, as in MindSpore; got lengths [2, 3]"),
    (lambda p: nn.SGD([{"params": [p[0]], "lr": [0.1]}, {"params": [p[1]], "lr": [0.1, 0.2]}],
                      0.1), ValueError,
     "SGD: every per-step learning rate (learning_rate and each group's lr) must have the "
     "same number of values, as in MindSpore; got lengths [1, 2]"),
    (lambda p: nn.SGD([{"params": p, "grad_centralization": 1}], 0.1), TypeError,
     "SGD: a group's grad_centralization must be a bool, got 1 (int)"),
], ids=["lr_type", "lr_negative", "list_negative", "tensor_2d", "list_empty", "length_vs_lr",
        "length_vs_group", "gc_type"])
def test_group_errors(make, err, msg):
    with pytest.raises(err) as e:
        make(_params())
    assert str(e.value) == msg
