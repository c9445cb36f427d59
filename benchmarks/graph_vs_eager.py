"""Graph mode against eager execution: an MLP training step, fused elementwise chains, compile time.

Usage (from the repository root)::

    python benchmarks/graph_vs_eager.py [--quick] [--json PATH] [--only KEY,KEY]

This file owns the graph-vs-eager benchmark; timing, peer discovery,
subprocesses and table printing are in ``_harness.py``.  Every row runs in a fresh process.
``--only`` takes row keys (``mlp-numpy``, ``fused-jax``, ``compile-minispore``,
``compute-minispore-O2``, ...) and/or whole tables (``mlp``, ``fused``, ``compile``, ``compute``).
Four tables:

1. **MLP training step** (64-256-256-10, ReLU, softmax cross-entropy, batch 128, SGD lr 0.1,
   float32; 8 input batches used in turn).  Every implementation starts from the same weights
   (``numpy.random.default_rng(0)``, He-normal weights, small biases, drawn in float64 and cast).
   ``run(n)`` is a Python loop of n steps, synchronised once at the end (``asnumpy`` / ``item`` /
   ``block_until_ready``).  Reported: steps/s and ms/step, median (min–max over every repeat of
   every round), ratios of medians to the handwritten numpy step and to ``jax.jit``, and the
   first call (the very first step of the process, synchronised: parse/trace + compile + 1 step;
   minispore rows start with an empty kernel cache, ``MINISPORE_CACHE_DIR`` = a fresh directory).
   Correctness: the losses of the first 6 steps of every row are compared with the handwritten
   numpy step computed in this process; "loss after 5 steps" is the loss the 6th call returns
   (evaluated at the weights after 5 updates).  A minispore row whose loss after 5 steps is off by
   more than 1e-4 relative is shown as skipped (its timings stay in the JSON).
2. **Fused elementwise chains** on N = 4194304 float32: (a) ``tanh(x*1.5+0.3)*sigmoid(x) - x*x/3``
   and (b) ``(x*1.5+0.3)*x - x*x/3``, as effective GB/s counting 8 bytes per element (read x,
   write y once), beside the copy bandwidth measured in the same run (``np.copyto(dst, src)``, same
   N, 8 bytes per element).  Each call allocates its output, except numpy-with-``out=`` and the
   copy.  First call (compile for the jit paths) and the max abs error against a float64 numpy
   reference are reported per row; a minispore result off by more than 1e-4 is shown as skipped.
3. **Compile time** of the minispore MLP step at ``jit_level="O1"`` and ``"O2"``: the first call
   in a fresh process with an empty ``MINISPORE_CACHE_DIR`` (cold), then the first call in another fresh
   process with the same directory (warm disk cache), beside ``jax.jit``'s first call (from
   table 1).  Imports are outside the timed first call.
4. **Compute-bound MLP step**: table 1's model source, step and machinery at MLP 64-1024-1024-10,
   batch 1024 (SGD lr 0.1, float32), where the GEMMs dominate.  Reported per row: ms/step,
   achieved GFLOP/s = the step's GEMM FLOPs (``mlp_step_flops``: 2*m*n*k for each of the 3
   forward and 5 backward matrix products; bias, ReLU, softmax and the update are not counted) /
   time, and its share of this machine's sgemm peak, measured in the same run as the better
   median of numpy ``matmul(a, b, out=c)`` on float32 1024x1024 and 2048x2048 squares
   (2*n^3 FLOPs).  Rows: the handwritten numpy step, minispore GRAPH O2 (the default level, the
   native sink) and PyNative, torch eager, ``jax.jit``; losses are checked as in table 1.

The last lines state the targets: Graph (best jit_level) >= jax.jit and > numpy step;
(a) minispore >= jax.jit in GB/s; (b) minispore >= 0.8 x copy bandwidth (both at O1 and at O2,
the default level); compile cold
<= 2 s and warm <= 0.2 s; the compute-bound step at GRAPH O2 >= 85% of the sgemm peak and
>= jax.jit.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402
from _harness import (LOAD_LIMIT, Runner, fresh_cache_dir,  # noqa: E402
                      locate, resolve)

MLP_SHAPES = [(128, 256)]                 # (batch, hidden); layers 64-H-H-10
COMPUTE_SHAPES = [(1024, 1024)]           # table 4: the same step, GEMM-bound
MLP_IN, MLP_CLASSES = 64, 10              # D and C of the case code below
SGEMM_SHAPES = [("sgemm", 1024), ("sgemm", 2048)]
N = 4194304
FUSED_SHAPES = [("a", N), ("b", N)]
COPY_SHAPES = [("copy", N)]
LOSS_RTOL = 1e-4
FUSED_ATOL = 1e-4
EXPR = {"a": "tanh(x*1.5+0.3)*sigmoid(x) - x*x/3", "b": "(x*1.5+0.3)*x - x*x/3"}
TARGETS = {"graph_vs_jax": 1.0, "graph_vs_numpy": 1.0, "a_vs_jax": 1.0, "b_vs_copy": 0.8,
           "cold_s": 2.0, "warm_s": 0.2, "compute_of_peak": 0.85, "compute_vs_jax": 1.0}

# --------------------------------------------------------------------------- case code (child)

_LOADER = H.SOURCE_LOADER

# make(shape) calls build(B, H) -> (step(i) -> loss, unsynchronised; sync(loss) -> float),
# times the first step, records the first 6 losses, and returns run(n) = n more steps + 1 sync.
_MLP_COMMON = _LOADER + """
import time
import numpy as np
D, C, LR, NB = 64, 10, 0.1, 8
EXTRA = {}
SETTLE = lambda: None    # minispore: wait for the background O2 builds (the steady state is timed)
def mlp_init(B, H):
    rng = np.random.default_rng(0)
    ws = []
    for i, o in ((D, H), (H, H), (H, C)):
        ws.append((rng.standard_normal((i, o)) * np.sqrt(2.0 / i)).astype(np.float32))
        ws.append((rng.standard_normal(o) * 0.01).astype(np.float32))
    xs = rng.standard_normal((NB, B, D)).astype(np.float32)
    labels = rng.integers(0, C, (NB, B))
    ys = np.eye(C, dtype=np.float32)[labels]
    return ws, xs, ys, labels
