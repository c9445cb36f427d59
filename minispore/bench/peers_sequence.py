"""The peer rows of the sequence-model workloads (sequence_models.py): the same LSTM classifier
and small GPT written with torch.nn (eager or torch.compile) and by hand in JAX (`lax.scan` over
time for the LSTM, one jitted update). Each framework uses its own initialisers: the rows compare
speed, not losses. This file imports only numpy at the top, so benchmarks/layers_training.py can
run its text in a peer's own interpreter; `sizes` is sequence_models' constants as a dict.

`torch_step(model, batches, sizes, compile=False)` and `jax_step(model, batches, sizes)` return
(step(k) -> loss of the k-th step, sync(loss) -> float, version).
"""
import numpy as np


def torch_step(model, batches, sizes, compile=False):
    import torch
    import torch.nn as tnn
    s = sizes
    torch.manual_seed(1)

    class LSTMNet(tnn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = tnn.LSTM(s["LSTM_IN"], s["LSTM_HIDDEN"], num_layers=s["LSTM_LAYERS"],
                                 batch_first=True)
            self.fc = tnn.Linear(s["LSTM_HIDDEN"], s["CLASSES"])

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.fc(out[:, -1])

    class GPT(tnn.Module):
        def __init__(self):
            super().__init__()
            w, c = s["WIDTH"], s["CONTEXT"]
            self.tok, self.pos = tnn.Embedding(s["VOCAB"], w), tnn.Embedding(c, w)
            self.blocks = tnn.ModuleList([
                tnn.TransformerEncoderLayer(w, s["HEADS"], s["FFN"], dropout=0.0,
                                            batch_first=True) for _ in range(s["LAYERS"])])
            self.norm, self.head = tnn.LayerNorm(w), tnn.Linear(w, s["VOCAB"])
            self.register_buffer("mask", torch.triu(torch.ones(c, c, dtype=torch.bool), 1))
            self.register_buffer("positions", torch.arange(c))

        def forward(self, idx):
            h = self.tok(idx) + self.pos(self.positions)
            for block in self.blocks:
                h = block(h, src_mask=self.mask)
            return self.head(self.norm(h)).reshape(-1, s["VOCAB"])

    net = LSTMNet() if model == "lstm" else GPT()
    fwd = torch.compile(net) if compile else net
    opt = torch.optim.SGD(net.parameters(), lr=s["LR"], momentum=s["MOMENTUM"])
    lossf = tnn.CrossEntropyLoss()
    xs = [torch.from_numpy(x.astype(np.int64) if x.dtype.kind == "i" else x) for x, _ in batches]
    ys = [torch.from_numpy(y.astype(np.int64)).reshape(-1) for _, y in batches]

    def step(k):
        opt.zero_grad(set_to_none=True)
        loss = lossf(fwd(xs[k % len(xs)]), ys[k % len(ys)])
        loss.backward()
        opt.step()
        return loss
    return step, (lambda loss: loss.item()), torch.__version__


def jax_step(model, batches, sizes):
    import jax
    import jax.numpy as jnp
    s = sizes
    rng = np.random.default_rng(1)

    def uni(shape, bound):
        return jnp.asarray(rng.uniform(-bound, bound, shape), jnp.float32)

    def dense(i, o):
        return [uni((i, o), 1 / np.sqrt(i)), jnp.zeros(o, jnp.float32)]

    def ce(logits, y):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))

    if model == "lstm":
        hid = s["LSTM_HIDDEN"]
        params = []
        for layer in range(s["LSTM_LAYERS"]):
            i = s["LSTM_IN"] if layer == 0 else hid
            b = 1 / np.sqrt(hid)
            params += [uni((i, 4 * hid), b), uni((hid, 4 * hid), b), uni((4 * hid,), b)]
        params += dense(hid, s["CLASSES"])

        def loss(p, x, y):
            h_seq = jnp.swapaxes(x, 0, 1)                        # (T, B, I)
            for layer in range(s["LSTM_LAYERS"]):
                w_ih, w_hh, bias = p[3 * layer:3 * layer + 3]
                xs = h_seq @ w_ih + bias                          # every step's input projection

                def cell(carry, xt, w_hh=w_hh):
                    h, c = carry
                    i, f, g, o = jnp.split(xt + h @ w_hh, 4, axis=-1)
                    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                    h = jax.nn.sigmoid(o) * jnp.tanh(c)
                    return (h, c), h
                z = jnp.zeros((x.shape[0], hid), jnp.float32)
                _, h_seq = jax.lax.scan(cell, (z, z), xs)
            return ce(h_seq[-1] @ p[-2] + p[-1], y)
    else:
        d, nh, ctx, vocab = s["WIDTH"], s["HEADS"], s["CONTEXT"], s["VOCAB"]
        params = [uni((vocab, d), 1.0), uni((ctx, d), 1.0)]
        for _ in range(s["LAYERS"]):
            params += dense(d, 3 * d) + dense(d, d) + dense(d, s["FFN"]) + dense(s["FFN"], d)
            params += [jnp.ones(d), jnp.zeros(d), jnp.ones(d), jnp.zeros(d)]
        params += [jnp.ones(d), jnp.zeros(d)] + dense(d, vocab)
        causal = jnp.triu(jnp.ones((ctx, ctx), bool), 1)

        def ln(x, g, b):
            m = x.mean(-1, keepdims=True)
            v = ((x - m) ** 2).mean(-1, keepdims=True)
            return (x - m) / jnp.sqrt(v + 1e-5) * g + b

        def attention(x, wqkv, bqkv, wo, bo):
            bsz, t, _ = x.shape
            q, k, v = jnp.split(x @ wqkv + bqkv, 3, axis=-1)

            def heads(u):
                return u.reshape(bsz, t, nh, d // nh).transpose(0, 2, 1, 3)
            q, k, v = heads(q), heads(k), heads(v)
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // nh)
            a = jax.nn.softmax(jnp.where(causal, -jnp.inf, scores), -1) @ v
            return a.transpose(0, 2, 1, 3).reshape(bsz, t, d) @ wo + bo

        def loss(p, idx, y):
            h = p[0][idx] + p[1][jnp.arange(ctx)]
            for layer in range(s["LAYERS"]):
                wqkv, bqkv, wo, bo, w1, b1, w2, b2, g1, be1, g2, be2 = \
                    p[2 + 12 * layer:14 + 12 * layer]
                h = ln(h + attention(h, wqkv, bqkv, wo, bo), g1, be1)
                h = ln(h + jax.nn.relu(h @ w1 + b1) @ w2 + b2, g2, be2)
            g, b, wh, bh = p[-4:]
            return ce((ln(h, g, b) @ wh + bh).reshape(-1, vocab), y.reshape(-1))

    lr, mom = s["LR"], s["MOMENTUM"]

    @jax.jit
    def update(p, v, x, y):
        val, g = jax.value_and_grad(loss)(p, x, y)
        v = [mom * vi + gi for vi, gi in zip(v, g)]
        return [pi - lr * vi for pi, vi in zip(p, v)], v, val
    state = {"p": params, "v": [jnp.zeros_like(q) for q in params]}
    xs, ys = [jnp.asarray(x) for x, _ in batches], [jnp.asarray(y) for _, y in batches]

    def step(k):
        state["p"], state["v"], val = update(state["p"], state["v"], xs[k % len(xs)],
                                             ys[k % len(ys)])
        return val
    return step, (lambda loss: float(loss)), jax.__version__
