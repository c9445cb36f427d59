"""The workloads of `python -m minispore bench` and how minispore runs each one in each mode.

Workloads (sizes: --quick / full):
- dispatch: `c = a + b` on float32 (8,): the per-op cost of dispatch (one kernel a call);
- fused:    `tanh(x*1.5+0.3)*sigmoid(x) - x*x/3` on float32 (2^16,) / (2^20,): eight
            elementwise ops that graph mode fuses into one loop (benchmarks/graph_vs_eager.py's
            chain (a));
- matmul:   float32 (128,128) @ (128,128) / (512,512) @ (512,512);
- mlp:      one training step of digits_demo.MLP (Flatten, Dense 64-128, ReLU, Dense 128-10);
- cnn:      one training step of digits_demo.LeNet (the demo's LeNet-style CNN);
  both on digits batches of 32 (8x8 images), softmax cross-entropy, Momentum(0.05, 0.9),
  nn.TrainOneStepCell, as the demo trains them;
- lstm, transformer (asked for by name, not in the default set): the training steps of
  sequence_models.py, a 2-layer LSTM (hidden 256, seq 64) and a small GPT-style transformer
  (2 layers, 4 heads, width 128, context 64), batch 32;
- dp-mlp, dp-cnn (asked for by name): mlp and cnn trained data-parallel on 1..N simulated
  Ascend devices, by real MPI ranks and beyond by the model (data_parallel.py).

Modes: pynative; graph-O0, graph-O1 (kernel by kernel), graph (jit_level O2: the CPU runs one
numba function, the simulated Ascend sinks the task list); loop-sink (O2 and `ms.data_sink`
over the prepared batches: training workloads only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import ops

WORKLOADS = {
    "dispatch": "per-op dispatch: c = a + b, float32 (8,)",
    "fused": "fused elementwise chain tanh(x*1.5+0.3)*sigmoid(x) - x*x/3, float32",
    "matmul": "matmul, float32 square matrices",
    "mlp": "MLP 64-128-10 training step, digits batch 32, Momentum",
    "cnn": "LeNet-style CNN training step, digits batch 32, Momentum",
    "lstm": "LSTM 2x256 training step, seq 64, batch 32, Momentum",
    "transformer": "GPT-style transformer training step (2 layers, 4 heads, width 128, "
                   "context 64), batch 32, Momentum",
}
from .data_parallel import DP_WORKLOADS  # noqa: E402

WORKLOADS.update(DP_WORKLOADS)
SEQUENCE = ("lstm", "transformer")
DEFAULT_WORKLOADS = tuple(w for w in WORKLOADS if w not in SEQUENCE and w not in DP_WORKLOADS)
TRAINING = ("mlp", "cnn")
# mode -> (context mode, jit_level)
MODES = {"pynative": ("PYNATIVE", "O0"), "graph-O0": ("GRAPH", "O0"), "graph-O1": ("GRAPH", "O1"),
         "graph": ("GRAPH", "O2"), "loop-sink": ("GRAPH", "O2")}
DEFAULT_MODES = ("pynative", "graph", "loop-sink")
BATCH = 32


def sizes(quick: bool) -> dict:
    return {"fused": 2 ** 16 if quick else 2 ** 20, "matmul": 128 if quick else 512,
            "batches": 4 if quick else 8}


def describe(workload: str, quick: bool) -> str:
    s = sizes(quick)
    extra = {"fused": f", N = {s['fused']}", "matmul": f" ({s['matmul']}, {s['matmul']})"}
    return WORKLOADS[workload] + extra.get(workload, "")


def inputs(workload: str, quick: bool) -> dict:
    """The workload's numpy inputs, shared by the minispore rows and the peers."""
    s = sizes(quick)
    r = np.random.default_rng(0)
    if workload == "dispatch":
        return {"a": np.arange(8, dtype=np.float32), "b": np.ones(8, np.float32)}
    if workload == "fused":
        return {"x": r.uniform(-2, 2, s["fused"]).astype(np.float32)}
    if workload == "matmul":
        n = s["matmul"]
        return {"a": r.standard_normal((n, n)).astype(np.float32),
                "b": r.standard_normal((n, n)).astype(np.float32)}
    if workload in SEQUENCE:
        from . import sequence_models
        return {"batches": sequence_models.inputs(workload)}
    return {"batches": digits_batches(s["batches"])}


def digits_batches(n: int) -> list:
    """The first n training batches of the digits data, as (x (32,1,8,8) float32, y int32)."""
    from .. import dataset as ds
    it = ds.load_digits("train", shuffle=False).batch(BATCH, drop_remainder=True) \
        .create_tuple_iterator()
    out = []
    for x, y in it:
        out.append((x.asnumpy(), y.asnumpy()))
        if len(out) == n:
            break
    return out


def supported(workload: str, mode: str) -> tuple[bool, str]:
    if mode == "loop-sink" and workload not in TRAINING:
        return False, "loop sink runs training steps over a digits dataset (mlp, cnn)"
    return True, ""


@dataclass
class Case:
    call: Callable[[], Any]      # one call: `steps` steps; returns a tensor to synchronise on
    steps: int


# functions compiled in graph mode (module level: the parser reads their source)
def add(a, b):
    return a + b


def chain(x):
    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3


def matmul(a, b):
    return ops.matmul(a, b)


def build(workload: str, mode: str, data: dict) -> Case:
    """The minispore Case of a workload in a mode; the context (device_target, mode,
    jit_level) is already set by the runner."""
    import minispore as ms
    graph = mode != "pynative"
    if workload in ("dispatch", "fused", "matmul"):
        fn = {"dispatch": add, "fused": chain, "matmul": matmul}[workload]
        f = ms.jit(fn) if graph else fn
        args = tuple(ms.Tensor(v) for v in data.values())
        return Case(lambda: f(*args), 1)
    if workload in SEQUENCE:
        from . import sequence_models
        cell = sequence_models.build(workload)
    else:
        cell = train_cell(workload)
    if mode == "loop-sink":
        batches = data["batches"]
        sink = ms.data_sink(cell, batches, sink_size=len(batches))
        return Case(sink, len(batches))
    tensors = [(ms.Tensor(x), ms.Tensor(y)) for x, y in data["batches"]]
    state = {"i": 0}

    def step():
        i = state["i"]
        state["i"] = (i + 1) % len(tensors)
        return cell(*tensors[i])
    return Case(step, 1)


def train_cell(workload: str):
    """digits_demo's network in a TrainOneStepCell, seeded."""
    import minispore as ms
    from .. import nn
    from ..digits_demo import MLP, LeNet
    ms.set_seed(1)
    net = LeNet() if workload == "cnn" else MLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    cell = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    cell.set_train()
    return cell
