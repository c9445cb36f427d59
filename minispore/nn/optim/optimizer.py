"""nn.Optimizer: the state every optimizer shares (MindSpore 2.x semantics).

- `parameters`: a ParameterTuple of the Parameters to update (the network's, not registered as
  this Cell's own, so they are not renamed or duplicated).
- Parameter groups (MindSpore's dicts: `{"params": [...], "lr": ..., "weight_decay": 0.0,
  "grad_centralization": True}`, and `{"order_params": [...]}` for the order). Parameters outside
  a group's key take the optimizer's setting.
  - `lr` takes every form `learning_rate` takes. As in MindSpore, each group with an `lr` gets
    its own source named 'learning_rate_group_<k>' (k: the group's index in the list, the
    order_params dict counted): a float (or 0-d Tensor) is a Parameter of shape (), so changing
    it does not recompile; a per-step list or 1-d Tensor a table Parameter; a
    LearningRateSchedule Cell (or callable) is called with the global step. The optimizer's own
    'learning_rate' is registered only when a Parameter outside every lr group uses it, so a
    checkpoint holds MindSpore's names. As in MindSpore, every per-step list (the optimizer's
    and the groups') must have the same length (ValueError otherwise); floats and schedules mix
    freely with them.
  - `weight_decay` is applied to every Parameter of the group (no 'beta'/'gamma' name filter).
  - `grad_centralization` (a bool): gradient centralization, g - mean(g over every axis but 0),
    applied with MindSpore's rule (`_apply_grad_centralization` in its nn/optim/optimizer.py):
    only to Parameters of rank >= 2 whose shape[1] is a multiple of 16 (conv weights and the
    like); other gradients of the group are left as they are. SGD centralizes the loss-scaled
    gradient before the weight decay term is added (MindSpore's SGD kernel adds it), Momentum
    and Adam after it; AdamWeightDecay ignores it (with a warning), as MindSpore's does.
- `learning_rate`: a float/int or a 0-d Tensor (kept in a Parameter, so changing it does not
  recompile), a list/tuple or 1-d Tensor of per-step values (step t uses entry min(t, n-1)), or a
  LearningRateSchedule Cell / callable taking the global step and returning the rate.
- `global_step`: Parameter int32 of shape (1,), read by get_lr() and then increased by one. Every
  rate of a step (the optimizer's and the groups') is read at the step before the increase.
- `get_lr()`: the optimizer's rate (a 0-d Tensor), or, as in MindSpore, when a group sets `lr`
  (`is_group_lr`), a tuple with each Parameter's rate; `param_lrs(get_lr())` is always the
  per-Parameter tuple.
- `weight_decay` (L2 added to the gradient of every parameter whose name contains neither 'beta'
  nor 'gamma', MindSpore's default filter) and `loss_scale` (gradients divided by it).
State tensors (moments, ...) are Parameters named '<prefix>.<parameter name>', registered on the
optimizer so checkpoints can hold them. The Parameters are registered in MindSpore's order and
under MindSpore's names: global_step, the learning rates, the updated Parameters themselves
(under their own names, as MindSpore's ParameterTuple attribute puts them), then each
optimizer's own state (Momentum: momentum, moments.*; SGD: momentum, accum.*, stat.*; Adam:
beta1_power, beta2_power, moment1.*, moment2.*; AdamWeightDecay: adam_m.*, adam_v.*). All
updates go through ops.assign, so the same construct runs eagerly in PyNative and inside the
compiled graph in GRAPH_MODE.
"""
from __future__ import annotations

import numbers

import numpy as np

from ...core.arg_checks import check_bool
from ...core import dtype as dt
from ...core.ops import array as A
from ...core.ops import index_ops as X
from ...core.ops import math as M
from ...core.ops import reduce as R
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


def _lr_form(who, name, lr):
    """A learning rate in any of MindSpore's forms as ('const', float), ('table', float32 1-d
    array) or ('schedule', Cell or callable); `name` is what error messages call it."""
    if isinstance(lr, Cell) or (callable(lr) and not isinstance(lr, Tensor)):
        return "schedule", lr
    if isinstance(lr, (list, tuple)) or (isinstance(lr, Tensor) and lr.ndim == 1):
        arr = lr.asnumpy() if isinstance(lr, Tensor) else np.asarray(lr)
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
            raise ValueError(f"{who}: {name} given per step must be a non-empty 1-d list of "
                             f"numbers, got {lr!r}")
        if (arr < 0).any():
            raise ValueError(f"{who}: {name} values must be >= 0, got {arr.min()}")
        return "table", arr.astype(np.float32)
    if isinstance(lr, Tensor):
        if lr.ndim != 0:
            raise ValueError(f"{who}: {name} as a Tensor must be 0-d or 1-d, got shape "
                             f"{lr.shape}")
        lr = float(lr.asnumpy())
    elif isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f"{who}: {name} must be a float, a Tensor, a list of per-step values or "
                        f"a LearningRateSchedule, got {type(lr).__name__}")
    if lr < 0:
        raise ValueError(f"{who}: {name} must be >= 0, got {lr}")
    return "const", float(lr)


