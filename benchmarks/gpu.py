"""The GPU backend (CuPy) against CuPy written by hand and PyTorch on the GPU.

    python benchmarks/gpu.py [--quick] [--json PATH]

Reports, on the first CUDA device:
1. per-op eager latency (PyNative; host launch cost included, synchronised once per batch of
   calls) for a set of small ops, beside the same op as a plain CuPy call and as a torch call;
2. the fused elementwise chain (GRAPH_MODE O1: one generated kernel) in GB/s (bytes read +
   written, timed with CUDA events) against the device's measured copy bandwidth (a D2D copy of
   the same size): target >= 80%;
3. an MLP training step (Dense 64-256-256-10, batch 128, SGD) in steps/s: PyNative, Graph O1
   (kernel by kernel, fused), Graph O2 (the step captured once as a CUDA graph, replayed), beside
   a hand-written CuPy step and a PyTorch step (eager, and CUDA-graph replay when available):
   target O2 >= 3x PyNative.
Without a usable GPU it prints why it skipped and exits 0. The README records its runs on an
H200.
"""
from __future__ import annotations

import argparse
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
from minispore.backends import gpu  # noqa: E402
from minispore.core.graph import compile as gc  # noqa: E402

LR = 0.01


def _torch():
    try:
        import torch
        return torch if torch.cuda.is_available() else None
    except Exception:                 # noqa: BLE001  (an optional peer)
        return None


def per_call_us(fn, sync, n: int) -> float:
    fn()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


# ------------------------------------------------------------------------- 1. per-op latency
def op_latency(quick: bool) -> list:
    import cupy as cp
    torch = _torch()
    n = 200 if quick else 2000
    r = np.random.default_rng(0)
    a32 = r.standard_normal((1024,)).astype(np.float32)
    m64 = r.standard_normal((64, 64)).astype(np.float32)
    ms.set_context(device_target="GPU", mode=ms.PYNATIVE_MODE)
    x, y, m = ms.Tensor(a32), ms.Tensor(a32[::-1].copy()), ms.Tensor(m64)
    cx, cy, cm = cp.asarray(a32), cp.asarray(a32[::-1].copy()), cp.asarray(m64)
    tx = torch.as_tensor(a32, device="cuda") if torch else None
    ty = torch.as_tensor(a32[::-1].copy(), device="cuda") if torch else None
    tm = torch.as_tensor(m64, device="cuda") if torch else None
    cases = [
        ("add (1024,)", lambda: x + y, lambda: cx + cy, lambda: tx + ty),
        ("exp (1024,)", lambda: ops.exp(x), lambda: cp.exp(cx), lambda: torch.exp(tx)),
        ("relu (1024,)", lambda: ops.relu(x), lambda: cp.maximum(cx, 0),
         lambda: torch.relu(tx)),
        ("sum (1024,)", lambda: x.sum(), lambda: cx.sum(), lambda: tx.sum()),
        ("matmul 64x64", lambda: ops.matmul(m, m), lambda: cm @ cm, lambda: tm @ tm),
        ("softmax 64x64", lambda: ops.softmax(m, -1),
         lambda: (lambda e: e / e.sum(-1, keepdims=True))(cp.exp(cm - cm.max(-1, keepdims=True))),
         lambda: torch.softmax(tm, -1)),
        ("transpose 64x64", lambda: ops.transpose(m, (1, 0)),
         lambda: cp.ascontiguousarray(cm.T), lambda: tm.t().contiguous()),
    ]
    csync = cp.cuda.get_current_stream().synchronize
    tsync = torch.cuda.synchronize if torch else None
    rows = []
    for name, f_ms, f_cp, f_t in cases:
        rows.append({"op": name, "minispore_us": per_call_us(f_ms, csync, n),
                     "cupy_us": per_call_us(f_cp, csync, n),
                     "torch_us": per_call_us(f_t, tsync, n) if torch else None})
    return rows


# ------------------------------------------------------------------------- 2. fused chain GB/s
def chain(x):
    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3


def event_seconds(fn, reps: int) -> float:
    import cupy as cp
    fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) / 1e3 / reps


