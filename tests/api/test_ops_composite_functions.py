"""mindspore.ops.composite's functions (matmul, mm, dot, tensor_dot, vecdot, batch_dot,
sequence_mask, count_nonzero, repeat_elements, repeat_interleave, zeros_like, ones_like), in both
modes. Expected values were observed running MindSpore 2.10 (CPU)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import ops, Tensor
from minispore.ops import composite as C

from helpers import in_mode


def _np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_np(v) for v in x)
    return x.asnumpy().tolist() if isinstance(x, Tensor) else x


A = np.arange(6).reshape(2, 3).astype(np.float32)
B = np.arange(12).reshape(3, 4).astype(np.float32)
X3 = np.arange(24).reshape(2, 3, 4).astype(np.float32)
Y3 = np.arange(40).reshape(2, 4, 5).astype(np.float32)


def test_matmul_mm_dot(mode):
    a, b = Tensor(A), Tensor(B)
    # MindSpore: [[20, 23, 26, 29], [56, 68, 80, 92]] for matmul/mm/dot of A, B
    expect = [[20., 23., 26., 29.], [56., 68., 80., 92.]]
    assert in_mode(lambda p, q: C.matmul(p, q), a, b).asnumpy().tolist() == expect
    r = in_mode(lambda p, q: C.matmul(p, q, ms.float16), a, b)
    assert r.dtype == ms.float16 and r.asnumpy().tolist() == expect
    assert in_mode(lambda p, q: C.mm(p, q), a, b).asnumpy().tolist() == expect
    assert in_mode(lambda p, q: C.dot(p, q), a, b).asnumpy().tolist() == expect
    r = in_mode(lambda p, q: C.dot(p, q), Tensor(X3), Tensor(Y3))
    assert r.shape == (2, 3, 2, 5)          # MindSpore: (2, 3, 2, 5), numpy's dot
    np.testing.assert_array_equal(r.asnumpy(), np.dot(X3, Y3))
    assert float(C.matmul(Tensor([1., 2.]), Tensor([3., 4.])).asnumpy()) == 11.0
    with pytest.raises(ValueError):
        C.mm(Tensor(np.ones((2, 2, 3), np.float32)), b)
    with pytest.raises(TypeError):          # MindSpore: x1 must be float16/float32
        C.dot(Tensor([[1, 2]]), Tensor([[3], [4]]))
    with pytest.raises(ValueError):
        C.dot(Tensor([1., 2.]), Tensor([3., 4.]))


def test_sequence_mask_count_nonzero(mode):
    # MindSpore's values
    r = in_mode(lambda t: C.sequence_mask(t, 4), Tensor([1, 3, 2]))
    assert r.dtype == ms.bool_ and r.asnumpy().tolist() == [
        [True, False, False, False], [True, True, True, False], [True, True, False, False]]
    if mode == "graph":
        with pytest.raises(ValueError, match="pass maxlen"):
            in_mode(lambda t: C.sequence_mask(t), Tensor([1, 3, 2]))
    else:
        assert C.sequence_mask(Tensor([1, 3, 2])).shape == (3, 3)
    r = in_mode(lambda t: C.sequence_mask(t, 3), Tensor([[1, 3], [2, 0]]))
    assert r.asnumpy().tolist() == [[[True, False, False], [True, True, True]],
                                    [[True, True, False], [False, False, False]]]
    r = in_mode(lambda t: C.count_nonzero(t), Tensor([[0, 1], [2, 0.]]))
    assert r.dtype == ms.int32 and int(r.asnumpy()) == 2
    r = in_mode(lambda t: C.count_nonzero(t, 1, True, ms.float32), Tensor([[0, 1], [2, 3.]]))
    assert r.dtype == ms.float32 and r.asnumpy().tolist() == [[1.], [2.]]
    assert int(C.count_nonzero(Tensor([[0, 1], [2, 3.]]), (0, -1)).asnumpy()) == 3


def test_repeat_elements_interleave(mode):
    x = Tensor([[1, 2], [3, 4]])
    # MindSpore's values
    r = in_mode(lambda t: C.repeat_elements(t, 2, 0), x)
    assert r.dtype == ms.int64 and r.asnumpy().tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]
    r = in_mode(lambda t: C.repeat_elements(t, 3, 1), Tensor([[1., 2]]))
    assert r.asnumpy().tolist() == [[1., 1., 1., 2., 2., 2.]]
    assert C.repeat_elements(Tensor([[1., 2]]), 2, -1).asnumpy().tolist() == [[1., 1., 2., 2.]]
    r = in_mode(lambda t: C.repeat_interleave(t, 2, 0), x)
    assert r.asnumpy().tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]
    r = in_mode(lambda t: C.repeat_interleave(t, 2), x)
    assert r.asnumpy().tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    r = C.repeat_interleave(x, Tensor([1, 2]), 0)
    assert r.asnumpy().tolist() == [[1, 2], [3, 4], [3, 4]]
    r = in_mode(lambda t: C.repeat_interleave(t, [1, 2], 0), x)
    assert r.asnumpy().tolist() == [[1, 2], [3, 4], [3, 4]]
    if mode == "graph":
        with pytest.raises(ValueError, match="pass an int or a list"):
            in_mode(lambda t, r: C.repeat_interleave(t, r, 0), x, Tensor([1, 2]))


def test_zeros_ones_like(mode):
    # MindSpore: zeros_like keeps int32; ones_like of a bool Tensor is all True; ones_like maps
    # over tuples
    r = in_mode(lambda t: C.zeros_like(t), Tensor(np.array([1, 2], np.int32)))
    assert r.dtype == ms.int32 and r.asnumpy().tolist() == [0, 0]
    r = in_mode(lambda t: C.ones_like(t), Tensor([True, False]))
    assert r.dtype == ms.bool_ and r.asnumpy().tolist() == [True, True]
    r = C.ones_like((Tensor([1.]), Tensor([2])))
    assert _np(r) == ([1.], [1])
    # MindSpore (graph mode; PyNative agrees but for ones_like(2.5), an error there)
    z = (C.zeros_like(3), C.zeros_like(2.5), C.zeros_like(True))
    assert z == (0, 0.0, 0) and [type(v) for v in z] == [int, float, int]
    o = (C.ones_like(3), C.ones_like(2.5), C.ones_like(True))
    assert o == (1, 1.0, True) and [type(v) for v in o] == [int, float, bool]
    assert _np(C.ones_like((Tensor([1.]), 2))) == ([1.], 1)


def test_tensor_dot_vecdot(mode):
    a, b = Tensor(A), Tensor(B)
    # MindSpore's values (numpy's tensordot; vecdot = sum(x * y, axis))
    r = in_mode(lambda p, q: C.tensor_dot(p, q, 1), a, b)
    assert r.asnumpy().tolist() == [[20., 23., 26., 29.], [56., 68., 80., 92.]]
    r = in_mode(lambda p, q: C.tensor_dot(p, q, ((0, 2), (0, 1))), Tensor(X3), Tensor(Y3))
    assert r.asnumpy().tolist() == [[1580., 1640., 1700., 1760., 1820.],
                                    [2140., 2232., 2324., 2416., 2508.],
                                    [2700., 2824., 2948., 3072., 3196.]]
    r = C.tensor_dot(Tensor(X3), Tensor(Y3), (-1, -2))
    np.testing.assert_array_equal(r.asnumpy(), np.tensordot(X3, Y3, ((2,), (1,))))
    assert C.tensor_dot(a, a, 0).shape == (2, 3, 2, 3)
    assert float(C.tensor_dot(a, a, 2).asnumpy()) == 55.0
    r = C.tensor_dot(Tensor([[1, 2]]), Tensor([[3], [4]]), 1)
    assert r.dtype == ms.int64 and r.asnumpy().tolist() == [[11]]
    with pytest.raises(ValueError):
        C.tensor_dot(a, b, ((0,), (0,)))
    r = in_mode(lambda p: C.vecdot(p, p), a)
    assert r.asnumpy().tolist() == [5., 50.]
    assert C.vecdot(a, a, axis=0).asnumpy().tolist() == [9., 17., 29.]
    assert C.vecdot(a, Tensor(np.ones(3, np.float32))).asnumpy().tolist() == [3., 12.]
    r = C.vecdot(Tensor([[1, 2], [3, 4]]), Tensor([[1, 2], [3, 4]]))
    assert r.dtype == ms.int64 and r.asnumpy().tolist() == [5, 25]
    with pytest.raises(ValueError, match="out of range"):
        C.vecdot(a, a, axis=2)


def test_composite_names_are_the_ops_objects():
    # MindSpore: C.dot is ops.dot, C.normal is ops.normal, C.clip_by_value is ops.clip_by_value
    for n in ("dot", "mm", "tensor_dot", "vecdot", "batch_dot", "sequence_mask", "count_nonzero",
              "repeat_elements", "repeat_interleave", "normal", "uniform", "clip_by_value",
              "clip_by_global_norm"):
        assert getattr(C, n) is getattr(ops, n), n


def _ar(*s):
    return np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) / 7


@pytest.mark.parametrize("s1,s2,axes,shape,total", [
    # MindSpore 2.10's shapes and sums
    ((2, 3, 4), (2, 4, 5), None, (2, 3, 5), 711.43),
    ((2, 3), (2, 3), None, (2, 1), 1.12),
    ((2, 3), (2, 3), (1, 1), (2, 1), 1.12),
    ((2, 3, 4), (2, 4), None, (2, 3), 26.2),
    ((2, 4), (2, 4, 5), None, (2, 5), 77.14),
    ((6, 2, 3, 5, 8), (6, 8, 2, 3), (-1, 1), (6, 2, 3, 5, 2, 3), 24135532.0),
    ((2, 5, 5), (2, 5, 5), 2, (2, 5, 5), 3869.9),
    ((2, 2, 5), (2, 5, 5), (-1, -2), (2, 2, 5), 622.96),
    ((2, 3, 4), (2, 3, 4), -1, (2, 3, 3), 249.06),
])
@pytest.mark.filterwarnings("ignore:graph .* has been compiled")   # one lambda, nine shapes
def test_batch_dot(mode, s1, s2, axes, shape, total):
    a, b = _ar(*s1), _ar(*s2)
    r = in_mode(lambda p, q: C.batch_dot(p, q, axes), Tensor(a), Tensor(b))
    assert r.shape == shape
    np.testing.assert_allclose(float(r.asnumpy().sum()), total, rtol=5e-3)   # 2 decimals
    ax = [len(s1) - 1, len(s2) - 1 if len(s2) == 2 else len(s2) - 2] if axes is None else \
        ([axes, axes] if isinstance(axes, int) and axes > 0 else
         [axes + len(s1), axes + len(s2)] if isinstance(axes, int) else list(axes))
    want = np.stack([np.tensordot(a[i], b[i], ((ax[0] % len(s1) - 1,), (ax[1] % len(s2) - 1,)))
                     for i in range(s1[0])])
    np.testing.assert_allclose(r.asnumpy().reshape(want.shape), want, rtol=1e-5)


def test_batch_dot_errors():
    # MindSpore: ValueError for a 0 axis and for different batch sizes, TypeError for int64
    with pytest.raises(ValueError, match="cannot contain 0"):
        C.batch_dot(Tensor(_ar(2, 3)), Tensor(_ar(2, 3)), (0, 1))
    with pytest.raises(TypeError, match="float32"):
        C.batch_dot(Tensor(np.ones((2, 3), np.int64)), Tensor(np.ones((2, 3), np.int64)))
    with pytest.raises(ValueError, match="same batch sizes"):
        C.batch_dot(Tensor(_ar(2, 3)), Tensor(_ar(3, 3)))
