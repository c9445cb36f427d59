"""Tensor(shape=, dtype=, init=) (MindSpore initialises lazily at init_data(); minispore at
once, with the same values), Tensor.from_numpy sharing memory, init_data returning self."""
import numpy as np

import minispore as ms
from minispore import Tensor
from minispore.common.initializer import Normal, One, initializer


def test_tensor_init():
    t = Tensor(shape=(2, 3), dtype=ms.float16, init=One())
    assert t.shape == (2, 3) and t.dtype == ms.float16 and (t.asnumpy() == 1).all()
    assert t.init_data() is t
    assert Tensor(shape=4, dtype=ms.float32, init="zeros").asnumpy().tolist() == [0, 0, 0, 0]
    ms.set_seed(5)
    a = Tensor(shape=(3, 3), dtype=ms.float32, init=Normal()).asnumpy()
    ms.set_seed(5)
    b = initializer(Normal(), (3, 3), ms.float32).asnumpy()
    assert np.array_equal(a, b) and a.std() > 0


def test_from_numpy_shares_memory():
    n = np.zeros(3, np.float32)
    t = Tensor.from_numpy(n)
    n[1] = 7
    assert t.asnumpy().tolist() == [0, 7, 0] and t.dtype == ms.float32