def make(shape):
    step, sync = build(*shape)
    t0 = time.perf_counter()
    losses = [sync(step(0))]
    t1 = time.perf_counter()
    losses.append(sync(step(1)))
    t2 = time.perf_counter()
    losses += [sync(step(i)) for i in range(2, 6)]
    t3 = time.perf_counter()
    SETTLE()
    EXTRA[str(tuple(shape))] = {"first_call_s": t1 - t0, "second_call_s": t2 - t1,
                                "losses": [float(l) for l in losses],
                                "settle_s": time.perf_counter() - t3}
    count = [6]
    def run(n):
        i = count[0]
        for j in range(i, i + n):
            loss = step(j)
        count[0] = i + n
        sync(loss)
    return run
"""

_MLP_NUMPY = _MLP_COMMON + """
VERSIONS = {"numpy": np.__version__}
def build(B, H):
    ws, xs, ys, _ = mlp_init(B, H)
    W1, b1, W2, b2, W3, b3 = [w.copy() for w in ws]
    def step(i):
        x, y = xs[i % NB], ys[i % NB]
        h1 = x @ W1; h1 += b1; np.maximum(h1, 0, out=h1)
        h2 = h1 @ W2; h2 += b2; np.maximum(h2, 0, out=h2)
        z = h2 @ W3; z += b3
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = -((z - np.log(s)) * y).sum() / B          # softmax cross-entropy, mean
        dz = e / s; dz -= y; dz /= B
        dW3 = h2.T @ dz; db3 = dz.sum(axis=0)
        dh2 = dz @ W3.T; dh2 *= h2 > 0
        dW2 = h1.T @ dh2; db2 = dh2.sum(axis=0)
        dh1 = dh2 @ W2.T; dh1 *= h1 > 0
        dW1 = x.T @ dh1; db1 = dh1.sum(axis=0)
        for p, g in ((W1, dW1), (b1, db1), (W2, dW2), (b2, db2), (W3, dW3), (b3, db3)):
            g *= LR
            p -= g
        return loss
    return step, float
"""

_MLP_MODELS_SRC = '''
import minispore as ms
from minispore import nn, ops, Tensor, Parameter


class MLP(nn.Cell):
    def __init__(self, ws):
        super().__init__()
        self.w1 = Parameter(Tensor(ws[0]), name="w1")
        self.b1 = Parameter(Tensor(ws[1]), name="b1")
        self.w2 = Parameter(Tensor(ws[2]), name="w2")
        self.b2 = Parameter(Tensor(ws[3]), name="b2")
        self.w3 = Parameter(Tensor(ws[4]), name="w3")
        self.b3 = Parameter(Tensor(ws[5]), name="b3")

    def construct(self, x):
        h = ops.relu(ops.matmul(x, self.w1) + self.b1)
        h = ops.relu(ops.matmul(h, self.w2) + self.b2)
        return ops.matmul(h, self.w3) + self.b3


class Loss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x, y):
        logp = ops.log_softmax(self.net(x), -1)
        return -(logp * y).sum() / x.shape[0]


'''

# the same model code runs on MindSpore with only the import changed (the point of the API)
_MS_MLP_SRC = _MLP_MODELS_SRC + '''
class Step(nn.Cell):
    def __init__(self, lossnet, lr):
        super().__init__()
        self.lossnet = lossnet
        self.lr = lr
        self.params = ms.ParameterTuple(lossnet.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, x, y):
        loss = self.lossnet(x, y)
        grads = self.grad(self.lossnet, self.params)(x, y)
        for p, g in zip(self.params, grads):
            ops.assign(p, p - self.lr * g)
        return loss
'''


def _mlp_minispore(context: str) -> str:
    return _MLP_COMMON + f"""
import minispore as ms
{context}
VERSIONS = {{"minispore": getattr(ms, "__version__", "?"), "numpy": np.__version__,
            "mode": ms.get_context("mode"), "jit_level": ms.get_context("jit_level")}}
M = load_source("bench_mlp_model", {_MS_MLP_SRC!r})
from minispore.core.graph import tiered
SETTLE = tiered.wait_all
def build(B, H):
    ws, xs, ys, _ = mlp_init(B, H)
    step = M.Step(M.Loss(M.MLP(ws)), LR)
    X = [ms.Tensor(x) for x in xs]
    Y = [ms.Tensor(y) for y in ys]
    return (lambda i: step(X[i % NB], Y[i % NB])), (lambda l: float(l.asnumpy()))
