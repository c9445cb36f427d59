"""Dataset: custom sources for GeneratorDataset (random-access, iterable, generator function),
NumpySlicesDataset, then shuffle / map / batch / repeat, the tuple and dict iterators, vision
and transforms operations, and a batch fed to a Cell.

Replace `minispore` with `mindspore` to run it on MindSpore. The images are the digits that
ship inside scikit-learn (MindSpore's tutorial downloads MNIST; there is no internet here).

    python examples/03_dataset.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.dataset import GeneratorDataset, NumpySlicesDataset, transforms, vision

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ds.config.set_seed(0)
digits = load_digits()


class RandomAccess:
    def __init__(self):
        self.images, self.labels = digits.images[:100, :, :, None], digits.target[:100]

    def __getitem__(self, index):
        return self.images[index], self.labels[index]

    def __len__(self):
        return len(self.labels)


class Iterable:
    def __init__(self):
        self.n, self.i = 10, 0

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return np.array([self.i], np.float32), np.array([self.i * 2], np.float32)


def my_generator(start, end):
    for i in range(start, end):
        yield i, i * i


random_access = GeneratorDataset(RandomAccess(), column_names=["image", "label"], shuffle=False)
iterable = GeneratorDataset(Iterable(), column_names=["data", "label"])
generated = GeneratorDataset(lambda: my_generator(3, 6), column_names=["x", "x_squared"])
print("sizes:", random_access.get_dataset_size(), iterable.get_dataset_size(),
      generated.get_dataset_size(), "columns:", generated.get_col_names())
assert [r[1].item() for r in generated.create_tuple_iterator()] == [9, 16, 25]
first = next(iter(random_access.create_dict_iterator(output_numpy=True)))
assert first["image"].shape == (8, 8, 1) and first["label"] == digits.target[0]

# -- pipeline on numpy slices: shuffle, map, batch, repeat
dataset = NumpySlicesDataset({"data": np.arange(10, dtype=np.float32)}, shuffle=False)
dataset = dataset.shuffle(buffer_size=4).map(lambda x: x * 2, input_columns=["data"])
dataset = dataset.batch(4, drop_remainder=True).repeat(2)
batches = [b["data"].asnumpy() for b in dataset.create_dict_iterator()]
print("batches:", [b.tolist() for b in batches])
assert dataset.get_dataset_size() == 4 and len(batches) == 4
assert all(b.shape == (4,) for b in batches) and all(v % 2 == 0 for b in batches for v in b)

# -- image operations: eager on one image, then in a pipeline
image = digits.images[0][:, :, None]
rescaled = vision.Rescale(1.0 / 16.0, 0.0)(image)
normalized = vision.Normalize(mean=[0.3], std=[0.4])(rescaled)
chw = vision.HWC2CHW()(normalized)
print("eager image ops:", image.shape, image.dtype, "->", chw.shape, chw.dtype)
assert chw.shape == (1, 8, 8) and chw.dtype == np.float32 and rescaled.max() <= 1.0

pipeline = random_access.map(transforms.Compose([vision.Rescale(1.0 / 16.0, 0.0),
                                                 vision.HWC2CHW()]), "image")
pipeline = pipeline.map(transforms.TypeCast(ms.int32), "label").batch(32)
images, labels = next(pipeline.create_tuple_iterator())
print("batch:", images.shape, images.dtype, labels.shape, labels.dtype)
assert images.shape == (32, 1, 8, 8) and images.dtype == ms.float32 and labels.dtype == ms.int32

# -- epochs: one pass of the iterator is one epoch
it = pipeline.create_tuple_iterator(num_epochs=2)
per_epoch = [sum(1 for _ in it) for _ in range(2)]
print("batches per epoch:", per_epoch)
assert per_epoch == [4, 4] == [pipeline.get_dataset_size()] * 2

# -- a batch through a network
net = nn.SequentialCell(nn.Flatten(), nn.Dense(64, 10))
logits = net(images)
print("logits:", logits.shape)
assert logits.shape == (32, 10)
print(f"dataset OK ({MODE})")
