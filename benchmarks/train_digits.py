"""Training on the digits data: epoch time, accuracy and peak RSS per backend and mode, beside
PyTorch and MindSpore.

Usage (from the repository root)::

    python benchmarks/train_digits.py [--quick] [--json PATH] [--only KEY,KEY] [--epochs N]

Two workloads: an MLP (Flatten, Dense 64-128, ReLU, Dense 128-10) and the LeNet-style CNN of
``minispore/digits_demo.py`` (conv3x3(16)-ReLU-pool2-conv3x3(32)-ReLU-pool2-dense(64)-ReLU-
dense(10), convolutions without bias as MindSpore's default).  Softmax cross-entropy (sparse,
mean), Momentum(lr 0.05, momentum 0.9), batch 32 (44 steps per epoch, remainder dropped).

Same data, batches and initial weights everywhere: this process builds the digits split with the
rule of ``minispore/dataset/digits.py`` (seeded permutation, first 20% = test), one seeded
permutation of the training set per epoch and He-normal weights (zero biases) with numpy, and
writes them to an ``.npz`` that every row loads (the peers need no scikit-learn).  Every row
runs in a fresh process (``_harness.run_case``; the case does its work at import and sends
``EXTRA`` back).  The minispore and MindSpore rows run the SAME model source (``nn.Cell``s,
``nn.WithLossCell`` + ``nn.TrainOneStepCell``) with only the import changed.  An epoch = 44
steps including the numpy -> tensor conversion of each batch, synchronised at its end.

Rows: minispore CPU GRAPH_MODE (jit_level O2, empty kernel cache), minispore CPU PYNATIVE,
minispore on the simulated Ascend in GRAPH_MODE with loop sink (``ms.data_sink`` over the epoch's
44 batches; its simulated device time per epoch is MODEL time from the simulator's profile,
shown beside the wall time), torch eager (``optim.SGD(momentum=0.9)``: the same update rule),
``torch.compile`` of the network (not in ``--quick`` unless named in ``--only``), MindSpore
GRAPH_MODE and PyNative (with ``launch_blocking()``).

Columns: epoch time median (min-max) over every epoch but the first of every round; the first
epoch (compile + warm-up; for minispore, until the O2 programs and PyNative's compiled backward
that it builds in the background are done, so the later epochs time the steady state) apart; final test accuracy; final train loss; peak RSS of the child
(``ru_maxrss``); ratios of median epoch times to MindSpore Graph and PyNative (> 1 = faster).
The last lines state the targets: minispore Graph (CPU) >= 2x MindSpore Graph (CPU) and
minispore PyNative >= 5x MindSpore PyNative, per workload.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402
# the shared quiet-wait/retry-once runner and peer location; the graph-vs-eager benchmark's
# model-file loader and target verdicts
from _harness import LOAD_LIMIT, Runner, fresh_cache_dir, resolve  # noqa: E402
from graph_vs_eager import _LOADER, verdict  # noqa: E402

BATCH, LR, MOMENTUM, SEED = 32, 0.05, 0.9, 0
MODELS = {"mlp": "MLP 64-128-10", "cnn": "LeNet-style CNN"}
TARGETS = {"graph": 2.0, "pynative": 5.0}

# --------------------------------------------------------------------------- case code (child)

# Everything runs at import of the case; the harness sends EXTRA back (no timed shapes).
_COMMON = _LOADER + """
import json, resource, time
import numpy as np
CFG = json.loads(@CFG@)
_D = np.load(CFG["data"])
XTR, YTR, XTE, YTE, PERMS = (_D[k] for k in ("xtr", "ytr", "xte", "yte", "perms"))
W = {k.split(":", 1)[1]: _D[k] for k in _D.files if k.startswith(CFG["model"] + ":")}
EPOCHS, B = CFG["epochs"], CFG["batch"]
STEPS = len(YTR) // B
EXTRA = {}
SETTLE = lambda: None      # minispore: wait for the O2 programs built in the background
def batches(e):
    p = PERMS[e]
    for s in range(STEPS):
        idx = p[s * B:(s + 1) * B]
        yield XTR[idx], YTR[idx]
