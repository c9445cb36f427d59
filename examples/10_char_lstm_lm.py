"""A character-level language model: nn.Embedding -> nn.LSTM (2 layers) -> nn.Dense trained
to predict the next character of the Zen of Python (the text of the standard library's `this`
module, stored rot13-encoded in `this.s`: no download), with a train step over
value_and_grad (jitted in graph mode, op by op in PyNative); then it writes a few characters greedily from a prompt.

Replace `minispore` with `mindspore` to run it on MindSpore.

    python examples/10_char_lstm_lm.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import codecs
import os
import sys
import time

import numpy as np

import minispore as ms
from minispore import nn, ops

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(1)          # seeds numpy's global generator too, which nn.LSTM's init draws from

with open(os.devnull, "w") as quiet:      # `import this` prints the poem; keep stdout clean
    stdout, sys.stdout = sys.stdout, quiet
    import this
    sys.stdout = stdout
text = codecs.decode(this.s, "rot13")
chars = sorted(set(text))
vocab = len(chars)
ids = np.array([chars.index(c) for c in text], np.int32)
print(f"text: {len(text)} characters, vocabulary {vocab}")

seq_len, batch_size, steps, hidden = 32, 32, 250, 96


class CharLM(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, hidden, num_layers=2, batch_first=True)
        self.head = nn.Dense(hidden, vocab)

    def construct(self, x):
        out, _ = self.lstm(self.embedding(x))            # (batch, seq_len, hidden)
        return self.head(out)                           # (batch, seq_len, vocab)


model = CharLM()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Adam(model.trainable_params(), learning_rate=0.01)


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


rng = np.random.default_rng(0)
starts_all = np.arange(len(ids) - seq_len - 1)
losses = []
model.set_train()
t0 = time.perf_counter()
for step in range(steps):
    starts = rng.choice(starts_all, batch_size)
    x = np.stack([ids[s:s + seq_len] for s in starts])
    y = np.stack([ids[s + 1:s + seq_len + 1] for s in starts])
    losses.append(float(train_step(ms.Tensor(x), ms.Tensor(y)).asnumpy()))
    if step % 50 == 0 or step == steps - 1:
        print(f"step {step:3d}: loss {losses[-1]:.4f}")
print(f"{steps} steps in {time.perf_counter() - t0:.1f} s")

final = float(np.mean(losses[-10:]))
print(f"final loss: {final:.6g}")
assert losses[0] > 3.0, losses[0]                       # about log(vocab) untrained
assert final < 1.0, final                               # MindSpore 2.10: 0.78

# greedy writing: the last seq_len characters in, the most likely next character out (a fixed
# input shape, so GRAPH_MODE compiles once)
model.set_train(False)
prompt = "Beautiful is better than ugly.\nExplicit is "
window = [chars.index(c) for c in prompt][-seq_len:]
written = ""
for _ in range(40):
    logits = model(ms.Tensor(np.array([window], np.int32)))
    nxt = int(ops.argmax(logits[0, -1]).asnumpy())
    written += chars[nxt]
    window = window[1:] + [nxt]
print("prompt:", repr(prompt), "-> wrote:", repr(written))
print(f"char lstm OK ({MODE})")
