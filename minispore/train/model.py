"""`Model(network, loss_fn, optimizer, metrics)`: MindSpore's high-level train/eval/predict.

The train network is `TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)` (or
`TrainOneStepCell(network, optimizer)` when the network already returns the loss); in
GRAPH_MODE it compiles once and each step is one call. `dataset_sink_mode=True` is not ignored:
the steps of each sink go through `ms.data_sink`, which on the simulated Ascend is loop sink (one
host launch and one queued transfer per `sink_size` steps, callbacks' step_end once per sink, as
in MindSpore); on the CPU the compiled step runs `sink_size` times back to back within one call
(a single multi-step program on the CPU is not built yet).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

from .callback import Callback, ProgressBar, RunContext


def _metric(name_or_obj):
    from ..nn import metrics as nn_metrics
    if not isinstance(name_or_obj, str):
        return name_or_obj
    table = {"accuracy": nn_metrics.Accuracy, "acc": nn_metrics.Accuracy, "mae": nn_metrics.MAE,
             "top_1_accuracy": nn_metrics.Top1CategoricalAccuracy,
             "top_5_accuracy": nn_metrics.Top5CategoricalAccuracy}
    if name_or_obj.lower() not in table:
        raise ValueError(f"Model: unknown metric {name_or_obj!r}; use one of {sorted(table)} or "
                         f"a Metric instance")
    return table[name_or_obj.lower()]()


class Model:
    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
                 eval_indexes=None, amp_level="O0", boost_level="O0", **kwargs):
        from .. import nn
        if amp_level not in ("O0", None):
            raise ValueError(f"Model: amp_level={amp_level!r} is not supported yet; use 'O0'")
        if boost_level not in ("O0", None):
            raise ValueError(f"Model: boost_level={boost_level!r} is not supported; use 'O0'")
        if eval_indexes is not None:
            raise NotImplementedError("Model: eval_indexes is not supported by minispore; "
                                      "pass an eval_network whose outputs the metrics take")
        if kwargs:
            raise TypeError(f"Model: keyword argument(s) {', '.join(sorted(kwargs))} not "
                            f"supported by minispore")
        self.network, self.loss_fn, self.optimizer = network, loss_fn, optimizer
        if isinstance(metrics, dict):
            self.metrics = {k: _metric(v) for k, v in metrics.items()}
        else:
            self.metrics = {m if isinstance(m, str) else type(m).__name__.lower(): _metric(m)
                            for m in (metrics or ())}
        self.train_network = None
        if optimizer is not None:
            loss_net = nn.WithLossCell(network, loss_fn) if loss_fn is not None else network
            self.train_network = nn.TrainOneStepCell(loss_net, optimizer)
        self.eval_network = eval_network

    # -- training -----------------------------------------------------------------------------
    def train(self, epoch: int, train_dataset, callbacks=None, dataset_sink_mode=False,
              sink_size=-1, initial_epoch=0):
        if self.train_network is None:
            raise ValueError("Model.train: the Model has no optimizer; pass optimizer= (and "
                             "loss_fn= unless the network returns the loss)")
        if not isinstance(epoch, int) or epoch < 1:
            raise ValueError(f"Model.train: epoch must be an int >= 1, got {epoch!r}")
        self.train_network.set_train(True)
        cbs = list(callbacks) if isinstance(callbacks, (list, tuple)) else \
            ([callbacks] if callbacks is not None else [])
        if not all(isinstance(c, Callback) for c in cbs):
            raise TypeError("Model.train: callbacks must be Callback instances")
        size = train_dataset.get_dataset_size()
        per_epoch = size if (not dataset_sink_mode or sink_size in (-1, None)) else sink_size
        sink = per_epoch if dataset_sink_mode else 1
        total = epoch - initial_epoch
        cbs.append(ProgressBar(total * math.ceil(per_epoch / sink), "train"))
        cb = SimpleNamespace(epoch_num=epoch, batch_num=per_epoch, cur_epoch_num=initial_epoch,
                             cur_step_num=initial_epoch * per_epoch, net_outputs=None,
                             train_network=self.train_network, network=self.network,
                             optimizer=self.optimizer, loss_fn=self.loss_fn,
                             dataset_sink_mode=dataset_sink_mode, sink_size=sink)
        ctx = RunContext(cb)
        for c in cbs:
            c.on_train_begin(ctx)
        it = train_dataset.create_tuple_iterator()
        runner = self._sink_runner(it, sink) if dataset_sink_mode else None
        for e in range(initial_epoch, epoch):
            cb.cur_epoch_num = e + 1
            for c in cbs:
                c.on_train_epoch_begin(ctx)
            steps = 0
            while steps < per_epoch:
                n = min(sink, per_epoch - steps)
                for c in cbs:
                    c.on_train_step_begin(ctx)
                if runner is not None:
                    cb.net_outputs = runner(n)
                else:
                    batch = next(it, None)
                    if batch is None:               # the iterator's epoch ended: the next one
                        batch = next(it)
                    cb.net_outputs = self.train_network(*batch)
                steps += n
                cb.cur_step_num += n
                for c in cbs:
                    c.on_train_step_end(ctx)
                if ctx.get_stop_requested():
                    break
            for c in cbs:
                c.on_train_epoch_end(ctx)
            if ctx.get_stop_requested():
                break
        for c in cbs:
            c.on_train_end(ctx)

    def _sink_runner(self, it, sink):
        """n steps per call through ms.data_sink (loop sink where the device has it)."""
        from ..core.data_sink import data_sink
        cache: dict = {}

        def batches():
            while True:
                b = next(it, None)
                yield b if b is not None else next(it)

        source = batches()

        def run(n):
            if n not in cache:
                cache[n] = data_sink(self.train_network, source, sink_size=n)
            return cache[n]()
        return run

    # -- evaluation and prediction ------------------------------------------------------------
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False) -> dict:
        """{metric name: value} over the whole dataset (each row: inputs..., label). The
        metrics are the same with dataset_sink_mode=True (rows are read one step at a time)."""
        if callbacks is not None:
            raise NotImplementedError("Model.eval: callbacks are not supported by minispore's "
                                      "eval; compute per-step values in the eval_network")
        if not self.metrics:
            raise ValueError("Model.eval: the Model has no metrics; pass metrics={'accuracy'} "
                             "or similar")
        self.network.set_train(False)
        for m in self.metrics.values():
            m.clear()
        for row in valid_dataset.create_tuple_iterator(num_epochs=1):
            *inputs, label = row
            out = self.eval_network(*inputs) if self.eval_network is not None else \
                self.network(*inputs)
            for m in self.metrics.values():
                m.update(out, label)
        self.network.set_train(True)
        return {k: m.eval() for k, m in self.metrics.items()}

    def predict(self, *predict_data):
        self.network.set_train(False)
        try:
            return self.network(*predict_data)
        finally:
            self.network.set_train(True)


__all__ = ["Model"]
