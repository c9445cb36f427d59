"""nn.Adam and nn.AdamWeightDecay (MindSpore 2.x update rules).

Adam (MindSpore's ApplyAdam), g = C(grad (+ weight_decay * p, L2)), t = 1, 2, ...
(C: gradient centralization where a group asks for it, see optimizer.py):
    m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g^2
    lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)          (bias correction)
    p = p - lr_t * m / (sqrt(v) + eps)     (use_nesterov: m -> beta1 * m + (1 - beta1) * g)
AdamWeightDecay (decoupled decay, no bias correction, as MindSpore's; like MindSpore's, it does
not centralize gradients, and warns when a group sets grad_centralization):
    m, v as above;  u = m / (sqrt(v) + eps) (+ weight_decay * p for decayed params)
    p = p - lr * u
"""
from __future__ import annotations

import warnings

import numpy as np

from ...core.arg_checks import check_bool
from ...core.ops import math as M
from ...core.ops.state import assign, depend
from ...core.tensor import Parameter, Tensor
from .optimizer import Optimizer, _check_float


def _check_betas(who, beta1, beta2, eps):
    b1 = _check_float(who, "beta1", beta1, low=0.0, high=1.0, high_open=True)
    b2 = _check_float(who, "beta2", beta2, low=0.0, high=1.0, high_open=True)
    e = _check_float(who, "eps", eps, low=0.0, low_open=True)
    return b1, b2, e


class Adam(Optimizer):
    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0,
                 use_amsgrad=False, **kwargs):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = _check_betas("Adam", beta1, beta2, eps)
        for n, v in (("use_locking", use_locking), ("use_nesterov", use_nesterov),
                     ("use_amsgrad", use_amsgrad)):
            check_bool("Adam", n, v)
        if use_amsgrad:
            raise ValueError("Adam: use_amsgrad=True is not supported by minispore; use "
                             "use_amsgrad=False")
        if kwargs:
            raise TypeError(f"Adam: unexpected arguments {sorted(kwargs)}")
        self.use_nesterov = use_nesterov
        self.beta1_power = Parameter(Tensor(np.float32(1.0)), name="beta1_power")
        self.beta2_power = Parameter(Tensor(np.float32(1.0)), name="beta2_power")
        self.moment1 = self._state("moment1")
        self.moment2 = self._state("moment2")

    def construct(self, gradients):
        self._check_grads(gradients)
        lrs = self.param_lrs(self.get_lr())
        # MindSpore's order: decay_weight, gradients_centralization, scale_grad (all linear)
        gradients = self.gradients_centralization(self.decay_weight(self.scale_grad(gradients)))
        b1p = assign(self.beta1_power, self.beta1_power * self.beta1)
        b2p = assign(self.beta2_power, self.beta2_power * self.beta2)
        correction = M.sqrt(1.0 - b2p) / (1.0 - b1p)
        updated = []
        for p, g, m, v, lr in zip(self.parameters, gradients, self.moment1, self.moment2, lrs):
            lr_t = lr * correction
            new_m = m * self.beta1 + g * (1.0 - self.beta1)
            new_v = v * self.beta2 + M.square(g) * (1.0 - self.beta2)
            assign(m, new_m)
            assign(v, new_v)
            num = new_m * self.beta1 + g * (1.0 - self.beta1) if self.use_nesterov else new_m
            updated.append(assign(p, p - lr_t * num / (M.sqrt(new_v) + self.eps)))
        return depend(True, tuple(updated))

    def extend_repr(self):
        return (super().extend_repr() + f", beta1={self.beta1}, beta2={self.beta2}, "
                f"eps={self.eps}, use_nesterov={self.use_nesterov}")


class AdamWeightDecay(Optimizer):
    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
                 weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = _check_betas("AdamWeightDecay", beta1, beta2, eps)
        if any(self.grad_centralization_flags):
            warnings.warn("AdamWeightDecay: grad_centralization in a parameter group has no "
                          "effect (MindSpore's AdamWeightDecay does not centralize gradients "
                          "either); use Adam or Momentum for it, or remove the key", stacklevel=2)
        self.moments1 = self._state("adam_m")
        self.moments2 = self._state("adam_v")

    def construct(self, gradients):
        self._check_grads(gradients)
        lrs = self.param_lrs(self.get_lr())
        updated = []
        for p, g, m, v, wd, lr in zip(self.parameters, gradients, self.moments1, self.moments2,
                                      self.weight_decays, lrs):
            new_m = m * self.beta1 + g * (1.0 - self.beta1)
            new_v = v * self.beta2 + M.square(g) * (1.0 - self.beta2)
            assign(m, new_m)
            assign(v, new_v)
            u = new_m / (M.sqrt(new_v) + self.eps)
            if wd > 0.0:
                u = u + p * wd
            updated.append(assign(p, p - lr * u))
        return depend(True, tuple(updated))

    def extend_repr(self):
        return (super().extend_repr() + f", beta1={self.beta1}, beta2={self.beta2}, "
                f"eps={self.eps}")