_GROUP_KEYS = {"params", "lr", "learning_rate", "weight_decay", "order_params",
               "grad_centralization"}


def _parse_groups(who, items):
    """(Parameters, their group's (index in `items`, lr form) or None, their group's weight decay
    or None, their group's grad_centralization flag) from a flat list or from MindSpore's
    parameter groups. Parameters of one group share one lr entry (one source per group)."""
    if not any(isinstance(g, dict) for g in items):
        return items, [None] * len(items), [None] * len(items), [False] * len(items)
    order, params, lrs, wds, gcs = None, [], {}, {}, {}
    for group_num, g in enumerate(items):
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
        if "params" not in g:
            raise ValueError(f"{who}: a parameter group needs 'params', got keys {sorted(g)}")
        lr = g.get("lr", g.get("learning_rate"))
        if lr is not None:
            lr = (group_num, _lr_form(who, "a group's lr", lr))
        wd = g.get("weight_decay")
        if wd is not None:
            wd = _check_float(who, "a group's weight_decay", wd, low=0.0)
        gc = g.get("grad_centralization", False)
        check_bool(who, "a group's grad_centralization", gc)
        for p in g["params"]:
            params.append(p)
            lrs[id(p)], wds[id(p)], gcs[id(p)] = lr, wd, gc
    if order is not None:
        stray = [getattr(p, "name", p) for p in params if id(p) not in {id(q) for q in order}]
        if stray:
            raise ValueError(f"{who}: order_params must list every grouped Parameter; missing "
                             f"{stray}")
        params = order
    return (params, [lrs.get(id(p)) for p in params], [wds.get(id(p)) for p in params],
            [gcs.get(id(p), False) for p in params])


