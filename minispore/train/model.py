"""`Model(network, loss_fn, optimizer, metrics)`: MindSpore's high-level train/eval/predict.

The train network is MindSpore's `amp.build_train_network(network, optimizer, loss_fn,
level=amp_level, ...)`: at amp_level "O0" `TrainOneStepCell(WithLossCell(network, loss_fn),
optimizer)` (or `TrainOneStepCell(network, optimizer)` when the network already returns the
loss); O1-O3 cast the network as amp.auto_mixed_precision does, and a loss-scale manager with an
update Cell (O2's default DynamicLossScaleManager(), or loss_scale_manager=) makes it a
TrainOneStepWithLossScaleCell, whose steps return (loss, overflow, scale). In GRAPH_MODE it
compiles once and each step is one call. `dataset_sink_mode=True` is not ignored:
the steps of each sink go through `ms.data_sink`, which on the simulated Ascend is loop sink (one
host launch and one queued transfer per `sink_size` steps, callbacks' step_end once per sink, as
in MindSpore); on the CPU the compiled step runs `sink_size` times back to back within one call
(a single multi-step program on the CPU is not built yet).
"""
from __future__ import annotations

import math

import numpy as np

from .. import log
from .callback import Callback, ProgressBar, RunContext

# MindSpore's own callbacks (mindspore.train.callback.__all__) and minispore's: Model.fit runs
# none of them during its evaluation except TimeMonitor, and fit accepts their legacy hooks
_LIBRARY_CALLBACKS = frozenset((
    "Callback", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "FlopsUtilizationCollector",
    "SummaryCollector", "CheckpointConfig", "RunContext", "LearningRateScheduler",
    "SummaryLandscape", "History", "LambdaCallback", "ReduceLROnPlateau", "EarlyStopping",
    "OnRequestExit", "BackupAndRestore", "TrainFaultTolerance", "ProgressBar", "CurvePlotter",
    "TensorBoardWriter"))
_LEGACY_HOOKS = frozenset(("begin", "end", "epoch_begin", "epoch_end", "step_begin", "step_end"))


