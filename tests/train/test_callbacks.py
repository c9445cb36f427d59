"""mindspore.train callbacks against MindSpore 2.10 (values from MindSpore 2.10, computed by
running the same scripts there): ModelCheckpoint's file names, policy and saved names,
ReduceLROnPlateau / EarlyStopping / LearningRateScheduler on scripted monitored values,
Model.fit's evaluation fields, History, LambdaCallback, and the curve/TensorBoard writers."""
from __future__ import annotations

import os

import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.train import (CheckpointConfig, EarlyStopping, History, LambdaCallback,
                             LearningRateScheduler, LossMonitor, Model, ModelCheckpoint,
                             ReduceLROnPlateau, RunContext)
from minispore.train.callback import InternalCallbackParam

MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}


def _data(n=48, batch=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)


def _model(opt="adam", metrics=None):
    ms.set_seed(0)
    net = nn.Dense(4, 2)
    optimizer = nn.Adam(net.trainable_params(), 0.01) if opt == "adam" else \
        nn.Momentum(net.trainable_params(), 0.1, 0.9)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return net, optimizer, Model(net, loss, optimizer, metrics=metrics)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_checkpoint_file_names_and_contents_match_mindspore(tmp_path, mode):
    ms.set_context(mode=MODES[mode])
    _, _, model = _model()
    cfg = CheckpointConfig(save_checkpoint_steps=5, keep_checkpoint_max=2, format="safetensors",
                           append_info=["step_num"])
    first = ModelCheckpoint(directory=str(tmp_path), config=cfg)
    model.train(2, _data(), callbacks=[first])
    # values from MindSpore 2.10: steps 5, 10 and the last (12), the oldest deleted; no
    # -graph.meta here (MindSpore writes one in GRAPH_MODE; minispore has no such format)
    assert sorted(os.listdir(tmp_path)) == ["CKP-2_4.safetensors", "CKP-2_6.safetensors"]
    second = ModelCheckpoint(directory=str(tmp_path), config=CheckpointConfig(
        save_checkpoint_steps=4, format="safetensors"))
    model.train(4, _data(), callbacks=[second], initial_epoch=2)
    assert sorted(os.listdir(tmp_path)) == [
        "CKP-2_4.safetensors", "CKP-2_6.safetensors", "CKP_1-3_4.safetensors",
        "CKP_1-4_2.safetensors", "CKP_1-4_6.safetensors"]
    assert second.latest_ckpt_file_name == str(tmp_path / "CKP_1-4_6.safetensors")
    saved = ms.load_checkpoint(str(tmp_path / "CKP-2_6.safetensors"), format="safetensors")
    assert sorted(saved) == ["beta1_power", "beta2_power", "bias", "global_step",
                             "learning_rate", "moment1.bias", "moment1.weight", "moment2.bias",
                             "moment2.weight", "step_num", "weight"]       # MindSpore 2.10
    assert int(saved["step_num"].asnumpy()) == 12 and saved["step_num"].dtype == ms.int64
    assert int(saved["global_step"].asnumpy()[0]) == 12


def test_checkpoint_append_info_and_refused_options(tmp_path):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    _, _, model = _model()
    cfg = CheckpointConfig(save_checkpoint_steps=6, format="safetensors",
                           append_info=["epoch_num", "step_num", {"lr": 0.5, "tag": 3}])
    cb = ModelCheckpoint(prefix="net", directory=str(tmp_path), config=cfg)
    model.train(1, _data(), callbacks=cb)
    saved = ms.load_checkpoint(cb.latest_ckpt_file_name, format="safetensors")
    assert cb.latest_ckpt_file_name.endswith("net-1_6.safetensors")
    # MindSpore 2.10: epoch_num/step_num Int64, a float Float32, an int Int64
    assert (saved["epoch_num"].dtype, saved["step_num"].dtype) == (ms.int64, ms.int64)
    assert saved["lr"].dtype == ms.float32 and float(saved["lr"].asnumpy()) == 0.5
    assert saved["tag"].dtype == ms.int64
    for kw, name in ((dict(async_save=True), "async_save"), (dict(enc_key=b"0" * 16), "enc_key"),
                     (dict(exception_save=True), "exception_save"),
                     (dict(remove_redundancy=True), "remove_redundancy")):
        with pytest.raises(NotImplementedError, match=name):
            CheckpointConfig(**kw)
    with pytest.raises(ValueError, match="can't be all None or 0"):
        CheckpointConfig(save_checkpoint_steps=0, keep_checkpoint_max=0)
    with pytest.raises(ValueError, match="append_info"):
        CheckpointConfig(append_info=["loss"])
    with pytest.raises(ValueError, match="prefix"):
        ModelCheckpoint(prefix="a/b")


