"""nn.Optimizer: the state every optimizer shares (MindSpore 2.x semantics).

- `parameters`: a ParameterTuple of the Parameters to update (the network's, not registered as
  this Cell's own, so they are not renamed or duplicated). Parameter groups (MindSpore's dicts:
  `{"params": [...], "lr": 0.01, "weight_decay": 0.0}`, and `{"order_params": [...]}` for the
  order) give their Parameters their own float learning rate (a Parameter per group, so it can
  be changed without recompiling) and weight decay (applied to every Parameter of the group, no
  name filter); the others take the optimizer's. `grad_centralization` raises.
- `learning_rate`: a float/int or a 0-d Tensor (kept in a Parameter, so changing it does not
  recompile), a list/tuple or 1-d Tensor of per-step values (step t uses entry min(t, n-1)), or a
  LearningRateSchedule Cell / callable taking the global step and returning the rate.
- `global_step`: Parameter int32 of shape (1,), read by get_lr() and then increased by one.
- `weight_decay` (L2 added to the gradient of every parameter whose name contains neither 'beta'
  nor 'gamma', MindSpore's default filter) and `loss_scale` (gradients divided by it).
State tensors (moments, ...) are Parameters named '<prefix>.<parameter name>', registered on the
optimizer so checkpoints can hold them. All updates go through ops.assign, so the same construct
runs eagerly in PyNative and inside the compiled graph in GRAPH_MODE.
"""
from __future__ import annotations

import numbers

import numpy as np

from ...core import dtype as dt
from ...core.ops import array as A
from ...core.ops import index_ops as X
from ...core.ops import math as M
from ...core.ops.state import assign
from ...core.tensor import Parameter, ParameterTuple, Tensor
from ..cell import Cell


class LearningRateSchedule(Cell):
    """Base of per-step learning rates: construct(global_step) -> the rate (a Tensor)."""

    def construct(self, global_step):
        raise NotImplementedError(f"{type(self).__name__} must define construct(global_step)")


