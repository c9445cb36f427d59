"""Training callbacks (MindSpore's `mindspore.train.Callback` family): the Callback base with
both the 2.x hook names (on_train_step_end, on_eval_step_end, ...) and the legacy ones
(step_end, ...), the callback parameters (`InternalCallbackParam`, a dict read by attribute)
and the RunContext handed to every hook, LossMonitor, TimeMonitor, History, LambdaCallback, and
the progress bar Model.train shows on a terminal (rich; silent when output is not a terminal).
ModelCheckpoint is in checkpoint_callback.py, the learning-rate and early-stopping callbacks in
schedule_callbacks.py, the curve and TensorBoard writers in curves.py."""
from __future__ import annotations

import os
import sys
import time

import numpy as np


class InternalCallbackParam(dict):
    """The callback parameters (MindSpore's `_InternalCallbackParam`): a dict whose keys are
    also attributes, so callbacks read `cb_params.cur_step_num` or `cb_params.get("metrics")`."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"the callback parameters have no field {key!r}; present: "
                                 f"{sorted(self)}") from None

    def __setattr__(self, key, value):
        self[key] = value


class RunContext:
    """What a callback sees: `original_args()` (the callback parameters: cur_epoch_num,
    cur_step_num, batch_num, epoch_num, net_outputs, train_network, optimizer, eval_results,
    ...) and `request_stop()`."""

    def __init__(self, original_args):
        if not isinstance(original_args, dict):
            raise TypeError(f"The argument 'original_args' of RunContext should be dict type, "
                            f"but got {type(original_args)}.")
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self):
        return self._original_args

    def request_stop(self) -> None:
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


class Callback:
    """Override any hook. The 2.x names call the legacy ones by default (the eval hooks too:
    on_eval_step_end calls step_end, as in MindSpore), so a callback written for either
    generation of MindSpore works. A callback is also a context manager around training."""

    def __enter__(self):
        return self

    def __exit__(self, *err):
        return None

    def on_train_begin(self, run_context): self.begin(run_context)
    def on_train_epoch_begin(self, run_context): self.epoch_begin(run_context)
    def on_train_step_begin(self, run_context): self.step_begin(run_context)
    def on_train_step_end(self, run_context): self.step_end(run_context)
    def on_train_epoch_end(self, run_context): self.epoch_end(run_context)
    def on_train_end(self, run_context): self.end(run_context)
    def on_eval_begin(self, run_context): self.begin(run_context)
    def on_eval_epoch_begin(self, run_context): self.epoch_begin(run_context)
    def on_eval_step_begin(self, run_context): self.step_begin(run_context)
    def on_eval_step_end(self, run_context): self.step_end(run_context)
    def on_eval_epoch_end(self, run_context): self.epoch_end(run_context)
    def on_eval_end(self, run_context): self.end(run_context)

    def begin(self, run_context): pass
    def epoch_begin(self, run_context): pass
    def step_begin(self, run_context): pass
    def step_end(self, run_context): pass
    def epoch_end(self, run_context): pass
    def end(self, run_context): pass


class CallbackList(Callback):
    """Calls each hook (2.x and legacy names) on every callback in order (MindSpore's
    CallbackManager); entering it enters every callback's context."""

    HOOKS = ("on_train_begin", "on_train_epoch_begin", "on_train_step_begin",
             "on_train_step_end", "on_train_epoch_end", "on_train_end", "on_eval_begin",
             "on_eval_epoch_begin", "on_eval_step_begin", "on_eval_step_end",
             "on_eval_epoch_end", "on_eval_end", "begin", "epoch_begin", "step_begin",
             "step_end", "epoch_end", "end")

    def __init__(self, callbacks):
        self._callbacks = list(callbacks)
        self._entered = []

    def __enter__(self):
        self._entered = []
        for i, c in enumerate(list(self._callbacks)):
            target = c.__enter__()
            self._entered.append(c)
            if isinstance(target, Callback):
                self._callbacks[i] = target
        return self

    def __exit__(self, *err):
        suppress = False
        for c in reversed(self._entered):
            suppress = bool(c.__exit__(*err)) or suppress
        self._entered = []
        return suppress


def _fan_out(hook):
    def call_all(self, run_context):
        for c in self._callbacks:
            getattr(c, hook)(run_context)
    call_all.__name__ = call_all.__qualname__ = hook
    return call_all


for _hook in CallbackList.HOOKS:
    setattr(CallbackList, _hook, _fan_out(_hook))


