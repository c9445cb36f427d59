"""Network: a Cell with sub-cells, printing the model, a forward pass, softmax prediction,
the layers one by one (Flatten, Dense, ReLU, SequentialCell, Softmax), and the parameters by
name.

Nothing minispore-specific: replace `import minispore as ms` / `from minispore ...` with
`mindspore` to run it on MindSpore. Sizes are 8x8 inputs (the digits) instead of 28x28.

    python examples/04_network.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np

import minispore as ms
from minispore import nn, ops

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(0)


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(8 * 8, 32, weight_init="normal", bias_init="zeros"), nn.ReLU(),
            nn.Dense(32, 32, weight_init="normal", bias_init="zeros"), nn.ReLU(),
            nn.Dense(32, 10, weight_init="normal", bias_init="zeros"))

    def construct(self, x):
        x = self.flatten(x)
        return self.dense_relu_sequential(x)


model = Network()
print(model)
X = ops.ones((1, 8, 8), ms.float32)
logits = model(X)
pred_probab = nn.Softmax(axis=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"logits {logits.shape}, predicted class: {y_pred}")
assert logits.shape == (1, 10) and np.isclose(pred_probab.asnumpy().sum(), 1.0, atol=1e-6)

# -- the layers one by one
input_image = ops.ones((3, 8, 8), ms.float32)
flat_image = nn.Flatten()(input_image)
hidden1 = nn.Dense(in_channels=64, out_channels=20)(flat_image)
print("flatten:", flat_image.shape, "dense:", hidden1.shape)
assert flat_image.shape == (3, 64) and hidden1.shape == (3, 20)
hidden1 = nn.ReLU()(hidden1)
assert hidden1.asnumpy().min() >= 0
seq_modules = nn.SequentialCell(nn.Flatten(), nn.Dense(64, 20), nn.ReLU(), nn.Dense(20, 10))
logits = seq_modules(input_image)
probs = nn.Softmax(axis=1)(logits)
assert logits.shape == (3, 10) and np.allclose(probs.asnumpy().sum(1), 1.0, atol=1e-6)

# -- parameters
names = []
for name, param in model.parameters_and_names():
    print(f"Layer: {name}  Size: {param.shape}  first values: {param[:2].asnumpy().ravel()[:2]}")
    names.append(name)
assert names == ["dense_relu_sequential.0.weight", "dense_relu_sequential.0.bias",
                 "dense_relu_sequential.2.weight", "dense_relu_sequential.2.bias",
                 "dense_relu_sequential.4.weight", "dense_relu_sequential.4.bias"], names
assert model.trainable_params()[0].shape == (32, 64)         # Dense weight is (out, in)
n_params = sum(p.size for p in model.trainable_params())
print("trainable parameters:", n_params)
assert n_params == 64 * 32 + 32 + 32 * 32 + 32 + 32 * 10 + 10
print(f"network OK ({MODE})")