def _check_float(who, name, value, low=None, high=None, low_open=False, high_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {name} must be a float, got {value!r} ({type(value).__name__})")
    value = float(value)
    bad_low = low is not None and (value <= low if low_open else value < low)
    bad_high = high is not None and (value >= high if high_open else value > high)
    if bad_low or bad_high:
        lo = "" if low is None else ("(" if low_open else "[") + f"{low}"
        hi = "" if high is None else f"{high}" + (")" if high_open else "]")
        rng = f"in {lo}, {hi}" if low is not None and high is not None else (
            f"{'>' if low_open else '>='} {low}" if low is not None else
            f"{'<' if high_open else '<='} {high}")
        raise ValueError(f"{who}: {name} must be {rng}, got {value}")
    return value


_GROUP_KEYS = {"params", "lr", "learning_rate", "weight_decay", "order_params",
               "grad_centralization"}


def _parse_groups(who, items):
    """(Parameters, their group lr or None, their group weight decay or None) from a flat list
    or from MindSpore's parameter groups."""
    if not any(isinstance(g, dict) for g in items):
        return items, [None] * len(items), [None] * len(items)
    order, params, lrs, wds = None, [], {}, {}
    for g in items:
        if not isinstance(g, dict):
            raise TypeError(f"{who}: params mixes parameter groups (dicts) and "
                            f"{type(g).__name__}s; put every Parameter in a group")
        unknown = sorted(set(g) - _GROUP_KEYS)
        if unknown:
            raise ValueError(f"{who}: unknown key(s) {unknown} in a parameter group; valid: "
                             f"{', '.join(sorted(_GROUP_KEYS))}")
        if "order_params" in g:
            order = list(g["order_params"])
            continue
        if g.get("grad_centralization"):
            raise NotImplementedError(f"{who}: grad_centralization in a parameter group is not "
                                      f"supported by minispore; remove it from the group")
        if "params" not in g:
            raise ValueError(f"{who}: a parameter group needs 'params', got keys {sorted(g)}")
        lr = g.get("lr", g.get("learning_rate"))
        if lr is not None:
            if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
                raise TypeError(f"{who}: a group's lr must be a float here, got {lr!r}; per-step "
                                f"lists and schedules only as the optimizer's learning_rate")
            lr = _check_float(who, "a group's lr", lr, low=0.0)
        wd = g.get("weight_decay")
        if wd is not None:
            wd = _check_float(who, "a group's weight_decay", wd, low=0.0)
        for p in g["params"]:
            params.append(p)
            lrs[id(p)], wds[id(p)] = lr, wd
    if order is not None:
        stray = [getattr(p, "name", p) for p in params if id(p) not in {id(q) for q in order}]
        if stray:
            raise ValueError(f"{who}: order_params must list every grouped Parameter; missing "
                             f"{stray}")
        params = order
    return params, [lrs.get(id(p)) for p in params], [wds.get(id(p)) for p in params]


class Optimizer(Cell):
    """Base class; subclasses define construct(gradients). The update is compiled in PyNative
    mode too (`jit_in_pynative`, MindSpore's @jit on its optimizers' construct): one fused
    program per step instead of ~5 eager ops and an assign per Parameter."""

    jit_in_pynative = True

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        who = type(self).__name__
        if isinstance(parameters, (Parameter, Tensor)) or parameters is None:
            raise TypeError(f"{who}: params must be an iterable of Parameters such as "
                            f"net.trainable_params(), got {type(parameters).__name__}")
        params, group_lr, group_wd = _parse_groups(who, list(parameters))
        if not params:
            raise ValueError(f"{who}: params is empty; pass net.trainable_params() of a network "
                             f"that has Parameters")
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"{who}: params must hold Parameters, got "
                                f"{type(p).__name__}; pass net.trainable_params()")
        names = [p.name for p in params]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"{who}: parameter names must be unique, {dup} repeat; give the "
                             f"Parameters distinct names")
        self.parameters = ParameterTuple(params)
        self._parameters = self.parameters
        self.weight_decay = _check_float(who, "weight_decay", weight_decay, low=0.0)
        self.loss_scale = _check_float(who, "loss_scale", loss_scale, low=0.0, low_open=True)
        self.decay_flags = tuple("beta" not in p.name and "gamma" not in p.name for p in params)
        # per Parameter: its group's weight decay, else the optimizer's where the filter allows
        self.weight_decays = tuple(
            wd if wd is not None else (self.weight_decay if flag else 0.0)
            for wd, flag in zip(group_wd, self.decay_flags))
        rates = {lr: Parameter(Tensor(np.float32(lr)), name=f"learning_rate_group{k}",
                               requires_grad=False)
                 for k, lr in enumerate(dict.fromkeys(r for r in group_lr if r is not None))}
        self.group_lrs = ParameterTuple(list(rates.values()))
        self._lr_slot = tuple(None if r is None else list(rates).index(r) for r in group_lr)
        self.global_step = Parameter(Tensor(np.zeros((1,), np.int32)), name="global_step",
                                     requires_grad=False)
        self._init_lr(who, learning_rate)

    def _init_lr(self, who, lr):
        self.dynamic_lr, self.lr_steps = False, 0
        self.__dict__["lr_schedule"] = None
        if isinstance(lr, Cell) or (callable(lr) and not isinstance(lr, Tensor)):
            self.dynamic_lr = True
            self.__dict__["lr_schedule"] = lr          # registered once, as learning_rate
            if isinstance(lr, Cell):
                self.learning_rate = lr
            return
        if isinstance(lr, (list, tuple)) or (isinstance(lr, Tensor) and lr.ndim == 1):
            arr = lr.asnumpy() if isinstance(lr, Tensor) else np.asarray(lr)
            if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
                raise ValueError(f"{who}: a per-step learning_rate must be a non-empty 1-d list "
                                 f"of numbers, got {lr!r}")
            if (arr < 0).any():
                raise ValueError(f"{who}: learning_rate values must be >= 0, got {arr.min()}")
            self.dynamic_lr, self.lr_steps = True, int(arr.size)
            self.learning_rate = Parameter(Tensor(arr.astype(np.float32)), name="learning_rate",
                                           requires_grad=False)
            return
        if isinstance(lr, Tensor):
            if lr.ndim != 0:
                raise ValueError(f"{who}: a Tensor learning_rate must be 0-d or 1-d, got shape "
                                 f"{lr.shape}")
            lr = float(lr.asnumpy())
        elif isinstance(lr, bool) or not isinstance(lr, numbers.Real):
            raise TypeError(f"{who}: learning_rate must be a float, a Tensor, a list of per-step "
                            f"values or a LearningRateSchedule, got {type(lr).__name__}")
        if lr < 0:
            raise ValueError(f"{who}: learning_rate must be >= 0, got {lr}")
        self.learning_rate = Parameter(Tensor(np.float32(lr)), name="learning_rate",
                                       requires_grad=False)

    def _state(self, prefix, init=0.0):
        """A ParameterTuple of Parameters like `parameters`, named '<prefix>.<name>', filled with
        `init`, registered on this Cell."""
        out = []
        for p in self.parameters:
            s = Parameter(Tensor(np.full(p.shape, init, p.dtype.np)), name=f"{prefix}.{p.name}",
                          requires_grad=False)
            self._params[s.name] = s
            out.append(s)
        return ParameterTuple(out)

    def get_lr(self):
        """The learning rate of this step (a 0-d float32 Tensor); increments global_step."""
        step = self.global_step * 1     # the value now: assign() below rebinds the Parameter
        if self.lr_schedule is not None:
            lr = A.reshape(M.cast(self.lr_schedule(step), dt.float32), ())
        elif self.dynamic_lr:
            idx = A.reshape(M.minimum(step, self.lr_steps - 1), ())
            lr = X.gather(self.learning_rate, idx, 0)
        else:
            lr = self.learning_rate * 1.0
        assign(self.global_step, step + 1)
        return lr

    def param_lrs(self, lr) -> tuple:
        """The learning rate of each Parameter this step: its group's, else `lr` (get_lr())."""
        return tuple(lr if k is None else self.group_lrs[k] * 1.0 for k in self._lr_slot)

    def decay_weight(self, gradients):
        """g + weight_decay * p with each Parameter's weight decay (see weight_decays)."""
        if not any(self.weight_decays):
            return gradients
        return tuple(g + wd * p if wd else g
                     for p, g, wd in zip(self.parameters, gradients, self.weight_decays))

    def scale_grad(self, gradients):
        if self.loss_scale == 1.0:
            return gradients
        return tuple(g / self.loss_scale for g in gradients)

    def _check_grads(self, gradients):
        if len(gradients) != len(self.parameters):
            raise ValueError(f"{type(self).__name__}: got {len(gradients)} gradients for "
                             f"{len(self.parameters)} parameters; pass one gradient per "
                             f"parameter, in the order of optimizer.parameters")

    def extend_repr(self):
        return f"params={len(self.parameters)}, weight_decay={self.weight_decay}"
