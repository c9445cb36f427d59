"""mindspore.mint.optim: PyTorch-style optimizers (torch.optim's signatures, defaults and update
rules), on minispore's optimizer machinery (nn.Optimizer: state Parameters, updates through
ops.assign, the step compiled in PyNative as in GRAPH_MODE). Used as MindSpore's:
`optimizer(grads)` in a train step, grads in the order of `optimizer.parameters`.

`params` is an iterable of Parameters or of parameter groups (dicts with 'params' and any of
the optimizer's hyper-parameters: 'lr', 'weight_decay', 'betas', 'eps', 'amsgrad', 'maximize',
'momentum', 'dampening', 'nesterov'). `param_groups` holds one dict per group, its 'lr' a
Parameter named 'learning_rate_group_<i>' (as MindSpore's): set a new rate with
`ops.assign(group['lr'], value)`. Weight decay applies to every Parameter of a group.

Update rules, t = 1, 2, ... (g negated first when maximize):
- Adam: g += weight_decay * p; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (amsgrad:
  v_max = max(v_max, v) in place of v below); p -= lr / (1 - b1^t) * m / (sqrt(v) /
  sqrt(1 - b2^t) + eps).
- AdamW (and FusedAdamW): p *= 1 - lr * weight_decay, then Adam's update without the L2 term.
- SGD: g += weight_decay * p; with momentum: buf = g at the first step, else momentum * buf +
  (1 - dampening) * g; d = g + momentum * buf (nesterov) or buf; p -= lr * d."""
from __future__ import annotations

import numbers

import numpy as _np

from ..core.ops import math as _m
from ..core.ops.state import assign as _assign
from ..core.ops.state import depend as _depend
from ..core.tensor import Parameter as _Parameter
from ..core.tensor import ParameterTuple as _ParameterTuple
from ..core.tensor import Tensor as _Tensor
from ..nn.optim.optimizer import Optimizer as _Optimizer


def _float(who, name, v, low=0.0, high=None, high_open=False):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a float, got {v!r} ({type(v).__name__})")
    v = float(v)
    if v < low or (high is not None and (v >= high if high_open else v > high)):
        raise ValueError(f"{who}: invalid {name} value: {v}")
    return v


def _bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError(f"{who}: {name} must be a bool, got {v!r}")
    return v


def _lr_value(who, lr):
    if isinstance(lr, _Tensor):
        if lr.ndim != 0:
            raise ValueError(f"{who}: lr as a Tensor must be 0-d, got shape {lr.shape}")
        lr = float(lr.asnumpy())
    return _float(who, "lr", lr)


