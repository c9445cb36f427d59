"""The workloads of `python -m minispore bench` and how minispore runs each one in each mode.

Workloads (sizes: --quick / full):
- dispatch: `c = a + b` on float32 (8,): the per-op cost of dispatch (one kernel a call);
- dispatch-large: the same on float32 (256, 256): dispatch plus a kernel that does some work;
- dispatch-grad (asked for by name): `c = x + y` on float32 (8,) while autodiff records: one call
            is `ms.grad(f)(a, b)` where f runs a Python loop of GRAD_OPS adds and returns the
            last `c.sum()`, and counts GRAD_OPS steps, so the row is the time per recorded op
            with the grad set-up, the sum and the backward pass spread over the GRAD_OPS ops
            (benchmarks/eager_dispatch.py's `minispore-grad` row); graph modes run
            `ms.jit(ms.grad(f))`, whose compiled graph keeps only the adds the result depends on;
- fused:    `tanh(x*1.5+0.3)*sigmoid(x) - x*x/3` on float32 (2^16,) / (2^20,): eight
            elementwise ops that graph mode fuses into one loop (benchmarks/graph_vs_eager.py's
            chain (a));
- chain-b:  `(x*1.5+0.3)*x - x*x/3` on float32 (2^20,) / (2^22,): six elementwise ops with no
            transcendental, bound by memory bandwidth once fused (graph_vs_eager.py's chain (b));
- matmul:   float32 (128,128) @ (128,128) / (512,512) @ (512,512);
- mlp:      one training step of digits_demo.MLP (Flatten, Dense 64-128, ReLU, Dense 128-10);
- cnn:      one training step of digits_demo.LeNet (the demo's LeNet-style CNN);
  both on digits batches of 32 (8x8 images), softmax cross-entropy, Momentum(0.05, 0.9),
  nn.TrainOneStepCell, as the demo trains them;
- mlp-256 (asked for by name): the same training step of an MLP Flatten, Dense 64-256, ReLU,
            Dense 256-256, ReLU, Dense 256-10 on digits batches of 128
            (graph_vs_eager.py's table 1 model, trained with Momentum as above);
- mlp-1024 (asked for by name): the compute-bound MLP 64-1024-1024-10 (graph_vs_eager.py's
            table 4 model), trained as above at batch 256 / 1024 on seeded random data of the
            digits' shapes (x (B,1,8,8) standard normal, labels uniform in 0..9: digits has too
            few samples for batches of 1024); its rows also report GFLOP/s (mlp_step_flops)
            and their share of the sgemm peak measured in the same run (sgemm_peak_gflops);
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

GRAD_OPS = 64                  # adds recorded per call of dispatch-grad
WORKLOADS = {
    "dispatch": "per-op dispatch: c = a + b, float32 (8,)",
    "dispatch-large": "per-op dispatch: c = a + b, float32 (256, 256)",
    "dispatch-grad": f"per-op dispatch while autodiff records: c = x + y, float32 (8,), a loop "
                     f"of {GRAD_OPS} adds inside grad, time per recorded add",
    "fused": "fused elementwise chain tanh(x*1.5+0.3)*sigmoid(x) - x*x/3, float32",
    "chain-b": "fused elementwise chain (x*1.5+0.3)*x - x*x/3, float32",
    "matmul": "matmul, float32 square matrices",
    "mlp": "MLP 64-128-10 training step, digits batch 32, Momentum",
    "cnn": "LeNet-style CNN training step, digits batch 32, Momentum",
    "mlp-256": "MLP 64-256-256-10 training step, digits batch 128, Momentum",
    "mlp-1024": "compute-bound MLP 64-1024-1024-10 training step, random data, Momentum",
    "lstm": "LSTM 2x256 training step, seq 64, batch 32, Momentum",
    "transformer": "GPT-style transformer training step (2 layers, 4 heads, width 128, "
                   "context 64), batch 32, Momentum",
}
from .data_parallel import DP_WORKLOADS  # noqa: E402

WORKLOADS.update(DP_WORKLOADS)
SEQUENCE = ("lstm", "transformer")
BY_NAME = ("dispatch-grad", "mlp-256", "mlp-1024")      # run only when asked for
DEFAULT_WORKLOADS = tuple(w for w in WORKLOADS
                          if w not in SEQUENCE and w not in DP_WORKLOADS and w not in BY_NAME)
TRAINING = ("mlp", "cnn", "mlp-256", "mlp-1024")
# the MLP workloads' layer widths, input first
MLP_LAYERS = {"mlp": (64, 128, 10), "mlp-256": (64, 256, 256, 10),
              "mlp-1024": (64, 1024, 1024, 10)}
ELEMENTWISE = {"dispatch": "add", "dispatch-large": "add", "fused": "chain", "chain-b": "chain_b",
               "matmul": "matmul"}
# mode -> (context mode, jit_level)
MODES = {"pynative": ("PYNATIVE", "O0"), "graph-O0": ("GRAPH", "O0"), "graph-O1": ("GRAPH", "O1"),
         "graph": ("GRAPH", "O2"), "loop-sink": ("GRAPH", "O2")}
DEFAULT_MODES = ("pynative", "graph", "loop-sink")
BATCH = 32


def sizes(quick: bool) -> dict:
    return {"fused": 2 ** 16 if quick else 2 ** 20, "chain-b": 2 ** 20 if quick else 2 ** 22,
            "matmul": 128 if quick else 512, "batches": 4 if quick else 8,
            "batch": {"mlp": BATCH, "cnn": BATCH, "mlp-256": 128,
                      "mlp-1024": 256 if quick else 1024}}


def describe(workload: str, quick: bool) -> str:
    s = sizes(quick)
    extra = {"fused": f", N = {s['fused']}", "chain-b": f", N = {s['chain-b']}",
             "matmul": f" ({s['matmul']}, {s['matmul']})",
             "mlp-1024": f", batch {s['batch']['mlp-1024']}"
                         + (" (--quick; 1024 without it)" if quick else "")}
    return WORKLOADS[workload] + extra.get(workload, "")


def mlp_step_flops(layers, batch: int) -> int:
    """The FLOPs of one MLP training step's matrix products, 2*m*n*k each: per Dense layer
    (fan_in i, fan_out o) the forward's x @ W (2*batch*i*o), the weight gradient x.T @ dy (the
    same) and the input gradient dy @ W.T (the same again) except for the first layer, whose
    input (the data) needs no gradient: 3 GEMMs per layer, 2 for the first. Bias, ReLU, softmax
    and the update are elementwise and not counted."""
    dense = list(zip(layers[:-1], layers[1:]))
    return sum((2 if k == 0 else 3) * 2 * batch * i * o for k, (i, o) in enumerate(dense))


def flops(workload: str, quick: bool) -> int | None:
    """FLOPs a step of the workloads whose rows report GFLOP/s (else None)."""
    if workload != "mlp-1024":
        return None
    return mlp_step_flops(MLP_LAYERS[workload], sizes(quick)["batch"][workload])


def inputs(workload: str, quick: bool) -> dict:
    """The workload's numpy inputs, shared by the minispore rows and the peers."""
    s = sizes(quick)
    r = np.random.default_rng(0)
    if workload in ("dispatch", "dispatch-grad"):
        return {"a": np.arange(8, dtype=np.float32), "b": np.ones(8, np.float32)}
    if workload == "dispatch-large":
        return {"a": r.standard_normal((256, 256), dtype=np.float32),
                "b": r.standard_normal((256, 256), dtype=np.float32)}
    if workload in ("fused", "chain-b"):
        return {"x": r.uniform(-2, 2, s[workload]).astype(np.float32)}
    if workload == "matmul":
        n = s["matmul"]
        return {"a": r.standard_normal((n, n)).astype(np.float32),
                "b": r.standard_normal((n, n)).astype(np.float32)}
    if workload in SEQUENCE:
        from . import sequence_models
        return {"batches": sequence_models.inputs(workload)}
    batch = s["batch"][workload]
    out = {"batches": random_batches(s["batches"], batch) if workload == "mlp-1024"
           else digits_batches(s["batches"], batch)}
    if workload in MLP_LAYERS:
        out["layers"] = MLP_LAYERS[workload]
    return out


