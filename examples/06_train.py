"""Train: hyper-parameters, loss function and optimizer, a jitted train step over
value_and_grad with a test loop, then the same network trained by the high-level Model API
with LossMonitor/TimeMonitor, a custom Callback, and Model.eval with the Accuracy metric.

Replace `minispore` with `mindspore` to run it on MindSpore. The data are the digits that ship
inside scikit-learn (MindSpore's tutorial downloads MNIST; there is no internet here).

    python examples/06_train.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.train import Accuracy, Callback, LossMonitor, Model, TimeMonitor

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(2)
ds.config.set_seed(2)
epochs, batch_size, learning_rate = 3, 32, 0.05

digits = load_digits()
images = (digits.images.reshape(-1, 64) / 16.0).astype(np.float32)
labels = digits.target.astype(np.int32)
train_dataset = ds.NumpySlicesDataset({"image": images[300:], "label": labels[300:]},
                                      shuffle=True).batch(batch_size)
test_dataset = ds.NumpySlicesDataset({"image": images[:300], "label": labels[:300]},
                                     shuffle=False).batch(100)


def network():
    return nn.SequentialCell(nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 10))


# -- a hand-written loop: jitted step over value_and_grad
model = network()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Momentum(model.trainable_params(), learning_rate, momentum=0.9)


def forward_fn(data, label):
    logits = model(data)
    return loss_fn(logits, label), logits


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


@ms.jit
def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    optimizer(grads)
    return loss


def test_loop(model, dataset):
    model.set_train(False)
    correct, total = 0, 0
    for data, label in dataset.create_tuple_iterator():
        correct += (model(data).argmax(1) == label).asnumpy().sum()
        total += len(label)
    return correct / total


mean_losses = []
for t in range(epochs):
    model.set_train()
    losses = [train_step(data, label).asnumpy() for data, label in
              train_dataset.create_tuple_iterator()]
    mean_losses.append(float(np.mean(losses)))
    accuracy = test_loop(model, test_dataset)
    print(f"Epoch {t + 1}: loss {mean_losses[-1]:.4f}, test accuracy {100 * accuracy:.1f}%")
assert mean_losses[-1] < mean_losses[0] * 0.5, mean_losses
assert accuracy > 0.85, accuracy


# -- the same with Model
class StepCounter(Callback):
    def __init__(self):
        self.steps = 0

    def on_train_step_end(self, run_context):
        self.steps += 1


counter = StepCounter()
net = network()
trainer = Model(net, loss_fn=nn.CrossEntropyLoss(),
                optimizer=nn.Momentum(net.trainable_params(), learning_rate, 0.9),
                metrics={"accuracy": Accuracy()})
before = trainer.eval(test_dataset)["accuracy"]
trainer.train(epochs, train_dataset, callbacks=[LossMonitor(20), TimeMonitor(), counter])
after = trainer.eval(test_dataset)
print(f"Model: accuracy {100 * before:.1f}% before training, {100 * after['accuracy']:.1f}% after")
assert counter.steps == epochs * train_dataset.get_dataset_size(), counter.steps
assert after["accuracy"] > 0.85 and after["accuracy"] > before + 0.3, (before, after)
predicted = trainer.predict(ms.Tensor(images[:5])).argmax(1).asnumpy()
print("predict:", predicted, "labels:", labels[:5])
print(f"train OK ({MODE})")