def step_epochs(step, T, first):
    # run_epoch(e) for a per-step loop; keeps the first 6 losses (synchronised later)
    def run_epoch(e):
        for x, y in batches(e):
            loss = step(T(x), T(y, True))
            if len(first) < 6:
                first.append(loss)
        return loss
    return run_epoch
def train(run_epoch, sync, predict, first=(), on_epoch=None):
    times, t = [], time.perf_counter()
    for e in range(EPOCHS):
        loss = run_epoch(e)
        last = sync(loss)
        now = time.perf_counter()
        if e == 0:          # the first epoch: until the background compiles are done too
            SETTLE()
            now = time.perf_counter()
        times.append(now - t)
        if on_epoch:
            on_epoch(e)
        t = time.perf_counter()
    acc = float((np.asarray(predict(XTE)).argmax(1) == YTE).mean())
    EXTRA.update(epoch_s=times, first_losses=[sync(l) for l in first], final_loss=last,
                 accuracy=acc, steps_per_epoch=STEPS,
                 peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

# minispore's model file; MindSpore's is the same text with the import changed
_MODEL_SRC = '''
import minispore as ms
from minispore import nn


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(64, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(128, 10)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


class LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same")
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.fc2 = nn.Dense(64, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


def build(model, weights, lr, momentum):
    net = MLP() if model == "mlp" else LeNet()
    for p in net.trainable_params():
        p.set_data(ms.Tensor(weights[p.name]))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=momentum)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    train.set_train()
    return net, train
'''

_CELL_ROW = """
M = load_source("bench_digits_model", %r)
net, trainer = M.build(CFG["model"], W, %r, %r)
T = lambda a, label=False: ms.Tensor(a)
sync = lambda l: float(l.asnumpy())
def predict(x):
    net.set_train(False)
    return net(ms.Tensor(x)).asnumpy()
""" % (_MODEL_SRC.replace("minispore", "{PKG}"), LR, MOMENTUM)


def _minispore(context: str, sink: bool = False) -> str:
    pre = _COMMON + f"""
import minispore as ms
from minispore.core.graph import tiered
SETTLE = tiered.wait_all
{context}
VERSIONS = {{"minispore": getattr(ms, "__version__", "?"), "numpy": np.__version__}}
""" + _CELL_ROW.replace("{PKG}", "minispore")
    if not sink:
        return pre + """
first = []
train(step_epochs(trainer, T, first), sync, predict, first)
"""
    return pre + """
from minispore.backends import ascend_sim
dev = ascend_sim.device()
dev.synchronize()
sims = [dev.now()]
def sink_epoch(e):   # loop sink: one data_sink over the epoch's batches (the Cell is compiled once)
    return ms.data_sink(trainer, [(T(x), T(y)) for x, y in batches(e)], sink_size=STEPS)()
def mark(e):
    dev.synchronize()
    sims.append(dev.now())
train(sink_epoch, sync, predict, on_epoch=mark)
EXTRA["sim_epoch_s"] = [b - a for a, b in zip(sims, sims[1:])]
"""


def _mindspore(mode: str) -> str:
    blocking = "ms.runtime.launch_blocking()   # 2 cores: the async pipeline stalls without it"
    return _COMMON + f"""
import mindspore as ms
ms.set_device("CPU")
{blocking if mode == "PYNATIVE_MODE" else ""}
ms.set_context(mode=ms.{mode})
VERSIONS = {{"mindspore": ms.__version__, "numpy": np.__version__}}
""" + _CELL_ROW.replace("{PKG}", "mindspore") + """
first = []
train(step_epochs(trainer, T, first), sync, predict, first)
"""


_TORCH = _COMMON + """
import torch
import torch.nn as tnn
VERSIONS = {"torch": torch.__version__, "threads": torch.get_num_threads()}
class MLP(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = tnn.Linear(64, 128), tnn.Linear(128, 10)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))
class LeNet(tnn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = tnn.Conv2d(1, 16, 3, padding="same", bias=False)
        self.conv2 = tnn.Conv2d(16, 32, 3, padding="same", bias=False)
        self.pool = tnn.MaxPool2d(2, 2)
        self.fc1, self.fc2 = tnn.Linear(32 * 2 * 2, 64), tnn.Linear(64, 10)
    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))
net = MLP() if CFG["model"] == "mlp" else LeNet()
net.load_state_dict({k: torch.from_numpy(v) for k, v in W.items()})
fwd = torch.compile(net) if CFG.get("compile") else net
opt = torch.optim.SGD(net.parameters(), lr=%r, momentum=%r)   # v = m*v + g; p -= lr*v
lossf = tnn.CrossEntropyLoss()
def step(x, y):
    opt.zero_grad(set_to_none=True)
    loss = lossf(fwd(x), y)
    loss.backward()
    opt.step()
    return loss
T = lambda a, label=False: torch.from_numpy(a.astype(np.int64) if label else a)
def predict(x):
    with torch.no_grad():
        return net(torch.from_numpy(x)).numpy()
first = []
train(step_epochs(step, T, first), lambda l: l.item(), predict, first)
""" % (LR, MOMENTUM)

_PYNATIVE = 'ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")'
_GRAPH = 'ms.set_context(mode=ms.GRAPH_MODE, device_target="{}", jit_level="O2")'

# (key, label, peer, code factory, extra CFG)
CASES = [
    ("minispore-graph", "minispore CPU GRAPH O2", "minispore",
     _minispore(_GRAPH.format("CPU")), {}),
    ("minispore-pynative", "minispore CPU PYNATIVE", "minispore",
     _minispore(_PYNATIVE), {}),
    ("minispore-ascend-sink", "minispore Ascend* GRAPH sink",
     "minispore", _minispore(_GRAPH.format("Ascend"), sink=True), {}),
    ("torch", "torch eager", "torch", _TORCH, {}),
    ("torch-compile", "torch.compile(net)", "torch", _TORCH, {"compile": True}),
    ("mindspore-graph", "MindSpore CPU GRAPH", "mindspore",
     _mindspore("GRAPH_MODE"), {}),
    ("mindspore-pynative", "MindSpore PyNative",
     "mindspore", _mindspore("PYNATIVE_MODE"), {}),
]
ALL_KEYS = [c[0] for c in CASES]
QUICK_SKIP = {"torch-compile"}      # compiling costs minutes on 2 cores: full mode or --only


# --------------------------------------------------------------------------- data (parent)

def write_inputs(path: str, epochs: int) -> dict:
    """The digits split (minispore/dataset/digits.py's rule), per-epoch batch orders and initial
    weights for both models, into one .npz; returns a few facts about it."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = d.target.astype(np.int32)
    order = np.random.default_rng(SEED).permutation(len(y))
    n_test = int(round(len(y) * 0.2))
    te, tr = order[:n_test], order[n_test:]
    rng = np.random.default_rng(SEED + 1)
    arrays = {"xtr": x[tr], "ytr": y[tr], "xte": x[te], "yte": y[te],
              "perms": np.stack([rng.permutation(len(tr)) for _ in range(epochs)])}
    shapes = {"mlp": {"fc1.weight": (128, 64), "fc1.bias": (128,), "fc2.weight": (10, 128),
                      "fc2.bias": (10,)},
              "cnn": {"conv1.weight": (16, 1, 3, 3), "conv2.weight": (32, 16, 3, 3),
                      "fc1.weight": (64, 128), "fc1.bias": (64,), "fc2.weight": (10, 64),
                      "fc2.bias": (10,)}}
    for model, params in shapes.items():
        for name, shape in params.items():      # He-normal weights, zero biases
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 0
            arrays[f"{model}:{name}"] = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
                                         if fan_in else np.zeros(shape)).astype(np.float32)
    np.savez(path, **arrays)
    return {"train": len(tr), "test": len(te), "steps_per_epoch": len(tr) // BATCH}


# --------------------------------------------------------------------------- running

def collect(runner, keys, models, epochs, rounds, data, tmp_root) -> dict:
    results = {m: {k: {"label": lab, "runs": []} for k, lab, *_ in CASES if k in keys}
               for m in models}
    for rnd in range(rounds):
        for model in models:
            for key, label, peer, code, cfg in CASES:
                res = results[model].get(key)
                if res is None or res.get("skipped"):
                    continue
                found = resolve(res, peer)
                if found is None:
                    continue
                python, sys_path = found
                print(f"  [round {rnd + 1}/{rounds}] {model} {key} ...", file=sys.stderr,
                      flush=True)
                env = None
                if peer == "minispore":                  # an empty kernel cache per process
                    env = (lambda _a: {"MINISPORE_CACHE_DIR": fresh_cache_dir(tmp_root)})
                conf = dict(cfg, data=data, model=model, epochs=epochs, batch=BATCH)
                case = code.replace("@CFG@", repr(json.dumps(conf)))
                out = runner.run(f"{model} {key}", python, case, [], sys_path,
                                 env_for_attempt=env, target_s=0.1, repeats=1,
                                 timeout=300 if key == "torch-compile" else 240)
                ex = out.get("extra") or {}
                if out["status"] != "ok" or "epoch_s" not in ex:
                    res["skipped"] = out.get("reason") or "no result"
                    res["traceback"] = out.get("traceback", "")
                    continue
                res["runs"].append(out)
    return results


def analyse(rows: dict) -> None:
    for res in rows.values():
        runs = [r["extra"] for r in res["runs"]]
        if not runs:
            continue
        later = [t for ex in runs for t in ex["epoch_s"][1:]]
        res["stats"] = {
            "epoch_s": H.summarize(later) if later else None,
            "first_epoch_s": [ex["epoch_s"][0] for ex in runs],
            "accuracy": [ex["accuracy"] for ex in runs],
            "final_loss": [ex["final_loss"] for ex in runs],
            "peak_rss_mb": [ex["peak_rss_mb"] for ex in runs],
            "first_losses": runs[0].get("first_losses", []),
            "loads": [r.get("foreign_load") for r in res["runs"]]}
        sims = [t for ex in runs for t in ex.get("sim_epoch_s", [])[1:]]
        if sims:
            res["stats"]["sim_epoch_s"] = H.summarize(sims)


def epoch_median(rows, key):
    st = rows.get(key, {}).get("stats") or {}
    return st["epoch_s"][0] if st.get("epoch_s") else None


def _med(values, fmt="{:.3g}"):
    return fmt.format(statistics.median(values)) if values else "-"


def report(model: str, rows: dict, args, info: dict) -> None:
    headers = ["row", "epoch ms med (min\u2013max)", "1st epoch s", "test acc", "loss",
               "RSS MB", "\u00d7MS G", "\u00d7MS PyN", "sim. ms/epoch*"]
    t_g, t_p = epoch_median(rows, "mindspore-graph"), epoch_median(rows, "mindspore-pynative")
    table, notes = [], []
    for key, res in rows.items():
        st = res.get("stats")
        if not st or not st.get("epoch_s"):
            notes.append(f"{model} {key}: skipped: {res.get('skipped', 'no data')}")
            continue
        t = st["epoch_s"][0]
        mark = " !" if any((x or 0) > LOAD_LIMIT for x in st["loads"]) else ""
        sim = H.fmt_cell(*(1e3 * v for v in st["sim_epoch_s"])) if "sim_epoch_s" in st else "-"
        table.append([res["label"] + mark, H.fmt_cell(*(1e3 * v for v in st["epoch_s"])),
                      _med(st["first_epoch_s"]), _med(st["accuracy"], "{:.1%}"),
                      _med(st["final_loss"], "{:.4f}"), _med(st["peak_rss_mb"], "{:.0f}"),
                      H.fmt_num(H.ratio(t_g, t)), H.fmt_num(H.ratio(t_p, t)), sim])
        if res.get("skipped"):
            notes.append(f"{model} {key}: a later round failed and was dropped: "
                         f"{res['skipped']}")
    H.print_table(headers, table, title=(
        f"{MODELS[model]} on digits ({info['train']} train / {info['test']} test, batch {BATCH}, "
        f"{info['steps_per_epoch']} steps/epoch), Momentum(lr {LR}, {MOMENTUM}), {args.epochs} "
        f"epochs x {args.rounds} round(s); epoch time excludes each process's first epoch (for minispore, until its "
        f"background compiles finished)"))
    for line in notes:
        print(line)
    ref = (rows.get("torch", {}).get("stats") or {}).get("first_losses")
    if ref:
        devs = []
        for key, res in rows.items():
            fl = (res.get("stats") or {}).get("first_losses")
            if fl and key != "torch":
                n = min(len(fl), len(ref))
                devs.append(f"{key} {max(abs(a - b) / abs(b) for a, b in zip(fl[:n], ref)):.1e}")
        print(f"{model}: losses of the first 6 steps vs torch eager (same weights and batches), "
              f"max rel diff: " + ", ".join(devs))


def target_lines(results: dict) -> list[str]:
    lines = []
    for model, rows in results.items():
        for kind, mine, theirs in (("graph", "minispore-graph", "mindspore-graph"),
                                   ("pynative", "minispore-pynative", "mindspore-pynative")):
            r = H.ratio(epoch_median(rows, theirs), epoch_median(rows, mine))
            name = "Graph on CPU" if kind == "graph" else "PyNative"
            lines.append(f"{MODELS[model]}: minispore {name} vs MindSpore {name} per epoch: "
                         f"{H.fmt_num(r)}x (target >= {TARGETS[kind]:g}x): "
                         f"{verdict(r, TARGETS[kind])}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="4 epochs, 1 round (a few minutes)")
    p.add_argument("--json", metavar="PATH", help="also write all results and metadata here")
    p.add_argument("--only", metavar="KEYS", help="comma-separated row keys and/or models "
                   "(mlp, cnn): " + ",".join(ALL_KEYS))
    p.add_argument("--epochs", type=int, help="epochs per process (default 4 quick, 10 full)")
    p.add_argument("--rounds", type=int, help="processes per row, interleaved (default 1 "
                   "quick, 3 full)")
    args = p.parse_args(argv)
    args.epochs = args.epochs or (4 if args.quick else 10)
    args.rounds = args.rounds or (1 if args.quick else 3)
    if args.epochs < 2:
        p.error("--epochs must be >= 2 (the first epoch is reported apart)")
    only = set(args.only.split(",")) if args.only else set()
    unknown = only - set(ALL_KEYS) - set(MODELS)
    if unknown:
        p.error(f"unknown row key or model {sorted(unknown)}")
    keys = [k for k in ALL_KEYS if k in only] or [
        k for k in ALL_KEYS if not (args.quick and k in QUICK_SKIP)]
    models = [m for m in MODELS if m in only] or list(MODELS)
    runner = Runner(args)
    tmp_root = tempfile.mkdtemp(prefix="minispore-digits-bench-")
    try:
        data = os.path.join(tmp_root, "digits.npz")
        info = write_inputs(data, args.epochs)
        results = collect(runner, keys, models, args.epochs, args.rounds, data, tmp_root)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    print()
    for model, rows in results.items():
        analyse(rows)
        report(model, rows, args, info)
        print()
    print("ratios = MindSpore median epoch time / this row's (> 1 = faster); an epoch includes "
          "the numpy -> tensor conversion of each batch.\n* simulated Ascend910B: its device "
          "time per epoch is MODEL time from the simulator's profile, not a hardware "
          "measurement;\n  its epoch columns are the wall time the simulation took")
    if runner.loads:
        print(f"foreign CPU load during runs: median {statistics.median(runner.loads):.0%}, "
              f"max {max(runner.loads):.0%}; {runner.retried} run(s) repeated because of load; "
              f"! = another process used > {LOAD_LIMIT:.0%} of the CPUs during a run of that row")
    lines = target_lines(results)
    print("Targets:")
    for line in lines:
        print("  " + line)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"benchmark": "train_digits", "machine": H.machine_info(),
                       "settings": {"quick": args.quick, "epochs": args.epochs,
                                    "rounds": args.rounds, "batch": BATCH, "lr": LR,
                                    "momentum": MOMENTUM},
                       "data": info, "results": results, "targets": lines}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