def _check_bool(who, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be a bool, got {value!r}")


def _callback_list(who, callbacks, mode) -> list:
    """The callbacks as a list, checked as MindSpore does: a user callback that defines the
    legacy hooks (step_end, ...) is refused by fit and warned about by train/eval."""
    if callbacks is None:
        cbs = []
    elif isinstance(callbacks, Callback):
        cbs = [callbacks]
    elif isinstance(callbacks, (list, tuple)):
        cbs = list(callbacks)
    else:
        raise TypeError(f"{who}: callbacks must be a Callback or a list of Callbacks, got "
                        f"{type(callbacks).__name__}")
    for c in cbs:
        if not isinstance(c, Callback):
            raise TypeError(f"{who}: callbacks must be Callback instances, got "
                            f"{type(c).__name__}")
        name = type(c).__name__
        legacy = set(type(c).__dict__) & _LEGACY_HOOKS
        if name in _LIBRARY_CALLBACKS or not legacy:
            continue
        text = (f"For {name} callback, {legacy} methods may not be supported in later version, "
                f"Use methods prefixed with 'on_train' or 'on_eval' instead when using "
                f"customized callbacks.")
        if mode == "fit":
            raise ValueError(text)
        log.warning(text)
    return cbs


def _get_metrics(metrics) -> dict:
    """MindSpore's get_metrics: None (no metrics), a dict {name: Metric} or a set of metric
    names (each made by get_metric_fn, whose KeyError an unknown name raises); a list, a tuple
    or a single Metric is MindSpore's TypeError."""
    from ..nn import metrics as nn_metrics
    if metrics is None:
        return {}
    if isinstance(metrics, dict):
        for name, metric in metrics.items():
            if not isinstance(name, str) or not isinstance(metric, nn_metrics.Metric):
                raise TypeError(f"For 'get_metrics', if 'metrics' is dict, the key in 'metrics' "
                                f"must be string and value in 'metrics' must be Metric, but got "
                                f"key:{type(name)}, value:{type(metric)}.")
        return dict(metrics)
    if isinstance(metrics, set):
        return {name: nn_metrics.get_metric_fn(name) for name in metrics}
    raise TypeError(f"For 'get_metrics', the argument 'metrics' must be None, dict or set, but "
                    f"got {metrics}")


_NO_EVAL_NETWORK = (
    "If `metrics` is set, `eval_network` must not be None. Do not set `metrics` if you don't "
    "want an evaluation.\nIf evaluation is required, you need to specify `eval_network`, which "
    "will be used in the framework to evaluate the model.\nFor the simple scenarios with one "
    "data, one label and one logits, `eval_network` is optional, and then you can set "
    "`eval_network` or `loss_fn`. For the latter case, framework will automatically build an "
    "evaluation network with `network` and `loss_fn`.")


class Model:
    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
                 eval_indexes=None, amp_level="O0", boost_level="O0", **kwargs):
        if eval_indexes is not None:
            raise NotImplementedError("Model: eval_indexes is not supported by minispore; "
                                      "pass an eval_network whose outputs the metrics take")
        self._check_kwargs(kwargs)
        from ..amp import _check_boost_level
        _check_boost_level("Model", boost_level)
        self.network, self.loss_fn, self.optimizer = network, loss_fn, optimizer
        self._amp_level, self._boost_level = amp_level, boost_level
        self._keep_bn_fp32 = kwargs.get("keep_batchnorm_fp32")
        self._loss_scale_manager = kwargs.get("loss_scale_manager")
        self._loss_scale_manager_set = "loss_scale_manager" in kwargs
        if optimizer is None and amp_level != "O0":
            raise ValueError("Auto mixed precision will not work because 'optimizer' is None."
                             "Please set amp_level='O0' to disable auto mixed precision or set "
                             "'optimizer' not be None to use auto mixed precision.")
        self.train_network = self._build_train_network()
        # MindSpore's _build_eval_network, after the train network: metrics need an
        # eval_network or a loss_fn (to build WithEvalCell from)
        self.metrics = _get_metrics(metrics)
        if self.metrics and eval_network is None and loss_fn is None:
            raise ValueError(_NO_EVAL_NETWORK)
        self.eval_network = eval_network
        # MindSpore's WithEvalCell casts the outputs and the label to float32 before the loss
        # when the network was cast to float16 (amp_level O2/O3)
        self._eval_add_cast_fp32 = amp_level in ("O2", "O3")

    @staticmethod
    def _check_kwargs(kwargs):
        for arg in kwargs:
            if arg not in ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict",
                           "acc_level"):
                raise ValueError(f"The argument in 'kwargs' should be 'loss_scale_manager' or "
                                 f"'keep_batchnorm_fp32' or 'boost_config_dict' or 'acc_level', "
                                 f"but got '{arg}'.")
        for arg in ("boost_config_dict", "acc_level"):
            if arg in kwargs:
                raise NotImplementedError(f"Model: {arg}= (mindspore.boost) is not implemented "
                                          f"by minispore; leave it out")

    def _build_train_network(self):
        """MindSpore's: amp.build_train_network(network, optimizer, loss_fn, level=amp_level,
        boost_level=..., plus loss_scale_manager / keep_batchnorm_fp32 when given) when there is
        an optimizer; None without one (Model.train then says an optimizer is needed)."""
        from .. import amp
        from ..nn import Cell
        if not isinstance(self.network, Cell):
            raise TypeError(f"For 'Model', the 'network' must be a Cell, but got "
                            f"{type(self.network).__name__}.")
        if self._loss_scale_manager is not None and self.optimizer is None:
            raise ValueError("The argument 'optimizer' can not be None when set "
                             "'loss_scale_manager'.")
        if self.optimizer is None:
            return None
        config = {}
        if self._loss_scale_manager_set:
            config["loss_scale_manager"] = self._loss_scale_manager
        if self._keep_bn_fp32 is not None:
            config["keep_batchnorm_fp32"] = self._keep_bn_fp32
        return amp.build_train_network(self.network, self.optimizer, self.loss_fn,
                                       level=self._amp_level, boost_level=self._boost_level,
                                       **config)

    # -- training -----------------------------------------------------------------------------
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False,
              sink_size=-1, initial_epoch=0):
        """Train `epoch - initial_epoch` epochs (numbered initial_epoch + 1 .. epoch; the step
        count restarts at 0, as in MindSpore). Callbacks get MindSpore's callback parameters."""
        sink_size = self._check_train_args("Model.train", epoch, train_dataset,
                                           dataset_sink_mode, sink_size, initial_epoch)
        cbs = _callback_list("Model.train", callbacks, "train")
        self._train(epoch, train_dataset, cbs, dataset_sink_mode, sink_size, initial_epoch,
                    (None, 1, False))

    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1,
            initial_epoch=0):
        """train() that also evaluates `valid_dataset` after every `valid_frequency`-th epoch
        (an int, or a list of epoch numbers), before the epoch's on_train_epoch_end: callbacks
        then read `cb_params.metrics` and `cb_params.eval_results` (the metrics plus
        "eval_loss"). The user's callbacks also run during the evaluation (their on_eval_*
        hooks); minispore's and MindSpore's own callbacks do not, except TimeMonitor."""
        sink_size = self._check_train_args("Model.fit", epoch, train_dataset, dataset_sink_mode,
                                           sink_size, initial_epoch)
        _check_bool("Model.fit", "valid_dataset_sink_mode", valid_dataset_sink_mode)
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, (int, list)):
            raise TypeError(f"For 'Model.fit', the type of 'valid_frequency' must be a list or "
                            f"an integer, but got type {type(valid_frequency)}.")
        if valid_dataset is not None and not self.metrics:
            raise ValueError("For 'Model.fit', if valid_dataset is not None, the model argument "
                             "'metrics' can not be None or empty; pass metrics={'accuracy'} or "
                             "similar")
        cbs = _callback_list("Model.fit", callbacks, "fit")
        self._train(epoch, train_dataset, cbs, dataset_sink_mode, sink_size, initial_epoch,
                    (valid_dataset, valid_frequency, valid_dataset_sink_mode))

    def _check_train_args(self, who, epoch, train_dataset, dataset_sink_mode, sink_size,
                          initial_epoch) -> int:
        if self.train_network is None:
            raise ValueError(f"{who}: the Model has no optimizer; pass optimizer= (and "
                             f"loss_fn= unless the network returns the loss)")
        _check_bool(who, "dataset_sink_mode", dataset_sink_mode)
        if isinstance(sink_size, bool) or not isinstance(sink_size, int):
            raise TypeError(f"{who}: sink_size must be an int, got {sink_size!r}")
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            raise ValueError(f"{who}: epoch must be an int >= 1, got {epoch!r}")
        if isinstance(initial_epoch, bool) or not isinstance(initial_epoch, int) or \
                initial_epoch < 0:
            raise ValueError(f"{who}: initial_epoch must be an int >= 0, got {initial_epoch!r}")
        if initial_epoch >= epoch:
            raise ValueError(f"For '{who}', the parameter 'epoch' must bigger than parameter "
                             f"'initial_epoch', but got the parameter 'epoch' is {epoch}, "
                             f"'initial_epoch' is {initial_epoch}.")
        if train_dataset.get_dataset_size() == 0:
            raise ValueError(f"{who}: there is no valid data in train_dataset (its size is 0)")
        if sink_size == -1:
            sink_size = train_dataset.get_dataset_size()
        if sink_size < -1 or sink_size == 0:
            raise ValueError(f"For '{who}', The argument 'sink_size' must be -1 or positive, "
                             f"but got {sink_size}.")
        return sink_size

    def _train(self, epoch, train_dataset, cbs, dataset_sink_mode, sink_size, initial_epoch,
               valid_infos):
        from .callback import CallbackList, InternalCallbackParam
        self.train_network.set_train(True)
        size = train_dataset.get_dataset_size()
        per_epoch = sink_size if dataset_sink_mode else size
        sink = per_epoch if dataset_sink_mode else 1
        cbs = cbs + [ProgressBar((epoch - initial_epoch) * math.ceil(per_epoch / sink), "train")]
        cb = InternalCallbackParam(
            cur_step_num=0, train_network=self.train_network, epoch_num=epoch - initial_epoch,
            batch_num=per_epoch, mode="train", loss_fn=self.loss_fn, optimizer=self.optimizer,
            parallel_mode="stand_alone", device_number=1, train_dataset=train_dataset,
            list_callback=list(cbs), train_dataset_element=None, network=self.network,
            last_save_ckpt_step=None, latest_ckpt_file=None,
            loss_scale_mananger=getattr(self, "_loss_scale_manager", None), initial_step=0,
            dataset_sink_mode=dataset_sink_mode, cur_epoch_num=initial_epoch, net_outputs=None)
        if dataset_sink_mode:
            cb.sink_size = sink
        ctx = RunContext(cb)
        with CallbackList(cbs) as calls:
            calls.on_train_begin(ctx)
            it = train_dataset.create_tuple_iterator()
            runner = self._sink_runner(it, sink) if dataset_sink_mode else None
            for e in range(initial_epoch, epoch):
                cb.cur_epoch_num = e + 1
                calls.on_train_epoch_begin(ctx)
                steps = 0
                while steps < per_epoch:
                    n = min(sink, per_epoch - steps)
                    if runner is not None:
                        cb.cur_step_num += n
                        calls.on_train_step_begin(ctx)
                        cb.net_outputs = runner(n)
                    else:
                        batch = next(it, None)
                        if batch is None:           # the iterator's epoch ended: the next one
                            batch = next(it)
                        if self.loss_fn is not None and len(batch) != 2:
                            raise ValueError(f"When 'loss_fn' is not None, 'train_dataset' "
                                             f"should return two elements, but got "
                                             f"{len(batch)}")
                        cb.cur_step_num += 1
                        cb.train_dataset_element = batch
                        calls.on_train_step_begin(ctx)
                        cb.net_outputs = self.train_network(*batch)
                        self._update_loss_scale_manager(cb.net_outputs)
                    steps += n
                    calls.on_train_step_end(ctx)
                    if ctx.get_stop_requested():
                        break
                self._eval_during_train(valid_infos, cb, calls)
                calls.on_train_epoch_end(ctx)
                cb.pop("metrics", None)
                cb.pop("eval_results", None)
                if ctx.get_stop_requested():
                    break
            calls.on_train_end(ctx)

    def _update_loss_scale_manager(self, outputs):
        """MindSpore's non-sink step: a manager that drops overflowed updates is told whether
        this step overflowed (outputs[1] of a loss-scale train network)."""
        manager = self._loss_scale_manager
        if manager is not None and manager.get_drop_overflow_update():
            manager.update_loss_scale(bool(np.all(outputs[1].asnumpy())))

    def _eval_during_train(self, valid_infos, cb, calls):
        """Model.fit's evaluation after an epoch: the user's callbacks (and TimeMonitor) see
        it; the train fields of the callback parameters are restored afterwards."""
        valid_dataset, frequency, _sink = valid_infos
        if valid_dataset is None:
            return
        due = cb.cur_epoch_num % frequency == 0 if isinstance(frequency, int) else \
            cb.cur_epoch_num in frequency
        if not due:
            return
        from .callback import TimeMonitor
        saved = {k: cb[k] for k in ("cur_step_num", "batch_num", "dataset_sink_mode",
                                    "net_outputs")}
        eval_cbs = [c for c in calls._callbacks
                    if type(c).__name__ not in _LIBRARY_CALLBACKS or isinstance(c, TimeMonitor)]
        self._eval_loop(valid_dataset, eval_cbs, cb, add_eval_loss=True)
        cb.mode = "train"
        cb.update(saved)
        self.train_network.set_train(True)

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
        """{metric name: value} over the whole dataset (each row: inputs..., label), with
        callbacks' on_eval_* hooks. Each value is its metric's eval() as MindSpore's returns it
        (numpy.float64 for accuracy, loss, mae, mse and the top-k accuracies; numpy arrays for
        precision, recall, F1; a Python float for dice and perplexity). The metrics are the
        same with dataset_sink_mode=True (rows are read one step at a time)."""
        from .callback import InternalCallbackParam
        _check_bool("Model.eval", "dataset_sink_mode", dataset_sink_mode)
        if not self.metrics:
            raise ValueError("For Model.eval, the model argument 'metrics' can not be None or "
                             "empty; pass metrics={'accuracy'} or similar")
        cbs = _callback_list("Model.eval", callbacks, "eval")
        cb = InternalCallbackParam(network=self.network, list_callback=list(cbs))
        return self._eval_loop(valid_dataset, cbs, cb, add_eval_loss=False)

    def _eval_outputs(self, row):
        """(outputs, whether outputs are (loss, logits, label)): MindSpore's WithEvalCell
        outputs when the Model has a loss_fn and no eval_network; the eval_network's outputs on
        the whole row (the metrics take them all, as MindSpore without eval_indexes); with
        neither (which MindSpore refuses at Model()), (logits, label)."""
        if self.eval_network is not None:
            out = self.eval_network(*row)
            return (out if isinstance(out, tuple) else (out,)), False
        *inputs, label = row
        logits = self.network(*inputs)
        if self.loss_fn is None:
            return (logits, label), False
        if self._eval_add_cast_fp32:          # MindSpore's WithEvalCell(add_cast_fp32=True):
            from ..core import dtype as dt    # mixed_precision_cast leaves integer labels
            logits = logits.astype(dt.float32)
            if label.dtype in dt.FLOATS:
                label = label.astype(dt.float32)
        return (self.loss_fn(logits, label), logits, label), True

    def _eval_loop(self, valid_dataset, cbs, cb, add_eval_loss):
        from ..nn.metrics import Loss
        from .callback import CallbackList
        cb.eval_network = self.eval_network
        cb.valid_dataset = valid_dataset
        cb.batch_num = valid_dataset.get_dataset_size()
        cb.mode = "eval"
        cb.cur_step_num = 0
        cb.dataset_sink_mode = False
        for m in self.metrics.values():
            m.clear()
        ctx = RunContext(cb)
        self.network.set_train(False)
        eval_loss = None
        try:
            with CallbackList(cbs) as calls:
                calls.on_eval_begin(ctx)
                calls.on_eval_epoch_begin(ctx)
                for row in valid_dataset.create_tuple_iterator(num_epochs=1):
                    cb.cur_step_num += 1
                    cb.eval_dataset_element = row
                    calls.on_eval_step_begin(ctx)
                    outputs, with_loss = self._eval_outputs(tuple(row))
                    cb.net_outputs = outputs
                    calls.on_eval_step_end(ctx)
                    for m in self.metrics.values():
                        if with_loss and isinstance(m, Loss):
                            m.update(outputs[0])
                        elif with_loss:
                            m.update(outputs[1], outputs[2])
                        else:
                            m.update(*outputs)
                    if add_eval_loss:
                        if not with_loss:
                            raise ValueError("Model.fit: evaluating valid_dataset needs the "
                                             "loss ('eval_loss'); pass loss_fn= to Model")
                        # MindSpore 2.10 makes a new Loss metric at every step, so its
                        # eval_loss is the loss of the last batch; kept for the same numbers
                        eval_loss = Loss()
                        eval_loss.update(outputs[0])
                    if ctx.get_stop_requested():
                        break
                calls.on_eval_epoch_end(ctx)
                metrics = {k: m.eval() for k, m in self.metrics.items()}
                cb.metrics = metrics
                if add_eval_loss:
                    cb.eval_results = dict(metrics, eval_loss=eval_loss.eval())
                calls.on_eval_end(ctx)
        finally:
            self.network.set_train(True)
        return metrics

    def predict(self, *predict_data):
        self.network.set_train(False)
        try:
            return self.network(*predict_data)
        finally:
            self.network.set_train(True)


__all__ = ["Model"]
