"""The main job (`python -m minispore demo`): train a LeNet-style CNN and an MLP on the digits
data (8x8 images that ship inside scikit-learn) on the CPU in GRAPH_MODE and PYNATIVE_MODE and on
the simulated Ascend in graph sink mode, then print one table: backend, mode, model, final loss,
test accuracy, steps/s, and for the simulated Ascend its simulated device time (model time, next
to the wall time the simulation took).

Every run starts from the same seeded weights and sees the same batches, so the two modes on the
CPU must give the same loss curve (they are compared) and the CNN must reach 95% test accuracy.
"""
from __future__ import annotations

import time

import numpy as np

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.train import Callback, Model


class LeNet(nn.Cell):
    """conv3x3(16) - ReLU - pool2 - conv3x3(32) - ReLU - pool2 - dense(64) - ReLU - dense(10)."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same")
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.fc2 = nn.Dense(64, classes)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


class MLP(nn.Cell):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(64, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(128, classes)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


class _Losses(Callback):
    """Every step's loss, and the wall time at the end of every epoch."""

    def __init__(self):
        self.losses: list[float] = []
        self.epoch_ends: list[float] = []

    def on_train_step_end(self, run_context):
        out = run_context.original_args().net_outputs
        self.losses.append(float(out.asnumpy()))

    def on_train_epoch_end(self, run_context):
        self.epoch_ends.append(time.perf_counter())


RUNS = (("CPU", "GRAPH", False), ("CPU", "PYNATIVE", False), ("Ascend", "GRAPH sink", True))


def train_one(model_name: str, target: str, mode: str, sink: bool, epochs: int, seed: int = 1):
    ms.set_context(device_target=target,
                   mode=ms.PYNATIVE_MODE if mode == "PYNATIVE" else ms.GRAPH_MODE,
                   jit_level="O2")
    ms.set_seed(seed)
    ds.config.set_seed(seed)
    net = LeNet() if model_name == "CNN" else MLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    model = Model(net, loss, opt, metrics={"accuracy"})
    train = ds.load_digits("train").batch(32, drop_remainder=True)
    test = ds.load_digits("test").batch(128)
    rec = _Losses()
    dev = None
    if target == "Ascend":
        from .backends import ascend_sim
        dev = ascend_sim.device()
        dev.synchronize()
        sim0 = dev.now()
    t0 = time.perf_counter()
    model.train(epochs, train, callbacks=rec, dataset_sink_mode=sink)
    wall = time.perf_counter() - t0
    acc = model.eval(test)["accuracy"]
    # steps/s after the first epoch, which includes compiling (reported apart)
    first = rec.epoch_ends[0] - t0
    later = (rec.epoch_ends[-1] - rec.epoch_ends[0]) if epochs > 1 else first
    steps = (epochs - 1 if epochs > 1 else 1) * train.get_dataset_size()
    row = {"model": model_name, "backend": target, "mode": mode, "loss": rec.losses[-1],
           "accuracy": acc, "steps_per_s": steps / later, "first_epoch_s": first,
           "wall_s": wall, "losses": rec.losses}
    if dev is not None:
        dev.synchronize()
        row["sim_s"] = dev.now() - sim0
    return row


def run(epochs: int = 10, models=("CNN", "MLP")) -> list[dict]:
    rows = []
    for m in models:
        for target, mode, sink in RUNS:
            rows.append(train_one(m, target, mode, sink, epochs))
    _print(rows)
    for m in models:
        g, p = (next(r for r in rows if r["model"] == m and r["backend"] == "CPU"
                     and r["mode"] == mode) for mode in ("GRAPH", "PYNATIVE"))
        dev = float(np.max(np.abs(np.array(g["losses"]) - np.array(p["losses"]))))
        print(f"{m}: GRAPH vs PYNATIVE loss curves on the CPU differ by at most {dev:.2e}")
    return rows


def _print(rows) -> None:
    headers = ["model", "backend", "mode", "final loss", "test acc", "steps/s",
               "1st epoch s", "simulated device time"]
    table = []
    for r in rows:
        backend, sim = device_cells(r)
        table.append([r["model"], backend, r["mode"], f"{r['loss']:.4f}",
                      f"{100 * r['accuracy']:.1f}%", f"{r['steps_per_s']:.0f}",
                      f"{r['first_epoch_s']:.1f}", sim])
    title = ("minispore demo: digits (8x8, 10 classes, from scikit-learn), train 1438 / test "
             "359")
    note = ("* simulated Ascend910B: its device time is MODEL time from the profile, not a "
            "hardware measurement; steps/s are wall time\n  after the first epoch (which "
            "includes compiling)")
    print_rows(headers, table, title, note)


def device_cells(r) -> tuple:
    """A demo row's backend label (the simulated Ascend starred) and its simulated device time
    beside the wall time the simulation took ('-' off the simulator)."""
    sim = f"{r['sim_s'] * 1e3:.1f} ms (wall {r['wall_s']:.1f} s)" if "sim_s" in r else "-"
    return r["backend"] + ("*" if r["backend"] == "Ascend" else ""), sim


def print_rows(headers, table, title: str, note: str) -> None:
    """A demo's result table (rich when importable, else plain text) and its note."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(title)
        print(" | ".join(headers))
        for t in table:
            print(" | ".join(t))
        print(note)
        return
    tab = Table(title=title)
    for h in headers:
        tab.add_column(h)
    for t in table:
        tab.add_row(*t)
    console = Console(width=120)
    console.print(tab)
    console.print(note)