def handle_loss(loss):
    """MindSpore's `_handle_loss`: a Tensor's mean as a float; of a tuple (a loss-scale step's
    (loss, overflow, scale)) the first Tensor itself, not converted (so LossMonitor prints it
    as the Tensor, as MindSpore does)."""
    if isinstance(loss, (tuple, list)):
        if len(loss) and hasattr(loss[0], "asnumpy"):
            loss = loss[0]
    elif hasattr(loss, "asnumpy"):
        loss = float(np.mean(loss.asnumpy()))
    return loss


def _loss_value(outputs) -> float:
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0]
    return float(np.mean(outputs.asnumpy() if hasattr(outputs, "asnumpy") else outputs))


def _check_non_negative_int(who, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{who}: {name} must be an int >= 0, got {value!r}")
    return value


class LossMonitor(Callback):
    """Prints "epoch: E step: S, loss is L" (L the float mean of the loss, printed with %s as
    MindSpore) every `per_print_times` steps, and the eval metrics at an epoch's end when
    Model.fit evaluated; raises on a NaN or infinite loss (MindSpore does the same). The losses
    it saw are kept in `losses` (a minispore addition)."""

    def __init__(self, per_print_times=1):
        self._per_print_times = _check_non_negative_int("LossMonitor", "per_print_times",
                                                        per_print_times)
        self._last_print_time = 0
        self.losses: list[float] = []

    @property
    def per_print_times(self):
        return self._per_print_times

    def step_end(self, run_context):
        cb = run_context.original_args()
        cur_epoch_num = cb.get("cur_epoch_num", 1)
        loss = handle_loss(cb.net_outputs)
        self.losses.append(_loss_value(cb.net_outputs))
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        if isinstance(loss, float) and not np.isfinite(loss):
            raise ValueError(f"In epoch: {cur_epoch_num} step: {step_in_epoch}, loss is NAN or "
                             f"INF, training process cannot continue, terminating training.")
        every = self._per_print_times
        if every != 0 and cb.cur_step_num <= self._last_print_time:
            while cb.cur_step_num <= self._last_print_time:       # a new train() started over
                self._last_print_time -= max(every, cb.batch_num if cb.get("dataset_sink_mode")
                                             else 1)
        if every != 0 and cb.cur_step_num - self._last_print_time >= every:
            self._last_print_time = cb.cur_step_num
            print(f"epoch: {cur_epoch_num} step: {step_in_epoch}, loss is {loss}", flush=True)

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        metrics = cb.get("metrics")
        if metrics:
            print(f"Eval result: epoch {cb.cur_epoch_num}, metrics: {metrics}")


class TimeMonitor(Callback):
    """Prints "Train epoch time: T ms, per step time: t ms" at each epoch's end (wall time of
    the host; the steps are the epoch's batch_num, else data_size). Model.fit also runs it
    around evaluation ("Eval epoch time ..."). data_time=True adds the time spent between
    steps (fetching data), outside dataset sink mode."""

    def __init__(self, data_size=None, data_time=False):
        if not isinstance(data_time, bool):
            raise TypeError(f"TimeMonitor: data_time must be a bool, got {data_time!r}")
        self.data_size = data_size
        self.data_time = data_time
        self.epoch_time = time.time()
        self.data_time_sum = 0.0
        self.data_time_start = 0.0
        self.epoch_times: list[float] = []

    @staticmethod
    def _sink(run_context):
        return bool(run_context.original_args().get("dataset_sink_mode"))

    def on_train_step_begin(self, run_context):
        if self.data_time and not self._sink(run_context):
            self.data_time_sum += time.time() - self.data_time_start

    def on_train_step_end(self, run_context):
        if self.data_time and not self._sink(run_context):
            self.data_time_start = time.time()

    def epoch_begin(self, run_context):
        self.epoch_time = time.time()
        if self.data_time and not self._sink(run_context):
            self.data_time_sum = 0.0
            self.data_time_start = time.time()

    def epoch_end(self, run_context):
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb = run_context.original_args()
        steps = self.data_size
        batch_num = cb.get("batch_num")
        if isinstance(batch_num, int) and batch_num > 0:
            steps = batch_num
        if isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
            raise ValueError(f"TimeMonitor: the number of steps per epoch must be a positive "
                             f"int; pass data_size=, got {steps!r}")
        self.epoch_times.append(epoch_ms / 1e3)
        log = (f"{cb.get('mode', '').title()} epoch time: {epoch_ms:5.3f} ms, per step time: "
               f"{epoch_ms / steps:5.3f} ms")
        if self.data_time and not self._sink(run_context):
            log += f" (data time: {self.data_time_sum * 1000 / steps:5.3f} ms)"
        elif self.data_time:
            raise NotImplementedError("TimeMonitor: data_time=True in dataset sink mode (the "
                                      "device queue's fetch time) is not measured by minispore; "
                                      "use dataset_sink_mode=False or data_time=False")
        print(log, flush=True)


class History(Callback):
    """Records, at each training epoch's end, the network output (a Tensor's mean; the first of
    a tuple) under "net_output" and the metrics of Model.fit's evaluation that epoch, in
    `history` (lists) and the epoch numbers in `epoch["epoch"]` (MindSpore's History)."""

    def __init__(self):
        self.history = {}
        self.epoch = None

    def begin(self, run_context):
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context):
        cb = run_context.original_args()
        self.epoch["epoch"].append(cb.get("cur_epoch_num", 1))
        out = cb.net_outputs
        if isinstance(out, (tuple, list)) and len(out) and hasattr(out[0], "asnumpy"):
            out = out[0]
        if hasattr(out, "asnumpy"):
            out = np.mean(out.asnumpy())
        current = {"net_output": out}
        if cb.get("metrics"):
            current.update(cb.metrics)
        for k, v in current.items():
            self.history.setdefault(k, []).append(v)