def fused_chain(quick: bool) -> dict:
    import cupy as cp
    n = (1 << 26) if quick else (1 << 28)      # large enough that the kernel outlasts the host
    reps = 10 if quick else 30
    host = np.linspace(-4, 4, n, dtype=np.float32)
    gc.clear_cache()
    ms.set_context(device_target="GPU", mode=ms.GRAPH_MODE, jit_level="O1")
    x = ms.Tensor(host)
    f = ms.jit(chain)
    out = f(x)                                              # compile + upload
    t_chain = event_seconds(lambda: f(x), reps)
    a = cp.asarray(host)
    b = cp.empty_like(a)
    t_copy = event_seconds(lambda: b.data.copy_from_device_async(a.data, a.nbytes), reps)
    chain_gbs, copy_gbs = 2 * a.nbytes / t_chain / 1e9, 2 * a.nbytes / t_copy / 1e9
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ref = chain(ms.Tensor(host[:4096])).asnumpy()
    err = float(np.abs(out.asnumpy()[:4096] - ref).max())
    return {"elements": n, "chain_s": t_chain, "chain_GBps": chain_gbs, "copy_GBps": copy_gbs,
            "fraction_of_copy": chain_gbs / copy_gbs, "max_abs_err_vs_cpu": err}


# ------------------------------------------------------------------------- 3. MLP step
SIZES, BATCH = (64, 256, 256, 10), 128


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((b, a)) / np.sqrt(a)).astype(np.float32),
             np.zeros(b, np.float32)) for a, b in zip(SIZES[:-1], SIZES[1:])]


def _batches(n, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32),
             np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)])
            for _ in range(n)]


class Loss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x, y):
        return -(ops.log_softmax(self.net(x), -1) * y).sum() / x.shape[0]


def minispore_step(mode: str, steps: int) -> dict:
    import cupy as cp
    gc.clear_cache()
    ms.set_context(device_target="GPU",
                   mode=ms.PYNATIVE_MODE if mode == "PyNative" else ms.GRAPH_MODE,
                   jit_level={"PyNative": "O0", "Graph O1": "O1", "Graph O2 (CUDA graph)": "O2"}
                   [mode])
    layers = []
    for i, (w, b) in enumerate(_weights()):
        layers.append(nn.Dense(w.shape[1], w.shape[0], weight_init=ms.Tensor(w),
                               bias_init="zeros"))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    net = Loss(nn.SequentialCell(layers))
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), LR))
    data = [(ms.Tensor(x), ms.Tensor(y)) for x, y in _batches(steps)]
    t0 = time.perf_counter()
    first = float(step(*data[0]).asnumpy())
    warm = time.perf_counter() - t0
    step(*data[1])
    cp.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    for x, y in data:
        loss = step(x, y)
    last = float(loss.asnumpy())
    dt = (time.perf_counter() - t0) / steps
    return {"impl": f"minispore {mode}", "steps_per_s": 1 / dt, "ms_per_step": dt * 1e3,
            "first_call_s": warm, "loss_first": first, "loss_last": last}


def cupy_step(steps: int) -> dict:
    import cupy as cp
    ws = [(cp.asarray(w), cp.asarray(b)) for w, b in _weights()]
    data = [(cp.asarray(x), cp.asarray(y)) for x, y in _batches(steps)]

    def step(x, y):
        hs, h = [x], x
        for i, (w, b) in enumerate(ws):
            h = h @ w.T + b
            if i < len(ws) - 1:
                h = cp.maximum(h, 0)
            hs.append(h)
        m = h.max(-1, keepdims=True)
        lse = cp.log(cp.exp(h - m).sum(-1, keepdims=True)) + m
        loss = -((h - lse) * y).sum() / x.shape[0]
        g = (cp.exp(h - lse) - y) / x.shape[0]
        for i in reversed(range(len(ws))):
            w, b = ws[i]
            gw, gb = g.T @ hs[i], g.sum(0)
            if i:
                g = (g @ w) * (hs[i] > 0)
            ws[i] = (w - LR * gw, b - LR * gb)
        return loss
    step(*data[0])
    cp.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    for x, y in data:
        loss = step(x, y)
    float(loss)
    dt = (time.perf_counter() - t0) / steps
    return {"impl": "CuPy by hand", "steps_per_s": 1 / dt, "ms_per_step": dt * 1e3}


