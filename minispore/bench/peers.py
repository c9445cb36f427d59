"""The peer rows of `python -m minispore bench`: the same workloads written for numpy (always),
PyTorch, JAX and MindSpore (when importable in this interpreter; a missing one is skipped with a
note, never installed). This file imports only numpy at the top, so it can be tried in a peer's
own interpreter.

`make(peer, workload, data)` returns (call, steps per call, sync, mode label, version) or raises
Skip. `data` holds the workload's numpy inputs (workloads.inputs), so every row computes on the
same arrays; training steps use the same architecture (workloads.py's docstring; an MLP's layer
widths come in `data["layers"]`) with SGD momentum 0.9, lr 0.05, on the same batches.
dispatch-grad's rows run GRAD_OPS adds while autodiff records (torch: inputs with
requires_grad=True and `.sum().backward()`; JAX: `jax.jit(jax.grad(f))`; MindSpore: `ms.grad`,
under `ms.jit` in graph mode) and count GRAD_OPS steps a call; numpy has no autodiff.
"""
from __future__ import annotations

import importlib.util
import itertools

import numpy as np

PEERS = ("numpy", "torch", "jax", "mindspore")
_MODULES = {"numpy": "numpy", "torch": "torch", "jax": "jax", "mindspore": "mindspore"}
LR, MOMENTUM = 0.05, 0.9
GRAD_OPS = 64                        # = workloads.GRAD_OPS (this file imports only numpy)
MLP = ("mlp", "mlp-256", "mlp-1024")


class Skip(Exception):
    """This peer has no row for this workload; the message says why."""


def importable(peer: str) -> tuple[bool, str]:
    if importlib.util.find_spec(_MODULES[peer]) is None:
        return False, f"{peer} is not importable in this interpreter"
    return True, ""


def modes(peer: str) -> tuple:
    return {"numpy": ("eager",), "torch": ("eager",), "jax": ("jit",),
            "mindspore": ("pynative", "graph")}[peer]


def make(peer: str, workload: str, data: dict, mode: str):
    ok, why = importable(peer)
    if not ok:
        raise Skip(why)
    if workload in ("lstm", "transformer"):
        return _sequence(peer, workload, data, mode)
    return globals()[f"_{peer}"](workload, data, mode)


def _sequence(peer, w, d, mode):
    """The sequence-model rows: torch and JAX from peers_sequence.py, MindSpore running
    sequence_models.py's own text with the package name changed."""
    from . import peers_sequence, sequence_models
    sizes = {k: v for k, v in vars(sequence_models).items() if k.isupper()}
    if peer == "torch":
        step, sync, ver = peers_sequence.torch_step(w, d["batches"], sizes)
    elif peer == "jax":
        step, sync, ver = peers_sequence.jax_step(w, d["batches"], sizes)
    elif peer == "mindspore":
        import types
        import mindspore as ms
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE,
                       device_target="CPU")
        with open(sequence_models.__file__) as f:
            src = f.read().replace("minispore", "mindspore")
        mod = types.ModuleType("mindspore_sequence_models")
        exec(compile(src, sequence_models.__file__, "exec"), mod.__dict__)
        cell = mod.build(w)
        ts = [(ms.Tensor(x), ms.Tensor(y)) for x, y in d["batches"]]
        step, sync, ver = (lambda k: cell(*ts[k % len(ts)])), (lambda r: r.asnumpy()), \
            ms.__version__
    else:
        raise Skip(f"{peer} has no autodiff for the {w} row")
    count = itertools.count()
    return (lambda: step(next(count))), 1, sync, mode, ver


def _cycle(batches):
    return itertools.cycle(batches).__next__


# -- numpy ------------------------------------------------------------------------------------
def _numpy(w, d, mode):
    ver = np.__version__
    if w in ("dispatch", "dispatch-large"):
        a, b = d["a"], d["b"]
        return (lambda: a + b), 1, None, mode, ver
    if w == "fused":
        x = d["x"]
        return (lambda: np.tanh(x * 1.5 + 0.3) / (1 + np.exp(-x)) - x * x / 3), 1, None, mode, ver
    if w == "chain-b":
        x = d["x"]
        return (lambda: (x * 1.5 + 0.3) * x - x * x / 3), 1, None, mode, ver
    if w == "matmul":
        a, b = d["a"], d["b"]
        return (lambda: a @ b), 1, None, mode, ver
    if w in MLP:
        return _numpy_mlp(d), 1, None, mode, ver
    if w == "dispatch-grad":
        raise Skip("numpy has no autodiff: no row of ops recorded for a gradient")
    raise Skip("numpy has no convolution autodiff: no CNN row")


def _he(rng, i, o):
    return (rng.standard_normal((i, o)) * np.sqrt(2 / i)).astype(np.float32)