class LambdaCallback(Callback):
    """A callback from functions: each argument (a function of run_context) becomes that
    hook; the hooks not given do nothing (MindSpore's LambdaCallback)."""

    def __init__(self, on_train_epoch_begin=None, on_train_epoch_end=None,
                 on_train_step_begin=None, on_train_step_end=None, on_train_begin=None,
                 on_train_end=None, on_eval_epoch_begin=None, on_eval_epoch_end=None,
                 on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
                 on_eval_end=None):
        given = dict(on_train_epoch_begin=on_train_epoch_begin,
                     on_train_epoch_end=on_train_epoch_end,
                     on_train_step_begin=on_train_step_begin, on_train_step_end=on_train_step_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_eval_epoch_begin=on_eval_epoch_begin, on_eval_epoch_end=on_eval_epoch_end,
                     on_eval_step_begin=on_eval_step_begin, on_eval_step_end=on_eval_step_end,
                     on_eval_begin=on_eval_begin, on_eval_end=on_eval_end)
        for name, fn in given.items():
            if fn is not None and not callable(fn):
                raise TypeError(f"LambdaCallback: {name} must be callable or None, got "
                                f"{type(fn).__name__}")
            setattr(self, name, fn if fn else (lambda run_context: None))


def _in_mpi_job() -> bool:
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"))


class ProgressBar(Callback):
    """A rich progress bar over the steps of training; nothing when stdout is not a terminal
    or in a rank of an MPI job (whose launcher gives each rank a pseudo-terminal, and whose
    ranks' bars would interleave); a minispore addition that Model.train adds by itself."""

    def __init__(self, total: int, description: str = "train"):
        self.total, self.description, self.bar = total, description, None

    def on_train_begin(self, run_context):
        if not sys.stdout.isatty() or self.total < 2 or _in_mpi_job():
            return
        from rich.progress import Progress
        self.bar = Progress(transient=True)
        self.bar.start()
        self.task = self.bar.add_task(self.description, total=self.total)

    def on_train_step_end(self, run_context):
        if self.bar is not None:
            loss = _loss_value(run_context.original_args().net_outputs)
            self.bar.update(self.task, advance=1,
                            description=f"{self.description} loss {loss:.4f}")

    def on_train_end(self, run_context):
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


# `from mindspore.train.callback import ModelCheckpoint, ...`: the module path scripts use
from .checkpoint_callback import (BackupAndRestore, CheckpointConfig,  # noqa: E402
                                  ModelCheckpoint)
from .schedule_callbacks import (EarlyStopping, LearningRateScheduler,  # noqa: E402
                                 ReduceLROnPlateau)

__all__ = ["Callback", "RunContext", "LossMonitor", "TimeMonitor", "History", "LambdaCallback",
           "CheckpointConfig", "ModelCheckpoint", "BackupAndRestore", "LearningRateScheduler",
           "ReduceLROnPlateau", "EarlyStopping"]