def torch_steps(steps: int) -> list:
    torch = _torch()
    if torch is None:
        return [{"impl": "PyTorch", "skipped": "torch with CUDA is not importable"}]
    torch.backends.cuda.matmul.allow_tf32 = False
    layers = []
    for i, (w, b) in enumerate(_weights()):
        lin = torch.nn.Linear(w.shape[1], w.shape[0]).cuda()
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(w))
            lin.bias.copy_(torch.as_tensor(b))
        layers.append(lin)
        if i < len(SIZES) - 2:
            layers.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    data = [(torch.as_tensor(x, device="cuda"), torch.as_tensor(y, device="cuda"))
            for x, y in _batches(steps)]

    def step_body(x, y):
        loss = -(torch.log_softmax(net(x), -1) * y).sum() / x.shape[0]
        loss.backward()
        opt.step()
        return loss

    def step(x, y):
        opt.zero_grad(set_to_none=False)
        return step_body(x, y)
    out = []
    step(*data[0])
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for x, y in data:
        loss = step(x, y)
    float(loss)
    dt = (time.perf_counter() - t0) / steps
    out.append({"impl": "PyTorch eager", "steps_per_s": 1 / dt, "ms_per_step": dt * 1e3})
    del loss                                   # its autograd graph holds the grads' streams
    try:                                       # the whole step as a CUDA graph (static inputs),
        sx, sy = data[0][0].clone(), data[0][1].clone()     # as torch's docs capture one:
        s = torch.cuda.Stream()                # warm-up on a side stream, grads set to None so
        s.wait_stream(torch.cuda.current_stream())   # the captured backward allocates them in
        with torch.cuda.stream(s):                   # the graph's pool, no zero_grad inside
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                step_body(sx, sy)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            sloss = step_body(sx, sy)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for x, y in data:
            sx.copy_(x)
            sy.copy_(y)
            g.replay()
        float(sloss)
        dt = (time.perf_counter() - t0) / steps
        out.append({"impl": "PyTorch CUDA graph", "steps_per_s": 1 / dt, "ms_per_step": dt * 1e3})
    except Exception as e:                     # noqa: BLE001
        out.append({"impl": "PyTorch CUDA graph",
                    "skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    ap.add_argument("--json", help="write the raw results here")
    args = ap.parse_args()
    ok, why = gpu.available()
    if not ok:
        print(f"GPU benchmark skipped: {why}")
        return 0
    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"device: {name}, {props['totalGlobalMem'] / 2**30:.0f} GiB; CuPy {cp.__version__}, "
          f"CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")
    res: dict = {"device": name, "cupy": cp.__version__}
    res["ops"] = op_latency(args.quick)
    H.print_table(["op", "minispore µs", "CuPy µs", "torch µs"],
                  [[r["op"], H.fmt_num(r["minispore_us"]), H.fmt_num(r["cupy_us"]),
                    H.fmt_num(r["torch_us"])] for r in res["ops"]],
                  title="Eager latency per op (host launch included)")
    c = res["chain"] = fused_chain(args.quick)
    print(f"fused chain, {c['elements']} float32: {c['chain_GBps']:.0f} GB/s = "
          f"{100 * c['fraction_of_copy']:.0f}% of the measured D2D copy {c['copy_GBps']:.0f} GB/s"
          f" (target >= 80%); max |err| vs CPU {c['max_abs_err_vs_cpu']:.2g}")
    steps = 50 if args.quick else 300
    rows = [minispore_step(m, steps) for m in ("PyNative", "Graph O1", "Graph O2 (CUDA graph)")]
    rows += [cupy_step(steps)] + torch_steps(steps)
    res["mlp"] = rows
    H.print_table(["implementation", "steps/s", "ms/step", "first call s"],
                  [[r["impl"], H.fmt_num(r.get("steps_per_s")), H.fmt_num(r.get("ms_per_step")),
                    H.fmt_num(r.get("first_call_s"))] if "skipped" not in r else
                   [r["impl"], "skipped: " + r["skipped"], "", ""] for r in rows],
                  title=f"MLP {'-'.join(map(str, SIZES))} batch {BATCH} training step")
    pyn, o2 = rows[0]["steps_per_s"], rows[2]["steps_per_s"]
    print(f"Graph O2 (CUDA graph replay) = {o2 / pyn:.2f}x PyNative (target >= 3x)")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
