"""The simulated Ascend in PyNative, Graph (KBK and sink) and loop sink.

    python benchmarks/ascend_sim.py [--quick] [--json PATH]

For each workload (the MLP training step of graph_vs_eager.py, a larger MLP step, and a small
CNN-shaped step) and each execution mode it reports, per training step: SIMULATED device time
(model time from the profile, not a measurement), device busy share, tasks (kernel launches),
TransData kernels, peak device memory, and the WALL time the simulation itself took. Then the
simulation's own overhead: wall time per eager op on "Ascend" against the CPU backend (target:
at most 2x). Everything runs in this process: there is no peer for a simulated device.

Loop sink runs all the measured steps (10; 2 for the large MLP in --quick) in one data_sink call.
The CNN-shaped step writes its convolution with elementwise and matmul ops, not conv2d: a 3x3
convolution as in-graph im2col (nine strided slices, a concat, a matmul), ReLU, 2x2 max
pooling by reshape + max, and a dense softmax head, on 8x8 single-channel images.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _harness as H  # noqa: E402
import minispore as ms  # noqa: E402
from minispore import nn, ops  # noqa: E402
from minispore.backends import ascend_sim  # noqa: E402

LR = 0.01


def MLP(sizes, seed=0):
    """Dense layers with ReLU between them, seeded weights (the bias starts at zero)."""
    rng = np.random.default_rng(seed)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = (rng.standard_normal((b, a)) / np.sqrt(a)).astype(np.float32)   # (out, in)
        layers.append(nn.Dense(a, b, weight_init=ms.Tensor(w), bias_init="zeros"))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.SequentialCell(layers)


class CNN(nn.Cell):
    """conv3x3 (im2col in the graph) -> ReLU -> maxpool 2x2 -> dense, on (B, 8, 8) images."""

    def __init__(self, channels=16, classes=10, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.k = ms.Parameter(ms.Tensor((rng.standard_normal((9, channels)) / 3.0)
                                        .astype(np.float32)), name="conv_k")
        self.kb = ms.Parameter(ms.Tensor(np.zeros(channels, np.float32)), name="conv_b")
        self.w = ms.Parameter(ms.Tensor((rng.standard_normal((9 * channels, classes)) /
                                         np.sqrt(9 * channels)).astype(np.float32)), name="fc_w")
        self.b = ms.Parameter(ms.Tensor(np.zeros(classes, np.float32)), name="fc_b")
        self.c = channels

    def construct(self, x):
        b = x.shape[0]
        cols = []
        for i in range(3):
            for j in range(3):
                cols.append(ops.reshape(x[:, i:i + 6, j:j + 6], (b, 36, 1)))
        patches = ops.reshape(ops.concat(cols, 2), (b * 36, 9))
        h = ops.relu(ops.matmul(patches, self.k) + self.kb)            # (b*36, c)
        h = ops.reshape(h, (b, 3, 2, 3, 2, self.c))
        h = h.max(4).max(2)                                            # 2x2 max pool
        return ops.matmul(ops.reshape(h, (b, 9 * self.c)), self.w) + self.b


class Loss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x, y):
        logp = ops.log_softmax(self.net(x), -1)
        return -(logp * y).sum() / x.shape[0]


def _data(x_shape, classes, n, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = rng.standard_normal(x_shape).astype(np.float32)
        y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, x_shape[0])]
        out.append((x, y))
    return out


WORKLOADS = {
    "mlp": ("MLP 64-256-256-10, batch 128 (graph_vs_eager.py's step)",
            lambda: MLP((64, 256, 256, 10)), (128, 64), 10),
    "mlp-large": ("MLP 512-2048-2048-10, batch 512", lambda: MLP((512, 2048, 2048, 10)),
                  (512, 512), 10),
    "cnn": ("CNN-shaped: conv3x3 16 (im2col) + pool + dense, batch 64 on 8x8",
            lambda: CNN(), (64, 8, 8), 10),
}
MODES = ("pynative", "graph-O0", "graph-O2", "loop-sink")


def run_mode(workload: str, mode: str, steps: int) -> dict:
    _, make, x_shape, classes = WORKLOADS[workload]
    gc.collect()                  # the previous row's tensors must not count in this row's peak
    ms.set_context(device_target="Ascend",
                   mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE,
                   jit_level="O0" if mode == "graph-O0" else "O2")
    dev = ascend_sim.device()
    loss_net = Loss(make())
    step = nn.TrainOneStepCell(loss_net, nn.SGD(loss_net.trainable_params(), LR))
    data = _data(x_shape, classes, steps)
    if mode == "loop-sink":                             # sink_size = all the steps
        sink = ms.data_sink(step, data, sink_size=steps)

        def run():
            return sink()
    else:
        def run():
            out = None
            for x, y in data:
                out = step(ms.Tensor(x), ms.Tensor(y))
            return out
    t0 = time.perf_counter()
    float(run().asnumpy())                               # compile + warm-up (not reported)
    compile_s = time.perf_counter() - t0
    dev.synchronize()
    dev.reset_counters()
    dev.pool.reset_peak()
    sim0, w0 = dev.now(), time.perf_counter()
    loss = float(run().asnumpy())
    wall = (time.perf_counter() - w0) / steps
    sim = (dev.now() - sim0) / steps
    return {"workload": workload, "mode": mode, "sim_us_per_step": sim * 1e6,
            "device_busy": dev.busy / (sim * steps), "tasks_per_step": dev.tasks / steps,
            "transdata_per_step": dev.counts["transdata"] / steps,
            "peak_mib": dev.pool.peak / 2**20, "wall_ms_per_step": wall * 1e3,
            "warmup_s": compile_s, "loss": loss}


def overhead(quick: bool) -> list[dict]:
    """Wall time per eager `a + b` on the CPU backend and on the simulated Ascend."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    rows = []
    for shape in ((8,), (256, 256)):
        res = {}
        for target in ("CPU", "Ascend"):
            ms.set_context(device_target=target)
            a = ms.Tensor(np.ones(shape, np.float32))
            b = a + a                                        # both on the device from here

            def loop(n, a=a, b=b):
                for _ in range(n):
                    c = a + b
                c.asnumpy()
            m = H.measure(loop, repeats=3 if quick else 5)
            res[target] = H.summarize(m["samples"])
        rows.append({"shape": shape, "cpu_us": res["CPU"][0] * 1e6,
                     "ascend_us": res["Ascend"][0] * 1e6,
                     "ratio": res["Ascend"][0] / res["CPU"][0],
                     "cpu": res["CPU"], "ascend": res["Ascend"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer workloads and repeats")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--only", help="workloads (comma-separated): " + ", ".join(WORKLOADS))
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(WORKLOADS)
    results = []
    for w in names:
        # the large step computes ~30 GFLOP of real numbers on the CPU: fewer steps in --quick
        steps = 2 if (args.quick and w == "mlp-large") else 10
        for m in MODES:
            results.append(run_mode(w, m, steps))
    prof = ascend_sim.device().profile.name
    print(f"Simulated {prof} (model time from minispore/backends/ascend_sim/profile.py; NOT "
          f"hardware measurements). Wall = what the simulation cost on this machine.")
    for w in names:
        rows = []
        base = next(r for r in results if r["workload"] == w and r["mode"] == "pynative")
        for r in (r for r in results if r["workload"] == w):
            rows.append([r["mode"], H.fmt_num(r["sim_us_per_step"]),
                         H.fmt_num(base["sim_us_per_step"] / r["sim_us_per_step"]) + "x",
                         f"{100 * r['device_busy']:.0f}%", H.fmt_num(r["tasks_per_step"]),
                         H.fmt_num(r["transdata_per_step"]), H.fmt_num(r["peak_mib"]),
                         H.fmt_num(r["wall_ms_per_step"]), f"{r['loss']:.4f}"])
        H.print_table(["mode", "sim µs/step", "vs PyNative", "device busy", "tasks/step",
                       "TransData/step", "peak MiB", "wall ms/step", "loss"], rows,
                      title=WORKLOADS[w][0] + " — simulated device time per training step")
    ov = overhead(args.quick)
    H.print_table(["a + b float32", "CPU eager µs/op", "Ascend (sim) eager µs/op", "ratio"],
                  [[str(r["shape"]), H.fmt_cell(*(x * 1e6 for x in r["cpu"])),
                    H.fmt_cell(*(x * 1e6 for x in r["ascend"])), H.fmt_num(r["ratio"]) + "x"]
                   for r in ov], title="Simulation overhead: wall time per eager op")
    worst = max(r["ratio"] for r in ov)
    print(f"simulation overhead per eager op / CPU backend eager op = {worst:.2f} "
          f"(target <= 2.0)")
    for w in names:
        by = {r["mode"]: r for r in results if r["workload"] == w}
        print(f"{w}: graph sink (O2) simulated step {by['graph-O2']['sim_us_per_step']:.0f} us "
              f"= {by['pynative']['sim_us_per_step'] / by['graph-O2']['sim_us_per_step']:.2f}x "
              f"faster than PyNative; loop sink "
              f"{by['pynative']['sim_us_per_step'] / by['loop-sink']['sim_us_per_step']:.2f}x")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"profile": prof, "steps": results, "overhead": ov}, f, indent=1,
                      default=str)


if __name__ == "__main__":
    main()