def _centralizes(p):
    """MindSpore's rule for grad_centralization: rank >= 2 and shape[1] % 16 == 0."""
    return len(p.shape) >= 2 and p.shape[1] % 16 == 0


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
        params, group_lr, group_wd, group_gc = _parse_groups(who, list(parameters))
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
        self.grad_centralization_flags = tuple(group_gc)
        self._centralize = tuple(gc and _centralizes(p) for gc, p in zip(group_gc, params))
        self.global_step = Parameter(Tensor(np.zeros((1,), np.int32)), name="global_step")
        own = _lr_form(who, "learning_rate", learning_rate)
        self._init_lrs(who, own, group_lr)
        for p in params:        # MindSpore's ParameterTuple attribute registers them by name
            if p.name not in self._params:
                self._params[p.name] = p

    def _init_lrs(self, who, own, group_lr):
        """The rate sources, registered in MindSpore's order (each first use along the
        Parameters): the optimizer's own ('learning_rate': a Parameter of shape () or (n,), or a
        schedule Cell) where a Parameter takes it, and one source per lr group
        ('learning_rate_group_<k>'). `_lr_slot[i]` is the index of Parameter i's source in
        `_group_sources`, or None for the optimizer's rate."""
        lengths = {len(f[1][1]) for f in group_lr if f and f[1][0] == "table"}
        if own[0] == "table":
            lengths.add(len(own[1]))
        if len(lengths) > 1:
            raise ValueError(f"{who}: every per-step learning rate (learning_rate and each "
                             f"group's lr) must have the same number of values, as in MindSpore; "
                             f"got lengths {sorted(lengths)}")
        kind, value = own
        self._lr_kind, self.lr_steps = kind, int(value.size) if kind == "table" else 0
        self.__dict__["lr_schedule"] = value if kind == "schedule" else None
        default = value if kind == "schedule" else Parameter(
            Tensor(value if kind == "table" else np.float32(value)), name="learning_rate")
        # MindSpore registers the optimizer's rate only where a Parameter uses it
        self._uses_own_lr = any(f is None for f in group_lr) or not any(group_lr)
        if not self._uses_own_lr and isinstance(default, (Parameter, Cell)):
            self.__dict__["learning_rate"] = default        # kept, not registered
        keys, slots, sources, consts, tables, schedules = {}, [], [], [], [], []
        for entry in list(group_lr) or [None]:
            if entry is None:
                if isinstance(default, (Parameter, Cell)) and "learning_rate" not in \
                        self._params and "learning_rate" not in self._cells:
                    self.learning_rate = default
                slots.append(None)
                continue
            group_num, (kind, value) = entry
            if group_num not in keys:
                keys[group_num] = len(sources)
                name = f"learning_rate_group_{group_num}"
                if kind in ("const", "table"):
                    param = Parameter(Tensor(value if kind == "table" else np.float32(value)),
                                      name=name)
                    self._params[name] = param
                    (consts if kind == "const" else tables).append(param)
                    sources.append((kind, len(consts if kind == "const" else tables) - 1,
                                    int(value.size) if kind == "table" else 0))
                else:
                    if isinstance(value, Cell) and all(value is not c
                                                       for c in self._cells.values()):
                        setattr(self, name, value)      # registered (once) for its state
                    schedules.append(value)
                    sources.append(("schedule", len(schedules) - 1, 0))
            slots.append(keys[group_num])
        self.group_lrs = ParameterTuple(consts)
        self.group_lr_tables = ParameterTuple(tables)
        self.__dict__["group_lr_schedules"] = tuple(schedules)
        self._group_sources = tuple(sources)
        self._lr_slot = tuple(slots) if group_lr else (None,) * len(self.parameters)
        self.is_group_lr = bool(sources)
        self.dynamic_lr = own[0] != "const" or any(s[0] != "const" for s in sources)

    def _state(self, prefix, init=0.0):
        """A ParameterTuple of Parameters like `parameters`, named '<prefix>.<name>', filled with
        `init`, registered on this Cell; each keeps its Parameter's requires_grad (MindSpore's
        ParameterTuple.clone), as the optimizer's own Parameters keep the default True, so
        `train_network.trainable_params()` lists what MindSpore's lists."""
        out = []
        for p in self.parameters:
            s = Parameter(Tensor(np.full(p.shape, init, p.dtype.np)), name=f"{prefix}.{p.name}",
                          requires_grad=p.requires_grad)
            self._params[s.name] = s
            out.append(s)
        return ParameterTuple(out)

    def _rate(self, kind, src, n, step):
        """One learning rate at `step` (a 0-d float32 Tensor): src is a float's Parameter
        ('const'), a per-step table Parameter of n values ('table') or a schedule."""
        if kind == "const":
            return src * 1.0
        if kind == "table":
            return X.gather(src, A.reshape(M.minimum(step, n - 1), ()), 0)
        return A.reshape(M.cast(src(step), dt.float32), ())

    def _group_rate(self, source, step):
        kind, k, n = source
        if kind == "const":
            return self._rate(kind, self.group_lrs[k], n, step)
        if kind == "table":
            return self._rate(kind, self.group_lr_tables[k], n, step)
        return self._rate(kind, self.group_lr_schedules[k], n, step)

    def get_lr(self):
        """The learning rate of this step, then increments global_step: a 0-d float32 Tensor, or
        when a group sets its own lr (is_group_lr), a tuple with each Parameter's rate (as
        MindSpore's get_lr). Every rate is read at the same step, the one before the increment."""
        step = self.global_step * 1     # the value now: assign() below rebinds the Parameter
        lr = None
        if self._uses_own_lr:
            own = self.lr_schedule if self._lr_kind == "schedule" else self.learning_rate
            lr = self._rate(self._lr_kind, own, self.lr_steps, step)
        if self.is_group_lr:
            rates = tuple(self._group_rate(s, step) for s in self._group_sources)
            lr = tuple(lr if k is None else rates[k] for k in self._lr_slot)
        assign(self.global_step, step + 1)
        return lr

    def param_lrs(self, lr) -> tuple:
        """The learning rate of each Parameter this step, from `lr` = get_lr()."""
        if isinstance(lr, tuple):
            return lr
        return (lr,) * len(self._lr_slot)

    def decay_weight(self, gradients):
        """g + weight_decay * p with each Parameter's weight decay (see weight_decays)."""
        if not any(self.weight_decays):
            return gradients
        return tuple(g + wd * p if wd else g
                     for p, g, wd in zip(self.parameters, gradients, self.weight_decays))

    def gradients_centralization(self, gradients):
        """g - mean(g over every axis but 0) for the Parameters of groups with
        grad_centralization=True that meet MindSpore's rule (rank >= 2, shape[1] % 16 == 0)."""
        if not any(self._centralize):
            return gradients
        return tuple(g - R.mean(g, tuple(range(1, len(p.shape))), keep_dims=True) if c else g
                     for p, g, c in zip(self.parameters, gradients, self._centralize))

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