class _TorchOptimizer(_Optimizer):
    """Parameter groups with PyTorch's hyper-parameters over nn.Optimizer's state handling."""

    def __init__(self, params, defaults):
        who = type(self).__name__
        if params is None or isinstance(params, (_Parameter, _Tensor)):
            raise TypeError(f"{who}: params must be an iterable of Parameters or of parameter "
                            f"groups (dicts), got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError(f"{who}: params must not be empty")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        flat, param_groups, seen = [], [], set()
        for i, g in enumerate(groups):
            if not isinstance(g, dict):
                raise TypeError(f"{who}: parameter groups must all be dicts")
            unknown = sorted(set(g) - set(defaults) - {"params"})
            if unknown:
                raise ValueError(f"{who}: unknown key(s) {unknown} in a parameter group; valid: "
                                 f"'params', {', '.join(repr(k) for k in defaults)}")
            ps = g["params"]
            ps = [ps] if isinstance(ps, _Parameter) else list(ps)
            for p in ps:
                if not isinstance(p, _Parameter):
                    raise TypeError(f"{who}: can only optimize Parameters, got "
                                    f"{type(p).__name__}")
                if id(p) in seen:
                    raise ValueError(f"{who}: some parameters appear in more than one "
                                     f"parameter group")
                seen.add(id(p))
            group = dict(defaults)
            group.update({k: v for k, v in g.items() if k != "params"})
            group = self._check_group(who, group)
            group["params"] = ps
            group["lr"] = _Parameter(_Tensor(_np.float32(_lr_value(who, group["lr"]))),
                                    name=f"learning_rate_group_{i}", requires_grad=False)
            flat.extend(ps)
            param_groups.append(group)
        super().__init__(param_groups[0]["lr"].asnumpy().item(), flat, 0.0)
        self.param_groups = param_groups
        self.lrs = _ParameterTuple([g["lr"] for g in self.param_groups])
        for lr in self.lrs:
            self._params[lr.name] = lr
        self._group_of = tuple(i for i, g in enumerate(self.param_groups) for _ in g["params"])
        self.defaults = defaults

    def _check_group(self, who, group):
        raise NotImplementedError

    def _grads(self, gradients):
        """Per Parameter: (p, g, its group), g negated for a group with maximize."""
        self._check_grads(gradients)
        out = []
        for p, g, k in zip(self.parameters, gradients, self._group_of):
            group = self.param_groups[k]
            out.append((p, -g if group["maximize"] else g, group))
        return out


class _Adam(_TorchOptimizer):
    decoupled = False

    def __init__(self, params, lr, betas, eps, weight_decay, amsgrad, maximize):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize})
        self.exp_avg = self._state("exp_avg")
        self.exp_avg_sq = self._state("exp_avg_sq")
        self.max_exp_avg_sq = self._state("max_exp_avg_sq") \
            if any(g["amsgrad"] for g in self.param_groups) else ()
        self.state_step = _Parameter(_Tensor(_np.float32(0.0)), name="state_step",
                                    requires_grad=False)

    def _check_group(self, who, group):
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"{who}: betas must be a tuple of 2 floats, got {betas!r}")
        group["betas"] = (_float(who, "beta parameter at index 0", betas[0], 0.0, 1.0, True),
                          _float(who, "beta parameter at index 1", betas[1], 0.0, 1.0, True))
        group["eps"] = _float(who, "epsilon", group["eps"])
        group["weight_decay"] = _float(who, "weight_decay", group["weight_decay"])
        _bool(who, "amsgrad", group["amsgrad"])
        _bool(who, "maximize", group["maximize"])
        return group

    def construct(self, gradients):
        items = self._grads(gradients)
        t = _assign(self.state_step, self.state_step + 1.0)
        updated = []
        for i, (p, g, group) in enumerate(items):
            b1, b2 = group["betas"]
            lr, wd = group["lr"], group["weight_decay"]
            if wd and not self.decoupled:
                g = g + p * wd
            m, v = self.exp_avg[i], self.exp_avg_sq[i]
            new_m = _assign(m, m * b1 + g * (1.0 - b1))
            new_v = _assign(v, v * b2 + _m.square(g) * (1.0 - b2))
            if group["amsgrad"]:
                new_v = _assign(self.max_exp_avg_sq[i], _m.maximum(self.max_exp_avg_sq[i], new_v))
            bc1 = 1.0 - _m.pow(b1, t)
            bc2 = 1.0 - _m.pow(b2, t)
            denom = _m.sqrt(new_v) / _m.sqrt(bc2) + group["eps"]
            base = p * (1.0 - lr * wd) if wd and self.decoupled else p
            updated.append(_assign(p, base - (lr / bc1) * (new_m / denom)))
        return _depend(True, tuple(updated))


class Adam(_Adam):
    """Adam (PyTorch's torch.optim.Adam): weight_decay is an L2 term added to the gradient."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


class AdamW(_Adam):
    """AdamW (PyTorch's torch.optim.AdamW): decoupled weight decay, p *= 1 - lr * weight_decay
    before the Adam step."""
    decoupled = True

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


class FusedAdamW(AdamW):
    """MindSpore's FusedAdamW: AdamW's update (the fusion is how Ascend lays the state out in
    memory; the numbers are AdamW's)."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class SGD(_TorchOptimizer):
    """SGD with momentum, dampening, nesterov and L2 weight decay (PyTorch's torch.optim.SGD)."""

    def __init__(self, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize})
        self.momentum_buf = self._state("momentum_buf") \
            if any(g["momentum"] for g in self.param_groups) else ()
        self.step_t = _Parameter(_Tensor(_np.int32(0)), name="step_t", requires_grad=False)

    def _check_group(self, who, group):
        for k in ("momentum", "dampening", "weight_decay"):
            group[k] = _float(who, k, group[k], low=-float("inf") if k == "dampening" else 0.0)
        _bool(who, "nesterov", group["nesterov"])
        _bool(who, "maximize", group["maximize"])
        if group["nesterov"] and (group["momentum"] <= 0.0 or group["dampening"] != 0.0):
            raise ValueError(f"{who}: nesterov=True needs momentum > 0 and dampening == 0, got "
                             f"momentum={group['momentum']}, dampening={group['dampening']}")
        return group

    def construct(self, gradients):
        items = self._grads(gradients)
        first = _m.cast(_m.equal(self.step_t, 0), gradients[0].dtype)
        updated = []
        for i, (p, g, group) in enumerate(items):
            mom, wd = group["momentum"], group["weight_decay"]
            if wd:
                g = g + p * wd
            d = g
            if mom:
                buf = self.momentum_buf[i]
                later = buf * mom + g * (1.0 - group["dampening"])
                new_buf = _assign(buf, first * g + (1.0 - first) * later)
                d = g + new_buf * mom if group["nesterov"] else new_buf
            updated.append(_assign(p, p - group["lr"] * d))
        _assign(self.step_t, self.step_t + 1)
        return _depend(True, tuple(updated))


__all__ = ["Adam", "AdamW", "FusedAdamW", "SGD"]