class _Opt:
    def __init__(self):
        self.learning_rate = ms.Parameter(ms.Tensor(np.float32(0.1)), name="learning_rate")


def _scripted(callback, values, monitor="eval_loss"):
    """The optimizer's lr after each epoch's end given these monitored values ('stop' when the
    callback asks training to stop), as MindSpore's scripted run."""
    opt = _Opt()
    cb = InternalCallbackParam(optimizer=opt, cur_step_num=0, train_network=nn.Dense(2, 2))
    ctx = RunContext(cb)
    callback.on_train_begin(ctx)
    out = []
    for epoch, v in enumerate(values, 1):
        cb.cur_epoch_num = epoch
        cb.eval_results = {monitor: v} if v is not None else {}
        callback.on_train_epoch_end(ctx)
        out.append(float(opt.learning_rate.asnumpy()))
        if ctx.get_stop_requested():
            out.append("stop")
            break
    return out


VALUES = [1.0, 0.9, 0.95, 0.92, 0.91, 0.9, 0.89, 0.95, 0.97, 0.99, 0.5, 0.6, 0.7, 0.8]
ACC = [0.5, 0.6, 0.6, 0.55, 0.7, 0.7, 0.7]
A, B, C, D, E = (0.10000000149011612, 0.05000000074505806, 0.02500000037252903,
                 0.012500000186264515, 0.0062500000931322575)


def test_reduce_lr_on_plateau_matches_mindspore():
    # values from MindSpore 2.10
    assert _scripted(ReduceLROnPlateau(factor=0.5, patience=2), VALUES) == \
        [A, A, A, B, B, C, C, C, D, D, D, D, E, E]
    F = 0.019999999552965164
    assert _scripted(ReduceLROnPlateau(factor=0.5, patience=1, cooldown=2, min_delta=0.02,
                                       min_lr=0.02), VALUES) == [A, A, B, B, C, C] + [F] * 8
    assert _scripted(ReduceLROnPlateau(monitor="acc", factor=0.3, patience=1), ACC,
                     monitor="eval_loss") == [A] * 7                    # monitor missing
    assert _scripted(ReduceLROnPlateau(monitor="acc", factor=0.3, patience=1), ACC[:4],
                     monitor="acc") == [A, A, 0.030000001192092896, 0.009000000543892384]
    # a missing value and a value of exactly 0 are skipped (MindSpore's `if monitor_value`)
    assert _scripted(ReduceLROnPlateau(factor=0.5, patience=0), [1.0, None, 0.0, 2.0, 3.0]) == \
        [A, A, A, B, C]
    with pytest.raises(ValueError, match="factor"):
        ReduceLROnPlateau(factor=1.0)


@pytest.mark.parametrize("kwargs,values,monitor,stopped,best", [
    (dict(patience=2), VALUES, "eval_loss", 4, 0.9),
    (dict(patience=3, min_delta=0.02), VALUES, "eval_loss", 5, 0.9),
    (dict(monitor="acc", patience=1), ACC, "acc", 3, 0.6),
    (dict(patience=2, baseline=0.5), VALUES, "eval_loss", 2, 0.9),   # baseline := min_delta
    (dict(patience=1, mode="max"), VALUES, "eval_loss", 2, 1.0),
])
def test_early_stopping_matches_mindspore(kwargs, values, monitor, stopped, best):
    es = EarlyStopping(**kwargs)
    out = _scripted(es, values, monitor)
    assert out[-1] == "stop" and len(out) == stopped + 1               # MindSpore 2.10
    assert es.stopped_epoch == stopped and float(es.best) == best