def _numpy_mlp(d):
    """Forward, hand-written backward and in-place momentum update of the MLP of
    `d["layers"]` (Dense layers with ReLU between them, softmax cross-entropy)."""
    rng = np.random.default_rng(0)
    dims = list(zip(d["layers"][:-1], d["layers"][1:]))
    ws = [_he(rng, i, o) for i, o in dims]
    bs = [np.zeros(o, np.float32) for _, o in dims]
    params = [p for wb in zip(ws, bs) for p in wb]
    vel = [np.zeros_like(p) for p in params]
    nxt = _cycle([(x.reshape(len(x), -1), y) for x, y in d["batches"]])

    def step():
        x, y = nxt()
        acts = [x]                                   # the input of every layer
        for w, b in zip(ws[:-1], bs[:-1]):
            acts.append(np.maximum(acts[-1] @ w + b, 0))
        z = acts[-1] @ ws[-1] + bs[-1]
        z = z - z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        rows = np.arange(len(y))
        loss = -np.log(p[rows, y]).mean()
        p[rows, y] -= 1
        g = p / len(y)                               # d loss / d z
        grads = []
        for k in range(len(ws) - 1, -1, -1):
            grads[:0] = [acts[k].T @ g, g.sum(0)]
            if k:
                g = (g @ ws[k].T) * (acts[k] > 0)
        for v, prm, gr in zip(vel, params, grads):
            v *= MOMENTUM
            v += gr
            prm -= LR * v
        return loss
    return step


# -- PyTorch ----------------------------------------------------------------------------------
def _torch(w, d, mode):
    import torch
    ver = torch.__version__
    T = torch.from_numpy
    if w in ("dispatch", "dispatch-large"):
        a, b = T(d["a"]), T(d["b"])
        return (lambda: a + b), 1, None, mode, ver
    if w == "dispatch-grad":
        a, b = (T(d[k].copy()).requires_grad_(True) for k in ("a", "b"))

        def recorded():
            a.grad = b.grad = None          # each call's gradient, as ms.grad returns it
            for _ in range(GRAD_OPS):
                c = a + b
            c.sum().backward()
            return a.grad
        return recorded, GRAD_OPS, None, mode, ver
    if w == "fused":
        x = T(d["x"])
        return ((lambda: torch.tanh(x * 1.5 + 0.3) * torch.sigmoid(x) - x * x / 3), 1, None,
                mode, ver)
    if w == "chain-b":
        x = T(d["x"])
        return (lambda: (x * 1.5 + 0.3) * x - x * x / 3), 1, None, mode, ver
    if w == "matmul":
        a, b = T(d["a"]), T(d["b"])
        return (lambda: a @ b), 1, None, mode, ver
    nn = torch.nn
    torch.manual_seed(0)
    if w in MLP:
        widths = d["layers"]
        layers = [nn.Flatten()]
        for k, (i, o) in enumerate(zip(widths[:-1], widths[1:])):
            layers += [nn.Linear(i, o)] + ([nn.ReLU()] if k < len(widths) - 2 else [])
        net = nn.Sequential(*layers)
    else:
        net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.ReLU(),
                            nn.MaxPool2d(2, 2), nn.Conv2d(16, 32, 3, padding=1, bias=False),
                            nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(128, 64),
                            nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    lossf = nn.CrossEntropyLoss()
    nxt = _cycle([(T(x), T(y.astype(np.int64))) for x, y in d["batches"]])

    def step():
        x, y = nxt()
        opt.zero_grad()
        loss = lossf(net(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, 1, lambda r: r.item(), mode, ver


# -- JAX --------------------------------------------------------------------------------------
def _jax(w, d, mode):
    import jax
    import jax.numpy as jnp
    ver = jax.__version__
    sync = jax.block_until_ready
    if w in ("dispatch", "dispatch-large"):
        a, b = jnp.asarray(d["a"]), jnp.asarray(d["b"])
        add = jax.jit(jnp.add)
        return (lambda: add(a, b)), 1, sync, mode, ver
    if w == "dispatch-grad":
        a, b = jnp.asarray(d["a"]), jnp.asarray(d["b"])

        def recorded(x, y):
            for _ in range(GRAD_OPS):
                c = x + y
            return c.sum()
        g = jax.jit(jax.grad(recorded))
        return (lambda: g(a, b)), GRAD_OPS, sync, mode, ver
    if w == "fused":
        x = jnp.asarray(d["x"])
        f = jax.jit(lambda x: jnp.tanh(x * 1.5 + 0.3) * jax.nn.sigmoid(x) - x * x / 3)
        return (lambda: f(x)), 1, sync, mode, ver
    if w == "chain-b":
        x = jnp.asarray(d["x"])
        f = jax.jit(lambda x: (x * 1.5 + 0.3) * x - x * x / 3)
        return (lambda: f(x)), 1, sync, mode, ver
    if w == "matmul":
        a, b = jnp.asarray(d["a"]), jnp.asarray(d["b"])
        f = jax.jit(jnp.matmul)
        return (lambda: f(a, b)), 1, sync, mode, ver
    return _jax_train(w, d, mode, ver)


def _jax_train(w, d, mode, ver):
    import jax
    import jax.numpy as jnp
    rng = np.random.default_rng(0)

    def he(*shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
        return jnp.asarray(rng.standard_normal(shape) * np.sqrt(2 / fan_in), jnp.float32)
    if w in MLP:
        dims = list(zip(d["layers"][:-1], d["layers"][1:]))
        params = [q for i, o in dims for q in (he(i, o), jnp.zeros(o))]

        def logits(p, x):
            h = x.reshape(x.shape[0], -1)
            for k in range(0, len(p) - 2, 2):
                h = jax.nn.relu(h @ p[k] + p[k + 1])
            return h @ p[-2] + p[-1]
    else:
        params = [he(16, 1, 3, 3), he(32, 16, 3, 3), he(128, 64), jnp.zeros(64), he(64, 10),
                  jnp.zeros(10)]

        def conv_pool(x, k):
            y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME")
            return jax.lax.reduce_window(jax.nn.relu(y), -jnp.inf, jax.lax.max, (1, 1, 2, 2),
                                         (1, 1, 2, 2), "VALID")

        def logits(p, x):
            h = conv_pool(conv_pool(x, p[0]), p[1]).reshape(x.shape[0], -1)
            return jax.nn.relu(h @ p[2] + p[3]) @ p[4] + p[5]

    def loss(p, x, y):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits(p, x)), y[:, None], 1))

    @jax.jit
    def update(p, v, x, y):
        val, g = jax.value_and_grad(loss)(p, x, y)
        v = [MOMENTUM * vi + gi for vi, gi in zip(v, g)]
        return [pi - LR * vi for pi, vi in zip(p, v)], v, val
    state = {"p": params, "v": [jnp.zeros_like(q) for q in params]}
    nxt = _cycle([(jnp.asarray(x), jnp.asarray(y)) for x, y in d["batches"]])

    def step():
        x, y = nxt()
        state["p"], state["v"], val = update(state["p"], state["v"], x, y)
        return val
    return step, 1, jax.block_until_ready, mode, ver


