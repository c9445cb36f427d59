"""nn.SGD and nn.Momentum (MindSpore 2.x update rules).

SGD (PyTorch's rule, which MindSpore's SGD kernel implements), with g = C(grad) + weight_decay * p
(C: gradient centralization where a group asks for it, see optimizer.py; identity elsewhere):
    where stat > 0 (every element's first step): accum = g, stat = 0;
    elsewhere: accum = momentum * accum + (1 - dampening) * g          (momentum > 0)
    d = g + momentum * accum if nesterov else accum   (d = g when momentum == 0)
    p = p - lr * d
As MindSpore's SGD, it keeps `momentum` (a float32 Parameter of shape ()), `accum.*` (zeros) and
`stat.*` (ones) for every Parameter whatever the momentum, so checkpoints hold MindSpore's names
and a resumed run continues MindSpore's accumulators. Setting the `momentum` Parameter changes the
rate used; an SGD built with momentum 0.0 stays plain SGD (its step reads no accumulator).
Momentum (MindSpore's ApplyMomentum), with g = C(grad (+ weight_decay * p for decayed params)):
    accum = momentum * accum + g
    p = p - lr * (g + momentum * accum) if use_nesterov else p - lr * accum
Its `momentum` is a float32 Parameter of shape () named 'momentum' and its accumulators are
`moments.*`, MindSpore's names (checkpoints of both hold the same entries).
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ...core.ops import math as M
from ...core.ops.state import assign, depend
from ...core.tensor import Parameter, Tensor
from .optimizer import Optimizer, _check_float


def _momentum_parameter(value):
    """MindSpore's `Parameter(Tensor(momentum, float32), name="momentum")`."""
    return Parameter(Tensor(np.float32(value)), name="momentum")


def _like(rate, x):
    """`rate` (a float32 Tensor) in x's dtype, so a float16 accumulator stays float16."""
    return rate if x.dtype == dt.float32 else M.cast(rate, x.dtype)


class SGD(Optimizer):
    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self._momentum = _check_float("SGD", "momentum", momentum, low=0.0)
        self.momentum = _momentum_parameter(self._momentum)
        self.dampening = _check_float("SGD", "dampening", dampening, low=0.0)
        check_bool("SGD", "nesterov", nesterov)
        if nesterov and (self._momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening == 0, got "
                             f"momentum={self._momentum}, dampening={self.dampening}; set "
                             f"momentum (e.g. 0.9) and dampening=0.0, or nesterov=False")
        self.nesterov = nesterov
        self.accum = self._state("accum")
        self.stat = self._state("stat", init=1.0)

    def construct(self, gradients):
        self._check_grads(gradients)
        lrs = self.param_lrs(self.get_lr())
        # MindSpore's SGD centralizes the scaled gradient; its kernel then adds weight_decay * p
        gradients = self.decay_weight(self.gradients_centralization(self.scale_grad(gradients)))
        updated = []
        for i, (p, g) in enumerate(zip(self.parameters, gradients)):
            d = g
            if self._momentum > 0.0:
                acc, stat = self.accum[i], self.stat[i]
                momentum = _like(self.momentum, acc)
                later = acc * momentum + g * (1.0 - self.dampening)
                new_acc = M.where(M.greater(stat, 0), g, later)
                assign(stat, stat * 0)
                assign(acc, new_acc)
                d = g + new_acc * momentum if self.nesterov else new_acc
            updated.append(assign(p, p - lrs[i] * d))
        return depend(True, tuple(updated))

    def extend_repr(self):
        return (super().extend_repr() + f", momentum={self._momentum}, "
                f"dampening={self.dampening}, nesterov={self.nesterov}")


class Momentum(Optimizer):
    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if isinstance(momentum, int) and not isinstance(momentum, bool):
            raise TypeError("For 'Momentum', the type of 'momentum' should be 'float', but got "
                            "type 'int'.")
        self._momentum = _check_float("Momentum", "momentum", momentum, low=0.0)
        check_bool("Momentum", "use_nesterov", use_nesterov)
        self.momentum = _momentum_parameter(self._momentum)
        self.use_nesterov = use_nesterov
        self.moments = self._state("moments")

    def construct(self, gradients):
        self._check_grads(gradients)
        lrs = self.param_lrs(self.get_lr())
        # MindSpore's order: decay_weight, gradients_centralization, scale_grad (all linear, so
        # scaling first gives the same gradient)
        gradients = self.gradients_centralization(self.decay_weight(self.scale_grad(gradients)))
        updated = []
        for p, g, acc, lr in zip(self.parameters, gradients, self.moments, lrs):
            momentum = _like(self.momentum, acc)
            new_acc = acc * momentum + g
            assign(acc, new_acc)
            d = g + new_acc * momentum if self.use_nesterov else new_acc
            updated.append(assign(p, p - lr * d))
        return depend(True, tuple(updated))

    def extend_repr(self):
        return (super().extend_repr() + f", momentum={self._momentum}, "
                f"use_nesterov={self.use_nesterov}")
