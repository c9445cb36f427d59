"""Model.train / eval / predict with callbacks, in both modes and with dataset sink mode."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.train import Callback, LossMonitor, Model, TimeMonitor


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)


def _model(seed=0):
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    return net, Model(net, loss, opt, metrics={"accuracy"})


class Recorder(Callback):
    def __init__(self):
        self.steps, self.epochs = [], 0

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        self.steps.append((cb.cur_epoch_num, cb.cur_step_num))

    def on_train_epoch_end(self, run_context):
        self.epochs += 1


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_train_eval_predict(mode, capsys):
    ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
    net, model = _model()
    before = model.eval(_data())["accuracy"]
    rec, lm = Recorder(), LossMonitor(per_print_times=6)
    model.train(5, _data(), callbacks=[rec, lm, TimeMonitor()])
    assert rec.epochs == 5 and rec.steps[-1] == (5, 30) and len(rec.steps) == 30
    out = capsys.readouterr().out
    assert "epoch: 1 step: 6, loss is" in out and "per step time" in out
    assert lm.losses[-1] < lm.losses[0]
    after = model.eval(_data())["accuracy"]
    assert after > max(before, 0.8)
    pred = model.predict(ms.Tensor(np.ones((3, 8), np.float32)))
    assert pred.shape == (3, 2)


def test_modes_agree():
    losses = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        _, model = _model()
        lm = LossMonitor(per_print_times=0)
        model.train(2, _data(), callbacks=lm)
        losses[mode] = lm.losses
    np.testing.assert_array_equal(losses[ms.GRAPH_MODE], losses[ms.PYNATIVE_MODE])


@pytest.mark.parametrize("target", ["CPU", "Ascend"])
def test_dataset_sink_mode_runs_sink_size_steps_per_call(target):
    from minispore.backends import ascend_sim
    ms.set_context(mode=ms.GRAPH_MODE, device_target=target)
    _, model = _model()
    rec = Recorder()
    if target == "Ascend":
        dev = ascend_sim.device()
        dev.reset_counters()
    model.train(2, _data(), callbacks=rec, dataset_sink_mode=True, sink_size=3)
    assert rec.steps == [(1, 3), (2, 6)]           # step_end once per sink, as MindSpore
    if target == "Ascend":
        assert dev.counts["graph_launches"] == 2    # one launch per sink of 3 steps


def test_cpu_sink_is_one_multi_step_program(monkeypatch):
    """dataset_sink_mode=True on the CPU at O2: each sink of 3 steps is ONE call of the native
    program's N-step loop over the stacked batches (the step's own program is not called per
    step), and the trained weights and losses equal three separate steps' bit for bit."""
    from minispore.backends.cpu.native_sink import NativeProgram
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", jit_level="O2")
    calls = {"run": 0, "run_steps": 0, "programs": set()}
    for name in ("run", "run_steps"):
        orig = getattr(NativeProgram, name)

        def counted(self, *a, _orig=orig, _name=name):
            calls[_name] += 1
            calls["programs"].add(type(self).__name__)
            return _orig(self, *a)
        monkeypatch.setattr(NativeProgram, name, counted)
    net, model = _model()
    sunk = LossMonitor(per_print_times=0)
    model.train(2, _data(), callbacks=sunk, dataset_sink_mode=True, sink_size=3)
    assert calls == {"run": 0, "run_steps": 2, "programs": {"NativeProgram"}}
    net2, model2 = _model()
    plain = LossMonitor(per_print_times=0)
    model2.train(1, _data(), callbacks=plain)                 # the same 6 batches, one by one
    assert calls["run"] == 6
    assert sunk.losses == [plain.losses[2], plain.losses[5]]
    for p, q in zip(net.trainable_params(), net2.trainable_params()):
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy())


def test_errors():
    net, model = _model()
    with pytest.raises(ValueError, match="epoch must be an int >= 1, got 0"):
        model.train(0, _data())
    with pytest.raises(KeyError, match="unsupported metric 'f1'"):
        Model(net, metrics={"f1"})
    with pytest.raises(ValueError, match="has no optimizer"):
        Model(net).train(1, _data())


def test_options_minispore_cannot_honour_raise():
    net, model = _model()
    with pytest.raises(ValueError, match="'kwargs' should be 'loss_scale_manager'"):
        Model(net, keep_fp32=False)
    with pytest.raises(NotImplementedError, match="boost_level='O1'"):
        Model(net, boost_level="O1")
    with pytest.raises(NotImplementedError, match="eval_indexes"):
        Model(net, eval_indexes=[0, 1, 2])


def test_the_demo_trains_both_modes_alike(capsys):
    """`python -m minispore demo`, reduced to one epoch of the MLP: the table is printed, the
    CPU's two modes give the same loss curve, the simulated Ascend is labelled as such."""
    from minispore import digits_demo
    rows = digits_demo.run(epochs=1, models=("MLP",))
    out = capsys.readouterr().out
    assert "simulated Ascend910B" in out and "MODEL time" in out
    g, p, a = rows
    assert (g["mode"], p["mode"], a["backend"]) == ("GRAPH", "PYNATIVE", "Ascend")
    np.testing.assert_array_equal(g["losses"], p["losses"])        # README: bit for bit
    assert a["sim_s"] > 0 and min(r["accuracy"] for r in rows) > 0.8


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_data_sink_of_a_jitted_function(level):
    """ms.data_sink over a function: the Parameter it assigns carries from step to step (one
    program at O2, one call per batch at O1) and the last step's result comes back."""
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", jit_level=level)
    acc = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="acc")

    def step(x):
        ms.ops.assign(acc, acc * 0.5 + x)
        return acc * 2

    xs = [(np.full(3, k, np.float32),) for k in range(1, 5)]
    out = ms.data_sink(step, xs, sink_size=4)()
    want = np.zeros(3, np.float32)
    for (x,) in xs:
        want = want * 0.5 + x
    np.testing.assert_array_equal(acc.asnumpy(), want)
    np.testing.assert_array_equal(out.asnumpy(), 2 * want)


def test_eval_with_the_top_k_metric_names():
    """Model(metrics={'top_1_accuracy'}) as MindSpore's metric table names it (top-1 is the
    accuracy); top-5 of 2 classes is an error naming k (MindSpore fails in numpy)."""
    net, _ = _model()
    r = Model(net, nn.CrossEntropyLoss(), metrics={"top_1_accuracy", "accuracy"}).eval(_data())
    assert r["top_1_accuracy"] == r["accuracy"]
    with pytest.raises(ValueError, match="C >= k = 5"):
        Model(net, nn.CrossEntropyLoss(), metrics={"top_5_accuracy"}).eval(_data())