# -- MindSpore --------------------------------------------------------------------------------
# at module level: MindSpore's graph mode reads their source and resolves `msops` here
msops = None                       # mindspore.ops, set by _mindspore


def ms_chain(x):
    return msops.tanh(x * 1.5 + 0.3) * msops.sigmoid(x) - x * x / 3


def ms_chain_b(x):
    return (x * 1.5 + 0.3) * x - x * x / 3


def ms_add(a, b):
    return a + b


def ms_recorded_adds(x, y):
    c = x + y                        # MindSpore's graph mode reads no variable first set in a loop
    for _ in range(GRAD_OPS - 1):
        c = x + y
    return c.sum()


def ms_matmul(a, b):
    return msops.matmul(a, b)


def _mindspore(w, d, mode):
    global msops
    import mindspore as ms
    from mindspore import nn, ops
    msops = ops
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE,
                   device_target="CPU")
    ver = ms.__version__
    sync = (lambda r: r.asnumpy())
    T = ms.Tensor
    if w in ("dispatch", "dispatch-large", "matmul", "fused", "chain-b", "dispatch-grad"):
        if w in ("fused", "chain-b"):
            fn, args = (ms_chain if w == "fused" else ms_chain_b), (T(d["x"]),)
        else:
            fn = {"matmul": ms_matmul, "dispatch-grad": ms.grad(ms_recorded_adds)}.get(w, ms_add)
            args = (T(d["a"]), T(d["b"]))
        f = ms.jit(fn) if mode == "graph" else fn
        return ((lambda: f(*args)), GRAD_OPS if w == "dispatch-grad" else 1, sync, mode, ver)
    if w in MLP:
        widths = d["layers"]
        layers = [nn.Flatten()]
        for k, (i, o) in enumerate(zip(widths[:-1], widths[1:])):
            layers += [nn.Dense(i, o)] + ([nn.ReLU()] if k < len(widths) - 2 else [])
        net = nn.SequentialCell(layers)
    else:
        net = nn.SequentialCell([nn.Conv2d(1, 16, 3, pad_mode="same"), nn.ReLU(),
                                 nn.MaxPool2d(2, 2), nn.Conv2d(16, 32, 3, pad_mode="same"),
                                 nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Dense(128, 64),
                                 nn.ReLU(), nn.Dense(64, 10)])
    lossf = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    cell = nn.TrainOneStepCell(nn.WithLossCell(net, lossf),
                               nn.Momentum(net.trainable_params(), LR, MOMENTUM))
    cell.set_train()
    nxt = _cycle([(T(x), T(y)) for x, y in d["batches"]])
    return (lambda: cell(*nxt())), 1, sync, mode, ver