def test_learning_rate_scheduler_matches_mindspore():
    opt = _Opt()
    cb = InternalCallbackParam(optimizer=opt)
    ctx = RunContext(cb)
    sched = LearningRateScheduler(lambda lr, step: lr * 0.9 if step % 2 == 0 else lr)
    seen = []
    for step in range(1, 7):
        cb.cur_step_num = step
        sched.step_end(ctx)
        seen.append(float(opt.learning_rate.asnumpy()))
    assert seen == [0.10000000149011612, 0.09000000357627869, 0.09000000357627869,
                    0.08100000023841858, 0.08100000023841858, 0.07289999723434448]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_lr_changes_reach_the_compiled_step(mode):
    """The optimizer really uses the rate a callback assigns: halving lr after every step
    gives the same weights as an optimizer built with that per-step table."""
    ms.set_context(mode=MODES[mode])
    net, opt, model = _model(opt="momentum")
    model.train(1, _data(), callbacks=LearningRateScheduler(lambda lr, step: lr * 0.5))
    ms.set_seed(0)
    net2 = nn.Dense(4, 2)
    table = [0.1 * 0.5 ** k for k in range(6)]
    opt2 = nn.Momentum(net2.trainable_params(), ms.Tensor(np.array(table, np.float32)), 0.9)
    Model(net2, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
          opt2).train(1, _data())
    for p, q in zip(net.trainable_params(), net2.trainable_params()):
        np.testing.assert_allclose(p.asnumpy(), q.asnumpy(), rtol=1e-6, atol=1e-7)
    assert float(opt.learning_rate.asnumpy()) == np.float32(0.1 * 0.5 ** 6)


class _Seen(ms.train.Callback):
    def __init__(self):
        self.events = []

    def on_train_begin(self, rc):
        cb = rc.original_args()
        self.events.append(("begin", cb.epoch_num, cb.batch_num, cb.cur_step_num))

    def on_eval_begin(self, rc):
        self.events.append(("eval_begin", rc.original_args().mode))

    def on_eval_step_end(self, rc):
        cb = rc.original_args()
        self.events.append(("eval_step", cb.cur_step_num, cb.batch_num, len(cb.net_outputs)))

    def on_train_epoch_end(self, rc):
        cb = rc.original_args()
        self.events.append(("epoch_end", cb.cur_epoch_num, cb.cur_step_num, cb.mode,
                            sorted(cb.get("eval_results") or {})))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_fit_evaluates_every_valid_frequency_epochs(mode):
    ms.set_context(mode=MODES[mode])
    _, _, model = _model(metrics={"acc": ms.train.Accuracy(), "loss": ms.train.Loss()})
    seen, hist = _Seen(), History()
    model.fit(3, _data(batch=16), _data(n=32, batch=16), valid_frequency=2,
              callbacks=[seen, hist])
    # the sequence MindSpore 2.10 gives for the same script
    assert seen.events == [
        ("begin", 3, 3, 0), ("epoch_end", 1, 3, "train", []),
        ("eval_begin", "eval"), ("eval_step", 1, 2, 3), ("eval_step", 2, 2, 3),
        ("epoch_end", 2, 6, "train", ["acc", "eval_loss", "loss"]),
        ("epoch_end", 3, 9, "train", [])]
    assert hist.epoch == {"epoch": [1, 2, 3]}
    assert sorted(hist.history) == ["acc", "loss", "net_output"]
    assert len(hist.history["net_output"]) == 3 and len(hist.history["acc"]) == 1


