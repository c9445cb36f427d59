"""Training callbacks (MindSpore's `mindspore.train.Callback` family): the Callback base with
both the 2.x hook names (on_train_step_end, ...) and the legacy ones (step_end, ...), the
RunContext handed to every hook, LossMonitor, TimeMonitor, and the progress bar Model.train shows
on a terminal (rich; silent when output is not a terminal)."""
from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import numpy as np


class RunContext:
    """What a callback sees: `original_args()` (cur_epoch_num, cur_step_num, batch_num,
    epoch_num, net_outputs, train_network, ...) and `request_stop()`."""

    def __init__(self, original_args: SimpleNamespace):
        self._params = original_args
        self._stop = False

    def original_args(self) -> SimpleNamespace:
        return self._params

    def request_stop(self) -> None:
        self._stop = True

    def get_stop_requested(self) -> bool:
        return self._stop


class Callback:
    """Override any hook. The 2.x names call the legacy ones by default, so a callback written
    for either generation of MindSpore works."""

    def on_train_begin(self, run_context): self.begin(run_context)
    def on_train_epoch_begin(self, run_context): self.epoch_begin(run_context)
    def on_train_step_begin(self, run_context): self.step_begin(run_context)
    def on_train_step_end(self, run_context): self.step_end(run_context)
    def on_train_epoch_end(self, run_context): self.epoch_end(run_context)
    def on_train_end(self, run_context): self.end(run_context)
    def on_eval_begin(self, run_context): pass
    def on_eval_end(self, run_context): pass

    def begin(self, run_context): pass
    def epoch_begin(self, run_context): pass
    def step_begin(self, run_context): pass
    def step_end(self, run_context): pass
    def epoch_end(self, run_context): pass
    def end(self, run_context): pass


def _loss_value(outputs) -> float:
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0]
    return float(np.asarray(outputs.asnumpy() if hasattr(outputs, "asnumpy") else outputs))


class LossMonitor(Callback):
    """Prints "epoch: E step: S, loss is L" every `per_print_times` steps; raises on a NaN or
    infinite loss (MindSpore does the same)."""

    def __init__(self, per_print_times: int = 1):
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"LossMonitor: per_print_times must be an int >= 0, got "
                             f"{per_print_times!r}")
        self.per_print_times = per_print_times
        self.losses: list[float] = []

    def step_end(self, run_context):
        cb = run_context.original_args()
        loss = _loss_value(cb.net_outputs)
        self.losses.append(loss)
        step_in_epoch = (cb.cur_step_num - 1) % max(cb.batch_num, 1) + 1
        if not np.isfinite(loss):
            raise ValueError(f"epoch: {cb.cur_epoch_num} step: {step_in_epoch}: the loss is "
                             f"{loss}; training stops (lower the learning rate or check the data)")
        if self.per_print_times and cb.cur_step_num % self.per_print_times == 0:
            print(f"epoch: {cb.cur_epoch_num} step: {step_in_epoch}, loss is {loss:.6f}",
                  flush=True)


class TimeMonitor(Callback):
    """Prints the epoch time and the time per step (wall time of the host)."""

    def __init__(self, data_size: int | None = None, data_time: bool = False):
        if data_time:
            raise NotImplementedError("TimeMonitor: data_time=True (the data-fetch time per "
                                      "step) is not measured by minispore; use "
                                      "data_time=False")
        self.data_size = data_size
        self.data_time = data_time
        self.epoch_times: list[float] = []

    def epoch_begin(self, run_context):
        self._t0 = time.perf_counter()

    def epoch_end(self, run_context):
        dt_ms = (time.perf_counter() - self._t0) * 1e3
        self.epoch_times.append(dt_ms / 1e3)
        steps = self.data_size or run_context.original_args().batch_num
        print(f"epoch time: {dt_ms:.3f} ms, per step time: {dt_ms / max(steps, 1):.3f} ms",
              flush=True)


class ProgressBar(Callback):
    """A rich progress bar over the steps of training; nothing when stdout is not a terminal."""

    def __init__(self, total: int, description: str = "train"):
        self.total, self.description, self.bar = total, description, None

    def begin(self, run_context):
        if not sys.stdout.isatty() or self.total < 2:
            return
        from rich.progress import Progress
        self.bar = Progress(transient=True)
        self.bar.start()
        self.task = self.bar.add_task(self.description, total=self.total)

    def step_end(self, run_context):
        if self.bar is not None:
            self.bar.update(self.task, advance=1,
                            description=f"{self.description} loss "
                                        f"{_loss_value(run_context.original_args().net_outputs):.4f}")

    def end(self, run_context):
        if self.bar is not None:
            self.bar.stop()
