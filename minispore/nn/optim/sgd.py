"""nn.SGD and nn.Momentum (MindSpore 2.x update rules).

SGD (PyTorch's rule, which MindSpore's SGD kernel implements), with g = C(grad) + weight_decay * p
(C: gradient centralization where a group asks for it, see optimizer.py; identity elsewhere):
    step 0: accum = g;  later: accum = momentum * accum + (1 - dampening) * g   (momentum > 0)
    d = g + momentum * accum if nesterov else accum   (d = g when momentum == 0)
    p = p - lr * d
Momentum (MindSpore's ApplyMomentum), with g = C(grad (+ weight_decay * p for decayed params)):
    accum = momentum * accum + g
    p = p - lr * (g + momentum * accum) if use_nesterov else p - lr * accum
"""
from __future__ import annotations

from ...core.arg_checks import check_bool
from ...core.ops import array as A
from ...core.ops import math as M
from ...core.ops.state import assign, depend
from .optimizer import Optimizer, _check_float


class SGD(Optimizer):
    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_float("SGD", "momentum", momentum, low=0.0)
        self.dampening = _check_float("SGD", "dampening", dampening, low=0.0)
        check_bool("SGD", "nesterov", nesterov)
        if nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening == 0, got "
                             f"momentum={self.momentum}, dampening={self.dampening}; set "
                             f"momentum (e.g. 0.9) and dampening=0.0, or nesterov=False")
        self.nesterov = nesterov
        self.accum = self._state("accum") if self.momentum > 0.0 else ()

    def construct(self, gradients):
        self._check_grads(gradients)
        first = None
        if self.momentum > 0.0:         # read before get_lr() increments global_step
            first = M.cast(A.reshape(M.equal(self.global_step, 0), ()), gradients[0].dtype)
        lrs = self.param_lrs(self.get_lr())
        # MindSpore's SGD centralizes the scaled gradient; its kernel then adds weight_decay * p
        gradients = self.decay_weight(self.gradients_centralization(self.scale_grad(gradients)))
        updated = []
        for i, (p, g) in enumerate(zip(self.parameters, gradients)):
            d = g
            if self.momentum > 0.0:
                acc = self.accum[i]
                later = acc * self.momentum + g * (1.0 - self.dampening)
                new_acc = first * g + (1.0 - first) * later
                assign(acc, new_acc)
                d = g + new_acc * self.momentum if self.nesterov else new_acc
            updated.append(assign(p, p - lrs[i] * d))
        return depend(True, tuple(updated))

    def extend_repr(self):
        return (super().extend_repr() + f", momentum={self.momentum}, "
                f"dampening={self.dampening}, nesterov={self.nesterov}")


class Momentum(Optimizer):
    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _check_float("Momentum", "momentum", momentum, low=0.0)
        check_bool("Momentum", "use_nesterov", use_nesterov)
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
            new_acc = acc * self.momentum + g
            assign(acc, new_acc)
            d = g + new_acc * self.momentum if self.use_nesterov else new_acc
            updated.append(assign(p, p - lr * d))
        return depend(True, tuple(updated))

    def extend_repr(self):
        return (super().extend_repr() + f", momentum={self.momentum}, "
                f"use_nesterov={self.use_nesterov}")