def test_fit_eval_loss_is_the_last_batch_loss_as_mindspore():
    """MindSpore 2.10 makes a new Loss metric at each eval step, so eval_loss is the last
    batch's loss while the 'loss' metric averages the batches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net, _, model = _model(metrics={"loss": ms.train.Loss()})
    got = {}
    model.fit(1, _data(batch=16), _data(n=32, batch=16), callbacks=LambdaCallback(
        on_train_epoch_end=lambda rc: got.update(rc.original_args().eval_results)))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    batches = [loss_fn(net(x), y).asnumpy() for x, y in
               _data(n=32, batch=16).create_tuple_iterator(num_epochs=1)]
    assert got["eval_loss"] == pytest.approx(float(batches[-1]), rel=1e-6)
    assert got["loss"] == pytest.approx(float(np.mean(batches)), rel=1e-6)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_early_stopping_stops_fit(mode):
    ms.set_context(mode=MODES[mode])
    _, opt, model = _model(metrics={"acc": ms.train.Accuracy()})
    es = EarlyStopping(monitor="acc", patience=1, mode="min")      # acc rising: stop soon
    rec = LossMonitor(per_print_times=0)
    model.fit(10, _data(), _data(), callbacks=[es, rec])
    assert es.stopped_epoch == 2 and len(rec.losses) == 12


def test_fit_refuses_legacy_hooks_and_checks_arguments():
    _, _, model = _model(metrics={"acc": ms.train.Accuracy()})

    class Legacy(ms.train.Callback):
        def step_end(self, run_context):
            pass
    with pytest.raises(ValueError, match="step_end"):
        model.fit(1, _data(), callbacks=Legacy())
    model.train(1, _data(), callbacks=Legacy())                    # train only warns
    with pytest.raises(ValueError, match="bigger than parameter 'initial_epoch'"):
        model.train(2, _data(), initial_epoch=2)
    with pytest.raises(TypeError, match="valid_frequency"):
        model.fit(1, _data(), _data(), valid_frequency=1.0)
    with pytest.raises(ValueError, match="metrics"):
        _model()[2].fit(1, _data(), _data())


def test_curve_png_and_tensorboard_files(tmp_path):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    from minispore.train import CurvePlotter, TensorBoardWriter
    _, _, model = _model(metrics={"acc": ms.train.Accuracy()})
    png = tmp_path / "curves.png"
    plot, board = CurvePlotter(str(png)), TensorBoardWriter(str(tmp_path / "tb"))
    model.fit(2, _data(), _data(), callbacks=[plot, board])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(plot.losses) == 12 and [e for e, _ in plot.eval_history["acc"]] == [1, 2]
    events = [f for f in os.listdir(tmp_path / "tb") if f.startswith("events.out.tfevents")]
    assert len(events) == 1
    scalars = _read_scalars(tmp_path / "tb" / events[0])
    assert {"train/loss", "train/learning_rate", "eval/acc", "eval/eval_loss"} <= set(scalars)
    assert [step for step, _ in scalars["train/loss"]] == list(range(1, 13))
    np.testing.assert_allclose([v for _, v in scalars["train/loss"]], plot_losses(plot),
                               rtol=1e-6)


def plot_losses(plot):
    return [v for _, v in plot.losses]


def _read_scalars(path):
    """{tag: [(step, value)]} from a TensorBoard event file (TFRecord framing: length,
    its crc, the Event proto, its crc)."""
    import struct
    from tensorboardX.proto import event_pb2
    out = {}
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack("<Q", data[pos:pos + 8])
        event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + n])
        pos += 12 + n + 4
        for v in event.summary.value:
            out.setdefault(v.tag, []).append((event.step, v.simple_value))
    return out


def test_default_config_writes_ckpt_files_every_step_keeping_five(tmp_path):
    """MindSpore 2.10 with ModelCheckpoint() over 6 steps: CKP-1_2.ckpt .. CKP-1_6.ckpt (every
    step saved, the oldest beyond 5 deleted), in MindSpore's .ckpt format."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net, _, model = _model()
    cb = ModelCheckpoint(directory=str(tmp_path))
    model.train(1, _data(), callbacks=cb)
    assert sorted(os.listdir(tmp_path)) == [f"CKP-1_{s}.ckpt" for s in range(2, 7)]
    saved = ms.load_checkpoint(cb.latest_ckpt_file_name)
    np.testing.assert_array_equal(saved["weight"].asnumpy(), net.weight.asnumpy())


