"""Tensor: creating tensors (data, numpy, initializers, *_like), attributes, indexing,
arithmetic, concatenation, matmul and numpy conversion, on top-level ops and inside a Cell.

Nothing minispore-specific: replace `import minispore as ms` / `from minispore ...` with
`mindspore` to run it on MindSpore. Not shown because minispore lacks them: sparse tensors
(CSRTensor, COOTensor) and Tensor.strides.

    python examples/02_tensor.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys

import numpy as np

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.common.initializer import Normal, One

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(0)

# -- creating tensors
x_data = Tensor([1, 0, 1, 0])
np_array = np.array([1, 0, 1, 0])
x_np = Tensor(np_array)
tensor1 = Tensor(shape=(2, 2), dtype=ms.float32, init=One())
tensor2 = Tensor(shape=(2, 2), dtype=ms.float32, init=Normal())
print("x_data:", x_data, x_data.dtype)
print("tensor1 (One):\n", tensor1)
print("tensor2 (Normal) std:", tensor2.asnumpy().std())
x_ones, x_zeros = ops.ones_like(x_data), ops.zeros_like(x_data)
print(f"Ones: {x_ones}\nZeros: {x_zeros}")
assert x_data.dtype == ms.int64 and tensor1.dtype == ms.float32
assert (tensor1.asnumpy() == 1).all() and x_ones.asnumpy().sum() == 4

# -- attributes
x = Tensor(np.array([[1, 2], [3, 4]]), ms.int32)
print("shape:", x.shape, "dtype:", x.dtype, "itemsize:", x.itemsize, "nbytes:", x.nbytes,
      "ndim:", x.ndim, "size:", x.size)
assert (x.shape, x.itemsize, x.nbytes, x.ndim, x.size) == ((2, 2), 4, 16, 2, 4)

# -- indexing
t = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))
print("First row:", t[0], "value [1][1]:", t[1][1], "last column:", t[:, -1], "t[..., 0]:",
      t[..., 0])
assert t[1][1].item() == 3.0 and t[:, -1].asnumpy().tolist() == [1.0, 3.0]
assert t[t > 1].asnumpy().tolist() == [2.0, 3.0]

# -- operations
a, b = Tensor(np.array([1, 2, 3]), ms.float32), Tensor(np.array([4, 5, 6]), ms.float32)
print("add:", a + b, "sub:", a - b, "mul:", a * b, "div:", b / a, "mod:", b % a, "floordiv:",
      b // a)
assert (b / a).asnumpy().tolist() == [4.0, 2.5, 2.0] and (b % a).asnumpy().tolist() == [0, 1, 0]
data1 = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))
data2 = Tensor(np.array([[4, 5], [6, 7]]).astype(np.float32))
print("concat:", ops.cat((data1, data2), axis=0).shape, "stack:", ops.stack([data1, data2]).shape)
assert ops.cat((data1, data2), axis=0).shape == (4, 2)
assert ops.stack([data1, data2]).shape == (2, 2, 2)
prod = data1 @ data2
assert np.allclose(prod.asnumpy(), data1.asnumpy() @ data2.asnumpy())
assert np.allclose(ops.matmul(data1, data2).asnumpy(), prod.asnumpy())

# -- numpy conversion: Tensor.from_numpy shares memory, asnumpy copies
n = np.ones(5, np.float32)
t = Tensor.from_numpy(n)
np.add(n, 1, out=n)
print("from_numpy after n += 1:", t)
assert (t.asnumpy() == 2).all()
c = t.asnumpy()
c[0] = 100
assert t.asnumpy()[0] == 2


# -- the same tensor code compiled in a Cell (a graph in GRAPH_MODE)
class TensorOps(nn.Cell):
    def construct(self, p, q):
        r = ops.cat((p * q, p + 1), axis=0)
        return r[:, -1].sum() + (p @ q).mean()


out = TensorOps()(data1, data2)
expected = (np.concatenate([data1.asnumpy() * data2.asnumpy(), data1.asnumpy() + 1])[:, -1].sum()
            + (data1.asnumpy() @ data2.asnumpy()).mean())
print("cell result:", out, "expected:", expected)
assert np.isclose(out.asnumpy(), expected)
print(f"tensor OK ({MODE})")