"""


_MLP_TORCH = _MLP_COMMON + """
import torch
import torch.nn.functional as F
VERSIONS = {"torch": torch.__version__, "threads": torch.get_num_threads()}
def build(B, H):
    ws, xs, _, labels = mlp_init(B, H)
    ps = [torch.nn.Parameter(torch.from_numpy(w.copy())) for w in ws]
    w1, b1, w2, b2, w3, b3 = ps
    opt = torch.optim.SGD(ps, lr=LR)
    X = [torch.from_numpy(x) for x in xs]
    L = [torch.from_numpy(l) for l in labels]
    def step(i):
        opt.zero_grad(set_to_none=True)
        h = torch.relu(X[i % NB] @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        loss = F.cross_entropy(h @ w3 + b3, L[i % NB])
        loss.backward()
        opt.step()
        return loss
    return step, (lambda l: l.item())
"""

_MLP_JAX = _MLP_COMMON + """
import functools
import jax, jax.numpy as jnp
VERSIONS = {"jax": jax.__version__, "backend": jax.default_backend()}
def loss_fn(p, x, y):
    h = jax.nn.relu(x @ p[0] + p[1])
    h = jax.nn.relu(h @ p[2] + p[3])
    return -(jax.nn.log_softmax(h @ p[4] + p[5], axis=-1) * y).sum() / x.shape[0]
@functools.partial(jax.jit, donate_argnums=0)
def train_step(p, x, y):
    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
    return [a - LR * b for a, b in zip(p, g)], loss
def build(B, H):
    ws, xs, ys, _ = mlp_init(B, H)
    state = [[jnp.asarray(w) for w in ws]]
    X = [jnp.asarray(x) for x in xs]
    Y = [jnp.asarray(y) for y in ys]
    def step(i):
        state[0], loss = train_step(state[0], X[i % NB], Y[i % NB])
        return loss
    return step, (lambda l: float(l.block_until_ready()))
"""

_MINDSPORE_MLP_SRC = _MLP_MODELS_SRC.replace("minispore", "mindspore")

_MLP_MINDSPORE_PRE = _MLP_COMMON + """
import mindspore as ms
ms.set_device("CPU")
VERSIONS = {"mindspore": ms.__version__, "numpy": np.__version__}
M = load_source("bench_ms_mlp_model", %r)
""" % _MINDSPORE_MLP_SRC

_MLP_MINDSPORE = _MLP_MINDSPORE_PRE + """
ms.runtime.launch_blocking()   # on 2 cores the async pipeline stalls ~4 ms per op without it
ms.set_context(mode=ms.PYNATIVE_MODE)
def build(B, H):
    ws, xs, ys, _ = mlp_init(B, H)
    lossnet = M.Loss(M.MLP(ws))
    opt = ms.nn.SGD(lossnet.trainable_params(), learning_rate=LR)
    grad_fn = ms.value_and_grad(lossnet, None, opt.parameters)
    X = [ms.Tensor(x) for x in xs]
    Y = [ms.Tensor(y) for y in ys]
    def step(i):
        loss, grads = grad_fn(X[i % NB], Y[i % NB])
        opt(grads)
        return loss
    return step, (lambda l: float(l.asnumpy()))
"""

_MLP_MINDSPORE_GRAPH = _MLP_MINDSPORE_PRE + """
ms.set_context(mode=ms.GRAPH_MODE)
def build(B, H):
    ws, xs, ys, _ = mlp_init(B, H)
    lossnet = M.Loss(M.MLP(ws))
    opt = ms.nn.SGD(lossnet.trainable_params(), learning_rate=LR)
    train = ms.nn.TrainOneStepCell(lossnet, opt)
    train.set_train()
    X = [ms.Tensor(x) for x in xs]
    Y = [ms.Tensor(y) for y in ys]
    return (lambda i: train(X[i % NB], Y[i % NB])), (lambda l: float(l.asnumpy()))
"""

# make(shape) with shape = (expr, n): prepare(expr, x, call, to_numpy) times the first call and
# measures the error; run(k) = k calls + 1 sync.
_FUSED_COMMON = _LOADER + """
import time
import numpy as np
EXTRA = {}
def data(n):
    return np.random.default_rng(0).standard_normal(n).astype(np.float32)
def reference(expr, x):
    d = x.astype(np.float64)
    if expr == "a":
        return np.tanh(d * 1.5 + 0.3) / (1.0 + np.exp(-d)) - d * d / 3
    return (d * 1.5 + 0.3) * d - d * d / 3
def prepare(expr, x, call, to_numpy):
    t0 = time.perf_counter()
    y = to_numpy(call())
    first = time.perf_counter() - t0
    y = np.asarray(y)
    EXTRA[expr] = {"first_call_s": first, "dtype": str(y.dtype), "max_abs_err": float(
        np.max(np.abs(y.astype(np.float64) - reference(expr, x))))}
def looped(call, sync):
    def run(k):
        for _ in range(k):
            y = call()
        sync(y)
    return run
"""

_FUSED_COPY = _FUSED_COMMON + """
VERSIONS = {"numpy": np.__version__}
def make(shape):
    src = data(shape[1])
    dst = np.empty_like(src)
    def run(k):
        for _ in range(k):
            np.copyto(dst, src)
    return run
"""

_FUSED_NUMPY = _FUSED_COMMON + """
VERSIONS = {"numpy": np.__version__}
def fa(x):
    return np.tanh(x * 1.5 + 0.3) * (1 / (1 + np.exp(-x))) - x * x / 3
def fb(x):
    return (x * 1.5 + 0.3) * x - x * x / 3
def make(shape):
    expr, n = shape
    x = data(n)
    f = fa if expr == "a" else fb
    prepare(expr, x, lambda: f(x), np.asarray)
    return looped(lambda: f(x), lambda y: None)
"""

_FUSED_NUMPY_OUT = _FUSED_COMMON + """
VERSIONS = {"numpy": np.__version__}
def make(shape):
    expr, n = shape
    x = data(n)
    t1, t2, out = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    def fa():                          # 10 ufunc calls, 2 temporaries, into out
        np.multiply(x, 1.5, out=t1); np.add(t1, 0.3, out=t1); np.tanh(t1, out=t1)
        np.negative(x, out=t2); np.exp(t2, out=t2); np.add(t2, 1, out=t2)
        np.divide(t1, t2, out=t1)                        # tanh(...) * sigmoid(x)
        np.multiply(x, x, out=t2); np.divide(t2, 3, out=t2)
        return np.subtract(t1, t2, out=out)
    def fb():                          # 6 ufunc calls
        np.multiply(x, 1.5, out=t1); np.add(t1, 0.3, out=t1); np.multiply(t1, x, out=t1)
        np.multiply(x, x, out=t2); np.divide(t2, 3, out=t2)
        return np.subtract(t1, t2, out=out)
    f = fa if expr == "a" else fb
    prepare(expr, x, f, np.array)
    return looped(f, lambda y: None)
"""

_MS_FUSED_SRC = '''
import minispore as ms
from minispore import ops


def fa(x):
    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3


def fb(x):
    return (x * 1.5 + 0.3) * x - x * x / 3


jfa = ms.jit(fa)
jfb = ms.jit(fb)
'''


def _fused_minispore(context: str, jit: bool) -> str:
    fns = ("M.jfa", "M.jfb") if jit else ("M.fa", "M.fb")
    return _FUSED_COMMON + f"""
import minispore as ms
{context}
VERSIONS = {{"minispore": getattr(ms, "__version__", "?"), "numpy": np.__version__,
            "mode": ms.get_context("mode"), "jit_level": ms.get_context("jit_level")}}
M = load_source("bench_fused_model", {_MS_FUSED_SRC!r})
from minispore.core.graph import tiered
def make(shape):
    expr, n = shape
    xn = data(n)
    x = ms.Tensor(xn)
    f = {fns[0]} if expr == "a" else {fns[1]}
    prepare(expr, xn, lambda: f(x), lambda y: y.asnumpy())
    tiered.wait_all()           # time the O2 program, not the O1 one serving calls meanwhile
    return looped(lambda: f(x), lambda y: y.asnumpy())
"""


_FUSED_TORCH = _FUSED_COMMON + """
import torch
VERSIONS = {"torch": torch.__version__, "threads": torch.get_num_threads()}
def fa(x):
    return torch.tanh(x * 1.5 + 0.3) * torch.sigmoid(x) - x * x / 3
def fb(x):
    return (x * 1.5 + 0.3) * x - x * x / 3
COMPILE = False
def make(shape):
    expr, n = shape
    xn = data(n)
    x = torch.from_numpy(xn)
    f = fa if expr == "a" else fb
    if COMPILE:
        f = torch.compile(f)
    def call():
        with torch.no_grad():
            return f(x)
    prepare(expr, xn, call, lambda y: y.numpy())
    return looped(call, lambda y: None)
"""

_FUSED_JAX = _FUSED_COMMON + """
import jax, jax.numpy as jnp
VERSIONS = {"jax": jax.__version__, "backend": jax.default_backend()}
@jax.jit
def fa(x):
    return jnp.tanh(x * 1.5 + 0.3) * jax.nn.sigmoid(x) - x * x / 3
@jax.jit
def fb(x):
    return (x * 1.5 + 0.3) * x - x * x / 3
def make(shape):
    expr, n = shape
    xn = data(n)
    x = jnp.asarray(xn)
    f = fa if expr == "a" else fb
    prepare(expr, xn, lambda: f(x), np.asarray)
    return looped(lambda: f(x), lambda y: y.block_until_ready())
"""

_MINDSPORE_FUSED_SRC = '''
from mindspore import nn, ops


class FA(nn.Cell):
    def construct(self, x):
        return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3


class FB(nn.Cell):
    def construct(self, x):
        return (x * 1.5 + 0.3) * x - x * x / 3
'''

_FUSED_MINDSPORE_GRAPH = _FUSED_COMMON + """
import mindspore as ms
ms.set_device("CPU")
ms.set_context(mode=ms.GRAPH_MODE)
VERSIONS = {"mindspore": ms.__version__, "numpy": np.__version__}
M = load_source("bench_ms_fused_model", %r)
def make(shape):
    expr, n = shape
    xn = data(n)
    x = ms.Tensor(xn)
    f = M.FA() if expr == "a" else M.FB()
    prepare(expr, xn, lambda: f(x), lambda y: y.asnumpy())
    return looped(lambda: f(x), lambda y: y.asnumpy())
""" % _MINDSPORE_FUSED_SRC

# make(("sgemm", n)): run(k) = k float32 n x n products into a preallocated output (table 4's peak)
_SGEMM = _LOADER + """
import numpy as np
VERSIONS = {"numpy": np.__version__}
def make(shape):
    n = shape[1]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    def run(k):
        for _ in range(k):
            np.matmul(a, b, out=c)
    return run
"""

_PYNATIVE = 'ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")'


def _graph(level: str) -> str:
    return f'ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", jit_level="{level}")'


# (key, label, peer (None: this interpreter, "minispore": + repo root), code, shapes, timeout
# factor).  Table 3 ("compile") is built from the minispore O1 MLP case.
MLP_CASES = [
    ("mlp-numpy", "handwritten numpy step (manual backprop)", None, _MLP_NUMPY),
    ("mlp-minispore-pynative", "minispore PyNative (Step cell, GradOperation)", "minispore",
     _mlp_minispore(_PYNATIVE)),
    ("mlp-minispore-O0", "minispore GRAPH_MODE jit_level=O0", "minispore",
     _mlp_minispore(_graph("O0"))),
    ("mlp-minispore-O1", "minispore GRAPH_MODE jit_level=O1", "minispore",
     _mlp_minispore(_graph("O1"))),
    ("mlp-minispore-O2", "minispore GRAPH_MODE jit_level=O2", "minispore",
     _mlp_minispore(_graph("O2"))),
    ("mlp-torch", "torch eager (F.cross_entropy, optim.SGD)", "torch", _MLP_TORCH),
    ("mlp-jax", "jax.jit(value_and_grad + SGD), donated params", "jax", _MLP_JAX),
    ("mlp-mindspore", "MindSpore PyNative + launch_blocking (value_and_grad, nn.SGD)",
     "mindspore", _MLP_MINDSPORE),
    ("mlp-mindspore-graph", "MindSpore GRAPH_MODE (nn.TrainOneStepCell, nn.SGD)", "mindspore",
     _MLP_MINDSPORE_GRAPH),
]
FUSED_CASES = [
    ("fused-copy", "copy bandwidth: numpy np.copyto(dst, src)", None, _FUSED_COPY),
    ("fused-numpy", "numpy, naive expression", None, _FUSED_NUMPY),
    ("fused-numpy-out", "numpy, ufuncs into 2 preallocated temporaries + out=", None,
     _FUSED_NUMPY_OUT),
    ("fused-minispore-pynative", "minispore PyNative", "minispore",
     _fused_minispore(_PYNATIVE, jit=False)),
    ("fused-minispore-O1", "minispore @ms.jit, jit_level=O1", "minispore",
     _fused_minispore('ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", '
                      'jit_level="O1")', jit=True)),
    ("fused-minispore-O2", "minispore @ms.jit, jit_level=O2 (default)", "minispore",
     _fused_minispore('ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", '
                      'jit_level="O2")', jit=True)),
    ("fused-torch", "torch eager (no_grad)", "torch", _FUSED_TORCH),
    ("fused-torch-compile", "torch.compile (inductor, cache dir as found)", "torch",
     _FUSED_TORCH.replace("COMPILE = False", "COMPILE = True")),
    ("fused-jax", "jax.jit", "jax", _FUSED_JAX),
    ("fused-mindspore-graph", "MindSpore GRAPH_MODE (Cell)", "mindspore",
     _FUSED_MINDSPORE_GRAPH),
]
# table 4: table 1's cases at COMPUTE_SHAPES, beside the sgemm peak
_MLP_CODE = {k: (peer, code) for k, _, peer, code in MLP_CASES}
SGEMM_KEY = "compute-sgemm"
COMPUTE_CASES = [(SGEMM_KEY, "sgemm peak: numpy matmul(a, b, out=c), float32 squares", None,
                  _SGEMM)] + [
    (f"compute-{k}", label, *_MLP_CODE[f"mlp-{k}"]) for k, label in (
        ("numpy", "handwritten numpy step (manual backprop)"),
        ("minispore-O2", "minispore GRAPH_MODE jit_level=O2 (default, native sink)"),
        ("minispore-pynative", "minispore PyNative (Step cell, GradOperation)"),
        ("torch", "torch eager (F.cross_entropy, optim.SGD)"),
        ("jax", "jax.jit(value_and_grad + SGD), donated params"))]
COMPILE_KEY = "compile-minispore"
TABLES = {"mlp": [k for k, *_ in MLP_CASES], "fused": [k for k, *_ in FUSED_CASES],
          "compile": [COMPILE_KEY], "compute": [k for k, *_ in COMPUTE_CASES]}
ALL_KEYS = [k for keys in TABLES.values() for k in keys]


# --------------------------------------------------------------------------- running

def collect_rows(runner: Runner, cases, shapes_of, rounds: int, tmp_root: str) -> dict:
    """Run every case ``rounds`` times, interleaved; minispore gets an empty kernel cache dir."""
    results = {key: {"label": label, "runs": []} for key, label, _, _ in cases}
    for rnd in range(rounds):
        for key, label, peer, code in cases:
            res = results[key]
            if res.get("skipped"):
                continue
            found = resolve(res, peer)
            if found is None:
                continue
            python, sys_path = found
            print(f"  [round {rnd + 1}/{rounds}] {key} ...", file=sys.stderr, flush=True)
            env_for_attempt = None
            if peer == "minispore":           # an empty kernel cache for every process
                env_for_attempt = (lambda _a: {"MINISPORE_CACHE_DIR": fresh_cache_dir(tmp_root)})
            timeout = None
            if key == "fused-torch-compile":
                timeout = 120 if runner.args.quick else 600
            out = runner.run(key, python, code, shapes_of(key), sys_path,
                             env_for_attempt=env_for_attempt, timeout=timeout)
            if out["status"] != "ok":
                reason = out["reason"]
                if key == "fused-torch-compile" and reason.startswith("timed out"):
                    reason += " (torch.compile too slow for this mode's limit)"
                res["skipped"] = reason
                res["traceback"] = out.get("traceback", "")
                continue
            res["runs"].append(out)
    return results


def pooled(res: dict, shape: str):
    """(samples pooled over rounds, first error) for one shape of a row."""
    samples, errors = [], []
    for run in res.get("runs", []):
        st = run["shapes"].get(shape, {})
        samples += st.get("samples", [])
        if "error" in st:
            errors.append(st["error"])
    return samples, (errors[0] if errors else None)


def extras(res: dict, key: str) -> list[dict]:
    return [run.get("extra", {}).get(key) for run in res.get("runs", [])
            if run.get("extra", {}).get(key)]


def max_load(res: dict) -> float | None:
    loads = [r["foreign_load"] for r in res.get("runs", []) if r.get("foreign_load") is not None]
    return max(loads) if loads else None


def med_range(values):
    return H.summarize(values) if values else None


def fmt_first(values) -> str:
    if not values:
        return "-"
    med, lo, hi = H.summarize(values)
    return H.fmt_num(med) if len(values) == 1 else H.fmt_cell(med, lo, hi)


def verdict(x, target, ge=True, strict=False) -> str:
    if x is None:
        return "n/a"
    ok = (x > target if strict else x >= target) if ge else x <= target
    return "met" if ok else "NOT met"


# --------------------------------------------------------------------------- table 1

def numpy_reference_losses(shape) -> list[float]:
    """The handwritten numpy step's first 6 losses, computed in this process."""
    ns: dict = {"__name__": "__mlp_reference__"}
    exec(compile(_MLP_NUMPY, "<numpy reference>", "exec"), ns)
    step, sync = ns["build"](*shape)
    return [sync(step(i)) for i in range(6)]


def analyse_mlp(results: dict, mlp_shape=MLP_SHAPES[0], table: str = "mlp") -> dict:
    """Stats per row (ms/step, steps/s, first call, loss check) of the MLP step at `mlp_shape`
    (table 1, or table 4 with table="compute"); wrong minispore rows -> skip."""
    shape = str(tuple(mlp_shape))
    ref = numpy_reference_losses(mlp_shape)
    for key, res in results.items():
        samples, err = pooled(res, shape)
        ex = extras(res, shape)
        res["stats"] = {}
        if samples:
            ms_ = [s * 1e3 for s in samples]
            sps = [1.0 / s for s in samples]
            res["stats"] = {"ms_per_step": H.summarize(ms_), "steps_per_s": H.summarize(sps),
                            "median_s": statistics.median(samples)}
        elif err:
            res["stats"]["error"] = err
        res["first_call_s"] = [e["first_call_s"] for e in ex]
        if ex:
            losses = ex[0]["losses"]
            rel = [abs(a - b) / abs(b) for a, b in zip(losses, ref)]
            res["loss_check"] = {"losses": losses, "reference": ref, "rel_after_5": rel[5],
                                 "max_rel": max(rel)}
            bad = rel[5] > LOSS_RTOL or any(r != r for r in rel)
            if bad and key.startswith(f"{table}-minispore") and not res.get("skipped"):
                res["skipped"] = (f"wrong loss: after 5 steps {losses[5]:.6g} vs numpy "
                                  f"{ref[5]:.6g} (rel {rel[5]:.2g} > {LOSS_RTOL:g})")
                res["wrong"] = True
    return {"reference": ref}


def mlp_median(results, key):
    res = results.get(key, {})
    if res.get("wrong"):
        return None
    return res.get("stats", {}).get("median_s")


def report_mlp(results: dict, info: dict, args) -> None:
    headers = ["implementation", "steps/s median (min\u2013max)", "ms/step median (min\u2013max)",
               "\u00d7 numpy", "\u00d7 jax.jit", "first call s"]
    rows, notes = [], []
    t_np, t_jax = mlp_median(results, "mlp-numpy"), mlp_median(results, "mlp-jax")
    for key, res in results.items():
        if res.get("skipped") and (not res["runs"] or res.get("wrong")):
            notes.append(f"{key}: skipped: {res['skipped']}")
            continue
        st = res["stats"]
        mark = " !" if (max_load(res) or 0) > LOAD_LIMIT else ""
        if "median_s" not in st:
            notes.append(f"{key}: skipped: {st.get('error', 'no data')}")
            continue
        t = st["median_s"]
        rows.append([res["label"] + mark, H.fmt_cell(*st["steps_per_s"]),
                     H.fmt_cell(*st["ms_per_step"]), H.fmt_num(H.ratio(t_np, t)),
                     H.fmt_num(H.ratio(t_jax, t)), fmt_first(res["first_call_s"])])
    B, Hd = MLP_SHAPES[0]
    H.print_table(headers, rows, title=(
        f"1. MLP training step 64-{Hd}-{Hd}-10, batch {B}, ReLU, softmax-CE, SGD lr 0.1, "
        f"float32 ({_mode(args)}); ratios = speed vs numpy / vs jax.jit (higher is faster)"))
    for line in notes:
        print(line)
    print_loss_check(results, info["reference"], "mlp")
    print("first call = the process's first step, synchronised (trace/parse + compile + 1 step;"
          " minispore with an empty kernel cache)")


def print_loss_check(results: dict, ref: list, table: str) -> None:
    """Dropped later rounds, and every row's loss after 5 steps against the numpy reference."""
    for key, res in results.items():
        if res.get("skipped") and res["runs"] and not res.get("wrong"):
            print(f"{key}: a later round failed and was dropped: {res['skipped']}")
    checked = [(k, r["loss_check"]) for k, r in results.items() if "loss_check" in r]
    if checked:
        worst = max(checked, key=lambda kc: kc[1]["rel_after_5"])
        ms_rows = [(k, c) for k, c in checked if k.startswith(f"{table}-minispore")]
        ok_ms = all(c["rel_after_5"] <= LOSS_RTOL for _, c in ms_rows)
        print(f"Loss after 5 steps (same seeded weights and batches): reference (handwritten "
              f"numpy, computed here) {ref[5]:.6f}; rows: "
              + ", ".join(f"{k[len(table) + 1:]} {c['losses'][5]:.6f}" for k, c in checked))
        if ms_rows:
            print(f"minispore loss after 5 steps vs handwritten numpy: "
                  f"{'match' if ok_ms else 'MISMATCH'} within {LOSS_RTOL:g} relative "
                  f"(worst minispore rel err "
                  f"{max(c['rel_after_5'] for _, c in ms_rows):.2g}; worst of all rows "
                  f"{worst[1]['rel_after_5']:.2g} in {worst[0]})")


# --------------------------------------------------------------------------- table 2

def analyse_fused(results: dict) -> None:
    for key, res in results.items():
        res["stats"] = {}
        for shape in FUSED_SHAPES if key != "fused-copy" else COPY_SHAPES:
            sk = str(shape)
            samples, err = pooled(res, sk)
            expr = shape[0]
            ex = extras(res, expr)
            st: dict = {"first_call_s": [e["first_call_s"] for e in ex]}
            if ex:
                st["max_abs_err"] = max(e["max_abs_err"] for e in ex)
                st["dtype"] = ex[0]["dtype"]
            if samples:
                st["median_s"] = statistics.median(samples)
                st["gbs"] = H.summarize([8 * N / s / 1e9 for s in samples])
                st["ms"] = H.summarize([s * 1e3 for s in samples])
            elif err:
                st["error"] = err
            if (key.startswith("fused-minispore") and st.get("max_abs_err") is not None
                    and not st["max_abs_err"] <= FUSED_ATOL):
                st["wrong"] = (f"wrong result: max abs err {st['max_abs_err']:.2g} > "
                               f"{FUSED_ATOL:g} vs float64 numpy")
            res["stats"][expr] = st


def fused_gbs(results, key, expr):
    st = results.get(key, {}).get("stats", {}).get(expr, {})
    return None if st.get("wrong") or "gbs" not in st else st["gbs"][0]


def report_fused(results: dict, args) -> None:
    headers = ["implementation"]
    for expr in ("a", "b"):
        headers += [f"({expr}) GB/s median (min\u2013max)", "\u00d7 jax.jit", "\u00d7 copy",
                    "first call s", "max abs err"]
    copy = fused_gbs(results, "fused-copy", "copy")
    rows, notes = [], []
    for key, res in results.items():
        if res.get("skipped") and not res["runs"]:
            notes.append(f"{key}: skipped: {res['skipped']}")
            continue
        mark = " !" if (max_load(res) or 0) > LOAD_LIMIT else ""
        row = [res["label"] + mark]
        for expr in ("a", "b"):
            st = res["stats"].get("copy" if key == "fused-copy" else expr, {})
            if st.get("wrong") or "gbs" not in st:
                row += ["skipped (below)", "-", "-", fmt_first(st["first_call_s"]), "-"]
                notes.append(f"{key} ({expr}): skipped: "
                             f"{st.get('wrong') or st.get('error', 'no data')}")
                continue
            g = st["gbs"][0]
            row += [H.fmt_cell(*st["gbs"]),
                    H.fmt_num(H.ratio(g, fused_gbs(results, "fused-jax", expr))),
                    H.fmt_num(H.ratio(g, copy)), fmt_first(st["first_call_s"]),
                    f"{st['max_abs_err']:.1e}" if "max_abs_err" in st else "-"]
        rows.append(row)
    H.print_table(headers, rows, title=(
        f"2. Fused elementwise chains, N = {N} float32, effective GB/s = 8 bytes/element / time "
        f"({_mode(args)}); (a) {EXPR['a']}   (b) {EXPR['b']}"))
    for line in notes:
        print(line)
    print("copy = np.copyto(dst, src) on the same N, 8 bytes/element, measured in this run; "
          "max abs err vs a float64 numpy reference")


# --------------------------------------------------------------------------- table 3

def collect_compile(runner: Runner, rounds: int, tmp_root: str) -> dict:
    """Per jit level (O1, O2), per round: a cold process (fresh MINISPORE_CACHE_DIR), then a warm
    one (same dir)."""
    return {level: _collect_compile(runner, rounds, tmp_root, level) for level in ("O1", "O2")}


def _collect_compile(runner: Runner, rounds: int, tmp_root: str, level: str) -> dict:
    code = dict((k, c) for k, _, _, c in MLP_CASES)[f"mlp-minispore-{level}"]
    python, _, sys_path = locate("minispore")
    out = {"cold": [], "warm": [], "loads": []}
    for rnd in range(rounds):
        print(f"  [round {rnd + 1}/{rounds}] {COMPILE_KEY} (cold, then warm) ...",
              file=sys.stderr, flush=True)
        cache = {}

        def cold_env(_attempt):
            cache["dir"] = fresh_cache_dir(tmp_root)
            return {"MINISPORE_CACHE_DIR": cache["dir"]}
        for phase, env_fn in (("cold", cold_env),
                              ("warm", lambda _a: {"MINISPORE_CACHE_DIR": cache["dir"]})):
            res = runner.run(f"{COMPILE_KEY} {phase}", python, code, MLP_SHAPES, sys_path,
                             env_for_attempt=env_fn, target_s=0.02, repeats=1)
            if res["status"] != "ok":
                out["skipped"] = f"{phase}: {res['reason']}"
                return out
            ex = res.get("extra", {}).get(str(MLP_SHAPES[0]))
            if not ex:
                err = res["shapes"].get(str(MLP_SHAPES[0]), {}).get("error", "no first call")
                out["skipped"] = f"{phase}: {err}"
                return out
            out[phase].append(ex["first_call_s"])
            out["loads"].append(res.get("foreign_load"))
    return out


def report_compile(comps: dict, mlp: dict, args) -> None:
    headers = ["first call of the MLP step", "seconds median (min\u2013max)", "target", ""]
    rows = []
    for level, comp in comps.items():
        if comp.get("skipped"):
            print(f"{COMPILE_KEY} {level}: skipped: {comp['skipped']}")
        mark = " !" if any((x or 0) > LOAD_LIMIT for x in comp.get("loads", [])) else ""
        for phase, label, target in (
                ("cold", f"minispore {level}, cold process, empty kernel cache",
                 TARGETS["cold_s"]),
                ("warm", f"minispore {level}, new process, warm disk cache", TARGETS["warm_s"])):
            vals = comp.get(phase, [])
            med = statistics.median(vals) if vals else None
            rows.append([label + mark, fmt_first(vals) if vals else "skipped", f"<= {target:g}",
                         verdict(med, target, ge=False)])
    jx = mlp.get("mlp-jax", {}).get("first_call_s", [])
    rows.append(["jax.jit (from table 1)", fmt_first(jx) if jx else "-", "-", ""])
    H.print_table(headers, rows, title=(
        f"3. Compile time: first call of the minispore MLP step at jit_level O1 and O2 "
        f"({_mode(args)}; "
        "imports not included)"))


# --------------------------------------------------------------------------- table 4

def mlp_step_flops(batch: int, hidden: int, d_in: int = MLP_IN, classes: int = MLP_CLASSES) -> int:
    """The FLOPs of one training step's matrix products, 2*m*n*k each: the forward's three and
    the backward's five (no gradient of the input x); bias, ReLU, softmax and the update are
    elementwise and not counted.  = 2 * batch * (2*d_in*hidden + 3*hidden^2 + 3*hidden*classes)."""
    products = [(batch, hidden, d_in),        # h1 = x @ W1
                (batch, hidden, hidden),      # h2 = h1 @ W2
                (batch, classes, hidden),     # z = h2 @ W3
                (hidden, classes, batch),     # dW3 = h2.T @ dz
                (batch, hidden, classes),     # dh2 = dz @ W3.T
                (hidden, hidden, batch),      # dW2 = h1.T @ dh2
                (batch, hidden, hidden),      # dh1 = dh2 @ W2.T
                (d_in, hidden, batch)]        # dW1 = x.T @ dh1
    return sum(2 * m * n * k for m, n, k in products)


def analyse_compute(results: dict) -> dict:
    """Table 1's analysis of the step rows at COMPUTE_SHAPES plus GFLOP/s per row, and the sgemm
    peak: the better of the per-size medians."""
    steps = {k: r for k, r in results.items() if k != SGEMM_KEY}
    info = analyse_mlp(steps, COMPUTE_SHAPES[0], "compute")
    flops = mlp_step_flops(*COMPUTE_SHAPES[0])
    info.update(flops=flops, peak_gflops=None, peak_n=None)
    for res in steps.values():
        samples, _ = pooled(res, str(COMPUTE_SHAPES[0]))
        if samples and "median_s" in res["stats"]:
            res["stats"]["gflops"] = H.summarize([flops / t / 1e9 for t in samples])
    sgemm = results.get(SGEMM_KEY)
    if sgemm is not None:
        sgemm["stats"] = {}
        for shape in SGEMM_SHAPES:
            n = shape[1]
            samples, err = pooled(sgemm, str(shape))
            if not samples:
                sgemm["stats"][n] = {"error": err or "no data"}
                continue
            g = H.summarize([2 * n ** 3 / t / 1e9 for t in samples])
            sgemm["stats"][n] = {"gflops": g, "ms": H.summarize([t * 1e3 for t in samples])}
            if info["peak_gflops"] is None or g[0] > info["peak_gflops"]:
                info.update(peak_gflops=g[0], peak_n=n)
    return info


def compute_gflops(results: dict, key: str) -> float | None:
    res = results.get(key, {})
    g = res.get("stats", {}).get("gflops")
    return None if res.get("wrong") or g is None else g[0]


def report_compute(results: dict, info: dict, args) -> None:
    headers = ["implementation", "ms/step median (min\u2013max)", "GFLOP/s median (min\u2013max)",
               "% of sgemm peak", "\u00d7 jax.jit", "first call s"]
    peak, rows, notes = info["peak_gflops"], [], []
    t_jax = mlp_median(results, "compute-jax")
    for key, res in results.items():
        if res.get("skipped") and (not res["runs"] or res.get("wrong")):
            notes.append(f"{key}: skipped: {res['skipped']}")
            continue
        mark = " !" if (max_load(res) or 0) > LOAD_LIMIT else ""
        if key == SGEMM_KEY:
            for n, st in res["stats"].items():
                if "gflops" not in st:
                    notes.append(f"{key} {n}x{n}: skipped: {st['error']}")
                    continue
                rows.append([f"sgemm: numpy matmul float32 {n}x{n}, out={mark}"
                             + (" (the peak)" if n == info["peak_n"] else ""),
                             H.fmt_cell(*st["ms"]) + " /matmul", H.fmt_cell(*st["gflops"]),
                             H.fmt_num(100 * st["gflops"][0] / peak), "-", "-"])
            continue
        st = res["stats"]
        if "gflops" not in st:
            notes.append(f"{key}: skipped: {st.get('error', 'no data')}")
            continue
        pct = H.fmt_num(100 * st["gflops"][0] / peak) if peak else "-"
        rows.append([res["label"] + mark, H.fmt_cell(*st["ms_per_step"]), H.fmt_cell(*st["gflops"]),
                     pct, H.fmt_num(H.ratio(t_jax, st["median_s"])),
                     fmt_first(res["first_call_s"])])
    B, Hd = COMPUTE_SHAPES[0]
    H.print_table(headers, rows, title=(
        f"4. Compute-bound MLP step {MLP_IN}-{Hd}-{Hd}-{MLP_CLASSES}, batch {B}, ReLU, softmax-CE, "
        f"SGD lr 0.1, float32 ({_mode(args)}); GFLOP/s = {info['flops'] / 1e9:.4g} GFLOP a step "
        f"/ time"))
    for line in notes:
        print(line)
    print(f"FLOPs a step = 2*m*n*k over the 3 forward and 5 backward matrix products (no input "
          f"gradient) = 2*B*(2*D*H + 3*H*H + 3*H*C) = {info['flops']:,}; elementwise work is not "
          f"counted")
    if peak:
        print(f"sgemm peak = {peak:.1f} GFLOP/s: numpy matmul of float32 {info['peak_n']}x"
              f"{info['peak_n']} (the better median of {' and '.join(str(n) for _, n in SGEMM_SHAPES)};"
              f" 2*n^3 FLOPs each), measured in this run")
    print_loss_check({k: r for k, r in results.items() if k != SGEMM_KEY}, info["reference"],
                     "compute")


# --------------------------------------------------------------------------- main

def _mode(args) -> str:
    return (f"{'quick' if args.quick else 'full'}: {args.rounds} round(s) x {args.repeats} "
            f"repeats, ~{args.target_s} s each")


def target_lines(mlp, fused, comp, compute, compute_info) -> list[str]:
    lines = []
    graph = {k: mlp_median(mlp, f"mlp-minispore-{k}") for k in ("O0", "O1", "O2")}
    graph = {k: v for k, v in graph.items() if v is not None}
    best = min(graph, key=graph.get) if graph else None
    t_best = graph.get(best) if best else None
    r = H.ratio(mlp_median(mlp, "mlp-jax"), t_best)
    lines.append(f"Graph (best jit_level{' = ' + best if best else ''}) vs jax.jit: "
                 f"{H.fmt_num(r)} (target >= {TARGETS['graph_vs_jax']:g}): "
                 f"{verdict(r, TARGETS['graph_vs_jax'])}")
    r = H.ratio(mlp_median(mlp, "mlp-numpy"), t_best)
    lines.append(f"Graph vs numpy step: {H.fmt_num(r)} (target > {TARGETS['graph_vs_numpy']:g}): "
                 f"{verdict(r, TARGETS['graph_vs_numpy'], strict=True)}")
    for level in ("O1", "O2"):
        key = f"fused-minispore-{level}"
        r = H.ratio(fused_gbs(fused, key, "a"), fused_gbs(fused, "fused-jax", "a"))
        lines.append(f"(a) minispore {level} / jax.jit GB/s: {H.fmt_num(r)} "
                     f"(target >= {TARGETS['a_vs_jax']:g}): {verdict(r, TARGETS['a_vs_jax'])}")
        r = H.ratio(fused_gbs(fused, key, "b"), fused_gbs(fused, "fused-copy", "copy"))
        lines.append(f"(b) minispore {level} / copy bandwidth: {H.fmt_num(r)} "
                     f"(target >= {TARGETS['b_vs_copy']:g}): {verdict(r, TARGETS['b_vs_copy'])}")
    def sec(x):
        return "-" if x is None else f"{x:.3f}"
    for level, c in comp.items():
        cold = statistics.median(c["cold"]) if c.get("cold") else None
        warm = statistics.median(c["warm"]) if c.get("warm") else None
        lines.append(f"compile {level}: cold {sec(cold)} s (target <= {TARGETS['cold_s']:g}): "
                     f"{verdict(cold, TARGETS['cold_s'], ge=False)}, warm {sec(warm)} s (target "
                     f"<= {TARGETS['warm_s']:g}): {verdict(warm, TARGETS['warm_s'], ge=False)}")
    g, peak = compute_gflops(compute, "compute-minispore-O2"), compute_info.get("peak_gflops")
    share = H.ratio(g, peak)
    lines.append(f"compute-bound MLP: minispore GRAPH O2 % of sgemm peak: "
                 f"{'-' if share is None else f'{100 * share:.1f}%'} (target >= "
                 f"{100 * TARGETS['compute_of_peak']:g}%): "
                 f"{verdict(share, TARGETS['compute_of_peak'])}")
    r = H.ratio(mlp_median(compute, "compute-jax"), mlp_median(compute, "compute-minispore-O2"))
    lines.append(f"compute-bound MLP: minispore GRAPH O2 vs jax.jit: {H.fmt_num(r)} (target >= "
                 f"{TARGETS['compute_vs_jax']:g}): {verdict(r, TARGETS['compute_vs_jax'])}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1 round, 3 repeats (~3 minutes)")
    p.add_argument("--json", metavar="PATH", help="also write all samples and metadata here")
    p.add_argument("--only", metavar="KEYS", help="comma-separated row keys or tables ("
                   + ", ".join(TABLES) + "): " + ",".join(ALL_KEYS))
    p.add_argument("--rounds", type=int, help="processes per row, interleaved (default 3)")
    p.add_argument("--repeats", type=int, help="timed repeats per process (default 5)")
    p.add_argument("--target-s", type=float, help="seconds per repeat (default 0.2)")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.target_s = args.target_s or (0.1 if args.quick else 0.2)
    keep = set(ALL_KEYS)
    if args.only:
        keep = set()
        for k in args.only.split(","):
            if k in TABLES:
                keep |= set(TABLES[k])
            elif k in ALL_KEYS:
                keep.add(k)
            else:
                p.error(f"unknown row key or table {k!r}")
    mlp_cases = [c for c in MLP_CASES if c[0] in keep]
    fused_cases = [c for c in FUSED_CASES if c[0] in keep]
    compute_cases = [c for c in COMPUTE_CASES if c[0] in keep]
    runner = Runner(args)
    tmp_root = tempfile.mkdtemp(prefix="minispore-graph-bench-")
    try:
        mlp = collect_rows(runner, mlp_cases, lambda k: MLP_SHAPES, args.rounds, tmp_root)
        fused = collect_rows(runner, fused_cases,
                             lambda k: COPY_SHAPES if k == "fused-copy" else FUSED_SHAPES,
                             args.rounds, tmp_root)
        comp = (collect_compile(runner, args.rounds, tmp_root) if COMPILE_KEY in keep
                else {})
        compute = collect_rows(runner, compute_cases,
                               lambda k: SGEMM_SHAPES if k == SGEMM_KEY else COMPUTE_SHAPES,
                               args.rounds, tmp_root)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    mlp_info = analyse_mlp(mlp)
    analyse_fused(fused)
    compute_info = analyse_compute(compute) if compute_cases else {}
    print()
    if mlp_cases:
        report_mlp(mlp, mlp_info, args)
        print()
    if fused_cases:
        report_fused(fused, args)
        print()
    if COMPILE_KEY in keep:
        report_compile(comp, mlp, args)
        print()
    if compute_cases:
        report_compute(compute, compute_info, args)
        print()
    if runner.loads:
        print(f"foreign CPU load during runs: median {statistics.median(runner.loads):.0%}, "
              f"max {max(runner.loads):.0%}; {runner.retried} run(s) repeated because of load; "
              f"! = another process used > {LOAD_LIMIT:.0%} of the CPUs during a run of that row")
    lines = target_lines(mlp, fused, comp, compute, compute_info)
    print("Speed targets:")
    for line in lines:
        print("  " + line)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"benchmark": "graph_vs_eager", "machine": H.machine_info(),
                       "settings": {k: getattr(args, k) for k in
                                    ("quick", "rounds", "repeats", "target_s")},
                       "mlp_shapes": [str(s) for s in MLP_SHAPES], "N": N, "expressions": EXPR,
                       "mlp": mlp, "mlp_reference_losses": mlp_info["reference"],
                       "fused": fused, "compile": comp,
                       "compute_shapes": [str(s) for s in COMPUTE_SHAPES],
                       "compute": compute, "compute_info": compute_info,
                       "sgemm_shapes": [str(s) for s in SGEMM_SHAPES], "targets": lines},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
