"""Callbacks that watch training and change it (MindSpore 2.10's): LearningRateScheduler (a
function of (lr, step) sets the optimizer's learning rate after every step), ReduceLROnPlateau
(multiplies it by `factor` when the monitored value stops improving) and EarlyStopping (stops
training when it stops improving).

The monitored value is, as in MindSpore, "loss" (the train network's output at the epoch's last
step, its mean) or a key of the callback parameters' `eval_results`: the metrics of
`Model.fit(..., valid_dataset, valid_frequency)` that epoch plus "eval_loss". On an epoch
without evaluation the value is missing: a warning (minispore's log) names the available keys
and the epoch is skipped. MindSpore's quirks are kept because scripts depend on
the numbers: a monitored value of exactly 0 counts as missing, and EarlyStopping's `baseline`,
when given (and non-zero), takes the value of `min_delta` (MindSpore 2.10 validates and stores
min_delta there).
"""
from __future__ import annotations

import math

import numpy as np

from .callback import Callback, handle_loss

# MindSpore's metrics where smaller is better ('auto' mode minimises these)
_SMALLER_BETTER = ('hausdorff_distance', 'mae', 'mse', 'loss', 'perplexity',
                   'mean_surface_distance', 'root_mean_square_distance', 'eval_loss')


def _lr_parameter(who, optimizer):
    from ..core.tensor import Parameter
    lr = getattr(optimizer, "learning_rate", None)
    if not isinstance(lr, Parameter) or lr.ndim != 0:
        raise ValueError(f"{who} does not support dynamic learning rate and group learning rate "
                         f"now: the optimizer's learning_rate must be one float (a 0-d "
                         f"Parameter), got {type(lr).__name__}")
    return lr


def _assign_lr(lr_param, value):
    from ..core.tensor import Tensor
    lr_param.set_data(Tensor(np.asarray(value, np.float32)))


def _check_number(who, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{who}', the type of '{name}' must be int or float, got "
                        f"{type(value).__name__}")
    return value


def _check_non_negative_int(who, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"For '{who}', '{name}' must be an int >= 0, got {value!r}")
    return value


def _check_bool(who, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"For '{who}', '{name}' must be a bool, got {type(value).__name__}")
    return value


class LearningRateScheduler(Callback):
    """After every training step, sets the optimizer's learning rate to
    `learning_rate_function(lr, cur_step_num)` (lr the current rate as a float, as MindSpore
    reads it: the float32 value's shortest decimal). The rate is stored as float32."""

    def __init__(self, learning_rate_function):
        if not callable(learning_rate_function):
            raise TypeError(f"LearningRateScheduler: learning_rate_function must be callable, "
                            f"got {type(learning_rate_function).__name__}")
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        cb = run_context.original_args()
        lr_param = _lr_parameter("LearningRateScheduler", cb.optimizer)
        lr = float(np.array2string(lr_param.asnumpy()))
        new_lr = self.learning_rate_function(lr, cb.cur_step_num)
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            _assign_lr(lr_param, new_lr)


class _PlateauWatcher(Callback):
    """What ReduceLROnPlateau and EarlyStopping share: the monitor, the mode and its
    comparison, and reading the monitored value from the callback parameters."""

    _WHAT = ""

    def _setup(self, monitor, mode, min_delta):
        who = type(self).__name__
        if not isinstance(monitor, str):
            raise TypeError(f"For '{who}', 'monitor' must be a str, got {type(monitor).__name__}")
        if not isinstance(mode, str):
            raise TypeError(f"For '{who}', 'mode' must be a str, got {type(mode).__name__}")
        if mode not in ('auto', 'min', 'max'):
            raise ValueError(f"mode should be 'auto', 'min' or 'max', but got {mode}.")
        self.monitor, self.mode = monitor, mode
        self.min_delta = abs(_check_number(who, "min_delta", min_delta))
        if self._minimises():
            self.is_improvement = lambda a, b: np.less(a, b - self.min_delta)
        else:
            self.is_improvement = lambda a, b: np.greater(a, b + self.min_delta)
        self.best = self._initial_best()

    def _minimises(self):
        return self.mode == 'min' or (self.mode == 'auto' and self.monitor in _SMALLER_BETTER)

    def _initial_best(self):
        return np.inf if self._minimises() else -np.inf

    def _get_monitor_value(self, cb):
        candidates = {}
        if self.monitor == "loss":
            value = handle_loss(cb.get("net_outputs"))
        else:
            candidates = cb.get("eval_results", {}) or {}
            value = candidates.get(self.monitor)
        if value is None:
            from .. import log
            log.warning("%s is conditioned on %s, which is not available. Available choices "
                        "are: %s", self._WHAT, self.monitor, set(["loss"] + list(candidates)))
        if hasattr(value, "asnumpy"):
            value = value.asnumpy()
        if isinstance(value, np.ndarray) and value.shape != ():
            raise ValueError(f"{type(self).__name__} only supports scalar monitor now.")
        return np.array(value) if value else None