@pytest.mark.parametrize("mode", sorted(MODES))
def test_fit_with_every_schedule_callback_matches_mindspore(tmp_path, mode, capsys):
    """One fit with History, ReduceLROnPlateau, EarlyStopping, LearningRateScheduler,
    ModelCheckpoint, LossMonitor and TimeMonitor from fixed initial weights: the learning rates,
    the stop epoch, the eval metrics per epoch and the checkpoint files are MindSpore 2.10's
    (the same script run there, both modes)."""
    from minispore.train import Accuracy, Loss, Precision, TimeMonitor
    ms.set_context(mode=MODES[mode])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((48, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    w0 = rng.standard_normal((2, 4)).astype(np.float32) * 0.1

    def data(n=48):
        return ds.NumpySlicesDataset({"x": x[:n], "y": y[:n]}, shuffle=False).batch(16)

    net = nn.Dense(4, 2, weight_init=ms.Tensor(w0), bias_init="zeros")
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt,
                  metrics={"acc": Accuracy(), "loss": Loss(), "p": Precision()})
    hist, lrs = History(), []
    es = EarlyStopping(monitor="eval_loss", patience=2, min_delta=0.03)
    ck = ModelCheckpoint(prefix="p", directory=str(tmp_path), config=CheckpointConfig(
        save_checkpoint_steps=4, keep_checkpoint_max=3, format="safetensors"))
    model.fit(8, data(), data(32), callbacks=[
        hist, ReduceLROnPlateau(monitor="eval_loss", factor=0.5, patience=0, min_delta=0.05), es,
        LambdaCallback(on_train_epoch_end=lambda rc: lrs.append(
            float(rc.original_args().optimizer.learning_rate.asnumpy()))),
        ck, LearningRateScheduler(lambda lr, s: lr * 0.97 if s % 3 == 0 else lr),
        LossMonitor(2), TimeMonitor()])
    # values from MindSpore 2.10
    np.testing.assert_allclose(lrs, [0.09700000286102295, 0.09408999979496002,
                                     0.09126730263233185, 0.08852928131818771,
                                     0.04293670132756233, 0.02082430012524128,
                                     0.010099785402417183], rtol=1e-7)
    assert es.stopped_epoch == 7 and hist.epoch["epoch"] == [1, 2, 3, 4, 5, 6, 7]
    assert hist.history["acc"] == [0.8125, 0.90625, 0.90625, 0.90625, 0.9375, 0.9375, 0.9375]
    np.testing.assert_allclose(hist.history["loss"], [
        0.5833044946193695, 0.3989117741584778, 0.30086827278137207, 0.2477259337902069,
        0.21340280771255493, 0.2004266306757927, 0.19497425109148026], rtol=1e-5)
    np.testing.assert_allclose(hist.history["p"][-1], [0.9444444444444444, 0.9285714285714286])
    assert sorted(os.listdir(tmp_path)) == ["p-6_1.safetensors", "p-7_2.safetensors",
                                            "p-7_3.safetensors"]
    out = capsys.readouterr().out
    assert "epoch: 1 step: 2, loss is " in out and "Train epoch time: " in out
    assert "Eval epoch time: " in out and f"Eval result: epoch 7, metrics: {{'acc': {np.float64(0.9375)!r}" in out


def test_time_monitor_data_time(capsys):
    """data_time=True adds the time between steps (MindSpore's format); in sink mode it is
    refused naming the option."""
    from minispore.train import TimeMonitor
    ms.set_context(mode=ms.PYNATIVE_MODE)
    _, _, model = _model()
    model.train(1, _data(), callbacks=TimeMonitor(data_time=True))
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("Train epoch time: ") and " ms, per step time: " in line
    assert "(data time: " in line and line.endswith(" ms)")
    with pytest.raises(TypeError, match="data_time"):
        TimeMonitor(data_time=1)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_eval_callbacks_and_metrics_match_mindspore(mode):
    from minispore.train import F1, Accuracy, Callback, ConfusionMatrix, Loss
    ms.set_context(mode=MODES[mode])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    w0 = rng.standard_normal((2, 4)).astype(np.float32) * 0.5
    data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
    net = nn.Dense(4, 2, weight_init=ms.Tensor(w0), bias_init="zeros")
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), None,
                  metrics={"acc": Accuracy(), "loss": Loss(), "f1": F1(),
                           "cm": ConfusionMatrix(2)})
    ev = []

    class Seen(Callback):
        def on_eval_begin(self, rc):
            c = rc.original_args()
            ev.append(["begin", c.mode, c.batch_num, c.cur_step_num])

        def on_eval_epoch_begin(self, rc):
            ev.append(["epoch_begin"])

        def on_eval_step_begin(self, rc):
            c = rc.original_args()
            ev.append(["step_begin", c.cur_step_num, len(c.eval_dataset_element)])

        def on_eval_step_end(self, rc):
            c = rc.original_args()
            ev.append(["step_end", c.cur_step_num, [list(o.shape) for o in c.net_outputs]])

        def on_eval_epoch_end(self, rc):
            ev.append(["epoch_end", sorted(rc.original_args().get("metrics") or [])])

        def on_eval_end(self, rc):
            ev.append(["end", sorted(rc.original_args().metrics)])

    r = model.eval(data, callbacks=[Seen()])
    # values from MindSpore 2.10, both modes
    assert ev == [["begin", "eval", 3, 0], ["epoch_begin"], ["step_begin", 1, 2],
                  ["step_end", 1, [[], [16, 2], [16]]], ["step_begin", 2, 2],
                  ["step_end", 2, [[], [16, 2], [16]]], ["step_begin", 3, 2],
                  ["step_end", 3, [[], [8, 2], [8]]], ["epoch_end", []],
                  ["end", ["acc", "cm", "f1", "loss"]]]
    assert r["acc"] == 0.75
    assert r["loss"] == pytest.approx(0.5202248791853586, rel=1e-6)
    np.testing.assert_allclose(r["f1"], [0.782608695652174, 0.7058823529411765], rtol=1e-15)
    np.testing.assert_array_equal(r["cm"], [[18.0, 3.0], [7.0, 12.0]])


