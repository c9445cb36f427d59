"""Training curves, minispore additions (MindSpore has neither; its SummaryCollector writes
MindInsight files, which minispore does not implement):

- `CurvePlotter(file_name)`: a callback that draws the train loss per step and the metrics of
  Model.fit's evaluations per epoch into a PNG at the end of training (matplotlib, the
  `minispore[plot]` extra).
- `TensorBoardWriter(log_dir)`: a callback that writes the same scalars (and the learning rate)
  to a TensorBoard event file as training goes (tensorboardX, the `minispore[tensorboard]`
  extra).

Both import their library only when training begins, so `import minispore` stays light.
"""
from __future__ import annotations

import os

import numpy as np

from .callback import Callback, _loss_value


def _scalar_items(results):
    """The (name, float) pairs of an eval-results dict whose values are scalars."""
    out = []
    for k, v in (results or {}).items():
        a = np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v)
        if a.size == 1 and np.issubdtype(a.dtype, np.number):
            out.append((str(k), float(a.reshape(()))))
    return out


def _eval_results(cb):
    return cb.get("eval_results") or cb.get("metrics")


class CurvePlotter(Callback):
    """Records the train loss at every step (`losses`: (global step, loss)) and the eval
    results of each epoch Model.fit evaluated (`eval_history`: name -> [(epoch, value)]), and
    at the end of training writes them to `file_name` (PNG): the loss curve on the left, one
    curve per eval metric on the right. A minispore addition."""

    def __init__(self, file_name="training_curves.png", title=None):
        if not isinstance(file_name, (str, os.PathLike)):
            raise TypeError(f"CurvePlotter: file_name must be a path, got "
                            f"{type(file_name).__name__}")
        self.file_name = os.fspath(file_name)
        self.title = title
        self.losses: list = []
        self.eval_history: dict = {}

    def on_train_begin(self, run_context):
        try:
            import matplotlib                                       # noqa: F401
        except ImportError as e:
            raise ImportError('CurvePlotter needs matplotlib: pip install "minispore[plot]"') \
                from e

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        self.losses.append((cb.cur_step_num, _loss_value(cb.net_outputs)))

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        for name, value in _scalar_items(_eval_results(cb)):
            self.eval_history.setdefault(name, []).append((cb.cur_epoch_num, value))

    def on_train_end(self, run_context):
        self.save()

    def save(self, file_name=None):
        """Write the PNG now (to file_name or the constructor's)."""
        from matplotlib.figure import Figure      # no pyplot: the user's backend is untouched
        path = os.fspath(file_name or self.file_name)
        fig = Figure(figsize=(10 if self.eval_history else 5, 4), dpi=80)
        ax = fig.add_subplot(1, 2 if self.eval_history else 1, 1)
        if self.losses:
            steps, values = zip(*self.losses)
            ax.plot(steps, values, label="train loss")
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_title("train loss")
        if self.eval_history:
            ax2 = fig.add_subplot(1, 2, 2)
            for name, points in sorted(self.eval_history.items()):
                epochs, values = zip(*points)
                ax2.plot(epochs, values, marker="o", label=name)
            ax2.set_xlabel("epoch")
            ax2.set_title("evaluation")
            ax2.legend()
        if self.title:
            fig.suptitle(self.title)
        fig.tight_layout()
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        fig.savefig(path, format="png")
        return path


class TensorBoardWriter(Callback):
    """Writes "train/loss" every `per_print_times` steps, "train/learning_rate" (a single-rate
    optimizer's) at each epoch's end and "eval/<metric>" for each epoch Model.fit evaluated,
    to a TensorBoard event file under `log_dir` (tensorboardX). A minispore addition."""

    def __init__(self, log_dir, per_print_times=1):
        if not isinstance(log_dir, (str, os.PathLike)):
            raise TypeError(f"TensorBoardWriter: log_dir must be a path, got "
                            f"{type(log_dir).__name__}")
        if isinstance(per_print_times, bool) or not isinstance(per_print_times, int) or \
                per_print_times < 1:
            raise ValueError(f"TensorBoardWriter: per_print_times must be an int >= 1, got "
                             f"{per_print_times!r}")
        self.log_dir = os.fspath(log_dir)
        self.per_print_times = per_print_times
        self.writer = None

    def on_train_begin(self, run_context):
        try:
            from tensorboardX import SummaryWriter
        except ImportError as e:
            raise ImportError('TensorBoardWriter needs tensorboardX: pip install '
                              '"minispore[tensorboard]"') from e
        if self.writer is None:
            self.writer = SummaryWriter(logdir=self.log_dir)

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        if self.writer is not None and cb.cur_step_num % self.per_print_times == 0:
            self.writer.add_scalar("train/loss", _loss_value(cb.net_outputs), cb.cur_step_num)

    def on_train_epoch_end(self, run_context):
        if self.writer is None:
            return
        cb = run_context.original_args()
        lr = getattr(cb.get("optimizer"), "learning_rate", None)
        if hasattr(lr, "asnumpy") and lr.asnumpy().size == 1:
            self.writer.add_scalar("train/learning_rate", float(lr.asnumpy().reshape(())),
                                   cb.cur_epoch_num)
        for name, value in _scalar_items(_eval_results(cb)):
            self.writer.add_scalar(f"eval/{name}", value, cb.cur_epoch_num)
        self.writer.flush()

    def on_train_end(self, run_context):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


__all__ = ["CurvePlotter", "TensorBoardWriter"]