class ReduceLROnPlateau(_PlateauWatcher):
    """At each epoch's end: when the monitored value has not improved by more than min_delta
    for `patience` epochs, lr <- max(lr * factor, min_lr) (in float32, the optimizer's
    learning-rate Parameter is assigned), then `cooldown` epochs without counting."""

    _WHAT = "Learning rate reduction"

    def __init__(self, monitor='eval_loss', factor=0.1, patience=10, verbose=False, mode='auto',
                 min_delta=1e-4, cooldown=0, min_lr=0):
        who = "ReduceLROnPlateau"
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or \
                not 0.0 < factor < 1.0:
            raise ValueError(f"For '{who}', 'factor' must be a float in (0.0, 1.0), got "
                             f"{factor!r}")
        self.factor = factor
        self.patience = _check_non_negative_int(who, "patience", patience)
        self.verbose = _check_bool(who, "verbose", verbose)
        self.cooldown = _check_non_negative_int(who, "cooldown", cooldown)
        self.min_lr = _check_number(who, "min_lr", min_lr)
        self.cooldown_counter = 0
        self.wait = 0
        self._setup(monitor, mode, min_delta)

    def on_train_begin(self, run_context):
        self.cooldown_counter = 0
        self.wait = 0
        self.best = self._initial_best()

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        lr_param = _lr_parameter("ReduceLROnPlateau", cb.optimizer)
        current = self._get_monitor_value(cb)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                cur_lr = np.float32(lr_param.asnumpy())
                if cur_lr > np.float32(self.min_lr):
                    new_lr = max(cur_lr * np.float32(self.factor), np.float32(self.min_lr))
                    _assign_lr(lr_param, new_lr)
                    if self.verbose:
                        print(f"Epoch {cb.cur_epoch_num:05d}: ReduceLROnPlateau reducing "
                              f"learning rate to {new_lr}.")
                self.cooldown_counter = self.cooldown
                self.wait = 0


class EarlyStopping(_PlateauWatcher):
    """At each epoch's end: when the monitored value has not improved by more than min_delta
    for `patience` epochs (counting this one), requests the stop of training;
    `restore_best_weights` then loads the train network's parameters of the best epoch.
    `stopped_epoch` is the epoch it stopped at (0: it did not)."""

    _WHAT = "Early stopping"

    def __init__(self, monitor='eval_loss', min_delta=0, patience=0, verbose=False, mode='auto',
                 baseline=None, restore_best_weights=False):
        who = "EarlyStopping"
        self.patience = _check_non_negative_int(who, "patience", patience)
        self.verbose = _check_bool(who, "verbose", verbose)
        # MindSpore 2.10 stores min_delta (validated) as the baseline when one is given
        self.baseline = _check_number(who, "min_delta", min_delta) if baseline else None
        self.restore_best_weights = _check_bool(who, "restore_best_weights",
                                                restore_best_weights)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights_param_dict = None
        self._setup(monitor, mode, min_delta)

    def on_train_begin(self, run_context):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = self._initial_best()
        self.best_weights_param_dict = None

    @staticmethod
    def _copy_parameters(network):
        from ..core.tensor import Parameter, Tensor
        return {p.name: Parameter(Tensor(p.asnumpy().copy()), name=p.name)
                for p in network.get_parameters()}

    def on_train_epoch_end(self, run_context):
        from .serialization import load_param_into_net
        cb = run_context.original_args()
        current = self._get_monitor_value(cb)
        if current is None:
            return
        if self.restore_best_weights and self.best_weights_param_dict is None:
            self.best_weights_param_dict = self._copy_parameters(cb.train_network)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights_param_dict = self._copy_parameters(cb.train_network)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb.get("cur_epoch_num")
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights_param_dict is not None:
                if self.verbose:
                    print('Restoring model weights from the end of the best epoch.')
                load_param_into_net(cb.train_network, self.best_weights_param_dict)

    def on_train_end(self, run_context):
        if self.stopped_epoch > 0 and self.verbose:
            print(f'Epoch {self.stopped_epoch:05d}: early stopping')


__all__ = ["LearningRateScheduler", "ReduceLROnPlateau", "EarlyStopping"]
