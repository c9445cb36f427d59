"""A convolutional autoencoder: Conv2d encoders and Conv2dTranspose decoders squeeze the 8x8
digits of scikit-learn through a 4x2x2 code and rebuild them, trained with Adam on the mean
squared reconstruction error by a value_and_grad step (jitted in graph mode, op by op in
PyNative).

Replace `minispore` with `mindspore` to run it on MindSpore. The data are the digits that ship
inside scikit-learn (no download).

    python examples/13_conv_autoencoder.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
import minispore.dataset as ds
from minispore import nn

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(3)
ds.config.set_seed(3)
epochs, batch_size, learning_rate = 6, 64, 0.01

digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]          # (N, 1, 8, 8) in [0, 1]
train_dataset = ds.NumpySlicesDataset({"image": images[200:]}, shuffle=True).batch(batch_size)
test_images = ms.Tensor(images[:200])


class AutoEncoder(nn.Cell):
    def __init__(self):
        super().__init__()
        # 8x8 -> 4x4 -> 2x2 ('same' with stride 2 halves), then back: Conv2dTranspose 'same'
        # with stride 2 doubles
        self.encoder = nn.SequentialCell(
            nn.Conv2d(1, 8, 3, stride=2, has_bias=True), nn.ReLU(),
            nn.Conv2d(8, 4, 3, stride=2, has_bias=True), nn.ReLU())
        self.decoder = nn.SequentialCell(
            nn.Conv2dTranspose(4, 8, 3, stride=2, has_bias=True), nn.ReLU(),
            nn.Conv2dTranspose(8, 1, 3, stride=2, has_bias=True), nn.Sigmoid())

    def construct(self, x):
        return self.decoder(self.encoder(x))


model = AutoEncoder()
loss_fn = nn.MSELoss()
optimizer = nn.Adam(model.trainable_params(), learning_rate)


def forward_fn(x):
    return loss_fn(model(x), x)


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)


def train_step(x):
    loss, grads = grad_fn(x)
    optimizer(grads)
    return loss


if MODE == "graph":                  # compiled as one graph; PyNative runs it op by op
    train_step = ms.jit(train_step)


def test_loss():
    model.set_train(False)
    return float(forward_fn(test_images).asnumpy())


start = test_loss()
for epoch in range(epochs):
    model.set_train()
    losses = [float(train_step(x).asnumpy()) for (x,) in train_dataset.create_tuple_iterator()]
    print(f"Epoch {epoch + 1}: train loss {np.mean(losses):.5f}, test loss {test_loss():.5f}")
final = test_loss()
print(f"initial loss: {start:.6g}")
print(f"final loss: {final:.6g}")
# an untrained decoder outputs about 0.5 everywhere (test loss ~0.18); after 6 epochs it is
# ~0.036 (the same in both modes) as the decoder rebuilds the strokes
assert final < 0.05 and final < start * 0.4, (start, final)
print(f"conv autoencoder OK ({MODE})")
