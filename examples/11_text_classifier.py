"""A text classifier: nn.Embedding -> a bidirectional nn.LSTM over padded token sequences with
seq_length -> nn.Dense, trained to tell which of three standard-library modules (calendar,
tarfile, argparse) a line of Python source comes from. The lines are read from the modules'
source with `inspect.getsource`: no download. The final states of both directions (taken at
each line's own length, as seq_length makes them) feed the classifier.

Replace `minispore` with `mindspore` to run it on MindSpore.

    python examples/11_text_classifier.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import argparse
import calendar
import collections
import inspect
import os
import re
import sys
import tarfile
import time

import numpy as np

import minispore as ms
from minispore import nn, ops

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(3)          # seeds numpy's global generator too, which nn.LSTM's init draws from

# -- the data: (tokens of a line, module index), balanced, shuffled, 80/20 split
modules = (calendar, tarfile, argparse)
max_tokens, per_class = 16, 480
rng = np.random.default_rng(0)
samples = []
for label, module in enumerate(modules):
    lines = [ln.strip() for ln in inspect.getsource(module).splitlines()]
    lines = sorted({ln for ln in lines if len(ln) >= 12})     # distinct, order fixed
    for i in rng.permutation(len(lines))[:per_class]:
        samples.append((re.findall(r"[A-Za-z_]+|\d+|\S", lines[i])[:max_tokens], label))
samples = [samples[i] for i in rng.permutation(len(samples))]
split = int(0.8 * len(samples))
train, test = samples[:split], samples[split:]

counts = collections.Counter(tok for tokens, _ in train for tok in tokens)
words = ["<pad>", "<unk>"] + [w for w, _ in counts.most_common(1000)]
index = {w: i for i, w in enumerate(words)}


def encode(rows):
    ids = np.zeros((len(rows), max_tokens), np.int32)           # 0 pads
    lengths = np.array([len(tokens) for tokens, _ in rows], np.int32)
    for r, (tokens, _) in enumerate(rows):
        ids[r, :len(tokens)] = [index.get(t, 1) for t in tokens]
    return ids, lengths, np.array([label for _, label in rows], np.int32)


train_ids, train_len, train_y = encode(train)
test_ids, test_len, test_y = encode(test)
print(f"{len(train)} training lines, {len(test)} test lines, vocabulary {len(words)}, "
      f"classes {[m.__name__ for m in modules]}")


class LineClassifier(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(len(words), 32)
        self.lstm = nn.LSTM(32, 48, batch_first=True, bidirectional=True)
        self.head = nn.Dense(96, len(modules))

    def construct(self, ids, lengths):
        _, (h_n, _) = self.lstm(self.embedding(ids), None, lengths)  # h_n (2, batch, 48)
        return self.head(ops.concat((h_n[0], h_n[1]), 1))


model = LineClassifier()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Adam(model.trainable_params(), learning_rate=0.01)


def forward_fn(ids, lengths, y):
    return loss_fn(model(ids, lengths), y)


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)


def train_step(ids, lengths, y):
    loss, grads = grad_fn(ids, lengths, y)
    optimizer(grads)
    return loss


if MODE == "graph":                  # compiled as one graph; PyNative runs it op by op
    train_step = ms.jit(train_step)


def accuracy(ids, lengths, y):
    model.set_train(False)
    predicted = model(ms.Tensor(ids), ms.Tensor(lengths)).argmax(1).asnumpy()
    return float((predicted == y).mean())


batch_size, epochs = 64, 6
batches = len(train) // batch_size                 # whole batches only: one input shape
t0 = time.perf_counter()
epoch_losses = []
for epoch in range(epochs):
    model.set_train()
    order = rng.permutation(len(train))
    losses = []
    for b in range(batches):
        sel = order[b * batch_size:(b + 1) * batch_size]
        losses.append(float(train_step(ms.Tensor(train_ids[sel]), ms.Tensor(train_len[sel]),
                                       ms.Tensor(train_y[sel])).asnumpy()))
    epoch_losses.append(float(np.mean(losses)))
    print(f"epoch {epoch + 1}: loss {epoch_losses[-1]:.4f}")
print(f"{epochs} epochs in {time.perf_counter() - t0:.1f} s")
test_accuracy = accuracy(test_ids, test_len, test_y)
print(f"final loss: {epoch_losses[-1]:.6g}")
print(f"test accuracy: {100 * test_accuracy:.1f}% (chance {100 / len(modules):.1f}%)")
assert epoch_losses[-1] < 0.5 * epoch_losses[0], epoch_losses
assert test_accuracy > 0.7, test_accuracy
print(f"text classifier OK ({MODE})")