def digits_batches(n: int, batch: int = BATCH) -> list:
    """The first n training batches of the digits data, as (x (batch,1,8,8) float32, y int32);
    fewer when the training split has fewer full batches."""
    from .. import dataset as ds
    it = ds.load_digits("train", shuffle=False).batch(batch, drop_remainder=True) \
        .create_tuple_iterator()
    out = []
    for x, y in it:
        out.append((x.asnumpy(), y.asnumpy()))
        if len(out) == n:
            break
    if not out:
        raise ValueError(f"the digits training split has no full batch of {batch}")
    return out


def random_batches(n: int, batch: int) -> list:
    """n batches of the digits' shapes from a seeded rng: x (batch,1,8,8) float32 standard
    normal, y int32 uniform in 0..9."""
    r = np.random.default_rng(0)
    return [(r.standard_normal((batch, 1, 8, 8), dtype=np.float32),
             r.integers(0, 10, batch).astype(np.int32)) for _ in range(n)]


def supported(workload: str, mode: str) -> tuple[bool, str]:
    if mode == "loop-sink" and workload not in TRAINING:
        return False, (f"loop sink runs training steps over the prepared batches "
                       f"({', '.join(TRAINING)})")
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


def chain_b(x):
    return (x * 1.5 + 0.3) * x - x * x / 3


def matmul(a, b):
    return ops.matmul(a, b)


def recorded_adds(x, y):
    """GRAD_OPS adds, of which the last one's sum is returned (dispatch-grad's f)."""
    for _ in range(GRAD_OPS):
        c = x + y
    return c.sum()


def build(workload: str, mode: str, data: dict) -> Case:
    """The minispore Case of a workload in a mode; the context (device_target, mode,
    jit_level) is already set by the runner."""
    import minispore as ms
    graph = mode != "pynative"
    if workload in ELEMENTWISE:
        fn = globals()[ELEMENTWISE[workload]]
        f = ms.jit(fn) if graph else fn
        args = tuple(ms.Tensor(v) for v in data.values())
        return Case(lambda: f(*args), 1)
    if workload == "dispatch-grad":
        g = ms.jit(ms.grad(recorded_adds)) if graph else ms.grad(recorded_adds)
        a, b = ms.Tensor(data["a"]), ms.Tensor(data["b"])
        return Case(lambda: g(a, b), GRAD_OPS)
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
    """The workload's network in a TrainOneStepCell, seeded: digits_demo's MLP and LeNet, and
    for mlp-256 / mlp-1024 Flatten then Dense layers of MLP_LAYERS with ReLU between them."""
    import minispore as ms
    from .. import nn
    from ..digits_demo import MLP, LeNet
    ms.set_seed(1)
    if workload in ("mlp-256", "mlp-1024"):
        widths = MLP_LAYERS[workload]
        layers = [nn.Flatten()]
        for k, (i, o) in enumerate(zip(widths[:-1], widths[1:])):
            layers += [nn.Dense(i, o)] + ([nn.ReLU()] if k < len(widths) - 2 else [])
        net = nn.SequentialCell(layers)
    else:
        net = LeNet() if workload == "cnn" else MLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    cell = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    cell.set_train()
    return cell
