"""MindSpore Primitive classes of `mindspore.ops.operations` that minispore composes of several
core ops, in PyNative and in a compiled graph. Expected values were observed running MindSpore
2.10 (CPU) on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn
from minispore.ops import operations as P

_X = np.array([[-30.0, -1.5, 0.0], [0.3, 2.0, 40.0]], np.float32)
_Y = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 1.0]], np.float32)


class _Loss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.loss = P.SigmoidCrossEntropyWithLogits()

    def construct(self, x, y):
        return self.loss(x, y).sum()


def test_sigmoid_cross_entropy_with_logits(mode):
    # MindSpore: values [[9.357623e-14, 1.7014133, 0.6931472], [0.55435526, 2.126928,
    # 4.248354e-18]] Float32; the gradient for the logits [[9.357623e-14, -0.8175745, 0],
    # [-0.4255575, 0.880797, 0]] and zeros for the label; float16 inputs give float16
    # [[0, 1.701, 0.6934], [0.554, 2.127, 0]]; an int label or another shape is refused
    x, y = ms.Tensor(_X), ms.Tensor(_Y)
    r = P.SigmoidCrossEntropyWithLogits()(x, y)
    assert r.dtype is ms.float32
    np.testing.assert_allclose(r.asnumpy(), [[9.357623e-14, 1.7014133, 0.6931472],
                                             [0.55435526, 2.126928, 4.248354e-18]], rtol=1e-6)
    gx, gy = ms.grad(_Loss(), grad_position=(0, 1))(x, y)
    np.testing.assert_allclose(gx.asnumpy(), [[9.357623e-14, -0.8175745, 0.0],
                                              [-0.4255575, 0.880797, 0.0]], rtol=1e-6)
    np.testing.assert_array_equal(gy.asnumpy(), np.zeros((2, 3)))
    h = P.SigmoidCrossEntropyWithLogits()(x.astype(ms.float16), y.astype(ms.float16))
    assert h.dtype is ms.float16
    np.testing.assert_allclose(h.asnumpy().astype(np.float32),
                               [[0.0, 1.701, 0.6934], [0.554, 2.127, 0.0]], atol=1e-3)
    with pytest.raises(TypeError, match="same"):
        P.SigmoidCrossEntropyWithLogits()(x, ms.Tensor(_Y.astype(np.int32)))
    with pytest.raises(ValueError, match="shape"):
        P.SigmoidCrossEntropyWithLogits()(x, ms.Tensor(_Y[0]))


class _Resize(nn.Cell):
    def __init__(self, size, align_corners):
        super().__init__()
        self.resize = P.ResizeNearestNeighbor(size, align_corners=align_corners)

    def construct(self, x):
        return self.resize(x)


# MindSpore's ResizeNearestNeighbor(size, align_corners)(arange(30).reshape(2, 1, 3, 5))[0, 0]
_RESIZED = {
    ((6, 10), False): [[0, 0, 1, 1, 2, 2, 3, 3, 4, 4], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
                       [5, 5, 6, 6, 7, 7, 8, 8, 9, 9], [5, 5, 6, 6, 7, 7, 8, 8, 9, 9],
                       [10, 10, 11, 11, 12, 12, 13, 13, 14, 14],
                       [10, 10, 11, 11, 12, 12, 13, 13, 14, 14]],
    ((5, 7), False): [[0, 0, 1, 2, 2, 3, 4], [0, 0, 1, 2, 2, 3, 4], [5, 5, 6, 7, 7, 8, 9],
                      [5, 5, 6, 7, 7, 8, 9], [10, 10, 11, 12, 12, 13, 14]],
    ((2, 3), False): [[0, 1, 3], [5, 6, 8]],
    ((5, 7), True): [[0, 1, 1, 2, 3, 3, 4], [5, 6, 6, 7, 8, 8, 9], [5, 6, 6, 7, 8, 8, 9],
                     [10, 11, 11, 12, 13, 13, 14], [10, 11, 11, 12, 13, 13, 14]],
    ((2, 3), True): [[0, 2, 4], [10, 12, 14]],
    ((1, 1), True): [[0]],
    ((3, 5), False): [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]],
}


@pytest.mark.parametrize("case", sorted(_RESIZED, key=str))
def test_resize_nearest_neighbor(mode, case):
    size, align_corners = case
    x = ms.Tensor(np.arange(30, dtype=np.float32).reshape(2, 1, 3, 5))
    r = _Resize(size, align_corners)(x)
    assert r.shape == (2, 1) + size and r.dtype is ms.float32
    assert r.asnumpy()[0, 0].astype(int).tolist() == _RESIZED[case]


def test_resize_nearest_neighbor_gradient_and_refusals(mode):
    # MindSpore (compared over 140 (in, out) sizes with both align_corners, same indices): the
    # gradient sums over the copies of each source pixel; a 3-D input and a bad size are refused
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    g = ms.grad(_Resize((4, 6), False))(x)
    np.testing.assert_array_equal(g.asnumpy(), np.full((1, 1, 2, 3), 4.0))
    with pytest.raises(ValueError, match="4-D"):
        P.ResizeNearestNeighbor((2, 2))(ms.Tensor(np.zeros((1, 2, 3), np.float32)))
    with pytest.raises(ValueError, match="size"):
        P.ResizeNearestNeighbor((2, 0))
    # MindSpore 2.10: both flags is a ValueError; its CPU kernel ignores half_pixel_centers=True
    # (same numbers as False), which minispore refuses rather than pick a meaning
    with pytest.raises(ValueError, match="half_pixel_centers must be false"):
        P.ResizeNearestNeighbor((2, 2), True, True)
    with pytest.raises(NotImplementedError, match="half_pixel_centers=True"):
        P.ResizeNearestNeighbor((2, 2), False, True)
    assert P.ResizeNearestNeighbor((2, 2), False, False).size == (2, 2)


def _clipped_sum(x):
    return ms.ops.clip_by_value(x, -1.0, 0.5).sum()


def test_clip_by_value(mode):
    # MindSpore, x = [-2, 0.5, 3]: (x, -1., 1.) -> [-1, 0.5, 1]; (x, None, 1.) -> [-2, 0.5, 1];
    # (x, -1.) -> [-1, 0.5, 3]; Tensor bounds alike; int32 [-2, 0, 3] with (-1.5, 1.5) ->
    # [-1, 0, 1] Int32 (bounds truncated to x's dtype); (x, 2., 1.) -> [1, 1, 1]; a list gives a
    # tuple; tensor bounds per element; float16 stays float16; no bound: ValueError; the
    # gradient at [-2, 0.5, 3, 0, -1] of clip(-1, 0.5) is [0, 0.5, 0, 1, 0.5]
    from minispore import ops
    from minispore.ops import functional as F
    assert F.clip_by_value is ops.clip_by_value
    x = ms.Tensor(np.array([-2.0, 0.5, 3.0], np.float32))
    xi = ms.Tensor(np.array([-2, 0, 3], np.int32))
    cases = [((x, -1.0, 1.0), [-1, 0.5, 1], ms.float32), ((x, None, 1.0), [-2, 0.5, 1], ms.float32),
             ((x, -1.0), [-1, 0.5, 3], ms.float32),
             ((x, ms.Tensor(-1.0), ms.Tensor(1.0)), [-1, 0.5, 1], ms.float32),
             ((xi, -1.5, 1.5), [-1, 0, 1], ms.int32), ((x, 2.0, 1.0), [1, 1, 1], ms.float32),
             ((x, ms.Tensor(np.zeros(3, np.float32)), ms.Tensor(np.array([1.0, 1.0, 2.0],
                                                                        np.float32))),
              [0, 0.5, 2], ms.float32),
             ((xi, ms.Tensor(np.array(-1, np.int64)), None), [-1, 0, 3], ms.int32),
             ((x.astype(ms.float16), -1.0, 1.0), [-1, 0.5, 1], ms.float16)]
    for args, value, dtype in cases:
        r = ops.clip_by_value(*args)
        assert r.dtype is dtype and r.asnumpy().tolist() == value, args
    r = ops.clip_by_value([x, x], -1.0, 1.0)
    assert isinstance(r, tuple) and [t.asnumpy().tolist() for t in r] == [[-1, 0.5, 1]] * 2
    with pytest.raises(ValueError, match="at least one"):
        ops.clip_by_value(x)
    g = ms.grad(_clipped_sum)(ms.Tensor(np.array([-2.0, 0.5, 3.0, 0.0, -1.0], np.float32)))
    assert g.asnumpy().tolist() == [0, 0.5, 0, 1, 0.5]


def _selected_sum(a, b):
    return ms.ops.select(ms.Tensor(np.array([True, False, True])), a, b).sum()


def test_select(mode):
    # MindSpore, c = [T, F, T]: (c, x, y) -> [1, -2, 3]; (c, x, 0.5) -> [1, 0.5, 3] Float32;
    # (c, 2, x) -> [2, 2, 2]; (c, int32 x, 7) -> [1, 7, 3] Int32; (c, int32 x, 0.5) -> Float32;
    # a [[T], [F]] condition broadcasts; an int condition is a TypeError; (c, 1.0, 2.0) ->
    # [1, 2, 1] Float32; (c, 1, 2) -> Int64; the gradient for other is [0, 1, 0]
    from minispore import ops
    from minispore.ops import functional as F
    c = ms.Tensor(np.array([True, False, True]))
    x = ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    y = ms.Tensor(np.array([-1.0, -2.0, -3.0], np.float32))
    xi = ms.Tensor(np.array([1, 2, 3], np.int32))
    cases = [((c, x, y), [1, -2, 3], ms.float32), ((c, x, 0.5), [1, 0.5, 3], ms.float32),
             ((c, 2, x), [2, 2, 2], ms.float32), ((c, xi, 7), [1, 7, 3], ms.int32),
             ((c, xi, 0.5), [1, 0.5, 3], ms.float32), ((c, 1.0, 2.0), [1, 2, 1], ms.float32),
             ((c, 1, 2), [1, 2, 1], ms.int64), ((c, 1, 2.0), [1, 2, 1], ms.float32)]
    for args, value, dtype in cases:
        for fn in (ops.select, F.select):
            r = fn(*args)
            assert r.dtype is dtype and r.asnumpy().tolist() == value, args
    r = ops.select(ms.Tensor(np.array([[True], [False]])), x, y)
    assert r.asnumpy().tolist() == [[1, 2, 3], [-1, -2, -3]]
    with pytest.raises(TypeError, match="bool"):
        ops.select(ms.Tensor(np.array([1, 0, 1], np.int32)), x, y)
    gy = ms.grad(_selected_sum, grad_position=1)(x, y)
    assert gy.asnumpy().tolist() == [0, 1, 0]


class _GlobalClip(nn.Cell):
    def construct(self, a, b):
        return ms.ops.clip_by_global_norm((a, b), 1.0)


def test_clip_by_global_norm(mode):
    # MindSpore: ((x1, x2), 1.0) with x1 = [[2, 3], [1, 2]], x2 = [[1, 4], [3, 1]] ->
    # ([[0.2981424, 0.4472136], [0.1490712, 0.2981424]], [[0.1490712, 0.5962848],
    # [0.4472136, 0.1490712]]); clip_norm 100 leaves them; a float16 tensor stays float16
    # ([[0.745, 1.118], [0.3726, 0.745]] at 2.5); a 0-d tensor comes back of shape (1,);
    # clip_norm 0 and use_norm=2.0 raise ValueError
    from minispore import ops
    x1 = ms.Tensor(np.array([[2.0, 3.0], [1.0, 2.0]], np.float32))
    x2 = ms.Tensor(np.array([[1.0, 4.0], [3.0, 1.0]], np.float32))
    a, b = _GlobalClip()(x1, x2)
    np.testing.assert_allclose(a.asnumpy(), [[0.2981424, 0.4472136], [0.1490712, 0.2981424]],
                               rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [[0.1490712, 0.5962848], [0.4472136, 0.1490712]],
                               rtol=1e-6)
    r = ops.clip_by_global_norm([x1, x2], 100)
    assert isinstance(r, tuple) and r[0].asnumpy().tolist() == [[2, 3], [1, 2]]
    h, _ = ops.clip_by_global_norm((x1.astype(ms.float16), x2), 2.5)
    assert h.dtype is ms.float16
    np.testing.assert_allclose(h.asnumpy().astype(np.float32), [[0.7451, 1.118], [0.3726, 0.7451]],
                               rtol=1e-3)
    s, _ = ops.clip_by_global_norm((ms.Tensor(3.0), x2), 1.0)
    assert s.shape == (1,) and abs(s.asnumpy().item() - 0.5) < 1e-7
    with pytest.raises(ValueError, match="clip_norm"):
        ops.clip_by_global_norm((x1,), 0.0)
    with pytest.raises(ValueError, match="use_norm"):
        ops.clip_by_global_norm((x1,), 1.0, 2.0)
