"""ops.truncate_div / ops.TruncateDiv / div(rounding_mode='trunc'): MindSpore's TruncateDiv,
the quotient rounded towards zero in the operands' promoted dtype (two integers: exactly, as an
integer; an integer and a float: the float), the same in both modes."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops

I32 = np.array([123456789, -123456789, 2**31 - 1, 7, -7, 7, -7, 0, 6], np.int32)
BY = np.array([10, 10, 3, 2, 2, -2, -2, 5, -3], np.int32)


def _trunc(a, b):
    return ops.truncate_div(a, b)


def _in(mode, fn, *args):
    ms.set_context(mode=mode)
    return ms.jit(fn)(*args) if mode == ms.GRAPH_MODE else fn(*args)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_integers_divide_exactly_towards_zero(mode):
    out = _in(mode, _trunc, Tensor(I32), Tensor(BY))
    want = np.trunc(I32.astype(np.float64) / BY).astype(np.int32)
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), want)      # 12345678, not float32's 12345679


# dtypes MindSpore 2.10 gives (run on MindSpore: int32/float -> float, int32/int64 -> int64)
@pytest.mark.parametrize("a,b,dtype", [
    (np.array([7, -7, 5], np.int32), 0.75, ms.float32),
    (np.array([7, -7, 5], np.int32), np.array([2, 2, -3], np.int64), ms.int64),
    (np.array([7, -7, 5], np.int32), np.array([2.0, 2.0, -3.0], np.float16), ms.float16),
    (np.array([7, -7, 5], np.int32), np.array([2.0, 2.0, -3.0], np.float32), ms.float32),
    (np.array([2, 2, 3], np.uint8), np.array([7, -7, 5], np.int32), ms.int32),
    (np.array([7, -7], np.int32), 2, ms.int32),
])
def test_the_result_has_the_promoted_dtype(a, b, dtype):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    b_in = Tensor(b) if isinstance(b, np.ndarray) else b
    for out in (ops.truncate_div(Tensor(a), b_in), ops.TruncateDiv()(Tensor(a), b_in),
                ops.div(Tensor(a), b_in, rounding_mode="trunc")):
        assert out.dtype == dtype
        want = np.trunc(np.asarray(a, np.float64) / np.asarray(b, np.float64))
        np.testing.assert_array_equal(out.asnumpy().astype(np.float64), want)
