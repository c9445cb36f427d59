"""A small GPT: a decoder-only transformer (token + position nn.Embedding, 2 pre-norm
nn.TransformerEncoderLayer blocks with 4 heads under a causal attn_mask, a final LayerNorm and a
Dense head) trained as a character-level language model on the Zen of Python (`this.s`,
rot13-decoded: text that ships with Python), then sampled greedily.

Replace `minispore` with `mindspore` to run it on MindSpore.

    python examples/12_small_gpt.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import codecs
import contextlib
import io
import os
import sys
import time

import numpy as np

import minispore as ms
from minispore import nn

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(0)

with contextlib.redirect_stdout(io.StringIO()):      # importing `this` prints the Zen
    import this
text = codecs.decode(this.s, "rot13")
chars = sorted(set(text))
vocab = len(chars)
ids = np.array([chars.index(c) for c in text], np.int32)

context, d_model, heads, layers = 64, 32, 4, 2
batch_size, steps, learning_rate = 16, 250, 1e-2
target_loss = 1.0                    # from ln(45) = 3.81 at the start (0.375 here)


class SmallGPT(nn.Cell):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(context, d_model)
        block = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, norm=nn.LayerNorm((d_model,)))
        self.head = nn.Dense(d_model, vocab)
        # position t attends to positions <= t: -inf above the diagonal is added to the scores
        self.causal = ms.Tensor(np.triu(np.full((context, context), -np.inf, np.float32), 1))
        self.position_ids = ms.Tensor(np.arange(context, dtype=np.int32))

    def construct(self, x):
        h = self.tokens(x) + self.positions(self.position_ids)
        h = self.blocks(h, src_mask=self.causal)
        return self.head(h)


model = SmallGPT()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Adam(model.trainable_params(), learning_rate)


def forward_fn(x, y):
    logits = model(x)
    return loss_fn(logits.reshape(-1, vocab), y.reshape(-1))


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)


def train_step(x, y):
    loss, grads = grad_fn(x, y)
    optimizer(grads)
    return loss


if MODE == "graph":                  # compiled as one graph; PyNative runs it op by op
    train_step = ms.jit(train_step)


rng = np.random.RandomState(0)


def batch():
    starts = rng.randint(0, len(ids) - context - 1, batch_size)
    x = np.stack([ids[s:s + context] for s in starts])
    y = np.stack([ids[s + 1:s + context + 1] for s in starts])
    return ms.Tensor(x), ms.Tensor(y)


model.set_train()
losses, step_times = [], []
for step in range(steps):
    x, y = batch()
    t0 = time.perf_counter()
    loss = float(train_step(x, y).asnumpy())
    step_times.append(time.perf_counter() - t0)
    losses.append(loss)
    if step % 50 == 0 or step == steps - 1:
        print(f"step {step:3d}: loss {loss:.4f}")
final = float(np.mean(losses[-10:]))
step_ms = 1000 * float(np.median(step_times[10:]))
print(f"training step ({MODE}): {step_ms:.1f} ms (median; the first call compiles)")

model.set_train(False)
out = list(ids[:context])            # the first 64 characters, then greedy continuation
for _ in range(32):                  # the likeliest next character, again and again
    logits = model(ms.Tensor(np.array([out[-context:]], np.int32))).asnumpy()
    out.append(int(logits[0, -1].argmax()))
print("sample:", repr("".join(chars[i] for i in out[context:])))

print(f"final loss: {final:.6g}")
assert final < target_loss, f"the loss {final:.4f} did not fall below {target_loss}"
print(f"small gpt OK ({MODE})")
