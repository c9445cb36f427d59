"""ops.isnan, ops.isinf, ops.isfinite, ops.logical_xor, ops.clamp and ops.clip (thin functions
over the elementwise ops) as MindSpore 2.10 gives them: values and bool dtype in both modes, the
dtypes each takes, clamp's promotion with Tensor bounds, its gradient and its argument errors.
Every expected value and message was printed by MindSpore 2.10 (CPU), each case run alone."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops

F32 = np.float32
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3.5], F32)


def _value_tests(x):
    return ops.isnan(x), ops.isinf(x), ops.isfinite(x), ops.logical_xor(x > 0, x < 2)


def test_isnan_isinf_isfinite_logical_xor_values(mode):
    got = ms.jit(_value_tests)(Tensor(SPECIAL)) if mode == "graph" else \
        _value_tests(Tensor(SPECIAL))
    want = ([False, True, False, False, False, False],
            [False, False, True, True, False, False],
            [True, False, False, False, True, True],
            [False, False, True, True, True, True])
    for g, w in zip(got, want):
        assert g.dtype == ms.bool_
        assert g.asnumpy().tolist() == w


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_value_tests_on_other_floats(dtype):
    x = Tensor(np.array([np.nan, np.inf, 1], dtype))
    assert ops.isnan(x).asnumpy().tolist() == [True, False, False]
    assert ops.isinf(x).asnumpy().tolist() == [False, True, False]
    assert ops.isfinite(x).asnumpy().tolist() == [False, False, True]
    assert ops.isinf(Tensor(np.float32(np.inf))).asnumpy().item() is True
    assert ops.isfinite(Tensor(np.float32(np.inf))).asnumpy().item() is False


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_])
def test_integer_and_bool_inputs(dtype):
    """MindSpore 2.10: never NaN, always finite; isinf has no CPU kernel for them."""
    x = Tensor(np.array([1, 0, 1], dtype))
    assert ops.isnan(x).asnumpy().tolist() == [False] * 3
    assert ops.isfinite(x).asnumpy().tolist() == [True] * 3
    with pytest.raises(TypeError, match="isinf"):
        ops.isinf(x)


def test_value_tests_want_a_tensor():
    for f in (ops.isnan, ops.isinf, ops.isfinite):
        with pytest.raises(TypeError, match="must be a Tensor"):
            f(np.array([1.0]))
        with pytest.raises(TypeError, match="must be a Tensor"):
            f(1.0)


def test_logical_xor_dtypes_scalars_and_broadcast():
    b = Tensor(np.array([True, False, True]))
    c = Tensor(np.array([True, True, False]))
    assert ops.logical_xor(b, c).asnumpy().tolist() == [False, True, True]
    i = ops.logical_xor(Tensor(np.array([1, 0, 2], np.int32)), Tensor(np.array([0, 0, 1],
                                                                               np.int32)))
    assert i.dtype == ms.bool_ and i.asnumpy().tolist() == [True, False, False]
    assert ops.logical_xor(Tensor(np.array([1., 0.], F32)),
                           Tensor(np.array([0., 0.], F32))).asnumpy().tolist() == [True, False]
    assert ops.logical_xor(b, Tensor(np.array([1, 0, 0], np.int32))).asnumpy().tolist() == \
        [False, False, True]
    assert ops.logical_xor(b, True).asnumpy().tolist() == [False, True, False]
    assert ops.logical_xor(True, Tensor(np.array([True, False]))).asnumpy().tolist() == \
        [False, True]
    assert ops.logical_xor(Tensor(np.array([[True], [False]])), b).asnumpy().tolist() == \
        [[False, True, False], [True, False, True]]
    with pytest.raises(TypeError, match="Tensors or Python bools"):
        ops.logical_xor(Tensor(np.array([1., 0.], F32)), 0)


def _clamp_sum(x):
    return ops.clamp(x, -1.0, 1.0).sum()


def _clip_sum(x, lo, hi):
    return ops.clip(x, lo, hi).sum()


def test_clamp_and_clip_values_and_gradient(mode):
    y = Tensor(np.array([-2.0, 0.5, 3.0], F32))
    assert ops.clamp(y, -1, 1).asnumpy().tolist() == [-1.0, 0.5, 1.0]
    assert ops.clamp(y, min=0.0).asnumpy().tolist() == [0.0, 0.5, 3.0]
    assert ops.clamp(y, max=Tensor(np.array([0., 1, 2], F32))).asnumpy().tolist() == \
        [-2.0, 0.5, 2.0]
    assert ops.clip(y, -1.0, 1.0).asnumpy().tolist() == [-1.0, 0.5, 1.0]
    assert ops.clamp(y, 2.0, 1.0).asnumpy().tolist() == [1.0, 1.0, 1.0]       # min > max
    x = Tensor(np.array([-2.0, -1.0, 0.5, 1.0, 3.0], F32))
    # MindSpore 2.10: ties with a bound keep the gradient; the bounds get the clipped ones
    assert ms.grad(_clamp_sum)(x).asnumpy().tolist() == [0, 1, 1, 1, 0]
    gx, glo, ghi = ms.grad(_clip_sum, grad_position=(0, 1, 2))(x, Tensor(F32(-1)), Tensor(F32(1)))
    assert gx.asnumpy().tolist() == [0, 1, 1, 1, 0]
    assert float(glo.asnumpy()) == 1.0 and float(ghi.asnumpy()) == 1.0


def test_clamp_dtypes():
    """Number bounds keep the input's dtype (an int input with float bounds becomes float32);
    Tensor bounds promote with it (MindSpore 2.10)."""
    i = Tensor(np.array([1, -2, 0], np.int32))
    r = ops.clamp(Tensor(np.array([1.5, -3.], np.float16)), 0, 1)
    assert r.dtype == ms.float16 and r.asnumpy().tolist() == [1.0, 0.0]
    r = ops.clamp(i, 0.5, 1.5)
    assert r.dtype == ms.float32 and r.asnumpy().tolist() == [1.0, 0.5, 0.5]
    r = ops.clamp(i, Tensor(np.array(0, np.int64)), None)
    assert r.dtype == ms.int64 and r.asnumpy().tolist() == [1, 0, 0]
    r = ops.clamp(Tensor(np.array([1, 5], np.int32)), Tensor(np.array(2.5, F32)),
                  Tensor(np.array(3, np.int64)))
    assert r.dtype == ms.float32 and r.asnumpy().tolist() == [2.5, 3.0]
    r = ops.clamp(Tensor(np.array([-2.0, 0.5, 3.0], F32)), Tensor(np.array(0.5, np.float64)),
                  None)
    assert r.dtype == ms.float64 and r.asnumpy().tolist() == [0.5, 0.5, 3.0]
    r = ops.clamp(Tensor(np.array([1, 200], np.uint8)), 2, 100)
    assert r.dtype == ms.uint8 and r.asnumpy().tolist() == [2, 100]


def test_clamp_errors_as_mindspore():
    y = Tensor(np.array([1.0], F32))
    for f in (ops.clamp, ops.clip):
        with pytest.raises(ValueError, match="For Clamp, at least one of 'min' or 'max' must "
                                             "not be None."):
            f(y)
        with pytest.raises(ValueError, match="For Clamp, the dtype of 'input', 'min' and 'max' "
                                             "must not be bool."):
            f(Tensor(np.array([True, False])), 0, 1)
        with pytest.raises(ValueError, match="must not be bool"):
            f(Tensor(np.array([1, 5], np.int32)), True, None)
        with pytest.raises(TypeError, match="both be Tensors or both be numbers"):
            f(y, Tensor(np.array(0., F32)), 1.0)
        with pytest.raises(TypeError, match="must be Tensors or numbers, but got str"):
            f(y, "a")
