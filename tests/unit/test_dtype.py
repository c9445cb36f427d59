"""dtypes print and promote as MindSpore's do."""
import ml_dtypes
import numpy as np
import pytest

import minispore as ms
from minispore.core import dtype as dt


def test_names_and_numpy_types():
    assert str(ms.float32) == "Float32" and repr(ms.float32) == "mindspore.float32"
    # MindSpore 2.10: str "Bool", repr "mindspore.bool"
    assert str(ms.bool_) == "Bool" and repr(ms.bool_) == "mindspore.bool"
    assert str(ms.bfloat16) == "BFloat16"
    assert ms.dtype_to_nptype(ms.float16) is np.float16
    assert ms.dtype_to_nptype(ms.bfloat16) is ml_dtypes.bfloat16
    assert ms.dtype.float32 is ms.float32


@pytest.mark.parametrize("a, b, out", [
    (dt.int32, dt.float32, dt.float32), (dt.uint8, dt.int8, dt.int16),
    (dt.float16, dt.bfloat16, dt.float32), (dt.bool_, dt.int8, dt.int8),
    (dt.int64, dt.float16, dt.float16), (dt.float32, dt.float64, dt.float64),
    (dt.int16, dt.int64, dt.int64), (dt.uint8, dt.int64, dt.int64),
    (dt.uint32, dt.bool_, dt.uint32), (dt.uint64, dt.uint64, dt.uint64),   # MindSpore 2.10
])
def test_tensor_tensor_promotion(a, b, out):
    assert dt.promote(a, b) is out and dt.promote(b, a) is out


def test_scalar_promotion_and_defaults():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert ms.Tensor(1).dtype is ms.int64
    assert ms.Tensor(1.0).dtype is ms.float32
    assert ms.Tensor(True).dtype is ms.bool_
    assert ms.Tensor([1, 2]).dtype is ms.int64
    assert ms.Tensor(np.zeros(2)).dtype is ms.float64
    h = ms.Tensor(np.ones(2, np.float16))
    assert (h + 2.5).dtype is ms.float16          # a Python float keeps the float dtype
    i = ms.Tensor(np.ones(2, np.int32))
    assert (i + 2).dtype is ms.int32              # a Python int keeps the int dtype
    assert (i + 2.5).dtype is ms.float32          # int tensor with a float scalar -> float32
    assert (i / 2).dtype is ms.float32            # true division gives float
    np.testing.assert_allclose((ms.Tensor([1, 2]) / 2).asnumpy(), [0.5, 1.0])
    b = ms.Tensor([True, False])
    assert (b + 1).dtype is ms.int64


def test_unsupported_dtype_is_clear():
    with pytest.raises(TypeError, match="not supported"):
        ms.Tensor(np.zeros(2, np.complex64))
