"""Quick start: data pipeline -> network -> value_and_grad training loop -> test -> checkpoint.

The MindSpore beginner quick start, with the 8x8 digits that ship inside scikit-learn instead
of a downloaded MNIST (there is no internet here), so the network is 64-64-64-10 and the
Rescale divides by 16. Everything else is MindSpore 2.x API: to run it on MindSpore, replace
`import minispore as ms` / `from minispore ...` with `mindspore`.

    python examples/01_quick_start.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.dataset import GeneratorDataset, transforms, vision

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(1)
ds.config.set_seed(1)


class Digits:
    """A random-access source: 8x8x1 images (values 0..16) and integer labels."""

    def __init__(self, train):
        d = load_digits()
        idx = np.arange(len(d.target))
        idx = idx[idx % 5 != 0] if train else idx[idx % 5 == 0]
        self.images, self.labels = d.images[idx, :, :, None], d.target[idx]

    def __getitem__(self, i):
        return self.images[i], self.labels[i]

    def __len__(self):
        return len(self.labels)


def datapipe(train, batch_size):
    dataset = GeneratorDataset(Digits(train), ["image", "label"], shuffle=train)
    image_transforms = [vision.Rescale(1.0 / 16.0, 0), vision.Normalize(mean=(0.3,), std=(0.4,)),
                        vision.HWC2CHW()]
    dataset = dataset.map(image_transforms, "image")
    dataset = dataset.map(transforms.TypeCast(ms.int32), "label")
    return dataset.batch(batch_size)


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(8 * 8, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 10))

    def construct(self, x):
        return self.dense_relu_sequential(self.flatten(x))


train_dataset, test_dataset = datapipe(True, 32), datapipe(False, 64)
for image, label in test_dataset.create_tuple_iterator():
    print(f"Shape of image [N, C, H, W]: {image.shape} {image.dtype}")
    print(f"Shape of label: {label.shape} {label.dtype}")
    break

model = Network()
print(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.SGD(model.trainable_params(), 1e-1)


def forward_fn(data, label):
    logits = model(data)
    return loss_fn(logits, label), logits


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    optimizer(grads)
    return loss


def train(model, dataset):
    model.set_train()
    losses = []
    for data, label in dataset.create_tuple_iterator():
        losses.append(train_step(data, label).asnumpy())
    return float(np.mean(losses))


def test(model, dataset, loss_fn):
    model.set_train(False)
    total, test_loss, correct = 0, 0.0, 0
    for data, label in dataset.create_tuple_iterator():
        pred = model(data)
        total += len(data)
        test_loss += loss_fn(pred, label).asnumpy()
        correct += (pred.argmax(1) == label).asnumpy().sum()
    test_loss /= dataset.get_dataset_size()
    print(f"Test: Accuracy: {100 * correct / total:>0.1f}%, Avg loss: {test_loss:>8f}")
    return correct / total


epoch_losses = []
for t in range(3):
    epoch_losses.append(train(model, train_dataset))
    print(f"Epoch {t + 1} train loss: {epoch_losses[-1]:>7f}")
    accuracy = test(model, test_dataset, loss_fn)
assert epoch_losses[-1] < epoch_losses[0], epoch_losses
assert accuracy > 0.85, accuracy

with tempfile.TemporaryDirectory() as tmp:
    ms.save_checkpoint(model, os.path.join(tmp, "model.ckpt"))
    new_model = Network()
    param_not_load, _ = ms.load_param_into_net(new_model,
                                               ms.load_checkpoint(os.path.join(tmp, "model.ckpt")))
assert param_not_load == [], param_not_load
reloaded = test(new_model, test_dataset, loss_fn)
assert reloaded == accuracy, (reloaded, accuracy)
print(f"quick start OK ({MODE}): accuracy {100 * accuracy:.1f}%")