@pytest.mark.parametrize("kwargs,files,policy", [
    # values from MindSpore 2.10: (files after 6 steps, keep_max, keep_per_n_minutes, seconds)
    (dict(save_checkpoint_steps=1, keep_checkpoint_max=0, keep_checkpoint_per_n_minutes=1),
     ["CKP-1_1.safetensors", "CKP-1_6.safetensors"], (0, 1, None)),
    (dict(save_checkpoint_steps=0, save_checkpoint_seconds=3600), ["CKP-1_6.safetensors"],
     (5, None, 3600)),
    (dict(save_checkpoint_steps=2, keep_checkpoint_max=0), ["CKP-1_6.safetensors"], (1, 0, None)),
])
def test_checkpoint_time_policies_match_mindspore(tmp_path, kwargs, files, policy):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    _, _, model = _model()
    cfg = CheckpointConfig(format="safetensors", **kwargs)
    model.train(1, _data(), callbacks=ModelCheckpoint(directory=str(tmp_path), config=cfg))
    assert sorted(os.listdir(tmp_path)) == files
    assert (cfg.keep_checkpoint_max, cfg.keep_checkpoint_per_n_minutes,
            cfg.save_checkpoint_seconds) == policy


def test_early_stopping_restores_the_best_weights():
    """restore_best_weights: at the stop the train network gets the parameters it had at the
    end of the best epoch (copied at each improvement); MindSpore 2.10 gives the same here."""
    net = nn.Dense(2, 2)
    es = EarlyStopping(patience=2, restore_best_weights=True)
    cb = InternalCallbackParam(train_network=net)
    ctx = RunContext(cb)
    es.on_train_begin(ctx)
    for epoch, value in enumerate([1.0, 0.5, 0.7, 0.8], 1):
        net.weight.set_data(ms.Tensor(np.full((2, 2), epoch, np.float32)))
        cb.cur_epoch_num = epoch
        cb.eval_results = {"eval_loss": value}
        es.on_train_epoch_end(ctx)
    assert es.stopped_epoch == 4 and ctx.get_stop_requested()
    np.testing.assert_array_equal(net.weight.asnumpy(), np.full((2, 2), 2, np.float32))


def test_prefix_suffix_rule_saved_network_and_function_names(tmp_path):
    """values from MindSpore 2.10: the next suffix is one more than the highest (CKP_7 ->
    CKP_8; CKPx is another prefix), saved_network's parameters only, and a function prefix /
    directory evaluated at each save."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net, _, model = _model()
    first = tmp_path / "a"
    first.mkdir()
    for name in ("CKP-1_1.safetensors", "CKP_7-1_1.safetensors", "CKPx-1_1.safetensors"):
        (first / name).write_bytes(b"")
    cb = ModelCheckpoint(directory=str(first), config=CheckpointConfig(
        save_checkpoint_steps=2, format="safetensors", saved_network=net))
    model.train(1, _data(n=24), callbacks=cb)
    assert sorted(os.listdir(first)) == [
        "CKP-1_1.safetensors", "CKP_7-1_1.safetensors", "CKP_8-1_2.safetensors",
        "CKP_8-1_3.safetensors", "CKPx-1_1.safetensors"]
    assert sorted(ms.load_checkpoint(cb.latest_ckpt_file_name, format="safetensors")) == \
        ["bias", "weight"]
    second = tmp_path / "b"
    cb = ModelCheckpoint(prefix=lambda c: f"s{c.cur_step_num}",
                         directory=lambda c: str(second / f"e{c.cur_epoch_num}"),
                         config=CheckpointConfig(save_checkpoint_steps=2, format="safetensors"))
    model.train(2, _data(n=24), callbacks=cb)
    assert sorted((p, sorted(os.listdir(second / p))) for p in os.listdir(second)) == \
        [("e1", ["s2.safetensors"]), ("e2", ["s4.safetensors", "s6.safetensors"])]
