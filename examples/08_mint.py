"""mint: MindSpore's PyTorch-style API. A network written with mint.nn layers (PyTorch's
defaults: Dropout(p) drops p, Linear/Conv2d with PyTorch's init), mint functions (dim/keepdim,
(values, indices) returns, mint.transpose swapping two axes), mint.nn.functional, and
mint.optim.AdamW, trained by a jitted step over value_and_grad on the digits.

Replace `minispore` with `mindspore` to run it on MindSpore (on a device with mint kernels: its
CPU build lacks several of them).

    python examples/08_mint.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
from minispore import mint, nn
from minispore.mint import nn as mnn
from minispore.mint.nn import functional as F

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(4)

# -- mint functions: PyTorch's signatures, not ops'
x = mint.arange(6, dtype=ms.float32).reshape(2, 3)
print("transpose(x, 0, 1):", mint.transpose(x, 0, 1).shape)          # swaps two axes: (3, 2)
values, indices = mint.max(x, dim=1)
print("max(x, dim=1):", values.asnumpy().tolist(), indices.asnumpy().tolist())
print("split(x, 1, dim=1):", [t.shape for t in mint.split(x, 1, dim=1)])
print("std (unbiased):", round(float(mint.std(x).asnumpy()), 4))


class Net(nn.Cell):
    """8x8 digits -> conv -> pool -> linear, every layer a mint.nn one."""

    def __init__(self):
        super().__init__()
        self.conv = mnn.Conv2d(1, 8, 3, padding=1)          # PyTorch defaults: bias, padding 0
        self.act = mnn.ReLU()
        self.pool = mnn.MaxPool2d(2)
        self.flatten = mnn.Flatten()                        # start_dim=1
        self.drop = mnn.Dropout(p=0.1)                      # drops 10%
        self.fc = mnn.Linear(8 * 4 * 4, 10)

    def construct(self, x):
        h = self.pool(self.act(self.conv(x)))
        return self.fc(self.drop(self.flatten(h)))


digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]           # (N, 1, 8, 8)
labels = digits.target.astype(np.int64)
train_x, train_y = images[300:], labels[300:]
test_x, test_y = ms.Tensor(images[:300]), labels[:300]

net = Net()
loss_fn = mnn.CrossEntropyLoss(label_smoothing=0.05)
optimizer = mint.optim.AdamW(net.trainable_params(), lr=1e-2, weight_decay=1e-2)


def forward(data, label):
    return loss_fn(net(data), label)


grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)


@ms.jit
def train_step(data, label):
    loss, grads = grad_fn(data, label)
    optimizer(grads)
    return loss


rng = np.random.default_rng(0)
losses = []
for epoch in range(3):
    net.set_train(True)
    order = rng.permutation(len(train_x))
    for i in range(0, len(order) - 63, 64):
        b = order[i:i + 64]
        losses.append(float(train_step(ms.Tensor(train_x[b]), ms.Tensor(train_y[b])).asnumpy()))
    print(f"epoch {epoch + 1}: loss {np.mean(losses[-20:]):.4f}")

net.set_train(False)
probs = F.softmax(net(test_x), dim=1)
top_p, top_i = mint.topk(probs, 1, dim=1)
accuracy = float((top_i.asnumpy()[:, 0] == test_y).mean())
print(f"test accuracy: {accuracy:.3f}")
assert losses[-1] < losses[0] and accuracy > 0.85, (losses[0], losses[-1], accuracy)
print(f"mint OK ({MODE})")
